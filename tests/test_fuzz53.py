"""Fuzz 53 of the input paths changed in session 53: the label rule of the loaders, a contributor's text (what
``dptopic submit``/``fed-client`` read, through ``cli.serve._client_corpus``, and ``dptopic randomize``), and ``corpus
info``/``corpus prepare`` on the same inputs.

A bad input gives one line (exit 2 on the CLI, a DPTopicError in Python) that says what is wrong and how to fix it; a
valid one is read exactly (the counts are checked). What this run found and fixed:

1. labels= in Python: a NaN of another float type (NumPy's float32/float16, a Decimal) or NumPy's NaT was read as the
   class 'nan'/'NaT'; a 0-D array raised a TypeError; a dict was read as its keys, a set in no order, a 2-D array or
   DataFrame as one string per row ("['a']"); a list or bytes label as its repr; an infinite number and a lone
   surrogate were taken (the JSONL loader refuses all of these). ``Corpus(...)``/``from_token_ids`` took NaN labels.
2. A label that shows nothing (a zero-width space, a stray byte-order mark, a NUL) was a class of its own, in Python
   and in a CSV/TSV cell.
3. A text (or CSV) file holding NUL bytes was read as text: a file of zeros as one empty document that ``randomize``
   and ``submit`` spent a report on, a tar archive of texts with its headers as words.
4. A text folder's file or folder name that is not UTF-8 became a label/id with lone surrogates: ``dptopic transform``
   then failed with a UnicodeEncodeError traceback writing its rows.
"""
from __future__ import annotations

import argparse
import csv
import decimal
import io
import json
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from test_corpus53 import _err  # noqa: E402

WORDS = ["apple", "banana", "cherry", "grape", "lemon"]
TEXTS = ["apple banana cherry", "banana cherry grape", "cherry grape lemon"]
FUZZ = settings(max_examples=120, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


_one_line_error = _err       # exit code 2, one line on stderr, no traceback (tests/test_corpus53.py)


def _one_line(e: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(e.value)
    return str(e.value)


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
        Corpus.from_texts(TEXTS, labels=labels, stop_words=None)
    _one_line(e)


def test_a_dataframe_of_labels_is_refused_not_read_as_its_column_names():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": ["x", "y", "x"], "b": [1, 2, 3], "c": [0, 0, 1]})    # three columns, three documents
    with pytest.raises(DPTopicError, match=r"one-dimensional.*DataFrame.*df\['label'\] rather than df\[\['label'\]\]"):
        Corpus.from_texts(TEXTS, labels=df, stop_words=None)
    assert Corpus.from_texts(TEXTS, labels=df["a"], stop_words=None).labels == ["x", "y", "x"]
    with pytest.raises(DPTopicError, match=r"labels\[1\] is '<NA>', no label"):
        Corpus.from_texts(TEXTS, labels=pd.Series([1, None, 2], dtype="Int64"), stop_words=None)


def test_the_constructor_and_from_token_ids_refuse_a_nan_label_too():
    with pytest.raises(DPTopicError, match=r"labels\[1\] is 'nan', no label"):
        Corpus.from_token_ids([[0, 1], [1, 0]], ["apple", "banana"], labels=["a", float("nan")])
    with pytest.raises(DPTopicError, match=r"doc_ids\[0\] is 'nan', no id: give every document an id"):
        Corpus([0, 1], [0], ["apple", "banana"], doc_ids=[np.float32("nan")])
    c = Corpus([0, 1, 2], [0, 1], ["apple", "banana"], labels=["", "b"])      # a saved corpus's '' still loads
    assert c.labels == ["", "b"]


_GOOD = (st.text(min_size=1, max_size=5).filter(lambda s: s.strip() and s.isprintable())
         | st.integers(-10**6, 10**6) | st.floats(allow_nan=False, allow_infinity=False) | st.booleans())
_BAD = (st.sampled_from([None, float("nan"), np.float32("nan"), decimal.Decimal("NaN"), float("inf"), "", " \t",
                         "\u200b", b"x", ["a"], ("a",), {"a": 1}]))


@FUZZ
@given(st.lists(st.one_of(_GOOD, _BAD), min_size=3, max_size=3), st.sampled_from(["list", "tuple", "object array"]))
def test_fuzz_python_labels_are_read_exactly_or_refused_in_one_line(labels, container):
    ok = all(not isinstance(x, (bytes, list, tuple, dict)) and x is not None and x == x
             and x not in ("", " \t", "\u200b") and not (isinstance(x, float) and np.isinf(x)) for x in labels)
    given_ = (labels if container == "list" else tuple(labels) if container == "tuple"
              else np.array(labels + [None], dtype=object)[:3])
    if ok:
        assert Corpus.from_texts(TEXTS, labels=given_, stop_words=None).labels == [str(x) for x in labels]
    else:
        with pytest.raises(DPTopicError) as e:
            Corpus.from_texts(TEXTS, labels=given_, stop_words=None)
        assert re.match(r"labels(\[\d\])? ", _one_line(e)), str(e.value)


# ---------------------------------------------------------------- 1, 2. CSV/TSV cells and JSONL values
def _blankish(s: str) -> bool:
    import unicodedata

    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in s)


@FUZZ
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
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


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                     lambda c: st.lists(c, max_size=2) | st.dictionaries(st.text(max_size=2), c, max_size=2),
                     max_leaves=3)


