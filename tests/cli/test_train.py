"""``dptopic train``: how it reads a corpus (a shard folder honours or refuses every corpus flag, --format auto never
guesses silently), what it says when a budget or a private vocabulary is too small, and the label on the exact counts
it prints."""
import argparse
import json
import math
import re
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dptopic
from dptopic import DPSVI, load
from dptopic.cli._common import add_corpus_args
from dptopic.cli.main import build_parser, main
from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models.base import GibbsTopicModel
from dptopic.models.docdp_cooc import DocDPCooccurrence
from dptopic.models.registry import TRAINERS
from helpers import (
    NUMBER_TOKENS,
    TcpListener,
    cli_error_line,
    cli_exit_code,
    letter_word,
    one_line_stderr,
    prepare_shards,
    run_dptopic,
    subprocess_error_line,
    write_posts,
)

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
    "keep_urls": ["--keep-urls"],
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
    assert "None of the 3 topics stands above the noise of the release" in flat and "inside the guarantee" in flat
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
    assert "hdp: epsilon = " in flat and "per word in total" in flat and eps > 3.0


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


def test_cdp_takes_the_count_releases_delta_as_count_release_delta_and_refuses_delta(tmp_path, capsys):
    docs = tmp_path / "docs.txt"
    docs.write_text("\n".join(_texts(30)) + "\n")
    base = ["train", "--corpus", docs, "--algorithm", "cdp", "--topics", "2", "--iterations", "2", "--quiet"]
    rc, out, err = _run(capsys, *base, "--delta", "1e-6", "--out", tmp_path / "m")
    assert rc == 2 and "--count-release-delta" in err and len(err.strip().splitlines()) == 1, err
    rc, out, err = _run(capsys, *base, "--count-release-delta", "1e-6", "--out", tmp_path / "m2", "--test-size", "0")
    assert rc == 0, err
    import dptopic

    assert dptopic.load(tmp_path / "m2").count_release_delta == 1e-6
def test_evaluate_says_when_top_n_is_cut_to_the_vocabulary(tmp_path, capsys):
    from dptopic.cli.main import main

    texts = tmp_path / "t.txt"
    texts.write_text("\n".join(["apple pear banana fruit", "engine wheel brake car", "apple fruit pear",
                                "car engine brake"] * 10))
    assert main(["train", "--algorithm", "lda", "--corpus", str(texts), "--topics", "2", "--iterations", "5",
                 "--seed", "0", "--out", str(tmp_path / "m")]) in (0, None)
    capsys.readouterr()
    assert main(["evaluate", str(tmp_path / "m"), "--corpus", str(texts), "--top-n", "5000"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "--top-n 5000 is more than the model's 8 words: the top 8 are used" in out and "NPMI (top 8," in out


def test_unit_document_trains_the_cooccurrence_model(tmp_path, capsys):
    from dptopic.cli.main import main
    texts = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
             "war troops army peace treaty", "school education teachers students", "students teachers education college"]
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(texts * 20))
    out = tmp_path / "m"
    shown, filters = warnings.showwarning, list(warnings.filters)
    assert main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "1", "--delta", "1e-5",
                 "--topics", "3", "--out", str(out), "--quiet"]) == 0
    # the command's one-line warnings and its silencing of the model's own warning end with it
    assert warnings.showwarning is shown and warnings.filters == filters
    # 96 training documents at epsilon 1: far below any measured setting, so the figure is only an upper bound
    captured = capsys.readouterr()
    printed = " ".join(captured.out.split())
    warned = " ".join(captured.err.split())                  # the command's warning: on stderr
    assert "expect topics with less than" in warned and "the figure at the smallest setting measured" in warned
    assert "forecast read at: document level, epsilon 1" in warned   # recommend's forecast, its inputs named
    assert "DocDPCooccurrence: at epsilon" not in captured.err      # the model's own warning is not repeated
    # NPMI is read from held-out documents of the private corpus: said beside it, and not saved
    assert "NPMI and perplexity are computed on held-out documents of the private corpus: outside the guarantee" \
        in printed
    meta = json.loads((out / "model.json").read_text())
    assert meta["class"] == "DocDPCooccurrence" and meta["params"]["seed"] is None
    assert "metrics" not in meta or not meta["metrics"]
    assert meta["privacy"]["unit"] == "document" and meta["privacy"]["epsilon"] <= 1.0
    assert dptopic.for_unit("document", 1.0).__class__ is DocDPCooccurrence
    assert main(["train", "--corpus", str(p), "--algorithm", "docdp-cooc", "--topics", "3", "--out",
                 str(tmp_path / "m2"), "--quiet"]) == 2
    assert "needs --epsilon" in capsys.readouterr().err


def test_cli_turns_the_defaults_off_and_refuses_bad_values(tmp_path, capsys):
    from dptopic.cli.main import main
    texts = ["budget deficit tax revenue spending said", "army navy war defense troops said",
             "school education teachers students said"]
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(texts * 40))
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "50", "--topics", "12",
                 "--background-share", "off", "--n-words", "12", "--out", str(out), "--quiet"]) in (0, None)
    meta = json.loads((out / "model.json").read_text())
    assert meta["params"]["background_share"] is None and meta["params"]["n_words"] == 12
    assert meta["privacy"]["parameters"]["background_topics"] == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "1", "--n-words", "1",
              "--out", str(tmp_path / "m2")])
    assert e.value.code == 2 and "auto or an integer >= 2" in capsys.readouterr().err
    # --word-choice reaches the model, with its own ranking noise; another trainer refuses it in one line
    out3 = tmp_path / "m3"
    assert main(["train", "--corpus", str(p), "--unit", "document", "--epsilon", "50", "--topics", "12",
                 "--word-choice", "repetition", "--recovery", "nmf", "--out", str(out3), "--quiet"]) in (0, None)
    meta = json.loads((out3 / "model.json").read_text())
    assert meta["params"]["word_choice"] == "repetition"
    assert meta["privacy"]["parameters"]["word_choice"] == "repetition"
    assert "word-count" in meta["privacy"]["events"][0]["label"]
    capsys.readouterr()
    assert main(["train", "--corpus", str(p), "--algorithm", "docdp", "--epsilon", "1", "--word-choice",
                 "repetition", "--out", str(tmp_path / "m4")]) not in (0, None)
    err = capsys.readouterr()
    assert "--word-choice" in err.out + err.err and "Traceback" not in err.out + err.err


