"""``train``: parse the flags, map them to :func:`dptopic.train`'s parameters, call it and print what it returns
(``demo``, ``evaluate`` and ``topics`` register from here: cli/demo.py, cli/topics.py)."""
from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from ..accounting import plan
from ..accounting.budget import hdp_iterations_within, smallest_hdp_budget
from ..accounting.units import UNIT_EPSILON_MAX, WORD_ITERATIONS
from ..backends import training_source
from ..corpus.corpus import tokenising_progress
from ..datasets import BUILT_IN, check_user_corpus, corpus_format, read_public_corpus
from ..errors import DPTopicError
from ..mechanisms import laplace
from ..models.registry import TRAINERS, train_refusal_error
from ..reporting.terminal import make_console
from ..training import build_model, train
from ..training.by_unit import trainer_for_unit
from ._cluster import cluster_from_args, refuse_corpus_flags_for_shards, shard_dir
from ._common import NO_VOCAB_CAP, refuse_data_cuts, user_args
from ._flags import FORMAT_FLAG, FROM_CLIP, flag_errors
from ._run_common import check_out, corpus_from_args, load_corpus, read_vocabulary, say_reading
from ._train_flags import (
    _CORPUS_ALGOS,
    _DOC,
    _RETIRED,
    _STREAMS_SHARDS,
    _UNIT_REFUSES,
    SWITCHES_TO_NONE,
    algorithm_flags,
    algorithm_only,
    common_flags,
    flag_applies,
    flag_shown,
    parameter_flags,
)
from ._train_parser import DEFAULT_EPSILON_INHERENT
from ._trainers import trainer_flag
from ._training_output import print_training_result, print_training_step
from .budget import training_ledger
from .fed import refuse_fed_flags
from .parsers.train import unit_algorithm_refusal
from .topics import privacy_card_line
from .train_reports import train_local

__all__ = ["cmd_train", "flag_applies", "flag_shown", "unit_algorithm_refusal", "train_flag_names",
           "privacy_card_line", "_RETIRED"]     # the last two: their old import path


def _refuse_foreign_flags(a) -> None:
    given = getattr(a, "_given", None)      # the flags written on the command line (cli.main's parser)
    trainer = TRAINERS[a.algorithm]
    if trainer.epsilon is None and trainer.components and a.epsilon is not None:     # cdp, cdp+
        raise DPTopicError(f"--algorithm {a.algorithm} is a baseline with no guarantee: give the paper's figure per"
                           f" release as {trainer_flag(trainer.name, trainer.components[0])}, not --epsilon (which"
                           " names a guarantee).")

    def written(dest, default):
        return dest in given if given is not None else getattr(a, dest, default) != default

    for dest, (default, algos) in algorithm_only().items():
        if not flag_applies(dest, a.algorithm) and written(dest, default):
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
    if getattr(a, "corpus", None) is not None and a.algorithm in _CORPUS_ALGOS and shard_dir(a.corpus) is not None:
        if a.algorithm not in _STREAMS_SHARDS:
            raise DPTopicError(f"--algorithm {a.algorithm} cannot train from a shard folder (only"
                               f" {'/'.join(_STREAMS_SHARDS)} read one shard at a time): give it the corpus file the"
                               " shards were prepared from.")
        refuse_corpus_flags_for_shards(a)
    if written("parallel", None) and (getattr(a, "scheduler", None) is not None
                                      or getattr(a, "dask_local", None) is not None):
        raise DPTopicError("--parallel has no effect on a Dask cluster (--scheduler/--dask-local): the Dask backend"
                           " always runs AD-LDA, one actor per shard (docs/scaling.md); drop --parallel.")
    for dest, why in _UNIT_REFUSES.get(a.unit, {}).items():
        if written(dest, algorithm_only()[dest][0]):
            raise DPTopicError(f"--{dest.replace('_', '-')} does not apply to --unit {a.unit} ({why}): drop it, or drop"
                               f" --unit and use --algorithm {a.algorithm}.")
    for switch, dest in SWITCHES_TO_NONE.items():      # --no-noise with --epsilon-laplace, --no-clip with --clip
        if flag_applies(switch, a.algorithm) and getattr(a, switch) and getattr(a, dest) is not None:
            raise DPTopicError(f"--{switch.replace('_', '-')} sets no --{dest.replace('_', '-')}: drop one of them.")
    for dest, default in (("replacement", "mixture"), ("variant", "another"), ("failure_rate", 0.1)):
        if a.exclusion == "none" and written(dest, default):    # FedLDA's floor and tail rules' RRP parameters
            raise DPTopicError(f"--{dest.replace('_', '-')} applies to --exclusion floor/tail only: the 'none' rule"
                               " (the default) randomizes each entry by subset selection and ignores it; drop it or"
                               " choose --exclusion floor or tail.")
    if "epsilon_inherent" in trainer.parameters():      # hdp: eps_I and the clip bound C determine each other
        if a.clip is not None and a.epsilon_inherent is not None:
            raise DPTopicError("give --clip (the clip bound C; eps_I follows from it) or --epsilon-inherent (eps_I per"
                               " iteration; C follows from it), not both.")
        if a.epsilon is not None and (a.clip is not None or a.no_noise):
            given = "/".join(f for f, v in (("--clip", a.clip is not None), ("--no-noise", a.no_noise)) if v)
            raise DPTopicError(f"--epsilon (the whole run's total per word) solves eps_L for a given"
                               f" --epsilon-inherent: drop {given}.")


