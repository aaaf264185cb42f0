"""The service on PostgreSQL: a throwaway cluster (initdb + pg_ctl in a temp dir, 127.0.0.1 only)."""
from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

pytest.importorskip("starlette")
pytest.importorskip("psycopg")
pytest.importorskip("sqlalchemy")

from dptopic.contributor.client import submit  # noqa: E402
from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from dptopic.service import codec  # noqa: E402
from dptopic.service.config import ServiceConfig  # noqa: E402
from dptopic.service.storage import (  # noqa: E402
    Storage,
    StorageError,
    StoragePermissionError,
    StorageTimeout,
    Submission,
)
from dptopic.service.storage import engine as storage_engine  # noqa: E402
from dptopic.service.storage.database import _PG_INSERT_LOCK  # noqa: E402
from dptopic.service.trainer import Trainer  # noqa: E402
from service_helpers import (  # noqa: E402
    PostgresServer,
    Server,
    admin,
    check_exactly_once,
    corpus_of,
    count_rows,
    crash_scenario,
    get_json,
    http,
    make_data,
    make_words,
    new_database,
    post_reports,
    throwaway_postgres,
)


@pytest.fixture(scope="module")
def pg(tmp_path_factory):
    yield from throwaway_postgres()


@pytest.mark.postgres
@pytest.mark.service
def test_submit_replay_and_train_on_postgres(pg, tmp_path):
    words, texts = make_data(tmp_path)
    srv = Server(tmp_path, pg.url, "--train-interval", "0").start()
    try:
        s = submit(srv.url, corpus_of(texts[:100], words), contributor="pg-alice")
        assert s["reports"] == 100
        body = Randomizer(words, epsilon_word=2.0, secure=True).randomize([t.split() for t in texts[100:110]]) \
            .to_bytes(include_vocabulary=False)
        assert post_reports(srv.url, body, "pg-key-000001")[0] == 201
        status, doc = post_reports(srv.url, body, "pg-key-000001")
        assert status == 200 and doc["replayed"]
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        status, topics = get_json(srv.url + "/v1/topics")
        assert status == 200 and topics["reports_used"] == topics["reports_stored"] == 110
        assert len(topics["topics"]) == 4
        status, health = get_json(srv.url + "/healthz")
        assert health["database"] == "postgresql" and health["schema_version"] >= 2
    finally:
        srv.stop()
    check_exactly_once(count_rows(pg.url))


@pytest.mark.postgres
@pytest.mark.service
def test_kill_9_while_posting_and_training_postgres(pg, tmp_path):
    from sqlalchemy import create_engine, text

    eng = create_engine(pg.url.replace("/dptopic", "/postgres"), isolation_level="AUTOCOMMIT")
    with eng.connect() as c:
        c.execute(text("CREATE DATABASE crash"))
    eng.dispose()
    crash_scenario(tmp_path, pg.url.replace("/dptopic", "/crash"))


# ---------------------------------------------------------------------------------------------------------------------
# Durability and transactional correctness of the service's storage and trainer on a real PostgreSQL (a throwaway
# cluster; skipped without the binaries), and SQLite where the code is shared:
#
# * the writers' lookups see what the previous holder of the writers' lock committed, whatever the database's
#   ``default_transaction_isolation`` (REPEATABLE READ took the snapshot before the lock wait: a nonce-carrying body
#   was stored twice and a retried key failed on the unique index instead of being answered as a replay);
# * a training step that fails after the model took its batch (saving it, or the commit) leaves no trace in the
#   trainer's memory: the batch is trained once, not into the in-memory model again on the next try;
# * a role that may write the tables but not change them is told that the schema upgrade needs the tables' owner;
# * a database host that accepts connections but never answers is refused after a connect timeout, not waited on for
#   ever.


@pytest.fixture(scope="module")
def pg_url(pg):
    """The URL of the module's one throwaway cluster (``pg``): each test that takes it makes a database of its own
    there (``new_database``), so the tests share the cluster's start-up and not their tables."""
    return pg.url




