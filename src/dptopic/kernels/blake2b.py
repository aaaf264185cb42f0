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

SIGMA = np.array([
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


@njit(cache=True, inline="always")
def _rotr(x, n):
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


@njit(cache=True)
def _compress(h, m, t, final, iv, sigma, v):
    """BLAKE2b's compression F of the block ``m`` (uint64[16]) into the state ``h`` (uint64[8], updated), ``t``
    bytes hashed so far (below 2**64), ``final`` for the last block; ``v`` is scratch (uint64[16])."""
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = iv[i]
    v[12] ^= np.uint64(t)
    if final:
        v[14] = ~v[14]
    for r in range(12):
        s = sigma[r % 10]
        for g in range(8):
            if g < 4:
                a, b, c, d = g, g + 4, g + 8, g + 12
            else:
                a = g - 4
                b = 4 + (a + 1) % 4
                c = 8 + (a + 2) % 4
                d = 12 + (a + 3) % 4
            x = m[s[2 * g]]
            y = m[s[2 * g + 1]]
            v[a] = v[a] + v[b] + x
            v[d] = _rotr(v[d] ^ v[a], 32)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 24)
            v[a] = v[a] + v[b] + y
            v[d] = _rotr(v[d] ^ v[a], 16)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 63)
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


@njit(cache=True, nogil=True)
def _keyed_digests(start, values, salt, iv, sigma, out):
    """Each of ``values`` hashed from the state ``start`` (after the key block): the message is the salt byte (``salt``
    0..255; -1: none) and the value's 8 bytes, little-endian; the first 8 bytes of each digest written to ``out`` as
    int64."""
    n = values.shape[0]
    h = np.empty(8, np.uint64)
    m = np.zeros(16, np.uint64)
    v = np.empty(16, np.uint64)
    length = 8 if salt < 0 else 9
    for i in range(n):
        x = values[i]
        if salt < 0:
            m[0] = x
            m[1] = np.uint64(0)
        else:
            m[0] = np.uint64(salt) | (x << np.uint64(8))
            m[1] = x >> np.uint64(56)
        for j in range(8):
            h[j] = start[j]
        _compress(h, m, 128 + length, True, iv, sigma, v)
        out[i] = np.int64(h[0])


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
    _compress(h, block, 128, False, IV, SIGMA, np.empty(16, np.uint64))
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
    run_in_slices(lambda a, b: _keyed_digests(start, values[a:b], s, IV, SIGMA, out[a:b]), len(values), threads)
    return out
