"""``train``, ``demo``, ``evaluate`` and ``topics``: fit, evaluate and inspect models."""
from __future__ import annotations

import csv
import io
import json
import math
import os
import sys
import warnings
from pathlib import Path

from ..errors import DPTopicError
from ._flags import (CLIP_RULES, CORPUS_FLAGS, CORPUS_RULES, FORMAT_FLAG, JOBS_RULES, epsilon_rules, flag_errors,
                     with_flag_names)
from ._cluster import add_cluster_args, cluster_from_args, fit_shards, shard_dir
from ._common import (NO_VOCAB_CAP, held_out_share, add_corpus_args, add_model_arg, add_out_args, corpus_line, check_out, corpus_from_args, eps_delta_pair,
                      jobs_int, load_corpus, make_console, positive_float, positive_int, print_privacy, print_topics,
                      read_vocabulary, refuse_data_cuts, say_reading, refuse_show_unsupported, seed_int, support_summary,
                      topic_support, unit_interval, user_args, warn, without_copies_said, words_or)
from .fed import add_fed_args
from .svi import SVI_ALGORITHMS, add_svi_args, build_svi_model, train_svi
from ._train_flags import (_ALGORITHM_FLAGS, _ALGORITHM_ONLY, _COMMON_FLAGS, _CORPUS_ALGOS, _DOC,
                           _STREAMS_SHARDS, _UNIT_REFUSES, flag_applies, flag_shown)

MAX_WINDOW = 10**9              # evaluate --window: far beyond any document, still a machine integer


def _window_int(s: str) -> int:
    """``evaluate --window``: an integer in [1, MAX_WINDOW] (a larger one overflows the coherence kernel)."""
    import argparse

    v = positive_int(s)
    if v > MAX_WINDOW:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WINDOW} tokens (a window longer than every document"
                                         f" is the same as one of {MAX_WINDOW}), got {s}")
    return v


DEFAULT_ITERATIONS = 200
DEFAULT_TOPICS = 50             # the trainers' own default (dptopic.LDA, HDPLDA, ...)
UNIT_TOPICS = 20                # --unit: dptopic.for_unit's default, the K of the utility table
DEFAULT_EPSILON_INHERENT = 10.0


def _refuse_foreign_flags(a) -> None:
    given = getattr(a, "_given", None)      # the flags written on the command line (cli.main's parser)
    if a.algorithm in ("cdp", "cdp+") and getattr(a, "epsilon", None) is not None:
        raise DPTopicError(f"--algorithm {a.algorithm} is a baseline with no guarantee: give the paper's figure per"
                           " release as --paper-epsilon, not --epsilon (which names a guarantee).")
    for dest, (default, algos) in _ALGORITHM_ONLY.items():
        written = dest in given if given is not None else getattr(a, dest, default) != default
        if not flag_applies(dest, a.algorithm) and written:
            flag = "--" + dest.replace("_", "-")
            hint = {"iterations": " (FedLDA: --rounds; svi/online-vb: --epochs)",
                    "corpus": " (lp/olp train on --reports written by 'dptopic randomize')",
                    "seed": " (ldp-doc's server steps use no randomness)",
                    "delta": " (cdp/cdp+, which claim no guarantee: --count-release-delta)",
                    "alpha": " (ldp-doc's topics are a fixed function of the reports)"}.get(dest, "")
            if a.unit is not None:      # the user never named the algorithm: say what --unit chose
                which = f"--algorithm {algos[0]}" if len(algos) == 1 else f"one of {'/'.join(algos)} with --algorithm"
                raise DPTopicError(f"{flag} has no effect with --unit {a.unit}, which trains {a.algorithm}: drop it,"
                                   f" or drop --unit and use {which}.")
            raise DPTopicError(f"{flag} has no effect with --algorithm {a.algorithm}: it applies to"
                               f" {'/'.join(algos)} only{hint}; drop it or choose one of those algorithms.")
    def written(dest, default):
        return dest in given if given is not None else getattr(a, dest, default) != default

    if a.algorithm == "fed" and getattr(a, "exclusion", "none") == "none":
        # the floor and tail rules' RRP parameters: the 'none' rule's subset-selection reports read none of them
        for dest, default in (("replacement", "mixture"), ("variant", "another"), ("failure_rate", 0.1)):
            if written(dest, default):
                flag = "--" + dest.replace("_", "-")
                raise DPTopicError(f"{flag} applies to --exclusion floor/tail only: the 'none' rule (the default)"
                                   f" randomizes each entry by subset selection and ignores it; drop it or choose"
                                   " --exclusion floor or tail.")
    if getattr(a, "corpus", None) is not None and a.algorithm in _CORPUS_ALGOS and shard_dir(a.corpus) is not None:
        if a.algorithm not in _STREAMS_SHARDS:
            raise DPTopicError(f"--algorithm {a.algorithm} cannot train from a shard folder (only"
                               f" {'/'.join(_STREAMS_SHARDS)} read one shard at a time): give it the corpus file the"
                               " shards were prepared from.")
        _refuse_corpus_flags_for_shards(a)
    if written("parallel", None) and (getattr(a, "scheduler", None) is not None
                                      or getattr(a, "dask_local", None) is not None):
        raise DPTopicError("--parallel has no effect on a Dask cluster (--scheduler/--dask-local): the Dask backend"
                           " always runs AD-LDA, one actor per shard (docs/scaling.md); drop --parallel.")
    for dest, why in _UNIT_REFUSES.get(a.unit, {}).items():
        if written(dest, _ALGORITHM_ONLY[dest][0]):
            raise DPTopicError(f"--{dest.replace('_', '-')} does not apply to --unit {a.unit} ({why}): drop it, or drop"
                               f" --unit and use --algorithm {a.algorithm}.")
    if a.algorithm == "hdp":
        if a.epsilon_laplace is not None and (a.epsilon is not None or a.budget is not None):
            raise DPTopicError("give --epsilon (the whole run's epsilon per word; eps_L is solved from it) or"
                               " --epsilon-laplace (eps_L per iteration), not both.")
        if a.no_noise and a.epsilon_laplace is not None:
            raise DPTopicError("--no-noise adds no Laplace noise: drop --epsilon-laplace (eps_L per iteration) or"
                               " --no-noise.")
        if a.unit is None and a.epsilon is not None:    # the total per word: from_budget solves eps_L from it
            a.budget, a.epsilon = a.epsilon, None
        if a.clip is not None and a.epsilon_inherent is not None:
            raise DPTopicError("give --clip (the clip bound C; eps_I follows from it) or --epsilon-inherent (eps_I per"
                               " iteration; C follows from it), not both.")
    if a.epsilon_inherent is None and a.clip is None:
        a.epsilon_inherent = DEFAULT_EPSILON_INHERENT
    if a.iterations is None:
        a.iterations = DEFAULT_ITERATIONS
    if a.topics is None:                # --unit: the K the utility table measured, as dptopic.for_unit
        a.topics = UNIT_TOPICS if a.unit is not None else DEFAULT_TOPICS


def _refuse_person_flags_without_unit(a) -> None:
    """``--user-field``/``--documents-per-user`` without ``--unit user``: refused first (before a flag of the default
    trainer is), with the whole fix that this command line needs, so that the line suggested is one train takes."""
    field, per_user = getattr(a, "user_field", None), getattr(a, "documents_per_user", None)
    if a.unit == "user" or (field is None and per_user is None):
        return
    given = "/".join(f for f, v in (("--user-field", field), ("--documents-per-user", per_user)) if v is not None)
    if a.unit is not None:
        raise DPTopicError(f"{given} is for a guarantee per person, and --unit {a.unit} protects one {a.unit}: give"
                           f" --unit user instead, or drop {given}.")
    if a.corpus in (None, "demo", "sotu", "20newsgroups"):
        raise DPTopicError(f"{given} is for a guarantee per person, and the built-in corpus {a.corpus or 'demo'!r} has"
                           " no people: give --unit user --epsilon EPS with a JSONL/CSV --corpus and --user-field"
                           f" FIELD (or a folder of folders, one per person), or drop {given}.")
    add = ["--unit user"] + (["--epsilon EPS"] if a.epsilon is None else [])
    if field is None and Path(a.corpus).exists() and _corpus_format(a) in ("jsonl", "csv"):
        add.append("--user-field FIELD (the field holding each document's person)")
    drop = []
    if a.algorithm is not None and a.algorithm not in _DOC:
        drop.append(f"--algorithm {a.algorithm} (--unit user picks docdp-cooc)")
    if getattr(a, "private_vocabulary", None) is not None:
        drop.append("--private-vocabulary (with --unit user give a public --vocabulary FILE)")
    raise DPTopicError(f"{given} is for a guarantee per person: add {' '.join(add)}"
                       + (f" and drop {', '.join(drop)}" if drop else "") + f"; or drop {given}.")