def _store_behind_the_lock(url: str, batch: list[Submission], committed: list[tuple[str, str]]):
    """``Storage.store(batch)`` while another session holds the writers' lock, inserts the submissions ``committed``
    ((key, body SHA-256) pairs) and commits, after ``store`` began waiting for the lock: as another server on the same
    database does. Returns ``store``'s outcomes (or the exception it raised) and the stored (key, sha) rows."""
    st = Storage(url)
    holder_engine = create_engine(url)
    try:
        holder = holder_engine.connect()
        holder.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_INSERT_LOCK})
        out: dict = {}

        def run():
            try:
                out["result"] = st.store(batch)
            except Exception as e:  # noqa: BLE001 - the test reports it
                out["result"] = e

        t = threading.Thread(target=run, daemon=True)
        t.start()
        deadline = time.monotonic() + 30
        with holder_engine.connect() as c:      # wait until store() waits for the lock
            while not c.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))\
                    .scalar():
                assert time.monotonic() < deadline, "store() never waited for the writers' lock"
                time.sleep(0.02)
        for key, sha in committed:
            holder.execute(text("INSERT INTO submissions (idempotency_key, body_sha256, contributor, n_reports,"
                                " received_at) VALUES (:k, :s, NULL, 1, 1.0)"), {"k": key, "s": sha})
        holder.commit()
        holder.close()
        t.join(30)
        assert not t.is_alive()
        with holder_engine.connect() as c:
            rows = [tuple(r) for r in c.execute(text("SELECT idempotency_key, body_sha256 FROM submissions"
                                                     " ORDER BY id"))]
        return out["result"], rows
    finally:
        holder_engine.dispose()
        st.close()


@pytest.mark.postgres
@pytest.mark.parametrize("isolation", ["repeatable read", "serializable"])
def test_store_sees_what_another_server_committed_whatever_the_default_isolation(pg_url, isolation):
    url = new_database(pg_url, "pg52", f"default_transaction_isolation TO '{isolation}'")
    Storage(url).close()        # the schema
    # another server stored these two while this one waited for the lock: a copy of the first body under a new key
    # is a duplicate, a retry of the second key is a replay; nothing of this batch but the new upload is stored
    result, rows = _store_behind_the_lock(
        url, [Submission("key-copy-0002", "sha-nonce-body", "bob", [b"\x01"], unique_body=True),
              Submission("key-retry-003", "sha-retried", None, [b"\x02"]),
              Submission("key-fresh-004", "sha-fresh", None, [b"\x03"], unique_body=True)],
        committed=[("key-first-001", "sha-nonce-body"), ("key-retry-003", "sha-retried")])
    assert not isinstance(result, Exception), result
    assert [o for o, _ in result] == ["duplicate", "replayed", "stored"]
    assert rows == [("key-first-001", "sha-nonce-body"), ("key-retry-003", "sha-retried"),
                    ("key-fresh-004", "sha-fresh")]


# ----------------------------------------------------------------------------- trainer
def _trainer_setup(database: str, n_reports: int = 30, batch_size: int = 15):
    words = make_words(60)
    cfg = ServiceConfig(words, 0.3, database=database, n_topics=3, batch_size=batch_size, n_iter=3, prior=None,
                        train_interval=0)
    st = Storage(database)
    rz = Randomizer(words, epsilon_word=2.0, secure=True)
    docs = [[words[(d * 7 + j) % 60] for j in range(8)] for d in range(n_reports)]
    rs = rz.randomize(docs)
    assert st.store([Submission("key-trainer-01", "sha-t", "alice", codec.report_rows(rs))])[0][0] == "stored"
    return cfg, st


def _database(backend, request, tmp_path) -> str:
    """A fresh database of ``backend``: one in the throwaway PostgreSQL cluster, or a SQLite file."""
    if backend == "postgresql":
        return new_database(request.getfixturevalue("pg_url"), "pg52")
    return f"sqlite:///{tmp_path / 't.db'}"


@pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.postgres), "sqlite"])
def test_a_step_that_fails_after_training_does_not_train_its_batch_twice(backend, request, tmp_path, monkeypatch):
    cfg, st = _trainer_setup(_database(backend, request, tmp_path))
    try:
        trainer = Trainer(st, cfg)
        real = codec.model_to_blobs
        calls = []

        def fail_once(model):    # the model took the batch; saving it fails (memory, a bug, an interrupt)
            calls.append(1)
            if len(calls) == 1:
                raise RuntimeError("saving the model failed")
            return real(model)

        monkeypatch.setattr(codec, "model_to_blobs", fail_once)
        with pytest.raises(RuntimeError):
            trainer.step()
        assert st.active_model()["last_report_id"] == 0     # nothing committed
        done = trainer.drain()
        assert [d["reports"] for d in done] == [15, 15]
        row, arrays = st.active_model_with_arrays()
        saved = codec.model_from_blobs(row["meta_json"], arrays)
        # each report was read once: 30, not 45 (the first batch taken again by the in-memory model)
        assert codec.model_summary(saved) == {"n_batches": 2, "n_reports_seen": 30}
        assert codec.model_summary(trainer._model) == {"n_batches": 2, "n_reports_seen": 30}
    finally:
        st.close()


@pytest.mark.parametrize("backend", [pytest.param("postgresql", marks=pytest.mark.postgres), "sqlite"])
def test_a_batch_refused_after_the_model_took_it_is_not_in_the_next_saved_model(backend, request, tmp_path,
                                                                                 monkeypatch):
    from dptopic.errors import DPTopicError

    cfg, st = _trainer_setup(_database(backend, request, tmp_path))
    try:
        trainer = Trainer(st, cfg)
        real = codec.model_to_blobs
        calls = []

        def refuse_once(model):   # a refusal after partial_fit took the batch: the batch is consumed as skipped
            calls.append(1)
            if len(calls) == 1:
                raise DPTopicError("the model cannot be saved")
            return real(model)

        monkeypatch.setattr(codec, "model_to_blobs", refuse_once)
        done = trainer.drain()
        assert [d["status"] for d in done] == ["skipped", "trained"]
        row, arrays = st.active_model_with_arrays()
        assert row["n_reports_used"] == 30
        # the saved model read the trained batch only, not the one recorded as skipped
        assert codec.model_summary(codec.model_from_blobs(row["meta_json"], arrays)) == \
            {"n_batches": 1, "n_reports_seen": 15}
    finally:
        st.close()


# ----------------------------------------------------------------------------- migrations
@pytest.mark.postgres
def test_an_upgrade_by_a_role_that_does_not_own_the_tables_names_the_owner(pg_url):
    url = new_database(pg_url, "pg52")
    Storage(url).close()
    owner = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with owner.connect() as c:
            # a database at schema 2 (before the body index), served by a role with every privilege on its tables
            c.execute(text("DROP INDEX ix_submissions_body_sha256"))
            c.execute(text("DELETE FROM dptopic_schema WHERE version = 3"))
            c.execute(text("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'writer52')"
                           " THEN CREATE ROLE writer52 LOGIN; END IF; END $$"))
            c.execute(text("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO writer52"))
            c.execute(text("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO writer52"))
        with pytest.raises(StoragePermissionError) as err:
            Storage(url.replace("postgres@", "writer52@"))
        message = str(err.value)
        assert "\n" not in message
        assert "from schema version 2 to 3" in message and "migration 3" in message
        assert "owns the tables" in message and "must be owner of table submissions" in message
        st = Storage(url)           # the owner upgrades it; then the writer role serves it
        assert st.schema_version() == 3
        st.close()
        st = Storage(url.replace("postgres@", "writer52@"))
        st.check_writable()
        st.close()
    finally:
        owner.dispose()


