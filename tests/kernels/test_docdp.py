"""The document-level E-step kernel (:mod:`dptopic.kernels.docdp`) and its NumPy reference
(:mod:`dptopic.models._docdp_math`): the bound ``||S_d||_F <= 1`` the mechanism's sensitivity rests on holds for any
finite input, whatever its callers check, and the two agree."""
import numpy as np
import pytest
import scipy.sparse as sp

from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.kernels.docdp import normalised_statistic, tokens_to_bow
from dptopic.kernels.docdp import normalised_statistic as kernel_statistic
from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow
from dptopic.models._docdp_math import normalised_statistic as reference_statistic
from helpers import canonical_and_messy_csr, csr_arrays, csr_token_corpus

BETA = np.array([[0.5, 0.3, 0.2, 0.0], [0.1, 0.1, 0.1, 0.7]])


def _both(row, beta=BETA, alpha=0.1, inner=5):
    X = sp.csr_matrix(np.asarray(row, dtype=np.float64)[None, :])
    S_ref, th_ref = reference_statistic(X, beta, alpha, inner)
    S_k, th_k = kernel_statistic(X.indptr.astype(np.int64), X.indices, X.data, beta, alpha, inner, want_theta=True)
    return S_k, th_k, S_ref, th_ref


@pytest.mark.parametrize("row", [
    [1e308, 1e308, 3.0, 0.0],           # the squares and the topic counts overflow
    [1.7e308, 1.0, 1.0, 1.0],
    [1e200, 5e199, 0.0, 1.0],           # the squares overflow
    [1e-160, 3e-160, 0.0, 0.0],         # the squares are subnormal: a norm read from them is off
    [5e-324, 1e-323, 0.0, 0.0],         # the smallest subnormals
])
def test_extreme_finite_counts_keep_the_unit_bound_and_agree_with_the_reference(row):
    S_k, th_k, S_ref, th_ref = _both(row)
    for S in (S_k, S_ref):
        assert np.all(np.isfinite(S)), S
        assert np.linalg.norm(S) <= 1 + 1e-12
    np.testing.assert_allclose(S_k, S_ref, rtol=1e-10, atol=1e-15)
    if max(row) > 1:    # counts far above alpha: read as the same document at ordinary counts
        S_plain = _both(np.asarray(row) / max(row) * 1e6)[0]
        np.testing.assert_allclose(S_k, S_plain, rtol=1e-4, atol=1e-9)
    prop = th_k / th_k.sum(axis=1, keepdims=True)
    assert np.all(np.isfinite(prop)) and np.allclose(prop.sum(axis=1), 1)


def test_overflowing_topic_weights_add_nothing_instead_of_nan():
    beta = np.array([[1e308, 1.0, 1.0, 1.0], [1e308, 1.0, 1.0, 1.0]])    # finite, but theta * beta overflows
    S_k, _, S_ref, _ = _both([1e3, 1e3, 1.0, 0.0], beta=beta)
    for S in (S_k, S_ref):
        assert np.all(np.isfinite(S)) and np.linalg.norm(S) <= 1 + 1e-12
    np.testing.assert_allclose(S_k, S_ref, rtol=1e-10, atol=1e-15)


