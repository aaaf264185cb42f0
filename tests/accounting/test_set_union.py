"""Privacy review 53: calibrators stay within the budget, the Gaussian mechanism refuses unaccountable noise before
drawing it, and the RRP kernel's replacement probability is realised on the safe side (exact arithmetic)."""
from __future__ import annotations

import math
from decimal import ROUND_FLOOR, Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from dptopic.accounting.fedlda import delta0, entries_for_user_budget, eta, rrp_event
from dptopic.accounting.gaussian import (SubsampledGaussianEvent, calibrate_gaussian_pair, calibrate_noise_multiplier,
                                         strong_composition_epsilon, strong_composition_noise)
from dptopic.accounting.ledger import PrivacyLedger, compose_pld
from dptopic.accounting.set_union import gaussian_sigma
from dptopic.accounting.verify import RunPlan, check_run, verify_report
from dptopic.errors import DPTopicError
from dptopic.mechanisms import rrp as rrp_module
from dptopic.mechanisms.gaussian import gaussian_mechanism

TWO53 = 1 << 53


# ------------------------------------------------------------------ 1. calibration within the budget
@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.5, 1e-3), (4.0, 1e-6), (4.0, 1e-5), (4.0, 0.05)])
def test_set_union_sigma_never_exceeds_its_delta(eps, delta):
    """The analytic Gaussian calibration returned brentq's root, on either side of it: delta(sigma) was up to 4e-13
    (relative) above the delta asked for in these settings."""
    s = gaussian_sigma(eps, delta)
    got = norm.cdf(0.5 / s - eps * s) - math.exp(eps) * norm.cdf(-0.5 / s - eps * s)
    assert got <= delta


@pytest.mark.parametrize("target,q", [(0.3, 0.01), (0.5, 0.05), (1.3, 0.01), (2.0, 0.01), (6.0, 0.05)])
def test_strong_composition_calibration_never_exceeds_its_target(target, q):
    r = strong_composition_noise(target, q, 500)
    assert strong_composition_epsilon(r["epsilon_step"], q, 500, r["delta_slack"]) <= target


def test_fedlda_entries_never_spend_more_than_the_user_budget():
    """user_epsilon / entries rounded up in floating point for about one budget in 14 of these: the entries then
    added up (as the ledger adds them) to more than the budget."""
    for k in range(1, 400):
        user = k * 0.37
        e, m = entries_for_user_budget(user, 500)
        assert e * m <= user
        assert e == pytest.approx(user / m, rel=1e-15)


@pytest.mark.parametrize("eps,delta,n", [(0.5, 1e-5, 1), (1.0, 1e-5, 5), (3.7, 1e-3, 20)])
def test_gaussian_calibrators_stay_within_the_budget_exactly(eps, delta, n):
    s = calibrate_noise_multiplier(eps, delta, 1.0, n)
    assert compose_pld([(SubsampledGaussianEvent(s, 1.0), n)], delta) <= eps
    a, b = calibrate_gaussian_pair(eps, delta, 2.0)
    assert compose_pld([(SubsampledGaussianEvent(a, 1.0), 1), (SubsampledGaussianEvent(b, 1.0), 1)], delta) <= eps


def _gaussian_report(sigma, n, delta):
    led = PrivacyLedger(unit="document", relation="add/remove")
    led.spend(SubsampledGaussianEvent(sigma, 1.0), n)
    return led.report(delta)


def test_check_run_lets_only_float_noise_above_the_budget():
    """A run whose events give an epsilon 5e-5 (relative) above the budget its noise was calibrated to spent more
    than it was asked to: check_run let up to 1e-4 pass."""
    delta, n = 1e-5, 5
    rep = _gaussian_report(calibrate_noise_multiplier(1.0, delta, 1.0, n), n, delta)
    check = verify_report(rep)
    assert check.status == "verified"
    claim = check.figures["epsilon"]["recomputed"]
    over = check_run(verify_report(rep), RunPlan(budget=(claim * (1 - 5e-5), delta)), rep, who="DocDPEM")
    assert over.status == "failed" and "was asked for epsilon" in over.detail
    assert over.figures["budget epsilon (requested)"]["verdict"] == "exceeds"
    # floating-point noise is no excess, and a run within its budget agrees
    for budget in (claim * (1 - 1e-12), claim, 1.0):
        ok = check_run(verify_report(rep), RunPlan(budget=(budget, delta)), rep, who="DocDPEM")
        assert ok.status == "verified", ok.detail
    # delta too: a delta above the budget's by more than float noise fails
    worse = check_run(verify_report(rep), RunPlan(budget=(1.0, delta * (1 - 5e-5))), rep, who="DocDPEM")
    assert worse.status == "failed" and "was asked for delta" in worse.detail


