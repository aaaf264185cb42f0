"""Per-iteration overhead of the Dask backend against the thread backend (AD-LDA over 2 shards).

Corpus: synthetic LDA, D documents x 200 tokens (default D=5000: 1M tokens), V=5000, true K=50,
alpha=0.1, beta=0.01, seed 2024. Both backends train LDA (sparse sampler) with K topics for ITERS
sweeps over 2 shards: the thread backend with n_jobs=2, the Dask backend on a
LocalCluster(n_workers=2, processes=True, threads_per_worker=1) with the corpus read by the
workers from 2 shard files. Time per iteration = median over the sweeps after the first
WARM (compile and start-up excluded). The overhead is the difference of the two medians; it
covers shipping the snapshot to both actors, the deltas back, and the driver-side merge
and bookkeeping (checkpoints every 5 sweeps included).

Run:  python benchmarks/bench_dask.py [--docs 5000] [--topics 50] [--iters 30] [--warm 5] [--algorithm lda|hdp]
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from _common import machine


class Clock:
    needs_release = False

    def __init__(self, warm):
        self.warm, self.times, self.t = warm, [], time.perf_counter()

    def __call__(self, info):
        now = time.perf_counter()
        if info.iteration >= self.warm:
            self.times.append(now - self.t)
        self.t = now


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--algorithm", choices=("lda", "hdp"), default="lda")
    a = ap.parse_args()

    from distributed import Client, LocalCluster

    from dptopic import HDPLDA, LDA
    from dptopic.backends import write_shards
    from dptopic.corpus import lda_corpus

    corpus = lda_corpus(n_docs=a.docs, vocab_size=5000, n_topics=50, doc_length=200, alpha=0.1, beta=0.01,
                        seed=2024).corpus
    cls = LDA if a.algorithm == "lda" else HDPLDA
    kw = dict(n_topics=a.topics, n_iter=a.iters, seed=0, verbose=0)
    if a.algorithm == "lda":
        kw["eval_every"] = 0
    print(f"machine: {machine()}")
    print(f"corpus: {corpus.n_docs} docs, {corpus.n_tokens} tokens, V={corpus.vocab_size}; {cls.__name__} K={a.topics},"
          f" {a.iters} sweeps, median over sweeps {a.warm + 1}..{a.iters}, 2 shards")
    cls(**{**kw, "n_iter": 1}).fit(corpus.subset(range(20)))  # compile outside the timing
    clock = Clock(a.warm)
    cls(n_jobs=2, **kw).fit(corpus, callback=clock)
    t_threads = float(np.median(clock.times))
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cl, \
            Client(cl) as client:
        paths = write_shards(corpus, tmp, 2)
        cls(backend="dask", client=client, **{**kw, "n_iter": 1}).fit(paths)  # compile on the workers
        clock = Clock(a.warm)
        cls(backend="dask", client=client, **kw).fit(paths, callback=clock)
        t_dask = float(np.median(clock.times))
    print(f"threads (n_jobs=2): {1e3 * t_threads:8.1f} ms/iteration")
    print(f"dask (2 workers):   {1e3 * t_dask:8.1f} ms/iteration")
    print(f"dask overhead:      {1e3 * (t_dask - t_threads):8.1f} ms/iteration ({t_dask / t_threads:.2f}x the thread backend)")


if __name__ == "__main__":
    main()
