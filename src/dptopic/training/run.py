"""``dptopic.train``: one training run, in the order that keeps every release inside the guarantee.

1. :func:`check_call` checks the arguments (NumPy's numbers taken as Python's; a wrong type, or what would do nothing,
   refused), and :func:`check_inputs` reads and checks every input, the trainer's public vectors included, before the
   first release (nothing is drawn until every input is known good); with a private vocabulary and a ledger on,
   :func:`charge_run` opens the run's one release on the dataset's ledger, the cap checked for the whole run (the
   words' selection and the trainer's plan);
2. :func:`choose_vocabulary`: the words, given (a public list), chosen by DP set union (``private_vocabulary``), or
   the corpus's own;
3. :func:`split` by the model's unit (whole people under the user unit: :func:`dptopic.training.by_unit.split_for`);
4. :func:`fit`;
5. :func:`held_out_metrics`, labelled "outside the guarantee";
6. :func:`compose_vocabulary`: the private vocabulary's composition with the trainer's guarantee (FDPTM);
7. :func:`record_words`: which public word list the model was trained on;
8. :func:`card`;
9. :func:`save`.

Randomized reports (lp, olp, ldp-doc) take :func:`check_reports` → :func:`fit_reports` → :func:`state_contributors` →
:func:`card` → :func:`save`; one mini-batch of them (``dptopic serve``'s trainer): :func:`dptopic.training.train_batch`.

Warnings and forecasts are raised here with :func:`warnings.warn` (``ForecastWarning``, the few-private-words
warning), once, for both front doors: ``dptopic train`` shows them on stderr as every warning. Lines a front door
prints (the corpus's sizes, the notes) are returned in ``TrainingResult.notes`` and passed, as each step makes them,
to ``callback``.
"""
from __future__ import annotations

import contextlib
import inspect
import math
import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._io import check_output_dir
from .._validation import SEED, Int, Options, plain_number, validate_value
from ..accounting.card import privacy_card
from ..accounting.events import ApproxDPEvent
from ..accounting.set_union import composed_epsilon, model_epsilon_within_total
from ..advice import too_small_message
from ..corpus import without_copies
from ..corpus.corpus import Corpus, as_corpus
from ..corpus.ledger_documents import documents_of
from ..corpus.shards import folder_shards
from ..corpus.summary import median_user_length
from ..corpus.wordlist import read_vocabulary, record_word_list
from ..dataset_ledger.charge import (
    after_fit,
    charging_active,
    hook,
    ledger_path,
    ledger_value,
    model_delta,
    open_charge,
    open_run_charge,
)
from ..dataset_ledger.ledger import DatasetLedger
from ..dataset_ledger.location import INHERIT, session
from ..errors import (
    DPTopicError,
    ForecastWarning,
    ParameterError,
    PublicOverlapWarning,
    SmallCorpusWarning,
    user_stacklevel,
)
from ..evaluation import npmi_and_diversity, training_run_metrics
from ..models import FedLDA
from ..models.base import check_topics_fit_vocabulary, fold_in_threads
from ..models.registry import trainer_of
from ..moments.public_prior import refuse_private_as_public
from .build import DOCUMENT_LEVEL, build_model, resolve_algorithm
from .by_unit import SPLIT_NAMES, split_by, split_for
from .fdptm import check_before_release, compose_privacy

WORDS_PER_TOPIC = 10
"""The words a topic is shown and scored by (its top 10): a private vocabulary of fewer than this many per topic gives
topics that share their top words, and the run warns."""

PAD_LENGTH_FACTOR = 4
"""A FedLDA ``pad_length`` above this many times the typical user's length gets a note."""

OUTSIDE = "outside the guarantee"


@dataclass
class TrainingResult:
    """What :func:`train` returns.

    Attributes
    ----------
    model : the fitted estimator (``metrics_`` and ``privacy_`` set by the run).
    train, test : the training and held-out parts (``test`` None with ``test_size=0`` or a shard folder).
    metrics : dict, the held-out metrics (``{}`` without a held-out part); under a private model computed from
        private documents, outside the guarantee (``metrics["note"]`` says so).
    card : dict, the model's privacy card (``dptopic.accounting.card.privacy_card``).
    path : str or None, where the model was saved (``out``).
    notes : list of str, lines for a front door to print (plain text).
    corpus : the corpus the run read (after the vocabulary step).
    held_out_copies : int, held-out documents left out because they repeat a training document.
    vocabulary_event : the private vocabulary's (epsilon, delta) event, or None.
    """
    model: object
    train: object = None
    test: object = None
    metrics: dict = field(default_factory=dict)
    card: dict | None = None
    path: str | None = None
    notes: list = field(default_factory=list)
    corpus: object = None
    held_out_copies: int = 0
    vocabulary_event: object = None
    vocabulary: list | None = None
    algorithm: str | None = None
    unit: str | None = None


@dataclass
class _Inputs:
    """Every input of a run, checked (``check_inputs``)."""
    corpus: object
    shards: object = None
    vocabulary: list | None = None
    vocabulary_name: str | None = None
    private_vocabulary: tuple | None = None
    vocabulary_policy: str = "gaussian"
    public_corpus: object = None
    user_epsilon: float | None = None
    forecast: tuple | None = None     # (unit, epsilon, delta) when the run forecasts its topics' use
    names: dict = field(default_factory=dict)
    charge: object = None     # the run's release on the dataset's ledger, opened before the private vocabulary


def _say(result: TrainingResult, callback, step: str, line: str | None = None) -> None:
    if line:
        result.notes.append(line)
    if callback is not None:
        callback(step, result)


