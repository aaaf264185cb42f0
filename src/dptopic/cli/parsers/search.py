"""``search``'s parser (run by cli/search.py)."""
from __future__ import annotations

import argparse
import math

from ...models.registry import SEARCHABLE
from .._common import (
    _float_arg,
    add_corpus_args,
    add_out_args,
    positive_float,
    unit_interval,
)
from .._train_parser import add_train_arguments
from .budget import add_ledger_flags

TRAIN_OPTIONS = ("unit", "user_field", "documents_per_user", "person_statistic", "vocabulary", "private_vocabulary",
                 "vocabulary_policy", "public_vectors", "vectors_route")
"""The options of ``train`` that ``search`` takes as they are (their definitions copied from train's parser): the
privacy unit and its people, and every choice of the vocabulary (a public list, a private one, public vectors)."""


def _grid_entry(text: str) -> tuple:
    name, sep, values = str(text).partition("=")
    items = [v.strip() for v in values.split(",")]
    if not sep or not name.strip("- ") or not all(items):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=V1,V2,...: give a train option and its candidate"
                                         " values, e.g. --grid topics=10,20,40")
    return name.strip("- "), items


def add_train_options(p) -> None:
    """:data:`TRAIN_OPTIONS` added to ``p`` as ``train``'s parser defines them (each an option that stores one value:
    its flags, type, choices, default, metavar and help; search's help of ``--unit`` is its own)."""
    parser = argparse.ArgumentParser(add_help=False)
    add_train_arguments(parser)
    for act in parser._actions:
        if act.dest in TRAIN_OPTIONS:
            p.add_argument(*act.option_strings, dest=act.dest, type=act.type, choices=act.choices,
                           default=act.default, metavar=act.metavar,
                           help=UNIT_HELP if act.dest == "unit" else act.help)


def register(sub) -> None:
    p = sub.add_parser("search", help="private hyper-parameter search: a secret random number of runs, the best one"
                                      " released", description=(
        "A private hyper-parameter search with a random number of runs K (Papernot & Steinke 2022): each run trains a"
        " candidate drawn at random from --grid; only the best run (by its supported topics, read from its release)"
        " is released, saved and charged, as one release, on the dataset's ledger (per person with --unit user)."
        " K is drawn from the operating system's entropy and never printed or saved: the guarantee needs it secret."
        " The search costs about what 3 to 5 single fits do (docs/budget.md). Ctrl-C stops it: nothing is released"
        " then, and the release recorded before the runs stays spent."))
    add_corpus_args(p, required=True)
    p.add_argument("--algorithm", choices=SEARCHABLE, default=None,
                   help="each run's trainer (default docdp-cooc, or the one --unit picks)")
    add_train_options(p)        # --unit, --user-field, --vocabulary ... as train defines them
    p.add_argument("--epsilon", type=positive_float, required=True, help="each run's budget; the card states the"
                                                                          " search's total")
    p.add_argument("--delta", type=unit_interval, default=1e-5, help="each run's delta and the search's (default 1e-5)")
    p.add_argument("--grid", type=_grid_entry, action="append", required=True, metavar="NAME=V1,V2,...",
                   help="a train option of the trainer and its candidate values, e.g. topics=10,20,40 (repeat it:"
                        " every combination is a candidate)")
    p.add_argument("--expected-runs", type=_float_arg(math.isfinite, "must be a finite number"), default=10.0,
                   metavar="N", help="the mean of the geometric number of runs, more than 1 and at most 1e6 (default"
                                     " 10: more runs find better, cost more)")
    add_ledger_flags(p)
    add_out_args(p, "runs/search")
    p.set_defaults(run="search:cmd_search")


UNIT_HELP = ("each run's privacy unit, as train takes it: document, or user (one person's documents: --user-field, or a"
             " folder of folders, one per person; the search is then charged per person); the unit's trainer runs"
             " (docdp-cooc; --algorithm docdp may be named). word has no trainer a search scores; see"
             " docs/privacy_units.md")
