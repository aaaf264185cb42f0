"""The Poisson-subsampled Gaussian mechanism (document-level private SVI, Park et al. 2016).

* :class:`SubsampledGaussianEvent` -- one step: each record joins the batch independently
  with probability ``q``; Gaussian noise of std ``σ·Δ₂`` is added to the clipped batch sum.
  It is the ``dp_accounting`` event ``PoissonSampledDpEvent(q, GaussianDpEvent(σ))``; the
  ledger composes it by PLD and RDP (add/remove adjacency).
* :func:`moments_accountant_epsilon` -- the moments accountant as Park et al. ran it
  (Abadi et al. 2016, Thm 2; log moments of the subsampled Gaussian over integer orders,
  optionally capped at ``⌊σ² ln(1/(qσ))⌋`` as in the authors' code), for reproduction.
* :func:`strong_composition_epsilon` / :func:`strong_composition_noise` -- the paper's
  baseline: classic Gaussian mechanism per step (Dwork & Roth 2014, Thm A.1), amplification
  by subsampling, strong composition (Dwork & Roth 2014, Thm 3.20).
* :func:`calibrate_noise_multiplier` -- the smallest ``σ`` (by dp-accounting's calibration,
  then verified with the ledger's own PLD) meeting ``(ε, δ)`` over ``steps`` steps.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate, optimize
from scipy.special import gammaln, logsumexp

from ..errors import DPTopicError, ParameterError
from ._lazy import dp_event, mechanism_calibration, pld_privacy_accountant

# the event and its noise range live in events.py
from .events import GAUSSIAN_DISCRETIZATION, MAX_NOISE_MULTIPLIER, MIN_NOISE_MULTIPLIER, SubsampledGaussianEvent
from .ledger import compose_pld


def svi_dp_event(noise_multiplier: float, sampling_rate: float, steps: int) -> dp_event.DpEvent:
    """``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(σ)), steps)``."""
    return dp_event.SelfComposedDpEvent(SubsampledGaussianEvent(noise_multiplier, sampling_rate).dp_event(), steps)


@functools.lru_cache(maxsize=1024)      # a pure function of its numbers, asked again by every report and calibration
def pld_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                discretization: float = GAUSSIAN_DISCRETIZATION) -> float:
    """ε(δ) of ``steps`` subsampled Gaussian steps by dp-accounting's PLD accountant (add/remove)."""
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=discretization)
    acc.compose(svi_dp_event(noise_multiplier, sampling_rate, steps))
    return float(acc.get_epsilon(delta))


# ------------------------------------------------------------------ moments accountant
def _log_e2(lam: int, q: float, sigma: float) -> float:
    """log E_{z~μ}[(μ(z)/μ0(z))^λ] in closed form (Mironov, Talwar & Zhang 2019)."""
    j = np.arange(lam + 2)
    logc = gammaln(lam + 2) - gammaln(j + 1) - gammaln(lam + 2 - j)
    with np.errstate(divide="ignore"):
        terms = logc + (lam + 1 - j) * np.log1p(-q) + j * np.log(q) + (j * j - j) / (2 * sigma * sigma)
    return float(logsumexp(terms))


def _log_e1(lam: int, q: float, sigma: float) -> float:
    """log E_{z~μ0}[(μ0(z)/μ(z))^λ] by quadrature (Abadi et al. 2016, Sec. 3.2)."""
    s2 = sigma * sigma

    lq, l1q = math.log(q), math.log1p(-q)

    def f(z):
        return math.exp(-z * z / (2 * s2) - lam * np.logaddexp(l1q, lq + (2 * z - 1) / (2 * s2))) \
            / math.sqrt(2 * math.pi * s2)

    val, _ = integrate.quad(f, -np.inf, np.inf, limit=200)
    return math.log(val)


