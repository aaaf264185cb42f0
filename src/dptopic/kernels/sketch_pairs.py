"""The dataset ledger's candidate pairs of sketched documents, compiled where NumPy would gather: how many positions
of two compact sketches agree, for many pairs of rows of one table, without copying either row
(:func:`dptopic.dataset_ledger.people.document_links` verifies millions of candidate pairs; gathering both sketches
of a batch of pairs took two copies of the batch's rows and a boolean table of their comparison), and an upper bound
of that count from the lowest bit of each position (:func:`low_bits`, :func:`bounded_agreements`: an eighth of
the signatures' memory, so that the signatures stay on disk while the candidates are bounded).

Also :func:`sort_pairs_in_place`, pairs sorted by their first value then their second (``np.lexsort``'s order) in
place by a compiled introsort: no index array and no sorted copies beside the two arrays (16 bytes a pair against
40 for NumPy's ``argsort`` of the first and both gathered; 3.35 s against 6.89 s for 3 x 10^7 random int64 pairs
here, the ledger's exact keys at 10^7 documents: ``benchmarks/bench_pair_sort.py``; many pairs are split by the
first partitions and the ranges sorted on every core: 0.17 s against 0.30 on two for 3 x 10^6), with
:func:`distinct_pairs_in_place` after it; and :func:`sorted_unique`, the sorted distinct values of an integer array
by one sort: NumPy 2.3 and later find an integer array's distinct values with a hash table (``np.unique``
without ``return_index``, ``return_inverse`` or ``return_counts``), which took 2.5 µs and 57 bytes a value on 10^7
int64 here, against 0.015 µs and the array's size for a sort (numpy/numpy#28375 tracks the hash table's cost;
docs/research/pipeline.md has the figures).
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._threads import ordered_ahead, run_in_slices, usable_cores


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
    return _count_pairs(_agreements, np.ascontiguousarray(signatures), a, b, threads, "agreements")


def _count_pairs(kernel, table: np.ndarray, a, b, threads: int | None, what: str) -> np.ndarray:
    """``kernel(table, a, b, out)`` over the pairs of rows ``(a[p], b[p])`` of ``table`` (checked: as many of each,
    every row in the table), int32[len(a)], the pairs cut into a slice a thread (each pair's count depends on its two
    rows alone)."""
    a = np.ascontiguousarray(a, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    if len(a) != len(b):
        raise ValueError(f"{what} needs as many first rows as second rows, not {len(a)} and {len(b)}")
    out = np.empty(len(a), np.int32)
    if len(a):
        if a.min() < 0 or b.min() < 0 or a.max() >= len(table) or b.max() >= len(table):
            raise IndexError(f"{what}: a row index outside 0..{len(table) - 1}")
        run_in_slices(lambda lo, hi: kernel(table, a[lo:hi], b[lo:hi], out[lo:hi]), len(a), threads)
    return out


@njit(cache=True, nogil=True)
def _pack_low_bits(sig, bits, out):
    n, K = sig.shape
    per = 64 // bits
    mask = (1 << bits) - 1
    for i in range(n):
        for w in range(out.shape[1]):
            out[i, w] = 0
        for k in range(K):
            out[i, k // per] |= np.uint64(sig[i, k] & mask) << np.uint64(bits * (k % per))


BOUND_BITS = 1
"""The low bits of each sketch position :func:`low_bits` keeps by default: one (16 bytes a document for 128
positions). Two bits let through fewer candidates to verify on the signatures but take twice the memory through the
ledger's comparison of a set's sketches (``benchmarks/bench_sketch_bound.py``: on 20 Newsgroups one bit let 80% of the
band candidates through, two 57%, 43% reaching the threshold; on 2 x 10^5 planted documents one bit 0.24%, two none;
at 10^7 documents the two bits held 305 MiB at the run's peak)."""


def low_bits(signatures: np.ndarray, out: np.ndarray | None = None, bits: int = BOUND_BITS) -> np.ndarray:
    """The ``bits`` lowest bits (1 or 2) of each position of ``signatures`` (an integer table ``[n, K]``),
    ``64 // bits`` positions to a 64-bit word: uint64[n, ceil(K bits / 64)], position ``k`` at bits
    ``bits (k mod (64 / bits))`` of word ``k // (64 / bits)`` (the rest zero). Two rows that agree at a position agree
    in its low bits, so :func:`bounded_agreements` of the packed rows is never below :func:`agreements` of the rows, at
    ``bits / 8`` of a byte signature's memory. ``out``: where to put them (its rows, ``[n, words]``)."""
    sig = np.ascontiguousarray(signatures)
    if sig.ndim != 2:
        raise ValueError(f"low_bits needs a 2-D table of signatures, not shape {sig.shape}")
    if bits not in (1, 2):
        raise ValueError(f"low_bits keeps 1 or 2 bits a position, not {bits!r}")
    words = -(-sig.shape[1] * bits // 64)
    if out is None:
        out = np.empty((len(sig), words), np.uint64)
    elif out.shape != (len(sig), words) or out.dtype != np.uint64:
        raise ValueError(f"low_bits needs out of shape {(len(sig), words)} and uint64, not {out.shape} {out.dtype}")
    if sig.size:
        _pack_low_bits(sig, bits, out)
    elif out.size:
        out[:] = 0
    return out


@njit(inline="always")
def _bits_set(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def _bounded_agreements(packed, K, bits, a, b, out):
    W = packed.shape[1]
    for p in range(a.shape[0]):
        i, j = a[p], b[p]
        differ = 0
        for w in range(W):
            x = packed[i, w] ^ packed[j, w]
            if bits == 2:       # a position differs where either of its two bits does
                x = (x | (x >> np.uint64(1))) & np.uint64(0x5555555555555555)
            differ += _bits_set(x)
        out[p] = K - differ


def bounded_agreements(packed: np.ndarray, K: int, a: np.ndarray, b: np.ndarray,
                       threads: int | None = None, bits: int = BOUND_BITS) -> np.ndarray:
    """For each ``p``, how many of the ``K`` positions of rows ``a[p]`` and ``b[p]`` of ``packed`` (:func:`low_bits`
    of a signature table, ``bits`` a position) agree in their low bits: int32[len(a)], an upper bound of
    :func:`agreements` of the signatures themselves (equal for every pair whose positions differ in those bits
    wherever they differ), on ``threads`` threads (None: every usable core)."""
    K, bits = int(K), int(bits)
    packed = np.ascontiguousarray(packed, dtype=np.uint64)
    if bits not in (1, 2) or packed.ndim != 2 or packed.shape[1] != -(-K * bits // 64):
        raise ValueError(f"bounded_agreements needs low_bits of {K} positions at {bits} bit(s) each"
                         f" ({-(-K * bits // 64)} words a row), not an array of shape {packed.shape}")
    return _count_pairs(lambda t, x, y, out: _bounded_agreements(t, K, bits, x, y, out), packed, a, b, threads,
                        "bounded_agreements")


@njit(cache=True, nogil=True)
def _ranks_in_runs(sorted_values, at, out):
    start = 0
    for i in range(sorted_values.shape[0]):
        if i and sorted_values[i] != sorted_values[i - 1]:
            start = i
        out[at[i]] = i - start


def ranks_among_equal(values: np.ndarray) -> np.ndarray:
    """For each of ``values`` (a 1-D integer array), how many equal values come before it (uint64): 0 for a value's
    first occurrence, 1 for its second, and so on. One copy of the values sorted in place with their positions
    (:func:`sort_pairs_in_place`), then each run of equal values counted from its start: 20 bytes a value besides the
    answer (``np.unique`` with its inverse and a stable ``argsort`` of it, and their gathers, took about 90)."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"ranks_among_equal needs a 1-D array, not shape {values.shape}")
    v = np.array(values)
    at = np.arange(len(v), dtype=np.int32 if len(v) < 2**31 else np.int64)
    sort_pairs_in_place(v, at)          # by value, then position: a stable sort's order
    out = np.empty(len(v), np.uint64)
    _ranks_in_runs(v, at, out)
    return out


def among_sorted(values: np.ndarray, sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each of ``values`` is one of ``sorted_keys`` (1-D, sorted ascending): ``np.isin`` by binary search,
    with no join of the two and no index (``np.isin`` sorts both sides joined)."""
    values = np.asarray(values)
    if not len(sorted_keys):
        return np.zeros(values.shape, bool)
    pos = np.searchsorted(sorted_keys, values)
    np.minimum(pos, len(sorted_keys) - 1, out=pos)
    return sorted_keys[pos] == values


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


@njit(inline="always")
def _before(first, second, i, j):
    return first[i] < first[j] or (first[i] == first[j] and second[i] < second[j])


@njit(inline="always")
def _swap(first, second, i, j):
    t = first[i]
    first[i] = first[j]
    first[j] = t
    u = second[i]
    second[i] = second[j]
    second[j] = u


@njit(cache=True, nogil=True)
def _heap_sort(first, second, lo, hi):
    for start in range((hi - lo) // 2 - 1, -1, -1):
        _sift_down(first, second, lo, start, hi - lo)
    for end in range(hi - lo - 1, 0, -1):
        _swap(first, second, lo, lo + end)
        _sift_down(first, second, lo, 0, end)


@njit(cache=True, nogil=True)
def _sift_down(first, second, lo, root, size):
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and _before(first, second, lo + child, lo + child + 1):
            child += 1
        if not _before(first, second, lo + root, lo + child):
            return
        _swap(first, second, lo + root, lo + child)
        root = child


@njit(cache=True, nogil=True)
def _partition(first, second, lo, hi):
    """Split the pairs of ``[lo, hi)`` (more than 16) around the median of three (the first, middle and last):
    returns ``j``, the pivot's final place, with no pair after it in ``[lo, j)`` and none before it in ``(j, hi)``.
    Equal pairs stop both scans, so runs of one value split evenly."""
    mid = lo + (hi - lo) // 2
    if _before(first, second, mid, lo):
        _swap(first, second, mid, lo)
    if _before(first, second, hi - 1, lo):
        _swap(first, second, hi - 1, lo)
    if _before(first, second, hi - 1, mid):
        _swap(first, second, hi - 1, mid)
    _swap(first, second, lo, mid)           # the median is the pivot, kept at lo while the rest is split
    pf, ps = first[lo], second[lo]
    i, j = lo + 1, hi - 1
    while True:
        while i <= j and (first[i] < pf or (first[i] == pf and second[i] < ps)):
            i += 1
        while i <= j and (pf < first[j] or (pf == first[j] and ps < second[j])):
            j -= 1
        if i >= j:
            break
        _swap(first, second, i, j)
        i += 1
        j -= 1
    _swap(first, second, lo, j)
    return j


@njit(cache=True, nogil=True)
def _sort_range(first, second, lo, hi):
    """Introsort of the pairs ``(first[i], second[i])`` of ``[lo, hi)``: quicksort (:func:`_partition`; the smaller
    side first, the larger left on a stack), heap sort below a depth of twice the bits of its length, insertion sort
    under 17."""
    if hi - lo < 2:
        return
    stack = np.empty((64, 3), np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2] = lo, hi, 2 * (int(np.log2(hi - lo)) + 1)
    top = 1
    while top > 0:
        top -= 1
        lo, hi, depth = stack[top, 0], stack[top, 1], stack[top, 2]
        while hi - lo > 16:
            if depth == 0:
                _heap_sort(first, second, lo, hi)
                hi = lo
                break
            depth -= 1
            j = _partition(first, second, lo, hi)
            if j - lo < hi - j - 1:             # the larger side waits on the stack (at most log2 n of them)
                stack[top, 0], stack[top, 1], stack[top, 2] = j + 1, hi, depth
                hi = j
            else:
                stack[top, 0], stack[top, 1], stack[top, 2] = lo, j, depth
                lo = j + 1
            top += 1
        for i in range(lo + 1, hi):
            f, s = first[i], second[i]
            k = i - 1
            while k >= lo and (f < first[k] or (f == first[k] and s < second[k])):
                first[k + 1] = first[k]
                second[k + 1] = second[k]
                k -= 1
            first[k + 1] = f
            second[k + 1] = s


PARALLEL_SORT_FROM = 1 << 17
"""Pairs from which :func:`sort_pairs_in_place` sorts on several threads (below it, one call is quicker)."""


def _sort_on_threads(first, second, threads: int) -> None:
    """Quicksort's first levels split the pairs into about four ranges a thread (each level's ranges partitioned at
    once, on the threads), then the ranges, largest first, are sorted each whole on whichever thread is free. Each
    range holds the pairs of its place in the sorted order, so the result is the one-thread sort's."""
    from concurrent.futures import ThreadPoolExecutor  # why: only a sort of many pairs on several cores asks

    ranges = [(0, first.shape[0])]
    with ThreadPoolExecutor(threads, thread_name_prefix="dptopic-sort") as pool:
        while len(ranges) < 4 * threads:
            wide = [r for r in ranges if r[1] - r[0] >= PARALLEL_SORT_FROM // 4]
            if not wide:
                break
            cuts = pool.map(lambda r: _partition(first, second, r[0], r[1]), wide)
            ranges = [r for r in ranges if r[1] - r[0] < PARALLEL_SORT_FROM // 4]
            for (lo, hi), j in zip(wide, cuts):
                ranges += [(lo, int(j)), (int(j) + 1, hi)]
        ranges.sort(key=lambda r: r[0] - r[1])
        for _ in pool.map(lambda r: _sort_range(first, second, r[0], r[1]), ranges):
            pass


def _check_pairs(first: np.ndarray, second: np.ndarray, what: str) -> None:
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"{what} needs two 1-D arrays of one length, not shapes {first.shape} and {second.shape}")


def sort_pairs_in_place(first: np.ndarray, second: np.ndarray, threads: int | None = None) -> None:
    """Sort the pairs ``(first[i], second[i])`` (1-D integer arrays of one length, each contiguous and writable) by
    first value, then second, in place: the order ``np.lexsort((second, first))`` gives, with no memory besides the
    two arrays (module note). From :data:`PARALLEL_SORT_FROM` pairs, on ``threads`` threads (the usable cores when
    None), with the same result."""
    _check_pairs(first, second, "sort_pairs_in_place")
    if not (first.flags.c_contiguous and first.flags.writeable and second.flags.c_contiguous
            and second.flags.writeable):
        raise ValueError("sort_pairs_in_place needs two contiguous, writable arrays")
    threads = usable_cores() if threads is None else max(1, int(threads))
    if threads > 1 and len(first) >= PARALLEL_SORT_FROM:
        _sort_on_threads(first, second, threads)
    else:
        _sort_range(first, second, 0, len(first))


@njit(cache=True, nogil=True)
def _distinct_pairs_in_place(first, second):
    n = first.shape[0]
    if n == 0:
        return 0
    m = 1
    for i in range(1, n):
        if first[i] != first[m - 1] or second[i] != second[m - 1]:
            first[m] = first[i]
            second[m] = second[i]
            m += 1
    return m


def distinct_pairs_in_place(first: np.ndarray, second: np.ndarray) -> int:
    """Keep each pair of sorted ``(first, second)`` once, in place: the distinct pairs are moved to the front, in
    order, and their number returned (``first[:m]``, ``second[:m]``)."""
    _check_pairs(first, second, "distinct_pairs_in_place")
    return int(_distinct_pairs_in_place(first, second))


@njit(cache=True, nogil=True)
def _counted_pairs_in_place(first, second, counts):
    n = first.shape[0]
    if n == 0:
        return 0
    m = 0
    counts[0] = 1
    for i in range(1, n):
        if first[i] != first[m] or second[i] != second[m]:
            m += 1
            first[m] = first[i]
            second[m] = second[i]
            counts[m] = 1
        else:
            counts[m] += 1
    return m + 1


def counted_pairs_in_place(first: np.ndarray, second: np.ndarray) -> tuple[int, np.ndarray]:
    """:func:`distinct_pairs_in_place` with how many times each distinct pair came: ``(m, counts)``, the pairs at
    ``first[:m]``, ``second[:m]`` and their counts at ``counts[:m]`` (int64). ``second`` may be ``first`` itself
    (pairs of a value with itself: one array sorted)."""
    _check_pairs(first, second, "counted_pairs_in_place")
    counts = np.empty(len(first), np.int64)
    return int(_counted_pairs_in_place(first, second, counts)), counts


@njit(cache=True, nogil=True)
def _increasing(rows):
    for i in range(1, rows.shape[0]):
        if rows[i] <= rows[i - 1]:
            return False
    return rows.shape[0] == 0 or rows[0] >= 0


@njit(cache=True, nogil=True)
def _gather_in_place(values, rows):
    for i in range(rows.shape[0]):      # rows[i] >= i (increasing, from 0 up): no value is read after it is written
        values[i] = values[rows[i]]


def taken_in_place(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``values[rows]`` for increasing ``rows`` (each in range), written over the front of ``values`` (which the caller
    gives up: a column read for this alone) and returned as a view of it: no second array of the column's size."""
    rows = np.asarray(rows)
    if len(rows) and rows[-1] >= len(values) or not (values.ndim == 1 and values.flags.c_contiguous
                                                      and values.flags.writeable) or not _increasing(rows):
        return values[rows]
    _gather_in_place(values, rows)
    return values[:len(rows)]


def sorted_columns(table, rows: np.ndarray, ahead: int | None = None):
    """For each column ``c`` of the 2-D ``table``, in order: the column's values at ``rows`` sorted with their rows
    (ties by row; :func:`sort_pairs_in_place` on copies of both). The next columns are sorted on other cores while the
    caller works on this one (``ahead`` of them at most: :func:`~dptopic.kernels._threads.ordered_ahead`); the
    results do not depend on it. ``table`` may be any object with a 2-D ``shape`` and a ``column(c)`` reading one
    column (a table on disk, read a column at a time: increasing ``rows`` are then gathered over the column read,
    :func:`taken_in_place`)."""
    columns = range(table.shape[1] if table.ndim == 2 else 0)

    def sort(c):
        values = taken_in_place(table.column(c), rows) if hasattr(table, "column") else table[rows, c]
        at = np.array(rows, order="C")
        _sort_range(values, at, 0, len(values))    # one thread: the other bands are sorted beside it
        return values, at
    return ordered_ahead(sort, columns, ahead)