def train(corpus, *, algorithm: str | None = None, unit: str | None = None, epsilon=None, delta=None,
          n_topics=None, test_size: float | None = None, vocabulary=None, private_vocabulary=None, public_corpus=None,
          user_field=None, out=None, save_metrics: bool = False, ledger=None, dataset=None, backend=None,
          client=None, seed=None, model=None, vocabulary_policy: str | None = None, overwrite: bool = False,
          names=None, callback=None, split_as=None, metrics=True, vocabulary_in_total: bool = False,
          person_aliases=None, **params) -> TrainingResult:
    """Train a topic model as ``dptopic train`` does, in the order that keeps every release inside the guarantee.

    Parameters
    ----------
    corpus : Corpus, or a shard folder (:func:`dptopic.corpus.shards.write_shards`; path or ``training_source``) for the
        trainers that stream shards. With ``private_vocabulary`` the corpus must hold every word (read uncut).
    algorithm : str, the trainer (``dptopic.models.registry.TRAINERS``); default ``lda``, or the one ``unit`` picks.
    unit : "document" | "user" | "word", the privacy unit: the best measured trainer (``dptopic.for_unit``), with
        ``epsilon`` the whole run's budget in that unit. ``unit="user"``: the corpus carries each document's person
        (read with ``user_field=``; ``user_field`` here names that field in the refusal of a corpus without them).
    epsilon, delta : the total guarantee in the model's unit.
    n_topics : int, topics (default: the trainer's own; 20 with ``unit``).
    test_size : float, the share held out for the metrics (0: none). Default: 0.2, and 0 for a user-level model,
        which releases every person (a held-out person's documents are read by the run and charged like the rest).
    vocabulary : list of str, a public word list (nothing chosen from the data); a path (str or path object) of a word
        list, one word a line, or ``wordfreq:LANG[:SIZE]``, read as the command line reads its vocabulary and recorded
        by that name; or a ``(name, words)`` pair whose name (a file, ``wordfreq:LANG``) the privacy report records.
    private_vocabulary : (epsilon_vocab, delta_vocab), the words chosen by DP set union and composed with the
        trainer's guarantee (Manzonelli et al. 2024); ``vocabulary_policy`` "gaussian" (default) or "laplace".
        Its budget adds to the trainer's ``epsilon`` and ``delta``, and the card states the composed total.
    vocabulary_in_total : bool, with ``private_vocabulary``: ``epsilon`` and ``delta`` are the whole run's total, the
        vocabulary's ``(epsilon_vocab, delta_vocab)`` part of it. The trainer gets ``delta - delta_vocab`` and the
        epsilon at which the card's composed total is ``epsilon`` (solved against the accountant that states it, to
        within 0.1% below it, never above), which is more than ``epsilon - epsilon_vocab`` where the composition by
        privacy loss distributions saves on the sum. With ``model``, its total-epsilon parameter and ``delta`` are
        set to that share.
    public_corpus : Corpus, public documents of the domain (docdp-cooc's prior), refused when it holds private ones
        (:func:`dptopic.datasets.read_public_corpus` reads a file as the command line does).
    out : str, a new or empty folder to save the model to (checked before anything is spent); None: not saved.
    save_metrics : bool, save a private model's metrics too (labelled outside the guarantee).
    ledger : the ledger the run is charged to (docs/budget.md): a file path or a ``postgresql://`` URL, True (the
        default file), False (none, whatever ``DPTOPIC_LEDGER`` says) or None (``DPTOPIC_LEDGER``, if set). The
        release is recorded with the documents of ``corpus`` (every one, held-out ones included), known by their
        content: the same documents in another file, order or format are charged as the same.
    dataset : the name the release is recorded under (default: ``content:`` and a digest of the documents).
    person_aliases : ids that are one person, linked on the ledger when the release is recorded (before its caps are
        checked): a path of git's ``.mailmap`` or a two-column CSV (``alias,canonical``), or a list of such pairs.
        Every total and cap counts them once (docs/budget.md).
    backend, client : where Gibbs and document-level training runs (``"dask"`` with a ``distributed.Client``).
    seed : the seed (private trainers: fresh OS entropy by default; a seed is for tests, and never saved).
    model : an unfitted estimator to train instead of building one from ``algorithm`` and ``params``. Its own
        parameters hold its settings: ``algorithm``, ``n_topics`` and the trainer's parameters beside it are refused,
        and so are ``epsilon``/``delta`` except with ``unit`` (the forecast's budget, in a unit the model's guarantee is
        stated in) or ``vocabulary_in_total`` (the run's total).
    names : mapping, how messages name the inputs (``{parameter: name}``; the command line passes the flag that sets
        each, with the file given).
    callback : ``callback(step, result)`` after each step (a front door prints as the run goes).
    split_as : another estimator whose split to use (a non-private reference trained on a private model's split).
    metrics : bool or "coherence", compute the held-out metrics (False: none, a caller computes its own on
        ``result.test``; "coherence": NPMI and topic diversity alone).
    **params : the trainer's own parameters (``n_iter``, ``alpha`` ...; fed: ``user_epsilon``).

    Returns
    -------
    TrainingResult
    """
    where = ledger_value(ledger)        # 5, '' or a list: refused in one line naming ledger=
    # NumPy's numbers taken as Python's (np.float32(2.0) is a budget); every argument checked before anything is read
    epsilon, delta, n_topics, test_size = (plain_number(v) for v in (epsilon, delta, n_topics, test_size))
    params = {k: plain_number(v) for k, v in params.items()}
    if isinstance(private_vocabulary, (tuple, list)):
        private_vocabulary = tuple(plain_number(v) for v in private_vocabulary)
    check_call(model=model, algorithm=algorithm, unit=unit, epsilon=epsilon, delta=delta, n_topics=n_topics,
               seed=seed, vocabulary_policy=vocabulary_policy, user_field=user_field,
               public_corpus=public_corpus, callback=callback, split_as=split_as, metrics=metrics, names=names,
               flags=dict(overwrite=overwrite, save_metrics=save_metrics, vocabulary_in_total=vocabulary_in_total),
               params=params)
    vocabulary = read_vocabulary_argument(vocabulary)
    run = dict(corpus=corpus, algorithm=algorithm, unit=unit, epsilon=epsilon, delta=delta, n_topics=n_topics,
               test_size=test_size, vocabulary=vocabulary, private_vocabulary=private_vocabulary,
               public_corpus=public_corpus, user_field=user_field, out=out, save_metrics=save_metrics,
               backend=backend, client=client, seed=seed, model=model, vocabulary_policy=vocabulary_policy,
               overwrite=overwrite, names=names, callback=callback, split_as=split_as, metrics=metrics,
               vocabulary_in_total=vocabulary_in_total, params=params)
    aliases = _person_aliases(person_aliases, where)
    if where is None and dataset is None and not aliases:
        return _train(**run)
    with session(INHERIT if where is None else None if where is False else where, dataset, aliases):
        return _train(**run)


def _person_aliases(given, where) -> list:
    """``person_aliases=`` as pairs of ids: a file read (:func:`~dptopic.dataset_ledger.people.read_aliases`) or
    pairs checked; refused in one line with the ledger off."""
    if given is None:
        return []
    from ..dataset_ledger.identity import check_person  # the ledger's rule for ids
    from ..dataset_ledger.people import read_aliases  # as above

    if where is False:
        raise ParameterError("{person_aliases} links ids on the ledger that records this run, and the ledger is off"
                             " ({ledger=}): drop one of them.", "person_aliases", given, others=("ledger",))
    if isinstance(given, (str, os.PathLike)):
        return read_aliases(given)
    try:
        pairs = [(check_person(a), check_person(b)) for a, b in given]
    except (TypeError, ValueError):
        raise ParameterError("{person_aliases} takes a .mailmap or CSV path, or a list of (alias, canonical) pairs of"
                             " id strings.", "person_aliases", given) from None
    return pairs


DEFAULT_TEST_SIZE = 0.2
"""The share :func:`train` holds out for the held-out figures when ``test_size`` is not given, except at the user
unit (none: every person is released, since a held-out person is charged like the rest)."""

BESIDE_MODEL = ("user_epsilon", "reports_per_contributor")
"""The parameters of :func:`train`'s ``**params`` that a built ``model`` still takes from it (FedLDA's per-user
total, solved once the vocabulary is known; the reports each contributor sent); the trainer's own parameters are set
on the model."""


def _kind(value) -> str:
    name = type(value).__name__
    return "None" if value is None else f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _estimator_error(parameter: str, value) -> ParameterError | None:
    """The refusal of ``value`` as an estimator for ``parameter`` (``model``, ``split_as``): a class, or an object
    that is no estimator; None for an estimator."""
    if isinstance(value, type):
        return ParameterError("{%s} is the class {cls}, not an estimator: give an unfitted one, {cls}(...)."
                              % parameter, parameter, cls=value.__name__)
    if not (callable(getattr(value, "fit", None)) and callable(getattr(value, "get_params", None))):
        return ParameterError("invalid {%s}: give an unfitted estimator (one of dptopic.models), not {kind}."
                              % parameter, parameter, kind=_kind(value))
    return None


