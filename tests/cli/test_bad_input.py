"""The command line's bad-input harness: every kind of bad input it is given ends in one line on stderr, exit
status 2, no traceback, and, where the input was a file or a number the user typed, the line names it.

Two tables drive it:

* ``FILE_CASES``: every command that reads a file the user names, given each kind of bad file (missing, empty, a
  folder, NUL bytes, bytes that are not UTF-8, plain text where JSON or a saved model is expected, a truncated JSON
  document). The commands are built from a small valid setup, so the only thing wrong is the file under test.
* ``ARGV_CASES``: the specific command lines found wrong by a fuzz run, a new user's walk-through and a privacy
  review, each kept here so it stays fixed.

Run ``pytest tests/cli/test_bad_input.py -q`` to re-run the whole set; the count of cases is the number of kinds
tried, and every one passing means every one is clean.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dptopic.cli.main import main
from helpers import one_line_error as _one_line
from helpers import run_dptopic

WORDS = ("apple banana cherry grape lemon mango melon olive peach pear plum quince berry date fig kiwi lime "
         "nectarine orange papaya").split()


def _texts(n=40, length=12, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=length)) for _ in range(n)]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A folder with a valid corpus, a word list, a trained model and one file of each bad kind."""
    root = tmp_path_factory.mktemp("bad-input")
    (root / "corpus.txt").write_text("\n".join(_texts()) + "\n")
    (root / "words.txt").write_text("\n".join(WORDS) + "\n")
    rc = main(["train", "--algorithm", "lda", "--corpus", str(root / "corpus.txt"), "--topics", "2",
               "--iterations", "3", "--test-size", "0", "--seed", "0", "--out", str(root / "model"), "--quiet"])
    assert rc == 0
    (root / "empty.json").write_text("")
    (root / "nul.json").write_bytes(b"\0" * 64)
    (root / "latin1.json").write_bytes(b"\xff\xfe\x80 caf\xe9 \x81\n")
    (root / "prose.json").write_text("these are my private notes, not a JSON document\n")
    (root / "truncated.json").write_text('{"reports": [1, 2, 3')
    (root / "list.json").write_text("[1, 2, 3]\n")
    (root / "a-folder").mkdir()
    os.mkfifo(root / "a-fifo.txt")      # named as a corpus would be: read, it would block until a writer closes it
    (root / "big-nul.csv").write_bytes(b"")
    os.truncate(root / "big-nul.csv", 64 * 2 ** 20)     # sparse: 64 MiB of NUL bytes, refused at its first block
    return root


# kinds of bad file: name under the setup folder (missing.json does not exist)
# /dev/zero and a FIFO: files that are not regular files (a device never ends, a pipe blocks until its writer closes)
ODD_FILES = ["/dev/zero", "a-fifo.txt"]
BAD_FILES = ["missing.json", "empty.json", "nul.json", "latin1.json", "prose.json", "truncated.json", "list.json",
             "a-folder", *ODD_FILES]
# kinds that are a bad *model folder*: a file, a missing path, an empty folder
BAD_MODELS = ["missing-model", "prose.json", "a-folder", "nul.json", *ODD_FILES]
# a corpus file: a text file is valid as one document per line, so only the kinds no reader can take
BAD_CORPORA = ["missing.txt", "empty.json", "nul.json", "a-folder", "big-nul.csv", *ODD_FILES]

M, C, W = "{model}", "{corpus}", "{words}"

# command line with BAD where the file under test goes, and the kinds of bad file it is given
FILE_CASES = [
    # training and evaluation
    (["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
      "--corpus", "BAD"], BAD_CORPORA),
    (["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
      "--corpus", C, "--vocabulary", "BAD"], ["missing.txt", "empty.json", "nul.json", "a-folder", *ODD_FILES]),
    (["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
      "--corpus", C, "--stop-words", "BAD"], ["missing.txt", "nul.json", "a-folder", *ODD_FILES]),
    (["evaluate", "BAD", "--corpus", C], BAD_MODELS),
    (["evaluate", M, "--corpus", "BAD"], BAD_CORPORA),
    (["topics", "BAD"], BAD_MODELS),
    # results
    (["transform", "BAD", "--corpus", C, "--out", "{out}.csv"], BAD_MODELS),
    (["transform", M, "--corpus", "BAD", "--out", "{out}.csv"], BAD_CORPORA),
    (["export", "--to", "pyldavis", "BAD", "--corpus", C, "--out", "{out}.json"], BAD_MODELS),
    (["export", "--to", "pyldavis", M, "--corpus", "BAD", "--out", "{out}.json"], BAD_CORPORA),
    # corpus tools
    (["corpus", "info", "BAD"], BAD_CORPORA),
    (["corpus", "prepare", "--corpus", "BAD", "--out", "{out}.npz"], BAD_CORPORA),
    (["corpus", "prepare", "--corpus", C, "--vocabulary", "BAD", "--out", "{out}.npz"],
     ["missing.txt", "empty.json", "nul.json", "a-folder", *ODD_FILES]),
    # privacy
    (["privacy", "verify", "BAD"], BAD_MODELS),
    # contributor side, without a server: the files are read first
    (["randomize", "--vocabulary", "BAD", "--corpus", C, "--unit", "document", "--epsilon-doc", "2", "--out", "{out}.jsonl"],
     ["missing.txt", "empty.json", "nul.json", "a-folder", *ODD_FILES]),
    (["randomize", "--vocabulary", W, "--corpus", "BAD", "--unit", "document", "--epsilon-doc", "2", "--out", "{out}.jsonl"], BAD_CORPORA),
    # audit: a bad model or corpus is refused before any shadow model is trained
    (["audit", "--model", "BAD", "--corpus", C, "--shadows", "4", "--out", "{out}"], BAD_MODELS),
    (["audit", "--model", M, "--corpus", "BAD", "--shadows", "4", "--out", "{out}"], BAD_CORPORA),
    (["audit", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--shadows", "4", "--corpus", "BAD",
      "--out", "{out}"], BAD_CORPORA),
    # report
    (["report", "BAD", "--out", "{out}.html"], BAD_MODELS),
    (["report", M, "--audit", "BAD", "--out", "{out}.html"], BAD_FILES),
    (["report", M, "--compare-to", "BAD", "--out", "{out}.html"], BAD_MODELS),
    (["report", M, "--reference", "BAD", "--out", "{out}.html"], BAD_CORPORA),
]


