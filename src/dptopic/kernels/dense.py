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

from .rng import next_uniform


BLOCK = 8


@njit(inline="always", cache=True)
def blocked_draw(p, bs, K, state):
    """Draw ``k`` with probability ``p[k] / sum(p[:K])`` (``p`` zero-padded to a multiple of BLOCK).

    Sums blocks of 8 independently, locates the uniform among the block sums, then within its block.
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
    while b < nb - 1 and bs[b] <= u:
        u -= bs[b]
        b += 1
    k = b * BLOCK
    last = min(K, b * BLOCK + BLOCK) - 1
    while k < last and p[k] <= u:
        u -= p[k]
        k += 1
    return k


@njit(cache=True, nogil=True)
def dense_sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state):
    """Sweep every token of a shard once, in order. Mutates z, ndk, nwk, nk, state.

    The draw avoids a length-K serial prefix sum: products are computed independently,
    summed in blocks of 8, and the uniform is located first among block sums, then
    within its block (the NumPy reference follows the same order of operations).
    """
    K = nk.shape[0]
    nb = (K + BLOCK - 1) // BLOCK
    p = np.zeros(nb * BLOCK)
    bs = np.empty(nb)
    inv = np.empty(K)
    for j in range(K):
        inv[j] = 1.0 / (max(nk[j], 0) + vbeta)
    D = doc_ptr.shape[0] - 1
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            k = z[i]
            ndk[d, k] -= 1
            nwk[w, k] -= 1
            nk[k] -= 1
            inv[k] = 1.0 / (max(nk[k], 0) + vbeta)
            for j in range(K):
                c = min(max(word_table[w, j], 0), clip)
                p[j] = (c + beta) * inv[j] * (max(ndk[d, j], 0) + alpha)
            k = blocked_draw(p, bs, K, state)
            z[i] = k
            ndk[d, k] += 1
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (max(nk[k], 0) + vbeta)
