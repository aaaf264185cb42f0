"""``search``: a private hyper-parameter search with a random number of runs (Papernot & Steinke 2022), the best run
alone released and saved (``dptopic.training.private_search.RandomStoppingSearch``; docs/budget.md)."""
from __future__ import annotations

import argparse

from ..errors import DPTopicError
from ..models.registry import NOT_SEARCHED, SEARCHABLE, TRAINERS
from ..reporting.terminal import make_console, print_privacy
from ._common import (
    _float_arg,
    add_corpus_args,
    add_out_args,
    check_out,
    corpus_from_args,
    positive_float,
    print_topics,
    unit_interval,
)
from ._flags import CORPUS_FLAGS, FORMAT_FLAG, flag_errors
from ._trainers import COMMON_FLAGS
from .budget import add_ledger_flags, training_ledger


def _grid_entry(text: str) -> tuple:
    name, sep, values = str(text).partition("=")
    items = [v.strip() for v in values.split(",")]
    if not sep or not name.strip("- ") or not all(items):
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=V1,V2,...: give a train option and its candidate"
                                         " values, e.g. --grid topics=10,20,40")
    return name.strip("- "), items


def _grid(a) -> tuple[dict, dict]:
    """``(param_grid, names)``: each ``--grid`` entry as the trainer's parameter and its values, parsed as ``train``
    parses that option."""
    from ._train_flags import _train_options, parameter_flags  # the train parser's options: loaded when used
    from ._train_parser import add_train_arguments  # the train parser's value types: loaded when used

    parser = argparse.ArgumentParser(add_help=False)
    add_train_arguments(parser)
    actions = {act.dest: act for act in parser._actions if act.option_strings}
    params = {**parameter_flags(a.algorithm), **{f[2:].replace("-", "_"): p for p, f in COMMON_FLAGS.items() if p in
                                                  TRAINERS[a.algorithm].parameters() and f[2:] in _train_options()}}
    grid, names = {}, {}
    for name, values in a.grid:
        param = params.get(name.replace("-", "_"))
        if param is None or param in NOT_SEARCHED or param in grid:
            options = ", ".join(sorted(d.replace("_", "-") for d, p in params.items() if p not in NOT_SEARCHED))
            raise DPTopicError(f"--grid {name}=...: " + ("--epsilon and --delta are one budget for every run" if param
                               in ("epsilon", "delta") else f"--{name} given twice" if param in grid else
                               f"--{name} is no option to search of --algorithm {a.algorithm}") + f"; give one of"
                               f" {options}, once.")
        try:
            act = actions[name.replace("-", "_")]
            grid[param] = [act.type(v) if act.type is not None else v for v in values]
        except (argparse.ArgumentTypeError, ValueError, TypeError) as e:
            raise DPTopicError(f"--grid {name}={','.join(values)}: {e}") from None
        names[param] = f"--{name} (in --grid)"
    return grid, names


def cmd_search(a):
    from ..training import build_model  # the library's trainers: not at the CLI's start-up
    from ..training.private_search import RandomStoppingSearch  # loads numba/numpy: not at the CLI's start-up

    grid, names = _grid(a)
    check_out(a)
    with flag_errors({**names, "epsilon": "--epsilon", "delta": "--delta", **CORPUS_FLAGS, **FORMAT_FLAG}), \
            training_ledger(a):
        model = build_model(a.algorithm, epsilon=a.epsilon, delta=a.delta, verbose=0)
        model.set_params(**{p: v[0] for p, v in grid.items()}).validate_parameters()    # before the corpus is read
        search = RandomStoppingSearch(model, grid, delta=a.delta, gamma=1.0 / a.expected_runs)
        search.fit(corpus_from_args(a))
    console, best = make_console(), search.best_estimator_
    chosen = ", ".join(f"{names[p].split(' ')[0]} {v}" for p, v in search.best_params_.items())
    console.print(f"private search over {search.privacy_['n_candidates']} candidate(s), a secret number of runs"
                  f" (geometric, {a.expected_runs:g} expected): the best run had {chosen} (score:"
                  f" {search.best_score_:g} supported topics)")
    print_topics(best, 10, console=console)
    print_privacy(best.privacy_, console)
    console.print(f"the best run's model written to {best.save(a.out)} (the number of runs is not saved: the guarantee"
                  " needs it secret)")


def register(sub) -> None:
    p = sub.add_parser("search", help="private hyper-parameter search: a secret random number of runs, the best one"
                                      " released", description=(
        "A private hyper-parameter search with a random number of runs K (Papernot & Steinke 2022): each run trains a"
        " candidate drawn at random from --grid; only the best run (by its supported topics, read from its release)"
        " is released, saved and charged, as one release, on the dataset's ledger. K is drawn from the operating"
        " system's entropy and never printed or saved: the guarantee needs it secret. The search costs about what 3"
        " to 5 single fits do (docs/budget.md)."))
    add_corpus_args(p, required=True)
    p.add_argument("--algorithm", choices=SEARCHABLE, default="docdp-cooc", help="each run's trainer (default"
                                                                                 " docdp-cooc)")
    p.add_argument("--epsilon", type=positive_float, required=True, help="each run's budget; the card states the"
                                                                          " search's total")
    p.add_argument("--delta", type=unit_interval, default=1e-5, help="each run's delta and the search's (default 1e-5)")
    p.add_argument("--grid", type=_grid_entry, action="append", required=True, metavar="NAME=V1,V2,...",
                   help="a train option of the trainer and its candidate values, e.g. topics=10,20,40 (repeat it:"
                        " every combination is a candidate)")
    p.add_argument("--expected-runs", type=_float_arg(lambda v: 1 < v <= 1e6, "must lie in (1, 1e6]"), default=10.0,
                   metavar="N",
                   help="the mean of the geometric number of runs (default 10: more runs find better, cost more)")
    add_ledger_flags(p)
    add_out_args(p, "runs/search")
    p.set_defaults(func=cmd_search)
