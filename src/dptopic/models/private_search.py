"""A private hyper-parameter search whose accounting goes on the dataset ledger: random stopping (Papernot & Steinke
2022; :mod:`dptopic.accounting.tuning`).

A grid search spends a fit's budget on every candidate and fold. :class:`RandomStoppingSearch` runs a random number
K of fits instead (K drawn from a distribution fixed in advance), each on a candidate drawn at random, and keeps the
best by a score that reads only the fitted model (or public documents). Its privacy is Papernot & Steinke's theorem
applied to the candidates' own plans: about what 3 to 5 single fits cost with the default geometric K of mean 10,
whatever K turns out to be, where 10 separate fits cost 10 times one.

Before any noise, every candidate's plan is read by running its fit up to the point where its trainer reserves the
plan (nothing is drawn there); the search is recorded on the dataset's ledger as one release of a
:class:`~dptopic.accounting.tuning.RandomStoppingEvent` (refused by the dataset's cap with nothing spent); the runs
then fit, their own releases covered by that one. docs/budget.md.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._validation import Real, validate_value
from ..accounting.dataset_ledger import DatasetLedger
from ..accounting.ledger import mechanism_key
from ..accounting.tuning import RandomStoppingEvent, check_distribution, expected_runs, sample_runs
from ..errors import DPTopicError
from .dataset_charge import Charge, PlanCaptured, annotate, dataset_name, hook, ledger_path, model_delta


def supported_topics_score(model) -> float:
    """The default score: how many of the model's topics stand above its noise (``supported_topics_``, decided from
    its releases alone: post-processing), the background topics aside."""
    s = getattr(model, "supported_topics_", None)
    if s is None:
        raise DPTopicError(f"{type(model).__name__} has no supported_topics_: give score=, a function of the fitted"
                           " model alone (or of public documents).")
    bg = getattr(model, "background_topics_", None)
    s = np.asarray(s, dtype=bool)
    return float((s & ~np.asarray(bg, dtype=bool)).sum() if bg is not None else s.sum())


class RandomStoppingSearch:
    """Private hyper-parameter search with a random number of runs (Papernot & Steinke 2022).

    Parameters
    ----------
    estimator : a private dptopic estimator (its ``ledger``/``dataset`` are the search's unless given here).
    param_grid : a dict of lists, or a list of such dicts (scikit-learn's ``ParameterGrid``): the candidates.
    score : ``score(model) -> float``, higher is better, reading the fitted model alone or public documents: a score
        read from the private documents (held-out perplexity on them) is outside the guarantee. Default: the number
        of supported topics (post-processing of the release).
    distribution : ``"truncated_negative_binomial"`` (default; Thm 2) or ``"poisson"`` (Thm 6).
    eta, gamma : the truncated negative binomial's parameters (default 1 and 0.1: geometric, 10 runs expected).
    mu : the Poisson's mean (with ``distribution="poisson"``; K = 0 then releases nothing).
    delta : the delta the search's epsilon is stated at.
    seed : the draws of K and of the candidates (None: OS entropy; the runs' noise is their estimator's own).
    ledger, dataset : as the estimators' (``models.dataset_charge``).

    Attributes
    ----------
    best_estimator_, best_params_, best_score_, n_runs_ (K), privacy_ (the search's report: epsilon by RDP at delta,
    the event, and the dataset's total when charged).
    """

    def __init__(self, estimator, param_grid, *, score=None, distribution: str = "truncated_negative_binomial",
                 eta: float = 1.0, gamma: float = 0.1, mu: float = 0.0, delta: float = 1e-5, seed=None,
                 ledger=None, dataset=None):
        self.estimator = estimator
        self.param_grid = param_grid
        self.score = score
        self.distribution = distribution
        self.eta = eta
        self.gamma = gamma
        self.mu = mu
        self.delta = delta
        self.seed = seed
        self.ledger = ledger
        self.dataset = dataset

    def _candidates(self) -> list:
        from sklearn.model_selection import ParameterGrid  # scikit-learn: heavy, loaded when used

        try:
            cands = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as e:
            raise DPTopicError(f"invalid param_grid: {' '.join(str(e).split())}") from None
        if not cands:
            raise DPTopicError("param_grid gives no candidate.")
        return cands

    def _clone(self, params: dict):
        from sklearn.base import clone  # scikit-learn: heavy, loaded when used

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # the clone warning is about grid searches: not this one
            m = clone(self.estimator)
        m.set_params(**params)
        if "ledger" in m.get_params():
            m.set_params(ledger=False)          # the search records itself; its runs are covered by that release
        return m

    def _plan(self, params: dict, X, fit_kw):
        m = self._clone(params)
        charge = Charge(None, None, type(m).__name__, model_delta(m), mode="capture")
        try:
            with hook(charge):
                m.fit(X, **fit_kw)
        except PlanCaptured as p:
            return tuple(p.groups), p.unit
        raise DPTopicError(f"{type(m).__name__} with {params} finished a fit without reserving a plan: it spends no"
                           " budget (or claims no guarantee), so a private search has nothing to account; use"
                           " scikit-learn's search instead.")

    def fit(self, X, y=None, **fit_kw):
        """Plan every candidate, record the search on the dataset's ledger, then run K fits and keep the best."""
        check_distribution(self.distribution, self.eta, self.gamma, self.mu)
        delta = float(validate_value("delta", self.delta, [Real(0, 1, "neither")]))
        score = self.score or supported_topics_score
        if not callable(score):
            raise DPTopicError("score must be a function of the fitted model that returns a number.")
        cands = self._candidates()
        proxy = self.estimator if self.ledger is None and self.dataset is None else None
        probe = type("_LedgerOf", (), {"ledger": self.ledger if proxy is None else getattr(proxy, "ledger", None),
                                       "dataset": self.dataset if proxy is None else getattr(proxy, "dataset", None)})
        path = ledger_path(probe)
        ledger = DatasetLedger(path) if path is not None else None      # a bad file: one line, before any read
        name, docs = dataset_name(probe, X, fit_kw.get("user_ids")) if ledger is not None else (None, None)
        plans, units = [], set()
        for c in cands:
            plan, unit = self._plan(c, X, fit_kw)
            plans.append(plan)
            units.add(unit)
        if len(units) > 1:
            raise DPTopicError(f"the candidates protect different units ({', '.join(sorted(units))}): search one unit"
                               " at a time.")
        event = RandomStoppingEvent(tuple(plans), self.distribution, float(self.eta), float(self.gamma),
                                    float(self.mu))
        self.event_ = event
        unit = units.pop()
        trainer = f"RandomStoppingSearch({type(self.estimator).__name__})"
        release = None
        if ledger is not None:      # before any run draws noise; refused by the dataset's cap with nothing spent
            release = ledger.debit(name, trainer, unit, [(event, 1)], delta, kind="search", documents=docs,
                                   note=f"{len(cands)} candidates, E[K] = {event.expected_runs:.3g}")
        rng = self.seed if isinstance(self.seed, np.random.Generator) else np.random.default_rng(self.seed)
        K = sample_runs(rng, self.distribution, float(self.eta), float(self.gamma), float(self.mu))
        self.n_runs_, self.best_estimator_, self.best_params_, self.best_score_ = K, None, None, -math.inf
        self.scores_ = []
        keys = {i: sorted(_keys(p)) for i, p in enumerate(plans)}
        for _ in range(K):
            i = int(rng.integers(len(cands)))
            m = self._clone(cands[i])
            charge = Charge(None, None, type(m).__name__, model_delta(m), mode="covered")
            with hook(charge):
                m.fit(X, **fit_kw)
            if sorted(_keys(charge.reserved)) != keys[i]:
                raise DPTopicError(f"candidate {cands[i]} reserved another plan than the one planned: the search's"
                                   " accounting does not cover it (report this).")
            s = float(score(m))
            self.scores_.append((dict(cands[i]), s))
            if s > self.best_score_ or self.best_estimator_ is None:
                self.best_estimator_, self.best_params_, self.best_score_ = m, dict(cands[i]), s
        eps = event.epsilon_at(delta)
        self.privacy_ = {
            "private": True, "unit": unit, "epsilon": eps, "delta": delta,
            "epsilon_method": "RDP (Papernot & Steinke 2022, Theorem 2/6; the candidates' largest RDP curve)",
            "theorem": event.describe()["theorem"], "n_candidates": len(cands),
            "expected_runs": expected_runs(self.distribution, self.eta, self.gamma, self.mu), "runs": K,
            "events": [dict(event.describe(), count=1)],
            "scope": ("covers the best run's model and its score; the runs' other models are not released. The"
                      " score must read the fitted model alone or public documents."),
        }
        if ledger is not None:
            self.privacy_["dataset_ledger"] = None
            annotate(self, ledger, release)
            if self.best_estimator_ is not None:
                self.best_estimator_.privacy_["search"] = {"epsilon": eps, "delta": delta, "runs": K,
                                                           "method": self.privacy_["epsilon_method"]}
                annotate(self.best_estimator_, ledger, release)
                self.best_estimator_._dataset_release_ = (str(ledger.path), release)   # its save names the folder
        return self


def _keys(groups) -> list:
    out = []
    for e, n in groups:
        out += [mechanism_key(e)] * int(n)
    return out
