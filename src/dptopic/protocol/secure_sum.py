"""Secure aggregation of bounded per-person statistics (the contributor and server sides, transport-free).

The protocol is SecAgg (Bonawitz et al. 2017) on a sparse neighbour graph (SecAgg+, Bell et al. 2020), in phases
that each sum one vector; what travels is built and checked here, the HTTP service (:mod:`dptopic.service`) only
stores and forwards it.

1. **Keys.** Each contributor draws an X25519 key pair ``c`` (to encrypt shares to its neighbours) and, per phase
   ``p``, an X25519 key pair ``s_p`` (pairwise masks) and a 32-byte self-mask seed ``b_p``, all from the OS CSPRNG,
   and publishes the public keys.
2. **Neighbours.** Once the roster is closed, every party derives the same neighbour graph from public randomness
   (SHA-256 of the roster and its keys): the contributors in a pseudo-random order on a ring, each joined to its
   ``degree / 2`` nearest on either side (a circulant graph: ``degree``-regular and ``degree``-connected). The degree
   grows like ``2 log2 n``.
3. **Shares.** Each contributor Shamir-shares (:mod:`dptopic.protocol.shamir`) ``s_p``'s private key and ``b_p``
   for every phase among its neighbours, threshold ``degree // 2 + 1``, each neighbour's shares encrypted with
   AES-GCM under a key agreed with X25519 on the ``c`` keys (the server forwards ciphertexts it cannot read).
4. **Masked upload** (per phase). The contributor's integer vector ``x`` (quantized statistic plus its noise share)
   is sent as ``x + PRG(b_p) + sum_{v neighbour, v > u} PRG(s_uv) - sum_{v < u} PRG(s_uv) mod 2^32``, where ``s_uv``
   is HKDF-SHA256 of the X25519 agreement of ``s_p`` keys and PRG is AES-256 in counter mode. Each upload alone is
   uniformly distributed mod 2^32 whatever ``x`` (``PRG(b_p)`` is, to anyone without ``b_p``).
5. **Unmasking.** The server names who uploaded and who dropped out; each surviving neighbour answers, for every
   contributor that shared with it, the share of ``b_p`` if that contributor uploaded and the share of ``s_p``'s
   key if it did not, never both for one contributor and phase (:class:`RevealLog`). The server reconstructs the
   seeds, removes the self masks of the uploads and the pairwise masks that the dropped contributors' neighbours
   added, and reads the sum as signed integers.

With fewer than the threshold of a contributor's neighbours, the server learns nothing of its seeds; a curious
server cannot unmask a late upload, because it already asked for that contributor's pairwise key or its self mask,
not both.
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np

from ..errors import DPTopicError
from . import shamir
from ..accounting.skellam import SkellamRelease, calibrate_skellam, rounded_norms, wrap_probability

MODULUS_BITS = 32
DTYPE = np.dtype("<u4")
SEED_BYTES = 32
_ZEROS = bytearray()


_CRYPTO: dict = {}


def crypto():
    """The ``cryptography`` primitives the secure sum uses, imported once (one line if the package is missing)."""
    if _CRYPTO:
        return _CRYPTO
    try:
        from cryptography.hazmat.primitives import hashes, serialization  # optional: the 'service' extra
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey  # (as above)
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # (as above)
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # (as above)
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF  # (as above)
    except ImportError:
        raise DPTopicError("the secure sum needs the 'cryptography' package: pip install 'dptopic[service]'.") from None
    _CRYPTO.update(hashes=hashes, serialization=serialization, X25519PrivateKey=X25519PrivateKey,
                   X25519PublicKey=X25519PublicKey, Cipher=Cipher, algorithms=algorithms, modes=modes, AESGCM=AESGCM,
                   HKDF=HKDF)
    return _CRYPTO


# ----------------------------------------------------------------------------- primitives
def prg(seed: bytes, dim: int) -> np.ndarray:
    """``dim`` pseudo-random uint32 from a 32-byte seed: AES-256-CTR on zeros (a fresh key per seed, so a fixed
    nonce is safe)."""
    global _ZEROS
    c = crypto()
    need = 4 * int(dim)
    if len(_ZEROS) < need:
        _ZEROS = bytearray(need)
    enc = c["Cipher"](c["algorithms"].AES(seed), c["modes"].CTR(b"\x00" * 16)).encryptor()
    return np.frombuffer(enc.update(memoryview(_ZEROS)[:need]), dtype=DTYPE)


def hkdf(material: bytes, info: bytes) -> bytes:
    """32 bytes of HKDF-SHA256 of ``material`` bound to ``info``."""
    c = crypto()
    return c["HKDF"](algorithm=c["hashes"].SHA256(), length=SEED_BYTES, salt=None, info=info).derive(material)


def agree(private: bytes, public: bytes) -> bytes:
    """The X25519 shared secret of ``private`` and a peer's ``public`` (one line on an invalid key)."""
    c = crypto()
    try:
        return c["X25519PrivateKey"].from_private_bytes(private).exchange(c["X25519PublicKey"].from_public_bytes(public))
    except ValueError as e:
        raise DPTopicError(f"a public key is not a valid X25519 key ({e}).") from None


