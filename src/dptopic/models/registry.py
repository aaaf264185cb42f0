"""Every trainer, declared once: its name, its class and the facts every front door reads about it.

One :class:`Trainer` per public estimator. ``dptopic.train(algorithm=...)`` takes its ``name``; ``dptopic.for_unit``
picks the trainer whose ``default_for`` holds a unit; ``models.load`` finds a saved model's class here
(:func:`class_named`); the audit's parameter names and the card's secure-mode text are look-ups of these entries, and
the command line keys its own words for each trainer (its flags, its help) by ``name`` (``cli/_trainers.py``). The facts
are data: no calibration or other mathematics lives here.

An entry names its class by where it stands (``"lda.LDA"``: module ``dptopic.models.lda``), and the class is imported
when first read (``Trainer.cls``): so the command line builds its parser and help from the registry without loading
numba, scipy or scikit-learn, and every estimator module may import this one (no import circle).

Adding a trainer is one class (in ``models/``), one entry in :data:`TRAINERS`, and, for a trainer the command line
trains, its flags in ``cli/_trainers.py`` (CONTRIBUTING.md, "Adding a trainer").
"""
from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from functools import cached_property
from types import MappingProxyType
from typing import Mapping

from ..accounting.fedlda_scope import FED_SECURE
from ..accounting.units import (
    DOCUMENT_RANKING_NOISE,
    TRAIN_DELTA,
    UNIT_EPSILON_MAX,
    WORD_EPSILON_INHERENT,
    WORD_ITERATIONS,
    unreachable_epsilon,
)
from ..accounting.verify import rounded_up
from ..errors import DPTopicError, ParameterError

UNITS = ("document", "user", "word")
"""The privacy units ``dptopic.for_unit`` and ``dptopic.train(unit=...)`` take."""
MAX_TOPICS = 100_000
"""The most topics a trainer takes (the ``n_topics`` bound of every estimator)."""

BUDGET_CONSTRUCTORS = ("from_budget", "from_user_budget")
"""The class methods that build a trainer from a total budget; their parameters count as the trainer's."""

SEARCHABLE = ("docdp-cooc", "docdp", "svi")
"""The trainers whose runs a private search's default score reads (``training.private_search``): private, trained on a
corpus, with ``supported_topics_`` decided from their release; ``dptopic search`` runs these."""

NOT_SEARCHED = ("epsilon", "delta", "seed", "secure", "ledger", "dataset", "verbose")
"""Parameters a private search does not vary: the budget is one for every run, a seed is refused, the rest are no
hyper-parameters."""


