"""The errors the service's storage raises, and how a driver's error is classified: a time limit, a refusal for lack
of privileges, or a value the database could not take (:func:`is_data_error`)."""
from __future__ import annotations

from ...errors import DPTopicError, ParameterError


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
    """The database did not answer within the time limit (:data:`~dptopic.service.storage.engine.DEFAULT_TIMEOUT`,
    ``database_timeout``): it is
    stopped, overloaded, or the network to it is gone. Retryable: the transaction was not committed (unless the
    limit struck while its COMMIT was on the way, in which case a retry under the same Idempotency-Key is answered
    as a replay)."""


class StoragePermissionError(StorageError):
    """The database refused a statement for lack of privileges (PostgreSQL SQLSTATE 42501, a read-only transaction
    25006, a read-only SQLite file): a misconfiguration that retrying does not cure, unlike a lost connection."""


# insufficient_privilege only: read_only_sql_transaction (25006) is what a PostgreSQL failover answers for a while,
# so it stays a retryable 503
_PG_PERMISSION_STATES = frozenset({"42501"})
# SQLITE_PERM, SQLITE_READONLY (and its extended codes), SQLITE_AUTH
_SQLITE_PERMISSION_CODES = frozenset({3, 8, 23})
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
    """Whether the driver's error behind ``e`` is a time limit: this process's
    (:mod:`~dptopic.service.storage.deadline`) or the server's ``statement_timeout`` / ``lock_timeout``."""
    orig = getattr(e, "orig", None) or e
    if getattr(orig, "dptopic_deadline", False):       # this process's own limit (the deadline module's errors)
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


def database_error(e: BaseException) -> StorageError:
    """The :class:`StorageError` (:class:`StorageTimeout`, :class:`StoragePermissionError`) a driver's error ``e``
    is raised as, in one line."""
    if is_timeout_error(e):
        return StorageTimeout(f"database timeout: {one_line(e)}")
    cls = StoragePermissionError if is_permission_error(e) else StorageError
    return cls(f"database error: {one_line(e)}")


class SettingsError(ParameterError, StorageError):
    """A start with settings other than those the database is bound to: a :class:`ParameterError` for the setting."""


class DatabaseError(ParameterError, StorageError):
    """A ``database`` that cannot be used, refused before it is opened: a :class:`ParameterError` for ``database``."""


def one_line(e: BaseException) -> str:
    """The driver's message behind ``e`` on one line, at most 300 characters."""
    msg = str(getattr(e, "orig", None) or e)
    return " ".join(msg.split())[:300]
