"""A person's side of a committee-mode secure-sum round (:mod:`dptopic.protocol.secure_sum.committee`, read its note
first): one upload per sum for everyone, the consistency and unmasking steps for the committee's members only.

:class:`CommitteeContributor` is a :class:`~dptopic.contributor.secure_sum.default.SecureContributor` (the same
configuration, directory, roster and state-file checks, the same keys message as its prekey bundle) whose uploads
carry the committee's blobs, and which, when it sits on the committee, checks and signs the set of uploads and answers
for it. Every refusal is one line (:class:`~dptopic.contributor.secure_sum.checks.ServerLied`). Its checks of a
step's members, its masking and its check of the set it signed are the default round's, with the mode's pairwise
seed (:meth:`~dptopic.contributor.secure_sum.default.SecureContributor._step_members`, ``_masked``,
``_check_signed_set``); over HTTP it is :func:`~dptopic.contributor.secure_sum.client.take_part_committee`.
"""
from __future__ import annotations

import base64

from ...errors import DPTopicError
from ...protocol.secure_sum import committee as sc
from ...protocol.secure_sum.crypto import sign, verify
from ...protocol.secure_sum.messages import digest
from .checks import LeftOut, ServerLied
from .default import SecureContributor
from .masks import ContributorSecrets
from .state import STATE_FORMAT, read_state


