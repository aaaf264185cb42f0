"""``dptopic.service.secure_sum.committee_cohorts``: a round in cohorts whose cohorts are committee-mode rounds, served
by one process (``dptopic.service.secure_sum.cohort_app``) and played over HTTP on 127.0.0.1 by the library's client in
threads: the round's exact sums with a tenth of the people gone after masking, an ordinary member's 3 requests, and the
refusals of the configuration."""
import json
import threading
import time
from types import SimpleNamespace

import pytest

from cohort_helpers import (
    LiveCohortRound,
    check_the_ledgers_refusal_fails_every_round,
    exact_sum,
    play_all,
    record_shares,
    record_unmaskings,
    tiny_bows,
)
from dptopic.errors import ParameterError
from dptopic.protocol.secure_sum.committee import committee_of
from service_helpers import http

pytestmark = [pytest.mark.service, pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")]


def count_requests(monkeypatch) -> dict:
    """``{contributor: [request, ...]}``: every request each person's cohort round sends (an ordinary member's are
    all of its requests: its keys go to its cohort first, nothing to the root)."""
    from dptopic.contributor.secure_sum import cohort_client

    sent: dict = {}
    play = cohort_client.take_part_committee

    def counted(server, bow, invitation, state, client, **kw):
        mine = sent.setdefault(invitation["contributor"], [])
        request = client.request

        def request_(method, path, *a, **k):
            mine.append(f"{method} {path.split('?')[0]}")
            return request(method, path, *a, **k)
        client.request = request_
        return play(server, bow, invitation, state, client=client, **kw)

    monkeypatch.setattr(cohort_client, "take_part_committee", counted)
    return sent


def bridge_uploads(live) -> int:
    from sqlalchemy import func, select

    from dptopic.service.secure_sum.database import t_uploads

    with live.server.bridge.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(t_uploads).where(t_uploads.c.phase == 0)).scalar()


def play_and_close(live, bows, gone, tmp) -> list:
    """Everyone plays; ``gone`` (indices) mask step 0 and leave; the admin closes step 0's uploads at the root once
    every cohort and the bridge hold their survivors' uploads. What each person's play returned or raised."""
    out: list = []
    players = threading.Thread(target=lambda: out.extend(play_all(live.url, live.files, bows, tmp, timeout=150,
                                                                  leave=set(gone))))
    players.start()
    ids = [json.loads(f.read_text())["contributor"] for f in live.files]
    away = {ids[i] for i in gone}
    want = [len([m for m in g if m not in away]) for g in live.server.groups]
    want_bridge = sum(len(set(live.plan.delegates(g, "round1", c)) - away) for c, g in enumerate(live.server.groups))
    deadline = time.monotonic() + 180
    while [r._count.get(0, 0) for r in live.server.rounds] != want or bridge_uploads(live) != want_bridge:
        assert time.monotonic() < deadline and players.is_alive(), (
            [r._count.get(0, 0) for r in live.server.rounds], want, [r.view()["state"] for r in live.server.parts()],
            out)
        time.sleep(0.05)
    if gone:
        status, _, body = http("POST", live.url + "/v1/admin/secure/close", b"",
                               {"Authorization": f"Bearer {live.TOKEN}"})
        assert status == 200, body
    players.join(150)
    return out