@pytest.mark.filterwarnings('ignore')
def test_deeply_nested_json_inputs_get_one_line(tmp_path, capsys):
    from dptopic.cli.main import main

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000 + "\n")
    assert main(["train", "--corpus", str(deep), "--topics", "2", "--iterations", "2", "--out",
                 str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_train_private_vocabulary_huge_epsilon_cli(tmp_path):
    subprocess_error_line(run_dptopic("train", "--corpus", "demo", "--topics", 2, "--iterations", 1, "--private-vocabulary",
                         "1000,1e-5", "--out", tmp_path / "x", timeout=300), "--private-vocabulary", "(0, 500]")


def test_scheduler_cli_malformed(tmp_path, textfile):
    subprocess_error_line(run_dptopic("train", "--corpus", textfile, "--topics", 2, "--iterations", 1, "--scheduler",
                         "tcp://[::1:5", "--out", tmp_path / "x"), "invalid --scheduler")


def test_scheduler_cli_refuses_a_web_server_in_one_line(tmp_path, textfile, monkeypatch):
    from dptopic.backends import cluster

    # the listener never greets: wait 1 s for the greeting, not the default PROBE_SECONDS
    monkeypatch.setattr(cluster.probe_scheduler, "__defaults__", (1.0,))
    srv = TcpListener()
    try:
        r = run_dptopic("train", "--corpus", textfile, "--topics", 2, "--iterations", 1, "--scheduler", srv.address,
                 "--out", tmp_path / "x", timeout=60)
    finally:
        srv.close()
    subprocess_error_line(r, "not a Dask scheduler", "sent no greeting")
    assert not (tmp_path / "x").exists()


def test_dask_local_is_bounded(tmp_path):
    subprocess_error_line(run_dptopic("train", "--corpus", "demo", "--topics", 2, "--iterations", 1, "--dask-local",
                         "99999999999999999999", "--out", tmp_path / "x", timeout=60), "--dask-local")


def _ok(args, capsys):
    assert main(args) == 0
    capsys.readouterr()


# item 16 (and 23: shards) ------------------------------------------------------------------------------------------
def test_randomize_refuses_a_users_file(sotu_model_with_vocabulary, tmp_path, capsys):
    src, vocab, _, _ = sotu_model_with_vocabulary
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes")
    args = ["randomize", "--vocabulary", str(vocab), "--corpus", str(src), "--epsilon-word", "1"]
    assert "refusing" in cli_error_line(capsys, args + ["--out", str(notes), "--overwrite"])
    assert notes.read_text() == "my notes"
    rep = tmp_path / "r.bin"
    _ok(args + ["--out", str(rep)], capsys)
    assert "--overwrite" in cli_error_line(capsys, args + ["--out", str(rep)])
    _ok(args + ["--out", str(rep), "--overwrite"], capsys)


def test_audit_out_rule(sotu_model_with_vocabulary, tmp_path, capsys):
    src, _, model, _ = sotu_model_with_vocabulary
    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "audit.json").write_text("mine")
    base = ["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4", "--seed", "1", "--quiet"]
    assert "refusing" in cli_error_line(capsys, base + ["--out", str(mine), "--overwrite"])
    assert (mine / "audit.json").read_text() == "mine"
    out = tmp_path / "ours"
    _ok(base + ["--out", str(out)], capsys)
    assert "--overwrite" in cli_error_line(capsys, base + ["--out", str(out)])
    _ok(base + ["--out", str(out), "--overwrite"], capsys)
    (out / "notes.txt").write_text("mine")  # a user's file inside: refused even with --overwrite
    assert "refusing" in cli_error_line(capsys, base + ["--out", str(out), "--overwrite"])


def test_corpus_prepare_shards_overwrite(sotu_model_with_vocabulary, tmp_path, capsys):
    src = sotu_model_with_vocabulary[0]
    out = tmp_path / "shards"
    args = ["corpus", "prepare", "--corpus", str(src), "--shards", "2", "--out", str(out)]
    _ok(args, capsys)
    assert "--overwrite" in cli_error_line(capsys, args)
    _ok(args + ["--overwrite"], capsys)
    assert len(list(out.glob("shard-*.npz"))) == 2
    (out / "notes.txt").write_text("mine")
    assert "refusing" in cli_error_line(capsys, args + ["--overwrite"])


# items 21 and 23 ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sched", ["garbage", "", "http://127.0.0.1:1"])
def test_bad_scheduler_one_line(sched, sotu_model_with_vocabulary, tmp_path, capsys):
    pytest.importorskip("distributed")
    err = cli_error_line(capsys, ["train", "--corpus", str(sotu_model_with_vocabulary[0]), "--topics", "2", "--iterations", "1", "--scheduler", sched,
                "--out", str(tmp_path / "m"), "--quiet"])
    assert "--scheduler" in err


WORDS_2 = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _cli_2(*args, cwd=None):
    return run_dptopic(*args, cwd=cwd)


# ---- items 20-22: caps, ranges and flags that do not apply
def test_caps_ranges_and_foreign_flags(tmp_path):
    out = ["--out", str(tmp_path / "m")]
    assert "steps" in one_line_stderr(_cli_2("train", "--algorithm", "svi", "--epsilon", "1", "--sampling-rate",
                                           "1e-300", *out))
    assert "steps" in one_line_stderr(_cli_2("train", "--algorithm", "svi", "--epsilon", "1", "--epochs", "1e9", *out))
    assert "alpha" in one_line_stderr(_cli_2("train", "--alpha", "1e-320", "--iterations", "2", *out))
    assert "alpha" in one_line_stderr(_cli_2("train", "--algorithm", "online-vb", "--alpha", "1e-320", *out))
    assert "whole passes" in one_line_stderr(_cli_2("train", "--algorithm", "online-vb", "--epochs", "0.2", *out))
    assert "--iterations" in one_line_stderr(_cli_2("train", "--algorithm", "fed", "--iterations", "5", *out))
    assert "--corpus" in one_line_stderr(_cli_2("train", "--algorithm", "lp", "--corpus", "demo", "--max-vocab", "3",
                                              *out))
    assert "exceeds the vocabulary" in one_line_stderr(_cli_2("train", "--algorithm", "online-vb", "--topics", "100000",
                                                            *out))
    (tmp_path / "v.txt").write_text("\n".join(WORDS_2))
    (tmp_path / "d.txt").write_text("apple pear\n")
    assert "protects nothing" in one_line_stderr(_cli_2("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--f",
                                                      "1e-320", "--corpus", str(tmp_path / "d.txt"), "--out",
                                                      str(tmp_path / "r.dpr")))
    assert "is a directory" in one_line_stderr(_cli_2("train", "--algorithm", "lp", "--reports", str(tmp_path), *out))
    with pytest.raises(DPTopicError, match="alpha"):
        dptopic.LDA(alpha=1e-320).fit(lda_corpus(n_docs=10, vocab_size=10, n_topics=2, doc_length=5, seed=0).corpus)


# ---- item 23: warnings in one line; no hidden folder left by a killed save
def test_cli_warnings_are_one_line(tmp_path):
    r = _cli_2("train", "--algorithm", "fed", "--topics", "3", "--clients", "10", "--rounds", "1", "--pad-length", "16",
             "--seed", "1", "--max-vocab", "50", "--out", str(tmp_path / "f"))
    assert r.returncode == 0, r.stderr
    assert "warning: FedLDA with an explicit seed" in r.stderr and "UserWarning" not in r.stderr


def test_cli_svi_with_private_vocabulary_saves(tmp_path):
    # 300 documents of 12 words: every word is common enough for the private set union to keep it
    r = run_dptopic("train", "--corpus", write_posts(tmp_path, n=300), "--algorithm", "svi", "--private-vocabulary",
                    "0.5,1e-6", "--epsilon", "2", "--topics", "5", "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr[-2000:]
    rep = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]
    assert rep["private"] and "vocabulary_selection" in rep and math.isfinite(rep["epsilon"])


def _train(args, textfile, out):
    return main(["train", "--corpus", str(textfile), "--topics", "3", "--iterations", "5", "--out", str(out),
                 "--quiet", *args])


# ------------------------------------------------- 2. training-data statistics
def test_train_keeps_private_metrics_out_of_the_bundle_unless_asked(textfile, tmp_path, capsys, monkeypatch):
    seen = []
    real = GibbsTopicModel.coherence
    monkeypatch.setattr(GibbsTopicModel, "coherence",
                        lambda self, X, **kw: seen.append((type(self).__name__, X.n_docs)) or real(self, X, **kw))
    assert _train(["--algorithm", "hdp"], textfile, tmp_path / "h") == 0
    # the private model's coherence once, on the held-out part (about 20% of the 50 documents: 8 by the stable
    # split), never on the training part (about 40); the non-private reference printed beside it (LDA on the same
    # split) scores the same held-out part
    assert [n for name, n in seen if name == "HDPLDA"] == [seen[0][1]] and all(1 <= n <= 15 for _, n in seen)
    meta = json.loads((tmp_path / "h" / "model.json").read_text())
    assert meta["metrics"] == {} and "metrics_guarantee" not in meta
    assert "not saved" in " ".join(capsys.readouterr().out.split())
    assert _train(["--algorithm", "hdp", "--save-metrics"], textfile, tmp_path / "s") == 0
    meta = json.loads((tmp_path / "s" / "model.json").read_text())
    assert "perplexity_completion" in meta["metrics"] and "outside the guarantee" in meta["metrics_guarantee"]
    assert "outside the guarantee" in " ".join(capsys.readouterr().out.split())
    assert _train([], textfile, tmp_path / "l") == 0  # non-private LDA keeps saving its metrics
    assert "perplexity_completion" in json.loads((tmp_path / "l" / "model.json").read_text())["metrics"]


def test_cli_vocabulary_file(textfile, tmp_path, capsys):
    vocab = ["tax", "budget", "war", "army", "students", "teachers", "unseenword"]
    (tmp_path / "v.txt").write_text("\n".join(vocab) + "\n")
    assert _train(["--algorithm", "hdp", "--vocabulary", str(tmp_path / "v.txt")], textfile, tmp_path / "m") == 0
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert meta["vocabulary"] == vocab and meta["privacy"]["vocabulary"].startswith("supplied by the user")
    assert main(["train", "--corpus", str(textfile), "--vocabulary", str(tmp_path / "none.txt")]) == 2
    assert "one word per line" in capsys.readouterr().err


def test_cli_train_private_vocabulary(tmp_path):
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:1500]))
    out = tmp_path / "m"
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--topics", "3", "--iterations", "2",
                 "--private-vocabulary", "1.0,1e-5", "--out", str(out), "--quiet", "--seed", "0"]) == 0
    meta = json.loads((out / "model.json").read_text())
    rep = meta["privacy"]
    assert rep["vocabulary_selection"]["epsilon"] == 1.0 and rep["warnings"]
    # the vocabulary protects a whole document (add/remove): the exact corpus sizes would undo that, so only the
    # released vocabulary size is saved
    assert meta["training"] == {"vocab_size": len(meta["vocabulary"])}
    assert "gaussian" in json.dumps(rep["vocabulary_selection"])          # the default policy
    out2 = tmp_path / "m2"
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--topics", "3", "--iterations", "2",
                 "--private-vocabulary", "1.0,1e-5", "--vocabulary-policy", "laplace", "--out", str(out2), "--quiet",
                 "--seed", "0"]) == 0
    sel = json.dumps(json.loads((out2 / "model.json").read_text())["privacy"]["vocabulary_selection"])
    assert "laplace" in sel and "frequency" in sel
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--vocabulary-policy", "laplace",
                 "--out", str(tmp_path / "m3"), "--quiet"]) == 2          # a policy without --private-vocabulary


