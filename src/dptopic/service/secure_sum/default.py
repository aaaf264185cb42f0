"""The server of a secure-sum round (``dptopic serve``'s secure-sum kind): one round of secure aggregation of
per-person statistics.

The server admits, stores, forwards and unmasks; the protocol is :mod:`dptopic.protocol.secure_sum.default` (read its
note first) and enrollment :mod:`dptopic.protocol.secure_sum.enrollment`. Steps, each a state of the round (``GET
/v1/secure/round``):

``keys``          each invited contributor registers its keys, signed with its invitation's key
                  (``POST /v1/secure/keys``); the roster closes when every member of the directory has, or at the
                  registration deadline (``registration_s``) or by the admin with those registered: at least
                  ``n - F`` of them (a contributor who never registers is one of the F dropouts), each with the
                  threshold of its neighbours among them; else the round fails, in one line.
``shares``        each posts its neighbours' encrypted shares (``POST /v1/secure/shares``); closes when every roster
                  member has, or by the admin.
``upload{p}``     the signed, masked vector of step p (``POST /v1/secure/upload/{p}``, raw little-endian uint32 or
                  uint64, the plan's ring;
                  step 0 answers with the shares addressed to the uploader); closes when every member has uploaded,
                  or by the admin (``POST /v1/admin/secure/close``).
``consistency{p}``  the survivors sign the set of uploads (``POST /v1/secure/consistency/{p}``); closes when every
                  uploader has signed, or by the admin; the signatures are then public (``GET
                  /v1/secure/signatures/{p}``).
``unmask{p}``     the signers answer with shares (``POST /v1/secure/unmask/{p}``); once every needed seed has its
                  threshold of shares the server unmasks the sum (off the request's thread; resumed after a restart),
                  after step 0 chooses the kept words and opens step 1 (the co-occurrence over them), after step 1
``released``      the model (``GET /v1/model``, for ``dptopic pull``). Or ``failed``, with the reason: nothing released.

Every request is refused in one line when it does not fit the state, is not signed by the member it names, or is
malformed (one contributor's bad key, share or answer is refused, not the round); every message is stored durably
once per contributor and step (a retry of the same bytes is acknowledged as a replay, different bytes are refused).

Uploads are aggregated as they arrive: each is added to its step's running sum (in the plan's ring) in the
transaction that stores its receipt (SHA-256 and signature), so exactly once, and its bytes are not kept. The
server's storage for the uploads is the two running sums plus one receipt per contributor and step, and a server
killed at any moment resumes from them (``tests/integration/test_secure_sum_restart.py``). An upload whose maker is
left with fewer than the threshold of its neighbours among the uploads cannot be unmasked, nor taken out of the sum,
so the step fails; taking it out would rarely save the round (on the ring its neighbours are then short in turn), and
the plan's degree makes it rare under random dropouts (at most 1e-3 contributors expected short).
Fewer than ``n - F`` survivors at any step fail the round: the noise was calibrated for at least that many shares.
The database is created readable by its owner only; SQLite commits in WAL mode and syncs at checkpoints, so a
process killed at any moment loses nothing it acknowledged (a power cut may lose the last acknowledgements, which the
contributors send again from their state files).
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import os
import re
import resource
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
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
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..._io import load_bundle, load_json
from ...accounting.skellam import rounded_norms
from ...corpus import Vocabulary
from ...errors import MISSING, DPTopicError, ParameterError, ParameterText
from ...protocol.secure_sum import default as ss
from ...protocol.secure_sum.enrollment import check_directory, layout_difference, layout_of
from ..http import unrouted
from ..ledger import charge_secure_round
from ..lifespan import frozen_lifespan
from ..storage import check_backend, safe_url

log = logging.getLogger("dptopic.service.secure_sum.default")
CONTRIBUTOR = ss.ROUND_ID
UPLOAD_PHASES = ss.PHASES
STATES = ("keys", "shares", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released",
          "failed")

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


MAX_REGISTRATION_S = 366 * 86400.0
"""The longest registration deadline (a year), in seconds after a round opens."""

SQLITE_LOCKS: dict = {}
"""The lock files of the SQLite rounds this process serves, held open while it lives (a POSIX lock is this
process's: a second server process on the same file is refused; closing the file would release it)."""


class ApiError(Exception):
    """A refused request: its HTTP status, a code and a one-line message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class SecureSumConfig:
    """What a secure-sum server (``dptopic serve``'s secure-sum kind) is started with: the public vocabulary, the
    plan, the operator's signed directory of invited contributors (:mod:`dptopic.protocol.secure_sum.enrollment`), and
    the server's own settings."""

    vocabulary: object
    plan: ss.SecureSumPlan
    directory: dict
    n_topics: int = 20
    database: str = "sqlite:///dptopic-secure-sum.db"
    admin_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 16 * 1024 * 1024
    ledger: str | None = None               # the dataset ledger the released round is charged to (service/ledger.py)
    ledger_dataset: str | None = None
    allow_foreign_tables: bool = False
    schema: str | None = None               # PostgreSQL: the schema of the round's tables (one per round in cohorts)
    registration_s: float | None = None
    """The registration deadline, in seconds after the round first opened (kept in its database): the roster then
    closes with those registered, if at least ``n - F`` (:meth:`SecureRound.close_roster_if_due`). None: it closes
    once every invited contributor has registered, or by the admin (the same rule)."""

    def __post_init__(self):
        if self.registration_s is not None and (isinstance(self.registration_s, bool) or not isinstance(
                self.registration_s, (int, float)) or not 0 < self.registration_s <= MAX_REGISTRATION_S):
            raise ParameterError("invalid {registration_s=}: seconds in (0, {most:,d}] after the round first opens (a"
                                 " year at most).", "registration_s", self.registration_s,
                                 most=int(MAX_REGISTRATION_S))
        if not isinstance(self.vocabulary, Vocabulary):
            self.vocabulary = Vocabulary(list(self.vocabulary))
        if self.plan.vocab_size != len(self.vocabulary):
            raise ParameterError("the plan's vocabulary size differs from {vocabulary}'s.", "vocabulary")
        if not 2 <= self.n_topics <= len(self.vocabulary):
            raise ParameterError("{n_topics=} must lie between 2 and the vocabulary's size ({size}).", "n_topics",
                                 self.n_topics, size=len(self.vocabulary))
        if self.n_topics > self.plan.max_kept_words:
            raise ParameterError("{n_topics=} must be at most {max_words=} (the words the second sum holds, at least"
                                 " one a topic).", "n_topics", self.n_topics,
                                 values={"max_words": self.plan.max_words})
        if self.plan.committee:
            raise ParameterError("{plan}'s committee mode is not served by this round's server: serve it with"
                                 " dptopic.service.secure_sum.committee.create_committee_app, or plan without a"
                                 " committee.", "plan")
        self.directory = check_directory(self.directory, where="the config's directory")
        if len(self.directory["members"]) != self.plan.n:
            raise ParameterError("{directory} lists {listed} invited contributors, but the round takes {n} (the plan's"
                                 " n): give the same number, or invite again.", "directory",
                                 listed=len(self.directory["members"]), n=self.plan.n,
                                 flag_template="{directory} lists {listed} invited contributors, but the round takes"
                                               " {n} ({min_contributors}): give the same number, or invite again.")
        check_directory_plan(self.directory, self.plan)
        need = self.plan.upload_bytes(max(self.plan.dims)) + 64
        if self.max_body_bytes < need:
            raise ParameterError("{max_body_bytes=} is below the largest secure-sum upload here ({need} bytes): raise"
                                 " it.", "max_body_bytes", self.max_body_bytes, need=need)

    @property
    def round_id(self) -> str:
        """The round's id: the operator's, from the directory."""
        return self.directory["round_id"]


def check_directory_plan(directory: dict, plan: ss.SecureSumPlan) -> None:
    """The plan and mode a single round's ``directory`` names (:mod:`dptopic.protocol.secure_sum.enrollment`'s note)
    against the ``plan`` a server is started with; one line otherwise (the contributors' invitations would refuse it). A
    directory that names neither (a round in cohorts' round, each checked against the cohort directory's layout) is
    not checked here."""
    named = directory.get("committee")
    if named is not None and bool(named) != bool(plan.committee):
        raise ParameterError("{directory} names a " + ("committee round: serve it in the committee mode"
                             if named else "round without a committee: serve it without the committee mode")
                             + " (the mode its invitations name), or invite again.", "directory")
    layout = directory.get("layout")
    diff = "" if layout is None else layout_difference(layout_of(plan), layout,
                                                         "{key} {pinned} in the invitations, {stated} in the plan")
    if diff:
        raise ParameterError("{directory} was written for another plan of the round: {diff}; start the server with"
                             " the invitations' plan, or invite again.", "directory", diff=diff)


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


class SecureRound:
    """The round's state, durable in the database. Every change is one transaction that holds the round's state row
    (on PostgreSQL ``SELECT ... FOR UPDATE``, so that several server processes share one round; on SQLite one
    process serves the round, and a lock of its own serialises its threads); what is kept in memory (the state, the
    running sums, the closed roster) is read again when the database shows another process changed it."""

    setting_names: dict = {}      # how the round's failure reasons name its settings (create_secure_sum_app's)

    def __init__(self, cfg: SecureSumConfig):
        self.cfg, self.plan = cfg, cfg.plan
        self.round_id = cfg.round_id
        self.members = dict(cfg.directory["members"])
        self.ids = sorted(self.members)
        self.lock = threading.RLock()
        self.timings: dict = {}
        self._graph = ss.neighbour_graph(self.ids, self.round_id, self.plan.degree)
        self.T = self.plan.threshold
        self._roster = None
        self._unmasking = None
        self._sums: dict = {}        # phase -> (running sum, uploads in it), as committed; keyed by the count
        self._st_raw = None          # the state row as last read or written (None: read it again)
        self._looked, self._polled = 0.0, "keys"     # long polling's reading of the state row, and when
        self._changing = 0           # inside a change (:meth:`_txn`) of this process
        self._waiters: set = set()   # long polls of this process, woken when the round's step changes (:meth:`_save`)
        self._waiters_lock = threading.Lock()
        try:
            self.engine = _open_engine(cfg.database, cfg.schema)
            self.shared = self.engine.dialect.name != "sqlite"      # several server processes may share the round
            found = set(inspect(self.engine).get_table_names())
            if "committee_round" in found and not cfg.allow_foreign_tables:     # a round restarts in its mode
                raise ParameterError("{database=} holds a committee-mode round: restart the server in the committee"
                                     " mode, as it was started, or give a new database.", "database",
                                     safe_url(cfg.database))
            foreign = sorted(found - set(meta.tables))
            if foreign and not cfg.allow_foreign_tables:
                tables = f"{', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}"
                line = "{database=} already holds tables that are not the secure sum's ({tables}): give a new database,"
                raise ParameterError(line + " or pass allow_foreign_tables=True to add the round's tables beside them.",
                                     "database", safe_url(cfg.database), tables=tables,
                                     flag_template=line + " or pass {allow_foreign_tables} to add the round's tables"
                                                          " beside them.")
            with self.engine.begin() as conn:
                if self.shared:     # server processes starting together: one creates the tables and the round
                    hold_round_lock(conn, self.round_id)
                meta.create_all(conn)
                rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
                if not rows:
                    conn.execute(t_state.insert(), [{"key": "settings", "value": json.dumps(self._settings())},
                                                    {"key": "round_id", "value": self.round_id},
                                                    {"key": "state", "value": json.dumps({"state": "keys"})}])
                    rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
                if "opened_at" not in rows:     # when the round first opened: its registration deadline counts from it
                    rows["opened_at"] = json.dumps(time.time())
                    conn.execute(t_state.insert(), [{"key": "opened_at", "value": rows["opened_at"]}])
                n_keys = conn.execute(select(func.count()).select_from(t_keys)).scalar()
                if n_keys and not conn.execute(select(func.count()).select_from(t_used_keys)).scalar():
                    conn.execute(t_used_keys.insert(), [{"key": k} for r in conn.execute(select(t_keys.c.c, t_keys.c.s))
                                                        for k in [r.c, *json.loads(r.s)]])     # an older round's
        except DPTopicError:
            raise
        except SQLAlchemyError as e:
            raise ParameterError("{database=} cannot hold the round ({why}): give a new SQLite file (sqlite:///PATH)"
                                 " or a PostgreSQL database the server may write.", "database", safe_url(cfg.database),
                                 why=" ".join(str(getattr(e, "orig", e)).split())[:160]) from None
        self.st, self._model_doc = self._check_stored(rows, n_keys)
        self._st_raw = rows["state"]
        try:
            opened = float(json.loads(rows["opened_at"]))
        except (TypeError, ValueError):
            raise ParameterError("{database=} holds a damaged secure-sum round (its opening time does not read): give a"
                                 " new database; the contributors then join a new round.", "database",
                                 safe_url(cfg.database)) from None
        #: when the roster closes with those registered (a Unix time), or None: once every one has registered
        self.registration_deadline = None if cfg.registration_s is None else opened + float(cfg.registration_s)
        if self.st["state"].startswith("unmask"):      # killed between the last answer and the unmasking: resume
            phase = int(self.st["state"][-1])
            with self._txn() as conn:
                complete = self._need_counts(conn, phase)[0] == 0
            if complete:
                self._start_unmask(phase)

    # ------------------------------------------------------------ the state, shared by the server processes
    def refresh(self, conn=None, lock: bool = False) -> None:
        """Read the round's state row again (``lock``: ``FOR UPDATE``, held to the end of ``conn``'s transaction, so
        that the server processes sharing the round change it one at a time) and, when another process has moved
        the round on, take its state (and the model, once released)."""
        if conn is None:
            with self.engine.connect() as c:
                return self.refresh(c)
        raw = conn.execute(_Q.state_locked if lock else _Q.state).scalar()
        if raw is None:
            raise DPTopicError(f"the database {safe_url(self.cfg.database)!r} lost the round's state row: give a new"
                               " database.")
        if raw == self._st_raw:
            return
        st = json.loads(raw)
        if st.get("state") == "released" and self._model_doc is None:
            model = conn.execute(select(t_state.c.value).where(t_state.c.key == "model")).scalar()
            self._model_doc = json.loads(model) if model else None
        self.st, self._st_raw = st, raw

    def fresh(self) -> None:
        """Before a request is answered: the state as committed (several server processes share the round on
        PostgreSQL; on SQLite this process alone changes it). Not within a change (:meth:`_txn` has read it)."""
        if self.shared:
            with self.lock:
                if not self._changing:
                    self.refresh()

    def current_state(self) -> str:
        """The round's step, for long polling: on PostgreSQL read from the database (as committed, whichever process
        moved it) at most 10 times a second by this process."""
        if not self.shared:
            return self.st["state"]
        if time.monotonic() - self._looked > STATE_LOOK_S:
            with self.engine.connect() as conn:
                raw = conn.execute(select(t_state.c.value).where(t_state.c.key == "state")).scalar()
            self._polled, self._looked = json.loads(raw)["state"], time.monotonic()
        return self._polled

    @contextmanager
    def _txn(self):
        """One change of the round: a transaction holding the round's state row (``SELECT ... FOR UPDATE`` on
        PostgreSQL: the server processes sharing the round change it one at a time; this process's lock besides), the
        state read again first. A change that fails rolls back, and the state is read again by the next."""
        with self.lock:
            self._changing += 1
            try:
                with self.engine.begin() as conn:
                    if self.shared or self._st_raw is None:
                        self.refresh(conn, lock=True)
                    yield conn
            except BaseException:
                self._st_raw = None      # what this change set in memory is not committed
                raise
            finally:
                self._changing -= 1

    def _settings(self) -> dict:
        return {"plan": self.plan.to_dict(), "n_topics": self.cfg.n_topics,
                "directory_sha256": ss.digest(ss.canonical(self.cfg.directory)),
                "vocabulary_sha256": hashlib.sha256("\n".join(self.cfg.vocabulary.words).encode()).hexdigest()}

    def _check_stored(self, rows: dict, n_keys: int) -> tuple[dict, dict | None]:
        """The stored state checked on start: the same settings, a known step with its fields, a model when
        released, every key of a closed roster; one line naming the database otherwise."""
        db = safe_url(self.cfg.database)

        def damaged(what):
            return ParameterError("{database=} holds a damaged secure-sum round ({what}): give a new database; the"
                                  " contributors then join a new round.", "database", db, what=what)
        try:
            settings = json.loads(rows["settings"])
            st = json.loads(rows["state"])
            model = json.loads(rows["model"]) if "model" in rows else None
        except (KeyError, TypeError, ValueError):
            raise damaged("its settings, state or model do not read") from None
        if settings != self._settings() or rows.get("round_id") != self.round_id:
            raise ParameterError("{database=} holds a secure-sum round with other settings (plan, vocabulary or"
                                 " directory): give a new database, or the same settings.", "database", db)
        state = st.get("state") if isinstance(st, dict) else None
        if state not in STATES:
            raise damaged(f"an unknown step {str(state)[:40]!r}")
        if state not in ("keys", "failed"):     # the roster's size as it closed (a round stored before: n)
            try:
                closed = int(json.loads(rows["roster"])) if "roster" in rows else self.plan.n
            except (TypeError, ValueError):
                raise damaged("its roster's size does not read") from None
            if n_keys != closed or not self.plan.n - self.plan.dropouts <= closed <= self.plan.n:
                raise damaged(f"{n_keys} registered keys for a closed roster of {closed}")
        ids = set(self.ids)
        for k in ("members", "uploaded", "signers"):
            if k in st and not (isinstance(st[k], list) and set(st[k]) <= ids):
                raise damaged(f"its {k}")
        needs = {"upload": ("members",), "consistency": ("members", "uploaded"),
                 "unmask": ("members", "uploaded", "signers")}
        for prefix, keys in needs.items():
            if state.startswith(prefix) and not all(k in st for k in keys):
                raise damaged(f"step {state!r} without its {', '.join(keys)}")
        if state.endswith("1") and not isinstance(st.get("kept"), list):
            raise damaged("step 1 without its kept words")
        if state == "released" and not (isinstance(model, dict) and "model_json" in model):
            raise damaged("released without a model")
        if state == "failed" and not isinstance(st.get("reason"), str):
            raise damaged("failed without a reason")
        return st, model

    def _save(self, conn, **extra) -> None:
        raw = json.dumps(self.st)
        # the state row is updated in place, never deleted and inserted again: a process waiting on its lock
        # (FOR UPDATE) then reads the new row; a new row would leave it with none, and unlocked
        conn.execute(_Q.save_state, {"p_value": raw})
        if extra:
            conn.execute(t_state.delete().where(t_state.c.key.in_(list(extra))))
            conn.execute(t_state.insert(), [{"key": k, "value": json.dumps(v)} for k, v in extra.items()])
        self._st_raw = raw
        self._wake()

    def listen(self, wake) -> None:
        """Call ``wake()`` (from whichever thread changes the round) each time this process moves the round to another
        step, until :meth:`unlisten`: a long poll then answers at once rather than at its next look. (Another server
        process's change is seen at the next look, as before.)"""
        with self._waiters_lock:
            self._waiters.add(wake)

    def unlisten(self, wake) -> None:
        """Stop calling ``wake``."""
        with self._waiters_lock:
            self._waiters.discard(wake)

    def _wake(self) -> None:
        with self._waiters_lock:
            waiters = list(self._waiters)
        for wake in waiters:
            wake()

    # ------------------------------------------------------------ views
    def roster(self) -> dict:
        """``{id: {"c", "s", "b", "signature"}}`` (the registered keys, each signed by its member)."""
        if self._roster is not None:
            return self._roster
        self.fresh()
        with self.lock, self.engine.connect() as conn:     # not while a step closes (its rows uncommitted)
            roster = {r.contributor: {"c": r.c, "s": json.loads(r.s), "b": json.loads(r.b), "signature": r.signature}
                      for r in conn.execute(select(t_keys))}
        if self.st["state"] != "keys":      # closed: it never changes again
            self._roster = roster
        return roster

    def roster_json(self) -> bytes:
        """The closed roster as JSON, encoded once: every contributor's view carries it (N entries, N times)."""
        cached = self.__dict__.get("_roster_json")
        if cached is not None:
            return cached
        data = _encode(self.roster_view())
        if self._roster is not None:        # closed: it never changes again
            self._roster_json = data
        return data

    def graph(self) -> dict:
        """The round's neighbour graph (from the directory and the plan: fixed before anyone registers)."""
        return self._graph

    def view(self) -> dict:
        """``GET /v1/secure/round``: the step, and the sets and words the contributors check."""
        self.fresh()
        with self.lock:
            st = dict(self.st)
            doc = {"round_id": self.round_id, "state": st["state"], "reason": st.get("reason")}
            if st["state"] == "keys":
                with self.engine.connect() as conn:
                    doc["keys_received"] = conn.execute(select(func.count()).select_from(t_keys)).scalar()
                if self.registration_deadline is not None:      # a Unix time: the roster then closes as it stands
                    doc["registration_closes_at"] = self.registration_deadline
            elif st["state"].startswith("upload"):     # an admin closes the step once its survivors are in
                with self.engine.connect() as conn:
                    doc["uploads_received"] = conn.execute(select(t_sums.c.count).where(
                        t_sums.c.phase == int(st["state"][-1]))).scalar() or 0
            for k in ("members", "uploaded", "signers", "kept", "phase"):
                if k in st:
                    doc[k] = st[k]
            return doc

    def encoded_view(self) -> dict:
        """:meth:`view` as the HTTP answers carry it: its lists (members, uploads, signers: N ids each; the kept
        words) encoded as JSON once for each state the round passes through, not once for each of the N
        contributors' requests of a step."""
        with self.lock:
            view = self.view()
            memo = self.__dict__.setdefault("_encoded", {})
            if memo.get("_st") is not self.st:
                memo.clear()
                memo["_st"] = self.st
            for k in ("members", "uploaded", "signers", "kept"):
                if k in view:
                    if k not in memo:
                        memo[k] = _Encoded(_plain(view[k]))
                    view[k] = memo[k]
            return view

    def roster_view(self) -> dict:
        """``GET /v1/secure/roster``: the closed roster."""
        self.fresh()
        if self.st["state"] == "keys":
            raise ApiError(409, "not_open", "the roster is handed out once it has closed (every invited contributor"
                                            " registered, or the registration deadline passed).")
        return self.roster()

    # ------------------------------------------------------------ steps
    def _in(self, key: str) -> set:
        """``set(self.st[key])``, built once for each state the round passes through."""
        memo = self.__dict__.setdefault("_sets", {})
        if memo.get("_st") is not self.st:
            memo.clear()
            memo["_st"] = self.st
        if key not in memo:
            memo[key] = set(self.st.get(key) or ())
        return memo[key]

    def _uploads_message(self, phase: int) -> bytes:
        """The consistency message of ``phase`` over the server's set of uploads (made once per state)."""
        self._in("uploaded")
        memo = self.__dict__["_sets"]
        if ("msg", phase) not in memo:
            memo[("msg", phase)] = ss.consistency_message(self.round_id, phase, self.st["uploaded"])
        return memo[("msg", phase)]

    def _need(self, *states) -> None:
        if self.st["state"] not in states:
            raise ApiError(409, "round_closed" if self.st["state"] != "keys" else "not_open",
                           f"the round is at step {self.st['state']!r}"
                           + (f" ({self.st.get('reason')})" if self.st.get("reason") else "")
                           + f", not {' or '.join(repr(s) for s in states)}: nothing stored.")

    def _signed(self, contributor: str, signature, msg: bytes) -> None:
        check_signed(self.members, contributor, signature, msg)

    def post_keys(self, contributor: str, keys, signature) -> tuple[int, dict]:
        """A member registers its keys (signed); after the registration deadline the roster is closed first (a
        late registration is refused)."""
        self._signed(contributor, signature, ss.keys_message(self.round_id, contributor, keys)
                     if isinstance(keys, dict) and {"c", "s", "b"} <= set(keys) else b"")
        why = ss.check_keys(keys)
        if why is not None:
            raise ApiError(400, "bad_keys", why + ".")
        self.close_roster_if_due()
        with self._txn() as conn:
            old = conn.execute(_Q.keys_of, {"p_who": contributor}).first()
            if old is not None:
                if old.c == keys["c"] and json.loads(old.s) == keys["s"] and json.loads(old.b) == keys["b"]:
                    return 200, {"replayed": True, **self.view()}
                raise ApiError(409, "keys_changed", f"contributor {contributor!r} already registered other keys for"
                                                    " this round: one key set per invitation.")
            if self.st["state"] != "keys":
                raise late_registration(contributor, self.st["state"], self.st.get("reason"))
            mine = sorted({keys["c"], *keys["s"]})
            if len(mine) < 1 + len(keys["s"]) or conn.execute(_Q.used, {"p_keys": mine}).first() is not None:
                raise ApiError(409, "keys_reused", "a public key of this set was already registered by another"
                                                   " contributor: re-used keys are refused; draw fresh ones.")
            conn.execute(_Q.insert_keys, {"contributor": contributor, "c": keys["c"], "s": json.dumps(keys["s"]),
                                          "b": json.dumps(keys["b"]), "signature": signature, "at": time.time()})
            conn.execute(_Q.insert_used, [{"key": k} for k in mine])
            if conn.execute(_Q.n_keys).scalar() >= self.plan.n:
                self._close_roster(conn, "every invited contributor registered")
        return 201, {"replayed": False, "state": self.st["state"]}

    def _close_roster(self, conn, when: str) -> None:
        """Close the roster with those registered (``when``: why it closes now, for the failure's line): the round
        goes on to the shares with at least ``n - F`` of the ``n`` invited (each one who never registered is one of
        the F dropouts the plan tolerates: the noise is calibrated for ``n - F`` contributors, and every later step
        still needs that many), every one of them with at least the threshold of its neighbours among them; else it
        fails, nothing released."""
        ids = sorted(r[0] for r in conn.execute(select(t_keys.c.contributor)))
        least = self.plan.n - self.plan.dropouts
        short = self._short(ids)
        if len(ids) < least:
            self._fail(ParameterText("the roster closed ({when}) with {count} of the {n} invited contributors"
                                     " registered, fewer than {least} ({min_contributors} minus {dropout_tolerance}:"
                                     " each who never registers is one of the dropouts the plan tolerates): nothing"
                                     " released", "min_contributors", when=when, count=len(ids), n=self.plan.n,
                                     least=least).message(self.setting_names), conn)
        elif short is not None:
            self._fail(f"the roster closed ({when}) with contributor {short!r} holding fewer than {self.T} of its"
                       " neighbours among those registered: its shares could not be completed; nothing released",
                       conn)
        else:
            self.st = {"state": "shares"}
            self._save(conn, roster=len(ids))      # its size, checked against the keys on every start

    def close_roster_if_due(self) -> bool:
        """At or after the registration deadline (:attr:`registration_deadline`), close the roster as it stands
        (:meth:`_close_roster`), once, whichever server process gets there first; whether the round left the keys
        step now."""
        if self.registration_deadline is None or time.time() < self.registration_deadline:
            return False
        self.fresh()
        if self.st["state"] != "keys":
            return False
        with self._txn() as conn:
            if self.st["state"] != "keys":
                return False
            self._close_roster(conn, "at its registration deadline")
        return True

    def watch_deadline(self, stop: threading.Event | None = None) -> None:
        """Until the roster closes: wait for the registration deadline, then close it (:meth:`close_roster_if_due`;
        the server runs this on a thread of its own once started). Looks at the round at least once a second."""
        stop = stop or threading.Event()
        while self.registration_deadline is not None and not stop.is_set():
            try:
                if self.close_roster_if_due() or self.current_state() != "keys":
                    return
            except (DPTopicError, SQLAlchemyError) as e:     # a database that went away a moment: try again
                log.warning("closing the roster at its deadline: %s", e)
            left = self.registration_deadline - time.time()
            stop.wait(min(1.0, left) if left > 0 else 1.0)

    def post_shares(self, contributor: str, shares) -> tuple[int, dict]:
        """A registered member's encrypted shares, one for each of its neighbours."""
        self.fresh()
        if self.st["state"] == "keys":
            raise ApiError(409, "not_open", "the shares are sent once the roster has closed.")
        roster = self.roster()
        if contributor not in roster:
            raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not in this round's roster (it did"
                                                " not register before the roster closed).")
        mine = {v for v in self.graph()[contributor] if v in roster}
        if not isinstance(shares, dict) or set(shares) != mine or not all(
                isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9+/]{16,4000}={0,2}", v) for v in shares.values()):
            raise ApiError(400, "wrong_shape", "shares must be one base64 ciphertext for each of your neighbours in"
                                               " this round's graph that is in the roster, and none for anyone else.")
        body = json.dumps(shares, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        with self._txn() as conn:
            old = conn.execute(_Q.shares_sha, {"p_who": contributor}).first()
            if old is not None:
                if old.sha == sha:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already sent other shares: one"
                                                     " set per round.")
            self._need("shares")
            conn.execute(_Q.insert_shares, {"sender": contributor, "body": "", "sha": sha})
            conn.execute(_Q.insert_share_to, [{"receiver": v, "sender": contributor, "ct": ct}
                                              for v, ct in shares.items()])
            n = conn.execute(_Q.n_shares).scalar()
            if n >= len(roster):
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
        return 201, {"replayed": False}

    def shares_for(self, contributor: str, conn=None) -> dict:
        """The ciphertexts addressed to ``contributor`` (by the members of step 0: those who sent shares)."""
        if conn is None:
            self.fresh()
        if self.st["state"] in ("keys", "shares"):
            raise ApiError(409, "not_open", "the shares are handed out once the sharing step has closed.")
        if conn is not None:
            return {r.sender: r.ct for r in conn.execute(_Q.shares_for, {"p_who": contributor})}
        with self.engine.connect() as c:
            return {r.sender: r.ct for r in c.execute(_Q.shares_for, {"p_who": contributor})}

    def _fail(self, reason: str, conn=None) -> None:
        if conn is not None:
            self.st = {"state": "failed", "reason": reason}
            self._save(conn)
            return
        with self._txn() as c:
            if self.st["state"] in ("released", "failed"):
                return
            self.st = {"state": "failed", "reason": reason}
            self._save(c)

    def _short(self, ids) -> str | None:
        """A contributor of ``ids`` with fewer than the threshold of its neighbours among them, or None."""
        s = set(ids)
        graph = self.graph()
        return next((u for u in sorted(s) if sum(1 for w in graph[u] if w in s) < self.T), None)

    def _open_upload(self, conn, phase: int, members: list, **extra) -> None:
        least = self.plan.n - self.plan.dropouts
        short = self._short(members)
        if len(members) < least:
            self._fail(ParameterText("only {count} contributors took part in step {phase}, fewer than {least}"
                                     " ({min_contributors} minus {dropout_tolerance}): nothing released",
                                     "min_contributors", count=len(members), phase=phase, least=least
                                     ).message(self.setting_names), conn)
        elif short is not None:
            self._fail(f"contributor {short!r} has fewer than {self.T} of its neighbours among the members of step"
                       f" {phase}: its shares cannot be completed; nothing released", conn)
        else:
            self.st = {"state": f"upload{phase}", "phase": phase, "members": members, **extra}
            self._save(conn)

    def dim(self, phase: int) -> int:
        """Entries of an upload of ``phase``."""
        return self.plan.vocab_size + 1 if phase == 0 else ss.triangle_size(len(self.st["kept"]))

    def post_upload(self, phase: int, contributor: str, body: bytes, signature) -> tuple[int, dict]:
        """A member's masked upload of ``phase`` (signed); step 0 answers with the shares addressed to it."""
        self._signed(contributor, signature, ss.upload_message(self.round_id, phase, contributor, body))
        sha = hashlib.sha256(body).hexdigest()
        with self.lock:     # held until the running sum in memory follows the commit
            with self._txn() as conn:
                old = conn.execute(_Q.upload_sha, {"p_phase": phase, "p_who": contributor}).first()
                extra = {}
                if old is not None:
                    if old.sha == sha:
                        if phase == 0:
                            extra["shares"] = self.shares_for(contributor, conn)
                        return 200, {"replayed": True, **extra}
                    raise ApiError(409, "second_upload", f"contributor {contributor!r} already uploaded other bytes for"
                                                         f" step {phase}: one upload per contributor and step.")
                self._need(f"upload{phase}")
                if contributor not in self._in("members"):
                    raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not a member of step {phase}.")
                want = self.plan.upload_bytes(self.dim(phase))
                if len(body) != want:
                    raise ApiError(400, "wrong_shape", f"an upload of step {phase} is {self.dim(phase)} little-endian"
                                                       f" uint{self.plan.bits} ({want} bytes), not {len(body)} bytes.")
                conn.execute(_Q.insert_upload, {"phase": phase, "contributor": contributor, "sha": sha,
                                                "signature": signature, "at": time.time()})
                total, n = self._running(conn, phase)
                total = total + np.frombuffer(body, dtype=self.plan.dtype)      # modulo 2^bits: the ring wraps
                n += 1
                conn.execute(_Q.delete_sum, {"p_phase": phase})
                conn.execute(_Q.insert_sum, {"phase": phase, "data": total.tobytes(), "count": n})
                if phase == 0:
                    extra["shares"] = self.shares_for(contributor, conn)
                if n >= len(self.st["members"]):
                    self._close_upload(conn, phase)
                self._sums.pop(phase, None)     # until committed
            self._sums[phase] = (total, n)      # committed: the running sum in memory follows the database
        return 201, {"replayed": False, **extra}

    def _running(self, conn, phase: int) -> tuple[np.ndarray, int]:
        """``(running sum, uploads in it)`` of ``phase``: kept in memory, read from the database after a restart or when
        another server process has added to it (its count differs from the one in memory)."""
        if phase in self._sums and self.shared:
            count = conn.execute(select(t_sums.c.count).where(t_sums.c.phase == phase)).scalar()
            if (count or 0) != self._sums[phase][1]:
                del self._sums[phase]
        if phase not in self._sums:
            row = conn.execute(select(t_sums.c.data, t_sums.c.count).where(t_sums.c.phase == phase)).first()
            if row is None:
                self._sums[phase] = (np.zeros(self.dim(phase), dtype=self.plan.dtype), 0)
            else:
                total = np.frombuffer(row.data, dtype=self.plan.dtype)
                if len(total) != self.dim(phase):
                    raise DPTopicError(f"the database {safe_url(self.cfg.database)!r} holds a running sum of step"
                                       f" {phase} of {len(total)} entries, not {self.dim(phase)}: give a new database.")
                self._sums[phase] = (total, int(row.count))
        return self._sums[phase]

    def _close_upload(self, conn, phase: int) -> None:
        uploaded = set(r[0] for r in conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == phase)))
        # an upload whose maker has fewer than T neighbours among the uploads could not be unmasked (its neighbours
        # refuse, rightly), and it is in the running sum, which keeps no upload to take out: the round fails. Taking
        # it out would rarely help: on the ring its nearest uploading neighbour is then short too, and so on around
        # (docs/research/secure_sum.md). The plan's degree makes it rare under random dropouts (SecureSumPlan.degree:
        # the expected number of contributors left short of T neighbours is at most 1e-3)
        short = self._short(uploaded)
        least = self.plan.n - self.plan.dropouts
        if len(uploaded) < least:
            self._fail(ParameterText("only {count} uploads in step {phase}, fewer than {least} ({min_contributors}"
                                     " minus {dropout_tolerance}): nothing released", "min_contributors",
                                     count=len(uploaded), phase=phase, least=least).message(self.setting_names), conn)
        elif short is not None:
            self._fail(f"contributor {short!r} uploaded in step {phase} with fewer than {self.T} of its neighbours"
                       " among the uploads: its upload cannot be unmasked nor taken out of the running sum; nothing"
                       " released", conn)
        else:
            self.st = dict(self.st, state=f"consistency{phase}", uploaded=sorted(uploaded))
            self._save(conn)

    def post_consistency(self, phase: int, contributor: str, signature) -> tuple[int, dict]:
        """An uploader's signature over the set of uploads of ``phase``."""
        with self._txn() as conn:
            old = conn.execute(_Q.signature_of, {"p_phase": phase, "p_who": contributor}).first()
            if old is not None:
                if old.signature == signature:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already signed step {phase}.")
            self._need(f"consistency{phase}")
            if contributor not in self._in("uploaded"):
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not among the uploads of step"
                                                    f" {phase}.")
            self._signed(contributor, signature, self._uploads_message(phase))
            conn.execute(_Q.insert_signature, {"phase": phase, "contributor": contributor, "signature": signature})
            n = conn.execute(_Q.n_signatures, {"p_phase": phase}).scalar()
            if n >= len(self.st["uploaded"]):
                self._close_consistency(conn, phase)
        return 201, {"replayed": False}

    def _close_consistency(self, conn, phase: int) -> None:
        signers = sorted(r[0] for r in conn.execute(select(t_consistency.c.contributor)
                                                    .where(t_consistency.c.phase == phase)))
        least = self.plan.n - self.plan.dropouts
        graph, s = self.graph(), set(signers)
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        needed = uploaded | {v for v in members - uploaded if any(u in uploaded for u in graph[v])}
        short = next((u for u in sorted(needed) if sum(1 for w in graph[u] if w in s) < self.T), None)
        if len(signers) < least:
            self._fail(f"only {len(signers)} contributors signed the uploads of step {phase}, fewer than {least}:"
                       " nothing released", conn)
        elif short is not None:
            self._fail(f"contributor {short!r} has fewer than {self.T} signers among its neighbours in step {phase}:"
                       " its seeds cannot be unmasked; nothing released", conn)
        else:
            self.st = dict(self.st, state=f"unmask{phase}", signers=signers)
            self._save(conn)
            self._need_counts(conn, phase)

    def signatures(self, phase: int) -> dict:
        """``GET /v1/secure/signatures/{phase}``: every stored consistency signature of ``phase`` (public once the step
        has closed)."""
        self.fresh()
        if STATES.index(self.st["state"]) <= STATES.index(f"consistency{phase}") and self.st["state"] != "failed":
            raise ApiError(409, "not_open", f"the signatures of step {phase} are handed out once its consistency step"
                                            " has closed.")
        with self.engine.connect() as conn:
            return {r.contributor: r.signature for r in conn.execute(
                select(t_consistency.c.contributor, t_consistency.c.signature).where(t_consistency.c.phase == phase))}

    def close(self) -> dict:
        """The admin's close of the step under way (the shares, an upload or a consistency step)."""
        with self._txn() as conn:
            state = self.st["state"]
            if state == "shares":
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
            elif state.startswith("upload"):
                self._close_upload(conn, int(state[-1]))
            elif state.startswith("consistency"):
                self._close_consistency(conn, int(state[-1]))
            elif state == "keys":
                self._close_roster(conn, "by the admin")
            else:
                raise ApiError(409, "round_closed", f"the round is at step {state!r}: nothing to close.")
        return self.view()

    def _check_answers(self, phase: int, contributor: str, answers) -> None:
        """One contributor's answers checked on arrival: each a well-formed share of a neighbour, of the secret its
        status calls for (refused alone, the round goes on)."""
        if not isinstance(answers, dict):
            raise ApiError(400, "wrong_shape", "answers must map each sender to {'kind': 'b'|'s', 'share': hex}.")
        graph = self.graph()
        members, uploaded = self._in("members"), self._in("uploaded")
        for sender, a in answers.items():
            if sender not in members or contributor not in graph.get(sender, ()):
                raise ApiError(400, "wrong_shape", f"an answer names {str(sender)[:40]!r}, who is not a neighbour of"
                                                   f" {contributor!r} among the members of step {phase}.")
            kind = "b" if sender in uploaded else "s"
            if not isinstance(a, dict) or a.get("kind") != kind or not ss.check_share(a.get("share")):
                raise ApiError(400, "wrong_shape", f"the answer for {str(sender)[:40]!r} must be {{'kind': {kind!r},"
                                                   f" 'share': {ss.SHARE_HEX} hex digits}} (a Shamir share).")

    def post_unmask(self, phase: int, contributor: str, answers, signature) -> tuple[int, dict]:
        """A signer's answers for the unmasking of ``phase`` (signed, checked on arrival)."""
        body = json.dumps(answers, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        start = False
        with self._txn() as conn:
            old = conn.execute(_Q.unmask_sha, {"p_phase": phase, "p_who": contributor}).first()
            if old is not None:
                if old.sha == sha:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already answered step {phase}.")
            self._need(f"unmask{phase}")
            if contributor not in self._in("signers"):
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} did not sign the uploads of step"
                                                    f" {phase}.")
            self._signed(contributor, signature, ss.answers_message(self.round_id, phase, contributor, answers)
                         if isinstance(answers, dict) else b"")
            self._check_answers(phase, contributor, answers)
            counts = self._need_counts(conn, phase)     # the counters, made (if need be) before this answer is stored
            conn.execute(_Q.insert_unmask, {"phase": phase, "contributor": contributor, "body": body, "sha": sha})
            start = self._count_answers(conn, phase, contributor, answers, counts)
        if start:
            self._start_unmask(phase)
        return 201, {"replayed": False}

    def _responses(self, phase: int) -> dict:
        with self.engine.connect() as conn:
            return {r.contributor: json.loads(r.body) for r in
                    conn.execute(select(t_unmask.c.contributor, t_unmask.c.body).where(t_unmask.c.phase == phase))}

    def _needed(self, phase: int) -> dict:
        """The seeds the unmasking of ``phase`` needs: each uploader's self-mask seed (``"b"``) and the key of each
        member who did not upload but has an uploading neighbour (``"s"``)."""
        members, uploaded = self._in("members"), self._in("uploaded")
        memo = self.__dict__["_sets"]       # made once for each state (every answer of the step reads it)
        if ("needed", phase) not in memo:
            graph = self.graph()
            memo[("needed", phase)] = {u: "b" for u in uploaded} | {
                v: "s" for v in members - uploaded if any(u in uploaded for u in graph[v])}
        return memo[("needed", phase)]

    def _counted(self, phase: int, who: str, answers: dict) -> list:
        """The senders whose needed seed ``who``'s answers bring one share closer (a neighbour's, of the right kind)."""
        needed, graph = self._needed(phase), self.graph()
        return sorted(s for s, a in answers.items() if s in needed and isinstance(a, dict)
                      and a.get("kind") == needed[s] and who in graph[s])

    def _need_counts(self, conn, phase: int) -> tuple[int, int]:
        """``(seeds still short of their threshold, answers stored)`` of ``phase``, from their counters
        (:data:`t_counts`); made from the stored answers when the step has none yet (at its opening, or a round
        stored before they were kept)."""
        keys = [f"short{phase}", f"answered{phase}"]
        found = dict(conn.execute(_Q.counts, {"p_keys": keys}).all())
        if len(found) == 2:
            return found[keys[0]], found[keys[1]]
        rows = conn.execute(select(func.count()).select_from(t_need).where(t_need.c.phase == phase)).scalar()
        if not rows:
            have = dict.fromkeys(self._needed(phase), 0)
            for who, body in conn.execute(select(t_unmask.c.contributor, t_unmask.c.body)
                                          .where(t_unmask.c.phase == phase)):
                for sender in self._counted(phase, who, json.loads(body)):
                    have[sender] += 1
            if have:
                conn.execute(t_need.insert(), [{"phase": phase, "sender": u, "have": h} for u, h in have.items()])
        short = conn.execute(select(func.count()).select_from(t_need)
                             .where((t_need.c.phase == phase) & (t_need.c.have < self.T))).scalar()
        answered = conn.execute(select(func.count()).select_from(t_unmask).where(t_unmask.c.phase == phase)).scalar()
        conn.execute(t_counts.delete().where(t_counts.c.key.in_(keys)))
        conn.execute(t_counts.insert(), [{"key": keys[0], "value": short}, {"key": keys[1], "value": answered}])
        return short, answered

    def _count_answers(self, conn, phase: int, who: str, answers: dict, counts: tuple[int, int]) -> bool:
        """Count ``who``'s new answers in the transaction that stores them (the counters were made before its answer
        was stored: :meth:`post_unmask`); True when every needed seed now has its threshold of shares and no server
        process has started the unmasking yet (this one then starts it, marked in the database). A step whose every
        signer answered with still too few shares fails. It reads and writes the rows of ``who``'s senders and two
        counters, whatever the number of answers. ``counts``: the counters as :meth:`_need_counts` read them in this
        transaction, before ``who``'s answer was stored."""
        senders = self._counted(phase, who, answers)
        reached = 0
        if senders:
            conn.execute(_Q.one_more, {"p_phase": phase, "p_senders": senders})
            reached = conn.execute(_Q.reached, {"p_phase": phase, "p_senders": senders,
                                                "p_threshold": self.T}).scalar()
        short, answered = counts
        short, answered = short - reached, answered + 1
        conn.execute(_Q.set_count, [{"p_key": f"short{phase}", "p_value": short},
                                    {"p_key": f"answered{phase}", "p_value": answered}])
        if short:
            if answered >= len(self.st["signers"]):     # every signer answered and still too few: it cannot finish
                self._fail(f"too few shares to unmask step {phase}: nothing released", conn)
            return False
        mark = f"unmasking{phase}"
        if conn.execute(_Q.state_key, {"p_key": mark}).first() is not None:
            return False
        conn.execute(_Q.insert_state, {"key": mark, "value": json.dumps({"pid": os.getpid(), "at": time.time()})})
        return True

    def _start_unmask(self, phase: int) -> None:
        """Unmask ``phase`` off the request's thread (it may take a while), once in this process."""
        with self.lock:
            if self._unmasking == phase:
                return
            self._unmasking = phase
        threading.Thread(target=self._unmask, args=(phase,), name=f"secure-unmask-{phase}", daemon=True).start()

    def _unmask(self, phase: int) -> None:
        """Sum and unmask (the uploads and the answers it reads are those of a closed step: no lock needed), then
        move the round on under the lock."""
        try:
            self._unmask_step(phase)
        except Exception as e:      # noqa: BLE001 (any failure fails the round, in one line, and is logged)
            log.exception("unmasking step %s failed", phase)
            self._fail(f"unmasking step {phase} failed ({' '.join(str(e).split())[:200]}): nothing released")

    def _unmasked(self, phase: int) -> tuple[np.ndarray, set]:
        """Step ``phase``'s running sum with the masks removed (from the answers), and who uploaded to it; its
        timings recorded."""
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        roster, responses = self.roster(), self._responses(phase)
        t0 = time.perf_counter()
        with self.engine.connect() as conn:
            total, n = self._running(conn, phase)
        if n != len(uploaded):
            raise DPTopicError(f"the running sum of step {phase} holds {n} uploads, not the {len(uploaded)} counted")
        t1 = time.perf_counter()
        total = ss.unmask_sum(total, roster, self.round_id, phase, self.graph(), self.T, members, uploaded, responses)
        self.timings[phase] = {"sum_s": t1 - t0, "unmask_s": time.perf_counter() - t1, "uploads": len(uploaded),
                               "dim": len(total), "pid": os.getpid()}
        return total, uploaded

    def _charge(self) -> bool:
        """The round charged to the dataset ledger (its settings' ``ledger``), once, before its first unmasking: to
        step 0's uploaders at the plan's bound (:func:`~dptopic.service.ledger.charge_secure_round`). False, with the
        round failed and nothing revealed, when the ledger refuses it. (A process killed between the debit and its
        mark charges the round again when it resumes: the ledger then holds it twice, never not at all.)"""
        if not self.cfg.ledger:
            return True
        with self.engine.connect() as conn:
            if conn.execute(select(t_state.c.key).where(t_state.c.key == "ledger_charge")).first() is not None:
                return True
        try:
            release = charge_secure_round(self.cfg.ledger, self.cfg.ledger_dataset, self.plan,
                                          sorted(self.st["uploaded"]), self.cfg.directory)
        except DPTopicError as e:
            log.error("%s", e)
            self._fail(f"{' '.join(str(e).split())[:300]}: nothing revealed, nothing released")
            return False
        with self._txn() as conn:
            conn.execute(t_state.insert().values(key="ledger_charge", value=json.dumps({"release": release})))
        return True

    def _unmask_step(self, phase: int) -> None:
        if phase == 0 and not self._charge():      # spent before anything of the round is unmasked
            return
        dim = self.dim(phase)
        total, uploaded = self._unmasked(phase)
        # a wrap-around shows as an entry outside what the signal and the noise can reach
        limit = len(uploaded) * rounded_norms(self.plan.scale, dim)[0] + 2 ** (self.plan.bits - 2)
        if np.any(np.abs(total) > limit):
            self._fail(f"step {phase}'s sum wrapped around the modulus: nothing released")
            return
        doc = None
        if phase == 1:
            with self.engine.connect() as conn:
                s0 = json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == "sum0")).scalar())
            presence = np.frombuffer(base64.b64decode(s0["sum"]), dtype="<i8")
            doc = release_document(self.plan, self.cfg.vocabulary, self.cfg.n_topics, presence, total,
                                   (s0["shares"], len(uploaded)), self.round_id)
        with self._txn() as conn:
            if self.st["state"] != f"unmask{phase}":
                return
            conn.execute(t_state.delete().where(t_state.c.key.in_([f"sum{phase}", f"timings{phase}"])))
            conn.execute(t_state.insert().values(key=f"timings{phase}", value=json.dumps(self.timings[phase])))
            conn.execute(t_state.insert().values(key=f"sum{phase}", value=json.dumps(
                {"sum": base64.b64encode(total.astype("<i8").tobytes()).decode(), "shares": len(uploaded)})))
            if phase == 0:
                from ...models.secure_sum import released_words  # start-up: models.secure_sum loads scikit-learn

                kept = released_words(self.plan, total, len(uploaded), self.cfg.n_topics)[0]
                self._open_upload(conn, 1, sorted(uploaded), kept=[int(k) for k in kept])
            else:
                self.st = dict(self.st, state="released")
                self._save(conn, model=doc)
                self._model_doc = doc

    def timings_view(self) -> dict:
        """``GET /v1/secure/timings``: each unmasked step's sum and unmasking seconds (by whichever server process
        unmasked it)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t_state.c.key, t_state.c.value).where(t_state.c.key.in_(["timings0",
                                                                                                "timings1"])))
            return {**{k[-1]: json.loads(v) for k, v in rows}, **{str(k): v for k, v in self.timings.items()}}

    def model_doc(self) -> dict:
        """``GET /v1/model``: the released model."""
        if self._model_doc is None:
            self.fresh()
        if self._model_doc is None:
            raise ApiError(404, "no_model", f"the round has released no model (it is at step {self.st['state']!r}"
                                            + (f": {self.st['reason']}" if self.st.get("reason") else "") + ").")
        return self._model_doc


def release_document(plan, vocabulary, n_topics: int, presence, cooc, shares: tuple[int, int], round_id: str) -> dict:
    """The model a round releases, as ``GET /v1/model`` serves it: built from the two unmasked sums, the public
    settings and the round's id alone (post-processing: the same sums give the same bytes, whatever the corpus)."""
    from ...models.secure_sum import secure_sum_topics  # start-up: models.secure_sum loads scikit-learn

    model = secure_sum_topics(plan, vocabulary, n_topics, presence, cooc, shares, {"round_id": round_id})
    with tempfile.TemporaryDirectory() as d:
        model.save(f"{d}/m")
        load_bundle(f"{d}/m")       # it loads back
        arrays = {p.stem: base64.b64encode(p.read_bytes()).decode() for p in sorted(Path(f"{d}/m").glob("*.npy"))}
        meta_json = Path(f"{d}/m/model.json").read_text()
    return {"api_version": "v1", "model_id": 1, "model_version": 1, "model_json": meta_json, "arrays": arrays}


