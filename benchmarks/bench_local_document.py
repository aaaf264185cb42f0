"""Document-level local DP on 20 Newsgroups: topic quality against the number of contributors.

    PYTHONPATH=src nice -n 10 python benchmarks/bench_local_document.py                 # eps_doc 8, V' 200 and 400
    PYTHONPATH=src nice -n 10 python benchmarks/bench_local_document.py --epsilon 4 --contributors 11287 100000

Each contributor holds one document of the 20 Newsgroups training split (11,287; larger numbers of contributors
are simulated by drawing documents with replacement, which repeats documents but not their randomization) and
sends one report: two of its tokens among the V' most frequent words of the public 2,000-word vocabulary, as a word
pair through k-subset selection (:class:`dptopic.local.DocumentRandomizer`, simulation mode, seed 1). The server
(:class:`dptopic.models.LocalDocumentLDA`) estimates the co-occurrence matrix and factorises it. Printed: NPMI
(top 10 words, test split) and its ratio to non-private CGS on the same 2,000 words (300 sweeps, seed 0),
diversity, and the match to CGS's topics (mean cosine after Hungarian matching; CGS seed 1 scores about 0.80,
random topics over the 400 most frequent words 0.18), with a PNG of the match against contributors.
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from bench_docdp import diversity, load, npmi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epsilon", type=float, default=8.0)
    ap.add_argument("--words", type=int, nargs="+", default=[200, 400])
    ap.add_argument("--contributors", type=int, nargs="+", default=[2000, 5000, 11287, 50000, 100000, 200000, 400000])
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--out", default="runs/bench_local_document")
    a = ap.parse_args()
    warnings.filterwarnings("ignore", message="an explicit seed")
    from dptopic import LDA
    from dptopic.evaluation.recovery import topic_recovery
    from dptopic.local import DocumentRandomizer
    from dptopic.models import LocalDocumentLDA
    tr, te = load()
    ref, V, K = te.to_bow(), tr.vocab_size, a.topics
    cgs = LDA(n_topics=K, n_iter=300, seed=0, verbose=0).fit(tr).components_
    base = npmi(cgs, ref)
    print(f"20 Newsgroups train {tr.n_docs} documents, V=2000, K={K}; non-private CGS NPMI {base:.4f}")
    print(f"{'eps_doc':>7} {'V_prime':>7} {'contributors':>12} {'k':>5} {'NPMI':>7} {'ratio':>6} {'divers.':>7}"
          f" {'match':>6} {'s':>5}")
    curves = {}
    for Vp in a.words:
        words = tr.vocabulary.words[:Vp]           # the vocabulary is ordered by frequency
        sub = tr.restrict(words, drop_empty=False)
        for n in a.contributors:
            t = time.time()
            rng = np.random.default_rng(0)
            docs = sub if n == sub.n_docs else sub.subset(rng.integers(0, sub.n_docs, n))
            reports = DocumentRandomizer.for_simulation(words, a.epsilon, seed=1).randomize(docs)
            H = LocalDocumentLDA(n_topics=K).fit(reports).components_
            B = np.full((K, V), 1e-12)
            B[:, :Vp] = H
            B /= B.sum(1, keepdims=True)
            s, m = npmi(B, ref), topic_recovery(B, cgs)
            curves.setdefault(Vp, []).append((n, m))
            print(f"{a.epsilon:7g} {Vp:7d} {n:12,d} {reports.subset_size:5d} {s:7.4f} {s / base:6.2f} {diversity(B):7.3f}"
                  f" {m:6.3f} {time.time() - t:5.0f}", flush=True)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for Vp, pts in curves.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"{Vp} words")
    ax.axhline(0.80, ls="--", c="k", lw=0.8, label="non-private (another CGS seed)")
    ax.axhline(0.18, ls=":", c="grey", lw=0.8, label="random topics of frequent words")
    ax.set_xscale("log")
    ax.set_xlabel("contributors (one document each)")
    ax.set_ylabel("match to non-private topics")
    ax.set_title(f"Document-level local DP, eps_doc = {a.epsilon:g} (20 Newsgroups)")
    ax.legend(fontsize=8)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(out / "local_document_curve.png", dpi=120)
    print(f"written: {out / 'local_document_curve.png'}")


if __name__ == "__main__":
    main()
