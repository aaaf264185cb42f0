"""The default document ids, made when read (dptopic.corpus.numbered_ids): they read, compare, subset and save as the
list of the same names does."""
import json

import numpy as np
import pytest

from dptopic import Corpus
from dptopic.corpus.numbered_ids import NumberedIds


def test_reads_as_the_list_of_its_names():
    ids, names = NumberedIds(7), [f"doc{i}" for i in range(7)]
    assert len(ids) == 7 and list(ids) == names and ids == names and names == ids
    assert [ids[i] for i in range(-7, 7)] == names + names
    assert ids[np.int64(3)] == "doc3"
    for s in (slice(2, 5), slice(None, None, -2), slice(9, 1, -1), slice(3, 3)):
        assert list(ids[s]) == names[s] and ids[s] == names[s]
    for bad in (7, -8):
        with pytest.raises(IndexError):
            ids[bad]
    assert ids != names[:-1] and ids != ["doc0"] * 7 and ids != NumberedIds(6)
    assert "doc3" in ids and "doc7" not in ids and ids.index("doc4") == 4


def test_a_part_keeps_its_documents_names():
    part = NumberedIds(10).take([7, 2, 9])
    assert list(part) == ["doc7", "doc2", "doc9"] and part == NumberedIds(3, np.array([7, 2, 9]))
    assert list(part.take([2, 0])) == ["doc9", "doc7"] and part[-1] == "doc9"
    assert part != NumberedIds(3)


def test_a_corpus_read_without_ids_names_its_documents_by_number_and_saves_them_as_before(tmp_path):
    texts = ["apple banana cherry", "", "cherry date apple", "banana banana date", "egg apple cherry"]
    c = Corpus.from_texts(texts, min_df=1)
    assert isinstance(c.doc_ids, NumberedIds)
    assert c.doc_ids == ["doc0", "doc2", "doc3", "doc4"]      # the empty document dropped, the others' numbers kept
    part = c.subset([3, 1])
    assert isinstance(part.doc_ids, NumberedIds) and list(part.doc_ids) == ["doc4", "doc2"]
    c.save(tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz") as z:
        assert json.loads(bytes(z["meta"]).decode())["doc_ids"] == ["doc0", "doc2", "doc3", "doc4"]
    assert Corpus.load(tmp_path / "c.npz").doc_ids == list(c.doc_ids)
    given = Corpus.from_texts(texts[:2], doc_ids=["a", "b"], min_df=1, drop_empty=False)
    assert given.doc_ids == ["a", "b"] and isinstance(given.doc_ids, list)


def test_a_large_corpus_without_ids_holds_no_string_per_document():
    import tracemalloc

    words = [f"w{a}{b}x" for a in "abcdefghij" for b in "abcde"]
    texts = [f"{words[i % 50]} {words[(i * 7) % 50]} {words[(i * 3) % 50]}" for i in range(20_000)]
    tracemalloc.start()
    try:
        c = Corpus.from_texts(texts, min_df=1)
        snap = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    # the corpus's own allocations in its module: a list of 20,000 names took more than 1 MB
    held = sum(s.size for s in snap.statistics("filename") if s.traceback[0].filename.endswith("corpus.py"))
    assert c.doc_ids[19_999] == "doc19999" and held < 20_000 * 40
