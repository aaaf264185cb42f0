"""Where a dataset ledger lives: a SQLite file (the default) or a PostgreSQL database shared by several hosts.

Both hold the same tables (:data:`TABLES`) and answer the same SQL, written once with ``?`` placeholders. A write is
one transaction that no other write interleaves with: SQLite's ``BEGIN IMMEDIATE`` takes the file's write lock; on
PostgreSQL the transaction is ``SERIALIZABLE`` and takes a transaction-level advisory lock first, so that debits
queue rather than fail and retry (a serialization failure is still retried). Reads run in a transaction of their
own and take no write lock. A file opened only to read is opened read-only: reading never creates, upgrades or
changes a ledger.

A write that finds another run's transaction holding the ledger says so once (a :class:`LedgerWaitWarning`, which
the command line prints as one ``warning:`` line) and waits at most :data:`LOCK_TIMEOUT` seconds for it, then gives
up in one line with nothing spent.

A ledger is named by a path or a URL (:func:`location_of`), whose scheme is read in any case: ``sqlite:///PATH``
(SQLAlchemy's spelling: ``sqlite:////abs/path``) is the file at ``PATH``, ``postgresql://`` (``postgres://``, or
``postgresql+DRIVER://``, read with psycopg whatever the driver) a database; any other scheme is refused.

SQLite needs nothing beyond Python; PostgreSQL needs the ``service`` extra (SQLAlchemy and psycopg), imported only
when a ``postgresql://`` ledger is named. The tables of a PostgreSQL ledger live in a schema of their own,
``dptopic_ledger``, so they never mix with another program's tables in the same database.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import sqlite3
import time
import warnings
from pathlib import Path
from urllib.parse import quote

from ..errors import DPTopicError, ParameterError, user_stacklevel

FORMAT = "dptopic-dataset-ledger"
VERSION = 4
"""The ledger's format: 1 kept releases per named dataset; 2 adds each release's documents (keyed digests), their
persons, and caps per person; 3 adds what the trainer reads of each document (its keyed bag digests and sketch
bands, :data:`_SQLITE_V3`) and the links that make several ids one person; 4 writes those keys as sorted blocks of
arrays (:data:`_SQLITE_V4`), a row a block rather than a row a key (format 3's rows are still read). An older file is
upgraded in place on its first write; read only, it is read as it is (in format 1 or 2, no document of it is known by
more than its text, no id linked)."""

APPLICATION_ID = 0x44505450
"""SQLite's application id of a dptopic ledger file ("DPTP"): a SQLite file without it is another program's."""

ENV = "DPTOPIC_LEDGER"
LOCK_TIMEOUT = 60.0
"""Seconds a write waits for another process's transaction before it gives up with one line."""
QUICK_LOCK = 0.25
"""Seconds a write waits in silence: past them it says that it waits, and for what (:class:`LedgerWaitWarning`)."""

PG_SCHEMA = "dptopic_ledger"
_PG_LOCK = 0x64707467       # the advisory lock every write takes on PostgreSQL ("dptg")

_SQLITE_TABLES = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE datasets (name TEXT PRIMARY KEY, cap_epsilon REAL, cap_delta REAL, created TEXT NOT NULL)",
    "CREATE TABLE releases (id INTEGER PRIMARY KEY AUTOINCREMENT, dataset TEXT NOT NULL REFERENCES datasets(name),"
    " kind TEXT NOT NULL, trainer TEXT NOT NULL, unit TEXT NOT NULL, events TEXT NOT NULL, epsilon REAL,"
    " delta REAL NOT NULL, guarantee INTEGER NOT NULL, time TEXT NOT NULL, model_path TEXT, note TEXT)",
)
_SQLITE_V2 = (
    "CREATE TABLE docsets (id INTEGER PRIMARY KEY AUTOINCREMENT, fingerprint TEXT NOT NULL UNIQUE,"
    " content TEXT NOT NULL, n_docs INTEGER NOT NULL, persons INTEGER NOT NULL, created TEXT NOT NULL)",
    "CREATE TABLE docs (docset INTEGER NOT NULL REFERENCES docsets(id), doc INTEGER, owner INTEGER NOT NULL,"
    " person INTEGER NOT NULL, copies INTEGER NOT NULL)",
    "CREATE INDEX docs_docset ON docs (docset)",
    "CREATE INDEX docs_doc ON docs (doc)",
    "CREATE INDEX docs_owner ON docs (owner)",
    "CREATE TABLE caps (scope TEXT PRIMARY KEY, epsilon REAL NOT NULL, delta REAL NOT NULL)",
    "ALTER TABLE releases ADD COLUMN docset INTEGER REFERENCES docsets(id)",
    "ALTER TABLE releases ADD COLUMN max_tokens INTEGER",
)
_SQLITE_V3 = (
    # every key a document is known by besides its text (keyed: its token bags before and after the vocabulary's cut,
    # each band of its sketch; its text digest too), and the document (``docs.doc``) it names, a row a key: format 3's
    # record, read still (a ledger made at format 4 keeps the table, empty, and writes its keys as key_blocks)
    "CREATE TABLE doc_keys (key INTEGER NOT NULL, doc INTEGER NOT NULL)",
    "CREATE INDEX doc_keys_key ON doc_keys (key)",
    # a document's tokens before the cut (the person rule counts long enough documents) and its compact sketch
    "CREATE TABLE doc_info (doc INTEGER PRIMARY KEY, tokens INTEGER NOT NULL, sketch BLOB)",
    # ids that are one person: each linked owner's root, and why it was linked (documents, case, alias)
    "CREATE TABLE links (owner INTEGER PRIMARY KEY, root INTEGER NOT NULL, why TEXT NOT NULL)",
    # each person's id folded (case, Unicode form, white space), keyed: the same address in another case
    "CREATE TABLE id_keys (key INTEGER NOT NULL, owner INTEGER NOT NULL)",
    "CREATE INDEX id_keys_key ON id_keys (key)",
)
_SQLITE_V4 = (
    # the same (key, doc) pairs as doc_keys, a block of them a row: ``n`` pairs, sorted by key then document, each
    # column n little-endian int64 (:mod:`dptopic.dataset_ledger.key_blocks`); at 10^6 documents 3.5 x 10^7 pairs
    # are about 35 rows, written and read in seconds, where a row a pair and its index took a minute
    "CREATE TABLE key_blocks (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER NOT NULL, keys BLOB NOT NULL,"
    " docs BLOB NOT NULL)",
)
_PG_V3 = tuple(t.replace("INTEGER NOT NULL", "BIGINT NOT NULL").replace("INTEGER PRIMARY KEY", "BIGINT PRIMARY KEY")
               .replace("BLOB", "BYTEA") for t in _SQLITE_V3)
