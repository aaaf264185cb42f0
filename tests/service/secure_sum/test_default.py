"""``dptopic.service.secure_sum.default``: a round against a live server on 127.0.0.1 (uvicorn in a thread), and the
server's own checks: admission by invitation, signatures, one contributor's bad message refused alone, a restart that
resumes the unmasking, a damaged database refused in one line, its file readable by its owner only."""
import os
import stat
import threading
import time

import pytest

from dptopic.contributor.secure_sum.client import take_part
from dptopic.contributor.secure_sum.default import SecureContributor
from dptopic.errors import DPTopicError
from dptopic.protocol.secure_sum import default as ss
from dptopic.protocol.secure_sum.crypto import sign
from dptopic.protocol.secure_sum.plan import SecureSumPlan
from service_helpers import InProcessRound, SecureSumServer, person_bow

pytestmark = pytest.mark.service
V = 40
WORDS = [f"word{i:02d}" for i in range(V)]
TOKEN = SecureSumServer.TOKEN


def Live(tmp, n=6, dropouts=2, collusion=0):
    return SecureSumServer(tmp, WORDS, n=n, dropouts=dropouts, collusion=collusion)


def bow(seed):
    """Contributor ``seed``'s documents over the V words."""
    return person_bow(seed, V)


def test_a_round_releases_a_model_that_pull_loads_and_wipes_the_secrets(tmp_path):
    import json

    import dptopic
    from dptopic.reporting.pull import pull

    with Live(tmp_path) as live:
        out = live.play(tmp_path)
        assert all(isinstance(o, dict) for o in out), out
        assert live.wait_state("released", "failed")["state"] == "released"
        s = pull(live.url, tmp_path / "model")
    assert s["class"] == "SecureSumTopics"
    m = dptopic.load(tmp_path / "model")
    assert m.privacy_["unit"] == "user" and "may lie and drop" in m.privacy_["trust_model"]
    assert m.privacy_["epsilon"] <= 8.0
    assert [c for c, _ in m.privacy_["epsilon_by_colluders"]] == [0]
    state = json.loads((tmp_path / "state0.json").read_text())
    assert state["secrets"] is None and state["finished"] == "released"
    assert stat.S_IMODE(os.stat(tmp_path / "state0.json").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "secure.sqlite").st_mode) == 0o600


def test_a_round_modulo_2_64_releases_and_its_card_states_the_ring(tmp_path):
    import dptopic
    from dptopic.reporting.pull import pull

    with SecureSumServer(tmp_path, WORDS, n=6, dropouts=2, bits=64) as live:
        assert live.call("GET", "/v1/config")[1]["secure_sum"]["modulus_bits"] == 64
        out = live.play(tmp_path)
        assert all(isinstance(o, dict) for o in out), out
        assert live.wait_state("released", "failed")["state"] == "released"
        pull(live.url, tmp_path / "model")
    params = dptopic.load(tmp_path / "model").privacy_["parameters"]
    assert params["modulus_bits"] == 64 and params["scale"] == 2 ** 16 and params["noise_inflation"] <= 1.01


def test_a_contributor_takes_part_in_nine_requests_one_post_and_wait_per_message(tmp_path):
    """Every request a contributor makes in a whole round: the configuration, then one post-and-wait per message
    (keys, shares, and per step its upload, consistency signature and answers), whose answer brings the next step's
    view with the roster or the neighbours' signatures: 9 at most (contributor.secure_sum.client.REQUESTS), with one
    contributor late by a second and a half (the others wait for it inside their requests); the same checks as with
    separate requests (a contributor still refuses a roster or signatures that fail: tests/privacy)."""
    from dptopic.contributor.client import ServiceClient
    from dptopic.contributor.secure_sum.client import REQUESTS

    class Counting(ServiceClient):
        def request(self, method, path, *a, **k):
            self.sent.append(f"{method} {path.split('?')[0]}")
            return super().request(method, path, *a, **k)

    with Live(tmp_path) as live:
        clients = [Counting(live.url) for _ in live.invitations]
        for cl in clients:
            cl.sent = []
        out = [None] * len(clients)

        def one(i):
            if i == 0:
                time.sleep(1.5)     # one late contributor: the others wait for it without polling
            out[i] = take_part(live.url, bow(i), live.invitation_files[i], state=tmp_path / f"s{i}.json",
                               client=clients[i], poll=0.05, timeout=60)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(clients))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert all(isinstance(o, dict) for o in out), out
        assert live.wait_state("released")["state"] == "released"
    assert len(REQUESTS) == 9
    for cl in clients:
        # in this order, no wait of its own; an answer the others made unneeded (the step closed first) is not sent
        it = iter(REQUESTS)
        assert all(r in it for r in cl.sent) and len(cl.sent) >= len(REQUESTS) - 2, cl.sent
        assert cl.keep_alive and cl._conn is not None       # the round's requests go over a kept connection


def test_a_long_poll_is_refused_for_an_unknown_step_and_answers_at_its_timeout(tmp_path):
    with Live(tmp_path) as live:
        status, doc = live.call("GET", "/v1/secure/round?wait=dancing")
        assert status == 400 and "no step" in doc["error"]["message"]
        t = time.monotonic()
        status, doc = live.call("GET", "/v1/secure/round?wait=released&timeout=0.3")
        assert status == 200 and doc["state"] == "keys" and 0.25 <= time.monotonic() - t < 10
        assert live.call("GET", "/v1/secure/round?include=roster")[0] == 400      # include names its contributor


