"""Compiled kernels against small NumPy / plain-Python references (kernel audit 50).

Each test here covers a kernel that had no direct reference test, or only one on a single shape: a small,
readable reference written in this file, compared on small random inputs of several shapes and on the edge
cases (empty documents, one topic, one word, zero counts). Random kernels are compared draw for draw: the
references replay the same xorshift128+ stream, written out below independently of ``dptopic.kernels.rng``.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from dptopic.kernels import count_assignments, frozen_sweep, local_sweep, subset_select, sweep_shard
from dptopic.kernels import randomized_response as rr
from dptopic.kernels._lists import list_add, list_from_counts, list_remove
from dptopic.kernels.docdp import tokens_to_bow
from dptopic.kernels.em import _em_step, max_doc_loglik
from dptopic.kernels.foldin import token_log_likelihood
from dptopic.kernels.noise import ZIG_F, ZIG_K, ZIG_R, ZIG_W, standard_exponentials
from dptopic.kernels.reference import reference_blocked_draw, reference_sparse_sweep, reference_sweep
from dptopic.kernels.rng import document_state
from dptopic.kernels.sparse import build_word_lists, list_dtype

M64 = (1 << 64) - 1


class XS:
    """xorshift128+ (Vigna 2014) in plain Python: the kernels' stream, written out here independently."""

    def __init__(self, state):
        self.s0, self.s1 = int(state[0]), int(state[1])

    def u64(self) -> int:
        a, b = self.s0, self.s1
        self.s0 = b
        a ^= (a << 23) & M64
        self.s1 = a ^ b ^ (a >> 17) ^ (b >> 26)
        return (self.s1 + b) & M64

    def uniform(self) -> float:
        return (self.u64() >> 11) * 2.0 ** -53


def _state(rng):
    return rng.integers(1, 2 ** 63 - 1, size=2).astype(np.uint64)


def _corpus(rng, D, V, max_len, n_empty=1):
    """A CSR token corpus of ``D`` documents over ``V`` words; the first ``n_empty`` documents are empty."""
    lens = rng.integers(1, max_len + 1, D)
    lens[:n_empty] = 0
    rng.shuffle(lens)
    ptr = np.zeros(D + 1, np.int64)
    np.cumsum(lens, out=ptr[1:])
    return rng.integers(0, V, int(ptr[-1])).astype(np.int32), ptr


def _counts(word_ids, ptr, z, K, V, dtype=np.int32):
    ndk = np.zeros((len(ptr) - 1, K), dtype)
    nwk = np.zeros((V, K), dtype)
    doc = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    np.add.at(ndk, (doc, z), 1)
    np.add.at(nwk, (word_ids, z), 1)
    return ndk, nwk, nwk.sum(0).astype(dtype)


# (documents, vocabulary, topics): one word, one topic, both lane / block draws, more than 64 topics
SHAPES = [(3, 1, 1), (4, 1, 3), (6, 5, 1), (8, 7, 5), (10, 20, 9), (5, 12, 70)]


# ------------------------------------------------------------------------------ counts
@pytest.mark.parametrize("D,V,K", SHAPES + [(0, 3, 2)])
def test_count_assignments_edge_shapes(D, V, K):
    rng = np.random.default_rng(D * 100 + V + K)
    wid, ptr = _corpus(rng, D, V, 6, n_empty=min(D, 1))
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, nwk, nk = count_assignments(wid, ptr, z, K, V)
    ref_ndk, ref_nwk, ref_nk = np.zeros((D, K), int), np.zeros((V, K), int), np.zeros(K, int)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ref_ndk[d, z[i]] += 1
            ref_nwk[wid[i], z[i]] += 1
            ref_nk[z[i]] += 1
    assert np.array_equal(ndk, ref_ndk) and np.array_equal(nwk, ref_nwk) and np.array_equal(nk, ref_nk)


