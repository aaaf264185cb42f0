"""``audit``: attack a topic model's training procedure with LiRA and print the measured leakage beside
what its privacy report claims (Manzonelli et al. 2024; Carlini et al. 2022)."""
from __future__ import annotations

import inspect
import math
import warnings
from pathlib import Path

from ..errors import DPTopicError
from ._common import add_corpus_args, corpus_from_args, make_console, print_table, user_args
from ._flags import CORPUS_FLAGS, flag_errors

MAX_SHADOWS = 10_000  # shadow models each train a topic model: more than this would never finish
ONE_RUN_CANARIES = 200       # --design one-run: canary documents
ONE_RUN_CANARY_LENGTH = 100  # --design one-run: tokens per canary


def _number(name, value, check, what):
    if value is None:
        return None
    if not (math.isfinite(value) and check(value)):
        raise DPTopicError(f"invalid {name} {value:g}: {what}.")
    return value


def parse_set(items, flag: str = "--set"):
    """``NAME=VALUE`` pairs (``--set``, ``--dp-set``); values are parsed as JSON numbers/booleans where possible."""
    from .._io import load_json

    out = {}
    for it in items or []:
        if "=" not in it:
            raise DPTopicError(f"invalid {flag} {it!r}: write NAME=VALUE, e.g. {flag} sampling_rate=0.2.")
        k, v = it.split("=", 1)
        if v.strip() in ("none", "None", "null"):       # Python's and JSON's spelling of "no value"
            out[k.strip()] = None
            continue
        try:
            out[k.strip()] = load_json(v, f"{flag} {k.strip()}")
        except ValueError:
            out[k.strip()] = v
    return out


OLD_NAMES = {"budget": "the whole run's budget is --epsilon (and --delta), the guarantee the trainer claims in total"}
"""``--set`` names that no trainer takes but that read as a setting: the one line that names the flag meant."""


def check_renamed(cls, extra: dict, flag: str = "--set") -> None:
    """Refuse a ``--set`` name that the trainer renamed (its ``_renamed_params``: the new parameter and why) or that
    names a flag (:data:`OLD_NAMES`), in one line naming the new one, before the trainer is built."""
    names = set(inspect.signature(cls.__init__).parameters)
    for k in extra:
        if k in names:
            continue
        renamed = getattr(cls, "_renamed_params", {}) or {}
        if k in renamed:
            raise DPTopicError(f"invalid {flag} {k}=...: {renamed[k]}")
        if k in OLD_NAMES:
            raise DPTopicError(f"invalid {flag} {k}=...: {cls.__name__} has no parameter {k!r}; {OLD_NAMES[k]}.")


def _trainer_from_args(a):
    """``(train_fn, saved model or None, description)`` from ``--model`` or ``--algorithm``; ``train_fn.audited`` is
    what ``audit.json`` records of the attacked model or procedure (:mod:`dptopic.attacks.provenance`)."""
    from ..attacks.lira import (NOT_AUDITED, estimator_trainer, guarantee_epsilon_parameter, make_estimator,
                                not_audited_reason)
    from ..attacks.provenance import audited_model, audited_procedure
    from ..models import ALGORITHMS

    if a.model is not None:
        from ..models import load

        given = [f"--{f}" for f in ("topics", "iterations", "alpha", "beta", "epsilon", "delta")
                 if getattr(a, f) is not None] + (["--set"] if a.set else [])
        if given:
            names = given[0] if len(given) == 1 else ", ".join(given[:-1]) + " and " + given[-1]
            raise DPTopicError(f"{names} {'does' if len(given) == 1 else 'do'} not apply with --model: the saved model"
                               " fixes its trainer's settings; use --algorithm NAME to audit other settings.")
        model = load(a.model)
        # where the shadows run is no part of the procedure audited: a model trained on a Dask cluster (backend,
        # client) has its shadows retrained on this machine's threads, as n_jobs is this machine's
        saved = model.get_params()
        params = {k: v for k, v in saved.items()
                  if k not in ("seed", "verbose", "n_jobs", "secure", "backend", "client")}
        train_fn = estimator_trainer(type(model), **params)
        train_fn.audited = audited_model(model, a.model)
        on_dask = saved.get("backend") not in (None, "threads")
        return train_fn, model, (f"the training procedure of {a.model} ({type(model).__name__} and its parameters;"
                                 " the saved model itself is not scored"
                                 + ("; trained on a Dask cluster, its shadows run on threads here: the same trainer"
                                    " and parameters, sweeps partitioned otherwise" if on_dask else "") + ")")
    if a.algorithm in NOT_AUDITED:
        raise DPTopicError(not_audited_reason(f"--algorithm {a.algorithm}"))
    if a.algorithm not in ALGORITHMS:
        raise DPTopicError(f"unknown algorithm {a.algorithm!r}: choose one of {', '.join(ALGORITHMS)}.")
    cls = ALGORITHMS[a.algorithm]
    names = inspect.signature(cls.__init__).parameters
    params_epsilon = guarantee_epsilon_parameter(a.algorithm)
    if a.epsilon is not None and params_epsilon is None and "paper_epsilon" in names:
        raise DPTopicError(f"--epsilon is the guarantee a trainer claims, in total, and {a.algorithm} claims none: give"
                           " its paper's figure as --set paper_epsilon=VALUE instead.")
    params = {}
    for flag, keys in (("topics", ("n_topics", "n_components")), ("iterations", ("n_iter", "max_iter")),
                       ("alpha", ("alpha",)), ("beta", ("beta", "eta")),
                       ("epsilon", (params_epsilon,)),
                       ("delta", ("delta",))):
        v = getattr(a, flag)
        if v is None:
            continue
        key = next((k for k in keys if k is not None and (k in names or flag == "epsilon")), None)
        if key is None:
            raise DPTopicError(f"--{flag} does not apply to {a.algorithm}; see its parameters with --set NAME=VALUE.")
        params[key] = v
    extra = parse_set(a.set)
    for k in ("seed", "verbose", "n_jobs"):
        if k in extra:
            raise DPTopicError(f"--set {k}=... is not a trainer setting here: the audit gives every shadow model its own"
                               f" {'seed (use --seed)' if k == 'seed' else k}; drop it.")
    clash = sorted(set(extra) & set(params))
    if clash:
        flag = next((f"--{f}" for f, keys in (*_FLAG_KEYS, ("epsilon", (params_epsilon,))) if clash[0] in keys),
                    "the flag")
        raise DPTopicError(f"--set {clash[0]}=... clashes with {flag}, which sets {clash[0]}: give it once.")
    check_renamed(cls, extra)
    params.update(extra)
    est = make_estimator(a.algorithm, **params)  # unknown or clashing parameters fail before the corpus loads
    if hasattr(est, "validate_parameters"):                 # and so do bad values, before any shadow model is trained
        est.validate_parameters()
    train_fn = estimator_trainer(a.algorithm, **params)
    train_fn.audited = audited_procedure(a.algorithm, est)
    from ..attacks.provenance import settings_text

    return train_fn, None, f"{a.algorithm} ({settings_text(params)})"