def test_a_private_vocabularys_scope_and_corpus_line_do_not_call_the_corpus_sizes_public(tmp_path, capsys):
    # (review, 2026-11-24) the sizes are no longer saved, but the scope still said they were public under word
    # replacement and the corpus line labelled them so: the vocabulary's guarantee protects whole documents
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:1500]))
    assert main(["train", "--corpus", str(src), "--algorithm", "hdp", "--topics", "3", "--iterations", "2",
                 "--private-vocabulary", "1.0,1e-5", "--out", str(tmp_path / "m"), "--quiet", "--seed", "0"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "sizes are public" not in printed and "outside the guarantee; shown here, not saved" in printed
    scope = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]["scope"]
    assert "public under word replacement" not in scope and "count and lengths are not saved" in scope


TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 3


# ------------------------------------------------------------------ the CLI maps errors to exit 2


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(flag=st.sampled_from(["--alpha", "--beta", "--topics", "--iterations", "--epsilon", "--delta", "--max-vocab",
                             "--test-size", "--seed"]), v=NUMBER_TOKENS)
def test_cli_train_parameters(flag, v, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("train")
    (tmp / "docs.txt").write_text("\n".join(TEXTS * 2))
    algo = ["--algorithm", "cdp"] if flag == "--delta" else ["--algorithm", "docdp"] if flag == "--epsilon" else []
    cli_exit_code(["train", "--corpus", str(tmp / "docs.txt"), "--topics", "2", "--iterations", "2", *algo, flag, v,
             "--out", str(tmp / "m"), "--quiet"])


# ------------------------------------------------------------------ audits and experiments
def _tiny_jsonl(path, n=120, seed=0):
    import json

    rng = np.random.default_rng(seed)
    themes = [["apple", "banana", "cherry", "grape", "melon"], ["engine", "wheel", "brake", "motor", "piston"],
              ["violin", "piano", "cello", "flute", "drums"]]
    path.write_text("\n".join(json.dumps({"text": " ".join(rng.choice(themes[i % 3], 12))}) for i in range(n)) + "\n")


@pytest.mark.parametrize("budget", ["1e12", "1e30", "1e300"])
def test_a_huge_user_budget_is_refused_at_once(capsys, budget, tmp_path):
    """`--user-budget 1e30` spun for hours in a one-step search before the size check."""
    import dptopic

    line = cli_error_line(capsys, ["train", "--algorithm", "fed", "--user-budget", budget, "--corpus", "demo",
                                "--topics", "3", "--out", tmp_path / "unused"])
    assert f"--user-budget {float(budget):g} is too large" in line and "more than the 1e+07 an update may hold" in line
    with pytest.raises(DPTopicError, match="invalid pad_length="):
        dptopic.FedLDA.from_user_budget(float(budget), 26)


@pytest.mark.parametrize("epochs", ["inf", "1e309"])
def test_online_vb_refuses_infinite_epochs_in_one_line(capsys, epochs, tmp_path):
    assert "invalid --epochs inf for online-vb" in cli_error_line(
        capsys, ["train", "--algorithm", "online-vb", "--epochs", epochs, "--corpus", "demo", "--out",
                 tmp_path / "unused"])


def test_a_model_trained_on_dask_is_audited_with_its_shadows_on_threads(tmp_path, capsys):
    """audit --model of a Dask-trained model failed: the shadows took backend='dask' with no client, and the error
    named flags audit does not have. Where shadows run is no part of the procedure audited."""
    import json

    import dptopic

    _tiny_jsonl(tmp_path / "d.jsonl")
    assert main(["train", "--corpus", str(tmp_path / "d.jsonl"), "--topics", "3", "--iterations", "3", "--seed", "1",
                 "--quiet", "--out", str(tmp_path / "m")]) in (0, None)
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["params"]["backend"] = "dask"              # as a model trained with --dask-local records it
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert dptopic.load(tmp_path / "m").backend == "dask"
    capsys.readouterr()
    rc = main(["audit", "--model", str(tmp_path / "m"), "--corpus", str(tmp_path / "d.jsonl"), "--shadows", "4",
               "--seed", "1", "--quiet", "--out", str(tmp_path / "a")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None) and (tmp_path / "a" / "audit.json").exists()
    assert "trained on a Dask cluster, its shadows run on threads here" in out


# ----------------------------------------------------------------------------- CLI


def test_cli_train_svi(svi_textfile, tmp_path, capsys):
    from dptopic.cli.main import main

    out = tmp_path / "m"
    assert main(["train", "--algorithm", "svi", "--corpus", str(svi_textfile), "--topics", "3", "--epsilon", "3",
                 "--delta", "1e-5", "--sampling-rate", "0.5", "--clip", "5", "--epochs", "1", "--quiet",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "tight PLD" in text and "clipped documents" in text
    m = load(out)
    assert isinstance(m, DPSVI) and m.privacy_["epsilon_pld"] <= 3
    assert main(["train", "--algorithm", "online-vb", "--corpus", str(svi_textfile), "--topics", "3", "--epochs", "2",
                 "--quiet", "--out", str(tmp_path / "o")]) == 0


TEXTS_2 = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 8


def test_cli_evaluate_compare_to(tmp_path, capsys):
    corpus = tmp_path / "docs.txt"
    corpus.write_text("\n".join(TEXTS_2))
    a, b = tmp_path / "a", tmp_path / "b"
    for out, seed in ((a, "1"), (b, "2")):
        assert main(["train", "--corpus", str(corpus), "--topics", "3", "--iterations", "30", "--seed", seed,
                     "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--model", str(a), "--corpus", str(corpus), "--compare-to", str(a), "--seed", "0"]) == 0
    text = " ".join(capsys.readouterr().out.split())      # the console wraps long lines
    assert "match to the topics of" in text and ": 1.000 (mean cosine of 3 " in text
    assert main(["evaluate", "--model", str(a), "--corpus", str(corpus), "--compare-to", str(b), "--seed", "0",
                 "--json"]) == 0
    q = json.loads(capsys.readouterr().out)
    assert 0.0 <= q["match"]["match"] <= 1.0 and q["match"]["matched"] == 3
    assert q["match"]["reference_model"] == str(b)
    assert main(["evaluate", "--model", str(a), "--corpus", str(corpus), "--compare-to",
                 str(tmp_path / "missing")]) != 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def shards_2(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("shards55")
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(0)
    src = tmp / "docs.txt"
    src.write_text("\n".join(" ".join(rng.choice(words, 12)) for _ in range(60)) + "\n")
    out = tmp / "sh"
    assert main(["corpus", "prepare", "--corpus", str(src), "--shards", "2", "--out", str(out) + "/"]) == 0
    return out


@pytest.mark.parametrize("args", [["--algorithm", "online-vb", "--epochs", "1"],
                                  ["--algorithm", "svi", "--epsilon", "1"],
                                  ["--algorithm", "fed", "--rounds", "2"]])
def test_a_trainer_that_cannot_stream_shards_is_refused_first(shards_2, tmp_path, capsys, args):
    capsys.readouterr()
    assert main(["train", "--corpus", str(shards_2), "--topics", "2", *args, "--out", str(tmp_path / "m")]) != 0
    cap = capsys.readouterr()
    err = cap.err.strip().splitlines()
    assert len(err) == 1 and f"--algorithm {args[1]} cannot train from a shard folder" in err[0]
    listed = re.search(r"\(only (\S+) read one shard at a time\)", err[0]).group(1).split("/")
    assert sorted(listed) == sorted(["lda", "cdp", "cdp+", "hdp", "docdp", "docdp-cooc"]) and "corpus:" not in cap.out


def test_test_size_on_a_shard_folder_is_refused(shards_2, tmp_path, capsys):
    capsys.readouterr()
    assert main(["train", "--corpus", str(shards_2), "--topics", "2", "--iterations", "2", "--test-size", "0.3",
                 "--out", str(tmp_path / "m")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--test-size has no effect on a shard folder" in err[0]
    # without it, the same folder trains
    assert main(["train", "--corpus", str(shards_2), "--topics", "2", "--iterations", "2", "--seed", "0", "--quiet",
                 "--out", str(tmp_path / "m2")]) == 0


def test_hdp_epsilon_above_one_events_range_is_refused_before_the_corpus_loads(capsys, tmp_path):
    # review: `train --algorithm hdp --epsilon 2000` loaded the corpus and started the fit before its one-line error
    assert main(["train", "--algorithm", "hdp", "--epsilon-laplace", "2000", "--iterations", "2", "--out",
                 str(tmp_path / "unused")]) == 2
    out, err = capsys.readouterr()
    assert "invalid --epsilon-laplace 2000.0" in err and "left out of the evaluation" not in out + err
    with pytest.raises(DPTopicError, match="epsilon_laplace"):
        dptopic.HDPLDA(epsilon_laplace=2000).fit(np.ones((4, 6), dtype=int))


def test_train_refuses_a_partial_shard_folder_in_one_line(tmp_path, capsys):
    out = tmp_path / "sh"
    assert prepare_shards(tmp_path, out, 4) == 0
    (out / "shard-00003.npz").unlink()
    (out / ".dptopic-output").unlink()
    capsys.readouterr()
    err = cli_error_line(capsys, ["train", "--corpus", str(out), "--topics", "2", "--iterations", "2",
                          "--out", str(tmp_path / "m")])
    assert "incomplete" in err and str(out) in err and "corpus prepare" in err


def test_the_max_vocab_note_is_dropped_when_the_command_then_fails(tmp_path, capsys):
    # the note waits for the command's end: an error after the corpus loaded stays one line on stderr
    words = [f"w{chr(97 + i // 676)}{chr(97 + i // 26 % 26)}{chr(97 + i % 26)}" for i in range(1200)]
    (tmp_path / "t.txt").write_text("".join(" ".join(words[i:i + 60]) + "\n" for i in range(0, 1200, 60)))
    assert main(["train", "--corpus", str(tmp_path / "t.txt"), "--topics", "1500", "--iterations", "2",
                 "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "exceeds the vocabulary size 1000" in err and "note:" not in err, err
    # and a later command that succeeds does not print the failed one's note
    assert main(["corpus", "info", str(tmp_path / "t.txt"), "--json", "--max-vocab", "2000"]) == 0
    assert "note:" not in capsys.readouterr().err


def test_a_model_folder_records_the_vocabulary_cuts_that_built_its_words(tmp_path):
    # walk B, finding 6: model.json kept stop words, lowercase and min_length but not --max-vocab/--min-df/--max-df
    import json

    import dptopic
    from dptopic.cli.main import main

    (tmp_path / "pp.txt").write_text("apple banana cherry\nbanana cherry durian\napple durian cherry fig\nelder fig\n")
    assert main(["train", "--corpus", str(tmp_path / "pp.txt"), "--max-df", "3", "--max-vocab", "50", "--topics", "2",
                 "--iterations", "3", "--out", str(tmp_path / "m")]) in (0, None)
    tok = json.loads((tmp_path / "m" / "model.json").read_text())["tokenizer"]
    assert tok["vocabulary_cuts"] == {"max_vocab": 50, "min_df": 1, "max_df": 3}
    assert dptopic.load(tmp_path / "m").tokenizer_["vocabulary_cuts"]["max_df"] == 3


# ---------------------------------------------------------------- item 7: OpenDP checked before the data
def _no_opendp(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp", None)     # "import opendp.prelude" now raises ImportError
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)


def _touched(*a, **kw):
    raise AssertionError("the data was read before OpenDP was checked")


def test_train_checks_opendp_after_its_flags_and_before_the_corpus(capsys, monkeypatch, tmp_path):
    # a missing OpenDP is one line before any corpus is read, but only once the flags are known to apply: a flag
    # refusal (--secure with --seed, --secure on a trainer that takes none) keeps its own message
    from dptopic.cli import train as cli_train
    from dptopic.cli.main import main

    _no_opendp(monkeypatch)
    monkeypatch.setattr(cli_train, "_training_corpus", lambda *a, **k: _touched(None))
    missing = tmp_path / "never-read.txt"
    argv = ["train", "--corpus", str(missing), "--topics", "2", "--iterations", "2", "--out", str(tmp_path / "m")]
    assert main(argv + ["--algorithm", "hdp", "--secure"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: secure mode needs OpenDP")
    assert main(argv + ["--algorithm", "hdp", "--secure", "--seed", "1"]) == 2
    assert "refuses a seed" in capsys.readouterr().err


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("c") / "docs.txt"
    path.write_text("\n".join(_texts_2(60, 40, 3)) + "\n")
    return path


def _texts_2(n_docs, vocab_size, seed):
    c, _, _, _ = lda_corpus(n_docs=n_docs, vocab_size=vocab_size, n_topics=3, doc_length=12, seed=seed)
    return [" ".join(letter_word(w) for w in c.word_ids[c.doc_ptr[d]:c.doc_ptr[d + 1]]) for d in range(c.n_docs)]


def test_cli_tiny_failure_rate_names_the_flag(corpus_file, tmp_path, capsys):
    rc = main(["train", "--algorithm", "fed", "--corpus", str(corpus_file), "--topics", "3", "--rounds", "1",
               "--exclusion", "tail", "--failure-rate", "1e-9", "--pad-length", "8", "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 2 and "--failure-rate" in err and len(err.strip().splitlines()) == 1, err


# 4 / B4 -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flag", [["--replacement", "topic"], ["--variant", "coincide"], ["--failure-rate", "0.5"]])
def test_floor_tail_flags_are_refused_with_exclusion_none(flag, corpus_file, tmp_path, capsys):
    rc = main(["train", "--algorithm", "fed", "--corpus", str(corpus_file), "--topics", "3", "--out",
               str(tmp_path / "m")] + flag)
    err = capsys.readouterr().err
    assert rc == 2 and f"{flag[0]} applies to --exclusion floor/tail only" in err and "Traceback" not in err


def test_parallel_with_dask_is_refused(corpus_file, tmp_path, capsys):
    rc = main(["train", "--corpus", str(corpus_file), "--dask-local", "1", "--parallel", "partition", "--out",
               str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert rc == 2 and "--parallel has no effect on a Dask cluster" in err


def test_train_says_how_the_held_out_part_was_chosen(tmp_path, capsys):
    # word-level trainers hold out by position, the others by each document's words: two runs a user compares may
    # then hold out different documents, and the corpus line says which split each used
    from dptopic.cli.main import main

    f = tmp_path / "d.txt"
    f.write_text("".join(f"galaxy orbit rocket launch planet{'s' * (i % 3)} moon crater\n" for i in range(30)))
    said = {}
    for algo in ("lda", "hdp"):
        assert main(["train", "--algorithm", algo, "--corpus", str(f), "--topics", "2", "--iterations", "2",
                     "--quiet", "--out", str(tmp_path / algo)]) in (0, None)
        said[algo] = " ".join(capsys.readouterr().out.split())
    assert "held out by each document's words" in said["lda"] and "held out by position" not in said["lda"]
    assert "held out by position, as the word-level trainers split" in said["hdp"]


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


def test_the_small_corpus_warning_goes_to_stderr(tmp_path, capsys):
    from dptopic.cli.main import main

    posts = write_posts(tmp_path, 30)
    assert main(["train", "--corpus", str(posts), "--unit", "document", "--epsilon", "1", "--topics", "3",
                 "--test-size", "0", "--quiet", "--out", str(tmp_path / "m")]) == 0
    cap = capsys.readouterr()
    assert "warning: at epsilon 1 and 30 training documents" in " ".join(cap.err.split()) and "warning:" not in cap.out


@pytest.mark.parametrize("argv, flag", [
    (["train"], "--jobs"),
    (["audit"], "--topics"), (["audit"], "--iterations"), (["audit"], "--epsilon"), (["audit"], "--delta"),
    (["experiment", "topic-attack"], "--targets"), (["experiment", "olp"], "--iterations"),
])
def test_help_states_the_default(argv, flag):
    import argparse

    from dptopic.cli.main import build_parser

    parser = build_parser()
    for name in argv:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    action = next(a for a in parser._actions if flag in a.option_strings)
    assert "default" in action.help.replace("by default", ""), action.help


def test_train_unit_document_on_the_general_word_list(tmp_path, capsys):
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:1500]) + "\n")
    assert main(["train", "--corpus", str(src), "--unit", "document", "--epsilon", "1", "--delta", "1e-5",
                 "--topics", "5", "--vocabulary", "wordfreq:en:5000", "--out", str(tmp_path / "m")]) in (0, None)
    doc = json.loads((tmp_path / "m" / "model.json").read_text())
    assert len(doc["vocabulary"]) == 5000 and doc["vocabulary"][:3] == ["just", "like", "time"]
    rep = doc["privacy"]
    assert rep["vocabulary_source"] == "supplied" and rep["guarantee"] == "full" and rep["epsilon"] <= 1.0
    cap = capsys.readouterr()
    out = " ".join((cap.out + cap.err).split())
    assert "V=5000" in out and "never counted" not in out     # every word of the list is one the tokeniser produces


def test_the_pad_length_note_reads_the_median_user_length(tiny):
    """train's FedLDA note: --pad-length far above the typical simulated user's tokens (corpus.summary)."""
    import dptopic
    from dptopic.corpus.summary import median_user_length
    from dptopic.training import PAD_LENGTH_FACTOR, pad_length_note

    a = {"pad_length": "--pad-length"}
    typical = median_user_length(tiny.corpus, 4)
    far = dptopic.FedLDA(n_topics=2, epsilon_per_entry=1.0, n_clients=4, pad_length=int(PAD_LENGTH_FACTOR * typical) + 1)
    note = pad_length_note(far, tiny.corpus, a)
    assert note is not None and f"typical user's {typical:.0f} tokens (median;" in note
    near = dptopic.FedLDA(n_topics=2, epsilon_per_entry=1.0, n_clients=4, pad_length=int(PAD_LENGTH_FACTOR * typical))
    assert pad_length_note(near, tiny.corpus, a) is None


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


def test_the_private_perplexity_line_names_its_mode(tmp_path):
    """train printed 'held-out per-word perplexity: 27.0' without saying how it was computed."""
    import numpy as np

    from helpers import run_dptopic

    rng = np.random.default_rng(0)
    words = "apple banana cherry grape lemon mango melon olive peach pear plum quince".split()
    (tmp_path / "docs.txt").write_text("\n".join(" ".join(rng.choice(words, 10)) for _ in range(60)) + "\n")
    (tmp_path / "words.txt").write_text("\n".join(words) + "\n")
    r = run_dptopic("train", "--unit", "document", "--epsilon", "1", "--topics", "2", "--corpus", tmp_path / "docs.txt",
                    "--vocabulary", tmp_path / "words.txt", "--quiet", "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "perplexity" in ln)
    assert "paper mode: fold-in Gibbs sampling under the released topics" in line
    assert "outside the guarantee" in line


# budgets each trainer accepts at its own defaults (none: a trainer that takes no total epsilon)
_DOOR_BUDGET = {"hdp": 5000.0, "docdp": 2.0, "docdp-cooc": 2.0, "svi": 2.0, "fed": 2.0, "secure-sum": 2.0}


def _both_doors(name, unit=None, epsilon=None):
    """The parameters of the model ``dptopic train`` builds from its flags (none but the trainer's and its budget)
    and of the one ``dptopic.train``'s builder makes from the same, unset parameters left to their defaults."""
    from dptopic.cli.train import _parameters
    from dptopic.training import build_model

    argv = ["train", "--corpus", "c.txt"] + (["--unit", unit] if unit else ["--algorithm", name])
    argv += [] if epsilon is None else ["--epsilon", str(epsilon)]
    a = build_parser().parse_args(argv)
    if unit:
        a.algorithm = name
    given = {k: v for k, v in _parameters(a).items() if k not in ("seed", "verbose", "epsilon", "delta")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cli = build_model(name, unit=unit, epsilon=epsilon, **given).get_params()
        lib = build_model(name, unit=unit, epsilon=epsilon).get_params()
    return ({k: v for k, v in cli.items() if k not in ("seed", "verbose")},
            {k: v for k, v in lib.items() if k not in ("seed", "verbose")})


@pytest.mark.parametrize("name", sorted(n for n in TRAINERS if n not in ("online-lda", "secure-sum")))
def test_both_front_doors_build_every_trainer_with_the_same_parameters(name):
    """``dptopic train --algorithm hdp`` trained 200 iterations and ``dptopic.train(algorithm="hdp")`` 100 (and the
    command line gave 50 topics to trainers whose default is 20): one set of defaults, the estimator's. (online-lda
    and secure-sum are trained by their own commands, from reports and from the secure sum's rounds.)"""
    cli, lib = _both_doors(name, epsilon=_DOOR_BUDGET.get(name))
    differ = {k: (cli.get(k), lib.get(k)) for k in cli.keys() | lib.keys() if repr(cli.get(k)) != repr(lib.get(k))}
    assert not differ, f"{name}: (command line, library) differ: {differ}"


@pytest.mark.parametrize("unit,epsilon", [("document", 2.0), ("user", 2.0), ("word", 600.0)])
def test_both_front_doors_build_the_same_model_for_a_unit(unit, epsilon):
    from dptopic.training.by_unit import trainer_for_unit

    cli, lib = _both_doors(trainer_for_unit(unit, epsilon), unit=unit, epsilon=epsilon)
    assert cli == lib or repr(cli) == repr(lib)


# ------------------------------------------------------------------ FedLDA (--algorithm fed)
@pytest.fixture
def fed_corpus(tmp_path):
    """A saved planted corpus for the FedLDA runs: 30 documents of 20 words over 40, three topics."""
    return lda_corpus(n_docs=30, vocab_size=40, n_topics=3, doc_length=20, seed=0).corpus.save(tmp_path / "c.npz")


def test_cli_train_fed_and_bad_input(tmp_path, capsys, fed_corpus):
    from dptopic.cli.main import main

    path = fed_corpus
    rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--clients", "5", "--rounds", "2",
               "--epsilon-per-entry", "5", "--topics", "3", "--pad-length", "200", "--out", str(tmp_path / "m"), "--quiet"])
    assert rc == 0
    assert (tmp_path / "m" / "model.json").exists()
    out = capsys.readouterr().out
    assert "Privacy report" in out
    for bad in (["--epsilon", "0"], ["--sample-ratio", "2"], ["--gamma", "0.5"], ["--failure-rate", "1.5"]):
        try:
            rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--rounds", "1", "--quiet",
                       "--out", str(tmp_path / "x")] + bad)
        except SystemExit as e:  # argparse rejects it before training
            rc = e.code
        assert rc == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "error" in err


def test_cli_train_fed_user_budget_spends_the_total(tmp_path, capsys, fed_corpus):
    import json

    from dptopic.accounting.fedlda import entries_for_user_budget
    from dptopic.cli.main import main

    path = fed_corpus
    rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--clients", "5", "--rounds", "2",
               "--user-budget", "60", "--topics", "3", "--out", str(tmp_path / "m"), "--quiet"])
    assert rc == 0
    rep = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]
    eps, entries = entries_for_user_budget(60, 40)
    assert rep["epsilon_basic"] == pytest.approx(60) and rep["budget"]["epsilon_per_user"] == 60
    assert rep["parameters"]["entries_per_round"] == entries and rep["epsilon_per_entry"] == pytest.approx(eps)
    capsys.readouterr()
    for bad, msg in ((["--epsilon", "5"], "drop --epsilon"), (["--pad-length", "64"], "drop --epsilon"),
                     (["--exclusion", "floor"], "--exclusion none")):
        rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--user-budget", "60", "--quiet",
                   "--out", str(tmp_path / "x")] + bad)
        err = capsys.readouterr().err
        assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_cli_train_fed_report_words(tmp_path, capsys, fed_corpus):
    import json

    from dptopic.cli.main import main

    path = fed_corpus
    rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--clients", "5", "--rounds", "1",
               "--report-words", "12", "--topics", "3", "--pad-length", "20", "--out", str(tmp_path / "m"), "--quiet"])
    assert rc == 0
    rep = json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]
    assert rep["parameters"]["report_words"] == 12 and "first 12 of 40 words" in rep["report_words_note"]
    capsys.readouterr()
    for bad, msg in ((["--report-words", "1"], "--report-words: must be auto or all or an integer >= 2, got 1"),
                     (["--report-words", "many"], "--report-words: must be auto or all or an integer >= 2, got many"),
                     (["--report-words", "2", "--topics", "3"], "at least --topics 3")):
        try:
            rc = main(["train", "--algorithm", "fed", "--corpus", str(path), "--rounds", "1", "--quiet",
                       "--out", str(tmp_path / "x")] + bad)
        except SystemExit as e:  # argparse rejects it before training
            rc = e.code
        err = capsys.readouterr().err
        assert rc == 2 and msg in err and "Traceback" not in err
    rc = main(["train", "--corpus", str(path), "--report-words", "12", "--quiet", "--out", str(tmp_path / "y")])
    assert rc == 2 and "--report-words" in capsys.readouterr().err   # an option of FedLDA only


def test_tail_rule_model_claims_no_guarantee_and_still_saves_loads_and_prints(tmp_path, capsys, fed_corpus):
    # the poster's rule: (eps, 2 delta) per entry, delta = 0.1, composed over every entry and round
    import json

    from dptopic import load
    from dptopic.accounting.card import privacy_card
    from dptopic.cli.main import main

    path = fed_corpus
    rc = main(["train", "--algorithm", "fed", "--exclusion", "tail", "--corpus", str(path), "--clients", "5",
               "--rounds", "2", "--epsilon-per-entry", "5", "--topics", "3", "--pad-length", "20", "--out", str(tmp_path / "m"),
               "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0 and "NONE" in out
    rep = load(tmp_path / "m").privacy_
    assert rep["epsilon"] is None and rep["delta_basic"] == pytest.approx(2 * 20 * 2 * 0.1)
    card = privacy_card(rep, "FedLDA")
    assert card["guarantee"] == "none" and "deltas add to 8" in card["reason"]
    assert json.loads((tmp_path / "m" / "model.json").read_text())["privacy_card"]["guarantee"] == "none"
