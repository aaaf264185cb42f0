import gzip
import json

import numpy as np
import pytest
import scipy.sparse as sp

from dptopic.corpus import Corpus, Vocabulary, lda_corpus
from dptopic.errors import DPTopicError

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


def test_save_load_roundtrip_and_corrupt(tmp_path):
    c = Corpus.from_texts(TEXTS, labels=list("aabbcb"))
    p = c.save(tmp_path / "c.npz")
    d = Corpus.load(p)
    assert np.array_equal(d.word_ids, c.word_ids) and d.vocabulary == c.vocabulary and d.labels == c.labels
    (tmp_path / "bad.npz").write_bytes(b"not a zip file")
    with pytest.raises(DPTopicError, match="is not an .npz corpus"):
        Corpus.load(tmp_path / "bad.npz")


def test_bad_inputs_one_line():
    for bad, match in [([], "empty corpus"), (["the of and"], "empty corpus"), (["cat cat cat"], "vocabulary too small")]:
        with pytest.raises(DPTopicError, match=match) as e:
            Corpus.from_texts(bad)
        assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="unknown word id 7"):
        Corpus(np.array([0, 2]), np.array([0, 7]), ["a", "b"])
    with pytest.raises(DPTopicError, match="duplicate"):
        Vocabulary(["a", "a"])


def test_synthetic_shapes(planted):
    c, phi, theta, z = planted
    assert phi.shape == (5, 200) and theta.shape == (300, 5) and z.shape == (c.n_tokens,)
    assert np.allclose(phi.sum(1), 1) and np.allclose(theta.sum(1), 1)
    # words were drawn from their topic: empirical topic-word frequencies track phi
    emp = np.zeros_like(phi)
    np.add.at(emp, (z, c.word_ids), 1)
    emp /= emp.sum(1, keepdims=True)
    assert np.abs(emp - phi).sum(1).max() < 0.35


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


def test_estimators_take_tokenised_documents():
    """A list of lists of words trains and transforms like the same documents given as strings."""
    import dptopic

    docs = [d for d in TOKENS if d] * 10
    m = dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(docs)
    assert m.vocabulary_.words == Corpus.from_tokens(docs).vocabulary.words
    theta = m.transform([["apple", "fruit"], ["river", "unknown-word"]])
    assert theta.shape == (2, 2) and abs(theta[0, 0] - theta[1, 0]) > 0.5
    assert np.array_equal(theta, m.transform(Corpus.from_tokens([["apple", "fruit"], ["river"]],
                                                                vocabulary=m.vocabulary_)))
    with pytest.raises(DPTopicError, match="list of lists of words"):
        dptopic.LDA(n_topics=2).fit([["a", "b"], "c d"])


def test_a_column_of_texts_is_a_list_of_texts():
    """df["text"] (a pandas Series) or a NumPy array of strings reads like the list of strings it holds; a 1-D array
    of numbers is still refused with the reshape hint."""
    import dptopic

    texts = ["apple banana fruit salad apple", "river lake mountain valley", "apple fruit banana",
             "lake river hiking valley"] * 5
    want = Corpus.from_texts(texts)
    columns = [np.array(texts), np.array(texts, dtype=object)]
    try:
        import pandas as pd
        columns.append(pd.Series(texts))
    except ImportError:                   # pandas is optional; the arrays still run
        pass
    for column in columns:
        m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(column)
        assert m.vocabulary_.words == want.vocabulary.words
        assert np.array_equal(m.transform(column[:3] if isinstance(column, np.ndarray) else column.iloc[:3]),
                              m.transform(texts[:3]))
    with pytest.raises(DPTopicError, match="Reshape your data"):
        dptopic.LDA(n_topics=2).fit(np.array([1, 2, 3]))
    with pytest.raises(DPTopicError, match=r"3 dimension\(s\); give a 2-D documents × words array\.$"):
        dptopic.LDA(n_topics=2).fit(np.ones((2, 2, 2), dtype=int))
    with pytest.raises(DPTopicError, match="text 1 of the column is None, not a string.*fillna"):
        dptopic.LDA(n_topics=2).fit(np.array(["apple fruit", None, "river lake"], dtype=object))
    tokens = [np.array(t.split()) for t in texts]
    assert dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(tokens).vocabulary_.words == \
        Corpus.from_tokens([t.split() for t in texts]).vocabulary.words
