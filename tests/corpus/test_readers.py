"""Reading tab-separated tables: Orange's three header rows (names, types, flags) are a header, not documents; a
plain .tsv has one header row."""
import gzip
import json
import os

import numpy as np
import pytest

from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.corpus.files import tab_header_rows
from dptopic.corpus.readers import auto_format, read_corpus
from dptopic.errors import DPTopicError

ROWS = "apple banana cherry\ten\tx\nbanana grape lemon\ten\tx\ncherry lemon mango plum\tfr\ty\n"


@pytest.mark.parametrize("header,rows", [
    ("content\tlang\tsource\nstring\tdiscrete\tstring\nmeta include=True\tclass\tmeta\n", 3),   # Orange, long names
    ("content\tlang\tsource\ns\td\ts\nm\tc\tm\n", 3),                                          # Orange, short names
    ("content\tlang\tsource\nstring\tdiscrete\tstring\n\n", 3),           # the flags line blank
    ("content\tlang\tsource\n", 1),                                        # a plain header
])
def test_orange_header_rows_are_not_documents(tmp_path, header, rows):
    p = tmp_path / "d.tab"
    p.write_text(header + ROWS)
    c = Corpus.from_csv(p, text_column="content", label_column="lang", delimiter="\t")
    assert c.n_docs == 3 and list(c.labels) == ["en", "en", "fr"]
    assert not {"string", "discrete", "meta", "class"} & set(c.vocabulary.words)
    assert tab_header_rows(p) == (1 if rows == 1 else 3 if "\n\n" not in header else 2)


def test_a_data_row_of_words_is_not_taken_for_a_type_row(tmp_path):
    p = tmp_path / "d.tsv"
    p.write_text("text\tlang\nriver mountain valley\ten\n" + ROWS.replace("\tx", "").replace("\ty", ""))
    assert Corpus.from_csv(p, label_column="lang", delimiter="\t").n_docs == 4
    assert tab_header_rows(p) == 1


# ------------------------------------------------------------------ read_corpus: the format chosen by the path's name

TEXTS = ["river water flows into the river valley", "mountain snow covers the mountain peak",
         "river fish swim in river water", "snow falls on the mountain in winter"]


def _write_each_format(tmp_path):
    import json

    (tmp_path / "d.txt").write_text("\n".join(TEXTS) + "\n")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"body": t, "id": f"n{i}"}) + "\n"
                                              for i, t in enumerate(TEXTS)))
    (tmp_path / "d.csv").write_text("body,id\n" + "".join(f"{t},n{i}\n" for i, t in enumerate(TEXTS)))
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, t in enumerate(TEXTS):
        (folder / f"{i}.txt").write_text(t)
    return {"text": tmp_path / "d.txt", "jsonl": tmp_path / "d.jsonl", "csv": tmp_path / "d.csv", "dir": folder}


def test_read_corpus_picks_the_reader_by_the_name_and_reads_the_same_words(tmp_path):
    paths = _write_each_format(tmp_path)
    assert {fmt: auto_format(p) for fmt, p in paths.items()} == {f: f for f in paths}
    want = Corpus.from_texts(TEXTS, min_df=1)
    for fmt, p in paths.items():
        c = read_corpus(p, text_field="body", min_df=1) if fmt in ("jsonl", "csv") else read_corpus(p, min_df=1)
        assert list(c.vocabulary.words) == list(want.vocabulary.words), fmt
        assert [c.doc_words(d) for d in range(c.n_docs)] == [want.doc_words(d) for d in range(want.n_docs)], fmt


def test_read_corpus_reads_ids_from_the_field_named(tmp_path):
    paths = _write_each_format(tmp_path)
    assert list(read_corpus(paths["jsonl"], text_field="body", id_field="id").doc_ids) == ["n0", "n1", "n2", "n3"]
    assert list(read_corpus(paths["csv"], "csv", text_field="body", id_field="id").doc_ids) == ["n0", "n1", "n2", "n3"]


def test_read_corpus_restricts_to_a_public_vocabulary_and_keeps_blank_lines_out(tmp_path):
    p = tmp_path / "d.txt"
    p.write_text(TEXTS[0] + "\n\n" + TEXTS[1] + "\n")
    c = read_corpus(p, vocabulary=["river", "snow"])
    assert list(c.vocabulary.words) == ["river", "snow"] and c.n_docs == 2 and c.n_empty_dropped == 1
    assert list(c.doc_ids) == ["doc0", "doc2"]          # the ids keep their line numbers


