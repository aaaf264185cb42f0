"""``dptopic.kernels.reference``."""
import numpy as np
import pytest
from scipy import stats

from conftest import counts_from_z, random_state
from dptopic.kernels import kernel_state, sweep_shard
from dptopic.kernels.reference import conditional, reference_sparse_sweep, reference_sweep
from helpers import KERNEL_SHAPES, csr_token_corpus, topic_counts, xorshift_state


def test_sparse_sampler_has_exact_conditional(tiny):
    """Resample a single token many times: SparseLDA's empirical distribution = the exact conditional."""
    c = tiny.corpus
    K = 3
    z, ndk, nwk, nk = random_state(c, K, seed=4)
    # a one-token shard: the first token of document 0 (counts for the rest stay as they are)
    i = 0
    p_exact = conditional(c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, i)
    wid, ptr = c.word_ids[:1], np.array([0, 1])
    rng = np.random.default_rng(11)
    n = 20000
    draws = np.empty(n, int)
    for r in range(n):
        out = sweep_shard("sparse", wid, ptr, z[:1], ndk[:1], nwk, nk, 0.5, 0.1, kernel_state(rng))
        draws[r] = out[0][0]
    obs = np.bincount(draws, minlength=K)
    chi2, pval = stats.chisquare(obs, p_exact * n)
    assert pval > 1e-3, (obs, p_exact * n)


@pytest.mark.parametrize("K,alpha,beta", [(3, 0.5, 0.1), (8, 0.1, 0.01), (20, 0.05, 0.5), (130, 0.1, 0.01)])
def test_sparse_kernel_matches_numpy_reference(tiny, K, alpha, beta):
    """SparseLDA with in-place removal and lazy lists = its plain-Python twin, token for token, over 3 sweeps
    (K=130 exercises the int16 lists; beta=0.5 makes the r and s buckets matter)."""
    from dptopic.kernels.reference import reference_sparse_sweep

    c = tiny.corpus
    z, ndk, nwk, nk = random_state(c, K)
    st = kernel_state(np.random.default_rng(3))
    zr, ndr, nwr, nkr = z, ndk, nwk, nk
    zs, nds, nws, nks = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    for _ in range(3):
        zr, ndr, nwr, nkr = reference_sparse_sweep(c.word_ids, c.doc_ptr, zr, ndr, nwr, nkr, alpha, beta, st.copy())
        s2 = st.copy()
        zs, nds, dnw, dnk, _ = sweep_shard("sparse", c.word_ids, c.doc_ptr, zs, nds, nws, nks, alpha, beta, s2)
        nws, nks = nws + dnw, nks + dnk
        st = s2
        assert np.array_equal(zs, zr) and np.array_equal(nds, ndr) and np.array_equal(nws, nwr)
    assert (zs != z).sum() > 10  # it actually moved
    ndk_z, nwk_z = counts_from_z(c, zs, K)
    assert np.array_equal(nws, nwk_z) and np.array_equal(nks, nwk_z.sum(0))


# ------------------------------------------------------------------------------ dense, sparse, local
@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES)
def test_dense_and_sparse_sweeps_match_their_references_on_edge_shapes(D, V, K):
    """The plain-Python twins of the dense and SparseLDA sweeps on one word, one topic and empty documents."""
    rng = np.random.default_rng(K * 7 + V)
    wid, ptr = csr_token_corpus(rng, D, V, 30)
    z0 = rng.integers(0, K, len(wid)).astype(np.int32)
    for kind, ref in (("dense", reference_sweep), ("sparse", reference_sparse_sweep)):
        z = z0
        ndk, nwk, nk = topic_counts(wid, ptr, z, K, V)
        for _ in range(2):
            st = xorshift_state(rng)
            want = ref(wid, ptr, z, ndk, nwk, nk, 0.4, 0.05, st.copy())
            got = sweep_shard(kind, wid, ptr, z, ndk, nwk, nk, 0.4, 0.05, st.copy())
            assert np.array_equal(got[0], want[0]), kind
            assert np.array_equal(got[1], want[1]) and np.array_equal(nwk + got[2], want[2]), kind
            assert np.array_equal(nk + got[3], want[3]), kind
            z, ndk, nwk, nk = want
        if K > 1:
            assert (z != z0).any()
