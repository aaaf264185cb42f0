"""``dptopic.accounting.fedlda``."""
import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from dptopic.accounting.events import ApproxDPEvent
from dptopic.accounting.fedlda import (
    delta0,
    effective_epsilon,
    entries_for_user_budget,
    eta,
    krr_eta,
    rrp_event,
    subset_inclusion,
    subset_size,
    theorem2_error_bound,
)
from dptopic.accounting.ledger import PrivacyLedger
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


# ------------------------------------------------------------------ FedLDA's calculators (Wang, Tong & Shi 2020)
def test_calculator_sanity_values():
    assert delta0(0.1, 1.0) == pytest.approx(0.0090909, abs=1e-6)
    assert eta(5.0, 0.1, 1.0) == pytest.approx(0.4257, abs=1e-4)
    assert eta(5.0, 0.1, 1.0, "coincide") == pytest.approx(0.4273, abs=1e-4)
    assert eta(7.5, 0.1) == pytest.approx(0.0574, abs=1e-3)
    assert eta(1000.0, 0.1) == 0.0
    np.testing.assert_allclose(theorem2_error_bound(0.5, np.array([1, 2, 3])), [0.5, 2.0, 4.5])


@pytest.mark.parametrize("call", [lambda: eta(0.0, 0.1), lambda: eta(-1, 0.1), lambda: delta0(0.0, 1.0),
                                  lambda: delta0(1.0, 1.0), lambda: delta0(0.1, 0.5), lambda: eta(5, 0.1, 1, "x"),
                                  lambda: theorem2_error_bound(0.1, np.array([0])), lambda: rrp_event(5, 0.1, exclusion="x")])
def test_calculator_errors_are_one_line(call):
    with pytest.raises(DPTopicError) as e:
        call()
    assert "\n" not in str(e.value)


def test_effective_epsilon_exceeds_nominal_only_when_another_word_cannot_be_eps_ldp():
    assert effective_epsilon(5.0, eta(5.0, 0.1)) == 5.0
    e1 = eta(1.0, 0.1)
    assert effective_epsilon(1.0, e1) == pytest.approx(math.log(e1 / (1 - e1)))
    assert effective_epsilon(1.0, eta(1.0, 0.1, variant="coincide"), "coincide") == 1.0


def test_ledger_composes_approximate_events_without_changing_pure_reports():
    pure = PrivacyLedger()
    pure.spend(rrp_event(5.0, 0.1), 3)
    rep = pure.report(1e-5)
    assert "delta_basic" not in rep and rep["epsilon_basic"] == pytest.approx(15.0)
    approx = PrivacyLedger(discretization=1e-2)
    approx.spend(rrp_event(5.0, 0.01, exclusion="tail"), 3)
    rep = approx.report(0.5)
    assert isinstance(rrp_event(5.0, 0.01, exclusion="tail"), ApproxDPEvent)
    assert rep["delta_basic"] == pytest.approx(0.06) and rep["epsilon_basic"] == pytest.approx(15.0)
    assert rep["epsilon_rdp"] == math.inf


# ------------------------------------------------------------------ the subset rule (exclusion='none')
def test_one_word_is_k_ary_randomized_response():
    V, eps = 10, 1.5
    a, b = subset_inclusion(eps, V, 1)
    assert a == pytest.approx(math.exp(eps) / (math.exp(eps) + V - 1))
    assert 1 - krr_eta(eps, V) + krr_eta(eps, V) / V == pytest.approx(a)
    assert subset_size(7.5, 1000) == 1 and subset_size(5.0, 1000) == 7 and subset_size(0.1, 5) == 2
