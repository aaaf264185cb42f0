"""Reading tab-separated tables: Orange's three header rows (names, types, flags) are a header, not documents; a
plain .tsv has one header row."""
import pytest

from dptopic.corpus import Corpus
from dptopic.corpus.files import tab_header_rows

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
from dptopic.corpus.readers import auto_format, read_corpus  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402

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


def test_corpus_from_jsonl_is_the_reader(tmp_path):
    """The Corpus.from_* classmethods call the readers: user code that calls them keeps working."""
    paths = _write_each_format(tmp_path)
    a = Corpus.from_jsonl(paths["jsonl"], text_field="body", min_df=1)
    from dptopic.corpus import readers

    b = readers.from_jsonl(paths["jsonl"], "body", min_df=1)
    assert list(a.vocabulary.words) == list(b.vocabulary.words) and a.n_tokens == b.n_tokens


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
    for flag in ("vocab=", None):
        with pytest.raises(DPTopicError) as e:
            read_corpus(p, "uci", vocab_flag=flag)
        assert ("pass vocab= FILE" if flag else "vocabulary= is the public word list") in str(e.value)
        assert "--" not in str(e.value), str(e.value)
