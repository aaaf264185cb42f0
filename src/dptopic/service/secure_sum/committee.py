"""The server's side of a committee-mode secure-sum round (:mod:`dptopic.protocol.secure_sum.committee`, read its note
first): the prekey bundles, the uploads with their committee blobs, the committee's consistency signatures and
answers, and the unmasking; and its HTTP app (what ``dptopic serve`` runs for a committee-mode round).

:class:`CommitteeRound` runs one round in memory (the same checks and refusals as
:class:`~dptopic.service.secure_sum.default.SecureRound`: a message not signed by the member it names, a malformed one,
one out of its step are refused in one line, :class:`~dptopic.service.secure_sum.default.ApiError`), driven step by step
by the tests; :class:`StoredCommitteeRound` keeps it in a database (SQLite or PostgreSQL: each accepted message and the
state in one transaction, resumed after a restart; on PostgreSQL several server processes share the round, each
message under the round's lock). :func:`create_committee_app` serves either; it runs each message on a worker thread
under the round's lock, the unmasking included, so that the event loop answers views and long polls meanwhile.

Steps: ``keys`` (prekey bundles of this round; the roster closes when every member of the directory has one, or at
the registration deadline or by :meth:`CommitteeRound.close` with those registered: at least N - F, each with the
threshold of its neighbours among them, else the round fails), ``upload{p}`` (everyone), ``consistency{p}`` and
``unmask{p}`` (the committee), then ``released`` (or ``failed``).
"""
from __future__ import annotations

import asyncio
import hmac
import json
import logging
import threading
import time
from contextlib import asynccontextmanager

import numpy as np
from sqlalchemy import Column, Integer, LargeBinary, MetaData, String, Table, Text, inspect, select
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...corpus import Vocabulary
from ...errors import DPTopicError, ParameterError
from ...protocol.secure_sum import committee as sc
from ...protocol.secure_sum import default as ss
from ...protocol.secure_sum.enrollment import check_directory
from ..ledger import charge_secure_round
from ..storage import safe_url
from .default import (
    ERROR_HANDLERS,
    FIRST_LOOK_S,
    LONG_POLL_S,
    LOOK_EVERY_S,
    MAX_REGISTRATION_S,
    STATE_LOOK_S,
    ApiError,
    _json,
    _open_engine,
    _phase,
    check_directory_plan,
    check_signed,
    hold_round_lock,
    late_registration,
    parse_json,
    process_usage,
    release_document,
    wait_timeout,
)

log = logging.getLogger("dptopic.service")

