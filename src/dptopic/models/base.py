"""The shared collapsed-Gibbs estimator: parameters, training loop, inference, persistence.

Subclasses plug in what differs between algorithms through three hooks
(``_start``, ``_before_sweep``, ``_finish``); the maths lives in ``kernels``,
``mechanisms`` and ``accounting``.
"""
from __future__ import annotations

import copy
import difflib
import functools
import inspect
import math
import os
import warnings
import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

from .. import __version__ as _version
from .._io import load_bundle, plain_numbers, restore_nonfinite, save_bundle
from .._progress import progress_bar
from .._validation import (
    N_JOBS,
    SEED,
    VERBOSE,
    Int,
    IsNone,
    IsType,
    Options,
    Real,
    resolve_n_jobs,
    validate_params,
    validate_value,
)
from ..accounting.card import epsilon_text, privacy_card
from ..accounting.ledger import claims_no_guarantee, name_guarantee
from ..accounting.set_union import VOCABULARY_NOT_COVERED
from ..accounting.verify import Verification, check_run, verify_report
from ..backends import BACKENDS, ShardSet, make_backend, training_source
from ..corpus import Corpus, Vocabulary, as_corpus
from ..corpus.corpus import READING, TOKENS_SOURCE, VOCABULARY_CUTS, column_difference, is_text_column, is_token_lists
from ..corpus.identity import bag_digests, mix64
from ..corpus.ledger_documents import documents_of
from ..corpus.preprocess import COUNT_MATRIX, TOKEN_LISTS, keeps_urls, tokenizer_info, warn_if_other_tokenizer
from ..corpus.shards import SHARD_PATTERN
from ..dataset_ledger import charge as dataset_charge
from ..errors import (
    BudgetExceededError,
    CorruptModelError,
    DataVocabularyWarning,
    DPTopicError,
    NotFittedError,
    ParameterError,
    SeededNoiseWarning,
    UnknownParameterError,
    user_stacklevel,
)
from ..evaluation import infer_theta, umass_coherence
from ..evaluation import perplexity as _perplexity
from ..evaluation.topic_quality import ranking_scores
from ..kernels import SweepArrays
from ..kernels.sketch_pairs import among_sorted, sorted_unique
from ..protocol.document_reports import DocumentReportSet
from ..protocol.reports import ReportSet
from .registry import class_named

_CLONED_PRIVATE = weakref.WeakSet()
"""Private estimators cloned in this process (each warns once: :meth:`TopicModel.__sklearn_clone__`)."""

class Fingerprints:
    """A set of 64-bit document fingerprints held as one sorted array (8 bytes a document: a Python set of them took
    about 90 bytes, 90 MB at 10^6 documents): :meth:`count` how many of some are in it, :meth:`update` with more."""

    def __init__(self):
        self._sorted = np.zeros(0, np.uint64)

    def count(self, keys) -> int:
        """How many of ``keys`` (each, duplicates each time) are in the set."""
        keys = np.asarray(keys, dtype=np.uint64)
        return int(np.count_nonzero(among_sorted(keys, self._sorted)))

    def update(self, keys) -> None:
        keys = np.fromiter(keys, np.uint64) if not isinstance(keys, np.ndarray) else keys.astype(np.uint64)
        # by one sort of the two joined (np.unique of integers uses a hash table in NumPy 2.3 and later: about 57
        # bytes a value, 450 MB for a training part of 8 x 10^6 documents)
        self._sorted = sorted_unique(np.concatenate([self._sorted, keys]), overwrite=True)

    def clear(self) -> None:
        self._sorted = np.zeros(0, np.uint64)

    def __len__(self) -> int:
        return len(self._sorted)

    def __iter__(self):
        return iter(self._sorted.tolist())


_PRIVATE_DOCS = Fingerprints()
"""Fingerprints of the documents private fits in this process have trained on (to warn about re-use)."""

REUSE_COVERED: ContextVar = ContextVar("dptopic_reuse_covered", default=False)
"""True while a private search fits its candidates (``training.private_search``): their re-use of the documents is
covered by the search's one release, so it is not warned of."""


_KEY_SALT = 0x243F6A8885A308D3
"""The salt of the word ids' hashes in :func:`_document_keys`."""


