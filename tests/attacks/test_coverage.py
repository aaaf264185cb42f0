"""How well a corpus matches a saved model's vocabulary (``attacks/coverage.py``), the checks of audit --model."""
import numpy as np
import pytest

from dptopic.attacks.coverage import (
    absent_word_share,
    as_dense_as_training,
    outside_vocabulary_share,
    vocabulary_overlap,
)
from dptopic.corpus import Corpus, Vocabulary


def _corpus(docs, words):
    return Corpus(np.cumsum([0] + [len(d) for d in docs]), np.array([w for d in docs for w in d]), Vocabulary(words))


def test_outside_vocabulary_share_counts_tokens():
    c = _corpus([[0, 0, 1], [2, 3]], ["a", "b", "c", "d"])       # tokens a a b c d
    assert outside_vocabulary_share(Vocabulary(["a", "c"]), c) == pytest.approx(2 / 5)    # b and d
    assert outside_vocabulary_share(["a", "b", "c", "d"], c) == 0.0
    assert outside_vocabulary_share(["z"], _corpus([], ["a"])) == 0.0       # no token


def test_absent_words_and_overlap():
    c = _corpus([[0, 0], [2]], ["a", "b", "c", "d"])              # b and d in no document
    assert absent_word_share(c) == 0.5
    assert vocabulary_overlap(Vocabulary(["a", "b", "x", "y"]), c.vocabulary) == 0.5
    assert vocabulary_overlap([], c.vocabulary) == 0.0


class _Model:
    def __init__(self, stats):
        self.training_stats_ = stats


def test_as_dense_as_training_compares_tokens_per_document():
    c = _corpus([[0, 1], [1, 2]], ["a", "b", "c"])                # 2 tokens per document
    assert as_dense_as_training(_Model({"n_tokens": 20, "n_docs": 10}), c, 0.1) is True
    assert as_dense_as_training(_Model({"n_tokens": 30, "n_docs": 10}), c, 0.1) is False    # 2 < 0.9 * 3
    assert as_dense_as_training(_Model(None), c, 0.1) is None
    assert as_dense_as_training(_Model({"n_tokens": 1, "n_docs": 0}), c, 0.1) is None


def test_as_dense_as_training_reads_a_fitted_model_s_public_training_stats(tiny):
    from dptopic import LDA

    m = LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(tiny.corpus)
    assert m.training_stats_["n_docs"] == tiny.corpus.n_docs
    c = tiny.corpus
    assert as_dense_as_training(m, c, 0.0) is True
    m._train_stats = {"vocab_size": c.vocab_size}      # a private model that keeps only the released size
    assert as_dense_as_training(m, c, 0.1) is None