def check_call(*, model=None, algorithm=None, unit=None, epsilon=None, delta=None, n_topics=None, seed=None,
               vocabulary_policy=None, user_field=None, public_corpus=None, callback=None, split_as=None, metrics=True,
               names=None, flags=None, params=None) -> None:
    """:func:`train`'s arguments checked before anything is read, drawn or recorded, each refused in one line that
    names it: a ``callback`` that cannot be called, a ``model`` or ``split_as`` that is a class or no estimator, a
    ``public_corpus`` that is no :class:`~dptopic.corpus.Corpus`, ``metrics`` other than True, False or
    "coherence", flags that are not bools, a ``seed`` no generator takes (the private vocabulary's draws read it
    too), a ``vocabulary_policy`` other than "gaussian" or "laplace", a ``user_field`` that is no field name, and what
    would do nothing beside a built ``model``: ``algorithm``,
    ``n_topics`` and the trainer's own parameters (set them on the model), a ``unit`` the model's guarantee is not
    stated in, ``epsilon``/``delta`` without ``unit`` or ``vocabulary_in_total`` (only these read them as the run's
    total).

    Over 60 lines on purpose: one refusal after another, each two to four lines, in the order a reader of the call
    meets the arguments; split, the order would be spread over functions that each check a few."""
    if names is not None and not isinstance(names, Mapping):
        raise ParameterError("invalid {names}: give a mapping from each parameter to the name its messages use, not"
                             " {kind}.", "names", kind=_kind(names))
    if callback is not None and not callable(callback):
        raise ParameterError("invalid {callback=}: give a function callback(step, result), or None.", "callback",
                             callback)
    for key, value in (flags or {}).items():
        if not isinstance(value, (bool, np.bool_)):
            raise ParameterError("invalid {%s=}: give True or False." % key, key, value)
    validate_value("seed", seed, SEED)
    if vocabulary_policy is not None:
        validate_value("vocabulary_policy", vocabulary_policy, [Options(("gaussian", "laplace"))])
    if user_field is not None and not isinstance(user_field, str):
        raise ParameterError("invalid {user_field=}: give the name of the field that holds each document's person.",
                             "user_field", user_field)
    if not (isinstance(metrics, (bool, np.bool_)) or (isinstance(metrics, str) and metrics == "coherence")):
        raise ParameterError("invalid {metrics=}: give True (every held-out metric), 'coherence' (NPMI and"
                             " diversity alone) or False (none).", "metrics", metrics)
    if public_corpus is not None and not isinstance(public_corpus, Corpus):
        raise ParameterError("invalid {public_corpus}: give a Corpus of public documents"
                             " (dptopic.datasets.read_public_corpus reads a file as the command line does), not"
                             " {kind}.", "public_corpus", kind=_kind(public_corpus))
    if split_as is not None and _estimator_error("split_as", split_as) is not None:
        raise _estimator_error("split_as", split_as)
    if model is None:
        return
    refusal = _estimator_error("model", model)
    if refusal is not None:
        raise refusal
    given = [k for k, v in (("algorithm", algorithm), ("n_topics", n_topics)) if v is not None]
    given += sorted(k for k in (params or {}) if k not in BESIDE_MODEL)
    if given:
        raise ParameterError("{%s} beside {model} would do nothing: the model given is the one trained; set it on the"
                             " model (model.set_params), or drop it." % given[0], given[0], others=("model",))
    if unit is not None:
        entry = trainer_of(model)
        own = getattr(model, "unit", None)
        units = () if entry is None else entry.units
        if unit not in units or (own is not None and own != unit):
            stated = own or (", ".join(units) if units else "none dptopic knows")
            raise ParameterError("{unit=} beside {model}: the model's guarantee is stated per {stated}, so the run"
                                 " would forecast for another unit; drop {unit}, or give a model of that unit"
                                 " (dptopic.for_unit).", "unit", unit, others=("model",), stated=stated)
        if epsilon is None:
            raise ParameterError("{unit} beside {model} forecasts the topics' use at the run's budget: give {epsilon}"
                                 " (and {delta}), the model's total, or drop {unit}.", "unit", unit,
                                 others=("model",))
    elif (epsilon is not None or delta is not None) and not (flags or {}).get("vocabulary_in_total"):
        which = "epsilon" if epsilon is not None else "delta"
        raise ParameterError("{%s} beside {model} would do nothing: the model's own parameters set its budget; drop"
                             " {%s} (beside {unit} or {vocabulary_in_total} it states the run's total)."
                             % (which, which), which, others=("model",))


def read_vocabulary_argument(vocabulary):
    """``vocabulary`` as :func:`train` reads it: a path (str or path object) or ``wordfreq:LANG[:SIZE]`` read as the
    command line reads its ``vocabulary`` (:func:`dptopic.corpus.wordlist.read_vocabulary`: one word a line), with
    its name; a list of words (each a str), a :class:`~dptopic.corpus.Vocabulary` or a ``(name, words)`` pair as
    given."""
    if isinstance(vocabulary, (str, os.PathLike)):
        return os.fspath(vocabulary), list(read_vocabulary(vocabulary).words)
    named = isinstance(vocabulary, tuple) and len(vocabulary) == 2 and isinstance(vocabulary[0], (str, type(None)))
    words = vocabulary[1] if named else vocabulary
    if words is None or hasattr(words, "words"):
        return vocabulary
    if isinstance(words, (str, bytes)) or not isinstance(words, (list, tuple, np.ndarray)):
        raise ParameterError("invalid {vocabulary}: give a list of words, or the path of a word list (one word a"
                             " line), not {kind}.", "vocabulary", kind=_kind(words))
    bad = next((i for i, w in enumerate(words) if not isinstance(w, str)), None)
    if bad is not None:
        raise ParameterError("invalid {vocabulary}: word {i} is {kind}: give the words as str.", "vocabulary",
                             i=f"{bad + 1:,}", kind=_kind(words[bad]))
    return vocabulary


