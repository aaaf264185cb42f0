"""A committee-mode round kept in a database (:class:`StoredCommitteeRound`: SQLite or PostgreSQL): its
tables, each accepted message and the state committed in one transaction, the round resumed after a
restart, and several server processes sharing it on PostgreSQL (read :mod:`.committee` first)."""
from __future__ import annotations

import json
import time

import numpy as np
from sqlalchemy import Column, Integer, LargeBinary, MetaData, String, Table, Text, inspect, select
from sqlalchemy.exc import SQLAlchemyError

from ...errors import DPTopicError
from ...protocol.secure_sum.plan import SecureSumPlan
from ..storage import safe_url
from .committee import CommitteeRound
from .config import ApiError
from .engine import _open_engine, hold_round_lock
from .store import STATE_LOOK_S

cmeta = MetaData()


c_state = Table("committee_round", cmeta, Column("key", String(64), primary_key=True), Column("value", Text))
"""The round's state (its step and sets, the committee, the reason of a failure), the plan and round it is of, and
its ``version``: the number of changes committed, with the step they left it at (read by every server process before
each message, and by its long polls)."""


c_keys = Table("committee_keys", cmeta, Column("contributor", String(64), primary_key=True),
               Column("doc", Text, nullable=False), Column("seq", Integer, nullable=False, index=True))


c_receipts = Table("committee_receipts", cmeta, Column("phase", Integer, primary_key=True),
                   Column("contributor", String(64), primary_key=True), Column("sha", String(64), nullable=False),
                   Column("header", Text, nullable=False), Column("signature", String(128), nullable=False),
                   Column("seq", Integer, nullable=False, index=True))
"""One receipt per upload (its SHA-256, header and signature): added to the running sum in the same transaction;
the body itself is not kept."""


c_blobs = Table("committee_blobs", cmeta, Column("phase", Integer, primary_key=True),
                Column("member", String(64), primary_key=True), Column("uploader", String(64), primary_key=True),
                Column("blob", Text, nullable=False), Column("seq", Integer, nullable=False, index=True))


c_running = Table("committee_running", cmeta, Column("phase", Integer, primary_key=True),
                  Column("data", LargeBinary, nullable=False))


c_sums = Table("committee_sums", cmeta, Column("phase", Integer, primary_key=True),
               Column("data", LargeBinary, nullable=False), Column("count", Integer, nullable=False),
               Column("seq", Integer, nullable=False, index=True))
"""Each step's unmasked sum (signed 64-bit integers) and how many uploads it holds."""


c_signatures = Table("committee_signatures", cmeta, Column("phase", Integer, primary_key=True),
                     Column("member", String(64), primary_key=True), Column("signature", String(128), nullable=False),
                     Column("seq", Integer, nullable=False, index=True))


c_answers = Table("committee_answers", cmeta, Column("phase", Integer, primary_key=True),
                  Column("member", String(64), primary_key=True), Column("answers", Text, nullable=False),
                  Column("seq", Integer, nullable=False, index=True))


c_ledger = Table("committee_ledger", cmeta, Column("key", String(64), primary_key=True), Column("value", Text))
"""The round's debit on the dataset ledger (:meth:`CommitteeRound._charge`), committed before the first unmasking."""


_STATE_KEYS = ("round_id", "plan", "state", "reason", "step", "committee", "uploaded")


_q_version = select(c_state.c.value).where(c_state.c.key == "version")


