"""The dataset ledger's candidate pairs of sketched documents, compiled where NumPy would gather: how many positions
of two compact sketches agree, for many pairs of rows of one table, without copying either row
(:func:`dptopic.dataset_ledger.people.document_links` verifies millions of candidate pairs; gathering both sketches
of a batch of pairs took two copies of the batch's rows and a boolean table of their comparison).

Also :func:`sort_pairs`, pairs sorted by their first value then their second (``np.lexsort``'s order) by one
unstable sort of the first and a sort of each run of equal firsts (0.05 s against lexsort's 0.25 s for 10^6 random
int64 pairs here: the ledger sorts 33 parts of 10^6 keys at 10^6 documents), and :func:`sorted_unique`, the sorted
distinct values of an integer array by one sort: NumPy 2.3 and later find an
integer array's distinct values with a hash table (``np.unique`` without ``return_index``, ``return_inverse`` or
``return_counts``), which took 2.5 µs and 57 bytes a value on 10^7 int64 here, against 0.015 µs and the array's size
for a sort (numpy/numpy#28375 tracks the hash table's cost; docs/research/pipeline.md has the figures).
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._threads import ordered_ahead, run_in_slices


@njit(cache=True, nogil=True)
def _agreements(sig, a, b, out):
    K = sig.shape[1]
    for p in range(a.shape[0]):
        i, j = a[p], b[p]
        n = 0
        for k in range(K):
            if sig[i, k] == sig[j, k]:
                n += 1
        out[p] = n


def agreements(signatures: np.ndarray, a: np.ndarray, b: np.ndarray, threads: int | None = None) -> np.ndarray:
    """For each ``p``, how many positions of rows ``a[p]`` and ``b[p]`` of ``signatures`` (uint8[n, K] or uint32) are
    equal: int32[len(a)], ``(signatures[a] == signatures[b]).sum(axis=1)`` without gathering the rows, on
    ``threads`` threads (None: every usable core; the result does not depend on it)."""
    sig = np.ascontiguousarray(signatures)
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    if len(a) != len(b):
        raise ValueError(f"agreements needs as many first rows as second rows, not {len(a)} and {len(b)}")
    out = np.empty(len(a), np.int32)
    if len(a):
        if a.min() < 0 or b.min() < 0 or a.max() >= len(sig) or b.max() >= len(sig):
            raise IndexError(f"agreements: a row index outside 0..{len(sig) - 1}")
        # each pair's count depends on its two rows alone: the pairs are cut into a slice a core
        run_in_slices(lambda lo, hi: _agreements(sig, a[lo:hi], b[lo:hi], out[lo:hi]), len(a), threads)
    return out


def sorted_unique(values: np.ndarray, *, overwrite: bool = False) -> np.ndarray:
    """The distinct values of the 1-D integer array ``values``, ascending: ``np.unique(values)``, by one sort (not
    NumPy's hash table: module note). ``overwrite``: ``values`` may be sorted in place (no copy)."""
    v = np.asarray(values).ravel()
    if overwrite and v.flags.writeable:
        v.sort()
    else:
        v = np.sort(v)
    if len(v) < 2:
        return v
    keep = np.empty(len(v), bool)
    keep[0] = True
    np.not_equal(v[1:], v[:-1], out=keep[1:])
    return v[keep]


@njit(cache=True, nogil=True)
def _sort_runs(first, second):
    n = first.shape[0]
    i = 0
    while i < n:
        j = i + 1
        while j < n and first[j] == first[i]:
            j += 1
        if j - i > 1:
            second[i:j] = np.sort(second[i:j])
        i = j


def sort_pairs(first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, second)`` (1-D integer arrays of one length) reordered by first value, then second: the arrays
    ``np.lexsort((second, first))`` would order, as new arrays, by one unstable ``argsort`` of ``first`` and a
    compiled sort of the ``second`` values of each run of equal firsts (module note)."""
    first, second = np.asarray(first), np.asarray(second)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"sort_pairs needs two 1-D arrays of one length, not shapes {first.shape} and {second.shape}")
    order = np.argsort(first)
    a = first[order]
    b = np.ascontiguousarray(second[order])
    del order
    _sort_runs(a, b)
    return a, b


def sorted_columns(table, rows: np.ndarray, ahead: int | None = None):
    """For each column ``c`` of the 2-D ``table``, in order: ``sort_pairs(table[rows, c], rows)``, the column's
    values at ``rows`` sorted with their rows (ties by row). The next columns are sorted on other cores while the
    caller works on this one (``ahead`` of them at most: :func:`~dptopic.kernels._threads.ordered_ahead`); the
    results do not depend on it. ``table`` may be any object with a 2-D ``shape`` and a ``column(c)`` reading one
    column (a table on disk, read a column at a time)."""
    columns = range(table.shape[1] if table.ndim == 2 else 0)
    if hasattr(table, "column"):
        return ordered_ahead(lambda c: sort_pairs(table.column(c)[rows], rows), columns, ahead)
    return ordered_ahead(lambda c: sort_pairs(table[rows, c], rows), columns, ahead)
