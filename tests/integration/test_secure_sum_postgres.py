"""One secure-sum round served by two ``dptopic serve --report-kind secure-sum`` processes sharing a throwaway
PostgreSQL database: the contributors spread across them, every change of the round a transaction that holds its
state row; the sums released are exactly those of the same round served by one process on SQLite. And a second
server process on a SQLite round is refused."""
from __future__ import annotations

import itertools
import json
import time
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, text

from service_helpers import InProcessRound, OverHttp, SecureServe, new_database, throwaway_postgres

pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")


@pytest.fixture(scope="module")
def pg():
    yield from throwaway_postgres()




class Spread:
    """The server methods :class:`InProcessRound` calls, each call sent to the next of several server processes."""

    def __init__(self, *servers: OverHttp):
        self.servers = itertools.cycle(servers)

    def __getattr__(self, name):
        return getattr(next(self.servers), name)


@contextmanager
def two_servers(pg, tmp_path, rnd):
    """``rnd``'s round served by two ``dptopic serve`` processes sharing a new PostgreSQL database: ``(url, a, b)``,
    both started (the second finds the round the first created, and joins it) and stopped on the way out."""
    url = new_database(pg.url, "secure80")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = SecureServe(tmp_path / "a", rnd, url), SecureServe(tmp_path / "b", rnd, url)
    try:
        a.start()
        b.start()
        yield url, a, b
    finally:
        a.stop()
        b.stop()


def assert_same_sums(url: str, plain, uploads: int | None = None) -> None:
    """The round on PostgreSQL at ``url`` released, step for step, the sums ``plain`` (the same contributors served
    by one SQLite process) released; with ``uploads``, each step's running sum holds every receipt exactly once."""
    from sqlalchemy import select

    from dptopic.service.secure_sum.database import t_state, t_sums, t_uploads
    engine = create_engine(url)
    try:
        with engine.connect() as c, plain.server.engine.connect() as d:
            for p in (0, 1):
                q = select(t_state.c.value).where(t_state.c.key == f"sum{p}")
                assert json.loads(c.execute(q).scalar()) == json.loads(d.execute(q).scalar())
                if uploads is not None:     # every upload in the running sum exactly once, whichever process took it
                    count = c.execute(select(t_sums.c.count).where(t_sums.c.phase == p)).scalar()
                    receipts = c.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == p)).all()
                    assert count == len(receipts) == uploads
    finally:
        engine.dispose()


@pytest.mark.postgres
@pytest.mark.service
def test_two_server_processes_share_one_round_and_release_the_exact_sums(pg, tmp_path):
    plain = InProcessRound(tmp_path / "plain", n=10, dropouts=2, collusion=1, seed=7)
    assert plain.run(drop0=[plain.people[-1].me])["state"] == "released"
    rnd = InProcessRound(tmp_path / "shared", n=10, dropouts=2, collusion=1, seed=7)
    with two_servers(pg, tmp_path, rnd) as (url, a, b):
        rnd.server = Spread(OverHttp(a.url), OverHttp(b.url))
        view = rnd.run(drop0=[rnd.people[-1].me])
        deadline = time.monotonic() + 60
        while view["state"] != "released" and time.monotonic() < deadline:
            time.sleep(0.1)
            view = rnd.server.view()
        assert view["state"] == "released", view
        # both processes serve the released model, whichever unmasked
        models = [OverHttp(s.url)._call("GET", "/v1/model")[1] for s in (a, b)]
        assert models[0] == models[1]
        assert json.loads(models[0]["model_json"])["privacy"]["unit"] == "user"
    assert_same_sums(url, plain, uploads=9)


