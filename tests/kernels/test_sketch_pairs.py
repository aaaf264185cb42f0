"""The compiled agreement of pairs of sketch rows (``kernels/sketch_pairs.py``) against NumPy's gather and compare,
and its two-bit bound against NumPy's count on the low bits; its sort-based distinct values against ``np.unique``, and
its pairs' sort in place against ``np.lexsort``."""
from __future__ import annotations

import numpy as np
import pytest

from dptopic.kernels import sketch_pairs
from dptopic.kernels.sketch_pairs import (
    agreements,
    among_sorted,
    bounded_agreements,
    counted_pairs_in_place,
    distinct_pairs_in_place,
    low_bits,
    ranks_among_equal,
    sort_pairs_in_place,
    sorted_columns,
    sorted_unique,
    taken_in_place,
)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_the_agreements_are_numpys_count_of_equal_positions(dtype):
    rng = np.random.default_rng(5)
    sig = rng.integers(0, 4, (300, 128)).astype(dtype)           # few values: every count from 0 to 128 is likely
    sig[7] = sig[3]
    a = np.concatenate([rng.integers(0, 300, 5000), [3, 7, 0]])
    b = np.concatenate([rng.integers(0, 300, 5000), [7, 3, 0]])
    got = agreements(sig, a, b)
    assert got.dtype == np.int32
    assert np.array_equal(got, (sig[a] == sig[b]).sum(axis=1))
    assert got[-3:].tolist() == [128, 128, 128]
    assert agreements(sig, a[:0], b[:0]).shape == (0,)


def test_the_agreements_cut_into_slices_a_thread_are_the_one_calls():
    rng = np.random.default_rng(6)
    sig = rng.integers(0, 3, (500, 64)).astype(np.uint8)
    a, b = rng.integers(0, 500, (2, 3 * 65536 + 7))          # three slices of at least 2^16 pairs, uneven
    want = (sig[a] == sig[b]).sum(axis=1)
    for threads in (1, 2, 3, 8):
        assert np.array_equal(agreements(sig, a, b, threads=threads), want)


def test_the_agreements_refuse_rows_outside_the_table_and_unequal_lengths():
    sig = np.zeros((4, 8), np.uint8)
    with pytest.raises(IndexError):
        agreements(sig, np.array([0, 4]), np.array([1, 1]))
    with pytest.raises(IndexError):
        agreements(sig, np.array([-1]), np.array([1]))
    with pytest.raises(ValueError):
        agreements(sig, np.array([0, 1]), np.array([1]))


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32])
def test_sorted_unique_is_np_unique(dtype):
    rng = np.random.default_rng(6)
    for values in (rng.integers(0, 50, 1000), rng.integers(0, 2**31 - 1, 5000), np.zeros(0, np.int64),
                   np.array([9]), np.array([3, 3, 3])):
        v = values.astype(dtype)
        want = np.unique(v)
        got = sorted_unique(v)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert np.array_equal(v, values.astype(dtype))                    # the input left as it was
        w = v.copy()
        assert np.array_equal(sorted_unique(w, overwrite=True), want)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
@pytest.mark.parametrize("n", [0, 1, 2, 5000])
def test_pairs_are_sorted_as_numpys_lexsort_orders_them(dtype, n):
    """Runs of equal firsts (few distinct values), the extremes of the type, and equal pairs: both arrays sorted in
    place into the order ``np.lexsort((second, first))`` gives, of their own type."""
    rng = np.random.default_rng(n)
    info = np.iinfo(dtype)
    first = rng.integers(0, 40, n).astype(dtype)
    second = rng.integers(-5 if dtype == np.int64 else 0, 30, n).astype(dtype)
    if n > 4:
        first[:4] = [info.min, info.max, info.max, info.min]
        second[:4] = [info.max, info.min, info.max, info.max]
    a, b = first.copy(), second.copy()
    sort_pairs_in_place(a, b)
    order = np.lexsort((second, first))
    assert a.dtype == first.dtype and b.dtype == second.dtype
    assert np.array_equal(a, first[order]) and np.array_equal(b, second[order])


