"""The co-occurrence support test's floor: a topic must describe the release's signal better than a single
word-frequency topic does (condition (d) of ``cooccurrence_supported_topics``), besides standing above the noise."""
import numpy as np

from dptopic.moments.support import beats_frequency_topic, cooccurrence_supported_topics, wigner_edge

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
