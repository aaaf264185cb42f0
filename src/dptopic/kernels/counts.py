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


@njit(cache=True, nogil=True)
def undo_moves(word_ids, doc_ptr, z, z_before, ndk, nwk):
    """Take back the moves a sweep made from ``z_before`` to ``z`` in integer counts, in place: for each token whose
    topic changed, one count back from its new topic to its old one in ``ndk`` (rows of the documents of ``doc_ptr``)
    and ``nwk``. Exact whatever the counts hold (noise included): a sweep changes them by one per token and topic."""
    D = doc_ptr.shape[0] - 1
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            k, k0 = z[i], z_before[i]
            if k != k0:
                w = word_ids[i]
                ndk[d, k] -= 1
                ndk[d, k0] += 1
                nwk[w, k] -= 1
                nwk[w, k0] += 1


@njit(cache=True, nogil=True)
def list_positions(items, length, pos):
    """Rebuild the positions ``pos`` (rows × K, −1 for an absent topic) of per-row topic lists ``items[r, :length[r]]``
    (the ``wpos`` of :func:`~dptopic.kernels.sparse.build_word_lists` from its ``wnz`` and ``wlen``)."""
    for r in range(items.shape[0]):
        for k in range(pos.shape[1]):
            pos[r, k] = -1
        for j in range(length[r]):
            pos[r, items[r, j]] = j
