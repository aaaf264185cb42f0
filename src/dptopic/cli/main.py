"""The ``dptopic`` command line.

The command table (``COMMANDS``) names, for each command, the module under :mod:`dptopic.cli.parsers` that builds its
parser (its ``register(subparsers)``): those import argparse and light constants only, so that ``--help`` and every
flag error load no library. Each parser names the function that runs the command as ``run="module:function"`` under
``dptopic.cli`` (``set_defaults``); :func:`main` imports that module once the arguments parsed. Every user error
ends in one line on stderr (``error: ...``) and exit status 2: a bad option as much as
a bad file or parameter (:class:`~dptopic.errors.DPTopicError`). Ctrl-C exits with
status 130 and one line, whenever it comes.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import re
import signal
import sys
import threading
import warnings

from .. import __version__
from .._memory import map_large_blocks
from ..errors import DPTopicError, ParameterWarning
from . import _common
from ._flags import OUTPUT_FLAGS, WARNING_FLAGS, flag_message

# The command table, in the order ``--help`` lists it: a command's name, the module under ``dptopic.cli.parsers`` that
# registers its parser (``register(subparsers)``), and the line ``--help`` shows. A command's parser module is imported
# only when that command is given; ``dptopic --help`` imports none (the summaries are here, checked against each
# parser's own by tests/cli/test_main.py). A new command: a row here, ``register`` in its parser module, and the
# function its parser names (``run=``) in a module of dptopic.cli (CONTRIBUTING.md, "Adding a command").
COMMANDS = {
    "train": ("train", "train a topic model, evaluate it and save it"),
    "demo": ("demo", "the main job: topic models of the demo corpus under document-level DP at epsilon = 1, then"
                      " private HDP-LDA (word-level; hybrid differentially private LDA, Zhao et al.) with a"
                      " non-private reference; figures as PNG"),
    "evaluate": ("topics", "perplexity and coherence of a saved model on a corpus"),
    "topics": ("topics", "show a saved model's topics and privacy report"),
    "refit": ("refit", "read a saved docdp-cooc model's topics at another K from its releases (free)"),
    "search": ("search", "private hyper-parameter search: a secret random number of runs, the best one released"),
    "recommend": ("recommend", "which trainer and settings for a guarantee, the topic coverage and downstream accuracy"
                               " to expect and how many topics the budget supports (reads no data)"),
    "transform": ("results", "document-topic proportions of documents under a saved model (CSV or .npy)"),
    "export": ("results", "export a saved model for other tools (pyLDAvis)"),
    "pull": ("results", "fetch a collection server's current model into a model folder"),
    "corpus": ("corpus", "corpus tools"),
    "privacy": ("privacy", "privacy calculators"),
    "budget": ("budget", "the dataset ledger: every private release, its documents, totals and caps"),
    "experiment": ("experiment", "reproduce the papers' figures (CSV + PNG + a verdict)"),
    "randomize": ("local", "contributor side: turn documents into locally private reports"),
    "audit": ("audit", "attack shadow models retrained with a model's training procedure (LiRA) and compare with"
                       " its privacy claim"),
    "report": ("report", "one self-contained HTML report: topics, evaluation, privacy card, audit"),
    "serve": ("serve", "run the collection server (local-DP reports, OLP-LDA, FedLDA rounds)"),
    "submit": ("serve", "contributor side: randomize your documents locally and upload the reports"),
    "fed-client": ("serve", "take part in FedLDA rounds with your documents (kept local)"),
    "secure-sum": ("secure_sum", "the operator's side of a secure-sum round (invitations)"),
}


def command_module(name: str):
    """The module that registers command ``name``'s parser (imported now, on first use)."""
    return importlib.import_module(f"{__package__}.parsers.{COMMANDS[name][0]}")


def command_function(run: str):
    """The function a parser names to run its command, ``"module:function"`` under ``dptopic.cli``: its module is
    imported here, once the command's arguments parsed (the one place run code is imported: a command's ``--help``
    and its flag errors load none of the library it runs)."""
    module, _, function = run.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), function)


