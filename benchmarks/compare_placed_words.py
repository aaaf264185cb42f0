"""What a scikit-learn user reads in ``components_`` of ``DocDPCooccurrence`` with public word vectors, as fitted
and with a candidate rule applied that keeps the words the vectors placed below each topic's first estimated words
(:func:`estimated_first`, measured here and not adopted: docs/research/topic_display.md), on the same fits.

Each fit with the default vectors is made once and the rule applied to its topics (post-processing of the topics,
so both come from one release); each is scored as
``bench_utility.py`` scores a trainer: the NPMI ratio of ``components_``' top 10 words by probability (what
``model.components_`` shows a scikit-learn user) and in the display order (relevance, ``topic_words``), the coverage
share of non-private LDA's topics and the downstream accuracy share (``transform`` reads ``components_``), beside
non-private LDA run again, the same trainer without vectors (fitted in the same run) and the floors of public
knowledge alone (``bench_utility.floors``). Also: how many of components_' top 10 words per topic the vectors placed.

    python benchmarks/compare_placed_words.py --corpora reuters election-tweets 20newsgroups-5000 --epsilons 1 4

Writes ``placed_words_<corpus>.json`` into ``--out``; ``--from-json`` prints them as Markdown tables.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
import dptopic
from bench_utility import CORPORA, DELTA, VECTORS, corpora, floors, measure, row_summary, shares, summarise

ESTIMATED_FIRST = 10
"""The candidate rule's first words: a topic's 10 most probable words would be words its release estimated."""


def estimated_first(beta, kept, placed, top: int = ESTIMATED_FIRST) -> np.ndarray:
    """The candidate rule: ``beta`` (K x V, rows summing to 1) with the words ``placed`` (placed by public vectors,
    outside the release's ``kept`` words) kept below each topic's ``top``-th largest weight among ``kept``. In a topic
    where placed words rise above that weight they are lowered to just below it and their excess is shared among the
    topic's other placed words in proportion, none lifted above it (water-filling), so the topic's mass outside the
    release stays as it was; only when every placed word is at the cap does the rest go to the kept words, in
    proportion. Rows still sum to 1."""
    beta = np.array(beta, dtype=np.float64)
    kept, placed = np.asarray(kept, dtype=np.int64), np.asarray(placed, dtype=np.int64)
    if not len(kept) or not len(placed):
        return beta
    n = min(int(top), len(kept))
    for k in range(beta.shape[0]):
        cap = np.nextafter(np.partition(beta[k, kept], -n)[-n], 0.0)     # strictly below: ties go to the kept word
        w = beta[k, placed]
        if w.max() <= cap:
            continue
        order = np.argsort(-w, kind="stable")
        s = w[order]
        total = s.sum()
        rest = np.cumsum(s[::-1])[::-1]           # rest[j]: the mass of the words from the j-th largest on
        scale = (total - np.arange(len(s)) * cap) / np.maximum(rest, 1e-300)
        fits = np.flatnonzero(s * scale <= cap)   # the first j whose words below the cap, scaled, stay below it
        if len(fits):
            j0 = int(fits[0])
            s, excess = np.concatenate([np.full(j0, cap), np.minimum(s[j0:] * scale[j0], cap)]), 0.0
        else:
            s, excess = np.full(len(s), cap), total - len(s) * cap
        new = np.empty_like(w)
        new[order] = s
        beta[k, placed] = new
        if excess > 0:
            beta[k, kept] *= 1.0 + excess / beta[k, kept].sum()
    return beta

KEYS = ("npmi_ratio", "display_npmi_ratio", "coverage_share", "accuracy_share", "supported", "placed_in_top10")
RAW = ("npmi", "display_npmi")
"""Where non-private LDA's NPMI is not positive (the election tweets' rare co-occurrences) a ratio means nothing: the
NPMI itself is shown."""


def placed_in_top(components, placed, top=10) -> float:
    """The mean number, over topics, of words among a topic's ``top`` most probable that are in ``placed``."""
    order = np.argsort(-np.asarray(components), axis=1, kind="stable")[:, :top]
    return float(np.isin(order, placed).sum(axis=1).mean())


def fit(eps, K):
    """A default fit with vectors, and the words its vectors placed (any topic; None where none: the groups route
    places no word outside the release)."""
    m = dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K, public_vectors=VECTORS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(TRAIN)
    placed = m.placed_words()
    return m, None if placed is None else np.flatnonzero(placed.any(axis=0))


def score(model, components, test, reference, base, placed):
    """``bench_utility.measure`` of ``model`` with ``components`` in place (nothing refitted), as shares of LDA's."""
    model.components_ = components
    r = measure(model, TRAIN, test, reference, perplexity=False, fitted=True)
    r = {**r, "display_npmi": r["npmi"], "npmi": r["by_probability"]["npmi"]} if "by_probability" in r else r
    r = shares([r], base)[0]
    if base["npmi"] > 0:
        r["display_npmi_ratio"] = r["display_npmi"] / base["npmi"]
    r["placed_in_top10"] = placed_in_top(components, placed) if placed is not None else 0.0
    return r


