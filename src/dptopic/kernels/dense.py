"""Dense collapsed Gibbs sweep: the reference kernel and the base of the private variants.

One source, several compiled specialisations:

* plain CGS: ``word_table is nwk`` (int32), ``clip = inf``;
* noisy-count trainers (CDP-LDA, paper-literal HDP-LDA): float64 counts, live updates,
  negative noisy counts clamped to 0 and (HDP) the word factor clipped at ``clip``;
* sound HDP-LDA: ``word_table`` is the iteration's frozen, clamped noisy release and
  ``nwk`` the true counts, which only feed the next release.

The conditional for token ``i`` (word ``w``, document ``d``), with ``¬i`` counts:
``p_k ∝ (min(max(T[w,k],0),clip) + β) / (max(n_k,0) + Vβ) · (max(n_dk,0) + α)`` (spec eq. 1).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._prefetch import prefetch
from .rng import next_uniform


BLOCK = 8
PREFETCH_AHEAD = 4  # tokens


@njit(inline="always", cache=True)
def blocked_draw(p, bs, K, state):
    """Draw ``k`` with probability ``p[k] / sum(p[:K])`` (``p`` zero-padded to a multiple of BLOCK, ``p[:K] > 0``).

    Sums blocks of 8 independently, locates the uniform among the block sums, then within its block.
    Both searches count the running sums at or below the uniform instead of stopping at the first one
    above it: the same topic, without a data-dependent branch to mispredict.
    """
    nb = bs.shape[0]
    total = 0.0
    for b in range(nb):
        acc = 0.0
        for j in range(b * BLOCK, b * BLOCK + BLOCK):
            acc += p[j]
        bs[b] = acc
        total += acc
    u = next_uniform(state) * total
    b = 0
    run = 0.0
    for c in range(nb - 1):
        run += bs[c]
        b += run <= u
    for c in range(b):
        u -= bs[c]
    k = b * BLOCK
    acc = 0.0
    for j in range(b * BLOCK, min(K, b * BLOCK + BLOCK) - 1):
        acc += p[j]
        k += acc <= u
    return k


@njit(cache=True, nogil=True)
def dense_sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state):
    """Sweep every token of a shard once, in order. Mutates z, ndk, nwk, nk, state.

    The document factor ``h_k = (max(n_dk,0) + α) / (max(n_k,0) + Vβ)`` is kept per document and
    refreshed only for the two topics a token leaves and joins, so a topic's weight is one clamp
    and one product; the word row of the token a few places ahead is prefetched. The draw avoids
    a length-K serial prefix sum (:func:`blocked_draw`; the NumPy reference follows the same order
    of operations).
    """
    K = nk.shape[0]
    nb = (K + BLOCK - 1) // BLOCK
    p = np.zeros(nb * BLOCK)
    bs = np.empty(nb)
    inv = np.empty(K)
    h = np.empty(K)
    for j in range(K):
        inv[j] = 1.0 / (max(nk[j], 0) + vbeta)
    D = doc_ptr.shape[0] - 1
    n_tok = word_ids.shape[0]
    per_line = max(64 // word_table.itemsize, 1)
    lines = (K + per_line - 1) // per_line
    for d in range(D):
        for j in range(K):
            h[j] = inv[j] * (max(ndk[d, j], 0) + alpha)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            if i + PREFETCH_AHEAD < n_tok:
                ahead = word_ids[i + PREFETCH_AHEAD] * K
                for line in range(lines):
                    prefetch(word_table, ahead + per_line * line)
                prefetch(nwk, ahead + z[i + PREFETCH_AHEAD])
            w = np.uintp(word_ids[i])
            k = np.uintp(z[i])
            ndk[d, k] -= 1
            nwk[w, k] -= 1
            nk[k] -= 1
            inv[k] = 1.0 / (max(nk[k], 0) + vbeta)
            h[k] = inv[k] * (max(ndk[d, k], 0) + alpha)
            for j in range(K):
                p[j] = (min(max(word_table[w, j], 0), clip) + beta) * h[j]
            k = np.uintp(blocked_draw(p, bs, K, state))
            z[i] = k
            ndk[d, k] += 1
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (max(nk[k], 0) + vbeta)
            h[k] = inv[k] * (max(ndk[d, k], 0) + alpha)
