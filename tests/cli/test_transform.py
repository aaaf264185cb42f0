"""`dptopic transform`: ids read from the records, and documents with no word of the model's vocabulary."""
import json

import numpy as np
import pytest

import dptopic
from conftest import TWO_TOPIC_TEXTS
from dptopic.cli.main import main
from dptopic.corpus.preprocess import TOKENIZER_VERSION
from helpers import run_dptopic, set_tokenizer_version, subprocess_error_line

TRAIN = TWO_TOPIC_TEXTS


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


# ---------------------------------------------------------------------------------------------------------------------
# Results out: `dptopic transform` (theta for new documents) and `dptopic export --to pyldavis`.

DOCS = "w0 w1 w2 w0\nnothing known here\nw3 w4 w3\n"


def _cli(*args):
    return run_dptopic(*args)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    corpus = dptopic.Corpus.from_texts(TRAIN)
    dptopic.LDA(n_topics=3, n_iter=20, seed=0).fit(corpus).save(d / "lda")
    dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=5.0, n_iter=3).fit(corpus).save(d / "hdp")
    dptopic.DocDPCooccurrence(n_topics=2, epsilon=5.0).fit(corpus).save(d / "docdp")
    return d, ["apple", "banana", "cherry", "river", "valley"]


def _docs(tmp_path, words):
    f = tmp_path / "docs.txt"
    f.write_text(DOCS.replace("w0", words[0]).replace("w1", words[1]).replace("w2", words[2])
                 .replace("w3", words[3]).replace("w4", words[4]))
    return f


def test_transform_keeps_one_row_per_input_document(tmp_path, models):
    d, words = models
    docs = _docs(tmp_path, words)
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(docs), "--out", str(tmp_path / "t.csv"))
    assert r.returncode == 0, r.stderr
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert lines[0] == "doc_id,topic_0,topic_1,topic_2" and [ln.split(",")[0] for ln in lines[1:]] == ["doc0", "doc1", "doc2"]
    theta = np.array([[float(x) for x in ln.split(",")[1:]] for ln in lines[1:]])
    assert np.allclose(theta.sum(axis=1), 1, atol=1e-4)
    assert np.allclose(theta[1], 1 / 3, atol=1e-4)                 # no known word: the prior mean
    assert "warning" not in r.stderr                                 # a non-private model
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(docs), "--out", str(tmp_path / "t.npy"))
    assert r.returncode == 0, r.stderr
    arr = np.load(tmp_path / "t.npy", allow_pickle=False)
    assert arr.shape == (3, 3) and np.allclose(arr.sum(axis=1), 1)


def test_transform_refuses_to_replace_and_warns_for_private_models(tmp_path, models):
    d, words = models
    docs = _docs(tmp_path, words)
    mine = tmp_path / "notes.csv"
    mine.write_text("my,own,table\n")
    r = _cli("transform", "--model", str(d / "hdp"), "--corpus", str(docs), "--out", str(mine), "--overwrite")
    assert r.returncode == 2 and mine.read_text() == "my,own,table\n"
    r = _cli("transform", "--model", str(d / "hdp"), "--corpus", str(docs), "--out", str(tmp_path / "t.csv"))
    assert r.returncode == 0 and "NOT covered" in r.stderr
    assert "training_theta_ of the fitted model" in r.stderr          # HDPLDA releases the training documents' θ
    r = _cli("transform", "--model", str(d / "docdp"), "--corpus", str(docs), "--out", str(tmp_path / "d.csv"))
    assert r.returncode == 0 and "NOT covered" in r.stderr and "training_theta_" not in r.stderr   # it releases none
    r = _cli("transform", "--model", str(d / "hdp"), "--corpus", str(docs), "--out", str(tmp_path / "t.csv"))
    assert r.returncode == 2 and "--overwrite" in r.stderr
    r = _cli("transform", "--model", str(d / "hdp"), "--corpus", str(docs), "--out", str(tmp_path / "t.txt"))
    assert r.returncode == 2 and ".csv or .npy" in r.stderr


