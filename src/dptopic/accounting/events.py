"""Privacy events: descriptions of what one mechanism spent.

Events describe; accountants compose (the ``dp_accounting`` split). Each event
knows its pure-ε cost (for basic composition, Dwork & Roth Thm 3.16), its privacy
loss distribution (PLD, for tight composition) and its Rényi-DP curve (RDP, a
cross-check).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ._lazy import pld_common, pldlib

from ..errors import DPTopicError

DISCRETIZATION = 1e-4

EPSILON_MAX = 500.0
"""Largest per-event epsilon the events accept: beyond it ``exp(eps)`` overflows in the PLD/RDP
computations, and a step that loose protects nothing anyway."""


def _check_event_eps(eps, what: str) -> None:
    from .._validation import Real, validate_value

    validate_value(what, eps, [Real(0, EPSILON_MAX)])


@dataclass(frozen=True)
class LaplaceEvent:
    """Laplace noise of scale ``scale`` added independently to every cell of a released array.

    ``changes`` lists the absolute change of each cell that differs between the worst
    neighbouring pair (word replacement moves one token: ``(1, 1)``), so the L1
    sensitivity is ``sum(changes)`` and ε = L1 / scale. ``discrete`` marks the
    two-sided geometric (discrete Laplace) variant on integers.
    """

    scale: float
    changes: tuple = (1,)
    discrete: bool = False
    label: str = "Laplace"
    relation: str = "word-level replacement"

    def __post_init__(self):
        from .._validation import Int, Real, validate_value

        validate_value("scale", self.scale, [Real(0, None, "neither")])
        if not isinstance(self.changes, tuple) or not self.changes:
            raise DPTopicError(f"invalid changes={self.changes!r}: must be a non-empty tuple of cell changes.")
        for c in self.changes:
            validate_value("changes", c, [Int(1, 10**6)] if self.discrete else [Real(0, 1e6, "right")])
        _check_event_eps(self.epsilon, "epsilon (sensitivity/scale)")

    @property
    def l1_sensitivity(self) -> float:
        return float(sum(self.changes))

    @property
    def epsilon(self) -> float:
        return self.l1_sensitivity / self.scale

    def pld(self, discretization: float = DISCRETIZATION):
        plds = []
        try:
            for c in self.changes:
                if self.discrete:
                    plds.append(pldlib.from_discrete_laplace_mechanism(
                        1.0 / self.scale, sensitivity=int(c), value_discretization_interval=discretization))
                else:
                    plds.append(pldlib.from_laplace_mechanism(
                        self.scale, sensitivity=c, value_discretization_interval=discretization))
            out = plds[0]
            for q in plds[1:]:
                out = out.compose(q)
        except OverflowError:  # a composition so long that its grid step (about basic eps / 5e6) overflows exp()
            raise DPTopicError(f"the composed epsilon is too large to compute (a Laplace event of epsilon"
                               f" {self.epsilon:g} on a privacy-loss grid of step {discretization:g}): give fewer"
                               f" events or a smaller epsilon.") from None
        return out

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """Rényi divergence of every order in ``orders``; coordinates compose additively."""
        a = np.asarray(orders, dtype=float)
        total = np.zeros_like(a)
        for c in self.changes:
            total += (_discrete_laplace_rdp(a, 1.0 / self.scale, int(c)) if self.discrete
                      else _laplace_rdp(a, c / self.scale))
        return total

    def describe(self) -> dict:
        return {"type": "discrete_laplace" if self.discrete else "laplace", "label": self.label,
                "scale": self.scale, "changes": list(self.changes), "l1_sensitivity": self.l1_sensitivity,
                "epsilon": self.epsilon, "relation": self.relation}


@dataclass(frozen=True)
class PureDPEvent:
    """A step that is ε-DP by a theorem rather than by added noise (e.g. an exponential
    mechanism such as HDP-LDA's clipped sampling step, ε_I = 2·log(C/β + 1))."""

    eps: float
    label: str = "pure epsilon-DP step"
    theorem: str = ""
    relation: str = "word-level replacement"

    def __post_init__(self):
        _check_event_eps(self.eps, "eps")

    @property
    def epsilon(self) -> float:
        return self.eps

    def pld(self, discretization: float = DISCRETIZATION):
        return pldlib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(self.eps, 0.0),
                                              value_discretization_interval=discretization)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        # Every ε-DP mechanism is a post-processing of binary randomized response with
        # p = e^ε/(1+e^ε) (Kairouz, Oh & Viswanath 2015), whose Rényi divergence is exact.
        e = self.eps
        lp, lq = -np.log1p(np.exp(-e)), -np.log1p(np.exp(e))  # log p, log(1-p)
        a = orders
        return np.logaddexp(a * lp + (1 - a) * lq, a * lq + (1 - a) * lp) / (a - 1)

    def describe(self) -> dict:
        return {"type": "pure_dp", "label": self.label, "epsilon": self.eps, "theorem": self.theorem,
                "relation": self.relation}


