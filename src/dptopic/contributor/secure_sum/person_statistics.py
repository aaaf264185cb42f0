"""A person's bounded statistics, as a contributor computes them from their own documents: the ranking release's
presence vector, the co-occurrence release's triangle, and their randomized rounding onto the plan's integers."""
from __future__ import annotations

import numpy as np

from ...errors import DPTopicError
from ...kernels.user_level import user_cooccurrence_bow, user_document_frequency_bow
from ...protocol.secure_sum.ring import matrix_to_triangle


def squared_norm(v: np.ndarray) -> float:
    """``sum(v ** 2)`` by numpy's own pairwise sum, not BLAS: ``np.dot`` hands a vector of more than about 10,000
    entries to OpenBLAS's thread pool, and from a process whose threads play many contributors at once those calls
    spin for their pool (2.5 ms of CPU each at 23,000 entries from 8 threads, against 10 us: a 3,000-person round's
    step-1 statistic; docs/research/secure_sum_cpu.md)."""
    return float(np.square(v).sum())


def quantize(x: np.ndarray, scale: float, l2_bound: float, rng, tries: int = 1000) -> np.ndarray:
    """Conditional randomized rounding of ``scale * x`` (``x`` of L2 norm at most 1): each entry rounded up with
    probability its fractional part (unbiased), re-drawn until the rounded vector's L2 norm is at most ``l2_bound``
    (Kairouz, Liu & Steinke 2021, Sec. 4.1). ``rng``: anything with ``random(n)`` (a numpy Generator in a
    simulation, :class:`~dptopic.mechanisms.skellam.SecureUniform` for a real contributor). The norms are
    :func:`squared_norm`'s (no BLAS call)."""
    x = np.asarray(x, dtype=np.float64)
    norm = float(np.sqrt(squared_norm(x)))
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
        if squared_norm(out) <= l2_bound * l2_bound:
            return out.astype(np.int64)
    raise DPTopicError("randomized rounding did not meet its norm bound (a statistic above norm 1?).")



def person_presence(bow, vocab_size: int) -> np.ndarray:
    """One person's bounded ranking statistic (the user unit's first release with the document entry): the sum of
    their documents' normalised presence vectors, scaled to L2 norm at most 1 (V + 1 entries)."""
    n_docs = len(bow[0]) - 1
    return user_document_frequency_bow(bow, np.array([0, n_docs]), vocab_size, 1, with_document=True)


def person_cooccurrence(bow, kept, vocab_size: int) -> np.ndarray:
    """One person's bounded co-occurrence statistic over the ``kept`` words (the user unit's second release) as its
    upper triangle, row by row, the off-diagonal entries times sqrt(2): the vector's L2 norm is the matrix's Frobenius
    norm (at most 1), and noise of std ``s`` on an off-diagonal entry is ``s / sqrt(2)`` on the matrix's cell, as the
    central trainer's symmetrised release has."""
    n_docs = len(bow[0]) - 1
    m = user_cooccurrence_bow(bow, np.array([0, n_docs]), np.asarray(kept), vocab_size, 1)
    return matrix_to_triangle(m)
