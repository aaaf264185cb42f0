"""Maximum document log-likelihood over θ with Φ fixed, by the EM fixed point for mixture weights.

For a document ``d`` with word counts ``c_w`` and ``n = Σ_w c_w``, the statistic of
Manzonelli et al. (2024, eq. 3) is

    s(Φ, d) = max_{θ ∈ simplex} Σ_w c_w log Σ_k θ_k Φ_{k,w}.

The objective is concave in θ. The EM update ``θ_k ← θ_k g_k / n`` with the gradient
``g_k = Σ_w c_w Φ_{k,w} / p_w`` (``p_w = Σ_k θ_k Φ_{k,w}``) ascends monotonically
(accelerated here by SQUAREM, keeping only EM images so the ascent stays monotone), and
since ``θ·g = n`` the Frank–Wolfe gap ``max_k g_k − n`` bounds the distance to the
optimum from above (concavity). The kernel stops when that gap is below ``tol``, so the
returned value is certified within ``tol`` of the maximum. Probabilities are floored
at ``1e-300`` so that a private Φ with zero entries gives a finite value.
"""
from __future__ import annotations

import numpy as np

from ._jit import njit

FLOOR = 1e-300


@njit(cache=True, nogil=True)
def _em_step(words, counts, phi_wk, theta, out, g):
    """One EM map ``out = M(theta)``; returns ``(objective at theta, Frank–Wolfe gap at theta)``."""
    K = phi_wk.shape[1]
    obj = 0.0
    for k in range(K):
        g[k] = 0.0
    for i in range(words.shape[0]):
        w = words[i]
        s = 0.0
        for k in range(K):
            s += theta[k] * phi_wk[w, k]
        if s < FLOOR:
            s = FLOOR
        obj += counts[i] * np.log(s)
        r = counts[i] / s
        for k in range(K):
            g[k] += r * phi_wk[w, k]
    gmax = g[0]
    tot = 0.0
    for k in range(K):
        if g[k] > gmax:
            gmax = g[k]
        tot += theta[k] * g[k]
    if tot <= 0.0:  # no topic can emit any word of the document: every θ is optimal
        for k in range(K):
            out[k] = theta[k]
        return obj, 0.0
    for k in range(K):
        out[k] = theta[k] * g[k] / tot
    return obj, gmax - tot


@njit(cache=True, nogil=True)
def _one_doc(words, counts, phi_wk, theta, work, g, tol, max_iter):
    """Maximise over θ with SQUAREM-accelerated EM (Varadhan & Roland 2008, scheme S3).

    Every accepted point is an EM image, so the objective never decreases; the
    stopping rule is the certified Frank–Wolfe gap."""
    K = phi_wk.shape[1]
    t1, t2, r, v, tn = work[0], work[1], work[2], work[3], work[4]
    for k in range(K):
        theta[k] = 1.0 / K
    obj = 0.0
    it = 0
    while True:
        obj, gap = _em_step(words, counts, phi_wk, theta, t1, g)
        it += 1
        if gap <= tol or it >= max_iter:
            break
        _em_step(words, counts, phi_wk, t1, t2, g)
        it += 1
        rr = 0.0
        vv = 0.0
        for k in range(K):
            r[k] = t1[k] - theta[k]
            v[k] = t2[k] - t1[k] - r[k]
            rr += r[k] * r[k]
            vv += v[k] * v[k]
        step = -np.sqrt(rr / vv) if vv > 0 else -1.0
        if step > -1.0:
            step = -1.0
        tot = 0.0
        for k in range(K):
            x = theta[k] - 2.0 * step * r[k] + step * step * v[k]
            if x < 0.01 * t2[k]:  # stay inside the simplex: EM cannot revive a zero weight
                x = 0.01 * t2[k]
            tn[k] = x
            tot += x
        o_ext = -np.inf
        if tot > 0:
            for k in range(K):
                tn[k] /= tot
            o_ext, _ = _em_step(words, counts, phi_wk, tn, r, g)  # r <- M(extrapolated point)
            it += 1
        o2, _ = _em_step(words, counts, phi_wk, t2, v, g)  # v <- M(t2); o2 = f(t2)
        if o_ext >= o2:
            for k in range(K):
                theta[k] = r[k]
        else:
            for k in range(K):
                theta[k] = v[k]
    return obj, it


@njit(cache=True, nogil=True)
def max_doc_loglik(indptr, indices, counts, phi_wk, tol, max_iter):
    """For every row of a CSR count matrix: ``(s, θ̂, iterations)``.

    ``phi_wk`` is Φ transposed (V × K, rows need not be normalised, entries ≥ 0);
    ``tol`` bounds ``s* − s`` (the Frank–Wolfe gap at the returned θ̂).
    """
    D = indptr.shape[0] - 1
    K = phi_wk.shape[1]
    out = np.empty(D)
    thetas = np.empty((D, K))
    iters = np.empty(D, dtype=np.int64)
    g = np.empty(K)
    work = np.empty((5, K))
    theta = np.empty(K)
    for d in range(D):
        a, b = indptr[d], indptr[d + 1]
        obj, it = _one_doc(indices[a:b], counts[a:b], phi_wk, theta, work, g, tol, max_iter)
        out[d] = obj
        iters[d] = it
        for k in range(K):
            thetas[d, k] = theta[k]
    return out, thetas, iters


def document_statistic(components, X, tol: float = 1e-7, max_iter: int = 5000, return_theta: bool = False):
    """s(Φ, d) for every row of the document–term count matrix ``X`` (scipy CSR, D × V).

    ``components`` is Φ (K × V); rows are normalised here (a scikit-learn ``components_``
    holds unnormalised pseudo-counts). Returns ``s`` (length D), and θ̂ (D × K) when asked.
    """
    phi = np.asarray(components, dtype=np.float64)
    phi = np.maximum(phi, 0.0)
    sums = phi.sum(axis=1, keepdims=True)
    sums[sums == 0] = 1.0
    phi_wk = np.ascontiguousarray((phi / sums).T)
    s, theta, _ = max_doc_loglik(X.indptr.astype(np.int64), X.indices.astype(np.int64),
                                 X.data.astype(np.float64), phi_wk, float(tol), int(max_iter))
    return (s, theta) if return_theta else s
