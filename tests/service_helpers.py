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
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

from dptopic.corpus import Corpus, lda_corpus

TOKEN = "test-admin-token-0123456789abcdef"
SRC = str(Path(__file__).resolve().parents[1] / "src")
SYLLABLES = ["ba", "ce", "di", "fo", "gu", "ka", "le", "mi", "no", "pu", "ra", "se", "ti", "vo", "zu"]


def make_words(n: int) -> list[str]:
    """Distinctive letter-only words (4-6 letters), unlikely to appear by chance in binary data."""
    words = ["".join(p) + "x" for p in itertools.product(SYLLABLES, repeat=2)]
    return words[:n]


def make_data(tmp: Path, vocab_size: int = 120, n_docs: int = 400, n_prior: int = 80, seed: int = 5):
    """Vocabulary file, prior corpus file and contributor documents (one per line) from a planted LDA corpus."""
    words = make_words(vocab_size)
    c = lda_corpus(n_docs=n_docs + n_prior, vocab_size=vocab_size, n_topics=4, doc_length=30, alpha=0.2, beta=0.05,
                   seed=seed).corpus
    texts = [" ".join(words[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]
    (tmp / "vocab.txt").write_text("\n".join(words) + "\n")
    (tmp / "prior.txt").write_text("\n".join(texts[:n_prior]) + "\n")
    (tmp / "docs.txt").write_text("\n".join(texts[n_prior:]) + "\n")
    (tmp / "token").write_text(TOKEN + "\n")
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


class Server:
    """``dptopic serve`` in a subprocess; ``kill()`` sends SIGKILL (no clean shutdown)."""

    def __init__(self, tmp: Path, database: str, *extra: str, port: int | None = None, document: bool = False):
        self.tmp, self.database, self.extra, self.document = tmp, database, list(extra), document
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = None

    def start(self, timeout: float = 120.0) -> "Server":
        # OLP-LDA's sweeps: document-level reports train LocalDocumentLDA, and serve refuses flags without effect
        kind = (["--report-kind", "document", "--epsilon-doc", "8"] if self.document else
                ["--epsilon-word", "2.0", "--prior", str(self.tmp / "prior.txt"), "--iterations", "10",
                 "--prior-iterations", "20"])
        cmd = [sys.executable, "-m", "dptopic", "serve", "--database", self.database, "--host", "127.0.0.1",
               "--port", str(self.port), "--vocabulary", str(self.tmp / "vocab.txt"), *kind,
               "--token-file", str(self.tmp / "token"), "--topics", "4", "--batch-size", "40", "--quiet", *self.extra]
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
            time.sleep(0.2)
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


class PostgresServer:
    """A throwaway PostgreSQL cluster in a temp dir (initdb + pg_ctl), trust auth on 127.0.0.1 only."""

    def __init__(self):
        import tempfile

        self.root = Path(tempfile.mkdtemp(prefix="dptopic-pg-"))  # not under pytest's root-only tmp dir
        self.data = self.root / "pgdata"
        self.port = free_port()

    def start(self) -> "PostgresServer":
        if PG_BIN is None:
            raise RuntimeError("PostgreSQL server binaries not found under /usr/lib/postgresql")
        if os.geteuid() == 0:
            try:
                import pwd

                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise RuntimeError("running as root and there is no 'postgres' user to run PostgreSQL as") from None
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            os.chmod(self.root, 0o700)
        opts = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=on"
        for cmd in ([str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8",
                     "--no-sync"],
                    [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-o", opts, "-l", str(self.root / "pg.log"), "-w",
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
        subprocess.run(_as_pg_user([str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


def count_rows(database: str) -> dict:
    """Direct look into the database (not through the server)."""
    from sqlalchemy import create_engine, text

    eng = create_engine(database)
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


def throwaway_postgres_url():
    """A module-scoped fixture body: the URL of a throwaway PostgreSQL cluster, or a skip saying why there is none."""
    for server in throwaway_postgres():
        yield server.url
