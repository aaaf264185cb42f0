"""A person's side of a secure-sum round, transport-free: the server's configuration checked, and the steps of
:class:`SecureContributor` (its keys, shares, masked uploads, signatures and answers).

The protocol is :mod:`dptopic.protocol.secure_sum` (read :mod:`dptopic.protocol.secure_sum.default`'s note first);
what is computed here sees the person's documents or secrets and runs on their machine only. The contributor's parts
are a module each beside this one: every check of what the server says and the refusals they raise
(:mod:`~dptopic.contributor.secure_sum.checks`), the round's secrets, their shares and masks
(:mod:`~dptopic.contributor.secure_sum.masks`), the person's bounded statistics
(:mod:`~dptopic.contributor.secure_sum.person_statistics`) and the state file
(:mod:`~dptopic.contributor.secure_sum.state`). The transport (HTTP, waiting between steps) is
:mod:`dptopic.contributor.secure_sum.client`'s.

:class:`SecureContributor` checks everything the server tells it before it masks and before it reveals, and refuses in
one line naming what the server claimed (:class:`~dptopic.contributor.secure_sum.checks.ServerLied`): the configuration
and the plan (the plan and mode its invitation pins, :func:`check_invitation`; kept in the state file at first contact,
a later change is refused), the directory against the enrollment key of its own invitation, the roster (the directory's
members who registered: at least N - F of them, F the dropouts its invitation pins, this contributor and the threshold
of its neighbours among them, each entry signed by its member), each step's members, the set of uploads and the
consistency signatures over it, the kept words; each check a method of its own. What it sends is written to the state
file before it is sent (a resumed run sends the same keys, shares, uploads and answers, signs one set of uploads per
step, never reveals both secrets of one neighbour), and the round's secrets are wiped from it once the round is over.
"""
from __future__ import annotations

import base64
from pathlib import Path

import numpy as np

from ...accounting.skellam import rounded_norms
from ...errors import DPTopicError
from ...mechanisms.skellam import SecureUniform, skellam_share
from ...protocol.secure_sum.crypto import pair_seed, sign, signing_public
from ...protocol.secure_sum.default import answers_message, consistency_message, keys_message, upload_message
from ...protocol.secure_sum.enrollment import check_directory, layout_difference, layout_of
from ...protocol.secure_sum.graph import neighbour_graph
from ...protocol.secure_sum.messages import ROUND_ID, set_digest
from ...protocol.secure_sum.plan import SecureSumPlan
from .checks import LeftOut, ServerChecks, ServerLied, WrongMode, _set_of, _sorted_ids
from .masks import ContributorSecrets, RevealLog, make_shares, mask, open_shares
from .person_statistics import person_cooccurrence, person_presence, quantize
from .state import StateFile, new_state


# ----------------------------------------------------------------------------- the server's configuration
def check_invitation(plan: SecureSumPlan, invitation: dict) -> None:
    """The server's ``plan`` against what ``invitation`` (a single round's,
    :func:`~dptopic.protocol.secure_sum.enrollment.read_invitation`'s) pins: the mode (a committee or none) and the
    operator's
    layout (the round's size, dropouts and collusion: :data:`~dptopic.protocol.secure_sum.enrollment.LAYOUT_KEYS`). One
    line naming what differs and what to do, before anything is computed or sent: a server that states fewer colluders
    lowers the threshold (:mod:`dptopic.protocol.secure_sum.enrollment`'s note)."""
    rid = str(invitation.get("round_id"))[:64]
    if bool(plan.committee) != bool(invitation.get("committee", False)):
        if plan.committee:
            raise WrongMode(f"this is a committee round: the server runs round {rid!r} with a committee of"
                            f" {plan.committee}, and your invitation is to a round without one: nothing sent; ask the"
                            " round's operator (the server must serve the mode its directory names).")
        raise WrongMode(f"this is a round without a committee: the server runs round {rid!r} without one, and your"
                        " invitation is to a committee round: nothing sent; ask the round's operator (the server must"
                        " serve the mode its directory names).")
    pinned = invitation.get("layout")
    if pinned is None:
        raise DPTopicError("your invitation pins no plan (the round's dropouts and collusion: an invitation of an older"
                           " dptopic): ask the round's operator to invite again; nothing sent.")
    diff = layout_difference(layout_of(plan), pinned, "{key} {stated} (your invitation: {pinned})")
    if diff:
        raise ServerLied(f"the server's plan differs from the one your invitation pins: {diff}; nothing sent (a server"
                         " that states fewer colluders lowers the threshold); ask the round's operator.")


