"""Dense collapsed Gibbs sweep: the reference kernel and the base of the private variants.

One source, several compiled specialisations:

* plain CGS: ``word_table is nwk`` (int32), ``clip = inf``;
* noisy-count trainers (CDP-LDA, paper-literal HDP-LDA): float64 counts, live updates,
  negative noisy counts clamped to 0 and (HDP) the word factor clipped at ``clip``;
* sound HDP-LDA: ``word_table`` is the iteration's frozen, clamped noisy release and
  ``nwk`` the true counts, which only feed the next release.

The conditional for token ``i`` (word ``w``, document ``d``), with ``¬i`` counts:
``p_k ∝ (min(max(T[w,k],0),clip) + β) / (max(n_k,0) + Vβ) · (max(n_dk,0) + α)``: the collapsed Gibbs conditional (Griffiths & Steyvers 2004) with the noisy, clamped counts of HDP-LDA (Zhao et al. 2020).
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._prefetch import prefetch
from ._simd import LANES, VECTOR_FROM, lane_weights, vector_works
from .rng import next_uniform

BLOCK = 8
LANE_K = (8, 64)  # from 8 to 64 topics the draw groups the weights by lanes, otherwise by blocks
PREFETCH_AHEAD = 4  # tokens


@njit(inline="always", cache=True)
def _prefix8(x0, x1, x2, x3, x4, x5, x6, x7):
    """The total and the sums of the first 1..7 of eight values, added as a tree: three additions deep
    instead of eight in a row, which is what the draw waits on."""
    a01 = x0 + x1
    a45 = x4 + x5
    a03 = a01 + (x2 + x3)
    return a03 + (a45 + (x6 + x7)), x0, a01, a01 + x2, a03, a03 + x4, a03 + a45, a03 + (a45 + x6)


@njit(inline="always", cache=True)
def _lane_pick(lanes, p, sums, K, state):
    """Draw from the eight lane sums ``lanes`` (``lanes[c] = Σ_m p[c + 8m]``): the lane, then the topic in it."""
    l0, l1, l2, l3, l4, l5, l6, l7 = lanes
    total, q1, q2, q3, q4, q5, q6, q7 = _prefix8(l0, l1, l2, l3, l4, l5, l6, l7)
    u = next_uniform(state) * total
    # the lane: how many lane prefixes lie at or below u (no branch to mispredict)
    c = (q1 <= u) + (q2 <= u) + (q3 <= u) + (q4 <= u) + (q5 <= u) + (q6 <= u) + (q7 <= u)
    sums[0] = 0.0  # the lane prefixes, to subtract the chosen one by index
    sums[1] = q1
    sums[2] = q2
    sums[3] = q3
    sums[4] = q4
    sums[5] = q5
    sums[6] = q6
    sums[7] = q7
    u -= sums[c]
    _, r1, r2, r3, r4, r5, r6, r7 = _prefix8(p[c], p[c + 8], p[c + 16], p[c + 24], p[c + 32], p[c + 40],
                                             p[c + 48], p[c + 56])
    b = (r1 <= u) + (r2 <= u) + (r3 <= u) + (r4 <= u) + (r5 <= u) + (r6 <= u) + (r7 <= u)
    return min(b, (K - 1 - c) // BLOCK) * BLOCK + c


@njit(inline="always", cache=True)
def _lane_draw(p, sums, K, state):
    """8 to 64 topics (``p`` padded with zeros to 64): lane ``c`` holds topics ``c, c+8, …, c+56``.
    Pick the lane from the eight lane sums, then the topic inside it; every sum is a tree."""
    l0 = ((p[0] + p[8]) + (p[16] + p[24])) + ((p[32] + p[40]) + (p[48] + p[56]))
    l1 = ((p[1] + p[9]) + (p[17] + p[25])) + ((p[33] + p[41]) + (p[49] + p[57]))
    l2 = ((p[2] + p[10]) + (p[18] + p[26])) + ((p[34] + p[42]) + (p[50] + p[58]))
    l3 = ((p[3] + p[11]) + (p[19] + p[27])) + ((p[35] + p[43]) + (p[51] + p[59]))
    l4 = ((p[4] + p[12]) + (p[20] + p[28])) + ((p[36] + p[44]) + (p[52] + p[60]))
    l5 = ((p[5] + p[13]) + (p[21] + p[29])) + ((p[37] + p[45]) + (p[53] + p[61]))
    l6 = ((p[6] + p[14]) + (p[22] + p[30])) + ((p[38] + p[46]) + (p[54] + p[62]))
    l7 = ((p[7] + p[15]) + (p[23] + p[31])) + ((p[39] + p[47]) + (p[55] + p[63]))
    return _lane_pick((l0, l1, l2, l3, l4, l5, l6, l7), p, sums, K, state)


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

    ``p`` has ``max(8·nb, 64)`` entries, ``nb = ceil(K/8)``, zero beyond ``K`` (``p[:K] > 0``);
    ``sums`` is scratch of length ``max(nb, 8)`` (:func:`draw_buffers`). An inverse-CDF draw in two
    levels (a group of topics, then a topic in the group) with every search branch-free: it counts
    the running sums at or below the uniform instead of stopping at the first one above it, so no
    data-dependent branch is mispredicted. Any fixed order of the topics gives an exact draw; the
    grouping depends on ``K`` (:func:`_lane_draw`, :func:`_block_draw`) and the NumPy reference
    follows it operation for operation.
    """
    if K >= LANE_K[0] and K <= LANE_K[1]:
        return _lane_draw(p, sums, K, state)
    return _block_draw(p, sums, nb, K, state)


