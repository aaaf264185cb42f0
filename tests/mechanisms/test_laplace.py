import math

import numpy as np
import pytest
from scipy import stats

from dptopic.errors import DPTopicError
from dptopic.mechanisms import clamp, discrete_laplace_pmf, laplace_mechanism, laplace_with_scale, normalize_rows


def test_laplace_scale_ks():
    rng = np.random.default_rng(0)
    noisy, ev = laplace_mechanism(np.zeros(20000), epsilon=0.5, rng=rng, changes=(1, 1), discrete=False)
    assert ev.scale == pytest.approx(4.0) and ev.epsilon == pytest.approx(0.5) and ev.l1_sensitivity == 2
    assert stats.kstest(noisy, "laplace", args=(0, 4.0)).pvalue > 1e-3
    # variance 2b² within 4 standard errors (Var of sample var for Laplace: (μ4 - σ⁴)/n, μ4 = 24b⁴)
    b = 4.0
    se = math.sqrt((24 * b**4 - 4 * b**4) / len(noisy))
    assert abs(noisy.var() - 2 * b**2) < 4 * se


def test_discrete_laplace_probabilities():
    rng = np.random.default_rng(1)
    values = np.full(50000, 7, dtype=np.int32)
    noisy, ev = laplace_mechanism(values, epsilon=1.0, rng=rng)  # integer input -> discrete by default
    assert ev.discrete and noisy.dtype == np.int64
    x = noisy - 7
    support = np.arange(-6, 7)
    p = discrete_laplace_pmf(support, ev.scale)
    assert discrete_laplace_pmf(np.arange(-200, 201), ev.scale).sum() == pytest.approx(1.0)
    obs = np.array([(x == s).sum() for s in support] + [(np.abs(x) > 6).sum()])
    exp = np.append(p, 1 - p.sum()) * len(x)
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # ratio of neighbouring probabilities is exactly e^{-1/scale}
    assert p[7] / p[6] == pytest.approx(math.exp(-1 / ev.scale))


def test_event_records_relation_and_rejects_bad_epsilon():
    _, ev = laplace_with_scale(np.zeros(3), 1.0, np.random.default_rng(0), changes=(1, 1), discrete=False)
    assert ev.epsilon == 2.0 and "replacement" in ev.relation
    for bad in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(DPTopicError, match="epsilon"):
            laplace_mechanism(np.zeros(3), bad, np.random.default_rng(0))


def test_clamp_and_normalize():
    a = np.array([[-3.0, 2.0, 500.0]])
    assert np.array_equal(clamp(a, 0, 10), [[0, 2, 10]])
    p = normalize_rows(a, 1.0)
    assert np.allclose(p.sum(1), 1) and p[0, 0] == pytest.approx(1 / 505)  # (0+1)/((0+1)+(2+1)+(500+1))


def test_secure_mode_uses_opendp():
    pytest.importorskip("opendp")
    noisy, ev = laplace_mechanism(np.zeros(4000, dtype=np.int64), epsilon=1.0, secure=True)
    assert ev.discrete and noisy.dtype == np.int64
    # variance of the discrete Laplace with r = e^{-1/b}: 2r/(1-r)^2
    r = math.exp(-1 / ev.scale)
    var = 2 * r / (1 - r) ** 2
    assert abs(noisy.var() - var) < 0.25 * var


