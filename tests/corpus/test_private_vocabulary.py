"""DP set union (thresholds, weights, release) and the FDPTM composition."""
import math

import numpy as np
import pytest

from dptopic.accounting import ApproxDPEvent
from dptopic.accounting.set_union import gaussian_sigma
from dptopic.corpus import Corpus, lda_corpus
from dptopic.corpus.corpus import data_cut_of
from dptopic.corpus.private_vocabulary import _l2_descent, _water_fill, dp_set_union, dpsu_threshold, set_union_weights
from dptopic.errors import DPTopicError


def test_thresholds_hand_computed():
    # rho = 1 + ln(1/(2 delta))/eps for delta0 = 1; Gamma = rho + alpha/eps
    assert dpsu_threshold(1.0, 1e-4, 1) == pytest.approx(1 + math.log(5000), abs=1e-9)
    assert dpsu_threshold(1.0, 1e-4, 1) == pytest.approx(9.517, abs=1e-3)
    assert dpsu_threshold(1.0, 1e-4, 1) + 3.0 == pytest.approx(12.517, abs=1e-3)
    assert dpsu_threshold(1.0, 1e-4, 10) == pytest.approx(10.920, abs=1e-3)
    # Gaussian: sigma from the analytic Gaussian mechanism at (eps, delta/2); rho at t = 1
    from scipy.stats import norm

    s = gaussian_sigma(1.0, 0.5e-4)
    assert norm.cdf(0.5 / s - s) - math.e * norm.cdf(-0.5 / s - s) == pytest.approx(0.5e-4, rel=1e-6)
    assert dpsu_threshold(1.0, 1e-4, 1, "gaussian") == pytest.approx(1 + s * norm.isf(0.5e-4), rel=1e-9)


def test_water_fill_and_l2_descent():
    np.testing.assert_allclose(_water_fill(np.array([0.2, 1.0, 1.0])), [0.2, 0.4, 0.4])
    np.testing.assert_allclose(_water_fill(np.array([0.3, 0.2])), [0.3, 0.2])  # everything fits
    np.testing.assert_allclose(_l2_descent(np.array([3.0, 4.0])), [0.6, 0.8])    # a step of length 1 along the gaps
    np.testing.assert_allclose(_l2_descent(np.array([0.3, 0.4])), [0.3, 0.4])    # shorter than 1: filled


class _FixedOrder:
    """The documents' order fixed (the added one inserted anywhere), and each document's own sample the same in
    both runs: the coupling under which Gopi et al. bound the histogram's sensitivity."""

    def __init__(self, order):
        self.order = order

    def permutation(self, n):
        return np.asarray(self.order)

    def choice(self, words, size, replace):
        return np.random.default_rng(int(np.sum(np.asarray(words) * 7919)) % 2 ** 32).choice(words, size, replace)


def _difference(docs, extra, at, gamma, delta0, order, p, V=None):
    V = V or 1 + max(max(d) for d in docs + [extra])
    words = [f"w{i}" for i in range(V)]
    less = Corpus.from_token_ids(docs, words)
    more = Corpus.from_token_ids(docs + [extra], words)
    o = list(range(len(docs)))
    o.insert(at, len(docs))
    H = set_union_weights(less, gamma, delta0, order, p, _FixedOrder(list(range(len(docs)))))
    H2 = set_union_weights(more, gamma, delta0, order, p, _FixedOrder(o))
    return float(np.linalg.norm(H2 - H, ord=p))


def test_one_document_moves_the_histogram_by_at_most_one():
    """Gopi et al.'s Theorems 5.2 and 5.3 need each policy to be contractive. Two cases that broke it before: an L2
    budget water-filled (1.066 in L2), and the cap delta0 applied after dropping the words others had filled, so a
    document's kept words depended on the others (1.1 in L1); then a seeded search over small corpora."""
    assert _difference([[2, 0], [3, 0], [1, 2]], [0, 3, 1, 2], 1, 1.5, 10, "gopi", 2) <= 1 + 1e-12
    a, b, c, d = 0, 1, 2, 3
    docs = [[c, c, c, b], [a, a, a, a, d, d], [d, c, c, a, a, a, a]]
    assert _difference(docs, [d, c, c, c, a, a, a], 0, 1.1, 2, "frequency", 1) <= 1 + 1e-12
    rng = np.random.default_rng(0)
    worst = {}
    for order, p in (("frequency", 1), ("gopi", 1), ("gopi", 2)):
        for _ in range(1500):
            V, n = int(rng.integers(2, 6)), int(rng.integers(1, 5))
            docs = [list(rng.integers(0, V, size=rng.integers(1, 7))) for _ in range(n + 1)]
            worst[order, p] = max(worst.get((order, p), 0.0),
                                  _difference(docs[:-1], docs[-1], int(rng.integers(0, n + 1)),
                                              float(rng.choice([0.6, 1.0, 1.1, 1.5, 2.0, 3.0])),
                                              int(rng.integers(1, 4)), order, p, V))
    assert max(worst.values()) <= 1 + 1e-12, worst


