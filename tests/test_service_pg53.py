"""Review 53 of the service on a real PostgreSQL (a throwaway cluster; skipped without the binaries): a database that
stops answering does not hold uploads for ever.

* the postmaster and its backends stopped (SIGSTOP: the kernel still acknowledges every packet, so no TCP timeout
  fires and no server-side limit runs): an upload to ``dptopic serve`` is answered 503 in one line within
  ``--database-timeout``, nothing is stored, and the service serves again once PostgreSQL is continued (SIGCONT);
  before, the upload waited for as long as PostgreSQL stayed stopped;
* a peer that holds the writers' lock and never lets go (a server whose connection is half open): the upload is
  refused within the limit (the server's ``lock_timeout``, or this process's deadline) instead of waiting behind it;
* the trainer's commit has its own, longer limit: it may wait longer than a request may.
"""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("psycopg")

from sqlalchemy import create_engine, text  # noqa: E402

from dptopic.local import Randomizer  # noqa: E402
from dptopic.service.storage import _PG_INSERT_LOCK, Storage, StorageTimeout, Submission  # noqa: E402

from service_helpers import (throwaway_postgres, PG_BIN, PostgresServer, Server, count_rows, get_json, http, make_data,  # noqa: E402
                             post_reports)
from test_service_pg52 import new_database  # noqa: E402

pytestmark = pytest.mark.skipif(PG_BIN is None, reason="PostgreSQL server binaries (initdb, pg_ctl) are not installed:"
                                                       " apt-get install postgresql")


@pytest.fixture(scope="module")
def pg():
    yield from throwaway_postgres()


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


def test_a_stopped_postgresql_gets_uploads_refused_in_time_and_the_service_recovers(pg, tmp_path):
    url = new_database(pg.url)
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


def test_an_upload_behind_a_writers_lock_that_is_never_released_is_refused_by_the_lock_timeout(pg):
    url = new_database(pg.url)
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


def test_the_trainers_commit_may_wait_longer_than_a_request(pg):
    url = new_database(pg.url)
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
