"""Accounting of the Skellam mechanism on integer vectors (the secure sum's distributed noise).

The Skellam distribution ``Sk(mu)`` is the difference of two independent Poisson(mu) variables: integer-valued,
symmetric, variance ``2 mu``, and closed under sums (``Sk(mu1) + Sk(mu2) = Sk(mu1 + mu2)``), so contributors who each
add ``Sk(mu / m)`` to every entry of their vector give the sum of any ``m`` of them exactly ``Sk(mu)`` noise.

Renyi DP (Agarwal, Kairouz & Liu 2021, "The Skellam mechanism for differentially private federated learning",
Thm 3.5): adding ``Sk(mu)`` to every entry of an integer vector whose change between neighbours has L1 norm at most
``l1`` and L2 norm at most ``l2`` is ``(alpha, eps(alpha))``-RDP for every integer ``alpha > 1`` with

    eps(alpha) = alpha l2^2 / (4 mu) + min(((2 alpha - 1) l2^2 + 6 l1) / (16 mu^2), 3 l1 / (4 mu)).

The first term is the Gaussian mechanism's at the same variance; the second vanishes as ``mu`` grows.
``tests/accounting/test_skellam.py`` checks the bound against the exact Renyi divergence of shifted Skellam
distributions (a reference computation from the probability mass functions).

Randomized rounding (each entry rounded up with probability its fractional part) inflates the L2 norm: with the
conditional rounding of Kairouz, Liu & Steinke 2021 (Sec. 4.1; re-draw until the bound holds) a vector of norm at
most ``c`` in dimension ``d`` rounds to one of squared norm at most ``c^2 + d/4 + sqrt(2 log(1/beta)) (c +
sqrt(d)/2)``, drawn again with probability at most ``beta``; the rounded vector's L1 norm is at most ``min(sqrt(d)
l2, l2^2)`` (every non-zero entry is an integer of size at least 1). :func:`rounded_norms` gives both.

Modular wrap-around: the server sums modulo ``2^bits``; the sum is read back correctly unless the noise carries an
entry past ``2^(bits-1)`` beyond the signal's range. :func:`wrap_probability` bounds that by the Chernoff bound of
the Skellam tail (a union over the entries), and the secure sum's delta includes it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import DPTopicError

SKELLAM_ORDERS = np.concatenate([np.arange(2, 64, 1.0), np.arange(64, 257, 4.0), np.arange(260, 1025, 16.0)])
"""Integer orders at which the Skellam bound is evaluated (the theorem is stated for integer orders)."""

THEOREM = ("Skellam mechanism (Agarwal, Kairouz & Liu 2021, Thm 3.5): Renyi DP at integer orders from the L1 and L2"
           " sensitivity of the quantized statistic (after the conditional randomized rounding of Kairouz, Liu &"
           " Steinke 2021), converted to (epsilon, delta) by dp_accounting's compute_epsilon (Mironov 2017;"
           " Canonne, Kamath & Steinke 2020); delta includes the probability of a modular wrap-around")


def skellam_rdp(orders, mu: float, l1: float, l2: float) -> np.ndarray:
    """The Renyi DP bound of ``Sk(mu)`` noise on an integer vector of L1 / L2 sensitivity ``l1`` / ``l2`` at each of
    ``orders`` (integers > 1; module note)."""
    a = np.asarray(orders, dtype=float)
    if np.any(a <= 1) or np.any(a != np.round(a)):
        raise DPTopicError("the Skellam RDP bound holds at integer orders above 1.")
    if not (mu > 0 and l2 >= 0 and l1 >= 0):
        raise DPTopicError(f"invalid Skellam parameters mu={mu!r}, l1={l1!r}, l2={l2!r}: mu > 0, norms >= 0.")
    second = np.minimum(((2 * a - 1) * l2 ** 2 + 6 * l1) / (16 * mu ** 2), 3 * l1 / (4 * mu))
    return a * l2 ** 2 / (4 * mu) + second


def rounded_norms(scale: float, dim: int, beta: float = 1e-9) -> tuple[float, float]:
    """``(l2, l1)``: the norms a vector of L2 norm at most ``scale`` has after conditional randomized rounding in
    dimension ``dim`` with re-draw probability ``beta`` (module note)."""
    c, d = float(scale), float(dim)
    l2 = math.sqrt(c * c + d / 4 + math.sqrt(2 * math.log(1 / beta)) * (c + math.sqrt(d) / 2))
    l2 = min(l2, c + math.sqrt(d))          # every entry moves by less than 1
    return l2, min(math.sqrt(d) * l2, l2 * l2)


def skellam_log_tail(mu: float, t: float) -> float:
    """log of the Chernoff bound on P(Sk(mu) >= t), t > 0: ``min_lambda 2 mu (cosh lambda - 1) - lambda t``."""
    if t <= 0:
        return 0.0
    lam = math.asinh(t / (2 * mu))
    return min(0.0, 2 * mu * (math.cosh(lam) - 1) - lam * t)


def wrap_probability(mu_max: float, signal_max: float, dim: int, bits: int) -> float:
    """A bound on the probability that the sum of ``dim`` entries, each a signal in ``[0, signal_max]`` plus at most
    ``Sk(mu_max)`` noise, leaves ``(-2^(bits-1), 2^(bits-1))`` anywhere (a union over the entries and both
    tails)."""
    t = 2.0 ** (bits - 1) - float(signal_max) - 1
    if t <= 0:
        return 1.0
    return float(min(1.0, 2 * dim * math.exp(skellam_log_tail(mu_max, t))))


def rdp_to_epsilon(rdp, delta: float, orders=SKELLAM_ORDERS) -> float:
    """epsilon(delta) from an RDP curve: ``min_alpha rdp(alpha) + log((alpha - 1) / alpha) - (log delta + log
    alpha) / (alpha - 1)`` (Canonne, Kamath & Steinke 2020, Prop. 12; the conversion dp_accounting's
    ``compute_epsilon`` makes), never below 0."""
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    with np.errstate(invalid="ignore"):
        eps = r + np.log1p(-1.0 / a) - (math.log(delta) + np.log(a)) / (a - 1)
    eps = eps[np.isfinite(eps)]
    return float(max(0.0, eps.min())) if len(eps) else math.inf


@dataclass(frozen=True)
class SkellamRelease:
    """One released integer vector: ``Sk(mu)`` on every entry of a statistic scaled by ``scale`` (L2 norm at most
    ``scale`` per person before rounding) in ``dim`` entries. A ledger event bounded by Renyi DP only (no PLD: the
    ledger's PLD figure is then infinite and its RDP figure is the guarantee)."""

    mu: float
    scale: float
    dim: int
    label: str = "Skellam release"
    relation: str = "user-level add/remove"

    approximate = True      # no pure epsilon: basic composition charges it epsilon_at(delta / k)
    has_pld = False

    def norms(self, beta: float = 1e-9) -> tuple[float, float]:
        return rounded_norms(self.scale, self.dim, beta)

    @property
    def epsilon(self) -> float:
        return math.inf

    def rdp(self, orders=SKELLAM_ORDERS) -> np.ndarray:
        """The bound at the integer orders of ``orders``; infinite (valid, unused) at the others."""
        a = np.asarray(orders, dtype=float)
        out = np.full(a.shape, np.inf)
        whole = (a == np.round(a)) & (a >= 2)
        l2, l1 = self.norms()
        out[whole] = skellam_rdp(a[whole], self.mu, l1, l2)
        return out

    def epsilon_at(self, delta: float, discretization: float = 0.0) -> float:
        return rdp_to_epsilon(self.rdp(), delta)

    def pld(self, discretization: float = 0.0):
        raise DPTopicError("the Skellam mechanism is accounted by Renyi DP only (no privacy loss distribution).")

    def describe(self) -> dict:
        l2, l1 = self.norms()
        return {"type": "skellam", "label": self.label, "mu": self.mu, "scale": self.scale, "dim": int(self.dim),
                "l2_sensitivity_rounded": l2, "l1_sensitivity_rounded": l1,
                "norm_inflation": l2 / self.scale, "gaussian_equivalent_noise_multiplier": math.sqrt(2 * self.mu) / l2,
                "relation": self.relation}


def skellam_epsilon(releases, delta: float) -> float:
    """epsilon(delta) of the releases composed (their RDP curves add)."""
    return rdp_to_epsilon(sum(r.rdp() for r in releases), delta)


def calibrate_skellam(epsilon: float, delta: float, scales, dims, ratios) -> list[float]:
    """The smallest ``mu`` (bisection on a common factor) such that releases ``j`` with ``Sk(mu * ratios[j]^2)`` noise,
    statistic scale ``scales[j]`` and dimension ``dims[j]`` compose to ``epsilon`` at ``delta``; returns each
    release's mu. ``ratios`` sets each release's noise standard deviation relative to the others' (in units of its
    own scale), as the central trainer's ranking and co-occurrence releases."""
    if not (epsilon > 0 and 0 < delta < 1):
        raise DPTopicError(f"invalid epsilon={epsilon!r} / delta={delta!r}: epsilon > 0, 0 < delta < 1.")

    def eps_at(s):      # s: the noise std in units of the scale, for ratio 1
        rel = [SkellamRelease((s * r * c) ** 2 / 2, c, d) for c, d, r in zip(scales, dims, ratios)]
        return skellam_epsilon(rel, delta)

    lo, hi = 1e-3, 1.0
    while eps_at(hi) > epsilon:
        hi *= 2
        if hi > 1e6:
            raise DPTopicError(f"epsilon={epsilon:g} at delta={delta:g} needs more noise than the secure sum can carry.")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if eps_at(mid) <= epsilon else (mid, hi)
    return [(hi * r * c) ** 2 / 2 for c, r in zip(scales, ratios)]
