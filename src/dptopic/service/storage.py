"""Durable storage of the service, through SQLAlchemy Core (SQLite in WAL mode, or PostgreSQL).

The schema is created and upgraded by the service itself: ``dptopic_schema`` records every
migration applied (version, description, time); on start the service applies the missing ones,
each in its own transaction, and refuses a database written by a newer dptopic.

Tables (migration 1 unless noted)
---------------------------------
``service_settings``  what the stored reports were made with (vocabulary fingerprint, V, f, format).
``submissions``       one row per accepted upload: idempotency key (unique), SHA-256 of the body,
                      contributor pseudonym, number of reports.
``reports``           one row per randomized report (its packed bits), ids increasing in commit order.
``models``            OLP-LDA models: the active one and retired ones, each with ``last_report_id``
                      (the trainer's cursor), ``version`` (optimistic concurrency), ``model.json``.
``model_arrays``      the model's ``.npy`` arrays (bytes; read back with ``allow_pickle=False``).
``train_batches``     one row per consumed mini-batch (report id range, trained or skipped, why).
``fed_rounds``, ``fed_updates`` (migration 2)  FedLDA rounds and the clients' perturbed updates.
``ix_submissions_body_sha256`` (migration 3)  a (non-unique) index of ``submissions.body_sha256``: an upload whose
                      body carries an ``upload_nonce`` and was already stored under another key is refused
                      (:meth:`Storage.store`).

Exactly-once training: a mini-batch is the reports with ``last_report_id < id <= new cursor``;
the trainer writes the new model state, the new cursor and the batch row in ONE transaction,
guarded by ``version``, so a crash at any point either commits all three or none. Report ids
must become visible in increasing order for the cursor to be safe: inserts are serialized (one
writer thread per process, plus ``BEGIN IMMEDIATE`` on SQLite and a transaction-scoped advisory
lock on PostgreSQL across processes).

Time limits (PostgreSQL): every transaction and read of a request must end within ``timeout`` seconds
(``ServiceConfig.database_timeout``, :data:`DEFAULT_TIMEOUT`), or it is refused with :class:`StorageTimeout` (the
request gets 503). The server enforces it per statement (``statement_timeout``, ``lock_timeout``); this process
enforces it too, for a server that stopped answering at all (a stopped postmaster, a half-open connection: the
kernel still acknowledges the packets, so no TCP timeout fires and no server-side limit runs): a watchdog shuts the
connection's socket down at the deadline (:class:`_Watchdog`). The trainer's commit, a rotation, a FedLDA round's
close (which aggregates) and the model's arrays get ``long_timeout``; the migrations have no limit.
"""
from __future__ import annotations

import json
import math
import os
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    ForeignKey,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError, IntegrityError, SQLAlchemyError

from ..errors import DPTopicError, ParameterError

ID = BigInteger().with_variant(Integer, "sqlite")  # SQLite autoincrements INTEGER PRIMARY KEY only
_PG_INSERT_LOCK = 0x6470746F  # advisory lock key serializing report inserts on PostgreSQL ("dpto")

metadata = MetaData()

schema_table = Table(
    "dptopic_schema", metadata,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("description", String(200), nullable=False),
    Column("applied_at", Float, nullable=False))

settings = Table(
    "service_settings", metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False))

submissions = Table(
    "submissions", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("idempotency_key", String(128), nullable=False, unique=True),
    Column("body_sha256", String(64), nullable=False),
    Column("contributor", String(128), nullable=True, index=True),
    Column("n_reports", Integer, nullable=False),
    Column("received_at", Float, nullable=False))

reports = Table(
    "reports", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("submission_id", ID, ForeignKey("submissions.id"), nullable=False, index=True),
    Column("packed", LargeBinary, nullable=False))

models = Table(
    "models", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("status", String(16), nullable=False),  # "active" | "retired"
    Column("version", Integer, nullable=False),
    Column("first_report_id", BigInteger, nullable=False),  # the model consumes reports with id > this
    Column("last_report_id", BigInteger, nullable=False),
    Column("n_reports_used", BigInteger, nullable=False),
    Column("n_batches", Integer, nullable=False),
    Column("meta_json", Text, nullable=True),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("retired_at", Float, nullable=True),
    Column("note", Text, nullable=True))

model_arrays = Table(
    "model_arrays", metadata,
    Column("model_id", ID, ForeignKey("models.id"), primary_key=True),
    Column("name", String(64), primary_key=True),
    Column("data", LargeBinary, nullable=False))

train_batches = Table(
    "train_batches", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("model_id", ID, ForeignKey("models.id"), nullable=False, index=True),
    Column("model_version", Integer, nullable=False),
    Column("first_report_id", BigInteger, nullable=False),
    Column("last_report_id", BigInteger, nullable=False),
    Column("n_reports", Integer, nullable=False),
    Column("status", String(16), nullable=False),  # "trained" | "skipped"
    Column("note", Text, nullable=True),
    Column("seconds", Float, nullable=False),
    Column("created_at", Float, nullable=False))

fed_rounds = Table(
    "fed_rounds", metadata,
    Column("round", Integer, primary_key=True, autoincrement=False),
    Column("status", String(16), nullable=False),  # "open" | "closed"
    Column("message", LargeBinary, nullable=False),  # the published global model message
    Column("n_updates", Integer, nullable=False),
    Column("opened_at", Float, nullable=False),
    Column("closed_at", Float, nullable=True),
    Column("state_json", Text, nullable=True),
    Column("state", LargeBinary, nullable=True))

fed_updates = Table(
    "fed_updates", metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("round", Integer, ForeignKey("fed_rounds.round"), nullable=False, index=True),
    Column("client", String(128), nullable=False),
    Column("idempotency_key", String(128), nullable=False, unique=True),
    Column("body_sha256", String(64), nullable=False),
    Column("message", LargeBinary, nullable=False),
    Column("received_at", Float, nullable=False),
    UniqueConstraint("round", "client", name="uq_fed_update_round_client"))


def _create(*tables):
    def run(conn):
        for t in tables:
            t.create(conn, checkfirst=True)
    return run


# Each migration: (version, description, function(connection)). Append only; never edit a released one.
MIGRATIONS = [
    (1, "reports, submissions, models, model arrays, training batches",
     _create(settings, submissions, reports, models, model_arrays, train_batches)),
    (2, "FedLDA rounds and updates", _create(fed_rounds, fed_updates)),
    # not unique: a database that stored one body twice (before this check existed) must still open
    (3, "index of submissions by body SHA-256 (byte-identical uploads under new keys are refused)",
     lambda conn: conn.execute(text("CREATE INDEX IF NOT EXISTS ix_submissions_body_sha256"
                                    " ON submissions (body_sha256)"))),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]


def _level(kind) -> str:
    """``word`` -> ``word-level``: how refusals name a report kind."""
    return f"{kind}-level" if kind in ("word", "document") else f"{kind!r}"


class StorageError(DPTopicError):
    """The database refused or could not be reached."""


def refuse_nul(**texts) -> None:
    """Refuse (one line, :class:`DPTopicError`, not :class:`StorageError`: no retry can cure it) a text to be stored
    that holds a NUL character, before the database is touched: PostgreSQL's text refuses it (SQLite keeps it), so a
    refusal there would read as the database failing. ``texts``: what each is called in the message."""
    for name, value in texts.items():
        if isinstance(value, str) and "\0" in value:
            raise DPTopicError(f"the {name.replace('_', ' ')} holds a NUL character (\\u0000), which the service stores"
                               " in no text: remove it.")


class StorageTimeout(StorageError):
    """The database did not answer within the time limit (:data:`DEFAULT_TIMEOUT`, ``database_timeout``): it is
    stopped, overloaded, or the network to it is gone. Retryable: the transaction was not committed (unless the
    limit struck while its COMMIT was on the way, in which case a retry under the same Idempotency-Key is answered
    as a replay)."""


class StoragePermissionError(StorageError):
    """The database refused a statement for lack of privileges (PostgreSQL SQLSTATE 42501, a read-only transaction
    25006, a read-only SQLite file): a misconfiguration that retrying does not cure, unlike a lost connection."""


#: what the service does to each of its tables (PostgreSQL privileges): checked at start-up (:meth:`Storage.check_writable`)
TABLE_PRIVILEGES = {
    "dptopic_schema": ("SELECT",),
    "service_settings": ("SELECT", "INSERT"),
    "submissions": ("SELECT", "INSERT"),
    "reports": ("SELECT", "INSERT"),
    "models": ("SELECT", "INSERT", "UPDATE"),
    "model_arrays": ("SELECT", "INSERT", "DELETE"),
    "train_batches": ("SELECT", "INSERT"),
    "fed_rounds": ("SELECT", "INSERT", "UPDATE"),
    "fed_updates": ("SELECT", "INSERT"),
}
# insufficient_privilege only: read_only_sql_transaction (25006) is what a PostgreSQL failover answers for a while,
# so it stays a retryable 503
_PG_PERMISSION_STATES = frozenset({"42501"})
_SQLITE_PERMISSION_CODES = frozenset({3, 8, 23})        # SQLITE_PERM, SQLITE_READONLY (and its extended codes), SQLITE_AUTH
# SQLITE_READONLY_RECOVERY and SQLITE_READONLY_CANTLOCK pass once another connection finishes: retryable
_SQLITE_TRANSIENT_READONLY = frozenset({8 | (1 << 8), 8 | (2 << 8)})


