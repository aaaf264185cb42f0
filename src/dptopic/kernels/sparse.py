"""Sparsity-aware exact collapsed Gibbs sweep (SparseLDA, Yao, Mimno & McCallum 2009).

The unnormalised conditional splits into three buckets,

    p_k ∝ αβ/(n_k+Vβ)  +  n_dk β/(n_k+Vβ)  +  (α+n_dk) n_wk/(n_k+Vβ)
          s (all k)        r (k with n_dk>0)   q (k with n_wk>0)

``s`` and ``r`` are maintained incrementally; ``q`` is summed over the non-zero
topics of the current word only, kept in per-word lists with O(1) insert/remove.
The draw is exact (same distribution as :func:`dense_sweep`); only the mapping of
the uniform number to a topic differs. Integer counts only (plain CGS).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._lists import list_add, list_from_counts, list_remove
from .rng import next_uniform


def build_word_lists(nwk):
    """Per-word lists of non-zero topics: ``(wnz, wpos, wlen)`` (see :func:`sparse_sweep`)."""
    V, K = nwk.shape
    wnz = np.empty((V, K), dtype=np.int32)
    wpos = np.empty((V, K), dtype=np.int32)
    wlen = np.empty(V, dtype=np.int32)
    _build_word_lists(nwk, wnz, wlen, wpos)
    return wnz, wpos, wlen


@njit(cache=True, nogil=True)
def _build_word_lists(nwk, wnz, wlen, wpos):
    V, K = nwk.shape
    for w in range(V):
        n = 0
        for k in range(K):
            if nwk[w, k] > 0:
                wnz[w, n] = k
                wpos[w, k] = n
                n += 1
            else:
                wpos[w, k] = -1
        wlen[w] = n


@njit(cache=True, nogil=True)
def _list_dec(nwk, wnz, wpos, wlen, w, k):
    nwk[w, k] -= 1
    if nwk[w, k] == 0:
        wlen[w] = list_remove(wnz[w], wpos[w], wlen[w], k)


@njit(cache=True, nogil=True)
def _list_inc(nwk, wnz, wpos, wlen, w, k):
    nwk[w, k] += 1
    if nwk[w, k] == 1:
        wlen[w] = list_add(wnz[w], wpos[w], wlen[w], k)


@njit(cache=True, nogil=True)
def sparse_sweep(word_ids, doc_ptr, z, ndk, nwk, nk, wnz, wpos, wlen, alpha, beta, vbeta, state):
    """Sweep every token of a shard once with the SparseLDA decomposition. Mutates in place.

    ``wnz/wpos/wlen`` are the per-word non-zero topic lists of ``nwk`` (from
    :func:`build_word_lists`); they are kept consistent, so they persist across sweeps.
    """
    V, K = nwk.shape
    inv = np.empty(K)
    coef = np.empty(K)
    qbuf = np.empty(K)
    dnz = np.empty(K, dtype=np.int32)
    dpos = np.full(K, -1, dtype=np.int32)
    ab = alpha * beta
    D = doc_ptr.shape[0] - 1
    for d in range(D):
        s = 0.0
        for k in range(K):
            inv[k] = 1.0 / (nk[k] + vbeta)
            s += ab * inv[k]
        r = 0.0
        for k in range(K):
            c = ndk[d, k]
            coef[k] = (alpha + c) * inv[k]
            r += c * beta * inv[k]
        dl = list_from_counts(ndk[d], dnz, dpos)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            k = z[i]
            # ---- remove token i
            s -= ab * inv[k]
            r -= ndk[d, k] * beta * inv[k]
            ndk[d, k] -= 1
            _list_dec(nwk, wnz, wpos, wlen, w, k)
            nk[k] -= 1
            inv[k] = 1.0 / (nk[k] + vbeta)
            s += ab * inv[k]
            r += ndk[d, k] * beta * inv[k]
            coef[k] = (alpha + ndk[d, k]) * inv[k]
            if ndk[d, k] == 0:
                dl = list_remove(dnz, dpos, dl, k)
            # ---- q bucket over the word's non-zero topics
            q = 0.0
            n = wlen[w]
            for j in range(n):
                t = wnz[w, j]
                q += coef[t] * nwk[w, t]
                qbuf[j] = q
            u = next_uniform(state) * (s + r + q)
            if u < q:
                j = 0
                while j < n - 1 and qbuf[j] <= u:
                    j += 1
                k = wnz[w, j]
            elif u < q + r and dl > 0:
                u -= q
                j = 0
                k = dnz[0]
                while j < dl:
                    k = dnz[j]
                    u -= ndk[d, k] * beta * inv[k]
                    if u < 0:
                        break
                    j += 1
            else:
                u -= q + r
                k = K - 1
                for j in range(K):
                    u -= ab * inv[j]
                    if u < 0:
                        k = j
                        break
            # ---- add token i with topic k
            z[i] = k
            s -= ab * inv[k]
            r -= ndk[d, k] * beta * inv[k]
            ndk[d, k] += 1
            _list_inc(nwk, wnz, wpos, wlen, w, k)
            nk[k] += 1
            inv[k] = 1.0 / (nk[k] + vbeta)
            s += ab * inv[k]
            r += ndk[d, k] * beta * inv[k]
            coef[k] = (alpha + ndk[d, k]) * inv[k]
            if ndk[d, k] == 1:
                dl = list_add(dnz, dpos, dl, k)
