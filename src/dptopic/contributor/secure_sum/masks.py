"""A contributor's secrets for one round and what is made of them: the Shamir shares each neighbour holds (encrypted
to it), the masked upload, and the record that keeps it from ever revealing both secrets of one neighbour
(:class:`RevealLog`)."""
from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ...errors import DPTopicError
from ...protocol.secure_sum import shamir
from ...protocol.secure_sum.crypto import (
    crypto,
    new_private_key,
    pair_seed,
    prg,
    public_key,
    seed_commitment,
    share_key,
)
from ...protocol.secure_sum.graph import holder_index
from ...protocol.secure_sum.messages import PHASES
from ...protocol.secure_sum.ring import to_ring
from .checks import ServerLied


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
