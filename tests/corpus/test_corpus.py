import copy
import csv
import decimal
import gzip
import importlib.util
import io
import json
import math
import os
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dptopic
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from helpers import (
    FAST,
    NASTY,
    PARAMS,
    SMALL_PRIVATE_TRAINERS,
    base_kwargs,
    mutations,
    quiet_small_fits,
    works_or_refuses,
    write_posts,
)

TEXTS = ["The cat sat on the mat with another cat.", "Dogs chase cats; the cat runs!",
         "A market rally lifted stocks and bonds.", "Stocks fell as bonds rallied in the market.",
         "the and of", "Cats and dogs and markets."]


def test_from_texts_preprocessing():
    c = Corpus.from_texts(TEXTS, labels=list("aabbcb"))
    assert c.n_empty_dropped == 1  # "the and of" is all stop words / short
    assert c.n_docs == 5 and c.labels == list("aabbb")
    assert "the" not in c.vocabulary and "cat" in c.vocabulary
    assert c.word_ids.dtype == np.int32 and c.doc_ptr.dtype == np.int64
    assert c.doc_words(0).count("cat") == 2
    # vocabulary ranked by total count, ties alphabetical
    assert c.vocabulary[0] == "cat"


def test_max_vocab_and_min_df():
    c = Corpus.from_texts(TEXTS, max_vocab=3)
    assert len(c.vocabulary) == 3
    c2 = Corpus.from_texts(TEXTS, min_df=2)
    bow = (c2.to_bow() > 0).sum(axis=0)
    assert np.all(np.asarray(bow) >= 2)


def test_to_bow_and_from_bow_roundtrip():
    c = Corpus.from_texts(TEXTS)
    X = c.to_bow()
    assert sp.isspmatrix_csr(X) and X.sum() == c.n_tokens
    c2 = Corpus.from_bow(X, vocabulary=c.vocabulary.words)
    assert np.array_equal(c2.to_bow().toarray(), X.toarray())


def _write_uci(tmp_path, X, words, gz=False):
    X = sp.coo_matrix(X)
    lines = [str(X.shape[0]), str(X.shape[1]), str(X.nnz)] + [f"{d + 1} {w + 1} {c}" for d, w, c in zip(X.row, X.col, X.data)]
    body = "\n".join(lines) + "\n"
    dw = tmp_path / ("docword.test.txt.gz" if gz else "docword.test.txt")
    if gz:
        with gzip.open(dw, "wt") as fh:
            fh.write(body)
    else:
        dw.write_text(body)
    vp = tmp_path / "vocab.test.txt"
    vp.write_text("\n".join(words) + "\n")
    return dw, vp


@pytest.mark.parametrize("gz", [False, True])
def test_uci_roundtrip(tmp_path, gz):
    c = Corpus.from_texts(TEXTS)
    dw, vp = _write_uci(tmp_path, c.to_bow(), c.vocabulary.words, gz)
    u = Corpus.from_uci(dw, vp)
    assert np.array_equal(u.to_bow().toarray(), c.to_bow().toarray())
    assert u.vocabulary == c.vocabulary


def test_uci_errors(tmp_path):
    dw, vp = _write_uci(tmp_path, np.array([[1, 2], [0, 1]]), ["a", "b"])
    dw.write_text("2\n2\n3\n1 1 1\n1 3 1\n2 2 1\n")
    with pytest.raises(DPTopicError, match="unknown word id 3"):
        Corpus.from_uci(dw, vp)
    dw.write_text("2\n5\n1\n1 1 1\n")
    with pytest.raises(DPTopicError, match="disagree"):
        Corpus.from_uci(dw, vp)


