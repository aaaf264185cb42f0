"""``report``'s parser (run by cli/report.py)."""
from __future__ import annotations

from .._common import add_model_arg, positive_int
from .._flags import add_reading_args


def register(sub) -> None:
    p = sub.add_parser("report", help="one self-contained HTML report: topics, evaluation, privacy card, audit")
    add_model_arg(p)
    p.add_argument("--out", required=True, help="the .html file to write (a new file, or a report with --overwrite)")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it is a dptopic report")
    p.add_argument("--reference", default=None, metavar="CORPUS",
                   help="documents for NPMI, C_v, diversity and perplexity, read in the model's vocabulary (held-out"
                        " or public documents of the domain: the page cannot tell whether they were held out of"
                        " training, so it says 'perplexity on the reference corpus')")
    p.add_argument("--reference-public", action="store_true",
                   help="the reference corpus is public (else its figures are labelled outside the guarantee)")
    add_reading_args(p, "--reference")
    p.add_argument("--compare-to", default=None, metavar="MODEL",
                   help="also report how close the topics are to another saved model's (one trained without privacy"
                        " on public documents of the domain, say): NPMI alone cannot tell a corpus's own topics from"
                        " general-language ones")
    p.add_argument("--audit", default=None, metavar="DIR", help="the folder 'dptopic audit --out' wrote for this model")
    p.add_argument("--top", "--top-n", "-n", dest="top", type=positive_int, default=10,
                   help="words shown per topic (default 10; also spelt --top-n or -n)")
    p.add_argument("--show-unsupported", action="store_true",
                   help="document-level private models: also show the words of the topics that do not stand above"
                        " the noise of the release (their cards show none by default: they are mostly noise)")
    p.add_argument("--title", default=None, help="the page title")
    p.set_defaults(run="report:cmd_report")
