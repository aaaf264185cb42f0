"""``dptopic.kernels.rng``."""
import math
import secrets

import numpy as np
import pytest
from scipy import stats

from conftest import counts_from_z, random_state
from dptopic.kernels import dense_sweep, kernel_state, sweep_shard
from dptopic.kernels.reference import reference_sweep
from dptopic.kernels.rng import PyXorShift, document_state, next_uniform
from helpers import M64, xorshift_state


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


def _splitmix(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def test_document_state_matches_splitmix_reference():
    rng = np.random.default_rng(0)
    wid = rng.integers(0, 50, 40).astype(np.int32)
    for base in (xorshift_state(rng), np.array([0, 1], np.uint64), np.array([M64, M64], np.uint64)):
        for a, b in ((0, 0), (0, 1), (3, 17), (0, 40)):
            b0, b1 = int(base[0]), int(base[1])
            h = _splitmix(b0 ^ (b - a))
            for w in wid[a:b]:
                h = _splitmix(h ^ int(w))
            s0 = _splitmix(h ^ b1)
            s1 = _splitmix(s0 ^ b0)
            want = [s0, s1 if (s0 or s1) else 1]
            assert document_state(base, wid, a, b).tolist() == want


def _py_exponential(xs, events):
    """The ziggurat of dptopic.kernels.noise, written out in Python on the kernels' stream (tests only)."""
    from dptopic.kernels import noise

    offset = 0.0
    while True:
        bits = xs.uint64()
        i, u = (bits >> 3) & 255, bits >> 11
        x = u * float(noise.ZIG_W[i])
        if u < int(noise.ZIG_K[i]) or (i == 0 and x < noise.ZIG_R):
            return offset + x
        if i == 0:
            events["tail"] += 1
            offset += noise.ZIG_R
            continue
        events["wedge"] += 1
        f = noise.ZIG_F
        if f[i] + (xs.uint64() >> 11) * 2.0 ** -53 * (f[i + 1] - f[i]) < math.exp(-x):
            return offset + x


def test_noise_kernel_matches_python_reference():
    """The compiled adder against the same sampler in plain Python, draw for draw, on both target dtypes;
    the rare paths (wedge rejections, the tail) are exercised."""
    from dptopic.kernels import kernel_state
    from dptopic.kernels.noise import add_discrete_laplace, discrete_laplace_threshold
    from dptopic.kernels.rng import PyXorShift

    n, scale = 30_000, 2.5
    t0 = discrete_laplace_threshold(scale)
    r = math.exp(-1 / scale)
    assert math.exp(-t0) == pytest.approx(2 * r / (1 + r), rel=1e-12)
    state = kernel_state(np.random.default_rng(3))
    xs, events, want = PyXorShift(state), {"tail": 0, "wedge": 0}, np.zeros(n, dtype=np.int64)
    for a in range(0, n, 64):
        signs = xs.uint64()
        for i in range(a, min(a + 64, n)):
            e = _py_exponential(xs, events)
            mag = int(math.floor((e - t0) * scale)) + 1 if e >= t0 else 0
            want[i] = -mag if (signs >> (i - a)) & 1 else mag
    assert events["tail"] > 0 and events["wedge"] > 0
    assert (want < 0).any() and (want > 0).any() and (want == 0).any()
    for dtype in (np.int64, np.float64):
        target, st = np.arange(n).astype(dtype), state.copy()
        add_discrete_laplace(target, st, scale, t0)
        assert np.array_equal(target - np.arange(n), want)
        assert st[0] == xs.s0 and st[1] == xs.s1  # the kernel hands back the advanced state


def test_ziggurat_exponential_law():
    """Exp(1) by KS, its mean from the standard error, and the tail beyond R: mass e^-R, and R + Exp(1) there."""
    from dptopic.kernels import kernel_state
    from dptopic.kernels.noise import ZIG_R, standard_exponentials

    n = 2_000_000
    e = np.empty(n)
    standard_exponentials(e, kernel_state(np.random.default_rng(7)))
    assert stats.kstest(e[:200_000], "expon").pvalue > 1e-3
    assert abs(e.mean() - 1) < 4 / math.sqrt(n)  # sd of Exp(1) is 1
    p = math.exp(-ZIG_R)
    tail = e[e > ZIG_R] - ZIG_R
    assert abs(len(tail) - n * p) < 4 * math.sqrt(n * p)
    assert stats.kstest(tail, "expon").pvalue > 1e-3


# ----------------------------------------------------------- 6./7. secure mode
def test_kernel_state_from_secrets(monkeypatch):
    calls = []
    monkeypatch.setattr(secrets, "randbits", lambda k: calls.append(k) or 0x1234_5678_9ABC_DEF0 + len(calls))
    s = kernel_state(None)
    assert s.dtype == np.uint64 and calls == [64, 64] and s.tolist() == [0x1234_5678_9ABC_DEF1, 0x1234_5678_9ABC_DEF2]