def _laplace_rdp(a: np.ndarray, lam: float) -> np.ndarray:
    """Laplace mechanism with ratio ``lam = sensitivity/scale`` (Mironov 2017, Table II)."""
    return (np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * lam,
                         np.log((a - 1) / (2 * a - 1)) - a * lam)) / (a - 1)


def _discrete_laplace_rdp(a: np.ndarray, t: float, c: int) -> np.ndarray:
    """Exact Rényi divergence of order ``a`` between the discrete Laplace P(x) ∝ exp(−t|x|) and its
    shift by the integer ``c`` (summed in closed form over x ≤ 0, x ≥ c and the c − 1 points between).

    For c = 1 it is ``[log(e^{(a−1)t} + e^{−a t}) − log(1 + e^{−t})] / (a − 1)``. It lies above the
    continuous Laplace value at the same ratio: the discrete mechanism loses more at equal ε.
    """
    if c == 0:
        return np.zeros_like(a)
    c = abs(c)
    log1pr = np.log1p(np.exp(-t))                        # log(1 + r), r = e^{-t}
    terms = [(a - 1) * t * c - log1pr,                   # x <= 0: log-ratio t·c, mass 1/(1+r)
             -t * c - (a - 1) * t * c - log1pr]          # x >= c: log-ratio −t·c, mass r^c/(1+r)
    log_z = np.log(-np.expm1(-t)) - log1pr               # normaliser (1 − r)/(1 + r)
    for x in range(1, c):                                # 0 < x < c: log-ratio t(c − 2x)
        terms.append(log_z - t * x + (a - 1) * t * (c - 2 * x))
    return np.logaddexp.reduce(np.broadcast_arrays(*terms), axis=0) / (a - 1)


@dataclass(frozen=True)
class ApproxDPEvent:
    """A step that is (ε, δ)-DP by a theorem rather than by noise this library adds and accounts for
    itself: DP set union (Gopi et al. 2020, Thm 5.2/5.3), the FedLDA poster's (ε, 2δ) claim.

    Basic composition adds both ε and δ (the ledger reports ``delta_basic``); the PLD is
    dp-accounting's worst case for (ε, δ)-DP; no Rényi divergence is bounded when δ > 0, so
    its RDP curve is infinite (that route does not apply).
    """

    eps: float
    delta: float
    label: str = "(epsilon, delta)-DP step"
    theorem: str = ""
    relation: str = "word-level replacement"
    unit: str = "word"

    def __post_init__(self):
        from .._validation import Real, validate_value

        _check_event_eps(self.eps, "eps")
        validate_value("delta", self.delta, [Real(0, 1, "left")])

    @property
    def epsilon(self) -> float:
        return self.eps

    @property
    def delta_event(self) -> float:
        return self.delta

    def pld(self, discretization: float = DISCRETIZATION):
        return pldlib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(self.eps, self.delta),
                                              value_discretization_interval=discretization)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return np.full(np.shape(orders), np.inf)

    def describe(self) -> dict:
        return {"type": "approximate_dp", "label": self.label, "epsilon": self.eps, "delta": self.delta,
                "theorem": self.theorem, "relation": self.relation, "unit": self.unit}


RDP_ORDERS = np.concatenate([np.linspace(1.01, 1.99, 50), np.arange(2, 64, 0.5), np.arange(64, 513, 8)])
