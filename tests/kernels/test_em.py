"""The compiled EM fixed point for s(Φ, d) against SciPy SLSQP and a NumPy reference."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

from dptopic.kernels.em import _em_step, document_statistic, max_doc_loglik


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


# ------------------------------------------------------------------------------ max document log-likelihood
def _np_em_step(words, counts, phi_wk, theta):
    P = phi_wk[words]                                       # n x K
    s = np.maximum(P @ theta, 1e-300)
    g = (counts / s) @ P
    tot = theta @ g
    if tot <= 0:
        return float(counts @ np.log(s)), theta.copy(), 0.0
    return float(counts @ np.log(s)), theta * g / tot, float(g.max() - tot)


@pytest.mark.parametrize("K", [1, 2, 6])
def test_em_step_matches_numpy(K):
    rng = np.random.default_rng(K)
    V = 8
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    phi_wk[1] = 0.0                                         # a word no topic emits
    for n in (0, 1, 5):
        words = rng.integers(0, V, n).astype(np.int64)
        counts = rng.integers(1, 4, n).astype(np.float64)
        theta = rng.dirichlet(np.ones(K))
        out, g = np.empty(K), np.empty(K)
        obj, gap = _em_step(words, counts, phi_wk, theta, out, g)
        w_obj, w_out, w_gap = _np_em_step(words, counts, phi_wk, theta)
        assert obj == pytest.approx(w_obj, rel=1e-12, abs=1e-12)
        assert gap == pytest.approx(w_gap, rel=1e-10, abs=1e-9)
        np.testing.assert_allclose(out, w_out, rtol=1e-12, atol=0)


@pytest.mark.parametrize("K", [1, 3, 7])
def test_max_doc_loglik_is_certified_by_a_numpy_gap(K):
    """The returned s is the log-likelihood at the returned θ̂, whose Frank–Wolfe gap (recomputed in NumPy) is
    at most tol, so no θ does better than s + tol; with max_iter = 1 it is the uniform θ. Empty rows give 0."""
    rng = np.random.default_rng(K + 10)
    D, V, tol = 12, 9, 1e-9
    X = rng.poisson(0.9, size=(D, V)).astype(float)
    X[0] = 0.0
    X[1] = 0.0
    X[1, 2] = 4.0                                           # one word
    indptr = np.concatenate([[0], np.cumsum((X > 0).sum(1))]).astype(np.int64)
    indices = np.nonzero(X)[1].astype(np.int64)
    counts = X[X > 0]
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.full(V, 0.5), size=K).T)
    s, theta, iters = max_doc_loglik(indptr, indices, counts, phi_wk, tol, 100_000)
    for d in range(D):
        w, c = indices[indptr[d]:indptr[d + 1]], counts[indptr[d]:indptr[d + 1]]
        obj, _, gap = _np_em_step(w, c, phi_wk, theta[d])
        assert s[d] == pytest.approx(obj, rel=1e-12, abs=1e-12) and gap <= tol * (1 + 1e-6) + 1e-12
        assert theta[d].min() >= 0 and theta[d].sum() == pytest.approx(1.0, abs=1e-12)
        for t in rng.dirichlet(np.ones(K), size=20):        # nothing in the simplex beats s + tol
            assert _np_em_step(w, c, phi_wk, t)[0] <= s[d] + tol + 1e-12
    assert s[0] == 0.0 and np.allclose(theta[0], 1 / K)
    s1, theta1, it1 = max_doc_loglik(indptr, indices, counts, phi_wk, tol, 1)
    assert np.all(it1 == 1) and np.allclose(theta1, 1 / K)
    np.testing.assert_allclose(s1, [_np_em_step(indices[indptr[d]:indptr[d + 1]], counts[indptr[d]:indptr[d + 1]],
                                                phi_wk, np.full(K, 1 / K))[0] for d in range(D)], rtol=1e-12)
