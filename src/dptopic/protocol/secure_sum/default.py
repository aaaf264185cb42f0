"""Secure aggregation of bounded per-person statistics against a server that lies: what both sides compute.

The protocol is SecAgg (Bonawitz et al. 2017) in its malicious-server variant, on a sparse neighbour graph (SecAgg+,
Bell et al. 2020), in two phases that each sum one vector. What a contributor computes from its documents and
secrets is :mod:`dptopic.contributor.secure_sum.default`; the server (:mod:`dptopic.service.secure_sum.default`) stores,
forwards and unmasks. This module holds the default mode's own part of what both agree on: the messages each step
signs, their checks, and the unmasking the server runs. The rest, shared by every mode, is a module each: the plan
(:mod:`~dptopic.protocol.secure_sum.plan`), the neighbour graph and its thresholds
(:mod:`~dptopic.protocol.secure_sum.graph`), key agreement, masks and signatures
(:mod:`~dptopic.protocol.secure_sum.crypto`), the encoding every signed message shares
(:mod:`~dptopic.protocol.secure_sum.messages`) and the ring the sums are taken in
(:mod:`~dptopic.protocol.secure_sum.ring`).

**Enrollment** (:mod:`dptopic.protocol.secure_sum.enrollment`). The operator draws one Ed25519 signing key per
invitation and
signs the list of their public keys (the *directory*) with an enrollment key the server never holds. A contributor
gets its invitation (its id, its signing key and the enrollment key's public half) from the operator, and checks the
directory the server shows against that key: the roster can hold only the directory's N ids, each speaking with its
own key, so no one can join without an invitation and the server cannot forge a member. The invitation also pins the
operator's plan (N, F, ``t``: the degree and threshold follow from them) and the mode, which the contributor
requires of the server's.

**Steps** (one state of the round each; every message signed with the sender's invitation key):

1. ``keys``: each contributor registers its X25519 keys (``c`` to encrypt shares, ``s_p`` per phase for the pairwise
   masks) and a commitment to each phase's self-mask seed ``b_p``, signed. The roster closes at N, or earlier with
   those registered (at least N - F, each with ``T`` of its neighbours among them: one who never registers is a
   dropout, checked by every contributor).
2. ``shares``: each Shamir-shares (:mod:`dptopic.protocol.secure_sum.shamir`) every ``s_p`` private key and ``b_p``
   among its
   registered neighbours, threshold ``T``, each neighbour's shares encrypted with AES-GCM under a key agreed on the
   ``c`` keys.
3. ``upload{p}``: the server names the step's members; each checks them (at least N - F, at least ``T`` of its
   neighbours) and uploads ``x + PRG(b_p) + sum_{v > u} PRG(s_uv) - sum_{v < u} PRG(s_uv)`` over its
   neighbours among the members, modulo ``2^bits`` (the plan's ring: 32 bits, or 64 where 32 would cost accuracy),
   signed.
4. ``consistency{p}``: the server names who uploaded (``U``); each survivor checks ``U`` (a subset of the members it
   masked with, at least N - F, at least ``T`` of its neighbours) and signs it (a contributor signs one set per step,
   whatever it is shown later).
5. ``unmask{p}``: a survivor answers only after holding ``T`` valid signatures of its neighbours over its own
   ``U``, and for a neighbour ``u`` in ``U`` only if ``T`` of ``u``'s neighbours are in ``U``: the share of ``b_p``
   of a neighbour that uploaded, of ``s_p`` of one that did not, never both
   (:class:`~dptopic.contributor.secure_sum.masks.RevealLog`). The server reconstructs each seed (checked against its
   commitment), removes the masks and reads the sum.

**Why a lying server learns no one's statistic** (with ``t`` colluding contributors at most; degree ``d`` (even) on
a ring, ``T = d/2 + t + 1``): the contributor's checks (:mod:`dptopic.contributor.secure_sum.checks`) rest on four
facts.

- Fewer than ``T`` shares of a seed reveal nothing of it, and ``T > t``.
- One secret of each neighbour, never both (:class:`~dptopic.contributor.secure_sum.masks.RevealLog`; a contributor
  signs one set per step and answers once, for that set): each honest neighbour of ``u`` gives the server at most one
  of ``u``'s two secrets' shares, its ``c <= t`` colluding neighbours both, and ``2 (T - c) > d - c``: the server
  never holds both ``b_p`` and ``s_p`` of anyone, whatever views it shows (the split-views attack).
- The set a contributor acts on is its own neighbourhood's: it reveals only after ``T`` valid signatures over its
  own set from its own neighbours, honest contributors sign one set per step, and ``2 T - t > d``, so no two sets
  gather ``T`` signatures among one contributor's neighbours; two contributors that act on different sets are more
  than ``t + 2`` places apart on the ring. Signatures from anyone else count for nothing (a server can gather them
  for any set).
- Enough uploaded neighbours: a contributor reveals a neighbour's ``b_p`` share only if the set counts ``T`` of that
  neighbour's neighbours as uploaded (more than ``d/2`` honest ones, ``T - t``), and its own upload, members and set
  hold ``T`` of its own. On a ring, honest survivors with that many honest neighbours cannot be cut in two: a gap of
  ``d/2`` positions would leave the next member with at most ``d/2`` neighbours inside, and any honest survivor on
  the other side lies within ``d/2`` of the first. So in one set the uploads whose masks the server can remove are
  those of all honest survivors together: it learns their sum, no smaller one (the members-of-one and
  dropped-neighbours attacks).

To read ``u`` alone the server needs ``b_p`` (``T`` of ``u``'s neighbours acting on sets that hold ``u``) and the
pairwise key of each neighbour ``u`` masked with (``T`` of that neighbour's neighbours acting on sets without it),
while neighbours close on the ring act on one set. ``tests/privacy/test_secure_sum_checks_adversary.py`` searches
what a server lying to each contributor differently can read against every target of one to three neighbours, and
disables each check in turn; ``tests/protocol/secure_sum/test_default.py`` checks the two bounds on plans. The noise is
calibrated for the ``N - F - t - 1`` honest shares besides the protected person's own.

Fewer than ``T`` of a contributor's neighbours learn nothing of its seeds; the plan chooses ``d`` so that a round
with ``F`` contributors dropping at random still unmasks
(:meth:`~dptopic.protocol.secure_sum.plan.SecureSumPlan.degree`), and refuses a plan that cannot.

**Committee mode** (``SecureSumPlan(committee=...)``, :mod:`dptopic.protocol.secure_sum.committee`): the same keys,
graph, masks and checks, but each contributor sends one upload per sum carrying Shamir shares (threshold
``T_c = floor((C + t) / 2) + 1`` of ``C``) of ``b_p`` and of its pairwise seeds to a public committee of ``C``
contributors, which alone signs the set of uploads and answers; no trust beyond the same ``t`` (that module's note).
"""
from __future__ import annotations

