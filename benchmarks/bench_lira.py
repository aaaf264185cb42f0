"""LiRA end to end: 64 shadow models at K=20, V=1000 on all of 20 Newsgroups train (about 11k documents).

Target: trained and scored in <= 10 minutes on 2 cores with dptopic's fastest trainer (collapsed Gibbs
LDA, SparseLDA kernel). Peers, timed in the same run on the same machine:

* scoring: SciPy SLSQP per document (what the published attack code does) against the compiled EM
  fixed point, on the same Phi and the same documents (SLSQP on a sample, extrapolated);
* training: one scikit-learn LatentDirichletAllocation shadow (default learning parameters) against
  one dptopic shadow.

Usage: PYTHONPATH=src python benchmarks/bench_lira.py [--shadows 64] [--iterations 50] [--jobs 2] [--max-docs N]
Smoke run (seconds; the target line is then meaningless):
       bench_lira.py --shadows 4 --iterations 5 --max-docs 400 --slsqp-docs 20 --jobs 1  (shadows: even, >= 4)
The machine may be shared: wall-clock times are then noisy; the script prints the load average.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from _common import machine, table


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--shadows", type=int, default=64)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=50, help="CGS sweeps per shadow")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--slsqp-docs", type=int, default=200, help="documents scored by the SLSQP peer")
    a = ap.parse_args(argv)

    from scipy.optimize import minimize

    from dptopic.attacks.lira import estimator_trainer, run_lira, sklearn_trainer
    from dptopic.datasets import load_20newsgroups
    from dptopic.kernels.em import document_statistic

    corpus = load_20newsgroups("train", max_vocab=1000)
    if a.max_docs:
        corpus = corpus.subset(range(min(a.max_docs, corpus.n_docs)))
    print(f"machine: {machine()}; load average {os.getloadavg()}")
    print(f"corpus: 20 Newsgroups train, {corpus.n_docs} documents, {corpus.n_tokens} tokens, V={corpus.vocab_size};"
          f" K={a.topics}; {a.shadows} shadows; CGS {a.iterations} sweeps; {a.jobs} threads")
    fn = estimator_trainer("lda", n_topics=a.topics, n_iter=a.iterations, alpha=1.0 / a.topics, beta=1.0 / a.topics)

    t = time.perf_counter()
    res = run_lira(corpus, fn, n_shadows=a.shadows, seed=0, n_jobs=a.jobs, verbose=1)
    total = time.perf_counter() - t

    # peers on one half of the corpus
    rng = np.random.default_rng(1)
    half = corpus.subset(np.sort(rng.permutation(corpus.n_docs)[: corpus.n_docs // 2]))
    t = time.perf_counter()
    phi = np.asarray(fn(half, rng).components_)
    t_ours_train = time.perf_counter() - t
    t = time.perf_counter()
    sklearn_trainer(a.topics)(half, rng)
    t_sk_train = time.perf_counter() - t
    X = corpus.to_bow()
    t = time.perf_counter()
    document_statistic(phi, X, tol=1e-4)
    t_em = time.perf_counter() - t
    n = min(a.slsqp_docs, corpus.n_docs)
    t = time.perf_counter()
    K = phi.shape[0]
    for d in range(n):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        P, c = phi[:, X.indices[lo:hi]], X.data[lo:hi].astype(float)
        minimize(lambda th: -np.sum(c * np.log(np.maximum(th @ P, 1e-300))), np.full(K, 1 / K), method="SLSQP",
                 bounds=[(0, 1)] * K, constraints=[{"type": "eq", "fun": lambda th: th.sum() - 1}])
    t_slsqp = (time.perf_counter() - t) / n * corpus.n_docs

    rows = [["LiRA end to end (train + score all shadows)", f"{total:.1f} s", "target <= 600 s",
             "met" if total <= 600 else "NOT met"],
            ["score one Phi, all documents: EM (ours)", f"{t_em:.2f} s", "", ""],
            ["score one Phi, all documents: SLSQP (published)", f"{t_slsqp:.1f} s (extrapolated from {n})",
             f"ratio {t_slsqp / t_em:.0f}x", ""],
            ["train one shadow: dptopic CGS", f"{t_ours_train:.2f} s", "", ""],
            ["train one shadow: sklearn LDA", f"{t_sk_train:.2f} s", f"ratio {t_sk_train / t_ours_train:.1f}x", ""]]
    table(rows, ["step", "time", "vs peer", "target"])
    s = res.summaries["lira_online"]
    print(f"online LiRA: AUC {s['auc']:.3f}, TPR@1% {s['tpr_at_fpr_0.01']:.2%}, TPR@0.1% {s['tpr_at_fpr_0.001']:.2%}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