def late_registration(contributor: str, state: str, reason: str | None) -> ApiError:
    """The refusal of a registration that comes once the roster has closed (409 ``round_closed``)."""
    return ApiError(409, "round_closed", f"the round's roster has closed without contributor {contributor!r} (the round"
                                         f" is at step {state!r}" + (f": {reason}" if reason else "") + "): it"
                                         " registered too late; nothing stored.")


def roster_line(plan, registration_deadline: float | None, admin: bool) -> str:
    """What a round's server says at start of its roster and of the invited contributors who never register
    (no-shows): when the roster closes, and that each no-show is one of the plan's F dropouts.
    ``registration_deadline``: a Unix time, or None; ``admin``: whether the server has an admin token (which can
    close the roster)."""
    n, F = int(plan.n), int(plan.dropouts)
    early = []
    if registration_deadline is not None:
        early.append("at its registration deadline ("
                     + time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(registration_deadline)) + ")")
    if admin:
        early.append("when the admin closes it (POST /v1/admin/secure/close)")
    line = f"roster: it closes once all {n} invited contributors have registered"
    if early:
        line += (f"; {' or '.join(early)}, with those registered so far: at least {n - F} (N - F), each with the"
                 " threshold of its neighbours among them, or the round fails")
    return (line + f"; a contributor who never registers is one of the {F} dropouts the plan tolerates"
            + ("" if early else ": without a registration deadline or an admin token, one no-show holds the round at"
               " its keys step") + ".")


