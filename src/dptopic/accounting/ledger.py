"""The privacy ledger: every event a training run spends, composed on demand."""
from __future__ import annotations

import math
import threading
from collections import OrderedDict
from contextvars import ContextVar
from dataclasses import dataclass, field, is_dataclass

import numpy as np

from .._validation import Int, Real, validate_value
from ..errors import BudgetExceededError, DPTopicError
from ._lazy import rdp_privacy_accountant
from .bounds import MAX_COUNT
from .events import DISCRETIZATION, RDP_ORDERS, LaplaceEvent, PureDPEvent

WORD_RELATION = ("word-level replacement: D' is D with one token's word replaced by another word"
                 " (Zhao et al. Sec. IV-B); topic assignments of the other tokens are conditioned on")


def non_private_report(reason: str, unit: str = "word", relation: str = WORD_RELATION, **extra) -> dict:
    """The report of a run that earns no DP guarantee: the same fields as :meth:`PrivacyLedger.report`,
    with epsilon = inf, no delta and no theorem, and the reason why."""
    return {"private": False, "epsilon": float("inf"), "delta": None, "unit": unit,
            "neighbouring_relation": relation, "theorem": "none: no differential privacy guarantee is claimed",
            "reason": reason, **extra}


def _check_delta(delta) -> float:
    """A delta in (0, 1): Python or NumPy reals (``np.float32(1e-5)`` too); returned as a float."""
    return float(validate_value("delta", delta, [Real(0, 1, "neither")]))


def _check_event(event) -> None:
    if not isinstance(event, (LaplaceEvent, PureDPEvent)) and not all(
            callable(getattr(event, m, None)) for m in ("pld", "rdp", "describe")):
        raise DPTopicError(f"invalid event {type(event).__name__}: give a LaplaceEvent, a PureDPEvent or an event with"
                           f" epsilon, pld(), rdp() and describe().")


def _check_groups(groups) -> list:
    """``[(event, count), ...]`` with events and integer counts in [1, MAX_COUNT]."""
    try:
        groups = [(e, n) for e, n in groups]
    except (TypeError, ValueError):
        raise DPTopicError("invalid groups: give a list of (event, count) pairs.") from None
    for e, n in groups:
        _check_event(e)
        validate_value("count", n, [Int(1, MAX_COUNT)])
    return [(e, int(n)) for e, n in groups]


def compose_pld(groups, delta: float, discretization: float = DISCRETIZATION) -> float:
    """Tight ε(δ) of the composition of ``[(event, count), ...]`` via privacy loss distributions.

    The same composition asked again (a model's report rebuilt on load, on save, by its card) is answered from the
    composition memo (:func:`_memoized`)."""
    groups, delta = _check_groups(groups), _check_delta(delta)
    validate_value("discretization", discretization, [Real(1e-8, 1)])
    discretization = effective_discretization(groups, discretization)

    def compute():
        # numpy's floating-point state is per thread, where warnings.catch_warnings is not (a private fit inside an
        # audit's thread pool left an 'ignore' filter behind for the whole process)
        with np.errstate(all="ignore"):
            return _compose_pld(groups, delta, discretization)
    return _memoized("pld", groups, (delta, discretization), compute)


MEMO_SIZE = 512
"""Most compositions the memo keeps (the least recently asked is dropped first)."""
_MEMO: OrderedDict = OrderedDict()
_MEMO_LOCK = threading.Lock()


def _memoized(method: str, groups, numbers: tuple, compute):
    """``compute()``, remembered under ``(method, the events and their counts, numbers)`` in a small process-local
    memo (at most :data:`MEMO_SIZE` entries), so that a composition asked again (a model's report rebuilt by each
    fit, on load, on save and by its card) is not composed again. Only events that are frozen dataclasses are
    remembered: their fields (every parameter of the mechanism, its label and relation) are their whole
    description, so equal keys have equal privacy losses. The key holds public parameters only, the same the
    ledger and the report hold; a composition with any other event is computed every time."""
    key = _memo_key(method, groups, numbers)
    if key is not None:
        with _MEMO_LOCK:
            if key in _MEMO:
                _MEMO.move_to_end(key)
                return _MEMO[key]
    value = compute()
    if key is not None:
        with _MEMO_LOCK:
            _MEMO[key] = value
            while len(_MEMO) > MEMO_SIZE:
                _MEMO.popitem(last=False)
    return value


