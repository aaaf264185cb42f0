"""``dptopic.corpus.vocabulary``."""
import numpy as np
import pytest

from dptopic.corpus import Corpus, Vocabulary, lda_corpus
from dptopic.errors import DPTopicError


def test_split_restrict_subset():
    c = lda_corpus(100, 50, 3, 10, seed=0).corpus
    tr, te = c.train_test_split(0.25, seed=1)
    assert tr.n_docs == 75 and te.n_docs == 25 and tr.n_tokens + te.n_tokens == c.n_tokens
    tr2, _ = c.train_test_split(0.25, seed=1)
    assert np.array_equal(tr.word_ids, tr2.word_ids)
    small = Vocabulary(["w0", "w1", "w2", "zzz"])
    r = c.restrict(small)
    assert r.vocab_size == 4 and set(np.unique(r.word_ids)) <= {0, 1, 2}
    assert r.n_tokens == int(np.isin(c.word_ids, [0, 1, 2]).sum())
    with pytest.raises(DPTopicError, match="test_size"):
        c.train_test_split(1.5)


def test_bad_inputs_one_line():
    for bad, match in [([], "empty corpus"), (["the of and"], "empty corpus"), (["cat cat cat"], "vocabulary too small")]:
        with pytest.raises(DPTopicError, match=match) as e:
            Corpus.from_texts(bad)
        assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="unknown word id 7"):
        Corpus(np.array([0, 2]), np.array([0, 7]), ["a", "b"])
    with pytest.raises(DPTopicError, match="duplicate"):
        Vocabulary(["a", "a"])
