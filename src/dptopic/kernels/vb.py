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
from scipy.special import psi

from ._bow import canonical_bow, segment_sums
from ._jit import njit
from ._vmath import exp_psi

# Reassociation lets LLVM vectorise the sums over topics (~2x); no flag that assumes finite values
# ('nnan', 'ninf'), since clip may be +inf. The E-step compiles with numba's NumPy error model: its divisions
# (by φ's normaliser, which starts at 1e-100, and by K) are never by zero, and unchecked they vectorise.
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


# exp(ψ) is computed by kernels._vmath.exp_psi, inlined: its callers compile with fused multiply-adds only (never
# re-association) and numba's NumPy error model, so that its divisions and its exp vectorise
_VMATH = {"fastmath": {"contract"}, "error_model": "numpy"}


@njit(cache=True, nogil=True, **_VMATH)
def _exp_digamma(g, out):
    """``out[k] = exp(ψ(g[k]))`` for ``g[k] > 0``: ``exp(E[log θ_k])`` up to the document's common factor
    ``exp(−ψ(Σ_j g_j))``, which cancels in φ and in everything the E-step returns (so it is never computed).
    One ``exp`` and no ``log`` per topic, as accurate as ``exp(scipy.special.psi(g))`` (:func:`~._vmath.exp_psi`),
    several topics at a time."""
    for k in range(g.shape[0]):
        out[k] = exp_psi(g[k], 0.0)


@njit(cache=True, nogil=True, **_VMATH)
def exp_dirichlet_expectation(lam, psi_sums, out_vk, v_start, v_stop):
    """``out_vk[v, k] = exp(ψ(λ_kv) − psi_sums[k])`` for ``v_start <= v < v_stop``: ``exp(E[log β])`` word-major, as
    the E-step reads it, with ``psi_sums = ψ(Σ_v λ_kv)`` (``np.exp(dirichlet_expectation(lam)).T`` to within a few
    units in the last place, :func:`~._vmath.exp_psi`). Calls on disjoint word ranges may run at the same time."""
    K = lam.shape[0]
    n = v_stop - v_start
    row = np.empty(n)
    for k in range(K):
        c = psi_sums[k]
        src = lam[k]
        for i in range(n):                  # contiguous in λ: vectorised
            row[i] = exp_psi(src[v_start + i], c)
        for i in range(n):
            out_vk[v_start + i, k] = row[i]


@njit(cache=True, nogil=True)
def scale_statistics(sstats_vk, exp_elog_beta_vk, v_start, v_stop):
    """``sstats_vk[v] *= exp_elog_beta_vk[v]`` for ``v_start <= v < v_stop``: the expected sufficient statistics from
    what :func:`vb_scatter` added (Hoffman's factorisation). Calls on disjoint word ranges may run at the same time."""
    for v in range(v_start, v_stop):
        s = sstats_vk[v]
        e = exp_elog_beta_vk[v]
        for k in range(s.shape[0]):
            s[k] *= e[k]


@njit(cache=True, nogil=True)
def svi_step(lam, sstats_vk, exp_elog_beta_vk, rho, eta, scale, out, v_start, v_stop):
    """The natural-gradient step of stochastic variational inference (Hoffman et al. 2010, Alg. 2) for the words
    ``v_start <= v < v_stop``: ``out[k, v] = (1 − ρ) λ_kv + ρ (η + scale · s_kv)`` with the statistics
    ``s_kv = sstats_vk[v, k] · exp_elog_beta_vk[v, k]`` (:func:`vb_scatter`'s sums times ``exp(E[log β])``). The
    same operations in the same order as NumPy's ``(1 - rho) * lam + rho * (eta + scale * s)``, so the same numbers
    bit for bit. Calls on disjoint word ranges may run at the same time; ``out`` may be ``lam``."""
    K = lam.shape[0]
    keep = 1.0 - rho
    for k in range(K):
        src = lam[k]
        dst = out[k]
        for v in range(v_start, v_stop):
            s = sstats_vk[v, k] * exp_elog_beta_vk[v, k]
            dst[v] = keep * src[v] + rho * (eta + scale * s)


TILE = 512
"""Words of a document held topic-major at a time (``K × TILE`` doubles per thread). A document with at most this
many distinct words is gathered once for all its fixed-point iterations; a longer one tile by tile, every iteration."""