class CommitteeRound:
    """One committee-mode round in memory: ``plan`` (a :class:`~dptopic.protocol.secure_sum.default.SecureSumPlan` with
    a committee), the operator's ``directory``, the public ``vocabulary`` and ``n_topics``; ``ledger`` and
    ``ledger_dataset``: the dataset ledger the round is charged to, once, before its first unmasking (:meth:`_charge`),
    or None."""

    shared = False
    """Whether other server processes may change the round (:class:`StoredCommitteeRound` on PostgreSQL)."""

    def __init__(self, plan: ss.SecureSumPlan, directory: dict, vocabulary, n_topics: int = 3,
                 ledger: str | None = None, ledger_dataset: str | None = None, registration_s: float | None = None):
        if registration_s is not None and (isinstance(registration_s, bool) or not isinstance(
                registration_s, (int, float)) or not 0 < registration_s <= MAX_REGISTRATION_S):
            raise ParameterError("invalid {registration_s=}: seconds in (0, {most:,d}] after the round first opens"
                                 " (a year at most).", "registration_s", registration_s, most=int(MAX_REGISTRATION_S))
        self.registration_s = registration_s
        self.opened_at = time.time()    # the registration deadline counts from it (a stored round: as stored)
        if not plan.committee:
            raise DPTopicError("a committee round needs a plan with a committee (SecureSumPlan(committee=...)).")
        self.plan = plan
        self.directory = check_directory(directory, where="the round's directory")
        self.round_id = self.directory["round_id"]
        self.members = self.directory["members"]
        if len(self.members) != plan.n:
            raise DPTopicError(f"the directory lists {len(self.members)} contributors, the plan {plan.n}.")
        check_directory_plan(self.directory, plan)      # the plan and mode its invitations name
        self.vocabulary, self.n_topics = list(vocabulary), int(n_topics)
        self.ledger, self.ledger_dataset = ledger, ledger_dataset
        self._debit = None          # the round's release id on the dataset ledger, once charged
        self.graph = ss.neighbour_graph(sorted(self.members), self.round_id, plan.degree)
        self.T, self.Tc = plan.threshold, plan.committee_threshold
        self.state = "keys"
        self.reason: str | None = None
        self.keys: dict = {}
        self.committee: list = []
        self.step: dict = {}        # the open step's sets: members, uploaded, kept
        self.sums: dict = {}        # phase -> unmasked sum (signed integers)
        self.shares_of_sum: dict = {}
        self.uploaded: dict = {}    # phase -> the step's set of uploads, once it closed
        self._running = None
        self._receipts: dict = {}   # (phase, contributor) -> (sha, header, signature)
        self._count: dict = {}      # phase -> uploads stored (read by views without iterating the receipts)
        self._blobs: dict = {}      # (phase, member) -> {uploader: blob}
        self._signatures: dict = {}
        self._answers: dict = {}
        self.lock = threading.RLock()   # the HTTP app runs each message under it, off its event loop
        self._trees: dict = {}          # (phase, uploader) -> its blobs' Merkle tree and pair digest (members' views)

    # ------------------------------------------------------------ checks
    def _need(self, *states) -> None:
        if self.state not in states:
            raise ApiError(409, "round_closed" if self.state != "keys" else "not_open",
                           f"the round is at step {self.state!r}"
                           + (f" ({self.reason})" if self.reason else "")
                           + f", not {' or '.join(repr(s) for s in states)}: nothing stored.")

    def _signed(self, contributor: str, signature, msg: bytes) -> None:
        check_signed(self.members, contributor, signature, msg)

    def _fail(self, reason: str) -> None:
        self.state, self.reason = "failed", reason

    # ------------------------------------------------------------ keys ahead of the round
    def post_prekeys(self, contributor: str, bundles) -> dict:
        """A member's prekey bundles (``[{"round_id", "keys", "signature"}]``): the one for this round is
        registered (checked as today's keys); bundles for other rounds are not this round's business."""
        if not isinstance(bundles, list) or not all(isinstance(b, dict) for b in bundles):
            raise ApiError(400, "bad_prekeys", "prekeys must be a list of {round_id, keys, signature}.")
        mine = [b for b in bundles if b.get("round_id") == self.round_id]
        if len(mine) != 1:
            raise ApiError(400, "bad_prekeys", f"prekeys must hold exactly one bundle for round {self.round_id!r}.")
        b = mine[0]
        keys = b.get("keys")
        self._signed(contributor, b.get("signature"), ss.keys_message(self.round_id, contributor, keys)
                     if isinstance(keys, dict) and {"c", "s", "b"} <= set(keys) else b"")
        why = ss.check_keys(keys)
        if why is not None:
            raise ApiError(400, "bad_keys", why + ".")
        old = self.keys.get(contributor)
        if old is not None:
            if {k: old[k] for k in ("c", "s", "b")} == keys:
                return {"replayed": True}
            raise ApiError(409, "keys_changed", f"contributor {contributor!r} already registered other keys for this"
                                                " round: one key set per invitation.")
        if self.state == "keys" and self._deadline_passed():
            raise ApiError(409, "round_closed", "the round's registration deadline has passed: its roster closes with"
                                                " those registered; nothing stored.")
        if self.state != "keys":
            raise late_registration(contributor, self.state, self.reason)
        used = {k for e in self.keys.values() for k in [e["c"], *e["s"]]}
        if used & {keys["c"], *keys["s"]}:
            raise ApiError(409, "key_reused", "a public key of this set is already registered: draw fresh keys.")
        self.keys[contributor] = {**keys, "signature": b["signature"]}
        if len(self.keys) == len(self.members):
            self._close_roster()
        return {"registered": True}

    @property
    def registration_deadline(self) -> float | None:
        """When the roster closes with those registered (a Unix time), or None: once every one has registered."""
        return None if self.registration_s is None else self.opened_at + float(self.registration_s)

    def _deadline_passed(self) -> bool:
        return self.registration_deadline is not None and time.time() >= self.registration_deadline

    def _close_roster(self, when: str = "every invited contributor registered") -> None:
        """Close the roster with those registered (``when``: why now, for the failure's line): the round goes on
        with at least N - F of the N invited (each who never registered is one of the F dropouts the plan tolerates:
        the noise is calibrated for N - F contributors, and every later step needs that many), every one of them with
        the threshold of its neighbours among them; else it fails, nothing released."""
        ids = sorted(self.keys)
        least = self.plan.n - self.plan.dropouts
        if len(ids) < least:
            self._fail(f"the roster closed ({when}) with {len(ids)} of the {self.plan.n} invited contributors"
                       f" registered, fewer than N - F = {least} (each who never registers is one of the dropouts"
                       " the plan tolerates): nothing released")
            return
        short = next((u for u in ids if sum(1 for w in self.graph[u] if w in self.keys) < self.T), None)
        if short is not None:
            self._fail(f"the roster closed ({when}) with contributor {short!r} holding fewer than {self.T} of its"
                       " neighbours among those registered: its uploads could not be unmasked; nothing released")
            return
        self.committee = sc.committee_of(list(self.keys), self.round_id, self.plan.committee)
        self._open_upload(0, ids)

    def close_roster_if_due(self) -> bool:
        """At or after the registration deadline, close the roster as it stands (:meth:`_close_roster`); whether
        the round left the keys step now."""
        if self.state != "keys" or not self._deadline_passed():
            return False
        self._close_roster("at its registration deadline")
        return True

    def _open_upload(self, phase: int, members: list, kept=None) -> None:
        self.state = f"upload{phase}"
        self.step = {"members": members, **({"kept": kept} if kept is not None else {})}
        self._running = None

    # ------------------------------------------------------------ views
    def fresh(self) -> None:
        """Bring the round up to what other server processes changed (none here: the round is this object)."""

    def current_state(self) -> str:
        """The round's step, as long polls read it."""
        return self.state

    def roster(self) -> dict:
        """The closed roster (the prekey bundles of this round)."""
        if self.state == "keys":
            raise ApiError(409, "not_open", "the roster is handed out once it has closed (every invited contributor"
                                            " registered, or the registration deadline passed).")
        return self.keys

    def view(self) -> dict:
        """The round's step and the sets and words a contributor checks (with the committee once named)."""
        doc = {"round_id": self.round_id, "state": self.state, "reason": self.reason, **self.step}
        if self.committee:
            doc["committee"] = self.committee
        if self.state == "keys":
            doc["keys_received"] = len(self.keys)
            if self.registration_deadline is not None:      # a Unix time: the roster then closes as it stands
                doc["registration_closes_at"] = self.registration_deadline
        elif self.state[:-1] in ("upload", "consistency", "unmask"):      # what an admin looks at before a close
            phase = int(self.state[-1])
            doc["received"] = {"upload": self._count.get(phase, 0),
                               "consistency": len(self._signatures.get(phase, {})),
                               "unmask": len(self._answers.get(phase, {}))}[self.state[:-1]]
        return doc

    def config_view(self) -> dict:
        """What ``GET /v1/config`` long-polled answers once the roster is closed: the view, the roster, the committee
        (an ordinary contributor's first request)."""
        return {**self.view(), "roster": self.roster()}

    def committee_view(self, phase: int, member: str) -> dict:
        """What a committee member reads at the consistency and unmasking of ``phase``: the view and, for each
        uploader, only what that member needs: the blob addressed to it, and what checks the upload's signature
        over it (the body's SHA-256, the pair commitments' digest, the blob's Merkle path; not the other members'
        digests nor the commitments themselves). Made when the member asks (a step's Merkle trees are kept, the views
        not: at 10,000 people the committee's views of a step held more memory than the round)."""
        blobs = self._member_blobs(phase, member)
        uploads = {}
        for u in self.uploaded.get(phase, ()):
            sha, header, sig = self._receipts[(phase, u)]
            tree = self._trees.get((phase, u))
            if tree is None:
                tree = self._trees[(phase, u)] = (sc.blob_tree(header["blobs"]), sc.pairs_digest(header["pairs"]))
            uploads[u] = {"sha": sha, "pairs": tree[1], "path": sc.blob_path(header["blobs"], member, tree[0]),
                          "signature": sig, "blob": blobs.get(u)}
        return {**self.view(), "uploads": uploads}

    def _member_blobs(self, phase: int, member: str) -> dict:
        """``{uploader: the blob it addressed to member}`` of step ``phase`` (kept in memory here; a stored round
        reads them from its database, :meth:`StoredCommitteeRound._member_blobs`)."""
        return self._blobs.get((phase, member), {})

    def _keep_blobs(self, phase: int, contributor: str, blobs: dict) -> None:
        """An accepted upload's blobs, one per committee member, kept until the members read them."""
        for m, b in blobs.items():
            self._blobs.setdefault((phase, m), {})[contributor] = b

    def signatures(self, phase: int) -> dict:
        """The committee's consistency signatures of ``phase`` (public once the step closed)."""
        return dict(self._signatures.get(phase, {}))

    # ------------------------------------------------------------ uploads
    def dim(self, phase: int) -> int:
        """Entries of step ``phase``'s vector."""
        return self.plan.vocab_size + 1 if phase == 0 else ss.triangle_size(len(self.step["kept"]))

    def post_upload(self, phase: int, contributor: str, body: bytes, header, blobs, signature) -> dict:
        """A member's masked upload of ``phase`` with its committee blobs, signed over both."""
        sha = ss.digest(bytes(body))
        self._signed(contributor, signature, sc.upload_message(self.round_id, phase, contributor, sha, header)
                     if isinstance(header, dict) else b"")
        old = self._receipts.get((phase, contributor))
        if old is not None:
            if old[0] == sha:
                return {"replayed": True}
            raise ApiError(409, "upload_changed", "a different upload of this step is already stored: one each.")
        self._need(f"upload{phase}")
        members = set(self.step["members"])
        if contributor not in members:
            raise ApiError(403, "not_member", f"{contributor!r} is not a member of step {phase}.")
        if len(body) != self.plan.upload_bytes(self.dim(phase)):
            raise ApiError(400, "bad_upload", f"an upload of step {phase} holds {self.dim(phase)} ring elements.")
        why = sc.check_header(header, self.committee, [v for v in self.graph[contributor] if v in members])
        if why is not None:
            raise ApiError(400, "bad_header", why + ".")
        if not isinstance(blobs, dict) or set(blobs) != set(self.committee) or not all(
                isinstance(b, str) and sc.blob_digest(b) == header["blobs"][m] for m, b in blobs.items()):
            raise ApiError(400, "bad_blobs", "the blobs are not the ones the header names, one per committee member.")
        y = np.frombuffer(bytes(body), dtype=self.plan.dtype)
        self._running = y.copy() if self._running is None else self._running + y
        self._receipts[(phase, contributor)] = (sha, header, signature)
        self._count[phase] = self._count.get(phase, 0) + 1
        self._keep_blobs(phase, contributor, blobs)
        if self._count[phase] == len(members):
            self._close_upload(phase)
        return {"stored": True}

    def _close_upload(self, phase: int) -> None:
        uploaded = sorted(u for p, u in self._receipts if p == phase)
        if len(uploaded) < self.plan.n - self.plan.dropouts:
            self._fail(f"{len(uploaded)} uploads at step {phase}, fewer than N - F: nothing released")
            return
        self.state = f"consistency{phase}"
        self.step = {**self.step, "uploaded": uploaded}
        self.uploaded[phase] = uploaded

    # ------------------------------------------------------------ the committee
    def post_consistency(self, phase: int, member: str, signature) -> dict:
        """A committee member's signature over the set of uploads of ``phase``."""
        self._need(f"consistency{phase}")
        if member not in self.committee:
            raise ApiError(403, "not_committee", f"{member!r} is not on the round's committee.")
        self._signed(member, signature, sc.consistency_message(self.round_id, phase, self.step["uploaded"]))
        self._signatures.setdefault(phase, {})[member] = signature
        if len(self._signatures[phase]) == len(self.committee):
            self._close_consistency(phase)
        return {"stored": True}

    def _close_consistency(self, phase: int) -> None:
        if len(self._signatures.get(phase, {})) < self.Tc:
            self._fail(f"{len(self._signatures.get(phase, {}))} committee signatures at step {phase}, fewer than its"
                       f" threshold {self.Tc}: nothing released")
            return
        self.state = f"unmask{phase}"
        self.step = {**self.step, "signers": sorted(self._signatures[phase])}

    def post_unmask(self, phase: int, member: str, answers, signature) -> dict:
        """A committee member's answers for ``phase``; the sum is unmasked once every signer has answered (or at
        :meth:`close`)."""
        self._need(f"unmask{phase}")
        if member not in self.step["signers"]:
            raise ApiError(403, "not_signer", f"{member!r} did not sign this step's set of uploads.")
        self._signed(member, signature, sc.answers_message(self.round_id, phase, member, answers)
                     if isinstance(answers, dict) else b"")
        old = self._answers.get(phase, {}).get(member)
        if old is not None:
            if ss.canonical(old) == ss.canonical(answers):
                return {"replayed": True}
            raise ApiError(409, "answers_changed", f"{member!r}'s answers of step {phase} are already stored: one"
                                                   " each.")
        self._answers.setdefault(phase, {})[member] = answers
        if len(self._answers[phase]) == len(self.step["signers"]):
            self._unmask(phase)
        return {"stored": True}

    def _charge(self) -> bool:
        """The round charged to the dataset ledger (``ledger``), once, before its first unmasking: to step 0's
        uploaders at the plan's bound (:func:`~dptopic.service.ledger.charge_secure_round`, as the default round
        charges). It runs where the default round charges, at the start of step 0's unmasking: every uploader of step 0
        is known, the committee has signed the set and answered, and the server has not yet used one answer; no
        answer alone removes a mask, so nothing of the round is revealed before the debit. (Earlier, at the close of
        the signatures, would charge rounds that then fail for want of answers.) False, with the round failed and
        nothing revealed, when the ledger refuses it. The debit is marked (:meth:`_mark_charged`; a stored round
        commits the mark before it unmasks): a restart after it charges nothing more, and a process killed between
        the debit and its mark charges the round again (the ledger then holds it twice, never not at all)."""
        if not self.ledger or self._charged():
            return True
        try:
            release = charge_secure_round(self.ledger, self.ledger_dataset, self.plan, self.uploaded[0],
                                          self.directory)
        except DPTopicError as e:
            log.error("%s", e)
            self._fail(f"{' '.join(str(e).split())[:300]}: nothing revealed, nothing released")
            return False
        self._mark_charged(release)
        return True

    def _charged(self) -> bool:
        """Whether the round's debit is made (and marked)."""
        return self._debit is not None

    def _mark_charged(self, release) -> None:
        self._debit = {"release": release}

    def _unmask(self, phase: int) -> None:
        if phase == 0 and not self._charge():      # spent before any answer is used
            return
        up = self.step["uploaded"]
        headers = {u: self._receipts[(phase, u)][1] for u in up}
        try:
            total = sc.unmask_committee_sum(self._running, self.keys, self.round_id, phase, self.graph, self.Tc,
                                            self.committee, self.step["members"], up, headers,
                                            self._answers.get(phase, {}))
        except DPTopicError as e:
            self._fail(f"unmasking step {phase} failed ({e}): nothing released")
            return
        self._unmasked_sum(phase, total, up)

    def _unmasked_sum(self, phase: int, total, up) -> None:
        """What the round does with step ``phase``'s unmasked sum of the uploads ``up``: step 0 opens step 1 over the
        kept words, step 1 releases (a cohort's round keeps a padded total instead,
        :mod:`dptopic.service.secure_sum.committee_cohorts`)."""
        self.sums[phase], self.shares_of_sum[phase] = total, len(up)
        if phase == 0:
            from ...models.secure_sum import released_words  # start-up: models.secure_sum loads scikit-learn

            kept = released_words(self.plan, total, len(up), self.n_topics)[0]
            self._open_upload(1, list(up), kept=[int(k) for k in kept])
        else:
            self.state = "released"

    def close(self) -> dict:
        """The admin's close of the open step (its survivors are in): the roster, an upload, a consistency or an
        unmasking step."""
        if self.state == "keys":
            self._close_roster("by the admin")
        elif self.state.startswith("upload"):
            self._close_upload(int(self.state[-1]))
        elif self.state.startswith("consistency"):
            self._close_consistency(int(self.state[-1]))
        elif self.state.startswith("unmask"):
            self._unmask(int(self.state[-1]))
        return self.view()