def test_admission_takes_an_invitation_and_a_signature(tmp_path):
    with Live(tmp_path, n=6, dropouts=1) as live:
        cfg = live.call("GET", "/v1/config")[1]
        people = [SecureContributor(cfg, bow(i), inv) for i, inv in enumerate(live.invitations)]
        reg = people[0].registration()
        assert live.call("POST", "/v1/secure/keys", reg)[0] == 201
        assert live.call("POST", "/v1/secure/keys", reg)[0] == 200        # a replay
        stranger = {**people[1].registration(), "contributor": "9999"}
        status, err = live.call("POST", "/v1/secure/keys", stranger)
        assert status == 403 and err["error"]["code"] == "not_enrolled"
        unsigned = {**people[1].registration(), "signature": "00" * 64}
        status, err = live.call("POST", "/v1/secure/keys", unsigned)
        assert status == 403 and err["error"]["code"] == "bad_signature"
        # a low-order key, signed by the member itself, is refused: refused alone, the member may register again
        low = people[1].registration()
        low["keys"] = {**low["keys"], "c": "01" + "00" * 31}
        low["signature"] = sign(live.invitations[1]["signing_key"], ss.keys_message("round1", people[1].me,
                                                                                         low["keys"]))
        status, err = live.call("POST", "/v1/secure/keys", low)
        assert status == 400 and err["error"]["code"] == "bad_keys"
        assert live.call("POST", "/v1/secure/keys", people[1].registration())[0] == 201
        status, err = live.call("GET", "/v1/secure/roster")
        assert status == 409 and err["error"]["code"] == "not_open"


def test_one_contributors_bad_answer_is_refused_alone_and_the_round_goes_on(tmp_path):
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    view = rnd.server.view()
    sigs = rnd.server.signatures(0)
    c = rnd.people[0]
    q = c.unmask(0, view, sigs)
    bad = {k: dict(v) for k, v in q["answers"].items()}
    first = next(iter(bad))
    bad[first]["share"] = "zz" * 66
    from dptopic.service.secure_sum.config import ApiError

    signature = sign(rnd.invitations[0]["signing_key"], ss.answers_message("round1", 0, c.me, bad))
    with pytest.raises(ApiError) as e:
        rnd.server.post_unmask(0, c.me, bad, signature)
    assert e.value.code == "wrong_shape" and rnd.server.view()["state"] == "unmask0"
    rnd.server.post_unmask(0, c.me, q["answers"], q["signature"])
    assert rnd.unmask(0)["state"] == "upload1"


def test_a_restart_between_the_last_answer_and_the_unmasking_resumes_it(tmp_path, monkeypatch):
    """A kill -9 after the answers were stored, before the unmasking ran: the next start unmasks."""
    from dptopic.service.secure_sum import default as server

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    started = []
    monkeypatch.setattr(server.SecureRound, "_unmask", lambda self, phase: started.append(phase))    # killed there
    rnd.unmask(0, wait=False)
    assert started == [0] and rnd.server.view()["state"] == "unmask0"
    monkeypatch.undo()
    again = server.SecureRound(rnd.cfg)         # the next start, on the same database
    deadline = time.monotonic() + 60
    while again.view()["state"] == "unmask0" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert again.view()["state"] == "upload1"


def test_an_answer_is_counted_by_the_rows_it_touches_and_the_counters_match_a_recount(tmp_path):
    """At an unmasking each answer updates its senders' rows and two counters: no count over every answer or every
    needed seed (N of each) per answer; the counters equal a recount from the stored rows at every answer."""
    from sqlalchemy import event, func, select

    from dptopic.service.secure_sum.database import t_counts, t_need, t_unmask

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    statements, listening = [], [False]
    event.listen(rnd.server.engine, "before_cursor_execute",
                 lambda conn, cursor, sql, *a: listening[0] and statements.append(" ".join(sql.lower().split())))
    server = rnd.server
    answers, needs = [], []
    post = server.post_unmask

    def counted(phase, contributor, a, signature):
        listening[0] = True
        try:
            out = post(phase, contributor, a, signature)
        finally:
            listening[0] = False
        with server.engine.connect() as conn:
            counters = dict(conn.execute(select(t_counts.c.key, t_counts.c.value)).all())
            short = conn.execute(select(func.count()).select_from(t_need).where(
                (t_need.c.phase == 0) & (t_need.c.have < server.T))).scalar()
            stored = conn.execute(select(func.count()).select_from(t_unmask).where(t_unmask.c.phase == 0)).scalar()
        answers.append((counters.get("short0"), counters.get("answered0"), short, stored))
        if server.st["state"] == "unmask0":
            needs.append(id(server._needed(0)))
        return out
    server.post_unmask = counted
    rnd.unmask(0)
    assert rnd.server.view()["state"] == "upload1"
    assert answers and all(a[:2] == a[2:] for a in answers)       # (counters) == (recount), at every answer
    assert answers[-1][0] == 0 and answers[-1][1] == len(answers)
    assert len(set(needs)) == 1 and len(needs) >= len(answers) - 1     # the seeds a step needs: made once per step
    scans = [q for q in statements if "count(*)" in q and "secure_unmask" in q and " in (" not in q]
    assert scans == []


def test_a_contributors_messages_run_statements_built_once_not_one_per_message(tmp_path):
    """Each message's queries are statements built once (SQLAlchemy then keeps their cache keys), with their values
    as bound parameters: the distinct statement objects a whole round executes are bounded by the kinds of query, not
    by the messages (12 people send about a hundred), and every one of the per-message queries is among them."""
    from sqlalchemy import event

    from dptopic.service.secure_sum.database import _Q

    rnd = InProcessRound(tmp_path, n=12, dropouts=2, collusion=1)
    executed = []
    event.listen(rnd.server.engine, "before_execute", lambda conn, clause, *a: executed.append(clause))
    assert rnd.run(drop0=[rnd.people[0].me])["state"] == "released"
    built_once = {id(v) for k, v in vars(_Q).items() if not k.startswith("_")}
    per_message = [c for c in executed if id(c) in built_once]
    assert len(executed) > 300 and len(per_message) > 0.85 * len(executed)     # the rest: a step's opening or close
    assert len({id(c) for c in executed}) < 80
    assert {id(_Q.unmask_sha), id(_Q.one_more), id(_Q.reached), id(_Q.upload_sha), id(_Q.keys_of)} <= {
        id(c) for c in executed}


