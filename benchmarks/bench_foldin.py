"""Inference of document-topic proportions for new documents: dptopic's fold-in on 1 and 2 threads against
scikit-learn's ``LatentDirichletAllocation.transform`` (variational E-step), same documents, same K, same run.

    PYTHONPATH=src python benchmarks/bench_foldin.py [--repeat 3] [--topics 20] [--sweeps 100] [--max-docs N]

Corpus: 20 Newsgroups, a model fitted on the train split (V = 2,000), θ inferred for the test split. dptopic's
fold-in runs ``--sweeps`` Gibbs sweeps per document (half burn-in, the default of ``transform``); each document draws
from its own stream, so the two thread counts return the same θ, which the benchmark checks. Median of ``--repeat``
runs after one warm-up (compilation excluded). Smoke run (seconds): ``--max-docs 300 --repeat 1 --sweeps 10``.
"""
from __future__ import annotations

import argparse

import numpy as np

from _common import machine, median_time, table
from dptopic import LDA
from dptopic.datasets import load_20newsgroups


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--sweeps", type=int, default=100)
    ap.add_argument("--max-docs", type=int, default=None,
                    help="use only the first N training and N test documents (a smoke run; default: all)")
    a = ap.parse_args(argv)
    from sklearn.decomposition import LatentDirichletAllocation

    tr = load_20newsgroups("train", max_vocab=2000)
    te = load_20newsgroups("test", vocabulary=tr.vocabulary)
    if a.max_docs:
        tr, te = tr.subset(range(min(a.max_docs, tr.n_docs))), te.subset(range(min(a.max_docs, te.n_docs)))
    Xtr, Xte = tr.to_bow(), te.to_bow()
    K, n, burn = a.topics, a.sweeps, a.sweeps // 2
    model = LDA(n_topics=K, n_iter=50, seed=0, verbose=0).fit(tr)
    sk = LatentDirichletAllocation(n_components=K, learning_method="batch", max_iter=10, random_state=0).fit(Xtr)
    one = model.set_params(n_jobs=1).transform(te, n_iter=n, burn_in=burn)
    two = model.set_params(n_jobs=2).transform(te, n_iter=n, burn_in=burn)
    assert np.array_equal(one, two), "fold-in must not depend on n_jobs"
    sk.transform(Xte)
    rows = []
    t_sk = median_time(lambda: sk.transform(Xte), a.repeat)
    for jobs in (1, 2):
        model.set_params(n_jobs=jobs)
        t = median_time(lambda: model.transform(te, n_iter=n, burn_in=burn), a.repeat)
        rows.append((f"dptopic fold-in, {n} sweeps, n_jobs={jobs}", f"{t:.2f}", f"{t / t_sk:.2f}"))
    rows.append(("scikit-learn LatentDirichletAllocation.transform", f"{t_sk:.2f}", "1.00"))
    print(f"{machine()}; 20 Newsgroups test: {te.n_docs:,} documents, {te.n_tokens:,} tokens, V = {te.vocab_size:,},"
          f" K = {K}; model: CGS 50 sweeps; fold-in {n} sweeps; median of {a.repeat}")
    table(rows, ("inference", "seconds", "ratio to scikit-learn"))


if __name__ == "__main__":
    main()
