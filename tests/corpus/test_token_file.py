"""A corpus's token ids on disk (dptopic.corpus.token_file): the same ids as in memory, read a range at a time, in a
file without a name; a corpus whose ids are there reads as one whose ids are in memory."""
import copy
import os
import tempfile

import numpy as np
import pytest

from dptopic.corpus import Corpus, token_file
from dptopic.corpus.token_file import TokensOnDisk, gather
from dptopic.errors import DPTopicError


def random_corpus(n_docs: int = 400, vocab: int = 30, seed: int = 0) -> Corpus:
    rng = np.random.default_rng(seed)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 25, n_docs))])
    return Corpus(ptr, rng.integers(0, vocab, int(ptr[-1])).astype(np.int32), [f"w{i}" for i in range(vocab)])


def on_disk(c: Corpus) -> Corpus:
    out = Corpus(c.doc_ptr, TokensOnDisk(c.word_ids), c.vocabulary)
    assert isinstance(out._word_ids, TokensOnDisk)
    return out


def test_ids_read_back_a_range_at_a_time_and_whole():
    ids = np.random.default_rng(1).integers(0, 1000, 5000).astype(np.int32)
    f = TokensOnDisk(ids)
    assert len(f) == 5000 and np.array_equal(f.load(), ids) and f.load().dtype == np.int32
    for a, b in ((0, 0), (0, 1), (17, 4093), (4999, 5000), (0, 5000)):
        assert np.array_equal(f.read(a, b), ids[a:b])
    for a, b in ((-1, 3), (10, 5), (0, 5001)):
        with pytest.raises(IndexError):
            f.read(a, b)


def test_the_file_has_no_name_and_a_file_cut_short_is_an_os_error():
    before = set(os.listdir(tempfile.gettempdir()))
    f = TokensOnDisk(np.arange(1000, dtype=np.int32))
    assert not {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("dptopic-tokens-")}
    f._fh.truncate(100)
    with pytest.raises(OSError, match="ended after"):
        f.load()


@pytest.mark.parametrize("rows", [[], [3], [0, 1, 2, 399], list(range(5, 300, 7)), [9, 2, 2, 40]])
def test_gather_from_disk_is_take_documents_and_reads_the_span_of_increasing_rows(rows, monkeypatch):
    c = random_corpus()
    f = TokensOnDisk(c.word_ids)
    rows = np.asarray(rows, dtype=np.int64)
    out_ptr = np.concatenate([[0], np.cumsum(c.doc_lengths[rows])]).astype(np.int64)
    want = gather(c.word_ids, c.doc_ptr, rows, out_ptr)
    spans = []
    read = TokensOnDisk.read
    monkeypatch.setattr(TokensOnDisk, "read", lambda self, a, b: spans.append((a, b)) or read(self, a, b))
    monkeypatch.setattr(TokensOnDisk, "load", lambda self: pytest.fail("the ids read whole"))
    got = gather(f, c.doc_ptr, rows, out_ptr)
    assert got.dtype == np.int32 and np.array_equal(got, want)
    assert np.array_equal(want, np.concatenate([c.doc(d) for d in rows]) if len(rows) else want)
    if len(rows) and np.all(np.diff(rows) > 0):
        assert spans == [(c.doc_ptr[rows[0]], c.doc_ptr[rows[-1] + 1])]
        monkeypatch.setattr(token_file, "SPAN_TOKENS", 40)          # spread rows: a window at a time
        spans.clear()
        assert np.array_equal(gather(f, c.doc_ptr, rows, out_ptr), want)
        assert all(b - a <= 40 + 25 for a, b in spans) and (len(spans) > 1 or c.doc_ptr[rows[-1] + 1]
                                                            - c.doc_ptr[rows[0]] <= 65)


def test_a_corpus_on_disk_reads_as_in_memory_a_block_at_a_time(monkeypatch):
    c = random_corpus()
    d = on_disk(c)
    monkeypatch.setattr(TokensOnDisk, "load", lambda self: pytest.fail("the ids read whole"))
    assert d.n_tokens == c.n_tokens
    assert [d.doc(i).tolist() for i in (0, 7, 399)] == [c.doc(i).tolist() for i in (0, 7, 399)]
    for (p, ids), (p2, ids2) in zip(d.token_blocks(33), c.token_blocks(33), strict=True):
        assert np.array_equal(p, p2) and np.array_equal(ids, ids2)
    for got, want in zip(d.stable_split(0.3, key=4), c.stable_split(0.3, key=4)):
        assert np.array_equal(got.doc_ptr, want.doc_ptr)
        assert all(np.array_equal(a[1], b[1]) for a, b in zip(got.token_blocks(50), want.token_blocks(50)))
        assert np.array_equal(got.word_ids, want.word_ids)        # a part gathered from the file, a span at a time
    rows = np.concatenate([np.arange(399, 0, -3), [5, 5, 0]])     # rows in another order, and repeated
    sub = d.subset(rows)
    assert np.array_equal(sub.word_ids, c.subset(rows).word_ids)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(d.subset(rows).token_blocks(17),
                                                          c.subset(rows).token_blocks(17), strict=True))


def test_ids_on_disk_outside_the_vocabulary_are_refused():
    with pytest.raises(DPTopicError, match="unknown word id 30"):
        Corpus(np.array([0, 2, 3]), TokensOnDisk(np.array([1, 30, 2], np.int32)), [f"w{i}" for i in range(30)])


def test_a_corpus_on_disk_read_whole_keeps_its_ids_and_a_copy_holds_them():
    c = random_corpus()
    d = on_disk(c)
    twin = copy.deepcopy(d)
    assert isinstance(twin._word_ids, np.ndarray) and np.array_equal(twin.word_ids, c.word_ids)
    assert isinstance(d._word_ids, TokensOnDisk)
    assert d.word_ids is d.word_ids and np.array_equal(d.word_ids, c.word_ids)      # read back once, then kept
    assert isinstance(d._word_ids, np.ndarray)


def test_a_temporary_folder_that_cannot_take_the_ids_is_an_os_error(monkeypatch):
    """The reader keeps the ids in memory on an OSError (tests/corpus/test_stream.py): none other is raised."""
    def no_file(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(token_file.tempfile, "TemporaryFile", no_file)
    with pytest.raises(OSError):
        TokensOnDisk(np.arange(10, dtype=np.int32))


def test_the_ledgers_documents_of_a_corpus_on_disk_are_those_in_memory(monkeypatch):
    from dptopic.corpus.ledger_documents import documents_of

    words = [f"word{chr(97 + k // 26)}{chr(97 + k % 26)}" for k in range(37)]
    texts = [" ".join(words[(i * j) % 37] for j in range(3 + i % 20)) for i in range(300)]
    c = Corpus.from_texts(texts, max_vocab=None)
    d = Corpus(c.doc_ptr, TokensOnDisk(c.word_ids), c.vocabulary, content_keys=c.content_keys,
               token_keys=c.token_keys)
    monkeypatch.setattr(TokensOnDisk, "load", lambda self: pytest.fail("the ids read whole"))
    got, want = documents_of(d), documents_of(c)
    for f in ("digests", "read_bags", "bags", "signatures", "lengths"):
        assert np.array_equal(getattr(got, f), getattr(want, f)), f
    # no content keys: its bags are its digests
    np.testing.assert_array_equal(documents_of(Corpus(c.doc_ptr, TokensOnDisk(c.word_ids), c.vocabulary,
                                                      token_keys=c.token_keys)).digests,
                                  documents_of(Corpus(c.doc_ptr, c.word_ids, c.vocabulary,
                                                      token_keys=c.token_keys)).digests)