def _document_keys(corpus: Corpus, skip_empty: bool = False) -> np.ndarray:
    """A short fingerprint of each document's bag of words (uint64: its word ids with their counts, in any order: a
    Corpus read from text and the same documents as a count matrix agree), to recognise the same document later in
    this process: the sum over its tokens of a 64-bit hash of the token's word id (:func:`~dptopic.corpus.identity.
    bag_digests`, compiled: one pass over the tokens). Not a secret and not stored; two of 10^7 distinct documents
    share one with a chance of about 3 x 10^-6, which would only say that a fit re-used a document it did not."""
    ptr = np.asarray(corpus.doc_ptr, dtype=np.int64)
    n_ids = len(corpus.vocabulary.words)       # a corpus's ids lie below it (checked when it was made)
    hashes = mix64(np.arange(n_ids, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(_KEY_SALT))
    # a block of documents at a time: a split's training part is gathered a block at a time, never whole
    blocks = [bag_digests(p, ids, hashes=hashes) for p, ids in corpus.token_blocks()]
    keys = np.concatenate(blocks) if blocks else np.zeros(0, np.uint64)
    return keys[np.diff(ptr) > 0] if skip_empty else keys


def _warn_if_documents_reused(name: str, corpus) -> None:
    """``corpus``: a Corpus, or a list of them (FedLDA's users). Counts documents, a duplicate each time it occurs."""
    parts = corpus if isinstance(corpus, (list, tuple)) else [corpus]
    keys = np.concatenate([_document_keys(c, skip_empty=True) for c in parts])
    n_docs = sum(c.n_docs for c in parts)
    again = _PRIVATE_DOCS.count(keys)
    _PRIVATE_DOCS.update(keys)
    if again and not REUSE_COVERED.get():
        warnings.warn(f"{name}: {again} of these {n_docs} training documents (exact counts of the private data:"
                      " outside the guarantee, shown here, not saved) were already used by an earlier private fit in"
                      " this process (a refit, or another candidate of a grid search): each fit spends its budget"
                      " again, and the epsilons add up; the report of each fit covers that fit alone.",
                      UserWarning, stacklevel=user_stacklevel())


def _private_training_documents(corpus: Corpus) -> int:
    """How many (non-empty) documents of ``corpus`` trained a private model earlier in this process."""
    if not _PRIVATE_DOCS:
        return 0
    return _PRIVATE_DOCS.count(_document_keys(corpus, skip_empty=True))


PLACED_MARK = "*"
"""The mark after a word that public word vectors placed in a topic, not its release (:meth:`TopicModel.placed_words`),
wherever top words are printed: ``dptopic topics``, ``dptopic train``, the report (``topic_words(...,
mark_placed=True)``); never in the words ``topic_words`` returns by default, nor in the exports' word columns."""
READS_TRAINING_DOCUMENTS = ("{name}: {n} of these {total} documents trained a private model in this process (the"
                            " same words with the same counts, in any order: a duplicate counts); what is computed"
                            " from them here (topic proportions, perplexity, coherence) reads their private words and"
                            " is outside the model's guarantee: treat it as private data{theta}")


MIN_PRIOR = 1e-8
"""Smallest Dirichlet prior (alpha, beta, eta) accepted: smaller ones make sampling weights and digammas overflow."""


@contextmanager
def fold_in_threads(model, threads: int | None = None):
    """Within the block, ``model``'s fold-in inference (``transform``, ``perplexity``) runs on ``threads`` threads
    (None: every usable core) whatever its ``n_jobs``: the result does not depend on them (each document's chain has
    its own stream). A training run's held-out scores use it, as its reading and its ledger use every core, while
    ``n_jobs`` sets the trainer's own threads."""
    from ..kernels import usable_cores  # why: the kernels load on first use

    before = getattr(model, "_fold_in_threads", None)
    model._fold_in_threads = usable_cores() if threads is None else max(1, int(threads))
    try:
        yield model
    finally:
        if before is None:
            del model._fold_in_threads
        else:
            model._fold_in_threads = before


def vocabulary_given(X) -> bool:
    """A :class:`Corpus` (or shard set) whose vocabulary its maker supplied (``vocabulary_supplied``): a private fit
    on it records the vocabulary as supplied, as ``fit(vocabulary=...)`` does."""
    return isinstance(X, (Corpus, ShardSet)) and X.vocabulary_supplied


def refuse_corpus_file(X, who: str, training: bool) -> None:
    """A path to a corpus file in a reader's format (JSONL, CSV, tab-separated, text, UCI, a folder of .txt files)
    given where documents are expected: refused in one line that names the call reading it, as the command line's
    corpus reader reads it by its extension. ``training`` (fit, partial_fit): a prepared ``.npz`` or a shard folder is
    read as such (:func:`~dptopic.backends.training_source`), so only the other files are refused."""
    if not isinstance(X, (str, os.PathLike)) or isinstance(X, str) and (len(X) > 4096 or "\n" in X):
        return
    p = Path(X)
    try:
        kind = "dir" if p.is_dir() else "file" if p.is_file() else None
    except OSError:             # a name too long for the file system: a text, not a path
        return
    if kind is None:
        return

    name, path = p.name.lower().removesuffix(".gz"), str(p)
    ext = Path(name).suffix
    into = "" if training else ", vocabulary=model.vocabulary_"      # texts read in the model's words
    if kind == "dir":
        if training and (any(p.glob(SHARD_PATTERN)) or not any(p.rglob("*.txt"))):
            return          # a shard folder, or one that training_source refuses in its own words
        what, call = "a folder", f"dptopic.Corpus.from_directory({path!r}{into})"
    elif ext == ".npz":
        if training:
            return
        what, call = "a prepared corpus", f"dptopic.Corpus.load({path!r})"
    elif name.startswith("docword"):
        what, call = "a UCI bag-of-words file", f"dptopic.Corpus.from_uci({path!r}, VOCAB_FILE)"
    elif ext in (".jsonl", ".ndjson", ".json"):
        what, call = "a JSONL file", f"dptopic.Corpus.from_jsonl({path!r}, text_field='text'{into})"
    elif ext == ".csv":
        what, call = "a CSV file", f"dptopic.Corpus.from_csv({path!r}, text_column='text'{into})"
    elif ext in (".tsv", ".tab"):
        what = "a tab-separated file"
        call = f"dptopic.Corpus.from_csv({path!r}, text_column='text', delimiter='\\t'{into})"
    else:       # one document per line, as format='text' reads a file
        what = "a text file" if ext in (".txt", ".text") else "a file"
        call = f"open({path!r}, encoding='utf-8').read().splitlines()"
        call = f"dptopic.Corpus.from_texts({call})" if training else call
    takes = ("reads a path only as a prepared corpus (.npz) or a shard folder ('dptopic corpus prepare')" if training
             else "takes documents here, not a path")
    raise DPTopicError(f"{who} {takes}, and {path!r} is {what}: read it first, documents = {call}, and pass the"
                       " documents.")


def check_topics_fit_vocabulary(n_topics: int, vocab_size: int) -> None:
    """Every trainer refuses more topics than words: such a model cannot have distinct topics."""
    if n_topics > vocab_size:
        raise ParameterError("{n_topics=} exceeds the vocabulary size {V}: give at most {V} topics or a corpus with"
                             " more distinct words.", "n_topics", n_topics, V=vocab_size)


OUTSIDE_GUARANTEE = ("outside the guarantee: these metrics were computed from documents of the private corpus"
                     " and are not accounted in the privacy report")


@dataclass
class IterationInfo:
    """What an observer of one training iteration sees (for auditing callbacks).

    ``release`` is the word–topic count matrix (V × K) that the iteration released or
    used for sampling (the true counts for plain CGS, the noisy counts for the
    private trainers); ``z`` the topic assignments after the sweep (``None`` for a
    callback with ``needs_z = False``, which spares a cluster backend gathering them).
    """

    iteration: int
    z: np.ndarray | None
    release: np.ndarray | None


# other libraries' names for a parameter, and dptopic's candidates for it (the first that the class takes is named)
_OTHER_NAMES = {
    "max_iter": ("n_iter", "n_epochs", "rounds"), "iterations": ("n_iter", "n_epochs", "rounds"),
    "passes": ("n_epochs", "n_iter"), "doc_topic_prior": ("alpha",), "topic_word_prior": ("beta", "eta"),
    "num_topics": ("n_topics",), "k": ("n_topics",), "learning_decay": ("kappa",), "decay": ("kappa",),
    "learning_offset": ("tau0",), "offset": ("tau0",), "total_samples": ("total_docs",),
    "evaluate_every": ("eval_every",), "eval_every": ("eval_every",), "random_seed": ("seed",),
    "chunksize": ("batch_size",), "learning_method": (), "perp_tol": (), "mean_change_tol": (),
    "max_doc_update_iter": (), "minimum_probability": ()}


class _AcceptsSklearnNames(type):
    """``LDA(n_components=20)`` means ``LDA(n_topics=20)``: scikit-learn's name for the number of topics is taken at
    construction and stored under dptopic's, so ``get_params``, ``clone`` and saved models keep one name."""

    def __call__(cls, *args, **kw):
        if "n_components" in kw and "n_topics" in cls._param_names():
            if "n_topics" in kw:
                raise DPTopicError(f"{cls.__name__}: give n_topics or scikit-learn's name for it, n_components, not"
                                   " both.")
            kw["n_topics"] = kw.pop("n_components")
        if "random_state" in kw and "random_state" not in cls._param_names():
            why = (" (a private trainer's seed is for tests and reproduction only: leave it unset)" if cls._private
                   else "")
            raise DPTopicError(f"{cls.__name__} takes seed=, not scikit-learn's random_state={why}; see"
                               " docs/sklearn.md.")
        names = cls._param_names()
        for old in kw:              # a parameter renamed because its meaning changed: one line naming the new one
            if old not in names and old in cls._renamed_params:
                raise DPTopicError(cls._renamed_params[old])
        for other in kw:            # a name from scikit-learn, gensim or tomotopy: say which one dptopic uses
            if other in names or other not in _OTHER_NAMES:
                continue
            ours = next((n for n in _OTHER_NAMES[other] if n in names), None)
            if ours is not None:
                raise DPTopicError(f"{cls.__name__} takes {ours}=, not {other}= (another library's name for it); see"
                                   f" help(dptopic.{cls.__name__}) for its parameters.")
            raise DPTopicError(f"{cls.__name__} has no {other}= (another library's option); its parameters are"
                               f" {', '.join(names)}.")
        charge = {k: kw.pop(k) for k in dataset_charge.PARAMS if k in kw and cls._spends_budget
                  and k not in cls._init_param_names()}       # every budget-spending estimator's (dataset_charge)
        unknown = [k for k in kw if k not in names]
        if unknown and not cls._takes_any_keyword():     # a misspelt name: one line that names the right one

            close = difflib.get_close_matches(unknown[0], names, n=1)
            raise UnknownParameterError("{cls} has no parameter {unknown!r}" + (" (did you mean {close}=?)" if close
                                                                                else "")
                                        + "; its parameters are {valid}.", unknown[0], cls=cls.__name__,
                                        unknown=unknown[0], close=close[0] if close else None, valid=", ".join(names))
        model = super().__call__(*args, **kw)
        for k, v in charge.items():
            setattr(model, k, v)
        return model


def _report_of_a_fitted_model(report):
    """``privacy_report`` of a trainer, answered for a model without its fit's ledger too: an unfitted model is
    refused in one line (``NotFittedError``, never an ``AttributeError``), and a loaded one answers with the report
    it was saved with (``privacy_``), which is the report its fit made."""
    if getattr(report, "_answers_unfitted", False):
        return report

    @functools.wraps(report)
    def privacy_report(self) -> dict:
        try:
            return report(self)
        except AttributeError:
            saved = getattr(self, "privacy_", None)
            if not hasattr(self, "components_"):
                raise NotFittedError(f"this {type(self).__name__} is not fitted yet: it has no privacy report; call"
                                     " fit() or dptopic.load() first.") from None
            if isinstance(saved, dict) and getattr(self, "ledger_", None) is None:
                return copy.deepcopy(saved)     # a loaded model: the report its fit made, as saved
            raise

    privacy_report._answers_unfitted = True
    return privacy_report


class TopicModel(TransformerMixin, BaseEstimator, metaclass=_AcceptsSklearnNames):
    """What every dptopic estimator answers, Gibbs and variational alike, with scikit-learn's conventions:
    ``fit``, ``transform``, ``fit_transform``, ``score`` (higher is better), ``perplexity(X, mode=...)``,
    ``components_`` (K x V, rows sum to 1), ``get_feature_names_out``, ``get_params(deep=True)``/``set_params``
    (so ``sklearn.base.clone`` works), ``topic_words``, ``coherence``, and ``save``/``dptopic.load``;
    ``training_stats_`` (what a fitted model records of its training corpus) and ``renamed_parameter(name)`` (the line
    that refuses a parameter name given up because its meaning changed).
    Not used directly: see :class:`LDA`, :class:`HDPLDA`, :class:`OnlineVB`, :class:`DPSVI`, ..."""

    marks_supported_topics = False
    """Whether ``fit`` says which topics stand above the noise of its releases (``supported_topics_``)."""

    _parameter_constraints: dict = {"n_topics": [Int(1, 100_000)], "seed": SEED, "verbose": VERBOSE}
    _private = False
    _never_private = False  # True for the trainers that add no noise: a saved report of theirs never claims a guarantee
    # True where a fit spends a privacy budget on the data it is given (a central private trainer): a refit or a clone's
    # fit spends it again. A class that sets _private gets the same value unless it sets this too (LocalDocumentLDA:
    # private, but it fits reports whose noise the contributors drew, so refitting them is post-processing)
    _spends_budget = False
    # parameter names given up because their meaning changed: name -> the one line that refuses it (constructor and
    # set_params), naming the new parameter; never a silent alias, since the old meaning is not the new one's
    _renamed_params: dict = {}
    # the dataset ledger (dataset_ledger/charge.py): parameters of every estimator whose fit spends a budget
    ledger = None
    dataset = None

    @classmethod
    def renamed_parameter(cls, name: str) -> str | None:
        """The one line that refuses ``name``, a parameter this estimator gave up because its meaning changed (it
        names the parameter to give instead: ``FedLDA.renamed_parameter("delta")``); None for any other name. The
        constructor and ``set_params`` refuse such a name with it; a front door that takes settings by name
        (``dptopic audit``'s settings) refuses it the same way."""
        return None if name in cls._param_names() else cls._renamed_params.get(name)

    @property
    def training_stats_(self) -> dict:
        """What the model records of its training corpus, saved as ``model.json``'s ``"training"`` (a copy; empty
        before ``fit``): always ``vocab_size``; ``n_docs`` and ``n_tokens`` where the trainer's guarantee lets it
        publish them (a trainer whose guarantee protects a whole document keeps only the released vocabulary size,
        since the exact counts would undo it); a streaming trainer's ``n_batches`` and ``n_docs_seen``."""
        return dict(getattr(self, "_train_stats", None) or {})

    def drop_corpus_counts(self) -> None:
        """Forget the exact numbers of documents and tokens of the training corpus (``training_stats_`` keeps the rest):
        what a guarantee that protects a whole document requires, as when a private vocabulary is composed with the
        fit (:func:`dptopic.training.fdptm.compose_privacy`)."""
        stats = getattr(self, "_train_stats", None)
        if isinstance(stats, dict):
            self._train_stats = {k: v for k, v in stats.items() if k not in ("n_docs", "n_tokens")}

    @classmethod
    def _params_from_saved(cls, params: dict) -> dict:
        """The constructor parameters of a ``model.json`` written by this or an older dptopic: a class whose
        parameters changed name or meaning maps an older folder's onto today's (the figure keeps its meaning)."""
        return params

    def _planned_spend(self, report: dict):
        """What a fit with these parameters spends (:class:`~dptopic.accounting.verify.RunPlan`), to check a saved
        report's events against; None where the parameters do not fix it. ``report`` gives what the fit chose
        and the report records as public (a vocabulary size), never a figure to be checked."""
        return None

    def _budget_of(self, report: dict) -> tuple | None:
        """The ``(epsilon, delta)`` budget ``from_budget`` calibrated the noise to: this session's, or after
        :func:`~dptopic.load` the one the saved report records (the figures the user asked for, not ones computed
        from the events), so that ``privacy verify`` holds a saved model to it too; None without one."""
        given = getattr(self, "_budget", None)
        if given:
            return given
        b = report.get("budget") if isinstance(report, dict) else None
        if isinstance(b, dict) and b.get("epsilon") is not None and b.get("delta") is not None:
            return float(b["epsilon"]), float(b["delta"])
        return None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "_private" in vars(cls) and "_spends_budget" not in vars(cls):
            cls._spends_budget = cls._private
        if "privacy_report" in vars(cls):
            cls.privacy_report = _report_of_a_fitted_model(vars(cls)["privacy_report"])

        # inspect.signature(cls) would read the metaclass's (*args, **kw): state the constructor's own parameters
        sig = inspect.signature(cls.__init__)
        params = [p for n, p in sig.parameters.items() if n != "self"]
        if cls._spends_budget:      # charged to its dataset's ledger (dataset_ledger/charge.py)
            if callable(getattr(cls, "fit", None)):
                cls.fit = dataset_charge.charged(cls.fit, documents_of)
            params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
                       for k in dataset_charge.PARAMS if k not in sig.parameters]
            params.sort(key=lambda p: p.kind)
        cls.__signature__ = sig.replace(parameters=params)

    # ------------------------------------------------------------------ params
    @classmethod
    def _init_param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    @classmethod
    def _param_names(cls) -> list[str]:
        names = cls._init_param_names()
        return names + [k for k in dataset_charge.PARAMS if k not in names] if cls._spends_budget else names

    @classmethod
    def _takes_any_keyword(cls) -> bool:
        """Whether ``__init__`` has a ``**kwargs`` of its own (which then says what it refuses)."""
        return any(p.kind == p.VAR_KEYWORD for p in inspect.signature(cls.__init__).parameters.values())

    def get_params(self, deep: bool = True) -> dict:
        """The constructor parameters (scikit-learn's ``get_params``; no estimator is nested, so ``deep`` changes
        nothing)."""
        return {k: getattr(self, k) for k in self._param_names()}

    def __sklearn_clone__(self):
        """scikit-learn's ``clone``, sharing a Dask ``client`` (a connection, which cannot be copied), with two rules
        for a private trainer (model selection and cross-validation clone
        the estimator in the calling process before any fit, also when the fits run in other processes):

        - a ``numpy.random.Generator`` given as ``seed`` is not copied but spawned, so that two clones fitted on
          overlapping documents never draw the same noise (a difference of two releases with equal noise shows the
          difference of their data exactly);
        - the first clone of an estimator whose fit spends a budget (``_spends_budget``) warns that every fit of a
          clone spends the budget again: with ``n_jobs > 1`` the fits run in other processes, which the warning on
          re-used documents does not see.
        """
        # a Dask client (a connection) is shared, never copied: scikit-learn's clone would deep-copy it and fail
        client = getattr(self, "client", None)
        seed = getattr(self, "seed", None)
        spawn = self._private and isinstance(seed, np.random.Generator)
        if client is not None:
            self.client = None
        if spawn:
            self.seed = None                     # not deep-copied: the clone gets its own stream below
        try:
            twin = super().__sklearn_clone__()
        finally:
            if client is not None:
                self.client = client
            if spawn:
                self.seed = seed
        if client is not None:
            twin.client = client
        if spawn:
            twin.seed = seed.spawn(1)[0]
        if not self._spends_budget:
            return twin
        warned = self in _CLONED_PRIVATE
        _CLONED_PRIVATE.add(self)
        _CLONED_PRIVATE.add(twin)                # a clone's clones (a search clones its copy again) say it once
        if not warned:
            warnings.warn(f"{type(self).__name__} was cloned (a grid search or cross-validation): every fit of a clone"
                          " on the private documents spends its budget again and the epsilons add up; fits in other"
                          " processes (n_jobs > 1) are not seen by the warning on re-used documents. Choose"
                          " hyper-parameters on public data (docs/sklearn.md).", UserWarning, stacklevel=user_stacklevel())
        return twin

    def __getstate__(self):
        """Pickling (``pickle``, ``joblib.dump``, ``copy.deepcopy``) is refused once the model is fitted: its sampler
        state holds the training documents, their topic assignments and noise-free counts, so a pickle of a private
        model would publish the private data (a trainer of randomized reports, LocalDocumentLDA, holds no documents
        and is refused for consistency). An unfitted estimator (its parameters only) still pickles, as
        scikit-learn's parallel search needs."""
        fitted = [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]
        if fitted:
            why = ("its state holds the training documents" if self._spends_budget or not self._private else
                   "dptopic keeps fitted models in checked model folders, not pickles")  # reports only: no documents
            raise DPTopicError(f"a fitted {type(self).__name__} is never pickled ({why}):"
                               " save it with model.save(DIR) and read it back with dptopic.load(DIR).")
        return super().__getstate__()

    @property
    def n_components(self) -> int:
        """scikit-learn's name for ``n_topics`` (read, set, and accepted by the constructor and ``set_params``)."""
        try:
            return self.n_topics
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} has no number of topics (n_topics)") from None

    @n_components.setter
    def n_components(self, value) -> None:
        self.set_params(n_components=value)

    def set_params(self, **params):
        if "n_components" in params and "n_topics" in self._param_names():
            if "n_topics" in params:
                raise DPTopicError(f"{type(self).__name__}: give n_topics or scikit-learn's name for it, n_components,"
                                   " not both.")
            params["n_topics"] = params.pop("n_components")
        for k, v in params.items():
            if k not in self._param_names() and k in self._renamed_params:
                raise DPTopicError(self._renamed_params[k])
            if k not in self._param_names():
                raise DPTopicError(f"unknown parameter {k!r} for {type(self).__name__}; valid: {', '.join(self._param_names())}.")
            setattr(self, k, v)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True          # a document-term count matrix, as CountVectorizer writes it
        tags.input_tags.positive_only = True   # counts
        tags.requires_fit = True
        # a private trainer's noise is fresh unless a seed is forced; an unseeded one (private or not: scikit-learn
        # can seed only random_state, which dptopic's estimators name seed) draws fresh coins at every fit
        tags.non_deterministic = bool(self._private or getattr(self, "seed", None) is None)
        return tags

    def __repr__(self, N_CHAR_MAX=700) -> str:
        ps = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({ps})"

    def _rng(self) -> np.random.Generator:
        s = self.seed
        return s if isinstance(s, np.random.Generator) else np.random.default_rng(s)

    @property
    def is_private(self) -> bool:
        """Whether this trainer's fit is differentially private: it adds calibrated noise and its report claims a
        guarantee (figures computed from the training documents are then outside that guarantee)."""
        return bool(type(self)._private)

    def validate_parameters(self) -> None:
        """Check the parameters against their rules, as ``fit`` does first: a bad value is refused in one line that
        names it (:class:`~dptopic.errors.DPTopicError`), before any document is read."""
        self._validate()

    def _validate(self) -> None:
        params = self.get_params()
        validate_params(params, self._parameter_constraints)
        self._params_at_validate = dict(params)  # what the fit about to start is trained with

    def _require_secure_noise(self) -> None:
        """A secure fit checks, before it reads any data, that OpenDP (which draws its noise) imports: a missing
        OpenDP is then one line at once, not after a pass over the corpus."""
        if getattr(self, "secure", False) is True:
            from ..mechanisms.laplace import require_opendp  # looked up when called: tests patch it at its source

            require_opendp()

    def _record_plan(self) -> None:
        """The release plan this fit reserved (``release_plan`` over the fitted vocabulary), in ``privacy_["plan"]``:
        the privacy card's "planned and spent" reads it beside the events spent. None for a trainer without one."""
        planner = getattr(self, "release_plan", None)
        vocab = getattr(self, "vocabulary_", None)
        if planner is None or not isinstance(getattr(self, "privacy_", None), dict):
            return

        try:
            plan = planner(n_words=None if vocab is None else len(vocab))
        except DPTopicError:        # settings a saved report no longer fixes: no plan is stated
            return
        if plan.releases:
            self.privacy_["plan"] = plain_numbers(plan.as_dict())

    def _name_guarantee(self) -> None:
        """The guarantee's extent in one field of ``privacy_`` (``full``, ``partial`` or ``none``), as the privacy card
        names it; called whenever the report is (re)built."""
        if self.privacy_.get("private"):
            partial = self.privacy_.get("vocabulary_source") == "data" or self.privacy_.get("guarantee") == "partial"
            self.privacy_["guarantee"] = ("none" if claims_no_guarantee(self.privacy_) else "partial" if partial
                                          else self.privacy_.get("guarantee", "full"))

    def _set_fitted(self, corpus=None) -> None:
        """End of a successful fit: the privacy report, and the parameters that produced this state (a later
        ``set_params`` changes the next fit, never what ``save`` writes for this one). A private fit on documents
        that an earlier private fit in this process already used (a refit, a grid search) warns: the budgets add."""
        if self._spends_budget and (isinstance(corpus, Corpus) or isinstance(corpus, list)
                                    and all(isinstance(c, Corpus) for c in corpus)):
            _warn_if_documents_reused(type(self).__name__, corpus)
        self.privacy_ = plain_numbers(self.privacy_report())
        self._record_plan()
        # the tokeniser of this version of dptopic (a refit replaces a loaded one), the words of a count matrix, or the
        # caller's tokens

        # a Corpus, or a shard set (whose first shard's metadata it keeps)
        described = isinstance(corpus, Corpus) or isinstance(getattr(corpus, "metadata", None), dict)
        came_with = corpus.metadata.get(TOKENS_SOURCE) if described else None
        self.tokenizer_ = tokenizer_info(COUNT_MATRIX if getattr(self, "_input_names", None) is not None else
                                         TOKEN_LISTS if getattr(self, "_input_tokens", False) else came_with)
        reading = corpus.metadata.get(READING) if described else None
        if isinstance(reading, dict) and "source" not in self.tokenizer_:
            if reading.get("keep_urls") is True:    # the addresses' words were counted: said, and read so again
                self.tokenizer_ = tokenizer_info(keep_urls=True)
            self.tokenizer_["reading"] = dict(reading)     # how the training text was read (settings, not data)

        cuts = corpus.metadata.get(VOCABULARY_CUTS) if described else None
        if isinstance(cuts, dict):      # the settings that chose the vocabulary from the data (max_vocab, min_df, ...)
            self.tokenizer_[VOCABULARY_CUTS] = dict(cuts)
        if self._private and getattr(self, "seed", None) is not None:
            warnings.warn(f"{type(self).__name__} with an explicit seed: its noise can be regenerated by whoever knows"
                          " the seed, so any privacy it gives holds only while the seed stays secret (seeds are for"
                          " tests and reproduction; leave seed=None otherwise).",
                          SeededNoiseWarning, stacklevel=user_stacklevel())
        self._name_guarantee()
        if self.privacy_.get("private") and self.privacy_.get("vocabulary_source") == "data":
            # DP set union chooses words per document: under the user unit only a public list covers them
            privately = (" (a private choice of words is per document, not per person)" if
                         self.privacy_.get("unit") == "user" else " or choose one privately ({private_vocabulary=})")
            warnings.warn(DataVocabularyWarning(
                "{model}: the vocabulary was chosen from the training documents, so which words it holds is not covered"
                " by the guarantee (the privacy card says partial): pass a public vocabulary ({vocabulary=})"
                + privately + ".", "vocabulary", model=type(self).__name__), stacklevel=user_stacklevel())
        if self.privacy_.get("private"):
            self.privacy_["fits"] = ("this report covers this fit alone: every other private fit on the same documents"
                                     " (a refit, each candidate of a grid search) spends its own budget, and the"
                                     " epsilons add up (basic composition)")
        self._fit_params_ = dict(getattr(self, "_params_at_validate", None) or self.get_params())
        self._record_input_features(getattr(self, "_input_names", None))

    def _load_extra(self, arrays) -> None:
        pass

    def privacy_report(self) -> dict:
        return {"private": False}

    # --------------------------------------------------------------- inference
    @property
    def _jobs(self) -> int:
        """``n_jobs`` as a number of threads (scikit-learn's convention: None is 1, -1 every core)."""
        return resolve_n_jobs(getattr(self, "n_jobs", 1))

    def _fold_in_jobs(self) -> int:
        """Threads for fold-in inference: the model's ``n_jobs`` where it has one (the result does not depend on it),
        or those :func:`fold_in_threads` sets for a while."""
        if getattr(self, "_fold_in_threads", None):
            return self._fold_in_threads
        try:
            return self._jobs
        except (TypeError, ValueError):  # a value fit() would refuse: fold-in still runs, on one thread
            return 1

    def _check_fitted(self) -> None:
        if not hasattr(self, "components_"):
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call fit() or dptopic.load() first.")

    def _warn_if_other_tokenizer(self) -> None:
        """Raw text read into a model whose words were saved by another version of the tokeniser: some words may be
        split or folded differently, so say so (token lists and counts are read exactly)."""
        warn_if_other_tokenizer(getattr(self, "tokenizer_", None), stacklevel=user_stacklevel(), words=self.vocabulary_.words)

    def _as_model_corpus(self, X, allow_empty: bool = False) -> Corpus:
        """``X`` read into the model's vocabulary, one row per input document. ``allow_empty`` (``transform``): input
        without a single word of the vocabulary gives rows of the prior alone, with a warning, as each such row does
        inside a larger batch; elsewhere (scores, perplexity) it is refused."""
        self._check_fitted()
        # the parameters inference reads (the document-topic prior, DocDPEM's inner iterations): one changed by
        # set_params since the fit is checked as fit checks it, not turned into NaN proportions or a ZeroDivisionError
        validate_params({k: v for k, v in self.get_params().items() if k in ("alpha", "inner")},
                        self._parameter_constraints)
        refuse_corpus_file(X, type(self).__name__, training=False)
        text = False                    # read from raw text (a tokeniser chose the words), not counts or tokens
        if isinstance(X, Corpus):
            c = X if X.vocabulary == self.vocabulary_ else X.restrict(self.vocabulary_, drop_empty=False)
        elif isinstance(X, (list, tuple)) and X and all(isinstance(t, str) for t in X):
            text = True
            self._warn_if_other_tokenizer()
            c = Corpus.from_texts(X, vocabulary=self.vocabulary_, drop_empty=False,  # one row per text
                                  lowercase="match", keep_urls=keeps_urls(getattr(self, "tokenizer_", None)))
        elif is_text_column(X):
            text = True
            self._warn_if_other_tokenizer()
            c = Corpus.from_texts([str(t) for t in X], vocabulary=self.vocabulary_, drop_empty=False,
                                  lowercase="match", keep_urls=keeps_urls(getattr(self, "tokenizer_", None)))
        elif is_token_lists(X):
            c = Corpus.from_tokens(X, vocabulary=self.vocabulary_, drop_empty=False)  # one row per document
        else:
            X = self._frame_in_model_order(X)
            matrix = (sp.issparse(X) or isinstance(X, np.ndarray)) and X.ndim == 2
            if matrix and X.shape[1] != len(self.vocabulary_):
                raise DPTopicError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting"
                                   f" {len(self.vocabulary_)} features as input: its columns must be the words of the"
                                   " model's vocabulary, in its order (model.vocabulary_).")
            if matrix and X.shape[0] == 0:
                raise DPTopicError(f"X has 0 documents (shape={X.shape}) while a minimum of 1 is required: give at"
                                   " least one document.")
            if matrix and (X.count_nonzero() == 0 if sp.issparse(X) else not np.any(X)):  # said below, in one line
                c = Corpus(np.zeros(X.shape[0] + 1, dtype=np.int64), np.zeros(0, dtype=np.int32), self.vocabulary_)
            else:
                c = as_corpus(X, vocabulary=self.vocabulary_.words)  # other array-likes: from_bow checks the width
        if c.n_tokens == 0:
            hint = ("give text in the language and domain of the training corpus." if text else
                    "its counts are all zero (or its tokens all outside the vocabulary); give documents with words"
                    " of the model's vocabulary.")
            odd = [w for w in self.vocabulary_.words[:2000] if not w.isalpha()]
            if text and odd and len(odd) * 2 >= min(len(self.vocabulary_), 2000):  # a vectorizer's n-grams, digits
                hint = (f"the model's words were made by another tokeniser (e.g. {odd[0]!r}), which dptopic's never"
                        " produces from text: pass counts made by the model's own vectorizer.")
            if not allow_empty:
                raise DPTopicError("none of the input's words is in the model's vocabulary: there is nothing to score"
                                   f" or learn from, and the model is unchanged; {hint}")

            warnings.warn(f"none of the input's words is in the model's vocabulary: every row is the prior alone; {hint}",
                          UserWarning, stacklevel=user_stacklevel())
        # score() has read X already (and warned) and hands the corpus it made to perplexity(): say it once
        again = X is getattr(self, "_scoring_corpus", None)
        n_seen = _private_training_documents(c) if self._private and not again else 0
        if n_seen:
            theta = ("; for the training documents, training_theta_ (released at fit time) is covered"
                     if hasattr(type(self), "_training_theta") else "")
            warnings.warn(READS_TRAINING_DOCUMENTS.format(name=type(self).__name__, n=n_seen, total=c.n_docs,
                                                          theta=theta), UserWarning, stacklevel=user_stacklevel())
        return c

    def coherence(self, X, top_n: int = 10, variant: str = "mimno", per_topic: bool = False):
        """Average UMass coherence of the topics on ``X`` (Mimno et al. 2011); ``per_topic``: one value per topic
        (NaN where a ranked top word occurs in no document of ``X``, which the average leaves out with a warning)."""
        return umass_coherence(self, self._as_model_corpus(X), top_n, variant, per_topic=per_topic)

    word_ranking = None
    """How :meth:`topic_words` orders each topic's words: None, by probability; a model that shows them otherwise names
    its ranking here (``DocDPCooccurrence``: by relevance, :func:`dptopic.evaluation.topic_quality.relevance`)."""

    def topic_words(self, n: int = 10, weights: bool = False, ranking=None, estimated_only: bool = True,
                    mark_placed: bool = False) -> list:
        """The first ``n`` words of each topic in the model's display order (:attr:`word_ranking`: most probable first
        unless the model ranks by relevance), or in ``ranking``: ``"probability"``, ``"relevance"`` or
        ``{"by": "relevance", "lambda": x}``. ``weights``: each word with its probability in the topic.

        ``estimated_only`` (default): of a private model whose release estimated only some words per topic
        (:meth:`estimated_words`), those words alone, and the words public word vectors placed in the topic
        (:meth:`placed_words`): the others carry a share of each topic that the release did not estimate per topic
        (the same tail in every topic), and a topic would otherwise show them as its own (a topic has fewer than
        ``n`` words when its release estimated fewer). False: every word, as ranked.

        The words are the vocabulary's, as a caller indexes with them; which of them public word vectors placed rather
        than the release estimated is :meth:`placed_words` (``DocDPCooccurrence``'s ``placed_words_``).
        ``mark_placed``: for printing, a placed word ends with :data:`PLACED_MARK` (``"gun*"``), as ``dptopic topics``
        and the report print it."""
        self._check_fitted()
        validate_value("n", n, [Int(1, None)])
        scores = np.asarray(ranking_scores(self, ranking), dtype=np.float64)
        placed = self.placed_words()
        shown = self.estimated_words() if estimated_only else None
        if shown is not None and placed is not None:
            shown = shown | placed
        if shown is not None:
            scores = np.where(shown, scores, -np.inf)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :n]

        def word(k, i):
            w = self.vocabulary_[i]
            return w + PLACED_MARK if mark_placed and placed is not None and placed[k, i] else w

        return [[(word(k, i), float(row[i])) if weights else word(k, i) for i in top
                 if shown is None or shown[k, i]]
                for k, (row, top) in enumerate(zip(self.components_, order))]

    def placed_words(self):
        """Which words public knowledge, not the release, placed in each topic (``DocDPCooccurrence`` with public word
        vectors: words outside its release moved towards their nearest released words' topics): a topics x words
        boolean array, or None (every other model). They are shown marked (:data:`PLACED_MARK`), never as
        learned."""
        self._check_fitted()
        return None

    def estimated_words(self):
        """Which words the model's release estimated in each topic: a topics x words boolean array, or None when every
        word of every topic was (every model but the document-level ones and FedLDA's reports over the vocabulary's
        first words). Read from the fitted model alone (post-processing)."""
        self._check_fitted()
        return None

    def background_topic_ids(self) -> list:
        """Indices of the topics that hold corpus-wide words rather than a theme (``DocDPCooccurrence``'s background
        topics, its last ones); empty for every other model. Read from the fit, or from a saved model's report."""
        self._check_fitted()
        n = getattr(self, "n_background_topics_", None)
        if n is None:
            params = (getattr(self, "privacy_", None) or {}).get("parameters") or {}
            n = params.get("background_topics") if isinstance(params, dict) else 0
        K = self.components_.shape[0]
        n = int(n) if isinstance(n, (int, np.integer)) and not isinstance(n, bool) and 0 <= n < K else 0
        return list(range(K - n, K))

    # ------------------------------------------------------------- persistence
    def _extra_arrays(self) -> dict:
        return {}

    def _fitted_value(self, name: str):
        """A constructor parameter as the model was fitted with it. Inference (``transform``, ``perplexity``) reads
        this one, so a ``set_params`` after a fit changes the next fit only, as scikit-learn's LDA keeps its fitted
        ``doc_topic_prior_``, and a model answers the same in process and after ``save``/``load`` (which writes
        these values)."""
        params = None if getattr(self, "_scoring_mid_fit", False) else getattr(self, "_fit_params_", None)
        return params[name] if params and name in params else getattr(self, name)

    @contextmanager
    def _mid_fit_scoring(self):
        """Inside a fit (a per-epoch held-out score): inference reads the parameters this fit trains with, not those
        of the fit before it."""
        self._scoring_mid_fit = True
        try:
            yield
        finally:
            self._scoring_mid_fit = False

    def _saved_params(self) -> dict:
        """The constructor parameters written to model.json; subclasses drop what must not be saved.

        A private model never writes its seed (nor any Generator state): whoever knows the seed
        could regenerate the noise and remove it.
        """
        params = getattr(self, "_fit_params_", None) or self.get_params()
        params = {k: v for k, v in params.items() if k not in dataset_charge.PARAMS or k in self._init_param_names()}
        return {k: (None if isinstance(v, np.random.Generator) or k == "client" or (self._private and k == "seed")
                    else v) for k, v in params.items()}

    def save(self, directory, *, save_metrics: bool | None = None) -> str:
        """Write ``model.json`` + ``.npy`` arrays into ``directory`` atomically (no pickle).

        A private model's evaluation metrics (``metrics_``, computed from the private corpus
        outside the ledger) are written only with ``save_metrics=True``, and then labelled as
        outside the guarantee; a model is private here when it is a private trainer or its privacy
        report claims a guarantee (LPLDA, OLPLDA). Non-private models save their metrics by default.
        """
        self._check_fitted()
        # a trainer of randomized reports (LPLDA, OLPLDA) is not a central private trainer (_private), but its report
        # claims a guarantee all the same: metrics computed beside it are outside that guarantee too
        private = self._private or bool((getattr(self, "privacy_", None) or {}).get("private"))
        params = self._saved_params()
        metrics = getattr(self, "metrics_", {})
        keep_metrics = (not private) if save_metrics is None else bool(save_metrics)
        meta = {"format": "dptopic-model", "version": 1, "dptopic_version": _version,
                "class": type(self).__name__, "params": params, "vocabulary": self.vocabulary_.words,
                "metrics": metrics if keep_metrics else {}, "training": getattr(self, "_train_stats", {}),
                "log_likelihood": list(getattr(self, "log_likelihood_", [])),
                "privacy": self.privacy_,
                "tokenizer": getattr(self, "tokenizer_", None) or tokenizer_info()}
        names = getattr(self, "feature_names_in_", None)
        if names is not None:   # fitted on a DataFrame: a loaded model checks columns at transform as this one does
            meta["feature_names_in"] = ([str(n) for n in names] if [str(n) for n in names] != list(self.vocabulary_.words)
                                        else True)

        meta["privacy_card"] = privacy_card(self.privacy_, type(self).__name__)  # one schema for every trainer
        if private and keep_metrics and metrics:
            meta["metrics_guarantee"] = OUTSIDE_GUARANTEE
        arrays = {"components": self.components_, **self._extra_arrays()}
        out = str(save_bundle(directory, meta, arrays))
        dataset_charge.record_saved(self, out)      # the release's model folder, on its dataset's ledger
        return out

    @classmethod
    def load(cls, directory) -> "TopicModel":
        """The model saved in ``directory``; ``SomeModel.load`` refuses a folder that holds another kind of model
        (``dptopic.load`` takes any)."""
        model = load(directory)
        if not isinstance(model, cls):
            raise DPTopicError(f"{directory} holds a {type(model).__name__} model, not a {cls.__name__}: load it with"
                               f" {type(model).__name__}.load or dptopic.load.")
        return model

    # --------------------------------------------------------- scikit-learn
    def _record_input_features(self, names) -> None:
        """``feature_names_in_``/``n_features_in_`` as scikit-learn sets them: names from a DataFrame's columns."""
        if names is not None:
            self.feature_names_in_ = np.asarray(names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.n_features_in_ = len(self.vocabulary_)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of ``transform``'s columns, one per topic: ``topic0``, ``topic1``, ... ``input_features``, if given,
        must be the model's input columns, as scikit-learn checks them (``feature_names_in_`` where the fit had names,
        else as many names as the vocabulary has words)."""
        self._check_fitted()
        if input_features is not None:
            given = np.asarray(input_features, dtype=object)
            names = getattr(self, "feature_names_in_", None)
            if given.ndim != 1 or len(given) != len(self.vocabulary_):
                raise DPTopicError(f"input_features should have length equal to number of features"
                                   f" ({len(self.vocabulary_)}, the words of the model's vocabulary), got"
                                   f" {len(given) if given.ndim == 1 else f'shape {given.shape}'}: leave it out, or"
                                   " pass the model's input columns, one name each.")
            if names is not None and not np.array_equal(given, names):
                raise DPTopicError(f"input_features is not equal to feature_names_in_"
                                   f" ({column_difference(given, names)}): pass model.feature_names_in_, or leave"
                                   " input_features out.")
        return np.asarray([f"topic{k}" for k in range(self.components_.shape[0])], dtype=object)

    def score(self, X, y=None) -> float:
        """Held-out log-likelihood of ``X`` (higher is better, as scikit-learn's ``score``): ``-N log perplexity``
        with the estimator's own perplexity in ``mode="paper"`` (the fold-in likelihood for the Gibbs trainers, the
        variational bound for the variational ones), N the tokens of ``X`` in the model's vocabulary."""
        c = self._as_model_corpus(X)
        self._scoring_corpus = c
        try:
            return float(-c.n_tokens * math.log(self.perplexity(c, mode="paper")))
        finally:
            del self._scoring_corpus

    def fit_transform(self, X, y=None, **kw) -> np.ndarray:
        if isinstance(X, (ReportSet, DocumentReportSet)):   # before fit: a refused call changes nothing
            raise DPTopicError(f"fit_transform needs documents, and {type(X).__name__} holds randomized reports, not"
                               f" documents: call fit(reports), then transform(documents) where the documents are"
                               " (on the contributor's side, since their topic proportions read their words).")
        return self.fit(X, **kw).transform(X)

    def _frame_in_model_order(self, X):
        """A DataFrame of counts, or a count matrix of :class:`dptopic.corpus.vectorizer.CountVectorizer` (which carries its
        words), at transform: its columns must be the words the model was fitted on, in that order
        (``feature_names_in_``, else the vocabulary), as scikit-learn requires; then its values."""
        cols = getattr(X, "columns", None)
        frame = cols is not None and hasattr(X, "to_numpy")
        words = None if frame or not sp.issparse(X) else getattr(X, "feature_names", None)
        if not frame and (words is None or len(words) != X.shape[1]):
            if hasattr(self, "feature_names_in_") and (sp.issparse(X) or isinstance(X, np.ndarray)):
                # as scikit-learn: the columns are taken in order as the model's words
                warnings.warn(f"X does not have valid feature names, but {type(self).__name__} was fitted with feature"
                              " names: its columns are taken in order as the model's words.", UserWarning,
                              stacklevel=user_stacklevel())
            return X
        names = [str(c) for c in (cols if frame else words)]
        values = X.to_numpy() if frame else X
        if not hasattr(self, "feature_names_in_"):  # fitted without column names: scikit-learn only warns
            # (a vectorizer's matrix is checked against the vocabulary when it is read: Corpus.from_bow)
            if frame and names != [str(w) for w in self.vocabulary_.words]:
                warnings.warn(f"X has column names, but {type(self).__name__} was fitted without them: its columns are"
                              " taken in order as the model's words.", UserWarning, stacklevel=user_stacklevel())
            return values
        what = column_difference(names, self.feature_names_in_)
        if what:
            if not frame:
                raise DPTopicError(f"X's columns are the words of another vectorizer, not those {type(self).__name__}"
                                   f" was fitted on ({what}): count the texts with the vectorizer the model was"
                                   " fitted after (pipeline[0].transform(texts)), or pass the texts themselves.")
            raise DPTopicError(f"X's columns are not the words {type(self).__name__} was fitted on ({what}): select them"
                               " in the model's order, X[list(model.feature_names_in_)] (or model.vocabulary_.words).")
        return values

    def _as_input(self, X):
        """A DataFrame becomes its values, its columns the vocabulary (``feature_names_in_``); a count matrix from
        :class:`dptopic.corpus.vectorizer.CountVectorizer` brings its words along."""
        refuse_corpus_file(X, type(self).__name__, training=True)
        cols = getattr(X, "columns", None)
        self._input_names = None
        self._input_tokens = is_token_lists(X)          # documents tokenised by the caller (gensim's, tomotopy's way)
        # column names are a public vocabulary only when a vectorizer was given them: a DataFrame's columns, or the
        # words a vectorizer learned, may come from the private documents (pass vocabulary= to state they are public)
        self._input_names_public = False
        if cols is not None and hasattr(X, "to_numpy"):
            self._input_names = [str(c) for c in cols]
            return X.to_numpy(), self._input_names
        names = getattr(X, "feature_names", None)
        if names is not None and len(names) == X.shape[1]:
            self._input_names = [str(w) for w in names]
            self._input_names_public = bool(getattr(X, "public_vocabulary", False))
            return X, self._input_names
        return X, None


