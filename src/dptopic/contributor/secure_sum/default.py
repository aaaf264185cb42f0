"""A person's side of a secure-sum round, transport-free: their secrets, every check of what the server says, their
signed messages, masked uploads and answers.

The protocol, its graph, its signed messages and its plan are :mod:`dptopic.protocol.secure_sum.default` (read its note
first); what is computed here sees the person's documents or secrets and runs on their machine only. The transport
(HTTP, waiting between steps) is :mod:`dptopic.contributor.secure_sum.client`'s.

:class:`SecureContributor` checks everything the server tells it before it masks and before it reveals, and refuses
in one line naming what the server claimed (:class:`ServerLied`): the configuration and the plan (the plan and mode
its invitation pins, :func:`check_invitation`; kept in the state file at first contact, a later change is refused),
the directory against the enrollment key of its own invitation, the roster (the directory's members who registered:
at least N - F of them, F the dropouts its invitation pins, this contributor and the threshold of its neighbours
among them, each entry signed by its member), each step's members, the set of uploads and the consistency signatures
over it, the kept words; each check a method of its own. What it sends is written to the state file before it
is sent (a resumed run sends the same keys, shares, uploads and answers, signs one set of uploads per step, never
reveals both secrets of one neighbour), and the round's secrets are wiped from it once the round is over.
"""
from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..._io import atomic_write_bytes
from ...accounting.skellam import rounded_norms
from ...errors import DPTopicError
from ...kernels.user_level import user_cooccurrence_bow, user_document_frequency_bow
from ...mechanisms.skellam import SecureUniform, skellam_share
from ...protocol.secure_sum import shamir
from ...protocol.secure_sum.default import (
    PHASES,
    ROUND_ID,
    SecureSumPlan,
    answers_message,
    consistency_message,
    crypto,
    holder_index,
    keys_message,
    matrix_to_triangle,
    neighbour_graph,
    new_private_key,
    pair_seed,
    prg,
    public_key,
    seed_commitment,
    set_digest,
    share_key,
    sign,
    signing_public,
    to_ring,
    upload_message,
    valid_x25519,
    verify,
)
from ...protocol.secure_sum.enrollment import check_directory, layout_difference, layout_of

STATE_FORMAT = "dptopic-secure-sum-state"
STATE_VERSION = 2


_ID_SETS: dict = {}
"""Lists of ids a server named that passed :meth:`SecureContributor._id_set`, by directory and content, as sets."""
_ROSTERS: list = []
"""``(directory, copy)`` of the rosters whose shape passed (:meth:`SecureContributor._check_roster_shape`)."""
_OUTSIDE: dict = {}
"""By (a set of ids the server named, the roster's ``id``): the roster and an id of the set outside it, or None
(:meth:`SecureContributor._outside_roster`)."""
_SORTED: dict = {}
"""One sorted list per set of ids that a process's contributors record (the directory's members, the members each
masked with, the uploads each signed), by the set (:func:`_sorted_ids`); and by each list's ``id``, the list and its
set (:func:`_set_of`). A process that plays many contributors of one round keeps one copy of a list of N ids, not one
per contributor (8 bytes an id each, and a set of N ids 32 bytes an id: docs/research/secure_sum_cohorts.md)."""


def _sorted_ids(ids: frozenset) -> list:
    """``sorted(ids)``, one list per set in a process (:data:`_SORTED`). The list is shared: never changed in place."""
    found = _SORTED.get(ids)
    if found is None:
        if len(_SORTED) >= 1024:      # 512 sets: a worker of a simulation holds 4 a cohort
            _SORTED.clear()
        found = sorted(ids)
        _SORTED[ids] = found
        _SORTED[id(found)] = (found, ids)
    return found


def _set_of(ids: list) -> frozenset:
    """``frozenset(ids)``: the set a list of :func:`_sorted_ids` came from, else a new one."""
    found = _SORTED.get(id(ids))
    return found[1] if found is not None and found[0] is ids else frozenset(ids)


_ACKNOWLEDGED = "acknowledged"
"""What a step's kept message becomes once :meth:`SecureContributor.acknowledged` drops it."""