def main(argv=None):
    global TRAIN
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=list(CORPORA))
    ap.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 4.0])
    ap.add_argument("--seeds", type=int, default=3, help="fits per setting (and LDA runs B)")
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--cgs-iterations", type=int, default=300)
    ap.add_argument("--caps", type=int, nargs="+", default=[ESTIMATED_FIRST],
                    help="the rule at these numbers of first words (10 is scored as 'after')")
    ap.add_argument("--out", default="runs/placed_words")
    ap.add_argument("--from-json", nargs="+", default=None, help="print earlier runs' files as Markdown")
    a = ap.parse_args(argv)
    if a.from_json:
        for f in a.from_json:
            print(markdown(json.loads(Path(f).read_text())))
        return 0
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for name, train, test in corpora(a.corpora, a.vocab):
        TRAIN = train
        t0 = time.perf_counter()
        lda = [dptopic.LDA(n_topics=a.topics, n_iter=a.cgs_iterations, seed=s, verbose=0) for s in range(a.seeds + 1)]
        runs_a = measure(lda[0], train, test)
        runs_b = [measure(m, train, test, lda[0]) for m in lda[1:]]
        base = {k: summarise([runs_a] + runs_b, k)[0] for k in ("npmi", "accuracy", "macro_f1")}
        base["coverage"] = summarise(runs_b, "coverage")[0]
        fl = floors(SimpleNamespace(dictd_root=None, dictionary_docs=None, topics=a.topics,
                                    cgs_iterations=a.cgs_iterations, seeds=a.seeds), train, test, lda[0], base)
        result = {"corpus": name, "n_docs": train.n_docs, "n_topics": a.topics, "lda": base,
                  "floors": {k: row_summary(v) for k, v in fl.items()}, "rows": []}
        print(f"\n== {name}: {train.n_docs} documents; LDA NPMI {base['npmi']:.4f}, coverage {base['coverage']:.3f},"
              f" accuracy {base['accuracy']:.3f}; floors: " + ", ".join(
                  f"{k} coverage {v.get('coverage_share', float('nan')):.2f} accuracy"
                  f" {v.get('accuracy_share', float('nan')):.2f}" for k, v in result["floors"].items()))
        for eps in a.epsilons:
            variants: dict = {}
            for _ in range(a.seeds):
                m, placed = fit(eps, a.topics)
                before = np.array(m.components_)
                rows = {"before (no rule)": before}
                rows.update({("after" if c == ESTIMATED_FIRST else f"rule at {c}"):
                             (before if placed is None else estimated_first(before, m.kept_words_, placed, c))
                             for c in a.caps})
                for label, comp in rows.items():
                    r = score(m, comp, test, lda[0], base, placed)
                    r["changed"] = float(np.abs(comp - before).max())
                    variants.setdefault(label, []).append(r)
                m0 = dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=a.topics, public_vectors=None)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m0.fit(train)
                variants.setdefault("no vectors", []).append(score(m0, np.array(m0.components_), test, lda[0],
                                                                   base, None))
            for label, runs in variants.items():
                row = {"epsilon": eps, "model": label, "routes": sorted({r.get("route", "-") for r in runs}),
                       "changed": max(r.get("changed", 0.0) for r in runs),
                       **{k: summarise(runs, k) for k in KEYS + RAW}, "runs": runs}
                result["rows"].append(row)
                print(f"{label:18} eps {eps:g} {'/'.join(row['routes']):8} " + " ".join(
                    f"{k} {row[k][0]:.3f} ({row[k][2]:.3f}-{row[k][3]:.3f})" for k in KEYS + RAW))
        (out / f"placed_words_{name}.json").write_text(json.dumps(result, indent=1, default=float))
        print(f"{name}: {time.perf_counter() - t0:.0f} s")
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


def markdown(result) -> str:
    """One corpus's rows as a Markdown table: each measure's median over the fits with its range."""
    def cell(v, digits=2):
        med, _, lo, hi = v
        if med != med:
            return "-"
        return f"{med:.{digits}f}" + (f" ({lo:.{digits}f}-{hi:.{digits}f})" if hi - lo >= 0.5 * 10 ** -digits else "")

    base = result["lda"]
    keys = KEYS if base["npmi"] > 0 else ("npmi", "display_npmi") + KEYS[2:]
    what = "NPMI ratio" if base["npmi"] > 0 else "NPMI (LDA's is negative: no ratio)"
    head = (f"{result['corpus']}: {result['n_docs']:,} training documents, K = {result['n_topics']}; non-private LDA:"
            f" NPMI {base['npmi']:.3f}, coverage of run A by runs B {base['coverage']:.3f}, accuracy"
            f" {base['accuracy']:.3f}\n\n| model | epsilon | route | {what}, components_ | {what}, display |"
            " coverage share | accuracy share | supported | placed words in components_' top 10 |\n"
            "|---|---|---|---|---|---|---|---|---|\n")
    lines = [f"| {r['model']} | {r['epsilon']:g} | {'/'.join(r['routes'])} | " + " | ".join(
        cell(r[k], 1 if k in ("supported", "placed_in_top10") else 2 if k in KEYS else 3) for k in keys) + " |"
        for r in result["rows"]]
    lines += [f"| {k} ({'control' if k == 'word-frequencies' else 'floor'}) | - | - | - | - |"
              f" {v['coverage_share']:.2f} | {v['accuracy_share']:.2f} | - | - |"
              for k, v in result["floors"].items() if "coverage_share" in v and "accuracy_share" in v]
    return head + "\n".join(lines) + "\n"


TRAIN = None


if __name__ == "__main__":
    sys.exit(main())
