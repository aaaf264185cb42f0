"""``dptopic.kernels.frozen``."""
import numpy as np
import pytest

from dptopic.kernels import frozen_sweep
from helpers import KERNEL_SHAPES, XorShiftReference, csr_token_corpus, topic_counts, xorshift_state


# ------------------------------------------------------------------------------ frozen (sound HDP-LDA)
def _frozen_reference(word_ids, doc_ptr, z, ndk, A, nwk, nk, alpha, vbeta, state, events):
    """frozen_sweep in plain Python: the same proposal buckets, bounds, topic-list order and uniforms."""
    z, ndk, nwk, nk = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    rng = XorShiftReference(state)
    V, K = A.shape
    Al = A.tolist()

    def bounds():
        floor = [max(int(n) - max(4, int(n) // 128), 0) for n in nk]
        return floor, [1.0 / (f + vbeta) for f in floor]

    floor, ib = bounds()
    row_sum = {}
    for d in range(len(doc_ptr) - 1):
        topics = [k for k in range(K) if ndk[d, k] > 0]       # the document's topics, kept swap-with-last
        g = [ib[k] * int(ndk[d, k]) for k in range(K)]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w, k = int(word_ids[i]), int(z[i])
            ndk[d, k] -= 1
            g[k] = ib[k] * int(ndk[d, k])
            nwk[w, k] -= 1
            nk[k] -= 1
            if ndk[d, k] == 0:
                j, last = topics.index(k), topics.pop()
                if j < len(topics):
                    topics[j] = last
            if nk[k] < floor[k]:
                floor, ib = bounds()
                row_sum.clear()
                g = [ib[t] * int(ndk[d, t]) for t in range(K)]
                events["reset"] += 1
            if w not in row_sum:
                acc = 0.0
                for t in range(K):
                    acc += Al[w][t] * ib[t]
                row_sum[w] = acc
            smooth = alpha * row_sum[w]
            prefix, r = [], 0.0
            for t in topics:
                r += Al[w][t] * g[t]
                prefix.append(r)
            while True:
                u = rng.uniform() * (r + smooth)
                if u < r:
                    k = topics[next((j for j, c in enumerate(prefix) if c > u), len(prefix) - 1)]
                else:
                    events["smooth"] += 1
                    x, k, acc = (u - r) / alpha, K - 1, 0.0
                    for t in range(K):
                        acc += Al[w][t] * ib[t]
                        if acc > x:
                            k = t
                            break
                if rng.uniform() * (int(nk[k]) + vbeta) < floor[k] + vbeta:
                    break
                events["reject"] += 1
            z[i] = k
            ndk[d, k] += 1
            g[k] = ib[k] * int(ndk[d, k])
            nwk[w, k] += 1
            nk[k] += 1
            if ndk[d, k] == 1:
                topics.append(k)
    return z, ndk, nwk, nk


@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES + [(12, 6, 4)])
def test_frozen_sweep_matches_reference_draw_for_draw(D, V, K):
    """Sound HDP-LDA's rejection sampler against its plain-Python twin over three sweeps: small topic totals, so
    the bounds are reset mid-document, proposals are rejected and the smoothing bucket is drawn from."""
    rng = np.random.default_rng(D + V + K)
    wid, ptr = csr_token_corpus(rng, D, V, 9)
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, nwk, nk = topic_counts(wid, ptr, z, K, V)
    A = np.clip(nwk + rng.laplace(0, 1, nwk.shape), 0, 2.0) + 0.1
    alpha, vbeta = 0.8, 0.1 * V
    events = {"reset": 0, "smooth": 0, "reject": 0}
    zr, ndr, nwr, nkr = z, ndk, nwk, nk
    zk, ndk_k, nwk_k, nk_k = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    for _ in range(3):
        st = xorshift_state(rng)
        zr, ndr, nwr, nkr = _frozen_reference(wid, ptr, zr, ndr, A, nwr, nkr, alpha, vbeta, st.copy(), events)
        frozen_sweep(wid, ptr, zk, ndk_k, A, nwk_k, nk_k, alpha, vbeta, st.copy())
        assert np.array_equal(zk, zr) and np.array_equal(ndk_k, ndr)
        assert np.array_equal(nwk_k, nwr) and np.array_equal(nk_k, nkr)
    if (D, V, K) == (12, 6, 4):  # the rare paths are exercised
        assert events["reset"] > 0 and events["smooth"] > 0 and events["reject"] > 0, events
