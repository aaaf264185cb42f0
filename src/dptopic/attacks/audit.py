"""The audit run: which training procedure is attacked, whether a corpus is one its model could have been trained on,
the designs' settings, the run (LiRA's shadow models, the one-run design's canaries scored through the topics or on
the release) and what ``audit.json`` records of it. ``dptopic audit`` parses its flags, reads the corpus, calls these
and prints the result; a Python user calls the same functions.

Every function that refuses a setting names it by ``names`` (a mapping from its parameter to how the caller's user
wrote it: a command line maps ``shadows`` to its option; by default the parameter itself, ``shadows=8``).
"""
from __future__ import annotations

import inspect
import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .._io import atomic_write_json, mark_output_folder
from ..corpus.preprocess import resolve_stop_words
from ..datasets import DEFAULT_MAX_VOCAB, load_corpus
from ..errors import DataVocabularyWarning, DPTopicError, SeededNoiseWarning
from ..models import load
from . import coverage as _coverage
from .lira import (
    ALGORITHMS,
    NOT_AUDITED,
    SHADOW_WARNING_MESSAGES,
    bound_text,
    claim_text,
    dptopic_version,
    estimator_trainer,
    guarantee_epsilon_parameter,
    make_estimator,
    not_audited_reason,
    outside_guarantee_label,
    run_lira,
    settings_text,
)
from .one_run import check_canary_size, one_run_audit
from .provenance import audited_model, audited_procedure, describe
from .release_audit import SUPPORTED, release_audit
from .settings import (
    COVERAGE_LIMIT,
    DEFAULT_JOBS,
    DEFAULT_SHADOWS,
    MAX_RELEASE_DOCUMENTS,
    MAX_SHADOWS,
    ONE_RUN_CANARIES,
    ONE_RUN_CANARY_LENGTH,
    PERSON_DOCUMENTS,
    RELEASE_CANARIES,
)

FREQUENCY_CUT_OVERLAP = 0.5
"""A data-chosen vocabulary with fewer than this share of its words among the corpus's most frequent ones (as many as
it has) is taken for a word list given to ``train``: a saved non-private model does not record which it was."""

OLD_NAMES = {"budget": "the whole run's budget is {epsilon} (and {delta}), the guarantee the trainer claims in total"}
"""Setting names that no trainer takes but that read as a setting: the one line that names the parameter meant
(each field a parameter, written by ``names``)."""

# the generic settings of an audited procedure, and the parameter each is among a trainer's parameters
SETTING_KEYS = (("topics", ("n_topics", "n_components")), ("iterations", ("n_iter", "max_iter")), ("alpha", ("alpha",)),
                ("beta", ("beta", "eta")), ("delta", ("delta",)))


def _name(names, key: str) -> str:
    return (names or {}).get(key, key)


def _is(names, key: str, value) -> str:
    """Parameter ``key`` set to ``value`` as the caller writes it: ``names[key] value`` (an option and its value), else
    ``key=value`` (a Python keyword); a value of True is the option alone."""
    if key in (names or {}):
        return names[key] if value is True else f"{names[key]} {value}"
    return f"{key}={value!r}"


def _setting(names, key: str, value: str = "VALUE") -> str:
    """A trainer setting given through ``settings`` (``names["settings"]`` on a command line: its ``NAME=VALUE``
    option), as the caller writes it."""
    if "settings" in (names or {}):
        return f"{names['settings']} {key}={value}"
    return f"settings={{{key!r}: {value}}}"


def check_renamed(cls, extra: dict, names=None) -> None:
    """Refuse a setting name (of ``settings``) that the trainer renamed (its ``renamed_parameter``: the new parameter
    and why) or that names another parameter (:data:`OLD_NAMES`), in one line naming the new one, before the trainer
    is built."""
    known = set(inspect.signature(cls.__init__).parameters)
    for k in extra:
        if k in known:
            continue
        renamed = getattr(cls, "renamed_parameter", None)
        why = renamed(k) if renamed is not None else None
        if why is not None:
            raise DPTopicError(f"invalid {_setting(names, k, '...')}: {why}")
        if k in OLD_NAMES:
            meant = OLD_NAMES[k].format(**{p: _name(names, p) for p in ("epsilon", "delta")})
            raise DPTopicError(f"invalid {_setting(names, k, '...')}: {cls.__name__} has no parameter {k!r}; {meant}.")


@dataclass
class AuditedProcedure:
    """The training procedure an audit attacks: ``train_fn(corpus, rng)`` (its ``audited`` attribute: what
    ``audit.json`` records of it, :mod:`dptopic.attacks.provenance`), the saved model it comes from (None for a
    trainer named with its settings) and a one-line description."""
    train_fn: object
    model: object | None
    description: str
    algorithm: str | None = None

    @property
    def audited(self) -> dict | None:
        return getattr(self.train_fn, "audited", None)

    @property
    def user_level(self) -> bool:
        """Whether its guarantee is per person (``unit='user'``): its shadows group the documents by person."""
        return ((self.audited or {}).get("params") or {}).get("unit") == "user"

    def claim(self) -> dict | None:
        """The saved model's privacy report, as the claim the audit's bound is set beside (None for a named trainer)."""
        return None if self.model is None else dict(getattr(self.model, "privacy_", None) or {"private": False})

    def estimator(self):
        """A fresh, unfitted estimator of the procedure (the release audit trains it itself)."""
        cls = ALGORITHMS[self.algorithm] if self.model is None else type(self.model)
        params = ((self.audited or {}).get("params") or {}) if self.model is None else self.model.get_params()
        names = set(inspect.signature(cls.__init__).parameters)
        return cls(**{k: v for k, v in params.items() if k in names and k not in ("seed", "client")})


