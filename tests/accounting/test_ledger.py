import math

import numpy as np
import pytest

from dptopic.accounting import (LaplaceEvent, PrivacyLedger, PureDPEvent, eps_iter_state, eps_iter_static,
                                eps_related, eps_replaced_state, eps_total, eps_total_static, hdp_clip_bound,
                                hdp_epsilon_inherent, hdp_total_epsilon, smallest_hdp_budget,
                                solve_epsilon_laplace)
from dptopic.errors import BudgetExceededError, DPTopicError


def test_hundred_laplace_reference_numbers():
    led = PrivacyLedger()
    led.spend(LaplaceEvent(scale=10.0), 100)  # eps = 0.1 each
    assert led.epsilon_basic() == pytest.approx(10.0, abs=1e-12)
    assert led.epsilon_tight(1e-5) == pytest.approx(4.22, abs=0.01)
    rdp = led.epsilon_rdp(1e-5)
    assert 4.22 < rdp < 6  # RDP is valid but looser than the PLD


def test_spec_sanity_values():
    assert eps_related(0.01) == pytest.approx(9.230, abs=5e-4)  # 2 ln(101)
    n = np.array([100.0, 5000.0])
    assert eps_iter_static(n, 0.01, 0, cmax=3000) == pytest.approx(47090.2, abs=0.1)
    assert hdp_clip_bound(10, 0.01) == pytest.approx(147.413 * 0.01, rel=1e-5)
    assert hdp_clip_bound(10, 1.0) == pytest.approx(147.413, rel=1e-5)
    assert hdp_epsilon_inherent(hdp_clip_bound(7.3, 0.3), 0.3) == pytest.approx(7.3)


def test_state_calculators():
    N = np.array([[5, 0, 2], [0, 3, 1]], float)  # K=2, V=3
    assert eps_replaced_state(N[:, 0], N[:, 1], 0.5) == pytest.approx(2 * math.log(5.5 / 0.5))
    n_tok = N.sum(0)
    expect = max(eps_replaced_state(N[:, 0], N[:, u], 0.5) + (n_tok[0] - 1 + n_tok[u]) * eps_related(0.5)
                 for u in (1, 2))
    assert eps_iter_state(N, n_tok, 0, 0.5) == pytest.approx(expect)
    assert eps_total([[1, 2], [3, 1]]) == 4
    assert eps_total_static(n_tok, 0.5, 3) == pytest.approx(3 * max(eps_iter_static(n_tok, 0.5, t) for t in range(3)))


def test_pure_events_through_pld_and_composition_order():
    led = PrivacyLedger()
    led.spend(PureDPEvent(1.0), 10)
    basic, tight = led.epsilon_basic(), led.epsilon_tight(1e-5)
    assert basic == 10.0 and tight < basic
    # a single pure event is tight already
    one = PrivacyLedger()
    one.spend(PureDPEvent(2.0))
    assert one.epsilon_tight(1e-9) == pytest.approx(2.0, abs=1e-3)


def test_two_cell_laplace_is_no_worse_than_l1_bound():
    ev = LaplaceEvent(scale=2.0, changes=(1, 1))
    assert ev.epsilon == 1.0
    led = PrivacyLedger()
    led.spend(ev, 1)
    assert led.epsilon_tight(1e-6) <= 1.0 + 1e-3


def test_ledger_budget_refuses():
    led = PrivacyLedger(budget=(1.0, 0.0))
    led.spend(PureDPEvent(0.6))
    with pytest.raises(BudgetExceededError, match="budget"):
        led.spend(PureDPEvent(0.6))
    assert led.epsilon_basic() == pytest.approx(0.6)
    tight = PrivacyLedger(budget=(5.0, 1e-5))
    tight.spend(LaplaceEvent(scale=10.0), 100)  # basic 10 > 5, but PLD 4.22 <= 5
    with pytest.raises(BudgetExceededError):
        tight.spend(LaplaceEvent(scale=10.0), 100)


def test_report_fields():
    led = PrivacyLedger(unit="word", relation="word-level replacement", theorem="Thm X")
    led.spend(LaplaceEvent(scale=1.0, changes=(1, 1), discrete=True), 3)
    rep = led.report(1e-5)
    for key in ("unit", "neighbouring_relation", "theorem", "epsilon_basic", "epsilon_pld", "epsilon_rdp", "delta",
                "accounting", "events"):
        assert key in rep
    assert rep["epsilon_basic"] == pytest.approx(6.0) and rep["events"][0]["count"] == 3
    with pytest.raises(DPTopicError, match="delta"):
        led.report(1.5)


def test_budget_helper():
    eps_l = solve_epsilon_laplace(30.0, 1e-5, 10, 1.0)
    assert eps_l > 0
    assert hdp_total_epsilon(eps_l, 1.0, 10, 1e-5) <= 30.0 + 1e-6
    assert hdp_total_epsilon(eps_l * 1.01, 1.0, 10, 1e-5) > 30.0 - 0.05
    floor = smallest_hdp_budget(10.0, 100, 1e-5)
    with pytest.raises(DPTopicError, match=r"budget too small.*epsilon > "):
        solve_epsilon_laplace(floor * 0.9, 1e-5, 100, 10.0)


@pytest.mark.parametrize("bad", [0, -1.0])
def test_calculators_reject_bad_input(bad):
    with pytest.raises(DPTopicError, match="beta"):
        eps_related(bad)
    with pytest.raises(DPTopicError, match="clip"):
        hdp_epsilon_inherent(bad, 0.1)


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


def test_the_pld_memo_answers_only_the_same_composition_and_never_a_mutable_event():
    """compose_pld remembers earlier answers by the events' whole frozen description: an equal composition gets the
    same figure, a different one (count, sigma, delta) its own, and an event that could change is always composed."""
    from dptopic.accounting import ledger
    from dptopic.accounting.gaussian import SubsampledGaussianEvent

    ev = SubsampledGaussianEvent(2.0, 0.1)
    a = ledger.compose_pld([(ev, 10)], 1e-5)
    assert ledger.compose_pld([(SubsampledGaussianEvent(2.0, 0.1), 10)], 1e-5) == a
    assert ledger.compose_pld([(ev, 20)], 1e-5) > a
    assert ledger.compose_pld([(SubsampledGaussianEvent(2.5, 0.1), 10)], 1e-5) < a
    assert ledger.compose_pld([(ev, 10)], 1e-3) < a
    ledger._PLD_MEMO.clear()
    assert ledger.compose_pld([(ev, 10)], 1e-5) == a                    # recomputed, the same

    class Mutable:                                                      # a user's event: never remembered
        def __init__(self, eps):
            self.epsilon = eps

        def pld(self, d):
            return PureDPEvent(self.epsilon).pld(d)

        def rdp(self, orders):
            return PureDPEvent(self.epsilon).rdp(orders)

        def describe(self):
            return {"type": "mutable", "epsilon": self.epsilon}

    m = Mutable(1.0)
    one = ledger.compose_pld([(m, 3)], 1e-5)
    m.epsilon = 2.0
    assert ledger.compose_pld([(m, 3)], 1e-5) > one