@pytest.mark.parametrize("ahead", [0, 1, 3])
def test_sorted_columns_are_each_columns_values_at_the_rows_lexsorted_with_their_rows(ahead):
    rng = np.random.default_rng(7)
    table = rng.integers(0, 50, (2000, 9)).astype(np.uint64)       # many ties: the rows must order them
    rows = np.flatnonzero(rng.random(2000) < 0.7)
    got = list(sorted_columns(table, rows, ahead))
    assert len(got) == 9
    for c, (v, r) in enumerate(got):
        order = np.lexsort((rows, table[rows, c]))
        assert np.array_equal(v, table[rows, c][order]) and np.array_equal(r, rows[order])
    assert list(sorted_columns(np.zeros(5, np.uint64), rows[:0], ahead)) == []


@pytest.mark.parametrize("ahead", [0, 2])
def test_sorted_columns_of_a_table_read_a_column_at_a_time_are_those_of_the_array(ahead):
    rng = np.random.default_rng(8)
    table = rng.integers(0, 30, (1500, 6)).astype(np.uint64)
    rows = np.flatnonzero(rng.random(1500) < 0.5)
    read = []

    class Columns:
        ndim, shape = 2, table.shape

        def column(self, c):
            read.append(c)
            return table[:, c].copy()
    got = list(sorted_columns(Columns(), rows, ahead))
    assert sorted(read) == list(range(6))
    for (v, r), (v2, r2) in zip(got, sorted_columns(table, rows, ahead), strict=True):
        assert np.array_equal(v, v2) and np.array_equal(r, r2)


