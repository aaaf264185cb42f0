"""``dptopic recommend``'s advice as terminal text: the trainer for a guarantee, the quality to expect, the documents
for useful topics, and the ``dptopic train`` line that trains it (:func:`dptopic.advice.recommend`'s figures)."""
from __future__ import annotations

from ..advice import (
    BELOW_PUBLIC,
    LARGE_DELTA,
    MAX_DOCS,
    MEASURE_NAMES,
    PUBLIC_WORDS,
    TRAIN_DELTA,
    docs_needed_text,
    forecast_inputs,
    large_delta,
    range_text,
    suggested_delta,
    supported_note,
    train_refusal_error,
    useful_threshold,
    verdict,
)
from .terminal import esc, plural


def print_recommendation(rec, console, *, unit: str, epsilon: float, docs: int, topics: int, delta: float) -> None:
    """Print ``rec`` (:func:`dptopic.advice.recommend`'s, for these settings) for a reader at a terminal; the last
    lines (each note) follow it. Reads no data."""
    counted = plural(docs, "person") if unit == "user" else plural(docs, "document")
    if unit == "user":
        counted = counted.replace("persons", "people")
    console.print(f"[bold]{unit}-level DP, epsilon = {epsilon:g}, {counted},"
                  f" {plural(topics, 'topic')}[/]"
                  " (this advice reads no data and costs no privacy)", markup=True)
    # the inputs named as dptopic train's warning names them: the same forecast (advice.recommend)
    console.print(forecast_inputs(rec, "people" if unit == "user" else "documents"))
    if rec.trainer is None:
        for n in rec.notes:
            console.print(f"- {n}")
        return
    settings = ", ".join(f"{k}={v}" for k, v in rec.settings.items())
    console.print(f"trainer: [bold]{esc(rec.trainer)}[/]" + (f" with {esc(settings)} (its defaults)" if settings else ""),
                  markup=True)
    lo, hi = rec.expected_range or (rec.expected_share, rec.expected_share)
    span = range_text(lo, hi, list(rec.per_corpus))
    # above a corpus's measured range its figure is a lower bound for that corpus only: the range over the corpora is
    # what another corpus may get (no "at least")
    bound = "at most " if rec.extrapolated_side == "below" else ""
    what = {"coverage_share": "topic coverage", "npmi_ratio": "NPMI"}[rec.headline]
    public = (f" ({BELOW_PUBLIC}: {rec.public_floor['coverage_share']:.0%})"
              if "coverage_share" in rec.below_public and rec.headline == "coverage_share" else "")
    console.print(f"expected {what}, as a share of non-private LDA's: {bound}{rec.expected_share:.0%}{span}{public}"
              + (" (outside some corpus's measured range: see below)" if rec.extrapolated else "")
              + f"  -> {verdict(rec)}")
    if rec.headline == "coverage_share" and rec.expected_accuracy_share is not None:
        public = (f" ({BELOW_PUBLIC}: {rec.public_floor['accuracy_share']:.0%})"
                  if "accuracy_share" in rec.below_public else "")
        acc_span = range_text(*(rec.expected_accuracy_range or [0, 0]), list(rec.per_corpus))
        console.print(f"expected downstream accuracy, as a share of non-private LDA's: {bound}"
                  f"{rec.expected_accuracy_share:.0%}{acc_span}{public}")
        columns = [f"{MEASURE_NAMES[k]} {getattr(rec, f'expected_{k}'):.0%}" for k in ("macro_f1_share", "npmi_ratio")
                   if getattr(rec, f"expected_{k}") is not None]
        if columns:
            console.print(f"beside them: {', '.join(columns)}")
    if rec.supported_topics is not None:
        console.print(f"topics the budget supports: {supported_note(rec)[len('the budget supports '):]}")
    counted = "people" if unit == "user" else "documents"
    if rec.docs_for_useful is not None:
        smallest = (f"; no corpus of fewer than {rec.smallest_measured_docs:,} documents was measured"
                    + (" (read as people)" if unit == "user" else "")
                    if rec.docs_for_useful == rec.smallest_measured_docs else "")
        useful = f"{MEASURE_NAMES[rec.headline]} >= {useful_threshold(rec.headline):.0%}"
        console.print(f"{counted} for useful topics ({useful}) at this epsilon:"
                  f" {docs_needed_text(rec)}" + (f" (on some measured corpus the smallest setting measured was already"
                                                   f" useful, so fewer may do{smallest})"
                                                 if rec.docs_for_useful_bound == "at most" else ""))
    elif rec.docs_for_useful_beyond:
        useful = f"{MEASURE_NAMES[rec.headline]} >= {useful_threshold(rec.headline):.0%}"
        console.print(f"{counted} for useful topics ({useful}) at this epsilon:"
                  f" more than {MAX_DOCS:,}")
    for alt in rec.alternatives:
        side = "at most " if alt.get("extrapolated_side") == "below" else ""     # as the headline's
        console.print(f"  alternative: {alt['trainer']} ({side}{alt['expected_share']:.0%})")
    delta_flag = "" if delta == TRAIN_DELTA else f" --delta {delta:g}"
    # the rule dptopic train --unit and dptopic.for_unit refuse by (advice.train_refusal), in recommend's flags
    refusal = train_refusal_error(unit, epsilon, topics, delta)
    refusal = "" if refusal is None else refusal.message({"epsilon": "--epsilon", "n_topics": "--topics",
                                                          "delta": "--delta", "n_iter": "--iterations"})
    if refusal:
        console.print(f"train it: not at these settings: dptopic train --unit {unit} refuses them ({refusal.rstrip('.')})")
    elif delta > LARGE_DELTA:             # too large for any corpus: no command
        many = plural(docs, "person", "people") if unit == "user" else plural(docs, "document")
        console.print(f"train it: not with --delta {delta:g}, too large for {many} (see below):"
                  f" give a delta well below 1/{docs:,}")
    elif large_delta(delta, docs):      # train's own default is too large for this many documents: a smaller one
        given = "the default delta" if delta == TRAIN_DELTA else f"--delta {delta:g}"
        console.print(f"train it: dptopic train --unit {unit} --epsilon {epsilon:g} --delta"
                  f" {suggested_delta(docs):g} --topics {topics} --corpus FILE --vocabulary {PUBLIC_WORDS}"
                  f" ({given} is not below 1/{docs:,}: see below)")
    else:
        console.print(f"train it: dptopic train --unit {unit} --epsilon {epsilon:g}{delta_flag} --topics {topics}"
                  f" --corpus FILE --vocabulary {PUBLIC_WORDS}"
                  + (" --user-field FIELD (or a folder of folders, one per person)" if unit == "user" else ""))
    for n in rec.notes:
        console.print(f"- {n}")