def _user_level_args(a) -> dict:
    """``--unit user``: the trainer's ``unit`` and ``documents_per_user``, once the corpus flags are known to fit it
    (refused in one line before any corpus is read: a field named without the unit, the unit without a field for a
    JSONL/CSV file, a built-in corpus, which has no people, or a vocabulary chosen per document)."""
    field, per_user = getattr(a, "user_field", None), getattr(a, "documents_per_user", None)
    if a.unit != "user":
        for flag, v in (("--user-field", field), ("--documents-per-user", per_user)):
            if v is not None:
                raise DPTopicError(f"{flag} is for a guarantee per person: add --unit user (and --epsilon), or drop"
                                   f" {flag}.")
        return {}
    if a.corpus in (None, "demo", "sotu", "20newsgroups"):
        raise DPTopicError(f"--unit user needs each document's person, and the built-in corpus {a.corpus or 'demo'!r}"
                           " has none: give a JSONL/CSV file with --user-field FIELD, or a folder of folders (one per"
                           " person).")
    if getattr(a, "private_vocabulary", None) is not None:
        raise DPTopicError("--private-vocabulary chooses the words by DP set union per document, not per person: with"
                           " --unit user give a public word list (--vocabulary FILE) instead.")
    if shard_dir(a.corpus) is not None:
        raise DPTopicError("--unit user groups each person's documents in memory, and a shard folder is streamed: give"
                           " the JSONL/CSV file the shards were prepared from, with --user-field FIELD.")
    fmt = _corpus_format(a)
    if field is None and fmt in ("jsonl", "csv"):
        raise DPTopicError("--unit user needs --user-field FIELD: the JSONL field / CSV column holding each document's"
                           " person (a string in every record).")
    if fmt not in ("jsonl", "csv", "dir", "npz"):
        raise DPTopicError(f"--unit user needs each document's person, and a {fmt} corpus has none: give a JSONL/CSV"
                           " file with --user-field FIELD, or a folder of folders (one per person).")
    return {"unit": "user", "documents_per_user": per_user}


def _corpus_format(a) -> str:
    """The format ``--corpus`` is read in (``--format``, or guessed from the path as ``load_corpus`` does)."""
    from ..corpus.readers import auto_format

    fmt = getattr(a, "format", "auto")
    with flag_errors(FORMAT_FLAG):
        return auto_format(Path(a.corpus)) if fmt == "auto" and Path(a.corpus).exists() else fmt


def _resolve_seed(a):
    """The training seed: fresh OS entropy (None) unless ``--seed`` is given (for a private algorithm:
    tests and reproduction only, and the report then warns); ``--secure`` refuses a seed."""
    if getattr(a, "secure", False):
        if a.seed is not None:
            raise DPTopicError("--secure draws noise from the operating system's CSPRNG and refuses a seed: remove --seed.")
        return None
    return a.seed


def _training_corpus(a, console):
    from ..corpus.corpus import tokenising_progress

    with tokenising_progress():      # a progress bar while a large text input is tokenised
        return _read_training_corpus(a, console)


def _read_training_corpus(a, console):
    """``(corpus, public vocabulary or None, vocabulary event or None)``: the corpus to train on.

    ``--vocabulary``: restricted to that public word list, no word chosen from the data.
    ``--private-vocabulary EPS_V,DELTA_V`` (FDPTM, Manzonelli et al. 2024): the vocabulary is chosen by
    DP set union from the uncut one, and its (eps, delta) event is composed with the trainer's.
    Otherwise the vocabulary comes from the data (``--max-vocab``/``--min-df``) and is treated as public.
    """
    if a.vocabulary is not None and a.private_vocabulary is not None:
        raise DPTopicError("give --vocabulary (a public word list) or --private-vocabulary (chosen with DP), not both.")
    if a.vocabulary is not None:
        refuse_data_cuts(a, "--vocabulary gives the words")
    elif a.private_vocabulary is not None:
        refuse_data_cuts(a, "--private-vocabulary chooses the words by DP set union")
    # stop words (a fixed list, not read from the data) and lower-casing apply to the text whatever chose the words
    text_kw = dict(stop_words=getattr(a, "stop_words", None), lowercase=getattr(a, "lowercase", None))
    if a.vocabulary is not None:
        vocab = read_vocabulary(a.vocabulary)
        corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=vocab, **text_kw,
                             **user_args(a))
        return _not_public(a, corpus), vocab, None
    if a.private_vocabulary is None:
        if getattr(a, "vocabulary_policy", None) is not None:
            raise DPTopicError("--vocabulary-policy applies to --private-vocabulary EPS_V,DELTA_V: add it or drop the"
                               " policy.")
        return _not_public(a, corpus_from_args(a)), None, None
    from ..models.fdptm import restrict_to_private_vocabulary

    eps_v, delta_v = a.private_vocabulary
    # no data-dependent cut (it would leak): DP set union alone decides which words are kept
    full = _not_public(a, load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, max_vocab=NO_VOCAB_CAP,
                                      min_df=1, **text_kw))
    say_reading(a)          # before the selection spends its budget
    # the selection's noise comes from fresh OS entropy unless --seed is given explicitly
    secure = bool(getattr(a, "secure", False))  # --secure: the selection's noise is OpenDP's too
    policy = getattr(a, "vocabulary_policy", None) or "gaussian"
    corpus, event = restrict_to_private_vocabulary(full, eps_v, delta_v, mechanism=policy,
                                                   seed=None if secure else a.seed, secure=secure)
    console.print(f"[bold]private vocabulary[/]: {corpus.vocab_size} words by DP set union"
                  f" (eps_V={eps_v:g}, delta_V={delta_v:g}, {policy} policy)")
    _warn_if_few_private_words(corpus.vocab_size, a.topics)
    # passed to fit as the vocabulary: chosen privately, so the fit must not treat (and warn about) it as chosen from
    # the data; the composed report then names it as selected privately
    return corpus, list(corpus.vocabulary.words), event


def _not_public(a, corpus):
    """``corpus``, once ``--public-corpus`` (read first, ``a._public``) is known to hold none of its documents
    (:func:`dptopic.models.public_prior.refuse_private_as_public`, by each document's fingerprint): before anything is
    spent."""
    public = getattr(a, "_public", None)
    if public is not None:
        from ..models.public_prior import refuse_private_as_public

        refuse_private_as_public(public, corpus, public_name=f"--public-corpus {a.public_corpus!r}",
                                 private_name=f"--corpus {a.corpus!r}")
    return corpus


WORDS_PER_TOPIC = 10
"""The words a topic is shown and scored by (its top 10): a private vocabulary of fewer than this many per topic gives
topics that share their top words, and train warns."""


def _warn_if_few_private_words(n_words: int, n_topics: int) -> None:
    """``--private-vocabulary`` kept too few words for ``--topics``: say how many, and what to do (one line on stderr,
    as every warning; refused when there are fewer words than topics, which no trainer fits). The count is the DP set
    union's output, which the guarantee covers."""
    if n_words >= WORDS_PER_TOPIC * n_topics:
        return

    fewer = n_words // WORDS_PER_TOPIC
    todo = ("give the vocabulary a larger share of the budget (a larger EPS_V in --private-vocabulary EPS_V,DELTA_V),"
            " a public --vocabulary FILE (no budget spent on the words), or fewer topics"
            + (f" (--topics {fewer} or fewer)" if fewer >= 2 else "") + ".")
    kept = f"--private-vocabulary kept {n_words} words for {n_topics} topics"
    if n_words < n_topics:
        raise DPTopicError(f"{kept}: fewer words than topics, which no model can fit; {todo}")
    print(f"warning: {kept}, too few: each topic's top {WORDS_PER_TOPIC} words come from the same {n_words} (topics"
          f" that differ need about {WORDS_PER_TOPIC} words each, {WORDS_PER_TOPIC * n_topics} in all); {todo}",
          file=sys.stderr)


def _compose_private_vocabulary(model, event, console) -> None:
    """FDPTM: replace the model's report by its composition with the vocabulary selection."""
    if event is None:
        return
    from ..models.fdptm import compose_privacy

    for w in compose_privacy(model, event).get("warnings", []):
        warn(w)


def _build_model(a, n_topics, n_iter, seed, backend="threads", client=None):
    from ..models import CDPLDA, HDPLDA, LDA, CDPLDAPlus

    common = dict(n_topics=n_topics, n_iter=n_iter, seed=seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1)
    if backend != "threads":
        common.update(backend=backend, client=client)
    if a.parallel is not None:
        common["parallel"] = a.parallel
    if a.alpha is not None:
        common["alpha"] = a.alpha
    if a.beta is not None:
        common["beta"] = a.beta
    algo = a.algorithm
    if algo == "fed":
        from .fed import build_fedlda

        return build_fedlda(a, common)
    if algo == "lda":
        return LDA(**common)
    priv = dict(delta=a.delta, noise=a.noise, secure=a.secure)
    if algo in ("cdp", "cdp+"):
        cls = CDPLDAPlus if algo == "cdp+" else CDPLDA
        return cls(paper_epsilon=a.paper_epsilon if a.paper_epsilon is not None else 1.0, noise=a.noise,
                   secure=a.secure, **common,
                   count_release_delta=1e-5 if a.count_release_delta is None else a.count_release_delta)
    hdp_kw = dict(paper_literal=a.paper_literal, **priv)
    if a.clip is not None:
        hdp_kw["clip"] = a.clip
    else:
        hdp_kw["epsilon_inherent"] = a.epsilon_inherent
    if a.budget is not None:
        if a.clip is not None or a.no_noise:
            given = "/".join(f for f, v in (("--clip", a.clip is not None), ("--no-noise", a.no_noise)) if v)
            raise DPTopicError(f"--epsilon (the whole run's total per word) solves eps_L for a given"
                               f" --epsilon-inherent: drop {given}.")
        return HDPLDA.from_budget(a.budget, a.delta, n_iter, epsilon_inherent=a.epsilon_inherent,
                                  **{k: v for k, v in common.items() if k != "n_iter"},
                                  paper_literal=a.paper_literal, noise=a.noise, secure=a.secure)
    eps_l = None if a.no_noise else (a.epsilon_laplace if a.epsilon_laplace is not None else 1.0)
    return HDPLDA(epsilon_laplace=eps_l, **common, **hdp_kw)