def _toy():
    # ten documents "a a b", one document "c"
    docs = [[0, 0, 1]] * 10 + [[2]]
    return Corpus.from_token_ids(docs, ["a", "b", "c"])


def test_weights_frequency_order_by_hand():
    c = _toy()
    gamma = 1.5
    H = set_union_weights(c, gamma, delta0=1, order="frequency", rng=np.random.default_rng(0))
    # delta0 = 1: each document keeps its most frequent word, a, whatever the others did: a fills (1 + 0.5), the
    # other documents then have nothing open (b is never kept), c gets 1
    np.testing.assert_allclose(H, [1.5, 0.0, 1.0])
    H = set_union_weights(c, 10.0, delta0=2, order="frequency", rng=np.random.default_rng(0))
    np.testing.assert_allclose(H, [10.0, 0.0, 1.0])  # the whole unit budget goes to "a" until it is full
    H = set_union_weights(c, 10.0, delta0=2, order="gopi", rng=np.random.default_rng(0))
    np.testing.assert_allclose(H, [5.0, 5.0, 1.0])  # water-filling splits evenly


def test_release_by_hand_and_event():
    c = _toy()
    # eps = 100: noise scale 0.01; rho = 1 + ln(500)/100 = 1.0621; Gamma = rho + 10 * 0.01
    vocab, ev = dp_set_union(c, 100.0, 1e-3, delta0=1, alpha=10.0, seed=0, mechanism="laplace", order="frequency")
    assert vocab.words == ["a"]  # "c" has weight 1 < rho: a single user's word is not released; "b" is never kept
    assert isinstance(ev, ApproxDPEvent) and ev.epsilon == 100.0 and ev.delta == 1e-3 and ev.unit == "document"
    vocab, _ = dp_set_union(c, 100.0, 1e-3, delta0=2, alpha=10.0, seed=0, order="gopi", mechanism="gaussian")
    assert "c" not in vocab.words
    for bad in (dict(epsilon=0.0, delta=1e-5), dict(epsilon=1.0, delta=1.0), dict(epsilon=1.0, delta=0.0)):
        with pytest.raises(DPTopicError):
            dp_set_union(c, **bad)


def test_default_is_the_gaussian_policy_and_releases_more_words_than_the_laplace_one():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=3000, vocab_size=2000, n_topics=10, doc_length=60, seed=2).corpus
    default, ev = dp_set_union(c, 0.5, 1e-6, seed=0)
    assert "gaussian" in ev.label and "gopi" in ev.label and "delta0=100" in ev.theorem
    laplace, ev_l = dp_set_union(c, 0.5, 1e-6, mechanism="laplace", seed=0)
    assert "frequency" in ev_l.label and "delta0=50" in ev_l.theorem
    # the same (eps, delta): an L2 budget spreads each document's weight over its words (148 against 47)
    assert len(default) >= 2 * len(laplace) > 0
    with pytest.raises(DPTopicError, match="order='frequency'"):
        dp_set_union(c, 0.5, 1e-6, order="frequency")


def test_cut_off_defaults_by_policy_and_a_larger_gaussian_cut_off_releases_more_words():
    from dptopic.corpus.private_vocabulary import noise_scale
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=3000, vocab_size=2000, n_topics=10, doc_length=60, seed=2).corpus
    for mech, alpha in (("gaussian", 10.0), ("laplace", 3.0)):
        _, ev = dp_set_union(c, 0.5, 1e-6, mechanism=mech, seed=0)
        d0 = 100 if mech == "gaussian" else 50
        gamma = dpsu_threshold(0.5, 1e-6, d0, mech) + alpha * noise_scale(0.5, 1e-6, mech)
        assert f"Gamma={gamma:.4f}" in ev.theorem
    # the same documents, order and noise (seed 0): only the cut-off differs
    near = len(dp_set_union(c, 0.5, 1e-6, alpha=3.0, seed=0)[0])
    default = len(dp_set_union(c, 0.5, 1e-6, seed=0)[0])
    assert default > near > 0


