"""``dptopic.kernels.lists``."""
import numpy as np
import pytest
from numba import njit

from dptopic.kernels._lists import list_add, list_from_counts, list_remove


# ------------------------------------------------------------------------------ topic lists
@njit(cache=False)
def _list_run(counts, ops):
    """Build a list from ``counts``, then apply ``ops`` (k >= 0: add k; k < 0: remove -k-1); snapshot after each."""
    K = counts.shape[0]
    items = np.empty(K, np.int64)
    pos = np.empty(K, np.int64)
    lens = np.empty(ops.shape[0] + 1, np.int64)
    snap = np.full((ops.shape[0] + 1, K), -9, np.int64)
    psnap = np.empty((ops.shape[0] + 1, K), np.int64)
    n = list_from_counts(counts, items, pos)
    for s in range(ops.shape[0] + 1):
        if s > 0:
            k = ops[s - 1]
            n = list_add(items, pos, n, k) if k >= 0 else list_remove(items, pos, n, -k - 1)
        lens[s] = n
        snap[s, :n] = items[:n]
        psnap[s] = pos
    return lens, snap, psnap


@pytest.mark.parametrize("K", [1, 2, 5, 17])
def test_topic_lists_match_a_python_list(K):
    """list_from_counts lists the positive counts in increasing order; list_remove moves the last item into the
    freed place; pos is the inverse (−1 when absent)."""
    rng = np.random.default_rng(K)
    counts = rng.integers(-1, 3, K).astype(np.int32)
    counts[0] = 0
    items = [k for k in range(K) if counts[k] > 0]
    ops, snaps = [], [list(items)]
    for _ in range(40):
        absent = [k for k in range(K) if k not in items]
        if items and (not absent or rng.random() < 0.5):
            k = int(rng.choice(items))
            j, last = items.index(k), items.pop()
            if j < len(items):
                items[j] = last
            ops.append(-k - 1)
        else:
            k = int(rng.choice(absent))
            items.append(k)
            ops.append(k)
        snaps.append(list(items))
    lens, snap, psnap = _list_run(counts, np.array(ops, np.int64))
    for s, want in enumerate(snaps):
        assert lens[s] == len(want) and snap[s, :lens[s]].tolist() == want
        assert psnap[s].tolist() == [want.index(k) if k in want else -1 for k in range(K)]
