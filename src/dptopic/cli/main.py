"""The ``dptopic`` command line.

One module per command group; each has ``register(subparsers)``. Every user error
ends in one line on stderr (``error: ...``) and exit status 2: a bad option as much as
a bad file or parameter (:class:`~dptopic.errors.DPTopicError`). Ctrl-C exits with
status 130 and one line, whenever it comes.
"""
from __future__ import annotations

import argparse
import logging
import os
import re
import sys
import warnings

from .. import __version__
from ..errors import DPTopicError, ParameterWarning
from . import (
    _common,
    audit,
    budget,
    corpus,
    experiment,
    local,
    privacy,
    recommend,
    refit,
    report,
    results,
    search,
    secure_sum,
    serve,
    train,
)
from ._flags import OUTPUT_FLAGS, WARNING_FLAGS, flag_message

# Command groups, in the order ``--help`` lists them.
COMMAND_GROUPS = [train, refit, search, recommend, results, corpus, privacy, budget, experiment, local, audit, report,
                  serve, secure_sum]


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


def build_parser() -> argparse.ArgumentParser:
    ap = ArgumentParser(prog="dptopic", description="Differentially private topic models (LDA) and auditing.")
    ap.add_argument("--version", action="version", version=f"dptopic {__version__}")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.register(sub)
    return ap


def _run(argv) -> int:
    parser = build_parser()
    a = parser.parse_args(argv)
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


def main(argv=None) -> int:
    previous = sys.unraisablehook
    sys.unraisablehook = _interrupt_hook(previous)
    try:
        return _run(argv)
    except KeyboardInterrupt as e:      # a client's Ctrl-C carries what was sent and spent before it
        print(str(e) if str(e).startswith("interrupted") else "interrupted", file=sys.stderr)
        return 130
    finally:
        sys.unraisablehook = previous


if __name__ == "__main__":
    sys.exit(main())