def _memo_key(method: str, groups, numbers: tuple):
    """The memo's key, or None where an event could change after it was composed (not a frozen dataclass)."""
    if not all(is_dataclass(e) and e.__dataclass_params__.frozen for e, _ in groups):
        return None
    key = (method, tuple((type(e), e, int(n)) for e, n in groups), tuple(float(x) for x in numbers))
    try:
        hash(key)
    except TypeError:
        return None
    return key


PLD_MAX_POINTS = 5e6


def effective_discretization(groups, discretization: float) -> float:
    """The one PLD grid step every event of the composition is built on: ``discretization``, raised to the
    coarsest grid any event accepts (``min_discretization``, e.g. the subsampled Gaussian's), and coarsened
    for very long compositions so the privacy-loss grid (about basic-ε / step points) stays under
    ``PLD_MAX_POINTS``. dp-accounting composes only PLDs on the same grid; a pessimistic coarser grid still
    gives an upper bound on ε(δ), only a looser one; without the cap a composition with basic ε of 10^4
    needs minutes and gigabytes."""
    step = max([float(discretization)] + [float(getattr(e, "min_discretization", 0.0)) for e, _ in groups])
    basic = sum(e.epsilon * n for e, n in groups)
    return max(step, basic / PLD_MAX_POINTS) if math.isfinite(basic) else step


def pure_basic_bound(groups) -> float:
    """Basic composition's ε when every event is pure (δ = 0): a bound valid at every δ. ``inf`` when
    some event carries its own δ > 0 (then basic composition bounds only (Σε, Σδ))."""
    if any(getattr(e, "delta_event", 0) for e, _ in groups):
        return math.inf
    return float(sum(e.epsilon * n for e, n in groups))


def _compose_pld(groups, delta, discretization):
    if any(not getattr(ev, "has_pld", True) for ev, _ in groups):   # an event bounded by Renyi DP only (Skellam)
        return math.inf
    total = None
    for ev, n in groups:
        p = ev.pld(discretization)
        p = p.self_compose(n) if n > 1 else p
        total = p if total is None else total.compose(p)
    if total is None:
        return 0.0
    # Never report more than basic composition of pure events, which holds for every delta: for a delta
    # below the PLD's truncated tail mass the pessimistic PLD can only say "inf".
    return float(min(total.get_epsilon_for_delta(delta), pure_basic_bound(groups)))


def compose_rdp(groups, delta: float) -> float:
    """ε(δ) from Rényi DP (Mironov 2017), converted with dp_accounting's ``compute_epsilon``."""
    groups, delta = _check_groups(groups), _check_delta(delta)
    return _memoized("rdp", groups, (delta,), lambda: _compose_rdp(groups, delta))


def _compose_rdp(groups, delta):
    rdp = np.zeros_like(RDP_ORDERS)
    for ev, n in groups:
        rdp += n * ev.rdp(RDP_ORDERS)
    eps, _ = rdp_privacy_accountant.compute_epsilon(RDP_ORDERS, rdp, delta)
    return float(min(eps, pure_basic_bound(groups)))  # basic composition of pure events bounds it too


def mechanism_key(event) -> tuple:
    """An event's mechanism (its description less its names): a release reserved under one label or relation and
    spent under another (a person's relation) is the same release."""
    return tuple(sorted((k, repr(v)) for k, v in event.describe().items()
                        if k not in ("label", "relation", "theorem", "unit")))


RESERVE_HOOK: ContextVar = ContextVar("dptopic_reserve_hook", default=None)
"""Called as ``hook(ledger, [(event, count), ...])`` when a fit's plan is reserved (before its first noise draw) and
when a ledger that reserved a plan spends beyond it (a replayed sweep): the models layer records the release on the
dataset ledger there (:mod:`dptopic.dataset_ledger`). None outside such a fit."""