def _file_cases():
    for argv, kinds in FILE_CASES:
        for kind in kinds:
            where = argv.index("BAD")
            flag = argv[where - 1] if argv[where - 1].startswith("--") else "positional"
            yield pytest.param(argv, kind, id=f"{' '.join(a for a in argv[:2] if not a.startswith('-'))}"
                                              f" {flag}={kind}")


def _run(capsys, argv):
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:     # argparse's own refusals end this way, as on the command line
        rc = e.code
    except BaseException as e:      # noqa: BLE001 -- the harness reports it as what the user would see
        return "traceback", f"{type(e).__name__}: {e}"
    err = capsys.readouterr().err
    return rc, err


def _fill(argv, setup, tmp_path):
    values = {"model": setup / "model", "corpus": setup / "corpus.txt", "words": setup / "words.txt",
              "out": tmp_path / "out", "tsv": "data.tsv", "xlsx": "data.xlsx"}
    return [a.format(**{k: str(v) for k, v in values.items()}) if "{" in a else a for a in argv]


def _assert_one_line_refusal(rc, err, *, names=None):
    assert rc != "traceback", err
    assert "Traceback" not in err, err
    assert rc == 2, f"exit {rc}: {err}"
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("error:"), err
    if names is not None:
        assert names in lines[0], f"the line does not name {names!r}: {lines[0]}"
    return lines[0]


@pytest.mark.parametrize("argv, kind", list(_file_cases()))
def test_a_bad_file_is_refused_in_one_line_that_names_it(setup, tmp_path, capsys, monkeypatch, argv, kind):
    monkeypatch.chdir(setup)
    bad = kind      # relative, as a user types it: the line must name it as given
    argv = [bad if a == "BAD" else a for a in _fill(argv, setup, tmp_path)]
    rc, err = _run(capsys, argv)
    _assert_one_line_refusal(rc, err, names=bad)
    assert not list(tmp_path.glob("out*")), "a refused command wrote its output"


