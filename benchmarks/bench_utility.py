"""Topic quality against the privacy budget: every private trainer with an epsilon to set, at each epsilon, beside
non-private collapsed Gibbs LDA on the same corpus and vocabulary.

For each corpus (20 Newsgroups train with its test split as reference; the State of the Union paragraphs with a
fixed 80/20 split), K topics and a vocabulary of V words built from the training split: NPMI of the top 10 words
over boolean document co-occurrence in the reference split, its ratio to non-private CGS, topic diversity (top 25)
and held-out perplexity (document completion), as the median over seeds with the standard error of the mean.
Private trainers are unseeded (fresh OS entropy), as a user runs them; CGS takes seeds 0..n-1. A trainer whose
budget cannot be reached at some epsilon (the word-level HDP-LDA at single-digit epsilon) is listed as such.

    python benchmarks/bench_utility.py                      # 20 Newsgroups and demo, eps 0.5 1 2 4 8, 3 seeds
    python benchmarks/bench_utility.py --quick              # demo only, eps 1 and 4, 1 seed, short CGS
    python benchmarks/bench_utility.py --write-table        # also refresh dptopic's utility table (recommend)
    python benchmarks/bench_utility.py --trainers docdp-cooc --write-table   # refresh one trainer's rows only
    python benchmarks/bench_utility.py --corpora 20newsgroups-5000 --trainers docdp-cooc docdp svi --write-table
                                                            # add the first 5,000 documents of 20 Newsgroups

Writes ``npmi_vs_epsilon_<corpus>.png`` (one line per trainer) and ``utility_<corpus>.json`` into ``--out``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import dptopic
from dptopic.evaluation import topic_quality

DELTA = 1e-5

# name -> (unit, builder(epsilon, n_topics)); add a trainer here and it is measured like the others
TRAINERS = {
    "docdp-cooc": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K)),
    # the same trainer with more words set aside in background topics (an option, not the default)
    "docdp-cooc-bg": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K,
                                                                                      background_share=0.15)),
    # its earlier defaults (400 words, no background topics), for comparison in the same run
    "docdp-cooc-400": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, n_words=400, background_share=None)),
    # the co-occurrence words chosen by repetition within documents rather than by frequency alone (an option)
    "docdp-cooc-rep": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(
        eps, DELTA, n_topics=K, word_choice="repetition", ranking_noise=2.0)),
    # the earlier recovery (thresholded NMF with its background topics and word rule), for comparison in the same run
    "docdp-cooc-nmf": ("document", lambda eps, K: dptopic.DocDPCooccurrence.from_budget(eps, DELTA, n_topics=K,
                                                                                       recovery="nmf")),
    "docdp": ("document", lambda eps, K: dptopic.DocDPEM.from_budget(eps, DELTA, n_topics=K)),
    "svi": ("document", lambda eps, K: dptopic.DPSVI.from_budget(eps, DELTA, n_topics=K, verbose=0)),
    "hdp": ("word", lambda eps, K: dptopic.HDPLDA.from_budget(eps, DELTA, 50, n_topics=K, verbose=0)),
}


# measured on request only, never written into the utility table that `dptopic recommend` reads (not a default)
OPTIONS = {"docdp-cooc-bg", "docdp-cooc-400", "docdp-cooc-rep", "docdp-cooc-nmf"}


def corpora(names, vocab_size):
    from dptopic.datasets import load_20newsgroups, load_sotu

    for name in names:
        if name.startswith("20newsgroups"):
            train = load_20newsgroups("train", max_vocab=vocab_size)
            test = load_20newsgroups("test", vocabulary=train.vocabulary).drop_empty()
            if name == "20newsgroups-5000":         # the first 5,000 training documents (same vocabulary and test)
                train = train.subset(np.arange(5000))
        else:
            train, test = load_sotu(max_vocab=vocab_size).train_test_split(0.2, seed=0)
        yield name, train, test


def measure(model, train, test):
    with warnings.catch_warnings():
        # the library's warnings are for users (a fresh budget per fit, held-out documents that duplicate training
        # ones): not for a benchmark that refits and scores on purpose
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model.fit(train)
        secs = time.perf_counter() - t
        q = topic_quality(model, test, top_n=10)
        ppl = model.perplexity(test, mode="completion", seed=0)
    return {"npmi": q["npmi"], "diversity": q["diversity"], "perplexity": float(ppl), "seconds": secs}


def summarise(runs, key):
    v = np.array([r[key] for r in runs], float)
    se = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan")
    return float(np.median(v)), se


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=["20newsgroups", "demo"], choices=("20newsgroups", "20newsgroups-5000", "demo"))
    ap.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1, 2, 4, 8])
    ap.add_argument("--trainers", nargs="+", default=[t for t in TRAINERS if t not in OPTIONS], choices=list(TRAINERS))
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--cgs-iterations", type=int, default=300)
    ap.add_argument("--quick", action="store_true", help="demo corpus, eps 1 and 4, 1 seed, 50 CGS sweeps")
    ap.add_argument("--out", default="runs/bench_utility")
    ap.add_argument("--write-table", action="store_true", help="refresh src/dptopic/utility_table.json")
    a = ap.parse_args(argv)
    if a.quick:
        a.corpora, a.epsilons, a.seeds, a.cgs_iterations = ["demo"], [1.0, 4.0], 1, 50
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    table_rows = []
    for name, train, test in corpora(a.corpora, a.vocab):
        print(f"\n== {name}: train {train.n_docs} documents, V={train.vocab_size}; reference {test.n_docs} held-out"
              f" documents; K={a.topics}; CGS {a.cgs_iterations} sweeps; {a.seeds} seed(s); delta={DELTA:g}")
        cgs = [measure(dptopic.LDA(n_topics=a.topics, n_iter=a.cgs_iterations, seed=s, verbose=0), train, test)
               for s in range(a.seeds)]
        ref, ref_se = summarise(cgs, "npmi")
        print(f"non-private CGS (seeds 0..{a.seeds - 1}): NPMI {ref:.4f} (se {ref_se:.4f}), diversity"
              f" {summarise(cgs, 'diversity')[0]:.3f}, perplexity {summarise(cgs, 'perplexity')[0]:.1f}")
        result = {"corpus": name, "n_docs": train.n_docs, "vocab_size": train.vocab_size, "n_topics": a.topics,
                  "cgs": {"npmi": ref, "npmi_se": ref_se, "runs": cgs}, "trainers": {}}
        header = f"{'trainer':8} {'unit':9} {'epsilon':>7} {'NPMI':>8} {'se':>7} {'ratio':>6} {'divers.':>7} {'perpl.':>8} {'s/fit':>6}"
        print(header + "\n" + "-" * len(header))
        for tname in a.trainers:
            unit, build = TRAINERS[tname]
            rows = []
            for eps in a.epsilons:
                try:
                    runs = [measure(build(eps, a.topics), train, test) for _ in range(a.seeds)]
                except dptopic.DPTopicError as e:
                    print(f"{tname:8} {unit:9} {eps:7g}   not reachable: {str(e)[:90]}")
                    continue
                npmi, se = summarise(runs, "npmi")
                ratio = npmi / ref
                rows.append({"epsilon": eps, "npmi": npmi, "npmi_se": se, "ratio": ratio,
                             "diversity": summarise(runs, "diversity")[0],
                             "perplexity": summarise(runs, "perplexity")[0], "runs": runs})
                print(f"{tname:8} {unit:9} {eps:7g} {npmi:8.4f} {se:7.4f} {ratio:6.2f} {rows[-1]['diversity']:7.3f}"
                      f" {rows[-1]['perplexity']:8.1f} {np.mean([r['seconds'] for r in runs]):6.1f}")
                if tname not in OPTIONS:
                    table_rows.append({"unit": unit, "trainer": tname, "corpus": name, "n_docs": train.n_docs,
                                       "n_topics": a.topics, "epsilon": eps, "npmi_ratio": round(ratio, 3)})
            result["trainers"][tname] = {"unit": unit, "rows": rows}
        (out / f"utility_{name}.json").write_text(json.dumps(result, indent=1))
        plot(result, out / f"npmi_vs_epsilon_{name}.png")
        print(f"written: {out / f'utility_{name}.json'}, {out / f'npmi_vs_epsilon_{name}.png'}")
    if a.write_table and table_rows:
        path = Path(dptopic.__file__).with_name("utility_table.json")
        # rows of (trainer, corpus) pairs not measured in this run are kept as they were
        old = json.loads(path.read_text()) if path.exists() else {"rows": []}
        measured = {(r["trainer"], r["corpus"]) for r in table_rows}
        kept = [r for r in old.get("rows", []) if (r.get("trainer"), r.get("corpus")) not in measured]
        source = f"benchmarks/bench_utility.py ({a.seeds} seed(s), K={a.topics}, V={a.vocab}, delta={DELTA:g})"
        if kept and old.get("source") and old["source"] != source:
            source = f"{source}; earlier rows: {old['source']}"
        path.write_text(json.dumps({"source": source, "rows": table_rows + kept}, indent=1) + "\n")
        print(f"utility table written: {path}")
    return 0


def plot(result, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for tname, t in result["trainers"].items():
        if t["rows"]:
            ax.errorbar([r["epsilon"] for r in t["rows"]], [r["ratio"] for r in t["rows"]],
                        yerr=[r["npmi_se"] / result["cgs"]["npmi"] if r["npmi_se"] == r["npmi_se"] else 0
                              for r in t["rows"]], fmt="o-", capsize=3, label=f"{tname} ({t['unit']}-level)")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xscale("log")
    ax.set_ylim(0, 1.1)
    ax.set_xlabel("epsilon (whole run)")
    ax.set_ylabel("NPMI / non-private CGS NPMI")
    ax.set_title(f"{result['corpus']}: D={result['n_docs']:,}, K={result['n_topics']}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
