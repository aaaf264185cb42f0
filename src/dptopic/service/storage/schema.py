"""The service's tables and the migrations that create and upgrade them (SQLAlchemy Core).

The schema is created and upgraded by the service itself (:meth:`~dptopic.service.storage.database.Database.migrate`):
``dptopic_schema`` records every migration applied (version, description, time); on start the service applies the
missing ones, each in its own transaction, and refuses a database written by a newer dptopic.

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
                      (:meth:`~dptopic.service.storage.submissions.SubmissionStore.store`).
"""
from __future__ import annotations

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
    text,
)

ID = BigInteger().with_variant(Integer, "sqlite")  # SQLite autoincrements INTEGER PRIMARY KEY only

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


#: what the service does to each of its tables (PostgreSQL privileges): checked at start-up
#: (:meth:`~dptopic.service.storage.database.Database.check_writable`)
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

#: the Idempotency-Key of the row :meth:`~dptopic.service.storage.database.Database.check_writable` inserts and rolls
#: back: outside the alphabet an upload may use (spaces, '#'), so no contributor's key can collide with it
WRITE_PROBE_KEY = "# dptopic start-up write check #"