def _train(*, corpus, algorithm, unit, epsilon, delta, n_topics, test_size, vocabulary, private_vocabulary,
           public_corpus, user_field, out, save_metrics, backend, client, seed, model, vocabulary_policy, overwrite,
           names, callback, split_as, metrics, vocabulary_in_total, params) -> TrainingResult:
    """:func:`train`'s run, inside the ledger's session; every argument by its name (train's own).

    Over 60 lines on purpose: the run's steps in the order they spend (the model's share of the total, the model,
    the split, the private vocabulary, the fit, the metrics, the save), each a call to a function of its own, so that
    the order in which privacy is spent reads in one place."""
    user_epsilon = params.pop("user_epsilon", None)
    reports_per_contributor = params.pop("reports_per_contributor", None)
    total = None
    if vocabulary_in_total:     # the model's share, until the vocabulary is chosen and the share is solved
        total = _total_with_vocabulary(epsilon, delta, private_vocabulary, model, user_epsilon, names or {})
        epsilon, delta = total[0] - total[2], total[1] - total[3]
    if model is None:
        if backend is not None and backend != "threads":
            params.update(backend=backend, client=client)
        build = dict(algorithm=algorithm, unit=unit, delta=delta, n_topics=n_topics, seed=seed, **params)
        model = build_model(epsilon=epsilon, **build)
        algorithm = resolve_algorithm(algorithm, unit)

        def rebuild(e):
            return build_model(epsilon=e, **build)
    else:
        if backend is not None and backend != "threads":
            model.set_params(backend=backend, client=client)
        if total is not None:       # the given trainer at its share: its total-epsilon parameter and delta set
            rebuild = _at_share(model, delta)
            model = rebuild(epsilon)
        model.validate_parameters()
    if user_field is not None and getattr(model, "unit", None) != "user":
        raise ParameterError("{user_field} names each document's person under the user unit, and {type} is trained"
                             " per {unit=}: drop {user_field}, or train with {unit} 'user'.", "user_field",
                             values={"unit": getattr(model, "unit", None) or "document"}, type=type(model).__name__)
    refuse_idle_ledger(model, names or {})
    if test_size is None:       # a user-level run holds out no one unless asked: a held-out person is charged too
        test_size = 0.0 if split_by(model) == "person" else DEFAULT_TEST_SIZE
    if _reads_reports(model):
        return _train_reports(TrainingResult(model=model, algorithm=algorithm, unit=unit), corpus, vocabulary,
                              reports_per_contributor, out, overwrite, callback)
    model = _with_vocabulary_words(model, private_vocabulary)
    result = TrainingResult(model=model, algorithm=algorithm, unit=unit)
    inputs = check_inputs(model, corpus, test_size=test_size, vocabulary=vocabulary,
                          private_vocabulary=private_vocabulary, vocabulary_policy=vocabulary_policy,
                          public_corpus=public_corpus, user_field=user_field, out=out, overwrite=overwrite,
                          unit=unit, epsilon=epsilon, delta=delta, user_epsilon=user_epsilon, names=names)
    open_ledger(result, inputs, out, names or {})
    _say(result, callback, "checked")
    if inputs.shards is not None:
        return _train_shards(result, inputs, out, save_metrics, callback)
    share_of = None if total is None else (lambda e: _with_vocabulary_words(rebuild(e), private_vocabulary))
    charge_run(result, inputs, total, share_of)
    choose_vocabulary(result, inputs, seed=seed, callback=callback)
    if total is not None:
        solve_model_share(result, total, share_of)
    split(result, inputs, test_size, callback=callback, split_as=split_as)
    forecast(result, inputs)
    fit(result, inputs, callback=callback)
    if metrics:
        held_out_metrics(result, callback=callback, kind="coherence" if metrics == "coherence" else "all")
    compose_vocabulary(result)
    _say(result, callback, "composition")
    record_words(result, inputs)
    _say(result, callback, "word_list")
    card(result)
    _say(result, callback, "card")
    save(result, out, save_metrics, callback=callback)
    return result


def _at_share(model, delta):
    """``vocabulary_in_total`` with a built trainer: ``epsilon -> a copy of it`` whose total-epsilon parameter (the
    registry's ``Trainer.epsilon``) is ``epsilon`` and whose ``delta`` is the trainer's part of the total."""
    entry = trainer_of(model)
    if entry is None:
        raise DPTopicError(f"vocabulary_in_total sets the trainer's total-epsilon parameter, which the registry names"
                           f" for dptopic's trainers only: {type(model).__name__} is not one; give algorithm= (or"
                           " unit=) instead of the model.")
    name = entry.epsilon
    if name is None:
        raise DPTopicError(f"vocabulary_in_total needs a private trainer: {type(model).__name__} claims no guarantee to"
                           " share the total with.")
    settings = model.get_params(deep=False)

    def at(epsilon):
        copy = type(model)(**settings)
        copy.set_params(**{name: epsilon}, **({"delta": delta} if "delta" in settings else {}))
        return copy
    return at


def _with_vocabulary_words(model, private_vocabulary):
    if private_vocabulary is not None and getattr(model, "report_words", None) == "auto":
        # FedLDA: a vocabulary chosen by DP set union has no frequency order its guarantee covers
        model.set_params(report_words="all")
    return model


# ------------------------------------------------------------------------------------------------------ 1. check
def _total_with_vocabulary(epsilon, delta, private_vocabulary, model, user_epsilon, names) -> tuple:
    """``vocabulary_in_total``: ``(epsilon, delta, epsilon_vocab, delta_vocab)``, checked before anything is read."""
    flag = names.get("vocabulary_in_total", "vocabulary_in_total")
    pv = names.get("private_vocabulary", "private_vocabulary")
    if private_vocabulary is None:
        raise DPTopicError(f"{flag} reads epsilon and delta as a total with the private vocabulary inside it: add"
                           f" {pv} (its part of the total), or drop {flag}.")
    if user_epsilon is not None:
        raise DPTopicError(f"{flag} solves the trainer's share of a total in the model's unit: give epsilon and"
                           " delta, not a per-user budget.")
    try:
        eps_v, delta_v = (float(x) for x in private_vocabulary)
    except (TypeError, ValueError):
        raise DPTopicError(f"invalid {pv}: give a pair (epsilon_vocab, delta_vocab).") from None
    eps_name, delta_name = names.get("epsilon", "epsilon"), names.get("delta", "delta")
    if epsilon is None or delta is None:
        raise DPTopicError(f"{flag} needs {eps_name} and {delta_name}, the whole run's total.")
    if not (eps_v < float(epsilon) and delta_v < float(delta)):
        raise DPTopicError(f"{pv} ({eps_v:g}, {delta_v:g}) is part of the total with {flag}: it must be below"
                           f" {eps_name} {float(epsilon):g} and {delta_name} {float(delta):g}, leaving the trainer"
                           " the rest.")
    return float(epsilon), float(delta), eps_v, delta_v


