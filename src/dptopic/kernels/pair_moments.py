"""Compiled per-document statistics of the document-level co-occurrence trainer (pure functions over a block of
documents in bag-of-words form ``(ptr, ids, counts)``: each document's distinct words and their counts, as
:func:`dptopic.kernels.docdp.tokens_to_bow` makes them; the NumPy reference is
:mod:`dptopic.moments.document_statistics`).

Both run on a block of documents without the GIL, so threads can share a corpus (:func:`blocks`).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._bow import canonical_bow
from ._jit import njit


@njit(cache=True, nogil=True)
def cooccurrence_block(ptr, ids, cts, d0, d1, slot, out):
    """Add ``(c c^T - diag c) / ||c c^T - diag c||_F`` of documents ``d0..d1-1`` to ``out`` (``n x n``), ``c`` the
    document's counts of the tracked words (``slot[w]``: tracked index of word ``w``, -1 if not tracked)."""
    n = out.shape[0]
    counts = np.zeros(n, np.float64)
    seen = np.empty(n, np.int64)
    for d in range(d0, d1):
        m = 0
        for i in range(ptr[d], ptr[d + 1]):
            j = slot[ids[i]]
            if j >= 0:
                if counts[j] == 0.0:
                    seen[m] = j
                    m += 1
                counts[j] += cts[i]
        s2 = 0.0
        s4 = 0.0
        dd = 0.0
        for t in range(m):
            c = counts[seen[t]]
            s2 += c * c
            s4 += c * c * c * c
            dd += (c * c - c) * (c * c - c)
        f2 = s2 * s2 - s4 + dd
        if f2 > 0.0:
            w = 1.0 / math.sqrt(f2)
            for a in range(m):
                ia = seen[a]
                ca = counts[ia]
                out[ia, ia] += (ca * ca - ca) * w
                for b in range(a + 1, m):
                    ib = seen[b]
                    v = ca * counts[ib] * w
                    out[ia, ib] += v
                    out[ib, ia] += v
        for t in range(m):
            counts[seen[t]] = 0.0


@njit(cache=True, nogil=True)
def presence_block(ptr, ids, cts, d0, d1, document, with_counts, out):
    """Add each document's 0/1 word-presence vector divided by its L2 norm to ``out[:V]``. With ``document`` = 1 the
    vector has one more entry, always 1 (the document itself), added to ``out[V]`` and counted in the norm. With
    ``with_counts`` = 1 the document also adds its word counts divided by their L2 norm to ``out[V + document:]``
    (``out`` then has ``2 V + document`` entries), and both parts are scaled by 1/sqrt(2), so that together they have
    L2 norm at most 1."""
    V = (out.shape[0] - (1 if document > 0 else 0)) // (2 if with_counts > 0 else 1)
    base = V + (1 if document > 0 else 0)
    scale = 1.0 / math.sqrt(2.0) if with_counts > 0 else 1.0
    counts = np.zeros(V, np.float64)
    seen = np.empty(V, np.int64)
    for d in range(d0, d1):
        m = 0
        for i in range(ptr[d], ptr[d + 1]):
            w = ids[i]
            if cts[i] > 0:
                if counts[w] == 0.0:
                    seen[m] = w
                    m += 1
                counts[w] += cts[i]
        if m > 0 or document > 0:
            v = scale / math.sqrt(m + document)
            u = 0.0
            if with_counts > 0:
                s2 = 0.0
                for t in range(m):
                    s2 += counts[seen[t]] * counts[seen[t]]
                u = scale / math.sqrt(s2) if s2 > 0.0 else 0.0
            for t in range(m):
                w = seen[t]
                out[w] += v
                if with_counts > 0:
                    out[base + w] += counts[w] * u
                counts[w] = 0.0
            if document > 0:
                out[V] += v


def blocks(ptr, n_jobs: int) -> list[tuple[int, int]]:
    """``n_jobs`` contiguous document blocks of about equal numbers of (document, word) entries."""
    D = len(ptr) - 1
    if D <= 0:
        return []
    cuts = np.searchsorted(ptr, np.linspace(0, ptr[-1], n_jobs + 1)[1:-1])
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 0, D), [D]]))
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def _run(kernel, bow, shape, n_jobs, extra=(), vocab_size=None):
    # the kernels read a document's entries as its distinct words: a CSR with a word repeated in a document or an
    # explicit zero is read as its canonical copy (a zero entry followed by the same word's count would otherwise be
    # listed twice by cooccurrence_block, and the document's contribution exceed norm 1)
    ptr, ids, cts = canonical_bow(*bow, vocab_size)
    parts = blocks(ptr, max(1, int(n_jobs)))
    outs = [np.zeros(shape) for _ in parts]
    if len(parts) <= 1:
        for (a, b), o in zip(parts, outs):
            kernel(ptr, ids, cts, a, b, *extra, o)
    else:
        with ThreadPoolExecutor(len(parts)) as pool:
            list(pool.map(lambda ab_o: kernel(ptr, ids, cts, ab_o[0][0], ab_o[0][1], *extra, ab_o[1]),
                          zip(parts, outs)))
    return sum(outs) if outs else np.zeros(shape)


def column_slots(columns, vocab_size: int, groups=None) -> tuple[np.ndarray, int]:
    """``(slot, n)``: each word's column of the pair matrix (-1 for a word outside ``columns``) and the number of
    columns: one per word of ``columns``, or with ``groups`` (one per word of ``columns``, 0 .. n-1) the word's group,
    so that a document's count of a group is the sum of its words' counts."""
    columns = np.asarray(columns, dtype=np.int64)
    slot = np.full(int(vocab_size), -1, dtype=np.int64)
    if groups is None:
        slot[columns] = np.arange(len(columns))
        return slot, len(columns)
    groups = np.asarray(groups, dtype=np.int64)
    if groups.shape != columns.shape or (len(groups) and groups.min() < 0):
        raise ValueError("groups must give one group (>= 0) per column word")
    slot[columns] = groups
    return slot, int(groups.max()) + 1 if len(groups) else 0