@njit(cache=True, nogil=True)
def _gather_tile(word_ids, counts, exp_elog_beta_vk, a, m, tile, c):
    """``tile[k, i] = exp(E[log β_k,w])`` and ``c[i]`` the count of the word at entry ``a + i``, for ``i < m``; zeros
    up to the next multiple of 8 (a zero count weighs nothing)."""
    K = tile.shape[0]
    for i in range(m):
        row = exp_elog_beta_vk[word_ids[a + i]]
        for k in range(K):
            tile[k, i] = row[k]
        c[i] = counts[a + i]
    for i in range(m, (m + 7) // 8 * 8):
        for k in range(K):
            tile[k, i] = 0.0
        c[i] = 0.0


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def _tile_pass(tile, c, m, et, s, acc):
    """One fixed-point pass over a tile of ``m`` words: ``s[i] = Σ_k et_k β_k,i`` (φ's normaliser) and
    ``acc[k] += Σ_i (c_i / s_i) β_k,i``. The loops run over the tile's words (contiguous), which LLVM vectorises
    whatever K is."""
    K = tile.shape[0]
    mp = (m + 7) // 8 * 8
    for i in range(mp):
        s[i] = 1e-100
    for k in range(K):
        e = et[k]
        for i in range(mp):
            s[i] += e * tile[k, i]
    for i in range(mp):
        s[i] = c[i] / s[i]
    for k in range(K):
        t = 0.0
        for i in range(mp):
            t += s[i] * tile[k, i]
        acc[k] += t


@njit(cache=True, nogil=True, fastmath=_FAST, error_model="numpy")
def vb_estep_docs(doc_ptr, word_ids, counts, exp_elog_beta_vk, alpha, gamma, max_iter, tol, clip, d_start, d_stop,
                  weights, et_out, norms):
    """The E-step of documents ``d_start .. d_stop − 1`` (Hoffman et al. 2010, Alg. 2, lines 5-9), each on its own:
    updates their rows of ``gamma`` in place and writes, for each document ``d``, ``et_out[d] = exp(ψ(γ_d))`` and
    ``norms[d] = ||s_d||_F``, and for each of its entries ``i`` the weight ``weights[i] = c_d · n_dv / φnorm_dv``
    (``c_d = min(1, clip / ||s_d||_F)``). :func:`vb_scatter` then adds ``weights[i] · et_out[d]`` to the statistics.
    Returns the number of fixed-point iterations summed over the documents.

    Rows of ``gamma``, ``et_out``, ``norms`` and the entries of ``weights`` are the documents' own: calls on disjoint
    document ranges may run at the same time, in any order, and give the same numbers."""
    K = exp_elog_beta_vk.shape[1]
    et = np.empty(K)
    acc = np.empty(K)
    tile = np.empty((K, TILE + 8))       # rows 4 KiB + 64 B apart: a 4 KiB stride would map them to one L1 set
    c = np.empty(TILE)
    s = np.empty(TILE)
    sq_i = np.empty(TILE)
    total_it = 0
    for d in range(d_start, d_stop):
        a, b = doc_ptr[d], doc_ptr[d + 1]
        g = gamma[d]
        if b == a:
            for k in range(K):
                g[k] = alpha
                et_out[d, k] = 0.0
            norms[d] = 0.0
            continue
        n = b - a
        one_tile = n <= TILE
        if one_tile:
            _gather_tile(word_ids, counts, exp_elog_beta_vk, a, n, tile, c)
        _exp_digamma(g, et)
        it = 0
        while it < max_iter:
            it += 1
            for k in range(K):
                acc[k] = 0.0
            for t0 in range(0, n, TILE):
                m = min(TILE, n - t0)
                if not one_tile:
                    _gather_tile(word_ids, counts, exp_elog_beta_vk, a + t0, m, tile, c)
                _tile_pass(tile, c, m, et, s, acc)
            change = 0.0
            for k in range(K):
                new = alpha + et[k] * acc[k]
                change += abs(new - g[k])
                g[k] = new
            _exp_digamma(g, et)
            if change / K < tol:
                break
        total_it += it
        # ||s_d||_F^2 = Σ_v (n_dv/φnorm_v)^2 Σ_k (exp E[log θ_dk] · exp E[log β_kv])^2, with φ from the final γ
        sq = 0.0
        for t0 in range(0, n, TILE):
            m = min(TILE, n - t0)
            mp = (m + 7) // 8 * 8
            if not one_tile:
                _gather_tile(word_ids, counts, exp_elog_beta_vk, a + t0, m, tile, c)
            for i in range(mp):
                s[i] = 1e-100
                sq_i[i] = 0.0
            for k in range(K):
                e = et[k]
                row = tile[k]
                for i in range(mp):
                    x = e * row[i]
                    s[i] += x
                    sq_i[i] += x * x
            for i in range(m):
                w = c[i] / s[i]
                weights[a + t0 + i] = w
                sq += w * w * sq_i[i]
        nrm = math.sqrt(sq)
        norms[d] = nrm
        if nrm > clip:
            cd = clip / nrm
            for i in range(a, b):
                weights[i] *= cd
        for k in range(K):
            et_out[d, k] = et[k]
    return total_it


@njit(cache=True, nogil=True, fastmath=_FAST)
def vb_scatter(doc_ptr, word_ids, weights, et, sstats_vk, v_start, v_stop):
    """``sstats_vk[v] += weights[i] · et[d]`` for every entry ``i`` of every document ``d`` whose word ``v`` lies in
    ``[v_start, v_stop)``, in document order: each row gets its additions in the same order however the words are
    split, so calls on disjoint word ranges may run at the same time and give the serial sums bit for bit."""
    K = sstats_vk.shape[1]
    for d in range(doc_ptr.shape[0] - 1):
        row_et = et[d]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            v = word_ids[i]
            if v_start <= v < v_stop:
                w = weights[i]
                out = sstats_vk[v]
                for k in range(K):
                    out[k] += w * row_et[k]


@njit(cache=True, nogil=True)
def vb_estep(doc_ptr, word_ids, counts, exp_elog_beta_vk, alpha, gamma, max_iter, tol, clip, sstats_vk, norms):
    """Run the E-step on every document; update ``gamma`` (D×K) in place.

    The fixed point of ``γ_dk = α + Σ_v n_dv φ_dvk`` per document (:func:`vb_estep_docs`); at most ``max_iter``
    iterations, stopping at the first whose mean absolute change of γ is below ``tol``.
    ``sstats_vk`` (V×K) receives ``Σ_d c_d · (n_dv / φnorm_dv) · exp(E[log θ_dk])``;
    multiply it elementwise by ``exp_elog_beta_vk`` to obtain the expected sufficient
    statistics ``Σ_d c_d s_d``. ``c_d = min(1, clip / ||s_d||_F)`` (``clip = inf``: no
    clipping); ``norms[d]`` receives ``||s_d||_F`` before clipping. Returns the number
    of E-step iterations summed over documents.
    """
    D = doc_ptr.shape[0] - 1
    K = exp_elog_beta_vk.shape[1]
    weights = np.empty(word_ids.shape[0])
    et = np.empty((D, K))
    total = vb_estep_docs(doc_ptr, word_ids, counts, exp_elog_beta_vk, alpha, gamma, max_iter, tol, clip, 0, D,
                          weights, et, norms)
    vb_scatter(doc_ptr, word_ids, weights, et, sstats_vk, 0, sstats_vk.shape[0])
    return total


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


def gather_rows(indptr, indices, data, rows, vocab_size=None, checked: bool = False):
    """The CSR sub-matrix of ``rows`` (in that order) as ``(doc_ptr, word_ids, counts)``, one entry per distinct word
    of each document (:func:`vb_estep`'s norm ``||s_d||_F``, which the private trainer clips, is summed over entries):
    a matrix whose rows repeat a word or hold explicit zeros gives its canonical copy
    (:func:`~dptopic.kernels._bow.canonical_bow`; ``vocab_size``, when given, bounds the word ids).

    ``checked=True``: ``(indptr, indices, data)`` is already canonical (what ``canonical_bow`` returned, with
    ``indices`` int64 and ``data`` float64), so its rows are copied without checking them again."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if checked:
        ptr = np.empty(len(rows) + 1, dtype=np.int64)
        ids = np.empty(_row_lengths(indptr, rows, ptr), dtype=np.int64)
        cts = np.empty(len(ids), dtype=np.float64)
        _copy_rows(indptr, indices, data, rows, ptr, ids, cts)
        return ptr, ids, cts
    starts, lens = indptr[rows], indptr[rows + 1] - indptr[rows]
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    pos = np.repeat(starts - ptr[:-1], lens) + np.arange(ptr[-1])
    return canonical_bow(ptr, indices[pos], data[pos].astype(np.float64), vocab_size)


@njit(cache=True, nogil=True)
def _row_lengths(indptr, rows, ptr):
    """``ptr``: the offsets of ``rows``' entries one after another; returns their number."""
    ptr[0] = 0
    for j in range(rows.shape[0]):
        r = rows[j]
        ptr[j + 1] = ptr[j] + indptr[r + 1] - indptr[r]
    return ptr[-1]


@njit(cache=True, nogil=True)
def _copy_rows(indptr, indices, data, rows, ptr, ids, cts):
    for j in range(rows.shape[0]):
        a = indptr[rows[j]]
        o = ptr[j]
        for i in range(ptr[j + 1] - o):
            ids[o + i] = indices[a + i]
            cts[o + i] = data[a + i]


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