# ---- item 8: secure DP set union draws its noise from OpenDP
def test_secure_set_union_noise_is_opendps(monkeypatch):
    pytest.importorskip("opendp")
    from dptopic.corpus.private_vocabulary import dp_set_union
    from dptopic.mechanisms import laplace

    calls = []
    real = laplace._opendp_release

    def spy(values, scale, integer):
        calls.append((np.shape(values), scale, integer))
        return real(values, scale, integer)

    monkeypatch.setattr(laplace, "_opendp_release", spy)
    c = lda_corpus(n_docs=200, vocab_size=40, n_topics=3, doc_length=20, seed=0).corpus
    _, ev = dp_set_union(c, 2.0, 1e-6, secure=True, mechanism="laplace")
    assert calls and calls[0][0] == (40,) and not calls[0][2] and "OpenDP" in ev.label
    with pytest.raises(DPTopicError, match="refuses a seed"):
        dp_set_union(c, 2.0, 1e-6, secure=True, seed=1)
    # the default (Gaussian policy) draws from OpenDP's Gaussian sampler
    from dptopic.mechanisms import gaussian

    drawn = []
    real_g = gaussian._opendp_gaussian
    monkeypatch.setattr(gaussian, "_opendp_gaussian", lambda v, std: drawn.append(np.shape(v)) or real_g(v, std))
    _, ev = dp_set_union(c, 2.0, 1e-6, secure=True)
    assert drawn == [(40,)] and "OpenDP" in ev.label and "gaussian" in ev.label


@pytest.mark.parametrize("build, cut", [
    (lambda docs: Corpus.from_tokens(docs, max_vocab=3), "built with max_vocab=3"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None, min_df=2), "built with min_df=2"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None, min_df=0.2), "built with min_df=0.2"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None, max_df=0.9), "built with max_df=0.9"),
    (lambda docs: Corpus.from_tokens(docs, max_vocab=None).prune(max_vocab=3), "pruned with max_vocab=3"),
])
def test_set_union_refuses_a_corpus_whose_words_were_cut_by_their_counts(build, cut):
    docs = [["alpha", "beta", "gamma"], ["alpha", "delta"], ["beta", "epsilon", "alpha"], ["gamma", "beta"]] * 5
    corpus = build(docs)
    assert data_cut_of(corpus) == cut
    with pytest.raises(DPTopicError, match="cut by their counts") as e:
        dp_set_union(corpus, 1.0, 1e-5, seed=0)
    assert cut in str(e.value) and "\n" not in str(e.value)


def test_only_a_corpus_with_every_word_or_a_public_list_is_accepted():
    docs = [["alpha", "beta", "gamma"], ["alpha", "delta"], ["beta", "epsilon", "alpha"]] * 5
    for corpus in (Corpus.from_tokens(docs, max_vocab=None),
                   Corpus.from_tokens(docs, max_vocab=2**31 - 1, min_df=1, max_df=1.0),   # --max-vocab all
                   Corpus.from_tokens(docs, max_vocab=2).restrict(["alpha", "beta", "zeta"]),   # a caller's list
                   Corpus.from_bow(np.array([[1, 2, 0], [0, 1, 3]]))):     # a matrix's columns: the caller's
        assert data_cut_of(corpus) is None
        dp_set_union(corpus, 1.0, 1e-5, seed=0)
    # a cap that left nothing out of this corpus still binds on one a document away (a document with 996 new words
    # pushes the rarest of these out of the top 1,000): refused as well, as is a count max_df at any value
    assert data_cut_of(Corpus.from_tokens(docs)) == "built with max_vocab=1000"
    assert data_cut_of(Corpus.from_tokens(docs, max_vocab=None, max_df=100)) == "built with max_df=100"
    # a cap hidden by a later prune that records none (stop words only) is still seen
    hidden = Corpus.from_tokens(docs, max_vocab=4).prune(max_vocab=None, stop_words=["zeta"])
    assert data_cut_of(hidden) == "built with max_vocab=4"