COVERAGE_LIMIT = 0.10
"""With ``--model`` and without ``--restrict``, an audit refuses a corpus that does not look like the one the model was
trained on, where the audit would attack other documents than the model saw, with their unknown words dropped:

* a vocabulary chosen from the training data as its most frequent words: more than this share of the tokens of the
  corpus's own most frequent words (as many as the model has, read as the model's were) are words it does not know;
* a vocabulary selected privately from the training documents (FDPTM: each of its words occurs there): more than this
  share of the model's words do not occur in the corpus;
* a vocabulary given to ``train`` as a word list (most tokens left out by design): when the model recorded how many
  of its words its training documents held, the corpus's documents hold fewer than (1 - this share) times as many."""

FREQUENCY_CUT_OVERLAP = 0.5
"""A data-chosen vocabulary with fewer than this share of its words among the corpus's most frequent ones (as many as
it has) is taken for a word list given to ``train``: a saved non-private model does not record which it was."""


def _prepared(a) -> bool:
    """Whether ``--corpus`` is a prepared (.npz) or UCI corpus, whose words are tokenised already."""
    if a.format in ("npz", "uci"):
        return True
    name = Path(str(a.corpus)).name.lower()
    return a.format == "auto" and (name.endswith(".npz") or name.startswith("docword"))


def _model_reading(model, a) -> dict:
    """How ``train`` read the model's training corpus: as its ``model.json`` records it (``tokenizer.reading``: the
    stop words and the case folding), or, for a model saved before that was recorded (or whose stop words were a file
    of the user's, recorded by name only, or a list given in Python), as far as its vocabulary tells: stop words dropped unless the vocabulary holds English stop
    words, text lower-cased unless it holds a capital letter."""
    from ..corpus.preprocess import resolve_stop_words

    reading = (getattr(model, "tokenizer_", None) or {}).get("reading")
    if isinstance(reading, dict) and isinstance(reading.get("stop_words"), str) \
            and not reading["stop_words"].startswith("a list of") and isinstance(reading.get("lowercase"), bool):
        # a prepared corpus was tokenised when it was prepared: only a later prune (train --stop-words) applies again
        spec = reading.get("stop_words_pruned", "none") if _prepared(a) else reading["stop_words"]
        # a stop-word file is recorded by its name only (its folders stay private): its words are not known here
        if isinstance(spec, str) and all(f.lower() in ("english", "none") for f in spec.split("+")):
            kw = {"stop_words": spec}
            if not _prepared(a) and not reading["lowercase"]:
                kw["lowercase"] = False
            return kw
    words = list(model.vocabulary_.words)
    english = resolve_stop_words("english")
    kw = {"stop_words": "none" if any(w in english for w in words) else "english"}
    if not _prepared(a) and any(w != w.lower() for w in words):
        kw["lowercase"] = False
    return kw


