"""The likelihood-ratio attack (LiRA) against topic models (Manzonelli et al. 2024, Sec. 3).

A released Φ is attacked document by document through the query statistic
``s(Φ, d) = max_θ log p(d | θ, Φ)`` (their eq. 3), computed exactly by the compiled
EM fixed point in :mod:`dptopic.kernels.em`. Shadow models are trained on
complementary random halves of the data, so every document is IN for exactly half of
them; the IN and OUT distributions of ``s`` are modelled as Gaussians (Carlini et al.
2022, eq. 2). Scores are kept in log space and HIGHER always means "member":

* online:  ``log N(x; μ_in, σ_in²) − log N(x; μ_out, σ_out²)``;
* offline: ``log Pr[Z ≤ x]``, ``Z ~ N(μ_out, σ_out²)`` (one-sided: a member's ``s`` is larger);
* ``fixed_variance=True`` uses one global σ_in and σ_out (Carlini et al., for few shadows).

Any training procedure can be audited: ``train_fn(corpus, rng)`` returns Φ (K × V) or a
fitted estimator with ``components_`` (and, if it is private, ``privacy_``). See
:func:`estimator_trainer` (dptopic's trainers, by name) and :func:`sklearn_trainer`.
"""
from __future__ import annotations

import inspect
import re
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
from scipy.stats import norm

from .. import __version__
from .._progress import progress_bar
from .._shared_filters import SharedFilters
from .._validation import resolve_n_jobs
from ..accounting.card import claimed, epsilon_text, finite_or_none, privacy_card
from ..accounting.verify import rounded_up
from ..contributor.randomizer import Randomizer
from ..corpus import Corpus
from ..dataset_ledger.charge import PARAMS as LEDGER_PARAMS
from ..dataset_ledger.charge import shadow_runs
from ..errors import DataVocabularyWarning, DPTopicError, SeededNoiseWarning, SmallCorpusWarning, UnknownParameterError
from ..kernels.em import document_statistic
from ..models.base import OUTSIDE_GUARANTEE
from ..models.lplda import LocalReportsModel
from ..models.registry import TRAINERS, trainer_of
from ..training import train as training_run
from . import metrics
from .baselines import HUANG_STATISTICS, huang_scores, huang_theta

SD_FLOOR = 1e-8

ALGORITHMS = {t.name: t.cls for t in TRAINERS.values() if t.cli and t.audit is not None}
"""Each trainer's name and its estimator class, for the trainers an audit takes by name (:func:`estimator_trainer`,
:func:`dptopic.attacks.audit.trainer_procedure`): every trainer the command line trains but ``ldp-doc``, which the audit
does not attack. A view of :data:`dptopic.models.registry.TRAINERS` (each entry's ``cli`` and ``audit``)."""


# ------------------------------------------------------------------ trainers
# a common name onto a class's own, for a class that lacks the common one: scikit-learn's names, and the names a
# registered trainer's passes over the data go by (Gibbs sweeps, epochs, FedLDA's rounds)
_ALIASES = {"n_topics": ("n_components", "k"),
            "n_iter": ("max_iter", "n_epochs", "rounds", "n_rounds", "iterations")}


def _epsilon_names() -> tuple:
    """The knob an audit's ``epsilon`` sets, as the registry declares it: a trainer's component first where it has one
    (HDP-LDA's per-iteration Laplace, FedLDA's per entry: what the audit set before those trainers took a per-word or
    per-user total as epsilon; a baseline's figure without a guarantee, CDP-LDA's paper_epsilon), then a trainer's
    own total epsilon. Used for a class the registry does not hold; a registered one's own entry decides."""
    firsts = [t.components[0] for t in TRAINERS.values() if t.components]
    totals = [t.epsilon for t in TRAINERS.values() if t.epsilon is not None]
    return tuple(dict.fromkeys(sorted(set(firsts), key=firsts.index) + sorted(set(totals) - {"epsilon"})
                               + ["epsilon"]))


_EPSILON_NAMES = _epsilon_names()


def make_estimator(algorithm, seed=None, **params):
    """Build one estimator from a name in :data:`ALGORITHMS` or a class.

    Only the estimator interface is assumed (``fit``, ``components_``, optionally
    ``privacy_``); ``seed`` and ``verbose=0`` are passed when the class accepts them.
    """
    if isinstance(algorithm, str):
        if algorithm not in ALGORITHMS:
            raise DPTopicError(f"unknown algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}.")
        cls = ALGORITHMS[algorithm]
    else:
        cls = algorithm
    names = dict(inspect.signature(cls.__init__).parameters)
    kw = {}
    for k, v in params.items():  # common names onto the class's own (n_topics -> n_components, ...)
        if k in LEDGER_PARAMS:   # a shadow is charged to its own dataset (shadow_runs), never by the audited model's
            continue
        kw[k if k in names else next((a for a in _ALIASES.get(k, ()) if a in names), k)] = v
    if "seed" in names:
        kw["seed"] = seed
    if "verbose" in names:
        kw.setdefault("verbose", 0)
    build = cls
    calibrate = _budget_constructor(cls)
    if calibrate is not None and "epsilon" in kw:  # e.g. DP-SVI: the noise is calibrated to a total (ε, δ)
        names.update({k: v for k, v in inspect.signature(calibrate).parameters.items() if v.kind != v.VAR_KEYWORD})
        build = calibrate
    unknown = [k for k in kw if k not in names and not any(p.kind == p.VAR_KEYWORD for p in names.values())]
    if unknown:
        raise UnknownParameterError("{cls} has no parameter {unknown!r}; valid: {valid}.", unknown[0],
                                    cls=cls.__name__, unknown=unknown[0],
                                    valid=", ".join(n for n in names if n != "self"))
    try:
        return build(**kw)
    except TypeError as e:  # e.g. epsilon (calibrated noise) together with an explicit noise multiplier
        raise DPTopicError(f"{cls.__name__}: {e}; give either epsilon (the noise is calibrated) or the noise"
                           " parameter, not both.") from None


def _budget_constructor(cls):
    """``cls.from_budget`` when the class takes no epsilon itself but is calibrated from a total budget
    ``from_budget(epsilon, delta, ...)`` (DP-SVI: ε, δ -> noise multiplier); otherwise None."""
    names = inspect.signature(cls.__init__).parameters
    fb = getattr(cls, "from_budget", None)
    if fb is None or any(k in names for k in _EPSILON_NAMES):
        return None
    return fb if next(iter(inspect.signature(fb).parameters), None) == "epsilon" else None