def test_export_pyldavis_arrays_are_consistent(tmp_path, models):
    d, words = models
    docs = _docs(tmp_path, words)
    out = tmp_path / "vis.json"
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "lda"), "--corpus", str(docs), "--out", str(out))
    assert r.returncode == 0, r.stderr
    v = json.loads(out.read_text())
    phi, theta = np.array(v["topic_term_dists"]), np.array(v["doc_topic_dists"])
    assert phi.shape == (3, len(v["vocab"])) and np.allclose(phi.sum(axis=1), 1)
    assert theta.shape == (3, 3) and v["doc_lengths"] == [4, 0, 3]   # one row per input document, the empty one too
    assert "3 documents" in r.stdout
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(docs), "--out", str(tmp_path / "t.npy"))
    assert r.returncode == 0 and np.allclose(theta, np.load(tmp_path / "t.npy"), atol=1e-6)   # transform's rows
    tf = dict(zip(v["vocab"], v["term_frequency"]))
    assert (tf[words[0]], tf[words[3]], tf[words[1]]) == (2, 2, 1) and sum(v["term_frequency"]) == 7
    assert "privacy_note" not in v
    assert v["top_words"].startswith("dptopic shows these topics' words ranked by probability")


def test_export_keeps_a_jsonl_document_with_no_known_word(tmp_path, models):
    d, words = models
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"text": t}) + "\n" for t in DOCS.replace("w0", words[0]).replace(
        "w3", words[3]).replace("w1", words[1]).replace("w2", words[2]).replace("w4", words[4]).splitlines()))
    out = tmp_path / "vis.json"
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "lda"), "--corpus", str(docs), "--out", str(out))
    assert r.returncode == 0 and "3 topics and 3 documents" in r.stdout, r.stderr
    v = json.loads(out.read_text())
    assert v["doc_lengths"] == [4, 0, 3] and np.allclose(v["doc_topic_dists"][1], 1 / 3, atol=1e-4)


def test_export_of_a_private_model_says_what_is_not_covered(tmp_path, models):
    d, words = models
    docs = _docs(tmp_path, words)
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "hdp"), "--corpus", str(docs), "--out", str(tmp_path / "a.json"))
    assert r.returncode == 0 and "NOT covered" in r.stderr
    assert "NOT covered" in json.loads((tmp_path / "a.json").read_text())["privacy_note"]
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "hdp"), "--corpus", str(docs), "--out",
             str(tmp_path / "b.json"), "--corpus-public")
    assert r.returncode == 0 and "NOT covered" not in r.stderr
    r = _cli("export", "--to", "pyldavis", "--model", str(tmp_path), "--corpus", str(docs), "--out", str(tmp_path / "c.json"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "c.json").exists()


def test_topics_as_json_and_csv(models):
    d, _ = models
    r = _cli("topics", "--model", str(d / "hdp"), "--format", "json", "-n", "3")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    m = dptopic.load(d / "hdp")
    assert [t["words"] for t in doc["topics"]] == m.topic_words(3)
    assert doc["privacy_card"]["guarantee"] == "partial" and doc["class"] == "HDPLDA"  # its vocabulary came from its data
    r = _cli("topics", "--model", str(d / "lda"), "--format", "csv", "-n", "2")
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "topic,rank,word,weight" and len(lines) == 1 + 3 * 2
    k, rank, word, weight = lines[1].split(",")
    assert (k, rank, word) == ("0", "1", dptopic.load(d / "lda").topic_words(1)[0][0]) and float(weight) > 0


def test_the_cli_table_says_partial_where_the_card_does(models):
    d, _ = models
    r = _cli("topics", "--model", str(d / "hdp"))
    assert r.returncode == 0, r.stderr
    assert "partial: the vocabulary was chosen from the training documents" in " ".join(r.stdout.split())


def test_transform_writes_the_inputs_ids(tmp_path, models):
    d, words = models
    texts = [f"{words[0]} {words[1]}", "nothing known", f"{words[3]} {words[4]}"]
    jl = tmp_path / "docs.jsonl"
    jl.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in zip(["a,1", 7, "c"], texts)))
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(jl), "--out", str(tmp_path / "j.csv"))
    assert r.returncode == 0, r.stderr
    assert [ln.split(",")[0] for ln in (tmp_path / "j.csv").read_text().splitlines()[1:]] == ['"a', "7", "c"]
    cv = tmp_path / "docs.csv"
    cv.write_text("key,text\n" + "".join(f"k{i},{t}\n" for i, t in enumerate(texts)))
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(cv), "--out", str(tmp_path / "c.csv"),
             "--id-field", "key")
    assert r.returncode == 0, r.stderr
    assert [ln.split(",")[0] for ln in (tmp_path / "c.csv").read_text().splitlines()[1:]] == ["k0", "k1", "k2"]
    # without the default field on every record: row names; a named field that some record lacks: refused
    jl.write_text("".join(json.dumps({"id": 1, "text": texts[0]}) + "\n" + json.dumps({"text": t}) + "\n"
                          for t in texts[1:2]))
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(jl), "--out", str(tmp_path / "k.csv"))
    assert r.returncode == 0 and (tmp_path / "k.csv").read_text().splitlines()[1].startswith("doc0,"), r.stderr
    r = _cli("transform", "--model", str(d / "lda"), "--corpus", str(jl), "--out", str(tmp_path / "m.csv"),
             "--id-field", "id")
    assert r.returncode == 2 and "record 2 has no id field 'id'" in r.stderr and not (tmp_path / "m.csv").exists()
    assert len(r.stderr.strip().splitlines()) == 1


