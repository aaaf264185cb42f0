"""Helpers of the service tests: a real ``dptopic serve`` subprocess on 127.0.0.1, plain HTTP, PostgreSQL."""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.client import HTTPException
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from dptopic.corpus import Corpus, lda_corpus

TOKEN = "test-admin-token-0123456789abcdef"
SRC = str(Path(__file__).resolve().parents[1] / "src")
SYLLABLES = ["ba", "ce", "di", "fo", "gu", "ka", "le", "mi", "no", "pu", "ra", "se", "ti", "vo", "zu"]


def make_words(n: int) -> list[str]:
    """Distinctive letter-only words (4-6 letters), unlikely to appear by chance in binary data."""
    words = ["".join(p) + "x" for p in itertools.product(SYLLABLES, repeat=2)]
    return words[:n]


def write_token(path: Path, token: str) -> Path:
    """An admin token file at ``path``, readable by its owner only (as docs/service.md has it written: a token file
    that others can read is used with a warning, which would be a line more in what a test reads)."""
    Path(path).write_text(token)
    os.chmod(path, 0o600)
    return Path(path)


def make_data(tmp: Path, vocab_size: int = 120, n_docs: int = 400, n_prior: int = 80, seed: int = 5):
    """Vocabulary file, prior corpus file and contributor documents (one per line) from a planted LDA corpus."""
    words = make_words(vocab_size)
    c = lda_corpus(n_docs=n_docs + n_prior, vocab_size=vocab_size, n_topics=4, doc_length=30, alpha=0.2, beta=0.05,
                   seed=seed).corpus
    texts = [" ".join(words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]
    (tmp / "vocab.txt").write_text("\n".join(words) + "\n")
    (tmp / "prior.txt").write_text("\n".join(texts[:n_prior]) + "\n")
    (tmp / "docs.txt").write_text("\n".join(texts[n_prior:]) + "\n")
    write_token(tmp / "token", TOKEN + "\n")
    return words, texts[n_prior:]


def corpus_of(texts, words) -> Corpus:
    return Corpus.from_texts(texts, vocabulary=words, max_vocab=None)


def with_format_version(body: bytes, version) -> bytes:
    """A report file (word- or document-level) rewritten to declare another format ``version``, checksum valid: what a
    contributor running another dptopic release would send."""
    (n,) = struct.unpack("<I", body[8:12])
    head = json.loads(body[12:12 + n])
    head["version"] = version
    h = json.dumps(head).encode()
    core = body[:8] + struct.pack("<I", len(h)) + h + body[12 + n:-32]
    return core + hashlib.sha256(core).digest()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StubServer:
    """A plain-HTTP server on 127.0.0.1, in a thread of this process, standing in for a dptopic server in a client's
    tests. Each GET and POST is answered by ``answer(request)``: ``request`` is the handler (its ``command``, its
    ``path``, the ``body`` a POST sent; an answer may set its ``close_connection`` to drop the connection without a
    word), and ``answer`` returns ``(status, body)`` or ``(status, body, headers)``, a body of bytes, of text, or of
    anything else as JSON. ``posted`` lists the paths of the POSTs, ``connections`` the client address of each
    connection opened; ``keep_alive`` speaks HTTP/1.1, so that a connection serves many requests. Shut down and closed
    by :meth:`close` or on leaving its ``with`` block."""

    def __init__(self, answer, keep_alive: bool = False):
        stub = self
        self.posted: list = []
        self.connections: list = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if keep_alive else "HTTP/1.0"

            def setup(self):
                super().setup()
                stub.connections.append(self.client_address)

            def do_GET(self):
                self.body = b""
                self._reply()

            def do_POST(self):
                self.body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                stub.posted.append(self.path)
                self._reply()

            def _reply(self):
                status, body, *headers = answer(self)
                if not isinstance(body, bytes):
                    body = (body if isinstance(body, str) else json.dumps(body)).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers[0] if headers else {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "StubServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Server:
    """``dptopic serve`` in a subprocess; ``kill()`` sends SIGKILL (no clean shutdown)."""

    def __init__(self, tmp: Path, database: str, *extra: str, port: int | None = None, document: bool = False):
        self.tmp, self.database, self.extra, self.document = tmp, database, list(extra), document
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def argv(self) -> list[str]:
        """The ``dptopic serve`` arguments this server runs with."""
        # OLP-LDA's sweeps: document-level reports train LocalDocumentLDA, and serve refuses flags without effect
        kind = (["--report-kind", "document", "--epsilon-doc", "8"] if self.document else
                ["--epsilon-word", "2.0", "--prior", str(self.tmp / "prior.txt"), "--iterations", "10",
                 "--prior-iterations", "20"])
        return ["serve", "--database", self.database, "--host", "127.0.0.1", "--port", str(self.port),
                "--vocabulary", str(self.tmp / "vocab.txt"), *kind, "--token-file", str(self.tmp / "token"),
                "--topics", "4", "--batch-size", "40", "--quiet", *self.extra]

    def start_refused(self, timeout: float = 120.0) -> None:
        """For a start that ``serve`` must refuse before it listens: the same command run in this process
        (``helpers.run_dptopic``, sparing a new interpreter's imports), its output written to the log that
        ``log_text`` reads. Raises ``RuntimeError`` as ``start`` does when the server exits; a server that starts
        instead serves in this process until ``timeout`` stops it, which fails the test."""
        from helpers import run_dptopic

        r = run_dptopic(*self.argv(), timeout=timeout)
        with open(self.tmp / f"server-{self.port}.log", "a") as log:
            log.write(r.stdout + r.stderr)
        raise RuntimeError(f"server exited with {r.returncode}: {self.log_text()[-2000:]}")

    def start(self, timeout: float = 120.0) -> "Server":
        cmd = [sys.executable, "-m", "dptopic", *self.argv()]
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.log = open(self.tmp / f"server-{self.port}.log", "ab")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.log_text()[-2000:]}")
            try:
                if http("GET", self.url + "/healthz", timeout=2)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)            # a refused connection costs a millisecond: the test goes on once it listens
        self.kill()
        raise RuntimeError(f"server did not become healthy in {timeout} s: {self.log_text()[-2000:]}")

    def log_text(self) -> str:
        return (self.tmp / f"server-{self.port}.log").read_text(errors="replace")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def http(method: str, url: str, body: bytes | None = None, headers: dict | None = None, timeout: float = 30):
    """One request; returns ``(status, headers, body bytes)`` for any status."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in (e.headers or {}).items()}, e.read()


def get_json(url: str):
    status, _, data = http("GET", url)
    return status, json.loads(data)


def admin(url: str, path: str, doc: dict | None = None, method: str = "POST"):
    body = None if doc is None else json.dumps(doc).encode()
    status, _, data = http(method, url + path, body, {"Authorization": f"Bearer {TOKEN}",
                                                      "Content-Type": "application/json"}, timeout=120)
    return status, json.loads(data)


def post_reports(url: str, body: bytes, key: str, contributor: str | None = None, timeout: float = 30):
    headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": key}
    if contributor:
        headers["Dptopic-Contributor"] = contributor
    status, _, data = http("POST", url + "/v1/reports", body, headers, timeout=timeout)
    return status, json.loads(data)


def post_until_acknowledged(url, body: bytes, key: str, contributor: str, deadline: float):
    """Post ``body`` under ``key`` again and again until it is acknowledged (its answer's document) or ``deadline``
    (``time.monotonic()``) passes (None), as a client of a server that may be killed does: a refused connection, an
    answer of 5xx and an answer cut off by the kill (its headers sent, not its body) are each tried again; any other
    answer fails the caller."""
    while time.monotonic() < deadline:
        try:
            status, doc = post_reports(url, body, key, contributor, timeout=10)
        except (OSError, HTTPException):     # IncompleteRead: killed between the headers and the body
            time.sleep(0.1)
            continue
        if status in (200, 201):
            return doc
        assert status >= 500, doc  # only unavailability may be retried
        time.sleep(0.1)
    return None


# ----------------------------------------------------------------------------- PostgreSQL
PG_BIN = next((p for p in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
               if (p / "initdb").exists()), None) if Path("/usr/lib/postgresql").exists() else None


def _as_pg_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser is None:
        raise RuntimeError("running as root and runuser is missing: cannot start PostgreSQL as a non-root user")
    return [runuser, "-u", "postgres", "--", *cmd]


def _pg_folder(prefix: str) -> Path:
    """A new folder for PostgreSQL's files (not under pytest's root-only tmp dir), owned by the user PostgreSQL runs
    as."""
    import tempfile

    root = Path(tempfile.mkdtemp(prefix=prefix))
    if os.geteuid() == 0:
        try:
            import pwd

            pw = pwd.getpwnam("postgres")
        except KeyError:
            raise RuntimeError("running as root and there is no 'postgres' user to run PostgreSQL as") from None
        os.chown(root, pw.pw_uid, pw.pw_gid)
        os.chmod(root, 0o700)
    return root


_TEMPLATE: list = []


def _initdb_template() -> Path:
    """A cluster's data folder as initdb writes it, made once per process (removed when it exits): each
    :class:`PostgresServer` starts on a copy of its own, so no test sees another's cluster."""
    if not _TEMPLATE:
        import atexit

        root = _pg_folder("dptopic-pg-template-")
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        data = root / "pgdata"
        r = subprocess.run(_as_pg_user([str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                                        "-E", "UTF8", "--no-sync"]), capture_output=True, timeout=120, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"initdb failed: {(r.stderr or r.stdout).strip()[-300:]}")
        _TEMPLATE.append(data)
    return _TEMPLATE[0]