def _audit_corpus(a, model):
    """``(corpus, note, read)``: the audited documents and how they were read (``read``, for ``audit.json``). With
    ``--model`` they are read into the saved model's vocabulary as ``dptopic evaluate`` reads them (only tokenised, in
    the vocabulary's own case), or in ``--vocabulary FILE`` restricted to the model's words; otherwise built from the
    corpus as ``train`` builds it. ``note`` says what the reading dropped (None when nothing)."""
    from ._common import load_corpus, read_vocabulary

    vocab = read_vocabulary(a.vocabulary) if a.vocabulary else None
    cuts = {"max_vocab": a.max_vocab, "min_df": a.min_df, "max_df": a.max_df, "stop_words": a.stop_words,
            "lowercase": a.lowercase}
    if model is None:
        if a.restrict:
            raise DPTopicError("--restrict applies with --model only (it drops words the saved model does not know);"
                               " drop it.")
        if vocab is None:
            corpus = corpus_from_args(a)
            if a.max_vocab is None:     # the value used: train's default cut for a vocabulary built from text
                cut = getattr(corpus, "_vocabulary_cut", None)
                if cut:
                    cuts["max_vocab"] = cut["max_vocab"]
                elif not _prepared(a):
                    from ._common import DEFAULT_MAX_VOCAB

                    cuts["max_vocab"] = DEFAULT_MAX_VOCAB
                if cuts["max_vocab"] is not None:
                    cuts["max_vocab_is"] = "the default (no --max-vocab given)"
            return corpus, None, {"read": "built as 'dptopic train' builds it", **cuts}
        return (load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=vocab,
                            stop_words=a.stop_words, lowercase=a.lowercase, **user_args(a)), None,
                {"read": f"in --vocabulary {a.vocabulary}", "stop_words": a.stop_words, "lowercase": a.lowercase})
    if vocab is None:
        given = [f for f, v in (("--max-vocab", a.max_vocab), ("--min-df", a.min_df), ("--max-df", a.max_df),
                                ("--stop-words", a.stop_words), ("--lowercase/--no-lowercase", a.lowercase))
                 if v is not None]
        if given:
            raise DPTopicError(f"with --model the corpus is read into the model's own vocabulary, as 'dptopic evaluate'"
                               f" reads it: drop {', '.join(given)} (or give --vocabulary FILE).")
        return _into_model(a, model)
    reference = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=vocab,
                            stop_words=a.stop_words, lowercase=a.lowercase, **user_args(a))
    from ..attacks.coverage import outside_vocabulary_share

    note = _check_coverage(outside_vocabulary_share(model.vocabulary_, reference), a.restrict, None)
    corpus = reference.restrict(model.vocabulary_, drop_empty=False)
    keep = corpus.doc_lengths > 0
    n_read = reference.n_docs + reference.n_empty_dropped
    if not keep.any():
        raise DPTopicError(f"no document holds a word of both --vocabulary {a.vocabulary} and the model: give the"
                           " model's own vocabulary (leave --vocabulary out) or a list that shares its words.")
    corpus = corpus.drop_empty()
    n_model = len(model.vocabulary_)
    shared = len(set(vocab.words) & set(model.vocabulary_.words))
    parts = [note] if note else []
    if shared < n_model:
        parts.append(f"--vocabulary {a.vocabulary} holds {shared} of the model's {n_model} words: only those are"
                     " audited")
    left_out = reference.n_empty_dropped + int((~keep).sum())
    if left_out:
        parts.append(f"{_documents(left_out)} of the {n_read} held none of them and {'was' if left_out == 1 else 'were'}"
                     " left out")
    return corpus, "; ".join(parts) or None, {"read": f"in --vocabulary {a.vocabulary}, restricted to the model's"
                                                      " vocabulary", "stop_words": a.stop_words, "lowercase": a.lowercase}


def _into_model(a, model):
    """The corpus read into the model's vocabulary, and whether it is a corpus the model could have been trained on
    (:data:`COVERAGE_LIMIT`)."""
    from ..attacks.coverage import absent_word_share, as_dense_as_training, outside_vocabulary_share, vocabulary_overlap
    from ._common import load_corpus

    read = {"read": "into the model's vocabulary, as 'dptopic evaluate' reads it"}
    n_model = len(model.vocabulary_)
    source = (getattr(model, "privacy_", None) or {}).get("vocabulary_source")
    # the corpus as train would read it at the model's vocabulary size: the words a frequency cut would choose
    try:
        reference = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, max_vocab=max(2, n_model),
                                **_model_reading(model, a))
    except DPTopicError as e:   # the corpus's own words: fewer than two (the advice to lower --min-df does not apply)
        if not str(e).startswith(("vocabulary too small", "empty corpus: the tokenizer")):
            raise               # an empty or unreadable file: its own message names it
        raise DPTopicError(f"{a.corpus!r} holds fewer than two distinct words once read as the model reads text, against"
                           f" the model's {n_model:,}: it is not the kind of corpus the model was trained on; audit on"
                           " that corpus.") from None
    share = outside_vocabulary_share(model.vocabulary_, reference)
    top = f"of the tokens of the corpus's {reference.vocab_size} most frequent words"
    try:
        corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=model.vocabulary_,
                             **user_args(a),
                             into_model=True, tokenizer=getattr(model, "tokenizer_", None))
    except DPTopicError:        # no document holds a word of the model: say how foreign the corpus is
        _check_coverage(share, a.restrict, reference.vocab_size)
        raise
    n_empty = getattr(corpus, "n_empty_dropped", 0)
    empty = (f"; {_documents(n_empty)} held none of its words and {'was' if n_empty == 1 else 'were'} left out"
             if n_empty else "")
    if source == "private":
        # selected by DP set union from the training documents: every word occurs there, yet it is not the corpus's
        # most frequent words, so the frequency comparison does not apply; the words themselves are the check
        absent = absent_word_share(corpus)
        if absent > COVERAGE_LIMIT and not a.restrict:
            raise DPTopicError(f"{absent:.0%} of the model's {n_model} words, selected privately from its training"
                               " documents (each occurs there), do not occur in this corpus (more than"
                               f" {COVERAGE_LIMIT:.0%}): audit on the corpus the model was trained on, or pass --restrict"
                               " to audit this one.")
        note = (f"the model's vocabulary was selected privately (not as the corpus's most frequent words):"
                f" {1 - absent:.0%} of its {n_model} words occur in the corpus; {share:.1%} {top} are outside it and"
                " were dropped" + (" (--restrict)" if a.restrict else ""))
        return corpus, note + empty, read
    overlap = vocabulary_overlap(model.vocabulary_, reference.vocabulary)
    word_list = source == "supplied" or (source is None or source == "data") and overlap < FREQUENCY_CUT_OVERLAP
    if share > COVERAGE_LIMIT and word_list:
        # a vocabulary given to train (a public word list) leaves most tokens out by design: the documents hold as
        # many of the model's words as its training documents did, so they are no stranger to it
        dense = as_dense_as_training(model, corpus, COVERAGE_LIMIT)
        if dense:
            return corpus, (f"{share:.1%} {top} are outside the model's vocabulary (a word list: its training documents"
                            f" held as many of its words per document) and were dropped{empty}"), read
        if dense is None and source == "supplied":
            return corpus, (f"{share:.1%} {top} are outside the model's vocabulary (the word list it was trained on)"
                            " and were dropped; the model records no figure of its training documents to compare"
                            f" with, so whether this is its training corpus is not checked{empty}"), read
    note = _check_coverage(share, a.restrict, reference.vocab_size, top, word_list_hint=source != "data")
    return corpus, (note + empty if note else (empty[2:] if empty else None)), read


def _documents(n: int) -> str:
    return f"{n} document" + ("" if n == 1 else "s")