def check_inputs(model, corpus, *, test_size=0.2, vocabulary=None, private_vocabulary=None, vocabulary_policy=None,
                 public_corpus=None, user_field=None, out=None, overwrite=False, unit=None, epsilon=None, delta=None,
                 user_epsilon=None, names=None) -> _Inputs:
    """Every input read and checked before the first release: the output folder, the vocabularies (a public list or
    a private one, not both), the trainer's public word vectors (:func:`~dptopic.training.fdptm.check_before_release`),
    the public corpus (never the private data), the people of a user-level run, the held-out share, a shard folder's
    trainer. Nothing is drawn here."""
    names = dict(names or {})
    if out is not None:
        check_output_dir(out, overwrite=overwrite)
    if not isinstance(test_size, (int, float)) or isinstance(test_size, bool) or not 0 <= test_size < 1:
        raise DPTopicError(f"invalid {names.get('test_size', 'test_size')}={test_size!r}: give a share in [0, 1)"
                           " (0: nothing held out).")
    if vocabulary is not None and private_vocabulary is not None:
        raise DPTopicError(f"give {names.get('vocabulary', 'vocabulary')} (a public word list) or"
                           f" {names.get('private_vocabulary', 'private_vocabulary')} (chosen with DP), not both.")
    if vocabulary_policy is not None and private_vocabulary is None:
        raise DPTopicError(f"{names.get('vocabulary_policy', 'vocabulary_policy')} applies to"
                           f" {names.get('private_vocabulary', 'private_vocabulary')}: add it or drop the policy.")
    vocabulary_name = None
    if isinstance(vocabulary, tuple) and len(vocabulary) == 2 and isinstance(vocabulary[0], (str, type(None))):
        vocabulary_name, vocabulary = vocabulary
    if vocabulary is not None:
        vocabulary = list(getattr(vocabulary, "words", vocabulary))
    if private_vocabulary is not None:
        if unit == "user" or getattr(model, "unit", None) == "user":
            raise DPTopicError(f"{names.get('private_vocabulary', 'private_vocabulary')} chooses the words by DP set"
                               " union per document, not per person: under the user unit give a public word list"
                               f" ({names.get('vocabulary', 'vocabulary')}) instead.")
        private_vocabulary = check_private_vocabulary(private_vocabulary, names)
    # the trainer's public word vectors read and checked now, before a private vocabulary draws the words (their
    # coverage of the words is the fit's to check, once the words are known)
    check_before_release(model, public_corpus)
    shards = _shards_of(corpus)
    if shards is not None:
        if public_corpus is not None:
            raise DPTopicError(f"{names.get('public_corpus', 'public_corpus')} is not read with a shard folder yet:"
                               " give the corpus the shards were prepared from.")
        return _Inputs(corpus=None, shards=shards, vocabulary=vocabulary, vocabulary_name=vocabulary_name,
                       forecast=None if unit is None else (unit, epsilon, delta), names=names)

    # a Corpus, a count matrix, texts or token lists; every word kept when DP set union chooses them
    corpus = as_corpus(getattr(corpus, "corpus", corpus), uncut=private_vocabulary is not None)
    if getattr(model, "unit", None) == "user" and getattr(corpus, "user_ids", None) is None:
        how = f"user_field={user_field!r}" if user_field is not None else "user_field=FIELD"
        raise DPTopicError(f"the user unit needs each document's person, and {names.get('corpus', 'the corpus')}"
                           f" carries none: read it with its user ids ({how}), or"
                           " from a folder of folders (one per person).")
    if test_size > 0 and corpus.n_docs < 2:     # the split's refusal, before any budget is spent on the words
        raise DPTopicError(f"cannot split a corpus of {corpus.n_docs} document(s) into train and test parts: give at"
                           f" least 2 documents (or {names.get('test_size', 'test_size')} 0).")
    if public_corpus is not None:
        # refused before anything is spent; a few shared documents warned of here, in the caller's names (the fit's
        # own warning of them is silenced, fit())
        refuse_private_as_public(public_corpus, corpus, public_name=names.get("public_corpus", "public_corpus"),
                                 private_name=names.get("corpus", "the training corpus"))
    if private_vocabulary is None and user_epsilon is None:     # the words are known: as fit would refuse them

        check_topics_fit_vocabulary(int(model.n_topics), len(vocabulary) if vocabulary is not None
                                    else corpus.vocab_size)
    if user_epsilon is not None and getattr(model, "exclusion", "none") != "none":
        raise DPTopicError("user_epsilon needs exclusion='none' (entries randomized once); the floor and tail rules"
                           " randomize again every round.")
    return _Inputs(corpus=corpus, vocabulary=vocabulary, vocabulary_name=vocabulary_name,
                   private_vocabulary=private_vocabulary, vocabulary_policy=vocabulary_policy or "gaussian",
                   public_corpus=public_corpus, user_epsilon=user_epsilon,
                   forecast=None if unit is None else (unit, epsilon, delta), names=names)


def check_private_vocabulary(private_vocabulary, names=None) -> tuple:
    """``(epsilon_vocab, delta_vocab)``: a pair with epsilon finite and above 0 and delta in (0, 1) (DP set union
    needs a delta above 0), refused in one line before anything is spent."""
    pv = (names or {}).get("private_vocabulary", "private_vocabulary")
    try:
        eps_v, delta_v = (float(x) for x in private_vocabulary)
    except (TypeError, ValueError):
        raise DPTopicError(f"invalid {pv}: give a pair (epsilon_vocab, delta_vocab).") from None
    if not (math.isfinite(eps_v) and eps_v > 0):
        raise DPTopicError(f"invalid {pv}: its epsilon {eps_v:g} must be a finite number above 0.")
    if not 0 < delta_v < 1:
        raise DPTopicError(f"invalid {pv}: its delta {delta_v:g} must lie in (0, 1): DP set union's Gaussian"
                           " threshold needs a delta above 0 (1e-6, say).")
    return eps_v, delta_v


def _shards_of(corpus):
    """A shard folder (a path to one, or its ``training_source``), else None."""
    if hasattr(corpus, "paths") and hasattr(corpus, "n_docs") and not hasattr(corpus, "to_bow"):
        return corpus
    if isinstance(corpus, (str, Path)):
        p = Path(corpus)
        if p.is_dir() and folder_shards(p):
            from ..backends import training_source  # looked up when called: tests patch it at its source

            return training_source(p)
        raise DPTopicError(f"corpus={str(corpus)!r}: give a Corpus (dptopic.corpus.readers.read_corpus reads a file)"
                           " or a shard folder (dptopic.corpus.shards.write_shards writes one).")
    return None


# ----------------------------------------------------------------------------------------- 1b. the run's charge
def refuse_idle_ledger(model, names=None) -> None:
    """``ledger=`` or ``dataset=`` given for a trainer whose fit spends no budget (a non-private trainer, or one of
    randomized reports, whose contributors drew the noise): refused in one line rather than silently idle."""
    from ..dataset_ledger.location import SESSION  # the session train() opened

    s = SESSION.get()
    if "ledger" in model.get_params(deep=False) or s is None:
        return
    names = names or {}
    given = [names.get(k, k) for k, on in (("ledger", s[0] not in (None, INHERIT)), ("dataset", s[1] is not None))
             if on]
    if given:
        why = ("fits randomized reports, whose contributors drew the noise: refitting them spends nothing"
               if _reads_reports(model) else "releases nothing private")
        raise DPTopicError(f"{' and '.join(given)} record{'s' if len(given) == 1 else ''} the releases of private"
                           f" trainers, and {type(model).__name__} {why}: drop {' and '.join(given)}.")


def open_ledger(result: TrainingResult, inputs: _Inputs, out=None, names=None) -> None:
    """Once every input is known good: the ledger the run is charged to (``ledger=``, ``DPTOPIC_LEDGER`` or the
    command line's), checked or created now, before the first release; refused in one line when it lies inside the
    output folder (which must be new or dptopic's), or when the trainer releases nothing private (a ledger given for
    it would be silently idle). The run is then one release of the documents the user gave (every one, held-out ones
    included: :func:`charge_run`)."""
    spends = "ledger" in result.model.get_params(deep=False)
    path = ledger_path(result.model) if spends else None
    if path is None:
        return
    if out is not None and not isinstance(path, str):
        inside = Path(os.path.abspath(path))
        if Path(os.path.abspath(out)) in inside.parents:
            raise DPTopicError(f"the ledger {path} lies inside the output folder {out}: keep it outside"
                               f" ({names.get('out', 'out')} holds the model alone, and is replaced by"
                               f" {names.get('overwrite', 'overwrite')}).")
    DatasetLedger(path)         # a corrupt, foreign, newer or read-only ledger: one line, nothing drawn