_PG_V4 = ("CREATE TABLE key_blocks (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, n BIGINT NOT NULL,"
          " keys BYTEA NOT NULL, docs BYTEA NOT NULL)",)
_PG_TABLES = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE datasets (name TEXT PRIMARY KEY, cap_epsilon DOUBLE PRECISION, cap_delta DOUBLE PRECISION,"
    " created TEXT NOT NULL)",
    "CREATE TABLE docsets (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, fingerprint TEXT NOT NULL UNIQUE,"
    " content TEXT NOT NULL, n_docs BIGINT NOT NULL, persons INTEGER NOT NULL, created TEXT NOT NULL)",
    "CREATE TABLE releases (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,"
    " dataset TEXT NOT NULL REFERENCES datasets(name), kind TEXT NOT NULL, trainer TEXT NOT NULL, unit TEXT NOT NULL,"
    " events TEXT NOT NULL, epsilon DOUBLE PRECISION, delta DOUBLE PRECISION NOT NULL, guarantee INTEGER NOT NULL,"
    " time TEXT NOT NULL, model_path TEXT, note TEXT, docset BIGINT REFERENCES docsets(id), max_tokens BIGINT)",
    "CREATE TABLE docs (docset BIGINT NOT NULL REFERENCES docsets(id), doc BIGINT, owner BIGINT NOT NULL,"
    " person INTEGER NOT NULL, copies BIGINT NOT NULL)",
    "CREATE INDEX docs_docset ON docs (docset)",
    "CREATE INDEX docs_doc ON docs (doc)",
    "CREATE INDEX docs_owner ON docs (owner)",
    "CREATE TABLE caps (scope TEXT PRIMARY KEY, epsilon DOUBLE PRECISION NOT NULL, delta DOUBLE PRECISION NOT NULL)",
)
TABLES = {"meta", "datasets", "releases", "docsets", "docs", "caps"}
TABLES_V3 = {"doc_keys", "doc_info", "links", "id_keys"}
TABLES_V4 = {"key_blocks"}


