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


def _copies_by_every_bag(test, train):
    """The held-out documents ``without_copies`` keeps, by comparing every bag (its rule, written out)."""
    bag = lambda c, d: np.sort(c.doc(d)).tobytes()  # noqa: E731
    seen = {bag(train, d) for d in range(train.n_docs)}
    return [d for d in range(test.n_docs) if bag(test, d) not in seen]


def test_without_copies_leaves_out_what_comparing_every_bag_leaves_out(monkeypatch):
    """Copies in any word order, hashed a few documents at a time, and hashes that all collide: the documents kept are
    those a comparison of every bag keeps."""
    from dptopic.corpus import split

    rng = np.random.default_rng(5)
    words = [f"w{i}" for i in range(12)]
    docs = [rng.integers(0, 12, rng.integers(1, 6)).tolist() for _ in range(300)]
    train = Corpus.from_token_ids(docs[:200], words)
    test_docs = docs[200:] + [rng.permutation(docs[i]).tolist() for i in range(0, 200, 7)]
    test = Corpus.from_token_ids(test_docs, words)
    want = _copies_by_every_bag(test, train)
    assert 0 < len(want) < test.n_docs
    monkeypatch.setattr(split, "HASH_BLOCK", 3)
    kept, n_left_out = without_copies(test, train)
    assert n_left_out == test.n_docs - len(want)
    assert [kept.doc(d).tolist() for d in range(kept.n_docs)] == [test.doc(d).tolist() for d in want]
    monkeypatch.setattr(split, "_bag_hashes", lambda c: np.zeros(c.n_docs, np.uint64))     # every hash collides
    kept, n_left_out = without_copies(test, train)
    assert n_left_out == test.n_docs - len(want) and kept.n_docs == len(want)


def test_without_copies_holds_arrays_not_a_bag_object_per_training_document(monkeypatch):
    """Nothing repeated: the traced peak of comparing 20,000 held-out with 80,000 training documents (hashed 4,096 at
    a time) stays under 60 bytes a document (47 measured; a set of every training bag as bytes took 202)."""
    import tracemalloc

    from dptopic.corpus import split

    monkeypatch.setattr(split, "HASH_BLOCK", 4096)
    rng = np.random.default_rng(0)
    lengths = rng.integers(20, 40, 100_000)
    ptr = np.concatenate([[0], np.cumsum(lengths)])
    ids = rng.integers(0, 2000, int(ptr[-1])).astype(np.int32)
    corpus = Corpus(ptr, ids, [f"w{i}" for i in range(2000)])
    train, test = corpus.subset(np.arange(80_000)), corpus.subset(np.arange(80_000, 100_000))
    tracemalloc.start()
    try:
        kept, n_left_out = without_copies(test, train)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert n_left_out == 0 and kept is test
    assert peak / corpus.n_docs < 60, f"{peak / corpus.n_docs:.0f} bytes a document"


def test_without_copies_gathers_a_parts_tokens_a_block_at_a_time(monkeypatch):
    """The parts of a split read their corpus's tokens: comparing them gathers a hash block (and the candidates) at a
    time, never a whole part (at 10^6 documents the training part's 150 MB beside the corpus)."""
    from dptopic.corpus import split, token_file

    gathered = []
    take = token_file.take_documents
    monkeypatch.setattr(token_file, "take_documents", lambda ids, ptr, index, out: (
        gathered.append(len(index)), take(ids, ptr, index, out))[1])
    monkeypatch.setattr(split, "HASH_BLOCK", 500)
    rng = np.random.default_rng(1)
    docs = [rng.integers(0, 40, rng.integers(1, 30)).tolist() for _ in range(4_000)]
    corpus = Corpus.from_token_ids(docs + docs[:50], [f"w{i}" for i in range(40)])
    train, test = corpus.subset(np.arange(3_000)), corpus.subset(np.arange(3_000, corpus.n_docs))
    kept, n_left_out = without_copies(test, train)
    assert n_left_out >= 50 and max(gathered) <= 500 and sum(gathered) < train.n_docs + 2 * test.n_docs
    want = _copies_by_every_bag(corpus.subset(np.arange(3_000, corpus.n_docs)), corpus.subset(np.arange(3_000)))
    assert [kept.doc(d).tolist() for d in range(kept.n_docs)] == [test.doc(d).tolist() for d in want]