def test_jsonl_csv_dir_loaders(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text("\n".join(json.dumps({"body": t, "y": i % 2}) for i, t in enumerate(TEXTS)))
    j = Corpus.from_jsonl(p, text_field="body", label_field="y")
    ref = Corpus.from_texts(TEXTS)
    assert np.array_equal(j.word_ids, ref.word_ids) and j.labels == ["0", "1", "0", "1", "1"]
    with pytest.raises(DPTopicError, match="no field 'text'"):
        Corpus.from_jsonl(p)
    q = tmp_path / "d.csv"
    import csv
    with open(q, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["text", "label"])
        w.writerows([[t, "x"] for t in TEXTS])
    cc = Corpus.from_csv(q, label_column="label")
    assert np.array_equal(cc.word_ids, ref.word_ids)
    with pytest.raises(DPTopicError, match="no column 'body'"):
        Corpus.from_csv(q, text_column="body")
    d = tmp_path / "docs"
    d.mkdir()
    for i, t in enumerate(TEXTS):
        (d / f"{i:02d}.txt").write_text(t)
    dc = Corpus.from_directory(d)
    assert np.array_equal(dc.word_ids, ref.word_ids)


def test_save_load_roundtrip_and_corrupt(tmp_path):
    c = Corpus.from_texts(TEXTS, labels=list("aabbcb"))
    p = c.save(tmp_path / "c.npz")
    d = Corpus.load(p)
    assert np.array_equal(d.word_ids, c.word_ids) and d.vocabulary == c.vocabulary and d.labels == c.labels
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    with pytest.raises(DPTopicError, match="is not an .npz corpus"):
        Corpus.load(tmp_path / "bad.npz")


def test_empty_documents_at_the_end():
    """Trailing empty rows (common in sklearn matrices) and empty documents after restrict."""
    X = sp.csr_matrix(np.array([[1, 2, 0], [0, 1, 1], [0, 0, 0], [0, 0, 0]]))
    c = Corpus.from_bow(X, ["a", "b", "c"])
    assert np.array_equal(c.doc_lengths, [3, 2, 0, 0])
    d = Corpus.from_token_ids([[0, 1], [2], []], ["a", "b", "c"])
    assert np.array_equal(d.restrict(["a", "c"], drop_empty=False).doc_lengths, [1, 1, 0])
    assert d.restrict(["a", "c"]).n_docs == 2


TOKENS = [["Apple", "banana", "fruit", "apple"], ["river", "lake", "mountain"], ["apple", "fruit", "salad"],
          ["lake", "river", "valley"], []]


def test_from_tokens_uses_the_words_as_given():
    c = Corpus.from_tokens(TOKENS, max_vocab=None)
    assert "Apple" in c.vocabulary.words and "apple" in c.vocabulary.words          # no lowercasing
    assert c.n_docs == 4 and c.n_empty_dropped == 1 and c.n_tokens == 13
    assert c.to_bow()[0, c.vocabulary._index["apple"]] == 1
    kept = Corpus.from_tokens(TOKENS, vocabulary=["apple", "river", "lake"], drop_empty=False)
    assert kept.n_docs == 5 and list(kept.doc_lengths) == [1, 2, 1, 2, 0]
    small = Corpus.from_tokens(TOKENS, min_df=2)
    assert set(small.vocabulary.words) == {"apple", "fruit", "lake", "river"}


@pytest.mark.parametrize("bad, match", [([["a", 1]], "holds 1 .type int., not a word"),
                                        ([["a", "b"], "c d"], "document 1 is a str, not a list of words"),
                                        ("a b", "not a single string"), ([], "no documents")])
def test_from_tokens_refuses_in_one_line(bad, match):
    with pytest.raises(DPTopicError, match=match) as e:
        Corpus.from_tokens(bad)
    assert "\n" not in str(e.value)


@quiet_small_fits
@pytest.mark.parametrize("dtype, value", [(np.uint8, 200), (np.int8, 100), (np.int16, 20_000)])
def test_repeated_coo_entries_of_a_small_integer_dtype_are_added_without_wrapping(dtype, value):
    """A COO matrix's repeated entries are summed: in uint8 200 + 200 was 144 (silently wrong counts), in int8
    100 + 100 was -56 ("Negative values in data")."""
    X = sp.coo_matrix((np.array([value, value], dtype), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 4))
    c = Corpus.from_bow(X)
    assert c.n_tokens == 2 * value
    assert np.bincount(c.word_ids, minlength=4)[1] == 2 * value


def test_stop_words_are_lowercased_with_the_tokens():
    c = dptopic.Corpus.from_texts(["The Cat sat on the mat today", "cat dog mat"], stop_words=["Cat", "THE"])
    assert "cat" not in c.vocabulary.words and "the" not in c.vocabulary.words and "mat" in c.vocabulary.words
    kept = dptopic.Corpus.from_texts(["The Cat sat", "cat dog"], stop_words=["Cat"], lowercase=False)
    assert "Cat" not in kept.vocabulary.words and "cat" in kept.vocabulary.words


def test_a_broken_link_in_a_text_folder_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("apple banana cherry\n")
    (tmp_path / "b.txt").write_text("dog elephant fish\n")
    os.symlink(tmp_path / "gone.txt", tmp_path / "c.txt")
    with pytest.raises(DPTopicError, match="broken link") as e:
        Corpus.from_directory(tmp_path)
    assert "c.txt" in str(e.value) and "\n" not in str(e.value)
    os.remove(tmp_path / "c.txt")
    os.symlink(tmp_path / "b.txt", tmp_path / "c.txt")          # a working link is a document like any other
    assert Corpus.from_directory(tmp_path).n_docs == 3


def test_a_broken_hidden_link_is_left_out_like_any_hidden_file(tmp_path):
    (tmp_path / "a.txt").write_text("apple banana cherry\n")
    os.symlink(tmp_path / "gone.txt", tmp_path / ".c.txt")
    assert Corpus.from_directory(tmp_path).n_docs == 1


DOCS = ["The café in Zürich serves coffee and cake", "Straße strasse Große große", "İstanbul istanbul ISTANBUL",
        "cafe\u0301 café CAFÉ Café résumé", "ﬁnance ｗｏｒｄ word finance", "Hello, world! hello again world"]


# ------------------------------------------------------------------ text folders
def _folder(tmp_path):
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    (d / "a.txt").write_text("apple banana cherry")
    (d / "sub" / "b.txt").write_text("cherry grape apple")
    return d


# ------------------------------------------------------------------ stop words
def test_decomposed_stop_word_file_removes_the_composed_word(tmp_path):
    sw = tmp_path / "stop.txt"
    sw.write_text("cafe\u0301\nzu\u0308rich\n", encoding="utf-8")      # NFD, as macOS tools write it
    c = Corpus.from_texts(DOCS, stop_words=str(sw), max_vocab=None)
    assert "café" not in c.vocabulary and "zürich" not in c.vocabulary
    assert "coffee" in c.vocabulary


def test_decomposed_stop_word_prunes_a_prepared_corpus():
    c = Corpus.from_tokens([["café", "apple", "pear"], ["café", "apple", "plum"]], max_vocab=None)
    assert "café" not in c.prune(max_vocab=None, stop_words=["cafe\u0301"]).vocabulary


def test_stop_word_file_with_several_words_on_a_line_is_refused(tmp_path):
    (tmp_path / "stop.txt").write_text("apple\nthe, and, of\n")
    with pytest.raises(DPTopicError, match=r"line 2 holds 'the, and, of', more than one word"):
        Corpus.from_texts(["apple banana cherry", "the and of grape"], stop_words=str(tmp_path / "stop.txt"))


def test_link_to_a_file_of_the_folder_warns_that_it_is_read_twice(tmp_path):
    # read, as a working link is, but not unawares: the document counts twice
    d = _folder(tmp_path)
    os.symlink(d / "a.txt", d / "sub" / "again.txt")
    with pytest.warns(UserWarning, match=r"'sub/again.txt' is a link to 'a.txt'.*read twice"):
        assert Corpus.from_directory(d).n_docs == 3


def test_link_to_an_outside_file_is_one_document(tmp_path):
    d = _folder(tmp_path)
    (tmp_path / "out.txt").write_text("mango papaya melon")
    os.symlink(tmp_path / "out.txt", d / "out.txt")
    assert Corpus.from_directory(d).n_docs == 3


def test_link_to_a_folder_of_documents_is_refused_not_skipped(tmp_path):
    d = _folder(tmp_path)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "m.txt").write_text("mango papaya melon")
    os.symlink(tmp_path / "more", d / "more")
    with pytest.raises(DPTopicError, match=r"1 link to a folder \(more\), whose files are not read"):
        Corpus.from_directory(d)


def test_upper_case_txt_files_are_documents_too(tmp_path):
    d = _folder(tmp_path)
    (d / "NOTES.TXT").write_text("mango papaya melon")
    c = Corpus.from_directory(d)
    assert "NOTES.TXT" in c.doc_ids and "mango" in c.vocabulary


def test_npz_with_pickled_objects_is_refused_as_such(tmp_path):
    p = tmp_path / "o.npz"
    np.savez(p, meta=np.array([{"a": 1}], dtype=object), doc_ptr=np.arange(2), word_ids=np.arange(1))
    with pytest.raises(DPTopicError, match="pickled Python objects, which dptopic never loads"):
        Corpus.load(p)


# ------------------------------------------------------------------ a given vocabulary
def test_decomposed_vocabulary_word_warning_names_unicode_normalisation():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = Corpus.from_texts(["café apple cake", "apple cake coffee"], vocabulary=["cafe\u0301", "apple", "cake"])
    msg = " ".join(str(x.message) for x in w)
    assert "not in Unicode NFKC form" in msg and "upper case" not in msg, msg
    assert c.n_tokens == 4


WORDS = "apple banana cherry grape lemon mango"


def test_the_python_loaders_refuse_it_alike(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"text,label\n{WORDS},a\n{WORDS},\n")
    with pytest.raises(DPTopicError, match=r"line 3 has an empty 'label' field, so no label: .*label_column") as e:
        Corpus.from_csv(p, label_column="label")
    assert "\n" not in str(e.value)
    q = tmp_path / "c.jsonl"
    q.write_text(json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS, "label": " "}) + "\n")
    with pytest.raises(DPTopicError, match=r"line 2 has no label \(field 'label' is ' '\)"):
        Corpus.from_jsonl(q, label_field="label")
    for missing in (float("nan"), np.nan, ""):     # a pandas column's missing value read as the class 'nan'
        with pytest.raises(DPTopicError, match=r"labels\[1\] is '(nan|)', no label"):
            Corpus.from_texts([WORDS, WORDS], labels=["a", missing])
    with pytest.raises(DPTopicError, match=r"labels\[0\] is 'nan', no label"):
        Corpus.from_tokens([WORDS.split(), WORDS.split()], labels=np.array([np.nan, 1.0]))


def test_labels_that_are_there_read_as_before(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"text,label\n{WORDS},a\n{WORDS},0\n")
    assert Corpus.from_csv(p, label_column="label").labels == ["a", "0"]
    q = tmp_path / "c.jsonl"
    q.write_text(json.dumps({"text": WORDS, "label": 0}) + "\n" + json.dumps({"text": WORDS, "label": "b"}) + "\n")
    assert Corpus.from_jsonl(q, label_field="label").labels == ["0", "b"]
    assert Corpus.from_csv(p).labels is None          # no label column asked for: no labels, empty cells or not


