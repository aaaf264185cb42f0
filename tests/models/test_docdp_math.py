"""What the document-level and local models report:

1. OLP-LDA's privacy report named neither the mini-batches nor the reports it took: trained by several
   ``partial_fit`` calls, it now states both, and what a contributor with a report in every batch has spent
   (its randomized-response events composed over the batches, never below the ledger's own figure).
2. DocDPEM's denoising floored every cell at a fixed 1e-3, whatever the noise scale: under extreme noise it vanished
   beside the noise and the few cells passing the threshold by chance took a topic's whole mass. The floor is now a
   thousandth of the (public) noise standard deviation, so the topics depend on the release only through its
   signal-to-noise ratio.
3. FedLDA's floor and tail rules saved ``training.n_clients`` as the number of users with tokens (data-dependent);
   it is now the number of users given, as under the default rule.
"""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dptopic.corpus import lda_corpus
from dptopic.models._docdp_math import denoise, normalised_statistic, per_document_statistic
from dptopic.models.docdp import DocDPEM
from helpers import random_count_csr


# ------------------------------------------------------------------ 2. DocDPEM's floor follows the noise scale
def test_denoise_floor_is_in_units_of_the_noise():
    rng = np.random.default_rng(3)
    z = rng.normal(size=(4, 300))
    z[0, :5] += 6.0                              # a few cells of signal
    base = denoise(z, 1.0, 2.0)
    for scale in (1e-6, 1e-2, 1e3, 1e8):        # tiny noise and extreme noise (a tiny epsilon)
        out = denoise(z * scale, scale, 2.0)
        assert np.all(np.isfinite(out)) and np.all(out > 0)
        np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(out, base, rtol=1e-9, atol=0)


def test_denoise_under_extreme_noise_keeps_chance_cells_from_taking_a_topic():
    """Pure noise at sigma = 1e6: the old fixed floor (1e-3) vanished beside it, so the handful of cells above the
    threshold by chance took about all of each topic's mass; the floor in noise units keeps the share the
    floored cells would get at sigma = 1."""
    rng = np.random.default_rng(0)
    V, sigma, t = 2000, 1e6, 2.0
    release = rng.normal(0.0, sigma, size=(5, V))
    out = denoise(release, sigma, t)
    below = release < t * sigma
    floored_share = np.array([out[k][below[k]].sum() for k in range(5)])
    # each floored cell carries 1e-3 sigma; the kept ones about 2.37 sigma each (E[Z | Z > 2])
    kept = (~below).sum(axis=1)
    expected = below.sum(axis=1) * 1e-3 / (below.sum(axis=1) * 1e-3 + kept * 2.37)
    assert np.all(floored_share > 0.5 * expected) and np.all(floored_share > 1e-3)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(out, denoise(release / sigma, 1.0, t), rtol=1e-9, atol=0)


def test_denoise_reads_only_the_release_and_the_public_noise_scale():
    """Two corpora, the same release (their noise draws differ): identical topics, a valid distribution."""
    V, K = 30, 2
    rng = np.random.default_rng(1)
    a = lda_corpus(n_docs=40, vocab_size=V, n_topics=K, doc_length=20, seed=5).corpus.to_bow()
    b = lda_corpus(n_docs=25, vocab_size=V, n_topics=K, doc_length=9, seed=6).corpus.to_bow()
    beta = rng.dirichlet(np.ones(V), size=K)
    sa, _ = normalised_statistic(a, beta, 0.1, 5)
    sb, _ = normalised_statistic(b, beta, 0.1, 5)
    assert not np.allclose(sa, sb)
    sigma = 500.0                                # extreme noise
    release = sa + rng.normal(0, sigma, size=sa.shape)
    out_a = denoise(sa + (release - sa), sigma, 2.0)
    out_b = denoise(sb + (release - sb), sigma, 2.0)
    np.testing.assert_allclose(out_a, out_b, rtol=0, atol=1e-12)
    assert np.all(out_a > 0) and np.allclose(out_a.sum(axis=1), 1.0)


def test_denoise_row_without_weight_is_uniform():
    out = denoise(np.full((2, 4), -1.0), 0.0, 2.0)
    np.testing.assert_allclose(out, 0.25)


V, K = 12, 3


def _beta(seed=0):
    return np.random.default_rng(seed).dirichlet(np.ones(V), size=K)


def _dense_statistic(X, beta, alpha, inner):
    """Sum of S_d by explicit loops over documents and words (the module note's formula, nothing shared)."""
    X = np.asarray(X, dtype=float)
    K, Vb = beta.shape
    S = np.zeros((K, Vb))
    for x in X:
        words = np.flatnonzero(x)
        if not len(words):
            continue
        theta = np.full(K, 1.0 / K)
        for _ in range(inner):
            phi = {w: theta * beta[:, w] / (theta * beta[:, w]).sum() for w in words}
            theta = sum(x[w] * phi[w] for w in words) + alpha
        for w in words:
            S[:, w] += x[w] / np.linalg.norm(x) * phi[w]
    return S


