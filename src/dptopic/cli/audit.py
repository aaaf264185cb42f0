"""``audit``: attack a topic model's training procedure with LiRA and print the measured leakage beside
what its privacy report claims (Manzonelli et al. 2024; Carlini et al. 2022). The run is the library's
(:mod:`dptopic.attacks.audit`): this command parses its flags, reads the corpus, calls it and prints."""
from __future__ import annotations

from pathlib import Path

from ..errors import DPTopicError
from ..reporting.terminal import audit_results_table, print_audit_summary
from ._common import (DEFAULT_MAX_VOCAB, add_corpus_args, corpus_from_args, jobs_int, load_corpus, make_console, moved,
                      positive_int, print_table, read_vocabulary, user_args)
from ._flags import CORPUS_FLAGS, flag_errors

# copies of dptopic.attacks.audit's bounds, for the help (importing it loads numpy, which start-up must not)
COVERAGE_LIMIT, MAX_SHADOWS, ONE_RUN_CANARIES = 0.10, 10_000, 200
# the old homes of names that moved to dptopic.attacks.audit
__getattr__ = moved({**{n: f"dptopic.attacks.audit:{n}" for n in (
    "FREQUENCY_CUT_OVERLAP", "OLD_NAMES", "PERSON_DOCUMENTS", "RELEASE_CANARIES", "SETTING_KEYS", "check_renamed",
    "model_reading", "scale_note")}, "parse_set": "dptopic.attacks.audit:parse_settings",
    "results_table": "dptopic.reporting.terminal:audit_results_table"})

# how the library's audit settings are written on this command line
NAMES = {k: "--" + k.replace("_", "-") for k in ("algorithm", "topics", "iterations", "alpha", "beta", "epsilon",
                                                  "delta", "confidence", "seed", "shadows", "targets", "canaries",
                                                  "canary_length", "canary_documents")}


def _trainer_from_args(a):
    """The :class:`~dptopic.attacks.audit.AuditedProcedure` of ``--model`` or ``--algorithm``."""
    from ..attacks.audit import parse_settings, saved_procedure, trainer_procedure  # deferred: loads numpy

    if a.model is None:
        return trainer_procedure(a.algorithm, topics=a.topics, iterations=a.iterations, alpha=a.alpha, beta=a.beta,
                                 epsilon=a.epsilon, delta=a.delta, settings=parse_settings(a.set), names=NAMES)
    given = [f"--{f}" for f in ("topics", "iterations", "alpha", "beta", "epsilon", "delta")
             if getattr(a, f) is not None] + (["--set"] if a.set else [])
    if given:
        names = given[0] if len(given) == 1 else ", ".join(given[:-1]) + " and " + given[-1]
        raise DPTopicError(f"{names} {'does' if len(given) == 1 else 'do'} not apply with --model: the saved model"
                           " fixes its trainer's settings; use --algorithm NAME to audit other settings.")
    return saved_procedure(a.model)


def _prepared(a) -> bool:
    """Whether ``--corpus`` is a prepared (.npz) or UCI corpus, whose words are tokenised already."""
    if a.format in ("npz", "uci"):
        return True
    name = Path(str(a.corpus)).name.lower()
    return a.format == "auto" and (name.endswith(".npz") or name.startswith("docword"))


def _model_reading(model, a) -> dict:
    from ..attacks.audit import model_reading      # deferred: the attacks load numpy

    return model_reading(model, _prepared(a))


def _audit_corpus(a, model):
    """``(corpus, note, read)``: the audited documents and how they were read (``read``, for ``audit.json``). With
    ``--model`` they are read into the saved model's vocabulary as ``dptopic evaluate`` reads them (only tokenised, in
    the vocabulary's own case), or in ``--vocabulary FILE`` restricted to the model's words; otherwise built from the
    corpus as ``train`` builds it. ``note`` says what the reading dropped (None when nothing)."""

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
                cut = getattr(corpus, "vocabulary_cut", None)
                if cut:
                    cuts["max_vocab"] = cut["max_vocab"]
                elif not _prepared(a):
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
    from ..attacks.audit import restricted_to_model  # deferred: loads numpy

    corpus, note = restricted_to_model(model, reference, a.restrict, f"--vocabulary {a.vocabulary}", vocab.words)
    return corpus, note, {"read": f"in --vocabulary {a.vocabulary}, restricted to the model's"
                                                      " vocabulary", "stop_words": a.stop_words, "lowercase": a.lowercase}


