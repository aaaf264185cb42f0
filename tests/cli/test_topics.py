"""`dptopic topics` of a document-level model with topics below the noise of their release (``supported_topics_``):
the count is said, those topics are listed apart and their words hidden unless --show-unsupported; JSON and CSV carry
the flag; a model without the assessment is shown as before and refuses the flag in one line."""
import csv
import io
import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.cli.main import main

SUPPORTED = np.array([True, False, True, False, True])
BACKGROUND = np.array([False, False, False, False, True])


@pytest.fixture(scope="module")
def folders(planted, tmp_path_factory):
    d = tmp_path_factory.mktemp("topics")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the vocabulary chosen from the data, the seed: not the subject here
        m = dptopic.DocDPCooccurrence(n_topics=5, epsilon=5.0, n_words=20, seed=0).fit(planted.corpus)
    m.supported_topics_, m.background_topics_ = SUPPORTED.copy(), BACKGROUND.copy()    # deterministic flags
    m.save(d / "cooc")
    dptopic.LDA(n_topics=3, n_iter=3, seed=0).fit(planted.corpus).save(d / "lda")
    return d, m.topic_words(4)


def _run(capsys, *argv):
    capsys.readouterr()
    rc = main([str(x) for x in argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_the_table_counts_supported_topics_and_hides_the_words_of_the_others(folders, capsys):
    d, words = folders
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 4)
    assert rc in (0, None), err
    flat = " ".join(out.split())
    assert "3 of 5 topics stand above the noise of the release" in flat and "inside the guarantee" in flat
    assert "below the noise: topics 1, 3: words hidden (--show-unsupported" in flat
    for k in (0, 2):
        assert " ".join(words[k]) in flat
    for k in (1, 3):
        assert " ".join(words[k]) not in flat
    assert "4 (background)" in flat


def test_show_unsupported_shows_their_words_labelled(folders, capsys):
    d, words = folders
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 4, "--show-unsupported")
    assert rc in (0, None), err
    flat = " ".join(out.split())
    assert "3 of 5 topics stand above the noise" in flat
    for k in (1, 3):
        assert f"{k} (below the noise)" in flat and " ".join(words[k]) in flat


def test_json_carries_the_flags_and_leaves_out_the_words_below_the_noise(folders, capsys):
    d, words = folders
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 4, "--format", "json")
    assert rc in (0, None), err
    doc = json.loads(out)
    assert [t["supported"] for t in doc["topics"]] == SUPPORTED.tolist()
    assert [t["background"] for t in doc["topics"]] == BACKGROUND.tolist()
    assert [t["words"] for t in doc["topics"]] == [words[0], [], words[2], [], words[4]]
    assert doc["support"]["supported"] == 3 and doc["support"]["topics"] == 5
    assert "inside the guarantee" in doc["support"]["note"] and "--show-unsupported" in doc["support"]["note"]
    rc, out, _ = _run(capsys, "topics", "--model", d / "cooc", "-n", 4, "--format", "json", "--show-unsupported")
    assert [t["words"] for t in json.loads(out)["topics"]] == words


def test_csv_carries_the_flags_and_says_which_topics_it_leaves_out(folders, capsys):
    d, words = folders
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 2, "--format", "csv")
    assert rc in (0, None), err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert sorted({int(r["topic"]) for r in rows}) == [0, 2, 4] and {r["supported"] for r in rows} == {"true"}
    assert [r["background"] for r in rows if r["topic"] == "4"] == ["true", "true"]
    assert "3 of 5 topics stand above the noise" in err and "topics 1, 3 are below it" in err
    rc, out, _ = _run(capsys, "topics", "--model", d / "cooc", "-n", 2, "--format", "csv", "--show-unsupported")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["supported"] for r in rows if r["topic"] == "1"] == ["false", "false"]


def test_a_model_without_the_assessment_is_shown_as_before_and_refuses_the_flag(folders, capsys):
    d, _ = folders
    rc, out, err = _run(capsys, "topics", "--model", d / "lda", "--format", "json")
    doc = json.loads(out)
    assert "support" not in doc and all("supported" not in t for t in doc["topics"])
    rc, out, err = _run(capsys, "topics", "--model", d / "lda", "--format", "csv")
    assert out.splitlines()[0] == "topic,rank,word,weight"
    rc, out, err = _run(capsys, "topics", "--model", d / "lda")
    assert "stand above the noise" not in out
    rc, out, err = _run(capsys, "topics", "--model", d / "lda", "--show-unsupported")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: --show-unsupported")
    assert "LDA" in err and "Traceback" not in err


def test_report_opens_with_the_utility_warning_and_refuses_the_flag_without_the_assessment(folders, capsys):
    d, words = folders
    rc, out, err = _run(capsys, "report", "--model", d / "cooc", "--out", d / "r.html", "-n", 4)
    assert rc in (0, None), err
    html = (d / "r.html").read_text()
    assert 'id="utility-warning"' in html and html.count("<div class='topic unsupported'>") == 2
    assert html.count("Below the noise of the release: words not shown") == 2
    rc, out, err = _run(capsys, "report", "--model", d / "lda", "--out", d / "l.html", "--show-unsupported")
    assert rc == 2 and err.startswith("error: --show-unsupported") and not (d / "l.html").exists()
