"""One call for a guarantee: the best measured trainer for a privacy unit and a budget, with its defaults.

The choice and the defaults come from public corpora (``benchmarks/bench_utility.py``; see
``docs/choosing_a_guarantee.md``), never from the user's data.
"""
from __future__ import annotations

import warnings

from .._validation import Int, Real, plain_number, validate_value
from ..accounting.budget import HDP_SPEND_TOLERANCE, hdp_budget_error, hdp_total_epsilon
from ..accounting.events import EPSILON_MAX
from ..accounting.units import TRAIN_DELTA, UNIT_EPSILON_MAX, WORD_ITERATIONS
from ..corpus.corpus import user_ids_of
from ..corpus.split import held_out_split
from ..errors import DPTopicError, user_stacklevel
from ..models.cdp_lda import CDPLDA
from ..models.hdp_lda import HDPLDA
from ..models.registry import MAX_TOPICS, UNITS, for_unit_trainer, trainer

# unit -> the name of the trainer for_unit builds (the registry's default_for; docdp-cooc for a document or a person:
# NPMI ratio 0.58 at epsilon 1 on 20 Newsgroups, docs/document_dp.md).
UNIT_TRAINERS = {unit: for_unit_trainer(unit).name for unit in UNITS}


def _check_unit(unit: str) -> None:
    for_unit_trainer(unit)      # an unknown unit is refused there, in one line


def trainer_for_unit(unit: str, epsilon: float, *, unit_name: str = "unit", epsilon_name: str = "epsilon") -> str:
    """The name (a key of ``dptopic.models.registry.TRAINERS``) of the trainer :func:`for_unit` builds for ``unit``; a budget
    above the unit's largest (``accounting.units.UNIT_EPSILON_MAX``) is refused. ``unit_name``/``epsilon_name``: what
    the refusal calls them (a front door's own names for them)."""
    _check_unit(unit)
    top = UNIT_EPSILON_MAX[unit]
    if epsilon > top:
        raise DPTopicError(f"invalid {epsilon_name} {epsilon:g}: {unit_name} {unit} takes a budget up to {top:g}"
                           + (f" (a {unit}-level budget above it protects nothing)." if unit != "word" else
                              " per word, as dptopic.for_unit."))
    return for_unit_trainer(unit).name


SPLIT_NAMES = {"position": "held out by position, as the word-level trainers split",
               "stable": "held out by each document's words, as the other trainers split",
               "person": "held out by person: all of a person's documents on one side, by a keyed hash of their id;"
                         " the held-out people are charged on the ledger as the others are (the run reads their"
                         " documents)"}
"""Each way :func:`split_by` splits a training run, in words (the corpus line of ``dptopic train`` and of
``dptopic.train``'s notes)."""


def split_by(model) -> str:
    """How a training run of ``model`` splits off its held-out documents (``by`` of
    :func:`dptopic.corpus.split.held_out_split`): a user-level trainer's neighbours add or remove one person's
    documents, so whole people fall on one side, by a keyed hash of their id ("person": a split by words would tell
    copies of one message apart by their rank in file order, and removing one person could move other people's
    copies); a word-level trainer's neighbours replace one token's word, so a document's side follows its position
    ("position": a split by its words could move it, and the training part would differ by a whole document); any
    other's follows its own words ("stable": adding one document moves no other)."""
    if getattr(model, "unit", None) == "user":
        return "person"
    return "position" if isinstance(model, (HDPLDA, CDPLDA)) else "stable"


def split_for(model, corpus, test_size: float = 0.2, *, user_ids=None):
    """``(train, test)``: ``corpus`` split as a training run of ``model`` splits it (:func:`split_by`); ``test_size``
    0 holds nothing out and gives ``(corpus, None)``. The one place every training run (Python, the command line,
    the audit, the benchmarks) splits its documents.

    For a user-level model (``unit="user"``) the person of each document is ``corpus.user_ids`` or ``user_ids=``
    (one string per document; both given must agree), and the parts carry it."""
    by = split_by(model)
    if user_ids is not None and by != "person":
        raise DPTopicError(f"user_ids= splits by person, for a guarantee per person: give {type(model).__name__}"
                           "(unit='user', ...), or leave user_ids out.")
    if by == "person":
        user_ids = user_ids_of(corpus, user_ids)
        if user_ids is None:
            raise DPTopicError(f"{type(model).__name__}(unit='user') holds out whole people: give user_ids= (one"
                               " string per document) or a Corpus read with its user ids (user_field=).")
    return held_out_split(corpus, test_size, by=by, user_ids=user_ids)