def test_read_corpus_keeps_a_prepared_corpus_as_saved_unless_cut(tmp_path):
    saved = Corpus.from_texts(TEXTS, min_df=1)
    p = saved.save(tmp_path / "c.npz")
    assert read_corpus(p).vocab_size == saved.vocab_size          # no default cap on a prepared corpus
    assert read_corpus(p, max_vocab=3).vocab_size == 3
    with pytest.raises(DPTopicError, match="lowercase applies to raw text"):
        read_corpus(p, lowercase=False)


@pytest.mark.parametrize("path,fmt,match", [("missing.txt", "auto", "not found"), ("", "auto", "path is empty"),
                                            ("d.txt", "xml", "invalid format='xml'")])
def test_read_corpus_refuses_bad_input_in_one_line(tmp_path, path, fmt, match):
    (tmp_path / "d.txt").write_text("a b\n")
    with pytest.raises(DPTopicError, match=match):
        read_corpus(tmp_path / path if path else "", fmt)


def test_read_corpus_reads_as_the_format_s_reader(tmp_path):
    """``read_corpus`` picks ``Corpus.from_jsonl`` for a JSONL file and passes it the same options."""
    paths = _write_each_format(tmp_path)
    a = Corpus.from_jsonl(paths["jsonl"], text_field="body", min_df=1)
    b = read_corpus(paths["jsonl"], text_field="body", min_df=1)
    assert list(a.vocabulary.words) == list(b.vocabulary.words) and a.n_tokens == b.n_tokens


# ---------------------------------------------------------------------------------------------------------------------
# The corpus loaders on inputs once read wrongly or ended in a traceback.

WORDS = "apple banana cherry grape lemon mango".split()


def _uci(tmp_path, name="docword.x.txt"):
    """Five UCI documents of which 2 and 4 have no entry."""
    dw = tmp_path / name
    dw.write_text("5\n4\n6\n1 1 2\n1 2 1\n3 2 3\n3 3 1\n5 4 2\n5 1 1\n")
    (tmp_path / "vocab.x.txt").write_text("apple\nbanana\ncherry\ngrape\n")
    return dw


