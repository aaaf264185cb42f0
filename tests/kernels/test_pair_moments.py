"""``dptopic.kernels.pair_moments``."""
import numpy as np
import pytest
import scipy.sparse as sp
from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow


def _canonical_and_messy(rng, D=40, V=25):
    """A random count matrix (canonical CSR) and the same counts as a messy CSR: every count split over 1-3 entries,
    explicit zeros added, each row's entries shuffled."""
    dense = rng.poisson(0.6, size=(D, V)).astype(np.float64)
    dense[3] = 0.0                                       # an empty document
    dense[7] = 0.0
    dense[7, 4] = 5.0                                    # one word, written below as a zero then its count
    X = sp.csr_matrix(dense)
    ptr, ids, cts = [0], [], []
    for d in range(D):
        row_ids, row_cts = [], []
        for w in np.flatnonzero(dense[d]):
            c = int(dense[d, w])
            parts = rng.multinomial(c, np.ones(k := int(rng.integers(1, 4))) / k)
            row_ids += [w] * k
            row_cts += list(parts.astype(float))         # a part may be 0: an explicit zero of a present word
        for w in rng.choice(V, 2, replace=False):        # explicit zeros, of present and absent words
            row_ids.append(int(w))
            row_cts.append(0.0)
        order = rng.permutation(len(row_ids))
        if d == 7:
            row_ids, row_cts, order = [4, 4], [0.0, 5.0], np.arange(2)
        ids += [row_ids[i] for i in order]
        cts += [row_cts[i] for i in order]
        ptr.append(len(ids))
    M = sp.csr_matrix((np.array(cts), np.array(ids, dtype=np.int32), np.array(ptr)), shape=(D, V))
    assert not M.has_canonical_format
    np.testing.assert_array_equal(M.toarray(), dense)
    return X, M


def _bow(X):
    return X.indptr.astype(np.int64), X.indices, X.data


def test_pair_moments_read_a_messy_csr_as_its_canonical_version():
    rng = np.random.default_rng(1)
    X, M = _canonical_and_messy(rng)
    V = X.shape[1]
    cols = np.arange(0, V, 2)
    for n_jobs in (1, 2):
        got = normalised_cooccurrence_bow(_bow(M), cols, V, n_jobs)
        np.testing.assert_allclose(got, normalised_cooccurrence_bow(_bow(X), cols, V, n_jobs), atol=1e-12)
        for doc in (False, True):
            np.testing.assert_allclose(
                document_frequency_bow(_bow(M), V, n_jobs, with_document=doc, with_counts=True),
                document_frequency_bow(_bow(X), V, n_jobs, with_document=doc, with_counts=True), atol=1e-12)
    # per document: Frobenius norm 1 (it was 1.96 for a zero entry of a word followed by its count, document 7)
    for d in range(M.shape[0]):
        Md = normalised_cooccurrence_bow(_bow(M[d]), np.arange(V), V)
        assert np.linalg.norm(Md) <= 1 + 1e-12
    M7 = normalised_cooccurrence_bow(_bow(M[7]), np.arange(V), V)
    assert np.linalg.norm(M7) == pytest.approx(1.0)
