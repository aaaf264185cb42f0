"""Secure aggregation of bounded per-person statistics against a server that lies: what both sides compute.

The protocol is SecAgg (Bonawitz et al. 2017) in its malicious-server variant, on a sparse neighbour graph (SecAgg+,
Bell et al. 2020), in two phases that each sum one vector. What a contributor computes from its documents and
secrets is :mod:`dptopic.contributor.secure_sum.default`; the server (:mod:`dptopic.service.secure_sum.default`) stores,
forwards and unmasks. This module holds what both agree on: the plan, the graph, the signed messages and the maths.

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
   of a neighbour that uploaded, of ``s_p`` of one that did not, never both (:class:`RevealLog`). The server
   reconstructs each seed (checked against its commitment), removes the masks and reads the sum.

**Why a lying server learns no one's statistic** (with ``t`` colluding contributors at most; degree ``d`` (even) on
a ring, ``T = d/2 + t + 1``): the contributor's checks (:mod:`dptopic.contributor.secure_sum.default`) rest on four
facts.

- Fewer than ``T`` shares of a seed reveal nothing of it, and ``T > t``.
- One secret of each neighbour, never both (:class:`RevealLog`; a contributor signs one set per step and answers
  once, for that set): each honest neighbour of ``u`` gives the server at most one of ``u``'s two secrets' shares,
  its ``c <= t`` colluding neighbours both, and ``2 (T - c) > d - c``: the server never holds both ``b_p`` and
  ``s_p`` of anyone, whatever views it shows (the split-views attack).
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
with ``F`` contributors dropping at random still unmasks (:meth:`SecureSumPlan.degree`), and refuses a plan that
cannot.

**Committee mode** (``SecureSumPlan(committee=...)``, :mod:`dptopic.protocol.secure_sum.committee`): the same keys,
graph, masks and checks, but each contributor sends one upload per sum carrying Shamir shares (threshold
``T_c = floor((C + t) / 2) + 1`` of ``C``) of ``b_p`` and of its pairwise seeds to a public committee of ``C``
contributors, which alone signs the set of uploads and answers; no trust beyond the same ``t`` (that module's note).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ...accounting.events import EPSILON_MAX
from ...accounting.skellam import SkellamRelease, calibrate_skellam, rounded_norms, skellam_epsilon, wrap_probability
from ...errors import DPTopicError, ParameterError
from . import shamir

MODULUS_BITS = 32
RING_BITS = (32, 64)
"""The rings a plan may sum in: modulo 2^32 while that costs no accuracy, else 2^64 (:class:`SecureSumPlan`)."""
DTYPE = np.dtype("<u4")
DTYPES = {32: DTYPE, 64: np.dtype("<u8")}
SEED_BYTES = 32
PHASES = 2
PROTOCOL = "dptopic-secure-sum/2"
ROUND_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A round id and a contributor id: what the protocol accepts (and what a file name may hold)."""
HEX32 = re.compile(r"[0-9a-f]{64}")
HEX_SIG = re.compile(r"[0-9a-f]{128}")
SHARE_HEX = 2 * shamir.SHARE_BYTES
_ZEROS = bytearray()


_CRYPTO: dict = {}


def crypto():
    """The ``cryptography`` primitives the secure sum uses, imported once (one line if the package is missing)."""
    if _CRYPTO:
        return _CRYPTO
    try:
        from cryptography.exceptions import InvalidSignature  # optional: the 'service' extra
        from cryptography.hazmat.primitives import hashes, serialization  # (as above)
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey  # (as above)
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey  # (as above)
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # (as above)
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # (as above)
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # (as above)
    except ImportError:
        raise DPTopicError("the secure sum needs the 'cryptography' package: pip install 'dptopic[service]'.") from None
    _CRYPTO.update(hashes=hashes, serialization=serialization, X25519PrivateKey=X25519PrivateKey,
                   X25519PublicKey=X25519PublicKey, Cipher=Cipher, algorithms=algorithms, modes=modes, AESGCM=AESGCM,
                   HKDF=HKDF, Ed25519PrivateKey=Ed25519PrivateKey, Ed25519PublicKey=Ed25519PublicKey,
                   InvalidSignature=InvalidSignature)
    return _CRYPTO


# ----------------------------------------------------------------------------- primitives
def ring_dtype(bits: int) -> np.dtype:
    """The little-endian unsigned integer type of the ring modulo ``2^bits`` (32 or 64)."""
    try:
        return DTYPES[int(bits)]
    except (KeyError, TypeError, ValueError):
        raise DPTopicError(f"the secure sum sums modulo 2^32 or 2^64, not 2^{bits}.") from None


def prg(seed: bytes, dim: int, bits: int = MODULUS_BITS) -> np.ndarray:
    """``dim`` pseudo-random elements of the ring modulo ``2^bits`` from a 32-byte seed: AES-256-CTR on zeros (a
    fresh key per seed, so a fixed nonce is safe)."""
    global _ZEROS
    c = crypto()
    dtype = ring_dtype(bits)
    need = dtype.itemsize * int(dim)
    if len(_ZEROS) < need:
        _ZEROS = bytearray(need)
    enc = c["Cipher"](c["algorithms"].AES(seed), c["modes"].CTR(b"\x00" * 16)).encryptor()
    return np.frombuffer(enc.update(memoryview(_ZEROS)[:need]), dtype=dtype)