def check_signed(members: dict, contributor: str, signature, msg: bytes) -> None:
    """Refuse (403) a message from ``contributor`` unless the operator's directory ``members`` lists it and
    ``signature`` is its invitation key's over ``msg``: the one check of both round servers (this one and the
    committee mode's)."""
    if contributor not in members:
        raise ApiError(403, "not_enrolled", f"contributor {str(contributor)[:40]!r} holds no invitation to this round"
                                            " (it is not in the operator's directory).")
    if not ss.verify(bytes.fromhex(members[contributor]), signature, msg):
        raise ApiError(403, "bad_signature", f"the request is not signed by {contributor!r}'s invitation key (or"
                                             " not over this step's message): refused.")


# ----------------------------------------------------------------------------- HTTP
def _round(request: Request) -> SecureRound:
    return request.app.state.round


def _contributor(value) -> str:
    if not isinstance(value, str) or not CONTRIBUTOR.fullmatch(value):
        raise ApiError(400, "bad_contributor", "the contributor id must be 1-64 of A-Z a-z 0-9 _ -.")
    return value


def parse_json(data: bytes, what: str = "the body") -> object:
    """A JSON message of a round's server (a body, an upload's header) read as input from outside: UTF-8, its
    nesting bounded before it is parsed (:func:`~dptopic._io.load_json`: 3,000 nested brackets cannot exhaust the
    stack); a 400 ``bad_json`` in one line otherwise, whichever route reads it."""
    try:
        return load_json(bytes(data).decode("utf-8"), what)
    except UnicodeDecodeError:
        raise ApiError(400, "bad_json", f"{what} is not UTF-8: send UTF-8 JSON.") from None
    except DPTopicError as e:       # nested too deeply, or a number too long to read
        raise ApiError(400, "bad_json", " ".join(str(e).split())) from None
    except ValueError:
        raise ApiError(400, "bad_json", f"{what} is not JSON.") from None