def _missing_tables(version: int, tables: set) -> bool:
    """Whether a ledger of ``version`` lacks a table its format has."""
    return (version >= 2 and not TABLES <= tables or version >= 3 and not TABLES_V3 <= tables
            or version >= 4 and not TABLES_V4 <= tables)


class _LedgerError(ParameterError):
    """A refusal of the ledger a caller named (``ledger``): its template names the parameter (``{ledger=} PATH``),
    every other field is written as given."""

    def __init__(self, template: str, **fields):
        super().__init__(template, "ledger", **fields)


class LedgerFileError(_LedgerError):
    """The ledger is not a dptopic ledger (corrupt, another program's, newer, damaged) or cannot be opened:
    nothing was spent."""


class LedgerMissing(_LedgerError):
    """No ledger where one was to be read: nothing has been recorded there yet."""


_SCHEME = re.compile(r"\s*([A-Za-z][A-Za-z0-9+.\-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres")


def url_scheme(location) -> str | None:
    """The scheme of a ledger named by a URL, in lower case (``POSTGRESQL://`` is ``postgresql``), or None for a path
    (a Windows drive, ``C://``, is one letter: a path)."""
    if not isinstance(location, str):
        return None
    m = _SCHEME.match(location)
    return m.group(1).lower() if m is not None and len(m.group(1)) > 1 else None


def is_url(location) -> bool:
    """Whether ``location`` names a PostgreSQL ledger (``postgresql://...``, in any case and with any driver) rather
    than a file."""
    scheme = url_scheme(location)
    return scheme is not None and (scheme in POSTGRES_SCHEMES or scheme.startswith("postgresql+"))


def location_of(text: str, given_as: str | None = None):
    """The ledger ``text`` names: a ``postgresql://`` URL (its scheme in lower case), or a :class:`~pathlib.Path`
    (``~`` expanded; ``sqlite:///PATH`` is the file at ``PATH``). A URL of any other scheme, or a ``sqlite://`` URL
    that names no file, is refused in one line naming ``ledger`` (``given_as``: the environment variable that gave
    it, named instead)."""
    s = str(text).strip()
    scheme = url_scheme(s)
    if scheme is None:
        return Path(os.path.expanduser(s))
    rest = s[_SCHEME.match(s).end():]
    if is_url(s):
        return scheme + "://" + rest
    if scheme == "sqlite":
        path = rest[1:] if rest.startswith("/") else None       # sqlite:///rel, sqlite:////abs: no host
        if path and path != ":memory:" and "?" not in path:
            return Path(os.path.expanduser(path))
        why = ("names no file: give sqlite:///PATH (a relative path) or sqlite:////PATH (an absolute one), or the"
               " path alone")
    else:
        why = (f"is a {scheme}:// URL: a ledger is a SQLite file (a path, or sqlite:///PATH) or a PostgreSQL"
               " database (postgresql://USER@HOST/DB)")
    if given_as is not None:
        raise DPTopicError(f"{given_as}={s[:80]!r} {why}.")
    raise ParameterError("{ledger=} {why}.", "ledger", s, key="dataset_ledger.store.ledger_url", shown=s[:200],
                         why=why)