# ---------------------------------------------------------------- the specific cases, kept fixed
ARGV_CASES = [
    # a one-run audit's canary length is bounded before anything is built
    pytest.param(["audit", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--corpus", C,
                  "--design", "one-run", "--canaries", "10", "--canary-length", "1000000000", "--out", "{out}"],
                 "--canary-length", id="audit one-run --canary-length 1e9"),
    pytest.param(["audit", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--corpus", C,
                  "--design", "one-run", "--canaries", str(10 ** 9), "--out", "{out}"],
                 "--canaries", id="audit one-run --canaries 1e9"),
    pytest.param(["audit", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--corpus", C,
                  "--design", "one-run", "--canaries", "4", "--canary-length", "2000000", "--out", "{out}"],
                 "longer than the whole corpus", id="audit one-run canaries longer than the corpus"),
    # a folder given to --audit whose audit.json is broken is named with it
    pytest.param(["report", M, "--audit", "run", "--out", "{out}.html"], "run/audit.json", id="report --audit folder"),
    # ids that are not strings or numbers are refused with the file and line
    *[pytest.param(["transform", M, "--corpus", f"ids-{kind}.jsonl", "--out", "{out}.csv"], "line 2",
                   id=f"transform jsonl id {kind}") for kind in ("null", "object", "list", "bool")],
    # documents none of which has a model word: one rule for the three commands
    pytest.param(["transform", M, "--corpus", "zoo.txt", "--out", "{out}.csv"], "zoo.txt", id="transform no word"),
    pytest.param(["export", "--to", "pyldavis", M, "--corpus", "zoo.txt", "--out", "{out}.json"], "zoo.txt",
                 id="export no word"),
    pytest.param(["report", M, "--reference", "zoo.txt", "--out", "{out}.html"], "zoo.txt", id="report no word"),
    pytest.param(["export", "--to", "pyldavis", M, "--corpus", C, "--kept-words-only", "--out", "{out}.json"],
                 "--kept-words-only", id="export --kept-words-only on LDA"),
    # a range error names the flag the user typed
    pytest.param(["train", "--algorithm", "fed", "--corpus", C, "--topics", "2", "--test-size", "0",
                  "--reports-per-contributor", "1000000000", "--out", "{out}"],
                 "--reports-per-contributor", id="train --reports-per-contributor 1e9"),
    # a tab-separated file is read as a table or refused, never as lines
    pytest.param(["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0",
                  "--corpus", "{tsv}", "--text-field", "no-such-column", "--out", "{out}"],
                 "no-such-column", id="train tsv --text-field missing"),
    # an extension no reader knows is refused, not guessed
    pytest.param(["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0",
                  "--corpus", "{xlsx}", "--out", "{out}"], "data.xlsx", id="train unknown extension"),
    # a flag that does nothing is refused
    pytest.param(["serve", "--vocabulary", W, "--format", "jsonl", "--database", "{out}.db"], "--format",
                 id="serve --format without --prior"),
    # serve: a flag that has no effect in the mode chosen
    *[pytest.param(["serve", "--vocabulary", W, *mode, flag, *value, "--database", "sqlite:///{out}.db"], flag,
                   id=f"serve {flag} idle") for mode, flag, value in [
        (["--epsilon-word", "2"], "--text-field", ["body"]),
        (["--epsilon-word", "2"], "--prior-iterations", ["5"]),
        (["--report-kind", "document"], "--iterations", ["5"]),
        (["--report-kind", "document"], "--lam", ["0.3"]),
        (["--report-kind", "document"], "--omega", ["0.3"]),
        (["--report-kind", "document"], "--delta", ["1e-6"]),
        (["--epsilon-word", "2", "--fed-epsilon-per-entry", "2"], "--fed-failure-rate", ["0.2"]),
        (["--epsilon-word", "2"], "--database-timeout", ["5"]),
        (["--epsilon-word", "2"], "--allow-remote", []),
    ]],
    # a state file that is not one
    pytest.param(["submit", "--server", "http://127.0.0.1:9", "--corpus", C, "--state", "prose.json"],
                 "prose.json", id="submit --state prose"),
    *[pytest.param([command, "--server", "http://127.0.0.1:9", "--corpus", C, "--state", state, "--retries", "0"],
                   state, id=f"{command} --state {state}")
      for command in ("submit", "fed-client") for state in ("empty.json", "nul.json", "truncated.json", "latin1.json")],
    pytest.param(["fed-client", "--server", "http://127.0.0.1:9", "--corpus", C, "--state", "prose.json"],
                 "prose.json", id="fed-client --state prose"),
    # the private corpus given as public input, and bad public input: named as --public-corpus, before any release
    *[pytest.param(["train", "--algorithm", "docdp-cooc", "--epsilon", "1", "--topics", "2", "--test-size", "0",
                    "--corpus", C, "--public-corpus", public, *extra, "--out", "{out}"], names,
                   id=f"train --public-corpus {public}{' ' + ' '.join(extra) if extra else ''}")
      for public, extra, names in [
          (C, [], "is the private --corpus"), ("corpus.txt", [], "is the private --corpus"),
          ("../{setup}/corpus.txt", [], "is the private --corpus"), ("copy.txt", [], "of the private documents"),
          ("missing.txt", [], "--public-corpus 'missing.txt'"), ("a-folder", [], "--public-corpus 'a-folder'"),
          ("empty.json", [], "--public-corpus 'empty.json'"), ("nul.json", [], "--public-corpus 'nul.json'"),
          ("words.txt", [], "--public-corpus 'words.txt'"), ("{xlsx}", [], "--public-corpus 'data.xlsx'"),
          ("missing.txt", ["--private-vocabulary", "1,1e-6"], "--public-corpus 'missing.txt'"),
          ("corpus.txt", ["--private-vocabulary", "1,1e-6"], "is the private --corpus"),
          ("{tsv}", ["--public-text-field", "body"], "--public-text-field")]],
    pytest.param(["train", "--algorithm", "docdp-cooc", "--epsilon", "1", "--corpus", C, "--public-text-field", "x",
                  "--out", "{out}"], "--public-text-field", id="train --public-text-field without --public-corpus"),
    # one rule for a total a trainer cannot spend, or topics it cannot take
    pytest.param(["train", "--unit", "word", "--epsilon", "1e8", "--corpus", C, "--out", "{out}"], "--epsilon 1e+08",
                 id="train --unit word --epsilon 1e8"),
    pytest.param(["train", "--algorithm", "hdp", "--epsilon", "1e308", "--corpus", C, "--out", "{out}"],
                 "--epsilon 1e+308", id="train --algorithm hdp --epsilon 1e308"),
    pytest.param(["train", "--unit", "document", "--epsilon", "1", "--topics", "100001", "--corpus", C, "--out",
                  "{out}"], "--topics 100001", id="train --unit document --topics 100001"),
    # a person's flags without --unit user: the fix suggested is complete
    pytest.param(["train", "--documents-per-user", "2", "--corpus", "people.jsonl", "--out", "{out}"],
                 "add --unit user --epsilon EPS --user-field FIELD", id="train --documents-per-user without --unit"),
    # help for a unit and algorithm train refuses is that refusal
    pytest.param(["train", "--unit", "user", "--algorithm", "lda", "--help"], "--algorithm lda cannot give it",
                 id="train --unit user --algorithm lda --help"),
]