# ------------------------------------------------------------------------------ dense, sparse, local
@pytest.mark.parametrize("D,V,K", SHAPES)
def test_dense_and_sparse_sweeps_match_their_references_on_edge_shapes(D, V, K):
    """The plain-Python twins of the dense and SparseLDA sweeps on one word, one topic and empty documents."""
    rng = np.random.default_rng(K * 7 + V)
    wid, ptr = _corpus(rng, D, V, 30)
    z0 = rng.integers(0, K, len(wid)).astype(np.int32)
    for kind, ref in (("dense", reference_sweep), ("sparse", reference_sparse_sweep)):
        z = z0
        ndk, nwk, nk = _counts(wid, ptr, z, K, V)
        for _ in range(2):
            st = _state(rng)
            want = ref(wid, ptr, z, ndk, nwk, nk, 0.4, 0.05, st.copy())
            got = sweep_shard(kind, wid, ptr, z, ndk, nwk, nk, 0.4, 0.05, st.copy())
            assert np.array_equal(got[0], want[0]), kind
            assert np.array_equal(got[1], want[1]) and np.array_equal(nwk + got[2], want[2]), kind
            assert np.array_equal(nk + got[3], want[3]), kind
            z, ndk, nwk, nk = want
        if K > 1:
            assert (z != z0).any()


@pytest.mark.parametrize("D,V,K", SHAPES)
def test_local_sweep_matches_reference_on_edge_shapes(D, V, K):
    """FedLDA's local sweep, p_k ∝ Φ[w,k](n_dk^¬i + α), on every grouping of the draw and empty documents."""
    rng = np.random.default_rng(K + 3 * V)
    wid, ptr = _corpus(rng, D, V, 30)
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, _, _ = _counts(wid, ptr, z, K, V)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    st = _state(rng)
    zr, ndr, xs = z.copy(), ndk.copy(), XS(st)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ndr[d, zr[i]] -= 1
            zr[i] = reference_blocked_draw(phi_wk[wid[i]] * (ndr[d] + 0.3), K, xs)
            ndr[d, zr[i]] += 1
    local_sweep(wid, ptr, z, ndk, phi_wk, 0.3, st.copy())
    assert np.array_equal(z, zr) and np.array_equal(ndk, ndr)


# ------------------------------------------------------------------------------ frozen (sound HDP-LDA)
def _frozen_reference(word_ids, doc_ptr, z, ndk, A, nwk, nk, alpha, vbeta, state, events):
    """frozen_sweep in plain Python: the same proposal buckets, bounds, topic-list order and uniforms."""
    z, ndk, nwk, nk = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    rng = XS(state)
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


@pytest.mark.parametrize("D,V,K", SHAPES + [(12, 6, 4)])
def test_frozen_sweep_matches_reference_draw_for_draw(D, V, K):
    """Sound HDP-LDA's rejection sampler against its plain-Python twin over three sweeps: small topic totals, so
    the bounds are reset mid-document, proposals are rejected and the smoothing bucket is drawn from."""
    rng = np.random.default_rng(D + V + K)
    wid, ptr = _corpus(rng, D, V, 9)
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, nwk, nk = _counts(wid, ptr, z, K, V)
    A = np.clip(nwk + rng.laplace(0, 1, nwk.shape), 0, 2.0) + 0.1
    alpha, vbeta = 0.8, 0.1 * V
    events = {"reset": 0, "smooth": 0, "reject": 0}
    zr, ndr, nwr, nkr = z, ndk, nwk, nk
    zk, ndk_k, nwk_k, nk_k = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    for _ in range(3):
        st = _state(rng)
        zr, ndr, nwr, nkr = _frozen_reference(wid, ptr, zr, ndr, A, nwr, nkr, alpha, vbeta, st.copy(), events)
        frozen_sweep(wid, ptr, zk, ndk_k, A, nwk_k, nk_k, alpha, vbeta, st.copy())
        assert np.array_equal(zk, zr) and np.array_equal(ndk_k, ndr)
        assert np.array_equal(nwk_k, nwr) and np.array_equal(nk_k, nkr)
    if (D, V, K) == (12, 6, 4):  # the rare paths are exercised
        assert events["reset"] > 0 and events["smooth"] > 0 and events["reject"] > 0, events


# ------------------------------------------------------------------------------ topic lists
@njit(cache=False)
def _list_run(counts, ops):
    """Build a list from ``counts``, then apply ``ops`` (k >= 0: add k; k < 0: remove -k-1); snapshot after each."""
    K = counts.shape[0]
    items = np.empty(K, np.int64)
    pos = np.empty(K, np.int64)
    lens = np.empty(ops.shape[0] + 1, np.int64)
    snap = np.full((ops.shape[0] + 1, K), -9, np.int64)
    psnap = np.empty((ops.shape[0] + 1, K), np.int64)
    n = list_from_counts(counts, items, pos)
    for s in range(ops.shape[0] + 1):
        if s > 0:
            k = ops[s - 1]
            n = list_add(items, pos, n, k) if k >= 0 else list_remove(items, pos, n, -k - 1)
        lens[s] = n
        snap[s, :n] = items[:n]
        psnap[s] = pos
    return lens, snap, psnap


