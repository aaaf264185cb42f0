"""Variational Bayes kernels for LDA (Hoffman, Blei & Bach 2010, "Online learning for LDA").

Pure functions over CSR bags of words: ``doc_ptr`` (D+1), ``word_ids`` and ``counts``
(one entry per distinct word of a document). Topic-side quantities are passed
word-major (``V × K``) so that a document's words are contiguous rows.

* :func:`vb_estep` -- the per-document E-step (Hoffman et al. Alg. 2, lines 5-9): the
  fixed point of ``γ_dk = α + Σ_v n_dv φ_dvk`` with ``φ_dvk ∝ exp(E[log θ_dk] + E[log β_kv])``.
  It returns ``γ`` and the (optionally per-document clipped) expected sufficient
  statistics ``Σ_d c_d · s_d`` **before** the final elementwise product with
  ``exp(E[log β])`` (Hoffman's factorisation), plus every document's Frobenius norm
  ``||s_d||_F`` -- what Park et al. (2016, eq. 9) clip.
* :func:`doc_elbo` -- each document's share of the variational lower bound, the
  numerator of the per-word perplexity bound (Hoffman et al. 2010, eq. 16).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit
from scipy.special import psi

from ._bow import canonical_bow, segment_sums

# Reassociation lets LLVM vectorise the sums over topics (~2x); no flag that assumes finite values
# ('nnan', 'ninf'), since clip may be +inf.
_FAST = {"reassoc", "contract", "arcp", "nsz"}


@njit(cache=True, nogil=True)
def digamma(x):
    """ψ(x) for x > 0: recurrence up to x ≥ 6, then the asymptotic (Stirling) series."""
    r = 0.0
    while x < 6.0:
        r -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    # ψ(x) ~ ln x − 1/(2x) − Σ B_2n / (2n x^{2n})
    t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132)))))
    return r + math.log(x) - 0.5 / x + t


def dirichlet_expectation(lam: np.ndarray) -> np.ndarray:
    """Row-wise ``E[log β] = ψ(λ) − ψ(Σ_v λ_v)`` for a Dirichlet with parameters ``λ`` (K×V)."""
    return psi(lam) - psi(lam.sum(axis=1, keepdims=True))


@njit(cache=True, nogil=True, fastmath=_FAST)
def _exp_elog_theta(g, out):
    K = g.shape[0]
    s = 0.0
    for k in range(K):
        s += g[k]
    ps = digamma(s)
    for k in range(K):
        out[k] = math.exp(digamma(g[k]) - ps)


@njit(cache=True, nogil=True, inline="always", fastmath=_FAST)
def _phi_norms(word_ids, a, exp_elog_beta_vk, et, pn):
    """pn[i] = Σ_k exp(E[log θ_k]) exp(E[log β_k,w_i]): the normaliser of φ for the document's i-th word."""
    K = et.shape[0]
    for i in range(pn.shape[0]):
        row = exp_elog_beta_vk[word_ids[a + i]]
        s = 1e-100
        for k in range(K):
            s += et[k] * row[k]
        pn[i] = s


@njit(cache=True, nogil=True, fastmath=_FAST)
def vb_estep(doc_ptr, word_ids, counts, exp_elog_beta_vk, alpha, gamma, max_iter, tol, clip, sstats_vk, norms):
    """Run the E-step on every document; update ``gamma`` (D×K) in place.

    ``sstats_vk`` (V×K) receives ``Σ_d c_d · (n_dv / φnorm_dv) · exp(E[log θ_dk])``;
    multiply it elementwise by ``exp_elog_beta_vk`` to obtain the expected sufficient
    statistics ``Σ_d c_d s_d``. ``c_d = min(1, clip / ||s_d||_F)`` (``clip = inf``: no
    clipping); ``norms[d]`` receives ``||s_d||_F`` before clipping. Returns the number
    of E-step iterations summed over documents.
    """
    D = doc_ptr.shape[0] - 1
    K = exp_elog_beta_vk.shape[1]
    et = np.empty(K)
    acc = np.empty(K)
    last = np.empty(K)
    total_it = 0
    for d in range(D):
        a, b = doc_ptr[d], doc_ptr[d + 1]
        g = gamma[d]
        if b == a:
            for k in range(K):
                g[k] = alpha
            norms[d] = 0.0
            continue
        n = b - a
        pn = np.empty(n)
        _exp_elog_theta(g, et)
        _phi_norms(word_ids, a, exp_elog_beta_vk, et, pn)
        for it in range(max_iter):
            total_it += 1
            for k in range(K):
                last[k] = g[k]
                acc[k] = 0.0
            for i in range(n):
                row = exp_elog_beta_vk[word_ids[a + i]]
                w = counts[a + i] / pn[i]
                for k in range(K):
                    acc[k] += w * row[k]
            for k in range(K):
                g[k] = alpha + et[k] * acc[k]
            _exp_elog_theta(g, et)
            _phi_norms(word_ids, a, exp_elog_beta_vk, et, pn)
            change = 0.0
            for k in range(K):
                change += abs(g[k] - last[k])
            if change / K < tol:
                break
        # ||s_d||_F^2 = Σ_v (n_dv/φnorm_v)^2 Σ_k (exp E[log θ_dk] · exp E[log β_kv])^2
        sq = 0.0
        for i in range(n):
            row = exp_elog_beta_vk[word_ids[a + i]]
            w = counts[a + i] / pn[i]
            t = 0.0
            for k in range(K):
                x = et[k] * row[k]
                t += x * x
            sq += w * w * t
        nrm = math.sqrt(sq)
        norms[d] = nrm
        c = 1.0
        if nrm > clip:
            c = clip / nrm
        for i in range(n):
            v = word_ids[a + i]
            w = c * counts[a + i] / pn[i]
            for k in range(K):
                sstats_vk[v, k] += w * et[k]
    return total_it


