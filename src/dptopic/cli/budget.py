"""``budget``: the dataset ledger (``budget show``, ``budget cap``), and the ledger flags of the training commands.

The ledger keeps every private release made from a dataset across runs (``dptopic.accounting.dataset_ledger``);
``train`` charges it by default. docs/budget.md."""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..errors import DPTopicError
from ..models.registry import TRAINERS
from ..reporting.ledger import cap_lines, print_ledger
from ._common import make_console, positive_float, unit_interval
from ._flags import flag_errors


def add_ledger_flags(p, training: bool = True) -> None:
    """``--ledger PATH`` and, for a command that trains, ``--no-ledger`` and ``--dataset NAME``."""
    p.add_argument("--ledger", default=None, metavar="PATH",
                   help="the ledger file that keeps this dataset's releases across runs (default: $DPTOPIC_LEDGER, else"
                        " dptopic/ledger.sqlite in the user's data folder, $XDG_DATA_HOME or ~/.local/share;"
                        " docs/budget.md)")
    if training:
        p.add_argument("--no-ledger", action="store_true",
                       help="record this run on no ledger (its release then counts in no dataset's total)")
        p.add_argument("--dataset", default=None, metavar="NAME",
                       help="the dataset this run's release is charged to (default: a fingerprint of the --corpus"
                            " file's bytes); runs on the same documents should give the same name")


LEDGER_FLAGS = {"ledger": "--ledger", "no_ledger": "--no-ledger"}


def ledger_file(a, must_exist: bool = False) -> Path | None:
    """The ledger of this command (:func:`dptopic.accounting.dataset_ledger.ledger_path`): ``--no-ledger`` (none),
    ``--ledger PATH``, ``DPTOPIC_LEDGER``, or the default file."""
    from ..accounting.dataset_ledger import ledger_path  # read on use: the CLI's start-up stays light

    with flag_errors(LEDGER_FLAGS):
        return ledger_path(getattr(a, "ledger", None), getattr(a, "no_ledger", False), must_exist)


def _spends(a) -> bool:
    t = TRAINERS.get(getattr(a, "algorithm", None) or "lda")
    return t is not None and t.spends_budget


@contextlib.contextmanager
def training_ledger(a):
    """``train``'s fits charged to ``--dataset`` (or the --corpus file's fingerprint) on the command's ledger. The
    file is checked first: a corrupt or foreign one is refused in one line before any document is read."""
    from ..accounting.dataset_ledger import DatasetLedger, check_name, session  # read on use: the CLI's start-up stays light

    path = ledger_file(a)
    if getattr(a, "dataset", None) is not None:
        check_name(a.dataset)
    if path is None or not _spends(a):
        with session(None):
            yield
        return
    DatasetLedger(path)         # checked (or created) now, before the corpus is read
    name = a.dataset
    if name is None and getattr(a, "corpus", None) is not None and os.path.exists(a.corpus):
        from ..models.dataset_charge import file_fingerprint  # loads numba/numpy: not at the CLI's start-up

        name = file_fingerprint(a.corpus)
    with session(path, name):
        yield


# ------------------------------------------------------------------------------------------------- budget show / cap
def cmd_budget_show(a):
    from ..accounting.dataset_ledger import DatasetLedger  # read on use: the CLI's start-up stays light

    ledger = DatasetLedger(ledger_file(a, must_exist=True))
    data = ledger.show(a.dataset)
    if a.json:
        print(json.dumps(data, indent=2, sort_keys=False, allow_nan=False))
        return
    print_ledger(data, ledger.path, make_console())


def cmd_budget_cap(a):
    from ..accounting.dataset_ledger import DatasetLedger  # read on use: the CLI's start-up stays light

    path = ledger_file(a)
    if a.clear:
        if a.epsilon is not None:
            raise DPTopicError("give --epsilon E --delta D (a cap) or --clear (no cap), not both.")
        DatasetLedger(path).set_cap(a.dataset, None, None)
        make_console().print(f"dataset {a.dataset!r}: no cap (ledger {path})")
        return
    if a.epsilon is None:
        raise DPTopicError("budget cap needs --epsilon E (and --delta D), or --clear.")
    ledger = DatasetLedger(path)
    ledger.set_cap(a.dataset, a.epsilon, a.delta)
    console = make_console()
    for line in cap_lines(a.dataset, a.epsilon, a.delta, path, ledger.total(a.dataset)):
        console.print(line, markup=True)    # rich markup, the names in it escaped


def register(sub) -> None:
    b = sub.add_parser("budget", help="the dataset ledger: every private release per dataset, its total and cap",
                       description="The ledger keeps every private release made from a dataset, across runs, and"
                                   " composes them (docs/budget.md).")
    bsub = b.add_subparsers(dest="budget_command", required=True, metavar="ACTION")
    s = bsub.add_parser("show", help="list each dataset's releases and total")
    add_ledger_flags(s, training=False)
    s.add_argument("--dataset", default=None, metavar="NAME", help="this dataset only")
    s.add_argument("--json", action="store_true", help="JSON (its fields: docs/privacy.md, 'The dataset ledger')")
    s.set_defaults(func=cmd_budget_show)
    c = bsub.add_parser("cap", help="cap a dataset's total: a run that would exceed it is refused before it spends")
    add_ledger_flags(c, training=False)
    c.add_argument("--dataset", required=True, metavar="NAME", help="the dataset (as train --dataset names it)")
    c.add_argument("--epsilon", type=positive_float, default=None, help="the cap's epsilon (> 0)")
    c.add_argument("--delta", type=unit_interval, default=1e-5, help="the delta the total is stated at (default 1e-5)")
    c.add_argument("--clear", action="store_true", help="remove the dataset's cap")
    c.set_defaults(func=cmd_budget_cap)