@pytest.mark.parametrize("argv, names", ARGV_CASES)
def test_a_bad_command_line_is_refused_in_one_line(setup, tmp_path, capsys, monkeypatch, argv, names):
    monkeypatch.chdir(setup)
    import dptopic.cli.serve

    def serving(*a, **k):       # a server that starts has taken a flag it should have refused
        raise AssertionError("the server started")

    monkeypatch.setattr(dptopic.cli.serve, "_serve_on", serving)
    (setup / "data.tsv").write_text("id\ttext\tlabel\n1\tapple banana cherry\ta\n2\tgrape lemon mango\tb\n")
    (setup / "data.xlsx").write_bytes(b"PK\x03\x04 not really a workbook")
    (setup / "run").mkdir(exist_ok=True)
    (setup / "run" / "audit.json").write_text("{not json")
    (setup / "zoo.txt").write_text("zebra quokka\nlemur yak\n")
    for kind, value in {"null": None, "object": {"x": 1}, "list": [1, 2], "bool": True}.items():
        (setup / f"ids-{kind}.jsonl").write_text(json.dumps({"id": "a", "text": "apple banana"}) + "\n"
                                                 + json.dumps({"id": value, "text": "cherry grape"}) + "\n")
    (setup / "copy.txt").write_text((setup / "corpus.txt").read_text())
    (setup / "people.jsonl").write_text('{"text": "apple banana cherry", "user": "a"}\n')
    argv = _fill([a.replace("{setup}", setup.name) for a in argv], setup, tmp_path)
    rc, err = _run(capsys, argv)
    _assert_one_line_refusal(rc, err, names=names)


def test_the_harness_can_fail(capsys):
    """A command that succeeds is not taken for a refusal, and a traceback is not taken for one line."""
    rc, err = _run(capsys, ["privacy", "compose", "--laplace", "1", "2"])
    with pytest.raises(AssertionError):
        _assert_one_line_refusal(rc, err)
    with pytest.raises(AssertionError):
        _assert_one_line_refusal("traceback", "ValueError: boom")
    with pytest.raises(AssertionError):
        _assert_one_line_refusal(2, "error: one\nerror: two\n")


# ---------------------------------------------------------------------------------------------------------------------
# Command lines that once ended in a traceback or a wrong exit status: one line, exit 2, no traceback, and an exit
# status a shell pipeline can read.

SRC = str(Path(__file__).resolve().parents[2] / "src")
ENV = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _cli(*args, cwd=None):
    return run_dptopic(*args, cwd=cwd)


@pytest.mark.parametrize("name, data, phrases", [
    ("l1.csv", ("text\n" + "plain words\n" * 50 + "Le café était réputé\n").encode("latin-1"),
     ("not UTF-8 text", "byte 0xe9 on line 52", "iconv")),
    ("l1.jsonl", '{"text": "Le café était"}\n'.encode("latin-1"), ("not UTF-8 text", "line 1")),
    ("l1.txt", "café résumé government\nthe dog\n".encode("latin-1"), ("not UTF-8 text", "byte 0xe9 on line 1")),
    ("u16.csv", "text\nhello world\n".encode("utf-16"), ("is UTF-16 text", "iconv -f UTF-16")),
    ("u16.txt", "hello world\n".encode("utf-16"), ("is UTF-16 text",)),
])
def test_text_that_is_not_utf8_is_refused_rather_than_read_without_its_accents(tmp_path, name, data, phrases):
    (tmp_path / name).write_bytes(data)
    _one_line(_cli("corpus", "info", tmp_path / name, "--stop-words", "none"), *phrases)


def test_utf8_with_accents_and_a_byte_order_mark_still_reads(tmp_path):
    (tmp_path / "ok.csv").write_bytes(("\ufefftext\n" + "le café était réputé\n" * 5).encode("utf-8"))
    r = _cli("corpus", "info", tmp_path / "ok.csv", "--stop-words", "none", "--json")
    assert r.returncode == 0, r.stderr
    import json

    assert "café" in [w["word"] for w in json.loads(r.stdout)["top_words"]]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    (d / "docs.txt").write_text("\n".join(["tax budget deficit spending revenue"] * 20
                                          + ["army navy war soldiers defense"] * 20))
    r = _cli("train", "--corpus", d / "docs.txt", "--algorithm", "lda", "--topics", "2", "--iterations", "5",
             "--out", d / "m", "--quiet")
    assert r.returncode == 0, r.stderr
    return d