class Tx:
    """One transaction: ``all``/``one`` read rows, ``run`` and ``many`` write, ``insert`` returns the new row's id."""

    def __init__(self, cursor, postgres: bool):
        self._cur, self._pg = cursor, postgres

    @property
    def postgres(self) -> bool:
        """Whether this transaction is on PostgreSQL (else SQLite)."""
        return self._pg

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self._pg else sql

    def all(self, sql: str, params=()) -> list:
        self._cur.execute(self._sql(sql), tuple(params))
        return [tuple(r) for r in self._cur.fetchall()]

    def batches(self, sql: str, size: int, params=()):
        """The rows of ``sql``, ``size`` at a time (lists of tuples); no other statement may run on this transaction
        until the last batch is read."""
        self._cur.execute(self._sql(sql), tuple(params))
        while True:
            rows = self._cur.fetchmany(size)
            if not rows:
                return
            yield [tuple(r) for r in rows]

    def one(self, sql: str, params=()):
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def run(self, sql: str, params=()) -> None:
        self._cur.execute(self._sql(sql), tuple(params))

    def many(self, sql: str, rows) -> None:
        self._cur.executemany(self._sql(sql), rows)

    def insert(self, sql: str, params=()) -> int:
        if self._pg:
            self._cur.execute(self._sql(sql) + " RETURNING id", tuple(params))
            return int(self._cur.fetchone()[0])
        self._cur.execute(sql, tuple(params))
        return int(self._cur.lastrowid)


class Store:
    """A ledger's storage; :meth:`transaction` yields a :class:`Tx`. ``where`` names it in messages (a URL without its
    password)."""

    kind = "sqlite"
    where: str = ""

    def fix(self) -> str:
        return "give another with {ledger=} PATH or {env}, or move this one away (docs/budget.md)"

    def bad(self, why: str) -> LedgerFileError:
        return LedgerFileError("ledger {where} {why}: nothing was spent; " + self.fix() + ".", where=self.where,
                               why=why, env=ENV)

    RETRIES = 8

    def run(self, fn, write: bool = False):
        """``fn(tx)`` in one transaction, run again (from the start: nothing of the failed try committed) after a
        serialization failure, at most :attr:`RETRIES` times; a write that found the ledger held past
        :data:`QUICK_LOCK` says so once (:func:`say_waiting`) and is run again waiting up to :data:`LOCK_TIMEOUT`."""
        attempt, wait = 0, None
        while True:
            try:
                with self.transaction(write=write, wait=wait) as tx:
                    return fn(tx)
            except _Retry:
                attempt += 1
                if attempt == self.RETRIES:
                    raise DPTopicError(f"ledger {self.where}: {self.RETRIES} transactions in a row conflicted with"
                                       " other runs: nothing was spent; run again.") from None
                time.sleep(0.05 * attempt)
            except _Locked:         # held past QUICK_LOCK: said once, then waited for up to LOCK_TIMEOUT
                if wait is not None:
                    raise DPTopicError(f"ledger {self.where} stayed locked by another run for {LOCK_TIMEOUT:g} s:"
                                       " nothing was spent; run again when it ends.") from None
                say_waiting(self.where)
                wait = LOCK_TIMEOUT


class _Retry(Exception):
    """A transaction that PostgreSQL could not serialize: rolled back, to be run again."""


class _Locked(Exception):
    """A write that did not get the ledger's lock within its wait: rolled back, nothing done."""


class LedgerWaitWarning(UserWarning):
    """A write waits for another run's transaction on the same ledger (said once, before the wait)."""