_NO_SALT = bytes(32)


def hkdf(material: bytes, info: bytes) -> bytes:
    """32 bytes of HKDF-SHA256 (RFC 5869, no salt) of ``material`` bound to ``info``: one extract and one expand block,
    with the standard library's HMAC (``tests/protocol/secure_sum/test_default.py`` checks it against ``cryptography``'s
    HKDF)."""
    prk = hmac.digest(_NO_SALT, material, "sha256")        # the one-shot C path: a contributor derives hundreds
    return hmac.digest(prk, info + b"\x01", "sha256")


_PRIVATE: dict = {}
_PEERS: dict = {}


def agree(private: bytes, public: bytes) -> bytes:
    """The X25519 shared secret of ``private`` and a peer's ``public`` (one line on an invalid key)."""
    c = crypto()
    key = _PRIVATE.get(private)
    if key is None:         # a contributor agrees with many neighbours on few keys of its own: each loaded once
        if len(_PRIVATE) > 4096:
            _PRIVATE.clear()
        key = _PRIVATE[private] = c["X25519PrivateKey"].from_private_bytes(private)
    peer = _PEERS.get(public)
    try:
        if peer is None:    # a peer's key is read by each of its neighbours (a simulation plays them in one process)
            if len(_PEERS) > 100_000:
                _PEERS.clear()
            peer = _PEERS[bytes(public)] = c["X25519PublicKey"].from_public_bytes(public)
        return key.exchange(peer)
    except ValueError as e:
        raise DPTopicError(f"a public key is not a valid X25519 key ({e}).") from None


def public_key(private: bytes) -> bytes:
    """The X25519 public key of a 32-byte private key."""
    c = crypto()
    s = c["serialization"]
    return c["X25519PrivateKey"].from_private_bytes(private).public_key().public_bytes(s.Encoding.Raw,
                                                                                       s.PublicFormat.Raw)


def new_private_key() -> bytes:
    """A fresh X25519 private key from the OS CSPRNG, clamped (RFC 7748) and below the Shamir field's prime, so that
    its bytes can be shared as they are."""
    while True:
        k = bytearray(os.urandom(32))
        k[0] &= 248
        k[31] &= 127
        k[31] |= 64
        if int.from_bytes(k, "big") < shamir.PRIME:
            return bytes(k)


P25519 = 2 ** 255 - 19
LOW_ORDER_U = frozenset({0, 1, P25519 - 1,
                         325606250916557431795983626356110631294008115727848805560023387167927233504,
                         39382357235489614581723060781553021112529911719440698176882885853963445705823})
"""The u-coordinates (mod p) of the points of small order on Curve25519 and its twist: an agreement with any of them
is all zeros, whatever the private key (the list libsodium blocks; ``tests/protocol/secure_sum/test_default.py`` checks
each against an agreement)."""


def valid_x25519(hex_key) -> bool:
    """Whether ``hex_key`` is 64 lower-case hex digits naming an X25519 public key of full order: a low-order point
    (0, 1, the points of order 2, 4 and 8, in any encoding) gives an all-zero agreement with any key, which would make
    every neighbour's masks and shares with it public."""
    if not isinstance(hex_key, str) or not HEX32.fullmatch(hex_key):
        return False
    u = (int.from_bytes(bytes.fromhex(hex_key), "little") & ((1 << 255) - 1)) % P25519      # as X25519 reads it
    return u not in LOW_ORDER_U


def pair_seed(private: bytes, peer_public: bytes, round_id: str, phase: int, u: str, v: str) -> bytes:
    """The pairwise mask seed of ``u`` and ``v`` for one phase: the same from either side."""
    a, b = sorted((u, v))
    return hkdf(agree(private, peer_public), f"{PROTOCOL}/pair/{round_id}/{phase}/{a}/{b}".encode())


def share_key(my_c: bytes, their_c_public: bytes, round_id: str, sender: str, receiver: str,
              agreed: dict | None = None) -> bytes:
    """The AES-GCM key of the shares ``sender`` addresses to ``receiver`` (agreed on their ``c`` keys). ``agreed``: a
    contributor's own cache of its ``c`` agreements, by peer key (each is used both ways)."""
    secret = None if agreed is None else agreed.get(their_c_public)
    if secret is None:
        secret = agree(my_c, their_c_public)
        if agreed is not None:
            agreed[their_c_public] = secret
    return hkdf(secret, f"{PROTOCOL}/shares/{round_id}/{sender}/{receiver}".encode())


def seed_commitment(round_id: str, contributor: str, phase: int, seed: bytes) -> str:
    """The public commitment to a self-mask seed (hex SHA-256, bound to the round, the contributor and the phase): the
    server checks each seed it reconstructs against it, so a wrong share is found, not summed."""
    return hashlib.sha256(f"{PROTOCOL}/b/{round_id}/{contributor}/{phase}/".encode() + seed).hexdigest()


# ----------------------------------------------------------------------------- signatures
_VERIFIERS: dict = {}


def new_signing_key() -> bytes:
    """A fresh Ed25519 private key (32 bytes) from the OS CSPRNG."""
    c = crypto()
    s = c["serialization"]
    return c["Ed25519PrivateKey"].generate().private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())


