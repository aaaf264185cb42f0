"""The compiled EM fixed point for s(Φ, d) against SciPy SLSQP and a NumPy reference."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from dptopic.kernels.em import document_statistic


def _slsqp(phi, words, counts):
    K = phi.shape[0]
    P = phi[:, words]

    def f(t):
        return -np.sum(counts * np.log(np.maximum(t @ P, 1e-300)))

    def jac(t):
        return -(P * (counts / np.maximum(t @ P, 1e-300))).sum(axis=1)

    r = minimize(f, np.full(K, 1 / K), jac=jac, method="SLSQP", bounds=[(0, 1)] * K,
                 constraints=[{"type": "eq", "fun": lambda t: t.sum() - 1, "jac": lambda t: np.ones(K)}],
                 options=dict(ftol=1e-15, maxiter=2000))
    return -r.fun, r.x


@pytest.mark.parametrize("K,conc", [(3, 1.0), (6, 0.3), (10, 1.0)])
def test_em_matches_slsqp(K, conc):
    rng = np.random.default_rng(K)
    V, D = 40, 25
    phi = rng.dirichlet(np.full(V, conc), size=K)
    X = sp.csr_matrix(rng.poisson(0.8, size=(D, V)))
    s, theta = document_statistic(phi, X, tol=1e-10, max_iter=100000, return_theta=True)
    assert np.all(s <= 0)
    np.testing.assert_allclose(theta.sum(axis=1), 1.0, atol=1e-12)
    for d in range(D):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        if hi == lo:
            assert s[d] == 0.0
            continue
        ref, _ = _slsqp(phi, X.indices[lo:hi], X.data[lo:hi].astype(float))
        assert s[d] >= ref - 1e-6  # EM is never worse than SLSQP ...
        assert abs(s[d] - ref) <= 1e-6 * max(1.0, abs(ref))  # ... and agrees with it
        # the statistic is the log-likelihood at the returned theta (NumPy reference)
        direct = np.sum(X.data[lo:hi] * np.log(theta[d] @ phi[:, X.indices[lo:hi]]))
        assert abs(direct - s[d]) < 1e-9 * abs(s[d])


def test_zero_probabilities_are_floored_and_unnormalised_rows_accepted():
    phi = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    X = sp.csr_matrix(np.array([[2, 0, 0], [0, 0, 3], [1, 1, 1]]))
    s = document_statistic(phi * 7.0, X, tol=1e-12)  # scaling rows does not change Phi
    assert s[0] == pytest.approx(2 * np.log(0.5))
    assert s[1] == pytest.approx(0.0, abs=1e-9)
    # third document: theta = (2/3, 1/3) gives 2 log(1/3) + log(1/3)
    assert s[2] == pytest.approx(3 * np.log(1 / 3), abs=1e-8)
    # a word that no topic can emit costs log(1e-300) instead of -inf
    phi2 = np.array([[1.0, 0.0], [1.0, 0.0]])
    s2 = document_statistic(phi2, sp.csr_matrix(np.array([[0, 1]])), tol=1e-9)
    assert np.isfinite(s2[0]) and s2[0] == pytest.approx(np.log(1e-300))