def say_waiting(where: str) -> None:
    """Say, once per wait, that a write waits for the ledger and for how long at most."""
    warnings.warn(f"ledger {where} is held by another run's transaction: waiting up to {LOCK_TIMEOUT:g} s for it to"
                  " end (nothing is spent while it waits).", LedgerWaitWarning, stacklevel=user_stacklevel())


# ------------------------------------------------------------------------------------------------------- SQLite
class SQLiteStore(Store):
    """A ledger file. ``read_only``: opened to read (never created, upgraded or written)."""

    kind = "sqlite"

    def __init__(self, path, read_only: bool = False):
        self.path = Path(os.path.expanduser(str(path)))
        self.where = str(self.path)
        self.read_only = read_only
        self._check_path()

    def _check_path(self) -> None:
        p = self.path
        try:
            os.stat(p)
        except FileNotFoundError:
            if os.path.islink(p):
                raise self.bad("is a symbolic link that leads nowhere (its target is missing, or the links make a"
                               " loop)") from None
            if self.read_only:
                raise LedgerMissing("no ledger at {where}: nothing has been recorded there yet (give {ledger=} PATH or"
                                    " {env} to read another).", where=p, env=ENV)
            return
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise self.bad("is a symbolic link that leads nowhere (its target is missing, or the links make a"
                               " loop)") from None
            if e.errno == errno.ENAMETOOLONG:
                raise LedgerFileError("ledger path {short}... is too long for this system: nothing was spent; give a"
                                      " shorter path with {ledger=} PATH.", short=str(p)[:80]) from None
            raise self.bad(f"cannot be read ({e.strerror or e})") from None
        if p.is_dir():
            raise LedgerFileError("ledger {where} is a folder: give a file ({ledger=} PATH, {env}).", where=p, env=ENV)
        if not p.is_file():
            raise self.bad("is not a regular file (a pipe, a device or a socket)")
        if self.read_only and p.stat().st_size == 0:
            raise self.bad("is an empty file, not a ledger (a run that spends creates one)")

    def _connect(self):
        if not self.read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                if e.errno == errno.ENAMETOOLONG:
                    raise LedgerFileError("ledger path {short}... is too long for this system: nothing was spent;"
                                          " give a shorter path with {ledger=} PATH.",
                                          short=str(self.path)[:80]) from None
                raise self.bad(f"cannot be created ({e.strerror or e})") from None
        try:
            if self.read_only:
                return sqlite3.connect(f"file:{quote(str(self.path.resolve()))}?mode=ro", uri=True,
                                       timeout=LOCK_TIMEOUT, isolation_level=None)
            return sqlite3.connect(str(self.path), timeout=LOCK_TIMEOUT, isolation_level=None)
        except sqlite3.Error as e:
            raise self.bad(f"cannot be opened ({e})") from None

    @contextlib.contextmanager
    def transaction(self, write: bool = False, wait=None):
        """One transaction (``write``: with the file's write lock; ``wait`` is the PostgreSQL store's: SQLite waits
        in :meth:`_begin_write`)."""
        if write and self.read_only:
            raise self.bad("was opened to read only")
        con = self._connect()
        try:
            if write:
                self._begin_write(con)
            else:
                con.execute("BEGIN")
            yield Tx(con.cursor(), postgres=False)
            con.execute("COMMIT")
        except sqlite3.OperationalError as e:
            self._rollback(con)
            text = str(e)
            if "locked" in text or "busy" in text:
                raise DPTopicError(f"ledger {self.path} stayed locked by another run for {LOCK_TIMEOUT:g} s: nothing"
                                   " was spent; run again when it ends.") from None
            if "readonly" in text.replace(" ", "").replace("-", ""):
                raise self.bad("is read-only (this user may not write it, or it lies on a read-only disk)") from None
            raise self.bad(f"could not be read or written ({text})") from None
        except sqlite3.DatabaseError as e:
            self._rollback(con)
            raise self.bad(f"is not a dptopic ledger ({e})") from None
        except BaseException:
            self._rollback(con)
            raise
        finally:
            con.close()

    def _begin_write(self, con) -> None:
        """``BEGIN IMMEDIATE``: the file's write lock, waited for in silence for :data:`QUICK_LOCK` seconds, then,
        once said (:class:`LedgerWaitWarning`), up to :data:`LOCK_TIMEOUT`."""
        con.execute(f"PRAGMA busy_timeout = {int(min(QUICK_LOCK, LOCK_TIMEOUT) * 1000)}")
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) and "busy" not in str(e):
                raise
            say_waiting(self.where)
            con.execute(f"PRAGMA busy_timeout = {int(LOCK_TIMEOUT * 1000)}")
            con.execute("BEGIN IMMEDIATE")
        con.execute(f"PRAGMA busy_timeout = {int(LOCK_TIMEOUT * 1000)}")

    @staticmethod
    def _rollback(con) -> None:
        try:
            if con.in_transaction:
                con.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def open(self, create: bool) -> int:
        """Check the file is a dptopic ledger (``create``: make one of a new or empty file; upgrade a version-1 file)
        and return its version."""
        with self.transaction(write=False) as tx:
            app = tx.one("PRAGMA application_id")[0]
            tables = {r[0] for r in tx.all("SELECT name FROM sqlite_master WHERE type='table'")}
        if app not in (0, APPLICATION_ID):
            raise self.bad("belongs to another program (its SQLite application id is not dptopic's)")
        if app == 0 and tables:
            raise self.bad("is another program's SQLite file (it has tables of its own)")
        if app == 0 and not create:
            raise self.bad("is an empty SQLite database, not a ledger")
        if app == APPLICATION_ID:
            version = self._version(tables)
            if version == VERSION or not create:
                return version
        with self.transaction(write=True) as tx:     # create, or upgrade version 1; another process may have meanwhile
            app = tx.one("PRAGMA application_id")[0]
            tables = {r[0] for r in tx.all("SELECT name FROM sqlite_master WHERE type='table'")}
            if app == APPLICATION_ID:
                version = self._version(tables, tx)
                if version < VERSION:
                    for stmt in ((_SQLITE_V2 if version < 2 else ()) + (_SQLITE_V3 if version < 3 else ())
                                 + _SQLITE_V4):
                        tx.run(stmt)
                    tx.run("UPDATE meta SET value = ? WHERE key = 'version'", (str(VERSION),))
                return VERSION
            if tables:
                raise self.bad("is another program's SQLite file (it has tables of its own)")
            for stmt in _SQLITE_TABLES + _SQLITE_V2 + _SQLITE_V3 + _SQLITE_V4:
                tx.run(stmt)
            tx.many("INSERT INTO meta VALUES (?, ?)", [("format", FORMAT), ("version", str(VERSION))])
            tx.run(f"PRAGMA application_id = {APPLICATION_ID}")
        return VERSION

    def _version(self, tables: set, tx=None) -> int:
        if not {"meta", "datasets", "releases"} <= tables:
            raise self.bad("is damaged (its tables are missing)")
        if tx is None:
            with self.transaction(write=False) as t:
                meta = dict(t.all("SELECT key, value FROM meta"))
        else:
            meta = dict(tx.all("SELECT key, value FROM meta"))
        version = check_meta(self, meta)
        if _missing_tables(version, tables):
            raise self.bad("is damaged (its tables are missing)")
        return version