def _check_coverage(share: float, restrict: bool, top: int | None, where: str | None = None, word_list_hint=False):
    """Refuse (without ``--restrict``) a corpus more than :data:`COVERAGE_LIMIT` of whose tokens the model does not
    know; otherwise the note to print (None when every token is known). ``word_list_hint``: the model may have been
    trained on a word list that the audit could not tell from a frequency cut: say to give it again."""
    where = where or (f"of the tokens of its {top} most frequent words" if top else "of its tokens")
    if share > COVERAGE_LIMIT and not restrict:
        hint = (" (a model trained with --vocabulary LIST: give the same --vocabulary LIST here)"
                if word_list_hint else "")
        raise DPTopicError(f"{share:.0%} {where} are outside the model's vocabulary (more than"
                           f" {COVERAGE_LIMIT:.0%}): audit on the corpus the model was trained on{hint}, or pass"
                           " --restrict to drop those words and audit what remains.")
    if share <= 0:
        return None
    return (f"{share:.1%} {where} are outside the model's vocabulary and were dropped"
            + (" (--restrict)" if restrict else ""))


def results_table(summaries: dict):
    """The table of each attack's AUC (± its standard error) and TPR at low FPR; a TPR at an FPR below the resolution
    of the non-member scores (fewer than 1/FPR of them) is shown as n/r."""
    from rich.table import Table

    models = any("auc_se_models" in s for s in summaries.values())
    t = Table(title="Membership inference (higher = more leakage)",
              caption="AUC ± its standard error over " + ("documents and shadow models" if models else
                                                          "documents only (too few shadows for the models' part)")
              + " (see docs/auditing.md)")
    for col in ("attack", "AUC", "TPR@FPR=1%", "TPR@FPR=0.1%", "TPR@FPR=0"):
        t.add_column(col, justify="right" if col != "attack" else "left", no_wrap=(col == "attack"),
                     min_width=max(len(n) for n in summaries) if col == "attack" else None)
    from ..attacks.metrics import resolvable

    def tpr(s, f):
        n = s.get("n_nonmembers")
        if n is not None and not resolvable(n, f):  # no ROC point between FPR 0 and f: it would be the TPR at FPR 0
            return "n/r"
        return f"{s[f'tpr_at_fpr_{f:g}']:.3%}"

    unresolved = False
    for name, s in summaries.items():
        row = [tpr(s, 0.01), tpr(s, 0.001)]
        unresolved |= "n/r" in row
        t.add_row(name, f"{s['auc']:.3f} ± {s['auc_se']:.3f}", *row, f"{s['tpr_at_fpr_0']:.3%}")
    if unresolved:
        t.caption += ("; n/r: fewer non-member scores than 1/FPR, so no threshold has an FPR between 0 and that rate"
                      " (audit more documents or shadows to resolve it)")
    return t


_FLAG_KEYS = (("topics", ("n_topics", "n_components")), ("iterations", ("n_iter", "max_iter")), ("alpha", ("alpha",)),
              ("beta", ("beta", "eta")), ("delta", ("delta",)))


def audit_flag_names(a) -> dict:
    """The names for :func:`~dptopic.cli._flags.flag_errors`: with ``--algorithm``, the trainer's parameters
    that the flags set (given or at the trainer's default), never one the user named in ``--set``; with ``--model`` the
    saved model fixes them, so only the corpus flags are mapped."""
    names = {**CORPUS_FLAGS, "vocabulary": "--vocabulary"}
    if a.model is None and a.algorithm is not None:
        from ..models import ALGORITHMS

        if a.algorithm in ALGORITHMS:
            from ..attacks.lira import guarantee_epsilon_parameter

            key = guarantee_epsilon_parameter(a.algorithm)
            if key is not None:
                names.update({key: "--epsilon", "epsilon": "--epsilon"})
        for flag, keys in _FLAG_KEYS:
            names.update({k: f"--{flag}" for k in keys})
        for item in a.set or []:
            names.pop(item.split("=", 1)[0].strip(), None)
    return names


def cmd_audit(a):
    # "LDA has no parameter 'foo'; valid: n_topics, ...": an UnknownParameterError, whose names stay as they are
    with flag_errors(audit_flag_names(a)):
        _audit(a)


def _print_claim_and_verdict(console, c: dict, verdict: str, note: str) -> None:
    """The claimed epsilon (``c``: the claim as the audit recorded it) and the verdict, as both designs print them."""
    from ..attacks.lira import claim_text

    if c.get("epsilon") is not None:
        claim = f"{claim_text(c['epsilon'])} (unit: {c.get('unit')}, delta={c.get('delta')}; {c.get('guarantee')} guarantee)"
    elif c.get("private"):
        claim = f"none: no guarantee claimed ({c.get('reason', '')})"
    else:
        claim = "none (not private)"
    console.print(f"[bold]claimed epsilon[/]: {claim}")
    colour = {"exceeds the claim": "bold red", "consistent with the claim": "green"}.get(verdict, "yellow")
    console.print(f"[{colour}]{'WARNING: ' if verdict == 'exceeds the claim' else ''}verdict: {verdict}[/] ({note})")


def _check_user_field(a, train_fn, model) -> None:
    """A user-level model (``train --unit user``) is audited on documents with their person: ``--user-field FIELD``
    (or a folder of folders, one per person), refused in one line before the corpus is read. With it, every document is
    read with its person (``a.unit``: what :func:`~dptopic.cli._common.user_args` reads)."""
    params = (getattr(train_fn, "audited", None) or {}).get("params") or {}
    user_level = params.get("unit") == "user"
    folders = a.corpus is not None and Path(str(a.corpus)).is_dir()
    if user_level and a.user_field is None and not folders:
        raise DPTopicError("the audited model's guarantee is per person (unit user): give --user-field FIELD, the"
                           " JSONL field / CSV column holding each document's person (or a folder of folders, one per"
                           " person), so that its shadows group the documents by person.")
    if a.user_field is not None and not user_level:
        raise DPTopicError(f"--user-field {a.user_field} applies to a user-level model only (train --unit user; with"
                           " --algorithm: --set unit=user): drop it, or audit a user-level model.")
    a.unit = "user" if user_level else None


