"""The collection service under faults (real servers, SQLite and a throwaway PostgreSQL), each once broken:

1. A SQLite file made read-only while serving, then writable again: the server wrote again only after a restart
   (every connection the pool opened meanwhile stayed read-only; 2 uploads in 3 kept failing with 500); later, some
   uploads were still stored while the file was read-only (through connections opened before).
2. The SQLite file's folder removed while serving: uploads were still acknowledged (201), committed into the unlinked
   file and lost with it; ``/healthz`` said ok.
3. ``/v1/model`` and ``/v1/topics`` read ``model.json`` and the arrays in two statements: a training step committed
   between them published a corrupt model (the arrays' digests differ), or answered 422.
4. Two servers on one PostgreSQL database: two trainers could commit the same mini-batch (the version check read the
   model's row without a lock), two rotations or two first starts could leave two active models.
5. A FedLDA retry racing its original, which was stored and closed the round meanwhile, got 409 ``stale_round``
   instead of 200 ``replayed``.
"""
from __future__ import annotations

import base64
import hashlib
import json
import shutil
import threading

import pytest
from sqlalchemy import event, select, text

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from dptopic.protocol.reports import new_upload_nonce  # noqa: E402
from dptopic.service import codec  # noqa: E402
from dptopic.service.storage import Storage, Submission  # noqa: E402
from dptopic.service.storage.schema import models, train_batches  # noqa: E402
from service_helpers import (  # noqa: E402
    InProcessServer,
    Server,
    count_rows,
    crash_scenario,
    http,
    make_data,
    post_until_acknowledged,
    read_only,
    service_config,
    throwaway_postgres_url,
)

pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SeededNoiseWarning")
_KEYS = iter(range(10 ** 6))


def _upload(url: str, words, texts, n: int = 2):
    """One nonce-carrying upload of ``n`` documents under a fresh key: ``(key, status, error code or None)``."""
    i = next(_KEYS)
    start = i % (len(texts) - n)
    body = Randomizer(words, epsilon_word=2.0, secure=True).randomize(
        [t.split() for t in texts[start:start + n]]).to_bytes(include_vocabulary=False, nonce=new_upload_nonce())
    key = f"faults-{i:06d}"
    status, _, data = http("POST", url + "/v1/reports", body, {"Content-Type": "application/octet-stream",
                                                               "Idempotency-Key": key})
    doc = json.loads(data)
    if status >= 400:
        assert set(doc) == {"error"} and "\n" not in doc["error"]["message"], doc
    return key, status, doc.get("error", {}).get("code")


def _acked_means_stored(answers, database: str) -> None:
    rows = count_rows(database)
    acked = {k for k, s, _ in answers if s in (200, 201)}
    assert set(rows["submissions"]) == acked
    assert all(rows["per_key"][k] == rows["submissions"][k] for k in acked)


# ================================================================ 1. read-only SQLite file, then writable again
@pytest.mark.service
def test_a_sqlite_file_made_writable_again_is_written_without_a_restart(tmp_path):
    words, texts = make_data(tmp_path, n_docs=120, n_prior=40)
    dbfile = tmp_path / "ro.db"
    db = f"sqlite:///{dbfile}"
    srv = Server(tmp_path, db, "--train-interval", "0").start()
    answers = []
    try:
        answers += [_upload(srv.url, words, texts) for _ in range(3)]
        undo = read_only(dbfile)
        try:
            # concurrent reads make the pool open new connections: SQLite opens them read-only now
            threads = [threading.Thread(target=http, args=("GET", srv.url + "/v1/topics")) for _ in range(12)]
            [t.start() for t in threads]
            [t.join() for t in threads]
            during = [_upload(srv.url, words, texts) for _ in range(8)]
        finally:
            undo()
        answers += during
        # every upload refused while the file is read-only, though the connections opened before it was could still
        # commit into the write-ahead log (once, some were stored then)
        assert [(s, c) for _, s, c in during] == [(500, "storage_misconfigured")] * 8, during
        after = [_upload(srv.url, words, texts) for _ in range(15)]
        answers += after
        # every one stored again, from the first: a connection opened read-only meanwhile is opened again (before: 2
        # in 3 failed until a restart; later, the first one after failed)
        assert all(s == 201 for _, s, _ in after), after
    finally:
        srv.stop()
    _acked_means_stored(answers, db)
    assert "Traceback" not in srv.log_text()


# ================================================================ 2. the SQLite folder removed while serving
@pytest.mark.service
def test_uploads_are_not_acknowledged_into_a_removed_sqlite_file(tmp_path):
    words, texts = make_data(tmp_path, n_docs=120, n_prior=40)
    folder = tmp_path / "dbdir"
    folder.mkdir()
    srv = Server(tmp_path, f"sqlite:///{folder / 's.db'}", "--train-interval", "0").start()
    try:
        assert all(s == 201 for _, s, _ in [_upload(srv.url, words, texts) for _ in range(3)])
        shutil.rmtree(folder)
        after = [_upload(srv.url, words, texts) for _ in range(3)]
        assert [(s, c) for _, s, c in after] == [(503, "storage_unavailable")] * 3, after
        status, _, data = http("GET", srv.url + "/healthz")
        assert status == 503 and json.loads(data)["error"]["code"] == "storage_unavailable"
    finally:
        srv.stop()
    log = srv.log_text()
    assert "Traceback" not in log and "was removed while this server was using it" in log