def is_permission_error(e: BaseException) -> bool:
    """Whether the driver's error behind ``e`` (a SQLAlchemy error) is a refusal for lack of privileges."""
    orig = getattr(e, "orig", None) or e
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    if state is not None:
        return str(state) in _PG_PERMISSION_STATES
    code = getattr(orig, "sqlite_errorcode", None)
    if isinstance(code, int):
        return (code & 0xFF) in _SQLITE_PERMISSION_CODES and code not in _SQLITE_TRANSIENT_READONLY
    return "readonly database" in str(orig)


# query_canceled (statement_timeout), lock_not_available (lock_timeout)
_PG_TIMEOUT_STATES = frozenset({"57014", "55P03"})


def is_timeout_error(e: BaseException) -> bool:
    """Whether the driver's error behind ``e`` is a time limit: this process's (:class:`_Watchdog`) or the server's
    ``statement_timeout`` / ``lock_timeout``."""
    orig = getattr(e, "orig", None) or e
    if isinstance(orig, _DeadlineExceeded) or getattr(orig, "dptopic_deadline", False):
        return True
    if type(orig).__name__ == "ConnectionTimeout":     # psycopg: libpq's connect_timeout
        return True
    state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return state is not None and str(state) in _PG_TIMEOUT_STATES


#: PEP 249's errors that a statement's values cause (a constraint they break, a value the driver or the column cannot
#: take), as opposed to the database's own state (locked, full, unreachable, read-only: OperationalError and others)
_DATA_ERRORS = frozenset({"IntegrityError", "DataError", "InterfaceError"})


def is_data_error(e: BaseException) -> bool:
    """Whether ``e`` (what :meth:`Storage.store` raised) was caused by the values it stored rather than by the
    database: a driver's IntegrityError, DataError or InterfaceError behind a :class:`StorageError`, or a value this
    module could not handle (TypeError, ValueError). The group-commit writer stores a group that failed so one
    upload at a time (:mod:`dptopic.service.ingest`); a failure of the database fails the group at once."""
    if isinstance(e, (TypeError, ValueError)):
        return True
    cause = e.__cause__ if isinstance(e, StorageError) else None
    orig = getattr(cause, "orig", None) or cause
    return orig is not None and any(c.__name__ in _DATA_ERRORS for c in type(orig).__mro__)


def _database_error(e: BaseException) -> StorageError:
    if is_timeout_error(e):
        return StorageTimeout(f"database timeout: {_one_line(e)}")
    cls = StoragePermissionError if is_permission_error(e) else StorageError
    return cls(f"database error: {_one_line(e)}")


FED_PREFIX = "fed_"
#: FedLDA's settings that a flag of ``dptopic serve`` sets (the others are fixed by dptopic), in the order refusals
#: list them
FED_FLAG_SETTINGS = ("fed_epsilon", "fed_topics", "fed_failure_rate", "fed_pad_length", "fed_sample_ratio",
                     "fed_report_words")


#: settings stored with the others that bind no round (see :func:`_check_fed`)
UNBOUND_FED_SETTINGS = ("fed_failure_rate",)


def _settings_list(values: dict, keys) -> str:
    return ", ".join(f"{k}={values[k]!r}" for k in keys)


def _settings_fields(side: str, values: dict, keys) -> tuple[str, dict]:
    """``keys`` of ``values`` as template fields of a :class:`ParameterError` (``{fed_topics=stored_fed_topics}``),
    and the fields."""
    return (", ".join("{%s=%s_%s}" % (k, side, k) for k in keys), {f"{side}_{k}": values[k] for k in keys})


def _check_fed(stored: dict, expected: dict, rounds_exist, fed_user_epsilon: float | None = None) -> None:
    """Refuse, in one line naming every FedLDA setting that differs, a start whose FedLDA settings are not those the
    database is bound to: the open round's model, the updates stored for it and the epsilon the users spent were made
    with them (another K leaves the round stuck; another epsilon would debias updates with the wrong epsilon and
    understate what the users spent). ``fed_epsilon`` is ``None`` with FedLDA off.

    A database that holds no record of ``fed_epsilon`` (made by a dptopic that bound only ``fed_report_words``) ran
    FedLDA if it records ``fed_report_words`` or holds a FedLDA round (``rounds_exist()``)."""
    now_on = expected.get("fed_epsilon") is not None
    if "fed_epsilon" in stored:
        was_on = stored["fed_epsilon"] is not None
    else:
        was_on = stored.get("fed_report_words") is not None or rounds_exist()
    if was_on and not now_on:
        known = [k for k in FED_FLAG_SETTINGS if stored.get(k) is not None]
        ran, fields = _settings_fields("stored", stored, known)
        raise SettingsError("the database ran FedLDA rounds" + (" with " + ran if known else "") + " but the server was"
                            " started without FedLDA (no {fed_epsilon}): FedLDA is off now, while the database's open"
                            " round and the epsilon its users spent are bound to those settings; start it with the"
                            " same FedLDA settings, or use a new {database}.", "fed_epsilon", None, **fields)
    # fed_failure_rate binds nothing: the server's rounds use the 'none' rule, which has no failure rate (serve
    # refuses fed_failure_rate), so a database first started with another value still starts
    differ = sorted((k for k, v in expected.items() if k.startswith(FED_PREFIX) and k in stored and stored[k] != v
                     and k not in UNBOUND_FED_SETTINGS),
                    key=lambda k: FED_FLAG_SETTINGS.index(k) if k in FED_FLAG_SETTINGS else len(FED_FLAG_SETTINGS))
    if not differ:
        return
    was, was_fields = _settings_fields("stored", stored, differ)
    now, now_fields = _settings_fields("given", expected, differ)
    if not was_on:
        raise SettingsError("the database was made without FedLDA (" + was + ") but the server was started with"
                            " FedLDA (" + now + "): FedLDA's settings are bound to a database on its first start;"
                            " start it without FedLDA, or use a new {database} for FedLDA rounds.", differ[0],
                            **was_fields, **now_fields)
    chosen = ("" if fed_user_epsilon is None else        # FedLDA.from_user_budget chose these two
              " ({fed_user_epsilon=:g} chose {fed_epsilon} and {fed_pad_length} here)")
    raise SettingsError("the database's FedLDA rounds were run with " + was + " but the server was started with " + now
                        + ": FedLDA's settings are bound to a database on its first start (the open round's model and"
                        " the epsilon its users spent depend on them); start it with the same FedLDA settings" + chosen
                        + ", or use a new {database}.", differ[0], values={"fed_user_epsilon": fed_user_epsilon},
                        **was_fields, **now_fields)


class SettingsError(ParameterError, StorageError):
    """A start with settings other than those the database is bound to: a :class:`ParameterError` for the setting."""


class DatabaseError(ParameterError, StorageError):
    """A ``database`` that cannot be used, refused before it is opened: a :class:`ParameterError` for ``database``."""


def _other_setting(key: str, stored, given) -> SettingsError:
    """The database's reports were made with another ``key`` (a setting of :meth:`Storage.bind_settings`) than the
    server was started with: said as the settings a user gives (the per-word epsilon for ``f``, the vocabulary for its
    fingerprint and size)."""
    tail = ": start it with the same {vocabulary}, {report_kind} and epsilon, or use a new {database}."
    if key == "f":
        def eps(f):
            try:
                return math.log(2.0 / float(f) - 1.0)
            except (ValueError, ZeroDivisionError, OverflowError, TypeError):
                return None
        if eps(stored) is not None and eps(given) is not None:
            return SettingsError("the database holds reports made with {epsilon_word=stored:.4g} but the server was"
                                 " started with {epsilon_word=given:.4g}" + tail, "epsilon_word", stored=eps(stored),
                                 given=eps(given))
    if key == "vocabulary_sha256" and isinstance(stored, str) and isinstance(given, str):
        return SettingsError("the database holds reports made with another {vocabulary} (SHA-256 {stored}...) than the"
                             " server was started with (SHA-256 {given}...)" + tail, "vocabulary",
                             stored=stored[:12], given=given[:12])
    if key == "vocab_size":
        return SettingsError("the database holds reports made with a {vocabulary} of {stored} words but the server was"
                             " started with one of {given} words" + tail, "vocabulary", stored=stored, given=given)
    return SettingsError("the database holds reports made with {parameter=stored} but the server was started with"
                         " {parameter=given}" + tail, key, stored=stored, given=given)


@dataclass
class Submission:
    """One validated upload waiting to be stored."""

    idempotency_key: str
    body_sha256: str
    contributor: str | None
    rows: list  # packed bits, one bytes per report
    unique_body: bool = False
    """Whether the body carries an ``upload_nonce``: only such a body is refused when stored before under another
    key (two contributors' nonce-less uploads may coincide byte for byte, honestly)."""

    def __post_init__(self):    # refused when made, not in the group commit it would fail for every upload with it
        refuse_nul(idempotency_key=self.idempotency_key, contributor=self.contributor)


def check_backend(url: str) -> None:
    """Only SQLite and PostgreSQL are supported (and tested): any other database is refused by name, before a driver
    that is not installed answers for it."""
    try:
        backend = make_url(url).get_backend_name()
    except Exception:       # an unparsable URL: create_engine's own message says why
        return
    if backend not in ("sqlite", "postgresql"):
        raise StorageError(f"database {backend!r} is not supported: the service stores its data in SQLite"
                           " (sqlite:///PATH, the default) or PostgreSQL (postgresql+psycopg://USER@HOST/DB).")
    if backend == "sqlite":
        _check_sqlite_folder(url)


