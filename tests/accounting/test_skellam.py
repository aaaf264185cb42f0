import numpy as np
import pytest
from scipy import special, stats

from dptopic.accounting.skellam import (
    SkellamRelease,
    calibrate_skellam,
    rdp_to_epsilon,
    skellam_epsilon,
    skellam_rdp,
    wrap_probability,
)


def exact_rdp(alpha: int, mu: float, shift: int) -> float:
    """Reference: the Renyi divergence of Sk(mu) + shift from Sk(mu), summed over the mass functions."""
    w = int(shift + 60 * np.sqrt(2 * mu) + 60)
    x = np.arange(-w, w + 1)
    lp = stats.skellam.logpmf(x - shift, mu, mu)
    lq = stats.skellam.logpmf(x, mu, mu)
    ok = np.isfinite(lp) & np.isfinite(lq)     # the rest underflows: its mass is below 1e-300
    return float(special.logsumexp(alpha * lp[ok] + (1 - alpha) * lq[ok]) / (alpha - 1))


@pytest.mark.parametrize("mu,shift", [(5.0, 1), (50.0, 3), (400.0, 10)])
def test_the_bound_holds_and_is_close_to_the_exact_divergence(mu, shift):
    for alpha in (2, 4, 8):
        exact = exact_rdp(alpha, mu, shift)
        bound = float(skellam_rdp([alpha], mu, shift, shift)[0])
        assert exact <= bound * (1 + 1e-9)
        if mu >= 50:
            assert bound <= 1.1 * exact


def test_the_bound_holds_for_a_vector():
    shifts = [2, 1, 1, 3]
    mu = 30.0
    exact = sum(exact_rdp(4, mu, c) for c in shifts)
    bound = skellam_rdp([4], mu, sum(shifts), np.sqrt(sum(c * c for c in shifts)))[0]
    assert exact <= bound


def test_the_conversion_matches_dp_accounting():
    from dp_accounting.rdp import rdp_privacy_accountant

    rel = SkellamRelease(2e4, 100.0, 500)
    orders = np.arange(2, 200, 1.0)
    rdp = rel.rdp(orders)
    ref, _ = rdp_privacy_accountant.compute_epsilon(orders, rdp, 1e-5)
    assert np.isclose(rdp_to_epsilon(rdp, 1e-5, orders), ref, rtol=1e-6)


def test_calibration_reaches_epsilon():
    mus = calibrate_skellam(1.0, 1e-5, [256.0, 256.0], [101, 5050], [3.0, 1.0])
    rel = [SkellamRelease(m, 256.0, d) for m, d in zip(mus, [101, 5050])]
    assert 0.99 < skellam_epsilon(rel, 1e-5) <= 1.0
    assert np.isclose(mus[0] / mus[1], 9.0)


def test_wrap_probability_bounds_a_simulation():
    rng = np.random.default_rng(0)
    mu, bits = 40.0, 6
    noise = rng.poisson(mu, (20_000, 4)) - rng.poisson(mu, (20_000, 4))
    seen = np.mean(np.any(np.abs(noise) >= 2 ** (bits - 1) - 1, axis=1))
    assert seen <= wrap_probability(mu, 0.0, 4, bits)