class StoredCommitteeRound(CommitteeRound):
    """A :class:`CommitteeRound` whose every accepted message (the keys, each upload's receipt, header and blobs with
    the step's running sum, the signatures, the answers) and state are committed to ``database`` (SQLite, or
    PostgreSQL) before the request is answered, in one transaction; started again on the same database it resumes
    where it stood (an unmasking whose answers were all in runs again). A message refused leaves the state as it
    was; a store that fails reloads the round from the database and answers 503.

    Several server processes share a round on PostgreSQL: each message is one transaction that first takes the
    round's advisory lock (:func:`~dptopic.service.secure_sum.engine.hold_round_lock`), so the processes change the
    round one at a time, and reads in what the others committed since this process last looked (every stored row carries
    the change that wrote it, ``seq``; the state row ``version`` counts the changes) before its checks run. What a
    process holds in memory is a copy brought up to date that way; the views and long polls read the stored step too
    (:meth:`fresh`, :meth:`current_state`). On SQLite one process serves the round (a second is refused in one line,
    as the default round's is) and its threads take a lock of its own."""

    def __init__(self, plan: SecureSumPlan, directory: dict, vocabulary, n_topics: int = 3,
                 database: str = "sqlite:///dptopic-secure-committee.db", schema: str | None = None, **kw):
        super().__init__(plan, directory, vocabulary, n_topics, **kw)
        self.database = database
        self.engine = _open_engine(database, schema)     # schema: a cohort's round on PostgreSQL
        self.shared = self.engine.dialect.name != "sqlite"     # several server processes may share the round
        self._lock_name = f"committee:{self.round_id}"
        self._version = 0               # the changes of the stored round this copy holds
        self._last: dict = {}           # the last change that wrote to each table (as the version row names them)
        self._looked, self._polled = 0.0, (0, "keys")       # the long polls' last read of the stored step, and when
        try:
            with self.engine.begin() as conn:
                if self.shared:     # server processes starting together: one creates the tables
                    hold_round_lock(conn, self._lock_name)
                found = inspect(conn)
                if "secure_round" in found.get_table_names():      # a round restarts in the mode it was stored in
                    raise DPTopicError(f"{safe_url(database)} holds a secure-sum round without a committee: restart"
                                       " the server without the committee mode, as it was started, or give a new"
                                       " database.")
                if "committee_keys" in found.get_table_names() and "seq" not in {
                        c["name"] for c in found.get_columns("committee_keys")}:
                    raise DPTopicError(f"{safe_url(database)} holds a committee round stored by an earlier version of"
                                       " dptopic: give a fresh database for this round.")
                cmeta.create_all(conn)
                opened = conn.execute(select(c_state.c.value).where(c_state.c.key == "opened_at")).scalar()
                if opened is None:      # when the round first opened: its registration deadline counts from it
                    conn.execute(c_state.insert().values(key="opened_at", value=json.dumps(self.opened_at)))
                else:
                    self.opened_at = float(json.loads(opened))
        except SQLAlchemyError as e:
            raise DPTopicError(f"{safe_url(database)} cannot hold the committee round"
                               f" ({' '.join(str(getattr(e, 'orig', e)).split())[:160]}): give a new SQLite file"
                               " (sqlite:///PATH) or a PostgreSQL database the server may write.") from None
        blank = CommitteeRound(plan, directory, vocabulary, n_topics, **kw)
        self._fresh = {k: v for k, v in blank.__dict__.items() if k not in ("lock", "opened_at")}
        self._reload()

        def resume():       # the answers were all in when a server stopped: unmask now (once, whichever process)
            if self.state.startswith("unmask") and len(self._answers.get(int(self.state[-1]), {})) == len(
                    self.step.get("signers", ())):
                self._unmask(int(self.state[-1]))
            return {}
        if self.state.startswith("unmask"):
            self._store(lambda conn, out, seq: None, resume)

    # ------------------------------------------------------------ load and save
    def _charged(self) -> bool:
        """Whether the database holds the round's debit (read afresh: another process, or this one's earlier life,
        may have made it; a change runs under the round's lock, so two processes do not both charge)."""
        with self.engine.connect() as conn:
            return conn.execute(select(c_ledger.c.key).where(c_ledger.c.key == "debit")).first() is not None

    def _mark_charged(self, release) -> None:
        """The debit's mark, committed in a transaction of its own before any answer is used (the unmasking's own
        transaction, which this runs inside, may yet fail)."""
        with self.engine.begin() as conn:
            conn.execute(c_ledger.insert().values(key="debit", value=json.dumps({"release": release})))

    def _reload(self) -> None:
        """The round as the database holds it (a fresh round when it holds none)."""
        with self.lock:
            self.__dict__.update({k: (v.copy() if isinstance(v, (dict, list)) else v)
                                  for k, v in self._fresh.items()})
            self._version, self._last = 0, {}
            with self.engine.connect() as conn:
                self._refresh(conn)

    def _refresh(self, conn) -> None:
        """Bring this copy up to the stored round: when another process (or this one's earlier life) committed
        changes since the copy's ``version``, read the state and the rows those changes wrote (``seq`` above it),
        and the open step's running sum. Merging a row twice changes nothing (it is keyed)."""
        raw = conn.execute(_q_version).scalar()
        if raw is None or json.loads(raw)["v"] == self._version:
            return
        ver, since = json.loads(raw), self._version
        moved = ver["state"] != self.state or since == 0
        if moved:       # the step and its sets change only with the step's name (see _store)
            rows = dict(conn.execute(select(c_state.c.key, c_state.c.value)).all())
            st = {k: json.loads(rows[k]) for k in _STATE_KEYS if k in rows}
            ver = json.loads(rows["version"])       # as new as the state read with it
            if st.get("round_id") != self.round_id or st.get("plan") != self.plan.to_dict():
                raise DPTopicError(f"{safe_url(self.database)} holds committee round"
                                   f" {str(st.get('round_id'))[:64]!r} with another plan or directory: give a fresh"
                                   " database for this round.")
        if ver["v"] < since:         # the database was replaced under this process
            raise DPTopicError(f"{safe_url(self.database)} holds an older copy of the committee round than this"
                               " server process read: start the server processes again.")
        if moved:
            self.state, self.reason, self.step = st["state"], st["reason"], st["step"]
            self.committee, self.uploaded = st["committee"], {int(p): u for p, u in st["uploaded"].items()}
        last = ver.get("last", {})

        def new(name, table):       # the rows of ``table`` written since this copy's version (none: no read)
            if since and last.get(name, 0) <= since:
                return ()
            return conn.execute(select(table).where(table.c.seq > since))
        for r in new("keys", c_keys):
            self.keys[r.contributor] = json.loads(r.doc)
        for r in new("receipts", c_receipts):
            if (r.phase, r.contributor) not in self._receipts:
                self._count[r.phase] = self._count.get(r.phase, 0) + 1
            self._receipts[(r.phase, r.contributor)] = (r.sha, json.loads(r.header), r.signature)
        for r in new("signatures", c_signatures):
            self._signatures.setdefault(r.phase, {})[r.member] = r.signature
        for r in new("answers", c_answers):
            self._answers.setdefault(r.phase, {})[r.member] = json.loads(r.answers)
        for r in new("sums", c_sums):
            self.sums[r.phase] = np.frombuffer(r.data, dtype=np.int64).copy()
            self.shares_of_sum[r.phase] = r.count
        if moved or last.get("running", 0) > since:
            self._running = None
            if self.state[:-1] in ("upload", "consistency", "unmask"):
                row = conn.execute(select(c_running.c.data).where(c_running.c.phase == int(self.state[-1]))).first()
                self._running = None if row is None else np.frombuffer(row[0], dtype=self.plan.dtype).copy()
        self._version, self._last = ver["v"], dict(last)

    def _store(self, write, change, tables=()):
        """One message: under this process's lock, a transaction that takes the round's lock (PostgreSQL) and brings
        the copy up to the stored round, then ``change()`` (the round's own checks and change, in memory), then
        ``write(conn, its answer, seq)`` (rows of ``tables``) and the version, committed together; the round reloaded
        from the database when the store fails. A replay writes nothing. The state's rows (the step's name, its sets,
        the committee, a failure's reason) are written again only when the step's name changed: none of them changes
        otherwise. The version row names, for each table, the last change that wrote to it, so that a process reads
        only the tables another has written to since it last looked."""
        with self.lock:
            seq = self._version + 1
            try:
                with self.engine.begin() as conn:
                    if self.shared:
                        hold_round_lock(conn, self._lock_name)
                        self._refresh(conn)
                        seq = self._version + 1
                    sums_before, before = set(self.sums), self.state
                    out = change()
                    if out.get("replayed"):
                        return out
                    write(conn, out, seq)
                    last = {**self._last, **dict.fromkeys(tables, seq)}
                    for p in set(self.sums) - sums_before:
                        last["sums"] = seq
                        conn.execute(c_sums.insert().values(phase=p, count=self.shares_of_sum[p], seq=seq,
                                                            data=np.asarray(self.sums[p], np.int64).tobytes()))
                    version = json.dumps({"v": seq, "state": self.state, "last": last})
                    if self.state != before or seq == 1:
                        st = {"round_id": self.round_id, "plan": self.plan.to_dict(), "state": self.state,
                              "reason": self.reason, "step": self.step, "committee": self.committee,
                              "uploaded": {str(p): u for p, u in self.uploaded.items()}}
                        conn.execute(c_state.delete().where(c_state.c.key != "opened_at"))
                        conn.execute(c_state.insert(), [{"key": k, "value": json.dumps(v)} for k, v in st.items()]
                                     + [{"key": "version", "value": version}])
                    else:
                        conn.execute(c_state.update().where(c_state.c.key == "version").values(value=version))
            except ApiError:
                raise           # refused by the round's checks: nothing changed
            except SQLAlchemyError as e:
                self._reload()
                raise ApiError(503, "storage", f"the round's database did not take the message ({type(e).__name__}):"
                                               " nothing stored; send it again.") from None
            except BaseException:
                self._reload()      # what the change set in memory is not committed
                raise
            self._version, self._last = seq, last
        return out

    def fresh(self) -> None:
        """Before a view is answered: on PostgreSQL, the changes the other server processes committed read in (one
        read of the stored version when there are none)."""
        if not self.shared:
            return
        with self.engine.connect() as conn:
            raw = conn.execute(_q_version).scalar()
        if raw is not None and json.loads(raw)["v"] != self._version:
            with self.lock, self.engine.connect() as conn:
                self._refresh(conn)

    def current_state(self) -> str:
        """The round's step, for long polling: on PostgreSQL the stored one (whichever process moved it), read at most
        every :data:`~dptopic.service.secure_sum.store.STATE_LOOK_S` by this process; this process's own changes at
        once."""
        if not self.shared:
            return self.state
        if time.monotonic() - self._looked > STATE_LOOK_S:
            with self.engine.connect() as conn:
                raw = conn.execute(_q_version).scalar()
            if raw is not None:
                v = json.loads(raw)
                self._polled = (v["v"], v["state"])
            self._looked = time.monotonic()
        return self._polled[1] if self._polled[0] > self._version else self.state

    # ------------------------------------------------------------ views, as stored
    def roster(self) -> dict:
        self.fresh()
        return super().roster()

    def view(self) -> dict:
        self.fresh()
        return super().view()

    def committee_view(self, phase: int, member: str) -> dict:
        self.fresh()
        return super().committee_view(phase, member)

    def _member_blobs(self, phase: int, member: str) -> dict:
        """The blobs addressed to ``member`` in step ``phase``, read from the database when the member asks: the
        server holds no upload's blobs in memory (C of them an upload: at 10,000 people they were most of its
        memory)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(c_blobs.c.uploader, c_blobs.c.blob).where(
                (c_blobs.c.phase == phase) & (c_blobs.c.member == member)))
            return {r.uploader: r.blob for r in rows}

    def _keep_blobs(self, phase: int, contributor: str, blobs: dict) -> None:
        """Nothing in memory: :meth:`post_upload` writes the blobs in the upload's transaction."""

    def signatures(self, phase: int) -> dict:
        self.fresh()
        return super().signatures(phase)

    # ------------------------------------------------------------ the messages, stored
    def post_prekeys(self, contributor: str, bundles) -> dict:
        def write(conn, out, seq):
            if out.get("registered"):
                conn.execute(c_keys.insert().values(contributor=contributor, doc=json.dumps(self.keys[contributor]),
                                                    seq=seq))
        return self._store(write, lambda: super(StoredCommitteeRound, self).post_prekeys(contributor, bundles),
                           ("keys",))

    def post_upload(self, phase: int, contributor: str, body: bytes, header, blobs, signature) -> dict:
        def write(conn, out, seq):
            if not out.get("stored"):
                return
            sha, hdr, sig = self._receipts[(phase, contributor)]
            conn.execute(c_receipts.insert().values(phase=phase, contributor=contributor, sha=sha,
                                                    header=json.dumps(hdr), signature=sig, seq=seq))
            conn.execute(c_blobs.insert(), [{"phase": phase, "member": m, "uploader": contributor, "blob": b,
                                             "seq": seq} for m, b in blobs.items()])
            conn.execute(c_running.delete().where(c_running.c.phase == phase))
            conn.execute(c_running.insert().values(phase=phase, data=self._running.tobytes()))
        return self._store(write, lambda: super(StoredCommitteeRound, self).post_upload(
            phase, contributor, body, header, blobs, signature), ("receipts", "blobs", "running"))

    def post_consistency(self, phase: int, member: str, signature) -> dict:
        def write(conn, out, seq):
            conn.execute(c_signatures.delete().where((c_signatures.c.phase == phase)
                                                     & (c_signatures.c.member == member)))
            conn.execute(c_signatures.insert().values(phase=phase, member=member, signature=signature, seq=seq))
        return self._store(write, lambda: super(StoredCommitteeRound, self).post_consistency(phase, member,
                                                                                               signature),
                           ("signatures",))

    def post_unmask(self, phase: int, member: str, answers, signature) -> dict:
        def write(conn, out, seq):
            if out.get("stored"):
                conn.execute(c_answers.insert().values(phase=phase, member=member, answers=json.dumps(answers),
                                                       seq=seq))
        return self._store(write, lambda: super(StoredCommitteeRound, self).post_unmask(
            phase, member, answers, signature), ("answers",))

    def close(self) -> dict:
        return self._store(lambda conn, out, seq: None, super().close)

    def close_roster_if_due(self) -> bool:
        """As :meth:`CommitteeRound.close_roster_if_due`, stored (once, whichever server process gets there)."""
        self.fresh()
        if self.state != "keys" or not self._deadline_passed():
            return False
        return self._store(lambda conn, out, seq: None,
                           lambda: {"closed": CommitteeRound.close_roster_if_due(self)})["closed"]

    def dispose(self) -> None:
        """Let the database go (its engine)."""
        self.engine.dispose()