@dataclass(frozen=True)
class Trainer:
    """One trainer: the facts the library and the command line read about it.

    Attributes
    ----------
    name : the ``algorithm`` of ``dptopic.train`` (and of the command line), and the key of :data:`TRAINERS`.
    where : ``"module.Class"`` within ``dptopic.models``; ``cls``, the estimator class, is imported from it when
        first read.
    summary : what it is, in one line (the command line's help adds its flags, ``cli/_trainers.py``).
    units : the privacy units its guarantee can be stated in (``"document"``, ``"user"``, ``"word"``); ``()``: it
        claims no guarantee.
    epsilon : the parameter that is the total epsilon in the model's unit (of ``__init__``, or of ``from_budget`` for
        a trainer calibrated from a total budget); None: no guarantee to set.
    components : parameters that split or set that total (HDP-LDA's ``epsilon_laplace`` and ``epsilon_inherent``,
        FedLDA's ``epsilon_per_entry``); for a baseline with no guarantee (``epsilon`` None), the paper's figure
        (CDP-LDA's ``paper_epsilon``).
    reads : ``"corpus"`` (documents) or ``"reports"`` (randomized reports from a local randomizer,
        ``dptopic.contributor``).
    streams_shards : it trains from a folder of corpus shards (``corpus.shards``), one shard at a time.
    dask : it runs on a Dask cluster (``backend="dask"``).
    audit : how the audit (``dptopic.attacks.audit``) attacks it: ``"lira"`` (shadow models), ``"lira+release"``
        (and ``score="release"``, its release scored directly); None: not audited (``not_audited`` says why).
    not_audited : why the audit does not attack it, when ``audit`` is None.
    secure : what ``secure=True`` covers (the privacy card's text); None: no secure mode.
    default_for : the units for which ``dptopic.for_unit`` (and ``dptopic.train(unit=...)``) picks it.
    cli : the command line's ``train`` trains it (its flags: ``cli/_trainers.py``).
    """

    name: str
    where: str
    summary: str
    units: tuple = ()
    epsilon: str | None = None
    components: tuple = ()
    reads: str = "corpus"
    streams_shards: bool = False
    dask: bool = False
    audit: str | None = None
    not_audited: str | None = None
    secure: str | None = None
    default_for: tuple = ()
    cli: bool = True

    @cached_property
    def cls(self) -> type:
        """The estimator class (imported on first read)."""
        module, _, name = self.where.rpartition(".")
        return getattr(importlib.import_module(f".{module}", __package__), name)

    @property
    def class_name(self) -> str:
        """The estimator class's name (without importing it)."""
        return self.where.rpartition(".")[2]

    def parameters(self) -> tuple:
        """The parameters it reads: those of ``cls.__init__``, then those of its budget constructors
        (:data:`BUDGET_CONSTRUCTORS`: DP-SVI's ``epsilon`` is ``from_budget``'s, FedLDA's ``user_epsilon``
        ``from_user_budget``'s) that ``__init__`` lacks."""
        names = [n for n, p in inspect.signature(self.cls.__init__).parameters.items()
                 if n != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
        for constructor in BUDGET_CONSTRUCTORS:
            build = getattr(self.cls, constructor, None)
            if build is not None:
                names += [n for n, p in inspect.signature(build).parameters.items()
                          if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and n not in names]
        return tuple(names)

    @property
    def marks_supported_topics(self) -> bool:
        """Whether its fit says which topics stand above the noise of its releases (``supported_topics_``)."""
        return bool(self.cls.marks_supported_topics)

    def fit_parameters(self) -> tuple:
        """The keyword arguments of ``cls.fit`` beyond the data (``vocabulary``, ``user_ids``, ``public_corpus``)."""
        return tuple(n for n, p in inspect.signature(self.cls.fit).parameters.items()
                     if p.kind == p.KEYWORD_ONLY)

    @property
    def spends_budget(self) -> bool:
        """Whether its fit spends a privacy budget on the data it is given (a central private trainer: each fit is
        charged to its dataset's ledger, and a refit spends again); LocalDocumentLDA's is post-processing of reports."""
        return bool(self.cls._spends_budget)      # the estimators' own class fact (models/base.py)

    @property
    def private(self) -> bool:
        """Whether it claims a guarantee."""
        return bool(self.units)


_LOCAL_DOCUMENT_NOT_AUDITED = (
    "LocalDocumentLDA learns from document-level local reports (one randomized word pair per document, written by"
    " the document-level randomizer), and the audit simulates only the word-level randomizer (lp, olp); its guarantee"
    " is the randomizer's local epsilon per document, which holds whatever the server does (docs/local_dp.md).")

GIBBS_SECURE = (
    "secure mode: every Laplace draw comes from OpenDP's exact samplers on the operating system's CSPRNG, applied by"
    " OpenDP to the counts themselves, and the topic sampler's xorshift128+ states are seeded from the OS CSPRNG"
    " (secrets). Not covered: the topic sampler computes its conditional in floating point and draws from xorshift128+,"
    " which is fast but not a cryptographic generator; the data-independent initial topics come from NumPy's PCG64"
    " seeded from OS entropy.")
"""What ``secure=True`` covers in the Gibbs trainers with Laplace noise (HDP-LDA, CDP-LDA, CDP-LDA+)."""

_DOCDP_SECURE = (
    "secure mode: the Gaussian noise of every release is drawn by OpenDP from the operating system's CSPRNG. DocDPEM's"
    " one other random choice, its data-independent start (a Dirichlet draw of the starting topics; none when init"
    " gives public topics), comes from NumPy's PCG64 seeded from fresh OS entropy, not from the CSPRNG; it reads no"
    " document.")
_COOC_SECURE = (
    "secure mode: the Gaussian noise of both releases (the noisy word counts that choose the words, and the"
    " co-occurrence statistic) is drawn by OpenDP from the operating system's CSPRNG. Its topics are recovered from"
    " the released statistics by a deterministic factorisation (post-processing). With documents_per_user"
    " (unit='user') it also chooses each person's documents at random, from NumPy's PCG64 seeded from fresh OS"
    " entropy, not from the CSPRNG; it draws nothing else at random.")
_DPSVI_SECURE = (
    "secure mode: the Gaussian noise of every step is drawn by OpenDP from the operating system's CSPRNG. DPSVI's"
    " other random choices come from NumPy's PCG64 seeded from fresh OS entropy, not from the CSPRNG: the Poisson"
    " sampling of each mini-batch, the random cap of long documents (max_doc_len), the E-step starts and the random"
    " start of lambda. The amplification by subsampling that its epsilon rests on assumes the sampling coins are"
    " random and unseen: in secure mode those coins come from PCG64, which is not a cryptographic generator (see"
    " docs/privacy.md).")


def _entries() -> tuple:
    # the order is that of the train command's table of trainers
    return (
        Trainer("lda", "lda.LDA",
                "not private: LDA by collapsed Gibbs sampling (the default)",
                streams_shards=True, dask=True, audit="lira"),
        Trainer("hdp", "hdp_lda.HDPLDA",
                "word-level DP: HDP-LDA (Zhao et al. 2021)",
                units=("word",), epsilon="epsilon", components=("epsilon_laplace", "epsilon_inherent"),
                streams_shards=True, dask=True, audit="lira+release", secure=GIBBS_SECURE, default_for=("word",)),
        Trainer("cdp", "cdp_lda.CDPLDA",
                "baseline with no guarantee: CDP-LDA, noise on the counts once",
                components=("paper_epsilon",), streams_shards=True, dask=True, audit="lira", secure=GIBBS_SECURE),
        Trainer("cdp+", "cdp_lda.CDPLDAPlus",
                "baseline with no guarantee: CDP-LDA+, noise on the counts every sweep",
                components=("paper_epsilon",), streams_shards=True, dask=True, audit="lira", secure=GIBBS_SECURE),
        Trainer("docdp-cooc", "docdp_cooc.DocDPCooccurrence",
                "document-level DP: one noisy co-occurrence release",
                units=("document", "user"), epsilon="epsilon",
                streams_shards=True, dask=True, audit="lira+release", secure=_COOC_SECURE,
                default_for=("document", "user")),
        Trainer("docdp", "docdp.DocDPEM",
                "document-level DP: full-batch noisy EM",
                units=("document", "user"), epsilon="epsilon",
                streams_shards=True, dask=True, audit="lira+release", secure=_DOCDP_SECURE),
        Trainer("svi", "dpsvi.DPSVI",
                "document-level DP: DP stochastic variational inference",
                units=("document",), epsilon="epsilon",
                audit="lira+release", secure=_DPSVI_SECURE),
        Trainer("online-vb", "online_vb.OnlineVB",
                "not private: online variational Bayes",
                audit="lira"),
        Trainer("fed", "fedlda.FedLDA",
                "user-level local DP: FedLDA (Wang et al. 2020), simulated users",
                units=("user",), epsilon="epsilon", components=("epsilon_per_entry",),
                audit="lira", secure=FED_SECURE),
        Trainer("lp", "lplda.LPLDA",
                "local DP: LP-LDA on word-level reports",
                units=("word",), epsilon="epsilon_word",
                reads="reports", audit="lira"),
        Trainer("olp", "olp_lda.OLPLDA",
                "local DP: OLP-LDA on word-level reports and a public prior corpus",
                units=("word",), epsilon="epsilon_word",
                reads="reports", audit="lira"),
        Trainer("ldp-doc", "local_document_lda.LocalDocumentLDA",
                "local DP: topics from document-level reports",
                units=("document",),
                reads="reports", not_audited=_LOCAL_DOCUMENT_NOT_AUDITED),
        # not trained by `dptopic train`
        Trainer("online-lda", "online_lda.OnlineLDA",
                "not private: O-LDA, online LDA over a stream of mini-batches (Zhao et al. 2020), the non-private part"
                " of OLP-LDA",
                audit="lira", cli=False),
        Trainer("secure-sum", "secure_sum.SecureSumTopics",
                "user-level DP: topics from a secure-sum collection round (docs/secure_sum.md)",
                units=("user",),
                not_audited=("SecureSumTopics is read from the two secure sums of a secure-sum collection round, not"
                             " fitted on documents, so there is no training to re-run;"
                             " its guarantee is the secure sum's (docs/secure_sum.md)."),
                cli=False),
    )


TRAINERS: Mapping = MappingProxyType({t.name: t for t in _entries()})
"""Every public estimator, by name."""


def trainer(name: str) -> Trainer:
    """The trainer called ``name`` (an ``algorithm`` of ``dptopic.train``); an unknown name is refused in one line."""
    t = TRAINERS.get(name) if isinstance(name, str) else None
    if t is None:
        raise DPTopicError(f"unknown trainer {str(name)[:40]!r}: choose one of {', '.join(TRAINERS)}.")
    return t


def _same_class(a: type, b: type) -> bool:
    # by name too: a test may reload dptopic's modules, making a second class object of the same class
    return a is b or (a.__module__, a.__qualname__) == (b.__module__, b.__qualname__)


def trainer_of(model_or_class) -> Trainer | None:
    """The entry of an estimator or estimator class (its own class, not a base's); None for any other."""
    cls = model_or_class if isinstance(model_or_class, type) else type(model_or_class)
    return next((t for t in TRAINERS.values() if t.class_name == cls.__name__ and _same_class(t.cls, cls)), None)


def class_named(class_name: str) -> type | None:
    """The estimator class a saved model names (``model.json``'s ``class``); None when no trainer has that class."""
    return next((t.cls for t in TRAINERS.values() if t.class_name == class_name), None)


def for_unit_trainer(unit: str) -> Trainer:
    """The trainer ``dptopic.for_unit`` (and ``dptopic.train(unit=...)``) picks for ``unit``."""
    found = next((t for t in TRAINERS.values() if unit in t.default_for), None)
    if found is None:
        raise DPTopicError(f"invalid unit {unit!r}: give 'document' (one document added or removed), 'user'"
                           " (one person's documents) or 'word' (one token's word replaced); for local DP see"
                           " dptopic.contributor (the randomizers) and docs/local_dp.md.")
    return found


def unit_algorithm_error(unit: str | None, algorithm: str | None) -> ParameterError | None:
    """Why a run may not take both ``unit`` and ``algorithm`` (None when it may, or when either is None): under
    ``unit="user"`` the algorithm must bound each person's documents as a whole (a trainer with both the document and
    the user unit); any other unit picks its trainer itself (``dptopic.train`` takes that trainer's own name too). One
    rule for ``dptopic.train`` and the command line (and its help), each writing it in its own names."""
    if unit is None or algorithm is None:
        return None
    if unit == "user":
        default = for_unit_trainer("user").name
        if algorithm == default or {"document", "user"} <= set(getattr(TRAINERS.get(algorithm), "units", ())):
            return None
        others = [t.name for t in TRAINERS.values() if {"document", "user"} <= set(t.units) and t.name != default]
        return ParameterError("{unit=} needs a trainer that bounds each person's documents as a whole: {default} (the"
                              " default) or {alternatives}; {algorithm=} cannot give it.", "algorithm", algorithm,
                              values={"unit": unit}, default=default, alternatives=" or ".join(others),
                              key="models.registry.unit_algorithm_error.2")
    return ParameterError("{unit=} picks the trainer itself: leave {algorithm} out, or leave {unit} out.", "algorithm",
                          algorithm, values={"unit": unit},
                          key="models.registry.unit_algorithm_error")


def document_epsilon_floor(delta: float = TRAIN_DELTA, ratio: float = DOCUMENT_RANKING_NOISE) -> float:
    """The smallest epsilon ``dptopic.for_unit("document")`` (and ``dptopic train`` under that unit) reaches at
    ``delta``:
    ``DocDPCooccurrence``'s two releases (:func:`~dptopic.accounting.plan.docdp_cooc_epsilon_floor`), searched up to
    the unit's largest budget (:data:`~dptopic.accounting.units.UNIT_EPSILON_MAX`); ``inf`` when none reaches it."""
    from ..accounting.plan import docdp_cooc_epsilon_floor  # numpy: the registry alone loads none (the CLI's parser)

    return docdp_cooc_epsilon_floor(float(delta), float(ratio), UNIT_EPSILON_MAX["document"])


def train_refusal(unit: str, epsilon: float, n_topics: int | None = None, delta: float = TRAIN_DELTA,
                  n_iter: int | None = None, epsilon_inherent: float | None = None, reach: bool = True) -> str | None:
    """The line of :func:`train_refusal_error`, or None."""
    err = train_refusal_error(unit, epsilon, n_topics, delta, n_iter, epsilon_inherent, reach)
    return None if err is None else str(err)


def train_refusal_error(unit: str, epsilon: float, n_topics: int | None = None, delta: float = TRAIN_DELTA,
                        n_iter: int | None = None, epsilon_inherent: float | None = None,
                        reach: bool = True) -> ParameterError | None:
    """Why ``dptopic.for_unit(unit, ...)`` (and ``dptopic train`` under ``unit``) refuses these settings, as a
    :class:`~dptopic.errors.ParameterError` (None when it takes them): more than :data:`MAX_TOPICS` topics, a document-
    or user-level epsilon above :data:`~dptopic.accounting.units.UNIT_EPSILON_MAX` (it protects nothing) or below
    what the trainer reaches at ``delta`` (:func:`~dptopic.accounting.units.unreachable_epsilon`), a word-level total
    it cannot spend (HDP-LDA's rule, :func:`~dptopic.accounting.budget.hdp_budget_error`, at ``n_iter`` iterations,
    :data:`~dptopic.accounting.units.WORD_ITERATIONS` by default). ``dptopic recommend`` reads the same rule for its
    "train it" line, so that it never suggests a command that train refuses. ``reach=False`` leaves out the floor (a
    caller that checks it with the trainer's own settings, as ``dptopic train`` does once they are known)."""
    if n_topics is not None and int(n_topics) > MAX_TOPICS:
        return ParameterError("{n_topics=} is more than the trainers take: give at most {most:,} topics.", "n_topics",
                              int(n_topics), most=MAX_TOPICS)
    if unit == "word":
        from ..accounting.budget import hdp_budget_error  # numpy: the registry alone loads none (the CLI's parser)

        return hdp_budget_error(epsilon, WORD_ITERATIONS if n_iter is None else int(n_iter),
                                WORD_EPSILON_INHERENT if epsilon_inherent is None else float(epsilon_inherent), delta)
    top = UNIT_EPSILON_MAX.get(unit)
    if top is not None and float(epsilon) > top:
        return ParameterError("{epsilon=:g} is more than a {unit}-level trainer takes: give at most {top:g} (a"
                              " {unit}-level budget above it protects nothing).", "epsilon", float(epsilon), unit=unit,
                              top=top)
    floor = unreachable_epsilon(unit, float(epsilon), float(delta)) if reach else None
    if floor is not None:
        return ParameterError("{epsilon=:g} is below what the {unit}-level trainer reaches at {delta=:g}: give"
                              " {epsilon=floor:g} or more (or a larger {delta}).", "epsilon", float(epsilon),
                              values={"delta": float(delta)}, unit=unit, floor=rounded_up(floor, 4))
    return None