@pytest.mark.parametrize("n, size", [(60, 30), pytest.param(90, 30, marks=pytest.mark.slow)])
def test_a_round_in_committee_cohorts_releases_the_exact_sum_with_a_tenth_gone_after_masking(tmp_path, monkeypatch,
                                                                                           n, size):
    """Each cohort a committee round (its committee by the plan's rule for its size), a tenth of the people masking
    step 0 and leaving (a delegate among them): the round releases the exact sum of what its survivors masked, and
    an ordinary member makes 3 requests (its keys, posted to its cohort, then its two uploads)."""
    from dptopic.contributor.secure_sum.client import REQUESTS_COMMITTEE

    seen = record_shares(monkeypatch)
    sent = count_requests(monkeypatch)
    bows = tiny_bows(n)
    with LiveCohortRound(tmp_path / "live", n, size, dropouts=n // 10, committee="auto") as live:
        ids = [json.loads(f.read_text())["contributor"] for f in live.files]
        # every person posts its keys: each committee is the public rule's over the whole cohort, known ahead
        committees = {m for c, (g, p) in enumerate(zip(live.server.groups, live.plan.cohort_plans))
                      for m in committee_of(g, f"round1-c{c}", p.committee)}
        gone = []
        for c, g in enumerate(live.server.groups):
            delegates = set(live.plan.delegates(g, "round1", c))
            plain = sorted((m for m in g if m not in committees), key=lambda m: m not in delegates)
            gone += [ids.index(m) for m in plain[:(n // 10) // len(live.server.groups)]]
        assert any(ids[i] in {d for c, g in enumerate(live.server.groups) for d in live.plan.delegates(g, "round1", c)}
                   for i in gone)
        out = play_and_close(live, bows, gone, tmp_path / "live")
        assert all(isinstance(o, dict) for o in out), out
        assert live.server.view()["state"] == "released"
        sums = {p: live.server.coordinator.sums[p] for p in (0, 1)}
        rounds = SimpleNamespace(servers=live.server.rounds)
        for p in (0, 1):
            assert (sums[p] == exact_sum(rounds, seen, p, live.plan.ring_bits)).all()
        status, _, body = http("GET", live.url + "/v1/model")
        assert status == 200 and json.loads(body)["model_id"] == 1
        card = json.loads(json.loads(body)["model_json"])       # the card's trust model: a committee per cohort
        assert "each cohort is a committee-mode round" in json.dumps(card)
        assert "cohort_committee" in json.dumps(card)
        delegates = {d for c, g in enumerate(live.server.groups) for d in live.plan.delegates(g, "round1", c)}
        ordinary = [o["contributor"] for i, o in enumerate(out)
                    if i not in gone and o["contributor"] not in committees | delegates]
        assert ordinary, "no ordinary member in this round"
        for who in ordinary:        # besides the long polls while the admin's close is awaited
            assert [r for r in sent[who] if r != "GET /v1/secure/round"] == list(REQUESTS_COMMITTEE), sent[who]
        for i in gone:      # masked, never sent
            assert not any("upload" in r for r in sent[ids[i]]), sent[ids[i]]


def test_an_ordinary_member_of_a_committee_cohort_makes_three_requests(tmp_path, monkeypatch):
    """No one gone, every step closing as its last message comes: an ordinary member's requests are its keys (to its
    cohort, answered with everything it checks) and its two uploads, each answered with the next step."""
    from dptopic.contributor.secure_sum.client import REQUESTS_COMMITTEE

    sent = count_requests(monkeypatch)
    with LiveCohortRound(tmp_path / "live", 40, 20, dropouts=0, committee="auto") as live:
        out = play_and_close(live, tiny_bows(40), [], tmp_path / "live")
        assert all(isinstance(o, dict) for o in out), out
        assert live.server.view()["state"] == "released"
        committees = {m for r in live.server.rounds for m in r.committee}
        delegates = {d for c, g in enumerate(live.server.groups) for d in live.plan.delegates(g, "round1", c)}
    ordinary = sorted(set(sent) - committees - delegates)
    assert len(ordinary) >= 20
    assert all(sent[who] == list(REQUESTS_COMMITTEE) for who in ordinary), {w: sent[w] for w in ordinary}


def test_a_round_in_committee_cohorts_is_charged_to_the_dataset_ledger_once_before_any_answer_is_used(
        tmp_path, monkeypatch):
    """As default cohorts: one debit for the whole round, by the coordinator, to every person who uploaded in step 0
    of their cohort, before any cohort uses one answer of its committee and before the bridge unmasks."""
    from dptopic.dataset_ledger.ledger import DatasetLedger

    led = tmp_path / "ledger.sqlite"
    seen = record_unmaskings(monkeypatch, led)
    with LiveCohortRound(tmp_path / "live", 40, 20, committee="auto", ledger=led, dataset="clinic") as live:
        out = play_and_close(live, tiny_bows(40), [], tmp_path / "live")
        assert all(isinstance(o, dict) for o in out), out
        assert live.server.view()["state"] == "released"
        rounds = {r.round_id for r in live.server.parts()}
    assert sorted(seen) == sorted((r, p, 1) for r in rounds for p in (0, 1)), seen
    (r,) = DatasetLedger(led).releases("clinic")
    assert r["kind"] == "served" and r["unit"] == "user"
    assert DatasetLedger(led).person_summary()["persons"] == 40


def test_a_round_in_committee_cohorts_the_ledger_refuses_fails_every_round_with_nothing_unmasked(tmp_path,
                                                                                                 monkeypatch):
    check_the_ledgers_refusal_fails_every_round(tmp_path, monkeypatch, 40, 20, committee="auto")


def test_a_round_in_committee_cohorts_refuses_a_committee_no_cohort_carries(tmp_path):
    from dptopic.protocol.secure_sum.cohorts import CohortPlan

    with pytest.raises(ParameterError, match="cohort 0 of 20"):
        CohortPlan(8.0, 1e-5, 40, 4, 30, 20, 1, committee=4)



def test_the_admins_close_at_the_root_wakes_the_requests_each_committee_cohort_holds(tmp_path):
    """The admin's close at the root (``POST /v1/admin/secure/close``) closes each committee cohort's roster (all
    but a tenth registered) off the cohort's event loop: every cohort is told, so its held long polls see the new
    step at once, not at their 20-second timeout (which every contributor of a round with dropouts waited out once
    per step the admin closed)."""
    from dptopic.contributor.secure_sum.client import _drawn_keys
    from dptopic.protocol.secure_sum.cohort_enrollment import read_cohort_invitation

    live = LiveCohortRound(tmp_path / "live", 40, 20, dropouts=4, committee="auto")
    rounds = {r.round_id: r for r in live.server.rounds}
    for f in live.files[2:-2]:          # two of each cohort's 20 never register
        inv = read_cohort_invitation(f)
        rounds[inv["round_id"]].post_prekeys(inv["contributor"], [_drawn_keys(inv, None)[1]])
    woken = []
    for c, r in enumerate(live.server.rounds):
        r.on_change = lambda c=c: woken.append(c)
    assert [r.state for r in live.server.rounds] == ["keys", "keys"] and woken == []
    live.server.close()
    assert [r.state for r in live.server.rounds] == ["upload0", "upload0"]
    assert sorted(set(woken)) == [0, 1], woken
