"""The privacy of a random-stopping hyper-parameter search (accounting.tuning; Papernot & Steinke 2022)."""
import math

import numpy as np
import pytest

from dptopic.accounting import PureDPEvent
from dptopic.accounting.events import RDP_ORDERS
from dptopic.accounting.gaussian import SubsampledGaussianEvent, calibrate_noise_multiplier
from dptopic.accounting.ledger import compose_pld, compose_rdp
from dptopic.accounting.tuning import RandomStoppingEvent, expected_runs, sample_runs
from dptopic.dataset_ledger.releases import events_from_json, events_to_json
from dptopic.errors import DPTopicError

ONE_FIT = ((SubsampledGaussianEvent(calibrate_noise_multiplier(1.0, 1e-5, 1.0, 1), 1.0), 1),)


def test_expected_runs_of_each_distribution():
    assert expected_runs("truncated_negative_binomial", 1.0, 0.1) == pytest.approx(10.0)      # geometric: 1/gamma
    assert expected_runs("truncated_negative_binomial", 0.0, 0.1) == pytest.approx(9.0 / math.log(10))
    assert expected_runs("poisson", mu=7.0) == 7.0


@pytest.mark.parametrize("eta,gamma", [(1.0, 0.1), (0.0, 0.05), (2.5, 0.2)])
def test_the_number_of_runs_has_the_stated_mean(eta, gamma):
    rng = np.random.default_rng(0)
    k = np.array([sample_runs(rng, "truncated_negative_binomial", eta, gamma) for _ in range(4000)])
    assert k.min() >= 1
    mean = expected_runs("truncated_negative_binomial", eta, gamma)
    assert abs(k.mean() - mean) < 4 * k.std() / math.sqrt(len(k))


def test_theorem_two_at_one_order():
    """eps'(lam) = eps(lam) + min over lam_hat of [(1+eta)(1-1/lam_hat) eps(lam_hat) + (1+eta) log(1/gamma)/lam_hat]
    + log E[K] / (lam - 1), computed here by hand for a pure-DP run."""
    ev = RandomStoppingEvent((((PureDPEvent(0.5), 1),),), eta=1.0, gamma=0.1)
    base = PureDPEvent(0.5).rdp(RDP_ORDERS)
    hat = np.min(2 * (1 - 1 / RDP_ORDERS) * base + 2 * math.log(10) / RDP_ORDERS)
    lam = np.array([4.0])
    want = PureDPEvent(0.5).rdp(lam) + hat + math.log(10.0) / 3.0
    np.testing.assert_allclose(ev.rdp(lam), want, rtol=1e-12)


def test_a_search_costs_a_few_fits_not_its_expected_runs():
    ev = RandomStoppingEvent((ONE_FIT,), eta=1.0, gamma=0.1)
    one = compose_pld(list(ONE_FIT), 1e-5)
    ten = min(compose_pld([(ONE_FIT[0][0], 10)], 1e-5), compose_rdp([(ONE_FIT[0][0], 10)], 1e-5))
    eps = ev.epsilon_at(1e-5)
    assert one < eps < ten
    assert compose_rdp([(ev, 1)], 1e-5) == pytest.approx(eps, rel=1e-9)


def test_the_costliest_candidate_bounds_each_run():
    cheap = ((PureDPEvent(0.2), 1),)
    dear = ((PureDPEvent(1.0), 1),)
    both = RandomStoppingEvent((cheap, dear), gamma=0.2)
    np.testing.assert_allclose(both.base_rdp(RDP_ORDERS), PureDPEvent(1.0).rdp(RDP_ORDERS))
    assert both.epsilon_at(1e-5) == pytest.approx(RandomStoppingEvent((dear,), gamma=0.2).epsilon_at(1e-5))


def test_poisson_stopping_is_finite_and_grows_with_its_mean():
    a = RandomStoppingEvent((ONE_FIT,), distribution="poisson", mu=3.0).epsilon_at(1e-5)
    b = RandomStoppingEvent((ONE_FIT,), distribution="poisson", mu=12.0).epsilon_at(1e-5)
    assert math.isfinite(a) and a < b


def test_a_search_round_trips_through_the_ledgers_json():
    ev = RandomStoppingEvent((ONE_FIT, ((PureDPEvent(0.3), 2),)), eta=0.0, gamma=0.05)
    (back, n), = events_from_json(events_to_json([(ev, 1)]))
    assert back == ev and n == 1


def test_bad_distributions_are_refused():
    with pytest.raises(DPTopicError):
        RandomStoppingEvent((ONE_FIT,), gamma=1.5)
    with pytest.raises(DPTopicError):
        RandomStoppingEvent((ONE_FIT,), distribution="uniform")
    with pytest.raises(DPTopicError):
        RandomStoppingEvent(())


def _exact_epsilon(p, q, delta=1e-5):
    """The smallest epsilon whose hockey-stick divergences between two output distributions are at most delta."""
    from scipy import optimize  # scipy.optimize: only this test

    def excess(e):
        return max(np.clip(p - math.exp(e) * q, 0, None).sum(), np.clip(q - math.exp(e) * p, 0, None).sum()) - delta
    return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 200.0)


def test_the_bound_covers_the_best_run_alone_and_not_K_in_an_exact_toy():
    """Randomized-response runs at epsilon 1 (a run's output is its score), geometric K of mean 10: the bound the
    search states (3.02) holds for the best run alone (exactly 1.80), and fails once K is published with it (23.6):
    why the search publishes no K (benchmarks/search_exact_toy.py)."""
    gamma, keep = 0.1, math.e / (1 + math.e)
    k = np.arange(1, 2001)
    pk = gamma * (1 - gamma) ** (k - 1)
    stated = RandomStoppingEvent((((PureDPEvent(1.0), 1),),), eta=1.0, gamma=gamma).epsilon_at(1e-5)
    zeros = [pk * (1 - (keep if bit else 1 - keep)) ** k for bit in (0, 1)]
    best = [np.array([z.sum(), 1 - z.sum()]) for z in zeros]
    k_and_best = [np.concatenate([z, pk - z]) for z in zeros]
    assert stated == pytest.approx(3.02, abs=0.01)
    assert _exact_epsilon(*best) == pytest.approx(1.80, abs=0.01) and _exact_epsilon(*best) <= stated
    assert _exact_epsilon(*k_and_best) == pytest.approx(23.6, abs=0.1)
