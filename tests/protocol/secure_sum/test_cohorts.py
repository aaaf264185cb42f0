"""protocol/secure_sum/cohorts.py: the plan of a round in cohorts, its pads and checks, and the exactness of the
two-level sum
(every cohort's real server, the bridge and the coordinator, with real contributors) at both ring sizes and several
cohort splits."""
import json
import math

import numpy as np
import pytest
from tests.cohort_helpers import WORDS, exact_sum, record_shares, simulation_class, tiny_bows

from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum import cohorts as co
from dptopic.protocol.secure_sum.graph import committee_size
from dptopic.protocol.secure_sum.plan import SecureSumPlan, ring_scale
from dptopic.protocol.secure_sum.ring import from_ring, ring_sum, to_ring, triangle_size


def test_cohorts_split_the_round_evenly_and_by_a_hash_of_the_round():
    assert co.cohort_sizes(10_001, 2000) == [1667, 1667, 1667, 1667, 1667, 1666]
    ids = [f"{i:04d}" for i in range(100)]
    groups = co.assign(ids, "r", co.cohort_sizes(100, 30))
    assert sorted(u for g in groups for u in g) == ids and [len(g) for g in groups] == [25, 25, 25, 25]
    assert groups != co.assign(ids, "r2", co.cohort_sizes(100, 30))      # the round id, not the operator, decides


def test_a_cohort_tolerance_covers_its_random_dropouts():
    f = co.cohort_dropouts(2000, 0.1, 1e-5)
    assert 200 < f < 280
    assert co._binomial_tail(2000, 0.1, f) <= 1e-5 < co._binomial_tail(2000, 0.1, f - 1)
    assert co.cohort_dropouts(50, 0.0, 1e-5) == 0


def test_the_plan_pays_the_noise_once_for_the_whole_round():
    plan = co.CohortPlan(1.0, 1e-5, 10_000, 1000, 1000, 2000)
    rp = plan.round_plan
    assert len(plan.sizes) == 5 and sum(plan.sizes) == 10_000
    # calibrated for the whole round's honest shares, at the whole round's ring and scale
    assert rp.n == 10_000 and rp.dropouts == sum(plan.cohort_dropouts)
    assert rp.honest == 10_000 - sum(plan.cohort_dropouts) - plan.collusion - 1
    assert plan.mu_shares == rp.mu_shares and plan.scale == rp.scale
    assert all(p.bits == rp.bits and p.collusion == plan.collusion for p in [*plan.cohort_plans, plan.bridge_plan])
    # the cohorts' margins cost a little noise against one round with the same dropouts, never less
    single = SecureSumPlan(1.0, 1e-5, 10_000, 1000, 1000)
    assert plan.noise_cost == pytest.approx(math.sqrt(single.honest / rp.honest), rel=1e-9)
    assert 1.0 < plan.noise_cost < 1.03
    # each cohort has t + 1 delegates or more, and the bridge holds them all
    assert plan.n_delegates > plan.collusion and plan.bridge_plan.n == 5 * plan.n_delegates
    d = plan.describe()
    assert d["honest_shares"] == rp.honest and d["cohorts"] == 5 and "nothing" in d["cohort_server_learns"]


def test_the_ring_is_chosen_for_the_whole_round_not_a_cohort():
    plan = co.CohortPlan(1.0, 1e-5, 1_000_000, 100_000, 1000, 5000)
    assert plan.ring_bits == SecureSumPlan(1.0, 1e-5, 1_000_000, sum(plan.cohort_dropouts), 1000).bits == 64
    assert plan.scale == ring_scale(64, 1_000_000)
    small = co.CohortPlan(1.0, 1e-5, 30_000, 3000, 1000, 2000, bits=32)
    # modulo 2^32 a cohort of 2,000 alone could quantize at 2^16; the sum of 30,000 needs 2^13
    assert small.scale == ring_scale(32, 30_000) == 2 ** 13 < small.cohort_plans[0].scale


def test_the_plan_refuses_one_cohort_and_cohorts_too_small_for_their_dropouts():
    with pytest.raises(ParameterError, match="cohort_size"):
        co.CohortPlan(1.0, 1e-5, 100, 10, 30, 100)
    with pytest.raises(ParameterError, match="at least 3"):
        co.CohortPlan(1.0, 1e-5, 100, 10, 30, 0)
    with pytest.raises(ParameterError, match="cohort_size"):
        co.CohortPlan(1.0, 1e-5, 200, 20, 30, 20, collusion=3)


def test_the_checks_count_delegates_in_a_cohort_and_in_every_cohort_of_the_bridge():
    assert co.check_delegates(["a", "b", "x"], ["a", "b", "c"], 1) is None
    assert "fewer than 2" in co.check_delegates(["a", "x"], ["a", "b", "c"], 1)
    assert co.check_bridge(["a", "b", "c", "d"], [["a", "b"], ["c", "d"]], 1) is None
    assert "cohort 1" in co.check_bridge(["a", "b", "c"], [["a", "b"], ["c", "d"]], 1)


