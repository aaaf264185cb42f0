"""``dptopic train``: how it reads a corpus (a shard folder honours or refuses every corpus flag, --format auto never
guesses silently), what it says when a budget or a private vocabulary is too small, and the label on the exact counts
it prints."""
import argparse

import numpy as np
import pytest

from dptopic.cli._common import add_corpus_args
from dptopic.cli.main import build_parser, main

WORDS = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()


def _texts(n, seed=0, length=12):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, length)) for _ in range(n)]


def _run(capsys, *argv):
    capsys.readouterr()
    rc = main([str(x) for x in argv])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards")
    src = tmp / "docs.txt"
    src.write_text("\n".join(_texts(60)) + "\n")
    out = tmp / "sh"
    assert main(["corpus", "prepare", "--corpus", str(src), "--shards", "2", "--out", str(out) + "/"]) == 0
    (tmp / "words.txt").write_text("\n".join(WORDS) + "\n")
    return out


# one value for every corpus flag of train, as a user would give it; the test below checks that the list is whole
SHARD_FLAG_VALUES = {
    "format": ["--format", "text"], "vocab": ["--vocab", "vocab.txt"], "text_field": ["--text-field", "body"],
    "label_field": ["--label-field", "label"], "max_vocab": ["--max-vocab", "5"], "min_df": ["--min-df", "2"],
    "max_df": ["--max-df", "0.5"], "stop_words": ["--stop-words", "none"], "lowercase": ["--no-lowercase"],
    "vocabulary": ["--vocabulary", "WORDS"], "private_vocabulary": ["--private-vocabulary", "1,1e-6"],
    "vocabulary_policy": ["--vocabulary-policy", "laplace"], "test_size": ["--test-size", "0.3"],
}


def _train_corpus_dests():
    """The dests of train's options that say how a corpus is read: add_corpus_args's, and train's own vocabulary and
    split options (found on the real parser)."""
    p = argparse.ArgumentParser(add_help=False)
    add_corpus_args(p)
    dests = {a.dest for a in p._actions} - {"corpus"}
    train = next(a for a in build_parser()._subparsers._group_actions[0].choices.items() if a[0] == "train")[1]
    own = {a.dest for a in train._actions} & {"vocabulary", "private_vocabulary", "vocabulary_policy", "test_size"}
    assert own == {"vocabulary", "private_vocabulary", "vocabulary_policy", "test_size"}
    return dests | own


def test_the_shard_flag_table_covers_every_corpus_flag_of_train():
    assert set(SHARD_FLAG_VALUES) == _train_corpus_dests()


@pytest.mark.parametrize("dest", sorted(SHARD_FLAG_VALUES))
def test_every_corpus_flag_on_a_shard_folder_is_refused_in_one_line(shards, tmp_path, capsys, dest):
    flag = [str(shards.parent / "words.txt") if v == "WORDS" else v for v in SHARD_FLAG_VALUES[dest]]
    rc, out, err = _run(capsys, "train", "--corpus", shards, "--topics", "2", "--iterations", "2", *flag,
                        "--out", tmp_path / "m")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    assert f"{flag[0]} has no effect on a shard folder" in lines[0] and "corpus:" not in out
    assert not (tmp_path / "m").exists()


def test_several_corpus_flags_on_a_shard_folder_are_named_together(shards, tmp_path, capsys):
    rc, out, err = _run(capsys, "train", "--corpus", shards, "--max-vocab", "5", "--min-df", "2", "--test-size", "0.3",
                        "--out", tmp_path / "m")
    assert rc == 2 and err.startswith("error: --max-vocab / --min-df / --test-size have no effect on a shard folder")
    assert "'dptopic corpus prepare'" in err and "dptopic evaluate" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("flag", [["--test-size", "0"], ["--format", "auto"]])
def test_a_corpus_flag_that_asks_for_what_a_shard_folder_does_is_honoured(shards, tmp_path, capsys, flag):
    rc, out, err = _run(capsys, "train", "--corpus", shards, "--topics", "2", "--iterations", "2", "--seed", "0",
                        "--quiet", *flag, "--out", tmp_path / "m")
    assert rc == 0, err
    assert "60 documents" in " ".join(out.split()) and (tmp_path / "m" / "model.json").exists()


