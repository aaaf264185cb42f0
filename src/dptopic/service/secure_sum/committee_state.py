"""The committee-mode round's steps (:class:`CommitteeState`, read :mod:`.committee` first): its roster and
registration deadline, each step's close (or the round's failure, in one line), the dataset ledger's charge
before the first unmasking, and the unmasking itself (:func:`unmask_committee_sum`, which only the server runs)."""
from __future__ import annotations

import logging
import threading
import time

import numpy as np

from ...errors import DPTopicError, ParameterError
from ...protocol.secure_sum import committee as sc
from ...protocol.secure_sum import default as ss
from ...protocol.secure_sum.crypto import prg, seed_commitment
from ...protocol.secure_sum.enrollment import check_directory
from ...protocol.secure_sum.graph import neighbour_graph
from ...protocol.secure_sum.plan import SecureSumPlan
from ...protocol.secure_sum.ring import from_ring, ring_dtype, triangle_size
from .config import (
    MAX_REGISTRATION_S,
    ApiError,
    check_directory_plan,
)
from .state import charge_or_fail

log = logging.getLogger("dptopic.service")


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
    y = y.astype(ring_dtype(bits))
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
        seed = ss.reconstruct_checked(b_shares, threshold, lambda s: seed_commitment(round_id, u, phase, s) == want,
                                      f"{u[:40]!r}")
        y -= prg(seed, dim, bits)
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
            m = prg(seed, dim, bits)
            if u < v:       # u added +m when u < v
                y -= m
            else:
                y += m
    return from_ring(y, bits)


class CommitteeState:
    """A committee-mode round's state in memory and the steps that move it on (each closes once its members are
    in, or by the admin, or at the registration deadline); its messages are :class:`~.committee.CommitteeRound`'s."""

    shared = False
    """Whether other server processes may change the round (:class:`StoredCommitteeRound` on PostgreSQL)."""

    def __init__(self, plan: SecureSumPlan, directory: dict, vocabulary, n_topics: int = 3,
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
        self.graph = neighbour_graph(sorted(self.members), self.round_id, plan.degree)
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

    def _need(self, *states) -> None:
        if self.state not in states:
            raise ApiError(409, "round_closed" if self.state != "keys" else "not_open",
                           f"the round is at step {self.state!r}"
                           + (f" ({self.reason})" if self.reason else "")
                           + f", not {' or '.join(repr(s) for s in states)}: nothing stored.")

    def _fail(self, reason: str) -> None:
        self.state, self.reason = "failed", reason

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

    def fresh(self) -> None:
        """Bring the round up to what other server processes changed (none here: the round is this object)."""

    def current_state(self) -> str:
        """The round's step, as long polls read it."""
        return self.state

    def dim(self, phase: int) -> int:
        """Entries of step ``phase``'s vector."""
        return self.plan.vocab_size + 1 if phase == 0 else triangle_size(len(self.step["kept"]))

    def _close_upload(self, phase: int) -> None:
        uploaded = sorted(u for p, u in self._receipts if p == phase)
        if len(uploaded) < self.plan.n - self.plan.dropouts:
            self._fail(f"{len(uploaded)} uploads at step {phase}, fewer than N - F: nothing released")
            return
        self.state = f"consistency{phase}"
        self.step = {**self.step, "uploaded": uploaded}
        self.uploaded[phase] = uploaded

    def _close_consistency(self, phase: int) -> None:
        if len(self._signatures.get(phase, {})) < self.Tc:
            self._fail(f"{len(self._signatures.get(phase, {}))} committee signatures at step {phase}, fewer than its"
                       f" threshold {self.Tc}: nothing released")
            return
        self.state = f"unmask{phase}"
        self.step = {**self.step, "signers": sorted(self._signatures[phase])}

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