def _check_sqlite_folder(url: str) -> None:
    """A SQLite file in a folder that does not exist is named (SQLite itself says only "unable to open database
    file")."""
    try:
        u = make_url(url)
    except Exception:  # noqa: BLE001 - create_engine's own message says why
        return
    path = u.database
    if not path or path == ":memory:" or path.startswith("file:") or u.query.get("uri"):
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise DatabaseError("cannot use database {url!r}: the folder {folder!r} does not exist; create it (mkdir -p)"
                            " or give a {database} path in an existing folder.", "database", url=safe_url(url),
                            folder=folder)


def safe_url(url: str) -> str:
    """``url`` as messages show it: scheme, user, host, port and database, with any password masked (``***``, as
    SQLAlchemy renders it); ``<database>`` for a URL SQLAlchemy cannot parse (it could hold a password anywhere)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - only used in messages
        return "<database>"


#: what ``?synchronous=`` in a SQLite URL may ask for (SQLite's ``PRAGMA synchronous`` in WAL mode); the first is the
#: default. ``full``: every commit is followed by the write-ahead log's fsync before anything of it is acknowledged
#: (inside the commit; for uploads, on a sync thread beside the writer: :meth:`Storage.sync`), so an acknowledged
#: upload survives a power loss or an operating-system crash too. ``normal``: a commit is written to the log without
#: waiting for the disk (the log is synced at checkpoints): an acknowledged upload survives the server process being
#: killed (``kill -9``, a crash of Python), not a power loss or a crash of the operating system, which may lose the
#: last commits (never half of one: the database stays consistent). docs/research/service_throughput.md measures
#: what each costs.
SQLITE_SYNCHRONOUS = ("full", "normal")


def sqlite_synchronous(url: str) -> tuple[str, str]:
    """``(url, synchronous)``: a SQLite URL without the service's own ``synchronous`` query option, and the value it
    asked for (default ``full``, :data:`SQLITE_SYNCHRONOUS`). Any other URL is returned as it is, with ``full``."""
    try:
        u = make_url(url)
    except Exception:  # noqa: BLE001 - an unparsable URL: create_engine's own message says why
        return url, SQLITE_SYNCHRONOUS[0]
    if u.get_backend_name() != "sqlite" or "synchronous" not in u.query:
        return url, SQLITE_SYNCHRONOUS[0]
    value = u.query["synchronous"]
    value = value[-1] if isinstance(value, tuple) else value
    if value.lower() not in SQLITE_SYNCHRONOUS:
        raise StorageError(f"database {safe_url(url)!r}: synchronous={value!r} is not one of"
                           f" {', '.join(SQLITE_SYNCHRONOUS)} (full, the default, survives a power loss; normal only"
                           " the server process being killed)")
    return u.difference_update_query(["synchronous"]).render_as_string(hide_password=False), value.lower()


def foreign_tables(url: str) -> list[str]:
    """Tables in the database at ``url`` that are not the service's (a user's own SQLite file, say); [] for a new
    database. Read before the service creates anything."""
    check_backend(url)
    url = sqlite_synchronous(url)[0]
    try:
        engine = create_engine(url)
        try:
            names = inspect(engine).get_table_names()
        finally:
            engine.dispose()
    except Exception as e:  # a bad URL or an unreachable server: Storage() reports it in one line
        raise StorageError(f"cannot use database {safe_url(url)!r}: {_one_line(e)}") from None
    return sorted(set(names) - set(metadata.tables))


#: the Idempotency-Key of the row :meth:`Storage.check_writable` inserts and rolls back: outside the alphabet an upload
#: may use (spaces, '#'), so no contributor's key can collide with it
WRITE_PROBE_KEY = "# dptopic start-up write check #"


#: seconds a new PostgreSQL connection may take (libpq's connect_timeout) unless the URL gives its own
PG_CONNECT_TIMEOUT = 10
#: seconds a request's transaction or read may take on PostgreSQL (``ServiceConfig.database_timeout``)
DEFAULT_TIMEOUT = 15.0
#: the least ``long_timeout`` (the trainer's commit, a rotation, a FedLDA close, the model's arrays), in seconds
MIN_LONG_TIMEOUT = 300.0


def _pg_connect_args(url: str, timeout: float | None = None) -> dict:
    """libpq's ``connect_timeout`` and, with ``timeout``, the server-side ``statement_timeout`` and ``lock_timeout``
    of every session (``options``, added to the URL's own ``?options=``; a limit the URL sets itself wins)."""
    try:
        query = make_url(url).query
    except Exception:  # noqa: BLE001 - create_engine's own message says why
        return {}
    args = {} if "connect_timeout" in query else {"connect_timeout": PG_CONNECT_TIMEOUT}
    if timeout:
        given = query.get("options", "")
        given = " ".join(given) if isinstance(given, tuple) else given
        ms = int(round(timeout * 1000))
        extra = [f"-c {name}={ms}" for name in ("statement_timeout", "lock_timeout") if name not in given]
        if extra:
            args["options"] = " ".join([given, *extra]).strip()
    return args


# ------------------------------------------------------------------ client-side time limit (PostgreSQL)
#: the calling thread's ``(deadline as time.monotonic(), limit in seconds)``, or None (no limit): set by
#: :meth:`Storage.write` and :meth:`Storage.read` around everything they send, pool checkout and pre-ping included
_DEADLINE = threading.local()


class _Watchdog:
    """Ends a PostgreSQL connection's wait for the server at its thread's deadline by shutting the connection's
    socket down: the blocked read returns at once and the driver reports the connection lost, which discards it.

    A server that stopped answering (its processes stopped, a half-open connection) leaves the client waiting for
    ever: the kernel keeps acknowledging what is sent, so no TCP timeout fires, and ``statement_timeout`` runs in the
    server, which is not running. One thread serves every connection; a wait registers its socket and deadline
    (:meth:`watch`) and unregisters when it ends (:meth:`unwatch`), both under the lock the thread shuts sockets
    down under, so it never touches a socket whose wait has ended (whose number may have been reused)."""

    TICK = 0.25     # seconds: how late a deadline may be acted on

    def __init__(self):
        self._cond = threading.Condition()
        self._waits: dict[int, list] = {}       # id -> [deadline, fd, fired]
        self._thread = None

    def watch(self, fd: int, deadline: float) -> list:
        # a copy of the descriptor: libpq may close its own inside the wait (the server ended the connection), and
        # that number may then be given to another socket before unwatch; the copy keeps this socket's number taken
        fd = os.dup(fd)
        entry = [deadline, fd, False]
        with self._cond:
            self._waits[id(entry)] = entry
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="dptopic-db-watchdog", daemon=True)
                self._thread.start()
            elif len(self._waits) == 1:
                self._cond.notify()
        return entry

    def unwatch(self, entry: list) -> bool:
        """Stop watching (and close the copy of the descriptor); True when the deadline struck (the socket was shut
        down). Idempotent."""
        with self._cond:
            self._waits.pop(id(entry), None)
            if entry[1] is not None:
                try:
                    os.close(entry[1])
                except OSError:
                    pass
                entry[1] = None
            return entry[2]

    def _run(self) -> None:
        with self._cond:
            while True:
                if not self._waits:
                    self._cond.wait()
                    continue
                now = time.monotonic()
                for key, entry in list(self._waits.items()):
                    if entry[0] <= now:
                        del self._waits[key]
                        entry[2] = True
                        _shutdown_socket(entry[1])
                if self._waits:
                    soonest = min(e[0] for e in self._waits.values())
                    self._cond.wait(min(self.TICK, max(0.0, soonest - now)) or 0.01)


def _shutdown_socket(fd: int) -> None:
    """Shut down (both ways) the socket behind ``fd`` without closing ``fd``, which its connection still owns."""
    try:
        s = socket.socket(fileno=os.dup(fd))
    except OSError:
        return
    try:
        s.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        s.close()


_WATCHDOG = _Watchdog()
_DeadlineExceeded = type("_DeadlineExceeded", (Exception,), {})   # replaced by the driver's subclass once loaded
_DEADLINE_CONNECTION = None


def _deadline_connection():
    """psycopg's ``Connection`` whose every wait for the server (statements, COMMIT, the pool's pre-ping) ends at the
    calling thread's deadline (:data:`_DEADLINE`, :class:`_Watchdog`); as the plain one without a deadline."""
    global _DEADLINE_CONNECTION, _DeadlineExceeded
    if _DEADLINE_CONNECTION is not None:
        return _DEADLINE_CONNECTION
    import psycopg  # psycopg: optional (the [service] extra)

    class DeadlineExceeded(psycopg.OperationalError):
        dptopic_deadline = True

    class DeadlineConnection(psycopg.Connection):
        def wait(self, gen, *args, **kwargs):
            limit = getattr(_DEADLINE, "value", None)
            if limit is None:
                return super().wait(gen, *args, **kwargs)
            entry = _WATCHDOG.watch(self.fileno(), limit[0])
            try:
                return super().wait(gen, *args, **kwargs)
            except BaseException:
                if _WATCHDOG.unwatch(entry):
                    try:
                        self.pgconn.finish()    # lost for good: its state in the server is unknown
                    except Exception:  # noqa: BLE001 - it is being discarded anyway
                        pass
                    raise DeadlineExceeded(f"the database did not answer within {limit[1]:g} s") from None
                raise
            finally:
                _WATCHDOG.unwatch(entry)

    _DeadlineExceeded, _DEADLINE_CONNECTION = DeadlineExceeded, DeadlineConnection
    return DeadlineConnection