def charge_run(result: TrainingResult, inputs: _Inputs, total=None, build=None) -> None:
    """With a ledger on, the run is one release of the documents the user gave (``inputs.corpus``: every document,
    held-out ones included), whatever the trainer's fit reads of them; its fit reserves its plan on it before its
    first noise (:func:`~dptopic.dataset_ledger.charge.open_charge`). With a private vocabulary the run releases
    before the fit: the caps are checked for the whole run (the words' DP set union and the trainer's plan) before
    the set union draws, so that a run a cap refuses spends nothing
    (:func:`~dptopic.dataset_ledger.charge.open_run_charge`). The trainer's plan is read from public settings
    before its words are known (``release_plan(None)``; ``vocabulary_in_total``: at the share solved for it); its fit
    adds what it reserves to the release, the caps checked again. No ledger: nothing."""
    # a fit a ledger charges takes ledger= and dataset= (dataset_ledger/charge.py: the estimators' public contract)
    if "ledger" not in result.model.get_params(deep=False) or charging_active() \
            or ledger_path(result.model) is None:
        return
    user_ids = getattr(inputs.corpus, "user_ids", None)
    if inputs.private_vocabulary is None:
        inputs.charge = open_charge(result.model, lambda: documents_of(inputs.corpus, user_ids))
        return
    eps_v, delta_v = inputs.private_vocabulary
    event = ApproxDPEvent(eps_v, delta_v, label="DP set union vocabulary", unit="document")
    model = result.model
    plan = None
    try:
        if total is not None:       # the share it will get, as solve_model_share solves it, at a size not known yet
            model = build(_share(total, event, None, build))
        plan = model.release_plan(None) if getattr(model, "release_plan", None) is not None else None
    except DPTopicError:    # no plan before the words: the fit's reservation is checked against the caps (and
        pass                # solve_model_share refuses a share it cannot solve)
    planned = plan.groups() if plan is not None and plan.guarantee else []
    delta = total[1] if total is not None else model_delta(model) + delta_v
    inputs.charge = open_run_charge(
        result.model, lambda: documents_of(inputs.corpus, user_ids), [(event, 1)], planned, delta,
        note=f"the private vocabulary (DP set union, eps_V={eps_v:g}, delta_V={delta_v:g}) and the trainer's fit")


# ------------------------------------------------------------------------------------------------- 2. vocabulary
def choose_vocabulary(result: TrainingResult, inputs: _Inputs, seed=None, callback=None) -> None:
    """The training corpus over its words: a public list given (nothing chosen from the data); words chosen by DP set
    union inside their own budget (the first release, once every input is known good); or the corpus's own."""
    corpus = inputs.corpus
    if inputs.vocabulary is not None:
        words = list(inputs.vocabulary)
        if list(corpus.vocabulary.words) != words:      # the command line reads the corpus over the list already
            corpus = corpus.restrict(words, drop_empty=True)
        result.corpus, result.vocabulary = corpus, words
        _after_vocabulary(result, inputs)
        return _say(result, callback, "vocabulary")
    if inputs.private_vocabulary is None:
        result.corpus = corpus
        _after_vocabulary(result, inputs)
        return _say(result, callback, "vocabulary")
    from .fdptm import restrict_to_private_vocabulary  # looked up when called: tests patch it at its source

    eps_v, delta_v = inputs.private_vocabulary
    secure = bool(getattr(result.model, "secure", False))
    with _charged(inputs):      # the run's release holds the selection: charged once, before its noise
        chosen, event = restrict_to_private_vocabulary(corpus, eps_v, delta_v, mechanism=inputs.vocabulary_policy,
                                                       seed=None if secure else seed, secure=secure)
    result.corpus, result.vocabulary_event = chosen, event
    # passed to fit as the vocabulary: chosen privately, so the fit must not treat (and warn about) it as chosen from
    # the data; the composed report then names it as selected privately
    result.vocabulary = list(chosen.vocabulary.words)
    warn_if_few_private_words(chosen.vocab_size, int(result.model.n_topics), inputs.names)
    _after_vocabulary(result, inputs)
    _say(result, callback, "vocabulary", f"private vocabulary: {chosen.vocab_size} words by DP set union"
                                         f" (eps_V={eps_v:g}, delta_V={delta_v:g}, {inputs.vocabulary_policy} policy)")


def _after_vocabulary(result: TrainingResult, inputs: _Inputs) -> None:
    """What the vocabulary's size settles: FedLDA's split of a per-user total (public: the vocabulary's size), and the
    public corpus over the training words."""
    n_words = len(result.vocabulary) if result.vocabulary is not None else result.corpus.vocab_size
    if inputs.user_epsilon is not None:
        params = {k: v for k, v in result.model.get_params().items()
                  if k not in ("epsilon", "epsilon_per_entry", "pad_length")}
        result.model = FedLDA.from_user_budget(inputs.user_epsilon, n_words, **params)
    if inputs.public_corpus is not None:
        words = result.vocabulary if result.vocabulary is not None else list(result.corpus.vocabulary.words)
        public = inputs.public_corpus.restrict(words, drop_empty=True)
        if public.n_docs == 0:
            raise DPTopicError(f"{inputs.names.get('public_corpus', 'public_corpus')}: no document holds a word of the"
                               " training vocabulary; give public documents of the same domain.")
        inputs.public_corpus = public

    check_topics_fit_vocabulary(int(result.model.n_topics), n_words)


def warn_if_few_private_words(n_words: int, n_topics: int, names=None) -> None:
    """A private vocabulary of too few words for ``n_topics``: a warning (``SmallCorpusWarning``) saying how many and
    what to do; refused when there are fewer words than topics, which no trainer fits. The count is the DP set
    union's output, which the guarantee covers."""
    if n_words >= WORDS_PER_TOPIC * n_topics:
        return
    names = names or {}
    pv, voc, k = (names.get("private_vocabulary", "private_vocabulary"), names.get("vocabulary", "vocabulary"),
                  names.get("n_topics", "n_topics"))
    fewer = n_words // WORDS_PER_TOPIC
    sep = " " if k.startswith("-") else "="
    todo = (f"give the vocabulary a larger share of the budget (a larger EPS_V in {pv} EPS_V,DELTA_V), a public"
            f" {voc}{' FILE' if voc.startswith('-') else ''} (no budget spent on the words), or fewer topics"
            + (f" ({k}{sep}{fewer} or fewer)" if fewer >= 2 else "") + ".")
    kept = f"{pv} kept {n_words} words for {n_topics} topics"
    if n_words < n_topics:
        raise DPTopicError(f"{kept}: fewer words than topics, which no model can fit; {todo}")
    warnings.warn(f"{kept}, too few: each topic's top {WORDS_PER_TOPIC} words come from the same {n_words} (topics"
                  f" that differ need about {WORDS_PER_TOPIC} words each, {WORDS_PER_TOPIC * n_topics} in all);"
                  f" {todo}", SmallCorpusWarning, stacklevel=user_stacklevel())


# ------------------------------------------------------------------------------------------------------ 3. split
def split(result: TrainingResult, inputs: _Inputs | None = None, test_size: float = 0.2, callback=None,
          split_as=None) -> None:
    """The training and held-out parts, split by the model's unit (``split_for``): whole people under the user unit,
    by position under word-level DP, by each document's words otherwise; held-out copies of training documents are
    left out of the evaluation."""
    train_part, test = split_for(result.model if split_as is None else split_as, result.corpus, test_size)
    result.train, result.test = train_part, test
    if test is not None:
        result.test, result.held_out_copies = without_copies(test, train_part)
    _say(result, callback, "split", _corpus_note(result))
    note = pad_length_note(result.model, train_part, {} if inputs is None else inputs.names,
                           user_epsilon=None if inputs is None else inputs.user_epsilon)
    if note is not None:
        _say(result, callback, "pad_length", note)