@njit(cache=True)
def draw_buffers(K):
    """``(p, sums, nb)`` for :func:`blocked_draw` with ``K`` topics."""
    nb = (K + BLOCK - 1) // BLOCK
    return np.zeros(max(nb * BLOCK, 64)), np.empty(max(nb, BLOCK)), nb


@njit(inline="always", cache=True)
def _sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state, vector):
    """:func:`dense_sweep`'s body; ``vector`` is a constant of each compiled specialisation, so the branch
    it guards is resolved at compile time."""
    K = nk.shape[0]
    p, sums, nb = draw_buffers(K)
    inv = np.empty(K)
    h = np.zeros(max(nb * BLOCK, LANES))  # zero beyond K, as lane_weights requires
    lanes = K >= LANE_K[0] and K <= LANE_K[1]  # blocked_draw's choice, made once per sweep
    for j in range(K):
        inv[j] = 1.0 / (max(nk[j], 0) + vbeta)
    D = doc_ptr.shape[0] - 1
    n_tok = word_ids.shape[0]
    per_line = max(64 // word_table.itemsize, 1)
    lines = (K + per_line - 1) // per_line
    for d in range(D):
        if doc_ptr[d] == doc_ptr[d + 1]:
            continue    # no token here (the partition scheme's cells leave out most words of a document)
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
            if vector:
                k = np.uintp(_lane_pick(lane_weights(word_table, w, h, beta, clip, p), p, sums, K, state))
            else:
                for j in range(K):
                    p[j] = (min(max(word_table[w, j], 0), clip) + beta) * h[j]
                k = np.uintp(_lane_draw(p, sums, K, state) if lanes else _block_draw(p, sums, nb, K, state))
            z[i] = k
            ndk[d, k] += 1
            nwk[w, k] += 1
            nk[k] += 1
            inv[k] = 1.0 / (max(nk[k], 0) + vbeta)
            h[k] = inv[k] * (max(ndk[d, k], 0) + alpha)


@njit(cache=True, nogil=True)
def _dense_sweep_scalar(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state):
    _sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state, False)


@njit(cache=True, nogil=True)
def _dense_sweep_vector(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state):
    _sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state, True)


def dense_sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state):
    """Sweep every token of a shard once, in order. Mutates z, ndk, nwk, nk, state.

    The document factor ``h_k = (max(n_dk,0) + α) / (max(n_k,0) + Vβ)`` is kept per document and
    refreshed only for the two topics a token leaves and joins, so a topic's weight is one clamp
    and one product; the word row of the token a few places ahead is prefetched. The draw avoids
    a length-K serial prefix sum (:func:`blocked_draw`; the NumPy reference follows the same order
    of operations). From 33 to 64 topics, with a C-contiguous table, the weights and the lane sums
    are computed together in four-wide vector code (:func:`~dptopic.kernels._simd.lane_weights`), with
    the same sums; the choice is made here, once per sweep, between two compiled kernels.
    """
    K = nk.shape[0]
    vector = VECTOR_FROM <= K <= LANES and word_table.flags.c_contiguous and vector_works()
    kernel = _dense_sweep_vector if vector else _dense_sweep_scalar
    kernel(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, vbeta, clip, state)