# ================================================================ 3. model.json and arrays of one version
@pytest.mark.service
def test_a_step_committed_between_the_reads_never_mixes_two_versions(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=80, n_prior=5)
    db = f"sqlite:///{tmp_path / 'm.db'}"
    with InProcessServer(service_config(words, db)) as srv:
        svc = srv.service
        for _ in range(4):
            assert _upload(srv.url, words, texts, n=5)[1] == 201
        assert svc.trainer.step(force=True) is not None
        armed = []

        @event.listens_for(svc.storage.engine, "after_cursor_execute")
        def _train_meanwhile(conn, cursor, statement, *args):
            # right after the request's first read of the active model, the trainer commits the next version
            if armed and statement.lstrip().upper().startswith("SELECT") and "models.status" in statement:
                armed.clear()
                assert svc.trainer.step(force=True) is not None

        for path in ("/v1/model", "/v1/topics"):
            for _ in range(3):
                assert _upload(srv.url, words, texts, n=5)[1] == 201
            armed.append(True)
            status, _, data = http("GET", srv.url + path)
            assert not armed, "the hook did not run"
            assert status == 200, data
            if path == "/v1/model":
                doc = json.loads(data)
                codec.model_from_blobs(doc["model_json"], {k: base64.b64decode(v) for k, v in doc["arrays"].items()})


# ================================================================ 4. two servers' trainers on one PostgreSQL
@pytest.fixture(scope="module")
def pg_url():
    yield from throwaway_postgres_url()


@pytest.fixture()
def two_servers(pg_url):
    """Two Storage objects (two servers' processes) on one empty PostgreSQL database."""
    from sqlalchemy import create_engine

    eng = create_engine(pg_url)
    with eng.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    eng.dispose()
    one, two = Storage(pg_url), Storage(pg_url)
    yield one, two
    one.close()
    two.close()


def _meanwhile(storage, when, action, nth: int = 1, wait: float = 3.0):
    """Once ``storage`` has run the ``nth`` statement that ``when(statement)`` matches, run ``action`` in another
    thread (the other server) and give it ``wait`` seconds before going on: time to commit unless a lock holds it
    back. Returns ``[thread, action's result]`` (filled in as they come)."""
    done, seen = [], []

    def hook(conn, cursor, statement, *args):
        if not done and when(statement) and len(seen.append(1) or seen) == nth:
            t = threading.Thread(target=lambda: done.append(action()))
            done.append(t)
            t.start()
            t.join(wait)

    event.listen(storage.engine, "after_cursor_execute", hook)
    return done


def _n_active(st) -> int:
    with st.read() as conn:
        return len(conn.execute(select(models.c.id).where(models.c.status == "active")).all())


@pytest.mark.postgres
def test_two_trainers_never_commit_one_batch_twice(two_servers):
    one, two = two_servers
    row = one.active_model()
    one.store([Submission(f"pgkey-{i:04d}", f"sha-{i}", None, [bytes([i])]) for i in range(4)])
    args = (row["id"], row["version"], 1, 4, 4, '{"m": 1}', {"a": b"\x01"}, "trained", None, 0.1)
    done = _meanwhile(two, lambda s: s.lstrip().startswith("SELECT models.version"),
                      lambda: one.commit_batch(*args))
    second = two.commit_batch(*args)
    done[0].join(30)
    assert sorted([second, done[1]]) == [False, True]
    with one.read() as conn:
        assert len(conn.execute(select(train_batches.c.id)).all()) == 1
        assert conn.execute(select(models.c.n_reports_used, models.c.version)).one() == (4, 1)


@pytest.mark.postgres
def test_two_servers_starting_or_rotating_at_once_keep_one_active_model(two_servers):
    one, two = two_servers
    # the second read of the active model is the one inside the write transaction that creates it
    done = _meanwhile(two, lambda s: "FROM models" in s and "models.status" in s, one.active_model, nth=2)
    two.active_model()
    done[0].join(30)
    assert _n_active(one) == 1
    done = _meanwhile(one, lambda s: "FROM models" in s and "models.status" in s, lambda: two.rotate("b"))
    one.rotate("a")
    done[0].join(30)
    assert _n_active(one) == 1
    with one.read() as conn:
        assert len(conn.execute(select(models.c.id)).all()) == 3