# ----------------------------------------------------------------------------- connection loss
def test_a_database_host_that_never_answers_is_refused_after_the_connect_timeout(monkeypatch):
    monkeypatch.setattr(storage_engine, "PG_CONNECT_TIMEOUT", 2)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)       # the kernel completes the handshakes; nobody ever answers the start-up packet
    port = silent.getsockname()[1]
    out: dict = {}

    def run():
        try:
            Storage(f"postgresql+psycopg://postgres@127.0.0.1:{port}/dptopic")
            out["result"] = "opened"
        except Exception as e:  # noqa: BLE001 - the test checks it
            out["result"] = e

    try:
        t0 = time.monotonic()
        t = threading.Thread(target=run, daemon=True)
        t.start()
        t.join(20)
        assert not t.is_alive(), "Storage() still waits for a database that never answers"
        assert isinstance(out["result"], StorageError) and time.monotonic() - t0 < 15
        assert "timeout" in str(out["result"]).lower() and "\n" not in str(out["result"])
    finally:
        silent.close()


# ---------------------------------------------------------------------------------------------------------------------
# The service on a real PostgreSQL (a throwaway cluster; skipped without the binaries): a database that
# stops answering does not hold uploads for ever.
#
# * the postmaster and its backends stopped (SIGSTOP: the kernel still acknowledges every packet, so no TCP timeout
#   fires and no server-side limit runs): an upload to ``dptopic serve`` is answered 503 in one line within
#   ``--database-timeout``, nothing is stored, and the service serves again once PostgreSQL is continued (SIGCONT);
#   before, the upload waited for as long as PostgreSQL stayed stopped;
# * a peer that holds the writers' lock and never lets go (a server whose connection is half open): the upload is
#   refused within the limit (the server's ``lock_timeout``, or this process's deadline) instead of waiting behind it;
# * the trainer's commit has its own, longer limit: it may wait longer than a request may.


def _cluster_pids(pg: PostgresServer) -> list[int]:
    """The postmaster and every process it started (backends, checkpointer, walwriter, ...)."""
    postmaster = int((pg.data / "postmaster.pid").read_text().split()[0])
    children = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == postmaster:
            children.append(int(d.name))
    return [postmaster, *children]


class _Frozen:
    """``with _Frozen(pg):`` the whole cluster is stopped (SIGSTOP) inside, and continued (SIGCONT) on leaving,
    whatever happened."""

    def __init__(self, pg):
        self.pg, self.pids = pg, []

    def __enter__(self):
        self.pids = _cluster_pids(self.pg)
        for pid in self.pids:
            os.kill(pid, signal.SIGSTOP)
        return self

    def thaw(self):
        pids, self.pids = self.pids, []
        for pid in pids:
            try:
                os.kill(pid, signal.SIGCONT)
            except ProcessLookupError:
                pass

    def __exit__(self, *exc):
        self.thaw()


def _body(words, texts, seed_docs):
    return Randomizer(words, epsilon_word=2.0, secure=True).randomize([t.split() for t in texts[seed_docs]]) \
        .to_bytes(include_vocabulary=False)


