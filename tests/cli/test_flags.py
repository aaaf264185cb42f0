"""Every numeric flag of every command, given a value out of its range, is refused in one line that names the flag
the user typed, never a library parameter (``invalid count=1000000000`` for ``--reports-per-contributor``).

The flags are read from the parser, so a new numeric flag is checked as soon as it exists: it needs a command line
in :data:`BASES` (its command's) and, for ``train``, an algorithm it applies to (:func:`_train_base`). Each command
line is otherwise valid and cheap; a value the command accepts ends as the command without it ends (its baseline:
success, or a later refusal such as an unreachable server), and that is not a range error.
"""
from __future__ import annotations

import argparse
import re
import signal

import pytest

from dptopic.cli.main import build_parser, main

C, W, M, OUT = "{corpus}", "{words}", "{model}", "{out}"
NO_SERVER = "http://127.0.0.1:9"
SMALL = ["--topics", "2", "--iterations", "2"]
EXPERIMENT = ["--max-docs", "30", "--topics", "2", "--out", OUT]

# a cheap, otherwise valid command line per command (None: the command has no numeric flag to check)
BASES = {
    "demo": ["demo", *SMALL, "--out", OUT, "--quiet"],
    "evaluate": ["evaluate", M, "--corpus", C],
    "topics": ["topics", M],
    "recommend": ["recommend", "--epsilon", "3", "--docs", "2000"],
    "pull": ["pull", "--server", NO_SERVER, "--out", OUT, "--retries", "0"],
    "corpus prepare": ["corpus", "prepare", "--corpus", C, "--out", OUT + ".npz"],
    "corpus info": ["corpus", "info", C],
    "privacy inherent": ["privacy", "inherent", "--n-t", "100", "--max-n-tprime", "120"],
    "privacy hdp": ["privacy", "hdp", "--clip", "20"],
    "privacy compose": ["privacy", "compose", "--laplace", "1", "2"],
    "privacy fed-report-words": ["privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "500", "--users",
                                 "100"],
    "experiment hdp-utility": ["experiment", "hdp-utility", *EXPERIMENT, "--iterations", "2", "--seeds", "1",
                               "--eps-grid", "1"],
    "experiment topic-attack": ["experiment", "topic-attack", *EXPERIMENT, "--iterations", "2", "--seeds", "1",
                                "--targets", "2"],
    "experiment ldp-utility": ["experiment", "ldp-utility", *EXPERIMENT, "--iterations", "2", "--seeds", "1",
                               "--eps-grid", "3"],
    "experiment olp": ["experiment", "olp", "--max-docs", "200", "--topics", "2", "--out", OUT, "--iterations", "2",
                       "--eps-grid", "3", "--batches", "1", "--batch-size", "10", "--prior-size", "10",
                       "--prior-sizes", "10", "--batch-sizes", "10", "--max-test-docs", "20"],
    "experiment svi": ["experiment", "svi", *EXPERIMENT, "--seeds", "1", "--epochs", "1"],
    "experiment fedlda": ["experiment", "fedlda", *EXPERIMENT, "--rounds", "1", "--tasks", "sotu", "--no-figures"],
    "experiment lira": ["experiment", "lira", "--corpus", C, "--topics", "2", "--shadows", "4", "--out", OUT,
                        "--quiet"],
    "experiment classifier-mia": ["experiment", "classifier-mia", "--corpus", "demo", "--subsample", "60",
                                  "--max-vocab", "50", "--topics", "2", "--iterations", "2", "--shadows", "4",
                                  "--out", OUT],
    "randomize": ["randomize", "--vocabulary", W, "--corpus", C, "--epsilon-word", "2", "--out", OUT],
    "audit": ["audit", "--algorithm", "lda", *SMALL, "--corpus", C, "--shadows", "4", "--out", OUT],
    "report": ["report", M, "--out", OUT + ".html"],
    "serve": ["serve", "--vocabulary", W, "--epsilon-word", "2", "--database", "sqlite:///" + OUT + ".db",
              "--topics", "2", "--port", "8799"],
    "submit": ["submit", "--server", NO_SERVER, "--corpus", C, "--retries", "0", "--state", "none"],
    "fed-client": ["fed-client", "--server", NO_SERVER, "--corpus", C, "--retries", "0", "--state", "none"],
}

