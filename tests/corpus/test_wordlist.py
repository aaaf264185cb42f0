"""Rough edges found walking through the general word list (``--vocabulary wordfreq:LANG[:SIZE]``) and the one-run
audit (``dptopic audit --design one-run``) as a new user."""
import json

import pytest


def _tiny(tmp_path):
    src = tmp_path / "tiny.txt"
    src.write_text("apple banana cherry\ndate elder fig\ngrape apple banana\n")
    return src


# ----------------------------------------------------------------- the general word list
def test_small_sizes_read_on_until_enough_words_are_kept():
    """wordfreq:en:2 gave 0 words: the 8 words read were all stop words or short."""
    pytest.importorskip("wordfreq")
    from dptopic.corpus import general_word_list

    words = general_word_list("en", 2)
    assert len(words) == 2 and words == general_word_list("en", 100)[:2]


@pytest.mark.parametrize("language", ["ja", "zh", "ko", "de", "el", "en"])
def test_every_word_kept_is_one_the_tokeniser_counts(language):
    """CJK words of 3+ characters (read as pairs), 2-syllable Korean words (kept by the tokeniser, dropped by the list),
    English stop words in other languages' lists, a Greek final sigma case-folded to σ: words never counted."""
    pytest.importorskip("wordfreq")
    from dptopic.corpus import general_word_list
    from dptopic.corpus.preprocess import Preprocessor

    pre = Preprocessor()
    words = general_word_list(language, 2000)
    assert len(words) == 2000
    assert all(pre.tokenize(w) == [w] for w in words)
    if language == "ko":
        assert any(len(w) == 2 for w in words)       # 사람 (person): two syllables, counted by the tokeniser
    if language == "el":
        assert "της" in words and not any(w.endswith("σ") for w in words)


def test_a_list_shorter_than_asked_warns():
    pytest.importorskip("wordfreq")
    from dptopic.corpus import general_word_list

    with pytest.warns(UserWarning, match="not 50,000"):
        words = general_word_list("ko", 50_000)
    assert 2 <= len(words) < 50_000


# ----------------------------------------------------------------- the one-run audit
def test_lira_only_flags_are_refused_with_one_run(tmp_path, capsys):
    from dptopic.cli.main import main

    for flags, name in ((["--shadows", "8"], "--shadows"), (["--jobs", "4"], "--jobs")):
        assert main(["audit", "--design", "one-run", "--algorithm", "lda", "--corpus", str(_tiny(tmp_path)),
                     "--out", str(tmp_path / "a"), *flags]) != 0
        err = capsys.readouterr().err
        assert f"{name} applies to the LiRA design only" in err and "Traceback" not in err


def test_too_many_canaries_names_the_flag_and_how_many_fit(tmp_path, capsys):
    from dptopic.cli.main import main

    assert main(["audit", "--design", "one-run", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                 "--corpus", str(_tiny(tmp_path)), "--canaries", "4", "--out", str(tmp_path / "a"), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "at most 3 fit" in err and "--canaries" in err


def test_three_canaries_guess_instead_of_failing(tmp_path, capsys):
    """--canaries 3 (allowed: at least 2) failed on k_plus=0, k_minus=0, names the user never gave."""
    from dptopic.cli.main import main

    out = tmp_path / "a"
    assert main(["audit", "--design", "one-run", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                 "--corpus", str(_tiny(tmp_path)), "--canaries", "3", "--seed", "0", "--out", str(out),
                 "--quiet"]) == 0
    e = json.loads((out / "audit.json").read_text())["empirical_epsilon"]
    assert (e["k_plus"], e["k_minus"]) == (1, 1)



# ----------------------------------------------------------------- the demo's second part
def test_demo_with_one_iteration_says_one_sweep(tmp_path, capsys):
    from dptopic.cli.main import main

    out = tmp_path / "dm"
    assert main(["demo", "--topics", "2", "--iterations", "1", "--seed", "0", "--out", str(out), "--quiet"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "1 sweep)" in printed and "1 sweeps" not in printed
    assert main(["topics", "--model", str(out) + "-document"]) == 0


def test_coverage_refusal_says_to_give_the_word_list_again(tmp_path, capsys):
    """A non-private model trained on a general word list is taken for a frequency cut (most of its words are among
    the corpus's most frequent): the refusal told the user to audit the corpus the model was trained on, which they
    did; it now says to give the same --vocabulary, which then audits."""
    pytest.importorskip("wordfreq")
    from dptopic.cli.main import main

    assert main(["train", "--algorithm", "lda", "--topics", "2", "--iterations", "1", "--seed", "0",
                 "--vocabulary", "wordfreq:en:2000", "--out", str(tmp_path / "m"), "--quiet"]) == 0
    capsys.readouterr()
    common = ["audit", "--design", "one-run", "--model", str(tmp_path / "m"), "--canaries", "4", "--canary-length",
              "5", "--seed", "0", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "a")]) != 0
    err = capsys.readouterr().err
    assert "give the same --vocabulary LIST here" in err and "Traceback" not in err, err
    assert main([*common, "--vocabulary", "wordfreq:en:2000", "--out", str(tmp_path / "b")]) == 0
