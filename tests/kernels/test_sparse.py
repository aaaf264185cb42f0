"""``dptopic.kernels.sparse``."""
import numpy as np
import pytest

from dptopic.kernels.sparse import build_word_lists, list_dtype


@pytest.mark.parametrize("V,K", [(1, 1), (4, 1), (1, 6), (9, 5), (6, 130)])
def test_build_word_lists_matches_numpy(V, K):
    rng = np.random.default_rng(V * K)
    nwk = rng.integers(-1, 3, (V, K)).astype(np.int32)
    nwk[0] = 0                                              # a word with no topic
    wnz, wpos, wlen = build_word_lists(nwk)
    assert wnz.dtype == wpos.dtype == list_dtype(K) and (K <= 127) == (wnz.dtype == np.int8)
    for w in range(V):
        listed = np.flatnonzero(nwk[w] > 0)
        assert wlen[w] == len(listed) and np.array_equal(wnz[w, :wlen[w]], listed)
        want_pos = np.full(K, -1)
        want_pos[listed] = np.arange(len(listed))
        assert np.array_equal(wpos[w], want_pos)
