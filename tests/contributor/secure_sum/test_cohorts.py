"""``dptopic.contributor.secure_sum.cohorts``: what a process that plays many contributors of a cohort shares between
them."""
import pytest

from cohort_helpers import WORDS, simulation_class, tiny_bows
from dptopic.protocol.secure_sum import cohorts as co

pytest.importorskip("cryptography")


def test_the_contributors_of_a_cohort_share_one_draw_of_its_delegates(tmp_path, monkeypatch):
    calls = []
    real = co.CohortPlan.delegates
    monkeypatch.setattr(co.CohortPlan, "delegates", lambda self, *a: calls.append(a[1:]) or real(self, *a))
    plan = co.CohortPlan(8.0, 1e-5, 40, 4, len(WORDS), 20, collusion=1)
    sim = simulation_class()(tmp_path, plan, tiny_bows(40), WORDS)
    for c, people in enumerate(sim.people):
        assert all(p.delegates is people[0].delegates for p in people)
        assert people[0].delegates == real(plan, sorted(sim.groups[c]), "round1", c) == sim.delegates[c]
    # the driver draws each cohort's once, and its 20 contributors once together, not once each
    assert len(calls) <= 2 * len(sim.people)
