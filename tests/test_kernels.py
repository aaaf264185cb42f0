import numpy as np
import pytest
from scipy import stats

from dptopic.kernels import ShardedSweeper, SweepArrays, dense_sweep, kernel_state, make_shards, sweep_shard
from dptopic.kernels.reference import conditional, reference_sweep
from dptopic.kernels.rng import PyXorShift, next_uniform

from conftest import counts_from_z, random_state


def test_rng_matches_python_twin():
    from numba import njit

    @njit
    def draw(state, n):
        out = np.empty(n)
        for i in range(n):
            out[i] = next_uniform(state)
        return out

    st = kernel_state(np.random.default_rng(5))
    py = PyXorShift(st)
    got = draw(st.copy(), 1000)
    assert np.array_equal(got, [py.uniform() for _ in range(1000)])
    assert 0.45 < got.mean() < 0.55 and got.min() >= 0 and got.max() < 1


@pytest.mark.parametrize("K", [3, 8, 11, 20, 33, 50, 64, 65, 130])
def test_dense_kernel_matches_numpy_reference(tiny, K):
    c = tiny.corpus
    z, ndk, nwk, nk = random_state(c, K)
    st = kernel_state(np.random.default_rng(0))
    ref = reference_sweep(c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st)
    out = sweep_shard("dense", c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st)
    assert np.array_equal(out[0], ref[0])
    assert np.array_equal(out[2] + nwk, ref[2]) and np.array_equal(out[3] + nk, ref[3])
    assert (out[0] != z).sum() > 10  # it actually moved


