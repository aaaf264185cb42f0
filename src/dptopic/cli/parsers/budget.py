"""``budget``'s parser (run by cli/budget.py)."""
from __future__ import annotations

from ...models.registry import TRAINERS
from .._common import positive_float, positive_int, unit_interval


def add_ledger_flags(p, training: bool = True) -> None:
    """``--ledger PATH`` and, for a command that trains, ``--no-ledger`` and ``--dataset NAME``."""
    p.add_argument("--ledger", default=None, metavar="PATH",
                   help="the ledger that keeps every release with the documents it read, across runs: a file, or"
                        " postgresql://USER@HOST/DB shared by several hosts (default: $DPTOPIC_LEDGER, else"
                        " dptopic/ledger.sqlite in the user's data folder, $XDG_DATA_HOME or ~/.local/share;"
                        " docs/budget.md)")
    if training:
        p.add_argument("--no-ledger", action="store_true",
                       help="record this run on no ledger (its release then counts in no total)")
        p.add_argument("--dataset", default=None, metavar="NAME",
                       help="the name this run's release is recorded under (default: content: and a digest of the"
                            " documents read, the same for the same documents in any file, order or format)")
        p.add_argument("--person-aliases", default=None, metavar="FILE",
                       help="ids that are one person, linked on the ledger before this run is charged: git's"
                            " .mailmap format, or a two-column CSV (alias,canonical); every total and cap then"
                            " counts them once (docs/budget.md)")


def add_ids_flags(p, required: bool = False) -> None:
    """``--ids FILE``, ``--user-field F`` and ``--ledger PATH``: the people a served route is charged to, by the ids
    the central releases' person field holds, and the ledger whose key makes their pseudonyms (docs/budget.md,
    "Served releases")."""
    p.add_argument("--ids", required=required, default=None, metavar="FILE",
                   help="the people, one id a line (UTF-8), as your corpora's person field (train --user-field) holds"
                        " them: the server sees only pseudonyms the --ledger makes of them, and charges each person"
                        " on it, as the central releases that held their documents")
    p.add_argument("--user-field", default=None, metavar="F",
                   help="--ids is a CSV file with a header row, the ids in its column F")
    add_ledger_flags(p, training=False)


def register(sub) -> None:
    b = sub.add_parser("budget", help="the dataset ledger: every private release, its documents, totals and caps",
                       description="The ledger keeps every private release with the documents it read, across runs"
                                   " and hosts, and composes them per document and per person (docs/budget.md).")
    bsub = b.add_subparsers(dest="budget_command", required=True, metavar="ACTION")
    s = bsub.add_parser("show", help="list each dataset's releases and total, or every person's total")
    add_ledger_flags(s, training=False)
    s.add_argument("--dataset", default=None, metavar="NAME", help="this dataset only")
    s.add_argument("--person-level", action="store_true",
                   help="every person's total across datasets and units: the largest and the distribution")
    s.add_argument("--json", action="store_true",
                   help="JSON, every release's events with their parameters (its fields: docs/privacy.md, 'The"
                        " dataset ledger')")
    s.set_defaults(run="budget:cmd_budget_show")
    c = bsub.add_parser("cap", help="cap a dataset's total, or every person's: a run that would exceed it is refused"
                                    " before it spends")
    add_ledger_flags(c, training=False)
    c.add_argument("--dataset", default=None, metavar="NAME",
                   help="the dataset (as train --dataset or 'budget show' names it)")
    c.add_argument("--per-person", action="store_true", help="cap every person's total, across every dataset")
    c.add_argument("--epsilon", type=positive_float, default=None, help="the cap's epsilon (> 0)")
    c.add_argument("--delta", type=unit_interval, default=None,
                   help="the delta the total is stated at (default 1e-5)")
    c.add_argument("--clear", action="store_true", help="remove the cap")
    c.set_defaults(run="budget:cmd_budget_cap")
    p = bsub.add_parser("plan", help="what a run or a search would add to each total it touches, and what would"
                                     " remain under each cap: reads no document, spends nothing")
    add_ledger_flags(p, training=False)
    p.add_argument("--dataset", default=None, metavar="NAME",
                   help="a recorded dataset ('budget show' lists them); with --corpus, the name the run would be"
                        " recorded under")
    p.add_argument("--corpus", default=None, metavar="FILE",
                   help="plan on this corpus, which the ledger need not have seen: its documents are known as a run"
                        " would record them (digests, sketches, people linked), and nothing is written")
    p.add_argument("--format", default="auto", choices=("auto", "text", "jsonl", "csv"),
                   help="--corpus's format (default: by its extension)")
    p.add_argument("--text-field", default="text", metavar="FIELD", help="--corpus's text field (JSONL/CSV)")
    p.add_argument("--user-field", default=None, metavar="FIELD",
                   help="--corpus's field naming each document's person (for a plan per person)")
    p.add_argument("--algorithm", default=None, choices=[n for n, t in TRAINERS.items() if t.units and t.cli
                                                         and t.reads != "reports"],
                   help="the trainer, as train takes it")
    p.add_argument("--unit", default=None, choices=("document", "user", "word"), help="or the privacy unit")
    p.add_argument("--epsilon", type=positive_float, required=True, help="the run's epsilon, as train takes it")
    p.add_argument("--delta", type=unit_interval, default=None, help="the run's delta (default: the trainer's)")
    p.add_argument("--topics", type=positive_int, default=None,
                   help="the number of topics, where the plan depends on it")
    p.add_argument("--words", type=positive_int, default=None, metavar="N",
                   help="the words the trainer would keep, where its plan depends on them (a public figure)")
    p.add_argument("--search-runs", type=positive_float, default=None, metavar="MEAN",
                   help="plan a private search (RandomStoppingSearch) of this mean number of runs instead of one run")
    p.add_argument("--json", action="store_true", help="JSON")
    p.set_defaults(run="budget_plan:cmd_budget_plan")
    q = bsub.add_parser("pseudonyms", help="each person's pseudonym for a collection server (local reports, FedLDA):"
                                           " the ledger charges what they send to them, the server never learns who")
    add_ids_flags(q, required=True)
    q.add_argument("--out", required=True, metavar="FILE", help="a new CSV file: id,pseudonym (readable by you only)")
    q.set_defaults(run="budget:cmd_budget_pseudonyms")
