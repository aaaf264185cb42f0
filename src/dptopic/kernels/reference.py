"""Pure-NumPy/Python reference sweep, used only by the tests to check the compiled kernels.

It follows :func:`dptopic.kernels.dense.dense_sweep` operation for operation and
draws from :class:`PyXorShift`, so on small inputs both give identical assignments.
"""
from __future__ import annotations

import numpy as np

from .rng import PyXorShift


def reference_sweep(word_ids, doc_ptr, z, ndk, nwk, nk, alpha, beta, state, word_table=None,
                    clip=np.inf):
    z, ndk, nwk, nk = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    table = nwk if word_table is None else word_table
    rng = PyXorShift(state)
    V, K = nwk.shape
    vbeta = V * beta
    for d in range(len(doc_ptr) - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, k = word_ids[i], z[i]
            ndk[d, k] -= 1
            nwk[w, k] -= 1
            nk[k] -= 1
            inv = 1.0 / (np.maximum(nk, 0) + vbeta)
            c = np.minimum(np.maximum(table[w], 0), clip)
            terms = [(float(c[j]) + beta) * float(inv[j]) * (max(float(ndk[d, j]), 0.0) + alpha) for j in range(K)]
            p = np.cumsum(terms)  # sequential left-to-right sums, like the kernel
            u = rng.uniform() * p[-1]
            k = 0
            while k < K - 1 and p[k] <= u:
                k += 1
            z[i] = k
            ndk[d, k] += 1
            nwk[w, k] += 1
            nk[k] += 1
    return z, ndk, nwk, nk


def conditional(word_ids, doc_ptr, z, ndk, nwk, nk, alpha, beta, i):
    """Exact normalised CGS conditional of token ``i`` (``¬i`` counts)."""
    d = int(np.searchsorted(doc_ptr, i, side="right") - 1)
    w, k = word_ids[i], z[i]
    ndk, nwk, nk = ndk.copy(), nwk.copy(), nk.copy()
    ndk[d, k] -= 1
    nwk[w, k] -= 1
    nk[k] -= 1
    p = (nwk[w] + beta) / (nk + nwk.shape[0] * beta) * (ndk[d] + alpha)
    return p / p.sum()
