"""The RRP replacement step (FedLDA, Wang, Tong & Shi 2020) as a compiled kernel.

For every entry ``i`` with input word ``words[i]`` (``-1`` for a padding entry) and replacement
distribution row ``rows[i]``: one uniform decides whether the entry is perturbed (probability
``eta``; always for padding, and for a word outside the row's kept set when ``rare_always``); a
perturbed entry gets a word drawn by inverse CDF from the row's kept words, redrawn while it equals
the input word when ``exclude_self`` (exact rejection sampling of "another word").
"""
from __future__ import annotations

from numba import njit

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