class ServerLied(DPTopicError):
    """The server said something the protocol does not allow (a roster, a set, a plan or a signature): nothing more is
    sent for this step."""


class WrongMode(ServerLied):
    """The server runs the round in another mode (with a committee or without one) than the invitation names:
    nothing sent."""


class LeftOut(DPTopicError):
    """The server left this contributor out of a step (it is not among the step's members or uploads)."""


def squared_norm(v: np.ndarray) -> float:
    """``sum(v ** 2)`` by numpy's own pairwise sum, not BLAS: ``np.dot`` hands a vector of more than about 10,000
    entries to OpenBLAS's thread pool, and from a process whose threads play many contributors at once those calls
    spin for their pool (2.5 ms of CPU each at 23,000 entries from 8 threads, against 10 us: a 3,000-person round's
    step-1 statistic; docs/research/secure_sum_cpu.md)."""
    return float(np.square(v).sum())


def quantize(x: np.ndarray, scale: float, l2_bound: float, rng, tries: int = 1000) -> np.ndarray:
    """Conditional randomized rounding of ``scale * x`` (``x`` of L2 norm at most 1): each entry rounded up with
    probability its fractional part (unbiased), re-drawn until the rounded vector's L2 norm is at most ``l2_bound``
    (Kairouz, Liu & Steinke 2021, Sec. 4.1). ``rng``: anything with ``random(n)`` (a numpy Generator in a
    simulation, :class:`~dptopic.mechanisms.skellam.SecureUniform` for a real contributor). The norms are
    :func:`squared_norm`'s (no BLAS call)."""
    x = np.asarray(x, dtype=np.float64)
    norm = float(np.sqrt(squared_norm(x)))
    if not np.isfinite(norm):
        raise DPTopicError("the statistic to quantize is not finite.")
    if norm > 1.0:
        x = x / norm
    y = x * float(scale)
    low = np.floor(y)
    frac = y - low
    nz = np.flatnonzero(frac)
    for _ in range(tries):
        out = low.copy()
        out[nz] += rng.random(len(nz)) < frac[nz]
        if squared_norm(out) <= l2_bound * l2_bound:
            return out.astype(np.int64)
    raise DPTopicError("randomized rounding did not meet its norm bound (a statistic above norm 1?).")


@dataclass
class ContributorSecrets:
    """A contributor's secrets for one round: ``c`` (share encryption), and per phase the pairwise key ``s`` and the
    self-mask seed ``b``. Kept in the contributor's state file (``to_dict``) until the round is over."""

    c: bytes
    s: list
    b: list
    _public: dict = field(default_factory=dict, repr=False, compare=False)     # public(): derived once

    @classmethod
    def new(cls, n_phases: int = PHASES) -> "ContributorSecrets":
        """Fresh keys and seeds from the OS CSPRNG."""
        return cls(new_private_key(), [new_private_key() for _ in range(n_phases)],
                   [shamir.random_secret() for _ in range(n_phases)])

    def public(self, round_id: str, contributor: str) -> dict:
        """What is registered: the public keys and a commitment to each self-mask seed (derived once: each public
        key is a scalar multiplication)."""
        key = (round_id, contributor)
        if key not in self._public:
            self._public[key] = {"c": public_key(self.c).hex(), "s": [public_key(k).hex() for k in self.s],
                                 "b": [seed_commitment(round_id, contributor, p, b) for p, b in enumerate(self.b)]}
        mine = self._public[key]
        return {"c": mine["c"], "s": list(mine["s"]), "b": list(mine["b"])}

    def to_dict(self) -> dict:
        """The secrets as hex, for the state file."""
        return {"c": self.c.hex(), "s": [k.hex() for k in self.s], "b": [k.hex() for k in self.b]}

    @classmethod
    def from_dict(cls, d: dict) -> "ContributorSecrets":
        """Inverse of :meth:`to_dict` (one line on a damaged state file)."""
        try:
            return cls(bytes.fromhex(d["c"]), [bytes.fromhex(k) for k in d["s"]], [bytes.fromhex(k) for k in d["b"]])
        except (KeyError, TypeError, ValueError):
            raise DPTopicError("the state file's secure-sum keys are damaged: start again with a fresh state file.") \
                from None