def test_the_views_lists_are_encoded_once_per_state_and_read_as_the_plain_view(tmp_path):
    """Every contributor's view of a step carries the step's lists (N ids each): the HTTP view encodes them once per
    state, and its bytes read back as the plain view."""
    import json

    from dptopic.service.secure_sum.web import _encode

    rnd = InProcessRound(tmp_path, n=8, dropouts=1, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    first, again = rnd.server.encoded_view(), rnd.server.encoded_view()
    assert first["state"] == "consistency0" and first["uploaded"] is again["uploaded"]
    assert json.loads(_encode(first)) == rnd.server.view()
    rnd.consistency(0)
    after = rnd.server.encoded_view()       # a new state: encoded afresh
    assert after["state"] == "unmask0" and json.loads(_encode(after)) == rnd.server.view()
    assert json.loads(_encode({"view": after, "replayed": False}))["view"]["signers"] == rnd.server.view()["signers"]


def test_the_round_is_charged_to_the_dataset_ledger_before_its_first_unmasking(tmp_path, monkeypatch):
    """The debit comes once the uploads, signatures and answers of step 0 are in (nothing spent before the input is
    known good) and before the server unmasks anything: at the plan's bound, to every uploader of step 0, once."""
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum import default as server

    led = tmp_path / "ledger.sqlite"
    rnd = InProcessRound(tmp_path, n=8, dropouts=1, collusion=1)
    rnd.cfg.ledger, rnd.cfg.ledger_dataset = str(led), "clinic-people"
    seen = []
    real = server.ss.unmask_sum

    def unmask(total, roster, round_id, phase, *a, **k):
        seen.append((phase, len(DatasetLedger(led).releases("clinic-people")) if led.exists() else 0))
        return real(total, roster, round_id, phase, *a, **k)
    monkeypatch.setattr(server.ss, "unmask_sum", unmask)
    assert rnd.run()["state"] == "released"
    assert seen == [(0, 1), (1, 1)]      # spent before the first unmasking, once for the round
    (r,) = DatasetLedger(led).releases("clinic-people")
    assert r["kind"] == "served" and r["unit"] == "user"
    assert DatasetLedger(led).person_summary()["persons"] == 8


def test_a_round_the_dataset_ledger_refuses_fails_before_anything_is_unmasked(tmp_path, monkeypatch):
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum import default as server

    led = tmp_path / "ledger.sqlite"
    DatasetLedger(led).set_cap("clinic-people", 0.5, 1e-5)      # below the round's epsilon (8)
    rnd = InProcessRound(tmp_path, n=8, dropouts=1, collusion=1)
    rnd.cfg.ledger, rnd.cfg.ledger_dataset = str(led), "clinic-people"
    unmasked = []
    monkeypatch.setattr(server.ss, "unmask_sum", lambda *a, **k: unmasked.append(a[3]) or a[0])
    view = rnd.run()
    assert view["state"] == "failed" and "ledger" in view["reason"] and "nothing" in view["reason"]
    assert unmasked == []
    assert DatasetLedger(led).releases("clinic-people") == []
    assert _stored_sum(rnd, 0) is None


def _stored_sum(rnd, phase):
    from sqlalchemy import select

    from dptopic.service.secure_sum.database import t_state
    with rnd.server.engine.connect() as conn:
        return conn.execute(select(t_state.c.value).where(t_state.c.key == f"sum{phase}")).scalar()


def _released_sums(rnd) -> list:
    import json

    from sqlalchemy import select

    from dptopic.service.secure_sum.database import t_state
    with rnd.server.engine.connect() as conn:
        return [json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == f"sum{p}")).scalar())
                for p in (0, 1)]


def test_a_restart_at_every_step_resumes_from_the_running_sums_and_receipts(tmp_path):
    """The server dropped (as by kill -9: only what was committed remains) after every step and in the middle of
    each upload step, a fresh one started on the same database each time: the round releases the same sums as a
    round never stopped (the same seeded statistics and noise), each upload counted exactly once although the first
    half is sent again after the restart, and the database keeps one running sum per step, not the uploads."""
    from sqlalchemy import func, inspect, select

    from dptopic.service.secure_sum import database
    from dptopic.service.secure_sum import default as server

    plain = InProcessRound(tmp_path / "plain", n=10, dropouts=2, collusion=1, seed=3)
    assert plain.run(drop0=[plain.people[-1].me])["state"] == "released"
    rnd = InProcessRound(tmp_path / "stopped", n=10, dropouts=2, collusion=1, seed=3)

    def restart():
        rnd.server.engine.dispose()
        rnd.server = server.SecureRound(rnd.cfg)
    rnd.keys()
    restart()
    rnd.shares()
    restart()
    for phase in (0, 1):
        view = rnd.server.view()
        half = rnd.people[:4]
        for c in half:
            body, sig = c.upload(phase, view)
            answer = rnd.server.post_upload(phase, c.me, body, sig)[1]
            if phase == 0:
                c.take_shares(answer["shares"])
        restart()
        rnd.upload(phase, drop=[rnd.people[-1].me] if phase == 0 else ())     # the first half again: replays
        assert rnd.server.view()["state"] == f"consistency{phase}"
        restart()
        rnd.consistency(phase)
        restart()
        rnd.unmask(phase)
        restart()
    assert rnd.server.view()["state"] == "released"
    assert _released_sums(rnd) == _released_sums(plain)
    with rnd.server.engine.connect() as conn:
        assert "secure_uploads" not in inspect(rnd.server.engine).get_table_names()
        sums = {r.phase: r.count for r in conn.execute(select(database.t_sums))}
        receipts = conn.execute(select(func.count()).select_from(database.t_uploads)).scalar()
    assert sums == {0: 9, 1: 9} and receipts == 18