def _split(corpus, a, model):
    """The training and held-out parts, split as a training run of ``model`` splits them (``--test-size 0``:
    ``(corpus, None)``)."""
    from ..models.by_unit import split_for

    return split_for(model, corpus, a.test_size)


def _train_eval_report(model, corpus, a, console, vocabulary=None, show_corpus=True, split_as=None):
    """Fit ``model`` on the training part and evaluate it on the held-out part; ``split_as``: another model whose
    split to use (the demo's non-private reference trains on the private model's split)."""
    train, test = _split(corpus, a, split_as if split_as is not None else model)
    if show_corpus:
        from ..models import CDPLDA, HDPLDA
        from ..models.by_unit import split_by

        # sizes are public under word-level DP, unless a private vocabulary (a document-level guarantee) is composed in
        word_level = isinstance(model, (HDPLDA, CDPLDA)) and getattr(a, "private_vocabulary", None) is None
        split_model = split_as if split_as is not None else model
        console.print(corpus_line(corpus, train, test, model.is_private, word_level,
                                  saved=bool(getattr(a, "save_metrics", False)),
                                  split=split_by(split_model)))
        note = pad_length_note(model, train, a)
        if note:
            console.print(note)
    if test is None:
        say_reading(a, model.n_topics, train.vocab_size)
        model.fit(train, vocabulary=vocabulary)
        model.metrics_ = {}
        return train, None
    test = without_copies_said(test, train, console, model.is_private)
    say_reading(a, model.n_topics, train.vocab_size)
    model.fit(train, vocabulary=vocabulary)
    # held-out documents: never statistics of the training split
    from ..evaluation import training_run_metrics

    model.metrics_ = training_run_metrics(model, train, test)
    return train, test


PAD_LENGTH_FACTOR = 4
"""train notes a FedLDA --pad-length above this many times the typical user's length."""


def pad_length_note(model, train, a) -> str | None:
    """FedLDA: one note when --pad-length is far above the typical simulated user's length: each user then sends
    mostly padding, and its epsilon (per entry x entries) grows with the pad length. The typical length is a
    statistic of the private corpus, labelled as the corpus line labels its sizes (shown here, not saved)."""
    from ..corpus.summary import median_user_length
    from ..models import FedLDA

    if not isinstance(model, FedLDA) or getattr(a, "user_budget", None) is not None or not train.n_docs:
        return None
    typical = median_user_length(train, model.n_clients)
    L = int(model.pad_length)
    if typical <= 0 or L <= PAD_LENGTH_FACTOR * typical:
        return None
    return (f"[bold yellow]note[/]: --pad-length {L} is far above the typical user's {typical:.0f} tokens (median;"
            " [yellow]a statistic of the private corpus: outside the guarantee, shown here, not saved[/]): each user"
            f" sends {L} entries, mostly padding, and its epsilon (per entry x entries) grows with them; a pad length"
            " near the typical user's length costs far less (docs/fedlda.md).")


def _print_metrics(model, console, baseline=None, saved=True):
    m = model.metrics_
    console.print(f"[bold]held-out NPMI[/] (top 10, boolean documents): {m['npmi_top10']:.3f}   [bold]topic"
                  f" diversity[/] (top 25): {m['topic_diversity_top25']:.3f}")
    console.print(f"[bold]held-out perplexity[/]: {m['perplexity_completion']:.1f} (document completion), "
                  f"{m['perplexity_paper']:.1f} (paper mode)   [bold]held-out UMass coherence[/] (top 10, Mimno's"
                  f" sum): {_umass_text(m['umass_coherence_top10'])}"
                  + (f" (over {m['umass_topics_scored']} of {model.n_topics} topics: the others' top words are absent"
                     " from the held-out documents)" if "umass_topics_scored" in m and m["umass_topics_scored"] else ""))
    if model.is_private:
        console.print("[yellow]NPMI, perplexity and UMass are computed on held-out documents of the private corpus:"
                      " outside the guarantee (diversity reads only the released topics);[/] "
                      + ("saved in model.json, labelled as such." if saved else
                         "not saved (pass --save-metrics to save them, labelled as such)."))
    if baseline is not None:
        console.print(f"[bold]non-private reference[/]: NPMI {baseline['npmi_top10']:.3f} (ratio"
                      f" {m['npmi_top10'] / baseline['npmi_top10']:.2f}), diversity"
                      f" {baseline['topic_diversity_top25']:.3f}, perplexity {baseline['perplexity_completion']:.1f}"
                      f" (completion), UMass {_umass_text(baseline['umass_coherence_top10'])}")


def _umass_text(v) -> str:
    """Mimno's UMass sum for the terminal: "undefined" when every topic has a ranked top word in no held-out
    document (the mean over the others otherwise)."""
    return "undefined (top words absent from the held-out documents)" if v is None or math.isnan(v) else f"{v:.3f}"


# ---------------------------------------------------------------- commands
def _resolve_unit(a, console) -> None:
    """``--unit`` picks the algorithm (and makes --epsilon the whole run's budget); else ``--algorithm`` (lda)."""
    if a.unit is None:
        a.algorithm = a.algorithm or "lda"
        return
    refusal = unit_algorithm_refusal(a.unit, a.algorithm)
    if refusal is not None:
        raise DPTopicError(refusal)
    if a.epsilon is None:
        raise DPTopicError(f"--unit {a.unit} needs --epsilon, the privacy budget of the whole run (and --delta).")
    from ..advice import train_refusal
    from ..models.by_unit import trainer_for_unit

    # one rule with dptopic.for_unit and dptopic recommend: what the unit's trainer cannot spend or reach is refused
    # (an epsilon too small to reach: refused once the trainer's own settings are known, _check_document_budget,
    # through the same unreachable_epsilon)
    refusal = train_refusal(a.unit, a.epsilon, a.topics, a.delta, reach=False,
                            **({"n_iter": a.iterations, "epsilon_inherent": a.epsilon_inherent} if a.unit == "word"
                               else {}))
    if refusal is not None:
        with flag_errors({"epsilon": "--epsilon", "n_topics": "--topics", "n_iter": "--iterations",
                          "delta": "--delta"}):
            raise DPTopicError(refusal)
    trainer = trainer_for_unit(a.unit, a.epsilon, unit_name="--unit", epsilon_name="--epsilon")
    a.algorithm = a.algorithm or trainer      # --unit user may name its trainer (docdp-cooc or docdp)
    if a.unit == "word":  # --epsilon is the whole run's total per word; eps_L is solved from it
        if getattr(a, "epsilon_laplace", None) is not None:
            raise DPTopicError("give --epsilon (the whole run's epsilon per word; eps_L is solved from it) or"
                               " --epsilon-laplace (eps_L per iteration, with --algorithm hdp), not both.")
        a.budget, a.epsilon = a.epsilon, None
        if a.iterations is None:        # the iterations the utility table measured (dptopic recommend --unit word)
            from ..models.by_unit import WORD_ITERATIONS

            a.iterations = WORD_ITERATIONS
        _refuse_word_budget_below_floor(a)
    a.unit_note = (f"[bold]--unit {a.unit}[/]: training {a.algorithm} (the best {a.unit}-level trainer measured on"
                   " public corpora; docs/choosing_a_guarantee.md)" if a.unit != "user" else
                   f"[bold]--unit user[/]: training {a.algorithm} with each person's documents bounded as a whole"
                   " (docs/privacy_units.md)")


def unit_algorithm_refusal(unit: str | None, algorithm: str | None) -> str | None:
    """Why ``train --unit UNIT --algorithm ALGORITHM`` is refused (None when it is not): --unit user takes docdp-cooc
    or docdp, the other units pick their trainer themselves. One rule for the command and its ``--help``."""
    if unit is None or algorithm is None:
        return None
    if unit == "user":
        if algorithm in _DOC:
            return None
        return (f"--unit user needs a trainer that bounds each person's documents as a whole: docdp-cooc (the"
                f" default) or docdp; --algorithm {algorithm} cannot give it: drop --algorithm, or choose one of"
                " those.")
    return "--unit picks the trainer itself: drop --algorithm, or drop --unit to choose one by hand."


def _refuse_word_budget_below_floor(a) -> None:
    """``--unit word``: a whole-run ``--epsilon`` that HDP-LDA's sampling alone overspends is refused in the flags of
    the command typed (the library's sentence names eps_I, the iterations and delta, which the user may never have
    given): what the budget buys, and what to give instead."""
    from ..accounting.budget import hdp_iterations_within, smallest_hdp_budget
    from ..advice import UNIT_EPSILON_MAX

    given = getattr(a, "_given", None) or frozenset()
    eps_i = a.epsilon_inherent if a.epsilon_inherent is not None else DEFAULT_EPSILON_INHERENT
    n_iter, delta, budget = int(a.iterations), float(a.delta), float(a.budget)
    floor = smallest_hdp_budget(eps_i, n_iter, delta)
    if floor < budget:
        return
    lo = hdp_iterations_within(budget, eps_i, delta, n_iter)     # the most iterations the budget buys
    iterations = f"--iterations {n_iter}" if "iterations" in given else f"its {n_iter} iterations"
    inherent = (f"--epsilon-inherent {eps_i:g} per iteration" if "epsilon_inherent" in given else
                f"{eps_i:g} per iteration")
    at = f"--delta {delta:g}" if "delta" in given else f"delta {delta:g}"
    instead = [f"--epsilon above {floor:.4g} (word-level budgets are stated in the hundreds per word;"
               " docs/choosing_a_guarantee.md)"]
    if lo:
        instead.append(f"--iterations {lo} or fewer")
    if budget <= UNIT_EPSILON_MAX["document"]:
        instead.append(f"--unit document, whose --epsilon {budget:g} protects a whole document")
    buys = f"buys at most {lo} of them" if lo else "buys not one of them"
    raise DPTopicError(f"--unit word --epsilon {budget:g} is too small: the word-level trainer (HDP-LDA) spends"
                       f" {inherent} on its sampling alone, before any noise, so {iterations} cost {floor:.4g} per word"
                       f" at {at} and --epsilon {budget:g} {buys}; give {', or '.join(instead)}.")