def moments_accountant_epsilon(noise_multiplier: float, sampling_rate: float, steps: int, delta: float,
                               max_order: int | None = 64, code_cap: bool = False) -> float:
    """ε = min_λ (J·α(λ) + ln(1/δ))/λ over integer orders (Abadi et al. 2016, Thm 2; Park et al. 2016,
    eqs. 10-12), α(λ) = log max(E1, E2) for the subsampled Gaussian.

    ``code_cap=True`` restricts λ to ``1..⌊σ² ln(1/(qσ))⌋`` as the authors' code does (the range of
    Abadi et al.'s asymptotic bound, their Lemma 3, stated for σ ≥ 1 and q < 1/(16σ); it gives a larger, looser ε).
    Outside that stated range (σ < 1, q ≥ 1/(16σ), or a cap below 1) it raises :class:`DPTopicError`: the figure
    is the paper's, and the paper's range does not cover those settings. Otherwise ``λ ≤ max_order``.
    """
    q, s = float(sampling_rate), float(noise_multiplier)
    if code_cap:
        in_range = s >= 1 and q * s < 1 / 16     # Abadi et al. 2016, Lemma 3: sigma >= 1, q < 1/(16 sigma)
        top = int(math.floor(s * s * math.log(1.0 / (q * s)))) if in_range else 0
        if top < 1:
            raise DPTopicError(f"the authors' order cap floor(sigma^2 ln(1/(q sigma))) comes from Abadi et al. 2016,"
                               f" Lemma 3, stated for sigma >= 1 and q < 1/(16 sigma), and sigma={s:g}, q={q:g} lie"
                               " outside it (or give a cap < 1); use code_cap=False.")
    else:
        top = int(max_order)
    return _moments_epsilon(s, q, int(steps), float(delta), top)


@functools.lru_cache(maxsize=256)      # a pure function of public numbers, asked again by each DPSVI report
def _moments_epsilon(s: float, q: float, steps: int, delta: float, top: int) -> float:
    best = math.inf
    for lam in range(1, top + 1):
        alpha = max(_log_e1(lam, q, s), _log_e2(lam, q, s)) if q < 1 else lam * (lam + 1) / (2 * s * s)
        best = min(best, (steps * alpha + math.log(1.0 / delta)) / lam)
    return best


# ------------------------------------------------------------------ strong composition
def strong_composition_epsilon(epsilon_step: float, sampling_rate: float, steps: int, delta_slack: float) -> float:
    """Total ε of ``steps`` ε_step-DP steps, each amplified by Poisson subsampling at rate q
    (ε' = ln(1 + q(e^ε_step − 1))), under strong composition (Dwork & Roth 2014, Thm 3.20):
    ``sqrt(2J ln(1/δ~))·ε' + J·ε'(e^ε' − 1)``."""
    e = math.log1p(sampling_rate * math.expm1(epsilon_step))
    return math.sqrt(2 * steps * math.log(1 / delta_slack)) * e + steps * e * math.expm1(e)


def strong_composition_noise(target_epsilon: float, sampling_rate: float, steps: int, delta: float = 1e-4,
                             delta_step: float = 1e-6) -> dict:
    """The paper's baseline calibration: the per-step ε_it with which strong composition reaches
    ``target_epsilon`` at total ``delta`` (slack δ~ = δ − J·q·δ_it), and the noise multiplier of
    the classic Gaussian mechanism at (ε_it, δ_it): ``sqrt(2 ln(1.25/δ_it))/ε_it``.
    ``classic_valid`` is False when ε_it ≥ 1, outside that mechanism's theorem (Dwork & Roth Thm A.1)."""
    slack = delta - steps * sampling_rate * delta_step
    if slack <= 0:
        raise DPTopicError(f"delta={delta:g} is too small for {steps} steps at delta_step={delta_step:g}:"
                           f" give delta > {steps * sampling_rate * delta_step:g} or a smaller delta_step.")
    lo, hi = 1e-9, 1.0
    while strong_composition_epsilon(hi, sampling_rate, steps, slack) < target_epsilon:
        hi *= 2
        if hi > 1e6:
            raise DPTopicError(f"strong composition cannot reach epsilon={target_epsilon:g}.")
    eps_it = optimize.brentq(lambda e: strong_composition_epsilon(e, sampling_rate, steps, slack) - target_epsilon,
                             lo, hi, xtol=1e-12)
    # brentq stops within xtol of the root, on either side: step to the side whose total is within the target
    while strong_composition_epsilon(eps_it, sampling_rate, steps, slack) > target_epsilon and eps_it > 0:
        eps_it = max(eps_it - 1e-12 * max(1.0, eps_it), 0.0)
    return {"epsilon_step": eps_it, "delta_step": delta_step, "delta_slack": slack,
            "noise_multiplier": math.sqrt(2 * math.log(1.25 / delta_step)) / eps_it,
            "classic_valid": eps_it < 1}