def public_key(private: bytes) -> bytes:
    c = crypto()
    s = c["serialization"]
    return c["X25519PrivateKey"].from_private_bytes(private).public_key().public_bytes(s.Encoding.Raw,
                                                                                       s.PublicFormat.Raw)


def new_private_key() -> bytes:
    c = crypto()
    s = c["serialization"]
    return c["X25519PrivateKey"].generate().private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())


def pair_seed(private: bytes, peer_public: bytes, round_id: str, phase: int, u: str, v: str) -> bytes:
    """The pairwise mask seed of ``u`` and ``v`` for one phase: the same from either side."""
    a, b = sorted((u, v))
    return hkdf(agree(private, peer_public), f"dptopic-secure-sum/pair/{round_id}/{phase}/{a}/{b}".encode())


# ----------------------------------------------------------------------------- the neighbour graph
def degree_for(n: int) -> int:
    """Neighbours per contributor among ``n``: ``2 ceil(log2 n) + 2`` (even), or everyone else when fewer."""
    if n < 2:
        return 0
    d = 2 * math.ceil(math.log2(n)) + 2
    return n - 1 if d >= n - 1 else d


def threshold_for(degree: int) -> int:
    """Shares needed to reconstruct a seed: a majority of the neighbours."""
    return degree // 2 + 1


def roster_seed(roster: dict) -> bytes:
    """Public randomness of a closed roster ``{id: {"c": hex, "s": [hex...]}}``: SHA-256 of its canonical JSON."""
    return hashlib.sha256(json.dumps(roster, sort_keys=True, separators=(",", ":")).encode()).digest()


_GRAPH_MEMO: list = [None, None]


def neighbour_graph(roster: dict) -> dict[str, list[str]]:
    """``{id: sorted neighbour ids}``: the circulant graph on a pseudo-random ring of the roster (module note); the
    last roster's graph is kept (one process plays many contributors of one round in a simulation)."""
    if _GRAPH_MEMO[0] is roster:
        return _GRAPH_MEMO[1]
    graph = _neighbour_graph(roster)
    _GRAPH_MEMO[:] = [roster, graph]
    return graph


def _neighbour_graph(roster: dict) -> dict[str, list[str]]:
    ids = sorted(roster)
    n = len(ids)
    seed = roster_seed(roster)
    ring = sorted(ids, key=lambda i: hashlib.sha256(seed + i.encode()).digest())
    d = degree_for(n)
    if d >= n - 1:
        return {i: [j for j in ids if j != i] for i in ids}
    h = d // 2
    out = {}
    for k, i in enumerate(ring):
        out[i] = sorted({ring[(k + o) % n] for o in range(-h, h + 1) if o != 0})
    return out


_INDEX_MEMO: list = [None, None]


def holder_index(roster: dict) -> dict[str, int]:
    """Each contributor's Shamir evaluation point: 1 + its place in the sorted roster."""
    if _INDEX_MEMO[0] is not roster:
        _INDEX_MEMO[:] = [roster, {i: k + 1 for k, i in enumerate(sorted(roster))}]
    return _INDEX_MEMO[1]


# ----------------------------------------------------------------------------- quantization
def to_ring(values: np.ndarray) -> np.ndarray:
    """Signed integers as uint32 mod 2^32."""
    return np.asarray(values, dtype=np.int64).astype(np.uint64).astype(DTYPE)


def from_ring(values: np.ndarray) -> np.ndarray:
    """uint32 mod 2^32 read as signed integers in [-2^31, 2^31)."""
    return np.asarray(values, dtype=DTYPE).view(np.int32).astype(np.int64)


