"""``dptopic train --help``: the options of the trainer chosen, not all of them.

``train`` has one parser for every trainer (so that every command line keeps working, and the CLI reference lists
every option); its help is filtered by the same table that refuses a flag given to a trainer it does not apply to
(``train.flag_shown``), so the help and the refusals cannot drift apart:

- ``dptopic train --help``: the options every trainer reads (and those ``--unit`` uses), then a table of the trainers;
- ``dptopic train --algorithm X --help``: the options of X;
- ``dptopic train --unit word|document|user --help``: the options of the trainer the unit picks.

``--algorithm`` and ``--unit`` count wherever they stand on the line, before ``--help`` or after it.
"""
from __future__ import annotations

import argparse
import sys
import textwrap

from ..models.registry import TRAINERS as _REGISTRY
from ..models.registry import for_unit_trainer
from ._trainers import help_line

# the trainers as the help table lists them (every choice of --algorithm), one line each: the registry's summaries
# with the flags of their budget and input (cli._trainers.HELP_NOTES)
TRAINERS = {t.name: help_line(t.name) for t in _REGISTRY.values() if t.cli}
UNITS = ("word", "document", "user")
# what 'train --unit U --help' says the unit trains (the trainer's own line where it says the unit's guarantee)
UNIT_LINES = {
    "user": "user-level DP: {trainer} with each person's documents bounded as a whole; --epsilon per person (all of"
            " one person's documents added or removed); --user-field names each document's person in a JSONL/CSV"
            " file, a folder of folders needs none (docs/privacy_units.md)",
}

PLAIN = ("Train a topic model, evaluate it on held-out documents and save it. The options below are those every"
         " trainer reads, and those of --unit; each trainer has more of its own: see 'dptopic train --algorithm X"
         " --help' (or 'dptopic train --unit word|document|user --help') for the options of X only.")


def _width() -> int:
    """The width argparse's own help is wrapped to."""
    return argparse.HelpFormatter("dptopic")._width


def _fill(text: str, indent: str = "") -> str:
    return textwrap.fill(" ".join(text.split()), _width(), subsequent_indent=indent)


def trainer_table() -> str:
    """The trainers, one line each, and where to read their options."""
    width = max(map(len, TRAINERS))
    rows = [textwrap.fill(f"{name:<{width}}  {what}", _width(), initial_indent="  ",
                          subsequent_indent=" " * (width + 4)) for name, what in TRAINERS.items()]
    return "\n".join([_fill("trainers (--algorithm X; see 'dptopic train --algorithm X --help' for the options of X):"),
                      *rows])


def chosen(arguments) -> tuple:
    """``(algorithm, unit)`` written on a train command line (``None`` where not, or not one of the choices)."""
    p = argparse.ArgumentParser(add_help=False, exit_on_error=False)    # a bad line is no message but a plain help
    p.add_argument("--algorithm", default=None)
    p.add_argument("--unit", default=None)
    try:
        ns, _ = p.parse_known_args([w for w in arguments if w not in ("-h", "--help")])
    except argparse.ArgumentError:
        return None, None
    return (ns.algorithm if ns.algorithm in TRAINERS else None), (ns.unit if ns.unit in UNITS else None)


def format_help(parser: argparse.ArgumentParser, shown, algorithm=None, unit=None) -> str:
    """``parser``'s help with only the options ``shown(dest, algorithm, unit)`` keeps, its description saying which
    trainer they are for (the parser itself is left as it was)."""
    hidden = [act for act in parser._actions
              if act.option_strings and act.dest != "help" and not shown(act.dest, algorithm, unit)]
    saved = [(act, act.help) for act in hidden]
    kept = parser.description, parser.epilog, parser.formatter_class, parser.usage
    if unit is not None:
        trainer = algorithm if unit == "user" and algorithm is not None else for_unit_trainer(unit).name
        line = UNIT_LINES[unit].format(trainer=trainer) if unit in UNIT_LINES else TRAINERS[trainer]
        chosen_by = f"--unit {unit}" + (f" --algorithm {algorithm}" if algorithm is not None else "")
        description = (f"Options of 'dptopic train {chosen_by}', which trains {trainer}: {line}. Other"
                       " trainers: 'dptopic train --help'.")
    elif algorithm is not None:
        description = (f"Options of 'dptopic train --algorithm {algorithm}': {TRAINERS[algorithm]}. Other trainers:"
                       " 'dptopic train --help'.")
    else:
        description = PLAIN
    try:
        for act in hidden:
            act.help = argparse.SUPPRESS
        parser.description = _fill(description)
        parser.epilog = trainer_table() if algorithm is None and unit is None else None
        parser.formatter_class = argparse.RawDescriptionHelpFormatter     # the table keeps its lines
        # one short line: the options are listed below (argparse's usage of a filtered option list can fail)
        parser.usage = ("%(prog)s " + (f"--unit {unit} --epsilon EPS" + (" --user-field FIELD" if unit == "user" else "")
                                       if unit is not None else
                                       f"--algorithm {algorithm}" if algorithm is not None else
                                       "[--algorithm X | --unit U --epsilon EPS]") + " [options]")
        return parser.format_help()
    finally:
        for act, text in saved:
            act.help = text
        parser.description, parser.epilog, parser.formatter_class, parser.usage = kept


def add_help(parser: argparse.ArgumentParser, shown, refusal=None) -> None:
    """``-h``/``--help`` for ``parser`` (made with ``add_help=False``): the options of the trainer the line chose.
    ``refusal(unit, algorithm)``: why train refuses that pair (None when it takes it): then the help is refused in the
    same line, exit status 2, rather than printed for a command that cannot run."""

    class TrainHelp(argparse.Action):
        def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
            super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

        def __call__(self, parser, namespace, values, option_string=None):
            algorithm, unit = chosen(getattr(parser, "arguments", None) or [])
            why = None if refusal is None else refusal(unit, algorithm)
            if why is not None:
                parser.exit(2, f"error: {why}\n")
            parser._print_message(format_help(parser, shown, algorithm, unit), sys.stdout)
            parser.exit()

    parser.add_argument("-h", "--help", action=TrainHelp,
                        help="show the options of the trainer chosen (--algorithm X or --unit U), or those every"
                             " trainer reads and the list of trainers, and exit")
