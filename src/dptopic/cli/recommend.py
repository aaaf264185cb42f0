"""``recommend``: which trainer and settings for a guarantee, before any data is touched, and its advice as terminal
text: the trainer for a guarantee, the quality to expect, the documents for useful topics, and the ``dptopic train``
line that trains it (:func:`dptopic.advice.recommend`'s figures)."""
from __future__ import annotations

import json

from .. import advice
from ..accounting.units import TRAIN_DELTA
from ..advice import (
    BELOW_PUBLIC,
    LARGE_DELTA,
    MAX_DOCS,
    MEASURE_NAMES,
    PUBLIC_WORDS,
    docs_needed_text,
    epsilon_for_useful,
    forecast_inputs,
    large_delta,
    range_text,
    suggested_delta,
    supported_note,
    useful_threshold,
    verdict,
)
from ..models.registry import for_unit_trainer, train_refusal_error
from ..reporting.terminal import esc, make_console, plural
from ..service.startup import SECURE_SUM_PEOPLE
from ._flags import WARNING_FLAGS, flag_errors
from ._trainers import trainer_flag

ADVICE_FLAGS = {**WARNING_FLAGS, "unit": "--unit", "epsilon": "--epsilon", "delta": "--delta",
                **{p: trainer_flag(for_unit_trainer("document").name, p)
                   for p in ("recovery", "background_share", "word_choice", "public_vectors")}}
"""The flags of the parameters the advice's notes and verdict name (:class:`~dptopic.errors.ParameterText`), as
``dptopic train`` and ``recommend`` set them (the options of the document unit's trainer, which the notes advise on):
a note is written in these, never reworded here."""


def in_flags(text) -> str:
    """A note or verdict of the advice in the command line's flags (text that names no parameter as it came)."""
    return text.message(ADVICE_FLAGS) if hasattr(text, "message") else str(text)


def cmd_recommend(a):
    with flag_errors({"n_docs": "--docs", "n_topics": "--topics", "epsilon": "--epsilon", "doc_length": "--doc-length",
                      "delta": "--delta"}):
        rec = advice.recommend(a.unit, a.epsilon, a.docs, a.topics, doc_length=a.doc_length, delta=a.delta)
    epsilon_for_useful(rec)     # the other way to useful topics than more documents, said beside them
    if a.json:
        print(json.dumps({**rec.to_dict(), "notes": [in_flags(n) for n in rec.notes]}, indent=2))
        return
    con = make_console()
    print_recommendation(rec, con, unit=a.unit, epsilon=a.epsilon, docs=a.docs, topics=a.topics, delta=a.delta)
    if rec.trainer is None:
        return
    if a.unit == "user":        # no trusted server: the secure sum (docs/secure_sum.md)
        con.print(f"- {secure_sum_note(a.docs)}")
    con.print(f"[dim]source: {esc(rec.source)}; see docs/choosing_a_guarantee.md[/]", markup=True)


def secure_sum_note(people: int) -> str:
    """``dptopic recommend --unit user``'s line on the secure sum for a corpus of ``people`` people."""
    if people >= SECURE_SUM_PEOPLE:
        return (f"no server you may trust with the text? With {people:,} people, a secure sum gives the same guarantee"
                " without one, with topics close to this trainer's: dptopic serve --report-kind secure-sum --unit user"
                " (each person runs dptopic submit; docs/secure_sum.md)")
    return (f"no server you may trust with the text? A secure sum (dptopic serve --report-kind secure-sum) needs"
            f" thousands of people to give useful topics; it was measured from {SECURE_SUM_PEOPLE:,}"
            " (docs/secure_sum.md)")


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
            console.print(f"- {in_flags(n)}")
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
              + f"  -> {in_flags(verdict(rec))}")
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
        short = rec.docs_for_useful_above is not None
        console.print(f"{counted} for useful topics ({useful}) at this epsilon:"
                  f" {docs_needed_text(rec)}" + (
                      f" (not {rec.n_docs:,}, by the forecast above; some corpora were already useful at the"
                      f" smallest setting measured, and no corpus of fewer than {rec.smallest_measured_docs:,}"
                      " documents was measured)" if short and
                      rec.docs_for_useful_bound == "at most" and rec.docs_for_useful > rec.n_docs else
                      f" (on some measured corpus the smallest setting measured was already useful, so fewer may"
                      f" do{smallest})" if rec.docs_for_useful_bound == "at most" and not short else ""))
    elif rec.docs_for_useful_beyond:
        useful = f"{MEASURE_NAMES[rec.headline]} >= {useful_threshold(rec.headline):.0%}"
        console.print(f"{counted} for useful topics ({useful}) at this epsilon:"
                  f" more than {MAX_DOCS:,}")
    if rec.epsilon_for_useful is not None:
        console.print(what_to_do(rec, counted))
    for alt in rec.alternatives:
        side = "at most " if alt.get("extrapolated_side") == "below" else ""     # as the headline's
        console.print(f"  alternative: {alt['trainer']} ({side}{alt['expected_share']:.0%})")
    delta_flag = "" if delta == TRAIN_DELTA else f" --delta {delta:g}"
    # the rule dptopic train --unit and dptopic.for_unit refuse by (registry.train_refusal), in recommend's flags
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
        console.print(f"- {in_flags(n)}")


def what_to_do(rec, counted: str) -> str:
    """The line that says how to get useful topics where the forecast at these settings does not promise them: more
    of what ``--docs`` counts (the line above), or the smallest epsilon whose forecast for this many is useful."""
    more = f"more {counted}" + (" (above)" if rec.docs_for_useful is not None or rec.docs_for_useful_beyond else "")
    return (f"to get useful topics: {more}, or a larger budget: at epsilon {rec.epsilon_for_useful:g} the same"
            f" forecast for {rec.n_docs:,} {counted} is useful (dptopic recommend --unit {rec.unit} --epsilon"
            f" {rec.epsilon_for_useful:g} --docs {rec.n_docs} --topics {rec.n_topics}); a larger epsilon is a weaker"
            " guarantee (docs/choosing_a_guarantee.md)")