# ----------------------------------------------------------------------------- contributor
# ----------------------------------------------------------------------------- server
def unmask_sum(total: np.ndarray, roster: dict, round_id: str, phase: int, members, uploaded,
               responses: dict) -> np.ndarray:
    """The sum of the uploads of ``uploaded`` (``total``: their uint32 sum mod 2^32), unmasked, as signed integers.

    ``members``: the phase's participants (each masked with its neighbours among them); ``responses``: ``{responder:
    {sender: {"kind", "share"}}}`` from the surviving neighbours. Raises (one line) when a needed seed has fewer
    shares than the threshold."""
    dim = len(total)
    graph = neighbour_graph(roster)
    index = holder_index(roster)
    members, uploaded = set(members), set(uploaded)
    dropped = members - uploaded
    needed = {u: "b" for u in uploaded} | {v: "s" for v in dropped if any(u in uploaded for u in graph[v])}
    shares: dict = {u: {} for u in needed}
    for responder, answers in responses.items():
        for sender, a in answers.items():
            if sender in needed and a.get("kind") == needed[sender] and responder in graph[sender]:
                shares[sender][index[responder]] = bytes.fromhex(a["share"])
    y = np.array(total, dtype=DTYPE)
    for u, kind in sorted(needed.items()):
        t = threshold_for(len(graph[u]))
        if len(shares[u]) < t:
            raise DPTopicError(f"only {len(shares[u])} of the {t} shares needed to unmask contributor {u[:40]!r}"
                               f" arrived: the sum cannot be read.")
        seed = shamir.reconstruct(shares[u], t, SEED_BYTES)
        if kind == "b":
            y -= prg(seed, dim)
            continue
        for w in graph[u]:
            if w in uploaded:       # w added +m if w < u else -m; remove it
                m = prg(pair_seed(seed, bytes.fromhex(roster[w]["s"][phase]), round_id, phase, u, w), dim)
                if w < u:
                    y -= m
                else:
                    y += m
    return from_ring(y)


def ring_sum(vectors) -> np.ndarray:
    """The sum mod 2^32 of uint32 vectors (an iterable; one held at a time)."""
    total = None
    for v in vectors:
        v = np.asarray(v, dtype=DTYPE)
        if total is None:
            total = v.copy()
        else:
            total += v
    return total


# ----------------------------------------------------------------------------- the statistics
def triangle_size(n: int) -> int:
    return n * (n + 1) // 2


def matrix_to_triangle(m: np.ndarray) -> np.ndarray:
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


# ----------------------------------------------------------------------------- the noise plan
RANKING_RATIO = 3.0     # the ranking release's noise over the co-occurrence release's, as --unit user's default
MAX_WORDS = 2000        # the co-occurrence release's words at most (n_words="auto"'s bound)
WRAP_SHARE = 1e-3       # at most this share of delta may go to a modular wrap-around