def test_the_view_of_an_upload_step_counts_the_uploads_in_so_far(tmp_path):
    """An admin closes an upload step once its survivors are in: the view of the step says how many uploads it holds
    (none in the view of another step)."""
    rnd = InProcessRound(tmp_path, n=6, dropouts=1, collusion=1)
    rnd.keys()
    rnd.shares()
    view = rnd.server.view()
    assert view["state"] == "upload0" and view["uploads_received"] == 0
    for c in rnd.people[:3]:
        body, sig = c.upload(0, view)
        rnd.server.post_upload(0, c.me, body, sig)
        rnd.server.post_upload(0, c.me, body, sig)      # a replay counts once
    assert rnd.server.view()["uploads_received"] == 3
    rnd.server.close()
    assert rnd.server.view()["state"] == "failed" and "uploads_received" not in rnd.server.view()


def test_an_upload_made_unmaskable_by_its_neighbours_dropping_fails_the_round(tmp_path):
    """An uploader left with fewer than T of its neighbours among the uploads cannot be unmasked (its neighbours
    refuse) and is in the running sum, which keeps no upload to take out: the step closes as failed, nothing is
    revealed."""
    rnd = InProcessRound(tmp_path, n=60, dropouts=18, collusion=0)       # 36 neighbours, threshold 19
    rnd.keys()
    rnd.shares()
    graph, T = rnd.server.graph(), rnd.server.T
    target = rnd.people[0].me
    drop = graph[target][:len(graph[target]) - T + 1]       # one more of its neighbours than it can lose
    rnd.upload(0, drop=drop)
    view = rnd.server.view()
    assert view["state"] == "failed" and "cannot be unmasked" in view["reason"], view


@pytest.mark.parametrize("damage, why", [
    ("UPDATE secure_round SET value = '{\"state\": \"dancing\"}' WHERE key = 'state'", "unknown step"),
    ("UPDATE secure_round SET value = '{\"state\": \"released\"}' WHERE key = 'state'", "without a model"),
    ("UPDATE secure_round SET value = '{\"state\"' WHERE key = 'state'", "do not read"),
    ("DELETE FROM secure_keys WHERE contributor = '0001'", "registered keys"),
    ("UPDATE secure_round SET value = '{\"state\": \"consistency0\"}' WHERE key = 'state'", "without its"),
])
def test_a_damaged_round_is_refused_on_restart_in_one_line(tmp_path, damage, why):
    import sqlite3

    from dptopic.service.secure_sum.default import SecureRound

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    con = sqlite3.connect(tmp_path / "round.sqlite")
    con.execute(damage)
    con.commit()
    con.close()
    with pytest.raises(DPTopicError, match=why) as e:
        SecureRound(rnd.cfg)
    assert "damaged" in str(e.value) and "\n" not in str(e.value)


def test_another_services_database_and_a_file_that_is_no_database_are_refused(tmp_path):
    import sqlite3

    from dptopic.service.secure_sum.config import SecureSumConfig
    from dptopic.service.secure_sum.default import SecureRound

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    con = sqlite3.connect(tmp_path / "theirs.sqlite")
    con.execute("CREATE TABLE reports (x)")
    con.commit()
    con.close()
    cfg = SecureSumConfig(rnd.words, rnd.plan, rnd.directory, n_topics=3, database=f"sqlite:///{tmp_path}/theirs.sqlite")
    with pytest.raises(DPTopicError, match="pass allow_foreign_tables=True") as e:
        SecureRound(cfg)
    assert "--allow-foreign-tables" in e.value.message({"allow_foreign_tables": "--allow-foreign-tables"})
    (tmp_path / "text.db").write_text("not a database\n" * 100)
    cfg = SecureSumConfig(rnd.words, rnd.plan, rnd.directory, n_topics=3, database=f"sqlite:///{tmp_path}/text.db")
    with pytest.raises(DPTopicError, match="^database=.* cannot hold the round"):
        SecureRound(cfg)


def uploads_received(live, phase: int) -> int:
    """How many upload receipts of step ``phase`` the live server's database holds."""
    from sqlalchemy import func, select

    from dptopic.service.secure_sum.database import t_uploads

    with live.app.state.round.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(t_uploads).where(t_uploads.c.phase == phase)).scalar()


def test_dropouts_within_the_tolerance_still_release_over_http(tmp_path):
    with Live(tmp_path, n=6, dropouts=1) as live:
        def admin_close_when_stuck():
            # the admin closes step 0 once the five who stayed have uploaded (the server holds their five receipts),
            # waiting on the server's state rather than for a while: a close before the last of them uploaded makes
            # two dropouts, one over the tolerance
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if live.call("GET", "/v1/secure/round")[1]["state"] in ("released", "failed"):
                    return
                if uploads_received(live, 0) == 5:
                    live.call("POST", "/v1/admin/secure/close", body=b"",
                              headers={"Authorization": f"Bearer {TOKEN}"})
                    return
                time.sleep(0.05)
        closer = threading.Thread(target=admin_close_when_stuck)
        closer.start()
        # contributor 5 registers and shares, then goes away before uploading
        cfg = live.call("GET", "/v1/config")[1]
        gone = SecureContributor(cfg, bow(5), live.invitations[5])
        live.call("POST", "/v1/secure/keys", gone.registration())
        out = [None] * 5

        def one(i):
            out[i] = take_part(live.url, bow(i), live.invitation_files[i], poll=0.05, timeout=120)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(5)]
        for t in threads:
            t.start()
        assert live.wait_state("shares", timeout=120)["state"] == "shares"
        gone.check_roster(live.call("GET", "/v1/secure/roster")[1])
        live.call("POST", "/v1/secure/shares", gone.shares_request(gone.roster))
        for t in threads:
            t.join(180)
        closer.join(180)
        view = live.wait_state("released", "failed")
        assert view["state"] == "released", out
        assert len(view["uploaded"]) == 5 and gone.me not in view["uploaded"], view