def _pair_orders():
    """Inputs a quicksort meets badly: sorted, reversed, one value, two values, an organ pipe, and random ones."""
    rng = np.random.default_rng(11)
    n = 3000
    yield np.arange(n), np.zeros(n)
    yield np.arange(n)[::-1].copy(), np.arange(n)
    yield np.full(n, 5), rng.integers(0, 3, n)
    yield rng.integers(0, 2, n), rng.integers(0, 2, n)
    yield np.concatenate([np.arange(n // 2), np.arange(n // 2)[::-1]]), rng.integers(-9, 9, n)
    yield rng.integers(-2**62, 2**62, n), rng.integers(-2**62, 2**62, n)
    yield rng.integers(0, 40, 17), rng.integers(0, 4, 17)


@pytest.mark.parametrize("dtypes", [(np.int64, np.int64), (np.uint64, np.int32), (np.int64, np.int32)])
def test_pairs_sorted_in_place_are_in_lexsorts_order(dtypes):
    for first, second in _pair_orders():
        first, second = first.astype(dtypes[0]), second.astype(dtypes[1])
        order = np.lexsort((second, first))
        a, b = first.copy(), second.copy()
        sort_pairs_in_place(a, b)
        assert np.array_equal(a, first[order]) and np.array_equal(b, second[order])


@pytest.mark.parametrize("threads", [2, 3, 5])
def test_pairs_sorted_on_threads_are_in_lexsorts_order(threads, monkeypatch):
    """The ranges the first partitions make, sorted on threads: the one-thread order, on the inputs a quicksort meets
    badly (the threshold lowered so that 3,000 pairs are split into many ranges; ranges of one pair and of none)."""
    monkeypatch.setattr(sketch_pairs, "PARALLEL_SORT_FROM", 64)
    for first, second in _pair_orders():
        first, second = first.astype(np.int64), second.astype(np.int32)
        order = np.lexsort((second, first))
        a, b = first.copy(), second.copy()
        sort_pairs_in_place(a, b, threads=threads)
        assert np.array_equal(a, first[order]) and np.array_equal(b, second[order])


def test_many_pairs_sorted_on_two_threads_are_the_one_threads():
    rng = np.random.default_rng(13)
    n = sketch_pairs.PARALLEL_SORT_FROM * 3 + 7
    first, second = rng.integers(0, n // 4, n), rng.integers(0, 9, n)
    one = first.copy(), second.copy()
    sort_pairs_in_place(*one, threads=1)
    two = first.copy(), second.copy()
    sort_pairs_in_place(*two, threads=2)
    order = np.lexsort((second, first))
    assert np.array_equal(one[0], first[order]) and np.array_equal(one[1], second[order])
    assert np.array_equal(two[0], one[0]) and np.array_equal(two[1], one[1])


def test_the_heap_sort_beneath_the_depth_limit_sorts_its_range_alone():
    """The introsort's fallback, reached only on inputs that defeat its pivots: it sorts [lo, hi) and nothing else."""
    for first, second in _pair_orders():
        a, b = first.astype(np.int64), second.astype(np.int64)
        lo, hi = len(a) // 5, len(a) - len(a) // 7
        want_a, want_b = a.copy(), b.copy()
        order = np.lexsort((b[lo:hi], a[lo:hi]))
        want_a[lo:hi], want_b[lo:hi] = a[lo:hi][order], b[lo:hi][order]
        sketch_pairs._heap_sort(a, b, lo, hi)
        assert np.array_equal(a, want_a) and np.array_equal(b, want_b)


def test_sorting_in_place_refuses_a_copy_it_could_not_write_back():
    a = np.arange(10)
    with pytest.raises(ValueError, match="contiguous, writable"):
        sort_pairs_in_place(a[::2], np.zeros(5, np.int64))
    a.setflags(write=False)
    with pytest.raises(ValueError, match="contiguous, writable"):
        sort_pairs_in_place(a, np.zeros(10, np.int64))
    with pytest.raises(ValueError, match="one length"):
        sort_pairs_in_place(np.zeros(3, np.int64), np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="one length"):
        sort_pairs_in_place(np.zeros((3, 1), np.int64), np.zeros((3, 1), np.int64))


def test_distinct_pairs_in_place_are_numpys_unique_rows():
    rng = np.random.default_rng(12)
    for n in (0, 1, 2, 4000):
        a, b = rng.integers(0, 20, n), rng.integers(0, 3, n)
        sort_pairs_in_place(a, b)
        want = np.unique(np.stack([a, b], axis=1), axis=0)
        m = distinct_pairs_in_place(a, b)
        assert m == len(want) and np.array_equal(np.stack([a[:m], b[:m]], axis=1), want.reshape(-1, 2))


@pytest.mark.parametrize("bits", [1, 2])
@pytest.mark.parametrize("dtype, K", [(np.uint8, 128), (np.uint8, 40), (np.uint32, 7), (np.uint8, 0), (np.uint8, 65)])
def test_the_low_bit_bound_is_numpys_count_on_the_low_bits_and_never_below_the_agreements(dtype, K, bits):
    rng = np.random.default_rng(K)
    base = rng.integers(0, 256, (1, K))
    sig = np.where(rng.random((300, K)) < rng.uniform(0, 1, (300, 1)), rng.integers(0, 256, (300, K)), base)
    sig = (sig * (7919 if dtype == np.uint32 else 1)).astype(dtype)
    a, b = rng.integers(0, 300, 5000), rng.integers(0, 300, 5000)
    packed = low_bits(sig, bits=bits)
    assert packed.shape == (300, -(-K * bits // 64)) and packed.dtype == np.uint64
    got = bounded_agreements(packed, K, a, b, bits=bits)
    mask = (1 << bits) - 1
    assert np.array_equal(got, ((sig[a] & mask) == (sig[b] & mask)).sum(axis=1))
    assert (got >= agreements(sig, a, b)).all()
    assert np.array_equal(bounded_agreements(packed, K, a, b, threads=3, bits=bits), got)
    out = np.full_like(packed, 99)
    assert np.array_equal(low_bits(sig, out=out, bits=bits), packed) and np.array_equal(out, packed)
    if bits == 1 and K:         # the library's width: one bit, at least as loose as two
        assert np.array_equal(low_bits(sig), packed)
        assert (got >= bounded_agreements(low_bits(sig, bits=2), K, a, b, bits=2)).all()


def test_the_low_bit_bound_refuses_what_it_cannot_read():
    packed = low_bits(np.zeros((4, 8), np.uint8))
    with pytest.raises(IndexError, match="outside"):
        bounded_agreements(packed, 8, np.array([0]), np.array([4]))
    with pytest.raises(ValueError, match="as many"):
        bounded_agreements(packed, 8, np.array([0, 1]), np.array([2]))
    with pytest.raises(ValueError, match="out of shape"):
        low_bits(np.zeros((4, 8), np.uint8), out=np.zeros((4, 2), np.uint64))
    with pytest.raises(ValueError, match="2-D"):
        low_bits(np.zeros(8, np.uint8))
    with pytest.raises(ValueError, match="1 or 2 bits"):
        low_bits(np.zeros((4, 8), np.uint8), bits=3)
    with pytest.raises(ValueError, match="at 1 bit"):         # two bits' words read as one bit's
        bounded_agreements(low_bits(np.zeros((4, 128), np.uint8), bits=2), 128, np.array([0]), np.array([1]))


@pytest.mark.parametrize("rows", [[], [0], [0, 1, 2, 3, 4, 5, 6, 7], [3], [1, 4, 7], [0, 2, 3, 6]])
def test_values_taken_in_place_at_increasing_rows_are_numpys_gather_over_the_front_of_the_column(rows):
    values = np.arange(10, 18, dtype=np.uint64) * np.uint64(3)
    want = values[np.array(rows, dtype=np.int64)]
    column = values.copy()
    got = taken_in_place(column, np.array(rows, dtype=np.int32))
    assert np.array_equal(got, want)
    assert got.base is column or got is column or not len(rows)        # written over the column: no second array


@pytest.mark.parametrize("rows", [[2, 1], [1, 1], [0, 9]])
def test_values_taken_at_rows_not_increasing_or_out_of_range_are_gathered_as_numpy_gathers_them(rows):
    values = np.arange(8, dtype=np.uint64)
    rows = np.array(rows)
    if rows.max() >= len(values):
        with pytest.raises(IndexError):
            taken_in_place(values.copy(), rows)
        return
    column = values.copy()
    assert np.array_equal(taken_in_place(column, rows), values[rows])
    assert np.array_equal(column, values)          # not written over


def test_counted_pairs_in_place_are_numpys_distinct_pairs_and_counts_for_two_arrays_or_one():
    rng = np.random.default_rng(12)
    for n in (0, 1, 2, 5000):
        a, b = rng.integers(0, 30, n), rng.integers(0, 4, n)
        sort_pairs_in_place(a, b)
        want, counts = np.unique(np.stack([a, b], axis=1), axis=0, return_counts=True)
        m, got = counted_pairs_in_place(a, b)
        assert m == len(want) and np.array_equal(np.stack([a[:m], b[:m]], axis=1), want.reshape(-1, 2))
        assert np.array_equal(got[:m], counts)
        one = np.sort(rng.integers(0, 50, n))
        values, counts = np.unique(one, return_counts=True)
        m, got = counted_pairs_in_place(one, one)          # a value paired with itself: one array
        assert m == len(values) and np.array_equal(one[:m], values) and np.array_equal(got[:m], counts)


def test_ranks_among_equal_values_count_the_equal_values_before_each():
    rng = np.random.default_rng(13)
    for n in (0, 1, 7, 3000):
        values = rng.integers(0, 40, n).astype(np.uint64) * np.uint64(2**60 // 40)
        want = np.array([int(np.count_nonzero(values[:i] == values[i])) for i in range(n)], dtype=np.uint64)
        got = ranks_among_equal(values)
        assert got.dtype == np.uint64 and np.array_equal(got, want)


def test_values_among_sorted_keys_are_those_numpys_isin_finds():
    rng = np.random.default_rng(14)
    for n_keys, n_values in ((0, 5), (1, 5), (40, 0), (300, 1000)):
        keys = np.sort(rng.integers(0, 500, n_keys).astype(np.uint64))
        values = rng.integers(0, 520, n_values).astype(np.uint64)
        got = among_sorted(values, keys)
        assert got.dtype == bool and np.array_equal(got, np.isin(values, keys))