def test_a_text_folder_read_as_dot_labels_its_top_files_with_its_own_name(tmp_path, monkeypatch):
    top = tmp_path / "letters"
    (top / "sub").mkdir(parents=True)
    (top / "a.txt").write_text(WORDS)
    (top / "sub" / "b.txt").write_text(WORDS)
    monkeypatch.chdir(top)
    assert Corpus.from_directory(".").labels == ["letters", "sub"]      # was ['', 'sub']
    assert Corpus.from_directory(top).labels == ["letters", "sub"]


def test_the_python_contributor_path_and_the_training_rule(tmp_path):
    """A corpus kept one row per input document (drop_empty=False, as contributors build it) may hold one word, or
    none; a vocabulary built to model the documents (drop_empty, or a vocabulary given) still needs two."""
    c = Corpus.from_texts(["zebra zebra", "?!"], max_vocab=None, drop_empty=False)
    assert c.vocab_size == 1 and c.n_docs == 2
    assert c.restrict(["yak", "zebra"], drop_empty=False).n_tokens == 2
    assert Corpus.from_texts(["?!"], max_vocab=None, drop_empty=False).vocab_size == 0
    with pytest.raises(DPTopicError, match="vocabulary too small"):
        Corpus.from_texts(["zebra zebra"])
    with pytest.raises(DPTopicError, match="vocabulary too small"):
        Corpus.from_texts(["zebra zebra"], vocabulary=["zebra"], drop_empty=False)


def _corpus(n, seed=0, V=50):
    rng = np.random.default_rng(seed)
    return Corpus.from_token_ids([list(rng.integers(0, V, rng.integers(1, 12))) for _ in range(n)],
                                 [f"w{i}" for i in range(V)])


def _sides(c, key=0):
    tr, te = c.stable_split(0.2, key=key)
    return [tuple(d) for d in map(tr.doc, range(tr.n_docs))], [tuple(d) for d in map(te.doc, range(te.n_docs))]


def test_the_stable_splits_sides_are_numpys_sums_of_the_keyed_word_hashes():
    """The sides as NumPy computes them (each document's sum of its words' keyed hashes by a cumulative sum over the
    tokens, mixed; the k-th copy of a bag mixed with k): the compiled sum the split takes splits alike."""
    from dptopic.corpus.corpus import _word_hashes
    from dptopic.corpus.identity import mix64

    c = _corpus(3000, seed=4)
    c = Corpus.from_token_ids([list(c.doc(d)) for d in range(c.n_docs)] + [list(c.doc(0))] * 3, c.vocabulary.words)
    for key in (0, 9):
        cs = np.zeros(c.n_tokens + 1, np.uint64)
        np.cumsum(_word_hashes(c.vocabulary.words, key)[c.word_ids], out=cs[1:])
        h = mix64(cs[c.doc_ptr[1:]] - cs[c.doc_ptr[:-1]])
        copy = np.zeros(len(h), np.uint64)
        seen = {}
        for d, v in enumerate(h.tolist()):
            copy[d] = seen.get(v, 0)
            seen[v] = seen.get(v, 0) + 1
        with np.errstate(over="ignore"):
            u = (mix64(h ^ (copy * np.uint64(0x9E3779B97F4A7C15))) >> np.uint64(11)) / float(2 ** 53)
        tr, te = c.stable_split(0.2, key=key)
        want = np.flatnonzero(u < 0.2)
        assert te.n_docs == len(want) and [tuple(te.doc(i)) for i in range(te.n_docs)] == [tuple(c.doc(d))
                                                                                            for d in want]
        assert tr.n_docs + te.n_docs == c.n_docs


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


@pytest.mark.skipif(importlib.util.find_spec("starlette") is None, reason="needs starlette")
@pytest.mark.skipif(importlib.util.find_spec("uvicorn") is None, reason="needs uvicorn")
@pytest.mark.parametrize("first, then, line, got", [("1 1 2 7", "1 2 1", 4, 4), ("1 1", "1 2 1", 4, 2),
                                                    ("1 1 2", "1 2", 5, 2)])
def test_a_uci_line_with_the_wrong_number_of_fields_is_the_one_named(tmp_path, first, then, line, got):
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    (tmp_path / "vocab.txt").write_text("apple\nbanana\ncherry\ndate\nfig\n")
    (tmp_path / "docword.txt").write_text(f"3\n5\n5\n{first}\n{then}\n2 3 1\n3 4 2\n3 5 1\n")
    with pytest.raises(DPTopicError, match=rf"line {line} has {got} fields, not 3 \('docID wordID count'\)"):
        Corpus.from_uci(tmp_path / "docword.txt", tmp_path / "vocab.txt")


WORDS_2 = ["apple", "banana", "cherry", "grape", "lemon"]


TEXTS_2 = ["apple banana cherry", "banana cherry grape", "cherry grape lemon"]


FUZZ = settings(max_examples=120, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


def _one_line(e: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(e.value)
    return str(e.value)


_GOOD = (st.text(min_size=1, max_size=5).filter(lambda s: s.strip() and s.isprintable())
         | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.booleans())


_BAD = (st.sampled_from([None, float("nan"), np.float32("nan"), decimal.Decimal("NaN"), float("inf"), "", " \t",
                         "\u200b", b"x", ["a"], ("a",), {"a": 1}]))


# ---------------------------------------------------------------- 1, 2. CSV/TSV cells and JSONL values
def _blankish(s: str) -> bool:
    import unicodedata

    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in s)


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=2), c, max_size=2),
                     max_leaves=3)


# ---------------------------------------------------------------- 1, 2. labels= in Python
@pytest.mark.parametrize("labels, says", [
    (np.array([1.0, np.nan, 2.0], dtype=np.float32), r"labels\[1\] is 'nan', no label"),
    (np.array([1.0, np.nan, 2.0], dtype=np.float16), r"labels\[1\] is 'nan', no label"),
    (["a", np.float32("nan"), "b"], r"labels\[1\] is 'nan', no label"),
    (["a", decimal.Decimal("NaN"), "b"], r"labels\[1\] is 'NaN', no label"),
    (np.array(["2020-01-01", "NaT", "2020-01-02"], dtype="datetime64[D]"), r"labels\[1\] is 'NaT', no label"),
    (["a", "\u200b", "b"], r"labels\[1\] is '\\u200b', no label"),
    (["a", "\ufeff", "b"], r"labels\[1\] is '\\ufeff', no label"),
    (["a", "\x00", "b"], r"labels\[1\] is '\\x00', no label"),
    (np.array("a"), r"not a single value \(a 0-D ndarray\)"),
    ({"x": 1, "y": 2, "z": 3}, r"sequence in document order .* not a dict"),
    ({"x", "y", "z"}, r"sequence in document order .* not a set"),
    (np.array([["a"], ["b"], ["a"]]), r"one-dimensional.*2-D \(shape \(3, 1\)\).*ravel"),
    ([["a"], ["b"], ["a"]], r"labels\[0\] is a list, not one label: labels must be strings or numbers"),
    ([("a", "b"), "b", "a"], r"labels\[0\] is a tuple, not one label"),
    ([b"a", b"b", b"a"], r"labels\[0\] is bytes .*decode"),
    ([1.0, float("inf"), 2.0], r"labels\[1\] is inf, not a finite number"),
    (["a", "\udc00", "b"], r"labels\[1\] holds a lone surrogate"),
])
def test_labels_in_python_follow_the_loaders_rule(labels, says):
    with pytest.raises(DPTopicError, match=says) as e:
        Corpus.from_texts(TEXTS_2, labels=labels, stop_words=None)
    _one_line(e)