def scale_note(n_docs: int, model, design: str) -> str:
    """What the audit trained on, set beside the procedure it audits: the shadows' (or the one run's) number of
    documents, and, when the saved model records it, how many documents its own training run had (a smaller audit
    corpus audits the procedure at a smaller scale, where each document weighs more)."""
    trained = None
    stats = getattr(model, "_train_stats", None) if model is not None else None
    if isinstance(stats, dict) and isinstance(stats.get("n_docs"), int):
        trained = int(stats["n_docs"])
    if design == "lira":
        what = (f"each shadow model trains on a {n_docs // 2:,}-document half of the {n_docs:,} documents of"
                " --corpus")
    else:
        what = f"the one model trains on the {n_docs:,} documents of --corpus plus the included canaries"
    if trained is None:
        return what + (" (the saved model does not record how many documents it was trained on)"
                       if model is not None else "")
    if trained > n_docs:
        return (what + f": a {n_docs:,}-document subset of a {trained:,}-document procedure (the saved model was"
                " trained on" f" {trained:,} documents); the audit measures the procedure at the smaller scale, where"
                " each document weighs more")
    return what + f" (the saved model was trained on {trained:,} documents)"


def _corpus_record(a, read: dict) -> dict:
    """What ``audit.json`` records of the corpus the audit read (``read``: how it was read)."""
    rec = {"spec": a.corpus or "demo", "format": a.format, "text_field": a.text_field, **read}
    if a.vocab:
        rec["uci_vocab"] = a.vocab
    return rec


def _claim_of(model) -> dict | None:
    """The saved model's privacy report, as the claim the audit's bound is set beside (None with --algorithm)."""
    return None if model is None else dict(getattr(model, "privacy_", None) or {"private": False})


def _check_audit_args(a) -> None:
    """The settings both designs read: the claim's figures, the confidence, what is audited and the seed."""
    _number("--epsilon", a.epsilon, lambda v: v > 0, "must be a number > 0")
    _number("--delta", a.delta, lambda v: 0 < v < 1, "must lie in (0, 1)")
    _number("--confidence", a.confidence, lambda v: 0 < v < 1, "must lie in (0, 1)")
    if (a.model is None) == (a.algorithm is None):
        raise DPTopicError("give exactly one of --model DIR (audit a saved model's training settings) or --algorithm NAME.")
    if a.seed is not None and a.seed < 0:
        raise DPTopicError(f"invalid --seed {a.seed}: give an integer >= 0, or leave it out for fresh OS entropy.")


def _audit(a):
    from .._io import atomic_write_json
    from ..attacks.lira import bound_text, run_lira

    console = make_console()
    if getattr(a, "design", "lira") == "one-run":
        return _audit_one_run(a, console)
    given = [f for f, v in (("--canaries", getattr(a, "canaries", None)),
                            ("--canary-length", getattr(a, "canary_length", None)),
                            ("--score", getattr(a, "score", None)), ("--canary-unit", getattr(a, "canary_unit", None)),
                            ("--canary-documents", getattr(a, "canary_documents", None))) if v is not None]
    if given:
        raise DPTopicError(f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --design one-run only:"
                           " add it, or drop them for the LiRA audit.")
    a.shadows = 64 if a.shadows is None else a.shadows
    a.jobs = 2 if a.jobs is None else a.jobs
    if a.shadows < 4 or a.shadows % 2 or a.shadows > MAX_SHADOWS:
        raise DPTopicError(f"invalid --shadows {a.shadows}: need an even number in [4, {MAX_SHADOWS:,}]"
                           " (64 is typical).")
    if a.targets is not None and a.targets > a.shadows:
        raise DPTopicError(f"invalid --targets {a.targets}: at most --shadows ({a.shadows}) models can serve as the"
                           " attacked target; lower --targets or leave it out to attack every shadow.")
    _check_audit_args(a)
    from .._io import check_output_folder, mark_output_folder, refuse_other_writer

    refuse_other_writer(a.out, "audit")
    check_output_folder(a.out, overwrite=a.overwrite, what="audit")
    train_fn, model, desc = _trainer_from_args(a)
    _check_user_field(a, train_fn, model)
    audited = getattr(train_fn, "audited", None)
    corpus, coverage_note, read = _audit_corpus(a, model)
    console.print(f"[bold]audit[/]: {desc}; corpus {corpus.n_docs} documents, V={corpus.vocab_size};"
                  f" {a.shadows} shadow models on complementary halves")
    scale = scale_note(corpus.n_docs, model, "lira")
    console.print(f"note: {scale}")
    if coverage_note:
        console.print(f"[yellow]note: {coverage_note}[/]")

    with warnings.catch_warnings():  # shadow models reuse the documents by design: an audit measures, releases nothing
        from ..attacks.lira import SHADOW_WARNING_MESSAGES
        from ..errors import DataVocabularyWarning, SeededNoiseWarning

        for message in SHADOW_WARNING_MESSAGES:
            warnings.filterwarnings("ignore", message=message, category=UserWarning)
        for quiet in (SeededNoiseWarning, DataVocabularyWarning):   # the shadow models' own seeds and vocabulary
            warnings.simplefilter("ignore", quiet)
        res = run_lira(corpus, train_fn, n_shadows=a.shadows, seed=a.seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1,
                       n_targets=a.targets, confidence=a.confidence,
                       claim=_claim_of(model))
    out = mark_output_folder(a.out, "audit")
    from ..attacks.provenance import describe

    # what was attacked, so that the figures are never shown beside another model's claim (dptopic report --audit)
    corpus_rec = _corpus_record(a, read)
    res.settings.update({"audited": audited, "corpus": corpus_rec,
                         "attacked": describe(audited, corpus_rec, a.shadows, claim=res.claimed),
                         "seed": a.seed,
                         "reproducible": (f"yes: run again with --seed {a.seed}" if a.seed is not None else
                                          "no: no --seed was given, so the shadow splits and training drew fresh OS"
                                          " entropy")})
    res.settings["scale"] = scale
    if coverage_note:
        res.settings["coverage"] = coverage_note
    doc = res.to_json()
    # figures computed from the documents of the (possibly private) corpus: owner-only, as every such file is
    atomic_write_json(out / "audit.json", doc, private=True)
    res.plot(out / "roc.png", attacks=list(res.summaries), private=True)  # every attack the table shows
    mark_output_folder(out, "audit", done=True)
    print_table(console, results_table(res.summaries))
    e = res.empirical_epsilon
    c = doc["claimed_privacy"]
    rel = "for adding/removing a document, via group privacy" if e["relation"] == "add_remove" else "for replacing a document"
    # the confidences to 6 digits (":.0%" printed --confidence 0.999 as "100%" and 0.975 as "98%")
    kind = "approximate" if str(e.get("confidence_note", "")).startswith("approximate") else "nominal"
    console.print(f"[bold]empirical epsilon lower bound[/] ({rel}; delta={e['delta']:g}, {kind}"
                  f" {100 * e['confidence']:.6g}% confidence, see docs/auditing.md):"
                  f" {bound_text(e['epsilon_lower_bound'])}, from {e['attack']}, the"
                  f" strongest of {e['n_attacks']} attacks, each bounded at {e['per_attack_confidence']:.6g} confidence"
                  " (Bonferroni) so that the largest holds at the stated one")
    _print_claim_and_verdict(console, c, res.verdict, res.verdict_note)
    for n in c.get("notes", []):
        console.print(f"note: {n}")
    console.print(f"note: {doc['metrics_guarantee']}")
    console.print(f"written: {out / 'audit.json'}, {out / 'roc.png'}")


