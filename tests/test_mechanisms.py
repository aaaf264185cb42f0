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
