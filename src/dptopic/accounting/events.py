"""Privacy events: descriptions of what one mechanism spent.

Events describe; accountants compose (the ``dp_accounting`` split). Each event
knows its pure-ε cost (for basic composition, Dwork & Roth Thm 3.16), its privacy
loss distribution (PLD, for tight composition) and its Rényi-DP curve (RDP, a
cross-check).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pldlib

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
        return out

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        # Mironov (2017), Table II: Laplace with ratio b = scale/sensitivity; the (integer-valued)
        # discrete Laplace has the same divergence at integer shifts. Coordinates compose additively.
        total = np.zeros_like(orders, dtype=float)
        for c in self.changes:
            lam = c / self.scale
            a = orders
            total += (np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * lam,
                                   np.log((a - 1) / (2 * a - 1)) - a * lam)) / (a - 1)
        return total

    def describe(self) -> dict:
        return {"type": "discrete_laplace" if self.discrete else "laplace", "label": self.label,
                "scale": self.scale, "l1_sensitivity": self.l1_sensitivity, "epsilon": self.epsilon,
                "relation": self.relation}


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


RDP_ORDERS = np.concatenate([np.linspace(1.01, 1.99, 50), np.arange(2, 64, 0.5), np.arange(64, 513, 8)])
