"""dptopic.evaluation.topic_match and `dptopic evaluate --compare-to`: the match between two models' topics."""
import json

import numpy as np
import pytest

from dptopic.cli.main import main
from dptopic.errors import DPTopicError
from dptopic.evaluation import match_models, topic_match


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


TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 8


def test_cli_evaluate_compare_to(tmp_path, capsys):
    corpus = tmp_path / "docs.txt"
    corpus.write_text("\n".join(TEXTS))
    a, b = tmp_path / "a", tmp_path / "b"
    for out, seed in ((a, "1"), (b, "2")):
        assert main(["train", "--corpus", str(corpus), "--topics", "3", "--iterations", "30", "--seed", seed,
                     "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(a), "--corpus", str(corpus), "--compare-to", str(a), "--seed", "0"]) == 0
    text = " ".join(capsys.readouterr().out.split())      # the console wraps long lines
    assert "match to the topics of" in text and ": 1.000 (mean cosine of 3 " in text
    assert main(["evaluate", "--model", str(a), "--corpus", str(corpus), "--compare-to", str(b), "--seed", "0",
                 "--json"]) == 0
    q = json.loads(capsys.readouterr().out)
    assert 0.0 <= q["match"]["match"] <= 1.0 and q["match"]["matched"] == 3
    assert q["match"]["reference_model"] == str(b)
    assert main(["evaluate", "--model", str(a), "--corpus", str(corpus), "--compare-to",
                 str(tmp_path / "missing")]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_match_models_reads_two_fitted_models_and_zero_topics_score_zero():
    class Fitted:
        def __init__(self, components, vocabulary):
            self.components_, self.vocabulary_ = components, vocabulary

    a = Fitted(np.array([[0.0, 0.0], [1.0, 2.0]]), ["x", "y"])       # an all-zero topic: cosine 0, never NaN
    b = Fitted(np.array([[2.0, 4.0], [1.0, 0.0]]), ["x", "y"])
    m = match_models(a, b)
    assert m["per_topic"] == pytest.approx([1.0, 0.0]) and m["match"] == pytest.approx(0.5)