def check_config(config, invitation: dict | None = None) -> dict:
    """A secure-sum server's ``/v1/config``, checked before anything is computed or sent: ``{"plan", "round_id",
    "vocabulary", "n_topics", "directory"}``; one line naming what is wrong. ``invitation``: a single round's
    invitation, whose mode and plan the server's must be (:func:`check_invitation`)."""
    if not isinstance(config, dict) or config.get("report_kind") != "secure-sum":
        raise DPTopicError("this server does not run a secure sum (its /v1/config names no report_kind"
                           " 'secure-sum').")
    plan = SecureSumPlan.from_dict(config.get("secure_sum"))
    rid, words, k = config.get("round_id"), config.get("vocabulary"), config.get("n_topics")
    if not (isinstance(rid, str) and ROUND_ID.fullmatch(rid)):
        raise ServerLied(f"the server's round id {str(rid)[:80]!r} is not 1-64 of A-Z a-z 0-9 _ -: refusing to take"
                         " part.")
    if invitation is not None:
        if invitation["round_id"] != rid:
            raise ServerLied(f"the server runs round {rid!r}, but your invitation is for round"
                             f" {invitation['round_id']!r}: nothing sent.")
        check_invitation(plan, invitation)
    if not (isinstance(words, list) and all(isinstance(w, str) for w in words)) or len(words) != plan.vocab_size \
            or config.get("vocab_size") != plan.vocab_size or len(set(words)) != len(words):
        raise ServerLied(f"the server's vocabulary ({len(words) if isinstance(words, list) else 'no list'} words)"
                         f" does not match its plan's vocab_size {plan.vocab_size}: refusing to take part.")
    for key in ("epsilon", "delta"):
        if config.get(key) != getattr(plan, key):
            raise ServerLied(f"the server's {key} ({str(config.get(key))[:20]}) differs from its plan's"
                             f" ({getattr(plan, key):g}): refusing to take part.")
    if isinstance(k, bool) or not isinstance(k, int) or not 2 <= k <= plan.vocab_size:
        raise ServerLied(f"the server's n_topics {str(k)[:20]} is not an integer in [2, V]: refusing to take part.")
    if not isinstance(config.get("directory"), dict):
        raise ServerLied("the server's /v1/config holds no enrollment directory: it admits anyone; refusing to take"
                         " part.")
    return {"plan": plan, "round_id": rid, "vocabulary": words, "n_topics": k, "directory": config["directory"]}


