"""Checks that a bag of words ``(ptr, ids, counts)`` is what the document-level kernels assume, and puts it in that
form when it is not.

The kernels of :mod:`~dptopic.kernels.docdp`, :mod:`~dptopic.kernels.pair_moments` and :mod:`~dptopic.kernels.vb`
read a document's entries ``ptr[d] .. ptr[d+1]-1`` as its distinct words with positive counts
(:func:`~dptopic.kernels.docdp.tokens_to_bow`'s output). A scipy CSR matrix a user builds may instead hold one word
in several entries (duplicates, summed by scipy only on demand) or explicit zeros; the kernels would then compute a
document's norm over the entries instead of over its words (``2^2 + 2^2`` instead of ``4^2``), and its contribution
would no longer have the norm bound its privacy guarantee rests on. A word id outside the vocabulary would be read
and written out of bounds (the compiled kernels do no bounds checks).

:func:`canonical_bow` checks in one compiled pass (``O(entries)``, no copy) and returns the arrays as they are when
they are canonical; otherwise it returns a canonical copy (duplicates summed, zero counts dropped, each document's
words in order of first occurrence, as ``tokens_to_bow`` orders them), or refuses in one line what no copy can mend.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DPTopicError
from ._jit import njit

OK, MEND, BAD_PTR, BAD_ID, BAD_COUNT = 0, 1, 2, 3, 4


def segment_sums(values: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """Sum of ``values[ptr[i]:ptr[i+1]]`` for every segment ``i`` (empty segments give 0)."""
    cs = np.zeros(len(values) + 1, dtype=np.int64)
    np.cumsum(values, out=cs[1:])
    return cs[ptr[1:]] - cs[ptr[:-1]]


@njit(cache=True, nogil=True)
def bow_status(ptr, ids, cts, V):
    """``(status, where)``: ``OK`` (0) when every document's entries are distinct words of ``0..V-1`` with finite
    positive counts; ``MEND`` (1) when some word repeats in a document or a count is 0 (fixed by a canonical copy);
    ``BAD_PTR`` (2) when ``ptr`` is not a non-decreasing offset array into ``ids``/``cts``; ``BAD_ID`` (3) for a word id
    outside ``0..V-1``; ``BAD_COUNT`` (4) for a negative or non-finite count. ``where``: the entry (or ptr index) at
    fault, -1 when none."""
    D = ptr.shape[0] - 1
    if D < 0:
        return BAD_PTR, 0
    n = min(ids.shape[0], cts.shape[0])
    if ptr[0] < 0 or ptr[D] > n:
        return BAD_PTR, 0 if ptr[0] < 0 else D
    status = OK
    seen = np.full(V, -1, np.int64)
    for d in range(D):
        a, b = ptr[d], ptr[d + 1]
        if b < a:
            return BAD_PTR, d + 1
        for i in range(a, b):
            w = ids[i]
            if w < 0 or w >= V:
                return BAD_ID, i
            c = np.float64(cts[i])
            if not (c >= 0.0) or math.isinf(c):      # also NaN
                return BAD_COUNT, i
            if c == 0.0 or seen[w] == d:
                status = MEND
            seen[w] = d
    return status, -1


@njit(cache=True, nogil=True)
def _canonicalise(ptr, ids, cts, V, out_ptr, out_ids, out_cts):
    """Fill the canonical copy (``out_*`` sized for the input's entries); returns its number of entries."""
    acc = np.zeros(V, np.float64)
    seen = np.full(V, -1, np.int64)
    j = 0
    out_ptr[0] = 0
    for d in range(ptr.shape[0] - 1):
        first = j
        for i in range(ptr[d], ptr[d + 1]):
            w = ids[i]
            if seen[w] != d:
                seen[w] = d
                acc[w] = 0.0
                out_ids[j] = w
                j += 1
            acc[w] += cts[i]
        k = first
        for t in range(first, j):            # keep the words whose summed count is positive, in first-seen order
            w = out_ids[t]
            if acc[w] > 0.0:
                out_ids[k] = w
                out_cts[k] = acc[w]
                k += 1
        j = k
        out_ptr[d + 1] = j
    return j


def canonical_bow(ptr, ids, cts, vocab_size=None, what: str = "bag of words"):
    """``(ptr, ids, cts)`` with one entry per distinct word of each document and positive counts: the arrays given
    (made contiguous) when they already are, else a canonical copy. ``vocab_size``: word ids must lie below it
    (``None``: only non-negative). Raises :class:`~dptopic.errors.DPTopicError` in one line for offsets that are not
    a CSR row pointer, a word id outside the vocabulary, or a negative or non-finite count."""
    ptr = np.ascontiguousarray(ptr, dtype=np.int64)
    ids = np.ascontiguousarray(ids)
    cts = np.ascontiguousarray(cts)
    if ids.dtype.kind not in "iu":
        ids = ids.astype(np.int64)
    if cts.dtype.kind not in "iuf":
        cts = cts.astype(np.float64)
    if ids.ndim != 1 or cts.ndim != 1 or ptr.ndim != 1:
        raise DPTopicError(f"invalid {what}: ptr, ids and counts must be 1-D arrays (a CSR matrix's indptr, indices"
                           " and data).")
    if len(ptr) == 0:                       # no documents at all (not even an offset): nothing to check
        return ptr, ids, cts
    if vocab_size is None:
        stop = int(ptr[-1]) if len(ptr) and 0 <= ptr[-1] <= min(len(ids), len(cts)) else min(len(ids), len(cts))
        vocab_size = int(ids[:stop].max()) + 1 if stop > 0 else 0
        vocab_size = max(vocab_size, 1)
    V = int(vocab_size)
    status, where = bow_status(ptr, ids, cts, V)
    if status == OK:
        return ptr, ids, cts
    if status != MEND:
        if status == BAD_PTR:
            msg = (f"invalid {what}: its document offsets (CSR indptr) must start at 0 or more, never decrease and end"
                   f" within the {min(len(ids), len(cts))} entries (offset {where} does not).")
        elif status == BAD_ID:
            msg = (f"invalid {what}: entry {where} holds word id {int(ids[where])}, outside the vocabulary of {V}"
                   " words.")
        else:
            msg = (f"invalid {what}: entry {where} holds the count {cts[where]!r}; counts must be finite and"
                   " non-negative.")
        raise DPTopicError(msg)
    n = int(ptr[-1] - ptr[0])
    out_ptr = np.empty(len(ptr), dtype=np.int64)
    out_ids = np.empty(n, dtype=ids.dtype)
    out_cts = np.empty(n, dtype=np.float64)
    m = _canonicalise(ptr, ids, cts, V, out_ptr, out_ids, out_cts)
    return out_ptr, out_ids[:m].copy(), out_cts[:m].copy()
