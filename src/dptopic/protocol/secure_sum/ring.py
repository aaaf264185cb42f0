"""The ring the secure sum adds in: vectors of integers modulo ``2^32`` or ``2^64`` (two's complement), and the upper
triangle a symmetric co-occurrence matrix is summed as."""
from __future__ import annotations

import math

import numpy as np

from ...errors import DPTopicError

MODULUS_BITS = 32
RING_BITS = (32, 64)
"""The rings a plan may sum in: modulo 2^32 while that costs no accuracy, else 2^64
(:class:`~dptopic.protocol.secure_sum.plan.SecureSumPlan`)."""
DTYPE = np.dtype("<u4")
DTYPES = {32: DTYPE, 64: np.dtype("<u8")}


def ring_dtype(bits: int) -> np.dtype:
    """The little-endian unsigned integer type of the ring modulo ``2^bits`` (32 or 64)."""
    try:
        return DTYPES[int(bits)]
    except (KeyError, TypeError, ValueError):
        raise DPTopicError(f"the secure sum sums modulo 2^32 or 2^64, not 2^{bits}.") from None



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