def saved_procedure(path) -> AuditedProcedure:
    """The training procedure of the model saved at ``path``: its class and parameters (the saved model itself is not
    scored). Where it ran (a Dask cluster) is no part of the procedure: its shadows run on this machine's threads."""
    model = load(path)
    saved = model.get_params()
    params = {k: v for k, v in saved.items() if k not in ("seed", "verbose", "n_jobs", "secure", "backend", "client")}
    train_fn = estimator_trainer(type(model), **params)
    train_fn.audited = audited_model(model, path)
    on_dask = saved.get("backend") not in (None, "threads")
    return AuditedProcedure(train_fn, model, (
        f"the training procedure of {path} ({type(model).__name__} and its parameters; the saved model itself is not"
        " scored" + ("; trained on a Dask cluster, its shadows run on threads here: the same trainer and parameters,"
                     " sweeps partitioned otherwise" if on_dask else "") + ")"))


def trainer_procedure(algorithm: str, *, topics=None, iterations=None, alpha=None, beta=None, epsilon=None, delta=None,
                      settings: dict | None = None, names=None) -> AuditedProcedure:
    """The procedure of trainer ``algorithm`` (a registered trainer's name, as ``dptopic.train`` takes it) with these
    settings: ``topics``,
    ``iterations``, ``alpha``, ``beta`` go to whichever of its parameters holds them, ``epsilon`` is the total it
    claims, and ``settings`` any other parameter. Every parameter and value is checked before anything is read."""
    if algorithm in NOT_AUDITED:
        raise DPTopicError(not_audited_reason(f"{_name(names, 'algorithm')} {algorithm}"))
    if algorithm not in ALGORITHMS:
        raise DPTopicError(f"unknown algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}.")
    cls = ALGORITHMS[algorithm]
    known = inspect.signature(cls.__init__).parameters
    params_epsilon = guarantee_epsilon_parameter(algorithm)
    if epsilon is not None and params_epsilon is None and "paper_epsilon" in known:
        raise DPTopicError(f"{_name(names, 'epsilon')} is the guarantee a trainer claims, in total, and {algorithm}"
                           f" claims none: give its paper's figure as {_setting(names, 'paper_epsilon')} instead.")
    given = dict(topics=topics, iterations=iterations, alpha=alpha, beta=beta, epsilon=epsilon, delta=delta)
    keys = dict(SETTING_KEYS, epsilon=(params_epsilon,))
    params = {}
    for flag in ("topics", "iterations", "alpha", "beta", "epsilon", "delta"):
        v = given[flag]
        if v is None:
            continue
        key = next((k for k in keys[flag] if k is not None and (k in known or flag == "epsilon")), None)
        if key is None:
            raise DPTopicError(f"{_name(names, flag)} does not apply to {algorithm}; see its parameters with"
                               f" {_setting(names, 'NAME')}.")
        params[key] = v
    extra = dict(settings or {})
    for k in ("seed", "verbose", "n_jobs"):
        if k in extra:
            raise DPTopicError(f"{_setting(names, k, '...')} is not a trainer setting here: the audit gives every"
                               f" shadow model its own {k}" + (f" (use {_name(names, 'seed')})" if k == "seed" else "")
                               + "; drop it.")
    clash = sorted(set(extra) & set(params))
    if clash:
        flag = next((_name(names, f) for f, ks in keys.items() if clash[0] in ks), "the flag")
        raise DPTopicError(f"{_setting(names, clash[0], '...')} clashes with {flag}, which sets {clash[0]}: give it"
                           " once.")
    check_renamed(cls, extra, names)
    params.update(extra)
    est = make_estimator(algorithm, **params)  # unknown or clashing parameters fail before the corpus loads
    if hasattr(est, "validate_parameters"):                 # and so do bad values, before any shadow model is trained
        est.validate_parameters()
    train_fn = estimator_trainer(algorithm, **params)
    train_fn.audited = audited_procedure(algorithm, est)
    return AuditedProcedure(train_fn, None, f"{algorithm} ({settings_text(params)})", algorithm)


def _number(names, key, value, check, what):
    if value is not None and not (math.isfinite(value) and check(value)):
        raise DPTopicError(f"invalid {_name(names, key)} {value:g}: {what}.")