def _warn_if_too_small(a, corpus, console, model=None) -> None:
    """A private model of noise is never presented as a result without a warning: from the utility table measured on
    public corpora, the size at which topics become useful at this epsilon (the count is the user's own data; it is
    printed to them, never saved, as the corpus line prints the split's sizes). The count is that of the documents the
    model trains on: the training split of a corpus file (``_split``, as ``model`` will be split), every document of a
    shard folder.
    The trainer's own forecast (``ForecastWarning``) would repeat it: that class alone is silenced for the rest of the
    command; every other warning of the library (``SmallCorpusWarning``'s "only 4 of 50,000 words stand above the
    noise") reaches stderr as in Python."""
    from ..advice import too_small_message
    from ..errors import ForecastWarning

    warnings.filterwarnings("ignore", category=ForecastWarning)
    if hasattr(corpus, "stable_split"):     # a corpus file: the model trains on its training split
        train = _split(corpus, a, model)[0]
        n_docs, what = train.n_docs, "training documents"
        if a.unit == "user":                # the people of the training split
            n_docs, what = len(set(train.user_ids)), "people"
    else:
        train, n_docs, what = corpus, corpus.n_docs, "documents"
    # one forecast with dptopic recommend (advice.recommend, its inputs named in the warning): no document length is
    # read from the private corpus (recommend's default, the median over the measured corpora); the count is labelled
    # an exact figure of the private data, outside the guarantee
    delta = getattr(a, "delta", None)
    msg = too_small_message(a.unit, a.budget if a.unit == "word" else a.epsilon, n_docs, a.topics, what=what,
                            **({} if delta is None else {"delta": float(delta)}))
    if msg is not None:     # on stderr, as every other warning
        make_console(stderr=True).print(f"[bold yellow]warning[/]: {msg}")


def _check_document_budget(model) -> None:
    """A document-level trainer calibrates its noise in ``fit``; a budget that no noise reaches is refused before the
    corpus is read. The calibration is the one ``fit`` makes (and is kept for it): docdp-cooc's two releases
    (``calibrate_gaussian_pair``, the word ranking with ``ranking_noise`` times the co-occurrence's noise; with a
    vocabulary of at most 200 words and fewer than 10 topics it makes one release only, which reaches lower,
    but the vocabulary is not known yet), ``n_iter`` full-batch releases for docdp."""
    from ..accounting.gaussian import MAX_NOISE_MULTIPLIER, calibrate_noise_multiplier
    from ..models.docdp_cooc import DocDPCooccurrence, resolve_ranking_noise

    if isinstance(model, DocDPCooccurrence):
        from ..accounting.verify import rounded_up
        from ..advice import unreachable_epsilon

        epsilon, delta = float(model.epsilon), float(model.delta)
        ratio = resolve_ranking_noise(model.ranking_noise, model.word_choice)
        floor = unreachable_epsilon("document", epsilon, delta, ratio)
        if floor is not None:
            raise DPTopicError(f"budget unreachable: epsilon={epsilon:g} at delta={delta:g} needs a noise multiplier"
                               f" above {MAX_NOISE_MULTIPLIER:g} for docdp-cooc's two releases (the word ranking with"
                               f" {ratio:g} times the co-occurrence's noise); the smallest reachable epsilon is"
                               f" {rounded_up(floor, 4):.4g} (give a larger epsilon or delta).")
        return
    calibrate_noise_multiplier(float(model.epsilon), float(model.delta), 1.0, int(getattr(model, "n_iter", 1)))


# How a shard folder ('corpus prepare --shards') meets train's corpus flags, one rule for all of them: the folder is
# read as it was prepared, so a flag is honoured where its value asks for what training on it does anyway, and refused
# otherwise. The flags are those add_corpus_args gives train, and train's own below.
_SHARD_HONOURS = {"format": ("auto",), "test_size": (0,)}      # dest -> the values that say what the folder does
_TRAIN_CORPUS_FLAGS = {"vocabulary": ("--vocabulary", None), "private_vocabulary": ("--private-vocabulary", None),
                       "vocabulary_policy": ("--vocabulary-policy", None), "test_size": ("--test-size", 0.2)}
_NOT_PREPARED_WITH = ("private_vocabulary", "vocabulary_policy", "test_size")   # no 'corpus prepare' flags


def _corpus_flags() -> dict:
    """``{dest: (flag, default)}`` for every option of train that says how a corpus is read: the options of
    :func:`add_corpus_args`, read from a parser it builds (a flag added there is covered here), and train's own."""
    import argparse

    p = argparse.ArgumentParser(add_help=False)
    add_corpus_args(p)
    flags = {act.dest: (act.option_strings[0], act.default) for act in p._actions if act.dest != "corpus"}
    return {**flags, **_TRAIN_CORPUS_FLAGS}


def _refuse_corpus_flags_for_shards(a) -> None:
    """Every corpus flag given with a shard folder is honoured (``_SHARD_HONOURS``) or refused, all in one line."""
    given = getattr(a, "_given", None)
    bad = []
    for dest, (flag, default) in _corpus_flags().items():
        value = getattr(a, dest, default)
        if (dest in given if given is not None else value != default) and value not in _SHARD_HONOURS.get(dest, ()):
            bad.append((dest, "--no-lowercase" if dest == "lowercase" and value is False else flag))
    if not bad:
        return
    flags = [flag for _, flag in bad]
    them = "it" if len(bad) == 1 else "them"
    fixes = []
    prepare = [flag for dest, flag in bad if dest not in _NOT_PREPARED_WITH]
    if prepare:
        fixes.append(f"{' / '.join(prepare)}: give {'it' if len(prepare) == 1 else 'them'} to 'dptopic corpus prepare'"
                     " and make the shards again")
    private = [flag for dest, flag in bad if dest in ("private_vocabulary", "vocabulary_policy")]
    if private:
        fixes.append(f"{' / '.join(private)}: train on the corpus file the shards were prepared from")
    if any(dest == "test_size" for dest, _ in bad):
        fixes.append("--test-size: every shard trains and none is held out, as --test-size 0 says; run 'dptopic"
                     " evaluate' on a test corpus afterwards")
    raise DPTopicError(f"{' / '.join(flags)} {'has' if len(bad) == 1 else 'have'} no effect on a shard folder, which is"
                       f" read as 'dptopic corpus prepare' made it: drop {them} ({'; '.join(fixes)}).")


def _train_document_level_on_shards(model, a, console) -> None:
    """A document-level trainer streams a shard folder (``corpus prepare --shards N``) one shard at a time: memory
    stays flat however many documents there are; there is no held-out split (run ``dptopic evaluate``)."""
    from ..backends import training_source

    if a.unit is not None:
        _warn_if_too_small(a, training_source(shard_dir(a.corpus)), console)
    fit_shards(model, a, console)
    print_topics(model, 10, console=console, show_unsupported=a.show_unsupported)
    _hdp_epsilon_line(model, a, console)
    print_privacy(model.privacy_, console)
    out = model.save(a.out)
    console.print(f"model written to [bold]{out}[/]")


def _share_or_off(v: str):
    return v if v in ("off", "auto") else unit_interval(v)


# Sentences a rename alone would leave wrong (run before the renaming).
TRAINER_RULES = (epsilon_rules("--epsilon") + CORPUS_RULES + JOBS_RULES + (
    # no noise at all reaches a finite epsilon: the delta, not the epsilon, is what to change
    (r"^budget unreachable: epsilon=\S+ at delta=(\S+) needs a noise multiplier above .*; the smallest reachable epsilon"
     r" is inf \(.*\)\.$",
     r"budget unreachable: delta=\1 is too small for the privacy accountant (no noise reaches a finite epsilon at it);"
     r" give a larger --delta (the default is 1e-5)."),
    (r"raise n_topics or lower n_background\.$", "raise --topics or give --background-share off."),
    (r"^give exactly one of omega and sigma2 \(set omega=None when you give sigma2\)",
     "give --omega or --sigma2, not both"),
))


def train_flag_names(a) -> tuple:
    """``(names, rules)`` for :func:`~dptopic.cli._flags.flag_errors`: the library's parameter names as the flags of
    this ``train`` run (``--algorithm``/``--unit`` already resolved)."""
    names = {**_COMMON_FLAGS, **_ALGORITHM_FLAGS.get(a.algorithm, {})}
    rules = TRAINER_RULES
    if a.algorithm in ("cdp", "cdp+"):     # the paper's figure, not a guarantee: its own flag
        rules = epsilon_rules("--paper-epsilon") + rules
    if a.algorithm == "hdp":
        names["epsilon"] = "--epsilon"      # HDPLDA(.from_budget)'s epsilon: the whole run's total per word
        if a.clip is not None:      # eps_I follows from --clip
            rules = CLIP_RULES + rules
    if a.algorithm in ("lp", "olp", "ldp-doc"):     # each contributor's reports are the ledger's count of releases
        names["count"] = "--reports-per-contributor"
    if a.algorithm == "fed" and getattr(a, "user_budget", None) is not None:
        from .fed import user_budget_rules

        rules = user_budget_rules("--user-budget", a.user_budget) + rules
    return names, rules