def _into_model(a, model):
    """The corpus read into the model's vocabulary, and whether it is a corpus the model could have been trained on
    (:func:`~dptopic.attacks.audit.model_corpus_note`)."""
    from ..attacks.audit import check_coverage, model_corpus_note  # deferred: loads numpy
    from ..attacks.coverage import outside_vocabulary_share  # loaded when the command runs, off the start-up path

    read = {"read": "into the model's vocabulary, as 'dptopic evaluate' reads it"}
    n_model = len(model.vocabulary_)
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
    try:
        corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=model.vocabulary_,
                             **user_args(a), into_model=True, tokenizer=getattr(model, "tokenizer_", None))
    except DPTopicError:        # no document holds a word of the model: say how foreign the corpus is
        check_coverage(outside_vocabulary_share(model.vocabulary_, reference), a.restrict, reference.vocab_size)
        raise
    return corpus, model_corpus_note(model, corpus, reference, a.restrict), read


_FLAG_KEYS = (("topics", ("n_topics", "n_components")), ("iterations", ("n_iter", "max_iter")), ("alpha", ("alpha",)),
              ("beta", ("beta", "eta")), ("delta", ("delta",)))


def audit_flag_names(a) -> dict:
    """The names for :func:`~dptopic.cli._flags.flag_errors`: with ``--algorithm``, the trainer's parameters
    that the flags set (given or at the trainer's default), never one the user named in ``--set``; with ``--model`` the
    saved model fixes them, so only the corpus flags are mapped."""
    names = {**CORPUS_FLAGS, "vocabulary": "--vocabulary"}
    if a.model is None and a.algorithm is not None:
        from ..models import ALGORITHMS  # deferred: loads numpy

        if a.algorithm in ALGORITHMS:
            from ..attacks.lira import guarantee_epsilon_parameter  # deferred: loads numpy

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


_GIVEN = (("--canaries", "canaries"), ("--canary-length", "canary_length"), ("--score", "score"),
          ("--canary-unit", "canary_unit"), ("--canary-documents", "canary_documents"))


def _applies(given, where: str) -> None:
    if given:
        raise DPTopicError(f"{' and '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to {where}")


def _check_design_flags(a) -> None:
    """Which flags apply to which design, refused in one line before anything is read."""
    if a.design != "one-run":
        _applies([f for f, d in _GIVEN if getattr(a, d, None) is not None],
                 "--design one-run only: add it, or drop them for the LiRA audit.")
        return
    if a.score == "release":
        if a.canary_length is not None:
            raise DPTopicError("--canary-length does not apply to --score release: each canary document is its own"
                               " pair of words, one token each; drop it.")
    else:
        _applies([f for f, d in _GIVEN[3:] if getattr(a, d) is not None], "--score release only: add it, or drop them.")
    lira_only = [f for f in ("--shadows", "--targets", "--jobs") if getattr(a, f[2:]) is not None]
    if lira_only:
        _applies(lira_only, "the LiRA design only (one-run trains one model, no shadow models): drop "
                            f"{'it' if len(lira_only) == 1 else 'them'}.")
    if a.score == "release" and a.canary_documents is not None and a.canary_unit != "person":
        raise DPTopicError("--canary-documents applies to --canary-unit person: add it, or drop --canary-documents.")


def _check_user_field(a, procedure) -> None:
    """A user-level model (``train --unit user``) is audited on documents with their person: ``--user-field FIELD``
    (or a folder of folders, one per person), refused in one line before the corpus is read. With it, every document is
    read with its person (``a.unit``: what :func:`~dptopic.cli._common.user_args` reads)."""
    folders = a.corpus is not None and Path(str(a.corpus)).is_dir()
    if procedure.user_level and a.user_field is None and not folders:
        raise DPTopicError("the audited model's guarantee is per person (unit user): give --user-field FIELD, the"
                           " JSONL field / CSV column holding each document's person (or a folder of folders, one per"
                           " person), so that its shadows group the documents by person.")
    if a.user_field is not None and not procedure.user_level:
        raise DPTopicError(f"--user-field {a.user_field} applies to a user-level model only (train --unit user; with"
                           " --algorithm: --set unit=user): drop it, or audit a user-level model.")
    a.unit = "user" if procedure.user_level else None