async def _json(request: Request, limit: int) -> dict:
    body = await request.body()
    if len(body) > limit:
        raise ApiError(413, "too_large", f"the body is over {limit} bytes.")
    doc = parse_json(body)
    if not isinstance(doc, dict):
        raise ApiError(400, "bad_json", "the body must be a JSON object.")
    return doc


def _phase(request: Request) -> int:
    p = request.path_params["phase"]
    if p not in ("0", "1"):
        raise ApiError(404, "no_such_step", "steps are 0 (presence) and 1 (co-occurrence).")
    return int(p)


async def get_config(request: Request):
    r = _round(request)
    cfg = r.cfg
    return JSONResponse({"api_version": "v1", "report_kind": "secure-sum", "unit": "user",
                         "vocabulary": cfg.vocabulary.words, "vocab_size": len(cfg.vocabulary),
                         "n_topics": cfg.n_topics, "round_id": r.round_id, "secure_sum": cfg.plan.to_dict(),
                         "epsilon": cfg.plan.epsilon, "delta": cfg.plan.delta, "fed": None,
                         "directory": cfg.directory, "max_body_bytes": cfg.max_body_bytes})


class _Encoded(bytes):
    """JSON already encoded (the closed roster), put into a response as it is."""


def _encode(doc) -> bytes:
    """``doc`` as JSONResponse encodes it, with each :class:`_Encoded` value spliced in as it is (the value of a
    top-level key, or of a key of a dict nested at the top level)."""
    if isinstance(doc, _Encoded):
        return bytes(doc)
    if isinstance(doc, dict) and any(isinstance(v, (_Encoded, dict)) for v in doc.values()):
        parts = [json.dumps(k, ensure_ascii=False) + ":" for k in doc]
        return b"{" + b",".join(k.encode() + (_encode(v) if isinstance(v, (_Encoded, dict)) else _plain(v))
                                 for k, v in zip(parts, doc.values())) + b"}"
    return _plain(doc)


