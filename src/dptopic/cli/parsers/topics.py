"""``topics``'s parser (run by cli/topics.py)."""
from __future__ import annotations

import argparse

from .._common import (
    add_corpus_args,
    add_model_arg,
    positive_int,
    seed_int,
)

MAX_WINDOW = 10**9              # evaluate --window: far beyond any document, still a machine integer


def _window_int(s: str) -> int:
    """``evaluate --window``: an integer in [1, MAX_WINDOW] (a larger one overflows the coherence kernel)."""
    v = positive_int(s)
    if v > MAX_WINDOW:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WINDOW} tokens (a window longer than every document"
                                         f" is the same as one of {MAX_WINDOW}), got {s}")
    return v


def register(sub) -> None:
    e = sub.add_parser("evaluate", help="perplexity and coherence of a saved model on a corpus")
    add_model_arg(e)
    add_corpus_args(e, required=True, preprocessing=False)  # read in the model's own vocabulary: nothing to choose
    e.add_argument("--mode", choices=("paper", "completion"), default="completion",
                   help="perplexity: document completion (default) or the paper's mode / the variational bound")
    e.add_argument("--top-n", "--top", "-n", dest="top_n", type=positive_int, default=10,
                   help="top words per topic for coherence (default 10; also spelt --top or -n)")
    e.add_argument("--window", type=_window_int, default=None,
                   help="NPMI over sliding windows of this many tokens, at most 10**9 (default: boolean documents)")
    e.add_argument("--reference-public", "--corpus-public", dest="corpus_public", action="store_true",
                   help="--corpus is a public corpus (as for 'dptopic report --reference-public'; also spelt"
                        " --corpus-public): a private model's figures on it are then not labelled outside the"
                        " guarantee")
    e.add_argument("--json", action="store_true", help="print the figures as JSON")
    e.add_argument("--seed", type=seed_int, default=0,  # seed-not-private
                   help="seed of the fold-in sampling (default 0, as the Python API, so that the same model and file"
                        " give the same figures; it adds no privacy noise)")
    e.add_argument("--compare-to", metavar="MODEL", default=None,
                   help="also print how close the topics are to another saved model's (for instance one trained"
                        " without privacy, or on public documents of the domain): NPMI alone cannot tell a corpus's"
                        " own topics from general-language ones")
    e.set_defaults(run="topics:cmd_evaluate")

    tp = sub.add_parser("topics", help="show a saved model's topics and privacy report")
    add_model_arg(tp)
    tp.add_argument("-n", "--top-n", "--top", dest="n", type=positive_int, default=10,
                    help="words per topic (default 10; -n, --top-n and --top are one flag, as in evaluate and report)")
    tp.add_argument("--format", choices=("table", "json", "csv"), default="table",
                    help="table (with the privacy report; the default), json (topics, weights and the privacy card) or csv")
    tp.add_argument("--show-unsupported", action="store_true",
                    help="document-level private models: also show the words of the topics that do not stand above"
                         " the noise of the release (hidden by default: they are mostly noise)")
    tp.set_defaults(run="topics:cmd_topics")