def _audit_one_run(a, console):
    """``--design one-run``: one model trained on the corpus plus independently included canaries (Steinke, Nasr &
    Jagielski 2023; :func:`dptopic.attacks.one_run.one_run_audit`), written to ``audit.json`` as the LiRA audit is."""
    from .._io import atomic_write_json, check_output_folder, mark_output_folder, refuse_other_writer
    from ..attacks.lira import bound_text
    from ..attacks.one_run import one_run_audit

    if a.score == "release":
        return _audit_release(a, console)
    given = [f for f, v in (("--canary-unit", a.canary_unit), ("--canary-documents", a.canary_documents))
             if v is not None]
    if given:
        raise DPTopicError(f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --score release only:"
                           " add it, or drop them.")
    a.canaries = ONE_RUN_CANARIES if a.canaries is None else a.canaries
    a.canary_length = ONE_RUN_CANARY_LENGTH if a.canary_length is None else a.canary_length
    if a.canaries < 2:
        raise DPTopicError(f"invalid --canaries {a.canaries}: need at least 2 (200 or more for a useful bound).")
    from ..attacks.one_run import check_canary_size

    flags = ("--canaries", "--canary-length")
    check_canary_size(a.canaries, a.canary_length, names=flags)     # memory: before the corpus is even read
    lira_only = [f for f, v in (("--shadows", a.shadows), ("--targets", a.targets), ("--jobs", a.jobs))
                 if v is not None]
    if lira_only:
        raise DPTopicError(f"{' and '.join(lira_only)} appl{'ies' if len(lira_only) == 1 else 'y'} to the LiRA design"
                           " only (one-run trains one model, no shadow models): drop "
                           f"{'it' if len(lira_only) == 1 else 'them'}.")
    _check_audit_args(a)
    refuse_other_writer(a.out, "audit")
    check_output_folder(a.out, overwrite=a.overwrite, what="audit")
    train_fn, model, desc = _trainer_from_args(a)
    _check_user_field(a, train_fn, model)
    corpus, coverage_note, read = _audit_corpus(a, model)
    check_canary_size(a.canaries, a.canary_length, corpus.n_tokens, names=flags)  # the corpus: before any training
    console.print(f"[bold]audit[/] (one-run design): {desc}; corpus {corpus.n_docs} documents, V={corpus.vocab_size};"
                  f" {a.canaries} canaries of {a.canary_length} tokens, each included by a fair coin; one model trained")
    scale = scale_note(corpus.n_docs, model, "one-run")
    console.print(f"note: {scale}")
    if coverage_note:
        console.print(f"[yellow]note: {coverage_note}[/]")

    with warnings.catch_warnings():  # the audit's own model is never released
        from ..errors import DataVocabularyWarning, SeededNoiseWarning

        for quiet in (SeededNoiseWarning, DataVocabularyWarning):
            warnings.simplefilter("ignore", quiet)
        res = one_run_audit(corpus, train_fn, n_canaries=a.canaries, canary_length=a.canary_length,
                            confidence=a.confidence, seed=a.seed,
                            claim=_claim_of(model))
    out = mark_output_folder(a.out, "audit")
    from ..attacks.lira import dptopic_version, outside_guarantee_label

    corpus_rec = _corpus_record(a, read)
    settings = {"design": "one-run", "audited": getattr(train_fn, "audited", None), "corpus": corpus_rec,
                "seed": a.seed, "dptopic_version": dptopic_version(),
                "reproducible": (f"yes: run again with --seed {a.seed}" if a.seed is not None else
                                 "no: no --seed was given, so the coins and training drew fresh OS entropy"),
                "scale": scale}
    if coverage_note:
        settings["coverage"] = coverage_note
    e = {k: v for k, v in res.items() if k not in ("claimed_privacy", "verdict", "verdict_note", "seed")}
    doc = {"design": "one-run", "empirical_epsilon": e, "claimed_privacy": res["claimed_privacy"],
           "verdict": res["verdict"], "verdict_note": res["verdict_note"],
           "metrics_guarantee": outside_guarantee_label(), "settings": settings}
    atomic_write_json(out / "audit.json", doc, private=True)
    mark_output_folder(out, "audit", done=True)
    console.print(f"guesses: {e['n_guesses']} ({e['k_plus']} in, {e['k_minus']} out) on {e['n_canaries']} canaries"
                  f" ({e['n_included']} included), {e['n_correct']} correct")
    console.print(f"[bold]empirical epsilon lower bound[/] (for adding/removing one canary document; delta={e['delta']:g},"
                  f" exact {100 * e['confidence']:.6g}% confidence, see docs/auditing.md):"
                  f" {bound_text(e['epsilon_lower_bound'])}")
    _print_one_run_tail(console, res, e, doc, out)



