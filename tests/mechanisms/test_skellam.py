"""The Skellam shares of the secure sum: the secure sampler (AES-CTR from the OS CSPRNG, exact Poisson algorithms)
against the Skellam probability mass function, and its refusals."""
import numpy as np
import pytest
from scipy import stats

from dptopic.errors import DPTopicError
from dptopic.mechanisms.skellam import SecureUniform, poisson, skellam_noise, skellam_share

pytest.importorskip("cryptography")


def _chi_square_pvalue(draws: np.ndarray, pmf, low: int, high: int) -> float:
    """Goodness of fit of integer ``draws`` to ``pmf`` over the bins ``< low``, ``low..high`` one each, ``> high``."""
    ks = np.arange(low, high + 1)
    probs = np.concatenate([[pmf.cdf(low - 1)], pmf.pmf(ks), [pmf.sf(high)]])
    counts = np.concatenate([[np.sum(draws < low)], [np.sum(draws == k) for k in ks], [np.sum(draws > high)]])
    expected = probs * len(draws)
    keep = expected >= 5
    obs, exp = list(counts[keep]), list(expected[keep])
    if expected[~keep].sum() > 0:       # the thin bins together, as one
        obs.append(counts[~keep].sum())
        exp.append(expected[~keep].sum())
    obs, exp = np.array(obs, dtype=float), np.array(exp)
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


UNSEEDED_P = 1e-6
"""The p-value below which a secure sampler's goodness of fit fails. Its coins come from the OS CSPRNG and cannot be
seeded, so a correct sampler fails each check with this probability: 9 checks, about once in 10^5 runs (at 1e-4 one
failed in a fresh-clone run). A wrong sampler gives far smaller p at these sample sizes."""


@pytest.mark.parametrize("mu", [0.3, 4.0, 9.5, 10.0, 37.0, 400.0])
def test_secure_skellam_draws_follow_the_skellam_pmf(mu):
    draws = skellam_noise(60_000, mu, secure=True)
    sd = np.sqrt(2 * mu)
    p = _chi_square_pvalue(draws, stats.skellam(mu, mu), int(-4 * sd) - 1, int(4 * sd) + 1)
    assert p > UNSEEDED_P, (mu, p)


def test_the_secure_poisson_sampler_matches_the_poisson_pmf_on_both_sides_of_its_switch():
    coins = SecureUniform()
    for mu in (2.5, 10.0, 123.0):
        draws = poisson(mu, 50_000, coins)
        sd = np.sqrt(mu)
        assert _chi_square_pvalue(draws, stats.poisson(mu), max(0, int(mu - 4 * sd)), int(mu + 4 * sd) + 1) > UNSEEDED_P


def test_secure_shares_at_a_rounds_size_have_the_planned_mean_and_variance():
    """A contributor's share at a real round's mu (millions): mean 0 and variance 2 mu within 5 standard errors."""
    mu, n = 3.7e7, 40_000
    draws = skellam_noise(n, mu, secure=True).astype(np.float64)
    var = 2 * mu
    assert abs(draws.mean()) < 5 * np.sqrt(var / n)
    assert abs(draws.var() / var - 1) < 5 * np.sqrt(2 / n)


def test_secure_uniforms_are_fresh_per_generator_and_in_range():
    a, b = SecureUniform().random(1000), SecureUniform().random(1000)
    assert not np.array_equal(a, b) and a.min() >= 0 and a.max() < 1
    assert abs(a.mean() - 0.5) < 5 * np.sqrt(1 / 12 / 1000)


def test_secure_mode_refuses_a_generator_and_simulation_needs_one():
    with pytest.raises(DPTopicError, match="refuses a numpy Generator"):
        skellam_noise(3, 1.0, np.random.default_rng(0), secure=True)
    with pytest.raises(DPTopicError, match="Generator is required"):
        skellam_noise(3, 1.0)
    noisy, event = skellam_share(np.zeros(5, np.int64), 2.0, 64.0, secure=True)
    assert noisy.shape == (5,) and event.mu == 2.0
