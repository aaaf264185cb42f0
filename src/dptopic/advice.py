"""Advice before any data is touched: which trainer and settings for a unit, a budget and a corpus size, and the
topic quality to expect, read from the utility table that ``benchmarks/bench_utility.py`` measured on public
corpora (20 Newsgroups and the State of the Union paragraphs).

How the table is used: for a fixed trainer, K and document length, the signal of a document-level release grows
with the number of documents D and its noise falls with epsilon, so utility is read as a function of ``epsilon * D``
(the product that sets the signal-to-noise ratio of a sum of D bounded contributions under noise of scale
1/epsilon). Each trainer's measured NPMI ratios (to non-private CGS on the same corpus and vocabulary) are
interpolated in ``log(epsilon * D)``, monotonically, *one corpus at a time*: ``epsilon * D`` does not carry over
exactly between corpora (20 Newsgroups at epsilon 1 with 11,287 documents scores below its own first 5,000
documents at epsilon 2), so pooling the corpora into one curve would report the most favourable corpus. The
answer is the median over the corpora whose measured range covers ``epsilon * D``, with their range beside it;
when none covers it, the nearest end of each corpus's curve is used and the answer says it is an extrapolation.
Nothing here reads the user's data: the answer is free of privacy cost.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .errors import DPTopicError

TABLE = Path(__file__).with_name("utility_table.json")
USEFUL_RATIO = 0.6
"""The NPMI ratio (to non-private CGS) from which we call topics useful."""


def load_table(path=None) -> dict:
    p = Path(path) if path is not None else TABLE
    try:
        doc = json.loads(p.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise DPTopicError(f"cannot read the utility table {str(p)!r} ({type(e).__name__}); re-create it with"
                           f" 'python benchmarks/bench_utility.py --write-table'.") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise DPTopicError(f"the utility table {str(p)!r} has no 'rows' list; re-create it with bench_utility.py.")
    return doc


@dataclass
class Recommendation:
    unit: str
    epsilon: float
    n_docs: int
    n_topics: int
    trainer: str | None
    settings: dict = field(default_factory=dict)
    expected_npmi_ratio: float | None = None
    expected_range: list | None = None
    """[lowest, highest] of the per-corpus predictions behind ``expected_npmi_ratio`` (their median)."""
    per_corpus: dict = field(default_factory=dict)
    extrapolated: bool = False
    extrapolated_side: str | None = None
    """``"below"`` (the figure is an upper bound) or ``"above"`` (a lower bound) the measured range."""
    docs_for_useful: int | None = None
    docs_for_useful_bound: str | None = None
    """``"at most"`` when even the smallest measured setting was useful (the true threshold lies below it)."""
    smallest_measured_docs: int | None = None
    """The fewest documents of any corpus measured: ``docs_for_useful`` never goes below it, since the table says
    nothing of smaller corpora."""
    alternatives: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    source: str = ""

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def _curve(rows):
    """(log(eps*D), median ratio) points of one trainer, sorted, made non-decreasing (more budget never hurts)."""
    pts = sorted((math.log(r["epsilon"] * r["n_docs"]), float(r["npmi_ratio"])) for r in rows)
    x = np.array([p[0] for p in pts])
    y = np.maximum.accumulate(np.array([p[1] for p in pts]))
    return x, y


def _predict(x, y, q) -> tuple[float, bool]:
    return float(np.interp(q, x, y)), bool(q < x[0] or q > x[-1])


def _trainer_prediction(rows, q, epsilon):
    """One trainer: per-corpus predictions at ``q = log(eps * D)``; returns (median, [min, max], per corpus,
    extrapolated, documents needed for a useful ratio (median over the corpora, None when most never get there),
    the settings measured nearest to ``q``)."""
    by_corpus: dict = {}
    for r in rows:
        by_corpus.setdefault(r.get("corpus"), []).append(r)
    preds = {}
    for corpus, rs in by_corpus.items():
        x, y = _curve(rs)
        ratio, extra = _predict(x, y, q)
        preds[corpus] = (ratio, extra, _docs_needed(x, y, epsilon, USEFUL_RATIO))
    covering = [c for c, p in preds.items() if not p[1]]
    used = covering or list(preds)
    ratios = [preds[c][0] for c in used]
    needed = sorted((math.inf, False) if preds[c][2] is None else preds[c][2] for c in preds)
    middle = needed[(len(needed) - 1) // 2: len(needed) // 2 + 1]          # one element, or the two middle ones
    mid_needed = float(np.mean([d for d, _ in middle]))
    at_most = any(bound for _, bound in middle)
    near = min(rows, key=lambda r: abs(math.log(r["epsilon"] * r["n_docs"]) - q))
    return (float(np.median(ratios)), [min(ratios), max(ratios)],
            {str(c): round(preds[c][0], 3) for c in used if c is not None}, not covering,
            None if math.isinf(mid_needed) else (int(math.ceil(mid_needed)), at_most), near.get("settings", {}))


def _docs_needed(x, y, epsilon, target) -> tuple[int, bool] | None:
    """Smallest D with predicted ratio >= target at ``epsilon``, and whether that is only an upper bound (the
    smallest measured setting already reaches it); None when no measured point reaches it."""
    ok = np.flatnonzero(y >= target)
    if not len(ok):
        return None
    i = ok[0]
    q = x[i] if i == 0 else x[i - 1] + (target - y[i - 1]) * (x[i] - x[i - 1]) / max(y[i] - y[i - 1], 1e-12)
    return int(math.ceil(math.exp(q) / epsilon)), bool(i == 0)


def recommend(unit: str = "document", epsilon: float = 1.0, n_docs: int = 10_000, n_topics: int = 20,
              doc_length: float | None = None, table=None) -> Recommendation:
    """Which trainer to use for ``unit`` ("document" or "word") at ``epsilon`` on a corpus of ``n_docs``
    documents, and the NPMI ratio to expect. Reads no data."""
    if unit not in ("document", "word"):
        raise DPTopicError(f"invalid unit {unit!r}: give 'document' or 'word'.")
    for name, v, lo in (("epsilon", epsilon, 0.0), ("n_docs", n_docs, 0), ("n_topics", n_topics, 0)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= lo:
            raise DPTopicError(f"invalid {name}={v!r}: give a finite number > {lo:g}.")
    doc = table if isinstance(table, dict) else load_table(table)
    rows = [r for r in doc["rows"] if r.get("unit") == unit and r.get("trainer")]
    rec = Recommendation(unit, float(epsilon), int(n_docs), int(n_topics), None, source=doc.get("source", ""))
    if not rows:
        rec.notes.append(f"the utility table has no {unit}-level measurements yet.")
        return rec
    lowest_eps = min(float(r["epsilon"]) for r in rows)
    if unit == "word" and epsilon < lowest_eps:
        # the word-level trainers cannot run at all below their inherent cost: no figure to extrapolate to
        rec.notes.append(f"no word-level trainer runs at epsilon {epsilon:g} per word: HDPLDA's inherent part alone costs"
                         f" epsilon_inherent (10) per iteration, and the smallest budget measured is {lowest_eps:g}"
                         " (50 iterations). Word-level guarantees are stated in the hundreds per word"
                         " (docs/choosing_a_guarantee.md); at this budget state a document-level guarantee instead"
                         " (dptopic recommend --unit document).")
        return rec
    q = math.log(epsilon * n_docs)
    by_trainer: dict = {}
    for r in rows:
        by_trainer.setdefault(r["trainer"], []).append(r)
    scored = []
    for name, rs in by_trainer.items():
        ratio, span, per, extra, needed, settings = _trainer_prediction(rs, q, epsilon)
        scored.append((ratio, name, extra, settings, needed, span, per))
    scored.sort(key=lambda s: -s[0])
    best = scored[0]
    rec.trainer, rec.expected_npmi_ratio, rec.extrapolated, rec.settings = best[1], round(best[0], 3), best[2], dict(best[3])
    rec.expected_range, rec.per_corpus = [round(v, 3) for v in best[5]], best[6]
    needed = [s[4] for s in scored if s[4] is not None]
    rec.smallest_measured_docs = min(int(r["n_docs"]) for r in rows)
    if needed:                                              # with whichever trainer gets there first
        rec.docs_for_useful, at_most = min(needed)
        if rec.docs_for_useful < rec.smallest_measured_docs:  # eps x D read beyond the corpora measured: no figure
            rec.docs_for_useful, at_most = rec.smallest_measured_docs, True
        rec.docs_for_useful_bound = "at most" if at_most else None
    rec.alternatives = [{"trainer": s[1], "expected_npmi_ratio": round(s[0], 3)} for s in scored[1:]]
    if len(best[6]) > 1:
        rec.notes.append("the expected ratio is the median over the measured corpora ("
                         + ", ".join(f"{c} {v:.0%}" for c, v in best[6].items())
                         + "); the same budget and size gave different ratios on different corpora.")
    tested = sorted({r["n_topics"] for r in rows if "n_topics" in r})
    if tested and n_topics not in tested:
        rec.notes.append(f"measured at K = {', '.join(map(str, tested))}; more topics split the same signal, so expect"
                         f" less at K = {n_topics} than the figure above.")
    if rec.extrapolated:
        lowest = min(math.log(r["epsilon"] * r["n_docs"]) for r in by_trainer[rec.trainer])
        rec.extrapolated_side = "below" if q < lowest else "above"
        if q < lowest:
            rec.notes.append(f"epsilon x documents ({epsilon * n_docs:,.0f}) lies below every measured setting (from"
                             f" {math.exp(lowest):,.0f}): the figure is the measured end, an upper bound on what to"
                             " expect; topics from this little signal are likely noise.")
        else:
            rec.notes.append("epsilon x documents lies above the measured range: the figure is the measured end, a"
                             " lower bound on what to expect.")
    if rec.expected_npmi_ratio < USEFUL_RATIO:
        if rec.docs_for_useful is not None:
            rec.notes.append(f"at epsilon = {epsilon:g}, topics become useful (NPMI ratio >= {USEFUL_RATIO}) from"
                             f" {docs_needed_text(rec)} documents.")
        else:
            rec.notes.append(f"no measured setting reaches an NPMI ratio of {USEFUL_RATIO} for {unit}-level DP.")
        if unit == "document":
            rec.notes.append("with fewer documents, a word-level guarantee (dptopic recommend --unit word) protects each"
                             " word rather than each document: a document of L words then has L x epsilon; local DP"
                             " needs far more contributors still (docs/choosing_a_guarantee.md).")
    if rec.trainer == "docdp-cooc":
        rec.notes.append("docdp-cooc sets words in more than 25% of documents aside in background topics by default;"
                         " if the vocabulary keeps many stop-word-like words (no stop list: 'writes', 'don', 'just'),"
                         " --background-share 0.15 (background_share=0.15) sets more aside: on 20 Newsgroups it raised"
                         " the NPMI ratio at epsilon 1 further, but lowered it on a corpus whose frequent words are"
                         " topical (docs/document_dp.md).")
        rec.notes.append("--word-choice repetition (word_choice='repetition') keeps the frequent words that repeat"
                         " within documents: on 20 Newsgroups posts it raised the NPMI ratio from 0.60 to 0.67 at"
                         " epsilon 1 and from 0.69 to 0.99 at epsilon 4, but lowered it on State of the Union"
                         " paragraphs (0.81 to 0.61 at epsilon 1) and, in another run, on Reuters newswire (1.10 to"
                         " 0.52; each pair from one run, the default's ratio moving by about 0.02 between runs);"
                         " decide on a public corpus"
                         " like yours, since trying both on the private one spends the budget twice"
                         " (docs/document_dp.md).")
    if unit == "word":
        L = doc_length or 100
        rec.notes.append(f"word-level: a document of L words is protected with L x epsilon (L = {L:g}: epsilon"
                         f" {L * epsilon:g}).")
    return rec


def docs_needed_text(rec: Recommendation) -> str:
    """``"about 9,370"``, or ``"9,370 or fewer"`` when the smallest measured setting was already useful (the table
    cannot say how far below it the threshold lies)."""
    if rec.docs_for_useful_bound == "at most":
        return f"{rec.docs_for_useful:,} or fewer"
    return f"about {rec.docs_for_useful:,}"


def verdict(rec: Recommendation) -> str:
    """One word on the expected topics: "useful", "NOT useful yet", or "unknown" where the figure is only the
    upper bound read off the measured end (below every measured setting)."""
    if rec.expected_npmi_ratio is None:
        return "unknown"
    if rec.expected_npmi_ratio < USEFUL_RATIO:
        return "NOT useful yet"
    return "unknown (below every measured setting)" if rec.extrapolated_side == "below" else "useful"


def too_small_message(unit: str, epsilon: float, n_docs: int, n_topics: int, table=None) -> str | None:
    """The warning for a corpus too small for useful topics at ``epsilon`` (None when the table expects useful
    topics): the NPMI ratio to expect and the size from which topics become useful, both read from the utility table
    measured on public corpora."""
    rec = recommend(unit, epsilon, max(int(n_docs), 1), n_topics, table=table)
    if rec.expected_npmi_ratio is None or (rec.expected_npmi_ratio >= USEFUL_RATIO
                                            and rec.extrapolated_side != "below"):
        return None             # below every measured setting the figure is only an upper bound: always warn there
    size = f"{int(n_docs):,} documents"
    if rec.expected_npmi_ratio >= USEFUL_RATIO:
        return (f"epsilon {epsilon:g} x {size} lies below every setting measured on public corpora: expect at most"
                f" {rec.expected_npmi_ratio:.0%} of non-private LDA's NPMI, possibly far less (see 'dptopic recommend')."
                " Check the topics before using them.")
    if not rec.docs_for_useful:
        need = "no measured corpus size makes them useful at this epsilon"
    elif rec.docs_for_useful_bound == "at most":     # the threshold lies at or below what was measured
        need = (f"topics are useful by {rec.docs_for_useful:,} documents at this epsilon, perhaps from fewer (the"
                " measurements cannot say how far below)")
    else:
        need = f"topics become useful from {docs_needed_text(rec)} documents at this epsilon"
    ratio = (f"less than {rec.expected_npmi_ratio:.0%} of non-private LDA's NPMI (the figure at the smallest"
             " epsilon x documents measured; fewer documents give less)" if rec.extrapolated_side == "below" else
             f"about {rec.expected_npmi_ratio:.0%} of non-private LDA's NPMI")
    return (f"at epsilon {epsilon:g} and {size} expect topics with {ratio}: {need} (measured on public corpora,"
            " see 'dptopic recommend'). Check the topics before using them.")


def plot_table(path, table=None) -> None:
    """PNG of the measured NPMI ratio against epsilon x documents, one line per (unit, trainer, corpus)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    doc = table if isinstance(table, dict) else load_table(table)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    groups: dict = {}
    for r in doc["rows"]:
        groups.setdefault((r["unit"], r["trainer"], r.get("corpus", "")), []).append(r)
    for (unit, trainer, corpus), rs in sorted(groups.items()):
        rs = sorted(rs, key=lambda r: r["epsilon"])
        ax.plot([r["epsilon"] for r in rs], [r["npmi_ratio"] for r in rs], "o-",
                label=f"{trainer} ({unit}-level), {corpus}, D={rs[0]['n_docs']:,}")
    ax.axhline(USEFUL_RATIO, color="grey", ls="--", lw=1)
    ax.text(0.01, USEFUL_RATIO + 0.015, "useful (0.6)", color="grey", fontsize=8, transform=ax.get_yaxis_transform())
    ax.set_xscale("log")
    ax.set_xlabel("epsilon (whole run)")
    ax.set_ylabel("NPMI / non-private LDA's NPMI")
    ax.set_ylim(0, 1)
    ax.set_title("Topic quality against the privacy budget (K = 20)", fontsize=10)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
