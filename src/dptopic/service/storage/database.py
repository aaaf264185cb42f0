"""The service's database connection: one SQLAlchemy engine and its transactions (:meth:`Database.write`,
:meth:`Database.read`, each under the time limit of :mod:`~dptopic.service.storage.deadline` on PostgreSQL), the
checks that a write may go ahead (the SQLite file still there and writable, the role's privileges), and the
migrations (:mod:`~dptopic.service.storage.schema`). What is stored and read lives in the classes built on it, which
:class:`~dptopic.service.storage.Storage` joins."""
from __future__ import annotations

import os
import time
from contextlib import contextmanager

from sqlalchemy import func, select, text
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from .deadline import within
from .engine import DEFAULT_TIMEOUT, MIN_LONG_TIMEOUT, may_write, open_engine, safe_url, sqlite_file_identity
from .errors import StorageError, StoragePermissionError, database_error, is_permission_error, one_line
from .schema import MIGRATIONS, SCHEMA_VERSION, TABLE_PRIVILEGES, WRITE_PROBE_KEY, metadata, schema_table, submissions

_PG_INSERT_LOCK = 0x6470746F  # advisory lock key serializing report inserts on PostgreSQL ("dpto")


class Database:
    """The service's database (thread-safe: one SQLAlchemy engine, connections from its pool): its transactions,
    the checks before a write, and the migrations."""

    def __init__(self, url: str, echo: bool = False, timeout: float | None = DEFAULT_TIMEOUT,
                 long_timeout: float | None = None):
        """``timeout``: seconds a transaction or read may take on PostgreSQL, counted from its start (None or 0: no
        limit); ``long_timeout``: the same for the trainer's commit, a rotation, a FedLDA round's close and the
        model's arrays (default ``max(10 * timeout, MIN_LONG_TIMEOUT)``). SQLite waits for its lock up to 30 s."""
        self.url = url
        self.timeout = float(timeout) if timeout else None
        self.long_timeout = (float(long_timeout) if long_timeout else
                             max(10 * self.timeout, MIN_LONG_TIMEOUT) if self.timeout else None)
        #: SQLite's ``synchronous`` (:data:`~dptopic.service.storage.engine.SQLITE_SYNCHRONOUS`, from the URL's
        #: ``?synchronous=``); None on PostgreSQL
        self.engine, self.synchronous = open_engine(url, echo, self.timeout)
        self.dialect = self.engine.dialect.name
        #: the driver's own error class: what the statements sent to it directly raise (SQLAlchemy wraps only what it
        #: runs itself)
        self._driver_error = self.engine.dialect.loaded_dbapi.Error
        self._sqlite_file = None
        self.migrate()
        self._sqlite_file = sqlite_file_identity(self.engine)

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden (for logs and errors)."""
        return safe_url(self.url)

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
            with within(seconds, deadline), self.engine.connect() as conn:
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
            raise database_error(e) from e

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
        check-out, ``engine._sqlite_setup``). A removed or replaced file is refused as :meth:`check_file` says. One
        system call; nothing on PostgreSQL or for an in-memory database."""
        if self._sqlite_file is None or may_write(self._sqlite_file[0]):
            return
        self.check_file()
        raise StoragePermissionError(f"the database file {self._sqlite_file[0]!r} is read-only: nothing is stored"
                                     " until it is writable again; make it writable (no restart is needed).")

    @contextmanager
    def read(self, limit=None):
        """A read; ``limit`` as :meth:`write`'s (the session's ``statement_timeout`` stays ``timeout``'s)."""
        seconds = self._limit(limit)
        try:
            with within(seconds), self.engine.connect() as conn:
                if self.dialect == "postgresql" and seconds != self.timeout:
                    conn.exec_driver_sql(f"SET LOCAL statement_timeout = {int(round((seconds or 0) * 1000))}")
                yield conn
        except SQLAlchemyError as e:
            raise database_error(e) from e

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
                    missing = _missing_privileges(conn)
                    conn.rollback()
                if not missing:
                    _probe_insert(conn)
        except SQLAlchemyError as e:
            if not is_permission_error(e):
                raise StorageError(f"database error: {one_line(e)}") from e
            missing.setdefault("INSERT", []).append("submissions")
            cause = f" ({one_line(e)})"
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

    def close(self) -> None:
        self.engine.dispose()


def _missing_privileges(conn) -> dict[str, list[str]]:
    """``{privilege: [table or sequence, ...]}`` that the role of ``conn`` (PostgreSQL) lacks of what the service does
    to its tables (:data:`~dptopic.service.storage.schema.TABLE_PRIVILEGES`) and their id sequences, read from the
    catalog; a table not created yet is left to :meth:`Database.migrate`."""
    missing: dict[str, list[str]] = {}
    for table, privileges in TABLE_PRIVILEGES.items():
        if conn.execute(text("SELECT to_regclass(:t) IS NULL"), {"t": table}).scalar():
            continue    # not created yet: migrate() reports that
        for privilege in privileges:
            if not conn.execute(text("SELECT has_table_privilege(:t, :p)"), {"t": table, "p": privilege}).scalar():
                missing.setdefault(privilege, []).append(table)
        seq = conn.execute(text("SELECT pg_get_serial_sequence(:t, 'id')"), {"t": table}).scalar() \
            if "id" in metadata.tables[table].c else None
        if seq is not None and not conn.execute(
                text("SELECT has_sequence_privilege(:s, 'USAGE') OR has_sequence_privilege(:s, 'UPDATE')"),
                {"s": seq}).scalar():
            missing.setdefault("USAGE", []).append(seq)
    return missing


def _probe_insert(conn) -> None:
    """Insert one submission row on ``conn`` in a transaction that is rolled back: refused (a driver's error) by a
    read-only file, connection, transaction or replica; a constraint refusing the row means the INSERT was allowed."""
    conn = conn.execution_options(dptopic_write=True)
    tx = conn.begin()
    try:
        # a key no upload can send (spaces and '#' are outside the Idempotency-Key alphabet), so no contributor's row
        # can collide with the probe
        conn.execute(submissions.insert().values(idempotency_key=WRITE_PROBE_KEY, body_sha256="0" * 64,
                                                 contributor=None, n_reports=0, received_at=time.time()))
    except IntegrityError:
        pass        # a constraint refused the row: the INSERT itself was allowed
    finally:
        tx.rollback()
