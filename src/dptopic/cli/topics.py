"""``evaluate`` and ``topics``: a saved model's figures on a corpus, its topics and privacy card."""
from __future__ import annotations

import argparse
import json
import sys

from ..reporting.quality import print_quality
from ..reporting.terminal import make_console, print_privacy, print_topics
from ._common import add_corpus_args, add_model_arg, load_corpus, positive_int, refuse_show_unsupported, seed_int
from ._flags import with_flag_names

MAX_WINDOW = 10**9              # evaluate --window: far beyond any document, still a machine integer


def _window_int(s: str) -> int:
    """``evaluate --window``: an integer in [1, MAX_WINDOW] (a larger one overflows the coherence kernel)."""

    v = positive_int(s)
    if v > MAX_WINDOW:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_WINDOW} tokens (a window longer than every document"
                                         f" is the same as one of {MAX_WINDOW}), got {s}")
    return v


@with_flag_names({"top_n": "--top-n", "window": "--window", "seed": "--seed", "mode": "--mode"})
def cmd_evaluate(a):
    from ..models import load  # loads numba/numpy: not at the CLI's start-up
    from ..reporting.page import evaluation_figures  # as above

    model = load(a.model)
    # the model's vocabulary, never one built from the test file (its words outside a top-N cut would vanish); text is
    # only tokenised, with the vocabulary's own case (docs/preprocessing.md)
    corpus = load_corpus(a.corpus, a.format, a.vocab, a.text_field, None, vocabulary=model.vocabulary_, into_model=True,
                         tokenizer=getattr(model, "tokenizer_", None))
    # a private model's figures on the documents of --corpus lie outside its guarantee unless that corpus is public
    # (--reference-public, as for report)
    q = evaluation_figures(model, corpus, top_n=a.top_n, window=a.window, mode=a.mode, seed=a.seed,
                           reference_name=str(a.corpus), compare=None if a.compare_to is None else load(a.compare_to),
                           compare_name=a.compare_to, corpus_public=a.corpus_public)
    if a.json:
        print(json.dumps(q, indent=2))
        return
    print_quality(q, make_console(), top_n=min(a.top_n, len(model.vocabulary_)), asked_top_n=a.top_n,
                  vocab_size=len(model.vocabulary_), mode=a.mode, compare_to=a.compare_to,
                  umass_defined=hasattr(model, "coherence"), private="note" in q)


def cmd_topics(a):
    from ..models import load  # loads numba/numpy: not at the CLI's start-up

    model = load(a.model)
    if a.show_unsupported:
        refuse_show_unsupported(model, a.model)
    if a.format == "table":
        print_topics(model, a.n, show_unsupported=a.show_unsupported)
        print_privacy(model.privacy_)
        return
    from ..reporting.export import topics_csv, topics_document  # loads numpy: not at the CLI's start-up

    if a.format == "json":
        print(json.dumps(topics_document(model, a.n, a.model, a.show_unsupported), indent=2))
        return
    table, notes = topics_csv(model, a.n, a.model, a.show_unsupported)
    for line in notes:
        print(line, file=sys.stderr)
    print(table, end="")


def privacy_card_line(model, path) -> str:
    """One line pointing a CSV's reader to the model's privacy card
    (:func:`dptopic.reporting.export.privacy_card_line`)."""
    from ..reporting.export import privacy_card_line as line  # loads numpy: not at the CLI's start-up

    return line(model, path)


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
    e.set_defaults(func=cmd_evaluate)

    tp = sub.add_parser("topics", help="show a saved model's topics and privacy report")
    add_model_arg(tp)
    tp.add_argument("-n", "--top-n", "--top", dest="n", type=positive_int, default=10,
                    help="words per topic (default 10; -n, --top-n and --top are one flag, as in evaluate and report)")
    tp.add_argument("--format", choices=("table", "json", "csv"), default="table",
                    help="table (with the privacy report; the default), json (topics, weights and the privacy card) or csv")
    tp.add_argument("--show-unsupported", action="store_true",
                    help="document-level private models: also show the words of the topics that do not stand above"
                         " the noise of the release (hidden by default: they are mostly noise)")
    tp.set_defaults(func=cmd_topics)
