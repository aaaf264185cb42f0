"""``dptopic.accounting.budget``."""
import pytest

from dptopic.accounting import (
    LaplaceEvent,
    compose_pld,
    compose_rdp,
    hdp_iteration_events,
    hdp_total_epsilon,
    smallest_hdp_budget,
    solve_hdp_epsilon_laplace,
)
from dptopic.errors import DPTopicError


def test_budget_helper():
    eps_l = solve_hdp_epsilon_laplace(30.0, 1e-5, 10, 1.0)
    assert eps_l > 0
    assert hdp_total_epsilon(eps_l, 1.0, 10, 1e-5) <= 30.0 + 1e-6
    assert hdp_total_epsilon(eps_l * 1.01, 1.0, 10, 1e-5) > 30.0 - 0.05
    floor = smallest_hdp_budget(10.0, 100, 1e-5)
    with pytest.raises(DPTopicError, match=r"budget too small.*epsilon > "):
        solve_hdp_epsilon_laplace(floor * 0.9, 1e-5, 100, 10.0)


def test_rdp_closed_form_values():
    lap, inh = hdp_iteration_events(1.0, 10.0, discrete=True)
    assert compose_rdp([(lap, 100), (inh, 100)], 1e-5) == pytest.approx(1054.5, abs=0.1)
    assert compose_pld([(lap, 100), (inh, 100)], 1e-5) == pytest.approx(1053.0, abs=0.1)
    cdp = LaplaceEvent(scale=1.0, changes=(1, 1), discrete=True)  # CDP-LDA+ count release at eps = 1
    assert compose_rdp([(cdp, 100)], 1e-5) == pytest.approx(146.3, abs=0.1)


def test_hdp_total_epsilon_is_the_headline_of_a_ledger_that_spent_the_plan():
    """The total the solver aims at is the privacy card's figure: a ledger that spent the plan's events states it."""
    from dptopic.accounting import PrivacyLedger
    from dptopic.accounting.budget import hdp_plan

    for eps_l, extra in ((1.0, 0), (2.5, 1)):
        plan = hdp_plan(eps_l, 10.0, 100, extra_laplace=extra)
        ledger = PrivacyLedger()
        for event, n in plan.groups():
            ledger.spend(event, n)
        headline = ledger.report(1e-5)["epsilon"]
        assert hdp_total_epsilon(eps_l, 10.0, 100, 1e-5, extra_laplace=extra) == plan.epsilon(1e-5) == headline
    assert smallest_hdp_budget(10.0, 100, 1e-5) == hdp_plan(None, 10.0, 100).epsilon(1e-5)


@pytest.mark.parametrize("epsilon, n_iter, epsilon_inherent, extra", [
    (1000.0, 50, 10.0, 0), (1100.0, 100, 10.0, 0), (1100.0, 100, 10.0, 1), (5.0, 10, 0.1, 0), (30.0, 10, 1.0, 1)])
def test_solved_epsilon_laplace_spends_the_total_within_the_stated_tolerance(epsilon, n_iter, epsilon_inherent, extra):
    from dptopic.accounting.budget import HDP_SPEND_RTOL

    eps_l = solve_hdp_epsilon_laplace(epsilon, 1e-5, n_iter, epsilon_inherent, extra_laplace=extra)
    spent = hdp_total_epsilon(eps_l, epsilon_inherent, n_iter, 1e-5, extra_laplace=extra)
    assert epsilon * (1 - HDP_SPEND_RTOL) <= spent <= epsilon


def test_a_total_basic_composition_states_is_spent_exactly():
    """T (eps_L + eps_I) of pure events at large eps_L: every figure is basic composition, and the solver spends the
    total to rounding (it once stopped at 999.56 of 1,000, its bisection stopping on eps_L's own tolerance)."""
    eps_l = solve_hdp_epsilon_laplace(1000.0, 1e-5, 50, 10.0)
    assert hdp_total_epsilon(eps_l, 10.0, 50, 1e-5) == pytest.approx(1000.0, rel=1e-9)
    assert hdp_total_epsilon(eps_l, 10.0, 50, 1e-5) <= 1000.0


def test_hdp_budget_error_is_the_one_rule_of_the_word_level_trainer():
    """HDP-LDA's rule for a total it cannot spend lives beside its plan: ``HDPLDA.from_budget``, ``HDPLDA(epsilon=)``
    and ``dptopic.for_unit("word")`` refuse a total above what the iterations spend at most, and take one within
    1% of it."""
    import dptopic
    from dptopic.accounting.budget import HDP_SPEND_TOLERANCE, hdp_budget_error, hdp_most_epsilon
    from dptopic.errors import ParameterError

    most = hdp_most_epsilon(2, 10.0, 1e-5)
    assert hdp_budget_error(most * HDP_SPEND_TOLERANCE * 0.999, 2, 10.0, 1e-5) is None
    error = hdp_budget_error(most * 2, 2, 10.0, 1e-5)
    assert isinstance(error, ParameterError) and "is more than the word-level trainer (HDP-LDA) can spend" in str(error)
    for build in (lambda: dptopic.HDPLDA.from_budget(most * 2, 1e-5, n_iter=2),
                  lambda: dptopic.HDPLDA(epsilon=most * 2, n_iter=2, verbose=0)._validate(),
                  lambda: dptopic.for_unit("word", most * 2, n_iter=2)):
        with pytest.raises(ParameterError, match="can spend"):
            build()
    assert dptopic.HDPLDA.from_budget(most, 1e-5, n_iter=2).epsilon_inherent_ == 10.0
