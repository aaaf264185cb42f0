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
LANE_K = (8, 64)  # from 8 to 64 topics the draw groups the weights by lanes, otherwise by blocks
PREFETCH_AHEAD = 4  # tokens


@njit(inline="always", cache=True)
def _lane_draw(p, sums, nb, K, state):
    """8 to 64 topics: lane ``c`` holds topics ``c, c+8, c+16, …``. The eight lane sums are one
    vector accumulation over the blocks of ``p``; pick the lane, then the topic inside it."""
    for c in range(BLOCK):
        sums[c] = 0.0
    for b in range(nb):
        for c in range(BLOCK):
            sums[c] += p[b * BLOCK + c]
    run = 0.0
    for c in range(BLOCK):  # sums[c] <- total weight of the lanes before c
        v = sums[c]
        sums[c] = run
        run += v
    u = next_uniform(state) * run
    c = 0
    for j in range(1, BLOCK):
        c += sums[j] <= u
    u -= sums[c]
    last = (K - 1 - c) // BLOCK
    b = 0
    acc = 0.0
    for j in range(nb - 1):
        acc += p[j * BLOCK + c]
        b += acc <= u
    return min(b, last) * BLOCK + c


@njit(inline="always", cache=True)
def _block_draw(p, sums, nb, K, state):
    """Fewer than 8 or more than 64 topics: blocks of eight consecutive topics; pick the block, then
    the topic inside it."""
    run = 0.0
    for b in range(nb):  # sums[b] <- total weight of the blocks before b
        o = b * BLOCK
        acc = 0.0
        for j in range(o, o + BLOCK):
            acc += p[j]
        sums[b] = run
        run += acc
    u = next_uniform(state) * run
    b = 0
    for j in range(1, nb):
        b += sums[j] <= u
    u -= sums[b]
    o = b * BLOCK
    k = 0
    acc = 0.0
    for j in range(BLOCK - 1):
        acc += p[o + j]
        k += acc <= u
    return min(o + k, K - 1)


@njit(inline="always", cache=True)
def blocked_draw(p, sums, nb, K, state):
    """Draw ``k`` with probability ``p[k] / sum(p[:K])``.

    ``p`` holds ``nb = ceil(K/8)`` blocks of eight, zero beyond ``K`` (``p[:K] > 0``); ``sums`` is
    scratch of length ``max(nb, 8)``. An inverse-CDF draw in two levels (a group of topics, then a
    topic in the group) with every search branch-free: it counts the running sums at or below the
    uniform over a fixed trip count instead of stopping at the first one above it, so no
    data-dependent branch is mispredicted. Any fixed order of the topics gives an exact draw; the
    grouping depends on ``K`` (:func:`_lane_draw`, :func:`_block_draw`) and the NumPy reference
    follows it operation for operation.
    """
    if K >= LANE_K[0] and K <= LANE_K[1]:
        return _lane_draw(p, sums, nb, K, state)
    return _block_draw(p, sums, nb, K, state)


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
    sums = np.empty(max(nb, BLOCK))
    inv = np.empty(K)
    h = np.zeros(nb * BLOCK)
    lanes = K >= LANE_K[0] and K <= LANE_K[1]  # blocked_draw's choice, made once per sweep
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
            k = np.uintp(_lane_draw(p, sums, nb, K, state) if lanes else _block_draw(p, sums, nb, K, state))
            z[i] = k
            ndk[d, k] += 1
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (max(nk[k], 0) + vbeta)
            h[k] = inv[k] * (max(ndk[d, k], 0) + alpha)
