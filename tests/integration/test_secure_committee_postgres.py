"""A committee-mode round (``dptopic serve --report-kind secure-sum --secure-committee auto``) served by two server
processes sharing a throwaway PostgreSQL database: every message one transaction under the round's advisory lock,
each process reading in what the other committed before its checks run. The released sums are exactly the
uploaders' (each contributor's noisy share recorded as it masked it); a process killed with SIGKILL leaves the round
to the other; messages racing on both processes are each stored once and close each step once. A second server
process on a SQLite round is refused, as the default round's is."""
from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sqlalchemy import create_engine, select, text

from committee_helpers import CommitteeOverHttp, InProcessCommitteeRound, Spread, committee_serve_class
from service_helpers import new_database, throwaway_postgres

pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
pytestmark = [pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning"), pytest.mark.postgres,
              pytest.mark.service]
CommitteeServe = committee_serve_class()


@pytest.fixture(scope="module")
def pg():
    yield from throwaway_postgres()




def two_servers(pg, tmp_path, rnd):
    """``rnd``'s round served by two ``dptopic serve`` processes on a new PostgreSQL database, both started."""
    url = new_database(pg.url, "committee80")
    servers = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        servers.append(CommitteeServe(tmp_path / name, rnd, url))
    for s in servers:
        s.start()
    return url, servers


def stored(url: str) -> tuple[dict, dict]:
    """The round's unmasked sums and its sets of uploads, as the database holds them."""
    from dptopic.service.secure_sum.committee_store import c_state, c_sums

    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            sums = {r.phase: np.frombuffer(r.data, dtype=np.int64) for r in conn.execute(select(c_sums))}
            uploaded = json.loads(conn.execute(select(c_state.c.value).where(c_state.c.key == "uploaded")).scalar())
    finally:
        engine.dispose()
    return sums, {int(p): u for p, u in uploaded.items()}


def assert_exact_sums(url: str, shares: dict, dropped=()) -> None:
    sums, uploaded = stored(url)
    assert sorted(sums) == [0, 1]
    assert not set(dropped) & set(uploaded[0])
    for p in (0, 1):
        assert np.array_equal(sums[p], np.sum([shares[(u, p)] for u in uploaded[p]], axis=0)), p


def test_two_server_objects_share_a_committee_round_on_postgresql(tmp_path, pg):
    """Two rounds on one database, as two server processes hold them (each its own copy in memory), every call to
    the next: each reads in what the other stored before it checks a message; one opened again halfway."""
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound

    url = new_database(pg.url, "committee80")
    rnd = InProcessCommitteeRound(tmp_path, n=10, dropouts=1, collusion=1, seed=5)
    class Fresh:
        """A round's attributes (its state, committee) read as a server process answers a view: once what the other
        stored is read in (its methods left as they are)."""

        def __init__(self, r):
            self.r = r

        def __getattr__(self, name):
            if not callable(getattr(self.r, name)):
                self.r.fresh()
            return getattr(self.r, name)
    a, b = (StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, url) for _ in range(2))
    rnd.server = Spread(Fresh(a), Fresh(b))
    rnd.prekeys()
    rnd.open()
    ordinary = [i for i in sorted(rnd.by_id) if i not in rnd.committee]
    rnd.upload(0, drop=ordinary[:1])
    b.dispose()
    b = StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, url)
    rnd.server = Spread(Fresh(a), Fresh(b))
    assert b.view() == a.view()
    for phase in (0, 1):
        if phase == 1:
            rnd.upload(1)
        rnd.consistency(phase)
        rnd.unmask(phase)
    assert a.view()["state"] == b.view()["state"] == "released", a.reason
    for p in (0, 1):
        assert np.array_equal(a.sums[p], b.sums[p]) and np.array_equal(a.sums[p], rnd.plain_sum(p))
    a.dispose()
    b.dispose()