def replay_budget_message(n_replays: int, detail: str) -> str:
    """The error of a run whose replays, after a lost Dask worker, would spend past its privacy budget."""
    detail = detail.split(";")[0].removeprefix("privacy budget exceeded: ")
    return (f"privacy budget exceeded after a Dask worker was lost: {n_replays} replayed sweep(s) of its shards are"
            f" new noisy releases, and with them the run would exceed its budget ({detail}). A run trained to a"
            f" budget (epsilon=, from_budget, a word-level total) spends all of it on the planned iterations and has no"
            f" headroom for replays: leave headroom (plan the run below the budget you can spend: HDPLDA's"
            f" epsilon_laplace, eps_L per iteration, whose replays raise the reported epsilon instead of stopping the"
            f" run), or train on threads (see docs/scaling_cluster.md, Recovery).")


class GibbsTopicModel(TopicModel):
    """The collapsed-Gibbs estimators' training loop and fold-in inference. Not used directly: see :class:`LDA`,
    :class:`HDPLDA`, :class:`CDPLDA`."""

    # Finite upper bounds keep every derived quantity finite (K·alpha, V·beta, K×V tables).
    _parameter_constraints: dict = {
        "n_topics": [Int(1, 100_000)],
        "alpha": [Real(MIN_PRIOR, 1e6, "both")],   # below MIN_PRIOR the sampler's weights underflow to 0/0
        "beta": [Real(MIN_PRIOR, 1e6, "both")],
        "n_iter": [Int(1, 10_000_000)],
        "seed": SEED,
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
        "backend": [Options(BACKENDS)],
        "parallel": [Options(("adlda", "partition"))],
        "client": [IsNone(), IsType((object,), "a distributed.Client")],
    }
    _kernel = "dense"
    # where and how sweeps run; estimators whose constructor does not take these run on threads
    backend = "threads"
    parallel = "partition"
    client = None

    # ---------------------------------------------------------------- training
    def fit(self, X, y=None, *, vocabulary=None, callback: Callable[[IterationInfo], None] | None = None):
        """Train on a :class:`Corpus`, a document-term matrix (scipy.sparse/dense), a list of strings, or
        corpus shard files (a directory or list of ``.npz`` from :func:`~dptopic.corpus.shards.write_shards`).

        ``vocabulary`` (a list of words or a :class:`Vocabulary`) fixes the model's vocabulary: the
        corpus is restricted to it, and private models record it as user-supplied (public); without
        it the vocabulary comes from the training data (see ``docs/privacy.md``, "Vocabulary").

        ``callback(info)`` is called after each iteration with an :class:`IterationInfo`. A callback
        with ``needs_release = False`` (e.g. a timer) spares the trainer a copy of the counts, and one with
        ``needs_z = False`` spares gathering the topic assignments.
        """
        self._validate()
        self._require_secure_noise()
        X, names = self._as_input(X)
        supplied = vocabulary is not None or (names is not None and self._input_names_public)
        if names is not None and vocabulary is None:
            vocabulary = names
        corpus = training_source(X, vocabulary=vocabulary)
        # a Corpus or shard set given as such may remember the word list it was built on
        supplied = supplied or (vocabulary is None and vocabulary_given(corpus))
        if vocabulary is not None and isinstance(corpus, Corpus):
            vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
            if corpus.vocabulary != vocabulary:
                corpus = corpus.restrict(vocabulary).require_nonempty()
        self._vocabulary_supplied = supplied
        check_topics_fit_vocabulary(self.n_topics, corpus.vocab_size)
        self.vocabulary_ = corpus.vocabulary
        K, V = self.n_topics, corpus.vocab_size
        rng = self._rng()
        backend = self._backend_ = make_backend(self.backend, self._jobs, self.client, self.parallel)
        self.n_replayed_ = 0
        self._replay_spent = {}     # events the replayed sweeps spent, beyond the plan
        want_release = callback is not None and getattr(callback, "needs_release", True)
        with backend, progress_bar(self.n_iter, f"{type(self).__name__} K={K}", self.verbose) as bar, \
                self._replays_explained():
            # secure mode: the samplers' coins come from the OS CSPRNG, not from rng
            arrays = backend.open(corpus, K, rng, self._kernel, secure_coins=self._coins(rng) is None)
            self._start(arrays, corpus, rng)
            self.log_likelihood_ = []
            alpha, beta = float(self.alpha), float(self.beta)
            for it in range(self.n_iter):
                table, clip, release = self._before_sweep(it, arrays, rng, want_release)
                self._replay(backend, it, arrays, rng, backend.sweep(alpha, beta, word_table=table, clip=clip))
                info = self._after_sweep(it, arrays, corpus)
                if callback is not None:
                    z = None
                    if getattr(callback, "needs_z", True):
                        self._collect(backend, it, arrays, rng)
                        z = backend.z
                    callback(IterationInfo(it, z, release))
                bar.advance(1, info=info)
            self._collect(backend, self.n_iter - 1, arrays, rng)  # a shard lost now still catches up
            self.components_ = self._finish(arrays, rng)  # inside: _finish may read z from the shards
        self.n_iter_ = self.n_iter
        self._set_fitted(corpus)
        if self.backend != "threads":
            self.privacy_["replayed_iterations"] = self.n_replayed_
            if self.n_replayed_ and getattr(self, "ledger_", None) is not None:
                eps = self.privacy_.get("epsilon")     # rounded up, as the privacy card shows it
                eps = f" ({epsilon_text(eps)})" if isinstance(eps, (int, float)) and np.isfinite(eps) else ""
                warnings.warn(f"{type(self).__name__}: a Dask worker was lost and {self.n_replayed_} sweep(s) were"
                              f" replayed from a checkpoint; each replay is a new noisy release, and the reported"
                              f" epsilon{eps} includes them.", UserWarning, stacklevel=user_stacklevel())
        self._train_stats = {"n_docs": corpus.n_docs, "n_tokens": corpus.n_tokens, "vocab_size": V}
        return self

    @contextmanager
    def _replays_explained(self):
        """A budget exceeded once sweeps were replayed (the replays took what the planned iterations needed) is
        reported as the lost worker's doing, not the user's."""
        try:
            yield
        except BudgetExceededError as e:
            if self.n_replayed_ and "a Dask worker was lost" not in str(e):
                raise BudgetExceededError(replay_budget_message(self.n_replayed_, str(e))) from None
            raise

    def _replay(self, backend, it, arrays, rng, todo) -> None:
        """Shards lost with a worker restarted from their checkpoint: sweep them ``todo[j]`` times to catch up.
        Each replayed sweep is another release (fresh noise, on the ledger) for a private trainer."""
        alpha, beta = float(self.alpha), float(self.beta)
        ledger = getattr(self, "ledger_", None) if todo else None
        while todo:
            before = dict(ledger.groups()) if ledger is not None else {}
            try:
                table, clip, _ = self._before_sweep(it, arrays, rng, False)
            except BudgetExceededError as e:
                raise BudgetExceededError(replay_budget_message(self.n_replayed_ + max(todo.values()), str(e))) \
                    from None
            if ledger is not None:      # what this replay spent, outside the planned iterations
                for e, n in ledger.groups():
                    if n > before.get(e, 0):
                        self._replay_spent[e] = self._replay_spent.get(e, 0) + n - before.get(e, 0)
                try:    # a run trained to a budget that can no longer afford its planned iterations stops now
                    ledger.check_plan_with(list(self._replay_spent.items()))
                except BudgetExceededError as e:
                    raise BudgetExceededError(replay_budget_message(self.n_replayed_ + max(todo.values()), str(e))) \
                        from None
            self.n_replayed_ += 1
            again = backend.sweep(alpha, beta, word_table=table, clip=clip, shards=sorted(todo))
            todo = {j: n - 1 for j, n in todo.items() if n > 1}
            for j, n in again.items():  # lost again: back to its checkpoint, on top of what is still to do
                todo[j] = todo.get(j, 0) + n

    def _collect(self, backend, it, arrays, rng) -> None:
        """Gather the shards' state for reading, replaying any shard lost meanwhile."""
        while todo := backend.collect():
            self._replay(backend, it, arrays, rng, todo)

    # hooks -------------------------------------------------------------------
    def _coins(self, rng):
        """The source of the sampler's and the noise's coins: ``rng``, or None for the OS CSPRNG."""
        return rng

    def _start(self, arrays: SweepArrays, corpus: Corpus, rng) -> None:
        pass

    def _before_sweep(self, it, arrays, rng, want_release):
        """Return ``(word_table, clip, release)`` for this iteration's sweep."""
        return None, np.inf, (arrays.nwk.copy() if want_release else None)

    def _after_sweep(self, it, arrays, corpus) -> str:
        return ""

    def _finish(self, arrays, rng) -> np.ndarray:
        """The released Φ (K×V); by default the posterior mean of eq. (2)."""
        V = arrays.nwk.shape[0]
        phi = arrays.nwk.T.astype(np.float64)  # one K×V temporary, normalised in place
        phi += self.beta
        phi /= (arrays.nk + V * self.beta)[:, None]
        return phi

    # ------------------------------------------------------- fold-in inference
    def transform(self, X, n_iter: int = 100, burn_in: int = 50, seed=0) -> np.ndarray:
        """Document–topic proportions θ (D×K) by fold-in Gibbs sampling with Φ fixed (Griffiths & Steyvers 2004).

        For a private model, fold-in reads the words of the documents it is given: on held-out
        documents that is the user's own computation, but on the *training* documents it is a
        fresh computation on private words that the privacy report does not cover. Private
        trainers offer ``training_theta_`` instead, a post-processing of the released topic
        assignments (see ``docs/privacy.md``).
        """
        c = self._as_model_corpus(X, allow_empty=True)
        return infer_theta(self.components_, c.word_ids, c.doc_ptr, float(self._fitted_value("alpha")), n_iter, burn_in, seed,
                           self._fold_in_jobs())

    def perplexity(self, X, mode: str = "paper", n_iter: int = 100, burn_in: int = 50, seed=0) -> float:
        """Held-out perplexity (Zhao et al. 2020 Sec. VII-A; Wallach et al. 2009 document completion); ``mode`` is ``"paper"`` or ``"completion"``."""
        c = self._as_model_corpus(X)
        return _perplexity(self.components_, c, float(self._fitted_value("alpha")), mode, n_iter, burn_in, seed,
                           self._fold_in_jobs())