def _refuse_person_flags_without_unit(a) -> None:
    """``--user-field``/``--documents-per-user``/``--person-statistic`` without ``--unit user``: refused first (before a
    flag of the default trainer is), with the whole fix that this command line needs, so that the line suggested is
    one train takes."""
    field, per_user = getattr(a, "user_field", None), getattr(a, "documents_per_user", None)
    profile = getattr(a, "person_statistic", None)
    if a.unit == "user" or (field is None and per_user is None and profile is None):
        return
    given = "/".join(f for f, v in (("--user-field", field), ("--documents-per-user", per_user),
                                    ("--person-statistic", profile)) if v is not None)
    if a.unit is not None:
        raise DPTopicError(f"{given} is for a guarantee per person, and --unit {a.unit} protects one {a.unit}: give"
                           f" --unit user instead, or drop {given}.")
    if a.corpus in BUILT_IN:
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


def _refuse_user_level_flags(a) -> None:
    """``--unit user``: the flags that do not fit it, refused in one line before any corpus is read (a corpus without
    people, :func:`dptopic.datasets.check_user_corpus`; a vocabulary chosen per document; a Dask cluster); a field
    named without the unit is refused first, ``_refuse_person_flags_without_unit``."""
    if a.unit != "user":
        return

    with flag_errors({"unit": "--unit", "user_field": "--user-field", **FORMAT_FLAG}):
        if a.corpus in BUILT_IN:        # what --corpus names is refused first
            check_user_corpus(a.corpus)
        if a.private_vocabulary is not None:
            raise DPTopicError("--private-vocabulary chooses the words by DP set union per document, not per person:"
                               " with --unit user give a public word list (--vocabulary FILE) instead.")
        check_user_corpus(a.corpus, a.format, a.user_field)
    if a.scheduler is not None or a.dask_local is not None:
        raise DPTopicError(f"--{'scheduler' if a.scheduler is not None else 'dask-local'} has no effect with"
                           " --unit user, which groups each person's documents in memory on this machine: drop it.")


def _corpus_format(a) -> str:
    """The format ``--corpus`` is read in (``--format``, or guessed from the path as ``load_corpus`` does)."""
    with flag_errors(FORMAT_FLAG):
        return corpus_format(a.corpus, a.format)


def _resolve_seed(a):
    """The training seed: fresh OS entropy (None) unless ``--seed`` is given (for a private algorithm:
    tests and reproduction only, and the report then warns); ``--secure`` refuses a seed."""
    if getattr(a, "secure", False):
        if a.seed is not None:
            raise DPTopicError("--secure draws noise from the operating system's CSPRNG and refuses a seed: remove --seed.")
        return None
    return a.seed