def signing_public(private: bytes) -> bytes:
    """The Ed25519 public key of ``private``."""
    c = crypto()
    s = c["serialization"]
    return c["Ed25519PrivateKey"].from_private_bytes(private).public_key().public_bytes(s.Encoding.Raw,
                                                                                        s.PublicFormat.Raw)


_SIGNERS: dict = {}


def sign(private: bytes, message: bytes) -> str:
    """``message`` signed with the Ed25519 key ``private``, as hex (each key loaded once: loading derives its public
    half, a scalar multiplication)."""
    key = _SIGNERS.get(private)
    if key is None:
        if len(_SIGNERS) > 100_000:
            _SIGNERS.clear()
        key = _SIGNERS[private] = crypto()["Ed25519PrivateKey"].from_private_bytes(private)
    return key.sign(message).hex()


_VERIFIED: set = set()
"""Digests of the ``(public key, signature, message)`` triples :func:`verify` found valid in this process."""
MAX_VERIFIED = 500_000
""":data:`_VERIFIED` is emptied when it reaches this many (about 50 MB)."""


def verify(public: bytes, signature, message: bytes) -> bool:
    """Whether ``signature`` (hex) is ``public``'s Ed25519 signature of ``message``; anything malformed is False.

    A valid triple is remembered (its SHA-256 in :data:`_VERIFIED`; the key and the signature have fixed lengths, so
    no two triples share their bytes): the same bytes are not verified a second time in a process (a verification
    is a function of them alone). A contributor's process verifies each of its neighbours' signatures once either
    way; a process that plays many people of a round (a simulation) verifies each signature once, not once per
    neighbour who reads it (``docs/research/secure_sum_cohorts.md``). Nothing invalid is remembered."""
    if not isinstance(signature, str) or not HEX_SIG.fullmatch(signature) or len(public) != 32:
        return False
    seen = hashlib.sha256(bytes(public) + signature.encode() + message).digest()
    if seen in _VERIFIED:
        return True
    c = crypto()
    key = _VERIFIERS.get(public)
    if key is None:
        try:
            key = c["Ed25519PublicKey"].from_public_bytes(public)
        except ValueError:
            return False
        if len(_VERIFIERS) > 100_000:
            _VERIFIERS.clear()
        _VERIFIERS[public] = key
    try:
        key.verify(bytes.fromhex(signature), message)
    except c["InvalidSignature"]:
        return False
    if len(_VERIFIED) >= MAX_VERIFIED:
        _VERIFIED.clear()
    _VERIFIED.add(seen)
    return True


def canonical(doc) -> bytes:
    """The canonical JSON bytes of ``doc`` (sorted keys, no spaces): what a digest or a signature covers."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def message(kind: str, round_id: str, *fields) -> bytes:
    """The bytes a contributor signs for one step: the protocol, the step's kind, the round and the step's fields."""
    return PROTOCOL.encode() + b"\n" + canonical([kind, round_id, *fields])


def digest(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


_SET_DIGESTS: dict = {}


def set_digest(ids) -> str:
    """The digest of a set of contributor ids (sorted, one a line): what a consistency signature covers. Of a
    ``frozenset`` (whose hash Python keeps), memoised: a contributor digests one set of uploads several times."""
    if not isinstance(ids, frozenset):
        return digest("\n".join(sorted(ids)).encode())
    found = _SET_DIGESTS.get(ids)
    if found is None:
        if len(_SET_DIGESTS) >= 16:
            _SET_DIGESTS.clear()
        found = _SET_DIGESTS[ids] = digest("\n".join(sorted(ids)).encode())
    return found


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


# ----------------------------------------------------------------------------- the neighbour graph
def default_collusion(n: int) -> int:
    """The colluders a round of ``n`` tolerates unless told otherwise: ``ceil(log2 n) + 1`` (13 at 3,000)."""
    return math.ceil(math.log2(max(n, 2))) + 1


LIVENESS_TARGET = 1e-3
"""A plan's degree makes the expected number of contributors whose neighbours drop below the threshold, with F of the
N dropping at random, at most this."""


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def neighbours_short(n: int, dropouts: int, degree: int, threshold: int) -> float:
    """The expected number of the ``n`` contributors left with fewer than ``threshold`` of their ``degree``
    neighbours when ``dropouts`` of the others drop out at random (a hypergeometric tail)."""
    most = degree - threshold          # neighbours that may drop
    if dropouts <= most:
        return 0.0
    total = _log_comb(n - 1, degree)
    tail = sum(math.exp(_log_comb(dropouts, k) + _log_comb(n - 1 - dropouts, degree - k) - total)
               for k in range(most + 1, min(degree, dropouts) + 1) if degree - k <= n - 1 - dropouts)
    return n * tail


def threshold_of(degree: int, collusion: int) -> int:
    """The Shamir threshold, the consistency signatures and the neighbours in a set a contributor requires:
    ``degree // 2 + collusion + 1`` (module note)."""
    return degree // 2 + collusion + 1


def committee_threshold(size: int, collusion: int) -> int:
    """``T_c = floor((C + t) / 2) + 1``: the committee's signatures over one set, and its shares of one secret, that a
    step needs (module note of :mod:`dptopic.protocol.secure_sum.committee`: no two sets reach it, and the server never
    holds it for both of a person's secrets, with ``t`` colluders)."""
    return (int(size) + int(collusion)) // 2 + 1


