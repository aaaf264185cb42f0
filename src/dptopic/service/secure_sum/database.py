"""The default round's storage: its SQL tables and the statements its messages run (built once); the database
engines and locks every mode's server opens its round with are :mod:`dptopic.service.secure_sum.engine`'s (SQLite,
one server process; PostgreSQL, several).

Uploads are aggregated as they arrive: each is added to its step's running sum (in the plan's ring) in the
transaction that stores its receipt (SHA-256 and signature), so exactly once, and its bytes are not kept. The
server's storage for the uploads is the two running sums plus one receipt per contributor and step, and a server
killed at any moment resumes from them (``tests/integration/test_secure_sum_restart.py``).
The database is created readable by its owner only; SQLite commits in WAL mode and syncs at checkpoints, so a
process killed at any moment loses nothing it acknowledged (a power cut may lose the last acknowledgements, which the
contributors send again from their state files).
"""
from __future__ import annotations

from sqlalchemy import Column, Float, Integer, LargeBinary, MetaData, String, Table, Text, bindparam, func, select

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
