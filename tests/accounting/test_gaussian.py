"""``dptopic.accounting.gaussian``."""
import math

import numpy as np
import pytest
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from scipy.stats import norm

from dptopic.accounting import compose_rdp
from dptopic.accounting.gaussian import (
    SubsampledGaussianEvent,
    calibrate_gaussian_pair,
    calibrate_noise_multiplier,
    moments_accountant_epsilon,
    strong_composition_epsilon,
    strong_composition_noise,
    svi_dp_event,
)
from dptopic.accounting.ledger import compose_pld
from dptopic.errors import DPTopicError


def test_tiny_noise_multiplier_is_a_one_line_error_not_a_crash():
    """A step with almost no noise would need a PLD grid of billions of points: refused before any work."""
    from dptopic.accounting.gaussian import MIN_NOISE_MULTIPLIER, SubsampledGaussianEvent

    ev = SubsampledGaussianEvent(1e-4, 0.1)  # describing it is fine
    with pytest.raises(DPTopicError, match="noise_multiplier=0.0001.*add more noise"):
        ev.pld()
    with pytest.raises(DPTopicError, match="noise_multiplier"):
        ev.rdp(np.array([2.0, 8.0]))
    assert SubsampledGaussianEvent(MIN_NOISE_MULTIPLIER, 0.1).epsilon_at(1e-5) > 0
    with pytest.raises(DPTopicError, match="noise_multiplier"):
        SubsampledGaussianEvent(0.0, 0.1)
    with pytest.raises(DPTopicError, match="sampling_rate"):
        SubsampledGaussianEvent(1.0, 1.5)


def test_pair_calibration_matches_dp_accounting():
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    s1, s2 = calibrate_gaussian_pair(1.0, 1e-5, 3.0)
    assert s1 == pytest.approx(3 * s2)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.GaussianDpEvent(s1)).compose(dp_event.GaussianDpEvent(s2))
    eps = acc.get_epsilon(1e-5)
    assert eps <= 1.0 + 2e-3 and eps > 0.98           # tight, not wasteful
    # the pair costs what one Gaussian of multiplier (s1^-2 + s2^-2)^(-1/2) costs: 3.73 at (1, 1e-5)
    assert (s1 ** -2 + s2 ** -2) ** -0.5 == pytest.approx(calibrate_noise_multiplier(1.0, 1e-5, 1.0, 1), rel=5e-3)


@pytest.mark.parametrize("target,q", [(0.3, 0.01), (0.5, 0.05), (1.3, 0.01), (2.0, 0.01), (6.0, 0.05)])
def test_strong_composition_calibration_never_exceeds_its_target(target, q):
    r = strong_composition_noise(target, q, 500)
    assert strong_composition_epsilon(r["epsilon_step"], q, 500, r["delta_slack"]) <= target


@pytest.mark.parametrize("eps,delta,n", [(0.5, 1e-5, 1), (1.0, 1e-5, 5), (3.7, 1e-3, 20)])
def test_gaussian_calibrators_stay_within_the_budget_exactly(eps, delta, n):
    s = calibrate_noise_multiplier(eps, delta, 1.0, n)
    assert compose_pld([(SubsampledGaussianEvent(s, 1.0), n)], delta) <= eps
    a, b = calibrate_gaussian_pair(eps, delta, 2.0)
    assert compose_pld([(SubsampledGaussianEvent(a, 1.0), 1), (SubsampledGaussianEvent(b, 1.0), 1)], delta) <= eps


# ---------------------------------------------------------------- the strong-composition cross-check of DP-SVI
def _classic_step_delta(sigma: float, eps: float) -> float:
    """The exact delta of one Gaussian step at eps (Balle & Wang 2018, Thm 8), sensitivity 1."""
    return norm.cdf(0.5 / sigma - eps * sigma) - math.exp(eps) * norm.cdf(-0.5 / sigma - eps * sigma)


@pytest.mark.parametrize("sigma", [0.25, 0.4, 0.5])
def test_strong_composition_figure_is_not_stated_where_the_classic_step_bound_fails(sigma):
    """The baseline charges each step eps_it = sqrt(2 ln(1.25/delta_it))/sigma, the classic Gaussian calibration,
    a theorem only for eps_it < 1. With little noise the step is not (eps_it, delta_it)-DP at all, so the composed
    figure (listed on the privacy card at the report's delta) held at no delta: it must not be a finite number."""
    from dptopic.accounting.gaussian import strong_composition_for_sigma

    d_step = 1e-6
    eps_it = math.sqrt(2 * math.log(1.25 / d_step)) / sigma
    assert _classic_step_delta(sigma, eps_it) > d_step          # the per-step claim is false here
    assert strong_composition_for_sigma(sigma, 0.05, 20, 1e-5, d_step) == math.inf