@pytest.mark.parametrize("K", [1, 2, 5, 17])
def test_topic_lists_match_a_python_list(K):
    """list_from_counts lists the positive counts in increasing order; list_remove moves the last item into the
    freed place; pos is the inverse (−1 when absent)."""
    rng = np.random.default_rng(K)
    counts = rng.integers(-1, 3, K).astype(np.int32)
    counts[0] = 0
    items = [k for k in range(K) if counts[k] > 0]
    ops, snaps = [], [list(items)]
    for _ in range(40):
        absent = [k for k in range(K) if k not in items]
        if items and (not absent or rng.random() < 0.5):
            k = int(rng.choice(items))
            j, last = items.index(k), items.pop()
            if j < len(items):
                items[j] = last
            ops.append(-k - 1)
        else:
            k = int(rng.choice(absent))
            items.append(k)
            ops.append(k)
        snaps.append(list(items))
    lens, snap, psnap = _list_run(counts, np.array(ops, np.int64))
    for s, want in enumerate(snaps):
        assert lens[s] == len(want) and snap[s, :lens[s]].tolist() == want
        assert psnap[s].tolist() == [want.index(k) if k in want else -1 for k in range(K)]


@pytest.mark.parametrize("V,K", [(1, 1), (4, 1), (1, 6), (9, 5), (6, 130)])
def test_build_word_lists_matches_numpy(V, K):
    rng = np.random.default_rng(V * K)
    nwk = rng.integers(-1, 3, (V, K)).astype(np.int32)
    nwk[0] = 0                                              # a word with no topic
    wnz, wpos, wlen = build_word_lists(nwk)
    assert wnz.dtype == wpos.dtype == list_dtype(K) and (K <= 127) == (wnz.dtype == np.int8)
    for w in range(V):
        listed = np.flatnonzero(nwk[w] > 0)
        assert wlen[w] == len(listed) and np.array_equal(wnz[w, :wlen[w]], listed)
        want_pos = np.full(K, -1)
        want_pos[listed] = np.arange(len(listed))
        assert np.array_equal(wpos[w], want_pos)


# ------------------------------------------------------------------------------ log-likelihood, fold-in state
@pytest.mark.parametrize("D,V,K", SHAPES)
def test_token_log_likelihood_matches_numpy(D, V, K):
    rng = np.random.default_rng(V + K)
    wid, ptr = _corpus(rng, D, V, 7)
    theta = rng.dirichlet(np.ones(K), size=D)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    phi_wk[0] = 0.0                                         # a word no topic emits: floored at 1e-300
    for lo, hi in ((0, D), (1, D), (0, 0)):                 # all documents, a slice not starting at 0, none
        p = ptr[lo:hi + 1]
        ll, n = token_log_likelihood(wid, p, theta[lo:], phi_wk)
        doc = np.repeat(np.arange(hi - lo), np.diff(p))
        s = (theta[lo:][doc] * phi_wk[wid[p[0]:p[-1]]]).sum(axis=1)
        want = np.log(np.maximum(s, 1e-300)).sum()
        assert n == p[-1] - p[0]
        assert ll == pytest.approx(want, rel=1e-12, abs=1e-12)