def pad_length_note(model, train_part, names=None, user_epsilon=None) -> str | None:
    """FedLDA: one note when ``pad_length`` is far above the typical simulated user's length: each user then sends
    mostly padding, and its epsilon (per entry x entries) grows with the pad length. The typical length is a
    statistic of the private corpus, labelled outside the guarantee (shown, not saved)."""
    if not isinstance(model, FedLDA) or user_epsilon is not None or not train_part.n_docs:
        return None
    typical = median_user_length(train_part, model.n_clients)
    L = int(model.pad_length)
    if typical <= 0 or L <= PAD_LENGTH_FACTOR * typical:
        return None
    flag = (names or {}).get("pad_length", "pad_length")
    return (f"note: {flag}{' ' if flag.startswith('-') else '='}{L} is far above the typical user's {typical:.0f}"
            f" tokens (median; a statistic of the private corpus: {OUTSIDE}, shown here, not saved): each user"
            f" sends {L} entries, mostly padding, and its epsilon (per entry x entries) grows with them; a pad length"
            " near the typical user's length costs far less (docs/fedlda.md).")


def _corpus_note(result: TrainingResult) -> str:
    c, tr, te = result.corpus, result.train, result.test
    sizes = f"corpus: {c.n_docs} documents, {c.n_tokens} tokens, V={c.vocab_size}; " + (
        f"train {tr.n_docs} / test {te.n_docs + result.held_out_copies} ({SPLIT_NAMES[split_by(result.model)]})"
        if te is not None else f"train on all {tr.n_docs} (no held-out part)")
    if result.model.is_private:
        sizes += f" ({OUTSIDE}: exact sizes of the private corpus)"
    return sizes


def forecast(result: TrainingResult, inputs: _Inputs) -> None:
    """Under a privacy unit, a model of noise is never presented without a warning: from the utility table measured
    on public corpora (``dptopic recommend``'s one forecast), the size at which topics become useful at this budget.
    The count read is the training part's documents (people under the user unit), an exact figure of the private
    data, labelled outside the guarantee."""
    if inputs.forecast is None:
        return
    unit, epsilon, delta = inputs.forecast
    _forecast(unit, epsilon, delta, result.train, int(result.model.n_topics),
              "training documents" if result.test is not None or unit != "user" else "people")


def _forecast(unit, epsilon, delta, train_part, n_topics, what) -> None:
    n_docs = train_part.n_docs
    if unit == "user" and getattr(train_part, "user_ids", None) is not None:
        n_docs, what = len(set(train_part.user_ids)), "people"
    msg = too_small_message(unit, epsilon, n_docs, n_topics, what=what,
                            **({} if delta is None else {"delta": float(delta)}))
    if msg is not None:
        warnings.warn(msg, ForecastWarning, stacklevel=user_stacklevel())


# -------------------------------------------------------------------------------------------------------- 4. fit
def fit(result: TrainingResult, inputs: _Inputs, callback=None) -> None:
    """Fit the model on the training part (the public corpus, over the training words, as its prior)."""
    kw = {} if inputs.public_corpus is None else {"public_corpus": inputs.public_corpus}
    with warnings.catch_warnings():
        if inputs.forecast is not None:     # said once, before the fit, by forecast()
            warnings.simplefilter("ignore", ForecastWarning)
        warnings.simplefilter("ignore", PublicOverlapWarning)       # said once, by check_inputs
        with _charged(inputs):
            result.model.fit(result.train, vocabulary=result.vocabulary, **kw)
    if inputs.charge is not None:
        after_fit(result.model, inputs.charge)
    _say(result, callback, "fit")


def _charged(inputs: _Inputs):
    """``hook(inputs.charge)`` around a release of the run (its own charge already on the ledger), or nothing."""
    return contextlib.nullcontext() if inputs.charge is None else hook(inputs.charge)


# ------------------------------------------------------------------------------------------------ 5. the metrics
VARIATIONAL = ("DPSVI", "OnlineVB", "DocDPEM", "DocDPCooccurrence")


HELD_OUT_SCORED = 50_000
"""The held-out documents the metrics read at most: a larger held-out part is scored on this many of its documents,
evenly spaced in its order (the fold-in for perplexity reads each once: about 30 s for the 200,000 held-out documents
of a 10^6-document run; 50,000 documents of 60 words already give the per-word perplexity to a fraction of a
percent). ``n_test_docs`` stays the held-out part's size, ``n_test_docs_scored`` says how many were read."""


def scored_part(test):
    """``test``, or :data:`HELD_OUT_SCORED` of its documents, evenly spaced, when it holds more."""
    if test is None or test.n_docs <= HELD_OUT_SCORED:
        return test
    return test.subset(np.linspace(0, test.n_docs - 1, HELD_OUT_SCORED).round().astype(np.int64))


def held_out_metrics(result: TrainingResult, callback=None, kind: str = "all") -> None:
    """The held-out metrics (``training_run_metrics``; ``kind="coherence"``: NPMI and diversity alone), set as
    ``model.metrics_``, on at most :data:`HELD_OUT_SCORED` held-out documents (:func:`scored_part`); under a private
    model they read private documents: labelled outside the guarantee."""
    model = result.model
    if result.test is None:
        model.metrics_ = result.metrics = {}
        return _say(result, callback, "metrics")
    test = scored_part(result.test)
    if kind == "coherence":     # NPMI and diversity alone (the demo reads them beside a reference's)

        metrics = {"n_train_docs": result.train.n_docs, "n_test_docs": test.n_docs,
                   **npmi_and_diversity(model, test)}
    else:
        style = "variational" if type(model).__name__ in VARIATIONAL else "gibbs"
        with fold_in_threads(model):        # the same figures on every core (4.7 -> 2.3 s at 10^6 on 2 cores)
            metrics = training_run_metrics(model, result.train, test, style=style)
    sampled = test is not result.test
    if sampled:
        metrics.update(n_test_docs=result.test.n_docs, n_test_docs_scored=test.n_docs)
    model.metrics_ = result.metrics = metrics
    on = (f"{test.n_docs:,} of the {result.test.n_docs:,} held-out documents (evenly spaced)" if sampled
          else "held-out documents")
    _say(result, callback, "metrics", f"held-out metrics: computed on {on} of the private corpus: {OUTSIDE}"
         if model.is_private else None)


# --------------------------------------------------------------------------------- 6. the vocabulary's composition
def solve_model_share(result: TrainingResult, total: tuple, build) -> None:
    """``vocabulary_in_total``: the trainer rebuilt (``build(epsilon)``) with the epsilon at which the composed total
    the card will state, of its release plan over the chosen words and the vocabulary's event, is the total asked
    (:func:`~dptopic.accounting.set_union.model_epsilon_within_total`). Public settings alone: the words' count and
    the vocabulary's event are released; no document is read."""
    epsilon, delta, eps_v, delta_v = total
    n_words = len(result.vocabulary)
    if getattr(result.model, "release_plan", None) is None or not result.model.release_plan(n_words).guarantee:
        raise DPTopicError(f"vocabulary_in_total needs a private trainer: {type(result.model).__name__} claims no"
                           " guarantee to share the total with.")
    share = _share(total, result.vocabulary_event, n_words, build)
    result.model = build(share)
    result.notes.append(f"the trainer's share of epsilon {epsilon:g}: {share:.6g} at delta {delta - delta_v:g} (the"
                        f" private vocabulary takes ({eps_v:g}, {delta_v:g}), composed as the card states it)")


def _share(total: tuple, event, n_words, build) -> float:
    """The trainer's epsilon at which the composed total over ``n_words`` words (None: a size not known yet, the
    trainer's plan for it) is the total asked."""
    epsilon, delta, eps_v, delta_v = total

    def composed(e: float) -> float:
        return composed_epsilon(event, build(e).release_plan(n_words), delta - delta_v)

    return model_epsilon_within_total(composed, epsilon, eps_v)


