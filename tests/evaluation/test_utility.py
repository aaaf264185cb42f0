"""dptopic.evaluation.topic_coverage (each reference topic's best cosine, both directions) and downstream_score
(logistic regression on transform: accuracy and macro-F1), with values computed by hand."""
import math

import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import downstream_score, topic_coverage, topic_match

# reference topics over x, y, z: R1 = x, R2 = y and z evenly
REF = (np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]), ["x", "y", "z"])
# the model's columns in another order, with a word the reference lacks ("w"): restricted to x, y, z its topics are
# M1 = M2 = x (one topic found twice) and M3 = z
MODEL = (np.array([[0.0, 2.0, 0.0, 0.0],
                   [0.0, 0.5, 0.0, 0.0],
                   [1.0, 0.0, 0.0, 5.0]]), ["z", "x", "y", "w"])


def test_topic_coverage_hand_computed_both_directions():
    # cosines (reference x model): R1: 1, 1, 0; R2: 0, 0, 1/sqrt(2)
    r = topic_coverage(MODEL, REF)
    s = 1 / math.sqrt(2)
    assert r["per_reference_topic"] == pytest.approx([1.0, s])
    assert r["coverage"] == pytest.approx((1 + s) / 2)                 # 0.8536
    assert r["per_model_topic"] == pytest.approx([1.0, 1.0, s])
    assert r["precision"] == pytest.approx((1 + 1 + s) / 3)            # 0.9024
    assert r["shared_words"] == 3
    # swapping the two swaps the directions
    back = topic_coverage(REF, MODEL)
    assert back["coverage"] == pytest.approx(r["precision"]) and back["precision"] == pytest.approx(r["coverage"])


def test_topic_coverage_lets_one_topic_answer_for_several_unlike_hungarian_match():
    # one model topic, x + y + z: cosine 1/sqrt(3) with R1 and 2/sqrt(6) with R2. Matching pairs it with R2 only and
    # leaves R1 unmatched; coverage scores every reference topic by its best model topic
    one = (np.array([[1.0, 1.0, 1.0]]), ["x", "y", "z"])
    c = topic_coverage(one, REF)
    assert c["per_reference_topic"] == pytest.approx([1 / math.sqrt(3), 2 / math.sqrt(6)])
    assert c["coverage"] == pytest.approx((1 / math.sqrt(3) + 2 / math.sqrt(6)) / 2)
    assert c["precision"] == pytest.approx(2 / math.sqrt(6))
    assert topic_match(*one, *REF)["per_topic"] == [None, pytest.approx(2 / math.sqrt(6))]


def test_topic_coverage_reads_fitted_models(tiny):
    m = dptopic.LDA(n_topics=3, n_iter=5, seed=0, verbose=0).fit(tiny.corpus)
    same = topic_coverage(m, m)
    assert same["coverage"] == pytest.approx(1.0) and same["precision"] == pytest.approx(1.0)
    pair = (m.components_[::-1], list(m.vocabulary_))
    assert topic_coverage(pair, m)["coverage"] == pytest.approx(1.0)


@pytest.mark.parametrize("model, reference, fragment", [
    (dptopic.LDA(n_topics=2), REF, "model is not fitted yet"),
    (REF, object(), "reference_model must be a fitted dptopic model or a (components, vocabulary) pair"),
    (type("SkLDA", (), {"components_": np.ones((2, 3))})(), REF, "pass (model.components_, vocabulary)"),
    ((np.ones((2, 2)), ["a", "b"]), REF, "share 0 vocabulary words"),
    ((np.ones((2, 3)), ["x", "y"]), REF, "3 words but its vocabulary 2"),
    ((-np.ones((2, 3)), ["x", "y", "z"]), REF, "non-negative"),
])
def test_topic_coverage_refuses_bad_input_in_one_line(model, reference, fragment):
    with pytest.raises(DPTopicError) as e:
        topic_coverage(model, reference)
    assert fragment in str(e.value) and "\n" not in str(e.value)


class _Lookup:
    """A stand-in model whose transform maps the text "a" to (1, 0) and "b" to (0, 1)."""

    def transform(self, texts):
        return np.array([[1.0, 0.0] if t == "a" else [0.0, 1.0] for t in texts])


def test_downstream_score_hand_computed():
    # trained on a -> x, b -> y; the test documents a, b, b, a are predicted x, y, y, x against x, y, x, x:
    # 3 of 4 right; class x: precision 2/2, recall 2/3, F1 0.8; class y: precision 1/2, recall 1/1, F1 2/3
    r = downstream_score(_Lookup(), ["a", "a", "b", "b"], ["x", "x", "y", "y"], ["a", "b", "b", "a"],
                         ["x", "y", "x", "x"])
    assert r["accuracy"] == pytest.approx(0.75)
    assert r["macro_f1"] == pytest.approx((0.8 + 2 / 3) / 2)
    assert (r["n_train"], r["n_test"], r["n_classes"]) == (4, 4, 2)


def test_downstream_score_on_a_fitted_model_and_corpus_labels(planted):
    # labels: each planted document's main topic; a model that found the topics predicts them well
    corpus, theta = planted.corpus, planted.theta
    labelled = Corpus(corpus.doc_ptr, corpus.word_ids, corpus.vocabulary,
                      labels=[f"t{k}" for k in theta.argmax(axis=1)])
    train, test = labelled.subset(np.arange(200)), labelled.subset(np.arange(200, 300))
    m = dptopic.LDA(n_topics=5, n_iter=30, seed=0, verbose=0).fit(train)
    r = downstream_score(m, train, None, test, None)                # labels read from the Corpus
    assert r["accuracy"] > 0.8 and r["macro_f1"] > 0.7
    assert (r["n_train"], r["n_test"], r["n_classes"]) == (200, 100, 5)
    assert downstream_score(m, train, train.labels, test, list(test.labels)) == r


@pytest.mark.parametrize("args, fragment", [
    ((["a", "b"], ["x"], ["a"], ["x"]), "labels holds 1 labels but texts 2 documents"),
    ((["a", "b"], ["x", "y"], ["a"], ["x", "y"]), "test_labels holds 2 labels but test_texts 1 documents"),
    ((["a", "b"], ["x", "x"], ["a"], ["x"]), "labels name one class ('x') only"),
    ((["a", "b"], None, ["a"], ["x"]), "labels is missing"),
    ((["a", "b"], "xy", ["a"], ["x"]), "labels is one string"),
    ((["a", "b"], ["x", None], ["a"], ["x"]), "missing label"),
])
def test_downstream_score_refuses_bad_labels_in_one_line(args, fragment):
    with pytest.raises(DPTopicError) as e:
        downstream_score(_Lookup(), *args)
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_downstream_score_refuses_what_has_no_transform():
    with pytest.raises(DPTopicError, match="model must be a fitted dptopic model"):
        downstream_score(REF, ["a", "b"], ["x", "y"], ["a"], ["x"])