@pytest.mark.parametrize("sigma", [0.7, 1.24, 2.0, 8.0])
def test_strong_composition_figure_is_unchanged_where_the_step_bound_holds(sigma):
    from dptopic.accounting.gaussian import strong_composition_epsilon, strong_composition_for_sigma

    d_step, q, steps, delta = 1e-6, 0.05, 20, 1e-5
    eps_it = math.sqrt(2 * math.log(1.25 / d_step)) / sigma
    assert _classic_step_delta(sigma, eps_it) <= d_step
    want = strong_composition_epsilon(eps_it, q, steps, delta - steps * q * d_step)
    assert strong_composition_for_sigma(sigma, q, steps, delta, d_step) == pytest.approx(want, rel=1e-12)


def test_ledger_matches_dp_accounting_reference():
    ev = SubsampledGaussianEvent(1.0, 0.01)
    eps_pld = compose_pld([(ev, 1000)], 1e-5)
    assert eps_pld == pytest.approx(1.83, abs=0.01)
    ref = pld_privacy_accountant.PLDAccountant().compose(svi_dp_event(1.0, 0.01, 1000)).get_epsilon(1e-5)
    assert ref <= eps_pld <= ref * 1.001   # a coarser pessimistic grid: an upper bound, within 0.1%
    rdp_ref = rdp_privacy_accountant.RdpAccountant().compose(svi_dp_event(1.0, 0.01, 1000)).get_epsilon(1e-5)
    assert compose_rdp([(ev, 1000)], 1e-5) == pytest.approx(rdp_ref, rel=0.01)
    assert eps_pld < rdp_ref  # PLD is the tighter of the two


def test_moments_accountant_and_strong_composition_reference_values():
    # Park et al.'s setting q = 0.05, sigma = 1.24, 20 steps, delta = 1e-4 (Abadi et al. 2016, Thm 2)
    assert moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, code_cap=True) == pytest.approx(2.441, abs=2e-3)
    assert moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, max_order=64) == pytest.approx(1.645, abs=2e-3)
    sc = strong_composition_noise(2.441, 0.05, 20, delta=1e-4, delta_step=1e-6)
    assert sc["epsilon_step"] == pytest.approx(1.222, abs=2e-3)
    assert sc["noise_multiplier"] == pytest.approx(4.337, abs=5e-3)
    assert not sc["classic_valid"]
    with pytest.raises(DPTopicError):
        moments_accountant_epsilon(0.5, 0.05, 20, 1e-4, code_cap=True)  # outside the code's validity range


# ---------------------------------------------------------------- finding 5: the paper's moments accountant
def test_the_papers_moments_accountant_is_none_outside_abadi_lemma_3():
    from dptopic.accounting import moments_accountant_epsilon

    # sigma < 1: the cap floor(sigma^2 ln(1/(q sigma))) is >= 1 here, but Lemma 3 is stated for sigma >= 1
    with pytest.raises(DPTopicError, match="Lemma 3"):
        moments_accountant_epsilon(0.997, 0.001, 100, 1e-5, code_cap=True)
    # q >= 1/(16 sigma): outside it too (the cap is 3 here)
    with pytest.raises(DPTopicError, match="sigma >= 1 and q < 1/\\(16 sigma\\)"):
        moments_accountant_epsilon(1.24, 0.06, 20, 1e-4, code_cap=True)
    assert moments_accountant_epsilon(1.24, 0.05, 20, 1e-4, code_cap=True) == pytest.approx(2.441, abs=2e-3)
    # orders 1..64 stay valid for any sigma (a cross-check, not the paper's figure)
    assert moments_accountant_epsilon(0.997, 0.001, 100, 1e-5, max_order=64) > 0


def test_the_moments_accountant_remembers_each_setting_apart():
    """moments_accountant_epsilon is remembered per (sigma, q, steps, delta, orders): a setting asked after another
    that differs in one of them gets its own figure, equal to the one computed with nothing remembered."""
    from dptopic.accounting import gaussian

    base = (1.24, 0.05, 20, 1e-4)
    variants = [(1.2, 0.05, 20, 1e-4), (1.24, 0.04, 20, 1e-4), (1.24, 0.05, 21, 1e-4), (1.24, 0.05, 20, 1e-5)]
    for kw in ({"max_order": 64}, {"max_order": 32}, {"code_cap": True}):
        for args in variants:
            gaussian._moments_epsilon.cache_clear()
            fresh = moments_accountant_epsilon(*args, **kw)
            gaussian._moments_epsilon.cache_clear()
            first = moments_accountant_epsilon(*base, **kw)
            assert moments_accountant_epsilon(*args, **kw) == fresh != first
    gaussian._moments_epsilon.cache_clear()
    capped = moments_accountant_epsilon(*base, code_cap=True)
    assert moments_accountant_epsilon(*base, max_order=64) != capped        # the orders are in the key