@njit(cache=True, nogil=True)
def doc_elbo(doc_ptr, word_ids, counts, elog_beta_vk, alpha, gamma, out):
    """``out[d]`` = E_q[log p(n_d, θ_d, z_d | α, β)] − E_q[log q(θ_d, z_d)] with the optimal φ
    (Hoffman et al. 2010, eq. 16, document terms; ``E[log β]`` from the topic posterior)."""
    D = doc_ptr.shape[0] - 1
    K = gamma.shape[1]
    elt = np.empty(K)
    tmp = np.empty(K)
    lg_alpha = math.lgamma(alpha)
    lg_kalpha = math.lgamma(K * alpha)
    for d in range(D):
        g = gamma[d]
        s = 0.0
        for k in range(K):
            s += g[k]
        ps = digamma(s)
        for k in range(K):
            elt[k] = digamma(g[k]) - ps
        score = 0.0
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            row = elog_beta_vk[word_ids[i]]
            m = -np.inf
            for k in range(K):
                tmp[k] = elt[k] + row[k]
                if tmp[k] > m:
                    m = tmp[k]
            acc = 0.0
            for k in range(K):
                acc += math.exp(tmp[k] - m)
            score += counts[i] * (m + math.log(acc))
        for k in range(K):
            score += (alpha - g[k]) * elt[k] + math.lgamma(g[k]) - lg_alpha
        score += lg_kalpha - math.lgamma(s)
        out[d] = score


def gather_rows(indptr, indices, data, rows, vocab_size=None):
    """The CSR sub-matrix of ``rows`` (in that order) as ``(doc_ptr, word_ids, counts)``, one entry per distinct word
    of each document (:func:`vb_estep`'s norm ``||s_d||_F``, which the private trainer clips, is summed over entries):
    a matrix whose rows repeat a word or hold explicit zeros gives its canonical copy
    (:func:`~dptopic.kernels._bow.canonical_bow`; ``vocab_size``, when given, bounds the word ids)."""
    rows = np.asarray(rows, dtype=np.int64)
    starts, lens = indptr[rows], indptr[rows + 1] - indptr[rows]
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    pos = np.repeat(starts - ptr[:-1], lens) + np.arange(ptr[-1])
    return canonical_bow(ptr, indices[pos], data[pos].astype(np.float64), vocab_size)


def cap_lengths(doc_ptr, counts, max_len: int, rng: np.random.Generator) -> np.ndarray:
    """Counts after keeping, in each document longer than ``max_len`` tokens, ``max_len`` of its
    tokens drawn uniformly without replacement (Park et al. 2016, Sec. 3: "randomly selecting
    N words"); shorter documents are unchanged. A multivariate hypergeometric draw on the
    document's counts is exactly such a draw."""
    out = counts.copy()
    lens = segment_sums(counts.astype(np.int64), doc_ptr)
    for d in np.flatnonzero(lens > max_len):
        a, b = doc_ptr[d], doc_ptr[d + 1]
        out[a:b] = rng.multivariate_hypergeometric(counts[a:b].astype(np.int64), max_len)
    return out