def _plain(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


def _respond(doc: dict, status: int = 200) -> Response:
    return Response(_encode(doc), status, media_type="application/json")


LONG_POLL_S = 20.0
"""The longest ``GET /v1/secure/round?wait=STEP`` holds its request (below a client's 30 s read timeout)."""
LOOK_EVERY_S = 0.25
"""The longest a long poll waits between two looks at the round's step (its pauses grow from 20 ms to this); a step
that this process moves on wakes it at once (:meth:`SecureRound.listen`)."""
FIRST_LOOK_S = 0.02
"""A long poll's first pause between two looks (each next one 1.5 times longer, up to :data:`LOOK_EVERY_S`)."""
STATE_LOOK_S = 0.1
"""On PostgreSQL, the least time between two reads of a round's step from the database by one server process's long
polls (all its waiting contributors share each read)."""


def wait_timeout(q, states) -> float:
    """The ``timeout`` of a ``?wait=STEP[&timeout=S]`` query ``q`` (at most an hour; :data:`LONG_POLL_S` unless given),
    once STEP is checked to be one of the round's ``states``; a 400 in one line otherwise. Both round servers read
    their long polls with it."""
    if q.get("wait") not in states:
        raise ApiError(400, "no_such_step", f"wait names no step of the round ({', '.join(states)}).")
    try:
        timeout = float(q.get("timeout", LONG_POLL_S))
    except ValueError:
        timeout = -1.0
    if not 0 <= timeout <= 3600:
        raise ApiError(400, "bad_timeout", "timeout is a number of seconds, 0 or more.")
    return timeout


def _reached(state: str, step: str) -> bool:
    return state == "failed" or STATES.index(state) >= STATES.index(step)


async def _await_view(request: Request, contributor: str | None = None) -> dict:
    """The round's view for ``?wait=STEP[&timeout=S][&include=roster,signatures]``: once the round has reached STEP
    (or failed), or after ``timeout`` seconds (at most :data:`LONG_POLL_S`) as it is; with ``include``, what
    ``contributor`` (the query's ``contributor``, or the one that posted) needs next: the closed roster, and at an
    unmasking the consistency signatures of its neighbours."""
    r = _round(request)
    q = request.query_params
    step = q.get("wait")
    include = set(filter(None, q.get("include", "").split(",")))
    if include - {"roster", "signatures"}:
        raise ApiError(400, "bad_include", "include takes roster and signatures, comma-separated.")
    who = _contributor(q.get("contributor", contributor)) if include else None
    if step is not None:
        timeout = wait_timeout(q, STATES)
        deadline = time.monotonic() + min(timeout, LONG_POLL_S)
        pause = FIRST_LOOK_S    # the state is looked at in memory; at most 4 times a second per waiting contributor
        loop, changed = asyncio.get_running_loop(), asyncio.Event()

        def wake():         # from the thread that moved the round on: one wake-up per waiter and change of step
            try:
                loop.call_soon_threadsafe(changed.set)
            except RuntimeError:        # the loop has closed (the server is stopping)
                pass
        r.listen(wake)
        try:
            while not _reached(r.current_state(), step) and time.monotonic() < deadline:
                try:
                    await asyncio.wait_for(changed.wait(), min(pause, max(0.0, deadline - time.monotonic())))
                except asyncio.TimeoutError:
                    pass
                changed.clear()
                pause = min(LOOK_EVERY_S, pause * 1.5)
        finally:
            r.unlisten(wake)
    view = await run_in_threadpool(r.encoded_view)
    if include:
        state = view["state"]
        if "roster" in include and state not in ("keys", "failed"):
            view["roster"] = _Encoded(await run_in_threadpool(r.roster_json))
        if "signatures" in include and state.startswith("unmask"):
            phase = int(state[-1])
            mine = set(r.graph().get(who, ()))
            view["signatures"] = {k: v for k, v in (await run_in_threadpool(r.signatures, phase)).items()
                                  if k in mine}
    return view


async def get_round(request: Request):
    """``GET /v1/secure/round``: the round's view. Long polling: ``?wait=STEP`` answers once the round has reached
    STEP (or failed), or after ``timeout`` seconds (at most :data:`LONG_POLL_S`) with the view as it is. With
    ``contributor=ID`` the view also carries what that contributor needs next, sparing it a request: the closed
    roster (``include=roster``), and at an unmasking the consistency signatures of its neighbours
    (``include=signatures``)."""
    return _respond(await _await_view(request))


async def _answer(request: Request, contributor: str, status: int, out: dict) -> Response:
    """A message's acknowledgement; with ``?wait=STEP`` (post-and-wait), once stored, it waits as ``GET
    /v1/secure/round?wait=STEP`` does and carries that view as ``view`` (with ``include``'s parts for the poster):
    one request sends a step's message and brings the next step's data."""
    if "wait" in request.query_params:
        out = {**out, "view": await _await_view(request, contributor)}
    return _respond(out, status)


async def _store_or_late(request: Request, phase: int, step: str, store, *args) -> tuple[int, dict]:
    """Store a consistency signature or an unmasking answer; a post-and-wait one that comes after its step closed
    (the others' sufficed: the round has moved on) is acknowledged as ``late`` (nothing stored) rather than refused,
    so that its view still comes back in the same request."""
    r = _round(request)
    try:
        return await run_in_threadpool(store, phase, *args)
    except ApiError as e:
        state = r.current_state()       # another server process may have moved the round on
        moved_on = state != "failed" and STATES.index(state) > STATES.index(f"{step}{phase}")
        if e.code != "round_closed" or "wait" not in request.query_params or not moved_on:
            raise
        return 200, {"replayed": False, "late": True}


async def get_roster(request: Request):
    return Response(await run_in_threadpool(_round(request).roster_json), media_type="application/json")


async def post_keys(request: Request):
    doc = await _json(request, 8192)
    who = _contributor(doc.get("contributor"))
    status, out = await run_in_threadpool(_round(request).post_keys, who, doc.get("keys"), doc.get("signature"))
    return await _answer(request, who, status, out)


async def post_shares(request: Request):
    doc = await _json(request, 4 * 1024 * 1024)
    who = _contributor(doc.get("contributor"))
    status, out = await run_in_threadpool(_round(request).post_shares, who, doc.get("shares"))
    return await _answer(request, who, status, out)


async def get_shares(request: Request):
    who = _contributor(request.query_params.get("contributor"))
    return JSONResponse(await run_in_threadpool(_round(request).shares_for, who))


async def post_upload(request: Request):
    r = _round(request)
    phase = _phase(request)
    who = _contributor(request.headers.get("dptopic-contributor"))
    body = await request.body()
    if len(body) > r.cfg.max_body_bytes:
        raise ApiError(413, "too_large", _in_names(request, "the upload is over {max_body_bytes=}.", "max_body_bytes",
                                                   r.cfg.max_body_bytes))
    status, out = await run_in_threadpool(r.post_upload, phase, who, body, request.headers.get("dptopic-signature"))
    return await _answer(request, who, status, out)


async def post_consistency(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4096)
    who = _contributor(doc.get("contributor"))
    status, out = await _store_or_late(request, phase, "consistency", _round(request).post_consistency, who,
                                       doc.get("signature"))
    return await _answer(request, who, status, out)


async def get_signatures(request: Request):
    phase = _phase(request)
    return JSONResponse(await run_in_threadpool(_round(request).signatures, phase))


async def post_unmask(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4 * 1024 * 1024)
    who = _contributor(doc.get("contributor"))
    status, out = await _store_or_late(request, phase, "unmask", _round(request).post_unmask, who,
                                       doc.get("answers"), doc.get("signature"))
    return await _answer(request, who, status, out)


async def admin_close(request: Request):
    r = _round(request)
    token = r.cfg.admin_token
    auth = request.headers.get("authorization", "")
    if token is None:
        raise ApiError(403, "admin_disabled", _in_names(
            request, "admin endpoints are disabled: start the server with an {admin_token}.", "admin_token",
            flag_template="admin endpoints are disabled: start the server with {admin_token}."))
    if not auth.startswith("Bearer ") or not hmac.compare_digest(auth[7:].strip().encode(), token.encode()):
        raise ApiError(403, "wrong_token", _in_names(
            request, "send 'Authorization: Bearer TOKEN' (the server's {admin_token}).", "admin_token",
            flag_template="send 'Authorization: Bearer TOKEN' (the token from {admin_token})."))
    return JSONResponse(await run_in_threadpool(r.close))


async def get_model(request: Request):
    return JSONResponse(_round(request).model_doc())


def process_usage() -> dict:
    """This server process's own CPU seconds and peak resident memory since it started."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return {"pid": os.getpid(), "cpu_s": u.ru_utime + u.ru_stime, "peak_rss_bytes": u.ru_maxrss * 1024}


async def get_timings(request: Request):
    timings = await run_in_threadpool(_round(request).timings_view)
    return JSONResponse({**timings, "process": process_usage()})


def _in_names(request: Request, template: str, parameter: str, value=MISSING, **kw) -> str:
    """An answer that names a setting of the server (a :class:`SecureSumConfig` field or a setting of
    :func:`~dptopic.service.startup.secure_sum_settings`), in the names of whoever started it
    (:func:`create_secure_sum_app`'s ``setting_names``: ``dptopic serve``'s flags)."""
    return ParameterText(template, parameter, value, **kw).message(getattr(request.app.state, "setting_names", None))


async def _api_error(request: Request, exc: ApiError):
    return JSONResponse({"error": {"code": exc.code, "message": " ".join(exc.message.split())}}, exc.status)


async def _dptopic_error(request: Request, exc: DPTopicError):
    return JSONResponse({"error": {"code": "refused", "message": " ".join(str(exc).split())}}, 400)


async def _http_error(request: Request, exc: HTTPException):
    """Starlette's own answers (no such route, a method the route does not take) in the API's JSON error shape."""
    code, msg = unrouted(request.method, request.url.path, exc.status_code, exc.headers, "docs/secure_sum.md")
    return JSONResponse({"error": {"code": code, "message": msg}}, exc.status_code, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception):
    log.exception("internal error")
    return JSONResponse({"error": {"code": "internal_error", "message": f"internal error ({type(exc).__name__}); see"
                                                                          " the server log."}}, 500)


ERROR_HANDLERS = {ApiError: _api_error, DPTopicError: _dptopic_error, HTTPException: _http_error,
                  Exception: _internal_error}
"""The exception handlers of every round's server (this one, the committee mode's, a round in cohorts'): each
refusal, an unknown route or method and an internal error alike answered in the API's JSON error shape
(``{"error": {"code", "message"}}``)."""


def preload_release_code() -> None:
    """Import the code that reads the unmasked sums (:mod:`dptopic.models.secure_sum`, which loads scikit-learn and
    SciPy: about 1.4 s of CPU here), so that the round does not wait for it between step 0's unmasking and step 1's
    opening, when every contributor is waiting (docs/research/secure_sum_cpu.md). Run on a thread of its own once the
    server has started: the server answers at once, as before."""
    from ...models import secure_sum  # noqa: F401 - start-up: it loads scikit-learn (here, off the start)


def create_secure_sum_app(cfg: SecureSumConfig, setting_names=None, freeze_gc: bool = True,
                          round_class=None, preload: bool = True) -> Starlette:
    """The ASGI app of one secure-sum round (its database opened and checked at once). ``setting_names``: how
    whoever starts the server names its settings (``dptopic serve`` by its flags), for the answers and the round's
    failure reasons that name one (as :func:`dptopic.service.create_app`'s); by default the :class:`SecureSumConfig`
    fields and :func:`~dptopic.service.startup.secure_sum_settings` parameters. ``freeze_gc``: once the server has
    started, every object alive (imports, the round's directory and neighbour graph) is moved out of the cyclic
    collector's full scans (:func:`gc.freeze`, as :func:`dptopic.service.create_app` does). ``round_class``: the
    round's class (default :class:`SecureRound`; a cohort's, :mod:`dptopic.service.secure_sum.cohort_app`). ``preload``:
    the code that reads the unmasked sums is imported on a thread of its own once the server has started
    (:func:`preload_release_code`), not in the middle of the round."""
    rnd = (round_class or SecureRound)(cfg)
    rnd.setting_names = dict(setting_names or {})

    def started() -> None:
        if preload:
            threading.Thread(target=preload_release_code, name="secure-preload", daemon=True).start()
        if rnd.registration_deadline is not None:       # the roster closes at its deadline, whoever registers
            threading.Thread(target=rnd.watch_deadline, name="secure-deadline", daemon=True).start()

    lifespan = frozen_lifespan(freeze_gc=freeze_gc, started=started)

    routes = [Route("/v1/config", get_config, methods=["GET"]),
              Route("/v1/secure/round", get_round, methods=["GET"]),
              Route("/v1/secure/roster", get_roster, methods=["GET"]),
              Route("/v1/secure/keys", post_keys, methods=["POST"]),
              Route("/v1/secure/shares", post_shares, methods=["POST"]),
              Route("/v1/secure/shares", get_shares, methods=["GET"]),
              Route("/v1/secure/upload/{phase}", post_upload, methods=["POST"]),
              Route("/v1/secure/consistency/{phase}", post_consistency, methods=["POST"]),
              Route("/v1/secure/signatures/{phase}", get_signatures, methods=["GET"]),
              Route("/v1/secure/unmask/{phase}", post_unmask, methods=["POST"]),
              Route("/v1/secure/timings", get_timings, methods=["GET"]),
              Route("/v1/admin/secure/close", admin_close, methods=["POST"]),
              Route("/v1/model", get_model, methods=["GET"])]
    app = Starlette(routes=routes, exception_handlers=dict(ERROR_HANDLERS), lifespan=lifespan)
    app.state.round = rnd
    app.state.setting_names = rnd.setting_names
    return app
