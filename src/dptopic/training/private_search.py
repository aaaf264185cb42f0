"""A private hyper-parameter search whose accounting goes on the dataset ledger: random stopping (Papernot & Steinke
2022; :mod:`dptopic.accounting.tuning`).

A grid search spends a fit's budget on every candidate and fold. :class:`RandomStoppingSearch` runs a random number
K of fits instead (K drawn from a distribution fixed in advance), each on a candidate drawn at random, and keeps the
best by a score that reads only the fitted model (or public documents). Its privacy is Papernot & Steinke's theorem
applied to the candidates' own plans: about what 3 to 5 single fits cost with the default geometric K of mean 10,
whatever K turns out to be, where 10 separate fits cost 10 times one.

The theorem covers the best run alone, with K secret: the search publishes the best model, its candidate and its
score, and nothing that holds K (no count of runs, no other run's score, no per-run progress or warning counts).
K and each run's candidate are drawn from the operating system's entropy, never from a seed: a known K or a known
sequence of candidates voids the bound (in an exact toy of randomized-response runs at epsilon 1 and a geometric K
of mean 10, the stated 3.02 becomes 23.6 when K is published with the best run, and 57.2 with every run's score;
docs/research/private_search.md).

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
from ..accounting.ledger import mechanism_key
from ..accounting.tuning import RandomStoppingEvent, check_distribution, expected_runs, sample_runs
from ..corpus.ledger_documents import documents_of
from ..dataset_ledger.charge import Charge, PlanCaptured, annotate, dataset_name, hook, ledger_path, model_delta
from ..dataset_ledger.ledger import DatasetLedger
from ..errors import DPTopicError, ParameterError
from ..models.base import REUSE_COVERED


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
    seed : refused (must be None): K and each run's candidate are always drawn from the operating system's entropy,
        since a predictable K or sequence of candidates voids the theorem's bound. The runs' noise is their
        estimator's own.
    ledger, dataset : as the estimators' (``dataset_ledger.charge``).

    Attributes
    ----------
    best_estimator_, best_params_, best_score_, privacy_ (the search's report: epsilon by RDP at delta, the event,
    and the dataset's total when charged). The number of runs K is not kept anywhere: the guarantee needs it secret.
    The best model's own ``privacy_["search"]`` states the search's guarantee, which its card puts at the top.
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

    def _clone(self, params: dict, quiet: bool = False):
        from sklearn.base import clone  # scikit-learn: heavy, loaded when used

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # the clone warning is about grid searches: not this one
            m = clone(self.estimator)
        m.set_params(**params)
        own = m.get_params()
        if "ledger" in own:
            m.set_params(ledger=False)          # the search records itself; its runs are covered by that release
        if quiet and "verbose" in own:
            m.set_params(verbose=0)             # one progress bar per run would count K on the terminal
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
        if self.seed is not None:
            raise ParameterError("{seed=} is refused: the number of runs K and each run's candidate are drawn from"
                                 " the operating system's entropy, whatever the seed, because a K or a sequence of"
                                 " candidates that can be predicted voids the search's bound (docs/budget.md); drop"
                                 " {seed} (a run's noise is its estimator's own).", "seed", self.seed)
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
        name, docs = (dataset_name(probe, lambda: documents_of(X, fit_kw.get("user_ids"))) if ledger is not None
                      else (None, None))
        plans, units = [], set()
        token = REUSE_COVERED.set(True)     # the candidates' fits are covered by the search's one release
        try:
            with warnings.catch_warnings(record=True) as planned:
                warnings.simplefilter("always")
                for c in cands:
                    plan, unit = self._plan(c, X, fit_kw)
                    plans.append(plan)
                    units.add(unit)
            self._fit_runs(X, fit_kw, cands, plans, units, score, delta, ledger, name, docs, planned)
        finally:
            REUSE_COVERED.reset(token)
        return self

    def _fit_runs(self, X, fit_kw, cands, plans, units, score, delta, ledger, name, docs, planned) -> None:
        if len(units) > 1:
            raise DPTopicError(f"the candidates protect different units ({', '.join(sorted(units))}): search one unit"
                               " at a time.")
        event = RandomStoppingEvent(tuple(plans), self.distribution, float(self.eta), float(self.gamma),
                                    float(self.mu))
        self.event_ = event
        unit = next(iter(units))
        trainer = f"RandomStoppingSearch({type(self.estimator).__name__})"
        release = None
        if ledger is not None:      # before any run draws noise; refused by the dataset's cap with nothing spent
            release = ledger.debit(name, trainer, unit, [(event, 1)], delta, kind="search", documents=docs,
                                   note=f"{len(cands)} candidates, E[K] = {event.expected_runs:.3g}")
        # K and the candidates from fresh OS entropy, never from a seed (the class note); K stays in this frame
        rng = np.random.default_rng()
        K = sample_runs(rng, self.distribution, float(self.eta), float(self.gamma), float(self.mu))
        self.best_estimator_, self.best_params_, self.best_score_ = None, None, -math.inf
        keys = {i: sorted(_keys(p)) for i, p in enumerate(plans)}
        best_warnings = []      # the best run's warnings are shown (its fit is the release); no other run's
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(K):
                i = int(rng.integers(len(cands)))
                m = self._clone(cands[i], quiet=True)
                charge = Charge(None, None, type(m).__name__, model_delta(m), mode="covered")
                with hook(charge):
                    m.fit(X, **fit_kw)
                if sorted(_keys(charge.reserved)) != keys[i]:
                    raise DPTopicError(f"candidate {cands[i]} reserved another plan than the one planned: the search's"
                                       " accounting does not cover it (report this).")
                s = float(score(m))
                if s > self.best_score_ or self.best_estimator_ is None:
                    self.best_estimator_, self.best_params_, self.best_score_ = m, dict(cands[i]), s
                    best_warnings = list(caught)
                del caught[:]
        # each distinct warning once: those of planning every candidate (K plays no part there) and of the best run;
        # a count of the runs' warnings, or one from a run that was not the best, would tell K
        said = {}
        for w in list(planned) + best_warnings:
            said.setdefault((w.category, str(w.message)), w)
        for w in said.values():     # the warning itself (its class and, for a ParameterWarning, its parameters)
            warnings.warn(w.message, stacklevel=3)
        del K
        eps = event.epsilon_at(delta)
        method = "RDP (Papernot & Steinke 2022, Theorem 2/6; the candidates' largest RDP curve)"
        self.privacy_ = {
            "private": True, "unit": unit, "epsilon": eps, "delta": delta, "epsilon_method": method,
            "theorem": event.describe()["theorem"], "n_candidates": len(cands),
            "expected_runs": expected_runs(self.distribution, self.eta, self.gamma, self.mu),
            "events": [dict(event.describe(), count=1)], "scope": SEARCH_SCOPE,
        }
        if self.best_estimator_ is not None:
            self.best_estimator_.privacy_["search"] = {
                "epsilon": eps, "delta": delta, "method": method, "theorem": self.privacy_["theorem"],
                "n_candidates": len(cands), "expected_runs": self.privacy_["expected_runs"],
                "params": {k: _plain(v) for k, v in self.best_params_.items()}, "scope": SEARCH_SCOPE}
        if ledger is not None:
            self.privacy_["dataset_ledger"] = None
            annotate(self, ledger, release)
            if self.best_estimator_ is not None:
                annotate(self.best_estimator_, ledger, release)
                self.best_estimator_._dataset_release_ = (str(ledger.path), release)   # its save names the folder


SEARCH_SCOPE = ("covers the best run's model, its candidate and its score, with the number of runs K secret"
                " (Papernot & Steinke 2022): K and each run's candidate are drawn from the operating system's entropy,"
                " and nothing released holds K. NOT covered: K itself (whoever learns it, from the search's running"
                " time or a log of its runs, is owed no guarantee by this theorem: publishing K with the best run"
                " turns the bound's 3.02 into 23.6 in an exact toy, docs/research/private_search.md), the other runs'"
                " models and scores, and a score that reads the private documents.")
"""What a random-stopping search's guarantee covers, and that K is secret (the search's and the best model's card)."""


def _plain(v):
    """A candidate's parameter value as JSON holds it (numpy scalars as Python numbers)."""
    return v.item() if isinstance(v, np.generic) else v


def _keys(groups) -> list:
    out = []
    for e, n in groups:
        out += [mechanism_key(e)] * int(n)
    return out