@pytest.mark.parametrize("discrete", [True, False])
def test_parallel_noise_same_distribution_and_reproducible(discrete):
    """workers=3 draws row blocks from spawned children: same law (two-sample KS / chi-square against
    a serial draw), identical output for the same seed, untouched event."""
    from dptopic.mechanisms.laplace import laplace_noise

    shape = (300, 400)  # 120k entries: above the parallel threshold
    a = laplace_noise(shape, 2.0, np.random.default_rng(5), discrete, workers=3)
    b = laplace_noise(shape, 2.0, np.random.default_rng(5), discrete, workers=3)
    serial = laplace_noise(shape, 2.0, np.random.default_rng(6), discrete)
    assert np.array_equal(a, b) and a.shape == shape and a.dtype == serial.dtype
    assert not np.array_equal(a[:100], a[100:200])  # blocks come from different children
    if discrete:
        support = np.arange(-8, 9)
        obs = np.array([[(x == s).sum() for s in support] + [(np.abs(x) > 8).sum()] for x in (a, serial)])
        assert stats.chi2_contingency(obs)[1] > 1e-3
    else:
        assert stats.ks_2samp(a.ravel(), serial.ravel()).pvalue > 1e-3
    vals = np.zeros(shape, dtype=np.int64 if discrete else float)
    n1, e1 = laplace_mechanism(vals, 0.5, np.random.default_rng(1), discrete=discrete, workers=2)
    n2, e2 = laplace_mechanism(vals, 0.5, np.random.default_rng(1), discrete=discrete)
    assert e1 == e2 and n1.shape == n2.shape


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.uint64, np.float64, bool])
def test_discrete_release_accepts_every_count_dtype(dtype):
    """Counts of any integer (or integral float) dtype get int64 noisy output, values preserved under zero noise."""
    values = np.arange(6).astype(dtype)
    noisy, _ = laplace_with_scale(values, 0.01, np.random.default_rng(0), discrete=True)  # P(noise != 0) ~ e^-100
    assert noisy.dtype == np.int64 and np.array_equal(noisy, values.astype(np.int64))


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


def test_ziggurat_tables_have_equal_areas():
    from dptopic.kernels import noise

    x, f = noise.ZIG_X, noise.ZIG_F
    areas = x[1:256] * (f[2:257] - f[1:256])
    assert np.allclose(areas, noise.ZIG_V, rtol=1e-9, atol=0)
    assert x[1] * f[1] + math.exp(-noise.ZIG_R) == pytest.approx(noise.ZIG_V, rel=1e-12)  # base layer + tail
    assert np.all(np.diff(x[1:]) < 0) and x[256] == 0


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


@pytest.mark.parametrize("scale", [0.3, 1.0, 20.0])
def test_discrete_laplace_law_across_scales(scale):
    """P(x) ∝ exp(-|x|/scale) by chi-square over the bulk of the support, at small, unit and large scales."""
    from dptopic.mechanisms.laplace import laplace_noise

    x = laplace_noise((200_000,), scale, np.random.default_rng(11), discrete=True)
    edge = max(3, int(4 * scale))
    support = np.arange(-edge, edge + 1)
    p = discrete_laplace_pmf(support, scale)
    obs = np.array([(x == s).sum() for s in support] + [(np.abs(x) > edge).sum()])
    exp = np.append(p, 1 - p.sum()) * len(x)
    keep = exp > 5
    assert stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue > 1e-3
    # symmetric: the sign is an independent fair coin
    assert abs((x > 0).mean() - (x < 0).mean()) < 4 * math.sqrt((1 - p[edge]) / len(x))


@pytest.mark.parametrize("discrete", [True, False])
def test_out_adds_noise_in_place(discrete):
    values = np.full((300, 400), 5.0)
    before = values.copy()
    noisy, ev = laplace_with_scale(values, 1.0, np.random.default_rng(2), changes=(1, 1), discrete=discrete,
                                   out=values, workers=2)
    assert noisy is values and not np.array_equal(values, before) and ev.scale == 1.0
    if discrete:
        assert np.array_equal(values, np.round(values))  # integral noise on float counts
    with pytest.raises(DPTopicError, match="out="):
        laplace_with_scale(values, 1.0, np.random.default_rng(2), out=values.copy())
    v32 = values.astype(np.float32)
    with pytest.raises(DPTopicError, match="out="):
        laplace_with_scale(v32, 1.0, np.random.default_rng(2), out=v32)
