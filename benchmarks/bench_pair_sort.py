"""The dataset ledger's sort of pairs (``kernels.sketch_pairs.sort_pairs_in_place``: keys with their documents,
band values with their rows) against its peer, NumPy's ``argsort`` of the first array with both arrays gathered by
it and each run of equal firsts sorted (``np.lexsort``'s order, what the ledger did before): time and the extra
memory each needs, printed as ratios, on random int64 pairs.

    python benchmarks/bench_pair_sort.py --pairs 30000000      # the exact keys of 10^7 documents
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from _common import machine, table


def _numpy_peer(first, second):
    """The ledger's sort before: an ``argsort`` of the first, both gathered, each run of equal firsts sorted."""
    order = np.argsort(first)
    a, b = first[order], second[order]
    del order
    cut = np.flatnonzero(np.r_[True, a[1:] != a[:-1], True])
    long = np.flatnonzero(np.diff(cut) > 1)          # only the runs of two or more need their seconds sorted
    for lo, hi in zip(cut[long].tolist(), cut[long + 1].tolist()):
        b[lo:hi] = np.sort(b[lo:hi])
    return a, b


def main(argv=None) -> None:
    from dptopic.kernels.sketch_pairs import sort_pairs_in_place

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pairs", type=int, default=3_000_000, help="random int64 pairs to sort")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    print(machine())
    rng = np.random.default_rng(a.seed)
    first = rng.integers(-2**62, 2**62, a.pairs)
    second = rng.integers(0, 2**40, a.pairs)
    sort_pairs_in_place(first[:100].copy(), second[:100].copy())       # compiled before timing
    t = time.perf_counter()
    want = _numpy_peer(first, second)
    t_peer = time.perf_counter() - t
    x, y = first.copy(), second.copy()
    t = time.perf_counter()
    sort_pairs_in_place(x, y)
    t_mine = time.perf_counter() - t
    assert np.array_equal(x, want[0]) and np.array_equal(y, want[1])
    print(f"{a.pairs:,} random int64 pairs, both orders equal")
    table([["numpy argsort + gathers (peer)", f"{t_peer:.2f}", "24 (index, two sorted copies)", "1.00"],
           ["sort_pairs_in_place", f"{t_mine:.2f}", "0", f"{t_mine / t_peer:.2f}"]],
          ["route", "seconds", "extra bytes a pair", "time ratio to the peer"])


if __name__ == "__main__":
    main()
