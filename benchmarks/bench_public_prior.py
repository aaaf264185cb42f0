"""Public documents as a prior for DocDPCooccurrence (``fit(..., public_corpus=)``): topic coverage at one epsilon.

20 Newsgroups train (V words, K topics): ``--public`` posts drawn apart at random (split seed 0) are the public
corpus, the rest the private training set. Coverage (``dptopic.evaluation.topic_coverage``) of a non-private CGS LDA
run on the whole training set (seed 0), as a share of a second LDA run's (seed 1) coverage of it (the "ceiling").
Rows, each over ``--runs`` runs (private trainers unseeded, as a user runs them; public LDA seeds 0..runs-1):

* public-only LDA: CGS on the public posts alone;
* private-only: DocDPCooccurrence on the private posts;
* public+private: DocDPCooccurrence with ``public_corpus=`` (the default route; which route it kept is counted);
* the same without carrying the tail onto each topic's words (``PUBLIC_EM_STEPS = 0``), to show that step's share.

Each row is printed as a ratio to the ceiling, beside the public-only peer it must beat.

    python benchmarks/bench_public_prior.py                  # 500 public posts, epsilon 1, 3 runs
    python benchmarks/bench_public_prior.py --epsilon 4 --runs 1
    python benchmarks/bench_public_prior.py --dictionaries  # public dictionaries as the prior, every post private
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

import _common  # noqa: F401 - this run's own ledger and state folders (no benchmark writes the user's)
import dptopic
import dptopic.moments.public_prior as public_prior
from dptopic.datasets import load_20newsgroups
from dptopic.evaluation import topic_coverage


def summary(values) -> str:
    v = np.asarray(values, float)
    se = v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else float("nan")
    return f"{v.mean():.3f} (se {se:.3f}; runs {', '.join(f'{x:.3f}' for x in v)})"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--public", type=int, default=500)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--delta", type=float, default=1e-5)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--cgs-iterations", type=int, default=200)
    ap.add_argument("--dictionaries", action="store_true",
                    help="the public corpus is Debian's dict-wn, dict-gcide and dict-foldoc definitions over the"
                         " vocabulary (public knowledge, not documents of the domain); every post is private")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")     # the library's warnings are for users, not for a benchmark that refits
    train = load_20newsgroups("train", max_vocab=a.vocab)
    if a.dictionaries:
        from dptopic.datasets import load_dictionaries

        public, private = load_dictionaries(train.vocabulary), train
        what = f"{public.n_docs:,} public dictionary definitions"
    else:
        order = np.random.default_rng(0).permutation(train.n_docs)
        public, private = train.subset(np.sort(order[:a.public])), train.subset(np.sort(order[a.public:]))
        what = f"{public.n_docs} public posts apart"
    print(f"20 Newsgroups train: {train.n_docs} posts, V={train.vocab_size}, K={a.topics}; {what},"
          f" {private.n_docs} private; epsilon={a.epsilon:g}, delta={a.delta:g}; CGS {a.cgs_iterations} sweeps;"
          f" {a.runs} run(s)")
    lda = lambda corpus, seed: dptopic.LDA(n_topics=a.topics, n_iter=a.cgs_iterations, seed=seed,  # noqa: E731
                                           verbose=0).fit(corpus)
    reference = lda(train, 0)
    ceiling = topic_coverage(lda(train, 1), reference)["coverage"]
    print(f"ceiling (LDA seed 1 vs seed 0): coverage {ceiling:.3f}; figures below are shares of it")
    share = lambda model: topic_coverage(model, reference)["coverage"] / ceiling  # noqa: E731
    cooc = lambda: dptopic.DocDPCooccurrence.from_budget(a.epsilon, a.delta, n_topics=a.topics)  # noqa: E731
    rows = {"public-only LDA": [], "private-only DocDPCooccurrence": [], "public+private (public_corpus=)": [],
            "public+private, tail not carried": []}
    routes, seconds = [], []
    for run in range(a.runs):
        rows["public-only LDA"].append(share(lda(public, run)))
        rows["private-only DocDPCooccurrence"].append(share(cooc().fit(private)))
        t = time.perf_counter()
        model = cooc().fit(private, public_corpus=public)
        seconds.append(time.perf_counter() - t)
        rows["public+private (public_corpus=)"].append(share(model))
        routes.append(model.public_route_)
        steps, public_prior.PUBLIC_EM_STEPS = public_prior.PUBLIC_EM_STEPS, 0
        try:
            rows["public+private, tail not carried"].append(share(cooc().fit(private, public_corpus=public)))
        finally:
            public_prior.PUBLIC_EM_STEPS = steps
    for name, values in rows.items():
        print(f"{name:36} coverage / ceiling {summary(values)}")
    both = np.mean(rows["public+private (public_corpus=)"])
    print(f"ratio public+private / public-only LDA: {both / np.mean(rows['public-only LDA']):.2f};"
          f" / private-only: {both / np.mean(rows['private-only DocDPCooccurrence']):.2f}")
    print(f"routes kept: {', '.join(routes)}; fit with public_corpus= {np.median(seconds):.1f} s (median)")


if __name__ == "__main__":
    main()