def check_audit_settings(*, epsilon=None, delta=None, confidence=0.95, seed=None, names=None) -> None:
    """The settings every design reads: the claim's figures, the confidence and the seed."""
    _number(names, "epsilon", epsilon, lambda v: v > 0, "must be a number > 0")
    _number(names, "delta", delta, lambda v: 0 < v < 1, "must lie in (0, 1)")
    _number(names, "confidence", confidence, lambda v: 0 < v < 1, "must lie in (0, 1)")
    if seed is not None and seed < 0:
        raise DPTopicError(f"invalid {_name(names, 'seed')} {seed}: give an integer >= 0, or leave it out for fresh OS"
                           " entropy.")


def lira_settings(shadows=None, targets=None, jobs=None, names=None) -> tuple[int, int | None, int]:
    """``(shadows, targets, jobs)`` of a LiRA audit, the defaults filled in, checked."""
    shadows = DEFAULT_SHADOWS if shadows is None else shadows
    if shadows < 4 or shadows % 2 or shadows > MAX_SHADOWS:
        raise DPTopicError(f"invalid {_name(names, 'shadows')} {shadows}: need an even number in [4, {MAX_SHADOWS:,}]"
                           " (64 is typical).")
    if targets is not None and targets > shadows:
        raise DPTopicError(f"invalid {_name(names, 'targets')} {targets}: at most {_name(names, 'shadows')} ({shadows})"
                           f" models can serve as the attacked target; lower {_name(names, 'targets')} or leave it out"
                           " to attack every shadow.")
    return shadows, targets, DEFAULT_JOBS if jobs is None else jobs


def one_run_settings(canaries=None, canary_length=None, names=None) -> tuple[int, int]:
    """``(canaries, canary_length)`` of a one-run audit scored through the topics, the defaults filled in, checked
    (memory included) before any corpus is read."""
    canaries = ONE_RUN_CANARIES if canaries is None else canaries
    canary_length = ONE_RUN_CANARY_LENGTH if canary_length is None else canary_length
    if canaries < 2:
        raise DPTopicError(f"invalid {_name(names, 'canaries')} {canaries}: need at least 2 (200 or more for a useful"
                           " bound).")
    check_canary_size(canaries, canary_length, names=(_name(names, "canaries"), _name(names, "canary_length")))
    return canaries, canary_length


def release_settings(canaries=None, canary_unit=None, canary_documents=None, names=None) -> tuple[int, str, int]:
    """``(canaries, unit, documents per canary)`` of a one-run audit scored on the release, checked."""
    unit = canary_unit or "document"
    K = (PERSON_DOCUMENTS if canary_documents is None else canary_documents) if unit == "person" else 1
    m = RELEASE_CANARIES if canaries is None else canaries
    flag = _name(names, "canaries")
    if m < 2:
        raise DPTopicError(f"invalid {flag} {m}: need at least 2 (10,000 for a bound near the claim).")
    if m * K > MAX_RELEASE_DOCUMENTS:
        raise DPTopicError(f"invalid {flag} {m:,}: {m:,} canaries of {K} documents are more than the 5,000,000 canary"
                           f" documents the audit holds in memory; lower {flag} or"
                           f" {_name(names, 'canary_documents')}.")
    return m, unit, K


DESIGN_ONLY = ("canaries", "canary_length", "score", "canary_unit", "canary_documents")
"""The settings of the one-run design (a LiRA audit takes none of them)."""


def audit_design(design: str = "lira", score: str | None = None, *, canaries=None, canary_length=None,
                 canary_unit=None, canary_documents=None, shadows=None, targets=None, jobs=None, names=None) -> str:
    """Which audit the settings ask for: ``"lira"`` (shadow models), ``"one-run"`` (canaries scored through the
    topics) or ``"release"`` (``design="one-run"``, ``score="release"``: canaries scored on the release). A setting
    given that the design does not read is refused in one line, before anything is read."""
    given = dict(canaries=canaries, canary_length=canary_length, score=score, canary_unit=canary_unit,
                 canary_documents=canary_documents, shadows=shadows, targets=targets, jobs=jobs)

    def refuse(keys, where: str) -> None:
        named = [_name(names, k) for k in keys if given[k] is not None]
        if named:
            raise DPTopicError(f"{' and '.join(named)} appl{'ies' if len(named) == 1 else 'y'} to {where}")

    one_run = f"{_name(names, 'design')} one-run"
    if design != "one-run":
        refuse(DESIGN_ONLY, f"{one_run} only: add it, or drop them for the LiRA audit.")
        return "lira"
    release = f"{_name(names, 'score')} release"
    if score == "release" and canary_length is not None:
        raise DPTopicError(f"{_name(names, 'canary_length')} does not apply to {release}: each canary document is its"
                           " own pair of words, one token each; drop it.")
    if score != "release":
        refuse(DESIGN_ONLY[3:], f"{release} only: add it, or drop them.")
    lira_only = [k for k in ("shadows", "targets", "jobs") if given[k] is not None]
    refuse(lira_only, "the LiRA design only (one-run trains one model, no shadow models): drop "
                      f"{'it' if len(lira_only) == 1 else 'them'}.")
    if score == "release" and canary_documents is not None and canary_unit != "person":
        raise DPTopicError(f"{_name(names, 'canary_documents')} applies to {_name(names, 'canary_unit')} person: add"
                           f" it, or drop {_name(names, 'canary_documents')}.")
    return "release" if score == "release" else "one-run"


