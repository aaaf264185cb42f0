"""``dptopic.accounting.fedlda``."""
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import pytest

from dptopic.accounting.fedlda import entries_for_user_budget, eta, rrp_event
from dptopic.errors import DPTopicError


def test_subset_report_variance_refuses_a_vanishing_epsilon():
    from dptopic.accounting.fedlda import check_informative, subset_report_variance

    with pytest.raises(DPTopicError, match="too small"):
        subset_report_variance(1e-300, 10)
    with pytest.raises(DPTopicError, match="too small"):
        check_informative(1e-10, 10)
    check_informative(1.0, 10)


TWO53 = 1 << 53


# ------------------------------------------------------------------ 3. RRP's realised replacement probability
def _exp_floor(x) -> Fraction:
    """A lower bound on e^x (80 significant digits, rounded down)."""
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = 80, ROUND_FLOOR
        return Fraction(Decimal(float(x)).exp())


def test_fedlda_entries_never_spend_more_than_the_user_budget():
    """user_epsilon / entries rounded up in floating point for about one budget in 16 of these: the entries then
    added up (as the ledger adds them) to more than the budget (the search's cost grows with the budget: up to 59)."""
    for k in range(1, 160):
        user = k * 0.37
        e, m = entries_for_user_budget(user, 500)
        assert e * m <= user
        assert e == pytest.approx(user / m, rel=1e-15)


def test_rrp_event_charges_the_realised_eta():
    """At small epsilon the 'another' rule costs log(eta / (1 - eta)) > epsilon; the event states it for the eta the
    kernel realises, rounded up."""
    from dptopic.accounting.fedlda import effective_epsilon, realised_eta

    for eps in (0.125, 0.5, 1.0):
        r = realised_eta(eps, 0.1)
        ev = rrp_event(eps, 0.1, exclusion="floor")
        assert r >= eta(eps, 0.1) and (Fraction(r) * TWO53).denominator == 1
        assert ev.epsilon == effective_epsilon(eps, r) > eps
        assert _exp_floor(ev.epsilon) >= Fraction(r) / (1 - Fraction(r))
