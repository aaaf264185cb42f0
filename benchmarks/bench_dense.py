"""The dense sampler's vector weights against its scalar loop, interleaved sweep by sweep.

The dense sweep (CDP-LDA, paper-literal HDP-LDA, ``sampler="dense"``) has two compiled kernels from one
source: four-wide vector weights and lane sums (33 to 64 topics), and the scalar loop (see
``docs/scaling.md``). Both draw the same topics from the same stream, so this compares speed only.

Corpus: synthetic LDA as in bench_cgs.py (800k training tokens, V=5000), random assignments and
discrete-Laplace-like noisy float64 counts (CDP-LDA's state). Each round runs one sweep of each kernel,
alternating which goes first; the figure is the median of the per-round ratios vector / scalar (below 1:
the vector kernel is faster). ``--threads 2`` runs the two word halves of the vocabulary at once on two
threads (each with its own copy of the document counts), the shape of a partition round.

Run:  python benchmarks/bench_dense.py [--topics 50 64 20] [--rounds 20] [--threads 1] [--docs 5000]
Smoke run (seconds, figures meaningless):  bench_dense.py --docs 200 --topics 50 --rounds 2
"""
from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from _common import machine
from bench_cgs import build
from dptopic.kernels import kernel_state
from dptopic.kernels.counts import count_assignments
from dptopic.kernels.dense import _dense_sweep_scalar, _dense_sweep_vector


def noisy_state(word_ids, doc_ptr, K, V, seed):
    """Random assignments, counts plus the difference of two floored exponentials (noise of scale 1)."""
    z = np.random.default_rng(seed).integers(0, K, size=word_ids.shape[0], dtype=np.int32)
    ndk, nwk, _ = count_assignments(word_ids, doc_ptr, z, K, V)
    r = np.random.default_rng(seed + 1)

    def noise(shape):
        return np.floor(r.exponential(size=shape)) - np.floor(r.exponential(size=shape))

    nwk = nwk + noise(nwk.shape)
    return z, ndk + noise(ndk.shape), nwk, nwk.sum(axis=0)


def cells(train, threads):
    """The tokens split by word halves (one cell per thread), each with its own document pointer."""
    wid, ptr, V = train.word_ids, train.doc_ptr, train.vocab_size
    if threads == 1:
        return [(wid, ptr)]
    D = ptr.shape[0] - 1
    doc = np.repeat(np.arange(D), np.diff(ptr))
    out = []
    for keep in (wid < V // 2, wid >= V // 2):
        p = np.zeros(D + 1, dtype=ptr.dtype)
        np.cumsum(np.bincount(doc[keep], minlength=D), out=p[1:])
        out.append((np.ascontiguousarray(wid[keep]), p))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topics", type=int, nargs="+", default=[50, 64, 20])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, choices=(1, 2), default=1)
    ap.add_argument("--docs", type=int, default=5000, help="documents of the synthetic corpus (default 5000)")
    args = ap.parse_args(argv)
    _, train, _ = build(n_docs=args.docs)
    V, alpha, beta = train.vocab_size, 0.1, 0.01
    print(f"machine: {machine()}")
    print(f"corpus: synthetic LDA, {train.n_tokens} training tokens, V={V}; noisy float64 counts; {args.rounds} rounds"
          f" of one sweep per kernel, {args.threads} thread(s)")
    pool = ThreadPoolExecutor(1)
    for K in args.topics:
        kernels = {"vector": _dense_sweep_vector, "scalar": _dense_sweep_scalar}
        work = {}
        for name in kernels:
            work[name] = []
            for j, (wid, ptr) in enumerate(cells(train, args.threads)):
                z, ndk, nwk, nk = noisy_state(wid, ptr, K, V, seed=j)
                work[name].append((wid, ptr, z, ndk, nwk, nwk, nk, alpha, beta, V * beta, np.inf,
                                   kernel_state(np.random.default_rng(j))))

        def sweep(name):
            f, jobs = kernels[name], work[name]
            t = time.perf_counter()
            others = [pool.submit(f, *a) for a in jobs[1:]]
            f(*jobs[0])
            for o in others:
                o.result()
            return time.perf_counter() - t

        for name in kernels:
            sweep(name)  # compile and warm up
        times = {name: [] for name in kernels}
        for r in range(args.rounds):
            for name in (("vector", "scalar") if r % 2 == 0 else ("scalar", "vector")):
                times[name].append(sweep(name))
        v, s = np.array(times["vector"]), np.array(times["scalar"])
        note = "" if 33 <= K <= 64 else "  (outside 33-64 topics dense_sweep uses the scalar kernel)"
        print(f"K={K:3d}, {args.rounds} rounds: vector {np.median(v) * 1e3:6.1f} ms, scalar {np.median(s) * 1e3:6.1f} ms per sweep (medians);"
              f" median ratio vector/scalar {np.median(v / s):.3f}{note}")


if __name__ == "__main__":
    main()