def make_shares(me: str, secrets: ContributorSecrets, roster: dict, round_id: str, graph: dict,
                threshold: int, agreed: dict | None = None) -> dict[str, str]:
    """``{neighbour: base64 ciphertext}``: each neighbour's Shamir shares of every phase's ``s`` key and ``b`` seed
    (``s_0 b_0 s_1 b_1``, 32 bytes each), encrypted to that neighbour (AES-GCM, the round, sender and receiver bound
    as associated data)."""
    c = crypto()
    mine = graph[me]
    index = holder_index(roster)
    per = {v: [] for v in mine}
    for p in range(len(secrets.s)):
        for secret in (secrets.s[p], secrets.b[p]):
            shares = shamir.share(secret, [index[v] for v in mine], threshold)
            for v in mine:
                per[v].append(shares[index[v]])
    out = {}
    for v in mine:
        key = share_key(secrets.c, bytes.fromhex(roster[v]["c"]), round_id, me, v, agreed)
        nonce = os.urandom(12)
        out[v] = base64.b64encode(nonce + c["AESGCM"](key).encrypt(nonce, b"".join(per[v]),
                                                                   f"{round_id}/{me}/{v}".encode())).decode()
    return out


def open_shares(me: str, secrets: ContributorSecrets, roster: dict, round_id: str, sender: str,
                ciphertext: str, agreed: dict | None = None) -> dict:
    """The shares ``sender`` addressed to ``me`` (``{"s": [hex per phase], "b": [...]}``); one line if they were not
    made for ``me`` in this round, or do not hold one well-formed share per phase of each secret."""
    c = crypto()
    n = shamir.SHARE_BYTES
    try:
        raw = base64.b64decode(ciphertext, validate=True)
        key = share_key(secrets.c, bytes.fromhex(roster[sender]["c"]), round_id, sender, me, agreed)
        plain = c["AESGCM"](key).decrypt(raw[:12], raw[12:], f"{round_id}/{sender}/{me}".encode())
        ok = len(plain) == 2 * n * len(secrets.s)
    except Exception:       # a tampered or misaddressed ciphertext: nothing learned, nothing sent for it
        ok = False
    if not ok:
        raise DPTopicError(f"the shares from {sender[:40]!r} do not decrypt for this contributor and round.")
    return HeldShares(plain)


