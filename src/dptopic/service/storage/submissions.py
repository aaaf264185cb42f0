"""Uploads stored: each upload's submission row and its reports, many uploads in one transaction (group commit,
:meth:`SubmissionStore.store`), on SQLite straight on the driver's connection, and the fsync of the write-ahead log
that a commit may leave to a thread of its own (:meth:`SubmissionStore.sync`)."""
from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from sqlalchemy.exc import SQLAlchemyError

from .database import Database
from .engine import DEFAULT_TIMEOUT, may_write
from .errors import StorageError, database_error, is_permission_error, one_line, refuse_nul


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


class SubmissionStore(Database):
    """The uploads (tables ``submissions`` and ``reports``): stored in group commits, each acknowledged only once
    durable."""

    def __init__(self, url: str, echo: bool = False, timeout: float | None = DEFAULT_TIMEOUT,
                 long_timeout: float | None = None):
        """As :class:`~dptopic.service.storage.database.Database`'s."""
        #: the driver connection that commits without waiting for the disk (store(durable=False)), kept out of the
        #: pool at synchronous=NORMAL, and the lock of its one user at a time
        self._lazy_conn = None
        self._lazy_lock = threading.Lock()
        super().__init__(url, echo, timeout, long_timeout)
        #: the driver's parameter marker, for the statements :meth:`store` sends to it directly
        self._placeholder = "?" if self.dialect == "sqlite" else "%s"

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
            raise StorageError(f"the database file {path!r} could not be synced to its disk ({one_line(e)}); retry"
                               " later.") from None
        raise StorageError(f"the database file {path!r} was removed while this server was using it: restore the file"
                           " and restart the server.")

    def store(self, batch: list[Submission], deadline: float | None = None,
              durable: bool = True) -> list[tuple[str, dict]]:
        """Store many submissions in ONE transaction (group commit).

        Returns one ``(outcome, info)`` per submission: ``("stored", ack)``, ``("replayed", ack)`` for a key already
        stored with the same body (its ack names the pseudonym the reports are tallied under: only the uploader knows
        the key), ``("conflict", ack)`` for a key already used with another body, ``("duplicate", info)`` for a new key
        whose body carries an upload nonce (``Submission.unique_body``) and (its SHA-256) was already stored under
        another key, or earlier in this batch (``info``: when it was stored and how many reports; not its key nor its
        pseudonym, which whoever holds the bytes must not learn). Nothing is acknowledged before the commit returns.
        The lookups run inside the write transaction, under the lock that serializes writers across processes, so two
        uploads of one body at once, even to two servers on one database, store it once. ``deadline``
        (``time.monotonic()``, PostgreSQL): when the transaction must have ended (default: ``timeout`` from now), else
        :class:`StorageTimeout` and nothing is stored. ``durable=False`` (a file that :attr:`syncs_separately`): the
        commit does not wait for the disk, and the caller acknowledges nothing of it before a :meth:`sync` begun after
        it returned.
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
            raise database_error(e) from e
        try:
            return self._commit_sqlite(raw, batch)
        finally:
            raw.close()                 # back to the pool (a no-op once invalidated)

    def _lazy_connection(self):
        """The connection of commits that leave their fsync to :meth:`sync`: a pool connection kept out of the pool
        for them alone, at ``synchronous=NORMAL`` (every other connection keeps the URL's ``FULL``); opened again when
        it was opened while the file was read-only and the file is writable now (as the pool's check-out does)."""
        raw = self._lazy_conn
        if raw is not None and raw.info.get("dptopic_read_only") and may_write(self._sqlite_file[0]):
            raw.invalidate()
            raw.close()
            raw = self._lazy_conn = None
        if raw is None:
            try:
                raw = self.engine.raw_connection()
                raw.driver_connection.execute("PRAGMA synchronous=NORMAL")
            except (SQLAlchemyError, self._driver_error) as e:
                raise database_error(e) from e
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
            raise database_error(e) from e
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

    def close(self) -> None:
        with self._lazy_lock:
            if self._lazy_conn is not None:
                self._lazy_conn.close()
                self._lazy_conn = None
        super().close()


@dataclass
class _Row:
    idempotency_key: str
    body_sha256: str
    n_reports: int
    received_at: float
    contributor: str | None = None


def _ack(key: str, n: int, at: float) -> dict:
    return {"idempotency_key": key, "reports": int(n), "stored_at": float(at)}