# ----------------------------------------------------------------------------- the durable store
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
    round's advisory lock (:func:`~dptopic.service.secure_sum.default.hold_round_lock`), so the processes change the
    round one at a time, and reads in what the others committed since this process last looked (every stored row carries
    the change that wrote it, ``seq``; the state row ``version`` counts the changes) before its checks run. What a
    process holds in memory is a copy brought up to date that way; the views and long polls read the stored step too
    (:meth:`fresh`, :meth:`current_state`). On SQLite one process serves the round (a second is refused in one line,
    as the default round's is) and its threads take a lock of its own."""

    def __init__(self, plan: ss.SecureSumPlan, directory: dict, vocabulary, n_topics: int = 3,
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
        every :data:`~dptopic.service.secure_sum.default.STATE_LOOK_S` by this process; this process's own changes at
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

__all__ = ["CommitteeRound", "StoredCommitteeRound"]


# ----------------------------------------------------------------------------- HTTP
STATES = ("keys", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released", "failed")
MAX_META_BYTES = 4 * 1024 * 1024


def _reached(state: str, step: str) -> bool:
    return state == "failed" or STATES.index(state) >= STATES.index(step)


class _Served:
    """A :class:`CommitteeRound` served over HTTP: each message runs on a worker thread under the round's lock
    (:func:`_call`), views on the event loop, and each change of step wakes the held requests."""

    def __init__(self, rnd: CommitteeRound, admin_token: str | None, vocabulary, n_topics: int):
        self.rnd, self.admin_token = rnd, admin_token
        self.vocabulary, self.n_topics = vocabulary, n_topics
        self.changed = asyncio.Event()
        self.model = None
        self.config_extra: dict = {}     # what /v1/config adds (a cohort's round: the round in cohorts' own)

    def moved(self, before: str) -> None:
        """Wake every held request if the round left step ``before`` (each waits on the event of the step it saw: a
        new one per change, never cleared, so no wake-up is lost)."""
        if self.rnd.state != before:
            old, self.changed = self.changed, asyncio.Event()
            old.set()

    async def wait(self, step: str, timeout: float) -> None:
        """Until the round reaches ``step`` or ``timeout`` passes: woken by this process's changes of step, and where
        other server processes share the round, looking at the stored step between (pauses growing from
        :data:`~dptopic.service.secure_sum.default.FIRST_LOOK_S` to
        :data:`~dptopic.service.secure_sum.default.LOOK_EVERY_S`)."""
        deadline = time.monotonic() + min(timeout, LONG_POLL_S)
        pause = FIRST_LOOK_S if self.rnd.shared else LONG_POLL_S
        while not _reached(self.rnd.current_state(), step) and time.monotonic() < deadline:
            changed = self.changed          # the event of the step just seen (no await since the look)
            try:
                await asyncio.wait_for(changed.wait(), max(0.0, min(pause, deadline - time.monotonic())))
            except asyncio.TimeoutError:
                pass
            pause = min(LOOK_EVERY_S, pause * 1.5) if self.rnd.shared else pause


def _served(request) -> _Served:
    return request.app.state.served


async def _view(request, who: str | None = None) -> dict:
    """The round's view, once it reached ``?wait=STEP`` (or after ``timeout``, at most :data:`LONG_POLL_S`), with
    what ``include`` asks for the poster (or ``contributor``): ``roster`` (and the committee), ``committee`` (a
    member's uploads and blobs at its consistency and unmasking), ``signatures`` (the committee's)."""
    s = _served(request)
    q = request.query_params
    step = q.get("wait")
    if step is not None:
        await s.wait(step, wait_timeout(q, STATES))
    r = s.rnd
    include = set(filter(None, q.get("include", "").split(",")))
    if include - {"roster", "committee", "signatures"}:
        raise ApiError(400, "bad_include", "include takes roster, committee and signatures, comma-separated.")
    who = q.get("contributor", who)

    def made() -> dict:
        view = r.view()
        state = view["state"]
        if "roster" in include and state not in ("keys", "failed"):
            view["roster"] = r.roster()
        if "committee" in include and who in r.committee and state[:-1] in ("consistency", "unmask"):
            view["uploads"] = r.committee_view(int(state[-1]), who)["uploads"]
        if "signatures" in include and state.startswith("unmask"):
            view["signatures"] = r.signatures(int(state[-1]))
        return view
    # off the event loop where it reads the database: a shared round's view, a member's blobs of a stored round
    return await run_in_threadpool(made) if r.shared or "committee" in include else made()


async def _call(rnd: CommitteeRound, method, *args):
    """``method(*args)`` under the round's lock on a worker thread: the event loop answers views and long polls
    meanwhile (an unmasking takes seconds at 1,000 people)."""
    def locked():
        with rnd.lock:
            return method(*args)
    return await run_in_threadpool(locked)


def _respond(doc: dict, status: int = 200):
    return JSONResponse(doc, status)


async def _after(request, who: str, out: dict, before: str):
    s = _served(request)
    s.moved(before)
    if "wait" in request.query_params:
        out = {**out, "view": await _view(request, who)}
    return _respond(out)


def _config(s: _Served) -> dict:
    r = s.rnd
    return {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": s.vocabulary,
            "vocab_size": len(s.vocabulary), "n_topics": s.n_topics, "round_id": r.round_id,
            "secure_sum": r.plan.to_dict(), "epsilon": r.plan.epsilon, "delta": r.plan.delta, "fed": None,
            "directory": r.directory, "max_body_bytes": 64 * 1024 * 1024, **s.config_extra}


async def http_config(request):
    """``GET /v1/config``: the round's public settings; with ``?wait=upload0`` held until the roster is closed and
    answered with the view, the roster and the committee (``round``): the first request of a contributor whose keys
    were posted ahead."""
    s = _served(request)
    r = s.rnd
    doc = _config(s)
    if "wait" in request.query_params:
        doc["round"] = await _view(request)
        if doc["round"]["state"] not in ("keys", "failed"):
            doc["round"]["roster"] = await run_in_threadpool(r.roster) if r.shared else r.roster()
    return _respond(doc)


async def http_prekeys(request):
    """``POST /v1/secure/prekeys``: ``{"contributor", "bundles": [{"round_id", "keys", "signature"}]}`` (public keys
    only). Answered with the round's configuration (``config``, as ``GET /v1/config``), and with ``?wait=upload0``
    held until the roster closes: a contributor's first request of a round (it checks the plan before anything of
    its data is computed)."""
    doc = await _json(request, MAX_META_BYTES)
    s = _served(request)
    before = s.rnd.state
    out = await _call(s.rnd, s.rnd.post_prekeys, str(doc.get("contributor")), doc.get("bundles"))
    return await _after(request, str(doc.get("contributor")), {**out, "config": _config(s)}, before)


async def http_upload(request):
    """``POST /v1/secure/upload/{p}``: the body is the JSON ``{"header", "blobs"}`` (its length in the
    ``Dptopic-Meta-Length`` header) followed by the masked vector (raw little-endian, the plan's ring); signed
    (``Dptopic-Signature``) by ``Dptopic-Contributor``."""
    phase = _phase(request)
    who = request.headers.get("dptopic-contributor", "")
    data = await request.body()
    try:
        n = int(request.headers.get("dptopic-meta-length", ""))
    except ValueError:
        n = 0
    meta = parse_json(data[:n], "the upload's header") if 0 < n <= min(len(data), MAX_META_BYTES) else None
    if not isinstance(meta, dict):
        raise ApiError(400, "bad_upload", "an upload is its JSON header (Dptopic-Meta-Length bytes), then the vector.")
    r = _served(request).rnd
    before = r.state
    out = await _call(r, r.post_upload, phase, who, data[n:], meta.get("header"), meta.get("blobs"),
                      request.headers.get("dptopic-signature"))
    return await _after(request, who, out, before)


async def _late(request, store, *args) -> dict:
    try:
        return await _call(_served(request).rnd, store, *args)
    except ApiError as e:
        if e.code == "round_closed" and "wait" in request.query_params:
            return {"late": True}
        raise


async def http_consistency(request):
    """``POST /v1/secure/consistency/{p}`` (a committee member): ``{"contributor", "signature"}``."""
    phase = _phase(request)
    doc = await _json(request, MAX_META_BYTES)
    r = _served(request).rnd
    before, who = r.state, str(doc.get("contributor"))
    out = await _late(request, r.post_consistency, phase, who, doc.get("signature"))
    return await _after(request, who, out, before)


async def http_unmask(request):
    """``POST /v1/secure/unmask/{p}`` (a committee member): ``{"contributor", "answers", "signature"}``."""
    phase = _phase(request)
    doc = await _json(request, MAX_META_BYTES)
    r = _served(request).rnd
    before, who = r.state, str(doc.get("contributor"))
    out = await _late(request, r.post_unmask, phase, who, doc.get("answers"), doc.get("signature"))
    return await _after(request, who, out, before)


async def http_round(request):
    """``GET /v1/secure/round[?wait=STEP&contributor=ID&include=...]``: the view (a long poll with ``wait``)."""
    return _respond(await _view(request))


async def http_close(request):
    """``POST /v1/admin/secure/close`` (``Authorization: Bearer TOKEN``): the open step closes."""
    s = _served(request)
    auth = request.headers.get("authorization", "")
    if s.admin_token is None or not auth.startswith("Bearer ") or not hmac.compare_digest(
            auth[7:].strip().encode(), s.admin_token.encode()):
        raise ApiError(403, "wrong_token", "send 'Authorization: Bearer TOKEN' (the server's admin_token).")
    before = s.rnd.state
    out = await _call(s.rnd, s.rnd.close)
    s.moved(before)
    return _respond(out)


async def http_timings(request):
    """``GET /v1/secure/timings``: this server process's own CPU seconds and peak memory."""
    return _respond({"process": process_usage()})


async def http_model(request):
    """``GET /v1/model``: the released model."""
    s = _served(request)
    r = s.rnd
    if r.shared and s.model is None:
        await run_in_threadpool(r.fresh)        # another server process may have released it
    if r.state != "released":
        raise ApiError(404, "no_model", f"the round has released no model (it is at step {r.state!r}).")
    if s.model is None:
        s.model = release_document(r.plan, s.vocabulary, s.n_topics, r.sums[0], r.sums[1],
                                   (r.shares_of_sum[0], r.shares_of_sum[1]), r.round_id)
    return _respond(s.model)


def create_committee_app(plan: ss.SecureSumPlan, directory: dict, vocabulary, n_topics: int = 3,
                         admin_token: str | None = None, database: str | None = None, rnd=None,
                         ledger: str | None = None, ledger_dataset: str | None = None,
                         registration_s: float | None = None):
    """The ASGI app of one committee-mode round: ``/v1/config`` (long-polled
    with ``?wait=upload0`` for the roster and committee), ``/v1/secure/prekeys``, ``/v1/secure/upload/{p}``,
    ``/v1/secure/consistency/{p}``, ``/v1/secure/unmask/{p}``, ``/v1/secure/round``, ``/v1/admin/secure/close``,
    ``/v1/model``; every post takes ``?wait=STEP`` (post-and-wait) and ``include``. ``database``: the round kept
    in that database (:class:`StoredCommitteeRound`: SQLite or PostgreSQL, resumed after a restart), None: in
    memory. ``rnd``: the round, made by the caller (a cohort's, :mod:`dptopic.service.secure_sum.committee_cohorts`),
    instead of one made from the other arguments. ``ledger``, ``ledger_dataset``: the dataset ledger the round is
    charged to (:meth:`CommitteeRound._charge`). ``registration_s``: the registration deadline, seconds after the round
    first opened (then the roster closes with those registered, :meth:`CommitteeRound.close_roster_if_due`), or None."""
    words = vocabulary.words if isinstance(vocabulary, Vocabulary) else list(vocabulary)
    if rnd is None:
        led = {"ledger": ledger, "ledger_dataset": ledger_dataset, "registration_s": registration_s}
        rnd = CommitteeRound(plan, directory, words, n_topics, **led) if database is None else \
            StoredCommitteeRound(plan, directory, words, n_topics, database, **led)

    routes = [Route("/v1/config", http_config, methods=["GET"]),
              Route("/v1/secure/round", http_round, methods=["GET"]),
              Route("/v1/secure/prekeys", http_prekeys, methods=["POST"]),
              Route("/v1/secure/upload/{phase}", http_upload, methods=["POST"]),
              Route("/v1/secure/consistency/{phase}", http_consistency, methods=["POST"]),
              Route("/v1/secure/unmask/{phase}", http_unmask, methods=["POST"]),
              Route("/v1/admin/secure/close", http_close, methods=["POST"]),
              Route("/v1/secure/timings", http_timings, methods=["GET"]),
              Route("/v1/model", http_model, methods=["GET"])]
    served = _Served(rnd, admin_token, words, n_topics)

    @asynccontextmanager
    async def lifespan(app):
        watcher = asyncio.create_task(_watch_deadline(served)) if rnd.registration_deadline is not None else None
        try:
            yield
        finally:
            if watcher is not None:
                watcher.cancel()

    app = Starlette(routes=routes, exception_handlers=dict(ERROR_HANDLERS), lifespan=lifespan)
    app.state.served = served
    return app


async def _watch_deadline(served: _Served) -> None:
    """Until the roster closes: at the registration deadline close it as it stands (on a worker thread, under the
    round's lock), and wake the held requests; looks at the round at least once a second."""
    rnd = served.rnd
    while rnd.current_state() == "keys":
        left = rnd.registration_deadline - time.time()
        if left <= 0:
            before = rnd.state
            try:
                await _call(rnd, rnd.close_roster_if_due)
            except (ApiError, DPTopicError) as e:       # a database that went away a moment: try again
                log.warning("closing the roster at its deadline: %s", e)
            served.moved(before)
        await asyncio.sleep(min(1.0, left) if left > 0 else 1.0)