def test_a_dataframe_of_labels_is_refused_not_read_as_its_column_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 3], "c": [0, 0, 1]})    # three columns, three documents
    with pytest.raises(DPTopicError, match=r"one-dimensional.*DataFrame.*df\['label'\] rather than df\[\['label'\]\]"):
        Corpus.from_texts(TEXTS_2, labels=df, stop_words=None)
    assert Corpus.from_texts(TEXTS_2, labels=df["a"], stop_words=None).labels == ["x", "y", "x"]
    with pytest.raises(DPTopicError, match=r"labels\[1\] is '<NA>', no label"):
        Corpus.from_texts(TEXTS_2, labels=pd.Series([1, None, 2], dtype="Int64"), stop_words=None)


def test_the_constructor_and_from_token_ids_refuse_a_nan_label_too():
    with pytest.raises(DPTopicError, match=r"labels\[1\] is 'nan', no label"):
        Corpus.from_token_ids([[0, 1], [1, 0]], ["apple", "banana"], labels=["a", float("nan")])
    with pytest.raises(DPTopicError, match=r"doc_ids\[0\] is 'nan', no id: give every document an id"):
        Corpus([0, 1], [0], ["apple", "banana"], doc_ids=[np.float32("nan")])
    c = Corpus([0, 1, 2], [0, 1], ["apple", "banana"], labels=["", "b"])      # a saved corpus's '' still loads
    assert c.labels == ["", "b"]


@FUZZ
@given(st.lists(st.one_of(_GOOD, _BAD), min_size=3, max_size=3), st.sampled_from(["list", "tuple", "object array"]))
def test_fuzz_python_labels_are_read_exactly_or_refused_in_one_line(labels, container):
    ok = all(not isinstance(x, (bytes, list, tuple, dict)) and x is not None and x == x
             and x not in ("", " \t", "\u200b") and not (isinstance(x, float) and np.isinf(x)) for x in labels)
    given_ = (labels if container == "list" else tuple(labels) if container == "tuple"
              else np.array(labels + [None], dtype=object)[:3])
    if ok:
        assert Corpus.from_texts(TEXTS_2, labels=given_, stop_words=None).labels == [str(x) for x in labels]
    else:
        with pytest.raises(DPTopicError) as e:
            Corpus.from_texts(TEXTS_2, labels=given_, stop_words=None)
        assert re.match(r"labels(\[\d\])? ", _one_line(e)), str(e.value)


@FUZZ
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS_2), min_size=1, max_size=4),
                          st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
                                  max_size=6)),
                min_size=1, max_size=5),
       st.sampled_from([",", "\t"]), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_fuzz_csv_and_tsv_label_cells(tmp_path_factory, rows, delimiter, eol, bom):
    p = tmp_path_factory.mktemp("csv") / ("c.tsv" if delimiter == "\t" else "c.csv")
    buf = io.StringIO()
    w = csv.writer(buf, delimiter=delimiter, lineterminator=eol, quoting=csv.QUOTE_ALL)
    w.writerow(["text", "label"])
    for words, label in rows:
        w.writerow([" ".join(words), label])
    p.write_bytes(b"\xef\xbb\xbf" * bom + buf.getvalue().encode("utf-8"))
    labels = [label for _, label in rows]
    tokens = sum(len(words) for words, _ in rows)
    if any(_blankish(x) for x in labels) or len({w for words, _ in rows for w in words}) < 2:
        with pytest.raises(DPTopicError) as e:
            Corpus.from_csv(p, label_column="label", stop_words=None, delimiter=delimiter)
        _one_line(e)
        return
    c = Corpus.from_csv(p, label_column="label", stop_words=None, delimiter=delimiter)
    assert c.labels == labels and c.n_docs == len(rows) and c.n_tokens == tokens


@FUZZ
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS_2), min_size=1, max_size=4), _JSON), min_size=1, max_size=4),
       st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_fuzz_jsonl_label_values_of_every_json_type(tmp_path_factory, rows, eol, bom):
    p = tmp_path_factory.mktemp("jsonl") / "c.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" * bom + eol.join(json.dumps({"text": " ".join(t), "label": v}) for t, v in rows)
                  .encode() + eol.encode())

    def good(v):
        if isinstance(v, bool) or v is None or isinstance(v, (list, dict)):
            return False
        if isinstance(v, float):
            return bool(np.isfinite(v))
        return not isinstance(v, str) or (not _blankish(v) and v.encode("utf-8", "replace").decode() == v)

    if not all(good(v) for _, v in rows) or len({w for t, _ in rows for w in t}) < 2:
        with pytest.raises(DPTopicError) as e:
            Corpus.from_jsonl(p, label_field="label", stop_words=None)
        _one_line(e)
        return
    c = Corpus.from_jsonl(p, label_field="label", stop_words=None)
    # JSON does not tell 1.0 from 1: an integral number is one class, written as an integer
    shown = [str(int(v)) if isinstance(v, float) and v.is_integer() and abs(v) < 2**53 else str(v) for _, v in rows]
    assert c.labels == shown and c.n_tokens == sum(len(t) for t, _ in rows)


def test_a_csv_cell_that_shows_nothing_is_no_label(tmp_path):
    for cell in ("\u200b", "\ufeff", "\x01"):
        p = tmp_path / "c.csv"
        p.write_text(f"text,label\n{TEXTS_2[0]},a\n{TEXTS_2[1]},{cell}\n", encoding="utf-8")
        with pytest.raises(DPTopicError, match=r"line 3 has a blank 'label' field \(.*invisible.*\), so no label"):
            Corpus.from_csv(p, label_column="label")


def test_a_jsonl_line_with_a_raw_nul_byte_says_so(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"text": "apple banana"}\n{"text": "cherry"}\x00\n')
    with pytest.raises(DPTopicError, match=r"holds a NUL byte \(on line 2\)"):
        Corpus.from_jsonl(p)


def test_text_folders_with_odd_names_dot_and_dotdot(tmp_path, monkeypatch):
    top = tmp_path / "top dir"
    files = {"a b.txt": "apple banana", "NOTES.TXT": "cherry grape", "my docs/ä.txt": "lemon apple",
             "x.txt/inner.txt": "banana cherry", "nested/deep/z.txt": "grape lemon", ".hidden/h.txt": "apple",
             "..txt": "apple", "empty/e.txt": ""}
    for rel, text in files.items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    want_ids = ["NOTES.TXT", "a b.txt", "my docs/ä.txt", "nested/deep/z.txt", "x.txt/inner.txt"]
    want_labels = ["top dir", "top dir", "my docs", "deep", "x.txt"]
    for spec, cwd in ((top, tmp_path), (".", top), ("..", top / "nested")):
        monkeypatch.chdir(cwd)
        c = Corpus.from_directory(spec, stop_words=None)
        assert c.doc_ids == want_ids and c.labels == want_labels, spec
        assert c.n_tokens == 10 and c.n_empty_dropped == 1


def test_a_blank_document_id_is_no_id_in_jsonl_as_in_csv(tmp_path):
    """A JSONL id "" (or a CSV cell of spaces) was the document id '' (or ' '), where an empty CSV cell is no id."""
    q = tmp_path / "c.jsonl"
    q.write_text(json.dumps({"text": TEXTS_2[0], "id": ""}) + "\n" + json.dumps({"text": TEXTS_2[1], "id": "b"}) + "\n")
    p = tmp_path / "c.csv"
    p.write_text(f"text,id\n{TEXTS_2[0]}, \n{TEXTS_2[1]},b\n")
    with pytest.raises(DPTopicError, match=r"record 1 has no id field 'id' \(1 of 2 records have one\)"):
        Corpus.from_jsonl(q, id_field="id")
    with pytest.raises(DPTopicError, match=r"record 1 has no id column 'id' \(1 of 2 records have one\)"):
        Corpus.from_csv(p, id_column="id")
    assert Corpus.from_jsonl(q, id_field="id", require_ids=False).doc_ids == ["doc0", "doc1"]