def test_a_shard_folder_with_a_document_level_trainer_refuses_a_corpus_flag(shards, tmp_path, capsys):
    rc, out, err = _run(capsys, "train", "--corpus", shards, "--algorithm", "docdp", "--epsilon", "1", "--topics", "2",
                        "--max-vocab", "5", "--out", tmp_path / "m")
    assert rc == 2 and "--max-vocab has no effect on a shard folder" in err


def test_unit_word_with_a_small_epsilon_speaks_in_the_flags_typed(capsys, tmp_path):
    rc, out, err = _run(capsys, "train", "--unit", "word", "--epsilon", "1", "--out", tmp_path / "m")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1, err
    line = lines[0]
    assert line.startswith("error: --unit word --epsilon 1 is too small")
    assert "--epsilon-inherent" not in line and "epsilon_inherent" not in line and "--iterations 50" not in line
    assert "buys not one of them" in line and "--epsilon above 500" in line and "--unit document" in line


def test_unit_word_says_how_many_iterations_the_budget_buys(capsys, tmp_path):
    rc, out, err = _run(capsys, "train", "--unit", "word", "--epsilon", "100", "--iterations", "20",
                        "--out", tmp_path / "m")
    assert rc == 2 and "--iterations 20 cost 200 per word" in err
    assert "buys at most 10 of them" in err and "--iterations 10 or fewer" in err


def _private_corpus_with_copies(path):
    """Forty distinct documents, and copies of half of them at the end: the split sends copies to both sides."""
    texts = _texts(40, seed=3)
    path.write_text("\n".join(texts + texts[::2]) + "\n")
    return path


def test_held_out_copies_of_a_private_corpus_are_labelled_outside_the_guarantee(tmp_path, capsys):
    docs = _private_corpus_with_copies(tmp_path / "docs.txt")
    rc, out, err = _run(capsys, "train", "--corpus", docs, "--algorithm", "cdp", "--paper-epsilon", "1", "--topics", "2",
                        "--iterations", "2", "--seed", "0", "--quiet", "--out", tmp_path / "m")
    assert rc == 0, err
    line = next(ln for ln in " ".join(out.split()).split("held-out: ")[1:2])
    assert "repeat a training document" in line
    assert line.split(" left out of the evaluation ")[1].startswith(
        "(exact counts of the private corpus: outside the guarantee; shown here, not saved)")


def test_held_out_copies_of_a_non_private_run_carry_no_label(tmp_path, capsys):
    docs = _private_corpus_with_copies(tmp_path / "docs.txt")
    rc, out, err = _run(capsys, "train", "--corpus", docs, "--topics", "2", "--iterations", "2", "--seed", "0",
                        "--quiet", "--out", tmp_path / "m")
    flat = " ".join(out.split())
    assert rc == 0 and "repeat a training document" in flat
    assert "(exact counts of the private corpus" not in flat


def _zipf_texts(path, n_docs=400, seed=1):
    rng = np.random.default_rng(seed)
    V = 300
    p = 1 / np.arange(1, V + 1)
    words = ["".join(chr(97 + int(c)) for c in str(i)) + "word" for i in range(V)]
    path.write_text("\n".join(" ".join(rng.choice(words, 6, p=p / p.sum())) for _ in range(n_docs)) + "\n")
    return path


def test_a_private_vocabulary_too_small_for_the_topics_is_named_with_its_count(tmp_path, capsys):
    docs = _zipf_texts(tmp_path / "short.txt")
    rc, out, err = _run(capsys, "train", "--corpus", docs, "--private-vocabulary", "1,1e-6", "--topics", "3",
                        "--iterations", "2", "--seed", "0", "--quiet", "--out", tmp_path / "m")
    assert rc == 0, err
    kept = int(" ".join(out.split()).split("private vocabulary: ")[1].split()[0])
    warning = next(ln for ln in err.splitlines() if "--private-vocabulary kept" in ln)
    assert kept < 30 and warning.startswith(f"warning: --private-vocabulary kept {kept} words for 3 topics, too few")
    assert "larger EPS_V" in warning and "--vocabulary FILE" in warning and "fewer topics" in warning