def test_check_run_message_shows_digits_that_differ():
    delta, n = 1e-5, 5
    rep = _gaussian_report(calibrate_noise_multiplier(1.0, delta, 1.0, n), n, delta)
    claim = verify_report(rep).figures["epsilon"]["recomputed"]
    out = check_run(verify_report(rep), RunPlan(budget=(claim * (1 - 1e-7), delta)), rep, who="DocDPEM")
    assert out.status == "failed"
    said = out.detail.split("its events give ")[1].split(";")[0]
    assert said != f"{claim * (1 - 1e-7):.6g}" and float(said) > claim * (1 - 1e-7)


# ------------------------------------------------------------------ 2. the Gaussian mechanism's noise range
@pytest.mark.parametrize("sigma", [0.2, 0.01, 2000.0])
def test_gaussian_mechanism_refuses_unaccountable_noise_before_drawing(sigma):
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    with pytest.raises(DPTopicError) as e:
        gaussian_mechanism(np.zeros(3), sigma, 1.0, rng)
    msg = str(e.value)
    assert "\n" not in msg and "the accountant handles [0.25, 1000]" in msg
    assert rng.bit_generator.state == before                  # no noise was drawn
    # the ledger's own refusal of the same event says the same
    with pytest.raises(DPTopicError) as led:
        PrivacyLedger(unit="document", relation="x", budget=(1.0, 1e-5)).spend(SubsampledGaussianEvent(sigma, 1.0))
    assert str(led.value) == msg


def test_gaussian_mechanism_accepts_the_range_and_an_unaccounted_release():
    noisy, ev = gaussian_mechanism(np.zeros(3), 0.25, 1.0, np.random.default_rng(0))
    assert ev.noise_multiplier == 0.25 and noisy.shape == (3,)
    # a caller with its own theorem (DP set union) may use less noise; its event is not for the ledger
    noisy, _ = gaussian_mechanism(np.zeros(3), 0.1, 1.0, np.random.default_rng(0), accounted=False)
    assert np.all(np.isfinite(noisy))


# ------------------------------------------------------------------ 3. RRP's realised replacement probability
def _exp_floor(x) -> Fraction:
    """A lower bound on e^x (80 significant digits, rounded down)."""
    with localcontext() as ctx:
        ctx.prec, ctx.rounding = 80, ROUND_FLOOR
        return Fraction(Decimal(float(x)).exp())


def _run(monkeypatch, words, Q, eps, **kw):
    """rrp_perturb with the kernel's arguments captured."""
    seen = {}
    kernel = rrp_module.rrp_replace

    def spy(words, rows, kept_words, kept_cdf, kept_len, kept_mask, eta_, exclude_self, rare_always, *rest):
        seen.update(cdf=kept_cdf.copy(), words=kept_words.copy(), length=kept_len.copy(), mask=kept_mask.copy(),
                    eta=eta_, exclude_self=exclude_self, rare_always=rare_always)
        return kernel(words, rows, kept_words, kept_cdf, kept_len, kept_mask, eta_, exclude_self, rare_always, *rest)

    monkeypatch.setattr(rrp_module, "rrp_replace", spy)
    _, event = rrp_module.rrp_perturb(words, Q, eps, rng=np.random.default_rng(0), **kw)
    return seen, event


