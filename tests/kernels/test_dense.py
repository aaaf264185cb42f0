"""``dptopic.kernels.dense``."""
import numpy as np
import pytest
from numba import njit
from scipy import stats

from dptopic.kernels import kernel_state
from dptopic.kernels.dense import blocked_draw, draw_buffers


@njit(cache=True)  # compiled once (and cached), not once per parametrized case
def _draws(w, n, state):
    K = w.shape[0]
    p, sums, nb = draw_buffers(K)
    p[:K] = w
    out = np.empty(n, np.int64)
    for i in range(n):
        out[i] = blocked_draw(p, sums, nb, K, state)
    return out


@pytest.mark.parametrize("K", [1, 5, 7, 8, 50, 64, 65, 200])
def test_blocked_draw_is_exact(K):
    """Both groupings (lanes up to 64 topics, blocks above) draw each topic with probability p_k / sum(p),
    including weights spanning 1e-6..1 and a last group only partly filled."""
    draws = _draws
    rng = np.random.default_rng(K)
    w = rng.uniform(0.2, 1.0, K)
    w[rng.permutation(K)[: K // 5]] = 1e-6  # near-zero weights must still be skipped correctly
    n = 40_000 * max(1, K // 10)
    got = np.bincount(draws(w, n, kernel_state(rng)), minlength=K)
    assert got.shape == (K,)  # never a topic >= K
    if K > 1:
        assert stats.chisquare(got, w / w.sum() * n).pvalue > 1e-3