def committee_fails(n: int, dropouts: int, size: int, threshold: int) -> float:
    """The probability that fewer than ``threshold`` of a committee of ``size`` survive when ``dropouts`` of the ``n``
    drop out at random (a hypergeometric tail)."""
    most = size - threshold
    if most < 0:
        return 1.0
    if dropouts <= most:
        return 0.0
    total = _log_comb(n, size)
    return sum(math.exp(_log_comb(dropouts, k) + _log_comb(n - dropouts, size - k) - total)
               for k in range(most + 1, min(size, dropouts) + 1) if size - k <= n - dropouts)


def committee_size(n: int, dropouts: int, collusion: int) -> int:
    """The smallest committee whose threshold (:func:`committee_threshold`) survives ``dropouts`` random dropouts with
    probability at least ``1 -`` :data:`LIVENESS_TARGET`; refused (one line) when no committee of the ``n`` does."""
    for size in range(int(collusion) + 2, int(n) + 1):
        if committee_fails(n, dropouts, size, committee_threshold(size, collusion)) <= LIVENESS_TARGET:
            return size
    raise ParameterError("{dropouts=} with {collusion=} among {n} contributors: no committee survives it (its"
                         " threshold needs more than half of it and the colluders beside): lower {dropouts} or"
                         " {collusion}, or run without a committee.", "dropouts", dropouts,
                         values={"collusion": collusion}, n=n)


def ring_order(ids, round_id: str) -> list:
    """The contributors in their places on the ring: sorted by SHA-256 of the round and their id."""
    return sorted(ids, key=lambda i: hashlib.sha256(f"{PROTOCOL}/ring/{round_id}/{i}".encode()).digest())


class NeighbourGraph(Mapping):
    """``{id: sorted neighbour ids}`` of :func:`neighbour_graph`, each row computed when first read: a contributor
    reads its own row and its neighbours' (``d + 1`` rows of ``d`` ids), not the ``N`` rows of the whole graph; the
    server reads every row. The ring's order (one hash per id, :func:`ring_order`) is computed once, on creation."""

    def __init__(self, ids, round_id: str, degree: int):
        self._ids = tuple(sorted(ids))
        self._degree = int(degree)
        self._complete = self._degree >= len(self._ids) - 1
        self._ring = self._ids if self._complete else tuple(ring_order(self._ids, round_id))
        self._place = {i: k for k, i in enumerate(self._ring)}
        self._rows: dict = {}

    def __getitem__(self, i: str) -> list[str]:
        row = self._rows.get(i)
        if row is None:
            k = self._place[i]      # KeyError for an id not in the round, as a dict's
            ring, n = self._ring, len(self._ring)
            if self._complete:
                row = [j for j in self._ids if j != i]
            else:
                h = self._degree // 2
                row = sorted(ring[(k + o) % n] for o in range(-h, h + 1) if o != 0)
            self._rows[i] = row
        return row

    def __contains__(self, i) -> bool:
        return i in self._place

    def __iter__(self):
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def rows_computed(self) -> int:
        """How many rows have been read (computed) so far."""
        return len(self._rows)


_GRAPH_MEMO: dict = {}


def neighbour_graph(ids, round_id: str, degree: int) -> NeighbourGraph:
    """``{id: sorted neighbour ids}`` (a :class:`NeighbourGraph`, a read-only mapping): each contributor joined to
    the ``degree // 2`` nearest on either side of the ring (:func:`ring_order`), or to everyone else when
    ``degree >= len(ids) - 1``. Memoised per round (a process playing many contributors orders the ring once)."""
    ids = tuple(sorted(ids))
    key = (ids, round_id, int(degree))
    graph = _GRAPH_MEMO.get(key)
    if graph is None:
        graph = NeighbourGraph(ids, round_id, degree)
        if len(_GRAPH_MEMO) > 4:
            _GRAPH_MEMO.clear()
        _GRAPH_MEMO[key] = graph
    return graph


_HOLDERS: dict = {}


def holder_index(ids) -> Mapping[str, int]:
    """Each contributor's Shamir evaluation point: 1 + its place in the sorted ids (read-only; memoised by the ids, in
    their order: every contributor a process plays, and the server, index the same N ids)."""
    key = tuple(ids)
    found = _HOLDERS.get(key)
    if found is None:
        if len(_HOLDERS) >= 4:
            _HOLDERS.clear()
        found = _HOLDERS[key] = MappingProxyType({i: k + 1 for k, i in enumerate(sorted(key))})
    return found


def consistent_signers(graph: dict, u: str, signatures_ok: set, threshold: int) -> bool:
    """Whether ``u``'s neighbours include ``threshold`` of ``signatures_ok`` (those whose consistency signatures over
    one's own view were checked)."""
    return sum(1 for w in graph[u] if w in signatures_ok) >= threshold


# ----------------------------------------------------------------------------- quantization and the ring
def to_ring(values: np.ndarray, bits: int = MODULUS_BITS) -> np.ndarray:
    """Signed integers (int64) as elements of the ring modulo ``2^bits`` (two's complement: uint64 wraps as the
    ring does, and uint32 keeps its low 32 bits)."""
    return np.asarray(values, dtype=np.int64).astype(np.uint64).astype(ring_dtype(bits))


