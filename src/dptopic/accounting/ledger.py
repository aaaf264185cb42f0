"""The privacy ledger: every event a training run spends, composed on demand."""
from __future__ import annotations

import warnings
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
from dp_accounting.rdp import rdp_privacy_accountant

from ..errors import BudgetExceededError, DPTopicError
from .events import DISCRETIZATION, RDP_ORDERS


WORD_RELATION = ("word-level replacement: D' is D with one token's word replaced by another word"
                 " (Zhao et al. Sec. IV-B); topic assignments of the other tokens are conditioned on")


def non_private_report(reason: str, unit: str = "word", relation: str = WORD_RELATION, **extra) -> dict:
    """The report of a run that earns no DP guarantee: the same fields as :meth:`PrivacyLedger.report`,
    with epsilon = inf, no delta and no theorem, and the reason why."""
    return {"private": False, "epsilon": float("inf"), "delta": None, "unit": unit,
            "neighbouring_relation": relation, "theorem": "none: no differential privacy guarantee is claimed",
            "reason": reason, **extra}


def _check_delta(delta):
    if not (isinstance(delta, (int, float)) and 0 < delta < 1):
        raise DPTopicError(f"invalid delta={delta!r}: must be a number in (0, 1).")


def compose_pld(groups, delta: float, discretization: float = DISCRETIZATION) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return _compose_pld(groups, delta, discretization)


def _compose_pld(groups, delta, discretization):
    """Tight ε(δ) of the composition of ``[(event, count), ...]`` via privacy loss distributions."""
    total = None
    for ev, n in groups:
        p = ev.pld(discretization)
        p = p.self_compose(n) if n > 1 else p
        total = p if total is None else total.compose(p)
    return float(total.get_epsilon_for_delta(delta)) if total is not None else 0.0


def compose_rdp(groups, delta: float) -> float:
    """ε(δ) from Rényi DP (Mironov 2017), converted with dp_accounting's ``compute_epsilon``."""
    rdp = np.zeros_like(RDP_ORDERS)
    for ev, n in groups:
        rdp += n * ev.rdp(RDP_ORDERS)
    eps, _ = rdp_privacy_accountant.compute_epsilon(RDP_ORDERS, rdp, delta)
    return float(eps)


@dataclass
class PrivacyLedger:
    """Records events; reports basic and tight composition; optionally enforces a budget.

    Parameters
    ----------
    unit : the privacy unit ("word", "document", "user").
    relation : the neighbouring relation, in words.
    theorem : the theorem the per-step guarantees rest on.
    budget : optional ``(epsilon, delta)``. ``spend`` refuses an event that would take
        the run past it (basic composition when delta is 0, else tight PLD).
    """

    unit: str = "word"
    relation: str = WORD_RELATION
    theorem: str = ""
    budget: tuple | None = None
    discretization: float = DISCRETIZATION
    _groups: "OrderedDict" = field(default_factory=OrderedDict, repr=False)
    _reserved: dict = field(default_factory=dict, repr=False)

    def _check_budget(self, extra) -> None:
        if self.budget is not None:
            eps_b, delta_b = self.budget
            trial = list(self.groups()) + list(extra)
            basic = sum(e.epsilon * n for e, n in trial)
            if basic > eps_b * (1 + 1e-12):
                spent = basic if delta_b == 0 else compose_pld(self._merge(trial), delta_b)
                if spent > eps_b * (1 + 1e-9):
                    raise BudgetExceededError(
                        f"privacy budget exceeded: this step would bring epsilon to {spent:.4g} > budget {eps_b:g}"
                        f" (delta={delta_b:g}); raise the budget or run fewer iterations.")

    def reserve(self, plan) -> None:
        """Check a whole plan ``[(event, count), ...]`` against the budget before spending any of it.

        Spending within a checked reservation needs no recomputation (a prefix of a
        plan never costs more than the plan); spending beyond it is checked again.
        """
        self._check_budget(plan)
        for e, n in plan:
            self._reserved[e] = self._reserved.get(e, 0) + n

    def spend(self, event, count: int = 1) -> None:
        """Record ``count`` uses of ``event``; refuse if that would exceed the budget."""
        if self._groups.get(event, 0) + count > self._reserved.get(event, 0):
            self._check_budget([(event, count)])
        self._groups[event] = self._groups.get(event, 0) + count

    @staticmethod
    def _merge(pairs):
        d = OrderedDict()
        for e, n in pairs:
            d[e] = d.get(e, 0) + n
        return list(d.items())

    def groups(self):
        return list(self._groups.items())

    @property
    def n_events(self) -> int:
        return sum(self._groups.values())

    def epsilon_basic(self) -> float:
        return float(sum(e.epsilon * n for e, n in self._groups.items()))

    def epsilon_tight(self, delta: float) -> float:
        _check_delta(delta)
        return compose_pld(self.groups(), delta, self.discretization)

    def delta_basic(self) -> float:
        """Sum of the per-event deltas of approximate-DP events (0 for pure and noise events)."""
        return float(sum(getattr(e, "delta_event", 0.0) * n for e, n in self._groups.items()))

    def epsilon_rdp(self, delta: float) -> float:
        _check_delta(delta)
        return compose_rdp(self.groups(), delta)

    def report(self, delta: float = 1e-5) -> dict:
        """A JSON-able privacy report: ε by basic composition, ε(δ) by PLD and by RDP."""
        _check_delta(delta)
        rep = {
            "private": True,
            "unit": self.unit,
            "neighbouring_relation": self.relation,
            "theorem": self.theorem,
            "delta": delta,
            "epsilon_basic": self.epsilon_basic(),
            "epsilon_pld": self.epsilon_tight(delta),
            "epsilon_rdp": self.epsilon_rdp(delta),
            "accounting": {
                "basic": "sum of per-event pure epsilons (basic sequential composition, Dwork & Roth 2014 Thm 3.16); delta = 0",
                "pld": "privacy loss distributions composed with dp-accounting (Koskela et al. 2020; Doroshenko et al. 2022), pessimistic discretisation "
                       f"{self.discretization:g}",
                "rdp": "Renyi DP (Mironov 2017) converted by dp_accounting.rdp.compute_epsilon",
            },
            "events": [dict(ev.describe(), count=n) for ev, n in self._groups.items()],
        }
        d_basic = self.delta_basic()
        if d_basic > 0:  # approximate-DP events: basic composition adds their deltas too
            rep["delta_basic"] = d_basic
            rep["accounting"]["basic"] = ("sum of per-event epsilons and of per-event deltas (basic sequential"
                                          " composition, Dwork & Roth 2014 Thm 3.16)")
            rep["accounting"]["rdp"] = "not finite: the run contains (epsilon, delta>0) events"
        return rep
