"""Boolean sliding-window co-occurrence counts of a few words (the probability estimate of topic coherence,
Röder et al. 2015): a pure function over a corpus's token arrays."""
from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True, nogil=True)
def window_cooccurrence(word_ids, doc_ptr, slot, n_slots, window):
    """Over every window of ``window`` consecutive tokens (a document shorter than that is one window), count the
    windows in which each tracked word occurs and each pair of tracked words occurs together.

    ``slot[w]`` is the tracked index of vocabulary word ``w`` (−1: not tracked). Returns ``(n_windows, single[n],
    pair[n, n])`` with ``pair`` symmetric and ``pair[i, i] = single[i]``.
    """
    single = np.zeros(n_slots, np.int64)
    pair = np.zeros((n_slots, n_slots), np.int64)
    cnt = np.zeros(n_slots, np.int64)
    present = np.empty(n_slots, np.int64)
    n_windows = 0
    D = doc_ptr.shape[0] - 1
    for d in range(D):
        a, b = doc_ptr[d], doc_ptr[d + 1]
        L = b - a
        if L == 0:
            continue
        s = window if L > window else L
        for i in range(a, a + s):
            j = slot[word_ids[i]]
            if j >= 0:
                cnt[j] += 1
        for start in range(a, b - s + 1):
            if start > a:  # slide by one: drop the token that left, add the one that came in
                j = slot[word_ids[start - 1]]
                if j >= 0:
                    cnt[j] -= 1
                j = slot[word_ids[start + s - 1]]
                if j >= 0:
                    cnt[j] += 1
            m = 0
            for j in range(n_slots):
                if cnt[j] > 0:
                    present[m] = j
                    m += 1
            for x in range(m):
                single[present[x]] += 1
                for y in range(m):
                    pair[present[x], present[y]] += 1
            n_windows += 1
        for i in range(b - s, b):  # reset the counts of the last window
            j = slot[word_ids[i]]
            if j >= 0:
                cnt[j] = 0
    return n_windows, single, pair