def test_jsonl_label_1_and_1_0_are_one_class(tmp_path):
    from dptopic.corpus import Corpus

    p = tmp_path / "l.jsonl"
    p.write_text('{"text": "apple banana cherry", "label": 1}\n{"text": "banana cherry date", "label": 1.0}\n'
                 '{"text": "cherry date egg", "label": 2.5}\n')
    assert Corpus.from_jsonl(p, label_field="label").labels == ["1", "1", "2.5"]


def test_folders_sharing_a_name_are_said_to_share_a_label(tmp_path):
    from dptopic.corpus import Corpus

    for sub, text in (("a/x", "alpha beta gamma"), ("b/x", "beta gamma delta"), ("c", "gamma delta epsilon")):
        (tmp_path / sub).mkdir(parents=True)
        (tmp_path / sub / "d.txt").write_text(text)
    with pytest.warns(UserWarning, match="the folders 'a/x', 'b/x' share the name 'x', so their files get one label"):
        c = Corpus.from_directory(tmp_path)
    assert c.labels == ["x", "x", "c"]
    import warnings

    (tmp_path / "b" / "x").rename(tmp_path / "b" / "y")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Corpus.from_directory(tmp_path).labels == ["x", "y", "c"]


# Hand-counted: document frequencies over the 4 documents (stop words "the", "and" are in sklearn's list)
#   apple 4 | banana 3 | cherry 2 | Paris/paris: "Paris" in doc 0, "paris" in doc 1 | durian 1
TEXTS_3 = [
    "apple banana cherry Paris the",
    "apple banana paris and",
    "apple banana cherry durian",
    "apple apple apple",
]


def vocab(**kw):
    return sorted(Corpus.from_texts(TEXTS_3, **kw).vocabulary.words)


def test_min_df_as_count_and_fraction():
    assert vocab(min_df=2) == ["apple", "banana", "cherry", "paris"]
    assert vocab(min_df=3) == ["apple", "banana"]
    assert vocab(min_df=0.75) == ["apple", "banana"]       # ceil(0.75 * 4) = 3 documents
    assert vocab(min_df=0.5) == vocab(min_df=2)


def test_max_df_as_count_and_fraction():
    assert vocab(max_df=3) == ["banana", "cherry", "durian", "paris"]   # apple is in all 4
    assert vocab(max_df=2) == ["cherry", "durian", "paris"]
    assert vocab(max_df=0.5) == ["cherry", "durian", "paris"]            # floor(0.5 * 4) = 2
    assert vocab(min_df=2, max_df=0.75) == ["banana", "cherry", "paris"]


def test_stop_word_lists(tmp_path):
    assert "the" not in vocab()                                 # English list by default
    assert {"the", "and"} <= set(vocab(stop_words=None))
    assert {"the", "and"} <= set(vocab(remove_stop_words=False))
    f = tmp_path / "stop.txt"
    f.write_text("banana\n\n  cherry  \n")
    assert vocab(stop_words=str(f)) == ["and", "apple", "durian", "paris", "the"]
    assert vocab(stop_words=["apple"]) == ["and", "banana", "cherry", "durian", "paris", "the"]
    with pytest.raises(DPTopicError, match="unknown stop-word list"):
        Corpus.from_texts(TEXTS_3, stop_words="klingon")


def test_prune_takes_the_same_bounds():
    c = Corpus.from_texts(TEXTS_3, stop_words=None)
    assert sorted(c.prune(None, min_df=2, max_df=3, stop_words="english").vocabulary.words) == ["banana", "cherry", "paris"]


def test_tokens_are_runs_of_letters_in_any_script():
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(["Le café à Zürich, Straße 42", "café Zürich façade Straße", "Москва город Москва"],
                          stop_words=None, min_df=1)
    assert {"café", "zürich", "straße", "façade", "москва", "город"} <= set(c.vocabulary.words)
    assert not any(ch.isdigit() for w in c.vocabulary.words for ch in w)


TEXTS_4 = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 3


CORPUS = Corpus.from_texts(TEXTS_4)


SIZE_LIKE = {"n_topics", "n_iter", "rounds", "n_epochs", "n_jobs", "eval_every", "verbose"}  # values that set the amount of work


# ------------------------------------------------------------------ loaders against bytes
LOADERS = {
    "uci": lambda p: Corpus.from_uci(p, p.with_name("vocab.x.txt")),
    "jsonl": lambda p: Corpus.from_jsonl(p),
    "csv": lambda p: Corpus.from_csv(p),
    "npz": lambda p: Corpus.load(p),
}


GOOD = {
    "uci": b"2\n3\n3\n1 1 2\n1 2 1\n2 3 4\n",
    "jsonl": b'{"text": "tax budget revenue army"}\n{"text": "war troops army budget"}\n',
    "csv": b"text\ntax budget revenue army\nwar troops army budget\n",
}


def _npz_bytes(tmp_path):
    p = tmp_path / "good.npz"
    CORPUS.save(p)
    return p.read_bytes()


@pytest.mark.parametrize("algo,cls,name", [p for p in PARAMS if p[2] not in SIZE_LIKE],
                         ids=[f"{a}-{n}" for a, _, n in PARAMS if n not in SIZE_LIKE])
@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(value=NASTY)
def test_estimator_fit_works_or_refuses(algo, cls, name, value):
    m = cls(**{**base_kwargs(cls), name: value})
    ok, _ = works_or_refuses(lambda: m.fit(CORPUS))
    if ok:
        phi = m.components_
        assert np.all(np.isfinite(phi)) and np.all(phi >= 0)
        np.testing.assert_allclose(phi.sum(axis=1), 1.0, atol=1e-9)
        for key in ("epsilon_basic", "epsilon_pld", "epsilon_rdp"):
            if key in m.privacy_:
                assert m.privacy_[key] >= 0 and not math.isnan(m.privacy_[key])


