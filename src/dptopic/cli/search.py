"""``search``: a private hyper-parameter search with a random number of runs (Papernot & Steinke 2022), the best run
alone released and saved (``dptopic.training.private_search.RandomStoppingSearch``; docs/budget.md).

The unit, the people and the vocabulary are given as ``train`` takes them: its own option definitions (copied from its
parser: ``TRAIN_OPTIONS``, cli/parsers/search.py), its refusals (``cli/train.py``) and its reading of the corpus, then
the library's checks of ``dptopic.train`` (``training/run.py``) inside the search."""
from __future__ import annotations

import argparse
import contextlib
import signal
import threading

from ..accounting.tuning import geometric_gamma
from ..errors import DPTopicError
from ..models.registry import NOT_SEARCHED, SEARCHABLE, TRAINERS
from ..reporting.terminal import make_console, print_privacy
from ..training import build_model
from ..training.private_search import RandomStoppingSearch, held_interrupts
from ._common import print_topics
from ._flags import CORPUS_FLAGS, FORMAT_FLAG, READING_FLAGS, flag_errors
from ._run_common import check_out
from ._train_flags import _train_options, algorithm_flags, algorithm_only, common_flags, flag_applies, parameter_flags
from ._train_parser import add_train_arguments
from ._trainers import COMMON_FLAGS
from .budget import training_ledger
from .train import _refuse_person_flags_without_unit, _refuse_user_level_flags, _resolve_unit, _training_corpus

TRAINER_OPTIONS = ("documents_per_user", "person_statistic", "public_vectors", "vectors_route")
"""Of ``TRAIN_OPTIONS`` (cli/parsers/search.py), those that set a parameter of the trainer (fixed for every run;
``--grid`` varies one)."""


def _grid(a) -> tuple[dict, dict]:
    """``(param_grid, names)``: each ``--grid`` entry as the trainer's parameter and its values, parsed as ``train``
    parses that option."""
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


def _resolve(a) -> argparse.Namespace:
    """The flags as read, with the trainer each run gets: ``--algorithm``, or the one ``--unit`` picks (train's
    rules: its refusals of the person's flags without the unit, of an algorithm the unit does not take, of an epsilon
    the unit's trainer cannot spend, of flags that do not fit the user unit, each in train's words)."""
    if a.unit == "word":
        raise DPTopicError("--unit word trains hdp, whose runs a private search cannot score (it decides no supported"
                           " topics from its release): give --unit document or user, or train one word-level model"
                           " with 'dptopic train --unit word'.")
    # what train reads beside the search's flags, at train's defaults (no topics, iterations or cluster flags here)
    r = argparse.Namespace(**{"topics": None, "iterations": None, "epsilon_inherent": None, "scheduler": None,
                              "dask_local": None, **vars(a)})
    _refuse_person_flags_without_unit(r)
    if a.unit is not None:
        r.algorithm, _ = _resolve_unit(r)
    r.algorithm = r.algorithm or "docdp-cooc"
    if r.algorithm not in SEARCHABLE:
        raise DPTopicError(f"--unit {a.unit} trains {r.algorithm}, which a private search does not run: give"
                           f" --algorithm {' or '.join(SEARCHABLE)}.")
    for dest in TRAINER_OPTIONS:
        if getattr(a, dest) is not None and not flag_applies(dest, r.algorithm):
            algos = algorithm_only()[dest][1]
            raise DPTopicError(f"--{dest.replace('_', '-')} has no effect with --algorithm {r.algorithm}: it applies"
                               f" to {'/'.join(algos)} only; drop it or choose one of those algorithms.")
    _refuse_user_level_flags(r)
    return r


def _fixed(a, grid: dict) -> dict:
    """The trainer's parameters the copied train options set (the same for every run)."""
    params = parameter_flags(a.algorithm)
    out = {}
    for dest in TRAINER_OPTIONS:
        value = getattr(a, dest)
        if value is None:
            continue
        if params[dest] in grid:
            flag = dest.replace("_", "-")
            raise DPTopicError(f"--{flag} and --grid {flag}=... both set it: give it once (--grid to search its"
                               " values, or the option alone for every run).")
        out[params[dest]] = value
    return out