import random
import re

import numpy as np

from ...errors import DPTopicError
from . import shamir
from .crypto import SEED_BYTES, pair_seed, prg, public_key, seed_commitment, valid_x25519
from .graph import holder_index
from .messages import HEX32, PHASES, canonical, digest, message, set_digest
from .ring import from_ring, ring_dtype

SHARE_HEX = 2 * shamir.SHARE_BYTES


# ----------------------------------------------------------------------------- the default mode's signed steps
def keys_message(round_id: str, contributor: str, keys: dict) -> bytes:
    """What a contributor signs when it registers ``keys`` (``c``, ``s`` per phase, ``b`` commitments per phase)."""
    return message("keys", round_id, contributor, keys["c"], list(keys["s"]), list(keys["b"]))


def upload_message(round_id: str, phase: int, contributor: str, body: bytes) -> bytes:
    """What a contributor signs with its masked upload of ``phase``."""
    return message("upload", round_id, int(phase), contributor, digest(body))


def consistency_message(round_id: str, phase: int, uploaded) -> bytes:
    """What a survivor signs at the consistency step of ``phase``: the set of contributors it was told uploaded."""
    return message("consistency", round_id, int(phase), set_digest(uploaded))


def answers_message(round_id: str, phase: int, contributor: str, answers: dict) -> bytes:
    """What a survivor signs with its unmasking answers of ``phase``."""
    return message("unmask", round_id, int(phase), contributor, digest(canonical(answers)))


def check_keys(keys) -> str | None:
    """Why ``keys`` (as registered: ``{"c": hex, "s": [hex per phase], "b": [hex per phase]}``) is malformed, or
    None: every public key a full-order X25519 point, all different, a 32-byte commitment per phase."""
    if not (isinstance(keys, dict) and set(keys) == {"c", "s", "b"} and isinstance(keys["s"], list)
            and isinstance(keys["b"], list) and len(keys["s"]) == PHASES and len(keys["b"]) == PHASES):
        return f"keys must be {{'c': hex, 's': [{PHASES} hex], 'b': [{PHASES} hex]}}"
    if not all(valid_x25519(k) for k in [keys["c"], *keys["s"]]):
        return "a public key is not a valid X25519 key of full order (32 bytes in lower-case hex)"
    if len({keys["c"], *keys["s"]}) != 1 + PHASES:
        return "the same public key is given twice: draw a fresh key for each use"
    if not all(isinstance(b, str) and HEX32.fullmatch(b) for b in keys["b"]):
        return "each seed commitment is a SHA-256 in lower-case hex"
    return None


