"""The database engines and locks every mode's server opens its round with: SQLite (created readable by its owner only,
WAL, synced at checkpoints; one server process at a time, held by a lock file) or PostgreSQL (any number of server
processes, taking the round's advisory locks in turn). The tables and statements of the default round are
:mod:`dptopic.service.secure_sum.database`'s.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url

from ...errors import DPTopicError, ParameterError
from ..storage import check_backend

SQLITE_LOCKS: dict = {}
"""The lock files of the SQLite rounds this process serves, held open while it lives (a POSIX lock is this
process's: a second server process on the same file is refused; closing the file would release it)."""


def _hold_sqlite(path: Path) -> None:
    """Take the lock that makes this process the only server of the SQLite round at ``path`` (a second process is
    refused in one line: SQLite serves a round from one process; several share it on PostgreSQL)."""
    import fcntl  # POSIX only: loaded when a SQLite round is opened, not on start-up

    key = str(path.resolve())
    if key in SQLITE_LOCKS:
        return
    lock = Path(key + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise DPTopicError(f"the SQLite database {str(path)!r} is served by another server process: a round on"
                           " SQLite is served by one process; for several server processes give them one PostgreSQL"
                           " database"
                           " (postgresql+psycopg://USER@HOST/DB, docs/secure_sum.md).") from None
    SQLITE_LOCKS[key] = fd


def _open_engine(url: str, schema: str | None = None):
    """The round's database engine: SQLite (created readable by its owner only, WAL, synced at checkpoints; one
    server process at a time) or PostgreSQL (any number of server processes: every change a transaction that holds
    the round's state row; ``schema``: the round's tables in that schema, created if need be, as the connections'
    search path)."""
    check_backend(url)
    try:
        u = make_url(url)
    except Exception:       # noqa: BLE001 - SQLAlchemy's own words say why
        raise ParameterError("{database=} is not a database URL: give sqlite:///PATH or"
                             " postgresql+psycopg://USER@HOST/DB.", "database", url) from None
    if u.get_backend_name() == "sqlite":
        path = u.database
        if path and path != ":memory:" and not path.startswith("file:"):
            p = Path(path)
            if not p.exists():
                os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            elif p.is_file() and p.stat().st_mode & 0o077 and p.stat().st_uid == os.getuid():
                p.chmod(0o600)
            _hold_sqlite(p)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")     # WAL: a killed process loses no commit (module note)
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()
        return engine
    if schema is None:
        return create_engine(url, pool_pre_ping=True)
    quoted = '"' + schema.replace('"', '""') + '"'
    engine = create_engine(url, pool_pre_ping=True)
    with engine.begin() as conn:        # server processes starting together: one creates the schema
        hold_round_lock(conn, f"schema:{schema}")
        conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {quoted}"))
    engine.dispose()
    return create_engine(url, pool_pre_ping=True, connect_args={"options": f"-c search_path={quoted}"})


def _advisory_key(round_id: str) -> int:
    """The PostgreSQL advisory lock of a round's start-up (a signed 64-bit number from its id)."""
    return int.from_bytes(hashlib.sha256(f"dptopic-secure-sum:{round_id}".encode()).digest()[:8], "big", signed=True)


def hold_round_lock(conn, name: str) -> None:
    """On PostgreSQL, wait for and hold the advisory lock ``name`` (:func:`_advisory_key`) to the end of ``conn``'s
    transaction: the server processes sharing a round take it one at a time (its start-up here; every message of a
    committee-mode round, :mod:`dptopic.service.secure_sum.committee`)."""
    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _advisory_key(name)})