MODEL_FORMAT_VERSION = 1


def planned_spend_check(check, model, rep):
    """``check`` (:func:`~dptopic.accounting.verify.verify_report` of ``rep``) with the report's events compared
    with what ``model``'s parameters make a fit spend (:func:`~dptopic.accounting.verify.check_run`)."""
    return check_run(check, model._planned_spend(rep), rep, who=type(model).__name__)


def verify_saved(meta: dict, check):
    """``check`` of the privacy report in a model folder's ``model.json`` (``meta``), with its events compared
    with what the saved class and parameters plan; left as it is when those do not name a trainer this dptopic
    can build (``dptopic load`` refuses such a folder with its own reason)."""
    if not isinstance(meta.get("privacy"), dict):
        return check
    cls = class_named(meta.get("class")) if isinstance(meta.get("class"), str) else None
    params = meta.get("params")
    why = None
    if cls is None:
        why = f"names the class {str(meta.get('class'))[:40]!r}, which is no trainer of this dptopic"
    elif not isinstance(params, dict):
        why = "has no parameters (params)"
    else:
        try:
            model = cls(**cls._params_from_saved(params))
            model._validate()
        except (DPTopicError, TypeError) as e:
            why = f"has parameters {cls.__name__} does not accept ({' '.join(str(e).split())[:120].rstrip('.')})"
    if why is None:
        return planned_spend_check(check, model, meta["privacy"])
    if check.status not in ("verified", "looser"):
        return check
    # the recomputation alone holds for whatever events the report lists: without the trainer's plan, events edited
    # together with their figures (fewer iterations, less noise) would pass

    return Verification("failed", f"model.json {why}, so its events cannot be compared with what the trainer's"
                                  " parameters plan (dptopic load refuses it too)", check.figures)


