import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dptopic.cli.main import COMMANDS, main
from dptopic.corpus import Corpus
from helpers import run_dptopic


def test_train_topics_evaluate_prepare(textfile, tmp_path, capsys):
    out = tmp_path / "model"
    assert main(["train", "--corpus", str(textfile), "--topics", "3", "--iterations", "30", "--out", str(out),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "held-out perplexity" in text and "Top 10 words" in text and str(out) in text
    assert json.loads((out / "model.json").read_text())["privacy"]["private"] is False
    assert main(["topics", "--model", str(out), "-n", "4"]) == 0
    assert main(["evaluate", "--model", str(out), "--corpus", str(textfile)]) == 0
    assert "perplexity (completion)" in capsys.readouterr().out
    npz = tmp_path / "c.npz"
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(npz)]) == 0
    assert main(["train", "--corpus", str(npz), "--topics", "2", "--iterations", "5", "--out", str(out), "--overwrite", "--quiet"]) == 0


def test_train_private_prints_report(textfile, tmp_path, capsys):
    out = tmp_path / "h"
    assert main(["train", "--corpus", str(textfile), "--algorithm", "hdp", "--epsilon-laplace", "1", "--topics", "3",
                 "--iterations", "10", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "Privacy report" in text and "tight PLD" in text and "word" in text
    rep = json.loads((out / "model.json").read_text())["privacy"]
    assert rep["epsilon_basic"] == pytest.approx(10 * (1 + 10))
    assert main(["train", "--corpus", str(textfile), "--algorithm", "cdp+", "--paper-epsilon", "1", "--topics", "3",
                 "--iterations", "5", "--out", str(out), "--overwrite", "--quiet"]) == 0
    assert "nominal" in capsys.readouterr().out


def test_privacy_calculators(capsys):
    assert main(["privacy", "inherent", "--beta", "0.01", "--n-t", "100", "--max-n-tprime", "5000", "--cmax", "3000"]) == 0
    assert "47090.3" in capsys.readouterr().out
    assert main(["privacy", "hdp", "--epsilon-inherent", "10", "--beta", "0.01"]) == 0
    assert "1.47413" in capsys.readouterr().out
    assert main(["privacy", "compose", "--laplace", "0.1", "100", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "eps = 10" in out and "4.22" in out
    # FedLDA's report words: the documented 220 of 1,000 at eps 5 for 119 users of 256 entries
    assert main(["privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1000", "--users", "119",
                 "--entries", "256"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "first 220 of 1,000 words" in out and "every word: 25.3" in out


@pytest.mark.parametrize("args,msg", [
    (["train", "--corpus", "/no/such/file"], "not found"),
    (["train", "--epsilon", "0"], "must be a finite number > 0"),
    (["train", "--delta", "2"], "must lie in (0, 1)"),
    (["train", "--corpus", "EMPTY"], "empty corpus"),
    (["train", "--algorithm", "hdp", "--secure", "--seed", "3"], "refuses a seed"),
    (["topics", "--model", "/no/such/dir"], "does not exist"),
    (["privacy", "hdp", "--epsilon-inherent", "10", "--epsilon", "1", "--iterations", "100"], "budget too small"),
    (["train", "--algorithm", "hdp", "--epsilon", "600", "--clip", "5"], "drop --clip"),
    (["train", "--algorithm", "hdp", "--epsilon", "600", "--epsilon-laplace", "2"], "not both"),
    (["train", "--algorithm", "hdp", "--clip", "5", "--epsilon-inherent", "10"], "not both"),
    (["train", "--unit", "document", "--epsilon", "1", "--epsilon-laplace", "4"],
     "--epsilon-laplace has no effect with --unit document, which trains docdp-cooc: drop it, or drop --unit and use"
     " --algorithm hdp"),
    (["train", "--unit", "document", "--epsilon", "1", "--budget", "4"], "--budget is gone: give"),
    (["train", "--bogus-flag"], "dptopic train: unrecognized arguments: --bogus-flag (see 'dptopic train --help')"),
    (["corpus", "info", "FILE", "--bogus"], "dptopic corpus info: unrecognized arguments: --bogus"),
    (["privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1", "--users", "10"], "at least two words"),
])
def test_bad_input_is_one_line(args, msg, tmp_path):
    if "EMPTY" in args:
        p = tmp_path / "empty.txt"
        p.write_text("the of and\n")
        args = [str(p) if a == "EMPTY" else a for a in args]
    r = run_dptopic(*args)      # in this process (test_help_lists_commands runs the real entry point)
    assert r.returncode == 2
    assert msg in r.stderr and "Traceback" not in r.stderr
    err_lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error") or "error:" in ln]
    assert len(err_lines) == 1


def test_help_lists_commands():
    r = subprocess.run([sys.executable, "-m", "dptopic", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for cmd in ("train", "demo", "evaluate", "topics", "corpus", "privacy", "experiment"):
        assert cmd in r.stdout


def test_unit_trains_the_measured_number_of_topics_and_says_so_only_when_valid(textfile, tmp_path, capsys):
    """--unit defaults to the K of the utility table (20, as dptopic.for_unit); a refused flag prints nothing but the
    error (no "training docdp-cooc" line first); the same warning is printed once per command."""
    import dptopic

    big = tmp_path / "big.txt"
    words = [f"term{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    big.write_text("\n".join(" ".join(words[(7 * d + j) % 60] for j in range(12)) for d in range(300)))
    assert main(["train", "--corpus", str(big), "--unit", "document", "--epsilon", "1", "--out",
                 str(tmp_path / "u"), "--quiet"]) == 0
    assert dptopic.load(tmp_path / "u").n_topics == 20
    capsys.readouterr()
    assert main(["train", "--corpus", str(big), "--unit", "document", "--epsilon", "1", "--iterations", "5",
                 "--out", str(tmp_path / "v")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "--iterations has no effect with --unit document" in cap.err


def test_a_warning_is_printed_once_per_command(capsys):
    import warnings

    from dptopic.cli import main as cli_main

    class Args:
        @staticmethod
        def func(a):
            for _ in range(3):
                warnings.warn("the same thing, again", UserWarning, stacklevel=1)
            warnings.warn("another thing", UserWarning)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_main.ArgumentParser, "parse_args", lambda self, argv=None, ns=None: Args())
        assert cli_main.main(["recommend"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["warning: the same thing, again", "warning: another thing"]


# ---------------------------------------------------------------------------------------------------------------------
# Every command end to end as a new user runs them, one after another, on a small corpus.

WORDS = ["apple", "pear", "fruit", "banana", "engine", "wheel", "brake", "car", "god", "know", "space", "orbit",
         "moon", "church", "faith", "drive"]


def _docs(n=60, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(n)]


def _neighbour_that_moves(docs):
    """A copy of ``docs`` with one token's word replaced, chosen so that the split by words moves that document."""
    def sizes(ds):
        tr, _ = Corpus.from_texts(ds, vocabulary=WORDS).stable_split(0.2)
        return tr.n_docs, tr.n_tokens

    base = sizes(docs)
    for i, d in enumerate(docs):
        for w in WORDS:
            t = d.split()
            if t[0] != w:
                t[0] = w
                other = docs[:i] + [" ".join(t)] + docs[i + 1:]
                if sizes(other) != base:
                    return other
    raise AssertionError("no replacement moves a document")


def test_position_split_moves_no_document_when_a_word_is_replaced():
    docs = _docs()
    other = _neighbour_that_moves(docs)
    a, b = (Corpus.from_texts(d, vocabulary=WORDS) for d in (docs, other))
    (ta, ea), (tb, eb) = a.position_split(0.2), b.position_split(0.2)
    assert (ta.n_docs, ta.n_tokens, ea.n_docs) == (tb.n_docs, tb.n_tokens, eb.n_docs)
    assert np.array_equal(ta.doc_ptr, tb.doc_ptr)
    assert 0 < ea.n_docs < a.n_docs
    assert not np.array_equal(a.position_split(0.2, key=1)[0].doc_ptr, ta.doc_ptr)    # another key, another split
    with pytest.raises(Exception, match="fraction in"):
        a.position_split(1.5)


def test_word_level_training_split_does_not_depend_on_a_replaced_word(tmp_path, capsys):
    """train split every corpus by a hash of each document's words: under word-level DP (one token's word replaced)
    that moved the whole document between the parts, so the two neighbours trained on sets a document apart, and
    model.json published the different sizes as 'public under word-level DP'."""
    docs = _docs()
    other = _neighbour_that_moves(docs)
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    stats = []
    for name, ds in (("a", docs), ("b", other)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("\n".join(json.dumps({"text": d}) for d in ds) + "\n")
        assert main(["train", "--algorithm", "hdp", "--corpus", str(f), "--vocabulary", str(tmp_path / "v.txt"),
                     "--topics", "2", "--iterations", "3", "--epsilon-inherent", "10", "--quiet",
                     "--out", str(tmp_path / name)]) in (0, None)
        line = next(ln for ln in " ".join(capsys.readouterr().out.split()).split("corpus:")[1:])
        stats.append((json.loads((tmp_path / name / "model.json").read_text())["training"], line.split(")")[1]))
    assert stats[0][0]["n_docs"] == stats[1][0]["n_docs"] and stats[0][0]["n_tokens"] == stats[1][0]["n_tokens"]
    assert stats[0][1] == stats[1][1]                                          # "train N / test M" alike


def test_demo_reference_trains_on_the_private_model_s_split(monkeypatch, tmp_path):
    """The demo's non-private reference is 'LDA on the same split': it must take the word-level model's split
    (dptopic.train's split_as)."""
    import dptopic.training.run as run

    calls = []

    class Stop(Exception):
        pass

    real = run.split_for

    def record(model, corpus, test_size=0.2, **kw):
        calls.append(type(model).__name__)
        if len(calls) == 2:
            raise Stop
        return real(model, corpus, test_size, **kw)

    monkeypatch.setattr(run, "split_for", record)
    from dptopic.models import HDPLDA

    monkeypatch.setattr(HDPLDA, "fit", lambda self, *a, **k: self)
    monkeypatch.setattr(run, "held_out_metrics", lambda result, callback=None, kind="all": None)
    monkeypatch.setattr(run, "card", lambda result: None)
    monkeypatch.setattr(run, "save", lambda *a, **k: None)
    with pytest.raises(Stop):
        main(["demo", "--out", str(tmp_path / "d"), "--quiet", "--word-level-only"])
    assert calls == ["HDPLDA", "HDPLDA"]        # the private model's split, then the reference's: the same


def test_builtin_corpus_keeps_one_row_per_paragraph_for_transform(tmp_path):
    """transform --corpus demo wrote 23,280 rows for 23,431 paragraphs: the built-in corpora ignored drop_empty."""
    from dptopic.cli._run_common import load_corpus
    from dptopic.corpus import Vocabulary
    from dptopic.datasets import load_sotu

    full = load_sotu(max_vocab=None, min_df=1, stop_words=None)
    # a model's vocabulary: 300 of the corpus's words (reading the demo again for its default vocabulary costs seconds)
    vocab = Vocabulary(full.vocabulary.words[:300])
    kept = load_corpus("demo", vocabulary=vocab, into_model=True, drop_empty=False)
    assert kept.n_docs == full.n_docs + full.n_empty_dropped
    assert load_corpus("demo", vocabulary=vocab, into_model=True).n_docs < kept.n_docs


def test_vocab_is_refused_where_it_names_no_uci_word_list(tmp_path, capsys):
    """--vocab (a UCI file's word list) was silently ignored for other formats: a user who meant --vocabulary got a
    vocabulary chosen from the data and a partial guarantee."""
    f = tmp_path / "t.jsonl"
    f.write_text("\n".join(json.dumps({"text": d}) for d in _docs(20)) + "\n")
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    for corpus in (str(f), "demo"):
        assert main(["train", "--algorithm", "lda", "--corpus", corpus, "--vocab", str(tmp_path / "v.txt"),
                     "--topics", "2", "--iterations", "2", "--seed", "0", "--out", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err
        assert "--vocab names the word list of a UCI bag-of-words file" in err and "--vocabulary FILE" in err
        assert len([ln for ln in err.splitlines() if ln.strip()]) == 1


def test_text_folder_leaves_hidden_files_and_folders_out(tmp_path):
    """A notebook's .ipynb_checkpoints/ copy of a text became a second document (one person's document twice)."""
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.txt").write_text("apple pear fruit")
    (tmp_path / "a" / ".ipynb_checkpoints").mkdir()
    (tmp_path / "a" / ".ipynb_checkpoints" / "one-checkpoint.txt").write_text("apple pear fruit")
    (tmp_path / ".hidden.txt").write_text("engine wheel")
    (tmp_path / "b.txt").write_text("engine wheel brake")
    c = Corpus.from_directory(tmp_path, max_vocab=None, min_df=1, stop_words=None)
    assert c.n_docs == 2 and sorted(c.doc_ids) == ["a/one.txt", "b.txt"]


def test_local_trainers_refuse_corpus_flags_they_never_read(tmp_path, capsys):
    """lp, olp and ldp-doc accepted --test-size, --text-field, --stop-words and --jobs and did nothing with them."""
    for algo, flags, said in (("lp", ["--test-size", "0.3"], "--test-size has no effect with --algorithm lp"),
                              ("lp", ["--stop-words", "none"], "--stop-words has no effect with --algorithm lp"),
                              ("lp", ["--text-field", "body"], "--text-field has no effect with --algorithm lp"),
                              ("ldp-doc", ["--jobs", "2"], "--jobs has no effect with --algorithm ldp-doc"),
                              ("olp", ["--lowercase"], "--lowercase has no effect with --algorithm olp")):
        assert main(["train", "--algorithm", algo, "--reports", str(tmp_path / "r.bin"), *flags,
                     "--out", str(tmp_path / "m")]) == 2, (algo, flags)
        err = capsys.readouterr().err
        assert said in err and len([ln for ln in err.splitlines() if ln.strip()]) == 1, err


def test_document_level_trainer_takes_jobs(tmp_path, monkeypatch):
    """--jobs was silently ignored by docdp/docdp-cooc, whose E-step takes n_jobs threads."""
    import dptopic.accounting.plan as plan

    seen = {}
    real = plan.refuse_unreachable

    def spy(model):
        seen["n_jobs"] = model.n_jobs
        real(model)
        raise SystemExit(0)

    monkeypatch.setattr(plan, "refuse_unreachable", spy)      # train's pre-fit check, before the corpus is read
    with pytest.raises(SystemExit):
        main(["train", "--algorithm", "docdp-cooc", "--epsilon", "1", "--corpus", "demo", "--jobs", "2",
              "--out", str(tmp_path / "m")])
    assert seen == {"n_jobs": 2}


def test_word_cuts_on_a_corpus_prepared_on_a_public_vocabulary_are_refused(tmp_path, capsys):
    """--max-vocab on a .npz prepared with --vocabulary chose words from the data and turned the guarantee partial
    with only a warning, where docs/preprocessing.md says such cuts are refused beside a given vocabulary."""
    f = tmp_path / "t.jsonl"
    f.write_text("\n".join(json.dumps({"text": d}) for d in _docs(40)) + "\n")
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    assert main(["corpus", "prepare", "--corpus", str(f), "--vocabulary", str(tmp_path / "v.txt"),
                 "--out", str(tmp_path / "pub.npz")]) in (0, None)
    capsys.readouterr()
    for cut in (["--max-vocab", "1000"], ["--min-df", "2"], ["--max-df", "0.9"]):
        assert main(["train", "--corpus", str(tmp_path / "pub.npz"), "--algorithm", "hdp", *cut, "--topics", "2",
                     "--iterations", "2", "--out", str(tmp_path / "m")]) == 2
        err = capsys.readouterr().err
        assert f"was prepared on a public vocabulary (--vocabulary), and {cut[0]} would prune it by the data" in err, err
    assert main(["train", "--corpus", str(tmp_path / "pub.npz"), "--algorithm", "hdp", "--topics", "2",
                 "--iterations", "2", "--quiet", "--out", str(tmp_path / "m")]) in (0, None)
    assert json.loads((tmp_path / "m" / "model.json").read_text())["privacy"]["guarantee"] == "full"


def test_report_reads_a_uci_reference_with_its_vocab(tmp_path, capsys):
    """report --reference docword.*.txt without a vocab file beside it said 'pass --vocab FILE', a flag report had
    not: a dead end."""
    (tmp_path / "docword.x.txt").write_text("3\n4\n7\n1 1 2\n1 2 1\n2 3 3\n2 4 1\n3 1 1\n3 2 2\n3 4 1\n")
    (tmp_path / "words.txt").write_text("apple\npear\nengine\nwheel\n")
    assert main(["train", "--algorithm", "lda", "--corpus", str(tmp_path / "docword.x.txt"), "--vocab",
                 str(tmp_path / "words.txt"), "--topics", "2", "--iterations", "2", "--seed", "0", "--test-size", "0.3",
                 "--quiet", "--out", str(tmp_path / "m")]) in (0, None)
    capsys.readouterr()
    assert main(["report", str(tmp_path / "m"), "--reference", str(tmp_path / "docword.x.txt"),
                 "--out", str(tmp_path / "r.html")]) == 2
    assert "pass --vocab FILE" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "m"), "--reference", str(tmp_path / "docword.x.txt"), "--vocab",
                 str(tmp_path / "words.txt"), "--out", str(tmp_path / "r.html")]) in (0, None)
    assert (tmp_path / "r.html").exists()


def test_public_vocabulary_npz_is_read_as_prepared_by_audit_and_refuses_stop_words(tmp_path, capsys):
    """The refusal of word cuts on a corpus prepared on a public vocabulary fired on the commands' own settings
    (audit --model reads a reference with max_vocab, submit with min_df=1); --stop-words alone still pruned it."""
    f = tmp_path / "t.jsonl"
    f.write_text("\n".join(json.dumps({"text": d}) for d in _docs(40)) + "\n")
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    pub = str(tmp_path / "pub.npz")
    assert main(["corpus", "prepare", "--corpus", str(f), "--vocabulary", str(tmp_path / "v.txt"), "--out", pub]) \
        in (0, None)
    assert main(["train", "--corpus", pub, "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--seed", "0",
                 "--quiet", "--out", str(tmp_path / "m")]) in (0, None)
    capsys.readouterr()
    assert main(["audit", "--model", str(tmp_path / "m"), "--corpus", pub, "--shadows", "4", "--seed", "0",
                 "--out", str(tmp_path / "a")]) in (0, None), capsys.readouterr().err
    from dptopic.cli._run_common import load_corpus

    assert load_corpus(pub, max_vocab=None, min_df=1).vocab_size == len(WORDS)       # serve/submit's reading
    assert main(["train", "--corpus", pub, "--algorithm", "hdp", "--stop-words", "english", "--topics", "2",
                 "--iterations", "2", "--out", str(tmp_path / "h")]) == 2
    assert "and --stop-words would prune it by the data" in capsys.readouterr().err
    assert main(["train", "--corpus", pub, "--algorithm", "hdp", "--stop-words", "none", "--topics", "2",
                 "--iterations", "2", "--quiet", "--out", str(tmp_path / "h")]) in (0, None)
    assert json.loads((tmp_path / "h" / "model.json").read_text())["privacy"]["guarantee"] == "full"


def test_a_composite_unit_is_not_taken_for_the_document():
    """'document (vocabulary) + word (topic model)' (a private vocabulary composed with a word-level trainer) was read
    as a document-level claim by its first word, so a document-level attack could 'refute' a word-level guarantee."""
    from dptopic.attacks.lira import unit_covers_document

    assert not unit_covers_document("document (vocabulary) + word (topic model)")
    assert not unit_covers_document("word")
    for u in ("document", "user", "document (local DP)", "contributor (local DP, 10 documents)", None):
        assert unit_covers_document(u), u


def test_a_command_run_in_process_that_hangs_fails_its_test_as_a_subprocess_would(monkeypatch):
    """helpers.run_dptopic stops a command past its timeout with subprocess.TimeoutExpired, as subprocess.run does,
    with what it had printed, and leaves the test process as it found it (its working directory, no alarm set)."""
    import os
    import signal
    import subprocess
    import time

    import dptopic.advice
    from helpers import run_dptopic

    monkeypatch.setattr(dptopic.advice, "recommend", lambda *a, **k: time.sleep(30))
    cwd = os.getcwd()
    t = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_dptopic("recommend", "--epsilon", "1", "--docs", "10", timeout=0.5)
    assert time.monotonic() - t < 10 and os.getcwd() == cwd
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    monkeypatch.undo()
    assert run_dptopic("recommend", "--epsilon", "1", "--docs", "10000").returncode == 0    # the next run is unharmed


@pytest.mark.parametrize("value", ["0", "-1", "four"])
def test_an_unusable_numba_num_threads_is_refused_in_one_line_naming_it(tmp_path, value):
    # a real process: numba reads the variable once, when it is first imported
    import os

    from helpers import run_dptopic_process

    r = run_dptopic_process("train", "--corpus", "demo", "--algorithm", "lda", "--topics", "2", "--iterations", "1",
                            "--out", tmp_path / "m", env=dict(os.environ, NUMBA_NUM_THREADS=value))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "NUMBA_NUM_THREADS" in lines[0] and "unset NUMBA_NUM_THREADS" in lines[0], lines[0]
    assert not (tmp_path / "m").exists()


def test_a_library_warnings_advice_is_written_in_the_commands_flags(tmp_path):
    """The vocabulary's stop words are never counted: Python is told stop_words='none', the command line
    --stop-words none (the warning names its parameter as data; main writes it in WARNING_FLAGS)."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(f"rates rise {w} again and the bank moves" for w in ("fast", "slow", "now") * 10))
    vocab = tmp_path / "v.txt"
    vocab.write_text("rates\nrise\nthe\nbank\n")
    r = run_dptopic("train", "--corpus", corpus, "--vocabulary", vocab, "--algorithm", "lda", "--topics", "2",
                    "--iterations", "2", "--seed", "0", "--out", tmp_path / "m", "--quiet")
    assert r.returncode == 0, r.stderr
    warning = [ln for ln in r.stderr.splitlines() if "never counted" in ln]
    assert len(warning) == 1 and "--stop-words none" in warning[0] and "stop_words=" not in warning[0], r.stderr


# ---------------------------------------------------------------- the command table (cli/main.py's COMMANDS)
def test_the_command_table_lists_every_command_with_its_modules_own_summary_in_order():
    from dptopic.cli.main import COMMANDS, build_parser

    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    assert [(c.dest, c.help) for c in sub._choices_actions] == [(name, s) for name, (_, s) in COMMANDS.items()]


HELP = ("import contextlib, io\nfrom dptopic.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n    try:\n        main({argv!r})\n"
        "    except SystemExit:\n        pass\n")
COMMAND_MODULES = sorted({f"dptopic.cli.parsers.{module}" for module, _ in COMMANDS.values()})
CLI = Path(__file__).parents[2] / "src" / "dptopic" / "cli"
RUN_MODULES = sorted(f"dptopic.cli.{p.stem}" for p in CLI.glob("*.py")
                     if not p.stem.startswith("_") and p.stem != "main")
LIBRARY = ("numpy", "numba", "scipy", "sklearn")


def test_top_level_help_imports_no_command_module_and_no_numpy():
    from helpers import loaded_in_a_new_process

    assert loaded_in_a_new_process(HELP.format(argv=["--help"]), [*COMMAND_MODULES, *RUN_MODULES, *LIBRARY]) == []


def test_a_command_imports_its_own_parser_and_no_other_commands():
    from helpers import loaded_in_a_new_process

    loaded = loaded_in_a_new_process(HELP.format(argv=["audit", "--help"]), [*COMMAND_MODULES, *RUN_MODULES])
    assert loaded == ["dptopic.cli.parsers.audit"], loaded
    loaded = loaded_in_a_new_process(HELP.format(argv=["privacy", "inherent", "--help"]),
                                     [*COMMAND_MODULES, *RUN_MODULES])
    assert loaded == ["dptopic.cli.parsers.privacy"], loaded


# every command's help, and a flag error of each kind argparse finds: an unknown flag, a bad choice, a missing value
PARSE_ONLY = """
import argparse, contextlib, io, json, sys
from dptopic.cli.main import build_parser, main

def leaves(p, words):
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield words, p
    for name, sub in (subs[0].choices.items() if subs else ()):
        yield from leaves(sub, [*words, name])

lines = []
for words, p in leaves(build_parser(), []):
    lines += [[*words, "--help"], [*words, "--no-such-flag"]]
    for act in p._actions:
        if act.option_strings and act.nargs is None:         # an option that takes one value, given none
            lines.append([*words, act.option_strings[-1]])
        if act.option_strings and act.choices:
            lines.append([*words, act.option_strings[-1], "no-such-choice"])
lines += [["train", "--algorithm", name, "--help"] for name in ("lda", "hdp", "docdp-cooc", "fed", "olp")]
lines += [["train", "--unit", unit, "--help"] for unit in ("word", "document", "user")]
lines += [["--version"], ["no-such-command"], ["train", "--algorithm"]]
statuses = set()
for argv in lines:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(argv)
        except SystemExit as e:
            statuses.add(e.code)
print(json.dumps({"lines": len(lines), "statuses": sorted(map(str, statuses)),
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in %r
                                   or m.startswith("dptopic.models.") and m != "dptopic.models.registry"
                                   or m in %r)}))
"""


def test_no_command_s_help_or_flag_error_loads_the_library_or_its_run_code():
    """Every command's parser is built, every help printed and a flag error of each kind made, in one process: none
    loads numpy, numba, scipy, scikit-learn, a trainer (``dptopic.models``' estimators: the registry alone is read)
    or a module that runs a command (cli/parsers/ builds the parsers; cli/main.py imports the run code once the
    arguments parsed)."""
    from helpers import SRC

    code = PARSE_ONLY % (LIBRARY, RUN_MODULES)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": SRC})
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["lines"] > 300 and result["statuses"] == ["0", "2"], result    # helps (0) and flag errors (2)
    assert result["loaded"] == [], result["loaded"]


def test_train_help_in_a_real_process_imports_no_library():
    """``python -m dptopic train --help`` as a real process, which writes the modules it imported at its exit (-X
    importtime lists no module imported by importlib.import_module, as cli/main.py imports a command's parser)."""
    from helpers import SRC

    dump = ("import atexit, json, runpy, sys\n"
            "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
            "sys.argv = ['dptopic', 'train', '--help']\nrunpy.run_module('dptopic', run_name='__main__')\n")
    r = subprocess.run([sys.executable, "-c", dump], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": SRC})
    assert r.returncode == 0 and "--algorithm" in r.stdout, r.stderr
    imported = json.loads(r.stderr.strip().splitlines()[-1])
    heavy = sorted(m for m in imported if m.split(".")[0] in LIBRARY or m in RUN_MODULES
                   or m.startswith("dptopic.models.") and m != "dptopic.models.registry")
    assert heavy == [], heavy
    assert "dptopic.cli.parsers.train" in imported and "dptopic.cli._trainer_facts" in imported, imported


def test_the_privacy_calculators_load_no_model():
    """``privacy verify`` reads a saved model; the calculators beside it in cli/privacy.py stay quick."""
    from helpers import loaded_in_a_new_process

    assert loaded_in_a_new_process(HELP.format(argv=["privacy", "inherent", "--help"]), ["numba", "sklearn"]) == []


def test_an_unusable_numba_num_threads_leaves_help_and_stops_the_run_in_one_line(tmp_path):
    """A command's help loads no numba, so it is printed; the run is refused before its run code loads numba."""
    from helpers import run_dptopic_process

    env = dict(os.environ, NUMBA_NUM_THREADS="0")
    r = run_dptopic_process("audit", "--help", env=env)
    assert r.returncode == 0 and "--shadows" in r.stdout and not r.stderr, r.stderr
    r = run_dptopic_process("audit", "--algorithm", "lda", "--corpus", "demo", "--out", tmp_path / "a", env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("error: ") and "NUMBA_NUM_THREADS" in r.stderr, r.stderr