def check_user_field(procedure: AuditedProcedure, user_field: str | None, by_folder: bool = False,
                     names=None) -> bool:
    """Whether the audited documents are read with their person: a user-level model (``unit='user'``) is audited on
    documents with their person (``user_field``, or ``by_folder``: a folder of folders, one per person), and only such
    a model takes a ``user_field``; refused in one line before the corpus is read."""
    if procedure.user_level and user_field is None and not by_folder:
        raise DPTopicError(f"the audited model's guarantee is per person (unit user): give {_name(names, 'user_field')}"
                           " FIELD, the JSONL field / CSV column holding each document's person (or a folder of"
                           " folders, one per person), so that its shadows group the documents by person.")
    if user_field is not None and not procedure.user_level:
        raise DPTopicError(f"{_name(names, 'user_field')} {user_field} applies to a user-level model only (one trained"
                           f" with unit 'user'; with {_name(names, 'algorithm')}: {_setting(names, 'unit', 'user')}):"
                           " drop it, or audit a user-level model.")
    return procedure.user_level


def check_release_supported(procedure: AuditedProcedure, names=None) -> None:
    """Refuse, in one line, the release-scored design for a procedure it cannot score."""
    audited = procedure.audited or {}
    if audited.get("class") not in SUPPORTED:
        release = _is(names, "score", "release")
        raise DPTopicError(f"{release} audits docdp-cooc, docdp, svi and hdp (DocDPCooccurrence, DocDPEM, DPSVI,"
                           f" HDPLDA) only, not {audited.get('class')}: drop {release} to score the canaries"
                           " through the topics.")


def scale_note(n_docs: int, model, design: str, names=None) -> str:
    """What the audit trained on, set beside the procedure it audits: the shadows' (or the one run's) number of
    documents, and, when the saved model records it, how many documents its own training run had (a smaller audit
    corpus audits the procedure at a smaller scale, where each document weighs more)."""
    trained = None
    stats = getattr(model, "training_stats_", None) if model is not None else None
    if isinstance(stats, dict) and isinstance(stats.get("n_docs"), int):
        trained = int(stats["n_docs"])
    if design == "lira":
        what = (f"each shadow model trains on a {n_docs // 2:,}-document half of the {n_docs:,} documents of"
                f" {_name(names, 'corpus')}")
    else:
        what = (f"the one model trains on the {n_docs:,} documents of {_name(names, 'corpus')} plus the included"
                " canaries")
    if trained is None:
        return what + (" (the saved model does not record how many documents it was trained on)"
                       if model is not None else "")
    if trained > n_docs:
        return (what + f": a {n_docs:,}-document subset of a {trained:,}-document procedure (the saved model was"
                " trained on" f" {trained:,} documents); the audit measures the procedure at the smaller scale, where"
                " each document weighs more")
    return what + f" (the saved model was trained on {trained:,} documents)"


def model_reading(model, prepared: bool) -> dict:
    """How ``train`` read the model's training corpus (keyword arguments of a corpus reader): as its ``model.json``
    records it (``tokenizer.reading``: the stop words and the case folding), or, for a model saved before that was
    recorded (or whose stop words were a file of the user's, recorded by name only, or a list given in Python), as far
    as its vocabulary tells: stop words dropped unless the vocabulary holds English stop words, text lower-cased unless
    it holds a capital letter. ``prepared``: the corpus is tokenised already (.npz or UCI)."""
    reading = (getattr(model, "tokenizer_", None) or {}).get("reading")
    if isinstance(reading, dict) and isinstance(reading.get("stop_words"), str) \
            and not reading["stop_words"].startswith("a list of") and isinstance(reading.get("lowercase"), bool):
        # a prepared corpus was tokenised when it was prepared: only a later prune (stop_words=) applies again
        spec = reading.get("stop_words_pruned", "none") if prepared else reading["stop_words"]
        # a stop-word file is recorded by its name only (its folders stay private): its words are not known here
        if isinstance(spec, str) and all(f.lower() in ("english", "none") for f in spec.split("+")):
            kw = {"stop_words": spec}
            if not prepared and not reading["lowercase"]:
                kw["lowercase"] = False
            return kw
    words = list(model.vocabulary_.words)
    english = resolve_stop_words("english")
    kw = {"stop_words": "none" if any(w in english for w in words) else "english"}
    if not prepared and any(w != w.lower() for w in words):
        kw["lowercase"] = False
    return kw


def prepared_spec(spec, fmt: str = "auto") -> bool:
    """Whether corpus ``spec`` read in format ``fmt`` is a prepared (.npz) or UCI corpus, tokenised already."""
    if fmt in ("npz", "uci"):
        return True
    name = Path(str(spec)).name.lower()
    return fmt == "auto" and (name.endswith(".npz") or name.startswith("docword"))


