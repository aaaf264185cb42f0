"""Durable storage of the service, through SQLAlchemy Core (SQLite in WAL mode, or PostgreSQL).

:class:`Storage` is the one object the service uses; its parts live by what they serve:

``engine``       which database URLs are taken and how each is opened (SQLite's ``synchronous``, PostgreSQL's limits).
``deadline``     this process's own time limit on PostgreSQL, for a server that stopped answering.
``errors``       the errors raised, and how a driver's error is classified (time limit, permission, bad value).
``schema``       the tables and their migrations.
``database``     the connection: transactions, the checks before a write, the migrations applied.
``settings``     what a database is bound to on its first start (vocabulary, epsilon, report kind, FedLDA's settings).
``submissions``  uploads stored in group commits, and the fsync a commit may leave to a thread of its own.
``reports``      the stored reports read back: the trainer's batches, counts, contributors.
``models``       the trainer's models: the version-guarded training commit, rotations.
``fedlda``       FedLDA's rounds and the clients' updates.
"""
from __future__ import annotations

from .engine import DEFAULT_TIMEOUT, check_backend, foreign_tables, safe_url, sqlite_synchronous
from .errors import (
    DatabaseError,
    SettingsError,
    StorageError,
    StoragePermissionError,
    StorageTimeout,
    is_data_error,
)
from .fedlda import FedRoundStore
from .models import ModelStore
from .reports import ReportReads
from .settings import SettingsStore
from .submissions import Submission, SubmissionStore

__all__ = ["DEFAULT_TIMEOUT", "DatabaseError", "SettingsError", "Storage", "StorageError", "StoragePermissionError",
           "StorageTimeout", "Submission", "check_backend", "foreign_tables", "is_data_error", "safe_url",
           "sqlite_synchronous"]


class Storage(SettingsStore, SubmissionStore, ReportReads, ModelStore, FedRoundStore):
    """The service's database (thread-safe: one SQLAlchemy engine, connections from its pool): the connection and
    its transactions (:class:`~dptopic.service.storage.database.Database`), with what each part of the service stores
    and reads through it."""