def compose_vocabulary(result: TrainingResult) -> None:
    """FDPTM: the model's report replaced by its composition with the private vocabulary's selection."""
    if result.vocabulary_event is None:
        return

    for w in compose_privacy(result.model, result.vocabulary_event).get("warnings", []):
        warnings.warn(w, UserWarning, stacklevel=user_stacklevel())


# -------------------------------------------------------------------------------------------- 7. the word list
def record_words(result: TrainingResult, inputs: _Inputs) -> None:
    """Which public word list the model was trained on (its name, size and sha256) in ``privacy_``."""
    if inputs.vocabulary is not None:
        record_word_list(result.model, inputs.vocabulary_name or "vocabulary", inputs.vocabulary)


# --------------------------------------------------------------------------------------------------- 8. the card
def card(result: TrainingResult) -> None:
    """The model's privacy card, from its privacy report alone."""
    rep = getattr(result.model, "privacy_", None)
    result.card = privacy_card(rep, type(result.model).__name__, check=False) if isinstance(rep, dict) else None


# --------------------------------------------------------------------------------------------------- 9. save
def save(result: TrainingResult, out, save_metrics: bool = False, callback=None) -> None:
    """Save to ``out`` (a private model's metrics only with ``save_metrics``, labelled outside the guarantee)."""
    if out is None:
        return _say(result, callback, "save")
    result.path = str(result.model.save(out, save_metrics=save_metrics or None))
    _say(result, callback, "save", f"model written to {result.path}")


def _train_shards(result: TrainingResult, inputs: _Inputs, out, save_metrics, callback) -> TrainingResult:
    """A shard folder: the workers (or one shard at a time) read it; nothing is held out (``dptopic evaluate`` on a
    test corpus afterwards)."""
    shards = inputs.shards
    result.train = shards
    _say(result, callback, "split", f"corpus: {len(shards.paths)} shards, {shards.n_docs} documents,"
                                    f" {shards.n_tokens} tokens, V={shards.vocab_size}; held-out evaluation skipped")
    if inputs.forecast is not None:
        unit, epsilon, delta = inputs.forecast
        _forecast(unit, epsilon, delta, shards, int(result.model.n_topics), "documents")
    with warnings.catch_warnings():
        if inputs.forecast is not None:
            warnings.simplefilter("ignore", ForecastWarning)
        result.model.fit(shards)
    _say(result, callback, "fit")
    result.model.metrics_ = result.metrics = {}
    record_words(result, inputs)
    card(result)
    save(result, out, save_metrics, callback=callback)
    return result


def no_vocabulary_error() -> ParameterError:
    """The refusal of a report file that does not embed its vocabulary when no ``vocabulary`` is given (one sentence
    for ``train_batch`` and the command line, which writes it in its flags)."""
    return ParameterError("the report file does not embed its vocabulary: give {vocabulary=} (the public word list).",
                          "vocabulary", key="training.run.no_vocabulary_error")


def _reads_reports(model) -> bool:
    """Whether ``model`` trains on randomized reports (``dptopic randomize``), not on a corpus (the registry says)."""
    entry = trainer_of(model)
    return entry is not None and entry.reads == "reports"


def _train_reports(result: TrainingResult, reports, vocabulary, reports_per_contributor, out, overwrite,
                   callback, batch: bool = False, quiet: bool = False, names=None) -> TrainingResult:
    """Local DP (lp, olp, ldp-doc): the reports were randomized on the contributors' side, so every server step is
    post-processing; nothing is held out. ``reports_per_contributor``: the guarantee is stated for contributors who
    sent up to that many reports each (their epsilons add). ``batch``: one more mini-batch into the model
    (``partial_fit``; :func:`dptopic.training.train_batch`), not a fresh fit."""
    vocabulary = check_reports(result.model, reports, vocabulary, out=out, overwrite=overwrite,
                               reports_per_contributor=reports_per_contributor, names=names)
    _say(result, callback, "checked")
    fit_reports(result, reports, vocabulary, batch=batch, quiet=quiet, callback=callback)
    state_contributors(result, reports_per_contributor)
    card(result)
    _say(result, callback, "card")
    save(result, out, callback=callback)
    return result


def check_reports(model, reports, vocabulary=None, *, out=None, overwrite=False, reports_per_contributor=None,
                  names=None):
    """:func:`check_inputs` for randomized reports, before the model reads one: the model trains on reports (the
    registry's ``reads``) and its parameters are valid, ``reports_per_contributor`` is a count of reports, the
    vocabulary is known (given, or embedded in the reports), the output folder is new or empty. The reports themselves are checked by the model's own ``fit``/``partial_fit``,
    which refuses a bad set before it changes anything. Returns the vocabulary."""
    names = dict(names or {})
    if not _reads_reports(model):
        raise DPTopicError(f"{type(model).__name__} trains on a corpus, not on randomized reports: give a corpus"
                           " (dptopic.train), or a trainer of reports (lp, olp, ldp-doc).")
    model.validate_parameters()
    if reports_per_contributor is not None:     # as for_contributors takes it, refused before a batch is read
        whole = isinstance(reports_per_contributor, float) and reports_per_contributor.is_integer()
        validate_value("reports_per_contributor", int(reports_per_contributor) if whole else reports_per_contributor,
                       [Int(1, None)])
    if out is not None:
        check_output_dir(out, overwrite=overwrite)
    if isinstance(vocabulary, tuple) and len(vocabulary) == 2 and isinstance(vocabulary[0], (str, type(None))):
        vocabulary = vocabulary[1]
    vocabulary = vocabulary if vocabulary is not None else getattr(reports, "vocabulary", None)
    if vocabulary is None:
        raise no_vocabulary_error()
    return vocabulary


def fit_reports(result: TrainingResult, reports, vocabulary, batch: bool = False, quiet: bool = False,
                callback=None) -> None:
    """``fit`` on the reports (``batch``: ``partial_fit``, one more mini-batch; a refused batch leaves the model as it
    was). ``quiet``: the model's warnings are not raised (a server prints none); the finding a stream must keep,
    OLP-LDA's "the prior corpus seems to overlap the stream", becomes a line of ``result.notes``."""
    model = result.model
    step = model.partial_fit if batch else model.fit
    kw = {"vocabulary": vocabulary} if "vocabulary" in inspect.signature(step).parameters else {}
    # OLP-LDA keeps its batch's overlap finding on the model, where a caller reads it without the process-wide
    # warnings registry (recording warnings would also catch other threads' while a batch trains)
    model.__dict__.pop("_overlap_note", None)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        step(reports, **kw)
    note = getattr(model, "_overlap_note", None)
    result.train, result.vocabulary = reports, list(getattr(vocabulary, "words", vocabulary))
    _say(result, callback, "fit", " ".join(note.split()) if quiet and note else None)


def state_contributors(result: TrainingResult, reports_per_contributor) -> None:
    """The guarantee stated for contributors who sent up to ``reports_per_contributor`` reports each (their epsilons
    add; never lowered); None: as the model states it already (one report each, for a fresh model)."""
    if reports_per_contributor is not None:
        result.model.for_contributors(reports_per_contributor)


__all__ = ["train", "TrainingResult", "check_call", "check_inputs", "choose_vocabulary", "split", "forecast", "fit",
           "held_out_metrics", "compose_vocabulary", "record_words", "card", "save", "warn_if_few_private_words",
           "check_reports", "fit_reports", "state_contributors", "DOCUMENT_LEVEL"]
