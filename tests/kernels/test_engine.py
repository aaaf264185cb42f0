"""The documents × words partition scheme for threads (Yan et al. 2009): exact counts, no races,
bit-identical runs for a fixed seed and n_jobs, frozen tables left untouched, same quality."""
import numpy as np
import pytest
from scipy import stats

from conftest import counts_from_z, random_state
from dptopic.kernels import ShardedSweeper, SweepArrays, kernel_state, make_shards, sweep_shard
from dptopic.kernels.engine import Partition, _run_kernel, word_blocks


def test_blocks_cover_every_token_once(planted):
    c = planted.corpus
    part = Partition(c.word_ids, c.doc_ptr, c.vocab_size, 3)
    wb = word_blocks(c.word_ids, c.vocab_size, 3)
    seen = np.zeros(c.n_tokens, int)
    doc_of = np.repeat(np.arange(c.n_docs), c.doc_lengths)
    for (p, q), (start, stop, ptr, d0, d1) in part.cells.items():
        idx = part.order[start:stop]
        seen[idx] += 1
        assert np.all(wb[c.word_ids[idx]] == q)                       # only word block q
        assert np.all((doc_of[idx] >= d0) & (doc_of[idx] < d1))       # only document block p
        assert ptr[-1] == stop - start and np.all(np.diff(idx) > 0)   # documents in order, tokens in order
        assert np.array_equal(np.repeat(np.arange(d0, d1), np.diff(ptr)), doc_of[idx])
    assert np.all(seen == 1)
    tokens = np.bincount(wb[c.word_ids], minlength=3)
    assert tokens.min() > 0.5 * tokens.max()  # balanced by token count


@pytest.mark.parametrize("kind", ["dense", "sparse", "frozen"])
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_counts_stay_exact_and_frozen_table_untouched(planted, kind, n_jobs):
    c = planted.corpus
    K = 5
    z, ndk, nwk, nk = random_state(c, K)
    arr = SweepArrays(c.word_ids, c.doc_ptr, z, ndk, nwk, nk)
    table = nwk.astype(np.float64) + 1.0 if kind == "frozen" else None
    frozen = None if table is None else table.copy()
    rng = np.random.default_rng(0)
    with ShardedSweeper(arr, n_jobs, kind, "partition") as sw:
        states = [kernel_state(rng) for _ in range(sw.n_shards)]
        for _ in range(4):
            sw.sweep(0.1, 0.01, states, word_table=table)
    ndk_z, nwk_z = counts_from_z(c, arr.z, K)
    assert np.array_equal(arr.ndk, ndk_z) and np.array_equal(arr.nwk, nwk_z)
    assert np.array_equal(arr.nk, nwk_z.sum(0)) and np.array_equal(arr.ndk.sum(1), c.doc_lengths)
    if frozen is not None:
        assert np.array_equal(table, frozen)


def test_threads_equal_the_serial_schedule(planted):
    """The threaded diagonal schedule gives exactly what running its blocks one after another gives."""
    c = planted.corpus
    K, P = 5, 2
    z, ndk, nwk, nk = random_state(c, K, seed=7)
    arr = SweepArrays(c.word_ids, c.doc_ptr, z.copy(), ndk.copy(), nwk.copy(), nk.copy())
    rng = np.random.default_rng(1)
    states = [kernel_state(rng) for _ in range(P)]
    ref_states = [s.copy() for s in states]
    with ShardedSweeper(arr, P, "dense", "partition") as sw:
        for _ in range(2):
            sw.sweep(0.1, 0.01, states)
    part = Partition(c.word_ids, c.doc_ptr, c.vocab_size, P)
    zp = z[part.order]
    for _ in range(2):
        for r in range(P):
            base = nk.copy()
            new = []
            for p in range(P):
                start, stop, ptr, d0, d1 = part.cells[p, (p + r) % P]
                nkp = base.copy()
                _run_kernel("dense", part.word_ids[start:stop], ptr, zp[start:stop], ndk[d0:d1], None, nwk, nkp,
                            0.1, 0.01, np.inf, ref_states[p])
                new.append(nkp)
            nk = base + sum(x - base for x in new)
    z_ref = np.empty_like(z)
    z_ref[part.order] = zp
    assert np.array_equal(arr.z, z_ref) and np.array_equal(arr.nwk, nwk) and np.array_equal(arr.nk, nk)


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


def test_make_shards_balanced():
    ptr = np.cumsum([0] + [10] * 100)
    sh = make_shards(ptr, 4)
    assert len(sh) == 4 and sh[0].doc_start == 0 and sh[-1].doc_stop == 100
    assert max(s.tok_stop - s.tok_start for s in sh) <= 260


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
