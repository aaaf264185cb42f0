"""Which ``dptopic train`` option each trainer reads, read from the trainer registry.

A trainer reads the option that sets one of its parameters (``Trainer.parameters()``, as cli/_trainer_facts.py holds
them; each set by :func:`~dptopic.cli._trainers.trainer_flag`), the options of its own that set none
(``cli._trainers.OWN_OPTIONS``),
and the options of what it trains on and where it runs (:data:`_READS`, by registry facts: ``reads``, ``dask``, the
keywords of ``fit``). An option no trainer's parameter or rule names (``--out``, ``--topics`` ...) every trainer
reads. Given to a trainer that does not read it, an option is
refused (it would be silently ignored: ``--algorithm lda --epsilon-inherent 10`` training a non-private model), and
``dptopic train --algorithm X --help`` lists only X's options: both read :func:`flag_applies`.

A flag's default is the one ``train``'s parser gives it (:func:`_train_options`), the one place it is written.
"""
from __future__ import annotations

import argparse
from functools import lru_cache

from ..models.registry import TRAINERS, for_unit_trainer
from ._flags import CORPUS_FLAGS
from ._train_parser import add_train_arguments
from ._trainer_facts import FACTS
from ._trainers import own_options, trainer_flag

_CLI = tuple(t for t in TRAINERS.values() if t.cli)          # the choices of --algorithm
_DOC = tuple(t.name for t in _CLI if {"document", "user"} <= set(t.units))     # --unit user takes them
_CORPUS_ALGOS = tuple(t.name for t in _CLI if t.reads == "corpus")
_STREAMS_SHARDS = tuple(t.name for t in _CLI if t.streams_shards)   # they read a 'corpus prepare --shards' folder


def _facts(t) -> dict:
    """What the command line reads of trainer ``t``'s class (its parameters, ``fit``'s keywords ...), from the table
    written from the classes (cli/_trainer_facts.py): the help lists every trainer's options without importing one."""
    return FACTS[t.name]


def _reads_corpus(t) -> bool:
    return t.reads == "corpus"


# train options that set no parameter of a trainer, and the registry fact that says which trainers read them
_READS = {
    **{dest: _reads_corpus for dest in ("corpus", "max_vocab", "min_df", "max_df", "label_field", "stop_words",
                                        "lowercase", "test_size", "private_vocabulary", "vocabulary_policy",
                                        "vocabulary_in_total")},
    # a trainer with a public prior corpus (olp: --prior) reads it with them
    **{dest: (lambda t: t.reads == "corpus" or "prior_corpus" in _facts(t)["parameters"]) for dest in ("text_field",
                                                                                                      "format",
                                                                                              "vocab")},
    # lp/olp/ldp-doc train on randomized reports (--reports), never on a corpus
    "reports": lambda t: t.reads == "reports", "reports_per_contributor": lambda t: t.reads == "reports",
    # a Dask cluster: the Gibbs trainers' shard actors, or the document-level trainers' per-shard sums
    "scheduler": lambda t: t.dask, "dask_local": lambda t: t.dask,
    # the person of each document (fit's user_ids=), and a public corpus (fit's public_corpus=)
    "user_field": lambda t: "user_ids" in _facts(t)["fit_parameters"],
    "public_corpus": lambda t: "public_corpus" in _facts(t)["fit_parameters"],
    "public_text_field": lambda t: "public_corpus" in _facts(t)["fit_parameters"],
    # the trainers that decide which topics stand above the noise (supported_topics_)
    "show_unsupported": lambda t: _facts(t)["marks_supported_topics"],
    # the dataset ledger records the releases of the trainers whose fit spends a budget (docs/budget.md)
    **{dest: (lambda t: _facts(t)["spends_budget"]) for dest in ("ledger", "no_ledger", "dataset", "person_aliases")},
}


def _dest(flag: str) -> str:
    return flag[2:].replace("-", "_")


@lru_cache(maxsize=None)
def _parameter_dests(name: str) -> dict:
    """``{dest: parameter}``: the train options that set a parameter of the trainer ``name``."""
    return {_dest(trainer_flag(name, p)): p for p in FACTS[name]["parameters"] if trainer_flag(name, p) is not None}


@lru_cache(maxsize=None)
def _train_options() -> dict:
    """``{dest: default}`` of every option of ``dptopic train``, from its parser (where each default is written)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_train_arguments(parser)
    return {act.dest: act.default for act in parser._actions if act.option_strings}


def _reads(t, dest: str) -> bool:
    rule = _READS.get(dest)
    return dest in _parameter_dests(t.name) or dest in own_options(t.name) or (rule is not None and rule(t))


def _specific(dest: str) -> bool:
    """Whether a rule or a trainer's parameter names ``dest`` (any other option every trainer reads)."""
    return dest in _READS or any(dest in _parameter_dests(t.name) or dest in own_options(t.name) for t in _CLI)