class PostgresServer:
    """A throwaway PostgreSQL cluster in a temp dir (a copy of a fresh initdb's + pg_ctl), trust auth on 127.0.0.1
    only."""

    def __init__(self):
        self.root = None
        self.data = None
        self.port = free_port()

    def start(self) -> "PostgresServer":
        if PG_BIN is None:
            raise RuntimeError("PostgreSQL server binaries not found under /usr/lib/postgresql")
        self.root = _pg_folder("dptopic-pg-")
        self.data = self.root / "pgdata"
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=on"
        # a copy of the cluster initdb made once in this process: the same files initdb writes, without its two
        # seconds for every cluster of the suite
        r = subprocess.run(_as_pg_user(["cp", "-a", str(_initdb_template()), str(self.data)]), capture_output=True,
                           timeout=120, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"copying the initdb cluster failed: {(r.stderr or r.stdout).strip()[-300:]}")
        for cmd in ([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "pg.log"), "-w",
                     "-t", "60", "start"],
                    [str(PG_BIN / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "dptopic"]):
            r = subprocess.run(_as_pg_user(cmd), capture_output=True, timeout=120, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"{Path(cmd[0]).name} failed: {(r.stderr or r.stdout).strip()[-300:]}")
        return self

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/dptopic"

    def stop(self) -> None:
        if self.root is None:       # never started
            return
        subprocess.run(_as_pg_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def count_rows(database: str) -> dict:
    """Direct look into the database (not through the server)."""
    from sqlalchemy import create_engine, text

    from dptopic.service.storage import sqlite_synchronous

    eng = create_engine(sqlite_synchronous(database)[0])   # without the service's own ?synchronous=
    try:
        with eng.connect() as c:
            subs = {k: n for k, n in c.execute(text("SELECT idempotency_key, n_reports FROM submissions"))}
            per = dict(c.execute(text("SELECT s.idempotency_key, COUNT(r.id) FROM submissions s JOIN reports r"
                                      " ON r.submission_id = s.id GROUP BY s.idempotency_key")).all())
            n_reports = c.execute(text("SELECT COUNT(*) FROM reports")).scalar()
            batches = [tuple(r) for r in c.execute(text(
                "SELECT model_id, first_report_id, last_report_id, n_reports FROM train_batches ORDER BY id"))]
            models = [dict(r._mapping) for r in c.execute(text(
                "SELECT id, status, first_report_id, last_report_id, n_reports_used, n_batches FROM models ORDER BY id"))]
            ids = [r[0] for r in c.execute(text("SELECT id FROM reports ORDER BY id"))]
    finally:
        eng.dispose()
    return {"submissions": subs, "per_key": per, "n_reports": n_reports, "batches": batches, "models": models,
            "ids": ids}


def check_exactly_once(rows: dict) -> None:
    """Every consumed report id lies in exactly one batch; batches of a model tile its consumed range."""
    ids = np.asarray(rows["ids"])
    used = np.zeros(len(ids), dtype=int)
    for _model, first, last, n in rows["batches"]:
        sel = (ids >= first) & (ids <= last)
        assert sel.sum() == n, (first, last, n, sel.sum())
        used[sel] += 1
    assert used.max(initial=0) <= 1, "a report was used twice"
    for m in rows["models"]:
        mine = [b for b in rows["batches"] if b[0] == m["id"]]
        assert sum(b[3] for b in mine) == m["n_reports_used"]
        if mine:
            assert mine[-1][2] == m["last_report_id"]
        consumed = ids[(ids > m["first_report_id"]) & (ids <= m["last_report_id"])]
        assert len(consumed) == m["n_reports_used"], "a report below the cursor was skipped"


def throwaway_postgres():
    """A module-scoped fixture body: a throwaway PostgreSQL cluster (:class:`PostgresServer`), started, or a skip
    saying why there is none; stopped when the fixture ends."""
    import pytest

    if PG_BIN is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql")
    pytest.importorskip("psycopg")
    try:
        server = PostgresServer().start()
    except Exception as e:  # noqa: BLE001 - report why, then skip
        pytest.skip(f"could not start a throwaway PostgreSQL server: {' '.join(str(e).split())[:200]}")
    yield server
    server.stop()


_n_database = itertools.count()


def new_database(pg_url: str, prefix: str, *settings: str) -> str:
    """A fresh database ``{prefix}_{n}`` of the throwaway cluster at ``pg_url`` (``ALTER DATABASE ... SET`` each of
    ``settings``); its URL."""
    from sqlalchemy import create_engine, text

    name = f"{prefix}_{next(_n_database)}"
    eng = create_engine(pg_url.replace("/dptopic", "/postgres"), isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as c:
            c.execute(text(f"CREATE DATABASE {name}"))
            for s in settings:
                c.execute(text(f"ALTER DATABASE {name} SET {s}"))
    finally:
        eng.dispose()
    return pg_url.replace("/dptopic", f"/{name}")


def throwaway_postgres_url():
    """A module-scoped fixture body: the URL of a throwaway PostgreSQL cluster, or a skip saying why there is none."""
    for server in throwaway_postgres():
        yield server.url


def read_only(path):
    """Make the file ``path`` unwritable for a server of this test (``chattr +i`` as root, whom modes do not stop;
    mode 0444 otherwise); returns the undo. Skips the test where it cannot."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)],
                                                            capture_output=True).returncode != 0:
            pytest.skip("running as root without chattr +i: cannot make the database file read-only")
        return lambda: subprocess.run(["chattr", "-i", str(path)], check=True)
    os.chmod(path, 0o444)
    return lambda: os.chmod(path, 0o644)


# --------------------------------------------------------------------------------------------- in-process servers
_KEYS = itertools.count()


def upload_key() -> str:
    """A fresh Idempotency-Key for an upload."""
    return f"inproc-k{next(_KEYS):06d}"


def plain_report_body(words, texts, eps: float = 2.0) -> bytes:
    """Word-level reports of ``texts`` as bytes, without a vocabulary and without an upload nonce."""
    from dptopic.contributor.randomizer import Randomizer

    return Randomizer(words, epsilon_word=eps, secure=True).randomize([t.split() for t in texts]).to_bytes(
        include_vocabulary=False)


def service_config(words, database: str, **kw):
    """A word-level service configuration at epsilon 2 per word, K = 3, training on demand."""
    from dptopic.accounting.local import f_from_epsilon
    from dptopic.service.config import ServiceConfig

    return ServiceConfig(words, f_from_epsilon(2.0), database=database, n_topics=3, train_interval=0, **kw)


class NoServer:
    """Stands in for ``uvicorn.Server``: ``dptopic serve`` runs in this process up to the point where it would
    serve (its start-up checks run for real)."""

    def __init__(self, config):
        self.started = False

    def run(self, sockets=None):
        self.started = True


def _stops_at_once(server) -> None:
    """Make ``server`` (a ``uvicorn.Server`` not yet started) stop as soon as :func:`stop_uvicorn` asks, instead of at
    its next tick (uvicorn looks at ``should_exit`` every 0.1 s) and after the 0.1 s it gives open connections to
    finish: with no connection open and no task running, its shutdown closes the listening sockets and runs the app's
    lifespan shutdown (``stop()``: a database closed), as uvicorn's does, and nothing else; otherwise it is
    uvicorn's own. A stop took 0.17 s, 24 of them 4 s of tests/service/secure_sum/test_default.py's wall time."""
    import asyncio

    wake = asyncio.Event()
    real_shutdown = server.shutdown

    async def main_loop():
        loop = asyncio.get_running_loop()
        server.wake = lambda: loop.call_soon_threadsafe(wake.set)
        counter = 0
        while not await server.on_tick(counter):        # the ticks as uvicorn's (its date header, its request cap)
            counter = (counter + 1) % 864000
            try:
                await asyncio.wait_for(wake.wait(), 0.1)
            except asyncio.TimeoutError:
                pass

    async def shutdown(sockets=None):
        if server.server_state.connections or server.server_state.tasks:
            return await real_shutdown(sockets=sockets)
        for listening in server.servers:
            listening.close()
        for sock in sockets or []:
            sock.close()
        for listening in server.servers:
            await listening.wait_closed()
        if not server.force_exit:
            await server.lifespan.shutdown()

    server.main_loop, server.shutdown = main_loop, shutdown


def start_uvicorn(server, what: str) -> threading.Thread:
    """Run ``server`` (a ``uvicorn.Server``) in a daemon thread of this process and wait until it listens (60 s at
    most; ``what`` names it in the failure): the thread. :func:`stop_uvicorn` stops it at once
    (:func:`_stops_at_once`)."""
    _stops_at_once(server)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive(), f"{what} did not start"
        assert time.monotonic() < deadline, f"{what} did not start in 60 s"
        time.sleep(0.02)
    return thread


def stop_uvicorn(server, thread: threading.Thread) -> None:
    """Stop a server :func:`start_uvicorn` started, and wait for its thread (30 s at most)."""
    server.should_exit = True
    wake = getattr(server, "wake", None)
    if wake is not None:
        wake()
    thread.join(30)


class InProcessServer:
    """The service app under a real uvicorn in a thread of this process (no start-up checks: ``create_app`` as a
    library caller runs it), spoken to over HTTP on 127.0.0.1."""

    def __init__(self, cfg, **server_options):
        import uvicorn

        from dptopic.service import create_app

        self.app = create_app(cfg, start_trainer=False, freeze_gc=False)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None,
                                                    log_level="warning", access_log=False, lifespan="on",
                                                    **server_options))

    @property
    def service(self):
        return self.app.state.service

    def __enter__(self) -> "InProcessServer":
        self.thread = start_uvicorn(self.server, "the in-process server")
        return self

    def __exit__(self, *exc) -> None:
        stop_uvicorn(self.server, self.thread)


class ServedLikeServe(InProcessServer):
    """The app under uvicorn with the protocol class ``dptopic serve`` uses (httptools' if ``fast``, else h11's)."""

    def __init__(self, cfg, fast: bool):
        from dptopic.service.http import server_options

        super().__init__(cfg, **{**server_options(fast), "loop": "asyncio"})


def send_raw(port: int, data: bytes) -> bytes:
    """Send ``data`` as it is on a new connection to 127.0.0.1 and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        got = b""
        while chunk := s.recv(4096):
            got += chunk
    return got


def metric(url: str, name: str, code: str) -> float:
    """The value of the Prometheus counter ``name{code="..."}`` at ``url``/metrics (0 when absent)."""
    import re

    text = http("GET", url + "/metrics")[2].decode()
    m = re.search(rf'^{name}\{{code="{code}"\}} ([0-9.e+]+)$', text, re.M)
    return float(m.group(1)) if m else 0.0


# ------------------------------------------------------------------------------------------------- a crash test
def crash_scenario(tmp, database, n_clients=4, uploads_per_client=12, reports_per_upload=5):
    """kill -9 ``dptopic serve`` while clients post and the trainer trains, restart it: every acknowledged
    report is stored exactly once and no report is trained twice or skipped."""
    from dptopic.contributor.randomizer import Randomizer

    words, texts = make_data(tmp)
    rz = Randomizer(words, epsilon_word=2.0, secure=True)
    bodies = [[rz.randomize([t.split() for t in texts[(c * 50 + u * 3) % 300:][:reports_per_upload]])
               .to_bytes(include_vocabulary=False) for u in range(uploads_per_client)] for c in range(n_clients)]
    srv = Server(tmp, database, "--train-interval", "0.05", "--batch-size", "10").start()
    acked, lock = {}, threading.Lock()
    deadline = time.monotonic() + 150

    def client(c):
        for u, body in enumerate(bodies[c]):
            key = f"crash-c{c}-u{u:03d}"
            doc = post_until_acknowledged(srv.url, body, key, f"client{c}", deadline)  # the same key and body
            if doc is not None:
                with lock:
                    acked[key] = doc["reports"]
            time.sleep(0.01)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(n_clients)]
    for t in threads:
        t.start()
    total = n_clients * uploads_per_client
    while len(acked) < total // 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    srv.kill()  # SIGKILL: no shutdown handler runs
    n_acked_at_kill = len(acked)
    srv.start()
    for t in threads:
        t.join(max(1.0, deadline - time.monotonic()))
    assert len(acked) == total, f"only {len(acked)} of {total} uploads acknowledged"
    assert 0 < n_acked_at_kill < total
    status, _ = admin(srv.url, "/v1/admin/train", {"force": True})
    assert status == 200
    srv.stop()

    rows = count_rows(database)
    assert set(rows["submissions"]) == set(acked)  # nothing lost, nothing unacknowledged-but-invented
    for key, n in acked.items():
        assert rows["submissions"][key] == n == reports_per_upload
        assert rows["per_key"][key] == n  # stored exactly once
    assert rows["n_reports"] == total * reports_per_upload
    check_exactly_once(rows)
    active = [m for m in rows["models"] if m["status"] == "active"][0]
    assert active["n_reports_used"] == rows["n_reports"]  # after the final drain, every report used once
    assert np.all(np.diff(rows["ids"]) > 0)


def raw_fed_message(header: dict, payload: bytes = b"") -> bytes:
    """A FedLDA protocol message built by hand around ``header`` (a JSON header and a payload, with a valid CRC)."""
    import zlib

    from dptopic.protocol.fedlda_messages import MAGIC, VERSION

    head = json.dumps(header).encode()
    body = MAGIC + struct.pack("<BI", VERSION, len(head)) + head + payload
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


class SecureSumServer:
    """A ``--report-kind secure-sum`` round's app under a real uvicorn in a thread of this process, on 127.0.0.1, with
    the operator's invitations (one per contributor: ``invitations``, read; files in ``tmp/invitations``; with
    ``ids``, one per person id, their pseudonyms made by ``ledger``)."""

    TOKEN = "t" * 24

    def __init__(self, tmp: Path, words, n: int = 6, dropouts: int = 2, epsilon: float = 8.0, topics: int = 3,
                 collusion: int = 0, ledger=None, bits: int | None = None, registration_s: float | None = None,
                 ids=None, round_id: str = "round1"):
        import uvicorn

        from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory, read_invitation
        from dptopic.protocol.secure_sum.plan import SecureSumPlan
        from dptopic.service.secure_sum.config import SecureSumConfig
        from dptopic.service.secure_sum.default_app import create_secure_sum_app

        write_token(tmp / "token", self.TOKEN)
        n = n if ids is None else len(ids)
        make_invitations(tmp / "enroll.key", n, tmp / "invitations", round_id=round_id, dropouts=dropouts,
                         collusion=collusion, ids=ids, ledger=ledger if ids is not None else None)
        self.directory = read_directory(tmp / "invitations" / "directory.json")
        self.invitation_files = sorted((tmp / "invitations").glob("invitation-*.json"))
        self.invitations = [read_invitation(f) for f in self.invitation_files]
        self.words = list(words)
        self.plan = SecureSumPlan(epsilon, 1e-5, n, dropouts, len(words), collusion, bits)
        cfg = SecureSumConfig(list(words), self.plan, self.directory, n_topics=topics,
                              database=f"sqlite:///{tmp}/secure.sqlite", admin_token=self.TOKEN,
                              ledger=None if ledger is None else str(ledger), registration_s=registration_s)
        self.cfg = cfg
        self.app = create_secure_sum_app(cfg, freeze_gc=False)     # a test process: nothing frozen
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None,
                                                    log_level="error", access_log=False))

    def __enter__(self) -> "SecureSumServer":
        self.thread = start_uvicorn(self.server, "the secure-sum server")
        return self

    def __exit__(self, *exc) -> None:
        stop_uvicorn(self.server, self.thread)

    def call(self, method: str, path: str, doc=None, body: bytes | None = None, headers: dict | None = None):
        """``(status, JSON reply)``."""
        data = json.dumps(doc).encode() if doc is not None else body
        status, _, reply = http(method, self.url + path, data, headers or {})
        return status, json.loads(reply)

    def wait_state(self, *states: str, timeout: float = 60) -> dict:
        """The round's view once it reaches one of ``states`` (the server unmasks off the request's thread), or as it
        stands after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            view = self.call("GET", "/v1/secure/round")[1]
            if view["state"] in states or time.monotonic() > deadline:
                return view
            time.sleep(0.05)

    def play(self, tmp: Path, skip=()) -> list:
        """Every invited contributor but those in ``skip`` takes part (``take_part``, each in a thread, its state file
        in ``tmp``) with :func:`person_bow` of its index: what each returned, or the exception it raised."""
        from dptopic.contributor.secure_sum.client import take_part

        out: list = [None] * len(self.invitations)

        def one(i):
            try:
                out[i] = take_part(self.url, person_bow(i, len(self.words)), self.invitation_files[i],
                                   state=tmp / f"state{i}.json", poll=0.05, timeout=60)
            except Exception as e:      # noqa: BLE001 (returned to the test)
                out[i] = e

        threads = [threading.Thread(target=one, args=(i,)) for i in range(len(out)) if i not in skip]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        return out


def person_bow(seed: int, vocab: int):
    """One contributor's documents, ``(ptr, word ids, counts)``: three documents of up to 12 distinct words of
    ``vocab`` (seed ``seed``)."""
    rng = np.random.default_rng(seed)
    ptr, ids = [0], []
    for _ in range(3):
        ids += list(np.unique(rng.integers(0, vocab, 12)))
        ptr.append(len(ids))
    return np.array(ptr), np.array(ids), np.ones(len(ids), np.int64)


def record_noise_draws(monkeypatch) -> list:
    """``[(the Generator given, secure), ...]``: each noise share a contributor of this process draws
    (``dptopic.contributor.secure_sum.default.skellam_share``, drawn as before): a person built without a Generator
    draws from the OS CSPRNG, ``(None, True)``."""
    from dptopic.contributor.secure_sum import default as cs

    calls: list = []
    real = cs.skellam_share

    def spy(*a, **k):
        calls.append((a[3] if len(a) > 3 else k.get("rng"), k.get("secure")))
        return real(*a, **k)
    monkeypatch.setattr(cs, "skellam_share", spy)
    return calls


class InProcessRound:
    """A secure-sum round with the real server (:class:`~dptopic.service.secure_sum.default.SecureRound`, called
    directly, no HTTP) and real contributors (:class:`~dptopic.contributor.secure_sum.default.SecureContributor`),
    each holding its own invitation and state file; the steps are driven one by one so that a test can stand between
    the server and the contributors (what the server *says* is what :meth:`say` returns: a test replaces it to make
    the server lie).
    The rounding and noise are seeded (a simulation) unless ``secure``."""

    def __init__(self, tmp: Path, n: int = 12, dropouts: int = 2, collusion: int = 1, vocab: int = 30,
                 epsilon: float = 8.0, topics: int = 3, seed: int = 0, bows=None, secure: bool = False,
                 bits: int | None = None, max_words: int | None = None):
        import numpy as np

        from dptopic.contributor.secure_sum.default import SecureContributor
        from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory, read_invitation
        from dptopic.protocol.secure_sum.plan import SecureSumPlan
        from dptopic.service.secure_sum.config import SecureSumConfig
        from dptopic.service.secure_sum.default import SecureRound

        self.tmp = Path(tmp)
        self.words = [f"w{i:03d}" for i in range(vocab)]
        make_invitations(self.tmp / "enroll.key", n, self.tmp / "inv", round_id="round1", dropouts=dropouts,
                         collusion=collusion)
        self.directory = read_directory(self.tmp / "inv" / "directory.json")
        self.invitations = [read_invitation(f) for f in sorted((self.tmp / "inv").glob("invitation-*.json"))]
        self.plan = SecureSumPlan(epsilon, 1e-5, n, dropouts, vocab, collusion, bits, max_words)
        self.cfg = SecureSumConfig(self.words, self.plan, self.directory, n_topics=topics,
                                   database=f"sqlite:///{self.tmp}/round.sqlite", admin_token="t" * 24)
        self.server = SecureRound(self.cfg)
        if bows is None:
            from cohort_helpers import tiny_bows
            bows = tiny_bows(n, seed, vocab)
        self.bows = bows
        self.config = self.config_doc()
        self.people = [SecureContributor(self.config, b, inv, state=self.tmp / f"state-{inv['contributor']}.json",
                                         rng=None if secure else np.random.default_rng([seed, k]))
                       for k, (b, inv) in enumerate(zip(bows, self.invitations))]
        self.by_id = {c.me: c for c in self.people}
        self.refused: dict = {}      # contributor -> (step, message) of its refusal
        self.absent: set = set()     # invited contributors who never registered (no-shows)

    def config_doc(self) -> dict:
        """What ``GET /v1/config`` serves."""
        return {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": self.words,
                "vocab_size": len(self.words), "n_topics": self.cfg.n_topics, "round_id": self.server.round_id,
                "secure_sum": self.plan.to_dict(), "epsilon": self.plan.epsilon, "delta": self.plan.delta,
                "fed": None, "directory": self.directory, "max_body_bytes": self.cfg.max_body_bytes}

    def say(self, step: str, who: str, what: str, value):
        """What the server tells ``who`` at ``step`` (``what``: view, roster, shares or signatures); honest here."""
        return value

    def _run(self, c, step, f, *args):
        from dptopic.contributor.secure_sum.checks import LeftOut, ServerLied

        try:
            return f(*args)
        except ServerLied as e:
            self.refused[c.me] = (step, str(e))
        except LeftOut:
            pass
        return None

    def wait(self, timeout: float = 60.0) -> dict:
        """The round's view once it leaves an unmask step (the server unmasks off the request's thread)."""
        deadline = time.monotonic() + timeout
        while self.server.view()["state"].startswith("unmask") and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.server.view()

    def keys(self, absent=()):
        """Every invited contributor registers its keys, but those in ``absent`` (no-shows, who never do)."""
        self.absent = set(absent)
        for c in self.people:
            if c.me in self.absent:
                continue
            r = c.registration()
            self.server.post_keys(r["contributor"], r["keys"], r["signature"])

    def shares(self):
        roster = self.server.roster_view()
        for c in self.people:
            if c.me in self.absent:
                continue
            q = self._run(c, "shares", c.shares_request, self.say("shares", c.me, "roster", roster))
            if q is not None:
                self.server.post_shares(q["contributor"], q["shares"])

    def upload(self, phase: int, drop=()):
        view = self.server.view()
        for c in self.people:
            if c.me in drop or c.me in self.refused or c.me in self.absent:
                continue
            out = self._run(c, f"upload{phase}", c.upload, phase, self.say(f"upload{phase}", c.me, "view", view))
            if out is None:
                continue
            body, sig = out
            status, answer = self.server.post_upload(phase, c.me, body, sig)
            if phase == 0:
                c.take_shares(self.say("upload0", c.me, "shares", answer.get("shares", {})))
        if self.server.view()["state"] == f"upload{phase}":
            self.server.close()

    def consistency(self, phase: int):
        view = self.server.view()
        for c in self.people:
            if c.me in self.refused or c.me not in set(view.get("uploaded", ())):
                continue
            q = self._run(c, f"consistency{phase}", c.consistency, phase,
                          self.say(f"consistency{phase}", c.me, "view", view))
            if q is not None:
                self.server.post_consistency(phase, q["contributor"], q["signature"])
        if self.server.view()["state"] == f"consistency{phase}":
            self.server.close()

    def unmask(self, phase: int, wait: bool = True):
        from dptopic.service.secure_sum.config import ApiError

        view = self.server.view()
        if view["state"] != f"unmask{phase}":
            return self.server.view()
        sigs = self.server.signatures(phase)
        for c in self.people:
            if c.me in self.refused or c.me not in set(view["signers"]):
                continue
            q = self._run(c, f"unmask{phase}", c.unmask, phase, self.say(f"unmask{phase}", c.me, "view", view),
                          self.say(f"unmask{phase}", c.me, "signatures", sigs))
            if q is None:
                continue
            try:
                self.server.post_unmask(phase, q["contributor"], q["answers"], q["signature"])
            except ApiError as e:
                if e.code != "round_closed":
                    raise
        return self.wait() if wait else self.server.view()

    def run(self, drop0=(), absent=()):
        """Every step; ``drop0``: contributors that mask step 0 and never upload; ``absent``: invited contributors
        who never register (the admin then closes the roster with the others). Returns the final view."""
        self.keys(absent)
        if self.server.view()["state"] == "keys":
            self.server.close()
        if self.server.view()["state"] != "shares":
            return self.server.view()
        self.shares()
        for phase in (0, 1):
            if self.server.view()["state"] != f"upload{phase}":
                break
            self.upload(phase, drop=drop0 if phase == 0 else ())
            if self.server.view()["state"] != f"consistency{phase}":
                break
            self.consistency(phase)
            self.unmask(phase)
        return self.server.view()


class SecureServe(Server):
    """``dptopic serve --report-kind secure-sum`` for an :class:`InProcessRound`'s settings, in a subprocess."""

    def __init__(self, tmp, rnd: "InProcessRound", database: str | None = None):
        (tmp / "words.txt").write_text("\n".join(rnd.words) + "\n")
        write_token(tmp / "token", "t" * 24)
        self.rnd = rnd
        super().__init__(tmp, database or f"sqlite:///{tmp}/served.sqlite")

    def argv(self) -> list[str]:
        p = self.rnd.plan
        return ["serve", "--report-kind", "secure-sum", "--unit", "user", "--epsilon", str(p.epsilon), "--delta",
                str(p.delta), "--min-contributors", str(p.n), "--dropout-tolerance", str(p.dropouts), "--collusion",
                str(p.collusion), "--topics", str(self.rnd.cfg.n_topics), "--vocabulary", str(self.tmp / "words.txt"),
                "--directory", str(self.rnd.tmp / "inv" / "directory.json"), "--database", self.database,
                "--token-file", str(self.tmp / "token"), "--port", str(self.port), "--quiet"]

    def start(self, timeout: float = 120.0) -> "SecureServe":
        env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.log = open(self.tmp / f"server-{self.port}.log", "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "dptopic", *self.argv()], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.log_text()[-2000:]
            try:
                if http("GET", self.url + "/v1/config", timeout=2)[0] == 200:
                    return self
            except OSError:
                pass
            time.sleep(0.05)            # a refused connection costs a millisecond: the test goes on once it listens
        raise RuntimeError(f"the secure-sum server did not start: {self.log_text()[-2000:]}")


class OverHttp:
    """The :class:`~dptopic.service.secure_sum.default.SecureRound` methods :class:`InProcessRound` calls, over HTTP."""

    def __init__(self, url: str):
        self.url = url

    def _call(self, method, path, doc=None, body=None, headers=None):
        from dptopic.service.secure_sum.config import ApiError
        if doc is not None:
            body, headers = json.dumps(doc).encode(), {"Content-Type": "application/json"}
        status, _, data = http(method, self.url + path, body, headers or {})
        out = json.loads(data)
        if status >= 400:
            raise ApiError(status, out["error"]["code"], out["error"]["message"])
        return status, out

    def view(self):
        return self._call("GET", "/v1/secure/round")[1]

    def roster_view(self):
        return self._call("GET", "/v1/secure/roster")[1]

    def post_keys(self, who, keys, signature):
        return self._call("POST", "/v1/secure/keys", {"contributor": who, "keys": keys, "signature": signature})

    def post_shares(self, who, shares):
        return self._call("POST", "/v1/secure/shares", {"contributor": who, "shares": shares})

    def post_upload(self, phase, who, body, signature):
        return self._call("POST", f"/v1/secure/upload/{phase}", body=body,
                          headers={"Dptopic-Contributor": who, "Dptopic-Signature": signature})

    def post_consistency(self, phase, who, signature):
        return self._call("POST", f"/v1/secure/consistency/{phase}", {"contributor": who, "signature": signature})

    def signatures(self, phase):
        return self._call("GET", f"/v1/secure/signatures/{phase}")[1]

    def post_unmask(self, phase, who, answers, signature):
        return self._call("POST", f"/v1/secure/unmask/{phase}", {"contributor": who, "answers": answers,
                                                                 "signature": signature})

    def close(self):
        return self._call("POST", "/v1/admin/secure/close", body=b"", headers={"Authorization": "Bearer " + "t" * 24})
