"""Randomized response on bit-packed word-presence vectors (Zhao et al. 2020, Sec. V, Steps 1-3).

A document becomes its presence vector over the ``V`` vocabulary words; every bit is
flipped independently with probability ``p = f/2`` (keeping a bit with probability
``1 - f`` and otherwise replacing it by a fair coin is the same as flipping it with
probability ``f/2``).

Bit layout (shared with :class:`dptopic.protocol.reports.ReportSet`): report ``d`` is row ``d`` of
a ``(D, ceil(V/8))`` ``uint8`` array; word ``j`` is bit ``j % 8`` (least significant
first, NumPy's ``bitorder="little"``) of byte ``j // 8``; padding bits are 0.

Coins: each bit draws a 32-bit integer ``u`` and flips when ``u < T`` with
``T = ceil(p · 2**32)``; the flip probability is exactly ``T / 2**32 >= p``, so the
realised per-word epsilon never exceeds the nominal one. Byte ``b`` of a report uses
four 64-bit draws, bit ``2q`` from the low and bit ``2q+1`` from the high 32 bits of
draw ``q``.
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from .rng import next_uint64

_LOW32 = np.uint64(0xFFFFFFFF)
_SH32 = np.uint64(32)


def flip_threshold(p: float) -> int:
    """``T = ceil(p · 2**32)``, at least 1 for ``p > 0``: the 32-bit flip threshold."""
    return max(1, int(np.ceil(p * 2.0**32)))


def last_byte_mask(V: int) -> int:
    r = V % 8
    return 0xFF if r == 0 else (1 << r) - 1


@njit(cache=True, nogil=True)
def presence_packed(word_ids, doc_ptr, V):
    """Packed presence vectors ``(D, ceil(V/8))`` of a CSR corpus (repeated words set one bit)."""
    D = doc_ptr.shape[0] - 1
    out = np.zeros((D, (V + 7) // 8), dtype=np.uint8)
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            out[d, w >> 3] |= np.uint8(1 << (w & 7))
    return out


@njit(cache=True, nogil=True)
def randomize_presence(word_ids, doc_ptr, V, threshold, state):
    """Randomized presence vectors of every document, bit-packed. Advances ``state``."""
    out = presence_packed(word_ids, doc_ptr, V)
    D = out.shape[0]
    nb = out.shape[1]
    T = np.uint64(threshold)
    r = V % 8
    last = np.uint8(0xFF) if r == 0 else np.uint8((1 << r) - 1)
    for d in range(D):
        for b in range(nb):
            flips = 0
            for q in range(4):
                x = next_uint64(state)
                if (x & _LOW32) < T:
                    flips |= 1 << (2 * q)
                if (x >> _SH32) < T:
                    flips |= 1 << (2 * q + 1)
            out[d, b] ^= np.uint8(flips)
        out[d, nb - 1] &= last
    return out


@njit(cache=True, nogil=True)
def packed_column_sums(packed, V):
    """Number of reports with bit ``t`` set, for every word ``t`` (int64, length V)."""
    D, nb = packed.shape
    byte_counts = np.zeros((nb, 256), dtype=np.int64)
    for d in range(D):
        for b in range(nb):
            byte_counts[b, packed[d, b]] += 1
    out = np.zeros(V, dtype=np.int64)
    for b in range(nb):
        for v in range(1, 256):
            c = byte_counts[b, v]
            if c:
                for k in range(8):
                    if (v >> k) & 1 and b * 8 + k < V:
                        out[b * 8 + k] += c
    return out