def _names(a, grid_names: dict) -> dict:
    """The library's parameters as this command's flags (train's, then the grid's and the search's own)."""
    return {**common_flags(), **algorithm_flags().get(a.algorithm, {}), **READING_FLAGS, **CORPUS_FLAGS,
            **FORMAT_FLAG, "vocabulary": "--vocabulary", "private_vocabulary": "--private-vocabulary",
            "vocabulary_policy": "--vocabulary-policy", "unit": "--unit", "corpus": f"--corpus {a.corpus!r}",
            "epsilon": "--epsilon", "delta": "--delta", "expected_runs": "--expected-runs", **grid_names}


@contextlib.contextmanager
def _interruptible():
    """Ctrl-C (SIGINT) stops the search, even in a process started with SIGINT ignored (a search run in the
    background of a script inherits that): a search that spends a budget must stop when asked, and say what it
    spent (``RandomStoppingSearch``'s one line). The disposition the command found is restored at its end."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def cmd_search(a):
    a = _resolve(a)
    grid, grid_names = _grid(a)
    fixed = _fixed(a, grid)
    names = _names(a, grid_names)
    check_out(a)
    with flag_errors(names), training_ledger(a), _interruptible():
        gamma = geometric_gamma(a.expected_runs, "expected_runs")
        model = build_model(a.algorithm, unit=a.unit, epsilon=a.epsilon, delta=a.delta, verbose=0, **fixed)
        model.set_params(**{p: v[0] for p, v in grid.items()}).validate_parameters()    # before the corpus is read
        corpus, vocab = _training_corpus(a)
        if a.unit == "user" and corpus.user_ids is None:     # a prepared corpus saved without them (train's words)
            raise DPTopicError(f"--unit user needs each document's person, and {a.corpus!r} carries none: give the"
                               " JSONL/CSV file it was prepared from with --user-field FIELD, or a folder of folders"
                               " (one per person).")
        search = RandomStoppingSearch(model, grid, delta=a.delta, gamma=gamma, private_vocabulary=a.private_vocabulary,
                                      vocabulary_policy=a.vocabulary_policy)
        search.fit(corpus, vocabulary=None if vocab is None else (a.vocabulary, vocab), names=names)
        best = search.best_estimator_
        # saved before anything is printed: a reader that goes away (| head) or a Ctrl-C while it prints cannot cost
        # the model its release paid for (the save is atomic; a Ctrl-C during it is held until it ends)
        try:
            with held_interrupts():
                path = best.save(a.out)
        except KeyboardInterrupt:
            raise KeyboardInterrupt(f"interrupted after the search ended; the best run's model was saved to {a.out},"
                                    " and the search's release stays recorded and spent") from None
    console = make_console()
    chosen = ", ".join(f"{grid_names[p].split(' ')[0]} {v}" for p, v in search.best_params_.items())
    console.print(f"private search over {search.privacy_['n_candidates']} candidate(s), a secret number of runs"
                  f" (geometric, {a.expected_runs:g} expected): the best run had {chosen} (score:"
                  f" {search.best_score_:g} supported topics)")
    if getattr(best, "public_vectors_", None):      # as train says it: the vectors a default may have put in
        v = best.public_vectors_
        how = ("used by default; --public-vectors none turns them off" if v.get("default") else
               "given with --public-vectors")
        console.print(f"public vectors: {best.public_vectors_note_}, read in the clear (the guarantee does not depend"
                      f" on them), {how}")
    print_topics(best, 10, console=console)
    print_privacy(best.privacy_, console)
    console.print(f"the best run's model written to {path} (the number of runs is not saved: the guarantee needs it"
                  " secret)")