def epsilon_parameter(algorithm, required=True):
    """The name of a trainer's privacy parameter: ``epsilon``, ``epsilon_laplace`` (HDP-LDA, per iteration),
    ``epsilon_word`` (LP-LDA, OLP-LDA), ``epsilon_per_entry`` (FedLDA) or ``paper_epsilon`` (CDP-LDA, CDP-LDA+);
    ``epsilon`` also for a trainer calibrated from a total budget by ``from_budget`` (DP-SVI)."""
    cls = ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else algorithm
    names = inspect.signature(cls.__init__).parameters if cls is not None else {}
    entry = trainer_of(cls) if cls is not None else None
    if entry is not None:       # the registry's entry: its component first, else its total
        key = entry.components[0] if entry.components else entry.epsilon
    else:
        key = next((k for k in _EPSILON_NAMES if k in names), None)
    if key is None and cls is not None and _budget_constructor(cls) is not None:
        key = "epsilon"
    if key is None and required:
        raise DPTopicError(f"{algorithm!r} has no epsilon parameter: choose a private trainer.")
    return key


def guarantee_epsilon_parameter(algorithm):
    """The parameter that takes a trainer's guarantee in total, in its unit, as ``dptopic.train``'s ``epsilon`` does:
    ``epsilon`` where the trainer takes it (HDP-LDA and FedLDA split it into their components) or is calibrated from
    a total (DP-SVI's ``from_budget``); ``epsilon_word`` for the local trainers (the whole guarantee per word); None
    for a trainer that claims no guarantee (CDP-LDA's ``paper_epsilon`` is the paper's figure, not a guarantee) or
    has no privacy parameter."""
    key = epsilon_parameter(algorithm, required=False)
    cls = ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else algorithm
    entry = trainer_of(cls) if cls is not None else None
    if entry is not None:       # the registry says which parameter is the total
        return entry.epsilon
    if cls is not None and "epsilon" in inspect.signature(cls.__init__).parameters:
        return "epsilon"
    return None if key == "paper_epsilon" else key


NOT_AUDITED = {t.name: t.cls.__name__ for t in TRAINERS.values() if t.not_audited is not None}
"""Trainers the audit cannot re-run (their registry name -> class name; the registry's ``not_audited`` says why)."""


def not_audited_reason(name: str) -> str:
    """One line: why the audit does not attack ``name`` (a trainer's name or class name, as ``ldp-doc`` or
    ``LocalDocumentLDA``, possibly after the name of the setting that gave it: ``algorithm ldp-doc``)."""
    key = str(name).split()[-1] if str(name).split() else ""
    entry = next((t for t in TRAINERS.values() if key in (t.name, t.cls.__name__) and t.not_audited), None)
    why = entry.not_audited if entry is not None else "it is not one of the trainers the audit re-runs."
    return f"dptopic audit cannot attack {name}: {why}"


def estimator_trainer(algorithm, **params):
    """``train_fn`` that fits a dptopic estimator (``"lda"``, ``"hdp"``, ... or a class) with ``params``."""

    if isinstance(algorithm, str) and algorithm in NOT_AUDITED or \
            isinstance(algorithm, type) and algorithm.__name__ in NOT_AUDITED.values():
        raise DPTopicError(not_audited_reason(algorithm if isinstance(algorithm, str) else algorithm.__name__))
    if isinstance(algorithm, str) and algorithm not in ALGORITHMS:
        raise DPTopicError(f"unknown algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}.")
    if not isinstance(algorithm, (str, type)):
        raise DPTopicError(f"invalid algorithm {algorithm!r}: give a name ({', '.join(ALGORITHMS)}) or an estimator class.")
    cls = ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else algorithm
    calibrated = []  # a budget-calibrated trainer (DP-SVI) is calibrated once, not once per shadow

    def build(rng):
        if cls is None or "epsilon" not in params or _budget_constructor(cls) is None:
            return make_estimator(algorithm, seed=rng, **params)
        if not calibrated:
            calibrated.append(make_estimator(algorithm, seed=None, **params))
        t = calibrated[0]
        est = type(t)(**dict(t.get_params(), seed=rng))
        est._budget = getattr(t, "_budget", None)
        return est

    def train(corpus: Corpus, rng: np.random.Generator):
        with quiet_shadow_warnings():  # e.g. "noise reproducible from the seed": shadows are not released
            return _fit(build(rng), corpus, rng)

    # readable, as the report shows it: "DocDPCooccurrence: alpha = 0.1, epsilon = 1, ..." (never a dict's repr)
    train.description = (f"{algorithm if isinstance(algorithm, str) else algorithm.__name__}:"
                         f" {settings_text(params)}")
    train.quiet_warnings = True     # train_shadows keeps the filters up while all shadows train
    return train


SHADOW_WARNING_MESSAGES = (r".*already used by an earlier private fit", r".*trained a private model in this process")
"""Messages of a private fit's warnings about reusing documents: shadow models reuse them by design."""


def _shadow_filters() -> list:
    return ([("ignore", None, c, None, 0) for c in (SeededNoiseWarning, DataVocabularyWarning, SmallCorpusWarning)]
            + [("ignore", re.compile(m, re.I), UserWarning, None, 0) for m in SHADOW_WARNING_MESSAGES])


_QUIET = SharedFilters(_shadow_filters)


@contextmanager
def quiet_shadow_warnings():
    """Silence what a shadow model's fit warns about its own seed, its vocabulary read from the data, a small corpus,
    or documents reused by an earlier private fit (shadows are never released), and nothing else.

    ``warnings.catch_warnings`` is not thread-safe: shadows fitted in parallel threads would restore one another's
    filters and let those warnings through. Here the filters are added once, under a lock, by the first fit that
    starts, and removed (only those added) when the last one ends. :func:`train_shadows` holds them around its whole
    pool of threads, so that a ``catch_warnings`` inside a fit never restores a list from before or after them.

    What it does not protect: the filters are the process's, so while any shadow fit runs the same four warnings
    raised by other code in the process (another thread fitting a model of its own) are silenced too; and a
    ``catch_warnings`` block in another thread that began before the first shadow fit and ends during one restores
    the list it saved, which lets the shadows' warnings through for the rest of that pool of fits (a nuisance,
    never a silenced warning of another kind)."""
    with _QUIET():
        yield


LOCAL_DEFAULT_EPSILON_WORD = 3.0
"""Per-word epsilon of a local-DP pipeline audited without ``f``/``epsilon_word`` (its report states it)."""


def _fit(est, corpus: Corpus, rng: np.random.Generator):
    """Fit ``est`` on ``corpus``; a local-DP estimator (LP-LDA, OLP-LDA) is audited as the whole pipeline:
    the contributors' randomizer on every document, then the server's estimator on the reports."""
    if not isinstance(est, LocalReportsModel):     # a shadow's run: dptopic.train's checks and fit, nothing held out
        return training_run(corpus, model=est, test_size=0, metrics=False).model

    f = est._expected_f()
    if f is None:
        est.epsilon_word = LOCAL_DEFAULT_EPSILON_WORD
        f = est._expected_f()
    if getattr(est, "prior_corpus", "none") is None:
        est.prior_corpus = "none"  # no public prior data in an audit unless the caller gives some
    reports = Randomizer.for_simulation(corpus.vocabulary, f=f, seed=rng).randomize(corpus)
    fitted = est.fit(reports, vocabulary=corpus.vocabulary)
    rep = getattr(fitted, "privacy_", None)
    if isinstance(rep, dict) and rep.get("private") and not corpus.vocabulary_supplied:
        # a deployment's randomizer ranges over a published word list; this simulation's ranges over the audited
        # corpus's own words, chosen from its counts: partial, as every other trainer's report on them says
        rep["vocabulary_source"] = "data"
        if rep.get("guarantee") == "full":
            rep["guarantee"] = "partial"
    return fitted