def test_two_server_processes_serve_a_committee_round_with_each_request_sent_to_the_next(tmp_path, pg, monkeypatch):
    """Every contributor's requests alternate between the two processes (a post-and-wait on one, its next message on
    the other), two of twenty leave after masking and the admin closes step 0 on the other process: an ordinary
    contributor still makes 3 requests, a committee member 7, and the sums released are the uploaders' exactly."""
    from cohort_helpers import tiny_bows
    from dptopic.contributor.client import ServiceClient
    from dptopic.contributor.secure_sum.client import REQUESTS_COMMITTEE, REQUESTS_COMMITTEE_MEMBER, take_part_committee
    from dptopic.contributor.secure_sum.committee import CommitteeContributor
    from dptopic.protocol.secure_sum import committee as sc

    shares = {}
    share = CommitteeContributor._share

    def recorded(self, phase, x):       # each contributor's noisy share, as it masked it
        out = share(self, phase, x)
        shares[(self.me, phase)] = np.asarray(out, dtype=np.int64)
        return out
    monkeypatch.setattr(CommitteeContributor, "_share", recorded)

    class Alternating(ServiceClient):
        """Each request to the next server process, on a new connection; the requests counted."""

        def __init__(self, urls):
            super().__init__(urls[0])
            self.urls, self.sent = urls, []

        def request(self, method, path, *a, **k):
            self.sent.append(f"{method} {path.split('?')[0]}")
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self.server = self.urls[len(self.sent) % 2]
            return super().request(method, path, *a, **k)

    n = 20
    rnd = InProcessCommitteeRound(tmp_path, n=n, dropouts=2, collusion=1, seed=9)
    ids = sorted(rnd.by_id)
    committee = set(sc.committee_of(ids, "round1", rnd.plan.committee))
    leaving = [i for i in ids if i not in committee][:2]
    files = sorted((tmp_path / "inv").glob("invitation-*.json"))
    bows = tiny_bows(n, 9, 30)
    url, (a, b) = two_servers(pg, tmp_path, rnd)
    try:
        urls = [a.url, b.url]
        admin = [CommitteeOverHttp(u) for u in urls]
        clients = [Alternating(urls) for _ in files]
        out = [None] * n

        def one(i):
            me = json.loads(files[i].read_text())["contributor"]
            out[i] = take_part_committee(urls[i % 2], bows[i], files[i], tmp_path / f"s{i}.json", client=clients[i],
                                         timeout=120, leave_after_masking=me in leaving)

        def close_step0():      # the admin, once the survivors' uploads are in (on the process that took fewer)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                v = admin[0].view()
                if v["state"] == "upload0" and v["received"] == n - len(leaving):
                    admin[1].close()
                    return
                if v["state"] not in ("keys", "upload0"):
                    return
                time.sleep(0.05)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)] + [threading.Thread(target=close_step0)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(240)
        assert all(isinstance(o, dict) for o in out), out
        for i, o in enumerate(out):
            if o["contributor"] in leaving:
                assert o.get("left") == "step 0" and clients[i].sent == ["POST /v1/secure/prekeys"]
                continue
            want = list(REQUESTS_COMMITTEE_MEMBER if o["contributor"] in committee else REQUESTS_COMMITTEE)
            assert clients[i].sent == want, (o["contributor"], clients[i].sent)
        models = [admin[k]._call("GET", "/v1/model") for k in (0, 1)]      # whichever process unmasked
        assert models[0] == models[1] and "model_json" in models[0]
    finally:
        a.stop()
        b.stop()
    assert_exact_sums(url, shares, dropped=leaving)


def test_a_server_process_killed_mid_step_leaves_the_round_to_the_other(tmp_path, pg):
    """Step 1's uploads sent at once, half to each process; one process is killed with SIGKILL once some are in.
    What it acknowledged is stored; the contributors send the rest (and again what it did not answer) to the other
    process, which finishes the round with the exact sums."""
    from dptopic.service.secure_sum.config import ApiError

    rnd = InProcessCommitteeRound(tmp_path, n=16, dropouts=2, collusion=1, seed=4)
    url, (a, b) = two_servers(pg, tmp_path, rnd)
    try:
        servers = [CommitteeOverHttp(a.url), CommitteeOverHttp(b.url)]
        rnd.server = Spread(*servers)
        rnd.prekeys()
        rnd.open()
        ordinary = [i for i in sorted(rnd.by_id) if i not in rnd.committee]
        rnd.upload(0, drop=ordinary[:2])
        rnd.consistency(0)
        rnd.unmask(0)
        view = servers[1].view()
        assert view["state"] == "upload1", view
        bodies = [(c, c.committee_upload(1, view)) for c in rnd.people if c.me in view["members"]]
        done = []

        def send(k):
            c, body = bodies[k]
            try:
                servers[k % 2].post_upload(1, c.me, *body)
                done.append(c.me)
            except (ApiError, OSError):     # the killed process: no answer
                pass

        def kill():
            while len(done) < 5:
                time.sleep(0.001)
            a.kill()
        with ThreadPoolExecutor(9) as pool:
            jobs = [pool.submit(kill)] + [pool.submit(send, k) for k in range(len(bodies))]
            for j in jobs:
                j.result()
        assert a.proc.poll() is not None
        rnd.server = servers[1]
        rnd.upload(1)           # the rest, and again those unanswered: replays where they were stored
        rnd.consistency(1)
        assert rnd.unmask(1)["state"] == "released"
        assert servers[1].view()["uploaded"] == sorted(c.me for c, _ in bodies)
    finally:
        a.stop()
        b.stop()
    assert_exact_sums(url, rnd.shares, dropped=ordinary[:2])


def test_messages_racing_on_two_processes_are_each_stored_once_and_close_each_step_once(tmp_path, pg):
    """Each step's messages sent at once, alternately to the two processes (the uploads, the committee's signatures,
    its answers): every one is stored (none refused for a conflict, none lost from the running sum), the last one
    closes the step exactly once (the roster, the uploads, the signatures; the unmasking runs once), and the sums
    are exact."""
    rnd = InProcessCommitteeRound(tmp_path, n=14, dropouts=2, collusion=1, seed=6)
    url, (a, b) = two_servers(pg, tmp_path, rnd)
    try:
        servers = [CommitteeOverHttp(a.url), CommitteeOverHttp(b.url)]
        rnd.server = Spread(*servers)

        def race(calls):
            with ThreadPoolExecutor(8) as pool:
                return list(pool.map(lambda kc: kc[1](servers[kc[0] % 2]), enumerate(calls)))
        out = race([lambda s, c=c: s.post_prekeys(c.me, [c.prekey()]) for c in rnd.people])
        assert all(o["registered"] for o in out), out
        rnd.open()
        for phase in (0, 1):
            view = servers[0].view()
            assert view["state"] == f"upload{phase}", view
            ups = [(c.me, c.committee_upload(phase, view)) for c in rnd.people]
            out = race([lambda s, u=u: s.post_upload(phase, u[0], *u[1]) for u in ups])
            assert all(o == {"stored": True} for o in out), out
            view = servers[1].view()
            assert view["state"] == f"consistency{phase}" and view["uploaded"] == sorted(rnd.by_id), view
            sigs = [(m, rnd.by_id[m].committee_consistency(phase, servers[k % 2].committee_view(phase, m)))
                    for k, m in enumerate(rnd.committee)]
            out = race([lambda s, q=q: s.post_consistency(phase, q[0], q[1]["signature"]) for q in sigs])
            assert all(o == {"stored": True} for o in out), out
            view = servers[0].view()
            assert view["state"] == f"unmask{phase}" and view["signers"] == sorted(rnd.committee), view
            signatures = servers[1].signatures(phase)
            answers = []
            for k, m in enumerate(view["signers"]):
                v = servers[k % 2].committee_view(phase, m)
                answers.append((m, rnd.by_id[m].committee_unmask(phase, v, signatures, v["uploads"])))
            out = race([lambda s, q=q: s.post_unmask(phase, q[0], q[1]["answers"], q[1]["signature"])
                        for q in answers])
            assert all(o == {"stored": True} for o in out), out
            assert servers[1].view()["state"] == ("upload1" if phase == 0 else "released")
    finally:
        a.stop()
        b.stop()
    assert_exact_sums(url, rnd.shares)


def test_a_second_server_process_on_a_sqlite_committee_round_is_refused(tmp_path):
    rnd = InProcessCommitteeRound(tmp_path / "r", n=6, dropouts=1, collusion=1, seed=1)
    db = f"sqlite:///{tmp_path}/one.sqlite"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = CommitteeServe(tmp_path / "a", rnd, db).start()
    b = CommitteeServe(tmp_path / "b", rnd, db)
    try:
        with pytest.raises((RuntimeError, AssertionError)):
            b.start(timeout=60)
        assert "served by another server process" in b.log_text() and "PostgreSQL" in b.log_text()
        assert len(b.log_text().strip().splitlines()) == 1, b.log_text()       # one line, no traceback
        assert CommitteeOverHttp(a.url).view()["state"] == "keys"      # the first serves on
    finally:
        a.stop()
        b.stop()


def test_a_round_in_committee_cohorts_keeps_each_cohort_in_its_own_schema_charged_once_and_resumes(pg, tmp_path):
    """Committee cohorts on one PostgreSQL database, each cohort's committee round in a schema named by its round id
    (the bridge's default round in its own, as default cohorts keep theirs), charged to a dataset ledger once: the
    round releases, a server started again on the database reads it back released and charges nothing more, and a
    second server of the round is refused (one process runs its coordinator)."""
    from cohort_helpers import LiveCohortRound, play_all, tiny_bows
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.errors import DPTopicError
    from dptopic.service.secure_sum.cohort_app import CohortServer

    url, led = new_database(pg.url, "committee80"), tmp_path / "ledger.sqlite"
    with LiveCohortRound(tmp_path / "live", 40, 20, committee="auto", database=url, ledger=led,
                         dataset="clinic") as live:
        out = play_all(live.url, live.files, tiny_bows(40), tmp_path / "live")
        assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
        assert live.server.view()["state"] == "released"
        cfg = live.cfg
    live.server.stop()
    eng = create_engine(url)
    try:
        with eng.connect() as c:
            def schemas(table):
                return set(c.execute(text("SELECT table_schema FROM information_schema.tables WHERE table_name = :t"),
                                     {"t": table}).scalars())
            assert schemas("committee_round") == {"round1-c0", "round1-c1"}
            assert schemas("secure_round") == {"round1-bridge"}
    finally:
        eng.dispose()
    again = CohortServer(cfg)
    try:
        assert again.view()["state"] == "released"
        with pytest.raises(DPTopicError, match="served by another server process"):
            CohortServer(cfg)
    finally:
        again.stop()
    assert len(DatasetLedger(led).releases("clinic")) == 1


def test_a_process_that_dies_after_the_debit_leaves_the_round_to_the_other_which_charges_nothing_more(
        tmp_path, pg, monkeypatch):
    """Two server processes of one committee round charged to a dataset ledger: the one that takes the last answer
    of step 0 makes the debit and dies before its unmasking is committed; the answer sent again to the other is
    unmasked there with no second debit (the mark is read from the database under the round's lock)."""
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum import committee_state as server
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound

    url, led = new_database(pg.url, "committee80"), tmp_path / "ledger.sqlite"
    rnd = InProcessCommitteeRound(tmp_path, n=8, dropouts=1, collusion=1, seed=3)
    a, b = (StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, url, ledger=str(led),
                                 ledger_dataset="clinic") for _ in range(2))
    rnd.server = a
    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    rnd.consistency(0)
    signers = a.view()["signers"]
    answers = {}
    for m in signers:
        v = a.committee_view(0, m)
        answers[m] = rnd.by_id[m].committee_unmask(0, v, a.signatures(0), v["uploads"])
    for m in signers[:-1]:
        a.post_unmask(0, m, answers[m]["answers"], answers[m]["signature"])
    real = server.unmask_committee_sum

    def killed(*args, **kw):
        raise SystemExit("killed after the debit")
    monkeypatch.setattr(server, "unmask_committee_sum", killed)
    last = answers[signers[-1]]
    with pytest.raises(SystemExit):
        a.post_unmask(0, signers[-1], last["answers"], last["signature"])
    a.dispose()
    assert len(DatasetLedger(led).releases("clinic")) == 1
    monkeypatch.setattr(server, "unmask_committee_sum", real)
    b.post_unmask(0, signers[-1], last["answers"], last["signature"])
    assert b.state == "upload1", b.reason
    assert len(DatasetLedger(led).releases("clinic")) == 1
    b.dispose()
