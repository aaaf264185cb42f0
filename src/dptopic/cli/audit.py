"""``audit``: attack a topic model's training procedure with LiRA and print the measured leakage beside
what its privacy report claims (Manzonelli et al. 2024; Carlini et al. 2022). The run is the library's
(:mod:`dptopic.attacks.audit`): this command parses its flags, reads the corpus, calls it and prints."""
from __future__ import annotations

from pathlib import Path

from .. import attacks
from .._io import check_output_folder, refuse_other_writer
from ..attacks import audit as run
from ..attacks.audit import (
    SETTING_KEYS,
    audit_corpus,
    saved_procedure,
    trainer_procedure,
)
from ..attacks.lira import ALGORITHMS, guarantee_epsilon_parameter
from ..errors import DPTopicError
from ..reporting.terminal import audit_heading, audit_results_table, esc, make_console, print_audit_summary, print_table
from ._common import note_vocabulary_cut, user_args
from ._flags import READING_FLAGS, flag_errors
from ._run_common import parse_settings, read_vocabulary

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