def _training_corpus(a):
    """``(corpus, public vocabulary or None)``: the corpus file read as the flags say.

    ``--vocabulary``: over that public word list, no word chosen from the data. ``--private-vocabulary``: every word
    kept (DP set union, in :func:`dptopic.train`, chooses them inside its own budget). Otherwise the vocabulary comes
    from the data (``--max-vocab``/``--min-df``) and is treated as public."""
    if a.vocabulary is not None and a.private_vocabulary is not None:
        raise DPTopicError("give --vocabulary (a public word list) or --private-vocabulary (chosen with DP), not both.")
    if a.vocabulary is not None:
        refuse_data_cuts(a, "--vocabulary gives the words")
    elif a.private_vocabulary is not None:
        refuse_data_cuts(a, "--private-vocabulary chooses the words by DP set union")
    elif getattr(a, "vocabulary_policy", None) is not None:
        raise DPTopicError("--vocabulary-policy applies to --private-vocabulary EPS_V,DELTA_V: add it or drop the"
                           " policy.")
    # stop words (a fixed list, not read from the data) and lower-casing apply to the text whatever chose the words
    text_kw = dict(stop_words=getattr(a, "stop_words", None), lowercase=getattr(a, "lowercase", None),
                   keep_urls=getattr(a, "keep_urls", None))
    with tokenising_progress():      # a progress bar while a large text input is tokenised
        if a.vocabulary is not None:
            vocab = read_vocabulary(a.vocabulary)
            return load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, vocabulary=vocab, **text_kw,
                               **user_args(a)), vocab
        if a.private_vocabulary is None:
            return corpus_from_args(a), None
        # no data-dependent cut (it would leak): DP set union alone decides which words are kept
        return load_corpus(a.corpus, a.format, a.vocab, a.text_field, a.label_field, max_vocab=NO_VOCAB_CAP, min_df=1,
                           **text_kw), None


def _parameters(a) -> dict:
    """``dptopic.train``'s keywords for this command line: each flag the trainer reads and the user gave, as the
    parameter it sets (``Trainer.flag``; the flags are checked to apply first, ``_refuse_foreign_flags``). A flag not
    given leaves the default ``dptopic.train`` uses (the trainer's own; with ``unit``, :func:`dptopic.for_unit`'s):
    the two front doors build the same model."""
    algo = a.algorithm
    p = {param: getattr(a, dest) for dest, param in parameter_flags(algo).items() if getattr(a, dest) is not None}
    p.update({param: None for switch, param in SWITCHES_TO_NONE.items() if flag_applies(switch, algo)
              and getattr(a, switch)})     # --no-noise, --no-clip
    if p.get("background_share") == "off":      # docdp-cooc: no background topics
        p["background_share"] = None
    if "sigma2" in p and a.omega is None:       # olp: the prior weight from its variance (Theorem 6)
        p["omega"] = None
    if a.topics is not None:
        p["n_topics"] = a.topics
    p["verbose"] = 0 if a.quiet else 1
    if flag_applies("seed", algo):
        p["seed"] = _resolve_seed(a)
    if flag_applies("iterations", algo) and a.iterations is not None:
        p["n_iter"] = a.iterations
    return p


# ---------------------------------------------------------------- commands
def _resolve_unit(a) -> tuple:
    """``(algorithm, note)``: ``--unit`` picks the algorithm (and makes --epsilon the whole run's budget); else
    ``--algorithm`` (lda). The note says what --unit chose (None without --unit)."""
    if a.unit is None:
        return a.algorithm or "lda", None
    refusal = unit_algorithm_refusal(a.unit, a.algorithm)
    if refusal is not None:
        raise DPTopicError(refusal)
    if a.epsilon is None:
        raise DPTopicError(f"--unit {a.unit} needs --epsilon, the privacy budget of the whole run (and --delta).")

    # one rule with dptopic.for_unit and dptopic recommend: what the unit's trainer cannot spend or reach is refused
    # (an epsilon too small to reach: refused once the trainer's own settings are known, _check_document_budget,
    # through the same unreachable_epsilon, accounting/units.py)
    refusal = train_refusal_error(a.unit, a.epsilon, a.topics, a.delta, reach=False,
                                  **({"n_iter": a.iterations, "epsilon_inherent": a.epsilon_inherent}
                                     if a.unit == "word" else {}))
    if refusal is not None:
        with flag_errors({"epsilon": "--epsilon", "n_topics": "--topics", "n_iter": "--iterations",
                          "delta": "--delta"}):
            raise refusal
    trainer = trainer_for_unit(a.unit, a.epsilon, unit_name="--unit", epsilon_name="--epsilon")
    algorithm = a.algorithm or trainer      # --unit user may name its trainer (docdp-cooc or docdp)
    if a.unit == "word":  # --epsilon is the whole run's total per word; eps_L is solved from it
        # the iterations the utility table measured (dptopic recommend --unit word)
        _refuse_word_budget_below_floor(a, a.iterations or WORD_ITERATIONS)
    return algorithm, (f"[bold]--unit {a.unit}[/]: training {algorithm} (the best {a.unit}-level trainer measured on"
                       " public corpora; docs/choosing_a_guarantee.md)" if a.unit != "user" else
                       f"[bold]--unit user[/]: training {algorithm} with each person's documents bounded as a whole"
                       " (docs/privacy_units.md)")