def test_ordinary_counts_give_the_same_statistic_as_before_the_guard():
    X = sp.random(30, 4, density=0.6, random_state=np.random.RandomState(1), format="csr")
    X.data = np.ceil(X.data * 9)
    S_ref, th_ref = reference_statistic(X, BETA, 0.2, 6)
    S_k, th_k = kernel_statistic(X.indptr.astype(np.int64), X.indices, X.data, BETA, 0.2, 6, want_theta=True)
    np.testing.assert_allclose(S_k, S_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(th_k, th_ref, rtol=0, atol=1e-10)


def test_tokens_to_bow_matches_corpus_counts():
    from dptopic.kernels.docdp import tokens_to_bow
    c = lda_corpus(n_docs=50, vocab_size=30, n_topics=2, doc_length=("poisson", 20), seed=3).corpus
    ptr, ids, cts = tokens_to_bow(c.doc_ptr, c.word_ids, c.vocab_size)
    X = sp.csr_matrix((cts, ids, ptr), shape=(c.n_docs, c.vocab_size))
    assert (X != c.to_bow()).nnz == 0
    assert np.all(np.diff(ptr) == (c.to_bow() > 0).sum(1).A1)       # one entry per distinct word


# ------------------------------------------------------------------------------ bag of words
@pytest.mark.parametrize("D,V", [(0, 3), (1, 1), (5, 1), (9, 4), (20, 30)])
def test_tokens_to_bow_in_order_of_first_occurrence(D, V):
    rng = np.random.default_rng(D + V)
    wid, ptr = csr_token_corpus(rng, D, V, 12, n_empty=min(D, 2))
    bp, bi, bc = tokens_to_bow(ptr, wid, V)
    assert bp[0] == 0 and len(bp) == D + 1 and bi.dtype == np.int32 and bc.dtype == np.float64
    for d in range(D):
        seen = {}
        for w in wid[ptr[d]:ptr[d + 1]].tolist():
            seen[w] = seen.get(w, 0) + 1                    # dicts keep insertion order
        assert bi[bp[d]:bp[d + 1]].tolist() == list(seen) and bc[bp[d]:bp[d + 1]].tolist() == list(seen.values())


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_docdp_reads_a_messy_csr_as_its_canonical_version(n_jobs):
    rng = np.random.default_rng(0)
    X, M = canonical_and_messy_csr(rng)
    beta = rng.dirichlet(np.ones(X.shape[1]), size=4)
    S0, th0 = normalised_statistic(*csr_arrays(X), beta, 0.2, 7, n_jobs=n_jobs, want_theta=True)
    S1, th1 = normalised_statistic(*csr_arrays(M), beta, 0.2, 7, n_jobs=n_jobs, want_theta=True)
    np.testing.assert_allclose(S1, S0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(th1, th0, rtol=0, atol=1e-10)
    # the sensitivity bound: every document's own contribution, and its removal from the sum, has norm <= 1
    for d in range(M.shape[0]):
        Sd, _ = normalised_statistic(*csr_arrays(M[d]), beta, 0.2, 7)
        assert np.linalg.norm(Sd) <= 1 + 1e-12
        rest = M[np.setdiff1d(np.arange(M.shape[0]), [d])]
        assert np.linalg.norm(S1 - normalised_statistic(*csr_arrays(rest), beta, 0.2, 7)[0]) <= 1 + 1e-9


def test_docdp_one_word_in_many_entries_keeps_norm_one():
    # word 0 counted 10 times as ten entries of 1: read per entry, the norm was sqrt(10) instead of 10 (|S| = 3.15)
    beta = np.array([[0.5, 0.5, 0.0], [0.1, 0.1, 0.8]])
    S, _ = normalised_statistic(np.array([0, 10]), np.zeros(10, np.int32), np.ones(10), beta, 0.1, 5)
    S0, _ = normalised_statistic(np.array([0, 1]), np.zeros(1, np.int32), np.array([10.0]), beta, 0.1, 5)
    np.testing.assert_allclose(S, S0, atol=1e-15)
    assert np.linalg.norm(S) <= 1 + 1e-12


@pytest.mark.parametrize("ptr,ids,cts,what", [
    ([0, 2], [0, 1], [1.0, -1.0], "count"),
    ([0, 2], [0, 1], [1.0, np.nan], "count"),
    ([0, 2], [0, 1], [np.inf, 1.0], "count"),
    ([0, 2, 1], [0, 1], [1.0, 1.0], "offsets"),
    ([0, 3], [0, 1], [1.0, 1.0], "offsets"),
    ([0, 2], [0, -1], [1.0, 1.0], "word id"),
    ([0, 2], [0, 3], [1.0, 1.0], "word id"),     # beyond the vocabulary: read and written out of bounds before
])
def test_bad_bags_of_words_are_refused_in_one_line(ptr, ids, cts, what):
    ptr, ids, cts = np.array(ptr), np.array(ids, dtype=np.int32), np.array(cts)
    beta = np.full((2, 3), 1 / 3)
    calls = [lambda: normalised_statistic(ptr, ids, cts, beta, 0.1, 3),
             lambda: normalised_cooccurrence_bow((ptr, ids, cts), np.arange(3), 3),
             lambda: document_frequency_bow((ptr, ids, cts), 3)]
    for call in calls:
        with pytest.raises(DPTopicError, match=what) as e:
            call()
        assert "\n" not in str(e.value)
