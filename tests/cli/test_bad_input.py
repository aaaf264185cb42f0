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

import pytest

from dptopic.cli.main import main

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
    return root


# kinds of bad file: name under the setup folder (missing.json does not exist)
BAD_FILES = ["missing.json", "empty.json", "nul.json", "latin1.json", "prose.json", "truncated.json", "list.json",
             "a-folder"]
# kinds that are a bad *model folder*: a file, a missing path, an empty folder
BAD_MODELS = ["missing-model", "prose.json", "a-folder", "nul.json"]
# a corpus file: a text file is valid as one document per line, so only the kinds no reader can take
BAD_CORPORA = ["missing.txt", "empty.json", "nul.json", "a-folder"]

M, C, W = "{model}", "{corpus}", "{words}"

# command line with BAD where the file under test goes, and the kinds of bad file it is given
FILE_CASES = [
    # training and evaluation
    (["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
      "--corpus", "BAD"], BAD_CORPORA),
    (["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
      "--corpus", C, "--vocabulary", "BAD"], ["missing.txt", "empty.json", "nul.json", "a-folder"]),
    (["train", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "{out}",
      "--corpus", C, "--stop-words", "BAD"], ["missing.txt", "nul.json", "a-folder"]),
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
     ["missing.txt", "empty.json", "nul.json", "a-folder"]),
    # privacy
    (["privacy", "verify", "BAD"], BAD_MODELS),
    # contributor side, without a server: the files are read first
    (["randomize", "--vocabulary", "BAD", "--corpus", C, "--unit", "document", "--epsilon-doc", "2", "--out", "{out}.jsonl"],
     ["missing.txt", "empty.json", "nul.json", "a-folder"]),
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
    argv = _fill(argv, setup, tmp_path)
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
