"""The server's side of a committee-mode secure-sum round (:mod:`dptopic.protocol.secure_sum.committee`, read its note
first): the prekey bundles, the uploads with their committee blobs, the committee's consistency signatures and
answers, and the unmasking; and its HTTP app (what ``dptopic serve`` runs for a committee-mode round).

:class:`CommitteeRound` runs one round in memory (the same checks and refusals as
:class:`~dptopic.service.secure_sum.default.SecureRound`: a message not signed by the member it names, a malformed one,
one out of its step are refused in one line, :class:`~dptopic.service.secure_sum.config.ApiError`), driven step by step
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

import logging
import threading
import time

import numpy as np

from ...errors import DPTopicError, ParameterError
from ...protocol.secure_sum import committee as sc
from ...protocol.secure_sum import default as ss
from ...protocol.secure_sum.enrollment import check_directory
from .config import (
    MAX_REGISTRATION_S,
    ApiError,
    check_directory_plan,
    check_keys_message,
    check_signed,
    late_registration,
)
from .state import charge_or_fail

log = logging.getLogger("dptopic.service")


def check_header(header, committee, neighbours) -> str | None:
    """Why an upload's ``header`` is malformed, or None: a blob digest for exactly the committee's members, a
    commitment for exactly the uploader's ``neighbours`` among the step's members."""
    if not (isinstance(header, dict) and set(header) == {"blobs", "pairs"} and isinstance(header["blobs"], dict)
            and isinstance(header["pairs"], dict)):
        return "the header must be {'blobs': {member: sha256}, 'pairs': {neighbour: sha256}}"
    if set(header["blobs"]) != set(committee):
        return "the header's blobs are not addressed to exactly the round's committee"
    if set(header["pairs"]) != set(neighbours):
        return "the header's pair commitments are not for exactly the uploader's neighbours among the members"
    if not all(isinstance(h, str) and ss.HEX32.fullmatch(h) for h in [*header["blobs"].values(),
                                                                       *header["pairs"].values()]):
        return "each digest and commitment is a SHA-256 in lower-case hex"
    return None


def unmask_committee_sum(total: np.ndarray, roster: dict, round_id: str, phase: int, graph, threshold: int,
                         committee, members, uploaded, headers: dict, responses: dict) -> np.ndarray:
    """The sum of the uploads of ``uploaded`` (``total``: their sum in the ring), unmasked, as signed integers.

    ``headers``: each uploader's upload header (its pair commitments); ``responses``: ``{member: {uploader: {"b":
    hex, "pairs": {neighbour: hex}}}}`` from the committee. Each seed is checked against its commitment. Raises (one
    line) when a needed seed has fewer than ``threshold`` shares, or none that reconstruct it."""
    index = sc.committee_index(committee)
    members, uploaded = frozenset(members), frozenset(uploaded)
    y = np.array(total)
    bits = 8 * y.dtype.itemsize
    y = y.astype(ss.ring_dtype(bits))
    dim = len(y)
    for u in sorted(uploaded):
        b_shares, pair_shares = {}, {}
        for m, answers in responses.items():
            a = answers.get(u) if m in index else None
            if not isinstance(a, dict):
                continue
            if ss.check_share(a.get("b")):
                b_shares[index[m]] = bytes.fromhex(a["b"])
            pairs = a.get("pairs")
            for v, sh in (pairs.items() if isinstance(pairs, dict) else ()):
                if v in members and v not in uploaded and ss.check_share(sh):
                    pair_shares.setdefault(v, {})[index[m]] = bytes.fromhex(sh)
        if len(b_shares) < threshold:
            raise DPTopicError(f"only {len(b_shares)} of the {threshold} committee shares needed to unmask"
                               f" contributor {u[:40]!r} arrived: the sum cannot be read.")
        want = roster[u]["b"][phase]
        seed = ss.reconstruct_checked(b_shares, threshold, lambda s: ss.seed_commitment(round_id, u, phase, s) == want,
                                      f"{u[:40]!r}")
        y -= ss.prg(seed, dim, bits)
        for v in graph[u]:
            if v not in members or v in uploaded:
                continue
            got = pair_shares.get(v, {})
            if len(got) < threshold:
                raise DPTopicError(f"only {len(got)} of the {threshold} committee shares needed to remove the mask of"
                                   f" {u[:40]!r} with {v[:40]!r} arrived: the sum cannot be read.")
            commit = headers[u]["pairs"][v]
            seed = ss.reconstruct_checked(got, threshold,
                                          lambda s: sc.pair_commitment(round_id, phase, u, v, s) == commit,
                                          f"the pair {u[:40]!r}, {v[:40]!r}")
            m = ss.prg(seed, dim, bits)
            if u < v:       # u added +m when u < v
                y -= m
            else:
                y += m
    return ss.from_ring(y, bits)


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
        check_keys_message(self.members, self.round_id, contributor, keys, b.get("signature"))
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
        why = check_header(header, self.committee, [v for v in self.graph[contributor] if v in members])
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
        charged, release = charge_or_fail(self._fail, self.ledger, self.ledger_dataset, self.plan, self.uploaded[0],
                                          self.directory)
        if not charged:
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
            total = unmask_committee_sum(self._running, self.keys, self.round_id, phase, self.graph, self.Tc,
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