@lru_cache(maxsize=None)
def algorithm_only() -> dict:
    """``{dest: (its default, the trainers that read it)}``: the options only some trainers read (built from the
    registry when first read: reading a trainer's parameters imports its class, and the command line's start-up
    imports none)."""
    names = tuple(t.name for t in _CLI)
    table = {}
    for dest, default in _train_options().items():
        if not _specific(dest):
            continue
        algos = tuple(t.name for t in _CLI if _reads(t, dest))
        if algos != names:
            table[dest] = (default, algos)
    return table


@lru_cache(maxsize=None)
def algorithm_flags() -> dict:
    """``{trainer: {parameter: flag}}``: the parameters each trainer's errors name, and the train flags that set them
    (cli._flags); its parameters, and the keywords of fit that an option of _READS sets (public_corpus)."""
    options = _train_options()
    table = {}
    for t in _CLI:
        dests = {**{_dest(trainer_flag(t.name, p)): p for p in _facts(t)["fit_parameters"]
                    if _dest(trainer_flag(t.name, p)) in _READS},
                 **_parameter_dests(t.name)}
        table[t.name] = {p: "--" + dest.replace("_", "-") for dest, p in dests.items()
                         if dest in options and flag_applies(dest, t.name)}
    return table


@lru_cache(maxsize=None)
def common_flags() -> dict:
    """The parameters of every run: the default trainer's (the registry's first, lda: --topics, --iterations,
    --alpha ...), and those of the training run itself (reading the corpus, the held-out split, the private
    vocabulary)."""
    return {**algorithm_flags()[_CLI[0].name], "test_size": "--test-size",
            "private_vocabulary": "--private-vocabulary", **CORPUS_FLAGS}




_RETIRED = ("budget",)      # refused whatever the trainer (a script that gives it is told what to give instead)
# flags of the --unit's trainer that --unit refuses, and why: --unit word promises a word-level guarantee for the
# whole run's --epsilon (--epsilon-laplace is refused earlier, in _resolve_unit, in its own words)
_UNIT_REFUSES = {
    "word": {"epsilon_laplace": "eps_L per iteration is solved from --epsilon",
             "paper_literal": "Algorithm 1 exactly as written has no guarantee",
             "no_noise": "clipping alone, without noise, has no guarantee",
             "clip": "eps_L is solved from --epsilon for --epsilon-inherent, which sets the inherent part instead"},
    "document": {}, "user": {}}


# flags of the --unit's trainer refused under that unit by their own checks (_user_level_args, _train): left out of
# 'train --unit UNIT --help' as _UNIT_REFUSES are
_UNIT_REFUSES_ELSEWHERE = {"user": ("private_vocabulary", "vocabulary_policy", "vocabulary_in_total", "scheduler",
                                    "dask_local"),
                           "document": ("user_field", "documents_per_user", "person_statistic"),
                           "word": ("user_field", "documents_per_user", "person_statistic")}


def flag_applies(dest: str, algorithm: str) -> bool:
    """Whether ``train --algorithm ALGORITHM`` reads the option ``dest`` (:func:`algorithm_only`; any other, every
    trainer reads)."""
    entry = algorithm_only().get(dest)
    return entry is None or algorithm in entry[1]


def flag_shown(dest: str, algorithm: str | None = None, unit: str | None = None) -> bool:
    """Whether ``dptopic train [--algorithm ALGORITHM | --unit UNIT] --help`` lists the option ``dest``: those the
    trainer reads (train refuses the others); with neither, those every trainer reads, every trainer of a corpus
    reads, or both --unit trainers read."""
    if dest in _RETIRED:
        return False
    if unit is not None:
        trainer = algorithm if unit == "user" and algorithm in _DOC else for_unit_trainer(unit).name
        return (dest != "algorithm" or unit == "user") \
            and dest not in _UNIT_REFUSES[unit] and dest not in _UNIT_REFUSES_ELSEWHERE[unit] \
            and flag_applies(dest, trainer)
    if algorithm is not None:       # the person's flags need --unit user (its help lists them)
        return dest != "unit" and dest not in _UNIT_REFUSES_ELSEWHERE["document"] and flag_applies(dest, algorithm)
    algos = set(algorithm_only()[dest][1]) if dest in algorithm_only() else None
    unit_trainers = {for_unit_trainer(u).name for u in _UNIT_REFUSES}
    return algos is None or set(_CORPUS_ALGOS) <= algos or unit_trainers <= algos


# switches that set a trainer's parameter (given by the flag of the same name) to None: --no-noise, HDP-LDA's
# clipping alone (epsilon_laplace=None); --no-clip, DP-SVI unclipped (clip=None)
SWITCHES_TO_NONE = {"no_noise": "epsilon_laplace", "no_clip": "clip"}


def parameter_flags(algorithm: str) -> dict:
    """``{dest: parameter}``: the options of ``dptopic train`` that set a parameter of ``algorithm``'s trainer (its
    ``__init__``'s, or its budget constructor's: ``--user-budget`` sets FedLDA's ``user_epsilon``)."""
    options = _train_options()
    return {dest: p for dest, p in _parameter_dests(algorithm).items() if dest in options
            and flag_applies(dest, algorithm)}
