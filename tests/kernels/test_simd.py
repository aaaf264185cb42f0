"""``dptopic.kernels.simd``."""
import numpy as np
import pytest


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_vector_lane_weights_equal_the_scalar_loop(dtype):
    """The LLVM vector weights (33 to 64 topics) write the same p and return the same lane sums, bit for bit,
    as the scalar loop, on every row including the table's last (read with masked loads), with negative
    entries and a finite clip; nothing past column K changes p."""
    from numba import njit

    from dptopic.kernels._simd import LANES, _lane_weights_scalar, _lane_weights_vector, lane_weights, vector_works

    assert vector_works()  # this machine's compiler builds it: the fast path is the one under test

    @njit
    def both(table, h, beta, clip):
        V = table.shape[0]
        out = np.empty((2, V, 8))
        pv, ps = np.zeros((V, LANES)), np.zeros((V, LANES))
        for w in range(V):
            pv[w, :] = 0.0
            ps[w, :] = 0.0
            lv = _lane_weights_vector(table, w, h, beta, clip, pv[w])
            ls = _lane_weights_scalar(table, w, h, beta, clip, ps[w])
            for c in range(8):
                out[0, w, c] = lv[c]
                out[1, w, c] = ls[c]
        return out, pv, ps

    rng = np.random.default_rng(7)
    for K in (33, 40, 50, 63, 64):
        table = rng.integers(-4, 40, size=(7, K)).astype(dtype)
        h = np.zeros(LANES)
        h[:K] = rng.uniform(1e-4, 2.0, K)
        for clip in (np.inf, 9.5):
            sums, pv, ps = both(table, h, 0.01, clip)
            assert np.array_equal(sums[0], sums[1]) and np.array_equal(pv, ps)
            assert not pv[:, K:].any() and (pv[:, :K] > 0).all()
            w = 3
            want = (np.minimum(np.maximum(table[w].astype(float), 0), clip) + 0.01) * h[:K]
            assert np.allclose(pv[w, :K], want, rtol=1e-15, atol=0)
            pp = np.zeros(LANES)  # the Python-level entry point: the scalar version
            assert lane_weights(table, w, h, 0.01, clip, pp) == tuple(sums[1, w]) and np.array_equal(pp, pv[w])