def strong_composition_for_sigma(noise_multiplier: float, sampling_rate: float, steps: int, delta: float = 1e-4,
                                 delta_step: float = 1e-6) -> float:
    """The total ε that the strong-composition analysis certifies for noise multiplier σ: per step
    ε_it = sqrt(2 ln(1.25/δ_it))/σ (classic Gaussian), amplified and composed as above.

    The classic calibration is a theorem only for ε_it < 1 (Dwork & Roth 2014, Thm A.1); beyond it, a step of
    noise σ is (ε_it, δ_it)-DP only if the exact Gaussian curve says so (Balle & Wang 2018, Thm 8), which fails for
    little noise (σ = 0.5 at δ_it = 1e-6: ε_it = 10.6, where the step's true δ is 2.6e-6). Where the step is not
    (ε_it, δ_it)-DP the analysis certifies nothing and this returns ∞ rather than a figure that holds at no δ."""
    slack = delta - steps * sampling_rate * delta_step
    if slack <= 0:
        return math.inf
    eps_it = math.sqrt(2 * math.log(1.25 / delta_step)) / noise_multiplier
    if eps_it >= 1 and _gaussian_delta(noise_multiplier, eps_it) > delta_step:
        return math.inf
    return strong_composition_epsilon(eps_it, sampling_rate, steps, slack)


def _gaussian_delta(noise_multiplier: float, epsilon: float) -> float:
    """The exact δ(ε) of the Gaussian mechanism with L2 sensitivity 1 and noise std ``noise_multiplier``
    (Balle & Wang 2018, Thm 8): ``Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ)``, the second term in log space."""
    from scipy.stats import norm  # scipy.stats takes about a second to import

    s = float(noise_multiplier)
    a, b = 0.5 / s - epsilon * s, -0.5 / s - epsilon * s
    return float(norm.cdf(a) - math.exp(min(epsilon + float(norm.logcdf(b)), 700.0)))


# ------------------------------------------------------------------ calibration
def unreachable_budget(epsilon: float, delta: float, floor: float, top: float, what: str,
                       more: str = "") -> ParameterError:
    """The refusal of a budget ``(epsilon, delta)`` whose releases (``what``) need a noise multiplier above ``top``:
    ``floor`` is the smallest epsilon they reach at ``delta`` (``inf``: none, and the delta is what to change);
    ``more``: the other ways to reach it (", or fewer iterations")."""
    head = "budget unreachable: {epsilon=:g} at {delta=:g} needs a noise multiplier above {top:g} for {what}; "
    if math.isinf(floor):   # no noise reaches a finite epsilon at this delta: the delta is what to change
        return ParameterError(head + "the smallest reachable epsilon is inf (give a larger {epsilon} or {delta}"
                              + more + ").", "delta", delta, values={"epsilon": epsilon}, top=top, what=what,
                              key="accounting.gaussian.unreachable_budget")
    return ParameterError(head + "the smallest reachable epsilon is {floor:.4g} (give a larger {epsilon} or {delta}"
                          + more + ").", "epsilon", epsilon, values={"delta": delta}, top=top, what=what, floor=floor)


