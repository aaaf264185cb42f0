"""Collapsed Gibbs sampling throughput and quality against tomotopy and the `lda` package.

Corpus: synthetic LDA, D=5000 documents x 200 tokens (1M tokens), V=5000, true K=50,
alpha=0.1, beta=0.01, seed 2024; 20% of documents held out.
For K in {50, 200}: every system trains ITERS sweeps (default 200) on the training
documents. Throughput = training tokens / median sweep time over the last
TIMED sweeps (compile and start-up excluded; the `lda` package exposes no per-sweep
hook, so its figure is its total fit time / ITERS). Quality = held-out perplexity
(document completion, the same dptopic fold-in applied to every system's Phi) and
topic recovery (mean cosine to the true topics after Hungarian matching; K=50 only).

Run:  python benchmarks/bench_cgs.py [--iters 200] [--timed 10] [--topics 50 200] [--no-lda] [--docs 5000]
Smoke run (seconds, figures meaningless):  bench_cgs.py --docs 200 --iters 4 --timed 2 --topics 10 --no-lda

Two-thread scaling against tomotopy's (``--scaling ROUNDS``): dptopic (its sampler and thread scheme as ``LDA`` runs
them: the threads backend's sweeps, ``parallel="partition"``) and tomotopy, each on 1 and on 2 threads, first sweep
``--iters`` minus ROUNDS x ``--block`` times from a random start, then ROUNDS rounds in which every system sweeps
``--block`` times, timed; the order of the four systems alternates from round to round (reversed every other round),
so that load from elsewhere hits them alike. Printed per K: the median seconds per sweep of each system, each
system's speed-up from 1 to 2 threads, and dptopic's speed-up as a fraction of tomotopy's (the target: >= 0.95), the
median over the rounds of each round's fraction (a shared machine's load moves from round to round; within a round
the four runs see about the same). On a machine whose other jobs hold a core, neither system gains from a second
thread, and the fraction says nothing: read it with the load average printed. Printed beside: each system's CPU time
per sweep (all its threads), and the speed-up that CPU time allows on two free cores, 2 x CPU(1 thread) /
CPU(2 threads): the work a second thread adds (copies, merges, hand-overs, cache traffic), which other jobs move much
less than they move the wall times; it does not show the time a thread waits for the other.

    python benchmarks/bench_cgs.py --scaling 9 --block 5 --topics 50 200
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from _common import IterationClock, machine, median_time, table
from dptopic.corpus import lda_corpus
from dptopic.evaluation import perplexity, topic_recovery


def build(seed=2024, n_docs=5000):
    s = lda_corpus(n_docs=n_docs, vocab_size=5000, n_topics=50, doc_length=200, alpha=0.1, beta=0.01, seed=seed)
    train, test = s.corpus.train_test_split(0.2, seed=0)
    return s, train, test


def run_dptopic(train, K, iters, timed, n_jobs, alpha, beta):
    from dptopic import LDA

    # time sweeps through the estimator's own engine: fit for iters-timed sweeps, then time the rest one by one
    # (the clock gathers neither counts nor assignments; tomotopy's timing has no such step either)
    m = LDA(K, alpha=alpha, beta=beta, n_iter=1, seed=0, n_jobs=n_jobs, verbose=0, eval_every=0)
    m.fit(train.subset(range(min(50, train.n_docs))))  # compile outside the timing
    clock = IterationClock(start=iters - timed)
    m.set_params(n_iter=iters)
    clock.t = time.perf_counter()
    m.fit(train, callback=clock)
    return train.n_tokens / float(np.median(clock.times)), m.components_


def run_tomotopy(train, K, iters, timed, workers, alpha, beta):
    import tomotopy as tp

    m = tp.LDAModel(k=K, alpha=alpha, eta=beta, seed=1)
    m.optim_interval = 0
    for d in range(train.n_docs):
        m.add_doc([str(w) for w in train.doc(d)])
    m.train(0, workers=workers)
    m.train(iters - timed, workers=workers)
    t = median_time(lambda: m.train(1, workers=workers), timed)
    phi = np.full((K, train.vocab_size), 1e-12)
    vocab = [int(w) for w in m.used_vocabs]
    for k in range(K):
        phi[k, vocab] = m.get_topic_word_dist(k)
    phi /= phi.sum(1, keepdims=True)
    return train.n_tokens / t, phi


def run_lda_pkg(train, K, iters, alpha, beta):
    import logging

    import lda

    logging.getLogger("lda").setLevel(logging.ERROR)
    X = train.to_bow()
    m = lda.LDA(n_topics=K, n_iter=iters, alpha=alpha, eta=beta, random_state=1, refresh=10**9)
    t = time.perf_counter()
    m.fit(X)
    return train.n_tokens * iters / (time.perf_counter() - t), m.topic_word_


def whole_fit(train, K, iters, reps, alpha, beta):
    """Median of ``reps`` whole fits (random start and burn-in included, compile and corpus loading excluded)."""
    import tomotopy as tp

    from dptopic import LDA

    def dptopic_fit(n_jobs, parallel):
        def go():
            LDA(K, alpha=alpha, beta=beta, n_iter=iters, seed=0, n_jobs=n_jobs, verbose=0, eval_every=0,
                parallel=parallel).fit(train)
        LDA(K, n_iter=1, n_jobs=n_jobs, verbose=0, parallel=parallel).fit(train.subset(range(50)))  # compile
        return go

    def tomotopy_fit(workers):
        def go():
            m = tp.LDAModel(k=K, alpha=alpha, eta=beta, seed=1)
            m.optim_interval = 0
            for d in range(train.n_docs):
                m.add_doc(words[d])
            t = time.perf_counter()
            m.train(iters, workers=workers)
            return time.perf_counter() - t
        return go

    words = [[str(w) for w in train.doc(d)] for d in range(train.n_docs)]
    systems = [("dptopic n_jobs=1", dptopic_fit(1, "adlda")), ("dptopic n_jobs=2 adlda", dptopic_fit(2, "adlda")),
               ("dptopic n_jobs=2 partition", dptopic_fit(2, "partition")),
               ("tomotopy workers=1", tomotopy_fit(1)), ("tomotopy workers=2", tomotopy_fit(2))]
    times = {name: [] for name, _ in systems}
    for _ in range(reps):  # interleaved, so that load changes hit every system alike
        for name, go in systems:
            t = time.perf_counter()
            inner = go()
            times[name].append(inner if inner is not None else time.perf_counter() - t)
    return {name: float(np.median(ts)) for name, ts in times.items()}, times


def scaling(train, K, iters, rounds, block, alpha, beta):
    """Median seconds per sweep of dptopic and tomotopy on 1 and 2 threads, the systems interleaved round by round."""
    import tomotopy as tp

    from dptopic import LDA
    from dptopic.backends.threads import ThreadBackend

    burn = max(iters - rounds * block, 0)
    words = [[str(w) for w in train.doc(d)] for d in range(train.n_docs)]
    LDA(K, n_iter=1, n_jobs=2, verbose=0).fit(train.subset(range(min(50, train.n_docs))))    # compile: not timed

    def dptopic(jobs):
        b = ThreadBackend(jobs, "partition")
        b.open(train, K, np.random.default_rng(0), LDA(K)._kernel)
        for _ in range(burn):
            b.sweep(alpha, beta)

        def go():
            t, c = time.perf_counter(), time.process_time()
            for _ in range(block):
                b.sweep(alpha, beta)
            return (time.perf_counter() - t) / block, (time.process_time() - c) / block
        return go, b.close

    def tomotopy(workers):
        m = tp.LDAModel(k=K, alpha=alpha, eta=beta, seed=1)
        m.optim_interval = 0
        for w in words:
            m.add_doc(w)
        m.train(burn, workers=workers)

        def go():
            t, c = time.perf_counter(), time.process_time()
            m.train(block, workers=workers)
            return (time.perf_counter() - t) / block, (time.process_time() - c) / block
        return go, lambda: None

    systems = {"dptopic 1 thread": dptopic(1), "dptopic 2 threads": dptopic(2),
               "tomotopy 1 worker": tomotopy(1), "tomotopy 2 workers": tomotopy(2)}
    times = {name: [] for name in systems}
    cpu = {name: [] for name in systems}
    names = list(systems)
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            wall, used = systems[name][0]()
            times[name].append(wall)
            cpu[name].append(used)
    for _, close in systems.values():
        close()
    medians = {name: float(np.median(ts)) for name, ts in times.items()}
    return medians, times, {name: float(np.median(c)) for name, c in cpu.items()}


def memory_probe(K, corpus_path):
    """Peak RSS of a fresh process that loads the saved corpus, then fits (1 thread).

    Growth = peak during fit (VmHWM, reset after loading) − RSS after load; we subtract the count matrices (ndk, nwk, nk)
    and SparseLDA's per-word topic lists, leaving what the sampler holds per token.
    """
    code = f"""