@pytest.mark.postgres
@pytest.mark.service
def test_concurrent_uploads_to_two_processes_are_each_summed_once(pg, tmp_path):
    """The uploads of a step sent at once, half to each process: the running sum holds every one exactly once
    (a lost update would show as a count short of the receipts, or a wrong sum)."""
    from concurrent.futures import ThreadPoolExecutor

    plain = InProcessRound(tmp_path / "plain", n=12, dropouts=2, collusion=1, seed=3)
    assert plain.run()["state"] == "released"
    rnd = InProcessRound(tmp_path / "shared", n=12, dropouts=2, collusion=1, seed=3)
    with two_servers(pg, tmp_path, rnd) as (url, a, b):
        servers = [OverHttp(a.url), OverHttp(b.url)]
        rnd.server = Spread(*servers)
        rnd.keys()
        rnd.shares()
        for phase in (0, 1):
            view = rnd.server.view()
            assert view["state"] == f"upload{phase}", view
            bodies = [(c, *c.upload(phase, view)) for c in rnd.people]

            def send(k, phase=phase, bodies=bodies):
                c, body, sig = bodies[k]
                return c, servers[k % 2].post_upload(phase, c.me, body, sig)[1]
            with ThreadPoolExecutor(8) as pool:
                for c, answer in pool.map(send, range(len(bodies))):
                    if phase == 0:
                        c.take_shares(answer["shares"])
            assert rnd.server.view()["state"] == f"consistency{phase}"
            rnd.consistency(phase)
            rnd.unmask(phase)
        assert rnd.wait()["state"] == "released"
    assert_same_sums(url, plain)


@pytest.mark.service
def test_a_second_server_process_on_a_sqlite_round_is_refused(tmp_path):
    rnd = InProcessRound(tmp_path / "r", n=6, dropouts=1, collusion=0, seed=1)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    db = f"sqlite:///{tmp_path}/one.sqlite"
    a = SecureServe(tmp_path / "a", rnd, db).start()
    b = SecureServe(tmp_path / "b", rnd, db)
    try:
        with pytest.raises((RuntimeError, AssertionError)) as e:
            b.start(timeout=60)
        assert "served by another server process" in b.log_text() and "PostgreSQL" in b.log_text(), str(e.value)
        assert OverHttp(a.url).view()["state"] == "keys"      # the first serves on
    finally:
        a.stop()
        b.stop()


@pytest.mark.postgres
@pytest.mark.service
def test_experiment_spreads_its_contributor_processes_over_two_servers(pg, tmp_path):
    from types import SimpleNamespace

    import numpy as np

    from dptopic.protocol.secure_sum.enrollment import make_invitations
    from dptopic.protocol.secure_sum.plan import SecureSumPlan
    from helpers import run_dptopic

    words = [f"w{chr(97 + i // 26)}{chr(97 + i % 26)}x" for i in range(30)]     # words the tokeniser reads
    make_invitations(tmp_path / "enroll.key", 10, tmp_path / "inv", round_id="round1", dropouts=2, collusion=1)
    rnd = SimpleNamespace(words=words, plan=SecureSumPlan(8.0, 1e-5, 10, 2, 30, 1), cfg=SimpleNamespace(n_topics=3),
                          tmp=tmp_path)
    rng = np.random.default_rng(0)
    with open(tmp_path / "people.jsonl", "w") as f:
        for p in range(10):
            for _ in range(3):
                f.write(json.dumps({"author": f"a{p}", "text": " ".join(rng.choice(rnd.words, 12))}) + "\n")
    with two_servers(pg, tmp_path, rnd) as (url, a, b):
        r = run_dptopic("experiment", "secure-sum", "--server", a.url, b.url, "--corpus",
                        str(tmp_path / "people.jsonl"),
                        "--user-field", "author", "--dropout", "0.2", "--token-file", str(tmp_path / "a" / "token"),
                        "--invitations", str(rnd.tmp / "inv"), "--out", str(tmp_path / "out"), "--seed", "1",
                        "--workers", "2", "--quiet")
        assert r.returncode == 0, r.stderr
        s = json.loads((tmp_path / "out" / "summary.json").read_text())
        assert s["state"] == "released" and s["servers"] == 2 and s["workers"] == 2 and s["dropped"] == 2
        assert s["server_process"]["processes"] == 2 and s["server_process"]["cpu_s"] > 0
        assert "server processes: 2," in r.stdout