def test_a_contributor_refuses_a_larger_epsilon_before_computing(tmp_path):
    with Live(tmp_path) as live:
        cfg = live.call("GET", "/v1/config")[1]
        with pytest.raises(DPTopicError, match="above your max_epsilon"):
            SecureContributor(cfg, bow(0), live.invitations[0], max_epsilon=1.0, state=tmp_path / "state.json")
    assert not (tmp_path / "state.json").exists()


def test_a_resumed_contributor_sends_the_same_keys_shares_and_upload(tmp_path):
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    c = rnd.people[0]
    first = c.registration()
    rnd.keys()
    roster = rnd.server.roster_view()
    shares = c.shares_request(roster)
    again = SecureContributor(rnd.config_doc(), c.bow, rnd.invitations[0], state=c.path)     # a new run, same state
    assert again.registration() == first and again.shares_request(roster) == shares
    rnd.shares()
    view = rnd.server.view()
    body = c.upload(0, view)
    third = SecureContributor(rnd.config_doc(), c.bow, rnd.invitations[0], state=c.path)
    third.check_roster(roster)
    assert third.upload(0, view) == body


def test_fewer_signers_than_n_minus_f_fail_the_round_before_anything_is_revealed(tmp_path):
    """The unmasking opens only with at least N - F signers of the uploads (a server stopped short of them fails)."""
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0, drop={rnd.people[9].me})
    view = rnd.server.view()
    assert view["state"] == "consistency0" and len(view["uploaded"]) == 9
    for c in rnd.people[:7]:
        q = c.consistency(0, view)
        rnd.server.post_consistency(0, q["contributor"], q["signature"])
    view = rnd.server.close()
    assert view["state"] == "failed" and "only 7 contributors signed" in view["reason"]
    assert rnd.server._responses(0) == {}


def _route(rnd, handler, path: str, query: str, body: bytes, **path_params):
    """Call one of the server's HTTP route functions on ``rnd``'s round, as Starlette would."""
    import asyncio
    import json as _json
    from types import SimpleNamespace

    from starlette.requests import Request

    scope = {"type": "http", "method": "POST", "path": path, "query_string": query.encode(),
             "headers": [(b"content-type", b"application/json")], "path_params": path_params,
             "app": SimpleNamespace(state=SimpleNamespace(round=rnd.server))}

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}
    response = asyncio.run(handler(Request(scope, receive)))
    return response.status_code, _json.loads(response.body)


def test_a_post_and_wait_answer_after_its_step_closed_is_acknowledged_late_with_the_next_view(tmp_path):
    """The others' answers sufficed and the round moved on: a post-and-wait answer is not stored and comes back
    ``late`` with the view at the step it waited for (one request, no refusal to recover from); without ``wait`` it
    is refused as before (409 round_closed)."""
    import json as _json

    from dptopic.service.secure_sum import default_app as server

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    late = rnd.people[0]
    body = _json.dumps(late.unmask(0, rnd.server.view(), rnd.server.signatures(0))).encode()
    rnd.refused[late.me] = ("test", "answers after the others")
    assert rnd.unmask(0)["state"] == "upload1"
    with pytest.raises(server.ApiError) as e:
        _route(rnd, server.post_unmask, "/v1/secure/unmask/0", "", body, phase="0")
    assert e.value.code == "round_closed"
    status, doc = _route(rnd, server.post_unmask, "/v1/secure/unmask/0", "wait=upload1&timeout=1", body, phase="0")
    assert status == 200 and doc["late"] is True and doc["view"]["state"] == "upload1" and doc["view"]["kept"]
    assert late.me not in rnd.server._responses(0)         # nothing stored


def test_uploads_from_many_threads_are_each_in_the_running_sum_once(tmp_path, monkeypatch):
    """The server's request threads add uploads at once: the running sum in memory follows each commit under the
    round's lock, so none is lost (a lost update would leave the sum's count short of the receipts, and the step open
    for ever). Each change is slowed after its commit, so that a thread would take a stale sum if the lock were let
    go before the sum in memory follows the commit."""
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import contextmanager

    from sqlalchemy import select

    from dptopic.service.secure_sum import default as server
    from dptopic.service.secure_sum.database import t_sums, t_uploads

    real = server.SecureRound._txn

    @contextmanager
    def slow(self):
        with real(self) as conn:
            yield conn
        time.sleep(0.005)
    monkeypatch.setattr(server.SecureRound, "_txn", slow)

    rnd = InProcessRound(tmp_path, n=40, dropouts=4, collusion=1, seed=9)
    rnd.keys()
    rnd.shares()
    view = rnd.server.view()
    bodies = [(c, *c.upload(0, view)) for c in rnd.people]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda b: rnd.server.post_upload(0, b[0].me, b[1], b[2]), bodies))
    with rnd.server.engine.connect() as conn:
        count = conn.execute(select(t_sums.c.count).where(t_sums.c.phase == 0)).scalar()
        receipts = conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == 0)).all()
    assert count == len(receipts) == 40
    assert rnd.server.view()["state"] == "consistency0"


@pytest.mark.parametrize("names, said", [
    (None, "(min_contributors minus dropout_tolerance)"),
    ({"min_contributors": "--min-contributors", "dropout_tolerance": "--dropout-tolerance"},
     "(--min-contributors minus --dropout-tolerance)")])
def test_a_failed_round_names_its_settings_as_whoever_started_the_server_does(tmp_path, names, said):
    """Too few uploads fail the round, and its reason names the settings that set the least: a Python caller's
    names by default, ``dptopic serve``'s flags where it passed them (create_secure_sum_app's setting_names)."""
    rnd = InProcessRound(tmp_path, n=6, dropouts=1, collusion=0)
    if names is not None:
        rnd.server.setting_names = names
    rnd.keys()
    rnd.shares()
    rnd.upload(0, drop={rnd.people[0].me, rnd.people[1].me})
    view = rnd.server.view()
    assert view["state"] == "failed" and f"only 4 uploads in step 0, fewer than 5 {said}" in view["reason"], view