@pytest.mark.parametrize("args", [("topics", "--model", "{m}"), ("corpus", "info", "{d}"),
                                  ("corpus", "info", "{d}", "--json")])
def test_a_reader_that_goes_away_gets_the_same_exit_status_from_every_output(model, args):
    # corpus info of a small file, not of the built-in demo corpus: the same printer, without a minute of tokenizing
    args = [a.format(m=model / "m", d=model / "docs.txt") for a in args]
    p = subprocess.Popen([sys.executable, "-m", "dptopic", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=ENV)
    p.stdout.close()                                           # `| head -0`: the reader is gone before any output
    err = p.stderr.read().decode()
    assert p.wait(timeout=300) == 141 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_documents_without_a_word_of_the_model_say_so(model, tmp_path):
    (tmp_path / "zoo.txt").write_text("zebra quokka\nlemur yak\n")
    _one_line(_cli("evaluate", "--model", model / "m", "--corpus", tmp_path / "zoo.txt"),
              "none of the 2 documents has a word of the given vocabulary")


def test_report_files_of_the_other_kind_name_the_right_trainer(model, tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("tax\nbudget\ndeficit\narmy\nnavy\nwar\n")
    for unit, out, flag in (("document", "doc.rep", ["--epsilon-doc", "8"]), ("word", "word.rep", ["--epsilon-word", "3"])):
        r = _cli("randomize", "--corpus", model / "docs.txt", "--unit", unit, *flag, "--vocabulary", vocab, "--out",
                 tmp_path / out)
        assert r.returncode == 0, r.stderr
    _one_line(_cli("train", "--algorithm", "lp", "--reports", tmp_path / "doc.rep", "--topics", "2", "--out",
                   tmp_path / "x"), "document-level reports", "ldp-doc")
    _one_line(_cli("train", "--algorithm", "ldp-doc", "--reports", tmp_path / "word.rep", "--topics", "2", "--out",
                   tmp_path / "y"), "word-level reports", "--algorithm lp")


def test_recommend_suggests_only_what_train_accepts():
    for extra in (["--epsilon", "1e308"], ["--epsilon", "1", "--topics", "100000000"]):
        r = _cli("recommend", "--unit", "document", "--docs", "100", *extra)
        out = " ".join(r.stdout.split())
        assert r.returncode == 0 and "train it: not at these settings" in out and "--corpus FILE" not in out, r.stderr
    r = _cli("recommend", "--unit", "document", "--epsilon", "1", "--docs", "100")
    assert "train it: dptopic train --unit document --epsilon 1 --topics 20 --corpus FILE" in " ".join(r.stdout.split())


def test_corpus_info_summarises_a_shard_folder_as_the_one_file_corpus(model, tmp_path):
    # the shards are read one at a time; the summary is the one of the same corpus prepared as one file (bar the
    # shards' own record), and options that would read text again are refused in one line
    for out, extra in ((tmp_path / "sh", ["--shards", "3"]), (tmp_path / "one.npz", [])):
        r = _cli("corpus", "prepare", "--corpus", model / "docs.txt", "--out", out, *extra)
        assert r.returncode == 0, r.stderr
    sharded, whole = (_cli("corpus", "info", p, "--json", "--top", "50") for p in (tmp_path / "sh", tmp_path / "one.npz"))
    assert sharded.returncode == 0 and whole.returncode == 0, sharded.stderr + whole.stderr
    a, b = json.loads(sharded.stdout), json.loads(whole.stdout)
    a.pop("metadata", None), b.pop("metadata", None)
    assert a == b and a["documents"] > 3 and len(a["top_words"]) > 5
    _one_line(_cli("corpus", "info", tmp_path / "sh", "--max-vocab", "5"), "folder of corpus shards",
              "--max-vocab does not apply")


def test_a_full_batch_budget_too_small_names_iterations_not_epochs():
    from dptopic.accounting.gaussian import calibrate_noise_multiplier
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="or fewer iterations") as e:
        calibrate_noise_multiplier(1e-300, 1e-5, 1.0, 3)
    assert "epochs" not in str(e.value)
    with pytest.raises(DPTopicError, match="fewer epochs or a smaller sampling rate"):
        calibrate_noise_multiplier(1e-300, 1e-5, 0.1, 30)


# ---- flags that did nothing, values changed silently, inputs read loosely (the list left at stop 39)
def test_a_field_flag_on_a_format_without_fields_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("hello world again\nfoo bar baz\n")
    _one_line(_cli("corpus", "info", tmp_path / "a.txt", "--text-field", "body"),
              "--text-field names a JSONL field or CSV column", "file of one document per line", "drop it")
    _one_line(_cli("corpus", "info", "demo", "--label-field", "party"), "--label-field", "the built-in corpus")
    (tmp_path / "a.jsonl").write_text('{"body": "hello world again"}\n')   # where the flag applies, it still works
    r = _cli("corpus", "info", tmp_path / "a.jsonl", "--text-field", "body", "--stop-words", "none")
    assert r.returncode == 0, r.stderr


def test_report_refuses_reference_flags_without_a_reference(model, tmp_path):
    for flag in (("--format", "csv"), ("--reference-public",), ("--text-field", "body")):
        _one_line(_cli("report", "--model", model / "m", "--out", tmp_path / "r.html", *flag),
                  f"{flag[0]} describe", "add --reference CORPUS")
    assert not (tmp_path / "r.html").exists()


def test_privacy_hdp_takes_one_question_at_a_time():
    _one_line(_cli("privacy", "hdp", "--clip", "10", "--epsilon", "2000", "--epsilon-laplace", "0.1"),
              "give at most one of --epsilon", "--epsilon-laplace")
    r = _cli("privacy", "hdp", "--clip", "10")
    assert r.returncode == 0 and "give --epsilon to split" in " ".join(r.stdout.split()), r.stdout


def test_audit_refuses_more_targets_than_shadows(model):
    _one_line(_cli("audit", "--algorithm", "lda", "--corpus", model / "docs.txt", "--shadows", "4", "--targets", "9",
                   "--out", model / "audit"), "invalid --targets 9", "at most --shadows (4)")


def test_lira_records_the_targets_it_attacked():
    import numpy as np

    from dptopic.attacks.lira import ShadowScores, run_lira
    from dptopic.corpus import Corpus

    rng = np.random.default_rng(0)
    n, d = 4, 6
    members = np.zeros((n, d), bool)
    members[0::2, :3] = members[1::2, 3:] = True
    shadows = ShadowScores(scores=rng.normal(size=(n, d)), members=members, huang={}, privacy=None, n_excluded=0)
    corpus = Corpus.from_texts(["tax war"] * d, stop_words=None)
    res = run_lira(corpus, None, shadows=shadows, n_targets=99)
    assert res.settings["n_targets"] == n


def test_train_says_save_metrics_changes_nothing_without_privacy(model, tmp_path):
    r = _cli("train", "--corpus", model / "docs.txt", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
             "--out", tmp_path / "m", "--quiet", "--save-metrics")
    assert r.returncode == 0, r.stderr
    assert "--save-metrics changes nothing here" in " ".join(r.stdout.split())


def test_svi_budget_beyond_the_least_noise_warns_with_what_it_spends():
    import dptopic

    with pytest.warns(UserWarning, match=r"spends epsilon = 50\.4\d, below the budget"):
        m = dptopic.DPSVI.from_budget(1e308, 1e-5, n_topics=3)
    assert m.noise_multiplier == 0.25
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")       # a budget the noise can meet says nothing
        dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=3)