@pytest.mark.postgres
@pytest.mark.service
def test_a_stopped_postgresql_gets_uploads_refused_in_time_and_the_service_recovers(pg, tmp_path):
    url = new_database(pg.url, "pg52")
    words, texts = make_data(tmp_path)
    srv = Server(tmp_path, url, "--train-interval", "0", "--database-timeout", "3").start()
    try:
        assert post_reports(srv.url, _body(words, texts, slice(0, 10)), "pg53-key-before")[0] == 201
        body = _body(words, texts, slice(10, 20))
        with _Frozen(pg) as frozen:
            # an answer, not a hang: before, this request waited for as long as PostgreSQL stayed stopped (the
            # client's own 45 s limit then failed the test with a timeout)
            status, doc = post_reports(srv.url, body, "pg53-key-frozen", timeout=45)
            assert status == 503, doc
            assert doc["error"]["code"] == "storage_unavailable"
            message = doc["error"]["message"]
            assert "\n" not in message and "did not answer within 3 s" in message
            status, _, data = http("GET", srv.url + "/healthz", timeout=45)
            assert status == 503 and json.loads(data)["error"]["code"] == "storage_unavailable"
            frozen.thaw()
            # nothing of the refused upload was stored
            rows = count_rows(url)
            assert set(rows["submissions"]) == {"pg53-key-before"} and rows["n_reports"] == 10
        # the service recovers: the retry (same key, same body) is stored, once
        for _ in range(20):
            status, doc = post_reports(srv.url, body, "pg53-key-frozen", timeout=45)
            if status != 503:
                break
            time.sleep(0.5)
        assert status == 201 and doc["reports"] == 10, doc
        assert get_json(srv.url + "/healthz")[0] == 200
        status, doc = post_reports(srv.url, body, "pg53-key-frozen")
        assert status == 200 and doc["replayed"]
    finally:
        srv.stop()
    rows = count_rows(url)
    assert set(rows["submissions"]) == {"pg53-key-before", "pg53-key-frozen"} and rows["n_reports"] == 20
    assert "Traceback" not in srv.log_text()


def _in_thread(fn, wait: float):
    """``fn()``'s result (or the exception it raised), or ``"still running"`` after ``wait`` seconds."""
    out: dict = {}

    def run():
        try:
            out["result"] = fn()
        except Exception as e:  # noqa: BLE001 - the test checks it
            out["result"] = e

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(wait)
    return "still running" if t.is_alive() else out["result"]


@pytest.mark.postgres
def test_an_upload_behind_a_writers_lock_that_is_never_released_is_refused_by_the_lock_timeout(pg):
    url = new_database(pg.url, "pg52")
    st = Storage(url, timeout=2)
    holder_engine = create_engine(url)
    try:
        with holder_engine.connect() as holder:     # a peer server whose connection is half open: it holds the lock
            holder.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_INSERT_LOCK})
            result = _in_thread(lambda: st.store([Submission("pg53-key-locked", "a" * 64, None, [b"\x01"])]), 40)
            # refused by the server's lock_timeout or this process's deadline, whichever strikes first
            assert isinstance(result, StorageTimeout), result
            assert "\n" not in str(result)
            holder.rollback()
        with st.read() as c:    # the server ends a statement (or a lock wait) past the limit by itself
            assert c.execute(text("SHOW lock_timeout")).scalar() == "2s"
            assert c.execute(text("SHOW statement_timeout")).scalar() == "2s"
        assert st.store([Submission("pg53-key-locked", "a" * 64, None, [b"\x01"])])[0][0] == "stored"
    finally:
        holder_engine.dispose()
        st.close()


@pytest.mark.postgres
def test_the_trainers_commit_may_wait_longer_than_a_request(pg):
    url = new_database(pg.url, "pg52")
    st = Storage(url, timeout=1, long_timeout=60)
    holder_engine = create_engine(url)
    try:
        model = st.active_model()
        with holder_engine.connect() as holder:
            # another server's trainer holds the model's row for 2.5 s: longer than a request may wait, shorter than
            # the trainer's commit may
            holder.execute(text("SELECT id FROM models WHERE id = :i FOR UPDATE"), {"i": model["id"]})
            release = threading.Timer(2.5, holder.rollback)
            release.start()
            try:
                with pytest.raises(StorageTimeout):     # a request's write behind the same lock: refused
                    with st.write() as conn:
                        conn.execute(text("SELECT id FROM models WHERE id = :i FOR UPDATE"), {"i": model["id"]})
                result = _in_thread(lambda: st.commit_batch(model["id"], model["version"], 1, 1, 0, None, None,
                                                            "skipped", "pg53", 0.0), 40)
            finally:
                release.join()
        assert result is True, result
        assert st.active_model()["last_report_id"] == 1
    finally:
        holder_engine.dispose()
        st.close()
