"""``recommend``: which trainer and settings for a guarantee, before any data is touched."""
from __future__ import annotations

import argparse
import json
import math

from ._common import make_console, positive_float, positive_int, unit_interval
from ._flags import flag_errors
from .local import plural


def cmd_recommend(a):
    from ..advice import (BELOW_PUBLIC, LARGE_DELTA, MAX_DOCS, MEASURE_NAMES, PUBLIC_WORDS, TRAIN_DELTA,  # read on use: the CLI's start-up stays light
                          docs_needed_text, forecast_inputs, supported_note, large_delta, suggested_delta,
                          range_text, recommend, train_refusal_error, useful_threshold, verdict)

    with flag_errors({"n_docs": "--docs", "n_topics": "--topics", "epsilon": "--epsilon", "doc_length": "--doc-length",
                      "delta": "--delta"}):
        rec = recommend(a.unit, a.epsilon, a.docs, a.topics, doc_length=a.doc_length, delta=a.delta)
    if a.json:
        print(json.dumps(rec.to_dict(), indent=2))
        return
    con = make_console()
    counted = plural(a.docs, "person") if a.unit == "user" else plural(a.docs, "document")
    if a.unit == "user":
        counted = counted.replace("persons", "people")
    con.print(f"[bold]{a.unit}-level DP, epsilon = {a.epsilon:g}, {counted},"
              f" {plural(a.topics, 'topic')}[/]"
              " (this advice reads no data and costs no privacy)")
    # the inputs named as dptopic train's warning names them: the same forecast (advice.recommend)
    con.print(forecast_inputs(rec, "people" if a.unit == "user" else "documents"))
    if rec.trainer is None:
        for n in rec.notes:
            con.print(f"- {n}")
        return
    settings = ", ".join(f"{k}={v}" for k, v in rec.settings.items())
    con.print(f"trainer: [bold]{rec.trainer}[/]" + (f" with {settings} (its defaults)" if settings else ""))
    lo, hi = rec.expected_range or (rec.expected_share, rec.expected_share)
    span = range_text(lo, hi, list(rec.per_corpus))
    # above a corpus's measured range its figure is a lower bound for that corpus only: the range over the corpora is
    # what another corpus may get (no "at least")
    bound = "at most " if rec.extrapolated_side == "below" else ""
    what = {"coverage_share": "topic coverage", "npmi_ratio": "NPMI"}[rec.headline]
    public = (f" ({BELOW_PUBLIC}: {rec.public_floor['coverage_share']:.0%})"
              if "coverage_share" in rec.below_public and rec.headline == "coverage_share" else "")
    con.print(f"expected {what}, as a share of non-private LDA's: {bound}{rec.expected_share:.0%}{span}{public}"
              + (" (outside some corpus's measured range: see below)" if rec.extrapolated else "")
              + f"  -> {verdict(rec)}")
    if rec.headline == "coverage_share" and rec.expected_accuracy_share is not None:
        public = (f" ({BELOW_PUBLIC}: {rec.public_floor['accuracy_share']:.0%})"
                  if "accuracy_share" in rec.below_public else "")
        acc_span = range_text(*(rec.expected_accuracy_range or [0, 0]), list(rec.per_corpus))
        con.print(f"expected downstream accuracy, as a share of non-private LDA's: {bound}"
                  f"{rec.expected_accuracy_share:.0%}{acc_span}{public}")
        columns = [f"{MEASURE_NAMES[k]} {getattr(rec, f'expected_{k}'):.0%}" for k in ("macro_f1_share", "npmi_ratio")
                   if getattr(rec, f"expected_{k}") is not None]
        if columns:
            con.print(f"beside them: {', '.join(columns)}")
    if rec.supported_topics is not None:
        con.print(f"topics the budget supports: {supported_note(rec)[len('the budget supports '):]}")
    if rec.docs_for_useful is not None:
        smallest = (f"; no corpus of fewer than {rec.smallest_measured_docs:,} documents was measured"
                    if rec.docs_for_useful == rec.smallest_measured_docs else "")
        useful = f"{MEASURE_NAMES[rec.headline]} >= {useful_threshold(rec.headline):.0%}"
        con.print(f"documents for useful topics ({useful}) at this epsilon:"
                  f" {docs_needed_text(rec)}" + (f" (on some measured corpus the smallest setting measured was already"
                                                   f" useful, so fewer may do{smallest})"
                                                 if rec.docs_for_useful_bound == "at most" else ""))
    elif rec.docs_for_useful_beyond:
        useful = f"{MEASURE_NAMES[rec.headline]} >= {useful_threshold(rec.headline):.0%}"
        con.print(f"documents for useful topics ({useful}) at this epsilon:"
                  f" more than {MAX_DOCS:,}")
    for alt in rec.alternatives:
        side = "at most " if alt.get("extrapolated_side") == "below" else ""     # as the headline's
        con.print(f"  alternative: {alt['trainer']} ({side}{alt['expected_share']:.0%})")
    delta_flag = "" if a.delta == TRAIN_DELTA else f" --delta {a.delta:g}"
    # the rule dptopic train --unit and dptopic.for_unit refuse by (advice.train_refusal), in recommend's flags
    refusal = train_refusal_error(a.unit, a.epsilon, a.topics, a.delta)
    refusal = "" if refusal is None else refusal.message({"epsilon": "--epsilon", "n_topics": "--topics",
                                                          "delta": "--delta", "n_iter": "--iterations"})
    if refusal:
        con.print(f"train it: not at these settings: dptopic train --unit {a.unit} refuses them ({refusal.rstrip('.')})")
    elif a.delta > LARGE_DELTA:             # too large for any corpus: no command
        con.print(f"train it: not with --delta {a.delta:g}, too large for {plural(a.docs, 'document')} (see below):"
                  f" give a delta well below 1/{a.docs:,}")
    elif large_delta(a.delta, a.docs):      # train's own default is too large for this many documents: a smaller one
        given = "the default delta" if a.delta == TRAIN_DELTA else f"--delta {a.delta:g}"
        con.print(f"train it: dptopic train --unit {a.unit} --epsilon {a.epsilon:g} --delta"
                  f" {suggested_delta(a.docs):g} --topics {a.topics} --corpus FILE --vocabulary {PUBLIC_WORDS}"
                  f" ({given} is not below 1/{a.docs:,}: see below)")
    else:
        con.print(f"train it: dptopic train --unit {a.unit} --epsilon {a.epsilon:g}{delta_flag} --topics {a.topics}"
                  f" --corpus FILE --vocabulary {PUBLIC_WORDS}"
                  + (" --user-field FIELD (or a folder of folders, one per person)" if a.unit == "user" else ""))
    for n in rec.notes:
        con.print(f"- {n}")
    if a.unit == "user":        # no trusted server: the secure sum (docs/secure_sum.md)
        from .secure_sum import recommend_note  # read on use: the CLI's start-up stays light

        con.print(f"- {recommend_note(a.docs)}")
    con.print(f"[dim]source: {rec.source}; see docs/choosing_a_guarantee.md[/]")


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
    p.set_defaults(func=cmd_recommend)