@dataclass(frozen=True)
class SecureSumPlan:
    """The public settings of a round and the noise they imply.

    ``n``: contributors in the round (the roster closes at ``n``); ``dropouts``: how many may drop out, at any step,
    with the sum still released; ``vocab_size``: V. The noise is calibrated for the sum of ``n - dropouts -
    collusion`` honest contributors' shares, ``collusion`` = the threshold minus one (a coalition of that many
    contributors knows its own shares and can subtract them): with every share that survives the dropout tolerance,
    and any ``collusion`` of them known, the release still has ``epsilon`` per person."""

    epsilon: float
    delta: float
    n: int
    dropouts: int
    vocab_size: int
    bits: int = MODULUS_BITS

    def __post_init__(self):
        if self.n < 3:
            raise DPTopicError(f"--min-contributors {self.n}: a secure sum needs at least 3 contributors.")
        if not 0 <= self.dropouts < self.n:
            raise DPTopicError(f"--dropout-tolerance {self.dropouts} must lie in [0, --min-contributors).")
        if self.honest < 1:
            raise DPTopicError(f"--dropout-tolerance {self.dropouts} with {self.n} contributors leaves no honest share"
                               f" of noise beside the {self.collusion} colluders tolerated: lower it below"
                               f" {self.n - self.collusion - 1}.")

    @property
    def degree(self) -> int:
        return degree_for(self.n)

    @property
    def threshold(self) -> int:
        return threshold_for(self.degree)

    @property
    def collusion(self) -> int:
        return self.threshold - 1

    @property
    def honest(self) -> int:
        return self.n - self.dropouts - self.collusion

    @property
    def scale(self) -> float:
        """Quantization scale: the largest power of two up to 2^16 that keeps ``n`` persons' bounded entries 8 times
        inside the modulus."""
        return float(2 ** max(4, min(16, int(math.floor(math.log2(2.0 ** (self.bits - 4) / self.n))))))

    @property
    def dims(self) -> tuple[int, int]:
        """The largest vector of each phase: the ranking release (V + 1) and the co-occurrence release's triangle over
        at most :data:`MAX_WORDS` words."""
        return self.vocab_size + 1, triangle_size(min(self.vocab_size, MAX_WORDS))

    def calibrated(self) -> tuple[list[float], float]:
        """``(mu per phase for the honest survivors' sum, wrap-around probability)``, memoised."""
        key = (self.epsilon, self.delta, self.n, self.dropouts, self.vocab_size, self.bits)
        if key not in _PLAN_MEMO:
            mus = calibrate_skellam(self.epsilon, self.delta * (1 - WRAP_SHARE), [self.scale] * 2, list(self.dims),
                                    [RANKING_RATIO, 1.0])
            wrap = sum(wrap_probability(mu / self.honest * self.n, self.n * rounded_norms(self.scale, d)[0], d,
                                        self.bits) for mu, d in zip(mus, self.dims))
            if wrap > self.delta * WRAP_SHARE:
                raise DPTopicError(f"{self.n} contributors at epsilon {self.epsilon:g} would risk a modular"
                                   f" wrap-around (probability {wrap:.2g}): fewer contributors per round, or a larger"
                                   " epsilon.")
            _PLAN_MEMO[key] = (mus, wrap)
        return _PLAN_MEMO[key]

    @property
    def mu_shares(self) -> list[float]:
        """Each contributor's share of the noise, per phase."""
        return [mu / self.honest for mu in self.calibrated()[0]]

    def releases(self, dims=None, shares=None):
        """The Skellam events of the two releases with ``shares`` noise shares summed (default: the honest
        survivors') and vectors of ``dims`` entries (default: the largest)."""
        shares = self.honest if shares is None else shares
        dims = self.dims if dims is None else dims
        labels = ("secure sum of per-person L2-normalised word-presence vectors (with a document entry)",
                  "secure sum of per-person Frobenius-normalised word co-occurrence matrices")
        return [SkellamRelease(m * shares, self.scale, int(d), label)
                for m, d, label in zip(self.mu_shares, dims, labels)]

    def to_dict(self) -> dict:
        mus, wrap = self.calibrated()
        return {"epsilon": self.epsilon, "delta": self.delta, "min_contributors": self.n,
                "dropout_tolerance": self.dropouts, "vocab_size": self.vocab_size, "modulus_bits": self.bits,
                "degree": self.degree, "threshold": self.threshold, "collusion": self.collusion,
                "scale": self.scale, "mu_shares": self.mu_shares, "ranking_ratio": RANKING_RATIO,
                "max_words": MAX_WORDS, "wrap_probability": wrap}

    @classmethod
    def from_dict(cls, d: dict) -> "SecureSumPlan":
        """The plan a server's ``/v1/config`` names, recomputed here; refused (one line) when the server's stated
        noise shares are not the ones its settings give (a contributor adds the shares it computes itself)."""
        try:
            plan = cls(float(d["epsilon"]), float(d["delta"]), int(d["min_contributors"]),
                       int(d["dropout_tolerance"]), int(d["vocab_size"]), int(d.get("modulus_bits", MODULUS_BITS)))
        except (KeyError, TypeError, ValueError):
            raise DPTopicError("the server's secure-sum settings are incomplete: is it a dptopic server?") from None
        stated = d.get("mu_shares")
        if not isinstance(stated, list) or len(stated) != 2 or not all(
                isinstance(x, (int, float)) and math.isclose(x, y, rel_tol=1e-6) for x, y in zip(stated, plan.mu_shares)):
            raise DPTopicError("the server's secure-sum noise shares differ from what its epsilon, delta and round"
                               " size give: refusing to take part.")
        return plan


_PLAN_MEMO: dict = {}
