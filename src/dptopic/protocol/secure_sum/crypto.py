"""The secure sum's cryptography: key agreement (X25519) and what is derived from it (the pairwise mask seeds, the keys
the shares are encrypted under), the masks' pseudo-random generator, the self-mask seeds' commitments, and the Ed25519
signatures every step carries. Each primitive is ``cryptography``'s (:func:`crypto`), loaded once; the caches here
let a process that plays many contributors load each key once."""
from __future__ import annotations

import hashlib
import hmac
import os

import numpy as np

from ...errors import DPTopicError
from . import shamir
from .messages import HEX32, HEX_SIG, PROTOCOL
from .ring import MODULUS_BITS, ring_dtype

SEED_BYTES = 32
"""Bytes of a seed (a self-mask seed, a pairwise seed) and of a private key: what a Shamir share of one carries."""
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
    with the standard library's HMAC (``tests/protocol/secure_sum/test_crypto.py`` checks it against ``cryptography``'s
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
is all zeros, whatever the private key (the list libsodium blocks; ``tests/protocol/secure_sum/test_crypto.py`` checks
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
