"""FedLDA's client-side sampling: a Gibbs sweep of one user's tokens against the broadcast global Φ.

Each client keeps its own assignments ``z`` and document–topic counts ``ndk`` across rounds (the
chain continues; :func:`~dptopic.kernels.fold_in` instead restarts from random assignments). The
word factor is the fixed global ``Φ`` (stored word-major, ``V × K``), so the conditional is

    p(z_i = k) ∝ Φ[w_i, k] · (n_dk^{¬i} + α)

(Wang, Tong & Shi 2020: "each user samples new topic–word assignments from the global Φ and the
local θ"). The draw uses the same blocked order of operations as :func:`~dptopic.kernels.dense_sweep`.
"""
from __future__ import annotations

from ._jit import njit
from .dense import blocked_draw, draw_buffers


@njit(cache=True, nogil=True)
def client_sweep(word_ids, doc_ptr, z, ndk, phi_wk, alpha, state):
    """One sweep over every token of the client, in order. Mutates ``z``, ``ndk`` and ``state``."""
    K = phi_wk.shape[1]
    p, sums, nb = draw_buffers(K)
    D = doc_ptr.shape[0] - 1
    for d in range(D):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            ndk[d, z[i]] -= 1
            for j in range(K):
                p[j] = phi_wk[w, j] * (ndk[d, j] + alpha)
            k = blocked_draw(p, sums, nb, K, state)
            z[i] = k
            ndk[d, k] += 1


