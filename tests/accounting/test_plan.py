"""The release plan (dptopic.accounting.plan): what one fit releases, from public settings alone."""
import json
import math

import pytest

from dptopic.accounting.events import LaplaceEvent, PureDPEvent
from dptopic.accounting.plan import (
    PlannedRelease,
    ReleasePlan,
    docdp_cooc_plan,
    docdp_cooc_ranking_release,
    docdp_cooc_release,
    refuse_unreachable,
)
from dptopic.errors import BudgetExceededError, DPTopicError


def _laplace_plan(budget=None, count=10):
    lap = LaplaceEvent(scale=2.0, changes=(1, 1), label="counts")
    inh = PureDPEvent(0.5, label="sampling")
    return ReleasePlan("T", "word", (PlannedRelease("counts", "laplace", 2.0, 2.0, lap, count),
                                     PlannedRelease("sampling", "pure_dp", 0.0, 0.0, inh, count),
                                     PlannedRelease("last counts", "laplace", 2.0, 2.0, lap, 1)), budget=budget)


def test_events_list_each_release_count_times_and_groups_add_equal_events():
    plan = _laplace_plan()
    assert len(plan.events()) == 21
    groups = dict(plan.groups())
    assert [n for n in groups.values()] == [11, 10]      # the last release is the same event as the iterations'
    assert plan.release("sampling").event.eps == 0.5
    assert plan.releases[0].noise_multiplier == 1.0 and plan.releases[1].noise_multiplier is None
    with pytest.raises(DPTopicError, match="makes no release 'nothing'"):
        plan.release("nothing")


def test_epsilon_is_the_headline_of_a_ledger_that_spent_the_plan():
    plan = _laplace_plan()
    led = plan.ledger(budget=False)
    for e, n in plan.groups():
        led.spend(e, n)
    assert plan.epsilon(1e-5) == led.report(1e-5)["epsilon"]
    # 11 Laplace releases of epsilon 1 and 10 steps of 0.5: basic composition bounds it
    assert plan.epsilon(1e-5) <= 16.0 + 1e-9


def test_check_refuses_a_plan_its_budget_does_not_cover():
    plan = _laplace_plan()
    eps = plan.epsilon(1e-5)
    _laplace_plan(budget=(eps, 1e-5)).check()
    with pytest.raises(BudgetExceededError, match="above the budget"):
        _laplace_plan(budget=(eps * 0.99, 1e-5)).check()
    # a baseline's plan (no guarantee) is not held to a budget
    ReleasePlan("T", "word", plan.releases, budget=(0.1, 1e-5), guarantee=False).check()


def test_as_dict_is_json_and_names_every_release():
    d = _laplace_plan(budget=(20.0, 1e-5)).as_dict()
    back = json.loads(json.dumps(d))
    assert back["n_releases"] == 21 and [r["name"] for r in back["releases"]] == ["counts", "sampling", "last counts"]
    assert back["releases"][0]["event"]["type"] == "laplace" and back["budget"] == {"epsilon": 20.0, "delta": 1e-5}


def test_the_cooccurrence_plan_is_within_its_budget_and_the_two_releases_share_it():
    plan = docdp_cooc_plan(1.0, 1e-5, 3.0)
    rank, cooc = plan.releases
    assert rank == docdp_cooc_ranking_release(rank.event.noise_multiplier)
    assert cooc == docdp_cooc_release(cooc.event.noise_multiplier)
    assert rank.scale == pytest.approx(3.0 * cooc.scale) and rank.sensitivity == cooc.sensitivity == 1.0
    assert plan.epsilon(1e-5) <= 1.0 * (1 + 1e-9)
    assert plan.epsilon(1e-5) > 0.99        # calibrated: spends what was asked
    one = docdp_cooc_plan(1.0, 1e-5, 3.0, ranked=False)
    assert len(one.releases) == 1 and one.releases[0].scale < cooc.scale     # one release needs less noise


def test_the_models_plan_is_the_function_recommend_reads():
    from dptopic.accounting.units import unreachable_epsilon
    from dptopic.models import DocDPCooccurrence

    m = DocDPCooccurrence(epsilon=0.7, delta=1e-6)
    assert m.release_plan().releases == docdp_cooc_plan(0.7, 1e-6, 3.0).releases
    assert m.release_plan(n_words=150).releases != m.release_plan(n_words=5000).releases   # 150 words: all kept
    assert unreachable_epsilon("document", 0.7, 1e-6) is None


def test_refuse_unreachable_names_the_parameter_and_the_smallest_reachable_epsilon():
    from dptopic.accounting.verify import rounded_up
    from dptopic.models import DocDPCooccurrence, DocDPEM
    from dptopic.models.registry import document_epsilon_floor

    with pytest.raises(DPTopicError, match=r"budget unreachable: epsilon=0.001 .* two releases .*smallest reachable"
                                           rf" epsilon is {rounded_up(document_epsilon_floor(1e-5, 3.0), 4):.4g}"):
        refuse_unreachable(DocDPCooccurrence(epsilon=0.001))
    with pytest.raises(DPTopicError, match="smallest reachable epsilon"):
        refuse_unreachable(DocDPEM(epsilon=0.001, n_iter=3))
    plan = refuse_unreachable(DocDPEM(epsilon=1.0, n_iter=3))
    assert plan.releases[0].count == 3 and math.isfinite(plan.epsilon(1e-5))


def test_the_cards_planned_and_spent_says_when_the_events_are_not_the_plan():
    from dptopic.accounting.card import planned_and_spent

    plan = _laplace_plan()
    report = plan.report(1e-5)
    report["plan"] = plan.as_dict()
    ok = planned_and_spent(report)
    assert ok["matches"] and ok["planned"] == ok["spent"] == 21
    assert [r["planned_with_its_mechanism"] for r in ok["releases"]] == [11, 10, 11]
    fewer = dict(report, events=[dict(e, count=e["count"] - 1) for e in report["events"]])
    assert not planned_and_spent(fewer)["matches"]
    extra = dict(report, events=report["events"] + [dict(PureDPEvent(3.0).describe(), count=1)])
    assert not planned_and_spent(extra)["matches"]
    assert planned_and_spent({"events": report["events"]}) is None