def normalised_cooccurrence_bow(bow, columns, vocab_size: int, n_jobs: int = 1, groups=None) -> np.ndarray:
    """The sum over the documents of ``bow`` of each one's Frobenius-normalised pair matrix over the words
    ``columns`` (with ``groups``, over their groups: :func:`column_slots`; still norm 1 a document)."""
    slot, n = column_slots(columns, vocab_size, groups)
    return _run(cooccurrence_block, bow, (n, n), n_jobs, (slot,), int(vocab_size))


def document_frequency_bow(bow, vocab_size: int, n_jobs: int = 1, with_document: bool = False,
                           with_counts: bool = False) -> np.ndarray:
    """The sum over the documents of ``bow`` of each one's presence vector divided by its L2 norm; with
    ``with_document`` each vector has a last entry 1 for the document itself (length ``vocab_size + 1``), so the ratio
    of a word's entry to the last one estimates the share of documents that hold it. With ``with_counts`` each
    document also adds its word counts divided by their L2 norm after those entries (length ``2 vocab_size``, + 1
    with the document entry), and both parts are scaled by 1/sqrt(2), so one document still moves the sum by at
    most 1 in L2 norm."""
    extra = 1 if with_document else 0
    size = (2 if with_counts else 1) * int(vocab_size) + extra
    return _run(presence_block, bow, (size,), n_jobs, (extra, 1 if with_counts else 0), int(vocab_size))


@njit(cache=True, nogil=True)
def rectangular_block(ptr, ids, cts, d0, d1, row_slot, col_slot, row_col, out):
    """Add ``(r c^T - P) / ||r c^T - P||_F`` of documents ``d0..d1-1`` to ``out`` (``n_rows x n_columns``): ``r`` the
    document's counts of the row words (``row_slot[w]``: row of word ``w``, -1 if none), ``c`` its counts of the
    columns (``col_slot[w]``: column of word ``w``, a word or a group of words, -1 if none), and ``P`` the pairs of a
    token with itself (``P[a, row_col[a]] = r_a`` where row ``a``'s word is in a column), so every cell counts pairs
    of distinct tokens and is non-negative."""
    nr = out.shape[0]
    nc = out.shape[1]
    r = np.zeros(nr, np.float64)
    c = np.zeros(nc, np.float64)
    rseen = np.empty(nr, np.int64)
    cseen = np.empty(nc, np.int64)
    for d in range(d0, d1):
        mr = 0
        mc = 0
        for i in range(ptr[d], ptr[d + 1]):
            w = ids[i]
            j = row_slot[w]
            if j >= 0:
                if r[j] == 0.0:
                    rseen[mr] = j
                    mr += 1
                r[j] += cts[i]
            k = col_slot[w]
            if k >= 0:
                if c[k] == 0.0:
                    cseen[mc] = k
                    mc += 1
                c[k] += cts[i]
        r2 = 0.0
        for t in range(mr):
            r2 += r[rseen[t]] * r[rseen[t]]
        c2 = 0.0
        for t in range(mc):
            c2 += c[cseen[t]] * c[cseen[t]]
        f2 = r2 * c2
        for t in range(mr):
            a = rseen[t]
            k = row_col[a]
            if k >= 0:
                # (r_a c_k - r_a)^2 in place of (r_a c_k)^2
                f2 += r[a] * r[a] * (1.0 - 2.0 * c[k])
        if f2 > 1e-12:
            wgt = 1.0 / math.sqrt(f2)
            for t in range(mr):
                a = rseen[t]
                ra = r[a] * wgt
                for u in range(mc):
                    b = cseen[u]
                    out[a, b] += ra * c[b]
                k = row_col[a]
                if k >= 0:
                    out[a, k] -= ra
        for t in range(mr):
            r[rseen[t]] = 0.0
        for t in range(mc):
            c[cseen[t]] = 0.0


def rectangular_slots(rows, columns, vocab_size: int, groups=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row_slot, col_slot, row_col)`` of a rectangular release: each word's row (-1 outside ``rows``), each word's
    column (:func:`column_slots`), and each row's column (-1 where its word is in no column)."""
    rows = np.asarray(rows, dtype=np.int64)
    row_slot = np.full(int(vocab_size), -1, dtype=np.int64)
    row_slot[rows] = np.arange(len(rows))
    col_slot, _ = column_slots(columns, vocab_size, groups)
    return row_slot, col_slot, col_slot[rows].copy()


def normalised_rectangular_bow(bow, rows, columns, vocab_size: int, n_jobs: int = 1, groups=None) -> np.ndarray:
    """The sum over the documents of ``bow`` of each one's Frobenius-normalised pair matrix between the words
    ``rows`` and the columns (the words ``columns``, or with ``groups`` their groups: :func:`column_slots`), pairs of
    a token with itself left out (:func:`rectangular_block`): each document moves it by at most 1 in Frobenius norm."""
    row_slot, col_slot, row_col = rectangular_slots(rows, columns, vocab_size, groups)
    n = int(col_slot.max()) + 1 if len(col_slot) and col_slot.max() >= 0 else 0
    return _run(rectangular_block, bow, (len(np.asarray(rows)), n), n_jobs, (row_slot, col_slot, row_col),
                int(vocab_size))