def check_share(value) -> bool:
    """Whether ``value`` is one Shamir share as an answer carries it (hex of :data:`shamir.SHARE_BYTES` bytes, below
    the field's prime)."""
    if not isinstance(value, str) or len(value) != SHARE_HEX or not re.fullmatch(r"[0-9a-f]+", value):
        return False
    return int(value, 16) < shamir.PRIME


# ----------------------------------------------------------------------------- the server's unmasking
def reconstruct_checked(shares: dict[int, bytes], threshold: int, check, what: str, tries: int = 30) -> bytes:
    """The 32-byte secret of ``shares`` (``{holder: share}``, at least ``threshold``) that passes ``check`` (its
    commitment): the first ``threshold`` shares, else random subsets of them (a wrong share spoils only the subsets
    that hold it). One line naming ``what`` when none passes."""
    holders = sorted(shares)

    def subsets():      # drawn only when the first fails (each draw is dozens of reads of the OS's entropy)
        yield holders[:threshold]
        if len(holders) > threshold:
            pick = random.SystemRandom()
            for _ in range(tries):
                yield sorted(pick.sample(holders, threshold))
    for sub in subsets():
        try:
            seed = shamir.reconstruct({h: shares[h] for h in sub}, threshold, SEED_BYTES)
        except DPTopicError:
            continue
        if check(seed):
            return seed
    raise DPTopicError(f"the shares of {what} do not reconstruct the secret it committed to (a neighbour sent a wrong"
                       " share): the sum cannot be read.")


def unmask_sum(total: np.ndarray, roster: dict, round_id: str, phase: int, graph: dict, threshold: int, members,
               uploaded, responses: dict) -> np.ndarray:
    """The sum of the uploads of ``uploaded`` (``total``: their sum in the ring, uint32 or uint64 for modulo 2^32 or
    2^64), unmasked, as signed integers.

    ``roster``: ``{id: {"c", "s", "b"}}``; ``members``: the phase's participants (each masked with its neighbours
    among them); ``responses``: ``{responder: {sender: {"kind", "share"}}}`` from the survivors. Each seed is checked
    against the sender's commitment (``b``) or public key (``s``). Raises (one line) when a needed seed has fewer
    shares than the threshold, or none that reconstruct it."""
    dim = len(total)
    index = holder_index(roster)
    members, uploaded = set(members), set(uploaded)
    dropped = members - uploaded
    needed = {u: "b" for u in uploaded} | {v: "s" for v in dropped if any(u in uploaded for u in graph[v])}
    shares: dict = {u: {} for u in needed}
    for responder, answers in responses.items():
        for sender, a in answers.items():
            if sender in needed and a.get("kind") == needed[sender] and responder in graph[sender]:
                shares[sender][index[responder]] = bytes.fromhex(a["share"])
    y = np.array(total)
    bits = 8 * y.dtype.itemsize
    y = y.astype(ring_dtype(bits))
    for u, kind in sorted(needed.items()):
        if len(shares[u]) < threshold:
            raise DPTopicError(f"only {len(shares[u])} of the {threshold} shares needed to unmask contributor {u[:40]!r}"
                               f" arrived: the sum cannot be read.")
        if kind == "b":
            want = roster[u]["b"][phase]
            seed = reconstruct_checked(shares[u], threshold,
                                       lambda s: seed_commitment(round_id, u, phase, s) == want, f"{u[:40]!r}")
            y -= prg(seed, dim, bits)
            continue
        want = bytes.fromhex(roster[u]["s"][phase])
        seed = reconstruct_checked(shares[u], threshold, lambda s: public_key(s) == want, f"{u[:40]!r}")
        for w in graph[u]:
            if w in uploaded:       # w added +m if w < u else -m; remove it
                m = prg(pair_seed(seed, bytes.fromhex(roster[w]["s"][phase]), round_id, phase, u, w), dim, bits)
                if w < u:
                    y -= m
                else:
                    y += m
    return from_ring(y, bits)