def _realised_matrix(seen, V):
    """The kernel's exact output distribution (row 0) for each input word and padding (last row): a coin
    u = k / 2^53 keeps a word when u >= eta; a replacement is index i when cdf[i-1] <= u < cdf[i]."""
    eta_r = Fraction(math.ceil(Fraction(seen["eta"]) * TWO53), TWO53)
    m = int(seen["length"][0])
    ups = [0] + [math.ceil(Fraction(float(c)) * TWO53) for c in seen["cdf"][0, :m]]
    q = [Fraction(0)] * V
    for i in range(m):
        q[int(seen["words"][0, i])] += Fraction(ups[i + 1] - ups[i], TWO53)
    assert sum(q) == 1
    rows = []
    for x in list(range(V)) + [-1]:
        kept = x >= 0 and (bool(seen["mask"][0, x]) or not seen["rare_always"])
        keep = (1 - eta_r) if kept else Fraction(0)
        replace = 1 - keep
        if seen["exclude_self"] and x >= 0:
            draw = [Fraction(0) if o == x else q[o] / (1 - q[x]) for o in range(V)]
        else:
            draw = q
        rows.append([replace * draw[o] + (keep if o == x else 0) for o in range(V)])
    return eta_r, rows


def _worst_ratio(rows):
    worst = Fraction(1)
    for o in range(len(rows[0])):
        col = [r[o] for r in rows]
        if max(col) > 0:
            assert min(col) > 0, "an output one input can give and another never: an unbounded ratio"
            worst = max(worst, max(col) / min(col))
    return worst


EPS_GRID = [0.25, 0.375, 0.75, 0.875, 1.5, 1.875, 2.125, 2.5, 2.875, 3.125, 4.5]


@pytest.mark.parametrize("eps", EPS_GRID)
def test_none_rule_realised_ratio_is_within_e_eps_exactly(monkeypatch, eps):
    """k-ary randomized response over 4 words (the uniform CDF is exact in binary): the float eta handed to the
    kernel realised a keep probability above 1 - eta, and the ratio exp(eps) (1 + ~1e-16) in these settings."""
    V = 4
    words = np.array([0, 1, 2, 3, -1], dtype=np.int32)
    seen, event = _run(monkeypatch, words, np.ones((1, V)), eps, delta=0.1, exclusion="none")
    _, rows = _realised_matrix(seen, V)
    assert _worst_ratio(rows) <= _exp_floor(event.epsilon)
    assert event.epsilon == eps


@pytest.mark.parametrize("variant", ["another", "coincide"])
@pytest.mark.parametrize("exclusion", ["floor", "tail"])
@pytest.mark.parametrize("eps", [0.125, 0.375, 0.5, 1.0, 1.75, 2.25, 3.0, 3.875, 4.625, 5.25, 6.125])
def test_floor_and_tail_realised_eta_is_never_below_eta(monkeypatch, variant, exclusion, eps):
    """Theorem 1's eta makes the kept-word ratio exactly e^eps at the floor delta0: (1 - eta) / (eta delta0) = e^eps
    ("another") or e^eps - 1 ("coincide"). The realised replacement probability must be at least that eta; the float
    eta fell below it by up to one part in 2^53 in about half of these settings."""
    V = 4
    words = np.array([0, 1, 2, 3, -1], dtype=np.int32)
    seen, event = _run(monkeypatch, words, np.ones((1, V)), eps, delta=0.1, variant=variant, exclusion=exclusion)
    eta_r, rows = _realised_matrix(seen, V)
    d0 = Fraction(delta0(0.1))              # the floor the replacement table applies (a float)
    bound = _exp_floor(eps) - (1 if variant == "coincide" else 0)
    assert (1 - eta_r) / (eta_r * d0) <= bound
    assert abs(eta_r - Fraction(eta(eps, 0.1, 1.0, variant))) <= Fraction(4, TWO53)   # the float eta's rounding
    if exclusion == "floor":
        # the whole realised mechanism on a small vocabulary is within the event's epsilon, exactly
        assert _worst_ratio(rows) <= _exp_floor(event.epsilon)
        if variant == "another":                         # the ratios a larger eta raises are charged by the event
            assert eta_r / (1 - eta_r) <= _exp_floor(event.epsilon) and 1 / eta_r <= _exp_floor(event.epsilon)


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
