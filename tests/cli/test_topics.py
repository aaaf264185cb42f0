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
import os
import shutil
import subprocess
import sys
from pathlib import Path
from dptopic.corpus import lda_corpus
import contextlib
from hypothesis import HealthCheck, given, settings, strategies as st
from dptopic.corpus import Corpus
from dptopic.models import FedLDA

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


SRC = str(Path(__file__).resolve().parents[2] / "src")


TEXTS = ["apple banana cherry apple", "dog cat mouse dog", "apple cherry banana", "cat dog mouse cat"] * 5


def _cli(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz") / "m"
    dptopic.HDPLDA(n_topics=2, n_iter=2).fit(TEXTS).save(d)
    return d


def _edited(model_dir, tmp_path, **privacy):
    d = tmp_path / "edited"
    shutil.copytree(model_dir, d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"].update(privacy)
    (d / "model.json").write_text(json.dumps(meta))
    return d


def test_topics_and_report_cli_with_odd_warnings(model_dir, tmp_path):
    d = _edited(model_dir, tmp_path, warnings=5, epsilon_nominal="x", epsilon_pld="abc")
    r = _cli("topics", "--model", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "abc" in r.stdout
    r = _cli("report", "--model", d, "--out", tmp_path / "r.html")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "r.html").is_file()


def test_topics_cli_not_private_with_odd_claims(model_dir, tmp_path):
    d = _edited(model_dir, tmp_path, private=False, claimed_by_paper=5, count_release_epsilon={"a": 1})
    r = _cli("topics", "--model", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


def test_cli_names_the_guarantee_and_refuses_an_edited_report(tmp_path):
    X = lda_corpus(n_docs=80, vocab_size=30, n_topics=3, doc_length=20, seed=3).corpus
    dptopic.HDPLDA(n_topics=3, epsilon_laplace=1.0, epsilon_inherent=2.0, n_iter=2, verbose=0).fit(X).save(tmp_path / "m")
    r = subprocess.run([sys.executable, "-m", "dptopic", "topics", "--model", str(tmp_path / "m")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "GUARANTEE" in r.stdout and "cross-check" in r.stdout
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["privacy"] = {"private": True}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    r = subprocess.run([sys.executable, "-m", "dptopic", "topics", "--model", str(tmp_path / "m")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "epsilon" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


SRC_2 = str(Path(__file__).resolve().parents[2] / "src")


def _cli_2(*args):
    env = dict(os.environ, PYTHONPATH=SRC_2 + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=180)


@pytest.fixture(scope="module")
def corpus():
    return dptopic.lda_corpus(n_docs=300, vocab_size=60, n_topics=4, seed=0).corpus


def _trainers(corpus):
    from dptopic.local import Randomizer
    from dptopic.models.fdptm import fit_fdptm

    reports = Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3).randomize(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield dptopic.HDPLDA(n_topics=4, n_iter=4, epsilon_laplace=1, verbose=0).fit(corpus)
        yield dptopic.DPSVI.from_budget(1, 1e-5, n_topics=4, verbose=0).fit(corpus)
        yield dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.DocDPEM(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, exclusion="tail", verbose=0).fit(corpus)
        yield dptopic.LPLDA(n_topics=4, n_iter=3, epsilon_word=3, verbose=0).fit(reports)
        yield fit_fdptm(dptopic.HDPLDA(n_topics=4, n_iter=3, epsilon_laplace=1, verbose=0), corpus, 0.5, 5e-6)[0]
        yield fit_fdptm(dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0), corpus, 0.5, 5e-6)[0]


@pytest.fixture(scope="module")
def models(corpus):
    return list(_trainers(corpus))


def test_a_model_whose_figures_cannot_be_recomputed_loads_with_a_warning(models, tmp_path):
    # its figures were shown as saved, with no word that nothing had checked them
    d = tmp_path / "m"
    models[0].save(d)
    meta = json.loads((d / "model.json").read_text())
    del meta["privacy"]["events"][0]["changes"]
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="cannot be recomputed from its events .*unchecked"):
        dptopic.load(d)
    r = _cli_2("topics", "--model", d)
    assert r.returncode == 0 and "unchecked" in " ".join(r.stderr.split()), r.stderr


FAST = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


TEXTS_2 = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 3


CORPUS = Corpus.from_texts(TEXTS_2)


_MODEL = {}


def _fitted():
    if "m" not in _MODEL:
        _MODEL["m"] = dptopic.LDA(3, n_iter=3, seed=0, verbose=0).fit(CORPUS)
    return _MODEL["m"]


def mutations(good: bytes):
    return st.one_of(
        st.binary(max_size=200),
        st.integers(0, len(good)).map(lambda n: good[:n]),                      # truncations
        st.tuples(st.integers(0, max(len(good) - 1, 0)), st.binary(min_size=1, max_size=4)).map(
            lambda t: good[:t[0]] + t[1] + good[t[0] + len(t[1]):]),            # overwritten bytes
    )


# ------------------------------------------------------------------ model files
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("saved") / "model"
    _fitted().save(d)
    return d


# ------------------------------------------------------------------ the CLI maps errors to exit 2
def run_cli(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse
            rc = e.code
    lines = err.getvalue().strip().splitlines()
    assert rc in (0, 2), (argv, rc, err.getvalue())
    if rc == 2:
        assert len(lines) == 1 and lines[0].startswith("error: "), (argv, lines)
    return rc


@FAST
@given(data=st.data())
def test_cli_topics_on_damaged_model(saved, tmp_path_factory, data):
    d = tmp_path_factory.mktemp("cli") / "model"
    shutil.copytree(saved, d)
    (d / "model.json").write_bytes(data.draw(mutations((d / "model.json").read_bytes())))
    run_cli(["topics", "--model", str(d)])


def _letters(i: int) -> str:
    return "word" + "".join("abcdefghij"[int(d)] for d in str(i))


def _texts(n_docs, vocab_size, seed):
    c, _, _, _ = lda_corpus(n_docs=n_docs, vocab_size=vocab_size, n_topics=3, doc_length=12, seed=seed)
    return [" ".join(_letters(w) for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def _fit(exclusion="none", **kw):
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(_texts(40, 30, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FedLDA(n_topics=3, rounds=2, pad_length=kw.pop("pad_length_", 8), n_clients=10, exclusion=exclusion,
                      verbose=0, seed=0, **kw).fit(c)


@pytest.fixture(scope="module")
def none_model():
    return _fit("none", epsilon_per_entry=5.0, report_words=6)


# 5 / 6c -------------------------------------------------------------------------------------------------------
def test_exports_say_which_words_were_learned(none_model, tmp_path, capsys):
    none_model.save(tmp_path / "m")
    assert main(["topics", "--model", str(tmp_path / "m"), "--format", "json"]) in (0, None)
    doc = json.loads(capsys.readouterr().out)
    V = len(none_model.vocabulary_)
    assert doc["report_words"] == 6 and f"first 6 of {V} words" in doc["report_words_note"]
    assert main(["topics", "--model", str(tmp_path / "m"), "--format", "csv"]) in (0, None)
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "privacy card" in err and "first 6" in err
    docs = tmp_path / "d.txt"
    docs.write_text("\n".join(" ".join(none_model.vocabulary_.words[:5]) for _ in range(3)) + "\n")
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
