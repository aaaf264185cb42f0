"""Issue 9: online VB (Hoffman et al. 2010) and private SVI (Park et al. 2016)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import gammaln, psi

from dptopic.kernels.vb import cap_lengths, digamma, dirichlet_expectation, doc_elbo, gather_rows, vb_estep


# ----------------------------------------------------------------------------- kernels
def _np_estep(ptr, ids, cts, lam, alpha, gamma0, max_iter, tol, clip):
    """Plain NumPy E-step with explicit φ (no factorisation), for one batch."""
    K, V = lam.shape
    eb = np.exp(dirichlet_expectation(lam))
    gamma = gamma0.copy()
    sstats = np.zeros((K, V))
    norms = np.zeros(len(ptr) - 1)
    for d in range(len(ptr) - 1):
        w, n = ids[ptr[d]:ptr[d + 1]], cts[ptr[d]:ptr[d + 1]]
        if len(w) == 0:
            gamma[d] = alpha
            continue
        g = gamma[d]
        for _ in range(max_iter):
            last = g.copy()
            et = np.exp(psi(g) - psi(g.sum()))
            phi = et[:, None] * eb[:, w]
            phi /= phi.sum(axis=0, keepdims=True)
            g = alpha + phi @ n
            if np.mean(np.abs(g - last)) < tol:
                break
        et = np.exp(psi(g) - psi(g.sum()))
        phi = et[:, None] * eb[:, w]
        phi /= phi.sum(axis=0, keepdims=True)
        s = phi * n                                   # K × N_d: s_d restricted to the document's words
        norms[d] = np.linalg.norm(s)
        c = min(1.0, clip / norms[d])
        np.add.at(sstats.T, w, (c * s).T)
        gamma[d] = g
    return gamma, sstats, norms


def _batch(rng, D=12, V=30, max_len=40):
    docs = [rng.integers(0, V, size=rng.integers(0, max_len)) for _ in range(D)]
    ptr, ids, cts = [0], [], []
    for doc in docs:
        u, c = np.unique(doc, return_counts=True)
        ids += list(u)
        cts += list(c)
        ptr.append(len(ids))
    return np.array(ptr, np.int64), np.array(ids, np.int64), np.array(cts, np.float64)


def test_digamma_matches_scipy():
    xs = np.concatenate([np.logspace(-4, 3, 200), [0.5, 1.0, 5.999, 6.0, 1e6]])
    ours = np.array([digamma(x) for x in xs])
    np.testing.assert_allclose(ours, psi(xs), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("clip", [np.inf, 3.0])
def test_estep_matches_numpy_reference(clip):
    rng = np.random.default_rng(1)
    ptr, ids, cts = _batch(rng)
    K, V = 5, 30
    lam = rng.gamma(100.0, 0.01, size=(K, V)) + rng.random((K, V)) * 5
    gamma0 = rng.gamma(100.0, 0.01, size=(len(ptr) - 1, K))
    eb_vk = np.ascontiguousarray(np.exp(dirichlet_expectation(lam)).T)
    gamma = gamma0.copy()
    ss = np.zeros((V, K))
    norms = np.zeros(len(ptr) - 1)
    vb_estep(ptr, ids, cts, eb_vk, 0.2, gamma, 100, 1e-6, clip, ss, norms)
    ref_g, ref_s, ref_n = _np_estep(ptr, ids, cts, lam, 0.2, gamma0, 100, 1e-6, clip)
    np.testing.assert_allclose(gamma, ref_g, rtol=1e-9)
    np.testing.assert_allclose((ss * eb_vk).T, ref_s, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(norms, ref_n, rtol=1e-9)
    if np.isfinite(clip):
        assert (norms > clip).any() and (norms < clip).any()


def test_clipping_bounds_every_document():
    rng = np.random.default_rng(2)
    ptr, ids, cts = _batch(rng, D=20, max_len=80)
    K, V = 4, 30
    eb_vk = np.ascontiguousarray(np.exp(dirichlet_expectation(rng.gamma(1.0, 1.0, size=(K, V)))).T)
    clip = 2.5
    for d in range(len(ptr) - 1):  # each document alone: its contribution has norm <= clip
        sub = gather_rows(ptr, ids, cts, [d])
        ss = np.zeros((V, K))
        norms = np.zeros(1)
        vb_estep(*sub, eb_vk, 0.1, np.ones((1, K)), 50, 1e-4, clip, ss, norms)
        contrib = np.linalg.norm(ss * eb_vk)
        assert contrib <= clip * (1 + 1e-9)
        assert contrib == pytest.approx(min(norms[0], clip), rel=1e-9)
        assert norms[0] <= cts[ptr[d]:ptr[d + 1]].sum() + 1e-9  # ||s_d||_F <= N_d


def test_doc_elbo_matches_numpy_reference():
    rng = np.random.default_rng(3)
    ptr, ids, cts = _batch(rng)
    K, V, alpha = 5, 30, 0.3
    lam = rng.gamma(2.0, 1.0, size=(K, V))
    gamma = rng.gamma(2.0, 1.0, size=(len(ptr) - 1, K))
    elb = dirichlet_expectation(lam)
    out = np.zeros(len(ptr) - 1)
    doc_elbo(ptr, ids, cts, np.ascontiguousarray(elb.T), alpha, gamma, out)
    for d in range(len(ptr) - 1):
        w, n = ids[ptr[d]:ptr[d + 1]], cts[ptr[d]:ptr[d + 1]]
        elt = psi(gamma[d]) - psi(gamma[d].sum())
        from scipy.special import logsumexp
        ref = float(n @ logsumexp(elt[:, None] + elb[:, w], axis=0)) if len(w) else 0.0
        ref += np.sum((alpha - gamma[d]) * elt + gammaln(gamma[d]) - gammaln(alpha))
        ref += gammaln(K * alpha) - gammaln(gamma[d].sum())
        assert out[d] == pytest.approx(ref, rel=1e-10)


def test_gather_rows_and_cap_lengths():
    rng = np.random.default_rng(4)
    ptr, ids, cts = _batch(rng, D=10, max_len=60)
    rows = [3, 0, 7, 7]
    p, i, c = gather_rows(ptr, ids, cts, rows)
    for j, r in enumerate(rows):
        np.testing.assert_array_equal(i[p[j]:p[j + 1]], ids[ptr[r]:ptr[r + 1]])
        np.testing.assert_array_equal(c[p[j]:p[j + 1]], cts[ptr[r]:ptr[r + 1]])
    capped = cap_lengths(ptr, cts, 20, rng)
    for d in range(len(ptr) - 1):
        orig, new = cts[ptr[d]:ptr[d + 1]], capped[ptr[d]:ptr[d + 1]]
        assert new.sum() == min(orig.sum(), 20) and np.all(new <= orig) and np.all(new >= 0)
