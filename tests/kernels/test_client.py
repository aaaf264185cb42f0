"""``dptopic.kernels.client``."""
import math

import numpy as np
import pytest

from dptopic.corpus.synthetic import lda_corpus
from dptopic.kernels import client_sweep, kernel_state, subset_client_sweep
from dptopic.kernels.reference import reference_blocked_draw
from dptopic.kernels.rng import PyXorShift
from helpers import KERNEL_SHAPES, XorShiftReference, csr_token_corpus, topic_counts, xorshift_state


@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES)
def test_client_sweep_matches_reference_on_edge_shapes(D, V, K):
    """FedLDA's client sweep, p_k ∝ Φ[w,k](n_dk^¬i + α), on every grouping of the draw and empty documents."""
    rng = np.random.default_rng(K + 3 * V)
    wid, ptr = csr_token_corpus(rng, D, V, 30)
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, _, _ = topic_counts(wid, ptr, z, K, V)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    st = xorshift_state(rng)
    zr, ndr, xs = z.copy(), ndk.copy(), XorShiftReference(st)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ndr[d, zr[i]] -= 1
            zr[i] = reference_blocked_draw(phi_wk[wid[i]] * (ndr[d] + 0.3), K, xs)
            ndr[d, zr[i]] += 1
    client_sweep(wid, ptr, z, ndk, phi_wk, 0.3, st.copy())
    assert np.array_equal(z, zr) and np.array_equal(ndk, ndr)


# ------------------------------------------------------------------ against a NumPy reference on a planted corpus
def _local_reference(word_ids, doc_ptr, z, ndk, phi_wk, alpha, state):
    g = PyXorShift(state)
    for d in range(len(doc_ptr) - 1):
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            ndk[d, z[i]] -= 1
            k = reference_blocked_draw(phi_wk[word_ids[i]] * (ndk[d] + alpha), phi_wk.shape[1], g)
            z[i] = k
            ndk[d, k] += 1


def test_client_sweep_matches_numpy_reference():
    c, phi, _, _ = lda_corpus(n_docs=6, vocab_size=20, n_topics=11, doc_length=15, seed=2)
    rng = np.random.default_rng(0)
    z = rng.integers(0, 11, c.n_tokens, dtype=np.int32)
    ndk = np.zeros((c.n_docs, 11), dtype=np.int32)
    np.add.at(ndk, (np.repeat(np.arange(c.n_docs), c.doc_lengths), z), 1)
    phi_wk = np.ascontiguousarray(phi.T)
    state = np.array([99, 7], dtype=np.uint64)
    z2, ndk2 = z.copy(), ndk.copy()
    _local_reference(c.word_ids, c.doc_ptr, z2, ndk2, phi_wk, 0.1, state.copy())
    client_sweep(c.word_ids, c.doc_ptr, z, ndk, phi_wk, 0.1, state.copy())
    np.testing.assert_array_equal(z, z2)
    np.testing.assert_array_equal(ndk, ndk2)


# ------------------------------------------------------------------ the subset rule's sweep against a NumPy reference
def reference_subset_sweep(sets, z, nk, phi_wk, alpha, e1, pad_weight, state, pick):
    rng = PyXorShift(state)
    K = phi_wk.shape[1]
    for i in range(sets.shape[0]):
        nk[z[i]] -= 1
        w = [(nk[k] + alpha) * (1 + e1 * phi_wk[sets[i], k].sum()) for k in range(K)]
        w.append((nk[K] + alpha) * pad_weight)
        c = np.cumsum(w)
        u = rng.uniform() * c[-1]
        k = int(np.sum(c <= u)) if u >= c[0] else 0
        k = min(k, K)
        z[i] = k
        nk[k] += 1
        pick[i] = -1
        if k < K:
            ws = e1 * phi_wk[sets[i], k]
            u = rng.uniform() * (1.0 + ws.sum())
            c = np.cumsum(ws)
            hit = np.nonzero(u < c)[0]
            pick[i] = int(hit[0]) if hit.size else -1


def test_subset_client_sweep_matches_numpy_reference():
    rng = np.random.default_rng(5)
    V, K, s, n = 12, 3, 3, 40
    sets = np.array([rng.choice(V, s, replace=False) for _ in range(n)], dtype=np.int32)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    z = rng.integers(0, K + 1, n).astype(np.int32)
    nk = np.bincount(z, minlength=K + 1).astype(np.int64)
    state = kernel_state(rng)
    args = (0.1, math.expm1(2.0), 1 + math.expm1(2.0) * s / V)
    z2, nk2, pick, pick2 = z.copy(), nk.copy(), np.zeros(n, np.int64), np.zeros(n, np.int64)
    subset_client_sweep(sets, z, nk, phi_wk, *args, state.copy(), pick)
    reference_subset_sweep(sets, z2, nk2, phi_wk, *args, state.copy(), pick2)
    np.testing.assert_array_equal(z, z2)
    np.testing.assert_array_equal(nk, nk2)
    np.testing.assert_array_equal(pick, pick2)
    assert nk.sum() == n and (pick >= 0).any()
