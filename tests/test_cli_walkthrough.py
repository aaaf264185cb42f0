"""CLI fixes from a new user's walk-through (2026-11-23)."""
import warnings

import numpy as np

import dptopic
from dptopic.cli.main import main
from dptopic.corpus import lda_corpus


def _texts(n=300, seed=3):
    c = lda_corpus(n_docs=n, vocab_size=60, n_topics=3, doc_length=25, seed=seed).corpus
    letters = "abcdefghijklmnopqrstuvwxyz"   # word ids as letters: the tokeniser keeps no digits
    word = [letters[i // 26] * 3 + letters[i % 26] for i in range(c.vocab_size)]
    return [" ".join(word[i] for i in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def test_held_out_copies_of_training_documents_are_left_out_and_word_level_sizes_are_public(tmp_path, capsys):
    texts = _texts()
    f = tmp_path / "docs.txt"
    f.write_text("\n".join(texts + texts[:40]))          # 40 documents twice: copies land on both sides
    assert main(["train", "--corpus", str(f), "--algorithm", "hdp", "--epsilon", "3", "--topics", "3", "--iterations",
                 "3", "--quiet", "--out", str(tmp_path / "m")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "repeat a training document and are left out of the evaluation" in out
    assert "sizes are public under word-level DP" in out and "shown here, not saved" not in out


def test_evaluate_gives_the_same_figures_twice_by_default(tmp_path, capsys):
    texts = _texts()
    f = tmp_path / "docs.txt"
    f.write_text("\n".join(texts))
    assert main(["train", "--corpus", str(f), "--topics", "3", "--iterations", "5", "--quiet",
                 "--out", str(tmp_path / "m")]) == 0
    capsys.readouterr()
    runs = []
    for _ in range(2):
        assert main(["evaluate", "--model", str(tmp_path / "m"), "--corpus", str(f)]) in (0, None)
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1] and "perplexity" in runs[0]


def test_topics_name_background_topics(tmp_path, capsys):
    from dptopic.cli._common import make_console, print_topics

    c = lda_corpus(n_docs=400, vocab_size=300, n_topics=10, doc_length=40, seed=2).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence(n_topics=10, epsilon=4.0, verbose=0).fit(c)
    n_bg = len(m.background_topic_ids())
    assert n_bg > 0
    print_topics(m, 5, console=make_console())
    assert capsys.readouterr().out.count("(background)") == n_bg
    assert np.all(np.isfinite(m.components_))