@pytest.mark.parametrize("fmt", list(LOADERS))
@FAST
@given(data=st.data())
def test_loaders_against_bytes(fmt, data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(fmt)
    good = GOOD.get(fmt) or _npz_bytes(tmp)
    (tmp / "vocab.x.txt").write_text("tax\nbudget\narmy\n")
    p = tmp / {"uci": "docword.x.txt", "jsonl": "c.jsonl", "csv": "c.csv", "npz": "c.npz"}[fmt]
    p.write_bytes(data.draw(mutations(good)))
    ok, c = works_or_refuses(lambda: LOADERS[fmt](p))
    if ok:
        assert c.n_tokens >= 0 and c.vocab_size >= 1


# ------------------------------------------------------------------ messages
def test_a_semicolon_csv_is_read_with_semicolons_when_that_finds_its_columns(tmp_path):
    p = tmp_path / "semi.csv"
    p.write_text("id;text;label\n1;apple banana cherry;a\n2;dog elephant fish;b\n")
    with pytest.warns(UserWarning, match="read with ';' between the fields"):
        c = Corpus.from_csv(p, label_column="label", id_column="id")
    assert c.n_docs == 2 and c.labels == ["a", "b"] and c.doc_ids == ["1", "2"]
    q = tmp_path / "commas.csv"             # a comma file is read as before, without a word
    q.write_text("id,text\n1,apple; banana\n")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert Corpus.from_csv(q, id_column="id").n_docs == 1


def test_a_csv_without_its_text_column_names_a_short_column_list(tmp_path):
    p = tmp_path / "doc.csv"
    p.write_text("x" * 5000 + " private words, and more\nsecond document\n")
    with pytest.raises(DPTopicError) as e:
        Corpus.from_csv(p)
    msg = str(e.value)
    assert len(msg) < 300 and "no column 'text'" in msg and "x" * 50 not in msg
    wide = tmp_path / "wide.csv"
    wide.write_text(",".join(f"c{i}" for i in range(50)) + "\n" + ",".join("v" for _ in range(50)) + "\n")
    with pytest.raises(DPTopicError, match=r"c7, \.\.\. \(50 columns\)"):
        Corpus.from_csv(wide)


def test_an_explicit_csv_delimiter_is_never_replaced(tmp_path):
    p = tmp_path / "semi.csv"
    p.write_text("id;text\n1;apple banana\n")
    with pytest.raises(DPTopicError, match="no column 'text'"):
        Corpus.from_csv(p, delimiter=",")


def test_a_boolean_coo_matrix_with_repeated_entries_sums_them_as_counts():
    import numpy as np
    import scipy.sparse as sp

    from dptopic.corpus import Corpus

    X = sp.coo_matrix((np.array([True, True, True]), (np.array([0, 0, 1]), np.array([1, 1, 2]))), shape=(2, 3))
    c = Corpus.from_bow(X, vocabulary=["apple", "berry", "cherry"])
    assert len(c.word_ids) == 3 and list(c.word_ids[:2]) == [1, 1]


# ---------------------------------------------------------------- 2. the default --max-vocab says what it cut
def _uci_big(tmp_path, V=30, D=12):
    (tmp_path / "vocab.big.txt").write_text("".join(f"word{chr(97 + i % 26)}{chr(97 + i // 26)}\n" for i in range(V)))
    rows = [(d, w) for d in range(1, D + 1) for w in range(1, V + 1) if (d + w) % 3 == 0]
    (tmp_path / "docword.big.txt").write_text(f"{D}\n{V}\n{len(rows)}\n" + "".join(f"{d} {w} 2\n" for d, w in rows))
    return tmp_path / "docword.big.txt"


# ---------------------------------------------------------------- 3. from_uci closes its docword file
def test_from_uci_closes_the_docword_file(tmp_path):
    dw = _uci_big(tmp_path)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Corpus.from_uci(dw, tmp_path / "vocab.big.txt")
        import gc

        gc.collect()
    assert not [w for w in seen if issubclass(w.category, ResourceWarning)]


# ---------------------------------------------------------------- 11, 12. argument checks and messages
@pytest.mark.parametrize("bad", ["no", 1, None])
def test_lowercase_must_be_a_bool(bad):
    with pytest.raises(DPTopicError, match="invalid lowercase"):
        Corpus.from_texts(["Apple banana", "cherry Apple"], lowercase=bad)
    assert Corpus.from_texts(["Apple banana", "cherry Apple"], lowercase=np.bool_(False)).vocabulary.words[0] == "Apple"


def test_from_bow_of_a_dataframe_uses_its_column_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame([[1, 0, 2], [0, 3, 1]], columns=["apple", "banana", "cherry"])
    assert Corpus.from_bow(df).vocabulary.words == ["apple", "banana", "cherry"]
    assert Corpus.from_bow(df, vocabulary=["a", "b", "c"]).vocabulary.words == ["a", "b", "c"]


def test_jsonl_refuses_a_repeated_field_and_a_non_finite_label(tmp_path):
    # json.loads keeps the last of two equal keys and reads NaN/Infinity: a record with two texts, or a label that
    # would be read as the class "nan", must be refused in one line rather than read silently
    words = "galaxy orbit rocket launch galaxy orbit"
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps({"text": words}) + "\n" + '{"text": "%s", "text": "moon"}\n' % words)
    with pytest.raises(DPTopicError, match=r"line 2 has the field 'text' more than once"):
        Corpus.from_jsonl(dup)
    for bad in ("NaN", "Infinity", "-Infinity"):
        f = tmp_path / f"{bad}.jsonl"
        f.write_text('{"text": "%s", "label": 1}\n{"text": "%s", "label": %s}\n' % (words, words, bad))
        with pytest.raises(DPTopicError, match=r"line 2 label 'label' is .*not a finite number"):
            Corpus.from_jsonl(f, label_field="label")
    # a key repeated inside a nested object is not a repeated field of the record
    nested = tmp_path / "nested.jsonl"
    nested.write_text('{"text": "%s", "meta": {"text": "a", "text": "b"}}\n' % words)
    assert Corpus.from_jsonl(nested).n_docs == 1
    # a repeated field that is not read, and finite numeric labels, stay accepted
    ok = tmp_path / "ok.jsonl"
    ok.write_text('{"text": "%s", "x": 1, "x": 2, "label": 1.5}\n{"text": "%s", "label": 2}\n' % (words, words))
    assert list(Corpus.from_jsonl(ok, label_field="label").labels) == ["1.5", "2"]


def test_an_empty_folder_is_still_an_empty_corpus(tmp_path):
    from dptopic.corpus import Corpus

    with pytest.raises(DPTopicError, match=r"^empty corpus: no \*\.txt files"):
        Corpus.from_directory(tmp_path)


# ---------------------------------------------------------------- item 10: the tokenizer rule in the empty-corpus error
def test_every_token_dropped_names_the_tokenizer_rule():
    from dptopic.corpus import Corpus

    with pytest.raises(DPTopicError) as e:
        Corpus.from_texts(["w1500 w22 x9", "a1 b2 c3"], stop_words=None)
    msg = str(e.value)
    assert "runs of 3 or more letters" in msg and "digits" in msg and "'w1500' is read as 'w'" in msg
    assert "docs/preprocessing.md" in msg and "stop words" not in msg
    with pytest.raises(DPTopicError, match="min_df"):      # words that a document-frequency cut removes: as before
        Corpus.from_texts(["alpha beta", "gamma delta"], min_df=2)


def test_examples_in_vocabulary_messages_are_cut_short():
    import warnings

    from dptopic.corpus import Corpus

    long = "x" * 300
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(DPTopicError) as e:
            Corpus.from_texts(["some plain text here"], vocabulary=[long + " a", long + " b"])
    assert len(str(e.value)) < 400 and all(len(str(x.message)) < 600 for x in w)


def test_a_jsonl_file_read_as_csv_says_it_looks_like_json_lines(tmp_path):
    from dptopic.corpus import Corpus

    posts = write_posts(tmp_path)
    csv = tmp_path / "posts.csv"
    csv.write_text(posts.read_text())
    with pytest.raises(DPTopicError, match="looks like JSON Lines"):
        Corpus.from_csv(csv)
    other = tmp_path / "other.jsonl"
    other.write_text('{"body": "one two three", "tag": "a"}\n')
    with pytest.raises(DPTopicError, match=r"no field 'text' \(fields: body, tag\)"):
        Corpus.from_jsonl(other)



def test_a_given_vocabulary_with_words_text_never_yields_warns():
    texts = ["interest rates rise again", "the bank raised interest rates"]
    with pytest.warns(UserWarning, match=r"1 stop word\(s\) \('interest'.*2 that the tokeniser never produces \('Bank', "
                                         r"'money,debt'"):
        c = dptopic.Corpus.from_texts(texts, vocabulary=["interest", "rates", "Bank", "money,debt", "raised"])
    assert c.n_tokens == 3      # rates x2, raised
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dptopic.Corpus.from_texts(texts, vocabulary=["interest", "rates", "raised"], stop_words=None)
        dptopic.Corpus.from_texts(texts, vocabulary=["rates", "Bank"], lowercase=False)