def sklearn_trainer(n_topics: int = 20, **params):
    """``train_fn`` with scikit-learn's ``LatentDirichletAllocation`` (default learning parameters unless
    given), as in Manzonelli et al.'s experiments; Φ = ``components_`` normalised by row."""
    from sklearn.decomposition import LatentDirichletAllocation  # scikit-learn: heavy, loaded when used

    if isinstance(n_topics, bool) or not isinstance(n_topics, (int, np.integer)) or n_topics < 1:
        raise DPTopicError(f"invalid n_topics={n_topics!r}: give a whole number >= 1.")
    valid = [k for k in inspect.signature(LatentDirichletAllocation.__init__).parameters
             if k not in ("self", "n_components", "random_state")]
    unknown = [k for k in params if k not in valid]
    if unknown:
        raise UnknownParameterError("LatentDirichletAllocation has no parameter {unknown!r} (n_components and"
                                    " random_state are set by the audit); valid: {valid}.", unknown[0],
                                    unknown=unknown[0], valid=", ".join(valid))
    try:
        LatentDirichletAllocation(n_components=int(n_topics), **params)._validate_params()
    except (ValueError, TypeError) as e:
        raise DPTopicError(f"sklearn_trainer: {' '.join(str(e).split())}") from None

    def train(corpus: Corpus, rng: np.random.Generator):
        lda = LatentDirichletAllocation(n_components=int(n_topics), random_state=int(rng.integers(2**31 - 1)), **params)
        return lda.fit(corpus.to_bow())

    train.description = f"sklearn LatentDirichletAllocation(n_components={n_topics}, {params})"
    return train


def phi_and_privacy(result) -> tuple[np.ndarray, dict | None]:
    """``(Φ, privacy report or None)`` from what a training function returned (an array or a fitted estimator)."""
    if isinstance(result, np.ndarray):
        return result, None
    if not hasattr(result, "components_"):
        raise DPTopicError(f"the training function returned a {type(result).__name__}: return Phi (K x V) or a fitted estimator with components_.")
    return np.asarray(result.components_), getattr(result, "privacy_", None)


def check_phi(phi, vocab_size: int) -> np.ndarray:
    """Φ as float (K × V), refused in one line when it cannot be a topic matrix: not 2-D, another vocabulary
    size, or a row with a NaN, an infinity, a negative entry or no mass (such a Φ would score every document
    alike, an AUC of 0.5 that reads as "no leakage")."""
    try:
        phi = np.asarray(phi, dtype=np.float64)
    except (TypeError, ValueError):
        raise DPTopicError("the trainer returned a Phi that is not numeric: return a K x V array of topic-word"
                           " weights.") from None
    if phi.ndim != 2 or phi.shape[0] < 1:
        raise DPTopicError(f"the trainer returned Phi of shape {phi.shape}: return a K x V array (one row per topic).")
    if phi.shape[1] != vocab_size:
        raise DPTopicError(f"the trainer returned Phi with {phi.shape[1]} columns for a vocabulary of {vocab_size} words.")
    bad = ~np.isfinite(phi).all(axis=1)
    if bad.any():
        raise DPTopicError(f"the trainer returned Phi whose topic {int(np.flatnonzero(bad)[0])} holds NaN or infinite"
                           " weights: return finite, non-negative topic-word weights.")
    if (phi < 0).any():
        raise DPTopicError(f"the trainer returned Phi with negative weights (topic {int(np.flatnonzero((phi < 0).any(axis=1))[0])}):"
                           " return non-negative topic-word weights (clip noisy counts at 0).")
    empty = phi.sum(axis=1) <= 0
    if empty.any():
        raise DPTopicError(f"the trainer returned Phi whose topic {int(np.flatnonzero(empty)[0])} has no weight on any"
                           " word: every row needs positive mass.")
    return phi


# ------------------------------------------------------------------ shadows
@dataclass
class ShadowScores:
    """``s(Φ_m, d)`` for every shadow model ``m`` and document ``d``, and who was IN."""

    scores: np.ndarray        # (M, D)
    members: np.ndarray       # (M, D) bool
    huang: dict = field(default_factory=dict)   # statistic -> (M, D) member-high scores
    privacy: dict | None = None                  # privacy_ of a shadow model (same settings as the target)
    n_excluded: int = 0                          # documents left out so that the halves are equal (odd corpora)

    @property
    def n_shadows(self) -> int:
        return self.scores.shape[0]