def _print_one_run_tail(console, res, e, doc, out) -> None:
    """The claim, the verdict and the notes a one-run audit prints after its bound (scored on the model or the
    release)."""
    c = res["claimed_privacy"]
    _print_claim_and_verdict(console, c, res["verdict"], res["verdict_note"])
    for n in c.get("notes", []):
        console.print(f"note: {n}")
    console.print(f"note: {e['note']}")
    console.print(f"note: {doc['metrics_guarantee']}")
    console.print(f"written: {out / 'audit.json'}")

PERSON_DOCUMENTS = 20     # --canary-unit person: documents per canary person
RELEASE_CANARIES = 10_000  # --score release: canary units


def _audit_release(a, console):
    """``--design one-run --score release``: canaries scored on the released statistic itself (white-box;
    :func:`dptopic.attacks.release_audit.release_audit`), written to ``audit.json`` as the one-run audit is."""
    from .._io import atomic_write_json, check_output_folder, mark_output_folder, refuse_other_writer
    from ..attacks.lira import bound_text, dptopic_version, outside_guarantee_label
    from ..attacks.release_audit import SUPPORTED, release_audit

    if a.canary_length is not None:
        raise DPTopicError("--canary-length does not apply to --score release: each canary document is its own pair"
                           " of words, one token each; drop it.")
    lira_only = [f for f, v in (("--shadows", a.shadows), ("--targets", a.targets), ("--jobs", a.jobs))
                 if v is not None]
    if lira_only:
        raise DPTopicError(f"{' and '.join(lira_only)} appl{'ies' if len(lira_only) == 1 else 'y'} to the LiRA design"
                           " only (one-run trains one model, no shadow models): drop "
                           f"{'it' if len(lira_only) == 1 else 'them'}.")
    if a.canary_documents is not None and a.canary_unit != "person":
        raise DPTopicError("--canary-documents applies to --canary-unit person: add it, or drop --canary-documents.")
    unit = a.canary_unit or "document"
    K = (PERSON_DOCUMENTS if a.canary_documents is None else a.canary_documents) if unit == "person" else 1
    m = RELEASE_CANARIES if a.canaries is None else a.canaries
    if m < 2:
        raise DPTopicError(f"invalid --canaries {m}: need at least 2 (10,000 for a bound near the claim).")
    if m * K > 5_000_000:
        raise DPTopicError(f"invalid --canaries {m:,}: {m:,} canaries of {K} documents are more than the 5,000,000"
                           " canary documents the audit holds in memory; lower --canaries or --canary-documents.")
    _check_audit_args(a)
    refuse_other_writer(a.out, "audit")
    check_output_folder(a.out, overwrite=a.overwrite, what="audit")
    train_fn, model, desc = _trainer_from_args(a)
    audited = getattr(train_fn, "audited", None) or {}
    if audited.get("class") not in SUPPORTED:
        raise DPTopicError(f"--score release audits docdp-cooc, docdp, svi and hdp (DocDPCooccurrence, DocDPEM, DPSVI,"
                           f" HDPLDA) only, not"
                           f" {audited.get('class')}: drop --score release to score the canaries through the topics.")
    _check_user_field(a, train_fn, model)
    from ..models import ALGORITHMS

    cls = ALGORITHMS[a.algorithm] if model is None else type(model)
    params = (audited.get("params") or {}) if model is None else model.get_params()
    estimator = cls(**{k: v for k, v in params.items() if k in cls._param_names() and k not in ("seed", "client")})
    corpus, coverage_note, read = _audit_corpus(a, model)
    console.print(f"[bold]audit[/] (one-run design, scored on the release): {desc}; corpus {corpus.n_docs} documents,"
                  f" V={corpus.vocab_size}; {m:,} canary {unit}s"
                  + (f" of {K} documents" if unit == "person" else "") + ", each included by a fair coin; one model"
                  " trained")
    scale = scale_note(corpus.n_docs, model, "one-run")
    console.print(f"note: {scale}")
    if coverage_note:
        console.print(f"[yellow]note: {coverage_note}[/]")
    res = release_audit(corpus, estimator, n_canaries=m, canary_unit=unit, canary_documents=K,
                        confidence=a.confidence, seed=a.seed, claim=_claim_of(model))
    out = mark_output_folder(a.out, "audit")
    settings = {"design": "one-run", "score": "release", "audited": audited or None,
                "corpus": _corpus_record(a, read), "seed": a.seed, "dptopic_version": dptopic_version(),
                "reproducible": (f"yes: run again with --seed {a.seed}" if a.seed is not None else
                                 "no: no --seed was given, so the coins and training drew fresh OS entropy"),
                "scale": scale}
    if coverage_note:
        settings["coverage"] = coverage_note
    e = {k: v for k, v in res.items() if k not in ("claimed_privacy", "verdict", "verdict_note", "seed")}
    doc = {"design": "one-run", "score": "release", "empirical_epsilon": e, "claimed_privacy": res["claimed_privacy"],
           "verdict": res["verdict"], "verdict_note": res["verdict_note"],
           "metrics_guarantee": outside_guarantee_label(), "settings": settings}
    atomic_write_json(out / "audit.json", doc, private=True)
    mark_output_folder(out, "audit", done=True)
    console.print(f"guesses: {e['n_guesses']} ({e['k_plus']} in, {e['k_minus']} out) on {e['n_canaries']:,} canary"
                  f" {unit}s ({e['n_included']:,} included; {e['words_held']:,} on words the release holds),"
                  f" {e['n_correct']} correct")
    console.print(f"[bold]empirical epsilon lower bound[/] (for adding/removing one canary {unit}; delta={e['delta']:g},"
                  f" exact {100 * e['confidence']:.6g}% confidence, see docs/auditing.md):"
                  f" {bound_text(e['epsilon_lower_bound'])} (an ideal audit of this noise with as many canaries"
                  f" expects about {bound_text(e['ideal_bound'])})")
    _print_one_run_tail(console, res, e, doc, out)