def for_unit(unit: str, epsilon: float, delta: float = TRAIN_DELTA, n_topics: int | None = None, **kw):
    """An unfitted estimator whose whole run is (epsilon, delta)-DP for one ``unit`` ("document": one document added
    or removed; "user": one person's documents added or removed, fit with ``user_ids=``; "word": one token's word
    replaced), the best trainer measured for that unit, with its defaults.
    ``n_topics`` (or scikit-learn's name for it, ``n_components``) defaults to 20, the K the utility table measured."""
    # NumPy's numbers taken as Python's (np.float32(2.0) is a budget), before any rule reads them
    epsilon, delta, n_topics = plain_number(epsilon), plain_number(delta), plain_number(n_topics)
    kw = {k: plain_number(v) for k, v in kw.items()}
    if "n_components" in kw:
        if n_topics is not None:
            raise DPTopicError("give n_topics or scikit-learn's name for it, n_components, not both.")
        n_topics = kw.pop("n_components")
    n_topics = 20 if n_topics is None else n_topics
    _check_unit(unit)
    if unit == "word" and isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and epsilon > 0:
        # HDP-LDA's rule (one with train, recommend and HDPLDA.from_budget)
        refusal = hdp_budget_error(epsilon, kw.get("n_iter", WORD_ITERATIONS),
                                   kw.get("epsilon_inherent", HDPLDA.DEFAULT_EPSILON_INHERENT),
                                   delta if isinstance(delta, float) and 0 < delta < 1 else TRAIN_DELTA)
        if refusal is not None:
            raise refusal
    # a document-level budget above 500 protects nothing; a word-level one is per word and starts in the hundreds
    validate_value("epsilon", epsilon, [Real(0, UNIT_EPSILON_MAX[unit], "right")])
    validate_value("delta", delta, [Real(0, 1, "neither")])
    validate_value("n_topics", n_topics, [Int(1, MAX_TOPICS)])
    cls = trainer(trainer_for_unit(unit, epsilon)).cls
    if unit == "word":
        model = cls.from_budget(epsilon, delta, kw.pop("n_iter", WORD_ITERATIONS), n_topics=n_topics, **kw)
        note = unspent_budget_note(model, epsilon)
        if note is not None:
            warnings.warn(note, UserWarning, stacklevel=user_stacklevel())
        return model
    if unit == "user":          # the document-level trainer, each person's documents bounded as a whole
        kw["unit"] = "user"
    return cls.from_budget(epsilon, delta, n_topics=n_topics, **kw)


def unspent_budget_note(model, epsilon: float, flag: str = "epsilon") -> str | None:
    """``HDPLDA.from_budget`` gives each iteration's Laplace release at most the epsilon the accountants support
    (``EPSILON_MAX``): a budget above what the run then spends is not all spent. The sentence that says so (``flag``
    names the budget, as the caller calls it), or None when the budget is all spent."""
    if model.epsilon_laplace_ is None or model.epsilon_laplace_ < EPSILON_MAX:
        return None
    spent = hdp_total_epsilon(EPSILON_MAX, model.epsilon_inherent_, int(model.n_iter), float(model.delta),
                              model.noise == "discrete", extra_laplace=1 if model.final_release == "fresh" else 0)
    if spent * HDP_SPEND_TOLERANCE >= epsilon:     # within 1% of the total: taken as spent, as train and recommend do
        return None
    return (f"{flag} {epsilon:g} is not all spent: each iteration's noisy release takes at most epsilon_L ="
            f" {EPSILON_MAX:g} (the accountants' limit), so the {int(model.n_iter)} iterations spend about {spent:,.6g}"
            f" per word; any budget from there up trains the same model, and the privacy report states what it"
            " spends.")