def test_a_vocabulary_given_as_a_generator_is_read_once():
    c = dptopic.Corpus.from_texts(["rates rise", "rates fall again"], vocabulary=(w for w in ["rates", "rise", "fall"]))
    assert c.vocabulary.words == ["rates", "rise", "fall"] and c.n_tokens == 4


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "HDPLDA", "DPSVI"])
def test_a_corpus_built_on_a_given_vocabulary_counts_as_supplied_until_pruned(name, corpus200, tmp_path):
    words = corpus200.vocabulary.words
    docs = [corpus200.doc_words(d) for d in range(corpus200.n_docs)]
    given = dptopic.Corpus.from_tokens(docs, vocabulary=words)
    saved = dptopic.Corpus.load(given.save(tmp_path / "c.npz"))
    restricted = dptopic.Corpus.from_tokens(docs).restrict(words)
    for c in (given, saved, restricted):
        assert c.vocabulary_supplied
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("error", dptopic.DataVocabularyWarning)
            assert SMALL_PRIVATE_TRAINERS[name]().fit(c).privacy_["vocabulary_source"] == "supplied"
    for c in (dptopic.Corpus.from_tokens(docs), given.prune(max_vocab=30)):  # built from, or chosen by, the counts
        assert not c.vocabulary_supplied
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", dptopic.DataVocabularyWarning)
            with pytest.warns(dptopic.DataVocabularyWarning):
                SMALL_PRIVATE_TRAINERS[name]().fit(c)


def test_person_ids_that_differ_only_by_unicode_normalization_are_one_person():
    """'José' with a precomposed é and with e + a combining accent were two people, each of their documents spending
    epsilon on its own while the card said per person."""
    import unicodedata

    nfc, nfd = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")
    assert nfc != nfd
    c = Corpus.from_texts(["river water boat", "river bank fish", "money loan"], user_ids=[nfc, nfd, "Ana"])
    assert c.user_ids == [nfc, nfc, "Ana"] and len(set(c.user_ids)) == 2


def test_a_split_by_person_without_ids_names_the_parameters_not_the_flag():
    """person_split told a Python caller of the command line's --user-field: it names user_ids= and user_field=,
    which the command line writes as its flags."""
    from dptopic.errors import ParameterError

    c = Corpus.from_texts(["apple banana", "cherry plum", "river ocean"])
    with pytest.raises(ParameterError) as e:
        c.person_split(0.5)
    assert e.value.parameters == ("user_ids", "user_field") and "--" not in str(e.value), str(e.value)
    assert e.value.message({"user_field": "--user-field"}).endswith("(--user-field).")


def test_a_split_with_every_document_on_one_side_names_test_size_not_the_flag():
    """The refusal told a Python caller to give "another --test-size (another key, in the API)"."""
    from dptopic.errors import ParameterError

    c = Corpus.from_texts(["apple banana", "cherry plum"])
    with pytest.raises(ParameterError) as e:
        c.stable_split(0.001)
    assert "test_size" in e.value.parameters and "--" not in str(e.value), str(e.value)
    assert e.value.message({"test_size": "--test-size"}).endswith("or another --test-size.")


# --------------------------------------------------------------------------------------------------------------
# A corpus carries each document's person (user_ids): read from a JSONL field, a CSV column or a folder of folders,
# kept through every subset, split, restriction and save; refused in one line when missing or not a string.
def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


RECORDS = [{"text": "apple banana apple cherry", "user": "ann"}, {"text": "cherry banana grape", "user": "bob"},
           {"text": "", "user": "cy"}, {"text": "apple grape melon", "user": "ann"}]


def test_jsonl_user_field_is_kept_with_its_documents(tmp_path):
    c = Corpus.from_jsonl(_jsonl(tmp_path / "c.jsonl", RECORDS), user_field="user")
    assert c.n_docs == 3 and c.user_ids == ["ann", "bob", "ann"]      # the empty text went with its id
    assert c.subset([2, 0]).user_ids == ["ann", "ann"]
    assert c.restrict(["apple", "grape"]).user_ids == ["ann", "bob", "ann"]
    assert c.restrict(["apple"]).user_ids == ["ann", "ann"]           # bob's document is empty there
    train, test = c.stable_split(0.5) if c.n_docs > 1 else (c, c)
    assert sorted(train.user_ids + test.user_ids) == sorted(c.user_ids)
    assert Corpus.load(c.save(tmp_path / "c.npz")).user_ids == c.user_ids
    assert Corpus.from_jsonl(tmp_path / "c.jsonl").user_ids is None


def test_csv_user_column_and_folder_of_folders(tmp_path):
    (tmp_path / "c.csv").write_text("text,user\napple banana cherry,ann\ngrape melon apple,bob\n")
    assert Corpus.from_csv(tmp_path / "c.csv", user_column="user").user_ids == ["ann", "bob"]
    for person, texts in (("ann", ["apple banana cherry", "apple cherry"]), ("bob", ["grape melon apple"])):
        (tmp_path / "people" / person / "sub").mkdir(parents=True)
        for i, t in enumerate(texts):
            (tmp_path / "people" / person / ("sub" if i else "") / f"{i}.txt").write_text(t)
    c = Corpus.from_directory(tmp_path / "people", users_by_folder=True)
    assert sorted(c.user_ids) == ["ann", "ann", "bob"]
    (tmp_path / "people" / "loose.txt").write_text("banana melon")
    with pytest.raises(DPTopicError, match="'loose.txt' lies in the folder itself, not in a person's sub-folder"):
        Corpus.from_directory(tmp_path / "people", users_by_folder=True)


@pytest.mark.parametrize("records, fragment", [
    ([{"text": "apple banana", "user": "ann"}, {"text": "banana cherry"}],
     "line 2 has no field 'user', so no user id"),
    ([{"text": "apple banana", "user": 7}], "line 1: user id field 'user' is a number, not a string"),
    ([{"text": "apple banana", "user": None}], "line 1: user id field 'user' is null, not a string"),
    ([{"text": "apple banana", "user": "  "}], "line 1 has an empty user id (field 'user')"),
])
def test_jsonl_bad_user_ids_are_refused_in_one_line(tmp_path, records, fragment):
    path = _jsonl(tmp_path / "bad.jsonl", records)
    with pytest.raises(DPTopicError) as e:
        Corpus.from_jsonl(path, user_field="user")
    assert fragment in str(e.value) and str(path) in str(e.value) and "\n" not in str(e.value)


def test_csv_row_without_a_user_id_is_refused_naming_its_line(tmp_path):
    (tmp_path / "c.csv").write_text("text,user\napple banana cherry,ann\ngrape melon apple,\n")
    with pytest.raises(DPTopicError, match=r"the row on line 3 has an empty user id \(column 'user'\)"):
        Corpus.from_csv(tmp_path / "c.csv", user_column="user")
    with pytest.raises(DPTopicError, match="no column 'person'"):
        Corpus.from_csv(tmp_path / "c.csv", user_column="person")


@pytest.mark.parametrize("ids, fragment", [([1, 2], "is int '1', not a string"), (["a"], "has 1 entries but there"),
                                           (["a", None], "document 1 has no user id"), ("ab", "must be a list")])
def test_user_ids_given_in_python_are_checked(ids, fragment):
    with pytest.raises(DPTopicError, match=fragment):
        Corpus(np.array([0, 2, 4]), np.array([0, 1, 1, 0]), ["x", "y"], user_ids=ids)


