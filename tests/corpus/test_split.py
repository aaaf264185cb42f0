"""dptopic.corpus.split: a training run's held-out split and the held-out copies of training documents."""
import numpy as np
import pytest

from dptopic.corpus import Corpus, held_out_split, without_copies
from dptopic.errors import DPTopicError


def _same(a, b) -> bool:
    return np.array_equal(a.doc_ptr, b.doc_ptr) and np.array_equal(a.word_ids, b.word_ids)


@pytest.mark.parametrize("by,method", [("stable", "stable_split"), ("position", "position_split")])
def test_held_out_split_is_the_corpus_split_it_names(planted, by, method):
    c = planted.corpus
    train, test = held_out_split(c, 0.2, by=by)
    want_train, want_test = getattr(c, method)(0.2)
    assert _same(train, want_train) and _same(test, want_test)
    assert train.n_docs + test.n_docs == c.n_docs


def test_the_two_splits_differ(planted):
    """by= is read: the stable and position splits put different documents on the held-out side."""
    assert not _same(held_out_split(planted.corpus, 0.2, by="stable")[1],
                     held_out_split(planted.corpus, 0.2, by="position")[1])


@pytest.mark.parametrize("size", [0, 0.0, None])
def test_a_zero_test_size_holds_nothing_out(planted, size):
    train, test = held_out_split(planted.corpus, size)
    assert train is planted.corpus and test is None


def test_an_unknown_split_is_refused(planted):
    with pytest.raises(DPTopicError, match="invalid by='random'"):
        held_out_split(planted.corpus, 0.2, by="random")


def test_without_copies_leaves_out_held_out_copies_of_training_documents():
    words = ["a", "b", "c", "d"]
    train = Corpus.from_token_ids([[0, 1], [2, 2]], words)
    test = Corpus.from_token_ids([[1, 0], [3], [2, 2], [0, 3]], words)     # [1, 0] is [0, 1]'s bag: a copy
    kept, n_left_out = without_copies(test, train)
    assert n_left_out == 2 and kept.n_docs == 2
    assert [sorted(kept.doc(d).tolist()) for d in range(2)] == [[3], [0, 3]]


def test_without_copies_keeps_everything_when_nothing_or_everything_repeats():
    words = ["a", "b", "c"]
    train = Corpus.from_token_ids([[0, 1]], words)
    fresh = Corpus.from_token_ids([[2], [0, 2]], words)
    assert without_copies(fresh, train) == (fresh, 0)
    copies = Corpus.from_token_ids([[1, 0], [0, 1]], words)
    assert without_copies(copies, train) == (copies, 0)      # nothing would be left to evaluate on
