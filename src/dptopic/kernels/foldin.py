"""Fold-in inference of θ with Φ fixed (Griffiths & Steyvers 2004) and per-token log-likelihoods."""
from __future__ import annotations

import numpy as np

from ._jit import njit
from .rng import document_state, next_uniform


@njit(cache=True, nogil=True)
def fold_in(word_ids, doc_ptr, phi_wk, alpha, n_iter, burn_in, state):
    """Return θ (D×K): CGS on each document with Φ frozen, averaged after ``burn_in`` sweeps.

    ``state`` is a base state: each document draws from its own stream, :func:`~dptopic.kernels.rng.document_state`
    of the base and its words, so a document's θ does not depend on the other documents of the call."""
    K = phi_wk.shape[1]
    D = doc_ptr.shape[0] - 1
    theta = np.zeros((D, K))
    c = np.zeros(K)
    p = np.empty(K)
    for d in range(D):
        a, b = doc_ptr[d], doc_ptr[d + 1]
        n = b - a
        if n == 0:
            for k in range(K):
                theta[d, k] = 1.0 / K
            continue
        zd = np.empty(n, dtype=np.int32)
        c[:] = 0.0
        ds = document_state(state, word_ids, a, b)
        for i in range(n):
            k = min(int(next_uniform(ds) * K), K - 1)
            zd[i] = k
            c[k] += 1
        kept = 0
        for it in range(n_iter):
            for i in range(n):
                w = word_ids[a + i]
                c[zd[i]] -= 1
                total = 0.0
                for k in range(K):
                    total += phi_wk[w, k] * (c[k] + alpha)
                    p[k] = total
                u = next_uniform(ds) * total
                k = 0
                while k < K - 1 and p[k] <= u:
                    k += 1
                zd[i] = k
                c[k] += 1
            if it >= burn_in:
                kept += 1
                norm = 1.0 / (n + K * alpha)
                for k in range(K):
                    theta[d, k] += (c[k] + alpha) * norm
        for k in range(K):
            theta[d, k] /= kept
    return theta


@njit(cache=True, nogil=True)
def token_log_likelihood(word_ids, doc_ptr, theta, phi_wk):
    """Σ_i log Σ_k θ_dk φ_k,w_i over all tokens, and the token count."""
    K = phi_wk.shape[1]
    D = doc_ptr.shape[0] - 1
    ll = 0.0
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            s = 0.0
            for k in range(K):
                s += theta[d, k] * phi_wk[w, k]
            ll += np.log(max(s, 1e-300))
    return ll, doc_ptr[D] - doc_ptr[0]
