import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dptopic.accounting import LaplaceEvent, PureDPEvent
from dptopic.errors import DPTopicError
from dptopic.mechanisms import discrete_laplace_pmf, laplace_mechanism, laplace_noise, laplace_with_scale
from helpers import CALCULATORS, FAST, NASTY, PARAMS, SPECIAL, base_kwargs, is_clean_number, works_or_refuses


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


def test_secure_continuous_noise_is_applied_by_opendp_to_the_values(monkeypatch):
    dp = pytest.importorskip("opendp.prelude")
    seen = []
    real = dp.m.make_laplace

    def spy(*args, **kw):
        meas = real(*args, **kw)
        return lambda arg: seen.append(list(arg)) or meas(arg)

    monkeypatch.setattr(dp.m, "make_laplace", spy)
    values = np.array([[3.5, 1e6], [0.25, 7.0]])
    noisy, ev = laplace_mechanism(values, 1.0, secure=True, discrete=False, changes=(1, 1))
    assert seen == [values.ravel().tolist()] and noisy.shape == values.shape and ev.scale == 2.0
    assert np.all(np.abs(noisy - values) < 200)
    with pytest.raises(DPTopicError, match="applied to the values"):
        laplace_noise((2,), 1.0, None, discrete=False, secure=True)


# ------------------------------------------------------------------ mechanisms and events
@FAST
@given(scale=NASTY, discrete=st.booleans())
def test_laplace_noise_scale(scale, discrete):
    ok, x = works_or_refuses(lambda: laplace_noise((5,), scale, np.random.default_rng(0), discrete))
    if ok:
        assert np.all(np.isfinite(x)) and (x.dtype == np.int64 if discrete else True)


@FAST
@given(eps=NASTY, discrete=st.booleans())
def test_laplace_mechanisms_epsilon(eps, discrete):
    vals = np.arange(4, dtype=np.int64 if discrete else np.float64)
    for fn in (lambda: laplace_mechanism(vals, eps, np.random.default_rng(0), changes=(1, 1)),
               lambda: laplace_with_scale(vals, eps, np.random.default_rng(0), changes=(1, 1))):
        ok, out = works_or_refuses(fn)
        if ok:
            noisy, ev = out
            assert np.all(np.isfinite(noisy)) and 0 < ev.epsilon < math.inf


def test_calculators_and_validation_on_every_special_value():
    """Every listed special value, deterministically (Hypothesis samples only some of them)."""
    for v in SPECIAL:
        for name, fn in CALCULATORS.items():
            if "hdp_total" in name or "smallest" in name:
                continue  # PLD-backed: covered by the sampled test above
            ok, out = works_or_refuses(lambda: fn(v))
            if ok:
                assert isinstance(out, float) and 0 <= out < math.inf, (name, v, out)
        for _, cls, name in PARAMS:
            ok, _ = works_or_refuses(cls(**{**base_kwargs(cls), name: v})._validate)
            if ok:   # verbose also takes a bool, as scikit-learn's estimators do
                assert v is None or is_clean_number(v) or (name == "verbose" and isinstance(v, bool)), (name, v)
        works_or_refuses(lambda: PureDPEvent(v))
        works_or_refuses(lambda: LaplaceEvent(scale=v))
        works_or_refuses(lambda: laplace_noise((2,), v, np.random.default_rng(0), True))