@pytest.mark.parametrize("bad,shown", [("v\u0000", "U+0000 at character 2"), ("\u200bann", "U+200B at character 1"),
                                       ("an\tn", "U+0009 at character 3"), ("bob\ufeff", "U+FEFF at character 4")])
def test_user_ids_holding_control_or_format_characters_are_refused_naming_the_field_and_row(tmp_path, bad, shown):
    """ "v" and "v\\u0000" look like one id but would be two people (a NumPy string array even merges them)."""
    with pytest.raises(DPTopicError, match=rf"^user_ids\[1\] holds an invisible control or format character"
                                           rf" \({re.escape(shown)}\): two ids that look alike"):
        Corpus.from_texts(["apple banana", "cherry grape"], user_ids=["ann", bad])
    path = _jsonl(tmp_path / "c.jsonl", [{"text": "apple banana", "who": "ann"}, {"text": "cherry", "who": bad}])
    with pytest.raises(DPTopicError, match=rf"^bad JSONL file .*: line 2: user id field 'who' holds an invisible"
                                           rf" control or format character \({re.escape(shown)}\)") as e:
        Corpus.from_jsonl(path, user_field="who")
    assert "\n" not in str(e.value)
    kept = Corpus.from_texts(["apple", "grape"], user_ids=["ann\u00e9", "\u4e2d\u6587 x"])     # visible characters
    assert kept.user_ids[1] == "\u4e2d\u6587 x"


def test_a_subsets_token_keys_are_its_rows_gathered_only_when_read():
    import tracemalloc

    texts = [f"word{i % 7} apple banana cherry delta echo foxtrot golf hotel word{i % 11}" for i in range(3000)]
    c = Corpus.from_texts(texts, min_df=1)
    rows = np.random.default_rng(0).permutation(c.n_docs)[:2000]
    tracemalloc.start()
    part = c.subset(rows)
    inner = part.subset(np.arange(500, 1500))
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    keys_bytes = sum(getattr(c.token_keys, f).nbytes for f in c.token_keys.FIELDS)
    assert held < keys_bytes / 4            # the parts hold their tokens and an index, not a copy of the keys
    rows_copy = rows.copy()
    rows[:] = 0                             # the caller's index changed after the subset: the rows stay those given
    for got, want in ((part, rows_copy), (inner, rows_copy[500:1500])):
        for f in c.token_keys.FIELDS:
            assert np.array_equal(getattr(got.token_keys, f), getattr(c.token_keys, f)[want])


def test_a_part_and_a_part_of_it_hold_one_index_for_their_tokens_keys_and_default_ids():
    """A part's tokens, keys, text digests and default ids (doc0, doc1, ...) are gathered from one read-only index of
    the first corpus's rows (three copies of it took 24 bytes a document, and the digests 8 more); its ids, keys,
    digests and tokens are those of the rows, and a copy of the part holds its digests."""
    texts = [f"word{i % 7} apple banana cherry delta echo foxtrot golf hotel word{i % 11}" for i in range(3000)]
    c = Corpus.from_texts(texts, min_df=1)
    assert c.token_keys is not None
    rows = np.random.default_rng(5).permutation(c.n_docs)[:2000]
    part = c.subset(rows)
    inner = part.subset(np.arange(500, 1500))
    assert part.doc_ids._numbers is part._word_ids_of[2]
    for got, want in ((part, rows), (inner, rows[500:1500])):
        index = got._word_ids_of[2]
        assert got._token_keys_of[1] is index and not index.flags.writeable and np.array_equal(index, want)
        assert got._content_keys_of[0] is c.content_keys and got._content_keys_of[1] is index
        assert got.content_keys.dtype == np.uint64 and np.array_equal(got.content_keys, c.content_keys[want])
        held = copy.deepcopy(got)
        assert held._content_keys_of is None and np.array_equal(held.content_keys, c.content_keys[want])
    for got, want in ((part, rows), (inner, rows[500:1500])):
        assert list(got.doc_ids) == [f"doc{i}" for i in want]
        assert np.array_equal(got.token_keys.bags, c.token_keys.bags[want])
        assert [got.doc(d).tolist() for d in range(got.n_docs)] == [c.doc(d).tolist() for d in want]


def _random_corpus(n_docs: int, vocab: int = 50, seed: int = 1, longest: int = 8) -> Corpus:
    rng = np.random.default_rng(seed)
    ptr = np.concatenate([[0], np.cumsum(rng.integers(0, longest + 1, n_docs))])
    return Corpus(ptr, rng.integers(0, vocab, int(ptr[-1])).astype(np.int32), [f"w{i}" for i in range(vocab)])


def test_a_subset_holds_an_index_until_its_tokens_are_read_and_then_its_documents():
    import tracemalloc

    c = _random_corpus(20_000, longest=80)
    rows = np.random.default_rng(2).permutation(c.n_docs)[:15_000]
    tracemalloc.start()
    part = c.subset(rows)
    inner = part.subset(np.arange(1_000, 9_000))
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert held < c.word_ids.nbytes / 4     # the parts' indexes and pointers (their tokens: 160 bytes a document)
    want = rows.copy()
    rows[:] = 0                             # the caller's index changed after the subset: the rows stay those given
    assert part.n_tokens == sum(len(c.doc(d)) for d in want) and inner.n_docs == 8_000
    for got, docs in ((part, want), (inner, want[1_000:9_000])):
        assert [got.doc(d).tolist() for d in range(got.n_docs)] == [c.doc(d).tolist() for d in docs]
        assert got.word_ids.dtype == np.int32 and np.array_equal(np.diff(got.doc_ptr), c.doc_lengths[docs])


@pytest.mark.parametrize("block_docs", [1, 7, 4_096, 50_000])
def test_token_blocks_are_the_tokens_a_block_of_documents_at_a_time(block_docs):
    c = _random_corpus(5_000)
    rows = np.random.default_rng(3).permutation(c.n_docs)[:3_000]
    for corpus, gathered in ((c, c), (c.subset(rows), c.subset(rows)), (c.subset(rows).subset(np.arange(500)),
                                                                         c.subset(rows[:500]))):
        blocks = list(corpus.token_blocks(block_docs))
        assert len(blocks) == -(-corpus.n_docs // block_docs)
        assert all(len(p) - 1 <= block_docs and p[0] == 0 and p[-1] == len(ids) for p, ids in blocks)
        assert np.array_equal(np.concatenate([ids for _, ids in blocks]), gathered.word_ids)
        lengths = np.concatenate([np.diff(p) for p, _ in blocks])
        assert np.array_equal(lengths, gathered.doc_lengths)
    with pytest.raises(DPTopicError, match="block_docs"):
        next(c.token_blocks(0))


def test_token_blocks_of_a_subset_gather_a_block_at_a_time_never_the_whole(monkeypatch):
    from dptopic.corpus import token_file

    gathered = []
    take = token_file.take_documents
    monkeypatch.setattr(token_file, "take_documents", lambda ids, ptr, index, out: (
        gathered.append(len(index)), take(ids, ptr, index, out))[1])
    part = _random_corpus(5_000).subset(np.arange(0, 5_000, 2))
    assert sum(len(ids) for _, ids in part.token_blocks(300)) == part.n_tokens
    assert gathered and max(gathered) == 300 and sum(gathered) == part.n_docs
    part.word_ids
    assert gathered[-1] == part.n_docs      # a read of its tokens gathers them all, once, and keeps them
    part.word_ids
    list(part.token_blocks(300))
    assert len(gathered) == -(-part.n_docs // 300) + 1
