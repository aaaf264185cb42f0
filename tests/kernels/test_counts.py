"""``dptopic.kernels.counts``."""
import numpy as np
import pytest

from conftest import counts_from_z
from dptopic.kernels import count_assignments
from helpers import KERNEL_SHAPES, csr_token_corpus


def test_count_assignments_matches_numpy(planted):
    from dptopic.kernels import count_assignments

    c = planted.corpus
    z = np.random.default_rng(0).integers(0, 7, c.n_tokens).astype(np.int32)
    ndk, nwk, nk = count_assignments(c.word_ids, c.doc_ptr, z, 7, c.vocab_size)
    ndk_ref, nwk_ref = counts_from_z(c, z, 7)
    assert np.array_equal(ndk, ndk_ref) and np.array_equal(nwk, nwk_ref) and np.array_equal(nk, nwk_ref.sum(0))


# ------------------------------------------------------------------------------ counts
@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES + [(0, 3, 2)])
def test_count_assignments_edge_shapes(D, V, K):
    rng = np.random.default_rng(D * 100 + V + K)
    wid, ptr = csr_token_corpus(rng, D, V, 6, n_empty=min(D, 1))
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, nwk, nk = count_assignments(wid, ptr, z, K, V)
    ref_ndk, ref_nwk, ref_nk = np.zeros((D, K), int), np.zeros((V, K), int), np.zeros(K, int)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ref_ndk[d, z[i]] += 1
            ref_nwk[wid[i], z[i]] += 1
            ref_nk[z[i]] += 1
    assert np.array_equal(ndk, ref_ndk) and np.array_equal(nwk, ref_nwk) and np.array_equal(nk, ref_nk)