def _splitmix(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_document_state_matches_splitmix_reference():
    rng = np.random.default_rng(0)
    wid = rng.integers(0, 50, 40).astype(np.int32)
    for base in (_state(rng), np.array([0, 1], np.uint64), np.array([M64, M64], np.uint64)):
        for a, b in ((0, 0), (0, 1), (3, 17), (0, 40)):
            b0, b1 = int(base[0]), int(base[1])
            h = _splitmix(b0 ^ (b - a))
            for w in wid[a:b]:
                h = _splitmix(h ^ int(w))
            s0 = _splitmix(h ^ b1)
            s1 = _splitmix(s0 ^ b0)
            want = [s0, s1 if (s0 or s1) else 1]
            assert document_state(base, wid, a, b).tolist() == want


# ------------------------------------------------------------------------------ exponentials
def _ziggurat(xs: XS) -> float:
    """One Exp(1) by the kernels' 256-layer ziggurat, from its tables, in plain Python."""
    offset = 0.0
    while True:
        bits = xs.u64()
        i, u = (bits >> 3) & 255, bits >> 11
        x = u * float(ZIG_W[i])
        if u < int(ZIG_K[i]):
            return offset + x
        if i == 0:
            if x < ZIG_R:
                return offset + x
            offset += ZIG_R
            continue
        lo, hi = float(ZIG_F[i]), float(ZIG_F[i + 1])
        if lo + (xs.u64() >> 11) * 2.0 ** -53 * (hi - lo) < math.exp(-x):
            return offset + x


@pytest.mark.parametrize("n", [0, 1, 30_000])
def test_standard_exponentials_match_reference_draw_for_draw(n):
    state = _state(np.random.default_rng(n))
    out = np.empty(n)
    st = state.copy()
    standard_exponentials(out, st)
    xs = XS(state)
    want = [_ziggurat(xs) for _ in range(n)]
    assert np.array_equal(out, want)
    assert (int(st[0]), int(st[1])) == (xs.s0, xs.s1)       # the advanced state is handed back
    if n == 30_000:
        assert (out > ZIG_R).any()                          # the tail was drawn


# ------------------------------------------------------------------------------ bag of words
@pytest.mark.parametrize("D,V", [(0, 3), (1, 1), (5, 1), (9, 4), (20, 30)])
def test_tokens_to_bow_in_order_of_first_occurrence(D, V):
    rng = np.random.default_rng(D + V)
    wid, ptr = _corpus(rng, D, V, 12, n_empty=min(D, 2))
    bp, bi, bc = tokens_to_bow(ptr, wid, V)
    assert bp[0] == 0 and len(bp) == D + 1 and bi.dtype == np.int32 and bc.dtype == np.float64
    for d in range(D):
        seen = {}
        for w in wid[ptr[d]:ptr[d + 1]].tolist():
            seen[w] = seen.get(w, 0) + 1                    # dicts keep insertion order
        assert bi[bp[d]:bp[d + 1]].tolist() == list(seen) and bc[bp[d]:bp[d + 1]].tolist() == list(seen.values())


# ------------------------------------------------------------------------------ max document log-likelihood
def _np_em_step(words, counts, phi_wk, theta):
    P = phi_wk[words]                                       # n x K
    s = np.maximum(P @ theta, 1e-300)
    g = (counts / s) @ P
    tot = theta @ g
    if tot <= 0:
        return float(counts @ np.log(s)), theta.copy(), 0.0
    return float(counts @ np.log(s)), theta * g / tot, float(g.max() - tot)


@pytest.mark.parametrize("K", [1, 2, 6])
def test_em_step_matches_numpy(K):
    rng = np.random.default_rng(K)
    V = 8
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    phi_wk[1] = 0.0                                         # a word no topic emits
    for n in (0, 1, 5):
        words = rng.integers(0, V, n).astype(np.int64)
        counts = rng.integers(1, 4, n).astype(np.float64)
        theta = rng.dirichlet(np.ones(K))
        out, g = np.empty(K), np.empty(K)
        obj, gap = _em_step(words, counts, phi_wk, theta, out, g)
        w_obj, w_out, w_gap = _np_em_step(words, counts, phi_wk, theta)
        assert obj == pytest.approx(w_obj, rel=1e-12, abs=1e-12)
        assert gap == pytest.approx(w_gap, rel=1e-10, abs=1e-9)
        np.testing.assert_allclose(out, w_out, rtol=1e-12, atol=0)


@pytest.mark.parametrize("K", [1, 3, 7])
def test_max_doc_loglik_is_certified_by_a_numpy_gap(K):
    """The returned s is the log-likelihood at the returned θ̂, whose Frank–Wolfe gap (recomputed in NumPy) is
    at most tol, so no θ does better than s + tol; with max_iter = 1 it is the uniform θ. Empty rows give 0."""
    rng = np.random.default_rng(K + 10)
    D, V, tol = 12, 9, 1e-9
    X = rng.poisson(0.9, size=(D, V)).astype(float)
    X[0] = 0.0
    X[1] = 0.0
    X[1, 2] = 4.0                                           # one word
    indptr = np.concatenate([[0], np.cumsum((X > 0).sum(1))]).astype(np.int64)
    indices = np.nonzero(X)[1].astype(np.int64)
    counts = X[X > 0]
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.full(V, 0.5), size=K).T)
    s, theta, iters = max_doc_loglik(indptr, indices, counts, phi_wk, tol, 100_000)
    for d in range(D):
        w, c = indices[indptr[d]:indptr[d + 1]], counts[indptr[d]:indptr[d + 1]]
        obj, _, gap = _np_em_step(w, c, phi_wk, theta[d])
        assert s[d] == pytest.approx(obj, rel=1e-12, abs=1e-12) and gap <= tol * (1 + 1e-6) + 1e-12
        assert theta[d].min() >= 0 and theta[d].sum() == pytest.approx(1.0, abs=1e-12)
        for t in rng.dirichlet(np.ones(K), size=20):        # nothing in the simplex beats s + tol
            assert _np_em_step(w, c, phi_wk, t)[0] <= s[d] + tol + 1e-12
    assert s[0] == 0.0 and np.allclose(theta[0], 1 / K)
    s1, theta1, it1 = max_doc_loglik(indptr, indices, counts, phi_wk, tol, 1)
    assert np.all(it1 == 1) and np.allclose(theta1, 1 / K)
    np.testing.assert_allclose(s1, [_np_em_step(indices[indptr[d]:indptr[d + 1]], counts[indptr[d]:indptr[d + 1]],
                                                phi_wk, np.full(K, 1 / K))[0] for d in range(D)], rtol=1e-12)


