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

Every input is read and checked as :func:`dptopic.train` checks it (:func:`~dptopic.training.run.check_inputs`: the
vocabulary, given or chosen privately, the people of a user-level search, public documents), and a score given is
tried on a stand-in model fitted to synthetic documents (nothing private read, nothing spent). Before any noise,
every candidate's plan is read by running its fit up to the point where its trainer reserves the plan (nothing is
drawn there); the search is recorded on the dataset's ledger as one release of a
:class:`~dptopic.accounting.tuning.RandomStoppingEvent` (refused by the dataset's cap with nothing spent), in the
unit of its trainer (per person under the user unit); the runs then fit, their own releases covered by that one.
With a private vocabulary the words' DP set union is the release's first part, the caps checked for the whole
search before it draws (:func:`~dptopic.training.run.choose_vocabulary`). A search stopped by Ctrl-C, or by a
score that fails after the release was recorded, releases nothing and says what stays spent. docs/budget.md.
"""
from __future__ import annotations

import contextlib
import inspect
import math
import numbers
import signal
import threading
import warnings

import numpy as np

from .._validation import Real, validate_value
from ..accounting.events import ApproxDPEvent
from ..accounting.ledger import mechanism_key
from ..accounting.tuning import RandomStoppingEvent, check_search, expected_runs, sample_runs
from ..corpus.corpus import Corpus, as_corpus, user_ids_of
from ..corpus.ledger_documents import documents_of
from ..corpus.wordlist import record_word_list
from ..dataset_ledger.charge import (
    Charge,
    PlanCaptured,
    annotate,
    dataset_name,
    hook,
    ledger_path,
    model_delta,
    total_entry,
)
from ..dataset_ledger.ledger import DatasetLedger
from ..dataset_ledger.releases import release_guarantee
from ..errors import DPTopicError, ParameterError
from ..models.base import REUSE_COVERED
from .fdptm import compose_privacy
from .run import TrainingResult, check_inputs, choose_vocabulary


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


class SearchInterrupted(KeyboardInterrupt):
    """A Ctrl-C (SIGINT) that stopped a private search: its message (one line, starting ``interrupted``) says what
    was spent and recorded. Nothing is released: a best run of the runs done so far is not covered by the theorem,
    whose number of runs is drawn in advance, and how many were done would tell K."""


STAND_IN_DOCUMENTS = 200
"""Documents of the synthetic corpus a score given is tried on before anything is spent (:meth:`RandomStoppingSearch.
fit`): each of :data:`STAND_IN_LENGTH` words drawn uniformly from the search's words, a fixed public draw."""
STAND_IN_LENGTH = 20
STAND_IN_PEOPLE = 50
"""The people of the stand-in corpus of a user-level search (each writes ``STAND_IN_DOCUMENTS / STAND_IN_PEOPLE``)."""


class RandomStoppingSearch:
    """Private hyper-parameter search with a random number of runs (Papernot & Steinke 2022).

    Parameters
    ----------
    estimator : a private dptopic estimator (its ``ledger``/``dataset`` are the search's unless given here); its
        ``unit`` is the search's (``unit="user"``: each person's documents bounded as a whole, the search charged
        per person; the corpus carries each document's person, or give ``user_ids=`` to ``fit``).
    param_grid : a dict of lists, or a list of such dicts (scikit-learn's ``ParameterGrid``): the candidates.
    score : ``score(model) -> float``, higher is better, reading the fitted model alone or public documents: a score
        read from the private documents (held-out perplexity on them) is outside the guarantee. Default: the number
        of supported topics (post-processing of the release). A score given must take the model as its one
        argument and return a real number for any fitted model (NaN ranks last): it is tried on a stand-in model
        fitted to synthetic documents over the search's words before anything is spent, and refused in one line
        when it fails there or returns no number.
    distribution : ``"truncated_negative_binomial"`` (default; Thm 2) or ``"poisson"`` (Thm 6).
    eta, gamma : the truncated negative binomial's parameters (default 1 and 0.1: geometric, 10 runs expected).
    mu : the Poisson's mean (with ``distribution="poisson"``; K = 0 then releases nothing).
        The mean number of runs these give must lie in (1, 10^6]
        (:data:`~dptopic.accounting.tuning.EXPECTED_RUNS_RANGE`, the range ``dptopic search`` and ``budget plan``
        take): a ``gamma`` near 0 would run until the process is killed.
    delta : the delta the search's epsilon is stated at.
    seed : refused (must be None): K and each run's candidate are always drawn from the operating system's entropy,
        since a predictable K or sequence of candidates voids the theorem's bound. The runs' noise is their
        estimator's own.
    ledger, dataset : as the estimators' (``dataset_ledger.charge``).
    private_vocabulary : ``(epsilon_vocab, delta_vocab)``: the words chosen once by DP set union (Manzonelli et al.
        2024), before the runs, and composed with the search (the search's epsilon states both; its delta adds
        ``delta_vocab``), as :func:`dptopic.train` composes them with one run; document unit only.
    vocabulary_policy : ``"gaussian"`` (default) or ``"laplace"``, with ``private_vocabulary``.

    Attributes
    ----------
    best_estimator_, best_params_, best_score_, privacy_ (the search's report: epsilon by RDP at delta, the event,
    and the dataset's total when charged). The number of runs K is not kept anywhere: the guarantee needs it secret.
    The best model's own ``privacy_["search"]`` states the search's guarantee, which its card puts at the top.
    """

    def __init__(self, estimator, param_grid, *, score=None, distribution: str = "truncated_negative_binomial",
                 eta: float = 1.0, gamma: float = 0.1, mu: float = 0.0, delta: float = 1e-5, seed=None,
                 ledger=None, dataset=None, private_vocabulary=None, vocabulary_policy=None):
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
        self.private_vocabulary = private_vocabulary
        self.vocabulary_policy = vocabulary_policy

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

    def _checked_score(self):
        """The score, refused in one line unless it is a function that takes the fitted model as its one argument."""
        if self.score is None:
            return supported_topics_score
        score = self.score
        if not callable(score) or isinstance(score, type):
            raise ParameterError("{score=} is not a function: give score(model) -> a number (higher is better),"
                                 " reading the fitted model alone or public documents.", "score", score)
        try:
            sig = inspect.signature(score)
        except (TypeError, ValueError):     # a builtin without a signature: tried on the stand-in instead
            return score
        try:
            sig.bind(object())
        except TypeError:
            raise ParameterError("{score} must take the fitted model as its one argument (score(model) -> a"
                                 f" number), and {getattr(score, '__name__', 'it')}{sig} does not.", "score",
                                 score) from None
        return score

    def fit(self, X, y=None, *, vocabulary=None, public_corpus=None, names=None, **fit_kw):
        """Check every input, plan every candidate, record the search on the dataset's ledger, then run K fits and
        keep the best.

        ``vocabulary``: a public word list (or a ``(name, words)`` pair whose name the best model's report records),
        as :func:`dptopic.train` takes it; ``public_corpus``: public documents of the domain (docdp-cooc's prior);
        ``names``: how messages name the inputs (``{parameter: name}``: the command line's flags); ``fit_kw``: the
        runs' own fit arguments (``user_ids=``, each document's person)."""
        state = {"ledger": None, "release": None, "name": None, "spent": None}
        try:
            return self._fit(X, vocabulary, public_corpus, dict(names or {}), fit_kw, state)
        except SearchInterrupted:
            raise
        except KeyboardInterrupt:
            raise SearchInterrupted(interrupted_text(state)) from None

    def _fit(self, X, vocabulary, public_corpus, names, fit_kw, state):
        # ---- every input known good before anything is drawn or spent
        if self.seed is not None:
            raise ParameterError("{seed=} is refused: the number of runs K and each run's candidate are drawn from"
                                 " the operating system's entropy, whatever the seed, because a K or a sequence of"
                                 " candidates that can be predicted voids the search's bound (docs/budget.md); drop"
                                 " {seed} (a run's noise is its estimator's own).", "seed", self.seed)
        check_search(self.distribution, self.eta, self.gamma, self.mu)
        delta = float(validate_value("delta", self.delta, [Real(0, 1, "neither")]))
        score = self._checked_score()
        cands = self._candidates()
        clones = [self._clone(c) for c in cands]
        fewest = min(clones, key=lambda m: int(getattr(m, "n_topics", 0) or 0))     # fits the fewest words
        user_ids = fit_kw.pop("user_ids", None)
        corpus = _with_people(X, user_ids, uncut=self.private_vocabulary is not None)
        # train's own checks: the vocabularies (a public list or a private one, not both; none chosen per document
        # under the user unit), the people of a user-level search, the public corpus (never the private data)
        inputs = check_inputs(fewest, corpus, test_size=0, vocabulary=vocabulary,
                              private_vocabulary=self.private_vocabulary, vocabulary_policy=self.vocabulary_policy,
                              public_corpus=public_corpus, names=names)
        chosen = inputs.vocabulary is not None or inputs.private_vocabulary is not None
        if chosen or user_ids is not None:      # the runs read the checked corpus (its people, its words)
            X = inputs.corpus
        proxy = self.estimator if self.ledger is None and self.dataset is None else None
        probe = type("_LedgerOf", (), {"ledger": self.ledger if proxy is None else getattr(proxy, "ledger", None),
                                       "dataset": self.dataset if proxy is None else getattr(proxy, "dataset", None)})
        path = ledger_path(probe)
        ledger = DatasetLedger(path) if path is not None else None      # a bad file: one line, before any read
        name, docs = (dataset_name(probe, lambda: documents_of(X, user_ids)) if ledger is not None
                      else (None, None))
        state.update(ledger=ledger, name=name)
        run_kw = dict(fit_kw)
        if inputs.vocabulary is not None:       # the public list: the corpus over its words, as train reads it
            result = TrainingResult(model=fewest)
            choose_vocabulary(result, inputs)
            X, run_kw["vocabulary"] = result.corpus, result.vocabulary
        if inputs.public_corpus is not None:    # over the runs' words (choose_vocabulary restricts it to them)
            run_kw["public_corpus"] = inputs.public_corpus
        if self.score is not None:      # a score given: tried on a stand-in before anything is spent
            words = run_kw.get("vocabulary")
            self._try_score(score, fewest, list(inputs.corpus.vocabulary.words) if words is None else words, run_kw)
        token = REUSE_COVERED.set(True)     # the candidates' fits are covered by the search's one release
        try:
            with warnings.catch_warnings(record=True) as planned:
                warnings.simplefilter("always")
                if inputs.private_vocabulary is not None:
                    X, run_kw, vocab_event = self._private_words(inputs, fewest, clones, cands, X, run_kw, delta,
                                                                 ledger, name, docs, state)
                else:
                    vocab_event = None
                plans, units = self._plans(cands, X, run_kw)
            self._fit_runs(X, run_kw, cands, plans, units, score, delta, ledger, name, docs, planned, state,
                           vocab_event, inputs)
        finally:
            REUSE_COVERED.reset(token)
        return self

    def _plans(self, cands, X, run_kw) -> tuple[list, set]:
        plans, units = [], set()
        for c in cands:
            plan, unit = self._plan(c, X, run_kw)
            plans.append(plan)
            units.add(unit)
        if len(units) > 1:
            raise DPTopicError(f"the candidates protect different units ({', '.join(sorted(units))}): search one unit"
                               " at a time.")
        return plans, units

    def _try_score(self, score, model, words, run_kw) -> None:
        """The score tried on a stand-in before anything is spent: ``model`` (a candidate) fitted, without a ledger,
        to synthetic documents over ``words`` (a fixed public draw: nothing private is read, nothing spent); refused
        in one line when the score fails there or returns no number. A stand-in the trainer cannot fit (too few
        words for its topics, say) leaves the score to the runs: the planning refuses what they would."""
        import scipy.sparse as sp  # scipy.sparse: only a score given needs the stand-in

        if not words:
            return
        rng = np.random.default_rng(0)      # public and fixed: the stand-in's documents are no one's
        n, length = STAND_IN_DOCUMENTS, STAND_IN_LENGTH
        counts = sp.csr_matrix((np.ones(n * length), (np.repeat(np.arange(n), length),
                                                      rng.integers(len(words), size=n * length))),
                               shape=(n, len(words)))
        people = [f"stand-in {i % STAND_IN_PEOPLE}" for i in range(n)]
        stand_in = Corpus.from_bow(counts, vocabulary=list(words))
        stand_in = _with_people(stand_in, people if getattr(model, "unit", None) == "user" else None)
        m = self._clone(model.get_params(deep=False), quiet=True)
        kw = {k: v for k, v in run_kw.items() if k in ("public_corpus",)}
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m.fit(stand_in, vocabulary=list(words), **kw)
        except Exception:       # noqa: BLE001 -- any failure of the stand-in: the runs' own fits say what fails
            return
        where = ("on a stand-in model (a candidate fitted to synthetic documents over the search's words, before"
                 " anything was spent)")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = score(m)
        except Exception as e:      # noqa: BLE001 -- the user's function: any failure is refused in one line
            raise ParameterError("{score} failed " + where + f": {type(e).__name__}: {' '.join(str(e).split())[:200]};"
                                 " a score must return a number for any fitted model, one of noise included.",
                                 "score", score) from e
        if not _is_number(value):
            raise ParameterError("{score} returned " + f"{_shown(value)} " + where + ": it must return a real"
                                 " number (higher is better).", "score", score)

    def _private_words(self, inputs, fewest, clones, cands, X, run_kw, delta, ledger, name, docs, state):
        """The words chosen by DP set union once, before the runs (:func:`~dptopic.training.run.choose_vocabulary`):
        with a ledger, the search's release opened first with the selection, the caps checked for the whole search
        (the selection and the runs' plans from their public settings) before the set union draws."""
        eps_v, delta_v = inputs.private_vocabulary
        vocab = ApproxDPEvent(eps_v, delta_v, label="DP set union vocabulary", unit="document")
        if ledger is not None:
            planned = []
            try:
                planned = [(RandomStoppingEvent(tuple(tuple(m.release_plan(None).groups()) for m in clones),
                                                self.distribution, float(self.eta), float(self.gamma),
                                                float(self.mu)), 1)]
            except (DPTopicError, AttributeError):      # no plan before the words: the runs' is checked below
                pass
            with held_interrupts():
                state["release"] = ledger.debit(
                    name, self._trainer(), "document", [(vocab, 1)], delta + delta_v, kind="search",
                    documents=docs, planned=planned,
                    note=f"the private vocabulary (DP set union, eps_V={eps_v:g}, delta_V={delta_v:g}) and a search"
                         f" over {len(cands)} candidates")
            inputs.charge = Charge(ledger, name, self._trainer(), delta + delta_v, release_id=state["release"],
                                   kind="search", documents=docs)
        state["spent"] = f"the private vocabulary (epsilon {eps_v:g}, delta {delta_v:g})"
        result = TrainingResult(model=fewest)
        choose_vocabulary(result, inputs)
        inputs.charge = None
        kw = dict(run_kw, vocabulary=result.vocabulary)
        if inputs.public_corpus is not None:
            kw["public_corpus"] = inputs.public_corpus
        return result.corpus, kw, result.vocabulary_event

    def _trainer(self) -> str:
        return f"RandomStoppingSearch({type(self.estimator).__name__})"

    def _fit_runs(self, X, fit_kw, cands, plans, units, score, delta, ledger, name, docs, planned, state,
                  vocab_event=None, inputs=None) -> None:
        event = RandomStoppingEvent(tuple(plans), self.distribution, float(self.eta), float(self.gamma),
                                    float(self.mu))
        self.event_ = event
        unit = next(iter(units))
        total_eps, total_delta = event.epsilon_at(delta), delta
        if vocab_event is not None:     # the words' selection and the search, composed as the ledger composes them
            total_eps, total_delta = release_guarantee([(vocab_event, 1), (event, 1)], delta + vocab_event.delta)
        if ledger is not None:      # before any run draws noise; refused by the dataset's cap with nothing spent
            with held_interrupts():
                state["release"] = ledger.debit(
                    name, self._trainer(), unit, [(event, 1)], total_delta, kind="search", documents=docs,
                    release_id=state["release"], note=None if state["release"] is not None else
                    f"{len(cands)} candidates, E[K] = {event.expected_runs:.3g}")
        state["spent"] = (f"epsilon {total_eps:.4g} per {unit} at delta {total_delta:g}" if vocab_event is None else
                          f"epsilon {total_eps:.4g} per {unit} at delta {total_delta:g}, the private vocabulary"
                          " included")
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
                s = _run_score(score, m, state)
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
            warnings.warn(w.message, stacklevel=4)
        del K
        if self.best_score_ == -math.inf:
            self.best_score_ = math.nan         # every run scored NaN: the first was kept
        method = "RDP (Papernot & Steinke 2022, Theorem 2/6; the candidates' largest RDP curve)"
        scope = SEARCH_SCOPE
        if vocab_event is not None:
            method += (f"; composed with the private vocabulary (DP set union, epsilon_V = {vocab_event.eps:g},"
                       f" delta_V = {vocab_event.delta:g}; Manzonelli et al. 2024) as the dataset ledger composes a"
                       " release's events (PLD or RDP, the smaller)")
            scope = SEARCH_SCOPE.replace("covers the best run's model", "covers the words chosen by DP set union once,"
                                         " before the runs, and the best run's model", 1)
        events = ([dict(vocab_event.describe(), count=1)] if vocab_event is not None else []) + \
            [dict(event.describe(), count=1)]
        self.privacy_ = {
            "private": True, "unit": unit, "epsilon": total_eps, "delta": total_delta, "epsilon_method": method,
            "theorem": event.describe()["theorem"], "n_candidates": len(cands),
            "expected_runs": expected_runs(self.distribution, self.eta, self.gamma, self.mu),
            "events": events, "scope": scope,
        }
        best = self.best_estimator_
        if best is not None:
            if vocab_event is not None:     # the run's report composed with the words' selection (FDPTM), as train's
                compose_privacy(best, vocab_event)
            if inputs is not None and inputs.vocabulary is not None:    # the public word list, as train records it
                record_word_list(best, inputs.vocabulary_name or "vocabulary", inputs.vocabulary)
            best.privacy_["search"] = {
                "epsilon": total_eps, "delta": total_delta, "method": method, "theorem": self.privacy_["theorem"],
                "n_candidates": len(cands), "expected_runs": self.privacy_["expected_runs"],
                "params": {k: _plain(v) for k, v in self.best_params_.items()}, "scope": scope}
        if ledger is not None:
            self.privacy_["dataset_ledger"] = None
            annotate(self, ledger, state["release"])
            if best is not None:
                annotate(best, ledger, state["release"])
                best._dataset_release_ = (str(ledger.path), state["release"])   # its save names the folder


SEARCH_SCOPE = ("covers the best run's model, its candidate and its score, with the number of runs K secret"
                " (Papernot & Steinke 2022): K and each run's candidate are drawn from the operating system's entropy,"
                " and nothing released holds K. NOT covered: K itself (whoever learns it, from the search's running"
                " time or a log of its runs, is owed no guarantee by this theorem: publishing K with the best run"
                " turns the bound's 3.02 into 23.6 in an exact toy, docs/research/private_search.md), the other runs'"
                " models and scores, and a score that reads the private documents.")
"""What a random-stopping search's guarantee covers, and that K is secret (the search's and the best model's card)."""


def _with_people(X, user_ids, uncut: bool = False):
    """``X`` with each document's person: as given (no ``user_ids``), or as a Corpus carrying ``user_ids`` (checked
    against its own, :func:`~dptopic.corpus.corpus.user_ids_of`)."""
    if user_ids is None:
        return X
    corpus = as_corpus(X, uncut=uncut)
    people = user_ids_of(corpus, user_ids)      # refused when they differ from the corpus's own
    if corpus.user_ids is not None:
        return corpus
    out = corpus.subset(list(range(corpus.n_docs)))
    out.user_ids = people
    return out


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _shown(value) -> str:
    text = repr(value)
    return (text[:60] + "...") if len(text) > 60 else text + f" (a {type(value).__name__})"


def _run_score(score, model, state) -> float:
    """A run's score as a float (NaN ranks last); a score that fails, or returns no number, after the search was
    recorded: refused in one line that says what stays spent (nothing is released)."""
    try:
        value = score(model)
    except Exception as e:      # noqa: BLE001 -- the user's function: any failure ends the search honestly
        raise DPTopicError(f"the search's score failed on a run ({type(e).__name__}: {' '.join(str(e).split())[:160]})"
                           f" after the search was recorded: {spent_text(state)}; nothing was released or saved."
                           " Give a score that returns a number for any fitted model (a model of noise"
                           " included).") from e
    if not _is_number(value):
        raise DPTopicError(f"the search's score returned {_shown(value)} on a run, not a number, after the search"
                           f" was recorded: {spent_text(state)}; nothing was released or saved. Give a score that"
                           " returns a real number (higher is better).")
    s = float(value)
    return -math.inf if math.isnan(s) else s


def spent_text(state: dict) -> str:
    """What a search stopped after it was recorded leaves spent: its release on the ledger (where, which, how much),
    or, without a ledger, that nothing records it; a recorded release stays spent whether or not the search ends."""
    ledger, release, spent = state.get("ledger"), state.get("release"), state.get("spent")
    if ledger is None:
        return f"no ledger records what it spent ({spent}; the ledger is off)" if spent else \
            "no ledger records it (the ledger is off)"
    try:
        dataset = total_entry(ledger, release).get("dataset")
    except (DPTopicError, TypeError, ValueError):
        dataset = state.get("name")
    return (f"its release stays recorded on ledger {ledger.where} (release {release} of dataset {dataset!r}: {spent})"
            " and stays spent: stopping un-spends nothing")


def interrupted_text(state: dict) -> str:
    """The one line a Ctrl-C that stopped a search prints: what was spent and recorded, and that nothing was released
    (:class:`SearchInterrupted`)."""
    if state.get("release") is None and state.get("spent") is None:
        return "interrupted before the search was recorded or ran: nothing was spent or saved"
    return f"interrupted: the search was stopped and released nothing (no model saved); {spent_text(state)}"


@contextlib.contextmanager
def held_interrupts():
    """A Ctrl-C that lands while a release is written is held until the write has ended (and then raised), so that
    whether it was recorded is known: the line the interruption prints states it. Only on the main thread, with
    Python's own handler in place (a caller's handler is left alone)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    got = []
    previous = signal.signal(signal.SIGINT, lambda *_: got.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if got:
        raise KeyboardInterrupt


def _plain(v):
    """A candidate's parameter value as JSON holds it (numpy scalars as Python numbers)."""
    return v.item() if isinstance(v, np.generic) else v


def _keys(groups) -> list:
    out = []
    for e, n in groups:
        out += [mechanism_key(e)] * int(n)
    return out
