"""Corpus loaders and preprocessing, fuzzed as a scikit-learn/gensim user would feed them (review 52)."""
import csv
import gzip
import io
import json
import os
import warnings

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError

DOCS = ["The café in Zürich serves coffee and cake", "Straße strasse Große große", "İstanbul istanbul ISTANBUL",
        "cafe\u0301 café CAFÉ Café résumé", "ﬁnance ｗｏｒｄ word finance", "Hello, world! hello again world"]


def _cli(capsys, *argv):
    from dptopic.cli.main import main

    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


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


def test_empty_stop_word_file_is_refused_not_read_as_no_list(tmp_path, capsys):
    (tmp_path / "d.txt").write_text("apple banana cherry\ncherry grape apple\n")
    (tmp_path / "stop.txt").write_text("\n  \n")
    err = _cli(capsys, "corpus", "info", str(tmp_path / "d.txt"), "--stop-words", str(tmp_path / "stop.txt"))
    assert "holds no words" in err and "'none'" in err
    with pytest.raises(DPTopicError, match="holds no words"):
        Corpus.from_texts(["apple banana cherry"], stop_words="english+" + str(tmp_path / "stop.txt"))


def test_stop_word_file_with_several_words_on_a_line_is_refused(tmp_path):
    (tmp_path / "stop.txt").write_text("apple\nthe, and, of\n")
    with pytest.raises(DPTopicError, match=r"line 2 holds 'the, and, of', more than one word"):
        Corpus.from_texts(["apple banana cherry", "the and of grape"], stop_words=str(tmp_path / "stop.txt"))


# ------------------------------------------------------------------ text folders
def _folder(tmp_path):
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    (d / "a.txt").write_text("apple banana cherry")
    (d / "sub" / "b.txt").write_text("cherry grape apple")
    return d


def test_link_to_a_file_of_the_folder_warns_that_it_is_read_twice(tmp_path):
    # read, as tests/test_corpus51.py wants of a working link, but not unawares: the document counts twice
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


# ------------------------------------------------------------------ CSV
@pytest.mark.parametrize("header, says", [("text ,label", "'text ', which differs in spaces around it"),
                                           ("Text,label", "'Text', which differs in case")])
def test_csv_column_that_differs_in_spaces_or_case_is_named(tmp_path, capsys, header, says):
    p = tmp_path / "c.csv"
    p.write_text(f"{header}\napple banana,a\ncherry apple,b\n")
    err = _cli(capsys, "corpus", "info", str(p))
    assert says in err and "--text-field" in err, err


# ------------------------------------------------------------------ .npz
def test_npz_of_another_program_says_what_it_holds(tmp_path, capsys):
    p = tmp_path / "x.npz"
    np.savez(p, weights=np.arange(3))
    err = _cli(capsys, "corpus", "info", str(p))
    assert "not a dptopic corpus: it has no 'meta' array (arrays: weights)" in err, err


def test_truncated_npz_says_truncated(tmp_path, capsys):
    good = Corpus.from_texts(["apple banana cherry", "cherry grape apple"])
    good.save(tmp_path / "c.npz")
    data = (tmp_path / "c.npz").read_bytes()
    (tmp_path / "t.npz").write_bytes(data[:len(data) // 2])
    err = _cli(capsys, "corpus", "info", str(tmp_path / "t.npz"))
    assert "truncated or damaged" in err, err


def test_npz_with_pickled_objects_is_refused_as_such(tmp_path):
    p = tmp_path / "o.npz"
    np.savez(p, meta=np.array([{"a": 1}], dtype=object), doc_ptr=np.arange(2), word_ids=np.arange(1))
    with pytest.raises(DPTopicError, match="pickled Python objects, which dptopic never loads"):
        Corpus.load(p)


# ------------------------------------------------------------------ UCI
def test_uci_vocabulary_with_a_repeated_word_names_the_file_and_lines(tmp_path, capsys):
    (tmp_path / "docword.x.txt").write_text("2\n3\n3\n1 1 2\n1 2 1\n2 3 4\n")
    (tmp_path / "vocab.x.txt").write_text("apple\ncherry\napple\n")
    err = _cli(capsys, "corpus", "info", str(tmp_path / "docword.x.txt"))
    assert "vocab.x.txt" in err and "line 3 repeats the word 'apple' of line 1" in err, err


def test_gzip_with_trailing_bytes_is_not_called_not_gzip(tmp_path, capsys):
    p = tmp_path / "d.txt.gz"
    p.write_bytes(gzip.compress(b"apple banana cherry\ncherry grape apple\n") + b"\x00\x00junk")
    err = _cli(capsys, "corpus", "info", str(p))
    assert "followed by bytes that are not gzip data" in err and "is not gzip data" not in err, err


# ------------------------------------------------------------------ a given vocabulary
def test_decomposed_vocabulary_word_warning_names_unicode_normalisation():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        c = Corpus.from_texts(["café apple cake", "apple cake coffee"], vocabulary=["cafe\u0301", "apple", "cake"])
    msg = " ".join(str(x.message) for x in w)
    assert "not in Unicode NFKC form" in msg and "upper case" not in msg, msg
    assert c.n_tokens == 4


# ------------------------------------------------------------------ the same documents in every format
def test_same_documents_as_jsonl_csv_text_and_folder_give_one_corpus(tmp_path):
    with open(tmp_path / "c.jsonl", "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"text": d}) + "\n" for d in DOCS)
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["text"])
    w.writerows([d] for d in DOCS)
    (tmp_path / "c.csv").write_text(buf.getvalue(), encoding="utf-8")
    (tmp_path / "c.txt").write_text("\r\n".join(DOCS) + "\r\n", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    for i, d in enumerate(DOCS):
        (tmp_path / "dir" / f"{i}.txt").write_text(d, encoding="utf-8")
    from dptopic.cli._common import load_corpus

    got = []
    for name in ("c.jsonl", "c.csv", "c.txt", "dir"):
        c = load_corpus(str(tmp_path / name), stop_words="none")
        got.append((c.vocabulary.words, c.to_bow().toarray().tolist()))
    assert all(g == got[0] for g in got[1:])
    words = got[0][0]
    # one entry each for the NFC/NFD/upper-case spellings, the ligature and the full-width letters, Turkish İ
    assert words.count("café") == 1 and "istanbul" in words and "finance" in words and "word" in words
    assert "straße" in words and "große" in words   # str.lower, not case folding (docs/preprocessing.md)


def test_a_nullable_frame_with_missing_counts_is_named_in_one_line():
    """A pandas Int64 frame with NA said "... not a real number, not 'NAT); give integer counts." (the type name cut)."""
    pd = pytest.importorskip("pandas")
    from dptopic import LDA
    from dptopic.errors import DPTopicError

    df = pd.DataFrame({"a": [1, None, 2], "b": [0, 1, 1]}, dtype="Int64")
    with pytest.raises(DPTopicError, match="missing") as e:
        LDA(n_topics=2, n_iter=2, seed=0).fit(df)
    assert "\n" not in str(e.value) and "'NAT" not in str(e.value)
    with pytest.raises(DPTopicError, match="not a number \\(.*'object'\\)"):
        LDA(n_topics=2, n_iter=2, seed=0).fit(np.array([[1, object()], [2, 3]], dtype=object))