def register(sub) -> None:
    from ._common import jobs_int, positive_int

    p = sub.add_parser("audit", help="attack shadow models retrained with a model's training procedure (LiRA) and"
                                     " compare with its privacy claim")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--model", default=None,
                     help="a saved model directory: its training procedure (class and parameters) is audited by"
                          " retraining shadow models on --corpus; the saved model itself is not scored")
    src.add_argument("--algorithm", default=None, help="a trainer name (lda, hdp, cdp, ...; every one 'dptopic train --help' lists but ldp-doc)")
    add_corpus_args(p)
    p.add_argument("--topics", type=positive_int, default=None, help="number of topics (with --algorithm; default: the trainer's own: 50 for lda, hdp and cdp, 20 for docdp and docdp-cooc)")
    p.add_argument("--iterations", type=positive_int, default=None, help="training iterations (with --algorithm; default: the trainer's own: 200 for lda, 100 for hdp and cdp)")
    p.add_argument("--alpha", type=float, default=None, help="document-topic prior of the shadow models (default: the trainer's)")
    p.add_argument("--beta", type=float, default=None, help="topic-word prior of the shadow models (default: the trainer's)")
    p.add_argument("--epsilon", type=float, default=None, help="the guarantee the trainer claims, in total, in its"
                   " unit (as 'dptopic train --epsilon'; hdp and fed split it into their components: set a component"
                   " instead with --set epsilon_laplace=... or --set epsilon_per_entry=...; cdp/cdp+ claim none: --set"
                   " paper_epsilon=...; default: the trainer's own)")
    p.add_argument("--delta", type=float, default=None, help="the trainer's delta (default: the trainer's own, 1e-5 for most)")
    p.add_argument("--set", action="append", metavar="NAME=VALUE", help="any other trainer parameter (repeatable)")
    p.add_argument("--restrict", action="store_true",
                   help="with --model: drop corpus words the model does not know and audit the rest (without it, a"
                        f" corpus more than {COVERAGE_LIMIT:.0%}% of whose tokens the model does not know is refused)")
    p.add_argument("--design", choices=("lira", "one-run"), default="lira",
                   help="lira: shadow models on complementary halves (approximate confidence); one-run: ONE model"
                        " trained with independently included canaries, an exact-confidence bound for adding or"
                        " removing a canary document (Steinke, Nasr & Jagielski 2023; docs/auditing.md)")
    p.add_argument("--canaries", type=int, default=None,
                   help=f"with --design one-run: canary documents (default {ONE_RUN_CANARIES}; with --score release,"
                        " canary documents or persons, default 10,000)")
    p.add_argument("--canary-length", type=positive_int, default=None,
                   help="with --design one-run: tokens per canary, drawn from 2 rare words of its own (default 100;"
                        " longer only up to the corpus's own token count, and all canaries together only up to what"
                        " memory holds: an error names the bound)")
    p.add_argument("--score", choices=("model", "release"), default=None,
                   help="with --design one-run: model (default): canaries scored through the released topics;"
                        " release: white-box, canaries scored on the released statistic itself, placed on words the"
                        " release holds, the known documents subtracted (docdp-cooc, docdp, svi, hdp; docs/auditing.md)")
    p.add_argument("--canary-unit", choices=("document", "person"), default=None,
                   help="with --score release: each canary one document (default) or one person of"
                        " --canary-documents documents (does the claim cover a person?)")
    p.add_argument("--canary-documents", type=positive_int, default=None, metavar="K",
                   help="with --canary-unit person: documents per canary person (default 20)")
    p.add_argument("--user-field", default=None, metavar="FIELD",
                   help="the JSONL field / CSV column holding each document's person: needed to audit a user-level"
                        " model (train --unit user), whose shadows group the documents by person")
    p.add_argument("--shadows", type=int, default=None,
                   help=f"LiRA: shadow models, even, in [4, {MAX_SHADOWS:,}] (default 64)")
    p.add_argument("--targets", type=positive_int, default=None,
                   help="how many shadow models serve in turn as the attacked target (default: all)")
    p.add_argument("--confidence", type=float, default=0.95,
                   help="confidence of the epsilon lower bound (default 0.95): approximate for --design lira (its"
                        " scores share shadow models), exact for --design one-run (Steinke, Nasr & Jagielski 2023,"
                        " Thm 3.1); see docs/auditing.md")
    p.add_argument("--seed", type=int, default=None,
                   help="seed (>= 0) for the shadow splits and training (default: fresh OS entropy)")
    p.add_argument("--jobs", type=jobs_int, default=None, help="LiRA: worker threads training shadows (default 2)")
    p.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="a public vocabulary (one word per line, or wordfreq:LANG[:SIZE]), as for train; with --model"
                        " the default is the model's own vocabulary (give the list it was trained on if it was trained"
                        " with --vocabulary)")
    p.add_argument("--out", default="runs/audit",
                   help="a new or empty folder for audit.json and roc.png (default: runs/audit)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if an earlier 'dptopic audit' wrote it (results of another command are never replaced)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_audit)