def _pg_deadline_setup(engine) -> None:
    """Connections of ``engine`` are :func:`_deadline_connection`'s, and a new one may take no longer than what is
    left of the calling thread's limit (libpq's ``connect_timeout``, at least 2 s, as libpq counts it)."""
    cls = _deadline_connection()

    @event.listens_for(engine, "do_connect")
    def _connect(dialect, conn_rec, cargs, cparams):
        limit = getattr(_DEADLINE, "value", None)
        if limit is not None:
            if limit[0] <= time.monotonic():    # the pre-ping of a pooled connection used the time up
                raise _DeadlineExceeded(f"the database did not answer within {limit[1]:g} s")
            left = max(2, int(limit[0] - time.monotonic() + 0.999))
            given = cparams.get("connect_timeout")
            try:
                given = int(given) if given is not None else None
            except (TypeError, ValueError):
                given = None
            if given is None or given <= 0 or left < given:
                cparams["connect_timeout"] = left
        return cls.connect(*cargs, **cparams)


@contextmanager
def _deadline(limit: float | None, deadline: float | None = None):
    """Everything this thread sends to PostgreSQL inside ends by ``deadline`` (``time.monotonic()``; default ``limit``
    seconds from now), or fails with :class:`StorageTimeout`; ``limit`` None or 0: no limit."""
    prev = getattr(_DEADLINE, "value", None)
    if limit:
        at = time.monotonic() + limit if deadline is None else deadline
        if at <= time.monotonic():
            raise StorageTimeout(f"database timeout: the database did not answer within {limit:g} s (the writes"
                                 " queued before this one still wait for it)")
        _DEADLINE.value = (at, float(limit))
    else:
        _DEADLINE.value = None
    try:
        yield
    finally:
        _DEADLINE.value = prev