# ================================================================ 5. a FedLDA retry racing its original
@pytest.mark.service
def test_a_fedlda_retry_racing_its_original_that_closed_the_round_is_a_replay(tmp_path):
    from service_helpers import corpus_of

    words, texts = make_data(tmp_path, vocab_size=60, n_docs=40, n_prior=5)
    cfg = service_config(words, f"sqlite:///{tmp_path / 'fed.db'}", fed_epsilon_per_entry=5.0, fed_topics=3, fed_pad_length=32,
               fed_min_updates=1)
    with InProcessServer(cfg) as srv:
        svc = srv.service
        rnd, msg = svc.storage.fed_round()
        from dptopic.contributor.fedlda import fed_client
        update = fed_client("racer", corpus_of(texts[:5], words), svc.rrp).run_round(msg)
        key = "fed-race-00001"
        sha = hashlib.sha256(update).hexdigest()
        armed = [True]

        def aggregate(round_, bodies, broadcast):
            return codec.fed_aggregate(cfg.fed_vocabulary, svc.rrp, round_, bodies, broadcast=broadcast)

        @event.listens_for(svc.storage.engine, "after_cursor_execute")
        def _original_lands(conn, cursor, statement, *args):
            # the retry has just looked its key up (not there yet); now the original is stored and closes the round
            if armed and "FROM fed_updates" in statement and "idempotency_key" in statement:
                armed.clear()
                client = codec.fed_check_update(update, cfg.fed_vocabulary, svc.rrp, rnd)[0]
                assert svc.storage.fed_store_update(rnd, client, key, sha, update, 1, aggregate)[0] == "stored"

        status, _, data = http("POST", srv.url + "/v1/fed/updates", update,
                               {"Content-Type": "application/octet-stream", "Idempotency-Key": key})
        assert not armed, "the hook did not run"
        assert status == 200, data      # before: 409 stale_round for an update that was stored
        assert json.loads(data)["replayed"] is True and json.loads(data)["round"] == rnd


# ================================================================ a body that stops arriving
@pytest.mark.service
def test_a_body_that_stops_arriving_is_refused_with_408_and_nothing_stored(tmp_path):
    """A client that sends fewer bytes than its Content-Length held the request (and what it sent) for as long as
    it liked: after --body-timeout seconds without a byte the server answers 408 in one line and stores nothing,
    and an upload sent whole is still taken."""
    import socket
    import time as _time

    words, texts = make_data(tmp_path)
    database = f"sqlite:///{tmp_path / 'svc.db'}"
    srv = Server(tmp_path, database, "--train-interval", "0", "--body-timeout", "0.5").start()
    try:
        body = Randomizer(words, epsilon_word=2.0, secure=True).randomize([texts[0].split()]).to_bytes(
            include_vocabulary=False, nonce=new_upload_nonce())
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                      b"Idempotency-Key: stalled-00000001\r\nContent-Length: " + str(len(body)).encode()
                      + b"\r\n\r\n" + body[:len(body) // 2])
            t0 = _time.monotonic()
            reply = b""
            while b"\r\n\r\n" not in reply or not reply.rstrip().endswith(b"}"):
                part = s.recv(65536)
                if not part:
                    break
                reply += part
            waited = _time.monotonic() - t0
        head, _, payload = reply.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), reply[:200]
        doc = json.loads(payload)
        assert doc["error"]["code"] == "body_timeout" and "\n" not in doc["error"]["message"]
        assert "(the server's --body-timeout)" in doc["error"]["message"]     # serve's setting, by its flag
        assert 0.4 < waited < 8
        assert count_rows(database)["n_reports"] == 0
        assert _upload(srv.url, words, texts)[1] == 201
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------------------------------------
# kill -9 the server while clients post and the trainer trains; restart; every acknowledged report is
# stored exactly once and no report is trained twice or skipped. SQLite here; PostgreSQL in
# test_service_postgres.py.


@pytest.mark.service
@pytest.mark.parametrize("synchronous", ["", "?synchronous=normal"])
def test_kill_9_while_posting_and_training_sqlite(tmp_path, synchronous):
    # synchronous=normal does not wait for the disk at a commit: what a killed process wrote is in the operating
    # system's cache, so no acknowledged report is lost (a power loss could lose the last commits, not tested here)
    crash_scenario(tmp_path, f"sqlite:///{tmp_path / 'crash.db'}{synchronous}")


def test_the_crash_clients_post_again_after_an_answer_the_kill_cut_off():
    # a server killed after an answer's headers and before its body leaves the client an IncompleteRead (not an
    # OSError): the crash scenario's clients post the same key again, as after a refused connection or a 503
    import time
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    answers = []

    class CutThenAnswer(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            answers.append(self.headers["Idempotency-Key"])
            body = b'{"reports": 3}'
            self.send_response(201 if len(answers) > 1 else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if len(answers) > 1:
                self.wfile.write(body)
            else:
                self.close_connection = True         # the headers went out, the body never will

        def log_message(self, *args):
            pass

    srv = ThreadingHTTPServer(("127.0.0.1", 0), CutThenAnswer)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        doc = post_until_acknowledged(f"http://127.0.0.1:{srv.server_port}", b"x", "k1", "c", time.monotonic() + 10)
    finally:
        srv.shutdown()
        srv.server_close()
    assert doc == {"reports": 3} and answers == ["k1", "k1"]
