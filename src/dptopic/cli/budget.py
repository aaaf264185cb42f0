"""``budget``: the dataset ledger (``budget show``, ``budget cap``, ``budget plan``), and the ledger flags of the
training commands.

The ledger keeps every private release with the documents it read, across runs and hosts
(``dptopic.dataset_ledger``); ``train`` charges it by default. docs/budget.md."""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
from pathlib import Path

from .._io import atomic_write_bytes
from ..dataset_ledger.ledger import DatasetLedger
from ..dataset_ledger.location import ledger_path, session
from ..dataset_ledger.names import check_name, no_ledger_error
from ..dataset_ledger.people import read_aliases
from ..dataset_ledger.pseudonyms import COLLECTION
from ..dataset_ledger.store import LedgerMissing, is_url
from ..errors import DPTopicError
from ..models.registry import TRAINERS
from ..protocol.secure_sum.person_ids import read_person_ids
from ..reporting.ledger import cap_lines, person_cap_lines, print_ledger, print_persons
from ..reporting.terminal import make_console
from ..service.ledger import check_round_people
from ._flags import flag_errors


def read_ids(a) -> tuple:
    """``(ids, ledger)`` of :func:`add_ids_flags`: ``--ids`` read and checked (one line naming the file and line),
    and the ledger that makes their pseudonyms (``--ledger``, ``DPTOPIC_LEDGER`` or the default file); ``(None,
    None)`` without ``--ids``, whose companions are then refused."""
    if a.ids is None:
        for flag, given in (("--user-field", a.user_field), ("--ledger", a.ledger)):
            if given is not None:
                raise DPTopicError(f"{flag} is read with --ids FILE (the people invited): add --ids, or drop {flag}.")
        return None, None

    return read_person_ids(a.ids, a.user_field), ledger_file(a)


LEDGER_FLAGS = {"ledger": "--ledger", "no_ledger": "--no-ledger", "dataset": "--dataset", "out": "--out",
                "overwrite": "--overwrite", "epsilon": "--epsilon", "delta": "--delta", "clear": "--clear",
                "search_runs": "--search-runs"}


def ledger_file(a, must_exist: bool = False):
    """The ledger of this command (:func:`dptopic.dataset_ledger.location.ledger_path`): ``--no-ledger`` (none),
    ``--ledger PATH``, ``DPTOPIC_LEDGER``, or the default file."""
    with flag_errors(LEDGER_FLAGS):
        return ledger_path(getattr(a, "ledger", None), getattr(a, "no_ledger", False), must_exist)


def _spends(a) -> bool:
    t = TRAINERS.get(getattr(a, "algorithm", None) or "lda")
    return t is not None and t.spends_budget


@contextlib.contextmanager
def training_ledger(a):
    """``train``'s fits charged on the command's ledger, under ``--dataset`` (or the documents' content). An existing
    ledger is checked first, read-only: a corrupt, foreign or newer one is refused in one line before any document
    is read; a new one is created once every input is known good (``dptopic.train``)."""
    path = ledger_file(a)
    aliases = ()
    if getattr(a, "person_aliases", None) is not None:

        if path is None:
            raise DPTopicError("--person-aliases links ids on the ledger that records this run, and no ledger is on"
                               " (--no-ledger): drop one of them.")
        aliases = read_aliases(a.person_aliases)
    given = [f for f, on in (("--ledger", a.ledger is not None), ("--dataset", getattr(a, "dataset", None) is not None),
                             ("--person-aliases", bool(aliases))) if on]
    if a.dataset is not None:
        with flag_errors(LEDGER_FLAGS):     # the library's rule for names (dptopic.train's dataset= too)
            check_name(a.dataset)
            if path is None:
                raise no_ledger_error(a.dataset)
    if path is None:
        with session(None):
            yield
        return
    if not _spends(a):
        if given:
            t = TRAINERS.get(getattr(a, "algorithm", None) or "lda")
            why = ("fits randomized reports, whose contributors drew the noise: refitting them spends nothing"
                   if t is not None and t.reads == "reports" else "releases nothing private")
            raise DPTopicError(f"{' and '.join(given)} record{'s' if len(given) == 1 else ''} the releases of private"
                               f" trainers, and --algorithm {a.algorithm} {why}: drop {' and '.join(given)}.")
        with session(None):
            yield
        return
    out = getattr(a, "out", None)
    if out is not None and not is_url(path) and os.path.abspath(out) in [
            str(q) for q in path.absolute().parents]:
        raise DPTopicError(f"--ledger {path} lies inside --out {out}: keep the ledger outside the model's folder"
                           " (which holds the model alone, and which --overwrite replaces).")
    if is_url(path) or os.path.lexists(path):
        try:        # every row checked now, before the corpus is read (a damaged key or document row: one line)
            DatasetLedger(path, read_only=True).check()
        except LedgerMissing:       # a database with no ledger yet: the run creates it
            pass
    with session(path, a.dataset, aliases):
        yield