def audit_corpus(spec, model=None, *, fmt: str = "auto", uci_vocab=None, text_field: str = "text", label_field=None,
                 vocabulary=None, vocabulary_name: str = "the vocabulary given", restrict: bool = False, max_vocab=None,
                 min_df=None, max_df=None, stop_words=None, lowercase=None, keep_urls=None, user_field=None,
                 users_by_folder: bool = False, names=None) -> tuple:
    """``(corpus, note, read)``: the documents an audit attacks and how they were read (``read``, for ``audit.json``).

    With a saved ``model`` they are read into its vocabulary as ``dptopic evaluate`` reads them (only tokenised, in the
    vocabulary's own case), or in ``vocabulary`` (a public word list, named ``vocabulary_name``) restricted to the
    model's words, and refused when they are not a corpus the model could have been trained on (:data:`COVERAGE_LIMIT`;
    ``restrict`` drops the words it does not know instead); otherwise built as ``train`` builds it, in ``vocabulary``
    or with the cuts given. ``note`` says what the reading dropped (None when nothing)."""
    users = {"user_field": user_field, "users_by_folder": users_by_folder} if user_field or users_by_folder else {}
    cuts = {"max_vocab": max_vocab, "min_df": min_df, "max_df": max_df, "stop_words": stop_words,
            "lowercase": lowercase}
    if model is None:
        if restrict:
            raise DPTopicError(f"{_name(names, 'restrict')} applies with {_name(names, 'model')} only (it drops words"
                               " the saved model does not know); drop it.")
        if vocabulary is None:
            corpus = load_corpus(spec, fmt, uci_vocab, text_field, label_field, max_vocab, min_df, max_df=max_df,
                                 stop_words=stop_words, lowercase=lowercase, user_cuts=True, keep_urls=keep_urls,
                                 **users)
            if max_vocab is None:     # the value used: train's default cut for a vocabulary built from text
                cut = getattr(corpus, "vocabulary_cut", None)
                if cut:
                    cuts["max_vocab"] = cut["max_vocab"]
                elif not prepared_spec(spec, fmt):
                    cuts["max_vocab"] = DEFAULT_MAX_VOCAB
                if cuts["max_vocab"] is not None:
                    cuts["max_vocab_is"] = f"the default (no {_name(names, 'max_vocab')} given)"
            return corpus, None, {"read": "built as 'dptopic train' builds it", **cuts}
        return (load_corpus(spec, fmt, uci_vocab, text_field, label_field, vocabulary=vocabulary, stop_words=stop_words,
                            lowercase=lowercase, **users), None,
                {"read": f"in {vocabulary_name}", "stop_words": stop_words, "lowercase": lowercase})
    if vocabulary is None:
        given = [_name(names, k) for k, v in cuts.items() if v is not None]
        if given:
            raise DPTopicError(f"with {_name(names, 'model')} the corpus is read into the model's own vocabulary, as"
                               f" 'dptopic evaluate' reads it: drop {', '.join(given)} (or give"
                               f" {_name(names, 'vocabulary')} FILE).")
        return _into_model(spec, model, fmt, uci_vocab, text_field, label_field, restrict, users, names)
    reference = load_corpus(spec, fmt, uci_vocab, text_field, label_field, vocabulary=vocabulary,
                            stop_words=stop_words, lowercase=lowercase, **users)
    corpus, note = restricted_to_model(model, reference, restrict, vocabulary_name, vocabulary.words, names)
    return corpus, note, {"read": f"in {vocabulary_name}, restricted to the model's vocabulary",
                          "stop_words": stop_words, "lowercase": lowercase}


def _into_model(spec, model, fmt, uci_vocab, text_field, label_field, restrict, users, names=None) -> tuple:
    """The corpus read into the model's vocabulary, and whether it is a corpus the model could have been trained on
    (:func:`model_corpus_note`)."""
    read = {"read": "into the model's vocabulary, as 'dptopic evaluate' reads it"}
    n_model = len(model.vocabulary_)
    # the corpus as train would read it at the model's vocabulary size: the words a frequency cut would choose
    try:
        reference = load_corpus(spec, fmt, uci_vocab, text_field, label_field, max_vocab=max(2, n_model),
                                **model_reading(model, prepared_spec(spec, fmt)))
    except DPTopicError as e:   # the corpus's own words: fewer than two (the advice to lower min_df does not apply)
        if not str(e).startswith(("vocabulary too small", "empty corpus: the tokenizer")):
            raise               # an empty or unreadable file: its own message names it
        raise DPTopicError(f"{spec!r} holds fewer than two distinct words once read as the model reads text, against"
                           f" the model's {n_model:,}: it is not the kind of corpus the model was trained on; audit on"
                           " that corpus.") from None
    try:
        corpus = load_corpus(spec, fmt, uci_vocab, text_field, label_field, vocabulary=model.vocabulary_, **users,
                             into_model=True, tokenizer=getattr(model, "tokenizer_", None))
    except DPTopicError:        # no document holds a word of the model: say how foreign the corpus is
        check_coverage(_coverage.outside_vocabulary_share(model.vocabulary_, reference), restrict, reference.vocab_size,
                       names=names)
        raise
    return corpus, model_corpus_note(model, corpus, reference, restrict, names), read