def test_a_private_vocabulary_with_fewer_words_than_topics_is_refused_in_one_line(tmp_path, capsys):
    docs = _zipf_texts(tmp_path / "short.txt")
    rc, out, err = _run(capsys, "train", "--corpus", docs, "--private-vocabulary", "1,1e-6", "--topics", "40",
                        "--iterations", "2", "--seed", "0", "--quiet", "--out", tmp_path / "m")
    # the selection has spent its budget: how the file was read was said before it, then the one-line error
    note, *lines = err.strip().splitlines()
    assert note.startswith("note: read ") and "--format auto" in note
    assert rc == 2 and len(lines) == 1 and "words for 40 topics: fewer words than topics" in lines[0], err
    assert not (tmp_path / "m").exists()


ORANGE = ("content\tlang\tsource\nstring\tdiscrete\tstring\nmeta include=True\tclass\tmeta\n"
          "apple banana cherry apple\ten\tx\nbanana grape lemon\ten\tx\ncherry lemon mango plum\ten\ty\n"
          "river mountain valley ocean\ten\ty\n")


def test_an_orange_tab_file_is_read_as_a_table_and_the_choice_is_said(tmp_path, capsys):
    (tmp_path / "o.tab").write_text(ORANGE)
    rc, out, err = _run(capsys, "train", "--corpus", tmp_path / "o.tab", "--text-field", "content", "--topics", "2",
                        "--iterations", "2", "--test-size", "0", "--seed", "0", "--quiet", "--out", tmp_path / "m")
    assert rc == 0, err
    assert "4 documents" in " ".join(out.split())        # not the header rows, not the metadata columns
    note = next(ln for ln in err.splitlines() if ln.startswith("note: read "))
    assert "tab-separated values with Orange's header rows (names, types, flags)" in note
    assert "the text from column 'content'" in note and "--format auto" in note
    from dptopic.models import load

    words = set(load(tmp_path / "m").vocabulary_.words)
    assert not words & {"string", "discrete", "meta", "class", "en", "content", "lang"}


def test_a_tab_file_without_the_text_field_names_its_columns(tmp_path, capsys):
    (tmp_path / "o.tab").write_text(ORANGE)
    rc, out, err = _run(capsys, "train", "--corpus", tmp_path / "o.tab", "--out", tmp_path / "m")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "no column 'text' (columns: content, lang, source)" in lines[0]
    assert "--text-field" in lines[0] and not (tmp_path / "m").exists()


def test_a_plain_tsv_has_one_header_row(tmp_path, capsys):
    (tmp_path / "d.tsv").write_text("id\ttext\n1\tapple banana cherry\n2\tcherry grape lemon\n3\tlemon plum apple\n")
    rc, out, err = _run(capsys, "train", "--corpus", tmp_path / "d.tsv", "--topics", "2", "--iterations", "2",
                        "--test-size", "0", "--seed", "0", "--quiet", "--out", tmp_path / "m")
    assert rc == 0 and "3 documents" in " ".join(out.split())
    assert "tab-separated values with one header row, the text from column 'text'" in err


@pytest.mark.parametrize("name", ["docs.md", "docs"])
def test_an_unknown_extension_is_refused_not_read_as_text(tmp_path, capsys, name):
    (tmp_path / name).write_text("\n".join(_texts(10)) + "\n")
    rc, out, err = _run(capsys, "train", "--corpus", tmp_path / name, "--out", tmp_path / "m")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "--format auto reads a file by its extension" in lines[0]
    assert "--format text" in lines[0] and "corpus:" not in out
    # named, the format is read as asked
    rc, out, err = _run(capsys, "train", "--corpus", tmp_path / name, "--format", "text", "--topics", "2",
                        "--iterations", "2", "--seed", "0", "--quiet", "--out", tmp_path / "m")
    assert rc == 0 and "note: read" not in err


def test_a_text_file_read_by_its_extension_is_said_before_training(tmp_path, capsys):
    (tmp_path / "docs.txt").write_text("\n".join(_texts(10)) + "\n")
    rc, out, err = _run(capsys, "train", "--corpus", tmp_path / "docs.txt", "--topics", "2", "--iterations", "2",
                        "--seed", "0", "--quiet", "--out", tmp_path / "m")
    assert rc == 0
    assert "note: read '" in err and "as text, one document per line (--format auto, by its extension '.txt'" in err


