"""The default round's storage: its SQL tables, the statements its messages run (built once), and the
database engines and locks every mode's server opens its round with (SQLite, one server process; PostgreSQL,
several).

Uploads are aggregated as they arrive: each is added to its step's running sum (in the plan's ring) in the
transaction that stores its receipt (SHA-256 and signature), so exactly once, and its bytes are not kept. The
server's storage for the uploads is the two running sums plus one receipt per contributor and step, and a server
killed at any moment resumes from them (``tests/integration/test_secure_sum_restart.py``).
The database is created readable by its owner only; SQLite commits in WAL mode and syncs at checkpoints, so a
process killed at any moment loses nothing it acknowledged (a power cut may lose the last acknowledgements, which the
contributors send again from their state files).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sqlalchemy import (
    Column,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    bindparam,
    create_engine,
    event,
    func,
    select,
    text,
)
from sqlalchemy.engine import make_url

from ...errors import DPTopicError, ParameterError
from ..storage import check_backend

meta = MetaData()


t_state = Table("secure_round", meta, Column("key", String(64), primary_key=True), Column("value", Text))


t_keys = Table("secure_keys", meta, Column("contributor", String(64), primary_key=True),
               Column("c", String(64), nullable=False, unique=True), Column("s", Text, nullable=False),
               Column("b", Text, nullable=False), Column("signature", String(128), nullable=False),
               Column("at", Float, nullable=False))


t_shares = Table("secure_shares", meta, Column("sender", String(64), primary_key=True),
                 Column("body", Text, nullable=False), Column("sha", String(64), nullable=False))


t_share_to = Table("secure_share_to", meta, Column("receiver", String(64), primary_key=True),
                   Column("sender", String(64), primary_key=True), Column("ct", Text, nullable=False))


t_uploads = Table("secure_upload_receipts", meta, Column("phase", Integer, primary_key=True),
                  Column("contributor", String(64), primary_key=True), Column("sha", String(64), nullable=False),
                  Column("signature", String(128), nullable=False), Column("at", Float, nullable=False))
"""One receipt per contributor and step (the upload's SHA-256 and signature): an upload is added to the step's
running sum exactly once, in the transaction that stores its receipt; the bytes themselves are not kept."""


t_sums = Table("secure_running_sums", meta, Column("phase", Integer, primary_key=True),
               Column("data", LargeBinary, nullable=False), Column("count", Integer, nullable=False))
"""Each step's running sum of the uploads (in the plan's ring) and how many it holds."""


t_consistency = Table("secure_consistency", meta, Column("phase", Integer, primary_key=True),
                      Column("contributor", String(64), primary_key=True),
                      Column("signature", String(128), nullable=False))


t_unmask = Table("secure_unmask", meta, Column("phase", Integer, primary_key=True),
                 Column("contributor", String(64), primary_key=True), Column("body", Text, nullable=False),
                 Column("sha", String(64), nullable=False))


t_used_keys = Table("secure_used_keys", meta, Column("key", String(64), primary_key=True))
"""Every public key of the registered key sets (a set re-using one is refused), checked in the transaction that
registers a set, whichever server process takes it."""


t_need = Table("secure_unmask_need", meta, Column("phase", Integer, primary_key=True),
               Column("sender", String(64), primary_key=True), Column("have", Integer, nullable=False))
"""At an unmasking: each seed the sum needs (its maker's) and how many of its threshold of shares have come, counted
in the transaction that stores each answer, whichever server process takes it."""


t_counts = Table("secure_counts", meta, Column("key", String(64), primary_key=True),
                 Column("value", Integer, nullable=False))
"""Counts kept as the rows they count change, in the same transaction (whichever server process makes it): at an
unmasking, the answers stored (``answered{p}``) and the seeds still short of their threshold (``short{p}``), so that
an answer costs the rows it touches, not a count over every answer."""


class _Q:
    """The statements a contributor's messages run, built once: SQLAlchemy builds a statement's cache key each time a
    new statement object is executed (about 100 us of a 120 us query here); a statement built once keeps its key,
    and takes its values as bound parameters (docs/research/secure_sum_cpu.md). Parameters are named ``p_*``, apart
    from the tables' columns."""

    P, WHO, KEYS = bindparam("p_phase"), bindparam("p_who"), bindparam("p_keys", expanding=True)
    state = select(t_state.c.value).where(t_state.c.key == "state")
    state_locked = state.with_for_update()
    save_state = t_state.update().where(t_state.c.key == "state").values(value=bindparam("p_value"))
    state_key = select(t_state.c.key).where(t_state.c.key == bindparam("p_key"))
    insert_state = t_state.insert()
    keys_of = select(t_keys).where(t_keys.c.contributor == WHO)
    used = select(t_used_keys.c.key).where(t_used_keys.c.key.in_(KEYS))
    insert_keys, insert_used = t_keys.insert(), t_used_keys.insert()
    n_keys = select(func.count()).select_from(t_keys)
    shares_sha = select(t_shares.c.sha).where(t_shares.c.sender == WHO)
    insert_shares, insert_share_to = t_shares.insert(), t_share_to.insert()
    n_shares = select(func.count()).select_from(t_shares)
    shares_for = select(t_share_to.c.sender, t_share_to.c.ct).where(t_share_to.c.receiver == WHO)
    upload_sha = select(t_uploads.c.sha).where((t_uploads.c.phase == P) & (t_uploads.c.contributor == WHO))
    insert_upload = t_uploads.insert()
    delete_sum, insert_sum = t_sums.delete().where(t_sums.c.phase == P), t_sums.insert()
    signature_of = select(t_consistency.c.signature).where((t_consistency.c.phase == P)
                                                           & (t_consistency.c.contributor == WHO))
    insert_signature = t_consistency.insert()
    n_signatures = select(func.count()).select_from(t_consistency).where(t_consistency.c.phase == P)
    unmask_sha = select(t_unmask.c.sha).where((t_unmask.c.phase == P) & (t_unmask.c.contributor == WHO))
    insert_unmask = t_unmask.insert()
    counts = select(t_counts.c.key, t_counts.c.value).where(t_counts.c.key.in_(KEYS))
    set_count = t_counts.update().where(t_counts.c.key == bindparam("p_key")).values(value=bindparam("p_value"))
    senders = bindparam("p_senders", expanding=True)
    one_more = (t_need.update().where((t_need.c.phase == P) & t_need.c.sender.in_(senders))
                .values(have=t_need.c.have + 1))
    reached = select(func.count()).select_from(t_need).where((t_need.c.phase == P) & t_need.c.sender.in_(senders)
                                                             & (t_need.c.have == bindparam("p_threshold")))


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