# ------------------------------------------------------------------------------ subset selection
def _subset_reference(words, V, s, p_in, state):
    """Subset selection: the true word with probability p_in, then Floyd's sampling of the rest among the other
    words (candidate index t maps to word t, or t + 1 from the true word on)."""
    xs = XS(state)
    out = np.empty((len(words), s), np.int32)
    for i, w in enumerate(words.tolist()):
        chosen = []
        if w >= 0 and xs.uniform() < p_in:
            chosen.append(w)
        N = V - 1 if w >= 0 else V
        need = s - len(chosen)
        picked = []                                         # candidate indices, Floyd's algorithm
        for j in range(N - need, N):
            t = min(int(xs.uniform() * (j + 1)), j)
            picked.append(j if t in picked else t)
        chosen += [c + 1 if (w >= 0 and c >= w) else c for c in picked]
        out[i] = chosen
    return out


@pytest.mark.parametrize("V,s", [(2, 1), (5, 2), (9, 4), (30, 29)])
def test_subset_select_matches_reference_draw_for_draw(V, s):
    rng = np.random.default_rng(V * s)
    words = rng.integers(-1, V, 300).astype(np.int32)       # -1: padding
    st = _state(rng)
    for p_in in (0.0, 0.4, 1.0):
        out = np.empty((len(words), s), np.int32)
        subset_select(words, V, s, p_in, st.copy(), out)
        want = _subset_reference(words, V, s, p_in, st.copy())
        assert np.array_equal(out, want)
        assert all(len(set(r)) == s for r in out.tolist()) and out.min() >= 0 and out.max() < V


# ------------------------------------------------------------------------------ randomized response
@pytest.mark.parametrize("D,V", [(0, 5), (3, 1), (4, 8), (6, 16), (5, 13)])
def test_randomized_presence_on_edge_vocabularies(D, V):
    """Bit layout and coins on vocabularies of one word and of whole bytes (no padding), with empty documents."""
    rng = np.random.default_rng(D * 31 + V)
    wid, ptr = _corpus(rng, D, V, 10, n_empty=min(D, 1))
    bits = np.zeros((D, V), bool)
    for d in range(D):
        bits[d, wid[ptr[d]:ptr[d + 1]]] = True
    nb = (V + 7) // 8
    packed = rr.presence_packed(wid, ptr, V)
    assert packed.shape == (D, nb)
    assert np.array_equal(np.unpackbits(packed, axis=1, bitorder="little")[:, :V].astype(bool), bits)
    T = rr.flip_threshold(0.35)
    st = _state(rng)
    got = rr.randomize_presence(wid, ptr, V, T, st.copy())
    xs, flips = XS(st), np.zeros((D, 8 * nb), bool)
    for d in range(D):
        for b in range(nb):
            for q in range(4):
                x = xs.u64()
                flips[d, 8 * b + 2 * q] = (x & 0xFFFFFFFF) < T
                flips[d, 8 * b + 2 * q + 1] = (x >> 32) < T
    unpacked = np.unpackbits(got, axis=1, bitorder="little").astype(bool)
    assert np.array_equal(unpacked[:, :V], bits ^ flips[:, :V]) and not unpacked[:, V:].any()
    # column sums: any bytes, even with padding bits set (they are not words)
    noise = rng.integers(0, 256, (D, nb)).astype(np.uint8)
    want = np.unpackbits(noise, axis=1, bitorder="little")[:, :V].sum(0)
    assert np.array_equal(rr.packed_column_sums(noise, V), want)