@functools.lru_cache(maxsize=256)       # a pure function of its numbers: the same budget is calibrated once
def calibrate_noise_multiplier(epsilon: float, delta: float, sampling_rate: float, steps: int,
                               max_noise_multiplier: float = MAX_NOISE_MULTIPLIER) -> float:
    """Smallest σ whose ``steps``-fold subsampled Gaussian is (ε, δ)-DP by PLD; never overshoots.

    dp-accounting's ``calibrate_dp_mechanism`` finds σ; the result is then checked with the
    same PLD the ledger reports and nudged up until that check passes.
    """
    if not (isinstance(epsilon, (int, float)) and epsilon > 0 and math.isfinite(epsilon)):
        raise DPTopicError(f"invalid epsilon={epsilon!r}: must be a finite number > 0.")
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise DPTopicError(f"invalid delta={delta!r}: must be a number in (0, 1).")
    floor = pld_epsilon(max_noise_multiplier, sampling_rate, steps, delta)
    if floor > epsilon:
        what = ("one release" if steps == 1 and sampling_rate >= 1 else
                f"{steps} step{'s' if steps != 1 else ''} at sampling rate {sampling_rate:g}")
        raise unreachable_budget(epsilon, delta, floor, max_noise_multiplier, what,
                                 "" if steps == 1 and sampling_rate >= 1 else ", or fewer iterations"
                                 if sampling_rate >= 1 else ", fewer epochs or a smaller sampling rate")

    coarse = GAUSSIAN_DISCRETIZATION

    def fresh():
        return pld_privacy_accountant.PLDAccountant(value_discretization_interval=coarse)

    def eps(s):
        return pld_epsilon(s, sampling_rate, steps, delta, coarse)

    lo, hi = 1.0, 1.0
    while lo > MIN_NOISE_MULTIPLIER and eps(lo) <= epsilon:
        lo = max(lo / 2, MIN_NOISE_MULTIPLIER)
    if lo == MIN_NOISE_MULTIPLIER and eps(lo) <= epsilon:
        sigma = lo  # the budget allows less noise than we ever use (still checked as the ledger will, below)
    else:
        while eps(hi) > epsilon:
            lo, hi = hi, min(hi * 2, max_noise_multiplier)
        sigma = mechanism_calibration.calibrate_dp_mechanism(fresh, lambda s: svi_dp_event(s, sampling_rate, steps),
                                                             epsilon, delta,
                                                             mechanism_calibration.ExplicitBracketInterval(lo, hi),
                                                             tol=1e-3 * lo)
        sigma = float(min(max(sigma, lo), max_noise_multiplier))
    # the check that counts is the one the ledger makes when the run spends: its own PLD composition, with the
    # ledger's budget tolerance (dp-accounting's accountant and the ledger's self-composition differ in the last digits)
    def spent(s):
        return max(pld_epsilon(s, sampling_rate, steps, delta),
                   compose_pld([(SubsampledGaussianEvent(s, sampling_rate), steps)], delta))

    while spent(sigma) > epsilon and sigma < max_noise_multiplier:
        sigma = min(sigma * 1.001 + 1e-4, max_noise_multiplier)
    if spent(sigma) > epsilon:      # the safe side or nothing: never a noise whose epsilon exceeds the budget
        raise DPTopicError(f"budget unreachable: epsilon={epsilon:g} at delta={delta:g} needs a noise multiplier above"
                           f" {max_noise_multiplier:g} by the ledger's accountant (it gives {spent(sigma):.6g} there);"
                           " give a larger epsilon or delta.")
    return sigma


def calibrate_gaussian_pair(epsilon: float, delta: float, ratio: float) -> tuple[float, float]:
    """Noise multipliers ``(ratio * s, s)`` of two full-batch Gaussian releases (L2 sensitivity 1 each)
    whose composition is (ε, δ)-DP, ``s`` as small as the ledger's PLD allows.

    Two Gaussian mechanisms with multipliers σ₁, σ₂ compose exactly to one with
    ``(σ₁⁻² + σ₂⁻²)^(-1/2)`` (Dong, Roth & Su 2022, Cor. 3.3), which gives the start; the pair is then
    checked with the ledger's own PLD composition and nudged up until that check passes.
    """
    if not (isinstance(ratio, (int, float)) and math.isfinite(ratio) and ratio > 0):
        raise DPTopicError(f"invalid ratio={ratio!r}: must be a finite number > 0.")
    single = calibrate_noise_multiplier(epsilon, delta, 1.0, 1)
    s = single * math.sqrt(1.0 + 1.0 / ratio ** 2)
    def spent(s2):
        return compose_pld([(SubsampledGaussianEvent(ratio * s2, 1.0), 1), (SubsampledGaussianEvent(s2, 1.0), 1)],
                           delta)

    while spent(s) > epsilon and s < MAX_NOISE_MULTIPLIER:    # the safe side: never above the budget, not even
        s = min(s * 1.001 + 1e-4, MAX_NOISE_MULTIPLIER)        # by floating-point noise
    if spent(s) > epsilon:
        raise DPTopicError(f"budget unreachable: epsilon={epsilon:g} at delta={delta:g} needs noise multipliers above"
                           f" {MAX_NOISE_MULTIPLIER:g} for the two releases; give a larger epsilon or delta.")
    return ratio * s, s
