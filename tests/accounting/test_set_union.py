"""Calibrators stay within the budget, the Gaussian mechanism refuses unaccountable noise before
drawing it, and the RRP kernel's replacement probability is realised on the safe side (exact arithmetic)."""
from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from dptopic.accounting.set_union import gaussian_sigma
from dptopic.errors import DPTopicError


# ------------------------------------------------------------------ 1. calibration within the budget
@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.5, 1e-3), (4.0, 1e-6), (4.0, 1e-5), (4.0, 0.05)])
def test_set_union_sigma_never_exceeds_its_delta(eps, delta):
    """The analytic Gaussian calibration returned brentq's root, on either side of it: delta(sigma) was up to 4e-13
    (relative) above the delta asked for in these settings."""
    s = gaussian_sigma(eps, delta)
    got = norm.cdf(0.5 / s - eps * s) - math.exp(eps) * norm.cdf(-0.5 / s - eps * s)
    assert got <= delta


@pytest.mark.parametrize("eps, delta", [(0.015368076492430435, 4.775028425621755e-10), (0.01, 1e-6), (0.02, 1e-8),
                                        (0.1, 1e-5), (1.0, 1e-5), (5.0, 1e-7)])
def test_set_union_sigma_is_within_its_delta_in_exact_arithmetic(eps, delta):
    """At small epsilon the two terms of delta(sigma) nearly cancel and the float check that stepped sigma up let it
    stop 5e-12 (relative) above the budget; checked here with 50 significant digits, not the float formula."""
    mp = pytest.importorskip("mpmath")
    from dptopic.accounting.set_union import gaussian_sigma

    s = gaussian_sigma(eps, delta)
    with mp.workdps(50):
        S, E = mp.mpf(s), mp.mpf(eps)
        exact = mp.ncdf(0.5 / S - E * S) - mp.e ** E * mp.ncdf(-0.5 / S - E * S)
        assert exact <= mp.mpf(delta)
        assert exact >= mp.mpf(delta) * (1 - mp.mpf("1e-6"))      # and not far above the least noise


# ----------------------------------------------------------------- 6: --private-vocabulary with a huge epsilon
@pytest.mark.parametrize("eps", [600.0, 1000.0, 1e300])
def test_gaussian_sigma_refuses_an_epsilon_out_of_range(eps):
    from dptopic.accounting.set_union import gaussian_sigma

    with pytest.raises(DPTopicError, match=r"invalid eps=.*\[0, 500\]"):
        gaussian_sigma(eps, 1e-5)


def test_model_epsilon_within_total_spends_the_total_within_its_tolerance_never_above():
    """A composed total that saves on the sum (as the PLD does): the share is more than the total less eps_V, and the
    composition states the total to within VOCABULARY_SPEND_RTOL below it."""
    from dptopic.accounting.set_union import VOCABULARY_SPEND_RTOL, model_epsilon_within_total

    def composed(e):
        return 0.4 + e - 0.1 * e ** 0.5          # below 0.4 + e: composition saves on the sum

    share = model_epsilon_within_total(composed, 1.0, 0.4)
    assert share > 0.6 and 1.0 * (1 - VOCABULARY_SPEND_RTOL) <= composed(share) <= 1.0
    assert model_epsilon_within_total(lambda e: 0.4 + e, 1.0, 0.4) == 0.6      # the sum itself: nothing to gain
    assert model_epsilon_within_total(lambda e: e / 2, 1.0, 0.4) == 1.0        # the whole total fits


def test_composed_epsilon_is_the_card_s_total_of_a_plan_and_a_vocabulary_event():
    from dptopic.accounting import ApproxDPEvent
    from dptopic.accounting.plan import docdp_cooc_plan
    from dptopic.accounting.set_union import SET_UNION_RELATION, composed_epsilon, fdptm_report

    plan = docdp_cooc_plan(1.0, 5e-6, 0.5)
    vocab = ApproxDPEvent(2.0, 5e-6, label="vocabulary", unit="document", relation=SET_UNION_RELATION)
    led = plan.ledger(budget=False)
    for e, n in plan.groups():
        led.spend(e, n)
    assert composed_epsilon(vocab, plan, 5e-6) == fdptm_report(vocab, led.report(5e-6), led)["epsilon"] < 3.0