def test_a_folder_of_texts_read_by_auto_is_said_as_such(tmp_path, capsys):
    folder = tmp_path / "texts"
    folder.mkdir()
    for i, t in enumerate(_texts(10)):
        (folder / f"{i}.txt").write_text(t)
    rc, out, err = _run(capsys, "train", "--corpus", folder, "--topics", "2", "--iterations", "2", "--seed", "0",
                        "--quiet", "--out", tmp_path / "m")
    assert rc == 0
    assert "as a folder of .txt files, one document per file (--format auto, it is a folder;" in err


def test_train_hides_the_words_of_topics_below_the_noise_unless_asked(tmp_path, capsys):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(_texts(300)) + "\n")      # words drawn at random: no topic stands above the noise
    base = ["train", "--algorithm", "docdp-cooc", "--corpus", docs, "--epsilon", "1", "--topics", "3", "--test-size",
            "0", "--seed", "0", "--quiet"]
    rc, out, err = _run(capsys, *base, "--out", tmp_path / "m")
    assert rc == 0, err
    flat = " ".join(out.split())
    assert "0 of 3 topics stand above the noise of the release" in flat and "inside the guarantee" in flat
    assert "below the noise: topics 0, 1, 2: words hidden (--show-unsupported" in flat
    assert "Top 10 words per topic" not in flat and "more documents, a larger epsilon" in flat
    rc, out, err = _run(capsys, *base, "--show-unsupported", "--out", tmp_path / "m2")
    assert rc == 0, err
    assert "Top 10 words per topic" in out and "0 (below the noise)" in " ".join(out.split())


def test_show_unsupported_is_refused_for_a_trainer_that_makes_no_assessment(tmp_path, capsys):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(_texts(20)) + "\n")
    rc, out, err = _run(capsys, "train", "--corpus", docs, "--topics", "2", "--iterations", "2", "--show-unsupported",
                        "--out", tmp_path / "m")
    assert rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: --show-unsupported")
    assert not (tmp_path / "m").exists()


# ---------------------------------------------------------------- --epsilon: the guarantee in total, in the unit
def test_cdp_takes_the_papers_figure_as_paper_epsilon_and_refuses_epsilon(tmp_path, capsys):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(_texts(30)) + "\n")
    rc, out, err = _run(capsys, "train", "--corpus", docs, "--algorithm", "cdp", "--epsilon", "1", "--topics", "2",
                        "--iterations", "2", "--quiet", "--out", tmp_path / "m")
    assert rc == 2 and "--paper-epsilon" in err and len(err.strip().splitlines()) == 1


def test_fed_epsilon_is_the_per_user_total_and_epsilon_per_entry_the_component(tmp_path, capsys):
    import json

    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(_texts(40)) + "\n")
    base = ["train", "--corpus", docs, "--algorithm", "fed", "--topics", "2", "--rounds", "1", "--clients", "4",
            "--pad-length", "16", "--quiet"]
    rc, out, err = _run(capsys, *base, "--epsilon", "96", "--out", tmp_path / "total")
    assert rc == 0, err
    rep = json.loads((tmp_path / "total" / "model.json").read_text())["privacy"]
    assert rep["epsilon_basic"] == pytest.approx(96.0) and rep["epsilon_per_entry"] == pytest.approx(6.0)
    rc, out, err = _run(capsys, *base, "--epsilon-per-entry", "6", "--out", tmp_path / "entry")
    assert rc == 0, err
    rep = json.loads((tmp_path / "entry" / "model.json").read_text())["privacy"]
    assert rep["epsilon_basic"] == pytest.approx(96.0) and rep["epsilon_per_entry"] == 6.0
    rc, out, err = _run(capsys, *base, "--epsilon", "96", "--epsilon-per-entry", "6", "--out", tmp_path / "both")
    assert rc == 2 and "not both" in err and len(err.strip().splitlines()) == 1


def test_train_epsilon_help_states_one_meaning():
    parser = build_parser()
    train = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "train")[1]
    text = " ".join(next(a for a in train._actions if "--epsilon" in a.option_strings).help.split())
    assert "in total" in text and "per user for fed" in text and "eps per reported word" not in text