class SecureContributor(ServerChecks, StateFile):
    """One person (all of ``bow``'s documents) in one round, holding ``invitation``
    (:func:`~dptopic.protocol.secure_sum.enrollment.read_invitation`'s).

    ``state``: a JSON file path or None (kept nowhere: a rerun cannot resume). ``rng``: a numpy Generator for a
    simulation's rounding and noise (tests, benchmarks); by default (None) they come from the OS CSPRNG
    (:class:`~dptopic.mechanisms.skellam.SecureUniform`)."""

    COMMITTEE = False
    """Whether this class takes part in a committee-mode round (:mod:`dptopic.contributor.secure_sum.committee`)."""
    PINNED = True
    """Whether the invitation pins this round's plan and mode (:func:`check_invitation`): a single round's does; a
    cohort's round and the bridge take their plans from the round's cohort plan, which the invitation's cohort layout
    pins (:mod:`dptopic.contributor.secure_sum.cohort_client`)."""

    def __init__(self, config: dict, bow, invitation: dict, state=None, max_epsilon: float | None = None, rng=None):
        cfg = check_config(config, invitation if self.PINNED else None)
        self.plan, self.round_id, self.n_topics = cfg["plan"], cfg["round_id"], cfg["n_topics"]
        if bool(self.plan.committee) != self.COMMITTEE:
            raise DPTopicError("the server's round runs the secure sum " + (
                "with a committee: take part with CommitteeContributor (dptopic.contributor.secure_sum.committee)."
                if self.plan.committee else "without a committee: take part with SecureContributor."))
        self.V = self.plan.vocab_size
        self.me, self.key = invitation["contributor"], invitation["signing_key"]
        if invitation["round_id"] != self.round_id:
            raise ServerLied(f"the server runs round {self.round_id!r}, but your invitation is for round"
                             f" {invitation['round_id']!r}: nothing sent.")
        try:
            directory = check_directory(cfg["directory"], invitation["enrollment_key"], "the server's directory")
        except DPTopicError as e:
            raise ServerLied(str(e)) from None
        if directory["round_id"] != self.round_id:
            raise ServerLied("the server's directory is for another round than its own: nothing sent.")
        self.members = directory["members"]
        self._directory_key = (directory["enrollment_key"], directory["signature"])    # verified: names its content
        if self.members.get(self.me) != signing_public(self.key).hex():
            raise ServerLied(f"the server's directory does not list your invitation's key for {self.me!r}: nothing"
                             " sent.")
        if len(self.members) != invitation["count"] or self.plan.n != invitation["count"]:
            raise ServerLied(f"the server's round has {self.plan.n} contributors and its directory"
                             f" {len(self.members)}, but your invitation is for a round of {invitation['count']}:"
                             " nothing sent.")
        if max_epsilon is not None and self.plan.epsilon > max_epsilon * (1 + 1e-12):
            raise DPTopicError(f"the server asks for epsilon {self.plan.epsilon:g} per person, above your"
                               f" max_epsilon {max_epsilon:g}: nothing computed or sent.")
        self.ids = _sorted_ids(frozenset(self.members))     # one list per directory in a process
        self.graph = neighbour_graph(self.ids, self.round_id, self.plan.degree)
        self.T = self.plan.threshold
        pinned = invitation.get("layout") if self.PINNED else None
        #: the fewest contributors a roster, a step's members or its uploads may hold: N - F, with F the dropouts the
        #: invitation pins (the server's plan was checked to state the same, :func:`check_invitation`), else the plan's
        self.least = self.plan.n - (pinned["dropouts"] if isinstance(pinned, dict) else self.plan.dropouts)
        self.bow = bow
        self.rng = rng
        self.path = None if state is None else Path(state)
        self.st = self._load() if self.path is not None else None
        if self.st is None:
            self.st = new_state(self.round_id, self.me, self.plan.to_dict(), ContributorSecrets.new().to_dict())
            self._write()
        #: the round is over for this contributor (released, or failed and why): its secrets were wiped
        self.finished = self.st.get("finished")
        self.secrets = None if self.st["secrets"] is None else ContributorSecrets.from_dict(self.st["secrets"])
        self.log = RevealLog(self.st["revealed"])
        self.held: dict | None = None
        self.dropped_shares: list = []
        self.roster: dict | None = None
        self._sets: dict = {}          # the sets made once from the state and the views (_masked_set, _uploaded)
        self._agreed: dict = {}        # this contributor's c agreements, by peer key: each used to send and to open


    def _coins(self):
        return self.rng if self.rng is not None else SecureUniform()

    # ------------------------------------------------------------ steps
    def _live(self) -> None:
        if self.secrets is None:
            raise DPTopicError(f"this round is over for you ({self.finished}): its secrets were wiped from"
                               f" {self.path}; nothing more to send.")

    def registration(self) -> dict:
        """``POST /v1/secure/keys``: the public keys and seed commitments, signed with the invitation key."""
        self._live()
        keys = self.secrets.public(self.round_id, self.me)
        return {"contributor": self.me, "keys": keys,
                "signature": sign(self.key, keys_message(self.round_id, self.me, keys))}

    def shares_request(self, roster: dict) -> dict:
        """``POST /v1/secure/shares``: each neighbour's encrypted shares (made once)."""
        self._live()
        roster = self.check_roster(roster)
        mine = {self.me: [v for v in self.graph[self.me] if v in roster]}     # its registered neighbours
        shares = self._once("shares", lambda: make_shares(self.me, self.secrets, roster, self.round_id, mine,
                                                          self.T, self._agreed))
        return {"contributor": self.me, "shares": shares}

    def take_shares(self, ciphertexts) -> None:
        """Keep the shares the neighbours sent: one that does not decrypt is dropped alone (its sender's seeds then
        lack this share), and one from anyone else than a neighbour is ignored."""
        self._live()
        if self.roster is None:
            raise DPTopicError("the roster is needed before the shares (check_roster).")
        if not isinstance(ciphertexts, dict):
            raise ServerLied("the server's shares are not an object: nothing sent.")
        held = {}
        for s in self.graph[self.me]:
            ct = ciphertexts.get(s)
            if not isinstance(ct, str) or s not in self.roster:
                continue
            try:
                held[s] = open_shares(self.me, self.secrets, self.roster, self.round_id, s, ct, self._agreed)
            except DPTopicError:
                self.dropped_shares.append(s)
        self.held = held
        self._agreed = {}       # each c agreement was used to send and to open: none is needed again

    def statistic(self, phase: int, kept=None) -> np.ndarray:
        """This person's bounded statistic of ``phase``."""
        if phase == 0:
            return person_presence(self.bow, self.V)
        return person_cooccurrence(self.bow, np.asarray(kept, dtype=np.int64), self.V)

    def _share(self, phase: int, x: np.ndarray) -> np.ndarray:
        """The statistic ``x`` quantized, plus this person's noise share of ``phase`` (signed integers): what is
        masked."""
        q = quantize(x, self.plan.scale, rounded_norms(self.plan.scale, len(x))[0], self._coins())
        noisy, _ = skellam_share(q, self.plan.mu_shares[phase], self.plan.scale,
                                 None if self.rng is None else self.rng, secure=self.rng is None)
        return noisy

    def upload(self, phase: int, view: dict) -> tuple[bytes, str]:
        """``(body, signature)`` of ``POST /v1/secure/upload/{phase}`` (quantized statistic + noise share + masks,
        made once), after checking the step's members (and at step 1 the kept words). Raises :class:`LeftOut` when
        the server leaves this contributor out."""
        self._live()
        member_set, kept = self._step_members(phase, view)
        if self.roster is None:
            raise DPTopicError("the roster is needed before an upload (check_roster).")

        def make():
            body = self._masked(phase, member_set, kept).tobytes()
            return {"body": base64.b64encode(body).decode(),
                    "signature": sign(self.key, upload_message(self.round_id, phase, self.me, body))}
        sent = self._once(f"upload{phase}", make)
        return base64.b64decode(sent["body"]), sent["signature"]

    def _step_members(self, phase: int, view: dict) -> tuple[frozenset, list | None]:
        """``(members, kept)`` of the step ``view`` shows, checked before anything is masked (either mode): the
        members distinct ids of the directory, this contributor among them (else :class:`LeftOut`), at step 1 the
        kept words and the members of step 1 (:meth:`_check_members_of_step1`), enough of them
        (:meth:`_enough`), and on a resumed run the members this contributor masked with."""
        members = self._ids(view.get("members"), f"members of step {phase}")
        member_set = self._id_set(members, f"members of step {phase}")
        if self.me not in member_set:
            raise LeftOut(f"the server left this contributor out of step {phase}.")
        kept = None
        if phase == 1:
            kept = self._check_kept(view.get("kept"))
            self._check_members_of_step1(member_set)
        self._enough(member_set, "members", phase)
        self._check_same_members(phase, members)
        return member_set, kept

    def _masked(self, phase: int, member_set: frozenset, kept, seed_of=pair_seed, seeds: dict | None = None):
        """This person's statistic of ``phase``, quantized with its noise share and masked with ``member_set``
        (:func:`~dptopic.contributor.secure_sum.masks.mask`; ``seed_of`` and ``seeds`` its), the members recorded in the
        state first (one list per set in a process)."""
        self.st["masked_with"][str(phase)] = _sorted_ids(member_set)
        noisy = self._share(phase, self.statistic(phase, kept))
        return mask(noisy, self.me, self.secrets, self.roster, self.round_id, phase, member_set, self.graph,
                    self.plan.bits, seed_of, seeds)

    def _masked_set(self, phase: int) -> frozenset | None:
        """The members this contributor masked with in ``phase`` (from its state), as a set made once."""
        masked = self.st["masked_with"].get(str(phase))
        if masked is None:
            return None
        kept = self._sets.get(("masked", phase))
        if kept is None or kept[0] is not masked:
            kept = self._sets[("masked", phase)] = (masked, _set_of(masked))
        return kept[1]

    def _uploaded(self, phase: int, view: dict) -> list:
        """The uploads of ``phase`` the server names, checked (their set: :meth:`_id_set`, made once): distinct ids
        of the directory, this contributor among them, every one a member it masked with, at least N - F and ``T`` of
        its neighbours (a set already checked for ``phase`` is not checked again)."""
        uploaded = self._ids(view.get("uploaded"), f"uploads of step {phase}")
        up = self._id_set(uploaded, f"uploads of step {phase}")
        masked_set = self._masked_set(phase)
        if masked_set is None:
            raise LeftOut(f"this contributor did not upload in step {phase}.")
        if self._sets.get(("uploaded", phase)) is up:
            return uploaded
        if self.me not in up:
            raise LeftOut(f"the server does not count this contributor's upload of step {phase}.")
        self._check_uploads_masked(phase, up, uploaded, masked_set)
        self._enough(up, "uploads", phase)
        self._sets[("uploaded", phase)] = up
        return uploaded

    def consistency(self, phase: int, view: dict) -> dict:
        """``POST /v1/secure/consistency/{phase}``: this contributor's signature over the set of uploads the server
        names, after checking it. A contributor signs one set per step: a second, different set is refused."""
        self._live()
        uploaded = self._uploaded(phase, view)
        up = self._id_set(uploaded, f"uploads of step {phase}")
        return self._sign_once(phase, up, consistency_message(self.round_id, phase, up))

    def _sign_once(self, phase: int, up: frozenset, signed_message: bytes) -> dict:
        """This contributor's signature of ``signed_message`` over the set of uploads ``up`` of step ``phase``,
        kept in the state file: one set per step, a second, different set refused."""
        digest = set_digest(up)
        signed = self.st["signed"].get(str(phase))
        if signed is not None and signed["digest"] != digest:
            raise ServerLied(f"the server shows a second, different set of uploads for step {phase}: refused, nothing"
                             " revealed (a server that shows two views is caught here).")
        if signed is None:
            self.st["signed"][str(phase)] = {"digest": digest, "uploaded": _sorted_ids(up)}
            self._write()
        return {"contributor": self.me, "signature": sign(self.key, signed_message)}

    def unmask(self, phase: int, view: dict, signatures) -> dict:
        """``POST /v1/secure/unmask/{phase}``: the shares the unmasking needs, after checking that the set of uploads
        is the one this contributor signed, that ``T`` of its neighbours signed it too, and that each neighbour
        counted as uploaded has ``T`` of its own neighbours among the uploads."""
        self._live()
        uploaded = self._uploaded(phase, view)
        up = self._id_set(uploaded, f"uploads of step {phase}")
        self._check_signed_set(phase, up)
        if self.held is None:
            raise DPTopicError("the shares are needed before the unmasking (take_shares).")

        def make():
            self._confirmed(phase, up, signatures)
            self._check_uploaders(up)
            held = self._answerable(phase)
            answers = self.log.answer(phase, held, up, frozenset(s for s in held if s not in up))   # held: masked
            self.st["revealed"] = self.log.revealed
            return {"answers": answers,
                    "signature": sign(self.key, answers_message(self.round_id, phase, self.me, answers))}
        sent = self._once(f"unmask{phase}", make)
        return {"contributor": self.me, **sent}

    def _answerable(self, phase: int) -> dict:
        """The shares this contributor may answer for in ``phase``: those of the members it masked with."""
        masked = self._masked_set(phase)
        return {s: sh for s, sh in self.held.items() if s in masked}

    def finish(self, outcome: str) -> None:
        """The round is over (``outcome``: released, or failed and why): the secrets are wiped from the state file;
        what was sent (masked, useless without them) stays as the record."""
        self.st["secrets"] = None
        self.st["finished"] = outcome
        self._write()

    def summary(self) -> dict:
        """What the contributor's run reports besides the steps it took."""
        return {"contributor": self.me, "round_id": self.round_id, "epsilon": self.plan.epsilon,
                "delta": self.plan.delta, "collusion": self.plan.collusion,
                "neighbours": len(self.graph[self.me]), "threshold": self.T,
                "undecryptable_shares": len(self.dropped_shares),
                "no_vocabulary_word": bool(len(self.bow[1]) == 0)}


__all__ = ["SecureContributor", "check_config", "check_invitation"]