def _hdp_epsilon_line(model, a, console) -> None:
    """hdp: the total per word and its per-iteration component, said in one line (``--epsilon`` once meant eps_L)."""
    eps_l = getattr(model, "epsilon_laplace_", None)
    if a.algorithm != "hdp" or eps_l is None or not isinstance(model.privacy_, dict):
        return
    from ..accounting.card import epsilon_text

    eps = model.privacy_.get("epsilon")
    if eps is not None:
        console.print(f"[bold]hdp[/]: epsilon = {epsilon_text(eps)} per word in total (epsilon_laplace = {eps_l:g} per"
                      " iteration)")


def cmd_train(a):
    console = make_console()
    if getattr(a, "budget", None) is not None:
        raise DPTopicError("--budget is gone: give the whole run's epsilon per word as --epsilon (hdp: eps_L per"
                           " iteration is --epsilon-laplace).")
    _refuse_person_flags_without_unit(a)
    _resolve_unit(a, console)
    from .budget import training_ledger

    with flag_errors(*train_flag_names(a)), training_ledger(a):    # the dataset's ledger (docs/budget.md)
        _train(a, console)


def _train(a, console):
    _refuse_foreign_flags(a)
    if getattr(a, "secure", False) is True:   # once the flags are known to apply, before any corpus is read
        from ..mechanisms.laplace import require_opendp

        _resolve_seed(a)        # --secure with --seed: that refusal first
        require_opendp()
    if getattr(a, "unit_note", None):   # printed once every flag is known to apply
        console.print(a.unit_note)
    check_out(a)
    if getattr(a, "public_corpus", None) is not None and shard_dir(a.corpus) is not None:
        raise DPTopicError("--public-corpus is not read with a shard folder yet: give the corpus file the shards were"
                           " prepared from as --corpus.")
    if getattr(a, "public_text_field", None) is not None and getattr(a, "public_corpus", None) is None:
        raise DPTopicError("--public-text-field names the text field of --public-corpus: add --public-corpus FILE, or"
                           " drop --public-text-field.")
    from .svi import read_public_corpus

    a._public = read_public_corpus(a)      # every input read and checked before the first release
    if a.algorithm in SVI_ALGORITHMS + _DOC:
        if a.algorithm in _DOC:
            from ..models import ALGORITHMS

            if a.epsilon is None:
                raise DPTopicError(f"{a.algorithm} needs --epsilon, the budget of the whole run (and --delta).")
            extra = {} if a.alpha is None else {"alpha": a.alpha}   # the prior with which documents are folded in
            if a.algorithm == "docdp-cooc":     # flags given override the model's defaults
                if a.background_share is not None:
                    extra["background_share"] = None if a.background_share == "off" else a.background_share
                if a.n_words is not None:
                    extra["n_words"] = a.n_words
                if a.word_choice is not None:
                    extra["word_choice"] = a.word_choice
                if a.recovery is not None:
                    extra["recovery"] = a.recovery
            extra.update(_user_level_args(a))
            if a.unit == "user" and (a.scheduler is not None or a.dask_local is not None):
                raise DPTopicError(f"--{'scheduler' if a.scheduler is not None else 'dask-local'} has no effect with"
                                   " --unit user, which groups each person's documents in memory on this machine:"
                                   " drop it.")
            model = ALGORITHMS[a.algorithm].from_budget(a.epsilon, a.delta, n_topics=a.topics, secure=a.secure,
                                                        seed=_resolve_seed(a), verbose=0 if a.quiet else 1,
                                                        n_jobs=a.jobs, **extra)
            model.validate_parameters()
            _check_document_budget(model)
            if shard_dir(a.corpus) is not None:
                from ..backends import training_source

                training_source(shard_dir(a.corpus))   # a bad shard folder is refused before a cluster starts
                with cluster_from_args(a) as (backend, client):
                    model.set_params(backend=backend, client=client)
                    return _train_document_level_on_shards(model, a, console)
        else:
            model = build_svi_model(a)  # bad parameters fail before the corpus loads
        corpus, vocab, event = _training_corpus(a, console)
        if a.unit == "user" and corpus.user_ids is None:     # a prepared corpus saved without them
            raise DPTopicError(f"--unit user needs each document's person, and {a.corpus!r} carries none: give the"
                               " JSONL/CSV file it was prepared from with --user-field FIELD, or a folder of folders"
                               " (one per person).")
        if a.unit is not None:
            _warn_if_too_small(a, corpus, console, model)
        from ..corpus.wordlist import record_word_list   # which --vocabulary list: its name, size and sha256

        with cluster_from_args(a) as (backend, client):     # --scheduler/--dask-local reach the document-level ones
            if client is not None:
                model.set_params(backend=backend, client=client)
            return train_svi(model, corpus, vocab, a, console, after_fit=lambda m: (
                _compose_private_vocabulary(m, event, console), record_word_list(m, a.vocabulary, vocab)))
    if a.algorithm in ("lp", "olp", "ldp-doc"):
        from .local import train_local

        return train_local(a, console)
    seed = _resolve_seed(a)
    with cluster_from_args(a) as (backend, client):
        model = _build_model(a, a.topics, a.iterations, seed, backend, client)  # bad parameters fail first
        model.validate_parameters()     # before the corpus loads, not in fit
        if shard_dir(a.corpus) is not None:
            fit_shards(model, a, console)
        else:
            corpus, vocab, event = _training_corpus(a, console)
            if a.unit is not None:
                _warn_if_too_small(a, corpus, console, model)
            if a.algorithm == "fed":
                from .fed import apply_user_budget

                model = apply_user_budget(model, a, len(vocab) if vocab is not None else corpus.vocab_size)
            _train_eval_report(model, corpus, a, console, vocab)
            _compose_private_vocabulary(model, event, console)
            from ..corpus.wordlist import record_word_list   # which --vocabulary list: its name, size and sha256

            record_word_list(model, a.vocabulary, vocab)
    print_topics(model, 10, console=console, show_unsupported=getattr(a, "show_unsupported", False))
    if model.metrics_:
        _print_metrics(model, console, saved=a.save_metrics or not model.is_private)
    _hdp_epsilon_line(model, a, console)
    print_privacy(model.privacy_, console)
    out = model.save(a.out, save_metrics=a.save_metrics or None)
    if a.save_metrics and not model.is_private:
        console.print("note: --save-metrics changes nothing here: a model trained without privacy always saves its metrics.")
    console.print(f"model written to [bold]{out}[/]")


@with_flag_names({"n_topics": "--topics", "n_iter": "--iterations", "epsilon_laplace": "--epsilon-laplace",
                  "epsilon": "--epsilon-laplace", "epsilon_inherent": "--epsilon-inherent", "n_jobs": "--jobs",
                  "seed": "--seed"}, JOBS_RULES)
def cmd_demo(a):
    from ..models import HDPLDA, LDA
    from ._demo_figures import check_figures_out, write_demo_figures

    console = make_console()
    check_out(a, "-nonprivate", *(() if a.word_level_only else ("-document",)))
    check_figures_out(a)
    a.test_size = 0.2
    # first the guarantee a review board accepts (one paragraph protected, epsilon = 1 in all), then the word-level
    # model, whose epsilon is per word
    document = None if a.word_level_only else _demo_document_level(a, console)
    console.rule(("dptopic demo, part 2" if document else "dptopic demo") + ": HDP-LDA, word-level DP (epsilon per"
                 " word)")
    corpus = load_corpus("demo")
    # the private model takes fresh OS entropy unless --seed is given (then its report warns)
    private = HDPLDA(n_topics=a.topics, epsilon_laplace=a.epsilon_laplace, epsilon_inherent=a.epsilon_inherent,
                     beta=1.0, n_iter=a.iterations, delta=1e-5, seed=a.seed, n_jobs=a.jobs, verbose=0 if a.quiet else 1)
    baseline = LDA(n_topics=a.topics, n_iter=a.iterations, seed=a.seed, n_jobs=a.jobs,
                   verbose=0 if a.quiet else 1)

    with warnings.catch_warnings():     # the paragraphs part 1 read: said once below, for the two models together
        if document is not None:
            for text in (r".*already used by an earlier private fit", r".*trained a private model in this process"):
                warnings.filterwarnings("ignore", text)
        _train_eval_report(private, corpus, a, console)
        console.print("non-private reference: LDA on the same split")
        _train_eval_report(baseline, corpus, a, console, show_corpus=False, split_as=private)
    print_topics(private, 8, max_topics=a.show_topics, console=console)
    _print_metrics(private, console, baseline.metrics_, saved=a.save_metrics)
    print_privacy(private.privacy_, console)
    console.print(_word_level_guarantee(private.privacy_, document))
    out = private.save(a.out, save_metrics=a.save_metrics)
    baseline.save(Path(a.out).with_name(Path(a.out).name + "-nonprivate"))
    console.print(f"word-level private model written to [bold]{out}[/] (non-private reference beside it, suffix"
                  " -nonprivate)")
    if document is not None:
        console.print("[yellow]both models read the same paragraphs: each card covers its own model; published"
                      " together, their guarantees compose (docs/privacy.md)[/]")
    shown, lead = (out, private) if document is None else document
    marks = {"word": float(private.privacy_["epsilon"]),
             **({} if document is None else {"document": float(document[1].privacy_["epsilon"])})}
    figures = write_demo_figures(a, lead, marks)
    console.print(f"figures: [bold]{figures[0]}[/] (the top words of {type(lead).__name__}'s topics) and [bold]"
                  f"{figures[1]}[/] (topic quality against epsilon, as the shipped utility table measured it)")
    console.print(f"next: [bold]dptopic report --model {shown} --out demo.html[/] (the topics and the privacy card"
                  " as a page a review board can file), [bold]dptopic topics --model " f"{shown}[/], or train on your"
                  " own text: dptopic train --help")