# ------------------------------------------------------------------------------ variational Bayes
def _np_vb_estep(ptr, ids, cts, eb_vk, alpha, gamma0, max_iter, tol, clip):
    """Hoffman et al.'s E-step with explicit φ, one document at a time: (γ, Σ_d c_d s_d as V x K, ||s_d||_F)."""
    from scipy.special import psi

    gamma, stats, norms = gamma0.copy(), np.zeros_like(eb_vk), np.zeros(len(ptr) - 1)
    for d in range(len(ptr) - 1):
        w, n = ids[ptr[d]:ptr[d + 1]], cts[ptr[d]:ptr[d + 1]]
        if len(w) == 0:
            gamma[d] = alpha
            continue
        B, g = eb_vk[w], gamma[d].copy()                    # B: n x K

        def phi(g):
            p = np.exp(psi(g) - psi(g.sum())) * B
            return p / p.sum(axis=1, keepdims=True)

        for _ in range(max_iter):
            new = alpha + n @ phi(g)
            done = np.mean(np.abs(new - g)) < tol
            g = new
            if done:
                break
        s = n[:, None] * phi(g)
        norms[d] = np.linalg.norm(s)
        np.add.at(stats, w, min(1.0, clip / norms[d]) * s)
        gamma[d] = g
    return gamma, stats, norms


@pytest.mark.parametrize("D,V,K", SHAPES)
def test_vb_estep_and_doc_elbo_on_edge_shapes(D, V, K):
    from scipy.special import gammaln, logsumexp, psi

    from dptopic.kernels.vb import dirichlet_expectation, doc_elbo, vb_estep

    rng = np.random.default_rng(5 * K + V)
    wid, tptr = _corpus(rng, D, V, 15)
    ptr, ids, cts = tokens_to_bow(tptr, wid, V)
    ids = ids.astype(np.int64)
    lam = rng.gamma(2.0, 1.0, size=(K, V)) + 0.1
    elb = dirichlet_expectation(lam)
    eb_vk = np.ascontiguousarray(np.exp(elb).T)
    gamma0 = rng.gamma(100.0, 0.01, size=(D, K))
    for clip in (np.inf, 1.5):
        gamma, ss, norms = gamma0.copy(), np.zeros((V, K)), np.zeros(D)
        vb_estep(ptr, ids, cts, eb_vk, 0.3, gamma, 200, 1e-8, clip, ss, norms)
        want_g, want_s, want_n = _np_vb_estep(ptr, ids, cts, eb_vk, 0.3, gamma0, 200, 1e-8, clip)
        np.testing.assert_allclose(gamma, want_g, rtol=1e-9)
        np.testing.assert_allclose(ss * eb_vk, want_s, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(norms, want_n, rtol=1e-9)
    out = np.zeros(D)
    doc_elbo(ptr, ids, cts, np.ascontiguousarray(elb.T), 0.3, gamma, out)
    for d in range(D):
        w, n = ids[ptr[d]:ptr[d + 1]], cts[ptr[d]:ptr[d + 1]]
        g = gamma[d]
        elt = psi(g) - psi(g.sum())
        want = float(n @ logsumexp(elt[:, None] + elb[:, w], axis=0)) if len(w) else 0.0
        want += np.sum((0.3 - g) * elt + gammaln(g) - gammaln(0.3)) + gammaln(K * 0.3) - gammaln(g.sum())
        assert out[d] == pytest.approx(want, rel=1e-10, abs=1e-10)
