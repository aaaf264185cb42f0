"""A trainer's release plan: the releases one fit makes, with their calibrated noise, from public settings alone.

Every private estimator has ``release_plan(n_words=None) -> ReleasePlan``: from its parameters (the budget, the
number of topics and iterations, its unit) and the vocabulary's size, never from the data, the releases its ``fit``
makes, each a :class:`PlannedRelease` (its mechanism, sensitivity, noise scale and the accounting event it spends).
``fit`` reserves exactly that plan on its ledger before the first noise draw and spends it; the pre-fit check
(:func:`refuse_unreachable`), ``dptopic recommend``, the privacy card's "planned and spent" and the white-box audit
read the same plan, so each privacy decision is made once (as Opacus's one ``get_noise_multiplier`` that every caller
uses, and dp_accounting's events).

A reviewer reads one function per release: each :class:`PlannedRelease` is built by a small function, in the
trainer's module, whose docstring cites the theorem the release rests on. ``DocDPCooccurrence``'s releases are built
here (:func:`docdp_cooc_plan`), since ``dptopic recommend`` (``advice``, below the models) reads them too.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from ..errors import BudgetExceededError, DPTopicError
from .events import DISCRETIZATION, DOCUMENT_ADD_REMOVE
from .ledger import PrivacyLedger
from .verify import BUDGET_RTOL, RunPlan


@dataclass(frozen=True)
class PlannedRelease:
    """One release a fit makes.

    Parameters
    ----------
    name : what is released, in words (``"word counts"``, ``"co-occurrence statistic"``, ``"iteration counts"``).
    mechanism : ``"gaussian"``, ``"laplace"``, ``"discrete_laplace"``, ``"randomized_response"``, ``"skellam"``,
        ``"pure_dp"`` (a step that is epsilon-DP by a theorem, not by added noise), ...
    sensitivity : in the mechanism's norm (L2 for Gaussian, L1 for Laplace); for a step with no added noise, 0.
    scale : the noise's sigma (Gaussian) or b (Laplace); the noise multiplier is ``scale / sensitivity``.
    event : the accounting event one release spends (:mod:`dptopic.accounting.events`).
    count : how many times it is released (iterations, rounds, steps).
    """

    name: str
    mechanism: str
    sensitivity: float
    scale: float
    event: object
    count: int = 1

    @property
    def noise_multiplier(self) -> float | None:
        """``scale / sensitivity``; None for a step with no noise of its own (sensitivity 0)."""
        return None if not self.sensitivity else float(self.scale) / float(self.sensitivity)

    def as_dict(self) -> dict:
        return {"name": self.name, "mechanism": self.mechanism, "sensitivity": float(self.sensitivity),
                "scale": float(self.scale), "noise_multiplier": self.noise_multiplier, "count": int(self.count),
                "event": self.event.describe()}


@dataclass(frozen=True)
class ReleasePlan:
    """The releases of one fit (:class:`PlannedRelease`), with what its ledger protects.

    ``trainer``: the estimator's class name; ``unit`` and ``relation``: its ledger's privacy unit and neighbouring
    relation; ``theorem``: what the guarantee rests on; ``budget``: the ``(epsilon, delta)`` the noise was calibrated
    to (None where the settings give the noise itself, e.g. ``HDPLDA(epsilon_laplace=...)``); ``guarantee``: False
    for a baseline whose releases are accounted but whose model has no guarantee (CDP-LDA: the plan states the
    paper's figure, ``note`` says so); ``discretization``: the PLD grid of the ledger that reports the total."""

    trainer: str
    unit: str
    releases: tuple
    relation: str | None = None
    theorem: str = ""
    budget: tuple | None = None
    guarantee: bool = True
    note: str = ""
    discretization: float = DISCRETIZATION

    def events(self) -> list:
        """Each release's event, ``count`` times, in the order the fit spends them (a release repeated over the
        iterations is listed ``count`` times in a row)."""
        return [r.event for r in self.releases for _ in range(int(r.count))]

    def groups(self) -> list:
        """``[(event, count), ...]`` with equal events added up: what the fit's ledger reserves."""
        out: dict = {}
        for r in self.releases:
            out[r.event] = out.get(r.event, 0) + int(r.count)
        return list(out.items())

    def release(self, name: str) -> PlannedRelease:
        """The release called ``name`` (its first, if several share it)."""
        for r in self.releases:
            if r.name == name:
                return r
        raise DPTopicError(f"{self.trainer}'s plan makes no release {name!r}: it makes"
                           f" {', '.join(repr(r.name) for r in self.releases) or 'none'}.")

    def ledger(self, budget: bool = True) -> PrivacyLedger:
        """An empty ledger for this plan's unit, relation and theorem (with its budget unless ``budget=False``)."""
        kw = {} if self.relation is None else {"relation": self.relation}
        return PrivacyLedger(unit=self.unit, theorem=self.theorem, discretization=self.discretization,
                             budget=self.budget if budget and self.guarantee else None, **kw)

    def reserve(self, ledger: PrivacyLedger) -> None:
        """Reserve the whole plan on ``ledger`` (checked against its budget before any noise is drawn)."""
        if self.releases:
            ledger.reserve(self.groups())

    def check(self) -> "ReleasePlan":
        """Refuse a plan that its own budget does not cover, by the accountant that reports the total
        (:meth:`epsilon` at the budget's delta, floating-point noise aside): a
        :class:`~dptopic.errors.BudgetExceededError` naming both figures. Reads no data."""
        if self.budget is not None and self.guarantee and self.releases:
            eps_b, delta_b = (float(x) for x in self.budget)
            eps = self.epsilon(delta_b)
            if eps > eps_b and not math.isclose(eps, eps_b, rel_tol=BUDGET_RTOL, abs_tol=0.0):
                raise BudgetExceededError(f"privacy budget exceeded: the planned releases spend epsilon={eps:.6g} at"
                                          f" delta={delta_b:g}, above the budget epsilon={eps_b:g}; raise the budget"
                                          " or release less.")
        return self

    def report(self, delta: float) -> dict:
        """The report of a ledger that spent the whole plan (no data: the figures its fit's report states)."""
        led = self.ledger(budget=False)
        for e, n in self.groups():
            led.spend(e, n)
        return led.report(float(delta))

    def epsilon(self, delta: float) -> float:
        """The total at ``delta`` by the accountant that reports the model's total: the headline of a ledger that
        spent every planned event (the smallest of the valid bounds, as the fit's report and its card state it);
        ``inf`` where the events add up to no guarantee at ``delta``. A baseline's plan (``guarantee`` False) gives
        its releases' figure, which is no guarantee of the model."""
        eps = self.report(delta).get("epsilon")
        return float(eps) if isinstance(eps, (int, float)) and math.isfinite(eps) else math.inf

    def run_plan(self, budget: tuple | None = None) -> RunPlan:
        """What ``privacy verify`` holds a saved report's events to (:class:`~dptopic.accounting.verify.RunPlan`)."""
        return RunPlan(events=self.groups(), budget=budget if budget is not None else self.budget, unit=self.unit,
                       relation=self.relation)

    def as_dict(self) -> dict:
        """JSON, for the card's "planned and spent"."""
        return {"trainer": self.trainer, "unit": self.unit, "relation": self.relation, "theorem": self.theorem,
                "budget": None if self.budget is None else {"epsilon": float(self.budget[0]),
                                                            "delta": float(self.budget[1])},
                "guarantee": bool(self.guarantee), "note": self.note or None,
                "releases": [r.as_dict() for r in self.releases],
                "n_releases": sum(int(r.count) for r in self.releases)}


def refuse_unreachable(model, n_words: int | None = None) -> ReleasePlan:
    """The pre-fit check every front door makes: ``model``'s release plan (``n_words``: the vocabulary's size when
    known), refused in one line (:class:`~dptopic.errors.DPTopicError`, naming the parameter) when no noise reaches its
    budget or the plan spends more than it. Reads no data and draws nothing: a budget refused here is refused before
    the corpus is read."""
    plan = getattr(model, "release_plan", None)
    if plan is None:
        return None
    plan = model.release_plan(n_words)
    try:
        return plan.check()
    except BudgetExceededError as e:
        raise DPTopicError(f"{plan.trainer}: {e}") from None


# ------------------------------------------------------------------ the releases of a Gaussian trainer
def gaussian_release(name: str, noise_multiplier: float, label: str, relation: str = DOCUMENT_ADD_REMOVE,
                     sensitivity: float = 1.0, sampling_rate: float = 1.0, count: int = 1) -> PlannedRelease:
    """A Gaussian mechanism release (Dwork & Roth 2014, Thm A.1) of a statistic of L2 ``sensitivity``, noise std
    ``noise_multiplier * sensitivity``, over records each taken with probability ``sampling_rate`` (Poisson
    subsampling, Mironov, Talwar & Zhang 2019), ``count`` times; accounted by its privacy loss distribution."""
    from .gaussian import SubsampledGaussianEvent  # SciPy: loaded with the first Gaussian plan, not with the package

    event = SubsampledGaussianEvent(float(noise_multiplier), float(sampling_rate), label=label, relation=relation)
    return PlannedRelease(name, "gaussian", float(sensitivity), float(noise_multiplier) * float(sensitivity), event,
                          int(count))


COOC_RANKING = "noisy sum of per-document L2-normalised word-presence vectors"
COOC_RANKING_COUNTS = ("noisy sum of per-document L2-normalised word-presence and word-count vectors, each scaled by"
                       " 1/sqrt(2)")
COOC_STATISTIC = "noisy sum of per-document Frobenius-normalised word co-occurrence matrices"
COOC_TRAINER = "DocDPCooccurrence"


def docdp_cooc_noise(epsilon: float, delta: float, ratio: float, ranked: bool = True) -> tuple:
    """The one calibration of ``DocDPCooccurrence`` (its ``fit``, its plan, ``dptopic recommend`` and the pre-fit
    check all call it): ``(sigma_rank, sigma)``, the noise multipliers of the word ranking (``ratio`` times the
    co-occurrence's) and of the co-occurrence release, whose composition by the ledger's PLD is within
    ``(epsilon, delta)`` (:func:`~dptopic.accounting.gaussian.calibrate_gaussian_pair`); with ``ranked`` False
    (every word kept, no ranking) ``(None, sigma)`` of the one release
    (:func:`~dptopic.accounting.gaussian.calibrate_noise_multiplier`)."""
    from .gaussian import calibrate_gaussian_pair, calibrate_noise_multiplier  # SciPy, as gaussian_release

    if ranked:
        return calibrate_gaussian_pair(float(epsilon), float(delta), float(ratio))
    return None, calibrate_noise_multiplier(float(epsilon), float(delta), 1.0, 1)


def docdp_cooc_ranking_release(sigma_rank: float, repetition: bool = False,
                               relation: str = DOCUMENT_ADD_REMOVE) -> PlannedRelease:
    """``DocDPCooccurrence``'s first release: the sum over documents of each document's 0/1 presence vector divided by
    its L2 norm (with ``word_choice="repetition"`` also its word counts divided by theirs, both halves scaled by
    1/sqrt(2)), and a last entry for the document where counted: L2 sensitivity 1 under add/remove of one document
    (or one person, bounded as a whole), Gaussian mechanism (Dwork & Roth 2014, Thm A.1). The kept words are
    post-processing of it (Prop 2.1)."""
    return gaussian_release("word ranking", sigma_rank, COOC_RANKING_COUNTS if repetition else COOC_RANKING,
                            relation)


def docdp_cooc_release(sigma: float, relation: str = DOCUMENT_ADD_REMOVE) -> PlannedRelease:
    """``DocDPCooccurrence``'s co-occurrence release: the sum over documents of each document's pair matrix
    ``c c^T - diag(c)`` over the kept words, scaled to Frobenius norm 1: L2 sensitivity 1 under add/remove of one
    document (or one person), Gaussian mechanism (Dwork & Roth 2014, Thm A.1); the topics are post-processing."""
    return gaussian_release("co-occurrence statistic", sigma, COOC_STATISTIC, relation)


def docdp_cooc_plan(epsilon: float, delta: float, ratio: float, ranked: bool = True, repetition: bool = False,
                    unit: str = "document", relation: str = DOCUMENT_ADD_REMOVE, theorem: str = "") -> ReleasePlan:
    """``DocDPCooccurrence``'s plan from public numbers alone: the word ranking (when ``ranked``) and the
    co-occurrence release, calibrated together to ``(epsilon, delta)`` by :func:`docdp_cooc_noise`, composed by
    privacy loss distributions (Koskela et al. 2020)."""
    sigma_rank, sigma = docdp_cooc_noise(epsilon, delta, ratio, ranked)
    releases = ((docdp_cooc_ranking_release(sigma_rank, repetition, relation),) if ranked else ()) + (
        docdp_cooc_release(sigma, relation),)
    return ReleasePlan(COOC_TRAINER, unit, releases, relation=relation, theorem=theorem,
                       budget=(float(epsilon), float(delta)))


def docdp_cooc_reaches(epsilon: float, delta: float, ratio: float) -> bool:
    """Whether ``DocDPCooccurrence.fit`` reaches ``(epsilon, delta)``: its release plan (the word ranking with
    ``ratio`` times the co-occurrence's noise multiplier, then the co-occurrence; :func:`docdp_cooc_plan`, the function
    its ``release_plan`` calls), each multiplier within what the accountant handles, and the pair within the budget of
    its ledger, as ``fit`` reserves it."""
    try:
        plan = docdp_cooc_plan(float(epsilon), float(delta), float(ratio))
        plan.reserve(plan.ledger())
    except DPTopicError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def docdp_cooc_epsilon_floor(delta: float, ratio: float, most: float) -> float:
    """The smallest epsilon (to a relative 1e-5, from above) that ``DocDPCooccurrence``'s two releases reach at
    ``delta`` (:func:`docdp_cooc_reaches`), tried from the floor of one release (``calibrate_noise_multiplier``'s, from
    which ``calibrate_gaussian_pair`` starts) up, then bisected. ``inf`` when no noise reaches a finite epsilon at
    ``delta``, or none up to ``most`` (the largest budget its unit takes). (With a vocabulary of at most 200 words and
    fewer than 10 topics ``DocDPCooccurrence`` makes one release only, and reaches down to that lower floor.)"""
    from .gaussian import MAX_NOISE_MULTIPLIER, pld_epsilon  # the Gaussian accountant loads SciPy's optimizers

    lo = float(pld_epsilon(MAX_NOISE_MULTIPLIER, 1.0, 1, delta))
    if not math.isfinite(lo) or docdp_cooc_reaches(lo, delta, ratio):
        return lo
    hi = lo * 1.25
    while not docdp_cooc_reaches(hi, delta, ratio):
        lo, hi = hi, hi * 1.25
        if hi > most:
            return math.inf
    while hi - lo > 1e-5 * hi:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if docdp_cooc_reaches(mid, delta, ratio) else (mid, hi)
    return hi


def docdp_cooc_unreachable_epsilon(epsilon: float, delta: float, ratio: float, most: float) -> float | None:
    """The smallest epsilon ``DocDPCooccurrence`` reaches at ``delta`` (:func:`docdp_cooc_epsilon_floor`) when
    ``epsilon`` lies below it, else None. It calibrates two Gaussian releases (``calibrate_gaussian_pair``, the first
    with ``ratio`` times the second's noise multiplier), and refuses a budget that needs a multiplier above the
    accountant's largest; whether ``epsilon`` is reached is decided by that calibration itself. The user level runs
    the same releases (one person bounded as one document), and so has the same floor."""
    from .gaussian import GAUSSIAN_DISCRETIZATION, MAX_NOISE_MULTIPLIER  # the Gaussian accountant loads SciPy

    # calibrate_gaussian_pair starts from one release's multiplier times sqrt(1 + 1/ratio^2), and the larger of the
    # pair must stay within MAX_NOISE_MULTIPLIER: the pair reaches what one release reaches at MAX_NOISE_MULTIPLIER
    # divided by `scale`. The classic Gaussian mechanism at that multiplier is (c, delta)-DP for
    # c = sqrt(2 ln(1.25/delta)) / multiplier when c < 1 (Dwork & Roth 2014, Thm A.1), and the floor exceeds the true
    # epsilon by at most a few PLD grid steps: an epsilon far above both is reachable without loading the accountant
    scale = max(ratio, 1.0) * math.sqrt(1.0 + 1.0 / ratio ** 2)
    c = math.sqrt(2 * math.log(1.25 / delta)) * scale / MAX_NOISE_MULTIPLIER
    if c < 1 and epsilon >= 10 * (c + 2 * GAUSSIAN_DISCRETIZATION):
        return None
    if docdp_cooc_reaches(epsilon, delta, ratio):
        return None
    return docdp_cooc_epsilon_floor(float(delta), float(ratio), float(most))