# ---------------------------------------------------------------- speed and scale: kernel, threads, streaming


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=V, max_size=V), st.integers(0, 5), st.floats(0.01, 2.0))
def test_per_document_contribution_has_unit_frobenius_bound(counts, seed, alpha):
    S = per_document_statistic(np.array(counts, float), _beta(seed), alpha, 5)
    assert np.linalg.norm(S) <= 1 + 1e-9
    assert (S >= 0).all()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 20), min_size=V, max_size=V), min_size=1, max_size=6),
       st.lists(st.integers(0, 30), min_size=V, max_size=V), st.integers(0, 5))
def test_add_remove_changes_release_by_at_most_one(docs, extra, seed):
    X = sp.csr_matrix(np.array(docs, float))
    Xp = sp.vstack([X, sp.csr_matrix(np.array(extra, float)[None, :])]).tocsr()
    b = _beta(seed)
    S, _ = normalised_statistic(X, b, 0.1, 5)
    Sp, _ = normalised_statistic(Xp, b, 0.1, 5)
    assert np.linalg.norm(Sp - S) <= 1 + 1e-9


def test_unnormalised_counts_would_break_the_bound():
    # the bound comes from the normalisation: a long document's raw expected counts exceed it
    x = np.zeros(V)
    x[0] = 40
    S = per_document_statistic(x, _beta(), 0.1, 5)
    assert np.linalg.norm(S * np.linalg.norm(x)) > 1


def test_denoise_reads_only_the_release():
    rng = np.random.default_rng(0)
    a = lda_corpus(n_docs=40, vocab_size=V, n_topics=2, doc_length=20, seed=5).corpus.to_bow()
    b = lda_corpus(n_docs=25, vocab_size=V, n_topics=2, doc_length=9, seed=6).corpus.to_bow()
    beta = _beta()
    sa, _ = normalised_statistic(a, beta, 0.1, 5)
    sb, _ = normalised_statistic(b, beta, 0.1, 5)
    assert not np.allclose(sa, sb)
    release = sa + rng.normal(0, 2.0, size=sa.shape)
    noise_b = release - sb                       # the noise draw under which corpus b gives the same release
    out_a = denoise(sa + (release - sa), 2.0, 2.0)
    out_b = denoise(sb + noise_b, 2.0, 2.0)
    np.testing.assert_allclose(out_a, out_b, rtol=0, atol=1e-12)
    assert np.allclose(out_a.sum(1), 1)
    for k in range(K):                           # cells under the threshold all get the same floor mass
        low = out_a[k][release[k] < 4.0]
        assert np.allclose(low, low.min())


def test_statistic_pairs_each_word_with_its_own_responsibilities():
    # regression: the normalised counts were once paired with another word's phi (the row scaling reordered the
    # sparse indices within each document)
    X = np.array([[2., 0, 1, 0, 5, 0, 0, 1, 0, 0, 3, 0], [0, 1, 1, 3, 0, 0, 2, 0, 0, 7, 0, 1], [0] * V])
    b = _beta(1)
    S, theta = normalised_statistic(sp.csr_matrix(X), b, 0.3, 4)
    np.testing.assert_allclose(S, _dense_statistic(X, b, 0.3, 4), rtol=0, atol=1e-12)
    assert theta.shape == (3, K) and np.allclose(theta[2], 0.3)


@pytest.mark.parametrize("k,inner,unsorted", [(1, 1, False), (3, 5, True), (7, 30, False)])
def test_numba_kernel_matches_numpy_reference(k, inner, unsorted):
    from dptopic.kernels.docdp import normalised_statistic as fast
    rng = np.random.default_rng(k)
    X = random_count_csr(rng, 80, 40, unsorted)
    X[5] = 0                                          # an empty document
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    b = rng.dirichlet(np.ones(40), size=k)
    S0, th0 = normalised_statistic(X, b, 0.2, inner)
    S1, th1 = fast(X.indptr.astype(np.int64), X.indices, X.data, b, 0.2, inner, want_theta=True)
    assert S1.shape == (k, 40) and np.abs(S0).max() > 0.1
    np.testing.assert_allclose(S1, S0, rtol=0, atol=1e-10)
    np.testing.assert_allclose(th1, th0, rtol=0, atol=1e-10)


def test_transform_is_the_reference_estep():
    from dptopic.models._docdp_math import word_topic_responsibilities
    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=20, seed=9).corpus
    m = DocDPEM(n_topics=2, epsilon=20.0, seed=0, n_jobs=2).fit(c)
    _, th = word_topic_responsibilities(sp.csr_matrix(c.to_bow(), dtype=float), m.components_, m.alpha, m.inner)
    np.testing.assert_allclose(m.transform(c), th / th.sum(1, keepdims=True), rtol=0, atol=1e-10)
