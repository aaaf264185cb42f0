"""Keyed BLAKE2b (RFC 7693) of many short messages, compiled: the dataset ledger's keyed digests of a set's keys.

The ledger stores every key a document is known by hashed under its secret key (``hashlib.blake2b(key=..., person=...,
digest_size=8)`` of an optional salt byte and the key's 8 bytes: :func:`dptopic.dataset_ledger.linking._keyed_all`).
A set of 10^6 documents has 3.5 x 10^7 such keys, and one ``hashlib`` call per key (its copy, update and digest from
Python) costs about 1.4 µs: 50 s. Here each digest is one BLAKE2b compression of the message block from the state
after the key block (the same for every message of one key and person), with no Python object per key; the digests
are ``hashlib``'s bit for bit (``tests/kernels/test_blake2b.py``).
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._threads import run_in_slices

IV = np.array([0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
               0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179], dtype=np.uint64)
SIGMA = np.array([   # each round's order of the message words (RFC 7693, 2.7); rounds 10 and 11 repeat rows 0 and 1
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0]], dtype=np.int64)


@njit(cache=True)
def _rotr(x, n):
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


@njit(cache=True, inline="always")
def _round(v, x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15):
    """One round (RFC 7693, 3.2): the mixing function G on the state's columns, then on its diagonals, with the
    message words given in the round's order (G written out eight times, as one function inlines faster)."""
    v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 = v
    v0 = v0 + v4 + x0
    v12 = _rotr(v12 ^ v0, 32)
    v8 = v8 + v12
    v4 = _rotr(v4 ^ v8, 24)
    v0 = v0 + v4 + x1
    v12 = _rotr(v12 ^ v0, 16)
    v8 = v8 + v12
    v4 = _rotr(v4 ^ v8, 63)
    v1 = v1 + v5 + x2
    v13 = _rotr(v13 ^ v1, 32)
    v9 = v9 + v13
    v5 = _rotr(v5 ^ v9, 24)
    v1 = v1 + v5 + x3
    v13 = _rotr(v13 ^ v1, 16)
    v9 = v9 + v13
    v5 = _rotr(v5 ^ v9, 63)
    v2 = v2 + v6 + x4
    v14 = _rotr(v14 ^ v2, 32)
    v10 = v10 + v14
    v6 = _rotr(v6 ^ v10, 24)
    v2 = v2 + v6 + x5
    v14 = _rotr(v14 ^ v2, 16)
    v10 = v10 + v14
    v6 = _rotr(v6 ^ v10, 63)
    v3 = v3 + v7 + x6
    v15 = _rotr(v15 ^ v3, 32)
    v11 = v11 + v15
    v7 = _rotr(v7 ^ v11, 24)
    v3 = v3 + v7 + x7
    v15 = _rotr(v15 ^ v3, 16)
    v11 = v11 + v15
    v7 = _rotr(v7 ^ v11, 63)
    v0 = v0 + v5 + x8
    v15 = _rotr(v15 ^ v0, 32)
    v10 = v10 + v15
    v5 = _rotr(v5 ^ v10, 24)
    v0 = v0 + v5 + x9
    v15 = _rotr(v15 ^ v0, 16)
    v10 = v10 + v15
    v5 = _rotr(v5 ^ v10, 63)
    v1 = v1 + v6 + x10
    v12 = _rotr(v12 ^ v1, 32)
    v11 = v11 + v12
    v6 = _rotr(v6 ^ v11, 24)
    v1 = v1 + v6 + x11
    v12 = _rotr(v12 ^ v1, 16)
    v11 = v11 + v12
    v6 = _rotr(v6 ^ v11, 63)
    v2 = v2 + v7 + x12
    v13 = _rotr(v13 ^ v2, 32)
    v8 = v8 + v13
    v7 = _rotr(v7 ^ v8, 24)
    v2 = v2 + v7 + x13
    v13 = _rotr(v13 ^ v2, 16)
    v8 = v8 + v13
    v7 = _rotr(v7 ^ v8, 63)
    v3 = v3 + v4 + x14
    v14 = _rotr(v14 ^ v3, 32)
    v9 = v9 + v14
    v4 = _rotr(v4 ^ v9, 24)
    v3 = v3 + v4 + x15
    v14 = _rotr(v14 ^ v3, 16)
    v9 = v9 + v14
    v4 = _rotr(v4 ^ v9, 63)
    return v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15