class Storage:
    """The service's database (thread-safe: one SQLAlchemy engine, connections from its pool)."""

    def __init__(self, url: str, echo: bool = False, timeout: float | None = DEFAULT_TIMEOUT,
                 long_timeout: float | None = None):
        """``timeout``: seconds a transaction or read may take on PostgreSQL, counted from its start (None or 0: no
        limit); ``long_timeout``: the same for the trainer's commit, a rotation, a FedLDA round's close and the
        model's arrays (default ``max(10 * timeout, MIN_LONG_TIMEOUT)``). SQLite waits for its lock up to 30 s."""
        self.url = url
        self.timeout = float(timeout) if timeout else None
        self.long_timeout = (float(long_timeout) if long_timeout else
                             max(10 * self.timeout, MIN_LONG_TIMEOUT) if self.timeout else None)
        check_backend(url)
        #: SQLite's ``synchronous`` (:data:`SQLITE_SYNCHRONOUS`, from the URL's ``?synchronous=``); None on PostgreSQL
        self.synchronous = None
        try:
            if url.startswith("sqlite"):
                engine_url, self.synchronous = sqlite_synchronous(url)
                self.engine = create_engine(engine_url, echo=echo,
                                            connect_args={"timeout": 30, "check_same_thread": False})
                _sqlite_setup(self.engine, self.synchronous)
            else:
                # READ COMMITTED whatever the database's default_transaction_isolation says: the writers take the
                # advisory lock and only then look up the stored keys and bodies (store), the rounds (fed_store_update)
                # or the active model (rotate), and those lookups must see what the previous lock holder committed.
                # Under REPEATABLE READ or SERIALIZABLE the snapshot is taken by the lock statement itself, before the
                # wait: a nonce-carrying body committed meanwhile by another server would be stored twice, and a
                # retried key would hit the unique index (503) instead of being answered as a replay.
                # connect_timeout: a database host that accepts the connection but never answers (or drops its
                # packets) would otherwise hold start-up, and every upload behind the writer thread, for ever; the
                # URL's own ?connect_timeout= wins. statement_timeout and lock_timeout: the server ends a statement
                # that runs (or waits for a lock held by a stuck peer) past the limit; the deadline connection
                # (_pg_deadline_setup) ends a wait for a server that does not answer at all.
                self.engine = create_engine(url, echo=echo, pool_size=12, max_overflow=8, pool_pre_ping=True,
                                            isolation_level="READ COMMITTED",
                                            connect_args=_pg_connect_args(url, self.timeout))
                if self.engine.dialect.driver == "psycopg":
                    _pg_deadline_setup(self.engine)
        except (SQLAlchemyError, ImportError, ValueError) as e:
            raise StorageError(f"cannot use database {self.safe_url!r}: {_one_line(e)}") from None
        self.dialect = self.engine.dialect.name
        #: the driver's parameter marker, for the statements :meth:`store` sends to it directly
        self._placeholder = "?" if self.dialect == "sqlite" else "%s"
        #: the driver's own error class: what those statements raise (SQLAlchemy wraps only what it runs itself)
        self._driver_error = self.engine.dialect.loaded_dbapi.Error
        self._sqlite_file = None
        #: the driver connection that commits without waiting for the disk (store(durable=False)), kept out of the
        #: pool at synchronous=NORMAL, and the lock of its one user at a time
        self._lazy_conn = None
        self._lazy_lock = threading.Lock()
        self.migrate()
        self._sqlite_file = _sqlite_file_identity(self.engine)

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden (for logs and errors)."""
        return safe_url(self.url)

    # ------------------------------------------------------------ transactions
    def _limit(self, limit):
        """``limit`` as :meth:`write` and :meth:`read` take it: None is ``timeout``, ``"long"`` is ``long_timeout``,
        0 is none. Only PostgreSQL is limited (SQLite waits for its lock up to 30 s)."""
        if self.dialect != "postgresql":
            return None
        return self.timeout if limit is None else self.long_timeout if limit == "long" else (limit or None)

    @contextmanager
    def write(self, limit=None, deadline: float | None = None):
        """A write transaction: ``BEGIN IMMEDIATE`` on SQLite (no lock upgrades), plain on PostgreSQL.

        ``limit`` (PostgreSQL): seconds it may take, from now or until ``deadline`` (``time.monotonic()``): None
        for ``timeout``, ``"long"`` for ``long_timeout``, 0 for none; past it, :class:`StorageTimeout`."""
        seconds = self._limit(limit)
        self.check_writable_file()
        try:
            with _deadline(seconds, deadline), self.engine.connect() as conn:
                conn = conn.execution_options(dptopic_write=True)
                try:
                    with conn.begin():
                        if self.dialect == "postgresql" and seconds != self.timeout:
                            ms = int(round((seconds or 0) * 1000))    # this transaction's own server-side limits
                            conn.exec_driver_sql(f"SET LOCAL statement_timeout = {ms}")
                            conn.exec_driver_sql(f"SET LOCAL lock_timeout = {ms}")
                        yield conn
                        self.check_file()   # before the commit: nothing is acknowledged into a removed file
                except (SQLAlchemyError, self._driver_error) as e:
                    if self.dialect == "sqlite" and is_permission_error(e):
                        # a connection SQLite opened while the file could not be written stays read-only for good,
                        # and so would every other one the pool opened meanwhile: discard them all, so that the
                        # server writes again as soon as the file is writable (not only after a restart)
                        conn.invalidate()
                        self.engine.dispose()
                    raise
        except (SQLAlchemyError, self._driver_error) as e:
            raise _database_error(e) from e

    def check_file(self) -> None:
        """Refuse (:class:`StorageError`) when the SQLite file this server opened is no longer at its path (the file
        or its folder was removed, or another file was put in its place): SQLite would go on committing into the
        unlinked file through its open handles, and every upload acknowledged then would be lost with it. Nothing on
        PostgreSQL or for an in-memory database."""
        if self._sqlite_file is None:
            return
        path, identity = self._sqlite_file
        try:
            st = os.stat(path)
            now = (st.st_dev, st.st_ino)
        except OSError:
            now = None
        if now != identity:
            raise StorageError(f"the database file {path!r} was {'removed' if now is None else 'replaced'} while this"
                               " server was using it: nothing more is stored into the old file; restore the file and"
                               " restart the server.")

    def check_writable_file(self) -> None:
        """Refuse (:class:`StoragePermissionError`) a write while the SQLite file this server opened may not be
        written (its operator made it read-only: its mode, or ``chattr +i``), before any connection is used: one
        that SQLite opened before would still commit into the write-ahead log, which SQLite copies into the file only
        at its checkpoints, so some writes would be refused and others acknowledged. Writes are taken again from the
        first one after the file is writable (a connection opened while it was not is opened again on its next
        check-out, :func:`_sqlite_setup`). A removed or replaced file is refused as :meth:`check_file` says. One
        system call; nothing on PostgreSQL or for an in-memory database."""
        if self._sqlite_file is None or _may_write(self._sqlite_file[0]):
            return
        self.check_file()
        raise StoragePermissionError(f"the database file {self._sqlite_file[0]!r} is read-only: nothing is stored"
                                     " until it is writable again; make it writable (no restart is needed).")

    @contextmanager
    def read(self, limit=None):
        """A read; ``limit`` as :meth:`write`'s (the session's ``statement_timeout`` stays ``timeout``'s)."""
        seconds = self._limit(limit)
        try:
            with _deadline(seconds), self.engine.connect() as conn:
                if self.dialect == "postgresql" and seconds != self.timeout:
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(round((seconds or 0) * 1000))}")
                yield conn
        except SQLAlchemyError as e:
            raise _database_error(e) from e

    def check_writable(self) -> None:
        """Refuse, in one line naming the table and the grant that fixes it, a database this server may read but not
        write: a role with SELECT only (PostgreSQL), a read-only file or connection (SQLite ``mode=ro``). Such a
        server would start healthy and then refuse every upload. No row is left: PostgreSQL's privileges are read from
        its catalog, then one submission row is inserted in a transaction that is rolled back (which also catches a
        read-only transaction or replica); on PostgreSQL that uses up one id of the submissions sequence, which is
        never shown."""
        missing: dict[str, list[str]] = {}
        user = schema = None
        try:
            with self.engine.connect() as conn:
                if self.dialect == "postgresql":
                    user, schema = conn.execute(text(
                        "SELECT current_user, (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON"
                        " n.oid = c.relnamespace WHERE c.oid = to_regclass('submissions'))")).one()
                    for table, privileges in TABLE_PRIVILEGES.items():
                        if conn.execute(text("SELECT to_regclass(:t) IS NULL"), {"t": table}).scalar():
                            continue    # not created yet: migrate() reports that
                        for privilege in privileges:
                            if not conn.execute(text("SELECT has_table_privilege(:t, :p)"),
                                                {"t": table, "p": privilege}).scalar():
                                missing.setdefault(privilege, []).append(table)
                        seq = conn.execute(text("SELECT pg_get_serial_sequence(:t, 'id')"), {"t": table}).scalar() \
                            if "id" in metadata.tables[table].c else None
                        if seq is not None and not conn.execute(
                                text("SELECT has_sequence_privilege(:s, 'USAGE') OR has_sequence_privilege(:s, 'UPDATE')"),
                                {"s": seq}).scalar():
                            missing.setdefault("USAGE", []).append(seq)
                    conn.rollback()
                if not missing:
                    conn = conn.execution_options(dptopic_write=True)
                    tx = conn.begin()
                    try:
                        # a key no upload can send (spaces and '#' are outside the Idempotency-Key alphabet), so
                        # no contributor's row can collide with the probe
                        conn.execute(submissions.insert().values(
                            idempotency_key=WRITE_PROBE_KEY, body_sha256="0" * 64,
                            contributor=None, n_reports=0, received_at=time.time()))
                    except IntegrityError:
                        pass        # a constraint refused the row: the INSERT itself was allowed
                    finally:
                        tx.rollback()
        except SQLAlchemyError as e:
            if not is_permission_error(e):
                raise StorageError(f"database error: {_one_line(e)}") from e
            missing.setdefault("INSERT", []).append("submissions")
            cause = f" ({_one_line(e)})"
        else:
            cause = ""
        if not missing:
            return
        what = "; ".join(f"{p} on {', '.join(ts)}" for p, ts in missing.items())
        if self.dialect == "postgresql":
            where = schema or "public"
            raise StoragePermissionError(
                f"the database role {user!r} may read but not write the service's tables in {self.safe_url!r}: it"
                f" lacks {what}{cause}, so every upload would be refused: grant them (GRANT SELECT, INSERT, UPDATE,"
                f" DELETE ON ALL TABLES IN SCHEMA {where} TO {user}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA {where} TO"
                f" {user}), or start the server as the role that owns the tables.")
        raise StoragePermissionError(
            f"this server may read but not write the database {self.safe_url!r}: an INSERT into table submissions"
            f" failed{cause}, so every upload would be refused: give it a database file it may write (and the file's"
            " folder, for the journal), opened read-write.")

    # --------------------------------------------------------------- migration
    def migrate(self) -> int:
        """Apply the missing migrations; returns the schema version."""
        with self.write(limit=0) as conn:     # no limit: an upgrade may rewrite or index large tables
            self._lock(conn)
            schema_table.create(conn, checkfirst=True)
        done = self.schema_version()
        if done > SCHEMA_VERSION:
            raise StorageError(f"database schema version {done} is newer than this dptopic supports"
                               f" ({SCHEMA_VERSION}): upgrade dptopic.")
        for version, description, run in MIGRATIONS:
            if version <= done:
                continue
            try:
                with self.write(limit=0) as conn:
                    self._lock(conn)
                    current = conn.execute(select(func.max(schema_table.c.version))).scalar() or 0
                    if current >= version:  # another process applied it meanwhile
                        continue
                    run(conn)
                    conn.execute(schema_table.insert().values(version=version, description=description,
                                                              applied_at=time.time()))
            except StoragePermissionError as e:
                # a role that may write the tables but does not own them (PostgreSQL: only the owner may change a
                # table): say that it is the upgrade that needs the owner, not the serving
                raise StoragePermissionError(
                    f"cannot upgrade the database {self.safe_url!r} from schema version {done} to {SCHEMA_VERSION}"
                    f" (migration {version}: {description}): {str(e).removeprefix('database error: ')}; start"
                    " dptopic serve once as the role that owns the tables (or a superuser) to upgrade it, then as"
                    " this one.") from e
        return self.schema_version()

    def schema_version(self) -> int:
        with self.read() as conn:
            return int(conn.execute(select(func.max(schema_table.c.version))).scalar() or 0)

    def _lock(self, conn) -> None:
        """Serialize writers across processes (PostgreSQL; SQLite's BEGIN IMMEDIATE already does)."""
        if self.dialect == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_INSERT_LOCK})

    # ---------------------------------------------------------------- settings
    def bind_settings(self, expected: dict, fed_user_epsilon: float | None = None) -> dict:
        """Store ``expected`` on first use; afterwards refuse to serve with other settings.

        A setting the database has no record of (a database made by a dptopic that did not bind it yet) is recorded
        with the value the server is started with, and bound from then on. FedLDA's settings (the keys starting with
        ``fed_``; ``fed_epsilon`` is ``None`` with FedLDA off) are checked together, so that one line names every
        FedLDA setting that differs (:func:`_check_fed`).
        """
        with self.write() as conn:
            self._lock(conn)
            rows = dict(conn.execute(select(settings.c.key, settings.c.value)).all())
            if not rows:
                conn.execute(settings.insert(), [{"key": k, "value": json.dumps(v)} for k, v in expected.items()])
                return expected
            stored = {k: json.loads(v) for k, v in rows.items()}
            stored.setdefault("report_kind", "word")  # databases from before report kinds hold word-level reports
            kind, want = stored["report_kind"], expected.get("report_kind", "word")
            if kind != want:  # checked first: the other settings (f, eps_doc, ...) of the other kind differ as a consequence
                raise SettingsError("the database holds {stored_level} reports but the server was started for"
                                    " {given_level} reports ({report_kind=}): a database created for one kind refuses"
                                    " to be served for the other; start it with {report_kind=stored}, or use a new"
                                    " {database}.", "report_kind", want, stored=kind, stored_level=_level(kind),
                                    given_level=_level(want))
            for k, v in expected.items():
                if k.startswith(FED_PREFIX):
                    continue
                if k in stored and stored[k] != v:
                    raise _other_setting(k, stored[k], v)
            if any(k.startswith(FED_PREFIX) for k in expected):
                if "fed_topics" not in stored and expected.get("fed_topics") is not None:
                    k_stored = self._broadcast_topics(conn)
                    if k_stored is not None:    # an older database: its rounds' model says which K it ran with
                        stored["fed_topics"] = k_stored
                _check_fed(stored, expected, lambda: conn.execute(select(func.count()).select_from(fed_rounds))
                           .scalar() > 0, fed_user_epsilon)
            missing = [k for k in expected if k not in rows]
            if missing:     # a database from before these settings were bound: bound from this start on
                conn.execute(settings.insert(), [{"key": k, "value": json.dumps(expected[k])} for k in missing])
        return {**stored, **{k: expected[k] for k in missing}}

    @staticmethod
    def _broadcast_topics(conn) -> int | None:
        """The number of topics of the newest FedLDA round's published model, or None without a round (or with a
        message this version cannot read): what an older database, which did not record ``fed_topics``, ran with."""
        from ..protocol.fedlda_messages import (  # start-up: protocol.fedlda_messages loads numpy
            ModelBroadcast,
            decode_message,
        )

        row = conn.execute(select(fed_rounds.c.message).order_by(fed_rounds.c["round"].desc()).limit(1)).first()
        if row is None:
            return None
        try:
            msg = decode_message(bytes(row[0]))
        except DPTopicError:
            return None
        return int(msg.phi.shape[0]) if isinstance(msg, ModelBroadcast) else None

    # ----------------------------------------------------------------- reports
    @property
    def syncs_separately(self) -> bool:
        """Whether :meth:`store` can leave its commit's sync to :meth:`sync` (``durable=False``): a SQLite file with
        ``synchronous=full`` (the default), whose commits the caller then makes durable with a separate fsync of the
        write-ahead log, several of which may be in flight at once (:mod:`dptopic.service.ingest`)."""
        return self._sqlite_file is not None and self.synchronous == "full"

    def sync(self) -> None:
        """Make every transaction committed so far durable: an fsync of the SQLite file's write-ahead log (its
        database file too when there is no log, whose transactions a checkpoint has then copied and synced into the
        file), as ``synchronous=FULL`` does at each commit. Only for a file :attr:`syncs_separately`; a failure is a
        :class:`StorageError` (the caller must not acknowledge what it committed)."""
        path = self._sqlite_file[0]
        try:
            for name in (path + "-wal", path):
                try:
                    fd = os.open(name, os.O_RDONLY)
                except FileNotFoundError:
                    continue
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
                return
        except OSError as e:
            raise StorageError(f"the database file {path!r} could not be synced to its disk ({_one_line(e)}); retry"
                               " later.") from None
        raise StorageError(f"the database file {path!r} was removed while this server was using it: restore the file"
                           " and restart the server.")

    def store(self, batch: list[Submission], deadline: float | None = None,
              durable: bool = True) -> list[tuple[str, dict]]:
        """Store many submissions in ONE transaction (group commit).

        Returns one ``(outcome, info)`` per submission: ``("stored", ack)``, ``("replayed", ack)``
        for a key already stored with the same body (its ack names the pseudonym the reports are
        tallied under: only the uploader knows the key), ``("conflict", ack)`` for a key already
        used with another body, ``("duplicate", info)`` for a new key whose body carries an upload nonce
        (``Submission.unique_body``) and (its SHA-256) was already stored under another key, or earlier in this batch (``info``: when it was stored and
        how many reports; not its key nor its pseudonym, which whoever holds the bytes must not
        learn). Nothing is acknowledged before the commit returns. The lookups run inside the
        write transaction, under the lock that serializes writers across processes, so two uploads
        of one body at once, even to two servers on one database, store it once. ``deadline``
        (``time.monotonic()``, PostgreSQL): when the transaction must have ended (default: ``timeout``
        from now), else :class:`StorageTimeout` and nothing is stored. ``durable=False`` (a file that
        :attr:`syncs_separately`): the commit does not wait for the disk, and the caller acknowledges nothing of it
        before a :meth:`sync` begun after it returned.
        """
        if self.dialect == "sqlite":
            return self._store_sqlite(batch, durable or not self.syncs_separately)
        with self.write(deadline=deadline) as conn:
            self._lock(conn)
            # The statements go straight to the driver: this is the one path every upload takes, and SQLAlchemy's
            # per-statement work (cache keys, parameter processing, result set-up) was half of the writer thread's CPU
            # per group commit, time during which the event loop waits for the GIL (docs/service.md, "Throughput").
            cur = conn.connection.dbapi_connection.cursor()
            try:
                return self._store_statements(cur, batch)
            finally:
                cur.close()

    def _store_sqlite(self, batch: list[Submission], durable: bool = True) -> list[tuple[str, dict]]:
        """:meth:`store` on SQLite, on a driver connection without SQLAlchemy's connection and transaction objects
        (their events and bookkeeping were as much CPU as the statements and the commit of a one-upload transaction):
        ``BEGIN IMMEDIATE``, the statements, the file check, ``COMMIT``; on an error, ``ROLLBACK`` and the error
        :meth:`write` raises (a refusal for lack of permission discards the pool's connections, as there). A durable
        commit takes a pooled connection (``synchronous`` as the URL says); one that leaves its fsync to :meth:`sync`
        takes :meth:`_lazy_connection`, set to ``NORMAL`` once (no check-out and no ``PRAGMA`` per commit)."""
        self.check_writable_file()
        if not durable:
            with self._lazy_lock:
                raw = self._lazy_connection()
                try:
                    return self._commit_sqlite(raw, batch)
                except BaseException:
                    if self._lazy_conn is not None and self._lazy_conn.dbapi_connection is None:  # invalidated
                        self._lazy_conn = None
                    raise
        try:
            raw = self.engine.raw_connection()
        except SQLAlchemyError as e:
            raise _database_error(e) from e
        try:
            return self._commit_sqlite(raw, batch)
        finally:
            raw.close()                 # back to the pool (a no-op once invalidated)

    def _lazy_connection(self):
        """The connection of commits that leave their fsync to :meth:`sync`: a pool connection kept out of the pool
        for them alone, at ``synchronous=NORMAL`` (every other connection keeps the URL's ``FULL``); opened again when
        it was opened while the file was read-only and the file is writable now (as the pool's check-out does)."""
        raw = self._lazy_conn
        if raw is not None and raw.info.get("dptopic_read_only") and _may_write(self._sqlite_file[0]):
            raw.invalidate()
            raw.close()
            raw = self._lazy_conn = None
        if raw is None:
            try:
                raw = self.engine.raw_connection()
                raw.driver_connection.execute("PRAGMA synchronous=NORMAL")
            except (SQLAlchemyError, self._driver_error) as e:
                raise _database_error(e) from e
            self._lazy_conn = raw
        return raw

    def _commit_sqlite(self, raw, batch: list[Submission]) -> list[tuple[str, dict]]:
        """:meth:`_store_sqlite`'s transaction on the driver connection of ``raw`` (a pool connection)."""
        try:
            cur = raw.driver_connection.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
                try:
                    out = self._store_statements(cur, batch)
                    self.check_file()   # before the commit: nothing is acknowledged into a removed file
                    cur.execute("COMMIT")
                except BaseException:
                    if raw.driver_connection.in_transaction:
                        cur.execute("ROLLBACK")
                    raise
            finally:
                cur.close()
        except self._driver_error as e:
            if is_permission_error(e):  # as write(): a connection opened while the file was read-only stays so
                raw.invalidate()
                self.engine.dispose()
            raise _database_error(e) from e
        return out

    def _store_statements(self, cur, batch: list[Submission]) -> list[tuple[str, dict]]:
        """:meth:`store`'s statements on the driver's cursor ``cur``, inside the caller's write transaction."""
        now = time.time()
        out: list[tuple[str, dict] | None] = [None] * len(batch)
        p = self._placeholder
        keys = list(dict.fromkeys(s.idempotency_key for s in batch))
        shas = list(dict.fromkeys(s.body_sha256 for s in batch if s.unique_body))
        # one indexed lookup for both questions: which keys are known, and which nonce-carrying bodies were
        # stored before (oldest first: a duplicate names the first upload of those bytes)
        sql = (f"SELECT idempotency_key, body_sha256, n_reports, received_at, contributor FROM submissions"
               f" WHERE idempotency_key IN ({', '.join([p] * len(keys))})")
        if shas:
            sql += f" OR body_sha256 IN ({', '.join([p] * len(shas))})"
        cur.execute(sql + " ORDER BY id", [*keys, *shas])
        key_set = set(keys)
        known: dict[str, _Row] = {}
        bodies: dict[str, _Row] = {}
        for k, sha, n, at, who in cur.fetchall():
            row = _Row(k, sha, n, at, who)
            if k in key_set:
                known[k] = row
            bodies.setdefault(sha, row)
        fresh = []
        for i, s in enumerate(batch):
            prev = known.get(s.idempotency_key)
            if prev is not None:
                ack = _ack(prev.idempotency_key, prev.n_reports, prev.received_at)
                if prev.body_sha256 == s.body_sha256:
                    out[i] = ("replayed", {**ack, "contributor": prev.contributor})
                else:
                    out[i] = ("conflict", ack)
                continue
            same = bodies.get(s.body_sha256) if s.unique_body else None
            if same is not None:
                out[i] = ("duplicate", {"reports": int(same.n_reports), "stored_at": float(same.received_at)})
                continue
            row = _Row(s.idempotency_key, s.body_sha256, len(s.rows), now, s.contributor)
            known[s.idempotency_key] = row
            if s.unique_body:
                bodies[s.body_sha256] = row
            fresh.append(i)
            out[i] = ("stored", {**_ack(s.idempotency_key, len(s.rows), now), "contributor": s.contributor})
        if fresh:
            # one INSERT for every new submission; its ids come back with their keys, so their order does not
            # matter; then one statement (executemany) for all their reports
            values = ", ".join([f"({p}, {p}, {p}, {p}, {p})"] * len(fresh))
            params = [v for i in fresh for v in (batch[i].idempotency_key, batch[i].body_sha256,
                                                  batch[i].contributor, len(batch[i].rows), now)]
            cur.execute("INSERT INTO submissions (idempotency_key, body_sha256, contributor, n_reports,"
                        f" received_at) VALUES {values} RETURNING id, idempotency_key", params)
            ids = {k: sid for sid, k in cur.fetchall()}
            cur.executemany(f"INSERT INTO reports (submission_id, packed) VALUES ({p}, {p})",
                            [(ids[batch[i].idempotency_key], r) for i in fresh for r in batch[i].rows])
        return out

    def fetch_reports(self, after_id: int, limit: int) -> list[tuple[int, bytes]]:
        with self.read() as conn:
            rows = conn.execute(select(reports.c.id, reports.c.packed).where(reports.c.id > after_id)
                                .order_by(reports.c.id).limit(limit)).all()
        return [(int(i), bytes(p)) for i, p in rows]

    def count_reports(self, after_id: int = 0) -> int:
        with self.read() as conn:
            return int(conn.execute(select(func.count()).select_from(reports).where(reports.c.id > after_id)).scalar())

    def counts(self) -> dict:
        with self.read() as conn:
            n_reports = conn.execute(select(func.count()).select_from(reports)).scalar()
            n_sub = conn.execute(select(func.count()).select_from(submissions)).scalar()
            n_contrib = conn.execute(select(func.count(func.distinct(submissions.c.contributor)))).scalar()
            n_anon = conn.execute(select(func.count()).select_from(submissions)
                                  .where(submissions.c.contributor.is_(None))).scalar()
            n_batches = conn.execute(select(func.count()).select_from(train_batches)
                                     .where(train_batches.c.status == "trained")).scalar()
            n_skipped = conn.execute(select(func.count()).select_from(train_batches)
                                     .where(train_batches.c.status == "skipped")).scalar()
        return {"reports_stored": int(n_reports), "submissions": int(n_sub), "contributors": int(n_contrib),
                "anonymous_uploads": int(n_anon), "batches_trained": int(n_batches), "batches_skipped": int(n_skipped)}

    def contributors(self, limit: int = 50) -> list[dict]:
        """Reports per contributor, most first, at most ``limit``: per pseudonym, and every upload without one as a
        contributor of its own (``contributor`` None): nothing says two anonymous uploads came from one person, nor
        from different ones, and grouping them would describe no one."""
        with self.read() as conn:
            named = conn.execute(
                select(submissions.c.contributor, func.sum(submissions.c.n_reports).label("n"),
                       func.count().label("uploads")).where(submissions.c.contributor.is_not(None))
                .group_by(submissions.c.contributor).order_by(func.sum(submissions.c.n_reports).desc())
                .limit(limit)).all()
            anonymous = conn.execute(
                select(submissions.c.n_reports).where(submissions.c.contributor.is_(None))
                .order_by(submissions.c.n_reports.desc()).limit(limit)).scalars().all()
        rows = ([{"contributor": c, "reports": int(n), "uploads": int(u)} for c, n, u in named]
                + [{"contributor": None, "reports": int(n), "uploads": 1} for n in anonymous])
        return sorted(rows, key=lambda r: -r["reports"])[:limit]

    def max_reports_per_contributor(self) -> int:
        """The most reports one contributor may have sent: the largest total of one pseudonym, or the largest upload
        without one (each counted as its own contributor, as :meth:`contributors` lists them)."""
        with self.read() as conn:
            sub = (select(func.sum(submissions.c.n_reports).label("n")).where(submissions.c.contributor.is_not(None))
                   .group_by(submissions.c.contributor).subquery())
            named = conn.execute(select(func.max(sub.c.n))).scalar() or 0
            anonymous = conn.execute(select(func.max(submissions.c.n_reports))
                                     .where(submissions.c.contributor.is_(None))).scalar() or 0
            return int(max(named, anonymous))

    def report_contributors(self, first: int, last: int) -> dict:
        """The contributors of the reports with ids ``first``..``last`` and their reports among them, for the dataset
        ledger (:mod:`dptopic.service.ledger`): per pseudonym, and each upload without one as a contributor of its
        own (``upload:`` and its Idempotency-Key)."""
        with self.read() as conn:
            rows = conn.execute(
                select(submissions.c.contributor, submissions.c.idempotency_key, func.count().label("n"))
                .select_from(reports.join(submissions, reports.c.submission_id == submissions.c.id))
                .where((reports.c.id >= first) & (reports.c.id <= last))
                .group_by(submissions.c.contributor, submissions.c.idempotency_key)).all()
        out: dict = {}
        for who, key, n in rows:
            name = who if who is not None else f"upload:{key}"
            out[name] = out.get(name, 0) + int(n)
        return out

    def fed_round_participation(self, round_: int) -> dict:
        """Each client of FedLDA round ``round_`` and the rounds it has taken part in up to it, this one included (the
        dataset ledger charges what its update spent)."""
        with self.read() as conn:
            clients = [c for (c,) in conn.execute(select(fed_updates.c.client).where(fed_updates.c.round == round_))]
            rows = conn.execute(select(fed_updates.c.client, func.count(func.distinct(fed_updates.c.round)))
                                .where((fed_updates.c.round <= round_) & fed_updates.c.client.in_(clients))
                                .group_by(fed_updates.c.client)).all() if clients else []
        return {c: int(n) for c, n in rows}

    # ------------------------------------------------------------------ models
    def active_model(self) -> dict:
        """The active model's row; created (empty, version 0) on first use."""
        with self.read() as conn:
            row = conn.execute(select(models).where(models.c.status == "active")).mappings().first()
        if row is not None:
            return dict(row)
        with self.write() as conn:
            self._lock(conn)    # two servers starting at once on PostgreSQL must not both create one
            row = conn.execute(select(models).where(models.c.status == "active")).mappings().first()
            if row is None:
                last = conn.execute(select(func.max(models.c.last_report_id))).scalar() or 0
                self._new_model(conn, last, "first model")
                row = conn.execute(select(models).where(models.c.status == "active")).mappings().first()
        return dict(row)

    def active_model_with_arrays(self) -> tuple[dict, dict[str, bytes]]:
        """The active model's row and its arrays, read in ONE statement: one snapshot on SQLite and on PostgreSQL
        (whose default isolation gives each statement its own), so that a training step committed meanwhile cannot
        pair this version's ``model.json`` with the next version's arrays (which the model's digests then refuse as a
        corrupt model)."""
        q = (select(models, model_arrays.c.name.label("array_name"), model_arrays.c.data.label("array_data"))
             .select_from(models.outerjoin(model_arrays, model_arrays.c.model_id == models.c.id))
             .where(models.c.status == "active"))
        for _ in range(10):
            with self.read(limit="long") as conn:     # the arrays of a large model take a while
                rows = conn.execute(q).mappings().all()
            if rows:
                row = {c.name: rows[0][c.name] for c in models.c}
                return row, {r["array_name"]: bytes(r["array_data"]) for r in rows if r["array_name"] is not None}
            self.active_model()     # none yet: the first one is created on first use
        raise StorageError("no active model could be read: another process keeps rotating it.")

    def _new_model(self, conn, start: int, note: str) -> int:
        now = time.time()
        return conn.execute(models.insert().values(
            status="active", version=0, first_report_id=start, last_report_id=start, n_reports_used=0, n_batches=0,
            meta_json=None, created_at=now, updated_at=now, note=note).returning(models.c.id)).scalar_one()

    def commit_batch(self, model_id: int, version: int, first_id: int, last_id: int, n_reports: int,
                     meta_json: str | None, arrays: dict[str, bytes] | None, status: str, note: str | None,
                     seconds: float) -> bool:
        """Write the new model state, the cursor and the batch row in ONE transaction.

        Returns ``False`` (and writes nothing) when the model moved on meanwhile (another trainer
        or a rotation): the caller reloads and tries again.
        """
        now = time.time()
        with self.write(limit="long") as conn:    # a large model's arrays: the trainer's own, longer limit
            # FOR UPDATE (PostgreSQL; SQLite's BEGIN IMMEDIATE already serializes): another server's trainer that
            # commits this version meanwhile must be waited for and seen, or both would commit the same batch
            cur = conn.execute(select(models.c.version, models.c.status, models.c.last_report_id)
                               .where(models.c.id == model_id).with_for_update()).first()
            if cur is None or cur.version != version or cur.status != "active" or cur.last_report_id >= last_id:
                return False
            values = dict(version=version + 1, last_report_id=last_id, n_reports_used=models.c.n_reports_used + n_reports,
                          updated_at=now)
            if status == "trained":
                values.update(n_batches=models.c.n_batches + 1, meta_json=meta_json)
                conn.execute(model_arrays.delete().where(model_arrays.c.model_id == model_id))
                conn.execute(model_arrays.insert(), [{"model_id": model_id, "name": k, "data": v}
                                                     for k, v in arrays.items()])
            conn.execute(models.update().where(models.c.id == model_id).values(**values))
            conn.execute(train_batches.insert().values(
                model_id=model_id, model_version=version + 1, first_report_id=first_id, last_report_id=last_id,
                n_reports=n_reports, status=status, note=note, seconds=seconds, created_at=now))
        return True

    def rotate(self, note: str) -> dict:
        """Retire the active model and start a new one at its cursor (no report lost, none reused)."""
        refuse_nul(note=note)
        with self.write(limit="long") as conn:
            self._lock(conn)    # one rotation at a time across servers, and the cursor of a step committed meanwhile
            cur = conn.execute(select(models).where(models.c.status == "active").with_for_update()).mappings().first()
            start = cur["last_report_id"] if cur is not None else 0
            if cur is not None:
                conn.execute(models.update().where(models.c.id == cur["id"])
                             .values(status="retired", retired_at=time.time(), version=cur["version"] + 1))
            new_id = self._new_model(conn, start, note)
        return {"retired_model": cur["id"] if cur is not None else None, "new_model": new_id, "starts_after_report": start}

    def batches(self, model_id: int | None = None) -> list[dict]:
        q = select(train_batches).order_by(train_batches.c.id)
        if model_id is not None:
            q = q.where(train_batches.c.model_id == model_id)
        with self.read() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def list_models(self) -> list[dict]:
        with self.read() as conn:
            return [dict(r) for r in conn.execute(
                select(models.c.id, models.c.status, models.c.version, models.c.first_report_id,
                       models.c.last_report_id, models.c.n_reports_used, models.c.n_batches, models.c.created_at,
                       models.c.retired_at, models.c.note).order_by(models.c.id)).mappings()]

    # ------------------------------------------------------------------ FedLDA
    def fed_round(self, initial_message=None) -> tuple[int, bytes]:
        """The open round and its broadcast; round 0 is created from ``initial_message()`` on first use."""
        with self.read() as conn:
            row = conn.execute(select(fed_rounds.c.round, fed_rounds.c.message)
                               .where(fed_rounds.c.status == "open")).first()
        if row is not None or initial_message is None:
            return (int(row[0]), bytes(row[1])) if row is not None else (None, None)
        with self.write(limit="long") as conn:
            self._lock(conn)
            row = conn.execute(select(fed_rounds.c.round, fed_rounds.c.message)
                               .where(fed_rounds.c.status == "open")).first()
            if row is None:
                msg = initial_message()
                conn.execute(fed_rounds.insert().values(round=0, status="open", message=msg, n_updates=0,
                                                        opened_at=time.time()))
                return 0, msg
        return int(row[0]), bytes(row[1])

    def fed_store_update(self, round_: int, client: str, key: str, sha: str, body: bytes, min_updates: int,
                         aggregate) -> tuple[str, dict]:
        """Store one validated update (and close the round once ``min_updates`` arrived), atomically.

        Outcomes: ``stored``, ``replayed`` (same key, same body), ``conflict`` (same key, other body),
        ``stale`` (the round is no longer open), ``duplicate`` (this client already sent this round).
        """
        refuse_nul(client_id=client, idempotency_key=key)
        now = time.time()
        with self.write(limit="long" if min_updates else None) as conn:   # it may close the round (aggregate)
            self._lock(conn)
            prev = conn.execute(select(fed_updates.c.round, fed_updates.c.body_sha256)
                                .where(fed_updates.c.idempotency_key == key)).first()
            if prev is not None:
                info = {"round": int(prev.round), "client": client, "idempotency_key": key}
                return ("replayed" if prev.body_sha256 == sha else "conflict"), info
            open_round = conn.execute(select(fed_rounds.c.round).where(fed_rounds.c.status == "open")).scalar()
            if open_round != round_:
                return "stale", {"round": open_round}
            dup = conn.execute(select(func.count()).select_from(fed_updates).where(
                (fed_updates.c.round == round_) & (fed_updates.c.client == client))).scalar()
            if dup:
                return "duplicate", {"round": round_, "client": client}
            conn.execute(fed_updates.insert().values(round=round_, client=client, idempotency_key=key,
                                                     body_sha256=sha, message=body, received_at=now))
            n = conn.execute(select(func.count()).select_from(fed_updates)
                             .where(fed_updates.c.round == round_)).scalar()
            conn.execute(fed_rounds.update().where(fed_rounds.c.round == round_).values(n_updates=n))
            info = {"round": round_, "client": client, "idempotency_key": key, "updates_in_round": int(n),
                    "round_closed": False}
            if min_updates and n >= min_updates:
                self._fed_close(conn, round_, aggregate)
                info["round_closed"] = True
        return "stored", info

    def fed_replay(self, key: str, sha: str) -> tuple[str, dict] | None:
        """The outcome of an update already stored under ``key`` (``replayed`` for the same body, ``conflict``
        for another), or None: a retry is answered from what was stored, whatever round is open now."""
        with self.read() as conn:
            prev = conn.execute(select(fed_updates.c.round, fed_updates.c.client, fed_updates.c.body_sha256)
                                .where(fed_updates.c.idempotency_key == key)).first()
        if prev is None:
            return None
        info = {"round": int(prev.round), "client": prev.client, "idempotency_key": key}
        return ("replayed" if prev.body_sha256 == sha else "conflict"), info

    def fed_close_round(self, aggregate) -> dict:
        with self.write(limit="long") as conn:
            self._lock(conn)
            r = conn.execute(select(fed_rounds.c.round, fed_rounds.c.n_updates)
                             .where(fed_rounds.c.status == "open")).first()
            if r is None:
                raise StorageError("no FedLDA round is open: FedLDA rounds run only on a service started with"
                                   " fed_epsilon_per_entry.")
            if r.n_updates == 0:
                raise StorageError(f"round {r.round} has no updates yet: wait for clients before closing it.")
            self._fed_close(conn, r.round, aggregate)
        return {"closed_round": int(r.round), "updates": int(r.n_updates), "open_round": int(r.round) + 1}

    def _fed_close(self, conn, round_: int, aggregate) -> None:
        bodies = [bytes(b) for (b,) in conn.execute(select(fed_updates.c.message)
                                                    .where(fed_updates.c.round == round_).order_by(fed_updates.c.id))]
        opened = conn.execute(select(fed_rounds.c.message).where(fed_rounds.c.round == round_)).scalar()
        msg = aggregate(round_, bodies, None if opened is None else bytes(opened))
        now = time.time()
        conn.execute(fed_rounds.update().where(fed_rounds.c.round == round_).values(status="closed", closed_at=now))
        conn.execute(fed_rounds.insert().values(round=round_ + 1, status="open", message=msg, n_updates=0,
                                                opened_at=now))

    def fed_released(self) -> dict | None:
        """What the latest closed FedLDA round released, or None when no round has closed: ``round`` (the latest
        closed round's number), ``rounds`` (how many have closed), ``message`` (the broadcast that round's close
        produced, which opened the next), ``n_clients`` (distinct client ids with an update in a closed round) and
        ``updates`` (``(round, updates)`` of each closed round). Every row read is final once its round closed, so
        the reads agree even where each statement sees its own snapshot (PostgreSQL)."""
        with self.read() as conn:
            closed = conn.execute(select(fed_rounds.c.round, fed_rounds.c.n_updates)
                                  .where(fed_rounds.c.status == "closed").order_by(fed_rounds.c.round)).all()
            if not closed:
                return None
            last = int(closed[-1][0])
            msg = conn.execute(select(fed_rounds.c.message).where(fed_rounds.c.round == last + 1)).scalar()
            n_clients = conn.execute(select(func.count(func.distinct(fed_updates.c.client)))
                                     .where(fed_updates.c.round <= last)).scalar()
        if msg is None:
            raise StorageError(f"FedLDA round {last} is closed but the round it opened is missing: the database is"
                               " damaged.")
        return {"round": last, "rounds": len(closed), "message": bytes(msg), "n_clients": int(n_clients or 0),
                "updates": [(int(r), int(n)) for r, n in closed]}

    def fed_participation(self, limit: int = 50) -> list[dict]:
        with self.read() as conn:
            rows = conn.execute(select(fed_updates.c.client, func.count().label("n")).group_by(fed_updates.c.client)
                                .order_by(func.count().desc()).limit(limit)).all()
        return [{"client": c, "rounds": int(n)} for c, n in rows]

    def close(self) -> None:
        with self._lazy_lock:
            if self._lazy_conn is not None:
                self._lazy_conn.close()
                self._lazy_conn = None
        self.engine.dispose()