def test_the_admin_answers_name_the_token_setting_in_the_servers_names(tmp_path):
    """Without an admin token the close endpoint is off: the answer names ``admin_token`` to a Python caller, and
    ``--token-file`` to a server that ``dptopic serve`` started."""
    import asyncio
    from types import SimpleNamespace

    from starlette.requests import Request

    from dptopic.service.secure_sum.config import ApiError
    from dptopic.service.secure_sum.default_app import admin_close

    rnd = InProcessRound(tmp_path, n=6, dropouts=1, collusion=0)
    rnd.server.cfg.admin_token = None
    for names, said in ((None, "start the server with an admin_token"),
                        ({"admin_token": "--token-file"}, "start the server with --token-file")):
        state = SimpleNamespace(round=rnd.server, setting_names=names)
        scope = {"type": "http", "method": "POST", "path": "/v1/admin/secure/close", "query_string": b"",
                 "headers": [], "app": SimpleNamespace(state=state)}
        with pytest.raises(ApiError) as e:
            asyncio.run(admin_close(Request(scope)))
        assert e.value.status == 403 and said in e.value.message, e.value.message


def test_the_rounds_start_up_objects_are_frozen_out_of_the_collector(tmp_path):
    """Every request of a round waits for a full collection that runs in the server (one process, one GIL): once it
    has started, what lives as long as the round's app (imports, the directory, the neighbour graph) is out of the
    full collections' scans, as the collection service's app does (tests/service/test_app.py)."""
    import asyncio
    import gc

    from dptopic.service.secure_sum.default_app import create_secure_sum_app

    cfg = InProcessRound(tmp_path, n=12).cfg

    async def frozen_while_serving(app):
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count()

    gc.unfreeze()
    try:
        assert asyncio.run(frozen_while_serving(create_secure_sum_app(cfg))) > 1000
        gc.unfreeze()
        assert asyncio.run(frozen_while_serving(create_secure_sum_app(cfg, freeze_gc=False))) == 0
    finally:
        gc.unfreeze()


def test_the_release_code_is_loaded_off_the_round_once_the_server_has_started(tmp_path, monkeypatch):
    """The code that reads the unmasked sums (scikit-learn: over a second of imports) is imported on a thread of its
    own when the server starts, not between step 0's unmasking and step 1's opening while every contributor waits;
    the server answers without waiting for it, and ``preload=False`` leaves it out."""
    import asyncio
    import threading

    from dptopic.service.secure_sum import default_app as server

    cfg = InProcessRound(tmp_path, n=12).cfg
    started, release = [], threading.Event()

    def slow_preload():
        started.append(threading.current_thread().name)
        release.wait(10)        # a slow import: the lifespan must not wait for it

    monkeypatch.setattr(server, "preload_release_code", slow_preload)

    async def serving(app):
        async with app.router.lifespan_context(app):
            await asyncio.sleep(0.2)
            return list(started)

    try:
        assert asyncio.run(serving(server.create_secure_sum_app(cfg, freeze_gc=False))) == ["secure-preload"]
    finally:
        release.set()
    started.clear()
    assert asyncio.run(serving(server.create_secure_sum_app(cfg, freeze_gc=False, preload=False))) == []


