"""Per-iteration overhead of the Dask backend against the thread backend (AD-LDA over 2 shards).

Corpus: synthetic LDA, D documents x 200 tokens (default D=5000: 1M tokens), V=5000, true K=50,
alpha=0.1, beta=0.01, seed 2024. Both backends train LDA (sparse sampler) with K topics for ITERS
sweeps over 2 document shards with AD-LDA (Newman et al. 2009): the thread backend with
n_jobs=2, parallel="adlda"; the Dask backend on a LocalCluster(n_workers=2, processes=True,
threads_per_worker=1), the corpus read by the workers from 2 shard files. Time per iteration =
median over the sweeps after the first WARM (compile and start-up excluded); the two backends
run alternately REPEATS times and the medians of the runs are reported. The overhead is the
difference of the two; it covers the count changes travelling both ways, the driver's merge
and bookkeeping, and the checkpoints (every 5 sweeps). As that difference also holds any
difference in sampler speed between threads and worker processes (and on a busy machine, noise),
the part of each Dask iteration spent outside the slowest worker's sweep call (messages, driver,
checkpoints: the backend's own cost) is printed too, with the array bytes sent per iteration, and
as its peer the round trip of a bare Dask actor call to both workers carrying the same bytes.

Run:  python benchmarks/bench_dask.py [--docs 5000] [--topics 50] [--iters 30] [--warm 5] [--repeats 3] [--algorithm lda|hdp]
Smoke run (seconds, figures meaningless):  bench_dask.py --docs 300 --iters 8 --warm 2 --repeats 1
Needs the optional package ``distributed`` (pip install 'dptopic[dask]'); without it the script says so and exits.
"""
from __future__ import annotations

import argparse
import tempfile
import time

import numpy as np

from _common import IterationClock as Clock  # times each iteration, gathers nothing
from _common import machine


class Echo:
    """A bare actor: what one Dask actor call costs on this machine, with no work behind it."""

    def echo(self, x):
        return x


def actor_round_trip(client, nbytes: int, repeats: int = 30) -> float:
    """Median time of one call to each of the workers' bare actors, ``nbytes`` in all each way."""
    workers = list(client.scheduler_info()["workers"])
    actors = [client.submit(Echo, actor=True, workers=[w]).result() for w in workers]
    x = np.zeros(max(nbytes // 4 // len(actors), 1), np.int32)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        for f in [a.echo(x) for a in actors]:
            f.result()
        times.append(time.perf_counter() - t)
    return float(np.median(times[3:]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warm", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--algorithm", choices=("lda", "hdp"), default="lda")
    a = ap.parse_args(argv)

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("bench_dask: the optional package 'distributed' is not installed (pip install 'dptopic[dask]'): skipped")
        return 0

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
          f" {a.iters} sweeps, median over sweeps {a.warm + 1}..{a.iters}, 2 shards (AD-LDA), {a.repeats} runs each")
    cls(**{**kw, "n_iter": 1}).fit(corpus.subset(range(20)))  # compile outside the timing
    t_threads, t_dask, t_outside, traffic = [], [], [], None
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cl, \
            Client(cl) as client:
        paths = write_shards(corpus, tmp, 2)
        cls(backend="dask", client=client, **{**kw, "n_iter": 1}).fit(paths)  # compile on the workers
        for _ in range(a.repeats):
            clock = Clock(a.warm)
            cls(n_jobs=2, parallel="adlda", **kw).fit(corpus, callback=clock)
            t_threads.append(float(np.median(clock.times)))
            m = cls(backend="dask", client=client, **kw)
            clock = Clock(a.warm)
            m.fit(paths, callback=clock)
            t_dask.append(float(np.median(clock.times)))
            # the part of each iteration not spent in the slowest worker's sweep call
            worker = [w for _, w in m._backend_.timings[a.warm:]]
            t_outside.append(float(np.median(np.subtract(clock.times, worker))))
            traffic = getattr(m._backend_, "traffic", None)
        n = max(traffic["sweeps"], 1) if traffic else 1
        payload = int((traffic["to_workers"] + traffic["from_workers"]) / 2 / n) if traffic else 0
        echo_empty, echo_full = actor_round_trip(client, 0), actor_round_trip(client, payload)
    th, dk, out = float(np.median(t_threads)), float(np.median(t_dask)), float(np.median(t_outside))
    print(f"threads (n_jobs=2, adlda): {1e3 * th:8.1f} ms/iteration   runs: {', '.join(f'{1e3 * t:.1f}' for t in t_threads)}")
    print(f"dask (2 workers):          {1e3 * dk:8.1f} ms/iteration   runs: {', '.join(f'{1e3 * t:.1f}' for t in t_dask)}")
    print(f"dask overhead:             {1e3 * (dk - th):8.1f} ms/iteration ({dk / th:.2f}x the thread backend)")
    print(f"  outside the workers:     {1e3 * out:8.1f} ms/iteration (iteration minus the slowest shard's sweep call on"
          f" its worker)   runs: {', '.join(f'{1e3 * t:.1f}' for t in t_outside)}")
    if traffic:
        n = max(traffic["sweeps"], 1)
        print(f"  arrays sent per iteration: {traffic['to_workers'] / n / 1e6:.2f} MB to the workers,"
              f" {traffic['from_workers'] / n / 1e6:.2f} MB back (checkpoints included)")
    print(f"  peer: Dask's own actor round trip to both workers, no work: {1e3 * echo_empty:.1f} ms empty,"
          f" {1e3 * echo_full:.1f} ms carrying {payload / 1e6:.2f} MB each way")


if __name__ == "__main__":
    main()
