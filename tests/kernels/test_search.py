"""``dptopic.kernels.search``."""
import numpy as np


def test_first_above_matches_searchsorted():
    from numba import njit

    from dptopic.kernels._search import first_above

    @njit
    def run(cdf, xs):
        out = np.empty((cdf.shape[0], xs.shape[0]), np.int64)
        for r in range(cdf.shape[0]):
            for i in range(xs.shape[0]):
                out[r, i] = first_above(cdf, r, cdf.shape[1], xs[i])
        return out

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 64):
        cdf = np.cumsum(rng.integers(0, 3, size=(5, n)).astype(np.float64), axis=1)    # flat stretches included
        xs = np.concatenate([rng.uniform(-1, cdf.max() + 1, 200), np.unique(cdf)])     # ties with the cdf's values
        got = run(cdf, xs)
        for r in range(5):
            want = np.minimum(np.searchsorted(cdf[r], xs, side="right"), n - 1)
            np.testing.assert_array_equal(got[r], want)