# what a flag needs besides its command's line to take effect (serve's FedLDA flags need FedLDA on)
FLAG_NEEDS = {
    ("experiment lira", "--eps-t-grid"): ["--private-vocabulary", "50", "--dp-algorithm", "svi", "--eps-t-grid", "1"],
    ("experiment lira", "--delta-v"): ["--private-vocabulary", "50"],
    ("serve", "--prior-iterations"): ["--prior", C],
    ("recommend", "--doc-length"): ["--unit", "word"],
    **{("serve", f"--fed-{name}"): ["--fed-epsilon-per-entry", "2"] for name in ("topics", "pad-length", "sample-ratio",
                                                                       "min-updates", "report-words")},
}
# a flag that another of its command line's flags excludes: the whole command line
FLAG_BASE = {
    ("train", "--epsilon-laplace"): ["train", "--algorithm", "hdp", "--corpus", C, "--test-size", "0", *SMALL, "--out", OUT],
    ("train", "--user-budget"): ["train", "--algorithm", "fed", "--corpus", C, "--test-size", "0", "--topics", "2",
                                 "--rounds", "2", "--out", OUT],
    ("train", "--noise-multiplier"): ["train", "--algorithm", "svi", "--corpus", C, "--test-size", "0", "--topics",
                                      "2", "--epochs", "1", "--noise-multiplier", "1", "--out", OUT],
    **{("audit", flag): ["audit", "--algorithm", "lda", *SMALL, "--corpus", C, "--design", "one-run", "--canaries",
                         "10", "--out", OUT]
       for flag in ("--canaries", "--canary-length")},
    ("audit", "--epsilon"): ["audit", "--algorithm", "cdp", *SMALL, "--corpus", C, "--shadows", "4", "--out", OUT],
    ("randomize", "--epsilon-doc"): ["randomize", "--vocabulary", W, "--corpus", C, "--unit", "document", "--out",
                                     OUT],
    ("serve", "--epsilon-doc"): ["serve", "--vocabulary", W, "--report-kind", "document", "--database",
                                 "sqlite:///" + OUT + ".db", "--topics", "2", "--port", "8799"],
}

# flags that never take effect (kept so that a script that passes one is told so): serve's rounds use the 'none'
# rule, which excludes no rare words
NEVER_TAKE_EFFECT = {("serve", "--fed-failure-rate")}

# train: the arguments each algorithm needs besides a corpus (or reports)
ALGORITHM_ARGS = {
    "lda": [], "cdp": ["--paper-epsilon", "5"], "cdp+": ["--paper-epsilon", "5"], "hdp": ["--epsilon-laplace", "5"],
    "lp": ["--reports", "{reports}"], "olp": ["--reports", "{reports}", "--prior", C],
    "ldp-doc": ["--reports", "{document_reports}"], "fed": ["--epsilon-per-entry", "5", "--rounds", "2"],
    "svi": ["--epsilon", "5", "--epochs", "1"], "online-vb": ["--epochs", "1"],
    "docdp": ["--epsilon", "5"], "docdp-cooc": ["--epsilon", "5"],
}
LOCAL = ("lp", "olp", "ldp-doc")
# train flags that one family only reads (train refuses them elsewhere), and where to check them
TRAIN_FLAG_ALGORITHM = {"--epochs": "svi", "--batch-size": "olp", "--user-budget": "fed"}


def _train_base(dest: str) -> list:
    from dptopic.cli.train import _ALGORITHM_ONLY

    flag = "--" + dest.replace("_", "-")
    algorithm = TRAIN_FLAG_ALGORITHM.get(flag) or (_ALGORITHM_ONLY[dest][1][0] if dest in _ALGORITHM_ONLY else "lda")
    if dest == "delta":     # cdp/cdp+ claim no guarantee: their count releases' delta is --count-release-delta
        algorithm = "hdp"
    if dest == "epsilon":       # a guarantee: cdp/cdp+ (no guarantee) take --paper-epsilon
        algorithm = "docdp"
    source = [] if algorithm in LOCAL else ["--corpus", C, "--test-size", "0"]
    small = ["--topics", "2"] + (["--iterations", "2"] if algorithm in ("lda", "cdp", "cdp+", "hdp", "lp", "olp")
                                 else [])
    return ["train", "--algorithm", algorithm, *source, *ALGORITHM_ARGS[algorithm], *small, "--out", OUT]


def _numeric_flags():
    """(command, dest, flag) for every option of every command whose value is a number (its type is not str)."""
    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from walk(sub, prefix + [name])
                return
        yield " ".join(prefix), parser

    for command, parser in walk(build_parser(), []):
        for action in parser._actions:
            if action.option_strings and action.type not in (None, str) and action.dest != "help":
                yield command, action.dest, max(action.option_strings, key=len)


# the experiments and the demo load the bundled demo corpus and run small experiments: slow (pytest -m slow)
NUMERIC_FLAGS = [pytest.param(c, d, f, id=f"{c} {f}",
                              marks=[pytest.mark.slow] if c.startswith(("experiment", "demo")) else [])
                 for c, d, f in _numeric_flags()]