@njit(cache=True, inline="always")
def _rounds(v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15):
    """BLAKE2b's twelve rounds of the state ``v`` over the message words ``m0..m15``, each round taking them in the
    order of its row of the permutation table SIGMA (RFC 7693, 2.7; rounds 10 and 11 repeat rows 0 and 1).

    The words are named scalars and every round is written out (the same order as :data:`SIGMA`'s rows, which
    :func:`_compress` loops over), so the state lives in registers, a word known to be zero (a short message's) is
    folded away, and a loop of digests runs straight-line code the compiler spreads over the vector lanes: about 60 ns
    a digest on one core, against 300-350 for the loop over the table (``docs/research/pipeline.md``). Inlined where
    called; numba takes about 4 s to compile a caller, once (the kernels' cache keeps it)."""
    v = _round(v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
    v = _round(v, m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)
    v = _round(v, m11, m8, m12, m0, m5, m2, m15, m13, m10, m14, m3, m6, m7, m1, m9, m4)
    v = _round(v, m7, m9, m3, m1, m13, m12, m11, m14, m2, m6, m5, m10, m4, m0, m15, m8)
    v = _round(v, m9, m0, m5, m7, m2, m4, m10, m15, m14, m1, m11, m12, m6, m8, m3, m13)
    v = _round(v, m2, m12, m6, m10, m0, m11, m8, m3, m4, m13, m7, m5, m15, m14, m1, m9)
    v = _round(v, m12, m5, m1, m15, m14, m13, m4, m10, m0, m7, m6, m3, m9, m2, m8, m11)
    v = _round(v, m13, m11, m7, m14, m12, m1, m3, m9, m5, m0, m15, m4, m8, m6, m2, m10)
    v = _round(v, m6, m15, m14, m9, m11, m3, m0, m8, m12, m2, m13, m7, m1, m4, m10, m5)
    v = _round(v, m10, m2, m8, m4, m7, m6, m1, m5, m15, m11, m9, m14, m3, m12, m13, m0)
    v = _round(v, m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15)
    return _round(v, m14, m10, m4, m8, m9, m15, m13, m6, m1, m12, m0, m2, m11, m7, m5, m3)


@njit(cache=True)
def _compress(h, m, t, final, iv, sigma):
    """BLAKE2b's compression F of the block ``m`` (uint64[16]) into the state ``h`` (uint64[8], updated), ``t``
    bytes hashed so far (below 2**64), ``final`` for the last block: the rounds in a loop over ``sigma``'s rows. It
    compresses the key block, once a key; :func:`_rounds` is the same written out, for the many digests."""
    last = ~iv[6] if final else iv[6]
    v = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7],
         iv[0], iv[1], iv[2], iv[3], iv[4] ^ np.uint64(t), iv[5], last, iv[7])
    for r in range(12):
        s = sigma[r % 10]
        v = _round(v, m[s[0]], m[s[1]], m[s[2]], m[s[3]], m[s[4]], m[s[5]], m[s[6]], m[s[7]], m[s[8]], m[s[9]],
                   m[s[10]], m[s[11]], m[s[12]], m[s[13]], m[s[14]], m[s[15]])
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


@njit(cache=True, nogil=True)
def _keyed_digests(start, values, salt, iv, out):
    """Each of ``values`` hashed from the state ``start`` (after the key block): the message is the salt byte (``salt``
    0..255; -1: none) and the value's 8 bytes, little-endian, so one block whose words past the second are zero; the
    first 8 bytes of each digest written to ``out`` as int64."""
    z = np.uint64(0)
    shift = np.uint64(0 if salt < 0 else 8)
    low = np.uint64(0 if salt < 0 else salt)
    h0, h1, h2, h3, h4, h5, h6, h7 = start[0], start[1], start[2], start[3], start[4], start[5], start[6], start[7]
    t = np.uint64(128 + (8 if salt < 0 else 9))
    i0, i1, i2, i3, i4, i5, i6, i7 = iv[0], iv[1], iv[2], iv[3], iv[4] ^ t, iv[5], ~iv[6], iv[7]
    for i in range(values.shape[0]):
        x = values[i]
        m0 = low | (x << shift)
        m1 = (x >> np.uint64(56)) if salt >= 0 else z
        v = _rounds((h0, h1, h2, h3, h4, h5, h6, h7, i0, i1, i2, i3, i4, i5, i6, i7),
                    m0, m1, z, z, z, z, z, z, z, z, z, z, z, z, z, z)
        out[i] = np.int64(h0 ^ v[0] ^ v[8])


def _start(key: bytes, person: bytes) -> np.ndarray:
    """The state after the key block: the parameter block (8-byte digest, ``key``'s length, ``person``) XORed into
    the IV, then the key, padded to 128 bytes, compressed as the first of several blocks."""
    if not 0 < len(key) <= 64 or len(person) > 16:
        raise ValueError("BLAKE2b takes a key of 1 to 64 bytes and a person of at most 16")
    h = IV.copy()
    h[0] ^= np.uint64(0x01010000 | (len(key) << 8) | 8)
    p = np.frombuffer(person.ljust(16, b"\0"), dtype="<u8")
    h[6] ^= p[0]
    h[7] ^= p[1]
    block = np.frombuffer(key.ljust(128, b"\0"), dtype="<u8").astype(np.uint64)
    _compress(h, block, 128, False, IV, SIGMA)
    return h


def keyed_digests(key: bytes, person: bytes, values, salt: bytes = b"", threads: int | None = None) -> np.ndarray:
    """``int.from_bytes(hashlib.blake2b(salt + value's 8 bytes (little-endian), key=key, person=person,
    digest_size=8).digest(), "little", signed=True)`` of each of ``values`` (uint64), as int64; ``salt`` at most one
    byte. A long array is hashed in slices on ``threads`` threads (the usable cores when None; each value's digest
    is its own, so the result does not depend on them: at 10^6 documents the ledger hashes 3.5 x 10^7 keys)."""
    if len(salt) > 1:
        raise ValueError("keyed_digests takes a salt of at most one byte")
    values = np.ascontiguousarray(values, dtype=np.uint64)
    out = np.empty(len(values), np.int64)
    start, s = _start(key, person), salt[0] if salt else -1
    run_in_slices(lambda a, b: _keyed_digests(start, values[a:b], s, IV, out[a:b]), len(values), threads)
    return out
