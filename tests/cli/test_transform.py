"""`dptopic transform`: ids read from the records, and documents with no word of the model's vocabulary."""
import json

import pytest

import dptopic
from dptopic.cli.main import main

TRAIN = ["apple banana cherry apple", "banana cherry apple", "river mountain valley river", "mountain valley river",
         "apple cherry banana", "valley mountain river mountain"] * 5


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("transform") / "lda"
    dptopic.LDA(n_topics=2, n_iter=10, seed=0).fit(dptopic.Corpus.from_texts(TRAIN)).save(d)
    return d


def _run(capsys, argv):
    rc = main([str(a) for a in argv])
    return rc, capsys.readouterr().err


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("bad, kind", [(None, "null"), ({"x": 1}, "an object"), ([1, 2], "a list"),
                                       (True, "true/false")])
def test_an_id_that_is_not_a_string_or_number_is_refused_naming_the_file_and_line(model, tmp_path, capsys, bad,
                                                                                     kind):
    docs = _jsonl(tmp_path / "docs.jsonl", [{"id": "a", "text": "apple river"}, {"id": bad, "text": "river"}])
    out = tmp_path / "theta.csv"
    rc, err = _run(capsys, ["transform", "--model", model, "--corpus", docs, "--out", out])
    assert rc == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(docs) in err and "line 2" in err and f"id field 'id' is {kind}" in err


def test_numeric_ids_are_kept_as_their_text(model, tmp_path, capsys):
    docs = _jsonl(tmp_path / "docs.jsonl", [{"id": 7, "text": "apple"}, {"id": 2.5, "text": "river"}])
    out = tmp_path / "theta.csv"
    rc, err = _run(capsys, ["transform", "--model", model, "--corpus", docs, "--out", out])
    assert rc in (0, None), err
    assert [ln.split(",")[0] for ln in out.read_text().splitlines()[1:]] == ["7", "2.5"]


def test_records_partly_without_ids_are_named_by_row_with_a_warning(model, tmp_path, capsys):
    docs = _jsonl(tmp_path / "docs.jsonl", [{"id": "a", "text": "apple"}, {"text": "river"}])
    out = tmp_path / "theta.csv"
    rc, err = _run(capsys, ["transform", "--model", model, "--corpus", docs, "--out", out])
    assert rc in (0, None), err
    assert [ln.split(",")[0] for ln in out.read_text().splitlines()[1:]] == ["doc0", "doc1"]
    assert "record 2 has no field 'id'" in err and "doc0, doc1" in err
    # no record with the field: the row names, as documented, and nothing to warn of
    docs = _jsonl(tmp_path / "plain.jsonl", [{"text": "apple"}, {"text": "river"}])
    rc, err = _run(capsys, ["transform", "--model", model, "--corpus", docs, "--out", tmp_path / "p.csv"])
    assert rc in (0, None) and "warning" not in err, err


def test_documents_without_any_vocabulary_word_are_refused_alike_by_transform_export_and_report(model, tmp_path,
                                                                                                  capsys):
    docs = tmp_path / "zoo.txt"
    docs.write_text("zebra quokka\nlemur yak\n")
    lines = []
    for argv, flag, out in ((["transform", "--corpus", docs], "--corpus", "t.csv"),
                            (["export", "--to", "pyldavis", "--corpus", docs], "--corpus", "v.json"),
                            (["report", "--reference", docs], "--reference", "r.html")):
        rc, err = _run(capsys, [*argv, "--model", model, "--out", tmp_path / out])
        assert rc == 2 and not (tmp_path / out).exists(), err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert f"{flag} {str(docs)!r}: none of the 2 documents has a word of the model's vocabulary" in err
        lines.append(err.split(": ", 2)[-1])
    assert len(set(lines)) == 1         # one rule, one message


def test_a_document_without_a_vocabulary_word_among_others_keeps_its_row(model, tmp_path, capsys):
    docs = tmp_path / "mixed.txt"
    docs.write_text("apple banana\nzebra quokka\nriver valley\n")
    out = tmp_path / "t.csv"
    rc, err = _run(capsys, ["transform", "--model", model, "--corpus", docs, "--out", out])
    assert rc in (0, None), err
    rows = out.read_text().splitlines()[1:]
    assert len(rows) == 3 and [float(x) for x in rows[1].split(",")[1:]] == pytest.approx([0.5, 0.5])
