"""The document-level E-step kernel (:mod:`dptopic.kernels.docdp`) and its NumPy reference
(:mod:`dptopic.models._docdp_math`): the bound ``||S_d||_F <= 1`` the mechanism's sensitivity rests on holds for any
finite input, whatever its callers check, and the two agree."""
import numpy as np
import pytest
import scipy.sparse as sp

from dptopic.kernels.docdp import normalised_statistic as kernel_statistic
from dptopic.models._docdp_math import normalised_statistic as reference_statistic

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