def _check_stated_claims(rep: dict, model, bad) -> None:
    """The privacy report's words that the privacy card shows beside its checked figures, held to what the rest of
    the folder says: the source of the vocabulary (``data``, ``supplied`` or ``private``) against the report's own
    vocabulary and scope text, the guarantee's extent against that source, and ``secure_noise`` against the saved
    ``secure`` parameter. Edited wording that agrees with everything else (a rewritten theorem) cannot be told from
    the original: the card says its text rows are shown as stored."""
    source = rep.get("vocabulary_source")
    if source not in (None, "data", "supplied", "private"):
        raise bad(f"its privacy report names the vocabulary source {str(source)[:30]!r} (one of 'data', 'supplied',"
                  " 'private' expected)")
    words = str(rep.get("vocabulary") or "").lower()
    from_data = "not protected" in words or VOCABULARY_NOT_COVERED.lower() in str(rep.get("scope") or "").lower()
    if source in ("supplied", "private") and from_data:
        raise bad(f"its privacy report says the vocabulary is {source} but its own text says it was chosen from the"
                  " training documents (the file was edited)")
    if source == "private" and not isinstance(rep.get("vocabulary_selection"), dict):
        raise bad("its privacy report says the vocabulary was chosen privately but lists no vocabulary selection event"
                  " (the file was edited)")
    if rep.get("guarantee") == "full" and (source == "data" or (source is None and from_data)):
        raise bad("its privacy report claims a full guarantee for a vocabulary chosen from the training documents"
                  " (the file was edited)")
    secure = getattr(model, "secure", None) if model is not None else None
    if isinstance(secure, bool) and "secure_noise" in rep and bool(rep["secure_noise"]) != secure:
        raise bad(f"its privacy report says secure_noise={bool(rep['secure_noise'])} but its parameters say"
                  f" secure={secure} (the file was edited)")