def documents(n: int) -> str:
    return f"{n} document" + ("" if n == 1 else "s")


def check_coverage(share: float, restrict: bool, top: int | None, where: str | None = None, word_list_hint=False,
                   names=None):
    """Refuse (without ``restrict``) a corpus more than :data:`COVERAGE_LIMIT` of whose tokens the model does not
    know; otherwise the note to print (None when every token is known). ``word_list_hint``: the model may have been
    trained on a word list that the audit could not tell from a frequency cut: say to give it again."""
    where = where or (f"of the tokens of its {top} most frequent words" if top else "of its tokens")
    if share > COVERAGE_LIMIT and not restrict:
        listed = _is(names, "vocabulary", "LIST")
        hint = f" (a model trained with {listed}: give the same {listed} here)" if word_list_hint else ""
        raise DPTopicError(f"{share:.0%} {where} are outside the model's vocabulary (more than"
                           f" {COVERAGE_LIMIT:.0%}): audit on the corpus the model was trained on{hint}, or pass"
                           f" {_is(names, 'restrict', True)} to drop those words and audit what remains.")
    if share <= 0:
        return None
    return (f"{share:.1%} {where} are outside the model's vocabulary and were dropped"
            + (f" ({_is(names, 'restrict', True)})" if restrict else ""))


def restricted_to_model(model, corpus, restrict: bool = False, vocabulary: str = "the vocabulary given", words=None,
                        names=None):
    """``corpus``, read in another vocabulary (``words``, default its own; named ``vocabulary`` in the messages) than
    ``model``'s, restricted to the model's words, its documents left without any dropped: ``(corpus, note)``, refused
    as :func:`check_coverage` refuses, or when no document is left; the note says what was dropped (None when
    nothing)."""
    note = check_coverage(_coverage.outside_vocabulary_share(model.vocabulary_, corpus), restrict, None, names=names)
    restricted = corpus.restrict(model.vocabulary_, drop_empty=False)
    keep = restricted.doc_lengths > 0
    n_read = corpus.n_docs + corpus.n_empty_dropped
    if not keep.any():
        raise DPTopicError(f"no document holds a word of both {vocabulary} and the model: give the model's own"
                           f" vocabulary (leave {_name(names, 'vocabulary')} out) or a list that shares its words.")
    n_model = len(model.vocabulary_)
    shared = len(set(corpus.vocabulary.words if words is None else words) & set(model.vocabulary_.words))
    parts = [note] if note else []
    if shared < n_model:
        parts.append(f"{vocabulary} holds {shared} of the model's {n_model} words: only those are audited")
    left_out = corpus.n_empty_dropped + int((~keep).sum())
    if left_out:
        parts.append(f"{documents(left_out)} of the {n_read} held none of them and {'was' if left_out == 1 else 'were'}"
                     " left out")
    return restricted.drop_empty(), "; ".join(parts) or None


def model_corpus_note(model, corpus, reference, restrict: bool = False, names=None) -> str | None:
    """Whether ``corpus`` (read into ``model``'s vocabulary) is a corpus the model could have been trained on
    (:data:`COVERAGE_LIMIT`), ``reference`` being the corpus as ``train`` would read it at the model's vocabulary
    size: refused in one line, or the note of what was dropped (None when nothing)."""
    n_model = len(model.vocabulary_)
    source = (getattr(model, "privacy_", None) or {}).get("vocabulary_source")
    share = _coverage.outside_vocabulary_share(model.vocabulary_, reference)
    top = f"of the tokens of the corpus's {reference.vocab_size} most frequent words"
    n_empty = getattr(corpus, "n_empty_dropped", 0)
    empty = (f"; {documents(n_empty)} held none of its words and {'was' if n_empty == 1 else 'were'} left out"
             if n_empty else "")
    if source == "private":
        # selected by DP set union from the training documents: every word occurs there, yet it is not the corpus's
        # most frequent words, so the frequency comparison does not apply; the words themselves are the check
        absent = _coverage.absent_word_share(corpus)
        if absent > COVERAGE_LIMIT and not restrict:
            raise DPTopicError(f"{absent:.0%} of the model's {n_model} words, selected privately from its training"
                               " documents (each occurs there), do not occur in this corpus (more than"
                               f" {COVERAGE_LIMIT:.0%}): audit on the corpus the model was trained on, or pass"
                               f" {_is(names, 'restrict', True)} to audit this one.")
        note = (f"the model's vocabulary was selected privately (not as the corpus's most frequent words):"
                f" {1 - absent:.0%} of its {n_model} words occur in the corpus; {share:.1%} {top} are outside it and"
                " were dropped" + (f" ({_is(names, 'restrict', True)})" if restrict else ""))
        return note + empty
    overlap = _coverage.vocabulary_overlap(model.vocabulary_, reference.vocabulary)
    word_list = source == "supplied" or (source is None or source == "data") and overlap < FREQUENCY_CUT_OVERLAP
    if share > COVERAGE_LIMIT and word_list:
        # a vocabulary given to train (a public word list) leaves most tokens out by design: the documents hold as
        # many of the model's words as its training documents did, so they are no stranger to it
        dense = _coverage.as_dense_as_training(model, corpus, COVERAGE_LIMIT)
        if dense:
            return (f"{share:.1%} {top} are outside the model's vocabulary (a word list: its training documents"
                    f" held as many of its words per document) and were dropped{empty}")
        if dense is None and source == "supplied":
            return (f"{share:.1%} {top} are outside the model's vocabulary (the word list it was trained on)"
                    " and were dropped; the model records no figure of its training documents to compare"
                    f" with, so whether this is its training corpus is not checked{empty}")
    note = check_coverage(share, restrict, reference.vocab_size, top, word_list_hint=source != "data", names=names)
    return note + empty if note else (empty[2:] if empty else None)


