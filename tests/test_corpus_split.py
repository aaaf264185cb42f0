"""Corpus.stable_split: each document's side depends on its own words only."""
import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def _corpus(n, seed=0, V=50):
    rng = np.random.default_rng(seed)
    return Corpus.from_token_ids([list(rng.integers(0, V, rng.integers(1, 12))) for _ in range(n)],
                                 [f"w{i}" for i in range(V)])


def _sides(c, key=0):
    tr, te = c.stable_split(0.2, key=key)
    return [tuple(d) for d in map(tr.doc, range(tr.n_docs))], [tuple(d) for d in map(te.doc, range(te.n_docs))]


def test_adding_a_document_moves_no_other_and_the_share_is_the_fraction():
    """A random permutation (train_test_split) moves many documents when one is added; the stable split none."""
    c = _corpus(2000)
    more = Corpus.from_token_ids([list(c.doc(d)) for d in range(c.n_docs)] + [[1, 2, 3, 4, 5]], c.vocabulary.words)
    tr, te = _sides(c)
    tr2, te2 = _sides(more)
    assert set(tr) <= set(tr2) and set(te) <= set(te2) and len(tr2) + len(te2) == len(tr) + len(te) + 1
    # the test share is binomial(2000, 0.2): within 4 standard errors (8.9 documents each)
    assert abs(len(te) - 400) < 4 * np.sqrt(2000 * 0.2 * 0.8)
    # a permutation, for contrast: the training part changes by far more than the document added
    a = set(map(tuple, map(c.train_test_split(0.2, seed=0)[0].doc, range(1600))))
    b = set(map(tuple, map(more.train_test_split(0.2, seed=0)[0].doc, range(1601))))
    assert len(a ^ b) > 50
    # a side is a function of the bag of words and the key: order within a document does not matter
    both = Corpus.from_token_ids([list(c.doc(d)) for d in range(c.n_docs)] + [[3, 1, 2]], c.vocabulary.words)
    same = Corpus.from_token_ids([list(c.doc(d)) for d in range(c.n_docs)] + [[1, 2, 3]], c.vocabulary.words)
    assert ((3, 1, 2) in _sides(both)[0]) == ((1, 2, 3) in _sides(same)[0])
    _, test_copies = Corpus.from_token_ids([[1, 2]] * 500, c.vocabulary.words).stable_split(0.2)
    assert abs(test_copies.n_docs - 100) < 4 * np.sqrt(500 * 0.2 * 0.8)   # copies are spread, not kept together
    # one more copy adds one document to one part
    a = Corpus.from_token_ids([[1, 2]] * 60 + [[4]] * 5, c.vocabulary.words).stable_split(0.2)
    b = Corpus.from_token_ids([[1, 2]] * 61 + [[4]] * 5, c.vocabulary.words).stable_split(0.2)
    assert sorted((b[0].n_docs - a[0].n_docs, b[1].n_docs - a[1].n_docs)) == [0, 1]
    assert [tuple(b[1].doc(d)) for d in range(b[1].n_docs)].count((4,)) == \
        [tuple(a[1].doc(d)) for d in range(a[1].n_docs)].count((4,))
    assert _sides(c, key=1) != _sides(c)


def test_bad_fractions_and_a_degenerate_split_are_one_line():
    c = _corpus(50)
    assert c.stable_split(np.float32(0.2))[1].n_docs == c.stable_split(0.2)[1].n_docs   # any real fraction
    for bad in (0.0, 1.0, 3, True):
        with pytest.raises(DPTopicError, match="fraction"):
            c.stable_split(bad)
    with pytest.raises(DPTopicError, match="at least 2 documents"):
        Corpus.from_token_ids([[1, 2]], c.vocabulary.words).stable_split(0.2)
    with pytest.raises(DPTopicError, match="one part"):     # two documents, both on the training side
        Corpus.from_token_ids([[1, 2], [1, 2]], c.vocabulary.words).stable_split(0.01)
