"""Exact sweep against a frozen word factor (sound HDP-LDA), by rejection sampling.

In sound HDP-LDA the word factor ``A[w,k] = clip(S_i[w,k], 0, C) + β`` is fixed for the
whole sweep; only ``n_k`` (through ``inv_k = 1/(n_k + Vβ)``) and ``n_dk`` move. The target is

    p_k ∝ A[w,k] · inv_k · (n_dk + α).

We propose from ``q_k ∝ A[w,k] · ib_k · (n_dk + α)`` with a bound ``ib_k ≥ inv_k`` (from a floor
on ``n_k``) and accept with probability ``inv_k / ib_k ≤ 1`` — exact rejection sampling.
The proposal splits into a sparse document bucket ``Σ_{n_dk>0} A·ib·n_dk`` and a smoothing
bucket ``α Σ_k A·ib``. The smoothing bucket's per-word total is computed the first time a word
is met after the bound was (re)set and kept until the bound changes; the rare draw that lands in
it walks the word's row. If some ``n_k`` falls below its floor, only the K bounds are reset, so
the slack can stay small (acceptance ≈ 1 − slack/n_k ≈ 99%), and a rejected proposal redraws
from the same buckets without recomputing them. A token costs O(#doc topics) instead of O(K).
The word row of the token a few places ahead is prefetched (the tables outgrow the per-core cache).
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._lists import list_add, list_from_counts, list_remove
from ._prefetch import prefetch
from .rng import next_uniform

PREFETCH_AHEAD = 4  # tokens (as in the SparseLDA kernel)


@njit(cache=True, nogil=True)
def _set_bound(nk, vbeta, floor, ib):
    """Floors a little below the current ``n_k`` and the matching bounds ``ib_k = 1/(floor_k + Vβ)``."""
    for k in range(nk.shape[0]):
        slack = max(4, nk[k] // 128)
        floor[k] = max(nk[k] - slack, 0)
        ib[k] = 1.0 / (floor[k] + vbeta)


@njit(cache=True, nogil=True)
def frozen_sweep(word_ids, doc_ptr, z, ndk, A, nwk, nk, alpha, vbeta, state):
    """Sweep a shard with the frozen word factor ``A`` (V×K, already ``clip(S)+β``). Mutates in place."""
    V, K = A.shape
    floor = np.empty(K, dtype=np.int64)
    ib = np.empty(K)
    _set_bound(nk, vbeta, floor, ib)
    version = 1
    row_sum = np.empty(V)                  # Σ_k A[w,k]·ib_k, valid while stamp[w] == version
    stamp = np.zeros(V, dtype=np.int64)
    dnz = np.empty(K, dtype=np.int32)
    dpos = np.full(K, -1, dtype=np.int32)
    rb = np.empty(K)
    g = np.empty(K)  # ib_k · n_dk of the current document
    D = doc_ptr.shape[0] - 1
    n_tok = word_ids.shape[0]
    lines = (K + 7) // 8  # 64-byte lines in one float64 row of A
    for d in range(D):
        if doc_ptr[d] == doc_ptr[d + 1]:
            continue    # no token here (the partition scheme's cells leave out most words of a document)
        dl = list_from_counts(ndk[d], dnz, dpos)
        for k in range(K):
            g[k] = ib[k] * ndk[d, k]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            if i + PREFETCH_AHEAD < n_tok:  # the word row of the token a few places ahead
                ahead = word_ids[i + PREFETCH_AHEAD] * K
                for line in range(lines):
                    prefetch(A, ahead + 8 * line)
                prefetch(nwk, ahead + z[i + PREFETCH_AHEAD])
            w = np.uintp(word_ids[i])
            k = np.uintp(z[i])
            ndk[d, k] -= 1
            g[k] = ib[k] * ndk[d, k]
            nwk[w, k] -= 1
            nk[k] -= 1
            if ndk[d, k] == 0:
                dl = list_remove(dnz, dpos, dl, k)
            if nk[k] < floor[k]:
                _set_bound(nk, vbeta, floor, ib)
                version += 1
                for t in range(K):
                    g[t] = ib[t] * ndk[d, t]
            if stamp[w] != version:
                acc = 0.0
                for t in range(K):
                    acc += A[w, t] * ib[t]
                row_sum[w] = acc
                stamp[w] = version
            smooth = alpha * row_sum[w]
            r = 0.0
            for j in range(dl):
                t = np.uintp(dnz[j])
                r += A[w, t] * g[t]
                rb[j] = r
            while True:
                u = next_uniform(state) * (r + smooth)
                if u < r:
                    jq = 0
                    for jj in range(dl - 1):  # branch-free: the index of the first prefix above u
                        jq += rb[jj] <= u
                    k = np.uintp(dnz[jq])
                else:
                    x = (u - r) / alpha
                    k = np.uintp(K - 1)
                    acc = 0.0
                    for t in range(K):
                        acc += A[w, t] * ib[t]
                        if acc > x:
                            k = np.uintp(t)
                            break
                # accept with probability inv_k / ib_k = (floor_k + Vβ) / (n_k + Vβ)
                if next_uniform(state) * (nk[k] + vbeta) < floor[k] + vbeta:
                    break
            z[i] = k
            ndk[d, k] += 1
            g[k] = ib[k] * ndk[d, k]
            nwk[w, k] += 1
            nk[k] += 1
            if ndk[d, k] == 1:
                dl = list_add(dnz, dpos, dl, k)