def complementary_halves(n_docs: int, n_shadows: int, rng: np.random.Generator) -> np.ndarray:
    """(M, D) membership: pairs of complementary random halves, so each document is IN exactly M/2 times."""
    if n_shadows < 4 or n_shadows % 2:
        raise DPTopicError(f"invalid number of shadow models {n_shadows}: need an even number >= 4 (64 is typical).")
    if n_docs < 4:
        raise DPTopicError(f"corpus too small for LiRA: {n_docs} documents; need at least 4.")
    m = np.zeros((n_shadows, n_docs), dtype=bool)
    for r in range(n_shadows // 2):
        half = rng.permutation(n_docs) < n_docs // 2
        m[2 * r], m[2 * r + 1] = half, ~half
    return m


def _check_corpus(corpus) -> None:
    if not isinstance(corpus, Corpus):
        raise DPTopicError(f"the audit needs a dptopic Corpus, got a {type(corpus).__name__}: build one with"
                           " dptopic.Corpus.from_texts(texts), Corpus.from_jsonl(path) or dptopic.corpus.as_corpus(data).")


def _check_seed(seed):
    """``seed`` as the audit takes it: None (fresh OS entropy), a whole number >= 0, or a NumPy Generator or
    SeedSequence; anything else refused in one line (NumPy's own TypeError/ValueError otherwise)."""
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise DPTopicError(f"invalid seed={seed!r}: give a whole number >= 0, a numpy Generator, or None for fresh OS"
                           " entropy.")
    return int(seed)


def _check_train_fn(train_fn) -> None:
    """``train_fn`` as every attack takes it: a function ``train_fn(corpus, rng)``; a name such as ``'lda'`` or None
    refused in one line, saying how to build one."""
    if not callable(train_fn):
        hint = f"estimator_trainer({train_fn!r}, ...)" if isinstance(train_fn, str) else "estimator_trainer('lda', ...)"
        raise DPTopicError(f"invalid train_fn {type(train_fn).__name__}: give a function train_fn(corpus, rng) returning"
                           f" Phi or a fitted estimator ({hint} builds one).")


def _whole(name, value, least, what):
    """A whole number (an int or NumPy integer, never a float or bool) at least ``least``, else one line."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise DPTopicError(f"invalid {name}={value!r}: need {what}.")
    return int(value)


def _check_jobs(n_jobs):
    if n_jobs is None:
        return None
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise DPTopicError(f"invalid n_jobs={n_jobs!r}: give a whole number >= 1 of threads, or -1 for every core.")
    return int(n_jobs)


def _keep_columns(X, keep):
    Y = X.multiply(keep[None, :].astype(X.dtype)).tocsr()
    Y.eliminate_zeros()
    return Y


def train_shadows(corpus: Corpus, train_fn, n_shadows: int = 64, seed=None, n_jobs: int = 1, verbose: int = 1,
                  tol: float = 1e-4, huang: bool = True) -> ShadowScores:
    """Train ``n_shadows`` models on complementary halves (in parallel threads) and score every document.

    Only the (M × D) statistics are kept, never the shadow models themselves.
    """
    _check_corpus(corpus)
    n_shadows = _whole("n_shadows", n_shadows, 4, "an even number >= 4 (64 is typical)")
    n_jobs = _check_jobs(n_jobs)
    _check_train_fn(train_fn)
    corpus.require_nonempty()
    seed = _check_seed(seed)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if corpus.n_docs < 4:   # before an odd corpus loses a document: the count said is the corpus's own
        raise DPTopicError(f"corpus too small for LiRA: {corpus.n_docs} document{'' if corpus.n_docs == 1 else 's'};"
                           " need at least 4.")
    n_excluded = corpus.n_docs % 2
    if n_excluded:
        # an odd corpus has halves of unequal size, so IN and OUT training sets would differ by more than one
        # replaced document (what a replace-one claim covers): one random document sits the whole audit out
        corpus = corpus.subset(np.delete(np.arange(corpus.n_docs), int(rng.integers(corpus.n_docs))))
    members = complementary_halves(corpus.n_docs, n_shadows, rng)
    rngs = rng.spawn(n_shadows)
    X = corpus.to_bow()
    S = np.empty(members.shape)
    H = {k: np.empty(members.shape) for k in HUANG_STATISTICS} if huang else {}
    privacy = []

    def job(m):
        with shadow_runs():     # a shadow's release goes on its own dataset of the ledger, never the user's
            phi, priv = phi_and_privacy(train_fn(corpus.subset(np.flatnonzero(members[m])), rngs[m]))
        phi = check_phi(phi, corpus.vocab_size)
        present = phi.sum(axis=0) > 0
        # a word outside the released vocabulary (e.g. FDPTM's private vocabulary): the attacker scores the
        # document restricted to the released words
        S[m] = document_statistic(phi, X if present.all() else _keep_columns(X, present), tol=tol)
        if huang:
            for k, v in huang_scores(huang_theta(phi, corpus, seed=rngs[m])).items():
                H[k][m] = v
        if priv is not None and not privacy:
            privacy.append(priv)

    quiet = quiet_shadow_warnings() if getattr(train_fn, "quiet_warnings", False) else nullcontext()
    with quiet, progress_bar(n_shadows, f"shadow models ({corpus.n_docs:,} documents)", verbose) as bar, \
            ThreadPoolExecutor(max_workers=resolve_n_jobs(n_jobs)) as pool:
        for f in [pool.submit(job, m) for m in range(n_shadows)]:
            f.result()
            bar.advance(1)
    return ShadowScores(S, members, H, privacy[0] if privacy else None, n_excluded)


# ------------------------------------------------------------------ scores
def _moments(S, mask, fixed_variance):
    n = mask.sum(axis=0)
    if np.any(n < 1):
        raise DPTopicError("a document has no shadow model on one side (IN/OUT): use more shadow models.")
    mu = np.where(mask, S, 0).sum(axis=0) / n
    dev = np.where(mask, S - mu, 0)
    var = (dev ** 2).sum(axis=0) / n  # population variance, as in Carlini et al.'s code
    if np.all(n < 2):  # one shadow per side: no per-side spread; use the spread of all shadows (conservative)
        var = np.full_like(var, S.var(axis=0).mean())
    elif fixed_variance:
        var = np.full_like(var, var.mean())
    return mu, np.maximum(np.sqrt(var), SD_FLOOR)


def lira_online(target, S, members, fixed_variance: bool = False) -> np.ndarray:
    """Online LiRA: ``log Λ`` per document (higher = member)."""
    mu_in, sd_in = _moments(S, members, fixed_variance)
    mu_out, sd_out = _moments(S, ~members, fixed_variance)
    return norm.logpdf(target, mu_in, sd_in) - norm.logpdf(target, mu_out, sd_out)


def lira_offline(target, S, members, fixed_variance: bool = False) -> np.ndarray:
    """Offline LiRA: ``log Pr[Z ≤ s(Φ_obs, d)]`` with Z the OUT distribution (higher = member)."""
    mu_out, sd_out = _moments(S, ~members, fixed_variance)
    return norm.logcdf((target - mu_out) / sd_out)


ATTACKS = ("lira_online", "lira_offline", "lira_online_fixed_var", "lira_offline_fixed_var",
           "huang_entropy", "huang_std", "huang_max")


def attack_target(target_scores, target_huang, shadows: ShadowScores, exclude=()) -> dict:
    """Every attack's member-high score for each document of one target model (``exclude``: shadows not used)."""
    keep = np.ones(shadows.n_shadows, bool)
    keep[list(exclude)] = False
    S, M = shadows.scores[keep], shadows.members[keep]
    out = {"lira_online": lira_online(target_scores, S, M),
           "lira_offline": lira_offline(target_scores, S, M),
           "lira_online_fixed_var": lira_online(target_scores, S, M, fixed_variance=True),
           "lira_offline_fixed_var": lira_offline(target_scores, S, M, fixed_variance=True)}
    for k, v in (target_huang or {}).items():
        out[f"huang_{k}"] = v
    return out


def leave_one_out(shadows: ShadowScores, n_targets: int | None = None, advance=None) -> dict:
    """Pool every attack over targets: each target is one shadow model, attacked with the others
    except its complementary partner (whose membership is the exact complement of the target's, and
    would make the IN/OUT sample sizes depend on the answer). Every document then stays IN for exactly
    half of the shadows used.

    Returns ``{attack: (scores, labels)}`` pooled over ``n_targets`` targets (all by default). ``advance``: called
    once per target attacked (a progress bar's).
    """
    T = shadows.n_shadows if n_targets is None else min(int(n_targets), shadows.n_shadows)
    pooled: dict = {}
    for t in range(T):
        res = attack_target(shadows.scores[t], {k: v[t] for k, v in shadows.huang.items()}, shadows,
                            exclude=(t, t ^ 1))
        for k, v in res.items():
            pooled.setdefault(k, ([], []))
            pooled[k][0].append(v)
            pooled[k][1].append(shadows.members[t])
        if advance is not None:
            advance()
    return {k: (np.concatenate(s), np.concatenate(y)) for k, (s, y) in pooled.items()}


JACKKNIFE_GROUPS = 16
"""At most this many groups of complementary shadow pairs in :func:`model_jackknife_se` (one recomputation each)."""

AUC_SE_METHOD = ("documents and models: a bootstrap over the audited documents ({n_boot} resamples with replacement, each"
                 " keeping all its scores; Davison & Hinkley 1997, Sec. 3.8) for the spread due to which documents were"
                 " drawn, and a delete-a-group jackknife over complementary shadow pairs ({groups} groups, each left out"
                 " as target and as shadow in turn; Efron & Stein 1981, Kott 2001) for the spread due to the random"
                 " training of the models (weighted for groups of unequal size: Busing, Meijer & van der Leeden 1999);"
                 " their variances are added (conservative: each includes the document x model interaction, which is"
                 " then counted twice)")

TARGETS_NOT_COVERED = ("; the jackknife leaves out only groups without an attacked target (one group holds them all),"
                       " so the spread due to the targets' own training is not included: attack more targets"
                       " (n_targets) to include it")


def model_jackknife_se(shadows: ShadowScores, n_targets: int | None = None,
                       max_groups: int = JACKKNIFE_GROUPS, advance=None) -> tuple[dict, int, bool]:
    """``({attack: SE of its pooled AUC}, groups, targets_covered)`` from the randomness of the models' training: the
    complementary shadow pairs are split into up to ``max_groups`` groups, each group is left out in turn (as target
    and as shadow) and the attack pooled again. Every document is scored with the same shadows, so one unusual shadow
    model moves many documents' scores together: a bootstrap over documents cannot see that.

    Groups differ in size by one pair when the pairs do not divide evenly, so the variance is the weighted
    delete-a-group jackknife's (Busing, Meijer & van der Leeden 1999): with n pairs, group g of m_g pairs,
    h_g = n / m_g, pseudo-values ``h_g AUC - (h_g - 1) AUC_(-g)`` and the jackknife estimate
    ``AUC_J = G AUC - Σ (1 - m_g/n) AUC_(-g)``, it is ``1/G Σ (pseudo_g - AUC_J)² / (h_g - 1)``, which is
    ``(G-1)/G Σ (AUC_(-g) - mean)²`` for equal groups. A group that holds every attacked target cannot be
    left out (no target would remain): then only the groups without targets are left out, the spread due to the
    targets' own training is not included, and ``targets_covered`` is False. ``({}, 0, False)`` when fewer than 3
    pairs, or fewer than 2 groups that can be left out, leave none to spare. ``advance``: called once per group (a
    progress bar's)."""
    from sklearn.metrics import roc_auc_score  # scikit-learn: heavy, loaded when used

    P = shadows.n_shadows // 2
    if P < 3:
        return {}, 0, False
    T = shadows.n_shadows if n_targets is None else min(int(n_targets), shadows.n_shadows)
    G = min(P, int(max_groups))
    pair = np.arange(shadows.n_shadows) // 2
    group = pair % G
    sizes = np.bincount(group[::2][:P], minlength=G)           # pairs per group
    full = {k: float(roc_auc_score(*metrics._check(sc, y)[::-1])) for k, (sc, y) in leave_one_out(shadows, T).items()}
    left: dict = {}
    used, covered = [], True
    for g in range(G):
        keep = group != g
        t = int(keep[:T].sum())
        if advance is not None:
            advance()
        if t == 0:                      # every target is in this group: it cannot be left out
            covered = False
            continue
        used.append(g)
        sub = ShadowScores(shadows.scores[keep], shadows.members[keep], {k: v[keep] for k, v in shadows.huang.items()})
        for k, (sc, y) in leave_one_out(sub, t).items():
            left.setdefault(k, []).append(float(roc_auc_score(*metrics._check(sc, y)[::-1])))
    if len(used) < 2:
        return {}, 0, False
    m = sizes[used]
    # n: the pairs in the groups left out in turn (all P when the targets are covered). With the targets' group
    # kept, the jackknife runs over the other groups only, and n = P would centre it off by about AUC/G: a spread
    # of ~AUC/(G sqrt(G-1)) even when every AUC_(-g) equals the AUC
    n = int(m.sum())
    h = n / m
    out = {}
    for k, v in left.items():
        v = np.asarray(v)
        # Busing et al.'s centre: G AUC - sum_g (1 - m_g / n) AUC_(-g), the mean of the pseudo-values only when the
        # groups are equal
        centre = len(used) * full[k] - np.sum((1 - m / n) * v)
        pseudo = h * full[k] - (h - 1) * v
        out[k] = float(np.sqrt(np.sum((pseudo - centre) ** 2 / (h - 1)) / len(used)))
    return out, len(used), covered


VERDICTS = ("exceeds the claim", "consistent with the claim", "units differ", "no claim")
"""What an audit says of a claim: its lower bound refutes it, does not refute it, is not comparable (the claim
protects a smaller unit than the document the attack tests), or there was no claim to compare with."""

COMPARABLE_UNITS = ("document", "user", "contributor")
"""Privacy units at least as large as the document the attack tests: a guarantee for one of them covers a document
(one document's change is a change of its user's or contributor's data), with or without a qualifier such as
"document (local DP)" or "contributor (local DP, 10 documents)"."""


def unit_covers_document(unit) -> bool:
    """Whether a claim for ``unit`` covers replacing one document (None: unstated, taken as the document). A word or
    token is smaller: the claim then covers a document only by group privacy."""
    if unit is None:
        return True
    u = str(unit).strip().lower()
    # the whole unit, with at most one qualifier in brackets: a composite ("document (vocabulary) + word (topic
    # model)") is as small as its smallest part
    m = re.fullmatch(r"(?:local dp,\s*per\s+)?([a-z]+)(?:\s*\([^()]*\))?", u)
    return bool(m) and m.group(1) in COMPARABLE_UNITS


_AUDIT_SEED_NOTE = ("the audit seeds its own {what} (the noise is the audit's, not a release's); the claim is stated"
                    " without the seed disclosure that a released model trained with an explicit seed would carry")
SHADOW_SEED_NOTE = _AUDIT_SEED_NOTE.format(what="shadow models")
ONE_RUN_SEED_NOTE = _AUDIT_SEED_NOTE.format(what="training run")

SEEDED_NOTE = ("the audited model was trained with an explicit seed, so its noise is reproducible: whoever knows the seed"
               " can regenerate and remove it, and the claim holds only while the seed stays secret (see its privacy"
               " card)")


def outside_guarantee_label() -> str:
    """The label of every figure an attack computes from the audited documents (they are the private data)."""
    return OUTSIDE_GUARANTEE


def shadow_claim(privacy: dict | None, note: str = SHADOW_SEED_NOTE) -> dict | None:
    """A shadow model's privacy report as the claim of the procedure the audit re-runs: without
    ``noise_reproducible`` and the seed warning (the audit gave the shadows their seeds; a release made with
    fresh entropy carries neither), with a note saying so; ``guarantee`` kept (a partial claim stays partial)."""
    if not isinstance(privacy, dict):
        return privacy
    out = {k: v for k, v in privacy.items() if k != "noise_reproducible"}
    if privacy.get("noise_reproducible") and "seed" in str(privacy.get("warning", "")):
        out.pop("warning", None)
    out.setdefault("guarantee", _guarantee(privacy))
    out["audit_note"] = note
    return out


def _guarantee(privacy: dict | None) -> str:
    """``full``, ``partial`` or ``none``, as the privacy card states it (a vocabulary read from the data is partial)."""
    if not isinstance(privacy, dict):
        return "none"
    return privacy_card(privacy, check=False)["guarantee"]


def claim_delta(privacy: dict | None) -> float:
    """The delta at which the empirical bound is set beside ``privacy``'s claim: the claim's own delta (0 for a
    pure claim); for a report that claims nothing, the delta it states if any, else 0 (a pure-epsilon bound)."""
    if not isinstance(privacy, dict) or not privacy.get("private"):
        return 0.0
    eps, delta, which = claimed(privacy)
    if eps is None:
        delta = privacy.get("delta")
    if eps is not None and "pure" in str(which):
        return 0.0
    d = finite_or_none(delta)
    return d if d is not None and 0 <= d < 1 else 0.0


def _composes_more(privacy: dict) -> bool:
    """The claim composes a step besides the topic model (a private vocabulary selection: FDPTM)."""
    return privacy.get("vocabulary_source") == "private" or isinstance(privacy.get("topic_model"), dict) \
        or isinstance(privacy.get("vocabulary_selection"), dict)


def claimed_epsilon(privacy: dict | None) -> dict:
    """The model's own claim, in the fields a reader compares with the empirical bound: ``epsilon`` is the
    report's guarantee (:func:`dptopic.accounting.card.claimed`), None when nothing is claimed."""
    if not privacy:
        return {"private": False, "guarantee": "none", "epsilon": None,
                "note": "the trainer reports no privacy guarantee"}
    if not privacy.get("private"):
        return {"private": False, "guarantee": "none", "epsilon": None, "unit": privacy.get("unit"),
                "reason": privacy.get("reason", "no differential privacy guarantee is claimed")}
    eps, delta, which = claimed(privacy)
    unit = privacy.get("unit")
    out = {"private": True, "guarantee": _guarantee(privacy) if eps is not None else "none",
           "epsilon": finite_or_none(eps), "delta": finite_or_none(delta) if eps is not None else None,
           "epsilon_is": which, "unit": unit, "neighbouring_relation": privacy.get("neighbouring_relation"),
           "theorem": privacy.get("theorem")}
    notes = []
    if eps is None:
        out["reason"] = "no guarantee claimed: " + str(which).removeprefix("none: ")
    else:
        if out["guarantee"] == "partial":
            notes.append("the claim is partial: part of the release (e.g. a vocabulary read from the training"
                         " documents) is outside its epsilon; see the privacy card")
        if not unit_covers_document(unit):
            out["note"] = (f"the guarantee protects one {unit}, the attack tests whole documents; for a document of"
                           " L such units group privacy gives L times epsilon, so the bound is not comparable with"
                           " the claim as it stands")
            notes.append(out["note"])
    if _composes_more(privacy):
        notes.append("the claim composes a private vocabulary selection with the topic model; the shadow models"
                     " train on the released vocabulary and do not re-run that selection, so the audit tests the"
                     " topic model's part only")
    if privacy.get("noise_reproducible"):   # a saved model trained with a seed (shadow claims drop the flag)
        out["noise_reproducible"] = True
        notes.append(SEEDED_NOTE)
    if privacy.get("audit_note"):
        notes.append(str(privacy["audit_note"]))
    if notes:
        out["notes"] = notes
    return out


def claim_text(eps) -> str:
    """A claimed epsilon for display, rounded up (never shown smaller than it is), as every claim is printed."""
    return epsilon_text(eps)


def bound_text(bound) -> str:
    """An empirical lower bound for display, rounded down at 3 significant digits (never shown larger than it is)."""
    b = finite_or_none(bound)
    return "inf" if b is None and bound is not None and float(bound) > 0 else f"{rounded_up(b or 0.0, 3, down=True):.3g}"


def verdict(claim: dict, bound: float) -> tuple[str, str]:
    """``(verdict, sentence)`` of an empirical lower bound set beside a claim (:func:`claimed_epsilon`)."""
    eps = claim.get("epsilon")
    if eps is None:
        return "no claim", ("no guarantee claimed: the bound measures the leakage of a procedure that promises"
                            " nothing" if claim.get("private") else "the model is not private: the bound measures its"
                            " leakage")
    if not unit_covers_document(claim.get("unit")):
        return "units differ", (f"the claim protects one {claim.get('unit')}, the attack tests whole documents: the"
                                " bound is not comparable without group privacy")
    seeded = "; the claim holds only while the training seed stays secret" if claim.get("noise_reproducible") else ""
    if bound > eps:
        return "exceeds the claim", (f"the measured lower bound {bound_text(bound)} exceeds the claimed epsilon"
                                     f" {claim_text(eps)}: the training procedure leaks more than it claims (at the"
                                     " bound's nominal confidence; see docs/auditing.md)")
    return "consistent with the claim", (f"the measured lower bound {bound_text(bound)} does not exceed the claimed"
                                         f" epsilon {claim_text(eps)}; an audit can refute a claim, never prove it"
                                         + seeded)


def dptopic_version() -> str:
    return str(__version__)


def _nonfinite_to_none(obj):
    if isinstance(obj, dict):
        return {k: _nonfinite_to_none(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_nonfinite_to_none(v) for v in obj]
    if isinstance(obj, (float, np.floating)) and not np.isfinite(obj):
        return None
    return obj


@dataclass
class LiRAResult:
    """Per-attack metrics, the empirical ε lower bound, the claimed guarantee and the verdict comparing them."""

    summaries: dict
    empirical_epsilon: dict
    claimed: dict | None
    pooled: dict = field(repr=False, default_factory=dict)
    settings: dict = field(default_factory=dict)
    verdict: str = "no claim"
    verdict_note: str = ""

    def to_json(self) -> dict:
        """Every figure, as JSON (an infinite or undefined number is null)."""
        return _nonfinite_to_none({
            "attacks": self.summaries, "empirical_epsilon": self.empirical_epsilon,
            "claimed_privacy": claimed_epsilon(self.claimed), "verdict": self.verdict,
            "verdict_note": self.verdict_note, "metrics_guarantee": outside_guarantee_label(),
            "settings": self.settings})

    def plot(self, path, title=None, attacks=None, private: bool = True):
        """The log-log ROC curves of ``attacks`` (default: online and offline LiRA and Huang et al.'s baselines).

        ``title``: by default "LiRA against shadow models ... (log-log ROC)" and lines naming what was audited (the
        trainer, or the saved model whose training procedure was retrained, and the corpus when the settings name
        them; a saved model itself is never scored). The figure is computed from the
        audited documents (outside the guarantee), so the file is created readable by its owner only (0600, as
        ``dptopic audit`` writes it) unless ``private=False``."""
        if title is None:
            audited = self.settings.get("audited") if isinstance(self.settings.get("audited"), dict) else {}
            title = ("LiRA against retrained shadow models, not the saved model (log-log ROC)" if audited.get("model")
                     else "LiRA against shadow models of a training procedure (log-log ROC)")
            title += "\n" + attacked_caption(self.settings, claim=self.claimed if self.claimed is not None else "none")
        if attacks is not None and (isinstance(attacks, str) or not all(isinstance(a, str) for a in attacks)):
            raise DPTopicError(f"invalid attacks={attacks!r}: give a list of attack names, e.g. ['lira_online'].")
        unknown = [a for a in (attacks or ()) if a not in self.pooled]
        if unknown:
            raise DPTopicError(f"unknown attack {unknown[0]!r}: choose among {', '.join(self.pooled)}.")
        names = attacks or [a for a in ("lira_online", "lira_offline", "huang_entropy", "huang_std", "huang_max")
                            if a in self.pooled]
        return metrics.plot_roc({a: self.pooled[a] for a in names}, path, title, private=private)


def settings_text(params) -> str:
    """A trainer's parameters as readable text, ``n_topics = 20, epsilon = 1, ...`` (sorted by name), never a
    dict's repr; "its defaults" when there are none."""
    if not isinstance(params, dict) or not params:
        return "its defaults"

    def value(v):
        if isinstance(v, float):
            return f"{v:g}"
        return "none" if v is None else " ".join(str(v).split())

    return ", ".join(f"{k} = {value(params[k])}" for k in sorted(params))


def claim_caption(claim: dict | None) -> str:
    """The claimed guarantee in a few words, from the privacy report (``claimed_epsilon``): "claimed ε = 1 per document,
    δ = 1e-05", "no guarantee claimed" or "not private"; never from the trainer's parameters (DP-SVI's hold its noise
    multiplier, HDP-LDA's a per-iteration epsilon)."""
    if not isinstance(claim, dict):
        return "no privacy report"
    c = claimed_epsilon(claim)
    if c.get("epsilon") is None:
        return "no guarantee claimed" if c.get("private") else "not private"
    delta = c.get("delta")
    return (f"claimed ε = {claim_text(c['epsilon'])}" + (f" per {c['unit']}" if c.get("unit") else "")
            + (f", δ = {delta:g}" if isinstance(delta, (int, float)) and delta else ""))


def attacked_caption(settings: dict, width: int = 60, claim: dict | None = None) -> str:
    """What an audit audited, for a figure's title: the training procedure of a saved model (``settings["audited"]``,
    by folder name) or the trainer on one line; the claimed ε (from ``claim``, the privacy report audited, when given:
    :func:`claim_caption`) and the number of shadow models on the next; the corpus (by file name) and the number of
    audited documents on the last; audit.json has them whole."""
    def short(text) -> str:
        text = str(text)
        return text if len(text) <= width else text[: width - 1] + "…"

    audited = settings.get("audited") if isinstance(settings.get("audited"), dict) else {}
    params = audited.get("params") if isinstance(audited.get("params"), dict) else {}
    key = ", ".join(f"{k}={params[k]:g}" if isinstance(params[k], (int, float)) else f"{k}={params[k]}"
                    for k in ("n_topics", "n_components", "epsilon", "epsilon_laplace", "epsilon_word", "delta")
                    if params.get(k) is not None)
    if audited.get("model"):
        what = (f"procedure of {PurePath(str(audited['model'])).name or audited['model']}"
                f" ({audited.get('class', 'model')}"
                + (f", {str(audited['fingerprint'])[:19]}…" if audited.get("fingerprint") else "") + ")")
    elif audited.get("algorithm"):
        what = f"{audited['algorithm']} ({audited.get('class')}{': ' + key if key else ''})"
    else:
        what = str(settings.get("trainer", "custom trainer"))
    corpus = settings.get("corpus") if isinstance(settings.get("corpus"), dict) else {}
    spec = corpus.get("spec")
    where = (f"on {PurePath(str(spec)).name or spec}, " if spec else "") + f"{settings.get('n_docs_audited', '?')} documents"
    shadows = settings.get("n_shadows")
    middle = "; ".join(([claim_caption(claim)] if claim is not None else [])
                       + ([f"{shadows} shadow models"] if shadows else []))
    return short(what) + ("\n" + short(middle) if middle else "") + "\n" + short(where)


def _bootstrap_seed(seed) -> int | None:
    """The seed of the AUC bootstrap, derived from the audit's own ``seed`` (a separate stream, so a seeded audit stays
    byte-identical and the resamples do not reuse the shadow splits' draws); None (fresh entropy) without a seed."""
    if seed is None:
        return None
    if isinstance(seed, np.random.Generator):
        return int(seed.spawn(1)[0].integers(2 ** 63))
    ss = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
    return int(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, 0xA0C)).generate_state(2, np.uint64)[0]
               >> np.uint64(1))


