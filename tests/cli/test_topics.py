"""`dptopic topics` of a document-level model with topics below the noise of their release (``supported_topics_``):
the count is said, those topics are listed apart and their words hidden unless --show-unsupported; JSON and CSV carry
the flag; a model without the assessment is shown as before and refuses the flag in one line."""
import csv
import io
import json
import shutil
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dptopic
from dptopic.cli.main import main
from dptopic.corpus import lda_corpus
from helpers import FAST, cli_exit_code, mutations, run_dptopic

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


def test_every_view_of_the_words_says_how_they_are_ranked(folders, capsys):
    """DocDPCooccurrence's words are shown by relevance, an LDA's by probability: the table, JSON, CSV and report say
    which, and the words are in that order."""
    d, words = folders
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 4)
    assert "Top 4 words per topic of DocDPCooccurrence, ranked by relevance, λ = 0.4" in " ".join(out.split())
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 4, "--format", "json")
    doc = json.loads(out)
    assert doc["words"].startswith("ranked by relevance, λ = 0.4") and doc["topics"][0]["words"] == words[0]
    rc, out, err = _run(capsys, "topics", "--model", d / "cooc", "-n", 4, "--format", "csv")
    assert "words ranked by relevance, λ = 0.4" in err
    assert [r["word"] for r in csv.DictReader(io.StringIO(out)) if r["topic"] == "0"] == words[0]
    rc, out, err = _run(capsys, "topics", "--model", d / "lda", "--format", "json")
    assert json.loads(out)["words"].startswith("ranked by probability")
    rc, out, err = _run(capsys, "topics", "--model", d / "lda")
    assert "ranked by probability" in " ".join(out.split())
    rc, out, err = _run(capsys, "report", "--model", d / "cooc", "--out", d / "ranked.html", "-n", 4,
                        "--show-unsupported")
    assert "Top words of each topic, ranked by relevance, λ = 0.4" in (d / "ranked.html").read_text()


def _edited(model_dir, tmp_path, **privacy):
    d = tmp_path / "edited"
    shutil.copytree(model_dir, d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"].update(privacy)
    (d / "model.json").write_text(json.dumps(meta))
    return d


def test_topics_and_report_cli_with_odd_warnings(hdp_model_dir, tmp_path):
    d = _edited(hdp_model_dir, tmp_path, warnings=5, epsilon_nominal="x", epsilon_pld="abc")
    r = run_dptopic("topics", "--model", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "abc" in r.stdout
    r = run_dptopic("report", "--model", d, "--out", tmp_path / "r.html")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "r.html").is_file()


def test_topics_cli_not_private_with_odd_claims(hdp_model_dir, tmp_path):
    d = _edited(hdp_model_dir, tmp_path, private=False, claimed_by_paper=5, count_release_epsilon={"a": 1})
    r = run_dptopic("topics", "--model", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_cli_names_the_guarantee_and_refuses_an_edited_report(tmp_path):
    X = lda_corpus(n_docs=80, vocab_size=30, n_topics=3, doc_length=20, seed=3).corpus
    dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=2.0, n_iter=2, verbose=0).fit(X).save(tmp_path / "m")
    r = run_dptopic("topics", "--model", tmp_path / "m")
    assert r.returncode == 0 and "GUARANTEE" in r.stdout and "cross-check" in r.stdout
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["privacy"] = {"private": True}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    r = run_dptopic("topics", "--model", tmp_path / "m")
    assert r.returncode == 2 and "epsilon" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_model_whose_figures_cannot_be_recomputed_loads_with_a_warning(private_models, tmp_path):
    # its figures were shown as saved, with no word that nothing had checked them
    d = tmp_path / "m"
    private_models[0].save(d)
    meta = json.loads((d / "model.json").read_text())
    del meta["privacy"]["events"][0]["changes"]
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="cannot be recomputed from its events .*unchecked"):
        dptopic.load(d)
    r = run_dptopic("topics", "--model", d, timeout=180)
    assert r.returncode == 0 and "unchecked" in " ".join(r.stderr.split()), r.stderr


# ------------------------------------------------------------------ model files


# ------------------------------------------------------------------ the CLI maps errors to exit 2


@FAST
@given(data=st.data())
def test_cli_topics_on_damaged_model(saved_lda_dir, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("cli") / "model"
    shutil.copytree(saved_lda_dir, d)
    (d / "model.json").write_bytes(data.draw(mutations((d / "model.json").read_bytes())))
    cli_exit_code(["topics", "--model", str(d)])


# 5 / 6c -------------------------------------------------------------------------------------------------------
def test_exports_say_which_words_were_learned(fedlda_none_model, tmp_path, capsys):
    fedlda_none_model.save(tmp_path / "m")
    assert main(["topics", "--model", str(tmp_path / "m"), "--format", "json"]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    V = len(fedlda_none_model.vocabulary_)
    assert doc["report_words"] == 6 and f"first 6 of {V} words" in doc["report_words_note"]
    assert main(["topics", "--model", str(tmp_path / "m"), "--format", "csv"]) in (0, None)
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "privacy card" in err and "first 6" in err
    docs = tmp_path / "d.txt"
    docs.write_text("\n".join(" ".join(fedlda_none_model.vocabulary_.words[:5]) for _ in range(3)) + "\n")
    out = tmp_path / "vis.json"
    assert main(["export", "--to", "pyldavis", "--model", str(tmp_path / "m"), "--corpus", str(docs),
                 "--corpus-public", "--out", str(out)]) in (0, None)
    vis = json.loads(out.read_text())
    assert vis["report_words"] == 6 and "shared fill" in vis["privacy_note"]


def test_help_states_the_topics_format_and_fedlda_max_docs_defaults(capsys):
    from dptopic.cli.main import main

    for argv, needle in ((["topics", "--help"], "the default"), (["experiment", "fedlda", "--help"], "default 3000")):
        try:
            main(argv)
        except SystemExit:
            pass
        assert needle in " ".join(capsys.readouterr().out.split())
