"""Sparsity-aware exact collapsed Gibbs sweep (SparseLDA, Yao, Mimno & McCallum 2009).

The unnormalised conditional splits into three buckets,

    p_k ∝ αβ/(n_k+Vβ)  +  n_dk β/(n_k+Vβ)  +  (α+n_dk) n_wk/(n_k+Vβ)
          s (all k)        r (k with n_dk>0)   q (k with n_wk>0)

``s`` and ``r`` are maintained incrementally; ``q`` is summed over the listed topics of the
current word only, kept in per-word lists with O(1) insert/remove. The draw is exact (same
distribution as :func:`dense_sweep`); only the mapping of the uniform number to a topic differs.
Integer counts only (plain CGS).

Three things keep a token cheap once the chain has settled (most tokens then keep their topic):

* the token is taken out *in place*: counts and the per-topic factors are adjusted, but the
  topic lists are left alone (a listed topic whose count fell to zero contributes exactly 0);
  when the draw returns the old topic, the few touched values are put back and nothing else
  happens. Lists, ``n_k`` and the running sums change only when the token really moves;
* ``1/(n_k - 1 + Vβ)`` is cached beside ``1/(n_k + Vβ)``, so a token that stays costs no division;
* the rows of the token a few positions ahead are prefetched, and the lists use the smallest
  integer type that holds a topic index, so the random per-word reads mostly hit the cache;
* the draw within the word bucket counts the prefix sums below the uniform instead of scanning
  to the first one above it: the same topic, without a hard-to-predict branch;
* word and topic indices are unsigned, so the compiled loops carry no negative-index handling.
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._lists import list_add, list_from_counts, list_remove
from ._prefetch import prefetch
from .rng import next_uniform

PREFETCH_AHEAD = 4  # tokens; measured best among 2, 4, 8, 16 on the bench_cgs corpus (benchmarks/bench_cgs.py)


def list_dtype(n_topics: int):
    """Smallest signed integer type that holds a topic index and the −1 "absent" mark."""
    return np.int8 if n_topics <= 127 else (np.int16 if n_topics <= 32767 else np.int32)


def build_word_lists(nwk):
    """Per-word lists of the topics with a non-zero count: ``(wnz, wpos, wlen)`` (see :func:`sparse_sweep`)."""
    V, K = nwk.shape
    dt = list_dtype(K)
    wnz = np.empty((V, K), dtype=dt)
    wpos = np.empty((V, K), dtype=dt)
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
def sparse_sweep(word_ids, doc_ptr, z, ndk, nwk, nk, wnz, wpos, wlen, alpha, beta, vbeta, state):
    """Sweep every token of a shard once with the SparseLDA decomposition. Mutates in place.

    ``wnz/wpos/wlen`` are the per-word topic lists of ``nwk`` (from :func:`build_word_lists`):
    every topic with ``nwk[w, k] > 0`` is listed (the list may also hold topics whose count is
    0; they weigh nothing). They are kept consistent, so they persist across sweeps.
    """
    V, K = nwk.shape
    inv = np.empty(K)   # 1 / (n_k + Vβ)
    invm = np.empty(K)  # 1 / (n_k - 1 + Vβ): the factor once a token of topic k is taken out
    for k in range(K):
        inv[k] = 1.0 / (nk[k] + vbeta)
        invm[k] = 1.0 / (max(nk[k] - 1, 0) + vbeta)
    coef = np.empty(K)
    qbuf = np.empty(K)
    dnz = np.empty(K, dtype=np.int32)
    dpos = np.full(K, -1, dtype=np.int32)
    ab = alpha * beta
    D = doc_ptr.shape[0] - 1
    n_tok = word_ids.shape[0]
    lines = (K + 15) // 16  # 64-byte lines in one int32 row of nwk
    # s depends on the topic totals only: summed once, then carried from token to token and document to
    # document. coef is (α + n_dk)/(n_k + Vβ) for the current document: α/(n_k + Vβ) outside its topics.
    s = 0.0
    for k in range(K):
        s += ab * inv[k]
        coef[k] = alpha * inv[k]
    for d in range(D):
        if doc_ptr[d] == doc_ptr[d + 1]:
            continue    # no token here (the partition scheme's cells leave out most words of a document)
        # a document's set-up costs O(its topics) plus one branch-free O(K) scan (the partition scheme
        # meets every document once per round, so this is paid P times per sweep)
        dl = list_from_counts(ndk[d], dnz, dpos)
        r = 0.0
        for j in range(dl):  # the topics in increasing order: the same sum as over all K (the rest add +0.0)
            t = np.uintp(dnz[j])
            c = ndk[d, t]
            coef[t] = (alpha + c) * inv[t]
            r += c * beta * inv[t]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            if i + PREFETCH_AHEAD < n_tok:
                ahead = word_ids[i + PREFETCH_AHEAD] * K
                for line in range(lines):
                    prefetch(nwk, ahead + 16 * line)
                prefetch(wnz, ahead)
                prefetch(wpos, ahead + z[i + PREFETCH_AHEAD])
            w = np.uintp(word_ids[i])
            k0 = np.uintp(z[i])
            # ---- take token i out in place (the lists stay as they are)
            inv_in = inv[k0]
            coef_in = coef[k0]
            nd0 = ndk[d, k0] - 1
            ndk[d, k0] = nd0
            nwk[w, k0] -= 1
            inv0 = invm[k0]
            inv[k0] = inv0
            coef[k0] = (alpha + nd0) * inv0
            s0 = s + ab * (inv0 - inv_in)
            r0 = r + beta * (nd0 * inv0 - (nd0 + 1) * inv_in)
            # ---- q bucket over the word's listed topics
            q = 0.0
            n = wlen[w]
            for j in range(n):
                t = np.uintp(wnz[w, j])
                q += coef[t] * nwk[w, t]
                qbuf[j] = q
            u = next_uniform(state) * (s0 + r0 + q)
            k = np.uintp(0)
            found = False
            if u < q:
                jq = 0
                for jj in range(n - 1):  # branch-free: the number of prefixes <= u is the index of the first above
                    jq += qbuf[jj] <= u
                k = np.uintp(wnz[w, jq])  # the first prefix above u: its own term is > 0
                found = True
            elif u < q + r0:
                u -= q
                for j in range(dl):
                    t = np.uintp(dnz[j])
                    u -= ndk[d, t] * beta * inv[t]
                    if u < 0:
                        k = t
                        found = True
                        break
            if not found:  # s bucket (or rounding left the r walk short): every topic weighs αβ·inv_k > 0
                u = next_uniform(state) * s0
                k = np.uintp(K - 1)
                for j in range(K):
                    u -= ab * inv[j]
                    if u < 0:
                        k = np.uintp(j)
                        break
            if k == k0:  # stays: put back exactly what was taken out
                ndk[d, k0] = nd0 + 1
                nwk[w, k0] += 1
                inv[k0] = inv_in
                coef[k0] = coef_in
                continue
            # ---- moves from k0 to k
            nk[k0] -= 1
            invm[k0] = 1.0 / (max(nk[k0] - 1, 0) + vbeta)
            if nwk[w, k0] == 0:
                wlen[w] = list_remove(wnz[w], wpos[w], wlen[w], k0)
            if nd0 == 0:
                dl = list_remove(dnz, dpos, dl, k0)
            z[i] = k
            nd1 = ndk[d, k] + 1
            ndk[d, k] = nd1
            nwk[w, k] += 1
            if nwk[w, k] == 1:
                wlen[w] = list_add(wnz[w], wpos[w], wlen[w], k)
            if nd1 == 1:
                dl = list_add(dnz, dpos, dl, k)
            nk[k] += 1
            inv_out = inv[k]
            inv1 = 1.0 / (nk[k] + vbeta)
            s = s0 + ab * (inv1 - inv_out)
            r = r0 + beta * (nd1 * inv1 - (nd1 - 1) * inv_out)
            invm[k] = inv_out
            inv[k] = inv1
            coef[k] = (alpha + nd1) * inv1
        for j in range(dl):  # back to α/(n_k + Vβ) for the next document
            t = np.uintp(dnz[j])
            coef[t] = alpha * inv[t]
