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
