"""A name the user gives (a dataset, a file, a word of a vocabulary) prints as text, never as rich markup, emoji
codes or terminal control sequences, in every command that prints it."""
import numpy as np
import pytest

import dptopic
from dptopic.corpus import Corpus
from helpers import run_dptopic

WORDS = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("names")
    rng = np.random.default_rng(0)
    halves = (WORDS[:7], WORDS[7:])
    with open(d / "docs.txt", "w") as f:
        for i in range(200):
            f.write(" ".join(rng.choice(halves[i % 2], 12)) + "\n")
    (d / "vocab.txt").write_text("\n".join(WORDS))
    return d


@pytest.mark.parametrize("name", ["[/]", "[bold red]x", "[link=file:///etc]y[/link]", ":thumbs_up: z"])
def test_a_dataset_name_with_markup_is_capped_shown_and_trained_on_as_given(files, tmp_path, name):
    """'[/]' recorded the cap or the release, then died with a MarkupError traceback, and every later show of that
    ledger crashed; '[bold red]x' printed as 'x'."""
    ledger = tmp_path / "l.sqlite"
    cap = run_dptopic("budget", "cap", "--dataset", name, "--epsilon", "5", "--ledger", ledger)
    assert cap.returncode == 0 and name in cap.stdout, cap.stderr
    train = run_dptopic("train", "--algorithm", "docdp-cooc", "--corpus", files / "docs.txt", "--format", "text",
                        "--vocabulary", files / "vocab.txt", "--epsilon", "1", "--topics", "2", "--test-size", "0",
                        "--out", tmp_path / "m", "--quiet", "--dataset", name, "--ledger", ledger)
    assert train.returncode == 0 and name in train.stdout, train.stderr
    show = run_dptopic("budget", "show", "--ledger", ledger)
    assert show.returncode == 0 and name in show.stdout, show.stderr


def test_control_characters_in_a_word_are_shown_as_escapes(tmp_path):
    words = ["a\x1b[31mb\u202ec", "river", "water", "loan", "money", "bank"]
    X = np.random.default_rng(1).poisson(1.0, size=(40, len(words)))
    dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_bow(X, vocabulary=words)).save(tmp_path / "m")
    r = run_dptopic("topics", tmp_path / "m", "-n", "6")
    assert r.returncode == 0 and "\x1b" not in r.stdout and "\u202e" not in r.stdout, r.stderr
    assert "a\\x1b[31mb\\u202ec" in r.stdout


def test_words_and_an_out_folder_with_markup_print_as_given(tmp_path):
    words = ["[red]bank", "[/]", "river", "water", "loan", "money"]
    rng = np.random.default_rng(1)
    X = rng.poisson(1.0, size=(40, len(words)))
    model = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_bow(X, vocabulary=words))
    model.save(tmp_path / "[bold]m")
    r = run_dptopic("topics", tmp_path / "[bold]m")
    assert r.returncode == 0 and "[red]bank" in r.stdout and "[/]" in r.stdout, r.stderr
    report = run_dptopic("report", tmp_path / "[bold]m", "--out", tmp_path / "r.html", "--title", "[/] <b>x</b>")
    assert report.returncode == 0, report.stderr
    html = (tmp_path / "r.html").read_text()
    assert "[/] &lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