def _word_level_guarantee(rep: dict, document) -> str:
    """The word-level model's guarantee in one sentence, with its per-paragraph figure (group privacy: the card's
    examples, no statistic of the paragraphs) and, after the document-level part, how the two compare."""
    from ..accounting.card import epsilon_text

    per = rep.get("per_document") if isinstance(rep.get("per_document"), dict) else {}
    ex = per.get("examples") if isinstance(per.get("examples"), dict) else {}
    shown = ", ".join(f"{e:,.0f} for a paragraph of {L} words" for L, e in list(ex.items())[:2])
    pure = per.get("epsilon_per_word")
    return (f"[bold]GUARANTEE[/] (word level): epsilon = {epsilon_text(rep['epsilon'])} at delta = {rep['delta']:g} per"
            " word (one word replaced); per paragraph, by group privacy, L times "
            + (f"{epsilon_text(pure)} (pure DP, delta = 0)" if pure else "that")
            + (f": {shown}" if shown else "")
            + (f": far weaker than the document-level model above (epsilon ="
               f" {epsilon_text(document[1].privacy_['epsilon'])} per whole paragraph)" if document else ""))


DEMO_DOCUMENT_BUDGET = {"epsilon": 0.6, "delta": 5e-6, "epsilon_vocab": 0.4, "delta_vocab": 5e-6}
"""The demo's document-level run: epsilon = 1 and delta = 1e-5 in all, 0.4 of it for the vocabulary (DP set union),
the split ``dptopic recommend --unit document`` advises without a public word list."""


def _demo_document_level(a, console):
    """The demo's first part: State of the Union paragraphs under the guarantee a review board asks for, one whole
    paragraph protected at epsilon = 1 in all, the words chosen privately inside it (``dptopic train --unit document
    --private-vocabulary``); its NPMI is read beside non-private LDA on the same words and split. Returns the folder
    the model was saved to and the model."""
    from ..models import LDA, for_unit
    from ..models.fdptm import restrict_to_private_vocabulary
    from ..accounting.card import epsilon_text
    from ._common import NO_VOCAB_CAP

    b = DEMO_DOCUMENT_BUDGET
    total_eps, total_delta = b["epsilon"] + b["epsilon_vocab"], b["delta"] + b["delta_vocab"]
    console.rule(f"dptopic demo, part 1: document-level DP: epsilon = {total_eps:g} per paragraph in all")
    full = load_corpus("demo", max_vocab=NO_VOCAB_CAP, min_df=1)
    # the words are chosen from the paragraphs by DP set union inside the budget; private noise: fresh OS entropy
    # unless --seed is given (tests only)
    corpus, event = restrict_to_private_vocabulary(full, b["epsilon_vocab"], b["delta_vocab"], seed=a.seed)
    model = for_unit("document", b["epsilon"], b["delta"], n_topics=a.topics, n_jobs=a.jobs, seed=a.seed)
    train, test = _split(corpus, a, model)
    test = without_copies_said(test, train, console, private=True)
    console.print(f"[bold]vocabulary[/]: {corpus.vocab_size} words chosen by DP set union (eps_V = {b['epsilon_vocab']:g},"
                  f" delta_V = {b['delta_vocab']:g}), then {type(model).__name__} (eps = {b['epsilon']:g}, delta ="
                  f" {b['delta']:g}): {total_eps:g} and {total_delta:g} in all (docs/choosing_a_guarantee.md)")

    with warnings.catch_warnings():     # said once below, for the two models together
        warnings.filterwarnings("ignore", r".*already used by an earlier private fit")
        model.fit(train, vocabulary=list(corpus.vocabulary.words))
    _compose_private_vocabulary(model, event, console)
    reference = LDA(n_topics=a.topics, n_iter=a.iterations, seed=a.seed, n_jobs=a.jobs, verbose=0).fit(train)
    from ..evaluation import npmi_and_diversity

    mine, ref = npmi_and_diversity(model, test), npmi_and_diversity(reference, test)
    model.metrics_ = {"n_train_docs": train.n_docs, "n_test_docs": test.n_docs, **mine}
    print_topics(model, 8, max_topics=a.show_topics, console=console,
                 hint=f"'dptopic topics --model {str(a.out).rstrip('/')}-document --show-unsupported' shows them")
    console.print(f"[bold]held-out NPMI[/] (top 10, boolean documents): {mine['npmi_top10']:.3f}, ratio"
                  f" {mine['npmi_top10'] / ref['npmi_top10']:.2f} to non-private LDA on the same words and split"
                  f" ({ref['npmi_top10']:.3f}, {a.iterations} sweep{'' if a.iterations == 1 else 's'})   [bold]topic"
                  " diversity[/] (top 25):"
                  f" {mine['topic_diversity_top25']:.3f} (LDA {ref['topic_diversity_top25']:.3f})")
    console.print("[yellow]NPMI is computed on held-out paragraphs of the private corpus: outside the guarantee"
                  " (diversity reads only the released topics);[/] " + (
                      "saved in model.json, labelled as such." if a.save_metrics else "not saved."))
    rep = model.privacy_
    console.print(f"[bold]GUARANTEE[/]: epsilon = {epsilon_text(rep['epsilon'])} at delta = {rep['delta']:g} per"
                  f" {rep['unit']} (one paragraph added or removed), the choice of the words included")
    out = model.save(str(a.out).rstrip("/\\") + "-document", save_metrics=a.save_metrics)
    console.print(f"document-level model written to [bold]{out}[/] (its whole privacy card: dptopic topics --model"
                  f" {out})")
    return out, model


@with_flag_names({"top_n": "--top-n", "window": "--window", "seed": "--seed", "mode": "--mode"})
def cmd_evaluate(a):
    from ..evaluation import topic_quality
    from ..evaluation.topic_quality import umass_mimno_sum
    from ..models import load

    model = load(a.model)
    # the model's vocabulary, never one built from the test file (its words outside a top-N cut would vanish); text is
    # only tokenised, with the vocabulary's own case (docs/preprocessing.md)
    corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, None, vocabulary=model.vocabulary_, into_model=True,
                         tokenizer=getattr(model, "tokenizer_", None))
    top_n = min(a.top_n, len(model.vocabulary_))
    ppl = model.perplexity(corpus, mode=a.mode, seed=a.seed)
    q = topic_quality(model, corpus, top_n=top_n, window=a.window, reference_name=str(a.corpus))
    q["perplexity"], q["perplexity_mode"] = ppl, a.mode
    q["umass_mimno_sum"] = umass_mimno_sum(model, corpus, top_n)  # absent top words: said once, absent_top_words
    if a.compare_to is not None:
        from ..evaluation import match_models

        q["match"] = match_models(model, load(a.compare_to))
        q["match"]["reference_model"] = str(a.compare_to)
        if getattr(model, "privacy_", {}).get("private"):     # as 'dptopic report --compare-to' labels it
            q["match"]["note"] = ("outside the guarantee: it also reads the other model, which this model's privacy"
                                  " report does not cover")
    # a private model's figures that read the documents of --corpus lie outside its guarantee, unless that corpus is
    # public (--reference-public, as for report); topic diversity reads only the released topics
    private = bool(getattr(model, "privacy_", {}).get("private")) and not a.corpus_public
    if private:
        from .report import reference_note

        q["note"] = reference_note("the documents of --corpus", "--reference-public")
    if a.json:
        print(json.dumps(q, indent=2))
        return
    console = make_console()
    if top_n < a.top_n:
        console.print(f"--top-n {a.top_n} is more than the model's {len(model.vocabulary_)} words: the top {top_n} are"
                      " used")
    console.print(f"reference: {q['reference']} (read in the model's vocabulary)")
    console.print(f"perplexity ({a.mode}): {ppl:.2f}")
    console.print(f"NPMI (top {top_n}, {q['npmi_reference']}): {q['npmi']:.4f}")
    console.print(f"C_v (top {top_n}, {q['c_v_reference']}): "
                  + ("undefined (no topic has 2 top words in the reference)" if q["c_v"] is None else f"{q['c_v']:.4f}"))
    console.print(f"top words {q['top_words']}: NPMI, C_v, diversity and UMass read them in that order")
    console.print(f"topic diversity (unique share of the top 25 words): {q['diversity']:.3f}")
    console.print(f"UMass (top {top_n}), mean over word pairs as gensim reports it: {q['umass_pairwise_mean']:.4f}")
    if q["umass_mimno_sum"] is not None:
        console.print(f"UMass (top {top_n}), sum over word pairs as Mimno et al. define it: {q['umass_mimno_sum']:.4f}")
    elif hasattr(model, "coherence"):
        console.print(f"UMass (top {top_n}), sum over word pairs as Mimno et al. define it: undefined (every topic has"
                      " a ranked top word in no reference document)")
    if "absent_top_words" in q:
        console.print(f"[yellow]note[/]: {q['absent_top_words']}")
    if "match" in q:
        m = q["match"]
        console.print(f"match to the topics of {a.compare_to}: {m['match']:.3f} (mean cosine of {m['matched']}"
                      f" Hungarian-matched topic pairs over {m['shared_words']} shared words; 1 = the same topics,"
                      " random topics near 0; reads only the two models)")
        if "note" in m:
            console.print(f"[yellow]match: {m['note']}[/]")
    if private:
        console.print(f"[yellow]{q['note']}[/]")


