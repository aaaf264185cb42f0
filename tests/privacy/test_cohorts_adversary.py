"""A round in cohorts attacked by its own servers (the real cohort servers, bridge and contributors, in process):
what a cohort's server learns, the lies that would let the operator read one cohort's total (a set of uploads
without honest delegates, a bridge that leaves a cohort out), each refused by every honest contributor shown it, and
neighbouring datasets with everyone else's noise held fixed; then the lies of a server in cohorts over HTTP
(``dptopic.service.secure_sum.cohort_app`` with the library's client): a contributor seated elsewhere, a bridge that
hides a cohort."""
import json
import re

import numpy as np
import pytest
from tests.cohort_helpers import WORDS, exact_sum, record_shares, simulation_class, tiny_bows

from dptopic.accounting.skellam import rounded_norms
from dptopic.protocol.secure_sum import cohorts as co
from dptopic.protocol.secure_sum import ring as ss

N, SIZE = 60, 20


def plan(bits=32):
    return co.CohortPlan(8.0, 1e-5, N, N // 10, len(WORDS), SIZE, collusion=1, bits=bits)


def test_a_cohort_server_sees_its_total_masked_by_its_delegates_pads(tmp_path, monkeypatch):
    seen = record_shares(monkeypatch)
    sim = simulation_class()(tmp_path, plan(), tiny_bows(N), WORDS)
    assert sim.run() == "released"
    server = sim.servers[0]
    padded, uploaded = server.padded[0]
    mine = [seen[(server.round_id, u, 0)][1] for u in uploaded]
    S0 = ss.from_ring(ss.ring_sum((ss.to_ring(y, 32) for y in mine), 32), 32)
    # what the cohort's server read is its total minus the pads of its delegates that uploaded, and nothing nearer
    pads = sum(c.pads.vector(0, len(S0), 32) for c in sim.people[0] if c.pads is not None and c.me in uploaded)
    assert np.array_equal(ss.from_ring(ss.to_ring(padded, 32) + pads, 32), S0)
    limit = len(uploaded) * rounded_norms(sim.plan.scale, len(S0))[0] + 50 * np.sqrt(sim.plan.mu_shares[0] * N)
    assert np.all(np.abs(S0) < limit)
    assert np.mean(np.abs(padded) < limit) < 0.05          # uniform in the ring: the total is not there to read
    # the release is the whole round's exact sum
    assert np.array_equal(sim.coordinator.sums[0], exact_sum(sim, seen, 0, 32))


class DropsDelegates:
    """A cohort server that counts only ``keep`` of its delegates among the uploads of step 0 (so that its total
    would be padded by colluders' pads alone), to every contributor."""

    def __init__(self, sim, cohort: int, keep: int):
        self.sim, self.cohort, self.keep = sim, cohort, keep

    def __call__(self, where, step, who, what, value):
        if where == self.cohort and step in ("consistency0", "unmask0") and what == "view":
            gone = set(self.sim.delegates[self.cohort][self.keep:])
            return dict(value, uploaded=[u for u in value["uploaded"] if u not in gone])
        return value


def test_a_cohort_server_that_counts_too_few_delegates_is_refused_by_everyone_shown_it(tmp_path):
    sim = simulation_class()(tmp_path, plan(), tiny_bows(N), WORDS)
    sim.say = DropsDelegates(sim, 0, keep=1)          # t = 1: one delegate may be the server's own
    sim.run()
    shown = [c.me for c in sim.people[0] if c.me not in sim.delegates[0][1:]]
    assert shown and all(sim.refused.get((sim.servers[0].round_id, u), ("", ""))[1].count("delegates") for u in shown)
    assert all(sim.refused[(sim.servers[0].round_id, u)][0] == "consistency0" for u in shown)
    assert sim.coordinator.model_doc is None and sim.servers[0].st["state"] != "released"
    assert 0 not in sim.servers[0].padded          # nothing was unmasked in that cohort


@pytest.mark.parametrize("checked", [True, False])
def test_the_delegate_check_is_what_refuses_a_server_that_counts_too_few(tmp_path, monkeypatch, checked):
    from dptopic.contributor.secure_sum import cohorts as cc
    from dptopic.contributor.secure_sum.default import ServerLied

    if not checked:
        monkeypatch.setattr(cc, "check_delegates", lambda *a: None)      # without it the same lie is signed
    sim = simulation_class()(tmp_path, plan(), tiny_bows(N), WORDS)
    sim.keys()
    sim.shares()
    sim.upload(0)
    lie = DropsDelegates(sim, 0, keep=1)(0, "consistency0", "", "view", sim.servers[0].view())
    outcomes = []
    for c in sim.people[0]:
        if c.me in lie["uploaded"]:
            try:
                c.consistency(0, lie)
                outcomes.append("signed")
            except ServerLied:
                outcomes.append("refused")
    assert outcomes and set(outcomes) == ({"refused"} if checked else {"signed"})


class BridgeLeavesCohortOut:
    """A bridge server that counts only one delegate of the last cohort among its uploads (its sum of pads would
    then leave that cohort out, and the other cohorts' totals would add up without it)."""

    def __init__(self, sim):
        self.sim = sim

    def __call__(self, where, step, who, what, value):
        if where == -1 and step in ("consistency0", "unmask0") and what == "view":
            gone = {f"c{len(self.sim.groups) - 1}-{d}" for d in self.sim.delegates[-1][1:]}
            return dict(value, uploaded=[u for u in value["uploaded"] if u not in gone])
        return value


def test_a_bridge_that_leaves_a_cohort_out_is_refused_by_every_delegate_shown_it(tmp_path):
    sim = simulation_class()(tmp_path, plan(), tiny_bows(N), WORDS)
    sim.say = BridgeLeavesCohortOut(sim)
    sim.run()
    last = len(sim.groups) - 1
    shown = [c.me for c in sim.bridge_people if not (c.me.startswith(f"c{last}-")
                                                      and c.me.split("-", 1)[1] in sim.delegates[-1][1:])]
    refusals = [sim.refused.get((sim.bridge.round_id, u)) for u in shown]
    assert all(r is not None and r[0] == "consistency0" and f"cohort {last}" in r[1] for r in refusals)
    assert 0 not in sim.bridge.padded and sim.coordinator.model_doc is None


@pytest.mark.parametrize("bits", [32, 64])
def test_neighbouring_rounds_differ_by_the_persons_contribution_alone(tmp_path, monkeypatch, bits):
    """Add/remove: the same round with one person in it and without them (they never upload), everyone else's
    rounding and noise held fixed (the same seeds): the released sum moves by that person's quantized statistic, within
    the rounded sensitivity, plus their own noise share, drawn at the round's planned share."""
    releases, seens = [], []
    target = "0008"
    for k, drop in enumerate([(), (target,)]):
        seen = record_shares(monkeypatch)
        sim = simulation_class()(tmp_path / str(k), plan(bits), tiny_bows(N), WORDS, seed=3)
        assert sim.run(drop0=drop) == "released"
        releases.append(sim.coordinator.sums[0])
        seens.append(seen)
    (key,) = [k for k in seens[0] if k[1] == target and k[2] == 0]
    q, y = seens[0][key]
    others = [k for k in seens[0] if k[1] != target and k[2] == 0]
    assert all(np.array_equal(seens[0][k][1], seens[1][k][1]) for k in others)      # noise held fixed
    delta = releases[0] - releases[1]
    assert np.array_equal(delta, y) and q.any()
    assert np.linalg.norm(q) <= rounded_norms(plan(bits).scale, len(q))[0]
    # every share drawn at the round's plan (Sk(mu / honest) of the whole round, not of a cohort): variance 2 mu_share
    noise = np.concatenate([(y_ - q_).astype(float) for (_, _, ph), (q_, y_) in seens[0].items() if ph == 0])
    want = 2 * plan(bits).mu_shares[0]
    assert plan(bits).mu_shares[0] < plan(bits).cohort_plans[0].mu_shares[0]
    assert abs(noise.var() / want - 1) < 5 * np.sqrt(2 / len(noise))


# ----------------------------------------------------------------------------- the same lies over HTTP
@pytest.fixture
def live_round(tmp_path):
    from tests.cohort_helpers import LiveCohortRound  # uvicorn: the service's tests only

    with LiveCohortRound(tmp_path, 24, 12) as live:
        yield live


def _config_lie(live, how):
    honest = live.server.config()
    doc = json.loads(json.dumps(honest))
    c = doc["cohorts"]
    if how == "paths swapped":          # every contributor sent to the other cohort's round
        c["paths"] = c["paths"][::-1]
    elif how == "two people swapped":   # the server seats two people otherwise than the rule
        c["members"][0][0], c["members"][1][0] = c["members"][1][0], c["members"][0][0]
    elif how == "a cohort hidden":
        c["members"], c["paths"] = c["members"][:1], c["paths"][:1]
    elif how == "another plan":
        c["plan"] = dict(c["plan"], collusion=2)
    return doc


@pytest.mark.service
@pytest.mark.parametrize("how, said", [
    ("paths swapped", "the server runs round 'round1-c1', but your invitation is for round 'round1-c0'"),
    ("two people swapped", "seats cohort 0 otherwise than the plan's rule"),
    ("a cohort hidden", "holds a different number of cohorts than the plan's rule"),
    ("another plan", "differs from the one your invitation accepted (collusion 2 (accepted: 1))"),
])
def test_a_server_that_seats_a_contributor_elsewhere_is_refused_before_anything_is_sent(live_round, tmp_path, how,
                                                                                       said):
    from dptopic.contributor.secure_sum.cohort_client import take_part_in_cohorts
    from dptopic.contributor.secure_sum.default import ServerLied
    from dptopic.protocol.secure_sum.cohort_enrollment import read_cohort_invitation

    live = live_round
    lying = _config_lie(live, how)
    live.server.config = lambda: lying
    first = next(f for f in live.files if read_cohort_invitation(f)["cohorts"]["cohort"] == 0)
    with pytest.raises(ServerLied, match=re.escape(said)):
        take_part_in_cohorts(live.url, tiny_bows(1)[0], first, state=tmp_path / "s.json", timeout=10)
    assert all(r.view()["keys_received"] == 0 for r in live.server.parts())      # nothing sent anywhere


@pytest.mark.service
def test_a_bridge_that_hides_a_cohorts_delegates_is_refused_by_every_delegate_over_http(live_round, monkeypatch):
    """(Once every delegate's part in the bridge has ended, the cohort rounds, which wait for a step the bridge never
    opens, are stopped rather than waited out.)"""
    from sqlalchemy import func, select
    from tests.cohort_helpers import bridge_parts, lie_at, play_all, record_parts  # the service's tests only

    from dptopic.contributor.secure_sum.default import ServerLied
    from dptopic.service.secure_sum.database import t_consistency

    live = live_round

    def hide_cohort_1(view):
        if isinstance(view.get("uploaded"), list):
            view["uploaded"] = [u for u in view["uploaded"] if not u.startswith("c1-")]
        return view

    lie_at(live, "/bridge", hide_cohort_1)
    ended = record_parts(monkeypatch)
    ended.watch(bridge_parts(live.files))
    out = play_all(live.url, live.files, tiny_bows(24), live.tmp, timeout=6, stop=ended.settled)
    docs = [json.loads(f.read_text()) for f in live.files]
    shown = [o for d, o in zip(docs, out) if "bridge" in d and d["cohorts"]["cohort"] == 0]
    hidden = [o for d, o in zip(docs, out) if "bridge" in d and d["cohorts"]["cohort"] == 1]
    assert len(shown) == len(hidden) == 2
    # cohort 0's delegates, shown a set without cohort 1, refuse before signing (a bridge of no dropouts refuses
    # any missing upload; the check of a cohort left out, check_bridge, is the one a bridge with a margin meets: the
    # next test); cohort 1's, told they are not among the uploads, are left out: neither signs nor reveals
    assert all(isinstance(o, ServerLied) and "nothing sent" in str(o) for o in shown), shown
    assert not any(isinstance(o, dict) for o in hidden)
    with live.server.bridge.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(t_consistency)).scalar() == 0
    assert live.server.bridge.view()["state"] == "consistency0" and 0 not in live.server.bridge.padded
    assert live.server.coordinator.model_doc is None