def from_ring(values: np.ndarray, bits: int | None = None) -> np.ndarray:
    """Elements of the ring modulo ``2^bits`` read as signed integers in ``[-2^(bits-1), 2^(bits-1))`` (int64);
    ``bits`` by default from the array's type."""
    values = np.asarray(values)
    if bits is None:
        bits = 64 if values.dtype.itemsize == 8 else MODULUS_BITS
    signed = np.int64 if int(bits) == 64 else np.int32
    return np.asarray(values, dtype=ring_dtype(bits)).view(signed).astype(np.int64)


def ring_sum(vectors, bits: int = MODULUS_BITS) -> np.ndarray:
    """The sum modulo ``2^bits`` of ring vectors (an iterable; one held at a time)."""
    dtype = ring_dtype(bits)
    total = None
    for v in vectors:
        v = np.asarray(v, dtype=dtype)
        if total is None:
            total = v.copy()
        else:
            total += v
    return total


def triangle_size(n: int) -> int:
    """Entries of the upper triangle (with the diagonal) of an ``n x n`` matrix."""
    return n * (n + 1) // 2


def matrix_to_triangle(m: np.ndarray) -> np.ndarray:
    """The upper triangle of symmetric ``m``, row by row, the off-diagonal entries times sqrt(2) (the vector's L2
    norm is the matrix's Frobenius norm)."""
    n = m.shape[0]
    iu = np.triu_indices(n)
    w = np.where(iu[0] == iu[1], 1.0, math.sqrt(2.0))
    return m[iu] * w


def triangle_to_matrix(vec: np.ndarray, n: int) -> np.ndarray:
    """The symmetric matrix of :func:`matrix_to_triangle`'s vector."""
    iu = np.triu_indices(n)
    w = np.where(iu[0] == iu[1], 1.0, 1.0 / math.sqrt(2.0))
    out = np.zeros((n, n))
    out[iu] = vec * w
    out.T[iu] = vec * w
    return out


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


def plan_degree(n: int, dropouts: int, collusion: int) -> int:
    """Neighbours per contributor of a round of ``n`` with ``dropouts`` dropping out and ``collusion`` colluders: the
    smallest even degree (at least ``2 t + 2``) whose threshold survives ``dropouts`` random dropouts
    (:data:`LIVENESS_TARGET`), or everyone else; refused (one line) when even everyone else cannot. Memoised."""
    key = ("degree", int(n), int(dropouts), int(collusion))
    if key not in _PLAN_MEMO:
        n, F, t = key[1:]
        d = 2 * t + 2
        while d < n - 1 and neighbours_short(n, F, d, threshold_of(d, t)) > LIVENESS_TARGET:
            d += 2
        if d >= n - 1:
            d = n - 1
            if threshold_of(d, t) > d or neighbours_short(n, F, d, threshold_of(d, t)) > LIVENESS_TARGET:
                most = max(0, d - threshold_of(d, t))
                raise ParameterError("{dropouts=} with {collusion=} among {n} contributors: no neighbour graph"
                                     " survives it (each contributor needs {need} of its {d} neighbours, so at"
                                     " most {most} may drop out): lower {dropouts} or {collusion}, or enroll more"
                                     " contributors.", "dropouts", F, values={"collusion": t}, n=n,
                                     need=threshold_of(d, t), d=d, most=most)
        _PLAN_MEMO[key] = d
    return _PLAN_MEMO[key]


# ----------------------------------------------------------------------------- the noise plan
RANKING_RATIO = 3.0     # the ranking release's noise over the co-occurrence release's, as the user unit's default
MAX_WORDS = 2000        # the co-occurrence release's words at most (n_words="auto"'s bound)
DEFAULT_MAX_WORDS = 256
"""The words a plan's second phase sums at most by default (:attr:`SecureSumPlan.max_words`): the triangle over 256
words is 32,896 entries (128 KiB an upload modulo 2^32, 257 KiB modulo 2^64, and as much PRG output per
neighbour's mask), whatever the round's size. The noisy ranking keeps more words as the round grows (200 at 10,000
people, 239 at 20,000, every one of V = 1,000 at 100,000: ``docs/research/secure_sum_cohorts.md``), and with them
each contributor's upload and mask expansion: the cap keeps both bounded at about what 20,000 people cost."""
WRAP_SHARE = 1e-3       # at most this share of delta may go to a modular wrap-around
MAX_INFLATION = 1.01
"""The ring and scale a plan chooses keep the quantization's inflation of the noise at most this (1%)."""
MAX_SCALE_LOG2 = 16     # the quantization scale is at most 2^16
IDEAL_SCALE = 2.0 ** 40
"""A scale at which rounding costs nothing measurable: the reference of :attr:`SecureSumPlan.noise_inflation`."""


def ring_scale(bits: int, n: int) -> float:
    """The quantization scale of a round of ``n`` summed modulo ``2^bits``: the largest power of two up to 2^16 (at
    least 2^4) that keeps ``n`` persons' bounded entries 8 times inside half the modulus (2^(bits-4) / n)."""
    return float(2 ** max(4, min(MAX_SCALE_LOG2, int(math.floor(math.log2(2.0 ** (int(bits) - 4) / int(n)))))))


