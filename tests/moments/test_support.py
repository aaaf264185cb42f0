"""The co-occurrence support test's floor: a topic must describe the release's signal better than a single
word-frequency topic does (condition (d) of ``cooccurrence_supported_topics``), besides standing above the noise."""
import warnings

import numpy as np
import pytest

from dptopic.corpus import Corpus, lda_corpus
from dptopic.errors import CorruptModelError
from dptopic.models.docdp import DocDPEM
from dptopic.models.docdp_cooc import DocDPCooccurrence
from dptopic.models.dpsvi import DPSVI
from dptopic.moments.support import (
    beats_frequency_topic,
    cooccurrence_supported_topics,
    em_supported_topics,
    rectangular_edge,
    wigner_edge,
)

N = 200


def _release(seed=0):
    """A symmetric release: the word frequencies (a strong rank-one part), one topic beyond them (a topic holds the
    frequent words too: 0.6 of it is the frequencies), and Gaussian noise of off-diagonal standard deviation 1."""
    rng = np.random.default_rng(seed)
    freq = 1.0 / np.arange(1, N + 1)
    freq /= freq.sum()
    own = np.zeros(N)
    own[rng.choice(N, 20, replace=False)] = rng.dirichlet(np.ones(20))
    truth = 0.6 * freq + 0.4 * own
    f = freq / np.linalg.norm(freq)
    g = truth - (truth @ f) * f
    g /= np.linalg.norm(g)
    Z = rng.normal(size=(N, N))
    Q = 3000 * np.outer(f, f) + 120 * np.outer(g, g) + (Z + Z.T) / np.sqrt(2)
    return Q, freq, own, rng


def test_a_topic_that_is_mostly_frequencies_and_noise_is_not_supported():
    """Its direction off the frequencies clears the edge (the test without the floor supported it), but what the
    release shows of it is described better by the word frequencies alone than by the topic."""
    Q, freq, own, rng = _release()
    noise = rng.exponential(size=N)
    noise /= noise.sum()
    poor = freq + 0.1 * own + 0.6 * noise
    good = freq + 0.5 * own + 0.3 * noise
    w, vecs = np.linalg.eigh(Q)
    edge = wigner_edge(N, 1.0)
    v1 = vecs[:, -1]
    for h in (poor, good):
        u = h - (h @ v1) * v1
        u /= np.linalg.norm(u)
        assert u @ Q @ u > edge
    assert beats_frequency_topic(np.vstack([good, poor]), vecs[:, w > edge], v1).tolist() == [True, False]
    assert cooccurrence_supported_topics(Q, poor[None], 1.0).tolist() == [False]
    assert cooccurrence_supported_topics(Q, good[None], 1.0).tolist() == [True]


def test_the_floor_keeps_the_false_support_rate_of_a_release_without_topics():
    """Condition (d) only removes topics: on releases with no topic beyond the frequencies, no topic of any kind
    passes in more than 5% of draws."""
    rng = np.random.default_rng(1)
    freq = 1.0 / np.arange(1, N + 1)
    f = freq / np.linalg.norm(freq)
    false = 0
    for _ in range(40):
        Z = rng.normal(size=(N, N))
        Q = 3000 * np.outer(f, f) + (Z + Z.T) / np.sqrt(2)
        topics = rng.dirichlet(np.full(N, 0.1), size=5)
        false += bool(cooccurrence_supported_topics(Q, topics, 1.0).any())
    assert false <= 2 + 2 * np.sqrt(40 * 0.05 * 0.95)


# --------------------------------------------------------------------------------------------------------------
# supported_topics_ and background_topics_ of the document-level trainers (dptopic.moments.support).
RUNS = 20
# false support at most 5% of the runs, with two binomial standard errors of slack
ALLOWED = int(RUNS * (0.05 + 2 * np.sqrt(0.05 * 0.95 / RUNS)))


def _planted(seed, n_docs=1000):
    return lda_corpus(n_docs=n_docs, vocab_size=100, n_topics=5, doc_length=50, alpha=0.1, beta=0.05, seed=seed)


def _shuffled(corpus, seed):
    """The same tokens permuted across documents: the word frequencies stay, the topics go."""
    rng = np.random.default_rng(seed)
    return Corpus(corpus.doc_ptr, rng.permutation(corpus.word_ids), corpus.vocabulary)


def _best_match(components, phi):
    a = components / np.linalg.norm(components, axis=1, keepdims=True)
    b = phi / np.linalg.norm(phi, axis=1, keepdims=True)
    return (a @ b.T).max(axis=1), (a @ b.T).max(axis=0)


def _fit(cls, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if cls is DPSVI:
            return cls.from_budget(kw.pop("epsilon"), sampling_rate=0.1, n_epochs=3, verbose=0, **kw).fit(corpus)
        return cls(verbose=0, **kw).fit(corpus)


def test_wigner_edge_is_passed_by_pure_noise_at_most_five_percent():
    rng = np.random.default_rng(0)
    n, s, draws = 40, 0.7, 300
    above = 0
    for _ in range(draws):
        Z = rng.normal(0, s * np.sqrt(2), (n, n))
        above += np.linalg.eigvalsh((Z + Z.T) / 2)[-1] > wigner_edge(n, s)
    assert above / draws <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws)
    assert above > 0            # an edge, not a bound far above the spectrum


def test_rectangular_edge_is_passed_by_pure_noise_at_most_five_percent():
    rng = np.random.default_rng(1)
    draws = 300
    above = sum(np.linalg.svd(rng.normal(0, 2.0, (6, 80)), compute_uv=False)[0] > rectangular_edge(6, 80, 2.0)
                for _ in range(draws))
    assert above / draws <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws)


