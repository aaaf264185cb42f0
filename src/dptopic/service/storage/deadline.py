"""The service's own time limit on PostgreSQL, for a server that stopped answering at all.

Every transaction and read of a request must end within ``timeout`` seconds (``ServiceConfig.database_timeout``,
:data:`~dptopic.service.storage.engine.DEFAULT_TIMEOUT`), or it is refused with :class:`StorageTimeout` (the request
gets 503). The server enforces it per statement (``statement_timeout``, ``lock_timeout``); this process enforces it
too, for a server that stopped answering at all (a stopped postmaster, a half-open connection: the kernel still
acknowledges the packets, so no TCP timeout fires and no server-side limit runs): a watchdog shuts the connection's
socket down at the deadline (:class:`_Watchdog`). The trainer's commit, a rotation, a FedLDA round's close (which
aggregates) and the model's arrays get ``long_timeout``; the migrations have no limit.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from contextlib import contextmanager

from sqlalchemy import event

from .errors import StorageTimeout

#: :meth:`~dptopic.service.storage.database.Database.write` and :meth:`~dptopic.service.storage.database.Database.read`
#: around everything they send, pool checkout and pre-ping included
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
# replaced by the driver's subclass once loaded; ``dptopic_deadline`` is what errors.is_timeout_error looks for
_DeadlineExceeded = type("_DeadlineExceeded", (Exception,), {"dptopic_deadline": True})
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


def pg_deadline_setup(engine) -> None:
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
def within(limit: float | None, deadline: float | None = None):
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
