"""The server's side of a committee-mode secure-sum round (:mod:`dptopic.protocol.secure_sum.committee`, read its note
first): the prekey bundles, the uploads with their committee blobs, the committee's consistency signatures and
answers, over the round's steps and unmasking (:mod:`.committee_state`); kept in a database by
:mod:`.committee_store` and served by :mod:`.committee_app` (what ``dptopic serve`` runs for a committee-mode round).

:class:`CommitteeRound` runs one round in memory (the same checks and refusals as
:class:`~dptopic.service.secure_sum.default.SecureRound`: a message not signed by the member it names, a malformed
one, one out of its step are refused in one line, :class:`~dptopic.service.secure_sum.config.ApiError`), driven step
by step by the tests; :class:`~.committee_store.StoredCommitteeRound` keeps it in a database (SQLite or PostgreSQL:
each accepted message and the state in one transaction, resumed after a restart; on PostgreSQL several server
processes share the round, each message under the round's lock). :func:`~.committee_app.create_committee_app` serves
either; it runs each message on a worker thread under the round's lock, the unmasking included, so that the event loop
answers views and long polls meanwhile.

Steps: ``keys`` (prekey bundles of this round; the roster closes when every member of the directory has one, or at
the registration deadline or by :meth:`CommitteeRound.close` with those registered: at least N - F, each with the
threshold of its neighbours among them, else the round fails), ``upload{p}`` (everyone), ``consistency{p}`` and
``unmask{p}`` (the committee), then ``released`` (or ``failed``).
"""
from __future__ import annotations

import logging

import numpy as np

from ...protocol.secure_sum import committee as sc
from ...protocol.secure_sum.messages import HEX32, canonical, digest
from .committee_state import CommitteeState
from .config import (
    ApiError,
    check_keys_message,
    check_signed,
    late_registration,
)

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
    if not all(isinstance(h, str) and HEX32.fullmatch(h) for h in [*header["blobs"].values(),
                                                                       *header["pairs"].values()]):
        return "each digest and commitment is a SHA-256 in lower-case hex"
    return None




class CommitteeRound(CommitteeState):
    """One committee-mode round in memory: ``plan`` (a :class:`~dptopic.protocol.secure_sum.plan.SecureSumPlan` with
    a committee), the operator's ``directory``, the public ``vocabulary`` and ``n_topics``; ``ledger`` and
    ``ledger_dataset``: the dataset ledger the round is charged to, once, before its first unmasking (:meth:`_charge`),
    or None."""

    def _signed(self, contributor: str, signature, msg: bytes) -> None:
        check_signed(self.members, contributor, signature, msg)

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

    def post_upload(self, phase: int, contributor: str, body: bytes, header, blobs, signature) -> dict:
        """A member's masked upload of ``phase`` with its committee blobs, signed over both."""
        sha = digest(bytes(body))
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
            if canonical(old) == canonical(answers):
                return {"replayed": True}
            raise ApiError(409, "answers_changed", f"{member!r}'s answers of step {phase} are already stored: one"
                                                   " each.")
        self._answers.setdefault(phase, {})[member] = answers
        if len(self._answers[phase]) == len(self.step["signers"]):
            self._unmask(phase)
        return {"stored": True}

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