@dataclass
class PrivacyLedger:
    """Records events; reports basic and tight composition; optionally enforces a budget.

    Parameters
    ----------
    unit : the privacy unit ("word", "document", "user").
    relation : the neighbouring relation, in words.
    theorem : the theorem the per-step guarantees rest on.
    budget : optional ``(epsilon, delta)``. ``spend`` refuses an event that would take
        the run past it (basic composition when delta is 0, else the smallest of the PLD and RDP figures, as
        :meth:`report` states the total).
    """

    unit: str = "word"
    relation: str = WORD_RELATION
    theorem: str = ""
    budget: tuple | None = None
    discretization: float = DISCRETIZATION
    _groups: "OrderedDict" = field(default_factory=OrderedDict, repr=False)
    _reserved: dict = field(default_factory=dict, repr=False)
    _hooked: dict = field(default_factory=dict, repr=False)       # reserved, by mechanism (RESERVE_HOOK)
    _hook_spent: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if self.budget is not None:
            if not isinstance(self.budget, (tuple, list)) or len(self.budget) != 2:
                raise DPTopicError(f"invalid budget={self.budget!r}: must be None or a pair (epsilon, delta).")
            eps_b = validate_value("budget epsilon", self.budget[0], [Real(0, None, "neither")])
            delta_b = validate_value("budget delta", self.budget[1], [Real(0, 1, "left")])
            self.budget = (float(eps_b), float(delta_b))

    def _check_budget(self, extra, spent: bool = True) -> None:
        if self.budget is not None:
            eps_b, delta_b = self.budget
            trial = (list(self.groups()) if spent else []) + list(extra)
            basic = sum(e.epsilon * n for e, n in trial)
            if basic > eps_b * (1 + 1e-12):
                spent = basic if delta_b == 0 else compose_pld(self._merge(trial), delta_b, self.discretization)
                if delta_b > 0 and spent > eps_b * (1 + 1e-9):
                    # the report's figure is the smallest valid bound (name_guarantee): RDP may be below the PLD
                    spent = min(spent, compose_rdp(self._merge(trial), delta_b))
                if spent > eps_b * (1 + 1e-9):
                    raise BudgetExceededError(
                        f"privacy budget exceeded: this step would bring epsilon to {spent:.4g} > budget {eps_b:g}"
                        f" (delta={delta_b:g}); raise the budget or run fewer iterations.")

    def reserve(self, plan) -> None:
        """Check a whole plan ``[(event, count), ...]`` against the budget before spending any of it.

        Spending within a checked reservation needs no recomputation (a prefix of a
        plan never costs more than the plan); spending beyond it is checked again.
        """
        plan = _check_groups(plan)
        self._check_budget(plan)
        hook = RESERVE_HOOK.get()
        if hook is not None:        # the dataset's ledger: recorded (or refused by its cap) before any noise is drawn
            hook(self, plan)
        for e, n in plan:
            self._hooked[mechanism_key(e)] = self._hooked.get(mechanism_key(e), 0) + n
            self._reserved[e] = self._reserved.get(e, 0) + n

    def check_plan_with(self, extra) -> None:
        """Check the reserved plan together with ``extra`` (``[(event, count), ...]`` spent outside it, such as
        sweeps replayed after a lost worker) against the budget: a run that can no longer afford the rest of its
        plan fails now, not when the last planned step is refused."""
        if self.budget is not None and self._reserved:
            self._check_budget(list(self._reserved.items()) + _check_groups(extra), spent=False)

    def spend(self, event, count: int = 1) -> None:
        """Record ``count`` uses of ``event``; refuse if that would exceed the budget."""
        ((event, count),) = _check_groups([(event, count)])
        if self._groups.get(event, 0) + count > self._reserved.get(event, 0):
            self._check_budget([(event, count)])
        hook = RESERVE_HOOK.get()
        if hook is not None and self._hooked:       # a release beyond the plan the dataset's ledger recorded
            key = mechanism_key(event)
            beyond = self._hook_spent.get(key, 0) + count - self._hooked.get(key, 0)
            self._hook_spent[key] = self._hook_spent.get(key, 0) + count
            if beyond > 0:
                hook(self, [(event, min(count, beyond))])
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

    def _approximate_groups(self):
        return [(e, n) for e, n in self._groups.items() if getattr(e, "approximate", False)]

    def epsilon_basic(self, delta: float | None = None) -> float:
        """Basic composition: pure ε's add; approximate-DP events (no finite pure ε, e.g. Gaussian
        noise) each spend an equal share ``δ/k`` of ``delta`` over their ``k`` uses, so the total is
        (Σ ε_i, δ)-DP (Dwork & Roth 2014, Thm 3.16). Without ``delta`` such events give ∞."""
        pure = sum(e.epsilon * n for e, n in self._groups.items() if not getattr(e, "approximate", False))
        approx = self._approximate_groups()
        if not approx:
            return float(pure)
        if delta is None:
            return float("inf")
        k = sum(n for _, n in approx)
        return float(pure + sum(n * _memoized("epsilon_at", [(e, 1)], (delta / k,), lambda e=e: e.epsilon_at(delta / k))
                                for e, n in approx))

    def epsilon_tight(self, delta: float) -> float:
        return compose_pld(self.groups(), delta, self.discretization)

    def delta_basic(self) -> float:
        """Sum of the per-event deltas of approximate-DP events (0 for pure and noise events)."""
        return float(sum(getattr(e, "delta_event", 0.0) * n for e, n in self._groups.items()))

    def epsilon_rdp(self, delta: float) -> float:
        return compose_rdp(self.groups(), delta)

    def report(self, delta: float = 1e-5) -> dict:
        """A JSON-able privacy report: ε by basic composition, ε(δ) by PLD and by RDP."""
        delta = _check_delta(delta)
        rep = {
            "private": True,
            "unit": self.unit,
            "neighbouring_relation": self.relation,
            "theorem": self.theorem,
            "delta": delta,
            "epsilon_basic": self.epsilon_basic(delta),
            "epsilon_pld": self.epsilon_tight(delta),
            "epsilon_rdp": self.epsilon_rdp(delta),
            "accounting": {
                "basic": "sum of per-event pure epsilons (basic sequential composition, Dwork & Roth 2014 Thm 3.16); delta = 0",
                "pld": "privacy loss distributions composed with dp-accounting (Koskela et al. 2020; Doroshenko et al. 2022),"
                       f" pessimistic discretisation {effective_discretization(self.groups(), self.discretization):.2g}",
                "rdp": "Renyi DP (Mironov 2017) converted by dp_accounting.rdp.compute_epsilon",
            },
            "events": [dict(ev.describe(), count=n) for ev, n in self._groups.items()],
            # the grid the PLD figure was computed on, so that the figures can be recomputed from the events
            # (accounting.verify)
            "pld_discretization": effective_discretization(self.groups(), self.discretization),
        }
        approx, d_events = self._approximate_groups(), self.delta_basic()
        if approx or d_events > 0:
            # basic composition of approximate-DP steps: (epsilon, delta) events add their own deltas;
            # events with no pure epsilon (Gaussian noise) share the reported delta, delta/k per use
            rep["delta_basic"] = (delta if approx else 0.0) + d_events
            rep["accounting"]["basic"] = (
                "basic sequential composition (Dwork & Roth 2014 Thm 3.16): epsilons and per-event deltas add"
                + ("; each of the k steps without a pure epsilon is charged its PLD epsilon at delta/k" if approx else ""))
            if d_events > 0:
                rep["accounting"]["rdp"] = "not finite: the run contains (epsilon, delta>0) events"
        return name_guarantee(rep)


