"""``audit``: attack a topic model's training procedure with LiRA and print the measured leakage beside
what its privacy report claims (Manzonelli et al. 2024; Carlini et al. 2022). The run is the library's
(:mod:`dptopic.attacks.audit`): this command parses its flags, reads the corpus, calls it and prints."""
from __future__ import annotations

from pathlib import Path

from .. import attacks
from .._io import check_output_folder, refuse_other_writer
from ..attacks import audit as run
from ..attacks.audit import (
    COVERAGE_LIMIT,
    MAX_SHADOWS,
    ONE_RUN_CANARIES,
    SETTING_KEYS,
    audit_corpus,
    saved_procedure,
    trainer_procedure,
)
from ..attacks.lira import ALGORITHMS, guarantee_epsilon_parameter
from ..errors import DPTopicError
from ..reporting.terminal import audit_heading, audit_results_table, esc, make_console, print_audit_summary, print_table
from ._common import (
    add_corpus_args,
    jobs_int,
    note_vocabulary_cut,
    parse_settings,
    positive_int,
    read_vocabulary,
    user_args,
)
from ._flags import READING_FLAGS, flag_errors

BUILT_IN = (None, "demo", "sotu", "20newsgroups")     # corpora documented with their vocabulary's cap

# how the library's audit settings (and its corpus reading's) are written on this command line
NAMES = {**{k: "--" + k.replace("_", "-") for k in (
    "algorithm", "topics", "iterations", "alpha", "beta", "epsilon", "delta", "confidence", "seed", "shadows", "targets",
    "canaries", "canary_length", "canary_documents", "design", "score", "canary_unit", "jobs", "user_field", "model",
    "vocabulary", "restrict", "max_vocab", "min_df", "max_df", "stop_words", "corpus")},
         "lowercase": "--lowercase/--no-lowercase", "settings": "--set"}


def _trainer_from_args(a):
    """The :class:`~dptopic.attacks.audit.AuditedProcedure` of ``--model`` or ``--algorithm``."""
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


def _audit_corpus(a, model):
    """``(corpus, note, read)``: the audited documents and how they were read
    (:func:`dptopic.attacks.audit.audit_corpus`)."""
    corpus, note, read = audit_corpus(
        a.corpus, model, fmt=a.format, uci_vocab=a.vocab, text_field=a.text_field, label_field=a.label_field,
        vocabulary=read_vocabulary(a.vocabulary) if a.vocabulary else None,
        vocabulary_name=f"--vocabulary {a.vocabulary}", restrict=a.restrict, max_vocab=a.max_vocab, min_df=a.min_df,
        max_df=a.max_df, stop_words=a.stop_words, lowercase=a.lowercase, keep_urls=a.keep_urls, **user_args(a),
        names=NAMES)
    if model is None and a.vocabulary is None and a.max_vocab is None and a.corpus not in BUILT_IN:
        note_vocabulary_cut(corpus)     # a user's text (the built-in corpora are documented with their cap)
    return corpus, note, read


def audit_flag_names(a) -> dict:
    """The names for :func:`~dptopic.cli._flags.flag_errors`: with ``--algorithm``, the trainer's parameters
    that the flags set (given or at the trainer's default), never one the user named in ``--set``; with ``--model`` the
    saved model fixes them, so only the corpus flags are mapped."""
    names = {**READING_FLAGS, "n_canaries": "--canaries",
             "canary_unit": "--canary-unit", "canary_documents": "--canary-documents"}
    if a.model is None and a.algorithm is not None:

        if a.algorithm in ALGORITHMS:
            key = guarantee_epsilon_parameter(a.algorithm)
            if key is not None:
                names.update({key: "--epsilon", "epsilon": "--epsilon"})
        for flag, keys in SETTING_KEYS:
            names.update({k: f"--{flag}" for k in keys})
        for item in a.set or []:
            names.pop(item.split("=", 1)[0].strip(), None)
    return names


def cmd_audit(a):
    # "LDA has no parameter 'foo'; valid: n_topics, ...": an UnknownParameterError, whose names stay as they are
    with flag_errors(audit_flag_names(a)):
        _audit(a)


def _corpus_record(a, read: dict) -> dict:
    """What ``audit.json`` records of the corpus the audit read (``read``: how it was read)."""
    rec = {"spec": a.corpus or "demo", "format": a.format, "text_field": a.text_field, **read}
    if a.vocab:
        rec["uci_vocab"] = a.vocab
    return rec


def _audit(a):
    console, m, unit, K = make_console(), None, "document", 1
    design = run.audit_design(a.design, a.score, canaries=a.canaries, canary_length=a.canary_length,
                              canary_unit=a.canary_unit, canary_documents=a.canary_documents, shadows=a.shadows,
                              targets=a.targets, jobs=a.jobs, names=NAMES)
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
        run.check_release_supported(procedure, names=NAMES)
    folders = a.corpus is not None and Path(str(a.corpus)).is_dir()
    # with the person of each document read (what _common.user_args reads)
    a.unit = "user" if run.check_user_field(procedure, a.user_field, folders, names=NAMES) else None
    corpus, coverage, read = _audit_corpus(a, procedure.model)
    if design == "one-run":     # the corpus: before any training
        attacks.one_run.check_canary_size(a.canaries, a.canary_length, corpus.n_tokens,
                                          names=(NAMES["canaries"], NAMES["canary_length"]))
    console.print(audit_heading(design, procedure.description, corpus, shadows=a.shadows, canaries=m if design ==
                                "release" else a.canaries, canary_length=a.canary_length, canary_unit=unit,
                                canary_documents=K), markup=True)     # rich markup, the names in it escaped
    scale = run.scale_note(corpus.n_docs, procedure.model, "lira" if design == "lira" else "one-run", names=NAMES)
    console.print(f"note: {scale}")
    if coverage:
        console.print(f"[yellow]note: {esc(coverage)}[/]", markup=True)
    common = dict(seed=a.seed, confidence=a.confidence, corpus_record=_corpus_record(a, read), scale=scale,
                  coverage=coverage, names=NAMES)
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