@dataclass(frozen=True)
class SecureSumPlan:
    """The public settings of a round, the graph they need and the noise they imply.

    ``n``: contributors in the round (the roster closes at ``n``, the invitations' count); ``dropouts``: how many
    may drop out, at any step, with the sum still released; ``vocab_size``: V; ``collusion``: ``t``, how many enrolled
    contributors may collude with the server (default :func:`default_collusion`). The degree is the smallest that
    survives ``dropouts`` random dropouts (:data:`LIVENESS_TARGET`), the threshold ``degree // 2 + t + 1`` (module
    note). The noise is calibrated for the ``n - dropouts - t - 1`` honest shares besides the protected person's own:
    with every share that survives the dropout tolerance, any ``t`` of them known, and the person's own share left out
    (it leaves with the person under add/remove), the release still has ``epsilon`` per person.

    ``bits``: the ring, modulo 2^32 or 2^64. By default (None) the plan chooses it: 32 bits (half the bytes) when
    the scale they allow (:func:`ring_scale`) inflates the noise by at most :data:`MAX_INFLATION` and keeps the
    wrap-around probability within its share of delta, else 64 bits (where the scale is 2^16 up to 2^44
    contributors); a plan that neither ring can carry is refused. Given, the plan uses that ring (a stated plan's
    ring is checked for its wrap-around, not its inflation: the noise is accounted at whatever scale it gives).

    ``max_words``: the most words the second phase sums (2 to :data:`MAX_WORDS`; None:
    :data:`DEFAULT_MAX_WORDS`). The server keeps the words of highest noisy count in the first sum, at most this many
    (post-processing of a released sum: it spends nothing); the noise is calibrated for the triangle over
    ``min(vocab_size, max_words)`` words, so a cap also lowers it a little. It bounds what a contributor uploads and
    expands into masks in the second phase, whatever the round's size.

    ``committee``: the committee mode (:mod:`dptopic.protocol.secure_sum.committee`): None or 0 (default) for none,
    "auto" for the smallest committee whose threshold ``T_c`` survives ``dropouts`` random dropouts with probability
    ``1 -`` :data:`LIVENESS_TARGET` (:func:`committee_size`), or a size, checked the same way; stored as the size."""

    epsilon: float
    delta: float
    n: int
    dropouts: int
    vocab_size: int
    collusion: int | None = None
    bits: int | None = None
    max_words: int | None = None
    committee: int | str | None = None

    def __post_init__(self):
        if isinstance(self.epsilon, bool) or not isinstance(self.epsilon, (int, float)) \
                or not 0 < self.epsilon <= EPSILON_MAX:
            raise ParameterError("invalid {epsilon=}: a number in (0, {most:g}] per person.", "epsilon", self.epsilon,
                                 most=EPSILON_MAX)
        if isinstance(self.delta, bool) or not isinstance(self.delta, (int, float)) or not 0 < self.delta < 1:
            raise ParameterError("invalid {delta=}: a number in (0, 1).", "delta", self.delta)
        for name in ("n", "dropouts", "vocab_size") + (("bits",) if self.bits is not None else ()):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise ParameterError("invalid {" + name + "=}: an integer.", name, v)
        if self.collusion is None:
            object.__setattr__(self, "collusion", default_collusion(int(self.n)))
        if isinstance(self.collusion, bool) or not isinstance(self.collusion, (int, np.integer)) or self.collusion < 0:
            raise ParameterError("invalid {collusion=}: an integer >= 0.", "collusion", self.collusion)
        if self.max_words is None:
            object.__setattr__(self, "max_words", DEFAULT_MAX_WORDS)
        if isinstance(self.max_words, bool) or not isinstance(self.max_words, (int, np.integer)) \
                or not 2 <= self.max_words <= MAX_WORDS:
            raise ParameterError("invalid {max_words=}: the words the second sum may hold, an integer in [2, {most}].",
                                 "max_words", self.max_words, most=MAX_WORDS)
        object.__setattr__(self, "max_words", int(self.max_words))
        if self.n < 3:
            raise ParameterError("{n=}: a secure sum needs at least 3 contributors.", "n", self.n)
        if not 0 <= self.dropouts < self.n:
            raise ParameterError("{dropouts=} must lie in [0, {n}).", "dropouts", self.dropouts, n=self.n)
        if self.vocab_size < 2:
            raise ParameterError("{vocab_size=}: the vocabulary needs at least 2 words.", "vocab_size",
                                 self.vocab_size)
        if self.bits is not None and self.bits not in RING_BITS:
            raise ParameterError("{bits=}: the secure sum sums modulo 2^32 or 2^64 (bits 32 or 64, or None to let"
                                 " the plan choose).", "bits", self.bits)
        if self.honest < 1:
            raise ParameterError("{dropouts=} and {collusion=} with {n} contributors leave no honest noise share"
                                 " besides the protected person's own: lower them (their sum at most {most}).",
                                 "dropouts", self.dropouts, values={"collusion": self.collusion}, n=self.n,
                                 most=self.n - 2)
        self.degree     # noqa: B018 (refuses a plan whose graph cannot survive its dropouts)
        object.__setattr__(self, "committee", self._choose_committee())
        if self.bits is None:
            object.__setattr__(self, "bits", self._choose_bits())
        else:
            object.__setattr__(self, "bits", int(self.bits))

    def _choose_committee(self) -> int:
        """The committee's size (:mod:`dptopic.protocol.secure_sum.committee`): 0 (off) for None or 0; for "auto" the
        smallest that survives the plan's dropouts (:func:`committee_size`); a size given is checked the same way."""
        c = self.committee
        if c is None or (isinstance(c, (int, np.integer)) and not isinstance(c, bool) and c == 0):
            return 0
        n, F, t = int(self.n), int(self.dropouts), int(self.collusion)
        if c == "auto":
            return committee_size(n, F, t)
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not t + 2 <= c <= n:
            raise ParameterError("invalid {committee=}: 'auto', 0 (no committee) or an integer in [collusion + 2,"
                                 " {n}].", "committee", c, n=n)
        if committee_fails(n, F, int(c), committee_threshold(int(c), t)) > LIVENESS_TARGET:
            raise ParameterError("{committee=} with {dropouts=} among {n} contributors: its threshold {need} would"
                                 " fail with probability above {target:g}: a larger committee, or 'auto'.",
                                 "committee", c, values={"dropouts": F}, n=n,
                                 need=committee_threshold(int(c), t), target=LIVENESS_TARGET)
        return int(c)

    @property
    def committee_threshold(self) -> int:
        """``T_c``: the committee's signatures and shares a step needs (0 without a committee)."""
        return committee_threshold(int(self.committee), int(self.collusion)) if self.committee else 0

    def _ring_noise(self, bits: int) -> tuple[list[float], float, float]:
        """``(mu per phase, wrap-around probability, noise inflation)`` in the ring modulo ``2^bits``, memoised."""
        key = ("ring", self.epsilon, self.delta, self.n, self.dropouts, self.vocab_size, self.collusion, int(bits),
               self.max_words)
        if key not in _PLAN_MEMO:
            scale, dims = ring_scale(bits, self.n), list(self.dims)
            budget = self.delta * (1 - WRAP_SHARE)
            mus = calibrate_skellam(self.epsilon, budget, [scale] * 2, dims, [RANKING_RATIO, 1.0])
            # the sum of every contributor's share (no dropout) is the noisiest a wrap-around can meet
            wrap = sum(wrap_probability(mu / self.honest * self.n, self.n * rounded_norms(scale, d)[0], d, bits)
                       for mu, d in zip(mus, dims))
            ideal = calibrate_skellam(self.epsilon, budget, [IDEAL_SCALE] * 2, dims, [RANKING_RATIO, 1.0])
            inflation = math.sqrt(mus[1] / ideal[1]) * IDEAL_SCALE / scale
            _PLAN_MEMO[key] = (mus, wrap, inflation)
        return _PLAN_MEMO[key]

    def _choose_bits(self) -> int:
        """The ring (module note, :class:`SecureSumPlan`): 32 bits when they cost no accuracy, else 64."""
        for bits in RING_BITS:
            _, wrap, inflation = self._ring_noise(bits)
            if wrap <= self.delta * WRAP_SHARE and inflation <= MAX_INFLATION:
                return bits
        _, wrap, inflation = self._ring_noise(RING_BITS[-1])
        raise DPTopicError(f"{self.n} contributors at epsilon {self.epsilon:g} fit no ring: modulo 2^64 the rounding"
                           f" inflates the noise {inflation:.3f} times and the wrap-around probability is {wrap:.2g}:"
                           " fewer contributors per round, or a larger epsilon.")

    @property
    def degree(self) -> int:
        """Neighbours per contributor (:func:`plan_degree` of ``n``, ``dropouts`` and ``collusion``)."""
        return plan_degree(int(self.n), int(self.dropouts), int(self.collusion))

    @property
    def threshold(self) -> int:
        """Shares to reconstruct a seed, consistency signatures a survivor needs, neighbours a set must hold."""
        return threshold_of(self.degree, int(self.collusion))

    @property
    def honest(self) -> int:
        """Honest noise shares the guarantee rests on, besides the protected person's own."""
        return int(self.n) - int(self.dropouts) - int(self.collusion) - 1

    @property
    def scale(self) -> float:
        """Quantization scale of the plan's ring (:func:`ring_scale`)."""
        return ring_scale(self.bits, self.n)

    @property
    def dtype(self) -> np.dtype:
        """The ring's element type: little-endian uint32 or uint64 (an upload's entries)."""
        return ring_dtype(self.bits)

    def upload_bytes(self, dim: int) -> int:
        """Bytes of a masked upload of ``dim`` entries."""
        return self.dtype.itemsize * int(dim)

    @property
    def noise_inflation(self) -> float:
        """The per-entry noise of the plan's releases (in units of the statistic) over the noise the same epsilon
        needs when rounding costs nothing (the scale 2^40): the quantization's price, at most :data:`MAX_INFLATION`
        for a ring the plan chose."""
        return self._ring_noise(self.bits)[2]

    @property
    def dims(self) -> tuple[int, int]:
        """The largest vector of each phase: the ranking release (V + 1) and the co-occurrence release's triangle over
        at most :attr:`max_kept_words` words."""
        return self.vocab_size + 1, triangle_size(self.max_kept_words)

    @property
    def max_kept_words(self) -> int:
        """The most words the second phase may sum: ``min(vocab_size, max_words)``."""
        return min(int(self.vocab_size), int(self.max_words))

    def calibrated(self) -> tuple[list[float], float]:
        """``(mu per phase for the honest shares' sum, wrap-around probability)``, memoised; refused (one line) when
        the wrap-around would take more than its share of delta."""
        mus, wrap, _ = self._ring_noise(self.bits)
        if wrap > self.delta * WRAP_SHARE:
            raise DPTopicError(f"{self.n} contributors at epsilon {self.epsilon:g} would risk a modular wrap-around"
                               f" modulo 2^{self.bits} (probability {wrap:.2g}): fewer contributors per round, a"
                               " larger epsilon, or the ring the plan chooses (bits=None).")
        return mus, wrap

    @property
    def mu_shares(self) -> list[float]:
        """Each contributor's share of the noise, per phase."""
        return [mu / self.honest for mu in self.calibrated()[0]]

    def releases(self, dims=None, shares=None):
        """The Skellam events of the two releases with ``shares`` noise shares summed (default: the honest shares the
        guarantee rests on) and vectors of ``dims`` entries (default: the largest)."""
        shares = self.honest if shares is None else shares
        dims = self.dims if dims is None else dims
        labels = ("secure sum of per-person L2-normalised word-presence vectors (with a document entry)",
                  "secure sum of per-person Frobenius-normalised word co-occurrence matrices")
        return [SkellamRelease(m * shares, self.scale, int(d), label)
                for m, d, label in zip(self.mu_shares, dims, labels)]

    def epsilon_with_colluders(self, colluders: int, dims=None) -> float:
        """epsilon per person (at the plan's delta for the noise) when ``colluders`` enrolled contributors collude with
        the server (up to ``n - dropouts - 2``; beyond ``collusion`` the masks' secrecy is not covered either)."""
        shares = int(self.n) - int(self.dropouts) - int(colluders) - 1
        if shares < 1:
            return math.inf
        return skellam_epsilon(self.releases(dims=dims, shares=shares), self.delta * (1 - WRAP_SHARE))

    def epsilon_by_colluders(self, dims=None) -> list[list]:
        """``[[colluders, epsilon], ...]`` for 0 to ``collusion`` colluders (the card's table)."""
        return [[c, self.epsilon_with_colluders(c, dims)] for c in range(int(self.collusion) + 1)]

    def to_dict(self) -> dict:
        """The plan as ``/v1/config`` states it (its settings, and what follows from them, for a contributor to check)."""
        mus, wrap = self.calibrated()
        return {"epsilon": self.epsilon, "delta": self.delta, "min_contributors": self.n,
                "dropout_tolerance": self.dropouts, "vocab_size": self.vocab_size, "modulus_bits": self.bits,
                "collusion": self.collusion, "degree": self.degree, "threshold": self.threshold,
                "honest_shares": self.honest, "scale": self.scale, "mu_shares": self.mu_shares,
                "noise_inflation": self.noise_inflation, "ranking_ratio": RANKING_RATIO, "max_words": self.max_words,
                "wrap_probability": wrap, "protocol": PROTOCOL,
                **({"committee": self.committee, "committee_threshold": self.committee_threshold}
                   if self.committee else {})}

    @classmethod
    def from_dict(cls, d: dict) -> "SecureSumPlan":
        """The plan a server's ``/v1/config`` names, recomputed here; refused (one line) when anything it states
        (degree, threshold, noise shares, protocol) is not what its settings give: a contributor computes the graph,
        the threshold and its noise share itself."""
        if not isinstance(d, dict):
            raise DPTopicError("the server's secure-sum settings are not an object: is it a dptopic server?")
        try:
            plan = cls(_number(d["epsilon"]), _number(d["delta"]), _integer(d["min_contributors"]),
                       _integer(d["dropout_tolerance"]), _integer(d["vocab_size"]), _integer(d["collusion"]),
                       _integer(d.get("modulus_bits", MODULUS_BITS)), _integer(d.get("max_words", MAX_WORDS)),
                       _integer(d.get("committee", 0)))
        except (KeyError, TypeError, ValueError):
            raise DPTopicError("the server's secure-sum settings are incomplete or malformed: is it a dptopic server"
                               " of this version?") from None
        except DPTopicError as e:
            raise DPTopicError(f"the server's secure-sum settings are refused ({' '.join(str(e).split()).rstrip('.')})"
                               ": refusing to take part.") from None
        if d.get("protocol") != PROTOCOL:
            raise DPTopicError(f"the server speaks secure-sum protocol {str(d.get('protocol'))[:40]!r}, not {PROTOCOL!r}:"
                               " update dptopic on one side.")
        for name, mine in (("degree", plan.degree), ("threshold", plan.threshold), ("honest_shares", plan.honest),
                           ("scale", plan.scale)) + ((("committee_threshold", plan.committee_threshold),)
                                                     if plan.committee else ()):
            if d.get(name) != mine:
                raise DPTopicError(f"the server states {name} {str(d.get(name))[:20]} but its settings give {mine}:"
                                   " refusing to take part.")
        stated = d.get("mu_shares")
        if not isinstance(stated, list) or len(stated) != 2 or not all(
                isinstance(x, (int, float)) and not isinstance(x, bool) and math.isclose(x, y, rel_tol=1e-6)
                for x, y in zip(stated, plan.mu_shares)):
            raise DPTopicError("the server's secure-sum noise shares differ from what its epsilon, delta and round"
                               " size give: refusing to take part.")
        return plan


def _number(v) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        raise ValueError(v)
    return float(v)


def _integer(v) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(v)
    return int(v)


_PLAN_MEMO: dict = {}