# out of every range: a negative number and one far above any bound (a seed may take both; then it runs)
VALUES = ["-1", "1000000000000"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("numeric-flags")
    words = ("apple banana cherry grape lemon mango melon olive peach pear plum quince berry date fig kiwi lime"
             " nectarine orange papaya").split()
    import numpy as np

    rng = np.random.default_rng(0)
    (root / "corpus.txt").write_text("\n".join(" ".join(rng.choice(words, 12)) for _ in range(40)) + "\n")
    (root / "words.txt").write_text("\n".join(words) + "\n")
    run = [str(a) for a in ["train", "--algorithm", "lda", "--corpus", root / "corpus.txt", "--topics", "2",
                            "--iterations", "2", "--test-size", "0", "--seed", "0", "--out", root / "model", "--quiet"]]
    assert main(run) == 0
    for name, extra in (("reports.bin", ["--epsilon-word", "2"]), ("doc-reports.bin", ["--unit", "document",
                                                                                       "--epsilon-doc", "4"])):
        assert main(["randomize", "--vocabulary", str(root / "words.txt"), "--corpus", str(root / "corpus.txt"),
                     *extra, "--out", str(root / name)]) == 0
    return {"corpus": root / "corpus.txt", "words": root / "words.txt", "model": root / "model",
            "reports": root / "reports.bin", "document_reports": root / "doc-reports.bin"}


class _Guard(Exception):
    pass


def _run(capsys, argv, seconds=5):
    """(exit status, stderr) of ``main(argv)`` in-process; a run still going after ``seconds`` took its values."""
    def stop(*_):
        raise _Guard

    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    except _Guard:
        rc = "ran"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, capsys.readouterr().err


def _fill(argv, files, out):
    values = {**{k: str(v) for k, v in files.items()}, "out": str(out)}
    return [a.format(**values) if "{" in a else a for a in argv]


@pytest.fixture
def no_server(monkeypatch):
    from dptopic.cli import serve
    from dptopic.errors import DPTopicError

    def started(*a, **kw):
        raise DPTopicError("the server would have started")

    monkeypatch.setattr(serve, "_serve_on", started)


_baselines: dict = {}
# how a valid command line without a server ends: it got past every check of its flags
LATER = re.compile(r"Connection refused|the server would have started")


@pytest.mark.parametrize("command, dest, flag", NUMERIC_FLAGS)
def test_an_out_of_range_number_is_refused_naming_the_flag(files, tmp_path, capsys, no_server, command, dest, flag):
    if (command, flag) in NEVER_TAKE_EFFECT:
        pytest.skip(f"{command} {flag} is refused whatever its value")
    base = FLAG_BASE.get((command, flag)) or (_train_base(dest) if command == "train" else BASES.get(command))
    assert base is not None, f"add a cheap valid command line for {command!r} to BASES"
    base = base + FLAG_NEEDS.get((command, flag), [])
    key = " ".join(base)
    if key not in _baselines:
        _baselines[key] = _run(capsys, _fill(base, files, tmp_path / "baseline"))
    baseline = _baselines[key]
    # the command line is valid: it succeeds, or fails only where a server is needed
    assert baseline[0] in (0, "ran") or LATER.search(baseline[1]), (base, baseline)
    for i, value in enumerate(VALUES):
        argv = _fill(base, files, tmp_path / f"out{i}") + [flag, value]
        rc, err = _run(capsys, argv)
        assert rc in (0, 2, "ran") and "Traceback" not in err, (argv, rc, err)
        lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
        if rc != 2 or lines == [ln for ln in baseline[1].splitlines() if ln.startswith("error:")]:
            continue        # the value was taken: the command ended as it does without it
        assert len(lines) == 1, (argv, err)
        assert flag in lines[0], f"{' '.join(argv[:3])} ... {flag} {value}: the error does not name {flag}: {lines[0]}"
        assert "has no effect" not in lines[0], f"choose a command line where {flag} applies: {lines[0]}"


def test_train_reports_per_contributor_out_of_range_names_the_flag(files, tmp_path, capsys):
    for algorithm, reports in (("lp", files["reports"]), ("ldp-doc", files["document_reports"])):
        rc, err = _run(capsys, ["train", "--algorithm", algorithm, "--reports", reports, "--topics", "2",
                                "--reports-per-contributor", "1000000000", "--out", tmp_path / algorithm])
        assert rc == 2 and "error: invalid --reports-per-contributor 1000000000:" in err, err
        assert "count=" not in err