def _corpus_record(a, read: dict) -> dict:
    """What ``audit.json`` records of the corpus the audit read (``read``: how it was read)."""
    rec = {"spec": a.corpus or "demo", "format": a.format, "text_field": a.text_field, **read}
    if a.vocab:
        rec["uci_vocab"] = a.vocab
    return rec


def _audit(a):
    # deferred: the attacks and _io's bundles load numpy, which the command line's start-up must not
    from .. import attacks  # loaded when the command runs, off the start-up path
    from .._io import check_output_folder, refuse_other_writer  # loaded when the command runs, off the start-up path
    from ..attacks import audit as run  # loaded when the command runs, off the start-up path

    console = make_console()
    _check_design_flags(a)
    design = "lira" if a.design != "one-run" else "release" if a.score == "release" else "one-run"
    if design == "lira":
        a.shadows, a.targets, a.jobs = run.lira_settings(a.shadows, a.targets, a.jobs, names=NAMES)
    elif design == "one-run":
        a.canaries, a.canary_length = run.one_run_settings(a.canaries, a.canary_length, names=NAMES)
    else:
        m, unit, K = run.release_settings(a.canaries, a.canary_unit, a.canary_documents, names=NAMES)
    run.check_audit_settings(epsilon=a.epsilon, delta=a.delta, confidence=a.confidence, seed=a.seed, names=NAMES)
    if (a.model is None) == (a.algorithm is None):
        raise DPTopicError("give exactly one of --model DIR (audit a saved model's training settings) or --algorithm NAME.")
    refuse_other_writer(a.out, "audit")
    check_output_folder(a.out, overwrite=a.overwrite, what="audit")
    procedure = _trainer_from_args(a)
    if design == "release":
        run.check_release_supported(procedure)
    _check_user_field(a, procedure)
    corpus, coverage, read = _audit_corpus(a, procedure.model)
    if design == "one-run":     # the corpus: before any training
        attacks.one_run.check_canary_size(a.canaries, a.canary_length, corpus.n_tokens,
                                          names=("--canaries", "--canary-length"))
    head = f"{procedure.description}; corpus {corpus.n_docs} documents, V={corpus.vocab_size};"
    if design == "lira":
        console.print(f"[bold]audit[/]: {head} {a.shadows} shadow models on complementary halves")
    elif design == "one-run":
        console.print(f"[bold]audit[/] (one-run design): {head} {a.canaries} canaries of {a.canary_length} tokens, each"
                      " included by a fair coin; one model trained")
    else:
        console.print(f"[bold]audit[/] (one-run design, scored on the release): {head} {m:,} canary {unit}s"
                      + (f" of {K} documents" if unit == "person" else "")
                      + ", each included by a fair coin; one model trained")
    scale = run.scale_note(corpus.n_docs, procedure.model, "lira" if design == "lira" else "one-run")
    console.print(f"note: {scale}")
    if coverage:
        console.print(f"[yellow]note: {coverage}[/]")
    common = dict(seed=a.seed, confidence=a.confidence, corpus_record=_corpus_record(a, read), scale=scale,
                  coverage=coverage)
    if design == "lira":
        res = run.audit_lira(corpus, procedure, shadows=a.shadows, targets=a.targets, jobs=a.jobs,
                             verbose=0 if a.quiet else 1, **common)
        written = run.write_audit(a.out, res.to_json(), lira=res)
        print_table(console, audit_results_table(res.summaries))
        return print_audit_summary(console, res.to_json(), written)
    if design == "one-run":
        doc = run.audit_one_run(corpus, procedure, canaries=a.canaries, canary_length=a.canary_length, **common)
    else:
        doc = run.audit_release(corpus, procedure, canaries=m, canary_unit=unit, canary_documents=K, **common)
    written = run.write_audit(a.out, doc)
    print_audit_summary(console, doc, written)


def register(sub) -> None:
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