@dataclass
class _Row:
    idempotency_key: str
    body_sha256: str
    n_reports: int
    received_at: float
    contributor: str | None = None


def _ack(key: str, n: int, at: float) -> dict:
    return {"idempotency_key": key, "reports": int(n), "stored_at": float(at)}


def _one_line(e: BaseException) -> str:
    msg = str(getattr(e, "orig", None) or e)
    return " ".join(msg.split())[:300]


def _sqlite_path(engine) -> str | None:
    """The absolute path of the SQLite file behind ``engine``; None for another database, an in-memory one or a URI
    filename."""
    if engine.dialect.name != "sqlite":
        return None
    path = engine.url.database
    if not path or path == ":memory:" or path.startswith("file:") or engine.url.query.get("uri"):
        return None
    return os.path.abspath(path)


def _may_write(path: str) -> bool:
    """Whether this process may open the file ``path`` for writing now: its mode, and attributes such as Linux's
    immutable one (``chattr +i``), which stop root too. One system call, no file opened."""
    return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def _sqlite_file_identity(engine):
    """``(absolute path, (device, inode))`` of the SQLite file behind ``engine``; None for another database, an
    in-memory one or a URI filename."""
    path = _sqlite_path(engine)
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return path, (st.st_dev, st.st_ino)


def _sqlite_setup(engine, synchronous: str = "full") -> None:
    """WAL journal, ``synchronous`` (:data:`SQLITE_SYNCHRONOUS`: by default an fsync on every commit), foreign keys,
    and explicit BEGIN (IMMEDIATE for writes)."""
    pragma = f"PRAGMA synchronous={'NORMAL' if synchronous == 'normal' else 'FULL'}"
    path = _sqlite_path(engine)

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, record):
        dbapi_conn.isolation_level = None  # let SQLAlchemy's "begin" event below emit BEGIN itself
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(pragma)
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()
        # SQLite opens a file it may not write read-only, and the connection stays so when the file is writable again
        record.info["dptopic_read_only"] = path is not None and not _may_write(path)

    @event.listens_for(engine, "checkout")
    def _checkout(_dbapi_conn, record, _proxy):
        if record.info.get("dptopic_read_only") and _may_write(path):
            # opened while the file was read-only, which it no longer is: the pool opens this one again, read-write,
            # so that no write fails for it (a read-only file refuses writes before any connection: Storage.write)
            raise DisconnectionError("opened read-only; the database file is writable again")

    @event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("dptopic_write") else "BEGIN")
