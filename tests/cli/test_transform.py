"""`dptopic transform`: ids read from the records, and documents with no word of the model's vocabulary."""
import json

import pytest

import dptopic
from dptopic.cli.main import main
import os
import subprocess
import sys
from pathlib import Path
import numpy as np
from dptopic.corpus.preprocess import TOKENIZER_VERSION

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


SRC = str(Path(__file__).resolve().parents[2] / "src")


TEXTS = ["apple banana cherry apple", "dog cat mouse dog", "apple cherry banana", "cat dog mouse cat"] * 5


def _cli(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz") / "m"
    dptopic.HDPLDA(n_topics=2, n_iter=2).fit(TEXTS).save(d)
    return d


# ----------------------------------------------------------------- 11: transform never replaces a user's own .npy
def test_transform_keeps_a_users_npy(model_dir, tmp_path):
    docs = tmp_path / "in.txt"
    docs.write_text("apple banana cherry\ndog cat mouse\n")
    mine = tmp_path / "mydata.npy"
    np.save(mine, np.full((2, 2), 0.5))
    before = mine.read_bytes()
    line = _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", mine, "--overwrite"),
                           "refusing to replace")
    assert "another --out" in line and mine.read_bytes() == before
    # a table transform wrote is still replaced with --overwrite, and refused without it
    out = tmp_path / "t.npy"
    r = _cli("transform", "--model", model_dir, "--corpus", docs, "--out", out)
    assert r.returncode == 0, r.stderr
    assert np.load(out).shape == (2, 2)
    _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", out), "--overwrite")
    r = _cli("transform", "--model", model_dir, "--corpus", docs, "--out", out, "--overwrite")
    assert r.returncode == 0, r.stderr
    # a user's array saved over our table afterwards is theirs again
    np.save(out, np.full((2, 2), 0.5))
    _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", out, "--overwrite"),
                    "refusing to replace")


def test_transform_keeps_a_users_file_where_it_would_write_its_stamp(model_dir, tmp_path):
    docs = tmp_path / "in.txt"
    docs.write_text("apple banana cherry\ndog cat mouse\n")
    stamp = tmp_path / ".t.npy.dptopic"
    stamp.write_text("my notes")
    line = _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", tmp_path / "t.npy"),
                           "did not write")
    assert "another --out" in line and stamp.read_text() == "my notes" and not (tmp_path / "t.npy").exists()


TEXTS_2 = ["the rocket launch reached orbit", "the patient saw a doctor about the disease",
         "orbit of the moon and the rocket", "a doctor treats disease in the clinic"] * 10


@pytest.fixture()
def saved(tmp_path):
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(TEXTS_2)
    m.save(tmp_path / "m")
    return tmp_path / "m"


def _edit(path, version):
    meta = json.loads((path / "model.json").read_text())
    meta["tokenizer"]["version"] = version
    (path / "model.json").write_text(json.dumps(meta))


def test_the_cli_warns_when_it_reads_text_into_a_model_of_another_tokenizer(saved, tmp_path):
    import subprocess
    import sys

    docs = tmp_path / "docs.txt"
    docs.write_text("a rocket in orbit\na doctor\n")
    prepared = tmp_path / "docs.npz"
    dptopic.Corpus.from_texts(docs.read_text().splitlines()).save(prepared)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True)

    cases = [("transform", "--model", saved, "--corpus", docs, "--out", tmp_path / "t.csv"),
             ("evaluate", "--model", saved, "--corpus", docs),
             ("report", "--model", saved, "--reference", docs, "--out", tmp_path / "r.html")]
    for argv in cases:
        r = run(*argv)
        assert r.returncode == 0 and "tokeniser version" not in r.stderr, r.stderr          # same version: silent
    _edit(saved, TOKENIZER_VERSION + 1)
    for argv in cases:
        r = run(*argv, "--overwrite") if argv[0] != "evaluate" else run(*argv)
        assert r.returncode == 0 and f"tokeniser version {TOKENIZER_VERSION + 1}" in r.stderr, (argv[0], r.stderr)
    r = run("transform", "--model", saved, "--corpus", prepared, "--out", tmp_path / "p.csv")  # tokens: exact
    assert r.returncode == 0 and "tokeniser version" not in r.stderr, r.stderr
