"""dptopic.evaluation.topic_match and `dptopic evaluate --compare-to`: the match between two models' topics."""

import math

import numpy as np
import pytest

from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import match_models, topic_diversity, topic_match
from dptopic.evaluation.topic_matching import topic_recovery
from dptopic.moments import normalised_cooccurrence, topics_from_cooccurrence


def test_hand_computed_match_over_reordered_vocabularies():
    ref_vocab = ["a", "b", "c"]
    ref = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    vocab = ["c", "b", "a"]                          # same words, another order
    model = np.array([[0.0, 1.0, 0.0],               # "b": cosine 1/sqrt(2) with the second reference topic
                      [0.0, 0.0, 1.0]])              # "a": cosine 1 with the first
    m = topic_match(model, vocab, ref, ref_vocab)
    assert m["per_topic"] == pytest.approx([1.0, 1.0 / np.sqrt(2.0)])
    assert m["match"] == pytest.approx((1.0 + 1.0 / np.sqrt(2.0)) / 2.0)
    assert (m["matched"], m["shared_words"]) == (2, 3)


def test_same_topics_in_any_order_match_fully_and_random_ones_do_not():
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(500)]
    topics = rng.dirichlet(np.full(500, 0.05), size=10)
    perm = rng.permutation(10)
    assert topic_match(topics[perm], vocab, topics, vocab)["match"] == pytest.approx(1.0)
    other = rng.dirichlet(np.full(500, 0.05), size=10)
    assert topic_match(other, vocab, topics, vocab)["match"] < 0.3


def test_fewer_topics_leave_reference_topics_unmatched_and_words_outside_are_ignored():
    ref = np.eye(3)
    m = topic_match(np.array([[0.0, 1.0, 0.0, 5.0]]), ["a", "b", "c", "only_here"], ref, ["a", "b", "c"])
    assert m["matched"] == 1 and m["per_topic"] == [None, 1.0, None] and m["match"] == pytest.approx(1.0)


def test_no_shared_words_is_a_one_line_error():
    with pytest.raises(DPTopicError, match="share 0 vocabulary words"):
        topic_match(np.ones((2, 2)), ["x", "y"], np.ones((2, 2)), ["a", "b"])


def test_match_models_reads_two_fitted_models_and_zero_topics_score_zero():
    class Fitted:
        def __init__(self, components, vocabulary):
            self.components_, self.vocabulary_ = components, vocabulary

    a = Fitted(np.array([[0.0, 0.0], [1.0, 2.0]]), ["x", "y"])       # an all-zero topic: cosine 0, never NaN
    b = Fitted(np.array([[2.0, 4.0], [1.0, 0.0]]), ["x", "y"])
    m = match_models(a, b)
    assert m["per_topic"] == pytest.approx([1.0, 0.0]) and m["match"] == pytest.approx(0.5)


def _planted(seed=4):
    return lda_corpus(n_docs=600, vocab_size=40, n_topics=3, doc_length=50, alpha=0.1, beta=0.05, seed=seed)


@pytest.mark.parametrize("method", ["nmf", "anchors"])
def test_topics_from_an_exact_cooccurrence_recover_planted_topics(method):
    s = _planted()
    Q = normalised_cooccurrence(s.corpus.to_bow())
    topics = topics_from_cooccurrence(Q, 3, method)
    assert np.allclose(topics.sum(1), 1) and (topics >= 0).all()
    assert topic_recovery(topics, s.phi) > 0.9
    # a random guess does not
    assert topic_recovery(np.random.default_rng(0).dirichlet(np.ones(40), 3), s.phi) < 0.6


def test_recovery_perfect_and_permuted(planted):
    phi = planted.phi
    assert topic_recovery(phi[::-1], phi) == pytest.approx(1.0)
    assert topic_recovery(np.ones_like(phi), phi) < 0.5


def test_diversity_and_match_by_hand_and_their_invariances():
    comp = np.array([[5, 4, 3, 0, 0, 0], [5, 0, 3, 4, 0, 0], [0, 0, 0, 3, 4, 5.]])
    assert topic_diversity(comp, 3) == pytest.approx(6 / 9)
    assert topic_diversity(comp[::-1] * np.array([[2.0], [0.5], [7.0]]), 3) == pytest.approx(6 / 9)
    assert topic_diversity(comp, 10) == pytest.approx(6 / 18)          # top_n beyond V reads every word
    A, B = np.array([[1., 2, 0], [0, 1, 1]]), np.array([[0, 1., 1], [1, 1, 0]])
    # cos(B0, A1) = 1 and cos(B1, A0) = 3 / sqrt(10) beat the crossed pairs (2/sqrt(10), 1/2)
    r = topic_match(A, ["x", "y", "z"], B, ["x", "y", "z"])
    assert r["match"] == pytest.approx((1 + 3 / math.sqrt(10)) / 2)
    assert r["per_topic"] == pytest.approx([1.0, 3 / math.sqrt(10)])
    perm = [2, 0, 1]
    same = topic_match(A[::-1][:, perm] * np.array([[3.0], [0.2]]), ["z", "x", "y"], B, ["x", "y", "z"])
    assert same["match"] == pytest.approx(r["match"]) and same["per_topic"] == pytest.approx(r["per_topic"])
    assert topic_match(A, ["x", "y", "z"], B[::-1], ["x", "y", "z"])["per_topic"] == pytest.approx(
        r["per_topic"][::-1])
    assert topic_match(np.array([[1., 0, 0], [0, 0, 1]]), ["x", "y", "z"], B, ["x", "y", "z"])["match"] < r["match"]
    assert topic_recovery(A, B) == pytest.approx(r["match"])
