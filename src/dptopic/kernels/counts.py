"""Count matrices from topic assignments, without per-token temporaries."""
from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True, nogil=True)
def count_assignments(word_ids, doc_ptr, z, n_topics, vocab_size):
    """Return ``(ndk, nwk, nk)`` (int32; ``nwk`` is word-major V×K) for assignments ``z``."""
    D = doc_ptr.shape[0] - 1
    ndk = np.zeros((D, n_topics), dtype=np.int32)
    nwk = np.zeros((vocab_size, n_topics), dtype=np.int32)
    nk = np.zeros(n_topics, dtype=np.int32)
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k = z[i]
            ndk[d, k] += 1
            nwk[word_ids[i], k] += 1
            nk[k] += 1
    return ndk, nwk, nk
