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