@pytest.mark.parametrize("data, phrase", [(bytes(range(256)) * 8, "binary file"), ("café\n".encode("latin-1"), "not UTF-8")])
def test_stop_word_and_vocabulary_files_are_read_as_strict_utf8(tmp_path, data, phrase):
    (tmp_path / "w.txt").write_bytes(data)
    _one_line(_cli("corpus", "info", "demo", "--stop-words", tmp_path / "w.txt"), phrase)
    _one_line(_cli("train", "--corpus", "demo", "--vocabulary", tmp_path / "w.txt", "--out", tmp_path / "m"), phrase)


def test_a_corpus_of_another_format_version_is_refused(tmp_path):
    import io
    import json

    import numpy as np

    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    Corpus.from_texts(["tax budget deficit", "army navy war"], stop_words=None).save(tmp_path / "c.npz")
    with np.load(tmp_path / "c.npz", allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["meta"].tobytes().decode())
    assert meta["version"] == 1
    meta["version"] = 2
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    (tmp_path / "c.npz").write_bytes(buf.getvalue())
    with pytest.raises(DPTopicError, match="format version 2, and this dptopic reads version 1"):
        Corpus.load(tmp_path / "c.npz")


def test_records_sharing_an_id_are_refused(tmp_path):
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    (tmp_path / "d.jsonl").write_text('{"id": "a", "text": "hello world again"}\n{"id": "b", "text": "x y z"}\n'
                                      '{"id": "a", "text": "foo bar baz"}\n')
    with pytest.raises(DPTopicError, match="records 1 and 3 share the id 'a'"):
        Corpus.from_jsonl(tmp_path / "d.jsonl", id_field="id")
    with pytest.warns(UserWarning, match=r"records 1 and 3 share the field 'id' value 'a', so the documents are named doc0"):
        c = Corpus.from_jsonl(tmp_path / "d.jsonl", id_field="id", require_ids=False, stop_words=None)
    assert c.doc_ids[0] == "doc0"
    (tmp_path / "d.csv").write_text("id,text\n1,hello world\n1,foo bar\n")
    with pytest.raises(DPTopicError, match="records 1 and 2 share the id '1'"):
        Corpus.from_csv(tmp_path / "d.csv", id_column="id")


def test_a_database_other_than_sqlite_or_postgresql_is_named_not_left_to_a_missing_driver():
    from dptopic.service.storage import Storage, StorageError

    for url in ("mysql://u@localhost/x", "mssql+pyodbc://u@dsn"):
        with pytest.raises(StorageError, match=r"is not supported: the service stores its data in SQLite"):
            Storage(url)