def claim_relation(privacy: dict | None) -> str:
    """``add_remove`` when a private model's report protects adding or removing a document, else ``replace_one``
    (the relation LiRA's IN/OUT halves test directly; see :func:`dptopic.attacks.metrics.epsilon_from_rates`)."""
    rel = str((privacy or {}).get("neighbouring_relation", "")) if (privacy or {}).get("private") else ""
    return "add_remove" if "add/remove" in rel or "added or removed" in rel else "replace_one"


def run_lira(corpus: Corpus, train_fn, n_shadows: int = 64, seed=None, n_jobs: int = 1, verbose: int = 1,
             n_targets: int | None = None, confidence: float = 0.95, tol: float = 1e-4,
             shadows: ShadowScores | None = None, claim: dict | None = None) -> LiRAResult:
    """Train shadows, attack every shadow in turn with the others (leave-one-out), and summarise.

    ``claim``: the privacy report being audited (a saved model's ``privacy_``); by default the shadow models' own
    report. The empirical ε lower bound is the largest of the attacks' bounds at the claim's δ and neighbouring
    relation, each computed at confidence ``1 - (1 - confidence) / m`` for the ``m`` attacks (Bonferroni), so that the
    largest holds at ``confidence`` although it was chosen among them (:func:`strongest_bound`); the result's
    ``verdict`` sets it beside the claimed ε. An audit with fewer than :data:`MIN_DOCUMENTS` documents or
    :data:`MIN_SHADOWS` shadow models warns (:class:`~dptopic.errors.SmallCorpusWarning`) that its standard errors
    and bound mean little.
    """
    _check_corpus(corpus)
    if not isinstance(confidence, (int, float, np.floating)) or isinstance(confidence, bool) \
            or not 0 < confidence < 1:
        raise DPTopicError(f"invalid confidence={confidence!r}: must lie in (0, 1).")
    if n_targets is not None:
        n_targets = _whole("n_targets", n_targets, 1, "a whole number >= 1 of attacked targets, or None for all")
    if claim is not None and not isinstance(claim, dict):
        raise DPTopicError(f"invalid claim of type {type(claim).__name__}: give a privacy report (a model's privacy_).")
    seed = _check_seed(seed)
    if shadows is None:
        shadows = train_shadows(corpus, train_fn, n_shadows, seed, n_jobs, verbose, tol)
    T = shadows.n_shadows if n_targets is None else min(int(n_targets), shadows.n_shadows)
    P = shadows.n_shadows // 2
    n_groups = min(P, JACKKNIFE_GROUPS) if P >= 3 else 0
    n_attacks = 4 + len(shadows.huang)
    # the scoring after the shadows' bar: every target attacked, each attack's AUC bootstrapped, the jackknife's
    # groups, the bounds; it grows with documents x shadows, so it has a bar of its own
    with progress_bar(T + n_attacks + n_groups + 1,
                      f"scoring the attacks ({T} targets x {shadows.members.shape[1]:,} documents)", verbose) as bar:
        res = _score(corpus, train_fn, shadows, n_targets, T, seed, confidence, claim, lambda: bar.advance(1))
    if res.settings.get("small_audit"):     # after the bar, so that the line is not drawn over
        warnings.warn(res.settings["small_audit"], SmallCorpusWarning, stacklevel=2)
    return res