@contextmanager
def _quiet_warnings(shadows: bool):
    """The warnings an audit's own models would give: it measures, it releases nothing."""
    with warnings.catch_warnings():
        if shadows:  # shadow models reuse the documents by design
            for message in SHADOW_WARNING_MESSAGES:
                warnings.filterwarnings("ignore", message=message, category=UserWarning)
        for quiet in (SeededNoiseWarning, DataVocabularyWarning):   # the audit's own seeds and vocabulary
            warnings.simplefilter("ignore", quiet)
        yield


def _reproducible(seed, what: str, names=None) -> str:
    return (f"yes: run again with {_is(names, 'seed', seed)}" if seed is not None else
            f"no: no {_name(names, 'seed')} was given, so the {what} drew fresh OS entropy")


def audit_lira(corpus, procedure: AuditedProcedure, *, shadows: int = DEFAULT_SHADOWS, targets=None,
               jobs: int = DEFAULT_JOBS, seed=None, confidence: float = 0.95, verbose: int = 0,
               corpus_record: dict | None = None, scale: str | None = None, coverage: str | None = None,
               names=None):
    """LiRA on ``shadows`` shadow models of ``procedure`` trained on complementary halves of ``corpus``; the
    :class:`~dptopic.attacks.lira.LiRAResult`, its ``settings`` holding what ``audit.json`` records of the run."""
    with _quiet_warnings(shadows=True):
        res = run_lira(corpus, procedure.train_fn, n_shadows=shadows, seed=seed, n_jobs=jobs, verbose=verbose,
                       n_targets=targets, confidence=confidence, claim=procedure.claim())
    # what was attacked, so that the figures are never shown beside another model's claim (the report's audit section)
    res.settings.update({"audited": procedure.audited, "corpus": corpus_record,
                         "attacked": describe(procedure.audited, corpus_record, shadows, claim=res.claimed),
                         "seed": seed, "reproducible": _reproducible(seed, "shadow splits and training", names)})
    res.settings["scale"] = scale
    if coverage:
        res.settings["coverage"] = coverage
    return res


def _one_run_record(res: dict, settings: dict, score: str | None = None) -> dict:
    e = {k: v for k, v in res.items() if k not in ("claimed_privacy", "verdict", "verdict_note", "seed")}
    return {"design": "one-run", **({"score": score} if score else {}), "empirical_epsilon": e,
            "claimed_privacy": res["claimed_privacy"], "verdict": res["verdict"], "verdict_note": res["verdict_note"],
            "metrics_guarantee": outside_guarantee_label(), "settings": settings}


def _one_run_settings(procedure, corpus_record, seed, scale, coverage, score=None, names=None) -> dict:
    settings = {"design": "one-run", **({"score": score} if score else {}), "audited": procedure.audited or None,
                "corpus": corpus_record, "seed": seed, "dptopic_version": dptopic_version(),
                "reproducible": _reproducible(seed, "coins and training", names), "scale": scale}
    if coverage:
        settings["coverage"] = coverage
    return settings


def audit_one_run(corpus, procedure: AuditedProcedure, *, canaries: int = ONE_RUN_CANARIES,
                  canary_length: int = ONE_RUN_CANARY_LENGTH, seed=None, confidence: float = 0.95,
                  corpus_record: dict | None = None, scale: str | None = None, coverage: str | None = None,
                  names=None) -> dict:
    """The one-run design scored through the released topics (:func:`~dptopic.attacks.one_run.one_run_audit`): the
    record ``audit.json`` holds."""
    with _quiet_warnings(shadows=False):    # the audit's own model is never released
        res = one_run_audit(corpus, procedure.train_fn, n_canaries=canaries, canary_length=canary_length,
                            confidence=confidence, seed=seed, claim=procedure.claim())
    return _one_run_record(res, _one_run_settings(procedure, corpus_record, seed, scale, coverage, names=names))


def audit_release(corpus, procedure: AuditedProcedure, *, canaries: int = RELEASE_CANARIES,
                  canary_unit: str = "document", canary_documents: int = 1, seed=None, confidence: float = 0.95,
                  corpus_record: dict | None = None, scale: str | None = None, coverage: str | None = None,
                  names=None) -> dict:
    """The one-run design scored on the released statistic itself (white-box;
    :func:`~dptopic.attacks.release_audit.release_audit`): the record ``audit.json`` holds."""
    res = release_audit(corpus, procedure.estimator(), n_canaries=canaries, canary_unit=canary_unit,
                        canary_documents=canary_documents, confidence=confidence, seed=seed, claim=procedure.claim())
    settings = _one_run_settings(procedure, corpus_record, seed, scale, coverage, score="release", names=names)
    return _one_run_record(res, settings, score="release")