@FUZZ
@given(st.lists(st.tuples(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), _JSON), min_size=1, max_size=4),
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
        p.write_text(f"text,label\n{TEXTS[0]},a\n{TEXTS[1]},{cell}\n", encoding="utf-8")
        with pytest.raises(DPTopicError, match=r"line 3 has a blank 'label' field \(.*invisible.*\), so no label"):
            Corpus.from_csv(p, label_column="label")


# ---------------------------------------------------------------- 3. a contributor's text; corpus info/prepare
def _client(path):
    from dptopic.cli.serve import _client_corpus        # what submit and fed-client read

    return _client_corpus(argparse.Namespace(corpus=str(path), format="auto", text_field="text"))


@pytest.mark.parametrize("name, data", [
    ("zeros.txt", b"\x00" * 64),
    ("stray.txt", b"apple banana\ncherry\x00grape\n"),
    ("texts.tar.txt", b"a.txt" + b"\x00" * 95 + b"0000644\x00" + b"\x00" * 400 + b"apple banana\n"),
    ("nul.csv", b"text\napple banana\ncherry\x00grape\n"),
])
def test_a_file_with_nul_bytes_is_refused_by_every_reader(tmp_path, capsys, monkeypatch, name, data):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(data)
    (tmp_path / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    line = 3 if name == "nul.csv" else 2 if name == "stray.txt" else 1
    with pytest.raises(DPTopicError, match=rf"holds a NUL byte \(on line {line}\).*binary or damaged") as e:
        _client(tmp_path / name)
    _one_line(e)
    for argv in (["randomize", "--corpus", name, "--vocabulary", "vocab.txt", "--epsilon-word", "1", "--out", "r.npz"],
                 ["corpus", "info", name], ["corpus", "prepare", "--corpus", name, "--out", "c.npz"]):
        assert "holds a NUL byte" in _one_line_error(capsys, argv)
    assert not (tmp_path / "r.npz").exists() and not (tmp_path / "c.npz").exists()


def test_a_jsonl_line_with_a_raw_nul_byte_says_so(tmp_path):
    p = tmp_path / "c.jsonl"
    p.write_bytes(b'{"text": "apple banana"}\n{"text": "cherry"}\x00\n')
    with pytest.raises(DPTopicError, match=r"holds a NUL byte \(on line 2\)"):
        Corpus.from_jsonl(p)


@pytest.mark.parametrize("data, docs, tokens, vocab", [
    (b"apple\n", 1, 1, 1),                                   # one word
    (b"the and of\n", 1, 2, 2),                              # stop words only: the server's vocabulary decides
    (b"zebra yak quokka\n", 1, 3, 3),                        # no word of the server's vocabulary
    (b"\xef\xbb\xbfapple banana\n", 1, 2, 2),                # a byte-order mark
    (b"apple banana\r\ncherry\r\n", 2, 3, 3),                # CRLF
    (b"apple banana\rcherry\r", 2, 3, 3),                    # CR only
    (b"apple banana\n\ncherry\n", 3, 3, 3),                  # a blank line is a document (one report each)
    (b"apple banana " * 50_000 + b"\n", 1, 100_000, 2),      # a huge line
    (b"!!! ?? 12\n", 1, 0, 0),                               # no word at all
])
def test_a_contributors_valid_text_is_read_exactly(tmp_path, capsys, data, docs, tokens, vocab):
    p = tmp_path / "mine.txt"
    p.write_bytes(data)
    c = _client(p)
    assert (c.n_docs, c.n_tokens, c.vocab_size) == (docs, tokens, vocab)
    (tmp_path / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    rc = main(["randomize", "--corpus", str(p), "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "1",
               "--out", str(tmp_path / "r.npz")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert re.search(rf"\b{docs} randomized reports? written", " ".join((out.out + out.err).split()))


@pytest.mark.parametrize("data", [b"", b"\n", b" \n\n", b"\xef\xbb\xbf"])
def test_a_contributors_empty_file_is_one_line(tmp_path, capsys, data):
    p = tmp_path / "mine.txt"
    p.write_bytes(data)
    with pytest.raises(DPTopicError, match="no non-blank lines; give one document per line"):
        _client(p)
    assert "no non-blank lines" in _one_line_error(capsys, ["corpus", "info", p])


@pytest.mark.parametrize("data, says", [
    (b"caf\xe9 apple\n", "is not UTF-8 text: byte 0xe9 on line 1"),
    ("apple banana\n".encode("utf-16"), "is UTF-16 text"),
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "looks like a binary file"),
])
def test_a_contributors_unreadable_file_is_one_line(tmp_path, capsys, data, says):
    p = tmp_path / "mine.txt"
    p.write_bytes(data)
    with pytest.raises(DPTopicError, match=says):
        _client(p)
    assert says in _one_line_error(capsys, ["corpus", "prepare", "--corpus", p, "--out", tmp_path / "c.npz"])


# ---------------------------------------------------------------- 4. text folders
def test_a_text_folder_with_names_that_are_not_utf8(tmp_path, capsys):
    root = os.fsencode(tmp_path / "docs")
    for rel in (b"caf\xe9/a.txt", b"ok/b\xfe.txt", b"ok/c.txt"):
        path = root + b"/" + rel
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(b"apple banana cherry\n")
    c = Corpus.from_directory(tmp_path / "docs", stop_words=None)
    assert c.labels == ["caf\\xe9", "ok", "ok"] and c.doc_ids == ["caf\\xe9/a.txt", "ok/b\\xfe.txt", "ok/c.txt"]
    for v in c.labels + c.doc_ids:
        v.encode("utf-8")       # every output holds them: transform writes the ids beside its rows
    assert main(["corpus", "info", str(tmp_path / "docs"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["labels"] == {"caf\\xe9": 1, "ok": 2}


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
    q.write_text(json.dumps({"text": TEXTS[0], "id": ""}) + "\n" + json.dumps({"text": TEXTS[1], "id": "b"}) + "\n")
    p = tmp_path / "c.csv"
    p.write_text(f"text,id\n{TEXTS[0]}, \n{TEXTS[1]},b\n")
    with pytest.raises(DPTopicError, match=r"record 1 has no id field 'id' \(1 of 2 records have one\)"):
        Corpus.from_jsonl(q, id_field="id")
    with pytest.raises(DPTopicError, match=r"record 1 has no id column 'id' \(1 of 2 records have one\)"):
        Corpus.from_csv(p, id_column="id")
    assert Corpus.from_jsonl(q, id_field="id", require_ids=False).doc_ids == ["doc0", "doc1"]
