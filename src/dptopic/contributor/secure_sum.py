"""A person's side of a secure-sum round, transport-free: their secrets, shares, masked uploads and answers.

The protocol, its neighbour graph and its plan are :mod:`dptopic.protocol.secure_sum` (read its note first); what is
computed here sees the person's documents or their secrets, and runs on their machine only.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from ..errors import DPTopicError
from ..kernels.user_level import user_cooccurrence_bow, user_document_frequency_bow
from ..protocol import shamir
from ..protocol.secure_sum import (SEED_BYTES, agree, crypto, hkdf, holder_index, matrix_to_triangle,
                                   neighbour_graph, new_private_key, pair_seed, prg, public_key, threshold_for,
                                   to_ring)


def quantize(x: np.ndarray, scale: float, l2_bound: float, rng: np.random.Generator, tries: int = 1000) -> np.ndarray:
    """Conditional randomized rounding of ``scale * x`` (``x`` of L2 norm at most 1): each entry rounded up with
    probability its fractional part (unbiased), re-drawn until the rounded vector's L2 norm is at most ``l2_bound``
    (Kairouz, Liu & Steinke 2021, Sec. 4.1)."""
    x = np.asarray(x, dtype=np.float64)
    norm = float(np.sqrt(np.dot(x, x)))
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
        if float(np.dot(out, out)) <= l2_bound * l2_bound:
            return out.astype(np.int64)
    raise DPTopicError("randomized rounding did not meet its norm bound (a statistic above norm 1?).")


@dataclass
class ContributorSecrets:
    """A contributor's secrets for one round: ``c`` (share encryption), and per phase the pairwise key ``s`` and the
    self-mask seed ``b``. Kept in the contributor's state file (``to_dict``) so that a resumed run sends the same keys
    and the same upload."""

    c: bytes
    s: list
    b: list

    @classmethod
    def new(cls, n_phases: int) -> "ContributorSecrets":
        return cls(new_private_key(), [new_private_key() for _ in range(n_phases)],
                   [os.urandom(SEED_BYTES) for _ in range(n_phases)])

    def public(self) -> dict:
        return {"c": public_key(self.c).hex(), "s": [public_key(k).hex() for k in self.s]}

    def to_dict(self) -> dict:
        return {"c": self.c.hex(), "s": [k.hex() for k in self.s], "b": [k.hex() for k in self.b]}

    @classmethod
    def from_dict(cls, d: dict) -> "ContributorSecrets":
        try:
            return cls(bytes.fromhex(d["c"]), [bytes.fromhex(k) for k in d["s"]], [bytes.fromhex(k) for k in d["b"]])
        except (KeyError, TypeError, ValueError):
            raise DPTopicError("the state file's secure-sum keys are damaged: start again with a fresh --state.") \
                from None


def check_roster(roster) -> dict:
    """A roster ``{id: {"c": hex, "s": [hex, ...]}}`` as sent by the server, checked (one line on anything else)."""
    if not isinstance(roster, dict) or len(roster) < 2:
        raise DPTopicError("the server sent no roster of at least two contributors.")
    for i, k in roster.items():
        ok = (isinstance(k, dict) and isinstance(k.get("c"), str) and isinstance(k.get("s"), list)
              and all(isinstance(x, str) and len(x) == 64 for x in [k["c"], *k["s"]]))
        if not ok:
            raise DPTopicError(f"the server's roster entry for {str(i)[:40]!r} is malformed.")
    return roster


def _share_key(my_c: bytes, their_c_public: str, round_id: str, sender: str, receiver: str) -> bytes:
    return hkdf(agree(my_c, bytes.fromhex(their_c_public)),
                 f"dptopic-secure-sum/shares/{round_id}/{sender}/{receiver}".encode())


def make_shares(me: str, secrets: ContributorSecrets, roster: dict, round_id: str) -> dict[str, str]:
    """``{neighbour: hex ciphertext}``: each neighbour's Shamir shares of every phase's ``s`` key and ``b`` seed,
    encrypted to that neighbour (AES-GCM, the sender and receiver bound as associated data)."""
    c = crypto()
    graph = neighbour_graph(roster)
    mine = graph[me]
    index = holder_index(roster)
    t = threshold_for(len(mine))
    per = {v: {"s": [], "b": []} for v in mine}
    for p in range(len(secrets.s)):
        for what, secret in (("s", secrets.s[p]), ("b", secrets.b[p])):
            shares = shamir.share(secret, [index[v] for v in mine], t)
            for v in mine:
                per[v][what].append(shares[index[v]].hex())
    out = {}
    for v in mine:
        key = _share_key(secrets.c, roster[v]["c"], round_id, me, v)
        nonce = os.urandom(12)
        ad = f"{round_id}/{me}/{v}".encode()
        out[v] = (nonce + c["AESGCM"](key).encrypt(nonce, json.dumps(per[v]).encode(), ad)).hex()
    return out


def open_shares(me: str, secrets: ContributorSecrets, roster: dict, round_id: str, sender: str,
                ciphertext: str) -> dict:
    """The shares ``sender`` addressed to ``me`` (``{"s": [hex per phase], "b": [...]}``); one line if they were
    not made for ``me`` in this round."""
    c = crypto()
    try:
        raw = bytes.fromhex(ciphertext)
        key = _share_key(secrets.c, roster[sender]["c"], round_id, sender, me)
        plain = c["AESGCM"](key).decrypt(raw[:12], raw[12:], f"{round_id}/{sender}/{me}".encode())
        doc = json.loads(plain)
    except Exception:       # a tampered or misaddressed ciphertext: nothing learned, nothing sent for it
        raise DPTopicError(f"the shares from {sender[:40]!r} do not decrypt for this contributor and round.") \
            from None
    return doc


def mask(values: np.ndarray, me: str, secrets: ContributorSecrets, roster: dict, round_id: str, phase: int,
         members) -> np.ndarray:
    """The masked upload of ``values`` (signed integers) for ``phase``: self mask plus the pairwise masks with the
    neighbours among ``members`` (the phase's participants), mod 2^32."""
    dim = len(values)
    y = to_ring(values)
    y += prg(secrets.b[phase], dim)
    members = set(members)
    for v in neighbour_graph(roster)[me]:
        if v not in members:
            continue
        m = prg(pair_seed(secrets.s[phase], bytes.fromhex(roster[v]["s"][phase]), round_id, phase, me, v), dim)
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
        uploaded, dropped = set(uploaded), set(dropped)
        if uploaded & dropped:
            raise DPTopicError("the server named a contributor as both uploaded and dropped: nothing revealed.")
        out = {}
        for sender, shares in held.items():
            kind = "b" if sender in uploaded else "s" if sender in dropped else None
            if kind is None:
                continue
            key = f"{phase}/{sender}"
            if self.revealed.get(key, kind) != kind:
                raise DPTopicError(f"the server asks for the {'self-mask seed' if kind == 'b' else 'pairwise key'}"
                                   f" share of {sender[:40]!r} in phase {phase}, after the other one: refused, nothing"
                                   " more revealed (both would unmask that contributor's upload).")
            out[sender] = {"kind": kind, "share": shares[kind][phase]}
        for sender, a in out.items():
            self.revealed[f"{phase}/{sender}"] = a["kind"]
        return out


def person_presence(bow, vocab_size: int) -> np.ndarray:
    """One person's bounded ranking statistic (``--unit user``'s first release with the document entry): the sum of
    their documents' normalised presence vectors, scaled to L2 norm at most 1 (V + 1 entries)."""
    n_docs = len(bow[0]) - 1
    return user_document_frequency_bow(bow, np.array([0, n_docs]), vocab_size, 1, with_document=True)


def person_cooccurrence(bow, kept, vocab_size: int) -> np.ndarray:
    """One person's bounded co-occurrence statistic over the ``kept`` words (``--unit user``'s second release) as its
    upper triangle, row by row, the off-diagonal entries times sqrt(2): the vector's L2 norm is the matrix's Frobenius
    norm (at most 1), and noise of std ``s`` on an off-diagonal entry is ``s / sqrt(2)`` on the matrix's cell, as the
    central trainer's symmetrised release has."""
    n_docs = len(bow[0]) - 1
    m = user_cooccurrence_bow(bow, np.array([0, n_docs]), np.asarray(kept), vocab_size, 1)
    return matrix_to_triangle(m)
