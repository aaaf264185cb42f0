"""``dptopic.moments.document_statistics``."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dptopic.corpus import lda_corpus
from dptopic.moments import document_frequency_statistic, normalised_cooccurrence
from dptopic.moments.document_statistics import per_document_cooccurrence

V = 10


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.integers(0, 30), min_size=V, max_size=V), min_size=1, max_size=5),
       st.lists(st.integers(0, 60), min_size=V, max_size=V))
def test_adding_a_document_moves_each_statistic_by_at_most_one(docs, extra):
    X = sp.csr_matrix(np.array(docs, float))
    Xp = sp.vstack([X, sp.csr_matrix(np.array(extra, float)[None, :])]).tocsr()
    assert np.linalg.norm(normalised_cooccurrence(Xp) - normalised_cooccurrence(X)) <= 1 + 1e-9
    assert np.linalg.norm(document_frequency_statistic(Xp) - document_frequency_statistic(X)) <= 1 + 1e-9
    assert np.linalg.norm(document_frequency_statistic(Xp, with_document=True)
                          - document_frequency_statistic(X, with_document=True)) <= 1 + 1e-9
    for doc in (False, True):
        assert np.linalg.norm(document_frequency_statistic(Xp, with_document=doc, with_counts=True)
                              - document_frequency_statistic(X, with_document=doc, with_counts=True)) <= 1 + 1e-9
    cols = [0, 3, 4, 9]
    assert np.linalg.norm(normalised_cooccurrence(Xp, cols) - normalised_cooccurrence(X, cols)) <= 1 + 1e-9


def test_cooccurrence_against_a_direct_reference():
    rng = np.random.default_rng(0)
    X = rng.poisson(0.8, size=(7, V)).astype(float)
    ref = np.zeros((V, V))
    for c in X:
        M = np.outer(c, c) - np.diag(c)
        n = np.linalg.norm(M)
        if n > 0:
            ref += M / n
    np.testing.assert_allclose(normalised_cooccurrence(sp.csr_matrix(X)), ref, atol=1e-12)
    # a long document weighs no more than a short one: its term has Frobenius norm exactly 1
    long = np.zeros(V)
    long[:3] = [50, 40, 30]
    assert np.linalg.norm(per_document_cooccurrence(long)) == pytest.approx(1.0)
    # without the normalisation the bound breaks
    assert np.linalg.norm(np.outer(long, long) - np.diag(long)) > 1


def test_compiled_statistics_match_the_numpy_reference():
    from dptopic.kernels.docdp import tokens_to_bow
    from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow
    c = lda_corpus(n_docs=400, vocab_size=60, n_topics=3, doc_length=("poisson", 30), seed=3).corpus
    X = c.to_bow()
    bow = tokens_to_bow(c.doc_ptr, c.word_ids, 60)
    cols = np.arange(0, 60, 3)
    for n_jobs in (1, 3):
        np.testing.assert_allclose(normalised_cooccurrence_bow(bow, cols, 60, n_jobs),
                                   normalised_cooccurrence(X, cols), atol=1e-10)
        np.testing.assert_allclose(document_frequency_bow(bow, 60, n_jobs), document_frequency_statistic(X),
                                   atol=1e-10)
        np.testing.assert_allclose(document_frequency_bow(bow, 60, n_jobs, with_document=True),
                                   document_frequency_statistic(X, with_document=True), atol=1e-10)
        for doc in (False, True):
            np.testing.assert_allclose(document_frequency_bow(bow, 60, n_jobs, with_document=doc, with_counts=True),
                                       document_frequency_statistic(X, with_document=doc, with_counts=True),
                                       atol=1e-10)


def test_presence_and_count_statistic_by_hand():
    # one document, counts (2, 1, 0): presence (1, 1, 0) / sqrt(2) [with the document entry: (1, 1, 0, 1) / sqrt(3)],
    # counts (2, 1, 0) / sqrt(5); both parts scaled by 1/sqrt(2)
    X = sp.csr_matrix(np.array([[2.0, 1.0, 0.0]]))
    got = document_frequency_statistic(X, with_counts=True)
    want = np.array([1 / np.sqrt(2), 1 / np.sqrt(2), 0, 2 / np.sqrt(5), 1 / np.sqrt(5), 0]) / np.sqrt(2)
    np.testing.assert_allclose(got, want)
    assert np.linalg.norm(got) == pytest.approx(1.0)
    got = document_frequency_statistic(X, with_document=True, with_counts=True)
    want = np.array([1 / np.sqrt(3), 1 / np.sqrt(3), 0, 1 / np.sqrt(3), 2 / np.sqrt(5), 1 / np.sqrt(5), 0]) / np.sqrt(2)
    np.testing.assert_allclose(got, want)


def test_document_entry_estimates_the_share_of_documents_holding_a_word():
    # every document has 4 distinct words; word 0 is in all of them, word 1 in a quarter
    X = np.zeros((400, 8))
    X[:, 0] = 1
    X[:100, 1] = 1
    X[100:, 2] = 1
    X[:, 3] = X[:, 4] = 1
    X[100:, 5] = 0
    stat = document_frequency_statistic(sp.csr_matrix(X), with_document=True)
    assert stat[0] / stat[-1] == pytest.approx(1.0) and stat[1] / stat[-1] == pytest.approx(0.25)
    # the exact per-document vector: presence and a last 1, divided by sqrt(m + 1)
    np.testing.assert_allclose(document_frequency_statistic(sp.csr_matrix(X[:1]), with_document=True),
                               np.r_[X[0], 1.0] / np.sqrt(5.0))
