"""What the dataset ledger adds to a document-level fit: dataset identity by content and the overlap checks.

Corpus: 100,000 synthetic documents of 40 words (topics drawn as in LDA, V = 5,000 words, 20 topics), written as a
JSONL file and read with ``dptopic.read_corpus`` (a public word list of all 5,000 words, so nothing is chosen from the
data). Each repetition times, interleaved so that the machine's load hits all alike:

- ``read + fit, no ledger``: ``read_corpus`` then ``dptopic.train(algorithm="docdp-cooc")`` (no ledger: ``DPTOPIC_LEDGER`` unset);
- ``read + fit, ledger (first)``: the same, charged to a fresh ledger (the documents' identity computed and stored);
- ``read + fit, ledger (again)``: the same documents charged again on that ledger (their dataset found by content);
- ``read + fit, one dropped``: all but one of the documents, charged on that ledger (a new dataset, checked for
  overlap against the first: its cap and total apply).

The table gives each configuration's median over the repetitions and its ratio to the peer run without a ledger
(target, issue 78: at most 1.10). Other work may share the machine: read the ratios, not the seconds.

Run:  python benchmarks/bench_ledger.py [--docs 100000] [--reps 3]
Smoke run (seconds, figures meaningless):  bench_ledger.py --docs 2000 --reps 1
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import warnings

import numpy as np

from _common import draw_words, machine, table

import dptopic
from dptopic.corpus.readers import read_corpus


def write_corpus(path, n_docs: int, seed: int = 7, V: int = 5000, K: int = 20, length: int = 40) -> list:
    rng = np.random.default_rng(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = ["q" + "".join(letters[i // 26 ** j % 26] for j in range(3)) for i in range(V)]   # qaaa, qbaa, ...
    phi = rng.dirichlet(np.full(V, 0.02), size=K)
    theta = rng.dirichlet(np.full(K, 0.1), size=n_docs)
    ptr, ids = draw_words(rng, phi, theta, np.full(n_docs, length))
    with open(path, "w") as f:
        for d in range(n_docs):
            f.write(json.dumps({"text": " ".join(words[w] for w in ids[ptr[d]:ptr[d + 1]])}) + "\n")
    return words


def run(path, words, ledger) -> float:
    t = time.perf_counter()
    corpus = read_corpus(path, "jsonl", vocabulary=words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.train(corpus, algorithm="docdp-cooc", epsilon=1.0, n_topics=20, test_size=0, ledger=ledger,
                      metrics=False)
    return time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args(argv)
    os.environ.pop("DPTOPIC_LEDGER", None)
    with tempfile.TemporaryDirectory() as tmp:
        full, dropped = os.path.join(tmp, "docs.jsonl"), os.path.join(tmp, "dropped.jsonl")
        words = write_corpus(full, a.docs)
        with open(full) as f, open(dropped, "w") as g:
            next(f)
            g.writelines(f)
        print(f"machine: {machine()}")
        print(f"corpus: {a.docs:,} synthetic documents of 40 words, V = {len(words):,} (a public word list);"
              f" docdp-cooc, 20 topics, epsilon 1, nothing held out; {a.reps} repetitions, configurations"
              " interleaved\n")
        run(dropped, words, None)       # compile and warm the caches
        names = ("read + fit, no ledger", "read + fit, ledger (first)", "read + fit, ledger (again)",
                 "read + fit, one dropped")
        times = {n: [] for n in names}
        for rep in range(a.reps):
            ledger = os.path.join(tmp, f"ledger{rep}.sqlite")
            times[names[0]].append(run(full, words, None))
            times[names[1]].append(run(full, words, ledger))
            times[names[2]].append(run(full, words, ledger))
            times[names[3]].append(run(dropped, words, ledger))
        base = float(np.median(times[names[0]]))
        rows = []
        for n in names:
            med = float(np.median(times[n]))
            ratios = [t / b for t, b in zip(times[n], times[names[0]])]
            rows.append((n, f"{med:.2f} s", f"{med / base:.3f}", f"{min(ratios):.3f}-{max(ratios):.3f}"))
        table(rows, ("configuration", "median", "ratio to no ledger", "per-repetition ratios"))
        print("\ntarget (issue 78): each ledger configuration at most 1.10 x the run without a ledger")


if __name__ == "__main__":
    main()
