"""The service's database engine: which URLs it takes (SQLite or PostgreSQL, checked before any driver answers), how
each is opened (SQLite in WAL mode with its ``synchronous`` option; PostgreSQL at READ COMMITTED with time limits),
and the SQLite file's identity and writability that the writes check."""
from __future__ import annotations

import os

from sqlalchemy import create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError, SQLAlchemyError

from .deadline import pg_deadline_setup
from .errors import DatabaseError, StorageError, one_line
from .schema import metadata


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
        raise StorageError(f"cannot use database {safe_url(url)!r}: {one_line(e)}") from None
    return sorted(set(names) - set(metadata.tables))


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


def open_engine(url: str, echo: bool = False, timeout: float | None = None):
    """``(engine, synchronous)``: a SQLAlchemy engine for ``url`` as the service uses it, and SQLite's
    ``synchronous`` (:data:`SQLITE_SYNCHRONOUS`, from the URL's ``?synchronous=``; None on PostgreSQL). ``timeout``:
    the server-side limits of every PostgreSQL session (:func:`_pg_connect_args`). A URL no engine can be made for is
    a one-line :class:`StorageError`."""
    check_backend(url)
    try:
        if url.startswith("sqlite"):
            engine_url, synchronous = sqlite_synchronous(url)
            engine = create_engine(engine_url, echo=echo, connect_args={"timeout": 30, "check_same_thread": False})
            _sqlite_setup(engine, synchronous)
            return engine, synchronous
        # READ COMMITTED whatever the database's default_transaction_isolation says: the writers take the advisory
        # lock and only then look up the stored keys and bodies (store), the rounds (fed_store_update) or the active
        # model (rotate), and those lookups must see what the previous lock holder committed. Under REPEATABLE READ or
        # SERIALIZABLE the snapshot is taken by the lock statement itself, before the wait: a nonce-carrying body
        # committed meanwhile by another server would be stored twice, and a retried key would hit the unique index
        # (503) instead of being answered as a replay.
        # connect_timeout: a database host that accepts the connection but never answers (or drops its packets) would
        # otherwise hold start-up, and every upload behind the writer thread, for ever; the URL's own
        # ?connect_timeout= wins. statement_timeout and lock_timeout: the server ends a statement that runs (or waits
        # for a lock held by a stuck peer) past the limit; the deadline connection (pg_deadline_setup) ends a wait for
        # a server that does not answer at all.
        engine = create_engine(url, echo=echo, pool_size=12, max_overflow=8, pool_pre_ping=True,
                               isolation_level="READ COMMITTED", connect_args=_pg_connect_args(url, timeout))
        if engine.dialect.driver == "psycopg":
            pg_deadline_setup(engine)
        return engine, None
    except (SQLAlchemyError, ImportError, ValueError) as e:
        raise StorageError(f"cannot use database {safe_url(url)!r}: {one_line(e)}") from None


def _sqlite_path(engine) -> str | None:
    """The absolute path of the SQLite file behind ``engine``; None for another database, an in-memory one or a URI
    filename."""
    if engine.dialect.name != "sqlite":
        return None
    path = engine.url.database
    if not path or path == ":memory:" or path.startswith("file:") or engine.url.query.get("uri"):
        return None
    return os.path.abspath(path)


def may_write(path: str) -> bool:
    """Whether this process may open the file ``path`` for writing now: its mode, and attributes such as Linux's
    immutable one (``chattr +i``), which stop root too. One system call, no file opened."""
    return os.access(path, os.W_OK, effective_ids=os.access in os.supports_effective_ids)


def sqlite_file_identity(engine):
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
        record.info["dptopic_read_only"] = path is not None and not may_write(path)

    @event.listens_for(engine, "checkout")
    def _checkout(_dbapi_conn, record, _proxy):
        if record.info.get("dptopic_read_only") and may_write(path):
            # opened while the file was read-only, which it no longer is: the pool opens this one again, read-write,
            # so that no write fails for it (a read-only file refuses writes before any connection: Database.write)
            raise DisconnectionError("opened read-only; the database file is writable again")

    @event.listens_for(engine, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("dptopic_write") else "BEGIN")
