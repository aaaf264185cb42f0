"""Private Gibbs sweeps (HDP-LDA, CDP-LDA+) against tomotopy's non-private sweep, and secure-mode noise cost.

Corpus: synthetic LDA, D=5000 x 200 tokens (1M tokens), V=5000, true K=50, alpha=0.1, beta=0.01, seed 2024
(the bench_cgs corpus; 800k training tokens). K=50. Each private trainer runs ITERS iterations;
throughput = tokens / median time of the last TIMED iterations, noise generation and accounting
included (the whole iteration). Every system runs once per repetition, systems interleaved, so
that a change in the machine's load hits all of them alike; the table gives each system's median
over the repetitions, and the ratio column divides it by tomotopy's median (the per-repetition
ratios' range is printed beside it).
Targets (issue 12): HDP-LDA and CDP-LDA+ on 2 threads >= 1.8x tomotopy's 1-worker non-private sweep.

Secure mode: cost of one iteration's noise at V=1000, K=50 (50,000 discrete-Laplace draws) with
OpenDP's CSPRNG exact sampler, against numpy's seeded sampler.

Run:  python benchmarks/bench_private.py [--iters 30] [--timed 10] [--reps 3] [--docs 5000]
Smoke run (seconds, figures meaningless):  bench_private.py --docs 200 --iters 3 --timed 2 --reps 1
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from _common import IterationClock, machine, median_time, table
from bench_cgs import build, run_tomotopy
from dptopic import HDPLDA, CDPLDAPlus
from dptopic.mechanisms import laplace_mechanism


def run_private(model, train, timed):
    warm = model.get_params()
    type(model)(**{**warm, "n_iter": 1, "verbose": 0}).fit(train.subset(range(min(50, train.n_docs))))  # compile
    clock = IterationClock()
    clock.t = time.perf_counter()
    model.fit(train, callback=clock)
    return train.n_tokens / float(np.median(clock.times[-timed:]))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--timed", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--docs", type=int, default=5000, help="documents of the synthetic corpus (default 5000: 1M tokens)")
    a = ap.parse_args(argv)
    try:
        import tomotopy  # noqa: F401
    except ImportError:
        print("bench_private: the peer tomotopy is not installed (pip install 'dptopic[bench]'): skipped")
        return 0
    s, train, test = build(n_docs=a.docs)
    K = 50
    print(f"machine: {machine()}")
    print(f"corpus: synthetic LDA, {train.n_docs} train docs, {train.n_tokens} tokens, V={train.vocab_size}; K={K}; "
          f"{a.iters} iterations, median of the last {a.timed}; {a.reps} repetitions, systems interleaved\n")
    hdp = dict(epsilon_laplace=1.0, epsilon_inherent=10, n_iter=a.iters, seed=0, verbose=0)
    cdp = dict(paper_epsilon=1.0, n_iter=a.iters, seed=0, verbose=0)
    systems = [
        ("tomotopy workers=1 (non-private)", lambda: run_tomotopy(train, K, a.iters, a.timed, 1, 0.1, 0.01)[0]),
        ("HDP-LDA sound, n_jobs=1", lambda: run_private(HDPLDA(K, **hdp), train, a.timed)),
        ("HDP-LDA sound, n_jobs=2 partition (default)", lambda: run_private(HDPLDA(K, n_jobs=2, **hdp), train, a.timed)),
        ("HDP-LDA sound, n_jobs=2 adlda",
         lambda: run_private(HDPLDA(K, n_jobs=2, parallel="adlda", **hdp), train, a.timed)),
        ("CDP-LDA+, n_jobs=1", lambda: run_private(CDPLDAPlus(K, **cdp), train, a.timed)),
        ("CDP-LDA+, n_jobs=2 partition (default)",
         lambda: run_private(CDPLDAPlus(K, n_jobs=2, parallel="partition", **cdp), train, a.timed)),
        ("CDP-LDA+, n_jobs=2 adlda",
         lambda: run_private(CDPLDAPlus(K, n_jobs=2, parallel="adlda", **cdp), train, a.timed)),
    ]
    tps = {name: [] for name, _ in systems}
    for _ in range(a.reps):
        for name, go in systems:
            tps[name].append(go())
    tomo = np.array(tps[systems[0][0]])
    rows = []
    for name, _ in systems:
        v = np.array(tps[name])
        r = v / tomo
        rows.append((name, f"{np.median(v) / 1e6:.2f}M", f"{np.median(v) / np.median(tomo):.2f}x",
                     f"{r.min():.2f}-{r.max():.2f}"))
    table(rows, ("system", "tokens/s", "vs tomotopy(1)", "per-repetition ratios"))

    print("\nsecure-mode noise, one iteration at V=1000, K=50 (50,000 discrete-Laplace draws, eps_L=1):")
    counts = np.random.default_rng(0).integers(0, 100, size=(1000, 50))
    rng = np.random.default_rng(1)
    t_np = median_time(lambda: laplace_mechanism(counts, 1.0, rng, changes=(1, 1)), 20)
    try:
        t_sec = median_time(lambda: laplace_mechanism(counts, 1.0, changes=(1, 1), secure=True), 5)
        print(f"  numpy (seeded, not secure): {t_np * 1e3:.2f} ms   OpenDP secure: {t_sec * 1e3:.1f} ms"
              f"   ratio {t_sec / t_np:.0f}x")
        print(f"  over a T=100 run: {100 * t_sec:.1f} s of secure noise")
    except Exception as e:  # opendp not installed
        print(f"  secure mode unavailable: {e}")


if __name__ == "__main__":
    main()
