"""Pure-NumPy/Python reference sweep, used only by the tests to check the compiled kernels.

It follows :func:`dptopic.kernels.dense.dense_sweep` operation for operation and
draws from :class:`PyXorShift`, so on small inputs both give identical assignments.
"""
from __future__ import annotations

import numpy as np

from .rng import PyXorShift


def reference_blocked_draw(p, K, rng) -> int:
    """The blocked draw of :func:`dptopic.kernels.dense.blocked_draw`, operation for operation."""
    B = 8
    nb = (K + B - 1) // B
    p = [float(x) for x in p[:K]] + [0.0] * (nb * B - K)
    bs, total = [], 0.0
    for b in range(nb):  # block sums, each summed left to right, as in the kernel
        acc = 0.0
        for j in range(b * B, b * B + B):
            acc += p[j]
        bs.append(acc)
        total += acc
    u = rng.uniform() * total
    b = 0
    while b < nb - 1 and bs[b] <= u:
        u -= bs[b]
        b += 1
    k, last = b * B, min(K, b * B + B) - 1
    while k < last and p[k] <= u:
        u -= p[k]
        k += 1
    return k


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
            p = [(float(c[j]) + beta) * float(inv[j]) * (max(float(ndk[d, j]), 0.0) + alpha) for j in range(K)]
            k = reference_blocked_draw(p, K, rng)
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