def test_outputs_computed_from_documents_are_readable_by_their_owner_only(tmp_path, models):
    import os
    import stat

    d, words = models
    docs = _docs(tmp_path, words)
    old = os.umask(0o022)
    try:
        for out, args in (("t.csv", ["transform"]), ("t.npy", ["transform"]),
                          ("v.json", ["export", "--to", "pyldavis"]),
                          ("p.json", ["export", "--to", "pyldavis", "--corpus-public"])):
            r = _cli(*args, "--model", str(d / "hdp"), "--corpus", str(docs), "--out", str(tmp_path / out))
            assert r.returncode == 0, r.stderr
            mode = stat.S_IMODE(os.stat(tmp_path / out).st_mode)
            assert mode == (0o644 if "--corpus-public" in args else 0o600), (out, oct(mode))
            assert ("readable by you only" in " ".join(r.stdout.split())) == (mode == 0o600)
    finally:
        os.umask(old)


def test_export_writes_json_only(tmp_path, models):
    d, words = models
    r = _cli("export", "--to", "pyldavis", "--model", str(d / "lda"), "--corpus", str(_docs(tmp_path, words)),
             "--out", str(tmp_path / "vis.html"))
    assert r.returncode == 2 and "must end in .json" in r.stderr and not (tmp_path / "vis.html").exists()


def test_ids_that_are_not_strings_or_numbers(tmp_path):
    jl = tmp_path / "d.jsonl"
    jl.write_text(json.dumps({"id": {"x": 1}, "text": "apple river"}) + "\n" + json.dumps({"id": 2, "text": "river"}) + "\n")
    with pytest.raises(dptopic.DPTopicError, match="id field 'id' is an object"):
        dptopic.Corpus.from_jsonl(jl, id_field="id")
    with pytest.raises(dptopic.DPTopicError, match="line 1: id field 'id' is an object"):    # lenient on a missing
        dptopic.Corpus.from_jsonl(jl, id_field="id", require_ids=False)    # field only, never on a wrong value
    assert dptopic.Corpus.from_jsonl(jl, id_field="nope", require_ids=False).doc_ids == ["doc0", "doc1"]


# ----------------------------------------------------------------- 11: transform never replaces a user's own .npy
def test_transform_keeps_a_users_npy(hdp_model_dir, tmp_path):
    docs = tmp_path / "in.txt"
    docs.write_text("apple banana cherry\ndog cat mouse\n")
    mine = tmp_path / "mydata.npy"
    np.save(mine, np.full((2, 2), 0.5))
    before = mine.read_bytes()
    model = hdp_model_dir
    line = subprocess_error_line(run_dptopic("transform", "--model", model, "--corpus", docs, "--out", mine, "--overwrite"),
                                 "refusing to replace")
    assert "another --out" in line and mine.read_bytes() == before
    # a table transform wrote is still replaced with --overwrite, and refused without it
    out = tmp_path / "t.npy"
    r = run_dptopic("transform", "--model", hdp_model_dir, "--corpus", docs, "--out", out)
    assert r.returncode == 0, r.stderr
    assert np.load(out).shape == (2, 2)
    subprocess_error_line(run_dptopic("transform", "--model", model, "--corpus", docs, "--out", out), "--overwrite")
    r = run_dptopic("transform", "--model", hdp_model_dir, "--corpus", docs, "--out", out, "--overwrite")
    assert r.returncode == 0, r.stderr
    # a user's array saved over our table afterwards is theirs again
    np.save(out, np.full((2, 2), 0.5))
    subprocess_error_line(run_dptopic("transform", "--model", model, "--corpus", docs, "--out", out, "--overwrite"),
                          "refusing to replace")


