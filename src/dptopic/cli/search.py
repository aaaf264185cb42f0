"""``search``: a private hyper-parameter search with a random number of runs (Papernot & Steinke 2022), the best run
alone released and saved (``dptopic.models.private_search.RandomStoppingSearch``; docs/budget.md).

The command parses its flags into the search's candidates (``--grid topics=10,20``: each name a ``train`` option of
the trainer, read as ``train`` reads it), builds the trainer, reads the corpus and calls the library; it prints the
best model's topics and card (whose headline is the search's guarantee) and saves the best model."""
from __future__ import annotations

import argparse

from ..errors import DPTopicError
from ..models.registry import COMMON_FLAGS, TRAINERS
from ._common import (add_corpus_args, add_out_args, check_out, corpus_from_args, make_console, positive_float,
                      unit_interval)
from ._flags import flag_errors
from .budget import add_ledger_flags, training_ledger

SEARCHABLE = ("docdp-cooc", "docdp", "svi")
"""The trainers ``dptopic search`` runs: private, trained on a corpus, and scored by their supported topics (the
default score, read from the release alone)."""

NOT_SEARCHED = ("epsilon", "delta", "seed", "secure", "ledger", "dataset", "verbose")
"""Parameters a grid may not vary: the budget is one (``--epsilon``), the seed is refused, the rest are not
hyper-parameters."""


def _grid_entry(text: str) -> tuple:
    name, sep, values = str(text).partition("=")
    name = name.strip().lstrip("-")
    items = [v.strip() for v in values.split(",")]
    if not sep or not name or not values.strip() or any(not v for v in items):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=V1,V2,...: give a train option's name and its"
                                         " candidate values, e.g. --grid topics=10,20,40")
    return name, items


def _grid(a) -> tuple[dict, dict]:
    """``(param_grid, names)``: each ``--grid`` entry as the trainer's parameter and its values, parsed as ``train``
    parses that option; ``names`` maps each parameter to its flag (for the library's errors)."""
    from ._train_flags import parameter_flags, _train_options  # the train parser's options: loaded when used
    from ._train_parser import add_train_arguments  # the train parser's value types: loaded when used

    parser = argparse.ArgumentParser(add_help=False)
    add_train_arguments(parser)
    actions = {act.dest: act for act in parser._actions if act.option_strings}
    params = dict(parameter_flags(a.algorithm))
    params.update({flag[2:].replace("-", "_"): p for p, flag in COMMON_FLAGS.items()
                   if p in TRAINERS[a.algorithm].parameters() and flag[2:].replace("-", "_") in _train_options()})
    grid, names = {}, {}
    for name, values in a.grid:
        dest = name.replace("-", "_")
        param = params.get(dest)
        if param is None or param in NOT_SEARCHED:
            options = ", ".join(sorted(d.replace("_", "-") for d, p in params.items() if p not in NOT_SEARCHED))
            why = ("is one budget for every run: give it as --epsilon/--delta" if param in ("epsilon", "delta") else
                   "is not an option of this trainer" if param is None else "is not a hyper-parameter to search")
            raise DPTopicError(f"--grid {name}={','.join(values)}: --{name} {why} (--algorithm {a.algorithm}); give"
                               f" one of {options}.")
        if param in grid:
            raise DPTopicError(f"--grid names --{name} twice: give its values once, --grid {name}=V1,V2,...")
        act = actions[dest]
        parsed = []
        for v in values:
            try:
                parsed.append(act.type(v) if act.type is not None else v)
            except (argparse.ArgumentTypeError, ValueError, TypeError) as e:
                raise DPTopicError(f"--grid {name}={','.join(values)}: --{name} {v!r}: {e}") from None
        grid[param], names[param] = parsed, f"--{name} (in --grid)"
    return grid, names


def cmd_search(a):
    from ..models.private_search import RandomStoppingSearch  # loads numba/numpy: not at the CLI's start-up
    from ..reporting.terminal import print_privacy, print_topics  # rich: loaded only to print
    from ..training import build_model  # the library's trainers: not at the CLI's start-up

    if a.no_ledger and a.ledger is not None:
        raise DPTopicError("--no-ledger records the search on no ledger, and --ledger names one: give one of them.")
    grid, names = _grid(a)
    check_out(a)
    names.update({"epsilon": "--epsilon", "delta": "--delta", "gamma": "--expected-runs", "n_topics": "--topics"})
    with flag_errors(names), training_ledger(a):
        model = build_model(a.algorithm, epsilon=a.epsilon, delta=a.delta, verbose=0)
        model.set_params(**{p: v[0] for p, v in grid.items()})
        model.validate_parameters()             # the first candidate's values, before the corpus is read
        search = RandomStoppingSearch(model, grid, delta=a.delta, gamma=1.0 / a.expected_runs)
        corpus = corpus_from_args(a)
        search.fit(corpus)
    console = make_console()
    n = 1
    for v in grid.values():
        n *= len(v)
    best = search.best_estimator_
    chosen = ", ".join(f"{names[p].split(' ')[0]} {v}" for p, v in search.best_params_.items())
    console.print(f"private search over {n} candidate(s), a secret number of runs (geometric, {a.expected_runs:g}"
                  f" expected): the best run had {chosen} (score: {search.best_score_:g} supported topics)",
                  markup=False, highlight=False)
    print_topics(best, 10, console=console)
    print_privacy(best.privacy_, console)
    out = best.save(a.out)
    console.print(f"the best run's model written to {out} (the number of runs is not saved: the guarantee needs it"
                  " secret)", markup=False, highlight=False)


def _expected_runs(text: str) -> float:
    v = positive_float(text)
    if not 1.0 < v <= 1e6:
        raise argparse.ArgumentTypeError(f"the expected number of runs lies in (1, 1e6], got {text}")
    return v


def register(sub) -> None:
    p = sub.add_parser(
        "search", help="private hyper-parameter search: a secret random number of runs, the best one released",
        description="Run a private hyper-parameter search with a random number of runs K (Papernot & Steinke 2022):"
                    " each run trains a candidate drawn at random from --grid, and only the best run (by its"
                    " supported topics, read from its release) is released, saved and charged as one release on"
                    " the dataset's ledger. K is drawn from the operating system's entropy and is never printed or"
                    " saved: the guarantee needs it secret. The whole search costs about what 3 to 5 single fits do"
                    " (docs/budget.md).")
    add_corpus_args(p, required=True)
    p.add_argument("--algorithm", choices=SEARCHABLE, default="docdp-cooc",
                   help="the trainer of every run (default docdp-cooc)")
    p.add_argument("--epsilon", type=positive_float, required=True,
                   help="each run's budget (the trainer's --epsilon); the search's total is printed on its card")
    p.add_argument("--delta", type=unit_interval, default=1e-5,
                   help="each run's delta and the delta of the search's epsilon (default 1e-5)")
    p.add_argument("--grid", type=_grid_entry, action="append", required=True, metavar="NAME=V1,V2,...",
                   help="a train option of the trainer and its candidate values, e.g. topics=10,20,40 (repeat for"
                        " more options: every combination is a candidate)")
    p.add_argument("--expected-runs", type=_expected_runs, default=10.0, metavar="N",
                   help="the mean of the geometric number of runs (default 10; more runs find a better candidate"
                        " and cost more)")
    add_ledger_flags(p)
    add_out_args(p, "runs/search")
    p.set_defaults(func=cmd_search)
