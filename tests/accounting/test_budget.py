"""``dptopic.accounting.budget``."""
import pytest
from dptopic.accounting import hdp_total_epsilon, smallest_hdp_budget, solve_epsilon_laplace
from dptopic.errors import DPTopicError
from dptopic.accounting import LaplaceEvent, compose_pld, compose_rdp, hdp_iteration_events


def test_budget_helper():
    eps_l = solve_epsilon_laplace(30.0, 1e-5, 10, 1.0)
    assert eps_l > 0
    assert hdp_total_epsilon(eps_l, 1.0, 10, 1e-5) <= 30.0 + 1e-6
    assert hdp_total_epsilon(eps_l * 1.01, 1.0, 10, 1e-5) > 30.0 - 0.05
    floor = smallest_hdp_budget(10.0, 100, 1e-5)
    with pytest.raises(DPTopicError, match=r"budget too small.*epsilon > "):
        solve_epsilon_laplace(floor * 0.9, 1e-5, 100, 10.0)


def test_rdp_closed_form_values():
    lap, inh = hdp_iteration_events(1.0, 10.0, discrete=True)
    assert compose_rdp([(lap, 100), (inh, 100)], 1e-5) == pytest.approx(1054.5, abs=0.1)
    assert compose_pld([(lap, 100), (inh, 100)], 1e-5) == pytest.approx(1053.0, abs=0.1)
    cdp = LaplaceEvent(scale=1.0, changes=(1, 1), discrete=True)  # CDP-LDA+ count release at eps = 1
    assert compose_rdp([(cdp, 100)], 1e-5) == pytest.approx(146.3, abs=0.1)