def test_transform_keeps_a_users_file_where_it_would_write_its_stamp(hdp_model_dir, tmp_path):
    docs = tmp_path / "in.txt"
    docs.write_text("apple banana cherry\ndog cat mouse\n")
    stamp = tmp_path / ".t.npy.dptopic"
    stamp.write_text("my notes")
    line = subprocess_error_line(run_dptopic("transform", "--model", hdp_model_dir, "--corpus", docs, "--out",
                                             tmp_path / "t.npy"), "did not write")
    assert "another --out" in line and stamp.read_text() == "my notes" and not (tmp_path / "t.npy").exists()


def test_the_cli_warns_when_it_reads_text_into_a_model_of_another_tokenizer(saved_two_topics, tmp_path):

    docs = tmp_path / "docs.txt"
    docs.write_text("a rocket in orbit\na doctor\n")
    prepared = tmp_path / "docs.npz"
    dptopic.Corpus.from_texts(docs.read_text().splitlines()).save(prepared)

    def run(*args):
        return run_dptopic(*args)

    cases = [("transform", "--model", saved_two_topics, "--corpus", docs, "--out", tmp_path / "t.csv"),
             ("evaluate", "--model", saved_two_topics, "--corpus", docs),
             ("report", "--model", saved_two_topics, "--reference", docs, "--out", tmp_path / "r.html")]
    for argv in cases:
        r = run(*argv)
        assert r.returncode == 0 and "tokeniser version" not in r.stderr, r.stderr          # same version: silent
    set_tokenizer_version(saved_two_topics, TOKENIZER_VERSION + 1)
    for argv in cases:
        r = run(*argv, "--overwrite") if argv[0] != "evaluate" else run(*argv)
        assert r.returncode == 0 and f"tokeniser version {TOKENIZER_VERSION + 1}" in r.stderr, (argv[0], r.stderr)
    # tokens: exact
    r = run("transform", "--model", saved_two_topics, "--corpus", prepared, "--out", tmp_path / "p.csv")
    assert r.returncode == 0 and "tokeniser version" not in r.stderr, r.stderr


def test_keep_urls_is_kept_by_train_with_a_vocabulary_and_by_transform(tmp_path):
    """train --keep-urls --vocabulary read the addresses' words as dropped, and transform dropped the URL words the
    model was trained on (a URL-only document got a uniform row)."""
    import csv

    rng = np.random.default_rng(0)
    with open(tmp_path / "c.jsonl", "w") as f:
        for i in range(60):
            text = " ".join(rng.choice(["river", "water", "boat", "fish"] if i % 2 else
                                       ["money", "loan", "credit", "market"], 20))
            f.write(json.dumps({"text": text + (" https://example.com/page" * 3 if i % 2 else "")}) + "\n")
    (tmp_path / "v.txt").write_text("\n".join(["river", "water", "boat", "fish", "money", "loan", "credit", "market",
                                               "https", "example", "page"]))
    (tmp_path / "u.jsonl").write_text(json.dumps({"text": "https://example.com/page https://example.com/page"}) + "\n")
    r = run_dptopic("train", "--corpus", tmp_path / "c.jsonl", "--algorithm", "lda", "--topics", "2", "--iterations",
                    "30", "--seed", "0", "--keep-urls", "--vocabulary", tmp_path / "v.txt", "--test-size", "0",
                    "--out", tmp_path / "m", "--quiet")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "m" / "model.json").read_text())["tokenizer"]["keep_urls"] is True
    r = run_dptopic("transform", tmp_path / "m", "--corpus", tmp_path / "u.jsonl", "--out", tmp_path / "t.csv")
    assert r.returncode == 0, r.stderr
    (row,) = list(csv.DictReader(open(tmp_path / "t.csv")))
    assert abs(float(row["topic_0"]) - float(row["topic_1"])) > 0.5