def _refuse_word_budget_below_floor(a, n_iter: int) -> None:
    """``--unit word``: a whole-run ``--epsilon`` that HDP-LDA's sampling alone overspends is refused in the flags of
    the command typed (the library's sentence names eps_I, the iterations and delta, which the user may never have
    given): what the budget buys, and what to give instead."""
    given = getattr(a, "_given", None) or frozenset()
    eps_i = a.epsilon_inherent if a.epsilon_inherent is not None else DEFAULT_EPSILON_INHERENT
    n_iter, delta, budget = int(n_iter), float(a.delta), float(a.epsilon)
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


def train_flag_names(a) -> dict:
    """The names for :func:`~dptopic.cli._flags.flag_errors`: the library's parameter names as the flags of this
    ``train`` run (``--algorithm``/``--unit`` already resolved)."""
    trainer = TRAINERS[a.algorithm]
    names = {**common_flags(), **algorithm_flags().get(a.algorithm, {}), "vocabulary": "--vocabulary"}
    if trainer.epsilon is None and trainer.components:     # a baseline's paper figure (cdp), not a guarantee
        names["epsilon"] = trainer_flag(trainer.name, trainer.components[0])
    if "epsilon_inherent" in names and a.clip is not None:      # HDP-LDA's eps_I follows from --clip
        names.update(FROM_CLIP)
    if trainer.reads == "reports":     # each contributor's reports are the ledger's count of releases
        names["count"] = "--reports-per-contributor"
    if getattr(a, "user_budget", None) is not None:
        names["epsilon"] = "--user-budget"      # FedLDA.from_user_budget: the per-user total is the budget
    return names


def cmd_train(a):
    console = make_console()
    if getattr(a, "budget", None) is not None:
        raise DPTopicError("--budget is gone: give the whole run's epsilon per word as --epsilon (hdp: eps_L per"
                           " iteration is --epsilon-laplace).")
    _refuse_person_flags_without_unit(a)
    algorithm, unit_note = _resolve_unit(a)
    # the flags as read, with the algorithm --unit chose (a new namespace: the parsed flags stay as given)
    r = argparse.Namespace(**{**vars(a), "algorithm": algorithm})

    with flag_errors(train_flag_names(r)), training_ledger(r):    # the dataset's ledger (docs/budget.md)
        _train(r, console, unit_note)