def test_cooccurrence_support_rejects_rank_one_signal_plus_noise():
    """The null: corpus-wide frequencies only (rank one, however strong), every topic direction tried."""
    rng = np.random.default_rng(2)
    n, s, draws, false = 50, 1.0, 100, 0
    p = rng.dirichlet(np.ones(n))
    for _ in range(draws):
        Z = rng.normal(0, s * np.sqrt(2), (n, n))
        Q = 5000 * np.outer(p, p) + (Z + Z.T) / 2
        topics = np.vstack([rng.dirichlet(np.full(n, 0.1), size=6), p])
        false += cooccurrence_supported_topics(Q, topics, s).any()
    assert false / draws <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws)


def test_em_support_rejects_rank_one_signal_plus_noise():
    rng = np.random.default_rng(3)
    K, V, s, draws, false = 5, 60, 1.0, 100, 0
    p = rng.dirichlet(np.ones(V))
    for _ in range(draws):
        release = np.outer(rng.uniform(100, 1000, K), p) + rng.normal(0, s, (K, V))
        false += em_supported_topics(release, s).any()
    assert false / draws <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / draws)


def test_cooccurrence_supported_topics_match_planted_ones_over_many_runs():
    """More topics than planted (8 for 5): the extra ones fit noise or repeat a planted one, and are not supported."""
    false, found = 0, []
    for seed in range(RUNS):
        s = _planted(seed, n_docs=600)
        m = _fit(DocDPCooccurrence, s.corpus, n_topics=8, epsilon=1.0, seed=seed)
        assert m.supported_topics_.dtype == bool and m.supported_topics_.shape == (8,)
        assert not m.background_topics_.any()
        topic_match, planted_found = _best_match(m.components_[m.supported_topics_], s.phi)
        false += bool((topic_match < 0.8).any())            # a supported topic that is no planted one
        found.append(int((planted_found > 0.8).sum()))
    assert false <= ALLOWED, false
    assert np.mean(found) >= 4, found                        # and the supported topics find the planted ones


def test_cooccurrence_shuffled_corpus_supports_no_topic_over_many_runs():
    false = 0
    for seed in range(RUNS):
        shuffled = _shuffled(_planted(100 + seed, n_docs=500).corpus, seed)
        m = _fit(DocDPCooccurrence, shuffled, n_topics=5, epsilon=1.0, seed=seed)
        false += bool((m.supported_topics_ & ~m.background_topics_).any())
    assert false <= ALLOWED, false


def test_cooccurrence_background_topics_are_marked_and_alone_supported_without_topics():
    s = _planted(7)
    m = _fit(DocDPCooccurrence, _shuffled(s.corpus, 7), n_topics=10, epsilon=1.0, seed=7, background_share=0.25)
    assert m.n_background_topics_ == 2
    assert m.background_topics_.tolist() == [False] * 8 + [True] * 2
    assert m.background_topic_ids() == list(np.flatnonzero(m.background_topics_))
    assert m.supported_topics_[m.background_topics_].all()    # corpus-wide words stand far above the noise
    assert not (m.supported_topics_ & ~m.background_topics_).any()
    # the default (no background topics) on the same corpus: no topic stands above the noise
    d = _fit(DocDPCooccurrence, _shuffled(s.corpus, 7), n_topics=10, epsilon=1.0, seed=7)
    assert d.n_background_topics_ == 0 and not d.supported_topics_.any()


def test_em_supported_topics_are_flagged_per_topic():
    s = _planted(0)
    m = _fit(DocDPEM, s.corpus, n_topics=5, epsilon=2.0, seed=0)
    assert m.supported_topics_.dtype == bool and m.supported_topics_.shape == (5,)
    assert m.supported_topics_.any()
    assert not m.background_topics_.any()


def test_dpsvi_supported_topics_match_planted_ones():
    s = _planted(1)
    m = _fit(DPSVI, s.corpus, n_topics=5, epsilon=2.0, seed=1)
    assert m.supported_topics_.dtype == bool and m.supported_topics_.shape == (5,)
    assert m.supported_topics_.any()
    assert (_best_match(m.components_[m.supported_topics_], s.phi)[0] > 0.5).all()
    assert not m.background_topics_.any()


def test_dpsvi_shuffled_corpus_supports_no_topic_over_many_runs():
    runs = 10
    false = sum(bool(_fit(DPSVI, _shuffled(_planted(100 + seed, n_docs=500).corpus, seed), n_topics=5, epsilon=2.0,
                          seed=seed).supported_topics_.any()) for seed in range(runs))
    assert false <= int(runs * (0.05 + 2 * np.sqrt(0.05 * 0.95 / runs))), false


@pytest.mark.parametrize("cls", [DocDPCooccurrence, DocDPEM, DPSVI])
def test_topic_flags_survive_save_and_load(cls, tmp_path):
    m = _fit(cls, _planted(1, n_docs=300).corpus, n_topics=6, epsilon=1.0, seed=1)
    m.save(tmp_path / "m")
    back = cls.load(tmp_path / "m")
    assert back.supported_topics_.dtype == bool
    assert back.supported_topics_.tolist() == m.supported_topics_.tolist()
    assert back.background_topics_.tolist() == m.background_topics_.tolist()


def test_a_saved_model_with_malformed_topic_flags_is_refused_in_one_line(tmp_path):
    m = _fit(DocDPCooccurrence, _planted(1, n_docs=300).corpus, n_topics=6, epsilon=1.0, seed=1)
    m.supported_topics_ = np.ones(3, dtype=bool)        # the wrong number of topics
    m.save(tmp_path / "m")
    with pytest.raises(CorruptModelError, match="supported_topics.npy must hold one true/false value per topic"):
        DocDPCooccurrence.load(tmp_path / "m")