def _error(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


# ---------------------------------------------------------------- 1. UCI documents keep their numbers
def test_uci_documents_are_named_by_their_numbers_and_transform_keeps_every_one(tmp_path, capsys):
    import dptopic

    dw = _uci(tmp_path)
    c = Corpus.from_uci(dw, tmp_path / "vocab.x.txt")
    assert c.doc_ids == ["1", "3", "5"] and c.n_empty_dropped == 2
    every = Corpus.from_uci(dw, tmp_path / "vocab.x.txt", drop_empty=False)
    assert every.n_docs == 5 and every.doc_ids == ["1", "2", "3", "4", "5"]
    assert list(every.doc_lengths) == [3, 0, 4, 0, 3]
    dptopic.LDA(n_topics=2, n_iter=3, seed=0).fit(c).save(tmp_path / "m")
    assert main(["transform", str(tmp_path / "m"), "--corpus", str(dw), "--out", str(tmp_path / "t.csv")]) == 0
    rows = (tmp_path / "t.csv").read_text().splitlines()[1:]
    assert [r.split(",")[0] for r in rows] == ["1", "2", "3", "4", "5"]


# ---------------------------------------------------------------- 2. damaged .gz files
@pytest.mark.parametrize("damage, says", [(lambda data: data[: len(data) // 2], "truncated"),
                                          (lambda data: b"not gzip at all\n", "not gzip")])
@pytest.mark.parametrize("name", ["d.jsonl.gz", "d.csv.gz", "d.txt.gz", "docword.d.txt.gz"])
def test_truncated_or_fake_gzip_is_one_line_naming_the_file(tmp_path, capsys, name, damage, says):
    body = ("200\n4\n400\n" + "".join(f"{d} {w} 1\n" for d in range(1, 201) for w in (1, 2)) if name.startswith("docword")
            else "text\n" + "apple banana cherry\n" * 200 if ".csv" in name
            else "".join(json.dumps({"text": "apple banana cherry " * 5}) + "\n" for _ in range(200))
            if ".jsonl" in name else "apple banana cherry grape\n" * 200)
    (tmp_path / "vocab.d.txt").write_text("apple\nbanana\ncherry\ngrape\n")
    p = tmp_path / name
    p.write_bytes(damage(gzip.compress(body.encode())))
    err = _error(capsys, ["corpus", "info", str(p)])
    assert str(p) in err and says in err.replace(str(p), ""), err    # (the test's folder is named ..._truncated_...)


# ---------------------------------------------------------------- 3. lone surrogates in labels and ids
@pytest.mark.parametrize("field", ["label", "id"])
def test_a_lone_surrogate_in_a_label_or_id_is_refused_with_its_line(tmp_path, field):
    p = tmp_path / "s.jsonl"
    p.write_text('{"text": "apple banana", "label": "a", "id": "x"}\n'
                 f'{{"text": "cherry apple", "label": "b", "id": "y", "{field}": "\\udc00"}}\n')
    with pytest.raises(DPTopicError, match=f"line 2 field '{field}' holds a lone surrogate"):
        Corpus.from_jsonl(p, label_field="label", id_field="id")


# ---------------------------------------------------------------- 4. one document per line means "\n"
def test_text_lines_split_at_line_feeds_only_and_blank_lines_count(tmp_path, capsys):
    p = tmp_path / "docs.txt"
    p.write_bytes("apple banana\x0ccherry grape\r\n\nlemon mango\u2028apple banana\n  \ncherry lemon\n".encode())
    assert main(["corpus", "prepare", "--corpus", str(p), "--out", str(tmp_path / "c.npz")]) == 0
    c = Corpus.load(tmp_path / "c.npz")
    assert c.n_docs == 3 and c.n_empty_dropped == 2           # lines 2 and 4 are blank: empty documents, dropped
    assert c.doc_ids == ["doc0", "doc2", "doc4"]              # docN is line N+1
    assert sorted(c.doc_words(0)) == ["apple", "banana", "cherry", "grape"]


# ---------------------------------------------------------------- 5. CSV
@pytest.mark.parametrize("body, match", [
    ('text,label\n"apple banana,a\ncherry apple,b\ngrape lemon,c\n', "line 2 on is never closed"),
    ("text,label\napple banana,a\ncherry apple\n", "line 3 has 1 field"),
    ("text,text,label\napple banana,cherry grape,a\nlemon apple,mango banana,b\n", "names the column 'text' 2 times"),
])
def test_csv_unclosed_quote_missing_label_and_duplicate_column_are_refused(tmp_path, body, match):
    p = tmp_path / "c.csv"
    p.write_text(body)
    with pytest.raises(DPTopicError, match=match):
        Corpus.from_csv(p, label_column="label")


def test_csv_sloppy_but_closed_quotes_read_as_before(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('text,label\n"apple ""banana""" ,a\ncherry apple,b\n')
    c = Corpus.from_csv(p, label_column="label")
    assert c.labels == ["a", "b"] and sorted(c.doc_words(0)) == ["apple", "banana"]


def test_csv_row_with_more_fields_than_the_header_is_refused_not_cut(tmp_path, capsys):
    # an unquoted comma inside the text made a third field, and the words after it were dropped without a word
    p = tmp_path / "c.csv"
    p.write_text("id,text\n1,apple banana\n2,cherry apple, grape lemon mango\n")
    with pytest.raises(DPTopicError, match=r"line 3 has 3 fields where the header names 2: a field that holds ','"
                                           r" must be quoted"):
        Corpus.from_csv(p, id_column="id")
    assert main(["corpus", "info", str(p)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "line 3 has 3 fields" in err
    p.write_text('id,text\n1,apple banana\n2,"cherry apple, grape lemon mango"\n')  # quoted: read whole
    assert sorted(Corpus.from_csv(p, id_column="id").doc_words(1)) == ["apple", "cherry", "grape", "lemon", "mango"]
    p.write_text("id,text\n1,apple banana,\n2,cherry apple, \n")   # a spreadsheet's trailing commas: empty fields
    assert sorted(Corpus.from_csv(p, id_column="id").doc_words(1)) == ["apple", "cherry"]


# ---------------------------------------------------------------- 6. .json / .ndjson / .tsv
@pytest.mark.parametrize("name", ["d.json", "d.ndjson"])
def test_json_lines_under_other_names_are_read_as_jsonl(tmp_path, capsys, name):
    (tmp_path / name).write_text("".join(json.dumps({"text": t, "label": "x"}) + "\n"
                                         for t in ("apple banana", "cherry apple")))
    assert main(["corpus", "info", str(tmp_path / name), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert {w["word"] for w in info["top_words"]} == {"apple", "banana", "cherry"}   # no 'text' or 'label'


def test_a_json_array_file_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "a.json").write_text(json.dumps([{"text": "apple banana"}, {"text": "cherry apple"}]))
    assert "one JSON object per line" in _error(capsys, ["corpus", "info", str(tmp_path / "a.json")])


def test_tsv_is_read_with_tabs(tmp_path, capsys):
    (tmp_path / "d.tsv").write_text("id\ttext\n1\tapple banana\n2\tcherry apple\n")
    assert main(["corpus", "info", str(tmp_path / "d.tsv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents"] == 2


# ---------------------------------------------------------------- 7. Python API input checks
@pytest.mark.parametrize("call, match", [
    (lambda c, d: Corpus.from_texts(["apple banana", "cherry apple"], doc_ids=["a"]), "doc_ids has 1 entries"),
    (lambda c, d: Corpus.from_texts(["apple banana", "cherry apple"], doc_ids=["a", "a"]), "'a' more than once"),
    (lambda c, d: Corpus.from_texts(["apple banana", "cherry apple"], labels=[None, "x"]), r"labels\[0\] is None"),
    (lambda c, d: c.prune(max_vocab=-1), "max_vocab"),
    (lambda c, d: c.prune(max_vocab=True), "max_vocab"),
    (lambda c, d: c.prune(max_vocab=2.5), "max_vocab"),
    (lambda c, d: c.prune(max_vocab="3"), "max_vocab"),
    (lambda c, d: Corpus.from_csv(d / "c.csv", text_column=None), "text_column=None"),
    (lambda c, d: Corpus.from_uci(d / "docword.x.txt", None), "needs its vocabulary file"),
    (lambda c, d: Corpus.from_jsonl(d / "j.jsonl", label_field=["label"]), "label_field="),
    (lambda c, d: Corpus.from_texts(None), "not NoneType"),
    (lambda c, d: Corpus.from_texts(["apple banana", "cherry apple"], vocabulary="apple"), "not a single string"),
    (lambda c, d: c.save(d), "is a folder"),
    (lambda c, d: Corpus.from_directory(d / "f", pattern=str(d / "*.txt")), "invalid pattern"),
    (lambda c, d: Corpus.from_directory(d / "f", pattern="../*.txt"), "invalid pattern"),
])
def test_bad_api_input_is_one_dptopic_error(tmp_path, call, match):
    _uci(tmp_path)
    (tmp_path / "c.csv").write_text("text\napple banana\ncherry apple\n")
    (tmp_path / "j.jsonl").write_text('{"text": "apple banana", "label": "a"}\n')
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "a.txt").write_text("apple banana")
    (tmp_path / "outside.txt").write_text("cherry grape")
    c = Corpus.from_texts(["apple banana cherry", "banana cherry grape", "grape apple"])
    with pytest.raises(DPTopicError, match=match):
        call(c, tmp_path)


# ---------------------------------------------------------------- 8. shards keep the private mark and the count
def test_private_shards_are_marked_and_count_the_dropped_documents(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("apple banana cherry\nthe and of\ncherry grape apple\nbanana grape lemon\nlemon apple mango\n")
    assert main(["corpus", "prepare", "--corpus", str(p), "--shards", "2", "--private", "--out", str(tmp_path / "s")]) == 0
    shards = [Corpus.load(f) for f in sorted((tmp_path / "s").glob("shard-*.npz"))]
    assert len(shards) == 2 and all(s.metadata.get("private") for s in shards)
    assert sum(s.n_empty_dropped for s in shards) == 1


# ---------------------------------------------------------------- 9. --format uci without a docword name
def test_uci_format_on_another_name_asks_for_vocab(tmp_path, capsys):
    dw = _uci(tmp_path, "counts.txt")
    err = _error(capsys, ["corpus", "info", str(dw), "--format", "uci"])
    assert "--vocab" in err
    assert main(["corpus", "info", str(dw), "--format", "uci", "--vocab", str(tmp_path / "vocab.x.txt")]) == 0


# ---------------------------------------------------------------- 10. messages that said something else
def _empty_csv(d):
    (d / "e.csv").write_text("")
    return ["corpus", "info", str(d / "e.csv")]


def _semicolons(d):
    # read with ';' when that finds the text column ; here it does not: the hint names ';'
    (d / "s.csv").write_text("id;body\n1;apple banana\n2;cherry apple\n")
    return ["corpus", "info", str(d / "s.csv")]


def _empty_stop_words(d):
    (d / "d.txt").write_text("apple banana cherry\ncherry grape apple\n")
    return ["corpus", "info", str(d / "d.txt"), "--stop-words", ""]


def _utf16_without_bom(d):
    (d / "u.txt").write_bytes("apple banana cherry\ncherry grape apple\n".encode("utf-16-le"))
    return ["corpus", "info", str(d / "u.txt")]


def _broken_link(d):
    os.symlink(d / "gone.txt", d / "link.txt")
    return ["corpus", "info", str(d / "link.txt")]


def _binary_in_folder(d):
    (d / "f").mkdir()
    (d / "f" / "a.txt").write_text("apple banana cherry")
    (d / "f" / "b.txt").write_bytes(bytes(range(256)) * 8)
    return ["corpus", "info", str(d / "f")]


def _array_jsonl(d):
    (d / "a.jsonl").write_text(json.dumps([{"text": "apple"}]) + "\n")
    return ["corpus", "info", str(d / "a.jsonl")]


@pytest.mark.parametrize("make, says, not_says", [
    (_empty_csv, "is empty", "(columns: )"),
    (_semicolons, "delimited by ';'", None),
    (_empty_stop_words, "empty stop-word list", "directory"),
    (_utf16_without_bom, "UTF-16", "empty corpus"),
    (_broken_link, "symbolic link", None),
    (_binary_in_folder, "move 'b.txt' out of the folder", "one document per line"),
    (_array_jsonl, "JSON array", "has no field"),
])
def test_messages_say_what_is_wrong(tmp_path, capsys, make, says, not_says):
    err = _error(capsys, make(tmp_path))
    assert says in err and (not_says is None or not_says not in err), err


# ---------------------------------------------------------------- 11. tokeniser version 4
@pytest.mark.parametrize("text, tokens", [
    ("İstanbul İZMİR", ["istanbul", "izmir"]),                       # not "stanbul": İ lower-cases to i
    ("co\u00adoperation", ["cooperation"]),                          # a soft hyphen splits no word
    ("می\u200cخواهم", ["می\u200cخواهم"]),                            # Persian: the non-joiner stays in the word
    ("학교 에 가요", ["학교", "가요"]),                                 # Korean words of two syllables are kept
])
def test_tokeniser_v4_keeps_these_words_whole(text, tokens):
    from dptopic.corpus.preprocess import Preprocessor

    assert Preprocessor(stop_words=None).tokenize(text) == tokens


def test_a_korean_syllable_counts_as_two_letters_against_min_length():
    # every Hangul word of two syllables or more was kept whatever min_length
    from dptopic.corpus.preprocess import Preprocessor

    assert Preprocessor(stop_words=None, min_length=8).tokenize("대한민국 학교 사람들아요") == ["대한민국", "사람들아요"]
    assert Preprocessor(stop_words=None, min_length=10).tokenize("대한민국 학교 사람들아요") == ["사람들아요"]


def test_tokeniser_reads_ascii_without_addresses_as_before_and_text_into_a_model_with_the_same_lower_casing():
    import random
    import re
    import string

    from dptopic.corpus.preprocess import TOKENIZER_VERSION, Preprocessor

    assert TOKENIZER_VERSION == 5     # 5: web addresses, e-mail addresses and @handles dropped
    p, rng = Preprocessor(stop_words=None), random.Random(0)
    for _ in range(300):
        text = "".join(rng.choice(string.printable.replace("@", "")) for _ in range(60))
        assert p.tokenize(text) == [t for t in re.findall(r"[^\W\d_]+", text.lower()) if len(t) >= 3]
    c = Corpus.from_texts(["İstanbul Ankara"], vocabulary=["istanbul", "ankara"], lowercase="match")
    assert sorted(c.doc_words(0)) == ["ankara", "istanbul"]


def test_a_model_of_tokeniser_v3_warns_that_only_ascii_reads_as_then(tmp_path):
    import dptopic

    m = dptopic.LDA(n_topics=2, n_iter=3, seed=0).fit(["rocket orbit moon launch", "doctor disease clinic patient"] * 5)
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["tokenizer"]["version"] = 3
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match=r"version 3 .*\(ASCII text without web addresses, e-mail addresses or @handles is read as it was then"):
        dptopic.load(tmp_path / "m").transform(["a rocket in orbit"])


@pytest.mark.parametrize("bad", ["\n\n", "", " ", "a\tb", "new\nyork"])
def test_a_token_no_saved_model_could_read_back_is_refused_at_fit(bad, tmp_path):
    # such a token trained and saved, and then dptopic.load refused the folder for ever
    import dptopic

    with pytest.raises(DPTopicError, match="empty or holds a line break or tab"):
        dptopic.LDA(n_topics=2, n_iter=2, verbose=0).fit([["apple", bad, "banana"]] * 10)
    m = dptopic.LDA(n_topics=2, n_iter=2, verbose=0).fit([["apple", "new york", "banana"]] * 10)   # a phrase reads back
    m.save(tmp_path / "m")
    assert "new york" in dptopic.load(tmp_path / "m").vocabulary_.words


def test_blank_lines_do_not_count_in_a_fraction_of_documents_and_a_cr_only_file_splits(tmp_path):
    # after blank lines became numbered documents, a file of paragraphs set apart by blank lines
    # counted them in --max-df 0.5's denominator and kept a word in 90% of the paragraphs; a file with classic Mac
    # line endings (carriage returns only) became one document
    from dptopic.cli._run_common import load_corpus

    words = "tax budget war peace health school river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(0)
    paras = [" ".join(rng.choice(words, 8)) + (" government" if i % 10 else "") for i in range(100)]
    (tmp_path / "p.txt").write_text("\n\n".join(paras) + "\n")
    c = load_corpus(str(tmp_path / "p.txt"), max_df=0.5)
    assert "government" not in c.vocabulary.words                      # in 90 of the 100 documents
    assert c.n_docs + c.n_empty_dropped == 199 and all(int(i[3:]) % 2 == 0 for i in c.doc_ids)   # line numbers
    assert load_corpus(str(tmp_path / "p.txt"), vocabulary=c.vocabulary.words, drop_empty=False).n_docs == 199
    (tmp_path / "cr.txt").write_text("\r".join(paras[:30]) + "\r", newline="")
    assert load_corpus(str(tmp_path / "cr.txt")).n_docs == 30


@pytest.mark.parametrize("name,content,fix", [
    ("notes.xyz", "a b\n", "give format='text'"),                    # an extension that says no format
    ("d.json", '["a b"]\n', "pass format='text'"),                   # a .json file that is one array
    ("d.csv", '{"text": "a b"}\n{"text": "c d"}\n', "format='jsonl'"),   # JSON Lines named .csv
    ("folder", None, "format='dir'"),                                # a folder read as a file
])
def test_reader_errors_name_the_python_parameter_not_a_flag(tmp_path, name, content, fix):
    p = tmp_path / name
    if content is None:
        p.mkdir()
    else:
        p.write_text(content)
    with pytest.raises(DPTopicError) as e:
        read_corpus(p, "text" if content is None else "auto")
    assert fix in str(e.value) and "--format" not in str(e.value), str(e.value)


def test_a_uci_file_without_its_vocabulary_names_python_parameters(tmp_path):
    p = tmp_path / "counts.txt"                 # not named docword.*: no vocab.* file can be found beside it
    p.write_text("1\n2\n2\n1 1 1\n1 2 1\n")
    for settable in (True, False):
        with pytest.raises(DPTopicError) as e:
            read_corpus(p, "uci", vocab_settable=settable)
        assert ("pass vocab= FILE" if settable else "vocabulary= is the public word list") in str(e.value)
        assert "--" not in str(e.value), str(e.value)
