"""``dptopic.kernels.pair_moments``."""
import numpy as np
import pytest

from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow
from helpers import canonical_and_messy_csr, csr_arrays


def test_pair_moments_read_a_messy_csr_as_its_canonical_version():
    rng = np.random.default_rng(1)
    X, M = canonical_and_messy_csr(rng)
    V = X.shape[1]
    cols = np.arange(0, V, 2)
    for n_jobs in (1, 2):
        got = normalised_cooccurrence_bow(csr_arrays(M), cols, V, n_jobs)
        np.testing.assert_allclose(got, normalised_cooccurrence_bow(csr_arrays(X), cols, V, n_jobs), atol=1e-12)
        for doc in (False, True):
            np.testing.assert_allclose(
                document_frequency_bow(csr_arrays(M), V, n_jobs, with_document=doc, with_counts=True),
                document_frequency_bow(csr_arrays(X), V, n_jobs, with_document=doc, with_counts=True), atol=1e-12)
    # per document: Frobenius norm 1 (it was 1.96 for a zero entry of a word followed by its count, document 7)
    for d in range(M.shape[0]):
        Md = normalised_cooccurrence_bow(csr_arrays(M[d]), np.arange(V), V)
        assert np.linalg.norm(Md) <= 1 + 1e-12
    M7 = normalised_cooccurrence_bow(csr_arrays(M[7]), np.arange(V), V)
    assert np.linalg.norm(M7) == pytest.approx(1.0)


def test_grouped_columns_count_a_group_as_the_sum_of_its_words():
    """With ``groups`` a document's count of a group is the sum of its words' counts: the statistic is the NumPy
    reference's over the grouped counts, each document's term still of Frobenius norm at most 1, one thread or two,
    and the user-level kernel agrees."""
    import scipy.sparse as sp

    from dptopic.kernels.user_level import user_cooccurrence_bow
    from dptopic.moments import normalised_cooccurrence

    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(0.4, size=(60, 30)).astype(float))
    cols = np.arange(2, 30)
    groups = rng.integers(0, 9, size=len(cols))
    groups[:9] = np.arange(9)                     # every group used
    C = sp.csr_matrix((np.ones(len(cols)), (cols, groups)), shape=(30, 9))
    want = normalised_cooccurrence(X @ C)
    for n_jobs in (1, 2):
        np.testing.assert_allclose(normalised_cooccurrence_bow(csr_arrays(X), cols, 30, n_jobs, groups=groups),
                                   want, atol=1e-10)
    for d in range(X.shape[0]):
        assert np.linalg.norm(normalised_cooccurrence_bow(csr_arrays(X[d]), cols, 30, groups=groups)) <= 1 + 1e-12
    gptr = np.arange(0, 61, 3)                    # 20 people of 3 documents each
    user = user_cooccurrence_bow(csr_arrays(X), gptr, cols, 30, 1, groups=groups)
    assert user.shape == (9, 9)
    for p in range(20):
        one = user_cooccurrence_bow(csr_arrays(X[gptr[p]:gptr[p + 1]]), np.array([0, 3]), cols, 30, groups=groups)
        assert np.linalg.norm(one) <= 1 + 1e-12
    with pytest.raises(ValueError, match="one group"):
        normalised_cooccurrence_bow(csr_arrays(X), cols, 30, groups=groups[:-1])


def test_rectangular_statistic_matches_numpy_and_each_document_moves_it_by_at_most_one():
    """The rectangular statistic (rows: words; columns: words or groups of words) is the NumPy reference's, one
    thread or two; each document's term has Frobenius norm 1 (or 0), whatever its length; a token is never paired with
    itself (every cell non-negative)."""
    import scipy.sparse as sp

    from dptopic.kernels.pair_moments import normalised_rectangular_bow
    from dptopic.moments.document_statistics import normalised_rectangular

    rng = np.random.default_rng(11)
    dense = rng.poisson(0.5, size=(80, 40)).astype(float)
    dense[3, 5] = 40.0                               # a long document
    X = sp.csr_matrix(dense)
    rows = np.array([0, 2, 5, 7, 11, 30, 39])
    cols = np.array([0, 1, 2, 3, 20, 21, 22, 23, 24, 38])
    groups = np.array([0, 1, 2, 3, 4, 4, 5, 5, 5, 4])
    want = normalised_rectangular(X, rows, cols, groups)
    assert want.shape == (7, 6) and want.min() >= -1e-12
    for n_jobs in (1, 2):
        np.testing.assert_allclose(normalised_rectangular_bow(csr_arrays(X), rows, cols, 40, n_jobs, groups=groups),
                                   want, atol=1e-10)
    norms = [np.linalg.norm(normalised_rectangular_bow(csr_arrays(X[d]), rows, cols, 40, groups=groups))
             for d in range(X.shape[0])]
    assert max(norms) <= 1 + 1e-12 and sum(abs(n - 1) < 1e-9 for n in norms) > 40
    # a document of one token pairs nothing: no term
    one = sp.csr_matrix(([1.0], ([0], [5])), shape=(1, 40))
    assert not normalised_rectangular_bow(csr_arrays(one), rows, cols, 40, groups=groups).any()
    # without groups, each column word is its own column; a row word that is a column pairs with its other tokens
    two = sp.csr_matrix(([2.0], ([0], [2])), shape=(1, 40))
    np.testing.assert_allclose(normalised_rectangular_bow(csr_arrays(two), [2], [2], 40), [[1.0]])