def _checked_privacy(rep, bad, model=None) -> dict:
    """A saved privacy report as input: an object; a private one must carry a finite epsilon at a delta in [0, 1)
    (named by :func:`~dptopic.accounting.ledger.name_guarantee` for reports saved before it existed), or say
    that none follows from its events (their deltas add to 1 or more); the figures as saved must not claim
    more than those events give (:func:`~dptopic.accounting.verify.verify_report`), and the events must be
    those ``model``'s parameters plan (:func:`~dptopic.accounting.verify.check_run`)."""
    if not isinstance(rep, dict):
        raise bad("'privacy' in model.json must be an object")
    if rep.get("private") is True:
        saved, rep = rep, name_guarantee(dict(rep))
        eps, delta = rep.get("epsilon"), rep.get("delta")
        ok_eps = isinstance(eps, (int, float)) and not isinstance(eps, bool) and math.isfinite(eps) and eps >= 0
        ok_delta = isinstance(delta, (int, float)) and not isinstance(delta, bool) and 0 <= delta < 1
        # a run whose events' own deltas add to 1 or more claims nothing, and its report says so
        if not (ok_eps and ok_delta) and not claims_no_guarantee(rep):
            raise bad("its privacy report says private but names no valid epsilon and delta (the file was edited or"
                      " damaged)")
        _check_stated_claims(saved, model, bad)

        check = verify_report(saved)    # the figures as saved, recomputed from the report's own events
        if model is not None:
            check = planned_spend_check(check, model, saved)
        if check.status == "failed":
            raise bad(f"its privacy report does not match its own events ({check.detail}): the file was edited or"
                      " damaged")
        if check.status == "not_recomputable":
            warnings.warn(f"the privacy figures of this model cannot be recomputed from its events ({check.detail}):"
                          " they are shown as saved, unchecked ('dptopic privacy verify' fails on them); this dptopic"
                          " saves every figure recomputable, so the model was saved by an older version or edited:"
                          " train it again for checked figures.", UserWarning, stacklevel=user_stacklevel())
    elif rep.get("private") not in (False, None):
        raise bad("'private' in the privacy report must be true or false")
    return rep


