"""``dptopic report``: every file it is given is named, as typed, when it cannot be used; the word list a model was
trained on is named on the page."""
import hashlib

import pytest

from dptopic.cli.main import main


@pytest.fixture(scope="module")
def model(tmp_path_factory, tiny):
    import dptopic

    d = tmp_path_factory.mktemp("report-cli")
    dptopic.LDA(n_topics=2, n_iter=2, seed=0).fit(tiny.corpus).save(d / "m")
    return d / "m"


def _error(args, capsys) -> str:
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


@pytest.mark.parametrize("name, content, says", [
    ("precious.txt", b"my private notes\n", "is not valid JSON (Expecting value, line 1)"),
    ("empty.json", b"", "is empty"),
    ("latin1.json", b"\xff\xfe\x80 caf\xe9\n", "is not UTF-8 text"),
    ("nul.json", b"\0" * 64, "is not UTF-8 text"),
    ("list.json", b"[1, 2]", "is JSON but not a dptopic audit"),
    ("missing.json", None, "does not exist"),
])
def test_audit_file_is_named_as_given(model, tmp_path, capsys, monkeypatch, name, content, says):
    if content is not None:
        (tmp_path / name).write_bytes(content)
    monkeypatch.chdir(tmp_path)      # a relative name, as a user types it
    err = _error(["report", "--model", str(model), "--audit", name, "--out", "r.html"], capsys)
    assert f"--audit {name!r} {says}" in err and "audit.json" in err     # and what to give instead
    assert not (tmp_path / "r.html").exists()


def test_audit_folder_names_its_audit_json(model, tmp_path, capsys):
    (tmp_path / "run").mkdir()
    err = _error(["report", "--model", str(model), "--audit", str(tmp_path / "run"), "--out",
                  str(tmp_path / "r.html")], capsys)
    assert f"--audit {str(tmp_path / 'run')!r} holds no audit.json" in err
    (tmp_path / "run" / "audit.json").write_text("{not json")
    err = _error(["report", "--model", str(model), "--audit", str(tmp_path / "run"), "--out",
                  str(tmp_path / "r.html")], capsys)
    assert f"--audit {str(tmp_path / 'run' / 'audit.json')!r} is not valid JSON" in err


def test_word_list_given_to_train_is_named_with_its_size_and_hash(tmp_path, capsys):
    from dptopic.datasets import sotu_texts

    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:200]))
    words = ["united", "states", "congress", "government", "public", "people", "country", "great", "war", "peace",
             "nation", "year", "made", "time", "power", "law", "present", "american", "interest", "state"]
    (tmp_path / "lists").mkdir()
    listed = tmp_path / "lists" / "civics.txt"
    listed.write_text("".join(w + "\n" for w in words))
    assert main(["train", "--algorithm", "hdp", "--epsilon-laplace", "1", "--epsilon-inherent", "2", "--topics", "2",
                 "--iterations", "2", "--vocabulary", str(listed), "--corpus", str(docs), "--seed", "0", "--out",
                 str(tmp_path / "m"), "--quiet"]) == 0
    import dptopic

    rec = dptopic.load(tmp_path / "m").privacy_["vocabulary_list"]
    digest = hashlib.sha256(listed.read_bytes()).hexdigest()      # what sha256sum prints for the file
    assert rec["name"] == "civics.txt" and rec["n_words"] == 20 and rec["sha256"] == digest   # no folders
    capsys.readouterr()
    assert main(["report", "--model", str(tmp_path / "m"), "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert "the list civics.txt, 20 words, sha256 " + digest in page and str(tmp_path / "lists") not in page