def _score(corpus, train_fn, shadows, n_targets, T, seed, confidence, claim, advance) -> LiRAResult:
    pooled = leave_one_out(shadows, n_targets, advance)
    # each document is scored under every target, and the targets are one another's shadows: the AUC's standard error
    # resamples documents (all of a document's scores together), not the pooled scores as independent trials, and adds
    # the spread due to the models' random training (a jackknife over shadow pairs)
    boot = _bootstrap_seed(seed)
    summaries = {}
    for k, (s, y) in pooled.items():
        summaries[k] = metrics.summarize(s, y, groups=np.arange(len(s)) % shadows.members.shape[1], seed=boot)
        advance()
    jack, groups, targets_covered = model_jackknife_se(shadows, n_targets, advance=advance)
    for k, v in summaries.items():
        v.pop("auc_se_method", None)    # one estimator for every attack: named once, in the settings
        v["auc_se_documents"] = v["auc_se"]
        m = jack.get(k)
        if m is not None and np.isfinite(m):
            v["auc_se_models"] = m
            v["auc_se"] = float(np.hypot(v["auc_se_documents"], m))
    se_method = (AUC_SE_METHOD.format(n_boot=metrics.AUC_BOOTSTRAP, groups=groups)
                 + ("" if targets_covered else TARGETS_NOT_COVERED) if groups else
                 metrics.AUC_SE_BOOTSTRAP + "; the spread due to the models' training is not included (it needs at"
                 " least 6 shadow models)")
    claimed = claim if claim is not None else shadow_claim(shadows.privacy)
    n_docs = shadows.members.shape[1]      # leave_one_out pools every document's score under each target in turn
    emp = strongest_bound(pooled, delta=claim_delta(claimed), confidence=confidence, relation=claim_relation(claimed),
                          groups=np.arange(len(next(iter(pooled.values()))[0])) // n_docs)
    advance()
    settings = {"n_shadows": shadows.n_shadows, "n_docs": corpus.n_docs, "vocab_size": corpus.vocab_size,
                "n_docs_audited": shadows.members.shape[1],
                "halves": ("equal: every training set holds half of the audited documents"
                           + (" (one random document of the odd corpus sat the audit out)" if shadows.n_excluded else "")),
                "n_targets": T,
                "trainer": getattr(train_fn, "description", getattr(train_fn, "__name__", "custom")),
                "claim_from": "the audited model's report" if claim is not None else "the shadow models' report",
                "auc_se": se_method, "dptopic_version": dptopic_version(),
                "evaluation": "each target is one shadow model, attacked with the others except its complementary partner; scores pooled over targets"}
    small = small_audit_warning(shadows.members.shape[1], shadows.n_shadows)
    if small:
        settings["small_audit"] = small
    v, note = verdict(claimed_epsilon(claimed), emp["epsilon_lower_bound"])
    return LiRAResult(summaries, emp, claimed, pooled, settings, v, note)


MIN_DOCUMENTS = 100
"""Fewer audited documents than this, and the bootstrap over documents and the bound's Clopper-Pearson intervals rest
on too few documents to mean much (docs/auditing.md, "How large an audit")."""

MIN_SHADOWS = 16
"""Fewer shadow models than this, and the jackknife over shadow pairs has under 8 pairs (none below 6 models), each
document's IN and OUT Gaussians are fitted to under 7 scores each, and the spread due to training is poorly known."""


def small_audit_warning(n_docs: int, n_shadows: int) -> str | None:
    """One line when an audit of ``n_docs`` documents and ``n_shadows`` shadow models is below :data:`MIN_DOCUMENTS`
    or :data:`MIN_SHADOWS`; None otherwise."""
    few = [f"{n_docs:,} documents (fewer than {MIN_DOCUMENTS})" if n_docs < MIN_DOCUMENTS else None,
           f"{n_shadows} shadow models (fewer than {MIN_SHADOWS})" if n_shadows < MIN_SHADOWS else None]
    few = [f for f in few if f]
    if not few:
        return None
    return (f"this audit is too small to mean much: {' and '.join(few)}; its AUC standard errors and epsilon lower"
            f" bound are not reliable (an AUC of 1.000 +- 0.000 or 0.5 can be chance); audit at least"
            f" {MIN_DOCUMENTS} documents with at least {MIN_SHADOWS} shadow models (docs/auditing.md)")


BOUND_SELECTION = ("the largest of the {m} attacks' bounds, each computed at confidence 1 - (1 - {c:g})/{m} = {each:.4g}"
                   " (Bonferroni), so that the largest holds at the nominal {c:g} although it was chosen among them")


def strongest_bound(pooled: dict, delta: float, confidence: float, relation: str, groups=None) -> dict:
    """The empirical ε lower bound of the strongest attack: every attack's bound (:func:`metrics.empirical_epsilon`)
    at confidence ``1 - (1 - confidence) / m`` for the ``m`` attacks, and the largest of them, which then holds at
    ``confidence`` (Bonferroni: the m bounds hold together with probability at least ``confidence``, whatever their
    dependence). ``attack`` names the attack that gave it (online LiRA on a tie, e.g. when every bound is 0);
    ``per_attack`` holds every attack's bound at that confidence."""
    names = list(pooled)
    if "lira_online" in names:       # first, so that it is the one named on a tie
        names.remove("lira_online")
        names.insert(0, "lira_online")
    m = len(names)
    each = 1 - (1 - confidence) / m
    bounds = {k: metrics.empirical_epsilon(*pooled[k], delta=delta, confidence=each, relation=relation, groups=groups)
              for k in names}
    best = max(names, key=lambda k: bounds[k]["epsilon_lower_bound"])
    emp = dict(bounds[best])
    emp.update({"confidence": confidence, "attack": best, "per_attack_confidence": each, "n_attacks": m,
                "selection": BOUND_SELECTION.format(m=m, c=confidence, each=each),
                "per_attack": {k: bounds[k]["epsilon_lower_bound"] for k in names}})
    return emp