class HeldShares(Mapping):
    """The shares one sender addressed to this contributor, ``{"s": [hex per phase], "b": [...]}``, kept as the
    decrypted bytes (``s_0 b_0 s_1 b_1``, 32 bytes each) and written as hex when read: a contributor holds one per
    neighbour until the round is over (about 170 bytes each, against about 600 as a dict of hex strings)."""

    __slots__ = ("_plain",)

    def __init__(self, plain: bytes):
        self._plain = bytes(plain)

    def __getitem__(self, kind: str) -> list:
        n = shamir.SHARE_BYTES
        first = {"s": 0, "b": 1}[kind]
        return [self._plain[k * n:(k + 1) * n].hex() for k in range(first, len(self._plain) // n, 2)]

    def __iter__(self):
        return iter(("s", "b"))

    def __len__(self) -> int:
        return 2


def mask(values: np.ndarray, me: str, secrets: ContributorSecrets, roster: dict, round_id: str, phase: int,
         members, graph: dict, bits: int = 32, seed_of=pair_seed, seeds: dict | None = None) -> np.ndarray:
    """The masked upload of ``values`` (signed integers) for ``phase``: self mask plus the pairwise masks with the
    neighbours among ``members`` (the phase's participants), modulo ``2^bits`` (the plan's ring). ``seed_of``: the
    mode's pairwise seed (the committee mode's is
    :func:`~dptopic.protocol.secure_sum.committee.pair_seed_c`); ``seeds``: a dict that gets each neighbour's seed
    (the committee mode shares them)."""
    dim = len(values)
    y = to_ring(values, bits)
    y += prg(secrets.b[phase], dim, bits)
    members = set(members)
    for v in graph[me]:
        if v not in members:
            continue
        seed = seed_of(secrets.s[phase], bytes.fromhex(roster[v]["s"][phase]), round_id, phase, me, v)
        if seeds is not None:
            seeds[v] = seed
        m = prg(seed, dim, bits)
        if me < v:
            y += m
        else:
            y -= m
    return y


@dataclass
class RevealLog:
    """What a contributor has revealed per phase and neighbour (``"b"`` or ``"s"``), kept in its state: it never
    reveals both for one neighbour and phase, whatever the server asks."""

    revealed: dict = field(default_factory=dict)

    def answer(self, phase: int, held: dict, uploaded, dropped) -> dict:
        """``{sender: {"kind": "b"|"s", "share": hex}}`` for the unmasking of ``phase``: the share of ``b`` of each
        sender that uploaded, of its ``s`` key for each that dropped; refused (one line) when the server asks for
        the other secret of a sender already answered, or names a sender in both lists."""
        uploaded = uploaded if isinstance(uploaded, (set, frozenset)) else set(uploaded)
        dropped = dropped if isinstance(dropped, (set, frozenset)) else set(dropped)
        if uploaded & dropped:
            raise ServerLied("the server named a contributor as both uploaded and dropped: nothing revealed.")
        out = {}
        for sender, shares in held.items():
            kind = "b" if sender in uploaded else "s" if sender in dropped else None
            if kind is None:
                continue
            key = f"{phase}/{sender}"
            if self.revealed.get(key, kind) != kind:
                raise ServerLied(f"the server asks for the {'self-mask seed' if kind == 'b' else 'pairwise key'}"
                                 f" share of {sender[:40]!r} in step {phase}, after the other one: refused, nothing"
                                 " more revealed (both would unmask that contributor's upload).")
            out[sender] = {"kind": kind, "share": shares[kind][phase]}
        for sender, a in out.items():
            self.revealed[f"{phase}/{sender}"] = a["kind"]
        return out


# ----------------------------------------------------------------------------- the statistics
def person_presence(bow, vocab_size: int) -> np.ndarray:
    """One person's bounded ranking statistic (the user unit's first release with the document entry): the sum of
    their documents' normalised presence vectors, scaled to L2 norm at most 1 (V + 1 entries)."""
    n_docs = len(bow[0]) - 1
    return user_document_frequency_bow(bow, np.array([0, n_docs]), vocab_size, 1, with_document=True)


def person_cooccurrence(bow, kept, vocab_size: int) -> np.ndarray:
    """One person's bounded co-occurrence statistic over the ``kept`` words (the user unit's second release) as its
    upper triangle, row by row, the off-diagonal entries times sqrt(2): the vector's L2 norm is the matrix's Frobenius
    norm (at most 1), and noise of std ``s`` on an off-diagonal entry is ``s / sqrt(2)`` on the matrix's cell, as the
    central trainer's symmetrised release has."""
    n_docs = len(bow[0]) - 1
    m = user_cooccurrence_bow(bow, np.array([0, n_docs]), np.asarray(kept), vocab_size, 1)
    return matrix_to_triangle(m)


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


class SecureContributor:
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

    # ------------------------------------------------------------ the state file
    def _load(self):
        st = read_state(self.path, strict=True)
        if st is None:
            return None
        if not isinstance(st, dict) or st.get("format") != STATE_FORMAT or st.get("version") != STATE_VERSION:
            raise DPTopicError(f"{self.path} is not a secure-sum state file of this version: give another state"
                               " file.")
        if st.get("round_id") != self.round_id or st.get("contributor") != self.me:
            raise DPTopicError(f"{self.path} belongs to round {str(st.get('round_id'))[:64]!r} as"
                               f" {str(st.get('contributor'))[:64]!r}, not this round as {self.me!r}: give a fresh"
                               " state file for a new round.")
        if st.get("plan") != self.plan.to_dict():
            raise ServerLied("the server's plan differs from the one you accepted when you joined this round (kept in"
                             f" {self.path}): refusing to take part further.")
        return st

    def _write(self) -> None:
        if self.path is not None:
            atomic_write_bytes(self.path, json.dumps(self.st).encode(), private=True)   # it holds the round's secrets

    def _once(self, step: str, make):
        """What step ``step`` sends: made and kept the first time, the kept one afterwards."""
        if step not in self.st["sent"]:
            self.st["sent"][step] = make()
            self._write()
        sent = self.st["sent"][step]
        if sent is _ACKNOWLEDGED:
            raise DPTopicError(f"this contributor's {step} was acknowledged and not kept (acknowledged): it is never"
                               " made a second time; nothing sent.")
        return sent

    def acknowledged(self, step: str) -> None:
        """The server acknowledged what ``step`` sent (``shares``, ``upload0``, ``upload1``, ``unmask0``, ``unmask1``)
        and the caller will never send it again: without a state file, the copy kept for a resend is dropped, and a
        later request for the step is refused in one line (a step's message is never made twice: a second upload
        would carry other noise under the same masks). With a state file nothing changes: a resumed run resends from
        the file. For a process that plays many contributors (a simulation): each would otherwise hold its
        uploads, shares and answers until the round is over (docs/research/secure_sum_cohorts.md)."""
        if self.path is None and step in self.st["sent"]:
            self.st["sent"][step] = _ACKNOWLEDGED

    def _coins(self):
        return self.rng if self.rng is not None else SecureUniform()

    # ------------------------------------------------------------ checks of what the server says
    def _ids(self, value, what: str) -> list:
        self._id_set(value, what)
        return value

    def _id_set(self, value, what: str) -> frozenset:
        """The set of a list of ids the server names, checked: a list of distinct ids of the round's directory. The
        same list (by content) is checked once per directory in a process (:data:`_ID_SETS`): a view names N ids,
        and a process may play many contributors of one round."""
        try:
            key = (self._directory_key, tuple(value)) if isinstance(value, list) else None
            found = None if key is None else _ID_SETS.get(key)
        except TypeError:       # an unhashable entry: not an id, refused below
            key, found = None, None
        if found is not None:
            return found
        if not isinstance(value, list) or not all(isinstance(i, str) for i in value):
            raise ServerLied(f"the server's {what} is not a list of contributor ids: nothing sent.")
        ids = frozenset(value)
        if len(ids) != len(value):
            raise ServerLied(f"the server's {what} names a contributor twice: nothing sent.")
        stray = next((i for i in value if i not in self.members), None)
        if stray is not None:
            raise ServerLied(f"the server's {what} names {stray[:40]!r}, who is not in the round's directory: nothing"
                             " sent.")
        if len(_ID_SETS) >= 16:
            _ID_SETS.clear()
        _ID_SETS[key] = ids
        return ids

    def _enough(self, ids, what: str, phase: int) -> None:
        """A set the server names for ``phase`` (``what``: its members or uploads): every one in the closed roster
        (:meth:`_check_in_roster`), at least N - F contributors (:meth:`_enough_count`), at least T of this one's
        neighbours (:meth:`_enough_neighbours`)."""
        self._check_in_roster(ids, what, phase)
        self._enough_count(ids, what, phase)
        self._enough_neighbours(ids, what, phase)

    def _check_in_roster(self, ids, what: str, phase: int) -> None:
        """Every contributor of a set the server names is in the closed roster (once it is known): one who never
        registered has no keys to mask with or be unmasked by."""
        if self.roster is not None and len(self.roster) < len(self.members):    # a roster without its no-shows
            stray = self._outside_roster(ids)
            if stray is not None:
                raise ServerLied(f"the server names {stray[:40]!r} among the {what} of step {phase}, who is not in the"
                                 " round's roster: nothing sent.")

    def _enough_count(self, ids, what: str, phase: int) -> None:
        """At least N - F contributors in a set the server names (F the dropouts the invitation pins,
        :attr:`least`): the noise is planned for that many shares."""
        least = self.least
        if len(ids) < least:
            raise ServerLied(f"the server names {len(ids)} {what} for step {phase}, fewer than the {least} the noise"
                             " was planned for (N - F): nothing sent.")

    def _enough_neighbours(self, ids, what: str, phase: int) -> None:
        """At least T of this contributor's neighbours in a set the server names."""
        have = ids if isinstance(ids, frozenset) else set(ids)
        mine = sum(1 for v in self.graph[self.me] if v in have)
        if mine < self.T:
            raise ServerLied(f"the server names only {mine} of your {len(self.graph[self.me])} neighbours as {what} for"
                             f" step {phase}, fewer than the threshold {self.T}: nothing sent (too few would let it"
                             " unmask your upload alone).")

    def _outside_roster(self, ids) -> str | None:
        """An id of ``ids`` that is not in the closed roster, or None; looked up once per set and roster in a
        process (:data:`_OUTSIDE`: its contributors are shown the same sets, N ids each)."""
        key = (ids if isinstance(ids, frozenset) else frozenset(ids), id(self.roster))
        found = _OUTSIDE.get(key)
        if found is None or found[0] is not self.roster:
            if len(_OUTSIDE) >= 16:
                _OUTSIDE.clear()
            found = _OUTSIDE[key] = (self.roster, next((i for i in ids if i not in self.roster), None))
        return found[1]

    def check_roster(self, roster) -> dict:
        """The closed roster ``{id: {"c", "s", "b", "signature"}}`` checked: the directory's members who registered
        (those who never did are dropouts: at least N - F registered, and the threshold of this contributor's
        neighbours among them), every key different, this contributor's own entry as registered, and every registered
        neighbour's entry signed by that neighbour's key with keys of full order."""
        if self.roster is not None and roster == self.roster:
            return self.roster
        if not any(k == self._directory_key and roster == shape for k, shape in _ROSTERS):
            self._check_roster_shape(roster)
        self._live()
        self._check_roster_count(roster)
        self._check_own_entry(roster)
        self._check_roster_neighbours(roster)
        for v in self.graph[self.me]:
            if v not in roster:     # never registered: a dropout, sent nothing
                continue
            self._check_entry_signed(v, roster[v])
            self._check_entry_keys(v, roster[v])
        self.roster = roster
        return roster

    def _check_roster_count(self, roster) -> None:
        """At least N - F of the directory's members registered (F the dropouts the invitation pins,
        :attr:`least`): each who never did is one of the F dropouts, and the noise is planned for N - F shares."""
        if len(roster) < self.least:
            raise ServerLied(f"the server's roster has {len(roster)} entries, fewer than the {self.least} the noise was"
                             " planned for (N - F of the directory's members): nothing sent.")

    def _check_own_entry(self, roster) -> None:
        """This contributor's own roster entry holds the keys it registered."""
        mine = {k: roster[self.me].get(k) for k in ("c", "s", "b")} if self.me in roster else None
        if mine != self.secrets.public(self.round_id, self.me):
            raise ServerLied("the server's roster does not hold this contributor's keys: nothing sent.")

    def _check_roster_neighbours(self, roster) -> None:
        """At least T of this contributor's neighbours registered (are in the roster): its shares could not be
        completed with fewer, and the set it masks with could not hold the threshold of them."""
        have = sum(1 for v in self.graph[self.me] if v in roster)
        if have < self.T:
            raise ServerLied(f"the server's roster holds only {have} of your {len(self.graph[self.me])} neighbours,"
                             f" fewer than the threshold {self.T}: nothing sent (your shares could not be completed).")

    def _check_entry_signed(self, v: str, e: dict) -> None:
        """Member ``v``'s roster entry ``e`` is signed by ``v``'s invitation key (the server cannot put keys of its
        own in a member's place)."""
        entry = {"c": e["c"], "s": e["s"], "b": e["b"]}
        if not verify(bytes.fromhex(self.members[v]), e.get("signature"), keys_message(self.round_id, v, entry)):
            raise ServerLied(f"the server's roster entry for {v[:40]!r} is not signed by that member's invitation key:"
                             " nothing sent.")

    def _check_entry_keys(self, v: str, e: dict) -> None:
        """Member ``v``'s roster entry ``e`` holds X25519 keys of full order (a low-order key makes every agreement
        with it public)."""
        if not all(valid_x25519(k) for k in [e["c"], *e["s"]]):
            raise ServerLied(f"the server's roster entry for {v[:40]!r} holds a key that is not a valid X25519 key of"
                             " full order: nothing sent.")

    def _check_roster_shape(self, roster) -> None:
        """What a roster must be whoever reads it (N entries to look at): members of the directory, every entry
        well-formed, every public key different. A roster that passed is remembered (a copy, by its content and the
        directory, :data:`_ROSTERS`): the other contributors a process plays compare theirs with it, in C."""
        if not isinstance(roster, dict):
            raise ServerLied("the server's roster is not an object of the registered members' entries: nothing sent.")
        stray = next((i for i in roster if i not in self.members), None)
        if stray is not None:
            raise ServerLied(f"the server's roster names {str(stray)[:40]!r}, who is not in the round's directory:"
                             " nothing sent.")
        keys = []
        for i, e in roster.items():
            if not (isinstance(e, dict) and isinstance(e.get("c"), str) and isinstance(e.get("s"), list)
                    and len(e["s"]) == PHASES and isinstance(e.get("b"), list) and len(e["b"]) == PHASES
                    and all(isinstance(k, str) for k in [e["c"], *e["s"], *e["b"]])):
                raise ServerLied(f"the server's roster entry for {i[:40]!r} is malformed: nothing sent.")
            keys += [e["c"], *e["s"]]
        if len(set(keys)) != len(keys):
            raise ServerLied("the server's roster gives one public key to two uses: nothing sent.")
        if len(_ROSTERS) >= 2:
            _ROSTERS.pop(0)
        # the copy holds the same strings (immutable) in new lists and dicts: a roster changed in place later is
        # unequal to it, and is checked afresh
        _ROSTERS.append((self._directory_key, {i: dict(e, s=list(e["s"]), b=list(e["b"])) for i, e in roster.items()}))

    def _check_kept(self, kept) -> list:
        ok = (isinstance(kept, list) and all(isinstance(k, int) and not isinstance(k, bool) for k in kept)
              and 2 <= len(kept) <= self.plan.max_kept_words and all(0 <= k < self.V for k in kept)
              and all(a < b for a, b in zip(kept, kept[1:])))
        if not ok:
            raise ServerLied(f"the server's kept words are not 2 to {self.plan.max_kept_words} distinct word ids in"
                             f" [0, {self.V}), in increasing order: nothing sent.")
        return kept

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
        (:func:`mask`; ``seed_of`` and ``seeds`` its), the members recorded in the state first (one list per set
        in a process)."""
        self.st["masked_with"][str(phase)] = _sorted_ids(member_set)
        noisy = self._share(phase, self.statistic(phase, kept))
        return mask(noisy, self.me, self.secrets, self.roster, self.round_id, phase, member_set, self.graph,
                    self.plan.bits, seed_of, seeds)

    def _check_members_of_step1(self, member_set: frozenset) -> None:
        """Step 1's members all uploaded in step 0, as this contributor signed that step's set."""
        signed0 = self.st["signed"].get("0")
        if signed0 is None or not member_set <= set(signed0["uploaded"]):
            raise ServerLied("the server names members for step 1 who did not upload in step 0 (as you signed it):"
                             " nothing sent.")

    def _check_same_members(self, phase: int, members: list) -> None:
        """A step's members are the ones this contributor masked with, if it did (a resumed run)."""
        before = self.st["masked_with"].get(str(phase))
        if before is not None and before != sorted(members):
            raise ServerLied(f"the server names other members for step {phase} than when this contributor masked:"
                             " nothing sent.")

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

    def _check_uploads_masked(self, phase: int, up: frozenset, uploaded: list, masked_set: frozenset) -> None:
        """Every upload the server names is of a member this contributor masked with."""
        if not up <= masked_set:
            stray = next(i for i in uploaded if i not in masked_set)
            raise ServerLied(f"the server names {stray[:40]!r} among the uploads of step {phase}, who was not a member"
                             " this contributor masked with: nothing sent.")

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

    def _confirmed(self, phase: int, uploaded: frozenset, signatures) -> None:
        """Require ``T`` valid signatures of this contributor's own neighbours over its own set of uploads (verified
        until ``T`` are found), before anything is revealed. Honest contributors sign one set per step, so no two
        sets gather ``T`` signatures among one contributor's ``d`` neighbours (``2 T - t > d``): this contributor
        acts on the one set its own neighbourhood signed, and contributors close on the ring act on the same set
        (:mod:`dptopic.protocol.secure_sum.default`'s note). Signatures from anyone else count for nothing: a server can
        gather those for any set it likes."""
        if not isinstance(signatures, dict):
            raise ServerLied(f"the server's consistency signatures of step {phase} are not an object: nothing"
                             " revealed.")
        msg = consistency_message(self.round_id, phase, uploaded)
        valid = 0
        for w in self.graph[self.me]:
            if w in signatures and verify(bytes.fromhex(self.members[w]), signatures[w], msg):
                valid += 1
                if valid >= self.T:
                    return
        raise ServerLied(f"the server holds {valid} valid signatures of your neighbours over your set of uploads of"
                         f" step {phase}, fewer than the threshold {self.T}: it may have shown them another set;"
                         " nothing revealed.")

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

    def _check_signed_set(self, phase: int, up: frozenset) -> None:
        """The set of uploads an unmasking is asked over is the one this contributor signed for the step."""
        signed = self.st["signed"].get(str(phase))
        if signed is None or signed["digest"] != set_digest(up):
            raise ServerLied(f"the server asks for the unmasking of step {phase} over another set of uploads than the"
                             " one you signed: nothing revealed.")

    def _check_uploaders(self, up: frozenset) -> None:
        """Each neighbour the set counts as uploaded has ``T`` of its own neighbours in it: its self-mask seed is
        revealed only while more than ``d/2`` honest neighbours' masks stay on its upload."""
        for u in self.graph[self.me]:
            if u in up and len(up.intersection(self.graph[u])) < self.T:
                raise ServerLied(f"the server counts {u[:40]!r} as uploaded with fewer than {self.T} of its"
                                 " neighbours: its self-mask seed would unmask its upload alone; nothing revealed.")

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


def new_state(round_id: str, contributor: str, plan: dict | None, secrets: dict) -> dict:
    """A fresh state file's content for a round and a contributor: its ``plan`` (None until one is accepted: keys
    drawn before the configuration was known, :func:`~dptopic.contributor.secure_sum.client.take_part_committee`) and
    ``secrets`` (:meth:`ContributorSecrets.to_dict`), nothing sent yet."""
    return {"format": STATE_FORMAT, "version": STATE_VERSION, "round_id": round_id, "contributor": contributor,
            "plan": plan, "secrets": secrets, "sent": {}, "revealed": {}, "masked_with": {}, "signed": {},
            "finished": None}


def read_state(path, strict: bool = False):
    """The state file at ``path`` as a dict; None when there is none (``path`` None, or no file) or it cannot be read
    as a JSON object. With ``strict``, a file that is not JSON is refused in one line, and any JSON it holds is
    returned for the caller's checks to name what is wrong."""
    if path is None or not Path(path).exists():
        return None
    try:
        st = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        if strict:
            raise DPTopicError(f"{path} is not a secure-sum state file: give another state file.") from None
        return None
    return st if strict or isinstance(st, dict) else None


def state_file_name(round_id: str, contributor: str) -> str:
    """The default state file's name for a round and a contributor, both from the contributor's own invitation and
    checked (never a path from what a server sends)."""
    if not (ROUND_ID.fullmatch(str(round_id)) and ROUND_ID.fullmatch(str(contributor))):
        raise DPTopicError("a round id and a contributor id are 1-64 of A-Z a-z 0-9 _ -.")
    return f"secure-sum-{round_id}-{contributor}.json"


__all__ = ["SecureContributor", "ContributorSecrets", "RevealLog", "ServerLied", "WrongMode", "LeftOut", "check_config",
           "check_invitation", "quantize", "squared_norm", "make_shares", "open_shares", "mask", "person_presence",
           "person_cooccurrence", "state_file_name"]