class ArgumentParser(argparse.ArgumentParser):
    """argparse with the project's error convention: one ``error: ...`` line naming the command and
    pointing at its ``--help``, exit status 2. Sub-parsers inherit it (``add_subparsers`` uses the
    parent's class)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        # '-1e-5', '-inf' are values that the range checks then refuse in one line; argparse's own pattern knows only
        # '-1' and '-0.5', and took '--delta -1e-5' for a flag without its value
        self._negative_number_matcher = re.compile(
            r"^-(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$|^-(?:inf|infinity|nan)$", re.I)

    def error(self, message, prog=None):
        message = " ".join(str(message).split())
        prog = prog or self.prog
        self.exit(2, f"error: {prog}: {message} (see '{prog} --help')\n")

    def parse_known_args(self, args=None, namespace=None):
        # the words this (sub)command is given, whole: a help action reads those after it too (train --help)
        self.arguments = list(sys.argv[1:] if args is None else args)
        ns, extras = super().parse_known_args(args, namespace)
        if getattr(ns, "_prog", None) is None:       # the deepest (sub)command parsed sets it first
            ns._prog = self.prog
            ns._given = self._given_dests(args)
        return ns, extras

    def _given_dests(self, args):
        """The options the user wrote on the command line, whatever their value: a flag given at its default value
        is still given (``train`` refuses one that does not apply to the chosen trainer). Found by parsing the same
        arguments again with every default suppressed, so abbreviations and ``--flag=value`` count as argparse
        reads them."""
        saved = [(action, action.default) for action in self._actions]
        saved_defaults, self._defaults = self._defaults, {}
        try:
            for action, _ in saved:
                action.default = argparse.SUPPRESS
            again, _ = super().parse_known_args(args, None)
        except SystemExit:      # cannot happen after a successful parse; keep the value check then
            return None
        finally:
            for action, default in saved:
                action.default = default
            self._defaults = saved_defaults
        return frozenset(vars(again))

    def parse_args(self, args=None, namespace=None):
        ns, extras = self.parse_known_args(args, namespace)
        if extras:      # argparse would blame the top parser: name the subcommand that was given them
            self.error(f"unrecognized arguments: {' '.join(extras)}", prog=ns._prog)
        del ns._prog
        return ns


def build_parser(only=None) -> argparse.ArgumentParser:
    """The command line's parser. Every command's own parser by default (the docs and tests read them all); with
    ``only``, the parser of that command's parser module alone, and for every other command a stub carrying its name
    and summary, so that its module is not imported. Building a parser imports no run code (``run=`` names it)."""
    ap = ArgumentParser(prog="dptopic", description="Differentially private topic models (LDA) and auditing.")
    ap.add_argument("--version", action="version", version=f"dptopic {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = None if only is None else COMMANDS.get(only, ("",))[0]     # "": no module, every command a stub
    registered = set()
    for name, (module, summary) in COMMANDS.items():
        if wanted is None or module == wanted:
            if module not in registered:        # a module registers all its commands at once, in the table's order
                registered.add(module)
                command_module(name).register(sub)
        else:
            sub.add_parser(name, help=summary, add_help=False)
    return ap


def _command_named(argv) -> str | None:
    """The command the arguments name: the first that is not an option (the top level takes no option values)."""
    args = sys.argv[1:] if argv is None else list(argv)
    return next((str(word) for word in args if not str(word).startswith("-")), None)


def _run(argv) -> int:
    a = build_parser(only=_command_named(argv) or "").parse_args(argv)
    logging.getLogger("absl").setLevel(logging.ERROR)  # dp-accounting's numerical warnings are not for users
    # the command's warning settings end with it (a caller of main() in the same process keeps its own)
    with warnings.catch_warnings():
        # a warning is one line on stderr, like an error: never Python's "file:line: UserWarning:" format; and once
        # per command (several calls may raise the same one: perplexity and coherence over the same documents)
        shown: set = set()

        def show(message, category, *rest, **kw):
            text = message.message(WARNING_FLAGS) if isinstance(message, ParameterWarning) else str(message)
            line = f"warning: {' '.join(text.split())}"
            if line not in shown:
                shown.add(line)
                print(line, file=sys.stderr)

        warnings.showwarning = show
        return _dispatch(a)


def _dispatch(a) -> int:
    _common.flush_notes(show=False)
    try:
        from ..kernels import check_numba_threads  # numba's own check of NUMBA_NUM_THREADS is a traceback

        check_numba_threads()
        if not hasattr(a, "func"):       # the command's run code, named by its parser: imported now
            a.func = command_function(vars(a).pop("run"))
        _common.resolve_model_arg(a)
        rc = a.func(a)
    except DPTopicError as e:
        _common.flush_notes(show=False)     # an error is one line: the notes of a command that failed are dropped
        print(f"error: {flag_message(e, OUTPUT_FLAGS)}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`dptopic ... | head`): stop quietly, as a shell tool does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except (OSError, MemoryError) as e:
        _common.flush_notes(show=False)
        if isinstance(e, OSError):      # distributed's, when the scheduler went away mid-run: said in one line
            from ..backends.cluster import scheduler_lost  # read on an OSError only: the backends load numpy

            lost = scheduler_lost(e, getattr(a, "scheduler", None) is not None or getattr(a, "dask_local", None) is not None)
            if lost:
                print(f"error: {lost}", file=sys.stderr)
                return 2
        detail = getattr(e, "strerror", None) or str(e) or ("out of memory" if isinstance(e, MemoryError)
                                                             else type(e).__name__)
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        print(f"error: {type(e).__name__}: {' '.join(str(detail).split())}{where}", file=sys.stderr)
        return 2
    except BaseException:
        _common.flush_notes(show=False)
        raise
    finally:
        # the --out folders this command held (claim_output): none unless _io.output was loaded; importing it here
        # otherwise would load numpy again after a Ctrl-C that stopped its first import ("cannot load module more
        # than once per process")
        output = sys.modules.get(f"{__package__.rpartition('.')[0]}._io.output")
        if output is not None and hasattr(output, "release_output"):
            output.release_output()
    _common.flush_notes()
    return int(rc) if isinstance(rc, _common.ExitStatus) else 0     # a command may end with a status of its own


def _interrupt_hook(previous):
    """A Ctrl-C that lands in a callback the interpreter cannot raise from (e.g. importlib's module-lock
    weakref callbacks during start-up) would be printed as "Exception ignored ... Traceback" and then
    lost; end the run the same way as any other Ctrl-C instead."""

    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            sys.stderr.write("interrupted\n")
            sys.stderr.flush()
            os._exit(130)
        previous(unraisable)

    return hook


def _counting_interrupts(seen: list):
    """Python's own Ctrl-C handler, which also notes that a Ctrl-C came (``seen``): a Ctrl-C that lands inside an
    extension module's import (numpy's, while a command's module loads) can reach the caller as an ImportError."""

    def handler(signum, frame):
        seen.append(signum)
        signal.default_int_handler(signum, frame)

    return handler


def main(argv=None) -> int:
    map_large_blocks()          # a freed array's memory back to the system at once (dptopic._memory)
    previous = sys.unraisablehook
    sys.unraisablehook = _interrupt_hook(previous)
    seen: list = []
    handler = None
    if threading.current_thread() is threading.main_thread() \
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        handler = signal.signal(signal.SIGINT, _counting_interrupts(seen))
    try:
        return _run(argv)
    except KeyboardInterrupt as e:      # a client's Ctrl-C carries what was sent and spent before it
        print(str(e) if str(e).startswith("interrupted") else "interrupted", file=sys.stderr)
        return 130
    except ImportError:
        if not seen:
            raise
        print("interrupted", file=sys.stderr)      # the Ctrl-C stopped an import: nothing was read or spent
        return 130
    finally:
        sys.unraisablehook = previous
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


if __name__ == "__main__":
    sys.exit(main())