def cmd_topics(a):
    from ..models import load

    model = load(a.model)
    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    if a.format == "table":
        print_topics(model, a.n, show_unsupported=a.show_unsupported)
        print_privacy(model.privacy_)
        return
    from ..evaluation.topic_quality import ranking_text, word_ranking

    topics = model.topic_words(a.n, weights=True)
    supported, background = topic_support(model)
    # a topic below the noise: listed with its flag, its words left out unless --show-unsupported
    hidden = set() if supported is None or a.show_unsupported else {k for k, s in enumerate(supported) if not s}
    if a.format == "json":
        from ..reporting import privacy_card

        def entry(k, t):
            e = {"topic": k, "words": [] if k in hidden else [w for w, _ in t],
                 "weights": [] if k in hidden else [float(p) for _, p in t]}
            if supported is not None:       # absent for a model without the assessment
                e.update({"supported": supported[k], "background": background[k]})
            return e

        doc = {"model": str(a.model), "class": type(model).__name__,
               "words": f"{ranking_text(word_ranking(model))}; weights are P(word | topic)",
               "topics": [entry(k, t) for k, t in enumerate(topics)]}
        if supported is not None:
            doc["support"] = {"supported": sum(supported), "topics": len(supported),
                              "note": support_summary(supported)
                              + ("; the words of the topics below it are left out (--show-unsupported includes"
                                 " them)" if hidden else "")}
        doc["privacy_card"] = privacy_card(model.privacy_, type(model).__name__)
        learned = learned_words(model)
        if learned:
            doc.update(learned)
        print(json.dumps(doc, indent=2))
        return
    buf = io.StringIO()
    card = privacy_card_line(model, a.model)
    # the rank column follows the model's display order: said with the card's line, as the JSON says it
    ranked = f"words {ranking_text(word_ranking(model))} (weight: P(word | topic))"
    print(f"{card}; {ranked}" if card else f"note: {ranked}", file=sys.stderr)
    if supported is not None:
        print(f"note: {support_summary(supported)}" + (
            f"; topics {', '.join(map(str, sorted(hidden)))} are below it: their rows are left out (--show-unsupported"
            " includes them)" if hidden else "") + ".", file=sys.stderr)
    w = csv.writer(buf, lineterminator="\n")
    # the supported and background columns only for a model with the assessment (an LDA's CSV is as it was)
    w.writerow(["topic", "rank", "word", "weight"] + ([] if supported is None else ["supported", "background"]))
    for k, t in enumerate(topics):
        if k in hidden:
            continue
        flags = [] if supported is None else [str(supported[k]).lower(), str(background[k]).lower()]
        for r, (word, p) in enumerate(t):
            w.writerow([k, r + 1, word, f"{p:.6g}"] + flags)
    print(buf.getvalue(), end="")


def learned_words(model) -> dict:
    """FedLDA with fewer report words than words: which words were learned (the vocabulary's first ``report_words``)
    and a note that the others are a shared Zipf fill; empty for every other model."""
    n = getattr(model, "report_words_", None)
    V = len(model.vocabulary_)
    if not isinstance(n, int) or n >= V:
        return {}
    return {"report_words": n,
            "report_words_note": f"only the vocabulary's first {n} of {V} words (report_words) were learned from the"
                                 f" users' reports; the other {V - n} get the same Zipf-law weights in every topic"
                                 " (a shared fill, not learned)"}


def privacy_card_line(model, path) -> str:
    """One line pointing a CSV's reader to the model's privacy card (the JSON carries it in full)."""
    from ..reporting import privacy_card
    from ..accounting.card import epsilon_text

    rep = getattr(model, "privacy_", None) or {}
    card = privacy_card(rep, type(model).__name__, check=False)
    g = card["guarantee"]
    what = ("no differential privacy guarantee" if g == "none" else
            f"{g} guarantee, epsilon = {epsilon_text(card['epsilon'])} per {card['privacy_unit']}")
    note = learned_words(model).get("report_words_note")
    import shlex

    return (f"note: these topics come with the model's privacy card ({what}): see 'dptopic topics --model"
            f" {shlex.quote(str(path))}'"
            " or --format json" + (f"; {note}" if note else "") + ".")


