"""The RRP replacement step (FedLDA, Wang, Tong & Shi 2020) as a compiled kernel.

For every entry ``i`` with input word ``words[i]`` (``-1`` for a padding entry) and replacement
distribution row ``rows[i]``: one uniform decides whether the entry is perturbed (probability
``eta``; always for padding, and for a word outside the row's kept set when ``rare_always``); a
perturbed entry gets a word drawn by inverse CDF from the row's kept words, redrawn while it equals
the input word when ``exclude_self`` (exact rejection sampling of "another word").
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._search import first_above
from .rng import next_uniform


@njit(cache=True, nogil=True)
def rrp_replace(words, rows, kept_words, kept_cdf, kept_len, kept_mask, eta, exclude_self, rare_always, state, out,
                replaced):
    """Fill ``out`` (reported words) and ``replaced`` (0/1). ``kept_cdf[r, :kept_len[r]]`` ends at 1."""
    n = words.shape[0]
    for i in range(n):
        w = words[i]
        r = rows[i]
        u = next_uniform(state)
        keep = w >= 0 and u >= eta and (kept_mask[r, w] or not rare_always)
        if keep:
            out[i] = w
            replaced[i] = 0
            continue
        m = kept_len[r]
        while True:
            c = kept_words[r, first_above(kept_cdf, r, m, next_uniform(state))]
            if not (exclude_self and c == w):
                break
        out[i] = c
        replaced[i] = 1


@njit(cache=True, nogil=True)
def subset_select(words, V, s, p_in, state, out):
    """Subset selection (Wang et al. 2016; Ye & Barg 2018): row ``i`` of ``out`` (``n × s``) gets ``s``
    distinct words.

    With probability ``p_in`` (never for padding, ``words[i] = -1``) the set holds the true word and
    ``s - 1`` other words drawn uniformly without replacement; otherwise ``s`` words drawn uniformly
    from the words other than the true one (from all ``V`` for padding). Draws without replacement
    use Floyd's algorithm over the candidates, with the true word skipped by an index shift.
    """
    n = words.shape[0]
    for i in range(n):
        w = words[i]
        start = 0
        if w >= 0 and next_uniform(state) < p_in:
            out[i, 0] = w
            start = 1
        N = V - 1 if w >= 0 else V  # candidates: every word except the true one (padding: every word)
        need = s - start
        for j in range(N - need, N):
            t = int(next_uniform(state) * (j + 1))
            if t > j:
                t = j
            c = t + 1 if (w >= 0 and t >= w) else t
            dup = False
            for q in range(start, start + j - (N - need)):
                if out[i, q] == c:
                    dup = True
                    break
            if dup:
                c = j + 1 if (w >= 0 and j >= w) else j
            out[i, start + j - (N - need)] = c


@njit(cache=True, nogil=True)
def subset_client_sweep(sets, z, nk, phi_wk, alpha, e1, pad_weight, state, pick):
    """One Gibbs sweep over a user's randomized entries (subset reports ``sets``, ``n × s``).

    Component ``k < K`` of entry ``i`` has weight ``(nk[k] + alpha) (1 + e1 Σ_j phi_wk[sets[i, j], k])``
    (``e1 = e^eps - 1``: the likelihood of the subset given the topic, up to a constant); the padding
    component ``K`` has ``(nk[K] + alpha) pad_weight``. For a topic, the word is then drawn from the set
    with weight ``e1 phi_wk[w, k]``, or none (weight 1: the set came from the part of the randomizer that
    ignores the word), which sets ``pick[i] = -1``; padding also gives ``-1``. Mutates ``z``, ``nk``,
    ``pick`` and ``state``.
    """
    n, s = sets.shape
    K = phi_wk.shape[1]
    p = np.empty(K + 1)
    for i in range(n):
        nk[z[i]] -= 1
        tot = 0.0
        for k in range(K):
            f = 0.0
            for j in range(s):
                f += phi_wk[sets[i, j], k]
            tot += (nk[k] + alpha) * (1.0 + e1 * f)
            p[k] = tot
        tot += (nk[K] + alpha) * pad_weight
        p[K] = tot
        u = next_uniform(state) * tot
        k = 0
        while k < K and p[k] <= u:
            k += 1
        z[i] = k
        nk[k] += 1
        pick[i] = -1
        if k < K:
            tot = 1.0
            for j in range(s):
                tot += e1 * phi_wk[sets[i, j], k]
            u = next_uniform(state) * tot
            acc = 0.0
            for j in range(s):
                acc += e1 * phi_wk[sets[i, j], k]
                if u < acc:
                    pick[i] = j
                    break


@njit(cache=True, nogil=True)
def subset_theta_em(sets, phi_wk, e1, pad_weight, alpha, max_iter, tol, lik, theta):
    """The user's topic proportions that best explain its randomized entries, by EM (``docs/fedlda.md``).

    Fills ``lik`` (``n × (K+1)``): ``lik[i, k] = 1 + e1 Σ_j phi_wk[sets[i, j], k]`` for a topic ``k < K``
    (the probability of the set given the topic, up to a factor common to all components) and
    ``lik[i, K] = pad_weight`` (a padding entry's uniform set). Then iterates, from the uniform start,
    ``theta_k ∝ alpha + Σ_i theta_k lik[i, k] / Σ_c theta_c lik[i, c]`` until no component moves by more
    than ``tol`` or ``max_iter`` iterations; ``theta`` (``K+1``) receives the result. The objective is
    concave in ``theta``, so the fixed point does not depend on the start. Returns the iterations used.
    """
    n, s = sets.shape
    K = phi_wk.shape[1]
    C = K + 1
    for i in range(n):
        for k in range(K):
            f = 0.0
            for j in range(s):
                f += phi_wk[sets[i, j], k]
            lik[i, k] = 1.0 + e1 * f
        lik[i, K] = pad_weight
    for c in range(C):
        theta[c] = 1.0 / C
    acc = np.empty(C)
    it = 0
    while it < max_iter:
        it += 1
        for c in range(C):
            acc[c] = alpha
        for i in range(n):
            tot = 0.0
            for c in range(C):
                tot += theta[c] * lik[i, c]
            for c in range(C):
                acc[c] += theta[c] * lik[i, c] / tot
        norm = 0.0
        for c in range(C):
            norm += acc[c]
        moved = 0.0
        for c in range(C):
            t = acc[c] / norm
            d = abs(t - theta[c])
            if d > moved:
                moved = d
            theta[c] = t
        if moved <= tol:
            break
    return it


@njit(cache=True, nogil=True)
def sample_labels(lik, theta, state, z):
    """``z[i]`` drawn from ``p(c) ∝ theta[c] lik[i, c]`` (inverse CDF, one uniform per entry)."""
    n, C = lik.shape
    for i in range(n):
        tot = 0.0
        for c in range(C):
            tot += theta[c] * lik[i, c]
        u = next_uniform(state) * tot
        acc = 0.0
        k = C - 1
        for c in range(C):
            acc += theta[c] * lik[i, c]
            if u < acc:
                k = c
                break
        z[i] = k


@njit(cache=True, nogil=True)
def subset_signal_add(labels, sets, phi, e1, counts):
    """Add to ``counts`` (``K × V``) each labelled report's expected revealed words (``mechanisms.rrp``'s
    ``subset_signal_counts``): for entry ``i`` with label ``k < K`` and each ``w`` in ``sets[i]``,
    ``e1 phi[k, w] / (1 + e1 Σ_{v ∈ sets[i]} phi[k, v])``. Entries labelled ``K`` (padding) add nothing. Streams
    over the entries, so the server never holds more than one update's reports at a time."""
    n, s = sets.shape
    K = phi.shape[0]
    for i in range(n):
        k = labels[i]
        if k >= K:
            continue
        tot = 1.0
        for j in range(s):
            tot += e1 * phi[k, sets[i, j]]
        for j in range(s):
            w = sets[i, j]
            counts[k, w] += e1 * phi[k, w] / tot