def test_preloading_imports_what_the_unmasking_reads():
    import subprocess
    import sys

    code = ("import sys; from dptopic.service.secure_sum.web import preload_release_code; "
            "print('dptopic.models.secure_sum' in sys.modules, end=' '); preload_release_code(); "
            "print('dptopic.models.secure_sum' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_a_change_of_step_wakes_each_long_poll_once_and_no_message_wakes_it(tmp_path):
    """The round wakes its long polls when this process moves it to another step (one wake-up per waiter and change
    of step, none per message), so that a waiter answers at once instead of at its next look (up to 0.25 s later)."""
    rnd = InProcessRound(tmp_path, n=8, dropouts=1, collusion=1)
    woken = []
    rnd.server.listen(lambda: woken.append(rnd.server.st["state"]))
    rnd.keys()
    assert woken == ["shares"]                      # 8 registrations, one change of step
    rnd.shares()
    rnd.upload(0)
    assert woken == ["shares", "upload0", "consistency0"]
    rnd.server.unlisten(woken.append)               # not a listener: nothing happens
    rnd.consistency(0)
    assert woken[-1] == "unmask0" and len(woken) == 4


def test_a_long_poll_answers_when_the_step_changes_not_at_its_next_look(tmp_path, monkeypatch):
    import asyncio
    import threading

    from starlette.requests import Request

    from dptopic.service.secure_sum import default_app as server

    monkeypatch.setattr(server, "FIRST_LOOK_S", 60.0)     # looks alone would not see the change for a minute
    monkeypatch.setattr(server, "LOOK_EVERY_S", 60.0)
    rnd = InProcessRound(tmp_path, n=8, dropouts=1, collusion=1)
    rnd.keys()
    app = server.create_secure_sum_app(rnd.cfg, freeze_gc=False, preload=False)
    app.state.round = rnd.server
    request = Request({"type": "http", "method": "GET", "path": "/v1/secure/round", "headers": [], "app": app,
                       "query_string": b"wait=upload0&timeout=20"})

    async def wait_for_upload0():
        waiter = asyncio.create_task(server._await_view(request))
        await asyncio.sleep(0.3)
        assert not waiter.done() and len(rnd.server._waiters) == 1
        moved = threading.Thread(target=rnd.shares)
        moved.start()
        await asyncio.to_thread(moved.join)
        changed = time.monotonic()
        view = await waiter
        return view, time.monotonic() - changed

    view, late = asyncio.run(wait_for_upload0())
    assert view["state"] == "upload0" and late < 1.0
    assert rnd.server._waiters == set()


DEEP = b"[" * 1900 + b"]" * 1900
"""A JSON body of 1,900 nested brackets (3,800 bytes: within the smallest body limit of a round's routes, 4 KiB), past
Python's recursion limit."""


def _round_servers(tmp_path):
    """``(name, live server, the routes that read a JSON body)`` of every round's server: a single round's, the
    committee mode's and a round in cohorts' (its root and a cohort's round under its prefix)."""
    from cohort_helpers import LiveCohortRound
    from committee_helpers import CommitteeServer

    single = ["/v1/secure/keys", "/v1/secure/shares", "/v1/secure/consistency/0", "/v1/secure/unmask/0"]
    yield "single", Live(tmp_path / "single"), single
    (tmp_path / "committee").mkdir()
    yield "committee", CommitteeServer(tmp_path / "committee", WORDS, 6, dropouts=1), [
        "/v1/secure/prekeys", "/v1/secure/consistency/0", "/v1/secure/unmask/0"]
    (tmp_path / "cohorts").mkdir()
    yield "cohorts", LiveCohortRound(tmp_path / "cohorts", 24, 12), ["/cohorts/0" + p for p in single]


def test_every_round_server_answers_deep_json_with_a_400_in_the_apis_shape(tmp_path):
    """Deeply nested brackets in the body of every route that reads JSON (and in a committee upload's header) are
    a 400 ``bad_json`` in one line, not a plain-text 500 (the parser's RecursionError)."""
    import json

    from service_helpers import http

    (tmp_path / "single").mkdir()
    for name, server, routes in _round_servers(tmp_path):
        with server as live:
            for path in routes:
                status, headers, data = http("POST", live.url + path, DEEP, {"Content-Type": "application/json"})
                assert status == 400 and headers["content-type"] == "application/json", (name, path, status, data)
                err = json.loads(data)["error"]
                assert err["code"] == "bad_json" and "nests" in err["message"], (name, path, err)
            if name == "committee":
                status, _, data = http("POST", live.url + "/v1/secure/upload/0", DEEP + b"\x00" * 8,
                                       {"Dptopic-Meta-Length": str(len(DEEP)), "Dptopic-Contributor": "0001"})
                assert status == 400 and json.loads(data)["error"]["code"] == "bad_json", data


@pytest.mark.parametrize("method, path, status, code", [
    ("GET", "/no/such/route", 404, "not_found"), ("POST", "/v1/secure/keyz", 404, "not_found"),
    ("DELETE", "/v1/config", 405, "method_not_allowed"), ("GET", "/v1/admin/secure/close", 405, "method_not_allowed")])
def test_every_round_server_answers_unknown_routes_and_methods_in_the_apis_shape(tmp_path, method, path, status,
                                                                                 code):
    """An unknown route (404) or a method a route does not take (405, with its Allow header) is answered as every
    refusal is, ``{"error": {"code", "message"}}`` in JSON, by a single round's server, the committee mode's and a
    round in cohorts' (its root and under a cohort's prefix), not in Starlette's plain text."""
    import json

    from service_helpers import http

    (tmp_path / "single").mkdir()
    for name, server, _ in _round_servers(tmp_path):
        with server as live:
            for where in [path] + (["/cohorts/0" + path] if name == "cohorts" else []):
                got, headers, data = http(method, live.url + where)
                assert got == status and headers["content-type"] == "application/json", (name, where, got, data)
                err = json.loads(data)["error"]
                assert err["code"] == code and where.split("/")[-1] in err["message"], (name, where, err)
                if status == 405:
                    assert headers.get("allow"), (name, where, headers)


# ----------------------------------------------------------------------------- no-shows: the roster closes without them
def test_a_roster_closed_without_a_no_show_releases_what_a_dropout_before_upload_would(tmp_path):
    """An invited contributor who never registers is one of the F dropouts: the admin closes the roster with the
    others (it failed the round before), and the round releases exactly the sums of a round in which that person
    registered and then dropped out before uploading (the same seeded statistics and noise), every step still with at
    least N - F."""
    from dptopic.service.secure_sum.default import SecureRound

    dropped = InProcessRound(tmp_path / "dropped", n=10, dropouts=2, collusion=1, seed=3)
    x = dropped.people[-1].me
    assert dropped.run(drop0=[x])["state"] == "released"
    rnd = InProcessRound(tmp_path / "no-show", n=10, dropouts=2, collusion=1, seed=3)
    rnd.keys(absent=[x])
    assert rnd.server.view()["state"] == "keys"
    assert rnd.server.close()["state"] == "shares"
    rnd.server.engine.dispose()
    rnd.server = SecureRound(rnd.cfg)       # started again on the same database: the closed roster of 9 reads
    assert sorted(rnd.server.roster_view()) == sorted(c.me for c in rnd.people if c.me != x)
    assert rnd.run(absent=[x])["state"] == "released" and rnd.refused == {}
    assert _released_sums(rnd) == _released_sums(dropped)


def test_a_roster_closed_with_fewer_than_the_plan_needs_fails_the_round_in_one_line(tmp_path):
    """More no-shows than the plan tolerates: the roster's close fails the round, in one line saying how many
    registered and how many the plan needs; a registration after it is refused, nothing stored."""
    from dptopic.service.secure_sum.config import ApiError

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys(absent=[c.me for c in rnd.people[:3]])
    view = rnd.server.close()
    assert view["state"] == "failed" and view["reason"].startswith(
        "the roster closed (by the admin) with 7 of the 10 invited contributors registered, fewer than 8"
        " (min_contributors minus dropout_tolerance"), view
    late = rnd.people[0].registration()
    with pytest.raises(ApiError, match="roster has closed without contributor .* registered too late"):
        rnd.server.post_keys(late["contributor"], late["keys"], late["signature"])


def test_a_roster_that_leaves_a_contributor_short_of_its_neighbours_fails_before_the_shares(tmp_path):
    """No-shows among one contributor's neighbours past what it can lose: its shares could not be completed, so the
    roster's close fails the round naming it (before anyone sends a share), though enough registered in all."""
    rnd = InProcessRound(tmp_path, n=60, dropouts=18, collusion=0)       # 36 neighbours, threshold 19
    graph, T = rnd.server.graph(), rnd.server.T
    target = rnd.people[0].me
    rnd.keys(absent=graph[target][:len(graph[target]) - T + 1])
    view = rnd.server.close()
    assert view["state"] == "failed" and f"contributor {target!r} holding fewer than {T}" in view["reason"], view


def test_the_roster_closes_at_its_registration_deadline_and_the_round_releases_over_http(tmp_path):
    """``registration_s``: the server says when the roster closes (``registration_closes_at``), closes it at the
    deadline with those registered (a thread of its own: no request is needed) and the round releases without the
    no-show; that contributor, coming late, is refused in one line with nothing stored."""
    import json

    from service_helpers import http

    with SecureSumServer(tmp_path, WORDS, n=6, dropouts=2, registration_s=3.0) as live:
        view = live.call("GET", "/v1/secure/round")[1]
        assert view["state"] == "keys" and view["registration_closes_at"] > time.time()
        out = live.play(tmp_path, skip={5})
        assert all(isinstance(o, dict) for i, o in enumerate(out) if i != 5), out
        assert live.wait_state("released", "failed")["state"] == "released"
        late = SecureContributor(live.call("GET", "/v1/config")[1], bow(5), live.invitations[5])
        status, _, data = http("POST", live.url + "/v1/secure/keys", json.dumps(late.registration()).encode())
        assert status == 409 and json.loads(data)["error"]["code"] == "round_closed"
        assert len(live.app.state.round.roster()) == 5


def test_too_many_no_shows_at_the_registration_deadline_fail_the_round_with_its_reason(tmp_path):
    """At the deadline with fewer registered than N - F: the round fails, and every waiting contributor hears the
    reason (nothing of theirs was sent but public keys)."""
    with SecureSumServer(tmp_path, WORDS, n=6, dropouts=1, registration_s=2.0) as live:
        out = live.play(tmp_path, skip={4, 5})
        view = live.wait_state("failed", "released", timeout=30)
    assert view["state"] == "failed" and "with 4 of the 6 invited contributors registered, fewer than 5" in \
        view["reason"], view
    assert all(isinstance(o, DPTopicError) and "fewer than 5" in str(o) for o in out[:4]), out


# ----------------------------------------------------------------------------- the plan and mode the directory names
def test_the_server_starts_only_the_plan_and_mode_its_directory_names(tmp_path):
    """The directory names the operator's plan and mode: a server started with another plan, or in the other mode,
    is refused in one line before it serves or stores anything (its contributors would refuse it); a round's
    database restarts only in the mode it was stored in."""
    from dptopic.errors import ParameterError
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    from dptopic.service.secure_sum.committee import CommitteeRound
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound
    from dptopic.service.secure_sum.config import SecureSumConfig
    from dptopic.service.secure_sum.default import SecureRound
    from dptopic.service.startup import secure_sum_settings

    words = [f"w{i:03d}" for i in range(30)]
    make_invitations(tmp_path / "k", 12, tmp_path / "plain", round_id="r", dropouts=2, collusion=1)
    make_invitations(tmp_path / "k", 12, tmp_path / "committee", round_id="r", dropouts=2, collusion=1,
                     committee=True)
    plain, committee = (read_directory(tmp_path / d / "directory.json") for d in ("plain", "committee"))
    assert plain["layout"] == {"count": 12, "dropouts": 2, "collusion": 1} and committee["committee"] is True
    plan = SecureSumPlan(8.0, 1e-5, 12, 2, 30, 1)
    with pytest.raises(ParameterError, match="directory was written for another plan of the round: collusion 1 in"
                                             " the invitations, 0 in the plan"):
        SecureSumConfig(words, SecureSumPlan(8.0, 1e-5, 12, 2, 30, 0), plain)
    with pytest.raises(ParameterError, match="directory names a committee round: serve it in the committee mode"):
        SecureSumConfig(words, plan, committee)
    with pytest.raises(ParameterError, match="directory names a round without a committee"):
        CommitteeRound(SecureSumPlan(8.0, 1e-5, 12, 2, 30, 1, committee="auto"), plain, words)
    settings = secure_sum_settings(words, unit="user", epsilon=8.0, min_contributors=12, directory=plain)
    assert (settings["plan"].dropouts, settings["plan"].collusion) == (2, 1)      # the invitations' plan
    with pytest.raises(ParameterError, match="collusion=3 differs from the 1 the invitations pin"):
        secure_sum_settings(words, unit="user", epsilon=8.0, min_contributors=12, collusion=3, directory=plain)
    with pytest.raises(ParameterError, match="directory names a committee round"):
        secure_sum_settings(words, unit="user", epsilon=8.0, min_contributors=12, directory=committee)
    older = {k: v for k, v in plain.items() if k not in ("layout", "committee")}      # an older dptopic's
    with pytest.raises(ParameterError, match="names no plan"):
        secure_sum_settings(words, unit="user", epsilon=8.0, min_contributors=12, directory=older)
    db = f"sqlite:///{tmp_path}/round.db"
    SecureRound(SecureSumConfig(words, plan, plain, n_topics=3, database=db)).engine.dispose()
    with pytest.raises(DPTopicError, match="holds a secure-sum round without a committee: restart the server"
                                           " without the committee mode"):
        StoredCommitteeRound(SecureSumPlan(8.0, 1e-5, 12, 2, 30, 1, committee="auto"), committee, words, 3,
                             database=db)
    db2 = f"sqlite:///{tmp_path}/committee.db"
    StoredCommitteeRound(SecureSumPlan(8.0, 1e-5, 12, 2, 30, 1, committee="auto"), committee, words, 3,
                         database=db2).engine.dispose()
    with pytest.raises(ParameterError, match="holds a committee-mode round: restart the server in the committee"
                                             " mode"):
        SecureRound(SecureSumConfig(words, plan, plain, n_topics=3, database=db2))