class CommitteeContributor(SecureContributor):
    """One person in a committee-mode round (the plan's ``committee`` is not 0); the arguments are
    :class:`~dptopic.contributor.secure_sum.default.SecureContributor`'s."""

    COMMITTEE = True

    def __init__(self, *args, secrets: dict | None = None, **kwargs):
        self._drawn = secrets       # keys drawn before the configuration was known (take_part_committee)
        super().__init__(*args, **kwargs)
        self.Tc = self.plan.committee_threshold
        self.committee: list | None = None
        if secrets is not None and self.st["secrets"] != secrets:
            if self.st["sent"]:
                raise DPTopicError("this contributor's state file holds other keys than the ones just posted: give"
                                   " a fresh state file for a new round.")
            self.st["secrets"] = secrets
            self.secrets = ContributorSecrets.from_dict(secrets)
            self._write()

    def _load(self):
        """The state file; one written by :func:`~.client.take_part_committee` before the configuration was known (its
        keys, and no plan yet) takes this plan now: the plan was checked (``max_epsilon``, the directory) just
        before."""
        st = read_state(self.path)
        if st is not None and st.get("plan") is None and st.get("format") == STATE_FORMAT \
                and st.get("round_id") == self.round_id and st.get("contributor") == self.me:
            st["plan"] = self.plan.to_dict()
            self.st = st
            self._write()
        return super()._load()

    # ------------------------------------------------------------ the round's roster and committee
    def prekey(self) -> dict:
        """The prekey bundle for this round (posted before the round opens): this round's keys message, signed with
        the invitation key (:meth:`~dptopic.contributor.secure_sum.default.SecureContributor.registration`)."""
        return {"round_id": self.round_id, **self.registration()}

    def check_round(self, roster, committee) -> list:
        """The closed roster (checked as today, and every committee member's entry signed by its member) and the
        committee the server names, refused unless it is the public one (:func:`~dptopic.protocol.secure_sum.committee.
        committee_of` of the roster's ids)."""
        roster = self.check_roster(roster)
        mine = sc.committee_of(list(roster), self.round_id, self.plan.committee)
        self._check_committee(committee, mine)
        for m in mine:      # its blobs go to them: each entry signed by its member, as a neighbour's
            self._check_entry_signed(m, roster[m])
            self._check_entry_keys(m, roster[m])
        self.committee = mine
        return mine

    def _check_committee(self, committee, mine: list) -> None:
        """The committee the server names is the public one the roster gives (``mine``)."""
        if committee != mine:
            raise ServerLied("the server names another committee than the one the roster gives (the first"
                             f" {self.plan.committee} by the round's public hash): nothing sent.")

    # ------------------------------------------------------------ everyone: one upload per sum
    def committee_upload(self, phase: int, view: dict) -> tuple[bytes, dict, dict, str]:
        """``(body, header, blobs, signature)`` of ``POST /v1/secure/upload/{phase}`` in committee mode: the masked
        vector and the committee's blobs (made once), after checking the step's members (and at step 1 the kept
        words)."""
        self._live()
        if self.committee is None:
            raise DPTopicError("the roster and committee are needed before an upload (check_round).")
        member_set, kept = self._step_members(phase, view)

        def make():
            seeds = {}
            y = self._masked(phase, member_set, kept, sc.pair_seed_c, seeds)
            blobs = sc.make_blobs(self.me, self.secrets.c, self.roster, self.round_id, phase, self.committee,
                                  self.secrets.b[phase], seeds, self.Tc)
            header = {"blobs": {m: sc.blob_digest(b) for m, b in blobs.items()},
                      "pairs": {v: sc.pair_commitment(self.round_id, phase, self.me, v, s) for v, s in seeds.items()}}
            body = y.tobytes()
            return {"body": base64.b64encode(body).decode(), "header": header, "blobs": blobs,
                    "signature": sign(self.key, sc.upload_message(self.round_id, phase, self.me, digest(body),
                                                                  header))}
        sent = self._once(f"upload{phase}", make)
        return base64.b64decode(sent["body"]), sent["header"], sent["blobs"], sent["signature"]

    def _check_members_of_step1(self, member_set: frozenset) -> None:
        """This contributor uploaded in step 0 (else :class:`LeftOut`), and step 1's members were all members of step 0
        (in committee mode only the committee signs a set of uploads)."""
        if self._masked_set(0) is None:
            raise LeftOut("this contributor did not upload in step 0.")
        if not member_set <= self._masked_set(0):
            raise ServerLied("the server names members for step 1 who were not members of step 0: nothing sent.")

    # ------------------------------------------------------------ committee members only
    def _member(self) -> None:
        if self.committee is None or self.me not in self.committee:
            raise DPTopicError("this contributor is not on the round's committee.")

    def _checked_set(self, phase: int, view: dict) -> frozenset:
        """The set of uploads of ``phase`` the server names, checked as a survivor checks it today
        (:func:`~dptopic.protocol.secure_sum.committee.set_problem`) against the members this member masked with."""
        uploaded = self._ids(view.get("uploaded"), f"uploads of step {phase}")
        up = self._id_set(uploaded, f"uploads of step {phase}")
        masked = self._masked_set(phase)
        if masked is None:
            raise LeftOut(f"this committee member did not upload in step {phase}.")
        why = sc.set_problem(up, masked, self.graph, self.least, self.T)
        if why is not None:
            raise ServerLied(f"the server's set of uploads of step {phase} {why}: nothing signed or revealed.")
        return up

    def committee_consistency(self, phase: int, view: dict) -> dict:
        """``POST /v1/secure/consistency/{phase}`` (a committee member): its signature over the set of uploads, after
        checking it; one set per step (a second, different set is refused)."""
        self._live()
        self._member()
        up = self._checked_set(phase, view)
        return self._sign_once(phase, up, sc.consistency_message(self.round_id, phase, up))

    def _quorum(self, phase: int, up: frozenset, signatures) -> None:
        """Require ``T_c`` valid committee signatures over this member's own set of uploads."""
        if not isinstance(signatures, dict):
            raise ServerLied(f"the server's committee signatures of step {phase} are not an object: nothing"
                             " revealed.")
        msg = sc.consistency_message(self.round_id, phase, up)
        valid = sum(1 for m in self.committee
                    if m in signatures and verify(bytes.fromhex(self.members[m]), signatures[m], msg))
        if valid < self.Tc:
            raise ServerLied(f"the server holds {valid} valid committee signatures over your set of uploads of step"
                             f" {phase}, fewer than the committee's threshold {self.Tc}: it may have shown them"
                             " another set; nothing revealed.")

    def committee_unmask(self, phase: int, view: dict, signatures, uploads) -> dict:
        """``POST /v1/secure/unmask/{phase}`` (a committee member): for each uploader of its signed set whose upload is
        signed and whose blob decrypts, its share of ``b`` and of the pairwise seeds with its neighbours among the
        members who did not upload; after ``T_c`` committee signatures over that set. Made once per step.

        ``uploads``: ``{uploader: {"sha": hex SHA-256 of its body, "pairs": its pair commitments' digest, "path":
        the Merkle path of this member's blob digest, "signature", "blob"}}`` (the blob addressed to this member;
        :func:`~dptopic.protocol.secure_sum.committee.signed_upload`)."""
        self._live()
        self._member()
        up = self._checked_set(phase, view)
        self._check_signed_set(phase, up)
        if not isinstance(uploads, dict):
            raise ServerLied(f"the server's uploads of step {phase} are not an object: nothing revealed.")
        masked = self._masked_set(phase)

        def make():
            self._quorum(phase, up, signatures)
            answers, skipped = {}, []
            for u in sorted(up):
                got = uploads.get(u)
                neighbours = sorted(v for v in self.graph[u] if v in masked)
                try:
                    blob = got["blob"]
                    b, pairs = sc.open_blob(self.me, self.secrets.c, self.roster, self.round_id, phase, u, blob,
                                            neighbours) if self._upload_signed(phase, u, got) else (None, None)
                except (DPTopicError, KeyError, TypeError, AttributeError):
                    b = None
                if b is None:
                    skipped.append(u)       # a replaced or missing blob: nothing revealed for it
                    continue
                answers[u] = {"b": b.hex(), "pairs": {v: pairs[v].hex() for v in self._pairs_revealed(neighbours,
                                                                                                      up)}}
            return {"answers": answers, "skipped": skipped,
                    "signature": sign(self.key, sc.answers_message(self.round_id, phase, self.me, answers))}
        sent = self._once(f"unmask{phase}", make)
        return {"contributor": self.me, "answers": sent["answers"], "signature": sent["signature"]}

    def _upload_signed(self, phase: int, u: str, got: dict) -> bool:
        """Whether the blob ``got`` carries is one ``u`` signed with its upload (its digest, by the Merkle path, under
        the root ``u``'s signature covers)."""
        root = sc.root_from_path(self.me, sc.blob_digest(got["blob"]), got["path"])
        return root is not None and verify(bytes.fromhex(self.members[u]), got["signature"],
                                           sc.signed_upload(self.round_id, phase, u, got["sha"], root, got["pairs"]))

    def _pairs_revealed(self, neighbours: list, up: frozenset) -> list:
        """The neighbours of an uploader whose pairwise seeds' shares a member reveals: those not in the set of
        uploads (their masks stay on the sum otherwise; with the uploaded ones' they would come off the upload)."""
        return [v for v in neighbours if v not in up]

    def summary(self) -> dict:
        """What the contributor's run reports (with the committee)."""
        return {**super().summary(), "committee": self.plan.committee, "committee_threshold": self.Tc,
                "on_committee": bool(self.committee and self.me in self.committee)}


__all__ = ["CommitteeContributor"]
