"""More words for ``transform`` than for finding topics: how far can the words outside DocDPCooccurrence's kept ones
lift downstream accuracy (a route of docs/research/utility.md, measured and not kept)?

DocDPCooccurrence finds its topics on the few hundred words it keeps (200 on 20 Newsgroups at epsilon 1, V = 2,000);
every other word gets the same noisy-frequency distribution in every topic, so it tells ``transform`` nothing about a
document's topics. The route: once the topics are found, estimate each topic's distribution over the other words from
a second release, ``S[k, w] = sum_d theta[d, k] c[d, w] / ||c_d||_2`` (theta from the private topics by fold-in),
whose per-document contribution has Frobenius norm at most 1, the same bound as the co-occurrence release; each
topic keeps its mass on the other words and spreads it by its row of ``max(S + N(0, sigma^2), 0)``.

This script measures the route's ceiling before any budget is split: the second release at ``sigma`` in ``--sigmas``
(0 = no noise, what no budget buys), added on top of a DocDPCooccurrence model fitted at the full epsilon. If even
the noise-free release stays short of the target, splitting the budget cannot reach it. Accuracy: logistic
regression on ``transform`` of the training split, scored on the test split (``dptopic.evaluation.downstream_score``),
as a share of non-private LDA's (CGS, 300 sweeps, seed 0), the peer fitted in the same run. Private fits unseeded; the noise of the second release
seeded by run.

    python benchmarks/bench_transform_words.py                      # 20 Newsgroups, epsilon 1, 3 runs
    python benchmarks/bench_transform_words.py --runs 5 --sigmas 0 1 2 4
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import machine  # noqa: E402
from bench_utility import corpora  # noqa: E402


def normalised_counts(corpus) -> sp.csr_matrix:
    """Each document's word counts divided by their Euclidean norm (documents x words)."""
    doc = np.repeat(np.arange(corpus.n_docs), np.diff(corpus.doc_ptr))
    X = sp.csr_matrix((np.ones(len(corpus.word_ids)), (doc, corpus.word_ids)), shape=(corpus.n_docs, corpus.vocab_size))
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).ravel()
    return sp.csr_matrix(X.multiply(1.0 / np.maximum(norms, 1.0)[:, None]))


def extended(components, kept, S, sigma, rng):
    """``components`` with each topic's mass on the words outside ``kept`` spread by its row of the noisy ``S``."""
    noisy = np.maximum(S + (rng.normal(0.0, sigma, S.shape) if sigma > 0 else 0.0), 0.0) + 1e-9
    beta = components.copy()
    rest = np.setdiff1d(np.arange(components.shape[1]), kept)
    share = components[:, rest].sum(axis=1, keepdims=True)
    beta[:, rest] = share * noisy[:, rest] / noisy[:, rest].sum(axis=1, keepdims=True)
    return beta / beta.sum(axis=1, keepdims=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default="20newsgroups", choices=("20newsgroups", "20newsgroups-5000", "sotu"))
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sigmas", type=float, nargs="+", default=[0.0, 2.0, 4.0, 8.0])
    a = ap.parse_args(argv)
    if a.runs < 1 or a.epsilon <= 0 or any(s < 0 for s in a.sigmas):
        ap.error("--runs must be at least 1, --epsilon above 0 and every --sigmas value at least 0")
    import dptopic
    from dptopic.evaluation import downstream_score

    warnings.simplefilter("ignore")     # the library's warnings are for users, not for a benchmark that refits
    (_, train, test), = list(corpora([a.corpus], a.vocab))
    print(f"{machine()}; {a.corpus}: {train.n_docs:,} training documents, V={train.vocab_size}, K={a.topics},"
          f" epsilon={a.epsilon:g}")
    t = time.perf_counter()
    lda = dptopic.LDA(n_topics=a.topics, n_iter=300, seed=0, verbose=0).fit(train)
    base = downstream_score(lda, train, None, test, None)["accuracy"]
    print(f"non-private LDA (CGS, 300 sweeps): accuracy {base:.3f} ({time.perf_counter() - t:.0f} s)")
    X = normalised_counts(train)
    rows = {"as fitted": []} | {f"other words from a release at sigma {s:g}": [] for s in a.sigmas}
    sigma_main = []
    for run in range(a.runs):
        m = dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=1e-5).fit(train)
        sigma_main.append(m.noise_std_)
        fitted = m.components_.copy()
        rows["as fitted"].append(downstream_score(m, train, None, test, None)["accuracy"] / base)
        S = np.asarray((X.T @ np.asarray(m.transform(train))).T)      # K x V, read outside any guarantee here
        for s in a.sigmas:
            m.components_ = extended(fitted, np.asarray(m.kept_words_), S, s, np.random.default_rng([run, 7]))
            rows[f"other words from a release at sigma {s:g}"].append(
                downstream_score(m, train, None, test, None)["accuracy"] / base)
        print(f"run {run}: {len(m.kept_words_)} words kept, co-occurrence release sigma {m.noise_std_:.2f};"
              f" accuracy share {rows['as fitted'][-1]:.2f} as fitted", flush=True)
    print(f"\naccuracy as a share of non-private LDA's, median of {a.runs} (min-max); the co-occurrence release's own"
          f" sigma was {np.median(sigma_main):.2f} at the full epsilon")
    for label, v in rows.items():
        print(f"  {label:45s} {np.median(v):.2f} ({min(v):.2f}-{max(v):.2f})")


if __name__ == "__main__":
    main()