def load(directory) -> TopicModel:
    """Load a model saved with :meth:`GibbsTopicModel.save`.

    A model folder is input like any other: every field of ``model.json`` is checked with the
    estimator's own parameter rules, array files must be the plain names the saver writes, and
    the arrays must have the dtype, shape and sign a trained model has. Anything else raises
    :class:`~dptopic.errors.CorruptModelError` (a :class:`DPTopicError`) with one line.
    """
    meta, arrays = load_bundle(directory)
    where = f"corrupt model at {str(directory)!r}"

    def bad(msg):
        return CorruptModelError(f"{where}: {msg}; re-save the model.")

    if meta.get("format") != "dptopic-model":
        raise bad("model.json is not a dptopic model (no format 'dptopic-model')")
    version = meta.get("version")
    if type(version) is not int or version != MODEL_FORMAT_VERSION:
        raise CorruptModelError(f"{where}: model format version {str(version)[:20]!r} is not supported (this dptopic"
                                f" {_version} reads version {MODEL_FORMAT_VERSION}); re-train or re-save the model.")
    name = meta.get("class")
    cls = class_named(name) if isinstance(name, str) else None
    if cls is None or cls.__name__.startswith("_") or cls in (GibbsTopicModel, TopicModel):
        raise bad(f"unknown model class {str(name)[:40]!r}")
    params = meta.get("params")
    if not isinstance(params, dict):
        raise bad("'params' must be an object of estimator parameters")
    params = cls._params_from_saved(params)
    unknown = sorted(set(params) - set(cls._param_names()))
    if unknown:
        raise bad(f"unknown parameter(s) {', '.join(repr(u)[:30] for u in unknown[:3])} for {cls.__name__}")
    if not isinstance(meta.get("privacy"), dict) or not isinstance(meta["privacy"].get("private"), bool):
        raise bad("'privacy' must be the model's privacy report (an object with a true/false 'private')")
    for key, kind in (("metrics", dict), ("training", dict), ("log_likelihood", list)):
        if key in meta and not isinstance(meta[key], kind):
            raise bad(f"'{key}' must be {'an object' if kind is dict else 'a list'}")
    vocab = meta.get("vocabulary")
    if not isinstance(vocab, list) or len(vocab) < 2 or not all(isinstance(w, str) for w in vocab):
        raise bad("'vocabulary' must be a list of at least 2 words (strings)")
    try:
        model = cls(**params)
        model._validate()  # the constructor's rules, exactly as fit() applies them
        model.vocabulary_ = Vocabulary(vocab)
    except (DPTopicError, TypeError) as e:
        raise bad(" ".join(str(e).split()).rstrip(".")) from None
    if "components" not in arrays:
        raise bad("components.npy is not listed in model.json")
    comp = arrays["components"]
    K, V = model.n_topics, len(model.vocabulary_)
    if comp.dtype.kind != "f" or comp.shape != (K, V):
        raise bad(f"components.npy must be a float K×V matrix ({K}×{V}: n_topics × vocabulary), got {comp.dtype} {comp.shape}")
    comp = comp.astype(np.float64)
    if not np.all(np.isfinite(comp)) or np.any(comp < 0) or not np.allclose(comp.sum(axis=1), 1.0, atol=1e-6):
        raise bad("components.npy rows must be probability vectors (finite, non-negative, summing to 1)")
    model.components_ = comp
    if cls._never_private and isinstance(meta.get("privacy"), dict) and meta["privacy"].get("private"):
        raise bad(f"its privacy report claims a guarantee, but {name} adds no noise and is never private")
    model.privacy_ = restore_nonfinite(_checked_privacy(meta.get("privacy", {}), bad, model))
    model._fit_params_ = dict(model.get_params())
    model.metrics_ = restore_nonfinite(meta.get("metrics", {}))
    model.log_likelihood_ = meta.get("log_likelihood", [])
    model._train_stats = meta.get("training", {})
    model.n_features_in_ = V
    names = meta.get("feature_names_in")      # absent: fitted without column names (or saved before they were kept)
    if names is True:
        model.feature_names_in_ = np.asarray(list(model.vocabulary_.words), dtype=object)
    elif names is not None:
        if not (isinstance(names, list) and len(names) == V and all(isinstance(n, str) for n in names)):
            raise bad(f"'feature_names_in' must be true or a list of {V} column names (one per word)")
        model.feature_names_in_ = np.asarray(names, dtype=object)
    tok = meta.get("tokenizer")     # absent in folders saved before it was recorded
    if tok is not None and not (isinstance(tok, dict) and type(tok.get("version")) is int and tok["version"] >= 1):
        raise bad("'tokenizer' must be an object with an integer 'version' of at least 1")
    if tok is not None:
        model.tokenizer_ = tok
    card = meta.get("privacy_card")
    model._saved_card = card if isinstance(card, dict) else None     # a trainer's _load_extra may hold it to the report
    try:
        model._load_extra(arrays)
    except DPTopicError as e:   # said once: "corrupt model at X: what; re-save the model."
        msg = str(e).rstrip(".")
        msg = msg[len("corrupt model: "):] if msg.startswith("corrupt model: ") else msg
        msg = msg[:-len("; re-save the model")] if msg.endswith("; re-save the model") else msg
        raise bad(msg) from None
    except KeyError as e:       # an array or a model.json field the estimator needs is not there
        raise bad(f"{str(e.args[0] if e.args else e)[:60]!r} is missing (an array listed in model.json, or a field of"
                  f" it, that {name} needs)") from None
    except (TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        # an array of the wrong shape or type, or a field of the wrong JSON type: never a traceback
        why = " ".join(str(e).split())[:120]
        raise bad(f"an array or model.json field {name} needs has the wrong type or shape ({type(e).__name__}: {why})"
                  ) from None
    return model


# ------------------------------------------------------------------ streaming trainers: transactions and RNG state
@contextmanager
def unchanged_on_error(model):
    """Run a block that changes ``model``; on any error (a refused batch, a kernel failing half-way, Ctrl-C) put every
    attribute back and the state of every numpy Generator it holds (``seed`` included: a failed step has not drawn
    from it), then re-raise. The trainers assign new arrays rather than writing into the old ones, so a shallow copy
    of the attributes is the whole state."""
    before = dict(vars(model))
    gens = {id(g): g for g in before.values() if isinstance(g, np.random.Generator)}
    states = [(g, g.bit_generator.state) for g in gens.values()]
    try:
        yield
    except BaseException:
        vars(model).clear()
        vars(model).update(before)
        for g, s in states:
            g.bit_generator.state = s
        raise


_U64 = (1 << 64) - 1


def generator_state_array(gen) -> np.ndarray | None:
    """A PCG64 Generator's state (what ``default_rng`` makes) as 6 uint64 (state, inc as high/low halves, has_uint32,
    uinteger), for a non-private streaming trainer's save: ``partial_fit`` after ``load`` then draws what it would have
    drawn without the save. ``None`` for no Generator or another bit generator (the stream then restarts from seed)."""
    if not isinstance(gen, np.random.Generator) or not isinstance(gen.bit_generator, np.random.PCG64):
        return None
    st = gen.bit_generator.state
    s, inc = int(st["state"]["state"]), int(st["state"]["inc"])
    return np.array([s >> 64, s & _U64, inc >> 64, inc & _U64, int(st["has_uint32"]), int(st["uinteger"])],
                    dtype=np.uint64)


def generator_from_state_array(arr) -> np.random.Generator:
    """The Generator :func:`generator_state_array` wrote; a malformed array is a :class:`CorruptModelError`."""
    a = np.asarray(arr)
    if a.shape != (6,) or a.dtype != np.uint64 or int(a[4]) not in (0, 1) or int(a[5]) > 0xFFFFFFFF \
            or not int(a[3]) & 1:
        raise CorruptModelError("corrupt model: rng_state.npy must hold a PCG64 state (6 unsigned 64-bit integers);"
                                " re-save the model.")
    g = np.random.Generator(np.random.PCG64())
    g.bit_generator.state = {"bit_generator": "PCG64",
                             "state": {"state": (int(a[0]) << 64) | int(a[1]), "inc": (int(a[2]) << 64) | int(a[3])},
                             "has_uint32": int(a[4]), "uinteger": int(a[5])}
    return g