def write_audit(out, doc: dict, lira=None) -> list:
    """Write ``audit.json`` (owner-only: figures computed from the documents of a possibly private corpus) and, for a
    LiRA result, ``roc.png`` with every attack, into the folder ``out`` marked as the audit's; the paths written."""
    out = mark_output_folder(out, "audit")
    atomic_write_json(out / "audit.json", doc, private=True)
    written = [out / "audit.json"]
    if lira is not None:
        lira.plot(out / "roc.png", attacks=list(lira.summaries), private=True)
        written.append(out / "roc.png")
    mark_output_folder(out, "audit", done=True)
    return written


def summary_lines(doc: dict, written=()) -> list[tuple[str, str | None]]:
    """What an audit's record (``audit.json``'s ``doc``, of any design) says, as the lines ``dptopic audit`` prints
    after its run: ``(text, emphasis)``, emphasis ``"bound"``, ``"claim"``, ``"exceeds"`` (the verdict when the bound
    exceeds the claim), ``"consistent"``, ``"verdict"`` (other verdicts) or None. ``written``: the files written."""
    e, c = doc["empirical_epsilon"], doc["claimed_privacy"]
    lines = []
    if doc.get("design", "lira") != "one-run":
        rel = ("for adding/removing a document, via group privacy" if e["relation"] == "add_remove" else
               "for replacing a document")
        # the confidences to 6 digits (":.0%" printed confidence=0.999 as "100%" and 0.975 as "98%")
        kind = "approximate" if str(e.get("confidence_note", "")).startswith("approximate") else "nominal"
        lines.append((f"empirical epsilon lower bound ({rel}; delta={e['delta']:g}, {kind} {100 * e['confidence']:.6g}%"
                      f" confidence, see docs/auditing.md): {bound_text(e['epsilon_lower_bound'])}, from {e['attack']},"
                      f" the strongest of {e['n_attacks']} attacks, each bounded at {e['per_attack_confidence']:.6g}"
                      " confidence (Bonferroni) so that the largest holds at the stated one", "bound"))
    else:
        unit = e.get("canary_unit") or "document"
        if doc.get("score") != "release":
            lines.append((f"guesses: {e['n_guesses']} ({e['k_plus']} in, {e['k_minus']} out) on {e['n_canaries']}"
                          f" canaries ({e['n_included']} included), {e['n_correct']} correct", None))
            ideal = ""
        else:
            lines.append((f"guesses: {e['n_guesses']} ({e['k_plus']} in, {e['k_minus']} out) on {e['n_canaries']:,}"
                          f" canary {unit}s ({e['n_included']:,} included; {e['words_held']:,} on words the release"
                          f" holds), {e['n_correct']} correct", None))
            ideal = (" (an ideal audit of this noise with as many canaries expects about"
                     f" {bound_text(e['ideal_bound'])})")
        lines.append((f"empirical epsilon lower bound (for adding/removing one canary {unit}; delta={e['delta']:g},"
                      f" exact {100 * e['confidence']:.6g}% confidence, see docs/auditing.md):"
                      f" {bound_text(e['epsilon_lower_bound'])}{ideal}", "bound"))
    if c.get("epsilon") is not None:
        claim = (f"{claim_text(c['epsilon'])} (unit: {c.get('unit')}, delta={c.get('delta')};"
                 f" {c.get('guarantee')} guarantee)")
    elif c.get("private"):
        claim = f"none: no guarantee claimed ({c.get('reason', '')})"
    else:
        claim = "none (not private)"
    lines.append((f"claimed epsilon: {claim}", "claim"))
    verdict = doc["verdict"]
    emphasis = {"exceeds the claim": "exceeds", "consistent with the claim": "consistent"}.get(verdict, "verdict")
    lines.append((f"{'WARNING: ' if emphasis == 'exceeds' else ''}verdict: {verdict} ({doc['verdict_note']})",
                  emphasis))
    lines += [(f"note: {n}", None) for n in c.get("notes", [])]
    if doc.get("design") == "one-run":
        lines.append((f"note: {e['note']}", None))
    lines.append((f"note: {doc['metrics_guarantee']}", None))
    if written:
        lines.append((f"written: {', '.join(map(str, written))}", None))
    return lines


__all__ = ["AuditedProcedure", "saved_procedure", "trainer_procedure", "check_renamed",
           "check_audit_settings", "lira_settings", "one_run_settings", "release_settings", "check_release_supported",
           "scale_note", "model_reading", "check_coverage", "restricted_to_model", "model_corpus_note", "audit_lira", "audit_one_run",
           "audit_release", "write_audit", "summary_lines", "MAX_SHADOWS", "COVERAGE_LIMIT"]