GUARANTEE_NOTE = ("epsilon (with delta) is the guarantee claimed: the smallest of the valid bounds at that delta"
                  " (each of them is an upper bound on the true epsilon(delta), so their minimum is too); the other"
                  " figures are cross-checks")


def _finite(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


NO_GUARANTEE = "none: "
"""How ``epsilon_method`` begins when a private report claims nothing (``epsilon`` is None)."""


def claims_no_guarantee(rep: dict) -> bool:
    """Whether a private report says that no (epsilon, delta) guarantee follows from its events."""
    return rep.get("epsilon", 0) is None and str(rep.get("epsilon_method", "")).startswith(NO_GUARANTEE)


def _guarantee_beyond_requested_delta(rep: dict, delta: float) -> dict:
    """No bound holds at the delta asked for: the events' own deltas already add to more. Basic composition still
    holds at its own delta, so that pair is the guarantee when that delta is below 1; otherwise nothing is claimed,
    and the report says why."""
    basic, d_basic = _finite(rep.get("epsilon_basic")), _finite(rep.get("delta_basic"))
    if basic is not None and d_basic is not None and d_basic < 1:
        rep["delta_requested"], rep["delta"] = delta, d_basic
        rep["epsilon"], rep["epsilon_method"] = basic, (
            f"basic composition at its own delta: the events' deltas add to {d_basic:.3g}, more than the delta asked"
            f" for ({delta:.3g}), so no bound holds there (the PLD/RDP cross-checks are at the delta asked for)")
        rep["guarantee_note"] = GUARANTEE_NOTE
        return rep
    if d_basic is None or d_basic < 1:
        return rep          # nothing to go on (an edited or truncated report): no claim; loading refuses it
    rep["epsilon"] = None
    rep["epsilon_method"] = (f"{NO_GUARANTEE}the events' own deltas add to {d_basic:.3g}, so no (epsilon, delta)"
                             " guarantee with delta < 1 follows from them")
    rep["guarantee_note"] = GUARANTEE_NOTE
    return rep


def name_guarantee(rep: dict) -> dict:
    """Name the guarantee of a private report in one field: ``epsilon`` at ``delta`` (the smallest valid
    figure at that delta: tight PLD, its vocabulary-inclusive variant, RDP, or basic composition when basic's
    own delta is within ``delta``), ``epsilon_method`` saying which; a word-level report also gets the
    per-document translation (group privacy). Every other figure stays as a cross-check."""
    if not rep.get("private"):
        return rep
    delta = _finite(rep.get("delta")) or 0.0
    cands = [(_finite(rep.get(k)), name) for k, name in (("epsilon_pld_tight", "PLD, every event composed"),
                                                          ("epsilon_pld", "PLD"), ("epsilon_rdp", "RDP"))]
    if (_finite(rep.get("delta_basic")) or 0.0) <= delta:
        cands.append((_finite(rep.get("epsilon_basic")), "basic composition"))
    cands = [(e, n) for e, n in cands if e is not None]
    if not cands:
        return _guarantee_beyond_requested_delta(rep, delta)
    eps, method = min(cands, key=lambda c: c[0])
    basic = _finite(rep.get("epsilon_basic"))
    if basic is not None and not _finite(rep.get("delta_basic")) and basic <= eps * (1 + 1e-9):
        eps, method = basic, "basic composition (pure epsilon-DP: holds with delta = 0 too)"
    rep["epsilon"], rep["epsilon_method"], rep["guarantee_note"] = eps, method, GUARANTEE_NOTE
    if rep.get("unit") == "word":
        pure = _finite(rep.get("epsilon_basic")) if not _finite(rep.get("delta_basic")) else None
        if pure is not None:
            rep["per_document"] = {
                "rule": ("group privacy: every word of a document of L words may change, so the document is protected"
                         " with L x epsilon_basic (pure DP, delta = 0)"),
                "epsilon_per_word": pure, "examples": {str(L): L * pure for L in (10, 100, 1000)}}
        else:
            rep["per_document"] = {
                "rule": ("group privacy for (epsilon, delta)-DP: a document of L words is protected with"
                         " (L x epsilon, L e^((L-1) epsilon) delta)"),
                "examples": {str(L): L * eps for L in (10, 100, 1000)}}
    return rep