def test_one_attempt_is_not_plural():
    import socket

    from dptopic.contributor.client import ServerError, ServiceClient

    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ServerError, match=r"failed after 1 attempt \("):
        ServiceClient(f"http://127.0.0.1:{port}", retries=0, timeout=2).request("GET", "/v1/config")
    with pytest.raises(ServerError, match=r"failed after 2 attempts \("):
        ServiceClient(f"http://127.0.0.1:{port}", retries=1, timeout=2, backoff=0.01).request("GET", "/v1/config")


@pytest.mark.parametrize("rows, where", [("1 1 x\n", "line 4, field 3 is 'x', not a whole number"),
                                         ("1 1 2\n1 2 2.5\n", "line 5, field 3 is '2.5', not a whole number"),
                                         ("1 1 2\n2 2\n", "line 5 has 2 fields, not 3")])
def test_a_bad_uci_line_is_named_by_its_line_in_the_file(tmp_path, rows, where):
    (tmp_path / "vocab.x.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "docword.x.txt").write_text(f"3\n4\n{rows.count(chr(10))}\n{rows}")
    _one_line(_cli("corpus", "info", tmp_path / "docword.x.txt", "--vocab", tmp_path / "vocab.x.txt"), where)


def test_a_model_folder_may_be_given_as_privacy_verify_takes_it(model):
    m = model / "m"
    a, b = _cli("topics", m, "--format", "csv"), _cli("topics", "--model", m, "--format", "csv")
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout.startswith("topic,rank,word,weight"), a.stderr
    r = _cli("evaluate", m, "--corpus", model / "docs.txt", "--json")
    assert r.returncode == 0 and '"npmi"' in r.stdout, r.stderr
    _one_line(_cli("topics"), "no model given", "dptopic topics MODEL, or --model MODEL")
    _one_line(_cli("topics", m, "--model", model / "other"), "two models given")
    assert _cli("topics", m, "--model", m, "--format", "csv").stdout == a.stdout     # the same folder twice is fine


def test_a_bad_uci_line_after_blank_lines_is_still_named_by_its_line(tmp_path):
    (tmp_path / "vocab.x.txt").write_text("a\nb\nc\nd\n")
    (tmp_path / "docword.x.txt").write_text("2\n4\n3\n1 1 2\n\n1 2 1\n2 3 x\n")
    _one_line(_cli("corpus", "info", tmp_path / "docword.x.txt", "--vocab", tmp_path / "vocab.x.txt"),
              "line 7, field 3 is 'x'")
    (tmp_path / "docword.y.txt").write_text("2\n4\n3\n1 1 2\n\n\n2 3\n")
    _one_line(_cli("corpus", "info", tmp_path / "docword.y.txt", "--vocab", tmp_path / "vocab.x.txt"),
              "line 7 has 2 fields, not 3")


def test_train_on_a_word_list_counts_stop_words_and_case_when_told_and_refuses_data_cuts(tmp_path):
    # with --vocabulary, --stop-words and --no-lowercase were silently ignored, so the
    # warning's own advice ("pass --stop-words none to count them") could not be followed; --max-vocab was ignored
    import random

    rnd = random.Random(7)
    words = "The the apple Apple banana BANANA cherry grape of and".split()
    (tmp_path / "t.txt").write_text("\n".join(" ".join(rnd.choices(words, k=8)) for _ in range(40)) + "\n")
    (tmp_path / "v.txt").write_text("the\nThe\napple\nApple\nbanana\ncherry\n")
    base = ["train", "--corpus", tmp_path / "t.txt", "--vocabulary", tmp_path / "v.txt", "--topics", "2",
            "--iterations", "2", "--seed", "0", "--quiet"]

    def tokens(out, *extra):
        r = _cli(*base, *extra, "--out", tmp_path / out)
        assert r.returncode == 0, r.stderr
        return " ".join(r.stdout.split())

    plain, counted = tokens("a"), tokens("b", "--stop-words", "none", "--no-lowercase")
    text = (tmp_path / "t.txt").read_text().split()
    exact = sum(w in {"the", "The", "apple", "Apple", "banana", "cherry"} for w in text)
    assert f"{exact} tokens" in counted and f"{exact} tokens" not in plain
    _one_line(_cli(*base, "--max-vocab", "3", "--out", tmp_path / "c"), "--vocabulary gives the words", "--max-vocab")
    r = _cli("train", "--corpus", tmp_path / "t.txt", "--unit", "document", "--epsilon", "1", "--delta", "1e-5",
             "--private-vocabulary", "5,1e-3", "--max-df", "0.5", "--out", tmp_path / "d")
    _one_line(r, "--private-vocabulary chooses the words", "--max-df")
    assert not (tmp_path / "c").exists() and not (tmp_path / "d").exists()


def test_corpus_prepare_on_a_word_list_counts_stop_words_when_told(tmp_path):
    (tmp_path / "t.txt").write_text("the apple banana the cherry\nthe apple the banana\n")
    (tmp_path / "v.txt").write_text("the\napple\nbanana\ncherry\n")
    r = _cli("corpus", "prepare", "--corpus", tmp_path / "t.txt", "--vocabulary", tmp_path / "v.txt", "--stop-words",
             "none", "--out", tmp_path / "c.npz")
    assert r.returncode == 0, r.stderr
    from dptopic.corpus import Corpus

    assert Corpus.load(tmp_path / "c.npz").n_tokens == 9        # "the" counted four times
    _one_line(_cli("corpus", "prepare", "--corpus", tmp_path / "t.txt", "--vocabulary", tmp_path / "v.txt",
                   "--min-df", "2", "--out", tmp_path / "d.npz"), "--vocabulary gives the words", "--min-df")


def test_stop_words_beside_a_word_list_on_a_prepared_corpus_are_refused(tmp_path):
    # they were silently ignored there, while text read with them drops the list's stop words
    (tmp_path / "t.txt").write_text("the apple banana the cherry\nthe apple the banana\ncherry the apple\n" * 10)
    (tmp_path / "v.txt").write_text("the\napple\nbanana\ncherry\n")
    assert _cli("corpus", "prepare", "--corpus", tmp_path / "t.txt", "--stop-words", "none", "--out",
                tmp_path / "c.npz").returncode == 0
    _one_line(_cli("train", "--corpus", tmp_path / "c.npz", "--vocabulary", tmp_path / "v.txt", "--stop-words",
                   "english", "--topics", "2", "--out", tmp_path / "m"), "--stop-words applies to raw text")
    # no stop words ("none", also what randomize and serve ask for) removes nothing, so it stays allowed
    r = _cli("train", "--corpus", tmp_path / "c.npz", "--vocabulary", tmp_path / "v.txt", "--stop-words", "none",
             "--topics", "2", "--iterations", "2", "--out", tmp_path / "m2", "--quiet")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("odd, what", [("/dev/zero", "a device"), ("a-fifo.txt", "a named pipe")])
@pytest.mark.parametrize("argv", [
    ["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
     "--corpus", C, "--vocabulary", "ODD"],
    ["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
     "--corpus", C, "--stop-words", "ODD"],
    ["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
     "--corpus", "ODD", "--format", "text"],
    ["corpus", "info", "ODD"],
    ["corpus", "prepare", "--corpus", C, "--vocabulary", "ODD", "--out", "{out}.npz"],
    ["privacy", "verify", "ODD"],
    ["serve", "--vocabulary", W, "--epsilon-word", "2", "--token-file", "ODD", "--database", "sqlite:///{out}.db"],
], ids=["train --vocabulary", "train --stop-words", "train --corpus", "corpus info", "corpus prepare --vocabulary",
        "privacy verify", "serve --token-file"])
def test_a_file_that_is_not_a_regular_file_is_named_for_what_it_is(setup, tmp_path, capsys, monkeypatch, argv, odd,
                                                                    what):
    monkeypatch.chdir(setup)
    argv = [odd if a == "ODD" else a for a in _fill(argv, setup, tmp_path)]
    rc, err = _run(capsys, argv)
    line = _assert_one_line_refusal(rc, err, names=odd)
    assert what in line and "not a regular file" in line and "not found" not in line, line


@pytest.mark.parametrize("value", ["0", "-1", "many"])
def test_an_unusable_numba_num_threads_is_refused_in_one_line(setup, tmp_path, capsys, monkeypatch, value):
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    rc, err = _run(capsys, _fill(["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size",
                                  "0", "--corpus", C, "--out", "{out}"], setup, tmp_path))
    _assert_one_line_refusal(rc, err, names="NUMBA_NUM_THREADS")
    assert not (tmp_path / "out").exists()


def test_an_out_folder_another_run_is_writing_is_refused_in_one_line(setup, tmp_path, capsys):
    import threading

    from dptopic._io import claim_output, release_output

    held, done = threading.Event(), threading.Event()

    def other_run():            # another run of this process holds --out until the refusal has been seen
        claim_output(tmp_path / "out")
        held.set()
        done.wait(60)
        release_output()

    t = threading.Thread(target=other_run)
    t.start()
    try:
        assert held.wait(30)
        rc, err = _run(capsys, _fill(["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2",
                                      "--test-size", "0", "--corpus", C, "--out", "{out}"], setup, tmp_path))
        _assert_one_line_refusal(rc, err, names="--out")
        assert "being written by another run" in err and not (tmp_path / "out").exists()
    finally:
        done.set()
        t.join()


def test_keep_urls_on_a_corpus_already_tokenised_is_refused_in_one_line(setup, tmp_path, capsys):
    rc, _ = _run(capsys, ["corpus", "prepare", "--corpus", str(setup / "corpus.txt"), "--out", str(tmp_path / "c.npz")])
    assert rc == 0
    rc, err = _run(capsys, ["corpus", "info", str(tmp_path / "c.npz"), "--keep-urls"])
    _assert_one_line_refusal(rc, err, names="--keep-urls")
