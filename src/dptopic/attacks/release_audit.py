"""A white-box audit with one training run: canaries scored on the released statistic itself (``dptopic audit``'s
one-run design scored on the release).

The one-run design of :mod:`dptopic.attacks.one_run` (Steinke, Nasr & Jagielski 2023) scores each canary through the
released topics. The strongest audits score the release the noise was added to (Nasr et al. 2021, 2023): this module
does so for :class:`~dptopic.models.DocDPCooccurrence`, whose released noisy co-occurrence matrix holds one cell per
pair of kept words, and for :class:`~dptopic.models.DocDPEM`, whose every iteration releases a noisy topics x words
statistic (canaries on words of their own, each iteration's residual read in their columns: :func:`_em_scores`), and
for :class:`~dptopic.models.DPSVI` and :class:`~dptopic.models.HDPLDA`, whose every step or iteration releases a noisy
statistic over the whole vocabulary (canaries on fresh words no known document holds, so the known documents' share of
their columns is exactly zero: :func:`_fresh_word_audit`).

The design.

1. **Canaries on words the release holds.** Each canary unit (a document, or with ``canary_unit="person"`` a person
   of ``canary_documents`` documents) gets a pair of words of its own among the words most of the known documents
   hold (the release keeps the most frequent words); every document of the unit is that pair, one token each. One such
   document adds ``1/sqrt(2)`` to the two cells of its pair and nothing elsewhere (its pair matrix ``c c^T - diag(c)``
   has two entries 1 and Frobenius norm ``sqrt(2)``).
2. **Independent fair coins** decide which units are added to the corpus (drawn after the canaries were written), and
   ONE model is trained. The audit records the noisy matrix the model released (:mod:`dptopic.mechanisms.observer`).
3. **What the auditor knows is subtracted.** The auditor knows every document but the canaries: it re-runs the
   statistic on the known documents alone, following the audited run's own releases (the word ranking it released
   chose the same words), and subtracts it. What remains in a canary's two cells is its own contribution, if included,
   plus the noise.
4. **Guesses fixed in advance.** A canary's score is the sum of its two residual cells. The audit guesses "in" for the
   ``k`` highest scores and "out" for the ``k`` lowest, with ``k`` chosen before the run from the number of canaries
   and the release's noise alone (the share that maximises the bound an ideal audit of that noise would expect), and
   bounds epsilon by Steinke et al.'s Thm 3.1 (:func:`dptopic.attacks.one_run.one_run_epsilon_bound`).

The bound is for adding or removing one canary unit. A canary person of ``K`` documents under a per-document claim is
covered only by group privacy (``K`` times epsilon): a bound above the per-document claim then says the claim does
not cover the person, which is what ``canary_unit="person"`` asks.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..corpus import Corpus, Vocabulary
from ..dataset_ledger.charge import shadow_runs
from ..errors import DPTopicError, ParameterError
from ..mechanisms.observer import observing
from ..models.registry import TRAINERS
from .lira import (
    ONE_RUN_SEED_NOTE,
    _check_corpus,
    _check_seed,
    claim_delta,
    claimed_epsilon,
    quiet_shadow_warnings,
    shadow_claim,
    verdict,
)
from .one_run import _whole, guesses, one_run_epsilon_bound, one_run_p_value

SUPPORTED = tuple(t.where.rsplit(".", 1)[1] for t in TRAINERS.values() if t.audit == "lira+release")
"""The trainers whose release the audit scores (their class names; the registry's ``audit="lira+release"``): the noisy
co-occurrence matrix of DocDPCooccurrence, each noisy EM statistic (topics x words) of DocDPEM, each step's noisy
sum of expected sufficient statistics (topics x words) of DPSVI, each iteration's Laplace-noised word-topic counts
of HDP-LDA."""

FRESH_WORDS = ("DPSVI", "HDPLDA")
"""The trainers audited with canaries on words of their own that no known document holds (:func:`_fresh_word_audit`):
their release holds every word of the vocabulary, and a known document adds nothing to a word it does not hold, so
the known documents' share of a canary's cells is exactly zero, whatever the trainer's own randomness (minibatch
sampling, variational or Gibbs assignments)."""

CANARY_UNITS = ("document", "person")

SHARES = (0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.15, 0.2, 0.25)
"""The shares of the canaries guessed each way among which :func:`planned_share` chooses."""

NOTE = ("white-box: canaries scored on the released noisy statistic (co-occurrence matrix, EM or SVI statistic,"
        " word-topic counts), the auditor's known documents subtracted; the confidence is exact under the one-run"
        " design's assumptions (each canary unit included by an independent fair coin drawn after the canaries were"
        " written; the guesses fixed in advance and depending on the data only through the release): Steinke, Nasr &"
        " Jagielski 2023, Thm 3.1. It bounds the procedure's epsilon for adding or removing one canary unit (HDP-LDA:"
        " replacing one canary token's word); see docs/auditing.md")


def expected_accuracy(mu: float, share: float) -> float:
    """The share of right guesses an audit expects when it guesses the top and bottom ``share`` of scores each way,
    every score unit normal and shifted by ``mu`` for an included canary (an ideal audit of a Gaussian release)."""
    from scipy.optimize import brentq  # SciPy's optimisers: heavy, loaded only when solving
    from scipy.stats import norm  # scipy.stats: heavy, loaded only when this runs

    t = brentq(lambda x: 0.5 * norm.sf(x - mu) + 0.5 * norm.sf(x) - share, -40.0, 40.0 + mu)
    return float(0.5 * norm.sf(t - mu) / share)


def ideal_bound(m: int, mu: float, share: float | None = None, confidence: float = 0.95, delta: float = 0.0) -> float:
    """The bound an ideal one-run audit of ``m`` canaries expects from a Gaussian release whose canaries shift their
    score by ``mu`` noise standard deviations (at the given ``share`` guessed each way, or the best of :data:`SHARES`).
    ``benchmarks/bench_audit_release.py`` and docs/auditing.md set the measured bound beside it."""
    shares = SHARES if share is None else (share,)
    best = 0.0
    for s in shares:
        k = max(1, int(s * m))
        v = int(round(2 * k * expected_accuracy(mu, k / m)))
        best = max(best, one_run_epsilon_bound(m, 2 * k, min(v, 2 * k), confidence, delta))
    return best


def planned_share(m: int, mu: float, confidence: float = 0.95) -> float:
    """The share of canaries guessed each way: the one of :data:`SHARES` whose expected bound is largest for a release
    whose canaries shift their score by ``mu`` noise standard deviations. It depends on ``m`` and the release's noise
    only (public settings), never on the scores, so the guesses stay fixed in advance."""
    best, share = -1.0, SHARES[0]
    for s in SHARES:
        k = max(1, int(s * m))
        v = int(round(2 * k * expected_accuracy(mu, k / m)))
        b = one_run_epsilon_bound(m, 2 * k, min(v, 2 * k), confidence, 0.0)
        if b > best:
            best, share = b, s
    return share


def canary_pairs(corpus: Corpus, n: int, rng: np.random.Generator, words: int | None = None) -> np.ndarray:
    """``n`` distinct pairs of word ids (an ``n x 2`` array) drawn among the ``words`` most frequent words of
    ``corpus`` by document frequency (by default the fewest that hold ``n`` pairs, with room to spare): the words the
    release keeps. Depends on the known documents and ``rng`` only."""
    V = corpus.vocab_size
    rows = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    df = np.bincount(np.unique(rows.astype(np.int64) * V + corpus.word_ids) % V, minlength=V)
    need = int(math.ceil((1 + math.sqrt(1 + 8 * 2 * n)) / 2))     # W (W - 1) / 2 >= 2 n: room to spare
    W = min(V, need if words is None else int(words))
    if W * (W - 1) // 2 < n:
        raise ParameterError("the vocabulary of {V} words holds fewer than {value:,} distinct word pairs: lower"
                             " {n_canaries} or audit a corpus with more words.", "n_canaries", n, V=V)
    top = np.lexsort((rng.random(V), -df))[:W]
    i, j = np.triu_indices(W, 1)
    flat = rng.choice(len(i), size=n, replace=False)
    i, j = i[flat], j[flat]
    return np.stack([top[i], top[j]], axis=1)


def with_units(corpus: Corpus, pairs: np.ndarray, include: np.ndarray, documents: int, person: bool) -> Corpus:
    """``corpus`` with the included canary units appended: each unit ``documents`` documents of its pair. With
    ``person`` (or a corpus that carries user ids) each unit is one person, with an id no document of the corpus has."""
    chosen = pairs[np.asarray(include, bool)]
    n_new = len(chosen) * documents
    lengths = np.concatenate([corpus.doc_lengths, np.full(n_new, 2)]).astype(np.int64)
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.concatenate([corpus.word_ids.astype(np.int64), np.repeat(chosen, documents, axis=0).ravel()])
    user_ids = None
    if person or corpus.user_ids is not None:
        known = list(corpus.user_ids) if corpus.user_ids is not None else [f"document {d}" for d in
                                                                          range(corpus.n_docs)]
        taken = set(known)
        units = np.flatnonzero(np.asarray(include, bool))
        names = [f"canary {u}" for u in units]
        while taken & set(names):           # never an id of the corpus's own
            names = ["_" + n for n in names]
        user_ids = known + [n for n in names for _ in range(documents)]
    return Corpus(ptr, ids.astype(np.int32), corpus.vocabulary, metadata=corpus.metadata, user_ids=user_ids)


def disjoint_pairs(corpus: Corpus, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` pairs of word ids, no word in two pairs, among the ``2 n`` most frequent words of ``corpus`` (by document
    frequency): DocDPEM's release holds every word, and a canary's contribution spreads over its words' columns, so
    two canaries never share one."""
    V = corpus.vocab_size
    if 2 * n > V:
        raise ParameterError("the vocabulary of {V} words holds at most {most:,} canaries with words of their own (a"
                             " DocDPEM release spreads each over its words' columns): give {n_canaries} at most"
                             " {most:,}.", "n_canaries", n, V=V, most=V // 2)
    rows = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
    df = np.bincount(np.unique(rows.astype(np.int64) * V + corpus.word_ids) % V, minlength=V)
    top = np.lexsort((rng.random(V), -df))[:2 * n]
    return rng.permutation(top).reshape(n, 2)


def _cooccurrence_scores(release, base, pairs, kept, V, planned):
    """DocDPCooccurrence: the sum of a canary's two cells of the residual matrix (module docstring); ``planned``: the
    co-occurrence release of the trainer's plan, whose calibrated sensitivity and noise the shift is read from."""
    slot = np.full(V, -1, dtype=np.int64)
    slot[kept] = np.arange(len(kept))
    residual = release.noisy - base.values
    a, b = slot[pairs[:, 0]], slot[pairs[:, 1]]
    held = (a >= 0) & (b >= 0)
    scores = np.zeros(len(pairs))
    scores[held] = residual[a[held], b[held]] + residual[b[held], a[held]]
    # a canary's two cells carry sqrt(2) of signal per included document (1/sqrt(2) each) over noise of std
    # sqrt(2) * sigma: one document (the plan's sensitivity) shifts its standardised score by sensitivity / sigma
    return scores, float(planned.sensitivity) / float(planned.scale), held


def _em_scores(audited, known, pairs, planned):
    """DocDPEM: each iteration's residual (the noisy statistic less the known documents') read in the canary's two
    columns, weighted across topics by the known documents' own statistic there (how the iteration's topics split
    that word, hence the canary's contribution, as the auditor can compute it), summed over the iterations."""
    scores = np.zeros(len(pairs))
    for rel, base in zip(audited, known):
        residual = rel.noisy - base.values
        for col in (pairs[:, 0], pairs[:, 1]):
            w = np.maximum(base.values[:, col], 0.0)
            norm = np.linalg.norm(w, axis=0)
            w = np.where(norm > 0, w / np.where(norm > 0, norm, 1.0), 1.0 / np.sqrt(w.shape[0]))
            scores += np.sum(w * residual[:, col], axis=0) / float(rel.scale)
    # at best (a contribution of the plan's sensitivity along the weights each iteration) the score shifts by
    # sqrt(T) sensitivity / sigma, T the planned iterations
    return (scores, np.sqrt(int(planned.count)) * float(planned.sensitivity) / float(planned.scale),
            np.ones(len(pairs), dtype=bool))


def with_fresh_words(corpus: Corpus, documents: list, n_words: int) -> Corpus:
    """``corpus`` with ``n_words`` new words appended to its vocabulary (named so that none is a word of it) and the
    given documents (arrays of word ids, the new words numbered from ``corpus.vocab_size``) appended."""
    V = corpus.vocab_size
    words = list(corpus.vocabulary.words)
    taken = set(words)
    prefix = "canaryword"
    while any(f"{prefix}{i}" in taken for i in range(n_words)):
        prefix = "_" + prefix
    lengths = np.concatenate([corpus.doc_lengths, [len(d) for d in documents]]).astype(np.int64)
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.concatenate([corpus.word_ids.astype(np.int64)] + [np.asarray(d, np.int64) for d in documents])
    assert ids.size == 0 or ids.max() < V + n_words
    return Corpus(ptr, ids.astype(np.int32), Vocabulary(words + [f"{prefix}{i}" for i in range(n_words)]),
                  metadata=corpus.metadata, user_ids=corpus.user_ids if not documents else None)


def _fresh_word_audit(corpus: Corpus, estimator, m: int, coins: np.ndarray, s_train):
    """DPSVI and HDP-LDA: canaries on words of their own that no known document holds (:data:`FRESH_WORDS`).

    DPSVI (add/remove one document): canary ``i`` is one document of ``n = min(clip, max_doc_len)`` tokens of its
    own word ``V + i``, added when its coin is heads. Its expected sufficient statistics sum to exactly ``n`` over the
    word's column (each token's topic responsibilities sum to 1), whatever the variational fit, with Frobenius norm at
    most ``n <= clip`` (never clipped). Each step's score is the column's noisy sum, standardised by the noise on it
    (``std sqrt(K)``); the canary's score sums the steps: a member shifts a step by ``n / (std sqrt(K))`` when
    Poisson sampling takes it (probability ``q``).

    HDP-LDA (one token's word replaced): canary ``i`` is one document of one token, of word ``V + 2i`` (heads) or
    ``V + 2i + 1`` (tails), the two worlds of one replacement. Each word's count summed over the topics is its number
    of tokens, whatever the Gibbs assignments; the score is the difference of the two words' noisy sums over the
    topics, summed over every release.

    Returns ``(scores, mu, releases, model, scale, canary length)``: ``mu`` the shift of an included canary's
    standardised score (for planning the guesses and the ideal bound only; the ranking does not use it)."""
    V = corpus.vocab_size
    svi = type(estimator).__name__ == "DPSVI"
    if svi:
        if estimator.clip is not None and estimator.clip < 1:
            raise DPTopicError(f"the release audit needs DPSVI's clip of at least 1 token (clip={estimator.clip:g}): a"
                               " canary of one token could be clipped and its contribution unknown.")
        n = int(min(estimator.max_doc_len, np.inf if estimator.clip is None else math.floor(estimator.clip)))
        docs = [np.full(n, V + i) for i in np.flatnonzero(coins > 0)]
        audited = with_fresh_words(corpus, docs, m)
        cols = np.arange(V, V + m)
    else:
        if getattr(estimator, "paper_literal", False):
            raise ParameterError("the release audit covers HDP-LDA's default release only, not {paper_literal} (its"
                                 " noise stays in the live counts, so each release carries the earlier ones' noise):"
                                 " drop {paper_literal}.", "paper_literal", True)
        if getattr(estimator, "epsilon_laplace_", None) is None:
            raise ParameterError("HDP-LDA without Laplace noise ({epsilon_laplace=}) releases exact counts and claims"
                                 " no guarantee: the release audit has nothing to audit; give {epsilon} or"
                                 " {epsilon_laplace}.", "epsilon_laplace", None)
        docs = [np.array([V + 2 * i + (0 if c > 0 else 1)]) for i, c in enumerate(coins)]
        audited = with_fresh_words(corpus, docs, 2 * m)
        cols = np.arange(V, V + 2 * m)
    sums: list = []
    scales: list = []
    n_topics = int(estimator.n_topics)

    def record(r):
        noisy = np.asarray(r.noisy)
        if svi and noisy.shape == (n_topics, V + m):
            sums.append(np.array(noisy[:, cols], dtype=float))
        elif not svi and noisy.shape == (V + 2 * m, n_topics):
            sums.append(np.array(noisy[cols, :].T, dtype=float))
        else:
            return
        scales.append(float(r.scale))

    model = _fit(estimator, audited, s_train, record)
    if not sums:
        raise DPTopicError(f"the audited {type(estimator).__name__} fit made no release the audit can read.")
    X = np.asarray(sums)                       # releases x topics x canary words
    # the noise each release drew: the scores and the planning simulation read it, so that a release drawn with less
    # noise than its plan is scored and planned as drawn (test_an_under_noised_release_is_refuted)
    scale = np.asarray(scales)[:, None, None]
    T = len(sums)
    sim = np.random.default_rng(0)             # the planning simulation: public settings only, never the data
    ms = 2_000
    if svi:
        q = float(estimator.sampling_rate)
        mu1 = n / scale                        # a member's shift of one cell in noise std, its topic concentrated
        scores = _svi_scores(X / scale, mu1, q)
        Z = sim.standard_normal((T, n_topics, 2 * ms))
        hit = (sim.random((T, 2 * ms)) < q) & (np.arange(2 * ms) < ms)
        topic = sim.integers(0, n_topics, size=(T, 2 * ms))
        Z[np.nonzero(hit)[0], topic[hit], np.nonzero(hit)[1]] += np.broadcast_to(mu1[:, 0, 0][:, None],
                                                                                 hit.shape)[hit]
        sim_scores = _svi_scores(Z, mu1, q)
        length = n
    else:
        scores = _hdp_scores(X[:, :, 0::2], X[:, :, 1::2], scale)
        Z = sim.laplace(0.0, 1.0, size=(2, T, n_topics, 2 * ms)) * scale
        topic = sim.integers(0, n_topics, size=(T, 2 * ms))
        heads = np.arange(2 * ms) < ms
        t_idx, c_idx = np.nonzero(np.ones((T, 2 * ms), bool))
        word = np.where(heads[c_idx], 0, 1)
        Z[word, t_idx, topic[t_idx, c_idx], c_idx] += 1.0
        sim_scores = _hdp_scores(Z[0], Z[1], scale)
        length = 1
    a, b = sim_scores[:ms], sim_scores[ms:]
    spread = math.sqrt((a.var() + b.var()) / 2) or 1.0
    mu = max(0.0, float(a.mean() - b.mean()) / spread)
    return scores, mu, T, model, float(np.mean(scales)), length


def _logmeanexp(a, axis):
    top = np.max(a, axis=axis, keepdims=True)
    return (np.log(np.mean(np.exp(a - top), axis=axis, keepdims=True)) + top).squeeze(axis)


def _svi_scores(X, mu1, q):
    """DPSVI: each step's likelihood ratio of "the canary's column holds its ``n`` tokens in one topic, if Poisson
    sampling took it" against "only noise" (``X`` in noise std, releases x topics x canaries), summed over the steps."""
    one = _logmeanexp(mu1 * X - mu1 ** 2 / 2, axis=1)
    if q < 1:
        one = np.logaddexp(math.log1p(-q), math.log(q) + one)
    return one.sum(axis=0)


def _hdp_scores(heads, tails, scale):
    """HDP-LDA: each release's Laplace likelihood ratio of "the heads word's count holds the token in one topic"
    against "the tails word's does", summed over the releases (``scale``: the Laplace scale per release)."""
    def one(x):
        return _logmeanexp((np.abs(x) - np.abs(x - 1.0)) / scale, axis=1)
    return (one(heads) - one(tails)).sum(axis=0)


DESIGN_NOTES = {
    "DPSVI": "; DPSVI: every step's noisy sum of expected sufficient statistics, each canary a document of its own"
             " word that no known document holds (the known documents' share of its column is exactly zero), scored"
             " by each step's likelihood ratio of its tokens in one topic (if Poisson sampling took it) against noise",
    "HDPLDA": "; HDP-LDA: every iteration's Laplace-noised word-topic counts, each canary one token whose word is one"
              " of two words of its own (heads or tails: one replacement apart), scored by each iteration's likelihood"
              " ratio of the token in one topic of the heads word against one of the tails word",
}

class _Released(BaseException):
    """Stops a fit after its last release: the topics that follow are post-processing of it, which the audit does
    not score."""


def _fit(estimator, corpus: Corpus, seed: np.random.SeedSequence, observer):
    est = type(estimator)(**{**estimator.get_params(), "seed": np.random.default_rng(seed)})
    # the audited runs are the audit's own shadows, never releases of the user's documents: on their own dataset
    with quiet_shadow_warnings(), observing(observer), shadow_runs():
        try:
            est.fit(corpus)
        except _Released:
            pass
    return est


def _planned_releases(estimator, corpus: Corpus) -> int:
    """How many releases a fit of ``estimator`` makes, from its release plan (public settings: DocDPCooccurrence ranks
    the words first unless it keeps them all), so that the audited fit can stop after its last one."""
    return sum(int(r.count) for r in estimator.release_plan(n_words=corpus.vocab_size).releases)


def release_audit(corpus: Corpus, estimator, n_canaries: int = 10_000, canary_unit: str = "document",
                  canary_documents: int = 1, confidence: float = 0.95, delta: float | None = None, seed=None,
                  share: float | None = None, claim: dict | None = None) -> dict:
    """Audit ``estimator``'s training procedure (an unfitted estimator of :data:`SUPPORTED`; fitted twice, with its
    parameters and a seed of the audit's) by canaries scored on its released statistic (module docstring).

    ``corpus``: the documents the auditor knows (public data, or the data holder's own); with user ids for a user-level
    trainer. ``canary_unit``: ``"document"`` (one document each) or ``"person"`` (``canary_documents`` documents
    each, one person id). ``share``: the share of canaries guessed each way (default: :func:`planned_share`).
    ``delta`` defaults to the claim's. ``claim``: the report audited (default: the trained model's own).

    Returns a dict as :func:`dptopic.attacks.one_run.one_run_audit` does, with ``score``, ``canary_unit``,
    ``canary_documents``, ``ideal_bound`` (what an ideal audit of this noise expects) and ``words_held`` (how many
    canary units had both words in the release).
    """
    _check_corpus(corpus)
    name = type(estimator).__name__
    if name not in SUPPORTED or not hasattr(estimator, "get_params"):
        raise DPTopicError(f"the release audit covers {', '.join(SUPPORTED)} (docdp-cooc, docdp, svi, hdp) only, not"
                           f" {name}: audit another trainer through its topics (the one-run audit's default).")
    m = _whole("n_canaries", n_canaries, 2)
    if canary_unit not in CANARY_UNITS:
        raise DPTopicError(f"invalid canary_unit={canary_unit!r}: give 'document' or 'person'.")
    K = _whole("canary_documents", canary_documents, 1)
    if canary_unit == "document" and K != 1:
        raise ParameterError("{canary_documents=} applies to {canary_unit=person}: a document canary is one"
                             " document.", "canary_documents", K, person="person")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise DPTopicError(f"invalid confidence={confidence!r}: must lie in (0, 1).")
    if share is not None and not (isinstance(share, float) and 0 < share <= 0.5):
        raise DPTopicError(f"invalid share={share!r}: give a share in (0, 0.5] of the canaries guessed each way.")
    if m * K * 2 > 10_000_000:
        raise ParameterError("{m:,} canaries of {K} documents hold more tokens than the audit can hold in memory:"
                             " lower {n_canaries} or {canary_documents}.", "n_canaries", m, m=m, K=K)
    user_level = getattr(estimator, "unit", "document") == "user"
    if user_level and corpus.user_ids is None:
        raise ParameterError("a user-level model is audited on documents with their person: give a corpus read with"
                             " its user ids ({user_field}=FIELD).", "user_field",
                             key="attacks.release_audit.release_audit")
    seed = _check_seed(seed)
    root = seed if isinstance(seed, (np.random.Generator, np.random.SeedSequence)) else np.random.SeedSequence(seed)
    if isinstance(root, np.random.Generator):
        root = np.random.SeedSequence(int(root.integers(2 ** 63)))
    s_canary, s_train, s_guess = root.spawn(3)
    rng_canary = np.random.default_rng(s_canary)
    if name in FRESH_WORDS:
        if canary_unit != "document":
            raise ParameterError("{canary_unit=} does not apply to {name} (its guarantee is per {unit}): drop"
                                 " {canary_unit}.", "canary_unit", canary_unit, name=name,
                                 unit="document" if name == "DPSVI" else "word")
        rng_canary = np.random.default_rng(s_canary)
        coins = rng_canary.integers(0, 2, size=m) * 2 - 1
        scores, mu, n_rel, model, scale, length = _fresh_word_audit(corpus, estimator, m, coins, s_train)
        return _result(m, coins, scores, mu, share, confidence, delta, claim, model.privacy_report(), s_guess,
                       canary_unit, 1, np.ones(m, dtype=bool), scale, n_rel, seed, name, length)
    em = name == "DocDPEM"
    pairs = disjoint_pairs(corpus, m, rng_canary) if em else canary_pairs(corpus, m, rng_canary)
    coins = rng_canary.integers(0, 2, size=m) * 2 - 1            # drawn after the canaries were written
    person = canary_unit == "person"

    audited: list = []
    # DocDPCooccurrence stops after its last release (the topics that follow are costly post-processing); DocDPEM's
    # last release is followed by little, and its ledger is kept only once the fit ends
    n_releases = None if em else _planned_releases(estimator, corpus)

    def record(r):
        audited.append(r)
        if n_releases is not None and len(audited) == n_releases:
            raise _Released

    model = _fit(estimator, with_units(corpus, pairs, coins > 0, K, person or user_level), s_train, record)
    known: list = []

    def follow(r):                  # the known documents' statistic under the audited run's own releases
        known.append(r)
        if len(known) > len(audited):
            raise DPTopicError("the known documents' run made more releases than the audited one.")
        if len(known) == len(audited):
            raise _Released
        return audited[len(known) - 1].noisy

    _fit(estimator, with_units(corpus, pairs, np.zeros(m, bool), K, person or user_level), s_train, follow)
    if len(known) != len(audited) or not audited:
        raise DPTopicError("the known documents' run made other releases than the audited one: the audit cannot"
                           " subtract them.")
    planned = estimator.release_plan(n_words=corpus.vocab_size).release(
        "expected word-topic counts" if em else "co-occurrence statistic")
    if em:
        scores, mu, held = _em_scores(audited, known, pairs, planned)
    else:
        scores, mu, held = _cooccurrence_scores(audited[-1], known[-1], pairs, np.asarray(model.kept_words_),
                                                corpus.vocab_size, planned)
    if em:
        privacy = model.privacy_report()
    else:
        # the fit stopped inside its last release, before spending it: spend it here, as the fit would have
        last = audited[-1].event
        if getattr(model, "unit", "document") == "user":
            last = dataclasses.replace(last, relation=model.ledger_.relation)
        model.ledger_.spend(last)
        privacy = model.ledger_.report(float(model.delta))
    return _result(m, coins, scores, mu, share, confidence, delta, claim, privacy, s_guess, canary_unit, K, held,
                   float(audited[-1].scale), len(audited) if em else 1, seed, name)


def _result(m, coins, scores, mu, share, confidence, delta, claim, privacy, s_guess, canary_unit, K, held, noise,
            n_releases, seed, name, length=2):
    """The guesses fixed in advance, the bound and the verdict (:func:`release_audit`'s dict)."""
    person = canary_unit == "person"
    s = planned_share(m, mu, confidence) if share is None else float(share)
    k = max(1, int(s * m))
    T = guesses(scores, k, k, np.random.default_rng(s_guess))
    r, v = int(np.count_nonzero(T)), int(np.sum(T * coins > 0))
    report = shadow_claim(privacy, ONE_RUN_SEED_NOTE) if claim is None else claim
    d = claim_delta(report) if delta is None else float(delta)
    bound = one_run_epsilon_bound(m, r, v, confidence, d)
    claimed = claimed_epsilon(report)
    unit = str(claimed.get("unit") or "")
    if name == "HDPLDA" and unit == "word":
        # each canary is one token whose word is replaced: exactly the neighbouring pair of a per-word claim
        verdict_name, verdict_note = verdict({**claimed, "unit": "document"}, bound)
        verdict_note += "; each canary is one token's word replaced, the claim's own unit"
    else:
        verdict_name, verdict_note = verdict(claimed, bound)
    if person and K > 1 and claimed.get("epsilon") is not None and unit.startswith("document"):
        verdict_note += (f"; each canary is a person of {K} documents and the claim protects one document, which"
                         f" covers such a person only at {K} x epsilon (group privacy)"
                         + (": the claim does not cover the person" if verdict_name == "exceeds the claim" else ""))
    return {
        "design": "one-run, scored on the release (Steinke, Nasr & Jagielski 2023): each canary unit included by an"
                  " independent fair coin, one model trained, its released statistic (the co-occurrence matrix;"
                  " DocDPEM: every iteration's) scored at each canary's own words after subtracting the known"
                  " documents" + DESIGN_NOTES.get(name, ""),
        "score": "release", "epsilon_lower_bound": bound,
        "epsilon_lower_bound_delta0": one_run_epsilon_bound(m, r, v, confidence, 0.0),
        "ideal_bound": ideal_bound(m, mu, None, confidence, d), "mu": float(mu),
        "confidence": float(confidence), "delta": d, "relation": "replace" if name == "HDPLDA" else "add_remove",
        "trainer": name, "canary_unit": canary_unit, "canary_documents": K, "n_canaries": m,
        "n_included": int(np.sum(coins > 0)),
        "canary_length": length, "words_per_canary": 1 if name == "DPSVI" else 2,
        "words_held": int(held.sum()),
        "k_plus": k, "k_minus": k, "share": s, "n_guesses": r, "n_correct": v,
        "accuracy": v / r if r else None, "p_value_at_zero": one_run_p_value(m, r, v, 0.0, d),
        "noise_std": noise, "releases_scored": n_releases,
        "claimed_privacy": claimed, "verdict": verdict_name, "verdict_note": verdict_note,
        "note": NOTE, "seed": seed if isinstance(seed, int) else None,
    }