def _train(a, console, unit_note=None):
    """Check the flags, map them to ``dptopic.train``'s parameters, call it and print what it returns."""
    _refuse_foreign_flags(a)
    if getattr(a, "secure", False) is True:   # once the flags are known to apply, before any corpus is read

        _resolve_seed(a)        # --secure with --seed: that refusal first
        laplace.require_opendp()
    if unit_note:   # printed once every flag is known to apply (rich markup: fixed words only)
        console.print(unit_note, markup=True)
    check_out(a)
    if a.algorithm not in _CORPUS_ALGOS:       # lp, olp, ldp-doc: randomized reports
        return train_local(a, console, _parameters(a))
    shards = shard_dir(a.corpus) if a.corpus is not None else None
    if a.public_corpus is not None and shards is not None:
        raise DPTopicError("--public-corpus is not read with a shard folder yet: give the corpus file the shards were"
                           " prepared from as --corpus.")
    if a.public_text_field is not None and a.public_corpus is None:
        raise DPTopicError("--public-text-field names the text field of --public-corpus: add --public-corpus FILE, or"
                           " drop --public-text-field.")
    _refuse_user_level_flags(a)         # the person's flags fit the unit, before any corpus is read

    if flag_applies("user_budget", a.algorithm):        # fed: its budget per entry, per user or a per-user total
        refuse_fed_flags(a)
    if flag_applies("noise_multiplier", a.algorithm) and (a.epsilon is None) == (a.noise_multiplier is None):  # svi
        raise DPTopicError(f"{a.algorithm} needs exactly one of --epsilon (sigma is calibrated) or --noise-multiplier"
                           " (epsilon is reported).")
    params = _parameters(a)
    epsilon, delta = params.pop("epsilon", None), params.pop("delta", None)
    model = build_model(a.algorithm, unit=a.unit, epsilon=epsilon, delta=delta, **params)  # bad parameters first
    if a.algorithm in _DOC:

        plan.refuse_unreachable(model)    # a budget no noise reaches: refused before the corpus is read

    with flag_errors({"public_corpus": "--public-corpus", "public_text_field": "--public-text-field",
                      "corpus": "--corpus"}):
        public = None if a.public_corpus is None else read_public_corpus(      # before the first release
            a.public_corpus, private=a.corpus, text_field=a.text_field, public_text_field=a.public_text_field,
            lowercase=a.lowercase)
    if shards is not None:

        source, vocab = training_source(shards), None      # a bad shard folder is refused before a cluster starts
    else:
        source, vocab = _training_corpus(a)
        if a.unit == "user" and source.user_ids is None:     # a prepared corpus saved without them
            raise DPTopicError(f"--unit user needs each document's person, and {a.corpus!r} carries none: give the"
                               " JSONL/CSV file it was prepared from with --user-field FIELD, or a folder of folders"
                               " (one per person).")
    names = {"corpus": f"--corpus {a.corpus!r}", "public_corpus": f"--public-corpus {a.public_corpus!r}",
             "private_vocabulary": "--private-vocabulary", "vocabulary": "--vocabulary", "n_topics": "--topics",
             "pad_length": "--pad-length", "out": "--out", "test_size": "--test-size",
             "vocabulary_in_total": "--vocabulary-in-total", "epsilon": "--epsilon", "delta": "--delta"}
    if a.unit is None and not getattr(a, "vocabulary_in_total", False):    # the model holds its budget
        epsilon = delta = None
    with cluster_from_args(a) as (backend, client):     # --scheduler/--dask-local: the Gibbs and document-level ones
        result = train(
            source, model=model, unit=a.unit, epsilon=epsilon, delta=delta, test_size=a.test_size, out=a.out,
            overwrite=a.overwrite, save_metrics=a.save_metrics,
            vocabulary=None if vocab is None else (a.vocabulary, vocab), private_vocabulary=a.private_vocabulary,
            vocabulary_policy=getattr(a, "vocabulary_policy", None), public_corpus=public, seed=params["seed"],
            backend=backend, client=client, names=names, user_epsilon=getattr(a, "user_budget", None),
            vocabulary_in_total=getattr(a, "vocabulary_in_total", False),
            callback=lambda step, res: _say_step(step, res, a, console))
    print_training_result(result, console, save_metrics=a.save_metrics,
                          show_unsupported=getattr(a, "show_unsupported", False), seed=params["seed"],
                          n_jobs=getattr(a, "jobs", None) or 1)


def _say_step(step: str, result, a, console) -> None:
    if step == "checked":
        say_reading(a)          # before the first step that spends or trains, once the input is known good
    elif step == "fit" and getattr(result.model, "public_vectors_", None):
        v = result.model.public_vectors_
        how = ("used by default; --public-vectors none turns them off" if v.get("default") else
               "given with --public-vectors")

        console.print(f"[bold]public vectors[/]: {escape(result.model.public_vectors_note_)}, read in the clear (the"
                      f" guarantee does not depend on them), {how}", markup=True, highlight=False)
    else:
        print_training_step(step, result, console, private_vocabulary=a.private_vocabulary,
                            vocabulary_policy=getattr(a, "vocabulary_policy", None), save_metrics=a.save_metrics)