from dptopic.corpus import Corpus
from dptopic import LDA

def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key):
            return int(line.split()[1]) * 1024

LDA({K}, n_iter=1, verbose=0).fit(Corpus.from_token_ids([list(range({K}))] * 2, [str(i) for i in range({K})]))  # compile/import
c = Corpus.load({str(corpus_path)!r})
open('/proc/self/clear_refs', 'w').write('5')  # reset the peak (VmHWM) to the current RSS
base = status('VmRSS')
LDA({K}, n_iter=3, verbose=0, eval_every=0).fit(c)
print(base, status('VmHWM'), c.n_tokens, c.n_docs, c.vocab_size)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    base, peak, n, D, V = map(int, out)
    counts = 4 * (D * K + V * K + K)  # ndk, nwk, nk (int32)
    lists = 4 * 2 * V * K + 4 * V     # SparseLDA per-word topic lists + positions
    outputs = (8 + 4) * K * V         # components_ (float64) and topic_word_counts_ (int32), both K x V
    return (peak - base - counts - lists - outputs) / n, (peak - base) / n, counts + lists + outputs


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--timed", type=int, default=10)
    ap.add_argument("--topics", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--no-lda", action="store_true", help="skip the (slow) lda package")
    ap.add_argument("--docs", type=int, default=5000, help="documents of the synthetic corpus (default 5000: 1M tokens)")
    ap.add_argument("--json", default=None, help="also write the results as JSON here")
    ap.add_argument("--scaling", type=int, default=0, metavar="ROUNDS",
                    help="instead: two-thread scaling against tomotopy's, ROUNDS interleaved rounds (see above)")
    ap.add_argument("--block", type=int, default=5, help="sweeps per system and round of --scaling (default 5)")
    ap.add_argument("--whole-fit", type=int, default=0, metavar="REPS",
                    help="instead: time REPS whole fits of --iters sweeps per system (median), burn-in included")
    a = ap.parse_args(argv)
    try:
        import tomotopy  # noqa: F401
    except ImportError:
        print("bench_cgs: the peer tomotopy is not installed (pip install 'dptopic[bench]'): skipped")
        return 0
    if not a.no_lda:
        try:
            import lda  # noqa: F401
        except ImportError:
            print("the lda package is not installed (pip install 'dptopic[bench]'): its rows are skipped")
            a.no_lda = True
    s, train, test = build(n_docs=a.docs)
    if a.scaling:
        import os

        print(f"machine: {machine()}; load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} at the start")
        print(f"corpus: synthetic LDA, {s.corpus.n_docs} docs, train {train.n_tokens} tokens, V=5000, true K=50;"
              f" {a.iters} sweeps per system from a random start, the last {a.scaling} x {a.block} timed in"
              f" {a.scaling} interleaved rounds; seconds per sweep: median over the rounds\n")
        for K in a.topics:
            med, all_times, cpu = scaling(train, K, a.iters, a.scaling, a.block, 0.1, 0.01)
            rows = [(name, f"{t * 1e3:.1f}", " ".join(f"{x * 1e3:.0f}" for x in all_times[name]),
                     f"{train.n_tokens / t / 1e6:.2f}M", f"{cpu[name] * 1e3:.1f}") for name, t in med.items()]
            print(f"== K={K} ==")
            table(rows, ("system", "ms/sweep", "rounds (ms)", "tokens/s", "CPU ms/sweep"))
            bound = {who: 2 * cpu[one] / cpu[two] for who, one, two in
                     (("dptopic", "dptopic 1 thread", "dptopic 2 threads"),
                      ("tomotopy", "tomotopy 1 worker", "tomotopy 2 workers"))}
            print(f"CPU time of a sweep, all threads: 2 threads / 1 thread: dptopic {2 / bound['dptopic']:.3f},"
                  f" tomotopy {2 / bound['tomotopy']:.3f}; the speed-up two free cores would give if no thread waited"
                  f" (2 x CPU of 1 / CPU of 2): dptopic {bound['dptopic']:.2f}x, tomotopy {bound['tomotopy']:.2f}x,"
                  f" fraction {bound['dptopic'] / bound['tomotopy']:.2f} (less moved by other jobs than the wall"
                  " times: what a second thread adds in work, not what it loses waiting)")
            ours = med["dptopic 1 thread"] / med["dptopic 2 threads"]
            theirs = med["tomotopy 1 worker"] / med["tomotopy 2 workers"]
            t = {name: np.asarray(ts) for name, ts in all_times.items()}
            per_round = ((t["dptopic 1 thread"] / t["dptopic 2 threads"])
                         / (t["tomotopy 1 worker"] / t["tomotopy 2 workers"]))
            print(f"2 threads / 1 thread: dptopic {ours:.2f}x, tomotopy {theirs:.2f}x (medians); dptopic's scaling is"
                  f" {np.median(per_round):.2f} of tomotopy's (target >= 0.95; the median over the rounds of each"
                  f" round's fraction, {' '.join(f'{x:.2f}' for x in per_round)}); one thread: dptopic"
                  f" {med['tomotopy 1 worker'] / med['dptopic 1 thread']:.2f}x tomotopy's speed;"
                  f" load average {os.getloadavg()[0]:.1f} at the end\n", flush=True)
        return
    if a.whole_fit:
        print(f"machine: {machine()}")
        print(f"corpus: synthetic LDA, {s.corpus.n_docs} docs, train {train.n_tokens} tokens, V=5000, true K=50;"
              f" K={' '.join(map(str, a.topics))}; whole fit of {a.iters} sweeps"
              f" from a random start (compile excluded), median of {a.whole_fit}, systems interleaved\n")
        for K in a.topics:
            med, all_times = whole_fit(train, K, a.iters, a.whole_fit, 0.1, 0.01)
            ref1, ref2 = med["tomotopy workers=1"], med["tomotopy workers=2"]
            rows = [(name, f"{t:.2f}s", " ".join(f"{x:.1f}" for x in all_times[name]), f"{ref1 / t:.2f}x",
                     f"{ref2 / t:.2f}x") for name, t in med.items()]
            print(f"== K={K} ==")
            table(rows, ("system", "median", "runs (s)", "speed vs tomotopy(1)", "vs tomotopy(2)"))
            d1 = med["dptopic n_jobs=1"]
            print(f"2 threads / 1 thread: adlda {d1 / med['dptopic n_jobs=2 adlda']:.2f}x, partition"
                  f" {d1 / med['dptopic n_jobs=2 partition']:.2f}x; tomotopy {ref1 / ref2:.2f}x\n")
        return
    import tempfile

    corpus_path = train.save(Path(tempfile.mkdtemp()) / "bench_train.npz")
    print(f"machine: {machine()}")
    print(f"corpus: synthetic LDA, {s.corpus.n_docs} docs, {s.corpus.n_tokens} tokens, V=5000, true K=50, "
          f"alpha=0.1, beta=0.01; train {train.n_tokens} tokens, test {test.n_docs} docs")
    print(f"K={' '.join(map(str, a.topics))}; {a.iters} sweeps per system; throughput = median of the last {a.timed}"
          " sweeps\n")
    results = []
    for K in a.topics:
        rows, res = [], {}
        alpha, beta = 0.1, 0.01
        for name, fn in [("dptopic n_jobs=1", lambda: run_dptopic(train, K, a.iters, a.timed, 1, alpha, beta)),
                         ("dptopic n_jobs=2", lambda: run_dptopic(train, K, a.iters, a.timed, 2, alpha, beta)),
                         ("tomotopy workers=1", lambda: run_tomotopy(train, K, a.iters, a.timed, 1, alpha, beta)),
                         ("tomotopy workers=2", lambda: run_tomotopy(train, K, a.iters, a.timed, 2, alpha, beta))] + \
                ([] if a.no_lda else [("lda package", lambda: run_lda_pkg(train, K, a.iters, alpha, beta))]):
            tps, phi = fn()
            ppl = perplexity(phi, test, alpha, mode="completion", seed=0)
            rec = topic_recovery(phi, s.phi) if K == 50 else float("nan")
            res[name] = (tps, ppl, rec)
        ref1 = res["tomotopy workers=1"][0]
        ref_ppl = res["tomotopy workers=1"][1]
        for name, (tps, ppl, rec) in res.items():
            rows.append((name, f"{tps / 1e6:.2f}M", f"{tps / ref1:.2f}x", f"{ppl:.1f}", f"{ppl / ref_ppl - 1:+.1%}",
                         "-" if np.isnan(rec) else f"{rec:.3f}"))
            results.append({"K": K, "system": name, "tokens_per_s": tps, "ratio_to_tomotopy_1": tps / ref1,
                            "perplexity": ppl, "recovery": rec})
        print(f"== K={K} ==")
        table(rows, ("system", "tokens/s", "vs tomotopy(1)", "perplexity", "vs tomotopy", "recovery"))
        d1, d2 = res["dptopic n_jobs=1"][0], res["dptopic n_jobs=2"][0]
        print(f"dptopic 2 threads / 1 thread: {d2 / d1:.2f}x")
        per_tok, raw, counts = memory_probe(K, corpus_path)
        print(f"memory: peak RSS growth during fit = {raw:.1f} B/token; minus K x V / D x K matrices "
              f"({counts / 1e6:.1f} MB) = {per_tok:.1f} B/token (target <= 12)\n")
        results.append({"K": K, "memory_bytes_per_token_excl_counts": per_tok, "threads_speedup": d2 / d1})
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