def _hdp_base(tmp_path):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(_texts(30)) + "\n")
    return ["train", "--corpus", docs, "--algorithm", "hdp", "--topics", "2", "--iterations", "3", "--seed", "0",
            "--quiet"]


def test_hdp_epsilon_is_the_total_per_word_and_epsilon_laplace_the_component(tmp_path, capsys):
    import json

    base = _hdp_base(tmp_path)
    rc, out, err = _run(capsys, *base, "--epsilon", "200", "--out", tmp_path / "total")
    assert rc == 0, err
    rep = json.loads((tmp_path / "total" / "model.json").read_text())["privacy"]
    assert rep["epsilon"] <= 200.0 + 1e-9 and rep["epsilon"] > 100.0
    flat = " ".join(out.split())
    assert "per word in total (epsilon_laplace = " in flat and " per iteration)" in flat
    rc, out, err = _run(capsys, *base, "--epsilon-laplace", "1", "--out", tmp_path / "component")
    assert rc == 0, err
    flat = " ".join(out.split())
    assert "(epsilon_laplace = 1 per iteration)" in flat
    eps = json.loads((tmp_path / "component" / "model.json").read_text())["privacy"]["epsilon"]
    assert f"hdp: epsilon = " in flat and "per word in total" in flat and eps > 3.0


def test_hdp_epsilon_and_epsilon_laplace_together_are_refused(tmp_path, capsys):
    rc, out, err = _run(capsys, *_hdp_base(tmp_path), "--epsilon", "200", "--epsilon-laplace", "1",
                        "--out", tmp_path / "m")
    assert rc == 2 and "not both" in err and "--epsilon-laplace" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()


def test_train_budget_is_refused_naming_epsilon(tmp_path, capsys):
    rc, out, err = _run(capsys, *_hdp_base(tmp_path), "--budget", "200", "--out", tmp_path / "m")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "--budget" in lines[0] and "--epsilon" in lines[0]
    assert not (tmp_path / "m").exists()


def test_train_epsilon_help_has_no_hdp_exception():
    parser = build_parser()
    train = next(a for a in parser._subparsers._group_actions[0].choices.items() if a[0] == "train")[1]
    text = " ".join(next(a for a in train._actions if "--epsilon" in a.option_strings).help.split())
    assert "Exception" not in text and "per iteration (default 1" not in text and "hdp" in text
    assert any("--epsilon-laplace" in a.option_strings for a in train._actions)


def test_fed_report_words_takes_the_component_under_its_own_name(capsys):
    rc, out, err = _run(capsys, "privacy", "fed-report-words", "--epsilon", "5", "--vocab-size", "1000", "--users", "119")
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and "--epsilon-per-entry" in lines[0]
    rc, out, err = _run(capsys, "privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1000",
                        "--users", "119")
    assert rc == 0 and "per entry" in out, err


def test_hdp_no_noise_refuses_an_epsilon_laplace_it_would_ignore(tmp_path, capsys):
    rc, out, err = _run(capsys, *_hdp_base(tmp_path), "--no-noise", "--epsilon-laplace", "1", "--out", tmp_path / "m")
    assert rc == 2 and "--epsilon-laplace" in err and len(err.strip().splitlines()) == 1


def test_recovery_reaches_the_document_level_trainer_and_another_trainer_refuses_it(tmp_path, capsys):
    import json

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(_texts(80)) + "\n")
    for recovery in ("nmf", "refined-anchors"):
        out = tmp_path / recovery
        rc, _, err = _run(capsys, "train", "--corpus", src, "--unit", "document", "--epsilon", "4", "--topics", "3",
                          "--recovery", recovery, "--out", out, "--quiet")
        assert rc in (0, None), err
        assert json.loads((out / "model.json").read_text())["params"]["recovery"] == recovery
    rc, out, err = _run(capsys, "train", "--corpus", src, "--algorithm", "docdp", "--epsilon", "1", "--recovery",
                        "nmf", "--out", tmp_path / "other")
    assert rc not in (0, None) and "--recovery" in out + err and "Traceback" not in out + err
    with pytest.raises(SystemExit) as e:
        main(["train", "--corpus", str(src), "--unit", "document", "--epsilon", "1", "--recovery", "svd"])
    assert e.value.code == 2 and "--recovery" in capsys.readouterr().err