@pytest.mark.parametrize("K", [1, 5, 7, 8, 50, 64, 65, 200])
def test_blocked_draw_is_exact(K):
    """Both groupings (lanes up to 64 topics, blocks above) draw each topic with probability p_k / sum(p),
    including weights spanning 1e-6..1 and a last group only partly filled."""
    from numba import njit

    from dptopic.kernels.dense import blocked_draw, draw_buffers

    @njit
    def draws(w, n, state):
        K = w.shape[0]
        p, sums, nb = draw_buffers(K)
        p[:K] = w
        out = np.empty(n, np.int64)
        for i in range(n):
            out[i] = blocked_draw(p, sums, nb, K, state)
        return out

    rng = np.random.default_rng(K)
    w = rng.uniform(0.2, 1.0, K)
    w[rng.permutation(K)[: K // 5]] = 1e-6  # near-zero weights must still be skipped correctly
    n = 40_000 * max(1, K // 10)
    got = np.bincount(draws(w, n, kernel_state(rng)), minlength=K)
    assert got.shape == (K,)  # never a topic >= K
    if K > 1:
        assert stats.chisquare(got, w / w.sum() * n).pvalue > 1e-3


def test_noisy_float_and_frozen_kernels_match_reference(tiny):
    c = tiny.corpus
    rng = np.random.default_rng(1)
    z, ndk, nwk, nk = random_state(c, 3)
    # noisy float counts with a clip (paper-literal HDP / CDP path)
    noisy = nwk + rng.laplace(0, 2, nwk.shape)
    st = kernel_state(rng)
    ref = reference_sweep(c.word_ids, c.doc_ptr, z, ndk.astype(float), noisy, noisy.sum(0), 0.5, 0.1, st, clip=1.5)
    zz, nd, nw, nkk = z.copy(), ndk.astype(float), noisy.copy(), noisy.sum(0)
    s2 = st.copy()
    dense_sweep(c.word_ids, c.doc_ptr, zz, nd, nw, nw, nkk, 0.5, 0.1, 0.1 * c.vocab_size, 1.5, s2)
    assert np.array_equal(zz, ref[0])
    # frozen word table (sound HDP): table untouched, true counts follow z
    table = np.clip(noisy, 0, 1.5)
    before = table.copy()
    ref = reference_sweep(c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st, word_table=table)
    out = sweep_shard("dense", c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st, word_table=table)
    assert np.array_equal(out[0], ref[0]) and np.array_equal(table, before)
    _, nwk_z = counts_from_z(c, out[0], 3)
    assert np.array_equal(nwk + out[2], nwk_z)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
def test_vector_lane_weights_equal_the_scalar_loop(dtype):
    """The LLVM vector weights (33 to 64 topics) write the same p and return the same lane sums, bit for bit,
    as the scalar loop, on every row including the table's last (read with masked loads), with negative
    entries and a finite clip; nothing past column K changes p."""
    from numba import njit

    from dptopic.kernels._simd import LANES, _lane_weights_scalar, _lane_weights_vector, lane_weights, vector_works

    assert vector_works()  # this machine's compiler builds it: the fast path is the one under test

    @njit
    def both(table, h, beta, clip):
        V = table.shape[0]
        out = np.empty((2, V, 8))
        pv, ps = np.zeros((V, LANES)), np.zeros((V, LANES))
        for w in range(V):
            pv[w, :] = 0.0
            ps[w, :] = 0.0
            lv = _lane_weights_vector(table, w, h, beta, clip, pv[w])
            ls = _lane_weights_scalar(table, w, h, beta, clip, ps[w])
            for c in range(8):
                out[0, w, c] = lv[c]
                out[1, w, c] = ls[c]
        return out, pv, ps

    rng = np.random.default_rng(7)
    for K in (33, 40, 50, 63, 64):
        table = rng.integers(-4, 40, size=(7, K)).astype(dtype)
        h = np.zeros(LANES)
        h[:K] = rng.uniform(1e-4, 2.0, K)
        for clip in (np.inf, 9.5):
            sums, pv, ps = both(table, h, 0.01, clip)
            assert np.array_equal(sums[0], sums[1]) and np.array_equal(pv, ps)
            assert not pv[:, K:].any() and (pv[:, :K] > 0).all()
            w = 3
            want = (np.minimum(np.maximum(table[w].astype(float), 0), clip) + 0.01) * h[:K]
            assert np.allclose(pv[w, :K], want, rtol=1e-15, atol=0)
            pp = np.zeros(LANES)  # the Python-level entry point: the scalar version
            assert lane_weights(table, w, h, 0.01, clip, pp) == tuple(sums[1, w]) and np.array_equal(pp, pv[w])


@pytest.mark.parametrize("K", [40, 50])
def test_noisy_dense_kernel_matches_reference_on_the_vector_path(tiny, K):
    """CDP-LDA's path (noisy float64 counts, live updates) and paper-literal HDP-LDA's (a clip) with enough
    topics for the vector weights: the same assignments as the NumPy reference."""
    c = tiny.corpus
    rng = np.random.default_rng(K)
    z, ndk, nwk, nk = random_state(c, K)
    noisy = nwk + np.floor(rng.laplace(0, 2, nwk.shape))
    nd = ndk + np.floor(rng.laplace(0, 2, ndk.shape))
    for clip in (np.inf, 3.0):
        st = kernel_state(rng)
        ref = reference_sweep(c.word_ids, c.doc_ptr, z, nd, noisy, noisy.sum(0), 0.5, 0.1, st, clip=clip)
        zz, nd2, nw, nkk = z.copy(), nd.copy(), noisy.copy(), noisy.sum(0)
        dense_sweep(c.word_ids, c.doc_ptr, zz, nd2, nw, nw, nkk, 0.5, 0.1, 0.1 * c.vocab_size, clip, st.copy())
        assert np.array_equal(zz, ref[0]) and (zz != z).sum() > 10
        assert np.array_equal(nw, ref[2]) and np.array_equal(nd2, ref[1])
    # a frozen table that is not C-contiguous takes the scalar kernel: the same draws
    table = np.asfortranarray(np.clip(noisy, 0, 3.0))
    st = kernel_state(rng)
    ref = reference_sweep(c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st, word_table=table)
    zz, nd2, nw, nkk = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    dense_sweep(c.word_ids, c.doc_ptr, zz, nd2, table, nw, nkk, 0.5, 0.1, 0.1 * c.vocab_size, np.inf, st.copy())
    assert np.array_equal(zz, ref[0]) and np.array_equal(nw, ref[2])


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("n_jobs", [1, 3])
def test_count_invariants_after_sweeps(planted, kind, n_jobs):
    c = planted.corpus
    K = 5
    z, ndk, nwk, nk = random_state(c, K)
    arr = SweepArrays(c.word_ids, c.doc_ptr, z, ndk, nwk, nk)
    rng = np.random.default_rng(0)
    with ShardedSweeper(arr, n_jobs, kind) as sw:
        states = [kernel_state(rng) for _ in range(sw.n_shards)]
        for _ in range(5):
            sw.sweep(0.1, 0.01, states)
    ndk_z, nwk_z = counts_from_z(c, arr.z, K)
    assert np.array_equal(arr.ndk, ndk_z) and np.array_equal(arr.nwk, nwk_z)
    assert np.array_equal(arr.nk, nwk_z.sum(0)) and np.array_equal(arr.ndk.sum(1), c.doc_lengths)
    assert arr.nwk.min() >= 0 and arr.z.min() >= 0 and arr.z.max() < K


def test_sparse_sampler_has_exact_conditional(tiny):
    """Resample a single token many times: SparseLDA's empirical distribution = the exact conditional."""
    c = tiny.corpus
    K = 3
    z, ndk, nwk, nk = random_state(c, K, seed=4)
    # a one-token shard: the first token of document 0 (counts for the rest stay as they are)
    i = 0
    p_exact = conditional(c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, i)
    wid, ptr = c.word_ids[:1], np.array([0, 1])
    rng = np.random.default_rng(11)
    n = 20000
    draws = np.empty(n, int)
    for r in range(n):
        out = sweep_shard("sparse", wid, ptr, z[:1], ndk[:1], nwk, nk, 0.5, 0.1, kernel_state(rng))
        draws[r] = out[0][0]
    obs = np.bincount(draws, minlength=K)
    chi2, pval = stats.chisquare(obs, p_exact * n)
    assert pval > 1e-3, (obs, p_exact * n)


def test_sweep_shard_is_pure(tiny):
    c = tiny.corpus
    z, ndk, nwk, nk = random_state(c, 3)
    copies = [a.copy() for a in (z, ndk, nwk, nk)]
    st = kernel_state(np.random.default_rng(0))
    st0 = st.copy()
    a = sweep_shard("sparse", c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st)
    b = sweep_shard("sparse", c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, st)
    assert all(np.array_equal(x, y) for x, y in zip(copies, (z, ndk, nwk, nk)))
    assert np.array_equal(st, st0) and np.array_equal(a[0], b[0])


def test_make_shards_balanced():
    ptr = np.cumsum([0] + [10] * 100)
    sh = make_shards(ptr, 4)
    assert len(sh) == 4 and sh[0].doc_start == 0 and sh[-1].doc_stop == 100
    assert max(s.tok_stop - s.tok_start for s in sh) <= 260


def test_fold_in_reference(planted):
    """Fold-in θ with the true Φ is close to the true θ on long documents."""
    from dptopic.evaluation import infer_theta

    c, phi, theta, _ = planted
    est = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 60, 30, seed=0)
    assert np.allclose(est.sum(1), 1)
    assert np.abs(est - theta).sum(1).mean() < 0.25


def test_frozen_rejection_sampler_is_exact(tiny):
    """Sound HDP-LDA's rejection sampler draws from p_k ∝ A[w,k]/(n_k+Vβ)·(n_dk+α) exactly."""
    c = tiny.corpus
    K = 3
    z, ndk, nwk, nk = random_state(c, K, seed=4)
    rng = np.random.default_rng(0)
    A = np.clip(nwk + rng.laplace(0, 1, nwk.shape), 0, 2.0) + 0.1
    w, k0 = c.word_ids[0], z[0]
    nd, nkk = ndk[0].astype(float), nk.astype(float)
    nd[k0] -= 1
    nkk[k0] -= 1
    p = A[w] / (nkk + 0.1 * c.vocab_size) * (nd + 0.5)
    p /= p.sum()
    n = 20000
    draws = np.array([sweep_shard("frozen", c.word_ids[:1], np.array([0, 1]), z[:1], ndk[:1], nwk, nk, 0.5, 0.1,
                                  kernel_state(rng), word_table=A)[0][0] for _ in range(n)])
    assert stats.chisquare(np.bincount(draws, minlength=K), p * n).pvalue > 1e-3
    before = A.copy()
    out = sweep_shard("frozen", c.word_ids, c.doc_ptr, z, ndk, nwk, nk, 0.5, 0.1, kernel_state(rng), word_table=A)
    ndk_z, nwk_z = counts_from_z(c, out[0], K)
    assert np.array_equal(ndk_z, out[1]) and np.array_equal(nwk_z, nwk + out[2]) and np.array_equal(A, before)


def test_frozen_and_dense_hdp_agree_in_distribution(planted):
    """The two HDP-LDA samplers target the same chain: similar perplexity after the same schedule.

    Some runs of either sampler settle in a worse mode (two planted topics merged, perplexity about
    25% higher), so the typical run is compared: the median over five seeds."""
    from dptopic import HDPLDA

    c = planted.corpus
    tr, te = c.train_test_split(0.2, seed=0)
    kw = dict(n_topics=5, epsilon_laplace=5.0, epsilon_inherent=12, n_iter=60, verbose=0)
    ppl = {s: np.median([HDPLDA(sampler=s, seed=sd, **kw).fit(tr).perplexity(te) for sd in range(5)])
           for s in ("auto", "dense")}
    assert abs(ppl["auto"] / ppl["dense"] - 1) < 0.05


def test_count_assignments_matches_numpy(planted):
    from dptopic.kernels import count_assignments

    c = planted.corpus
    z = np.random.default_rng(0).integers(0, 7, c.n_tokens).astype(np.int32)
    ndk, nwk, nk = count_assignments(c.word_ids, c.doc_ptr, z, 7, c.vocab_size)
    ndk_ref, nwk_ref = counts_from_z(c, z, 7)
    assert np.array_equal(ndk, ndk_ref) and np.array_equal(nwk, nwk_ref) and np.array_equal(nk, nwk_ref.sum(0))


@pytest.mark.parametrize("K,alpha,beta", [(3, 0.5, 0.1), (8, 0.1, 0.01), (20, 0.05, 0.5), (130, 0.1, 0.01)])
def test_sparse_kernel_matches_numpy_reference(tiny, K, alpha, beta):
    """SparseLDA with in-place removal and lazy lists = its plain-Python twin, token for token, over 3 sweeps
    (K=130 exercises the int16 lists; beta=0.5 makes the r and s buckets matter)."""
    from dptopic.kernels.reference import reference_sparse_sweep

    c = tiny.corpus
    z, ndk, nwk, nk = random_state(c, K)
    st = kernel_state(np.random.default_rng(3))
    zr, ndr, nwr, nkr = z, ndk, nwk, nk
    zs, nds, nws, nks = z.copy(), ndk.copy(), nwk.copy(), nk.copy()
    for _ in range(3):
        zr, ndr, nwr, nkr = reference_sparse_sweep(c.word_ids, c.doc_ptr, zr, ndr, nwr, nkr, alpha, beta, st.copy())
        s2 = st.copy()
        zs, nds, dnw, dnk, _ = sweep_shard("sparse", c.word_ids, c.doc_ptr, zs, nds, nws, nks, alpha, beta, s2)
        nws, nks = nws + dnw, nks + dnk
        st = s2
        assert np.array_equal(zs, zr) and np.array_equal(nds, ndr) and np.array_equal(nws, nwr)
    assert (zs != z).sum() > 10  # it actually moved
    ndk_z, nwk_z = counts_from_z(c, zs, K)
    assert np.array_equal(nws, nwk_z) and np.array_equal(nks, nwk_z.sum(0))


def test_sparse_kernel_exact_after_lazy_lists(tiny):
    """A token late in a document, after earlier tokens moved (the lists then hold zero-count topics).

    Sweeping one document in order is the same Markov step for every exact sampler, so the last
    token's topic has the same distribution under the sparse and the dense kernel (different
    mappings of the uniforms): a two-sample chi-square test over many replays.
    """
    c = tiny.corpus
    K = 4
    z, ndk, nwk, nk = random_state(c, K, seed=7)
    a, b = int(c.doc_ptr[0]), int(c.doc_ptr[1])
    assert b - a >= 3
    rng = np.random.default_rng(12)
    n = 20000
    draws = {"sparse": np.empty(n, int), "dense": np.empty(n, int)}
    for kind, out_draws in draws.items():
        for r in range(n):
            out = sweep_shard(kind, c.word_ids[a:b], np.array([0, b - a]), z[a:b], ndk[:1], nwk, nk, 0.5, 0.1,
                              kernel_state(rng))
            out_draws[r] = out[0][-1]
    table = np.stack([np.bincount(v, minlength=K) for v in draws.values()])
    pval = stats.chi2_contingency(table)[1]
    assert pval > 1e-3, table


def test_frozen_kernel_exact_across_bound_resets(tiny):
    """Whole-document sweeps where the topic totals are small enough that the rejection bound is reset
    mid-document: the last token's topic has the same law under the frozen kernel and the dense kernel
    with the same frozen table (two-sample chi-square over many replays), and the smoothing bucket is hit."""
    c = tiny.corpus
    K = 3
    a, b = int(c.doc_ptr[0]), int(c.doc_ptr[1])
    # give document 0 a few tokens' worth of the counts: n_k tiny, so floors (n_k - 4) are crossed
    z = np.random.default_rng(2).integers(0, K, b - a).astype(np.int32)
    ptr = np.array([0, b - a])
    wid = c.word_ids[a:b]
    ndk = np.zeros((1, K), np.int32)
    nwk = np.zeros((c.vocab_size, K), np.int32)
    for w, k in zip(wid, z):
        ndk[0, k] += 1
        nwk[w, k] += 1
    nk = nwk.sum(0).astype(np.int32)
    rng = np.random.default_rng(9)
    S = np.clip(nwk + rng.laplace(0, 1, nwk.shape), 0, 2.0)
    n = 20000
    draws = {"frozen": np.empty(n, int), "dense": np.empty(n, int)}
    for kind, out in draws.items():
        table = S + 0.1 if kind == "frozen" else S
        for r in range(n):
            res = sweep_shard(kind, wid, ptr, z, ndk, nwk, nk, 0.5, 0.1, kernel_state(rng), word_table=table,
                              clip=2.0)
            out[r] = res[0][-1]
    table = np.stack([np.bincount(v, minlength=K) for v in draws.values()])
    assert stats.chi2_contingency(table)[1] > 1e-3, table


def test_worker_scratch_owns_its_cache_lines():
    """Sampler states and per-worker topic totals start a cache line and share none with other objects."""
    from dptopic.kernels.rng import LINE, own_line

    for values in (kernel_state(np.random.default_rng(0)), np.arange(50, dtype=np.int64), np.ones(7, np.int32)):
        out = own_line(values)
        assert np.array_equal(out, values) and out.dtype == values.dtype
        start, stop = out.ctypes.data, out.ctypes.data + out.nbytes
        assert start % LINE == 0
        base = out.base
        lo, hi = base.ctypes.data, base.ctypes.data + base.nbytes
        assert lo <= start and -(-stop // LINE) * LINE <= hi  # every line it touches lies inside its own buffer
    a, b = kernel_state(np.random.default_rng(1)), kernel_state(np.random.default_rng(2))
    assert a.ctypes.data // LINE != b.ctypes.data // LINE


def _fold_in_reference(word_ids, doc_ptr, phi_wk, alpha, n_iter, burn_in, base):
    """A pure-Python fold-in with the kernel's per-document streams (PyXorShift.for_document)."""
    from dptopic.kernels.rng import PyXorShift

    K = phi_wk.shape[1]
    theta = np.zeros((len(doc_ptr) - 1, K))
    for d in range(len(doc_ptr) - 1):
        words = [int(w) for w in word_ids[doc_ptr[d]:doc_ptr[d + 1]]]
        if not words:
            theta[d] = 1.0 / K
            continue
        r = PyXorShift.for_document(base, words)
        z = [min(int(r.uniform() * K), K - 1) for _ in words]
        c = np.bincount(z, minlength=K).astype(float)
        for it in range(n_iter):
            for i, w in enumerate(words):
                c[z[i]] -= 1
                p = np.cumsum(phi_wk[w] * (c + alpha))
                u = r.uniform() * p[-1]
                k = 0
                while k < K - 1 and p[k] <= u:
                    k += 1
                z[i] = k
                c[k] += 1
            if it >= burn_in:
                theta[d] += (c + alpha) / (len(words) + K * alpha)
        theta[d] /= n_iter - burn_in
    return theta


def test_fold_in_kernel_matches_numpy_reference(tiny):
    """The compiled fold-in draws exactly what the pure-Python reference draws, document by document."""
    from dptopic.kernels import fold_in

    c = tiny.corpus
    rng = np.random.default_rng(3)
    phi = rng.dirichlet(np.ones(c.vocab_size), size=3)
    phi_wk = np.ascontiguousarray(phi.T)
    ptr = np.concatenate([c.doc_ptr[:6], [c.doc_ptr[5]]])     # five documents and an empty one
    base = kernel_state(rng)
    got = fold_in(c.word_ids, ptr, phi_wk, 0.3, 6, 2, base.copy())
    want = _fold_in_reference(c.word_ids, ptr, phi_wk, 0.3, 6, 2, base)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert np.allclose(got[-1], 1 / 3)


def test_fold_in_rows_do_not_depend_on_the_other_rows(planted):
    """Each document draws from a stream of the seed and its own words: θ of a subset, or of the documents
    reversed, is the same rows of θ of them all (scikit-learn's subset and sample-order invariance)."""
    from dptopic.evaluation import infer_theta

    c, phi, _, _ = planted
    full = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 20, 10, seed=5)
    sub = c.subset(np.arange(0, c.n_docs, 3))
    np.testing.assert_array_equal(infer_theta(phi, sub.word_ids, sub.doc_ptr, 0.1, 20, 10, seed=5), full[::3])
    rev = c.subset(np.arange(c.n_docs)[::-1])
    np.testing.assert_array_equal(infer_theta(phi, rev.word_ids, rev.doc_ptr, 0.1, 20, 10, seed=5), full[::-1])
    other = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 20, 10, seed=6)
    assert not np.array_equal(other, full)                 # the seed still matters


def test_fold_in_threads_return_exactly_what_one_thread_returns(planted):
    """Documents are folded in independently, so splitting them over threads changes nothing."""
    from dptopic.evaluation import infer_theta, perplexity

    c, phi, _, _ = planted
    one = infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 12, 6, seed=2)
    for jobs in (2, 3, 7):
        np.testing.assert_array_equal(infer_theta(phi, c.word_ids, c.doc_ptr, 0.1, 12, 6, seed=2, n_jobs=jobs), one)
    for mode in ("paper", "completion"):
        assert perplexity(phi, c, 0.1, mode, 12, 6, seed=1, n_jobs=3) == perplexity(phi, c, 0.1, mode, 12, 6, seed=1)