def served_ledger(a) -> dict:
    """``--ledger``/``--dataset`` as the server's settings: the ledger checked (or created) before the server starts,
    a corrupt or foreign one refused in one line; a secure-sum ``--directory`` whose invitations name people needs
    the ledger they were written with (:func:`~dptopic.service.ledger.check_round_people`)."""
    if getattr(a, "ledger", None) is None:
        if getattr(a, "dataset", None) is not None:
            raise DPTopicError("--dataset names the served releases a ledger records: add --ledger PATH, or drop"
                               " --dataset.")
        _check_round_people(a, None)
        return {}

    with flag_errors(LEDGER_FLAGS):
        path = ledger_path(a.ledger)
        if a.dataset is not None:
            check_name(a.dataset)
    DatasetLedger(path).check()         # created, or every row checked, before the server starts
    _check_round_people(a, path)
    return {"ledger": str(path), "ledger_dataset": a.dataset}


def _check_round_people(a, path) -> None:
    """A secure-sum round's ``--directory`` (already read and checked) whose invitations name people: served with
    the ledger that made their pseudonyms (one line otherwise)."""
    if getattr(a, "directory", None) is None:
        return

    try:
        directory = json.loads(Path(a.directory).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return          # its reader refused it first
    with flag_errors({**LEDGER_FLAGS, "directory": "--directory"}):
        check_round_people(directory, None if path is None else str(path))


# ------------------------------------------------------------------------------------------------- budget show / cap
def cmd_budget_show(a):
    ledger = DatasetLedger(ledger_file(a, must_exist=True), read_only=True)
    if a.person_level:
        if a.dataset is not None:
            raise DPTopicError("--person-level lists every person of the ledger, across datasets: drop --dataset (or"
                               " --person-level).")
        data = ledger.person_summary(top=0 if a.json else 10)
        if a.json:
            print(json.dumps(data, indent=2, allow_nan=False))
            return
        print_persons(data, ledger.where, make_console())
        return
    with flag_errors(LEDGER_FLAGS):
        data = ledger.show(a.dataset)
    if a.json:
        print(json.dumps(data, indent=2, sort_keys=False, allow_nan=False))
        return
    print_ledger(data, ledger.where, make_console())


def cmd_budget_cap(a):
    path = ledger_file(a)
    if a.dataset is not None and a.per_person:
        raise DPTopicError("--dataset and --per-person cannot be combined: keep --dataset NAME to cap that dataset's"
                           " total, or --per-person to cap every person's total across datasets.")
    if a.dataset is None and not a.per_person:
        raise DPTopicError("budget cap needs --dataset NAME (that dataset's total) or --per-person (every person's"
                           " total, across datasets), one of them.")
    if a.clear:
        if a.epsilon is not None or a.delta is not None:
            raise DPTopicError("give --epsilon E --delta D (a cap) or --clear (no cap), not both.")
    elif a.epsilon is None:
        raise DPTopicError("budget cap needs --epsilon E (and --delta D), or --clear.")
    delta = 1e-5 if a.delta is None and not a.clear else a.delta
    console = make_console()
    with flag_errors(LEDGER_FLAGS):
        ledger = DatasetLedger(path)
        if a.per_person:
            ledger.set_person_cap(a.epsilon, delta, clear=a.clear)
            for line in person_cap_lines(None if a.clear else (a.epsilon, delta), ledger.where,
                                         ledger.person_summary(top=1) if not a.clear else None):
                console.print(line, markup=True)    # rich markup, the names in it escaped
            return
        ledger.set_cap(a.dataset, a.epsilon, delta, clear=a.clear)
    if a.clear:
        console.print(f"dataset {a.dataset!r}: no cap (ledger {ledger.where})", markup=False)
        return
    for line in cap_lines(a.dataset, a.epsilon, delta, ledger.where, ledger.total(a.dataset)):
        console.print(line, markup=True)    # rich markup, the names in it escaped


def cmd_budget_pseudonyms(a):
    """``dptopic budget pseudonyms``: each person's pseudonym for a collection server, written to a new CSV file."""
    ids, path = read_ids(a)
    out = Path(a.out)
    if out.exists() or not out.parent.is_dir():
        raise DPTopicError(f"--out {out} {'exists' if out.exists() else 'lies in no folder that exists'}: give a new"
                           " file in a folder that exists (the pseudonyms are never overwritten).")
    with flag_errors(LEDGER_FLAGS):
        ledger = DatasetLedger(path)
        pseudonyms = ledger.pseudonyms(ids, COLLECTION)
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(["id", "pseudonym"])
    w.writerows(zip(ids, pseudonyms))
    try:
        atomic_write_bytes(out, text.getvalue().encode("utf-8"), private=True)
    except OSError as e:
        raise DPTopicError(f"cannot write --out {out}: {e.strerror or e}.") from None
    make_console().print(f"{len(ids)} pseudonyms of ledger {ledger.where} in {out} (readable by you only: it links"
                         " each id to its pseudonym). Give each contributor theirs: submit --contributor P (local"
                         " reports) or fed-client --client-id P (FedLDA) to a server started with this --ledger, and"
                         " their releases are charged to them.", markup=False)