def register(sub) -> None:
    from ._train_help import PLAIN, TRAINERS, add_help

    t = sub.add_parser("train", help="train a topic model, evaluate it and save it", description=PLAIN,
                       add_help=False)
    add_help(t, flag_shown, unit_algorithm_refusal)    # the options of the trainer chosen: 'train --algorithm X --help'
    add_corpus_args(t)
    from .budget import add_ledger_flags

    add_ledger_flags(t)         # --ledger, --no-ledger, --dataset (docs/budget.md)
    t.add_argument("--algorithm", choices=tuple(TRAINERS), default=None,
                   help="the trainer (default lda, not private; the list: 'dptopic train --help'); or give --unit"
                        " instead")
    t.add_argument("--unit", choices=("document", "user", "word"), default=None,
                   help="train the best measured private trainer for this privacy unit with --epsilon (the whole"
                        " run's budget; --private-vocabulary EPS_V,DELTA_V adds its own, and the report prints the"
                        " composed total) and --delta; user: one person's documents (--user-field, or a folder of"
                        " folders, one per person); see 'dptopic recommend', docs/choosing_a_guarantee.md and"
                        " docs/privacy_units.md")
    t.add_argument("--user-field", default=None, metavar="FIELD",
                   help="--unit user: the JSONL field / CSV column holding each document's person (a string in every"
                        " record); a folder of folders needs none (each sub-folder is one person)")
    t.add_argument("--documents-per-user", type=positive_int, default=None, metavar="M",
                   help="--unit user: keep at most M documents a person (chosen at random), each weighted 1/M,"
                        " instead of summing each person's documents and scaling the sum (the default, which"
                        " recovered more topics on a planted corpus: docs/privacy_units.md)")
    t.add_argument("--topics", type=positive_int, default=None,
                   help=f"number of topics (default {DEFAULT_TOPICS}; with --unit {UNIT_TOPICS}, the number the utility"
                        " table measured)")
    t.add_argument("--iterations", type=positive_int, default=None,
                   help=f"Gibbs sweeps (lda, hdp, cdp, cdp+, lp, olp; default {DEFAULT_ITERATIONS}; with --unit word"
                        " the number the utility table measured, docs/choosing_a_guarantee.md)")
    t.add_argument("--seed", type=seed_int, default=None,
                   help="random seed (default: fresh OS entropy; for a private algorithm a given seed is for tests"
                        " only: whoever knows it can remove the noise; not allowed with --secure)")
    t.add_argument("--vocabulary", default=None, metavar="FILE",
                   help="public vocabulary, one word per line: the corpus is restricted to it and no word is chosen"
                        " from the private data (--max-vocab/--min-df/--max-df are then refused); or wordfreq:LANG[:SIZE]"
                        " (e.g. wordfreq:en), a general word list of that language when you have none of your domain"
                        " (pip install 'dptopic[wordlist]'; docs/choosing_a_guarantee.md); lp/olp: needed only if the"
                        " report file does not embed its vocabulary")
    t.add_argument("--alpha", type=positive_float, default=None,
                   help="document-topic prior (default: the trainer's own, 0.1 for most)")
    t.add_argument("--beta", type=positive_float, default=None,
                   help="topic-word prior (default: the trainer's own, 0.01 for most)")
    t.add_argument("--epsilon", type=positive_float, default=None,
                   help="the guarantee the model claims, in total, in its unit: per document for --unit document and"
                        " docdp/docdp-cooc/svi (the whole run), per person for --unit user (all of one person's"
                        " documents added or removed), per user for fed (split over the entries a user sends;"
                        " --epsilon-per-entry gives the component instead), per word for --unit word and hdp (the whole"
                        " run; eps_L per iteration is solved from it, or give --epsilon-laplace instead)")
    t.add_argument("--paper-epsilon", type=positive_float, default=None,
                   help="cdp/cdp+: the paper's nominal eps per noisy release (default 1), noise of scale 1/eps; no"
                        " guarantee of the model, hence not --epsilon")
    t.add_argument("--delta", type=unit_interval, default=1e-5,
                   help="the delta of the guarantee the model claims (default 1e-5), with --epsilon; lp/olp: the delta"
                        " at which the tight epsilon(delta) is reported")
    t.add_argument("--count-release-delta", type=unit_interval, default=None,
                   help="cdp/cdp+: the delta at which the count releases' partial epsilon(delta) is reported (default"
                        " 1e-5); no guarantee of the model, hence not --delta")
    t.add_argument("--epsilon-inherent", type=positive_float, default=None,
                   help=f"hdp: eps_I per iteration (default {DEFAULT_EPSILON_INHERENT:g}; or give --clip)")
    t.add_argument("--clip", type=positive_float, default=None, help="hdp: clip bound C (instead of eps_I); svi: per-document Frobenius clip (default 50)")
    t.add_argument("--epsilon-laplace", type=positive_float, default=None,
                   help="hdp: the component eps_L, Laplace epsilon per iteration (default 1 when --epsilon is not"
                        " given); refused with --epsilon")
    t.add_argument("--budget", type=positive_float, default=None,
                   help="refused: hdp's whole-run epsilon per word is now --epsilon (eps_L per iteration:"
                        " --epsilon-laplace)")
    t.add_argument("--no-noise", action="store_true", help="hdp: 'limited inherent' (clipping only, not DP)")
    t.add_argument("--paper-literal", action="store_true", help="hdp: Algorithm 1 exactly as written (unsound)")
    t.add_argument("--noise", choices=("discrete", "continuous"), default="discrete",
                   help="hdp/cdp/cdp+: discrete (default) or continuous Laplace noise")
    t.add_argument("--secure", action="store_true",
                   help="noise from the OS CSPRNG (OpenDP's exact samplers; fed: the reports), refuses --seed")
    t.add_argument("--private-vocabulary", type=eps_delta_pair, default=None, metavar="EPS_V,DELTA_V",
                   help="FDPTM: choose the vocabulary by DP set union with (EPS_V, DELTA_V) and compose it with the"
                        " trainer (Manzonelli et al. 2024, Thm 4.1); --max-vocab/--min-df/--max-df then do not"
                        " apply (--stop-words and --lowercase do)")
    t.add_argument("--vocabulary-policy", choices=("gaussian", "laplace"), default=None,
                   help="with --private-vocabulary: 'gaussian' (default: Gopi et al.'s Gaussian policy, cap 100;"
                        " several times more words at the same budget) or 'laplace' (Manzonelli et al.'s setting:"
                        " Laplace policy, frequency order, cap 50)")
    t.add_argument("--background-share", type=_share_or_off, default=None, metavar="SHARE|auto|off",
                   help="docdp-cooc (--unit document): words estimated to appear in more than this share of the"
                        " documents go to background topics instead of every topic (default auto: 0.25 with 10 or"
                        " more topics, off below; 0.15 sets aside more; off: none); chosen from the first noisy"
                        " release, no extra budget"
                        " (docs/document_dp.md)")
    t.add_argument("--n-words", type=words_or("auto"), default=None, metavar="N|auto",
                   help="docdp-cooc (--unit document): words in the co-occurrence release (default auto: from the"
                        " noisy document count of the first release and the noise, 200 to 400)")
    t.add_argument("--word-choice", choices=("frequency", "repetition"), default=None,
                   help="docdp-cooc (--unit document): how the first release chooses the co-occurrence words:"
                        " 'frequency' (default) or 'repetition' (frequent words that come back within the documents"
                        " that use them: it helped on 20 Newsgroups posts and hurt on State of the Union paragraphs"
                        " and Reuters newswire, so choose it on a public corpus like yours; no extra budget;"
                        " docs/document_dp.md)")
    t.add_argument("--public-corpus", default=None, metavar="PATH",
                   help="docdp-cooc: non-private documents of the same domain (a few hundred published reports or"
                        " public posts, none of them private; its format by its own name, --public-text-field its"
                        " field; refused when it is the private --corpus or holds its documents): a prior for the"
                        " topics, named on the privacy card as public input; the model says whether the private"
                        " data improved on them (docs/document_dp.md)")
    t.add_argument("--public-text-field", default=None, metavar="FIELD",
                   help="docdp-cooc with --public-corpus: the JSONL field / CSV column holding the text of the public"
                        " documents (default: --text-field's, where the public file has fields)")
    t.add_argument("--recovery", choices=("refined-anchors", "nmf"), default=None,
                   help="docdp-cooc (--unit document): how the topics are read from the noisy co-occurrence matrix:"
                        " 'refined-anchors' (default: anchor words refined by least squares, consistent as the"
                        " documents grow) or 'nmf' (the earlier default, with background topics); post-processing,"
                        " no extra budget (docs/document_dp.md)")
    t.add_argument("--jobs", type=jobs_int, default=1,
                   help="threads: the Gibbs trainers' sweep (split as --parallel says: documents x words blocks by"
                        " default, or AD-LDA shards), FedLDA's clients, the E-step of the document-level and"
                        " variational trainers; on a Dask cluster, the threads of the held-out evaluation only"
                        " (default 1)")
    t.add_argument("--parallel", choices=("adlda", "partition"), default=None,
                   help="how --jobs threads split a sweep: AD-LDA shards (merge after the sweep) or documents x"
                        " words blocks swept diagonal by diagonal (no merge, the default)")
    add_cluster_args(t)
    t.add_argument("--test-size", type=held_out_share, default=0.2,
                   help="share of the documents held out for evaluation (default 0.2); 0 trains on every document"
                        " and skips the held-out evaluation")
    add_out_args(t, "runs/model")
    t.add_argument("--save-metrics", action="store_true",
                   help="private algorithms: also save the evaluation metrics, labelled 'outside the guarantee'")
    t.add_argument("--show-unsupported", action="store_true",
                   help="docdp, docdp-cooc, svi: also print the words of the topics that do not stand above the noise"
                        " of the release (hidden by default: they are mostly noise)")
    t.add_argument("--quiet", action="store_true", help="no progress bars")
    from .local import add_train_args

    add_train_args(t)
    add_fed_args(t)
    add_svi_args(t)
    t.set_defaults(func=cmd_train)

    d = sub.add_parser("demo", help="the main job: topic models of the demo corpus under document-level DP at"
                                    " epsilon = 1, then private HDP-LDA (word-level; hybrid differentially private"
                                    " LDA, Zhao et al.) with a non-private reference; figures as PNG",
                       description="Train on the State of the Union paragraphs, first under document-level DP,"
                                   " epsilon = 1 and delta = 1e-5 in all per paragraph (the words chosen by DP set"
                                   " union inside it, then DocDPCooccurrence), its NPMI beside non-private LDA's on"
                                   " the same words, saved with the suffix -document (--word-level-only skips it);"
                                   " then private HDP-LDA (hybrid differentially private LDA, Zhao et al. 2021: a"
                                   " word-level guarantee, epsilon per word, L times it per paragraph of L words)"
                                   " and non-private LDA on the same split as the reference: both models' held-out"
                                   " figures, the private topics and the privacy card, both models saved. The"
                                   " figures (the leading model's topics as bars, topic quality against epsilon from"
                                   " the shipped utility table) are written as PNG files into the folder named as"
                                   " --out with the suffix -figures.")
    d.add_argument("--topics", type=positive_int, default=20, help="topics K (default 20)")
    # 50 sweeps: half the word-level epsilon of 100 sweeps (531 vs 1053 by PLD) for +2% perplexity
    d.add_argument("--iterations", type=positive_int, default=50, help="Gibbs sweeps of both models (default 50)")
    d.add_argument("--epsilon-laplace", type=positive_float, default=1.0,
                   help="HDP-LDA's Laplace epsilon per sweep, eps_L, a component (default 1; as"
                        " --epsilon-laplace in 'train --algorithm hdp'; the total per word is printed)")
    d.add_argument("--epsilon-inherent", type=positive_float, default=10.0,
                   help="HDP-LDA's bound on the sampler's inherent privacy, eps_I (default 10)")
    d.add_argument("--seed", type=seed_int, default=None,
                   help="seed both models (tests only: whoever knows it can remove the private model's noise);"
                        " default: fresh OS entropy")
    d.add_argument("--save-metrics", action="store_true",
                   help="also save the private model's metrics, labelled 'outside the guarantee'")
    d.add_argument("--jobs", type=jobs_int, default=min(2, os.cpu_count() or 1),
                   help="threads (default: 2, or 1 on one core)")
    d.add_argument("--show-topics", type=positive_int, default=20, help="how many private topics to print (default"
                                                                        " 20)")
    add_out_args(d, "runs/demo")
    d.add_argument("--word-level-only", action="store_true",
                   help="skip the demo's first part (the paragraphs under document-level DP at epsilon = 1 in all, the"
                        " words chosen privately)")
    d.add_argument("--quiet", action="store_true", help="no progress bars")
    d.set_defaults(func=cmd_demo)

    e = sub.add_parser("evaluate", help="perplexity and coherence of a saved model on a corpus")
    add_model_arg(e)
    add_corpus_args(e, required=True, preprocessing=False)  # read in the model's own vocabulary: nothing to choose
    e.add_argument("--mode", choices=("paper", "completion"), default="completion",
                   help="perplexity: document completion (default) or the paper's mode / the variational bound")
    e.add_argument("--top-n", "--top", "-n", dest="top_n", type=positive_int, default=10,
                   help="top words per topic for coherence (default 10; also spelt --top or -n)")
    e.add_argument("--window", type=_window_int, default=None,
                   help="NPMI over sliding windows of this many tokens, at most 10**9 (default: boolean documents)")
    e.add_argument("--reference-public", "--corpus-public", dest="corpus_public", action="store_true",
                   help="--corpus is a public corpus (as for 'dptopic report --reference-public'; also spelt"
                        " --corpus-public): a private model's figures on it are then not labelled outside the"
                        " guarantee")
    e.add_argument("--json", action="store_true", help="print the figures as JSON")
    e.add_argument("--seed", type=seed_int, default=0,  # seed-not-private
                   help="seed of the fold-in sampling (default 0, as the Python API, so that the same model and file"
                        " give the same figures; it adds no privacy noise)")
    e.add_argument("--compare-to", metavar="MODEL", default=None,
                   help="also print how close the topics are to another saved model's (for instance one trained"
                        " without privacy, or on public documents of the domain): NPMI alone cannot tell a corpus's"
                        " own topics from general-language ones")
    e.set_defaults(func=cmd_evaluate)

    tp = sub.add_parser("topics", help="show a saved model's topics and privacy report")
    add_model_arg(tp)
    tp.add_argument("-n", "--top-n", "--top", dest="n", type=positive_int, default=10,
                    help="words per topic (default 10; -n, --top-n and --top are one flag, as in evaluate and report)")
    tp.add_argument("--format", choices=("table", "json", "csv"), default="table",
                    help="table (with the privacy report; the default), json (topics, weights and the privacy card) or csv")
    tp.add_argument("--show-unsupported", action="store_true",
                    help="document-level private models: also show the words of the topics that do not stand above"
                         " the noise of the release (hidden by default: they are mostly noise)")
    tp.set_defaults(func=cmd_topics)