def check_meta(store: Store, meta: dict) -> int:
    """The version a ledger's ``meta`` table states, refused in one line when it is not a dptopic ledger's or newer."""
    if meta.get("format") != FORMAT:
        raise store.bad(f"is not a dptopic ledger (its format is {str(meta.get('format'))[:40]!r})")
    try:
        version = int(meta.get("version", ""))
    except ValueError:
        raise store.bad("is damaged (no version)") from None
    if version > VERSION:
        raise store.bad(f"was written by a newer dptopic (ledger version {version}; this one reads up to {VERSION}):"
                        " upgrade dptopic")
    if version < 1:
        raise store.bad(f"is damaged (version {version})")
    return version


# --------------------------------------------------------------------------------------------------- PostgreSQL
class PostgresStore(Store):
    """A ledger in a PostgreSQL database, ``postgresql://USER@HOST/DB`` (schema :data:`PG_SCHEMA`)."""

    kind = "postgresql"

    def __init__(self, url: str, read_only: bool = False):
        try:
            import sqlalchemy  # optional: the [service] extra; only a PostgreSQL ledger needs it
            from sqlalchemy.engine import make_url  # as above
            from sqlalchemy.pool import NullPool  # as above
        except ImportError:
            raise DPTopicError("a ledger on PostgreSQL needs SQLAlchemy and psycopg: pip install 'dptopic[service]'"
                               " (a file ledger needs neither).") from None
        try:
            u = make_url(url)
        except Exception:       # noqa: BLE001 - SQLAlchemy's parse error: the URL is malformed
            raise DPTopicError(f"invalid ledger URL {url[:60]!r}: give postgresql://USER@HOST[:PORT]/DATABASE.") \
                from None
        shown = u.render_as_string(hide_password=True)       # as the user wrote it, without its password
        if u.drivername.split("+")[0] in POSTGRES_SCHEMES:     # any driver named: read with psycopg, dptopic's
            u = u.set(drivername="postgresql+psycopg")
        try:
            import psycopg  # noqa: F401 - optional (the [service] extra), checked here for a one-line message
        except ImportError:
            raise DPTopicError("a ledger on PostgreSQL needs psycopg: pip install 'dptopic[service]'.") from None
        self.where = shown
        self.read_only = read_only
        self.ready = False      # its tables checked or created (open)
        self._sa = sqlalchemy
        self.engine = sqlalchemy.create_engine(u, poolclass=NullPool, connect_args={"connect_timeout": 10})

    def fix(self) -> str:
        return "give another with {ledger=} URL or {env} (docs/budget.md)"

    @contextlib.contextmanager
    def transaction(self, write: bool = False, wait: float | None = None):
        """One transaction (``write``: serializable, behind the ledger's lock, waited for ``wait`` seconds, by default
        :data:`QUICK_LOCK`, before :class:`_Locked` is raised)."""
        if write and self.read_only:
            raise self.bad("was opened to read only")
        exc = self._sa.exc
        wait = min(QUICK_LOCK, LOCK_TIMEOUT) if wait is None else wait
        try:
            with self.engine.connect() as conn:
                conn = conn.execution_options(isolation_level="SERIALIZABLE" if write else "REPEATABLE READ")
                with conn.begin():
                    cur = conn.connection.driver_connection.cursor()
                    cur.execute(f"SET LOCAL search_path TO {PG_SCHEMA}")
                    if write:       # SET takes no snapshot either: the wait is bounded, then said (Store.run)
                        cur.execute(f"SET LOCAL lock_timeout = '{max(1, int(wait * 1000))}ms'")
                    if write and self.ready:
                        # debits queue here, one at a time, rather than fail and retry: LOCK takes no snapshot, so
                        # the transaction's snapshot is taken after the lock, when the writer before it committed
                        cur.execute(f"LOCK TABLE {PG_SCHEMA}.meta IN SHARE ROW EXCLUSIVE MODE")
                    elif write:     # creating the tables: no table to lock yet
                        cur.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK,))
                    if write:
                        cur.execute("SET LOCAL lock_timeout = DEFAULT")
                    yield Tx(cur, postgres=True)
        except exc.DBAPIError as e:
            code = getattr(getattr(e, "orig", None), "sqlstate", None)
            if code == "40001":
                raise _Retry() from None
            if code == "55P03":
                raise _Locked() from None
            raise self._error(e) from None
        except exc.SQLAlchemyError as e:
            raise self.bad(f"could not be read or written ({' '.join(str(e).split())[:160]})") from None
        except Exception as e:      # psycopg's own errors raised through the raw cursor
            if type(e).__module__.split(".")[0] == "psycopg":
                if getattr(e, "sqlstate", None) == "40001":
                    raise _Retry() from None
                if getattr(e, "sqlstate", None) == "55P03":     # lock_not_available: lock_timeout passed
                    raise _Locked() from None
                raise self._error(e) from None
            raise

    def _error(self, e) -> DPTopicError:
        orig = getattr(e, "orig", e)
        text = " ".join(str(orig or e).split())[:200]
        code = getattr(orig, "sqlstate", None)
        if code in ("25006",) or "read-only" in text:
            return self.bad("is read-only (this database user may not write it)")
        if type(orig).__name__ in ("OperationalError", "InterfaceError") or code is None or code.startswith("08") \
                or code.startswith("57"):
            return DPTopicError(f"ledger {self.where} could not be reached, or went away during the transaction"
                                f" ({text}): nothing was spent (the transaction did not commit); run again when the"
                                " database answers.")
        return self.bad(f"could not be read or written ({text})")

    def open(self, create: bool) -> int:
        with self.transaction(write=False) as tx:
            present = tx.one("SELECT 1 FROM information_schema.schemata WHERE schema_name = ?", (PG_SCHEMA,))
            tables = {r[0] for r in tx.all("SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
                                           (PG_SCHEMA,))}
            meta = dict(tx.all("SELECT key, value FROM meta")) if "meta" in tables else None
        if meta is not None:
            version = check_meta(self, meta)
            if _missing_tables(max(version, 2), tables):
                raise self.bad("is damaged (its tables are missing)")
            self.ready = True
            if version < VERSION and create:
                def upgrade(tx):
                    now = int(tx.one("SELECT value FROM meta WHERE key = 'version'")[0])
                    if now < VERSION:
                        for stmt in (_PG_V3 if now < 3 else ()) + _PG_V4:
                            tx.run(_in_schema(stmt))
                        tx.run("UPDATE meta SET value = ? WHERE key = 'version'", (str(VERSION),))
                self.run(upgrade, write=True)
                return VERSION
            return version
        if tables:
            raise self.bad(f"holds a schema {PG_SCHEMA!r} of another program (it has tables of its own)")
        if not create:
            raise LedgerMissing("no ledger at {where}: nothing has been recorded there yet (give {ledger=} URL or"
                                " {env} to read another).", where=self.where, env=ENV)
        def make(tx):
            if present is None:
                tx.run(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}")
            if tx.one("SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = 'meta'",
                      (PG_SCHEMA,)) is None:
                for stmt in _PG_TABLES + _PG_V3 + _PG_V4:
                    tx.run(_in_schema(stmt))
                tx.many(f"INSERT INTO {PG_SCHEMA}.meta VALUES (?, ?)", [("format", FORMAT), ("version", str(VERSION))])
        self.run(make, write=True)      # another run creating it meanwhile: waited for, as a debit waits
        self.ready = True
        return VERSION


def _in_schema(stmt: str) -> str:
    """A table's statement with its tables named in :data:`PG_SCHEMA`."""
    return re.sub(r"(CREATE TABLE |REFERENCES | ON )(\w+)", lambda m: f"{m.group(1)}{PG_SCHEMA}.{m.group(2)}", stmt)


def open_store(location, read_only: bool = False) -> Store:
    """The store ``location`` names: a ``postgresql://`` URL, else a file path."""
    if is_url(location):
        return PostgresStore(str(location), read_only=read_only)
    return SQLiteStore(location, read_only=read_only)
