"""Pure-NumPy/Python reference sweep, used only by the tests to check the compiled kernels.

It follows :func:`dptopic.kernels.dense.dense_sweep` operation for operation and
draws from :class:`PyXorShift`, so on small inputs both give identical assignments.
"""
from __future__ import annotations

import numpy as np

from ._lists import list_add, list_remove
from .rng import PyXorShift


def _ref_prefix8(x):
    """The kernel's tree: the total and the sums of the first 1..7 of eight values."""
    a01, a45 = x[0] + x[1], x[4] + x[5]
    a03 = a01 + (x[2] + x[3])
    return a03 + (a45 + (x[6] + x[7])), [x[0], a01, a01 + x[2], a03, a03 + x[4], a03 + a45, a03 + (a45 + x[6])]


def reference_blocked_draw(p, K, rng) -> int:
    """The draw of :func:`dptopic.kernels.dense.blocked_draw`, operation for operation."""
    B = 8
    nb = (K + B - 1) // B
    p = [float(x) for x in p[:K]] + [0.0] * (max(nb * B, 64) - K)
    if 8 <= K <= 64:  # lanes: topics c, c+8, ..., c+56, every sum a tree
        lane = [((p[c] + p[8 + c]) + (p[16 + c] + p[24 + c])) + ((p[32 + c] + p[40 + c]) + (p[48 + c] + p[56 + c]))
                for c in range(B)]
        total, q = _ref_prefix8(lane)
        u = rng.uniform() * total
        c = sum(qj <= u for qj in q)
        u -= ([0.0] + q)[c]
        _, r = _ref_prefix8([p[c + 8 * j] for j in range(B)])
        b = sum(rj <= u for rj in r)
        return min(b, (K - 1 - c) // B) * B + c
    before, run = [], 0.0  # blocks of eight consecutive topics, each summed left to right
    for b in range(nb):
        acc = 0.0
        for j in range(b * B, b * B + B):
            acc += p[j]
        before.append(run)
        run += acc
    u = rng.uniform() * run
    b = sum(before[j] <= u for j in range(1, nb))
    u -= before[b]
    k, acc = 0, 0.0
    for j in range(B - 1):
        acc += p[b * B + j]
        k += acc <= u
    return min(b * B + k, K - 1)


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
            h = [float(inv[j]) * (max(float(ndk[d, j]), 0.0) + alpha) for j in range(K)]
            p = [(float(c[j]) + beta) * h[j] for j in range(K)]
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


# the list helpers themselves, run as plain Python (their uncompiled source)
_ref_list_remove = list_remove.py_func
_ref_list_add = list_add.py_func


def reference_sparse_sweep(word_ids, doc_ptr, z, ndk, nwk, nk, alpha, beta, state):
    """:func:`dptopic.kernels.sparse.sparse_sweep` operation for operation, in plain Python.

    Same buckets, same in-place removal with lazily updated topic lists, same list order and the
    same uniform stream, so on small inputs both give identical assignments.
    """
    z, ndk, nwk, nk = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    rng = PyXorShift(state)
    V, K = nwk.shape
    vbeta = beta * V
    ab = alpha * beta
    wnz, wpos, wlen = np.zeros((V, K), int), np.full((V, K), -1), np.zeros(V, int)
    for w in range(V):
        for k in range(K):
            if nwk[w, k] > 0:
                wlen[w] = _ref_list_add(wnz[w], wpos[w], wlen[w], k)
    inv = [1.0 / (float(nk[k]) + vbeta) for k in range(K)]
    invm = [1.0 / (float(max(nk[k] - 1, 0)) + vbeta) for k in range(K)]
    coef = [0.0] * K
    s = 0.0  # summed once per sweep, then carried
    for k in range(K):
        s += ab * inv[k]
    for d in range(len(doc_ptr) - 1):
        r = 0.0
        for k in range(K):
            c = float(ndk[d, k])
            coef[k] = (alpha + c) * inv[k]
            r += c * beta * inv[k]
        dnz, dpos, dl = np.zeros(K, int), np.full(K, -1), 0
        for k in range(K):
            if ndk[d, k] > 0:
                dl = _ref_list_add(dnz, dpos, dl, k)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, k0 = int(word_ids[i]), int(z[i])
            inv_in, coef_in = inv[k0], coef[k0]
            nd0 = int(ndk[d, k0]) - 1
            ndk[d, k0] = nd0
            nwk[w, k0] -= 1
            inv0 = invm[k0]
            inv[k0] = inv0
            coef[k0] = (alpha + nd0) * inv0
            s0 = s + ab * (inv0 - inv_in)
            r0 = r + beta * (nd0 * inv0 - (nd0 + 1) * inv_in)
            q, qbuf, n = 0.0, [], int(wlen[w])
            for j in range(n):
                t = int(wnz[w, j])
                q += coef[t] * float(nwk[w, t])
                qbuf.append(q)
            u = rng.uniform() * (s0 + r0 + q)
            k = -1
            if u < q:
                j = sum(1 for jj in range(n - 1) if qbuf[jj] <= u)
                k = int(wnz[w, j])
            elif u < q + r0:
                u -= q
                for j in range(dl):
                    t = int(dnz[j])
                    u -= float(ndk[d, t]) * beta * inv[t]
                    if u < 0:
                        k = t
                        break
            if k < 0:
                u = rng.uniform() * s0
                k = K - 1
                for j in range(K):
                    u -= ab * inv[j]
                    if u < 0:
                        k = j
                        break
            if k == k0:
                ndk[d, k0] = nd0 + 1
                nwk[w, k0] += 1
                inv[k0], coef[k0] = inv_in, coef_in
                continue
            nk[k0] -= 1
            invm[k0] = 1.0 / (float(max(nk[k0] - 1, 0)) + vbeta)
            if nwk[w, k0] == 0:
                wlen[w] = _ref_list_remove(wnz[w], wpos[w], wlen[w], k0)
            if nd0 == 0:
                dl = _ref_list_remove(dnz, dpos, dl, k0)
            z[i] = k
            nd1 = int(ndk[d, k]) + 1
            ndk[d, k] = nd1
            nwk[w, k] += 1
            if nwk[w, k] == 1:
                wlen[w] = _ref_list_add(wnz[w], wpos[w], wlen[w], k)
            if nd1 == 1:
                dl = _ref_list_add(dnz, dpos, dl, k)
            nk[k] += 1
            inv_out = inv[k]
            inv1 = 1.0 / (float(nk[k]) + vbeta)
            s = s0 + ab * (inv1 - inv_out)
            r = r0 + beta * (nd1 * inv1 - (nd1 - 1) * inv_out)
            invm[k], inv[k] = inv_out, inv1
            coef[k] = (alpha + nd1) * inv1
    return z, ndk, nwk, nk