@pytest.mark.postgres
@pytest.mark.service
def test_uploads_racing_a_close_on_the_other_process_are_in_the_closed_set_or_refused(pg, tmp_path):
    """The admin closes step 0 on one process while uploads pour into both: every upload stored is one the closed
    step lists (an upload that waited on the round's lock across the close is refused, not added to the sum)."""
    from concurrent.futures import ThreadPoolExecutor

    from sqlalchemy import select

    from dptopic.service.secure_sum.config import ApiError
    from dptopic.service.secure_sum.database import t_sums, t_uploads

    rnd = InProcessRound(tmp_path / "shared", n=16, dropouts=4, collusion=1, seed=5)
    with two_servers(pg, tmp_path, rnd) as (url, a, b):
        servers = [OverHttp(a.url), OverHttp(b.url)]
        rnd.server = Spread(*servers)
        rnd.keys()
        rnd.shares()
        view = rnd.server.view()
        bodies = [(c, *c.upload(0, view)) for c in rnd.people]
        done = []

        def send(k):
            c, body, sig = bodies[k]
            try:
                servers[k % 2].post_upload(0, c.me, body, sig)
                done.append(k)
            except ApiError as e:
                assert e.code == "round_closed", e.message

        def close():
            while len(done) < 10:
                time.sleep(0.001)
            try:
                servers[0].close()
            except ApiError as e:
                assert e.code == "round_closed", e.message
        with ThreadPoolExecutor(17) as pool:
            jobs = [pool.submit(close)] + [pool.submit(send, k) for k in range(len(bodies))]
            for j in jobs:
                j.result()
        view = rnd.server.view()
        assert view["state"] in ("consistency0", "failed"), view
    engine = create_engine(url)
    try:
        with engine.connect() as c:
            receipts = {r[0] for r in c.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == 0))}
            count = c.execute(select(t_sums.c.count).where(t_sums.c.phase == 0)).scalar()
    finally:
        engine.dispose()
    assert count == len(receipts) == len(done)
    if view["state"] == "consistency0":
        assert receipts == set(view["uploaded"])


@pytest.mark.postgres
@pytest.mark.service
def test_a_round_in_cohorts_on_postgresql_keeps_each_round_in_its_own_schema_and_resumes(pg, tmp_path, monkeypatch):
    """Every cohort's round and the bridge's on one PostgreSQL database, each in a schema named by its round id (the
    rounds' tables share their names): the round releases the model the same people release on SQLite, with the
    noise held fixed, and a server started again on the database reads the released round back."""
    from cohort_helpers import LiveCohortRound, hold_noise_fixed, play_all, tiny_bows
    from dptopic.errors import DPTopicError
    from dptopic.service.secure_sum.cohort_app import CohortServer

    hold_noise_fixed(monkeypatch)
    bows, url = tiny_bows(24), new_database(pg.url, "secure80")
    models = []
    for database in (url, None):
        where = tmp_path / ("pg" if database else "sqlite")
        with LiveCohortRound(where, 24, 12, database=database) as live:
            out = play_all(live.url, live.files, bows, where)
            assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
            assert live.server.view()["state"] == "released"
            models.append(live.server.coordinator.sums[1].copy())
            if database:
                cfg = live.cfg
        live.server.stop()
    assert (models[0] == models[1]).all()
    eng = create_engine(url)
    try:
        with eng.connect() as c:
            schemas = set(c.execute(text("SELECT table_schema FROM information_schema.tables"
                                         " WHERE table_name = 'secure_round'")).scalars())
    finally:
        eng.dispose()
    assert schemas == {"round1-c0", "round1-c1", "round1-bridge"}
    again = CohortServer(cfg)
    assert again.view()["state"] == "released"
    with pytest.raises(DPTopicError, match="served by another server process"):
        CohortServer(cfg)       # the coordinator runs in one process
    again.stop()
