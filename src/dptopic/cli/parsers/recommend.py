"""``recommend``'s parser (run by cli/recommend.py)."""
from __future__ import annotations

import argparse
import math

from .._common import positive_float, positive_int, unit_interval


def _doc_count(s: str) -> int:
    """A positive whole number of documents, also written as ``1e6`` (an estimate is often given so)."""
    try:
        return positive_int(s)
    except argparse.ArgumentTypeError:
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{s!r} is not a number of documents") from None
        if not math.isfinite(v) or v != int(v) or v < 1:
            raise argparse.ArgumentTypeError(f"must be a whole number of documents >= 1, got {s}") from None
        return int(v)


def register(sub) -> None:
    p = sub.add_parser("recommend", help="which trainer and settings for a guarantee, the topic coverage and downstream"
                                          " accuracy to expect and how many topics the budget supports (reads no data)")
    p.add_argument("--unit", default="document", choices=("document", "user", "word"),
                   help="what one person's change is (default document; user: all of one person's documents, and"
                        " --docs counts people)")
    p.add_argument("--epsilon", type=positive_float, required=True,
                   help="the privacy budget, > 0 (dptopic train takes up to 500 per document; per word, what the word-level"
                        " trainer's iterations can spend: 25,500 over its 50)")
    p.add_argument("--docs", type=_doc_count, required=True,
                   help="about how many documents the corpus has (at most 1e12); with --unit user, how many people")
    p.add_argument("--topics", type=positive_int, default=20,
                   help="number of topics (default 20; train takes up to 100,000)")
    p.add_argument("--delta", type=unit_interval, default=1e-5,
                   help="the delta you will train with, in (0, 1) (default 1e-5, as dptopic train; warned about from"
                        " 1/--docs or 1e-3 on)")
    p.add_argument("--doc-length", type=positive_float, default=None,
                   help="typical words per document, > 0: document and user level, reads the utility table by length"
                        " (default: the median over the measured corpora, as dptopic train's forecast, which reads no"
                        " length from the private corpus); word level, a document of L words has L x epsilon"
                        " (default 100)")
    p.add_argument("--json", action="store_true", help="print the advice as JSON")
    p.set_defaults(run="recommend:cmd_recommend")