@pytest.mark.parametrize("bits,n,size", [(32, 60, 20), (64, 40, 20), pytest.param(64, 60, 20, marks=pytest.mark.slow),
                                          pytest.param(32, 60, 30, marks=pytest.mark.slow)])
def test_the_released_sums_are_exactly_the_survivors_sums(tmp_path, monkeypatch, bits, n, size):
    seen = record_shares(monkeypatch)
    plan = co.CohortPlan(8.0, 1e-5, n, n // 10, len(WORDS), size, collusion=1, bits=bits)
    sim = simulation_class()(tmp_path, plan, tiny_bows(n), WORDS)
    # one delegate and two others drop out after masking step 0: in their cohort and in the bridge
    drop = {sim.delegates[0][0], sim.groups[1][0] if sim.groups[1][0] not in sim.delegates[1] else sim.groups[1][1],
            sim.groups[-1][-1] if sim.groups[-1][-1] not in sim.delegates[-1] else sim.groups[-1][-2]}
    assert sim.run(drop0=drop) == "released"
    co_ = sim.coordinator
    for phase in (0, 1):
        assert np.array_equal(co_.sums[phase], exact_sum(sim, seen, phase, bits))
        assert co_.shares[phase] == n - 3
    assert sim.delegates[0][0] not in sim.bridge.padded[0][1][0]
    # every cohort's server serves the round's model, whose report and card say it ran in cohorts
    assert all(s.model_doc() == co_.model_doc for s in sim.servers)
    meta = json.loads(co_.model_doc["model_json"])
    assert meta["privacy"]["round"]["cohorts"] == plan.describe()
    assert "cohorts" in meta["privacy"]["trust_model"] and "delegates" in meta["privacy_card"]["cohorts"]
    assert meta["privacy"]["noise_shares"]["calibrated_for"] == plan.round_plan.honest
    # the simulation's people keep no copy of what the servers acknowledged (a simulation of 100,000 holds them all)
    people = [c for p in sim.people for c in p] + sim.bridge_people
    assert all(v == "acknowledged" for c in people for v in c.st["sent"].values())
    assert sum(len(c.st["sent"]) for c in people) >= 4 * len(people)


def test_under_a_cap_on_the_words_step_1_sums_the_top_words_exactly(tmp_path, monkeypatch):
    """``max_words`` 6 of V = 30: the coordinator keeps the 6 words of highest noisy count in the round's step-0 sum,
    every cohort and the bridge sum the triangle over them, the sums are exact, and the card states the cap."""
    from dptopic.models.secure_sum import released_words

    seen = record_shares(monkeypatch)
    plan = co.CohortPlan(200.0, 1e-5, 40, 4, len(WORDS), 20, collusion=1, max_words=6)
    assert plan.round_plan.max_kept_words == 6 and all(p.max_words == 6 for p in plan.cohort_plans)
    assert plan.bridge_plan.max_words == 6 and co.CohortPlan.from_dict(plan.to_dict()).to_dict() == plan.to_dict()
    sim = simulation_class()(tmp_path, plan, tiny_bows(40), WORDS)
    assert sim.run() == "released"
    co_ = sim.coordinator
    for phase in (0, 1):
        assert np.array_equal(co_.sums[phase], exact_sum(sim, seen, phase, plan.ring_bits))
    kept = released_words(plan.round_plan, co_.sums[0], co_.shares[0], 3)[0]
    counts = co_.sums[0][:len(WORDS)].astype(float)
    assert len(kept) == 6 and set(kept) == set(np.argsort(-counts, kind="stable")[:6].tolist())
    assert len(co_.sums[1]) == triangle_size(6)
    meta = json.loads(co_.model_doc["model_json"])
    assert meta["privacy"]["parameters"]["max_words"] == 6 and meta["privacy"]["parameters"]["n_words"] == 6


def test_a_delegate_missing_from_the_bridge_fails_the_round_with_nothing_released(tmp_path):
    plan = co.CohortPlan(8.0, 1e-5, 40, 4, len(WORDS), 20, collusion=1)
    sim = simulation_class()(tmp_path, plan, tiny_bows(40), WORDS)
    out = sim.run(bridge_drop0=[sim.delegates[0][0]])       # it uploads in its cohort, not in the bridge
    assert out.startswith("failed") and "differ" in out
    assert sim.coordinator.model_doc is None and all(s.st["state"] == "failed" for s in sim.servers)


def test_a_delegate_keeps_its_pads_in_its_state_file_and_wipes_them_when_the_round_ends(tmp_path):
    from dptopic.contributor.secure_sum.cohorts import CohortContributor, Pads

    plan = co.CohortPlan(8.0, 1e-5, 40, 4, len(WORDS), 20, collusion=1)
    sim = simulation_class()(tmp_path, plan, tiny_bows(40), WORDS)
    first = next(c for c in sim.people[0] if c.pads is not None)
    inv = {"round_id": first.round_id, "contributor": first.me, "count": len(sim.groups[0]),
           "signing_key": first.key, "enrollment_key": sim.servers[0].cfg.directory["enrollment_key"]}
    config = {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": WORDS,
              "vocab_size": len(WORDS), "n_topics": 3, "round_id": first.round_id,
              "secure_sum": plan.cohort_plans[0].to_dict(), "epsilon": 8.0, "delta": 1e-5, "fed": None,
              "directory": sim.servers[0].cfg.directory}
    state = tmp_path / "state.json"
    pads = Pads()
    c = CohortContributor(config, first.bow, inv, plan, "round1", 0, pads, state=state)
    again = Pads()
    CohortContributor(config, first.bow, inv, plan, "round1", 0, again, state=state)
    assert again.seeds == pads.seeds          # resumed: the pads it drew first
    c.finish("released")
    assert "pads" not in json.loads(state.read_text()) and json.loads(state.read_text())["secrets"] is None


def test_a_committee_in_each_cohort_is_sized_by_the_auto_rule_for_the_cohort_and_the_bridge_keeps_none():
    from dptopic.models.secure_sum import trust_model

    plan = co.CohortPlan(8.0, 1e-5, 1000, 100, 30, 250, committee="auto")
    for p, s, f in zip(plan.cohort_plans, plan.sizes, plan.cohort_dropouts):
        assert p.committee == committee_size(s, f, int(plan.collusion)) and p.committee < s
    assert plan.bridge_plan.committee == 0
    assert co.CohortPlan(8.0, 1e-5, 1000, 100, 30, 250).cohort_plans[0].committee == 0
    d = plan.to_dict()
    assert d["committee"] == "auto" and co.CohortPlan.from_dict(d).to_dict() == d
    assert "committee" not in co.CohortPlan(8.0, 1e-5, 1000, 100, 30, 250).to_dict()
    described = plan.describe()
    assert described["cohort_committee"] == [plan.cohort_plans[0].committee] * 2
    text = trust_model(plan)
    assert text == plan.trust_model() and "each cohort is a committee-mode round" in text
    assert f"at least {int(plan.collusion) + 1} of its delegates" in text
    for bad in (True, -1, 1, "big"):
        with pytest.raises(ParameterError, match="committee"):
            co.CohortPlan(8.0, 1e-5, 1000, 100, 30, 250, committee=bad)
    with pytest.raises(DPTopicError, match="malformed"):
        co.CohortPlan.from_dict({**d, "committee": "many"})


@pytest.mark.parametrize("n, size", [(40, 20), (60, 20), pytest.param(90, 30, marks=pytest.mark.slow)])
def test_committee_cohorts_read_the_survivors_exact_sum_with_a_tenth_gone_after_masking(tmp_path, n, size):
    """Every cohort a committee round (the real server and contributors, in process: committee_helpers), a tenth of
    the people masking step 0 and leaving (a delegate and committee members among them): each cohort unmasks its
    padded total, and the coordinator's sum with the bridge's sum of the pads of the delegates that uploaded (the
    bridge is a default round, tested above) is the exact sum of what the survivors masked."""
    from committee_helpers import InProcessCommitteeRound

    server, rounds = InProcessCommitteeRound.cohorts(tmp_path, n=n, cohort_size=size, dropouts=n // 10,
                                                     collusion=1)
    bits = rounds[0].plan.bits
    dim = rounds[0].plan.vocab_size + 1
    pads, gone_all = [], []
    for c, rnd in enumerate(rounds):
        rnd.prekeys()
        rnd.open()
        members = sorted(rnd.by_id)
        gone = rnd.delegates[:1] + [m for m in members if m not in rnd.delegates][:len(members) // 10 - 1]
        view = rnd.server.view()
        for m in gone:          # masked, then gone
            rnd.by_id[m].committee_upload(0, view)
        rnd.upload(0, drop=gone)
        rnd.consistency(0)
        rnd.unmask(0)
        assert rnd.server.state == "unmask0" and 0 in rnd.server.padded, rnd.server.view()
        assert not set(gone) & set(rnd.server.padded[0][1])
        pads += [(f"c{c}-{d}", rnd.by_id[d].pads.vector(0, dim, bits)) for d in rnd.delegates if d not in gone]
        gone_all += gone
    assert any(m in rnd.committee for rnd in rounds for m in gone_all)
    server.bridge.padded[0] = (from_ring(ring_sum((p for _, p in pads), bits), bits), sorted(b for b, _ in pads))
    server.advance()
    assert server.coordinator.failed() is None
    masked = (to_ring(rnd.shares[(u, 0)], bits) + (rnd.by_id[u].pads.vector(0, dim, bits)
                                                      if u in rnd.delegates else 0)
              for rnd in rounds for u in rnd.server.padded[0][1])
    assert (server.coordinator.sums[0] == from_ring(ring_sum(masked, bits), bits)).all()
    assert all(r.state == "upload1" for r in server.rounds)