@pytest.mark.service
def test_a_bridge_with_a_dropout_margin_that_leaves_a_cohort_out_is_refused_by_the_bridge_check_over_http(tmp_path,
                                                                                                      monkeypatch):
    """A bridge of 18 delegates (three cohorts of 6) that may lose 7: hiding five of the last cohort's delegates
    leaves 13 uploads, enough for N - F, so it is the bridge's own check (a cohort's delegates left out) that every
    delegate shown the set meets; each refuses before signing, and its cohort round stops with it. (Once every
    delegate's part in the bridge has ended, the other cohort members are stopped rather than waited out.)"""
    from sqlalchemy import func, select
    from tests.cohort_helpers import (  # the service's tests only
        LiveCohortRound,
        bridge_parts,
        lie_at,
        play_all,
        record_parts,
    )

    from dptopic.contributor.secure_sum.default import ServerLied
    from dptopic.service.secure_sum.database import t_consistency

    with LiveCohortRound(tmp_path, N, SIZE, dropouts=N // 10) as live:
        bp, last = live.plan.bridge_plan, len(live.plan.sizes) - 1
        hidden = {f"c{last}-{d}" for d in live.plan.delegates(live.server.groups[last], "round1", last)[1:]}
        assert bp.n - len(hidden) >= bp.n - bp.dropouts and len(hidden) == live.plan.n_delegates - 1

        def hide(view):
            if isinstance(view.get("uploaded"), list):
                view["uploaded"] = [u for u in view["uploaded"] if u not in hidden]
            return view

        lie_at(live, "/bridge", hide)
        ended = record_parts(monkeypatch)
        ended.watch(bridge_parts(live.files))
        out = play_all(live.url, live.files, tiny_bows(N), live.tmp, timeout=6, stop=ended.settled)
        docs = [json.loads(f.read_text()) for f in live.files]
        shown = [o for d, o in zip(docs, out) if "bridge" in d and d["bridge"]["contributor"] not in hidden]
        assert len(shown) == bp.n - len(hidden)
        said = f"the bridge's uploads hold 1 delegates of cohort {last}, fewer than 2: its sum of pads could leave"
        assert all(isinstance(o, ServerLied) and said in str(o) and "nothing signed" in str(o) for o in shown), shown
        assert not any(isinstance(o, dict) for o in out)
        with live.server.bridge.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(t_consistency)).scalar() == 0
        assert live.server.bridge.view()["state"] == "consistency0" and 0 not in live.server.bridge.padded
        assert live.server.coordinator.model_doc is None
