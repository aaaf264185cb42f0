"""Every numeric flag of every command, given a value out of its range, is refused in one line that names the flag
the user typed, never a library parameter (``invalid count=1000000000`` for ``--reports-per-contributor``).

The flags are read from the parser, so a new numeric flag is checked as soon as it exists: it needs a command line
in :data:`BASES` (its command's) and, for ``train``, an algorithm it applies to (:func:`_train_base`). Each command
line is otherwise valid and cheap; a value the command accepts ends as the command without it ends (its baseline:
success, or a later refusal such as an unreachable server), and that is not a range error.
"""
from __future__ import annotations

import argparse
import json
import random
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
    "refit": ["refit", "{cooc_model}", "--topics", "2", "--out", OUT],
    "search": ["search", "--corpus", C, "--epsilon", "1", "--grid", "topics=2", "--expected-runs", "1.5",
               "--no-ledger", "--out", OUT],
    "budget cap": ["budget", "cap", "--ledger", OUT + ".sqlite", "--dataset", "d", "--epsilon", "1"],
    "budget plan": ["budget", "plan", "--ledger", "{ledger}", "--dataset", "d", "--algorithm", "docdp-cooc",
                    "--epsilon", "1"],
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
    "secure-sum invite": ["secure-sum", "invite", "--key", OUT + ".key", "--count", "5", "--out", OUT, "--collusion",
                          "1"],
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
    from dptopic.cli._train_flags import algorithm_only

    flag = "--" + dest.replace("_", "-")
    algorithm = TRAIN_FLAG_ALGORITHM.get(flag) or (algorithm_only()[dest][1][0] if dest in algorithm_only() else "lda")
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
    assert main([str(a) for a in ["train", "--algorithm", "docdp-cooc", "--corpus", root / "corpus.txt", "--vocabulary",
                                  root / "words.txt", "--epsilon", "1", "--topics", "2", "--test-size", "0",
                                  "--no-ledger", "--out", root / "cooc", "--quiet"]]) == 0
    assert main(["budget", "cap", "--ledger", str(root / "ledger.sqlite"), "--dataset", "d", "--epsilon", "1000"]) == 0
    return {"corpus": root / "corpus.txt", "words": root / "words.txt", "model": root / "model",
            "cooc_model": root / "cooc", "ledger": root / "ledger.sqlite",
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


# ---------------------------------------------------------------------------------------------------------------------
# One spelling of a flag works wherever its meaning is the same.

WORDS = "apple pear fruit banana engine wheel brake car god know space orbit".split()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("m")
    docs = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(10)) for i in range(40)]
    (d / "c.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    assert main(["train", "--algorithm", "lda", "--corpus", str(d / "c.jsonl"), "--topics", "2", "--iterations", "2",
                 "--seed", "0", "--quiet", "--out", str(d / "m")]) in (0, None)
    return d


@pytest.mark.parametrize("flag", ["-n", "--top-n", "--top"])
def test_words_per_topic_take_every_spelling(model, flag, capsys):
    capsys.readouterr()
    assert main(["topics", str(model / "m"), flag, "3", "--format", "json"]) in (0, None)
    topics = json.loads(capsys.readouterr().out)["topics"]
    assert all(len(t["words"]) == 3 for t in topics)
    assert main(["evaluate", str(model / "m"), "--corpus", str(model / "c.jsonl"), flag, "4", "--json"]) in (0, None)
    assert json.loads(capsys.readouterr().out)["top_n"] == 4
    assert main(["report", str(model / "m"), "--out", str(model / f"r{flag}.html"), flag, "2"]) in (0, None)
    assert (model / f"r{flag}.html").exists()


def test_model_json_records_how_text_was_read_and_the_audit_reads_it(tmp_path, capsys):
    """model.json did not record the stop words or the case folding, so the audit guessed them from the vocabulary:
    a stop-word file of the user's own was taken for English's list, and its words came back into the coverage
    check's reference. The reading is now recorded (settings, not data) and read back."""

    from dptopic.attacks.audit import model_reading, prepared_spec
    from dptopic.models.base import load as load_model

    stop = tmp_path / "stop.txt"
    stop.write_text("apple\npear\n")
    docs = [" ".join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(10)) + " The Apple" for i in range(40)]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    assert main(["train", "--algorithm", "lda", "--corpus", str(tmp_path / "c.jsonl"), "--topics", "2", "--iterations",
                 "2", "--seed", "0", "--quiet", "--stop-words", f"english+{stop}", "--no-lowercase",
                 "--out", str(tmp_path / "m")]) in (0, None)
    saved = json.loads((tmp_path / "m" / "model.json").read_text())["tokenizer"]["reading"]
    # the file by its name only: its folders may name people or clients, and a model is meant to be shared
    assert saved == {"stop_words": "english+stop.txt", "lowercase": False, "min_length": 3}
    assert str(tmp_path) not in (tmp_path / "m" / "model.json").read_text()
    model = load_model(tmp_path / "m")
    prepared = prepared_spec(str(tmp_path / "c.jsonl"), "auto")
    assert not prepared and model_reading(model, prepared)["stop_words"] in ("english", "none")     # its words unknown: the vocabulary tells
    plain = [" ".join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(10)) for i in range(40)]   # no stop word
    (tmp_path / "c2.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in plain))
    assert main(["train", "--algorithm", "lda", "--corpus", str(tmp_path / "c2.jsonl"), "--topics", "2", "--iterations",
                 "2", "--seed", "0", "--quiet", "--stop-words", "none", "--out", str(tmp_path / "m2")]) in (0, None)
    # recorded "none": read so, though the vocabulary (no English stop word in it) would suggest "english"
    assert model_reading(load_model(tmp_path / "m2"), prepared) == {"stop_words": "none"}


def test_randomizers_say_which_budget_they_take():
    """Randomizer takes epsilon_word and DocumentRandomizer epsilon: the other's spelling was a bare TypeError."""
    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match=r"per word: give epsilon_word=.*DocumentRandomizer"):
        Randomizer(["a", "b"], epsilon=2.0)
    with pytest.raises(DPTopicError, match=r"per document: give epsilon=.*Randomizer\(vocabulary, epsilon_word"):
        DocumentRandomizer(["a", "b"], epsilon_word=2.0)
    with pytest.raises(DPTopicError, match="unexpected argument"):
        Randomizer(["a", "b"], epsilon_word=2.0, colour="red")
    assert Randomizer(["a", "b"], epsilon_word=2.0).f > 0


def test_serve_holds_its_port_from_the_check_to_the_start(tmp_path, monkeypatch):
    """serve checked that its port was free, let go of it, built the database, then let uvicorn bind: another
    program could take the port in between and the server died after creating its database. The checked sockets are
    now the ones the server listens on."""
    import socket

    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("sqlalchemy")
    from dptopic.service.startup import check_port_free

    held = check_port_free("127.0.0.1", 0, keep=True)        # port 0: any free port, for the check itself
    assert held and all(s.fileno() >= 0 for s in held)
    for s in held:
        s.close()
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()

    seen = {}

    def serve(self, sockets=None):
        seen["sockets"], seen["ports"] = sockets, [s.getsockname()[1] for s in sockets]
        self.started = True
        other = socket.socket()
        try:                                  # while the server starts, nobody else can bind its port
            other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with pytest.raises(OSError):
                other.bind(("127.0.0.1", port))
        finally:
            other.close()

    monkeypatch.setattr(uvicorn.Server, "run", serve)
    monkeypatch.setattr(uvicorn.Server, "__init__", lambda self, config: None)
    monkeypatch.setattr(uvicorn, "Config", lambda app, **kw: None)     # the real one sets up logging on pytest's stderr
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    assert main(["serve", "--vocabulary", str(tmp_path / "v.txt"), "--database", f"sqlite:///{tmp_path / 's.db'}",
                 "--topics", "2", "--epsilon-word", "1", "--port", str(port), "--quiet"]) in (0, None)
    assert seen["ports"] == [port]
    assert all(s.fileno() == -1 for s in seen["sockets"])        # let go once the server stops


@pytest.mark.parametrize("algorithm, extra", [("lda", ["--iterations", "2", "--seed", "0"]),
                                              ("svi", ["--epsilon", "1", "--epochs", "1"])])
def test_test_size_zero_trains_on_every_document(tmp_path, capsys, algorithm, extra):
    """--test-size had to lie in (0, 1): every model the CLI trained left a fifth of the documents out, as no
    scikit-learn, gensim or tomotopy fit does. 0 now trains on all of them and skips the held-out evaluation."""
    docs = [" ".join(WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(10)) for i in range(40)]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in docs))
    for size, out in (("0", "all"), ("0.2", "part")):
        assert main(["train", "--algorithm", algorithm, "--corpus", str(tmp_path / "c.jsonl"), "--topics", "2",
                     "--test-size", size, "--quiet", "--out", str(tmp_path / out), *extra]) in (0, None)
    printed = " ".join(capsys.readouterr().out.split())
    assert "train on all 40 (no held-out part, so no held-out evaluation: --test-size 0" in printed
    whole = json.loads((tmp_path / "all" / "model.json").read_text())
    part = json.loads((tmp_path / "part" / "model.json").read_text())
    if algorithm == "lda":      # a private model does not save the corpus's size
        assert whole["training"]["n_docs"] == 40 and part["training"]["n_docs"] < 40
    assert not whole.get("metrics") and "train 3" in printed
    with pytest.raises(SystemExit):
        main(["train", "--algorithm", algorithm, "--corpus", str(tmp_path / "c.jsonl"), "--topics", "2",
              "--test-size", "1", "--out", str(tmp_path / "x"), *extra])
    assert "must lie in [0, 1)" in capsys.readouterr().err


def test_randomizer_takes_a_count_matrix_as_every_estimator_does():
    import numpy as np
    import scipy.sparse as sp

    from dptopic.contributor.randomizer import Randomizer
    from dptopic.errors import DPTopicError

    X = np.array([[1, 0, 2], [0, 0, 0], [0, 3, 0]])
    rz = Randomizer(["a", "b", "c"], f=1e-9, simulation=True, seed=0)       # f tiny: reports are the presence bits
    for m in (X, sp.csr_matrix(X)):
        r = rz.randomize(m)
        assert r.n_reports == 3 and np.array_equal(r.bits(), X > 0)
    with pytest.raises(DPTopicError, match="2 columns but the vocabulary has 3 words"):
        rz.randomize(X[:, :2])


def test_document_randomizer_takes_a_count_matrix():
    import numpy as np
    import scipy.sparse as sp

    from dptopic.contributor.document_randomizer import DocumentRandomizer
    from dptopic.errors import DPTopicError

    X = np.array([[1, 0, 2, 0], [0, 3, 0, 1], [0, 0, 0, 0]])
    tokens = [["a", "c", "c"], ["b", "b", "b", "d"], []]
    for m in (X, sp.csr_matrix(X)):
        got = DocumentRandomizer(["a", "b", "c", "d"], epsilon=4.0, seed=1, simulation=True).randomize(m)
        want = DocumentRandomizer(["a", "b", "c", "d"], epsilon=4.0, seed=1, simulation=True).randomize(tokens)
        assert got.n_reports == 3 and got.to_bytes() == want.to_bytes()
    with pytest.raises(DPTopicError, match="3 columns but the vocabulary has 4 words"):
        DocumentRandomizer(["a", "b", "c", "d"], epsilon=4.0).randomize(X[:, :3])


def test_serve_stopped_with_ctrl_c_exits_cleanly(tmp_path, monkeypatch):
    """uvicorn re-raises the Ctrl-C it shut down on, and uvicorn.run caught it: serving on the checked sockets
    through uvicorn.Server lost that, and a clean stop exited 130 with 'interrupted'."""
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("sqlalchemy")

    def stopped(self, sockets=None):
        self.started = True
        raise KeyboardInterrupt

    monkeypatch.setattr(uvicorn.Server, "run", stopped)
    monkeypatch.setattr(uvicorn.Server, "__init__", lambda self, config: None)
    monkeypatch.setattr(uvicorn, "Config", lambda app, **kw: None)
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    args = ["serve", "--vocabulary", str(tmp_path / "v.txt"), "--database", f"sqlite:///{tmp_path / 's.db'}",
            "--topics", "2", "--epsilon-word", "1", "--port", str(port), "--quiet"]
    assert main(args) in (0, None)

    def failed(self, sockets=None):
        self.started = False

    monkeypatch.setattr(uvicorn.Server, "run", failed)
    assert main(args) == 2


def test_audit_table_marks_a_tpr_its_scores_cannot_resolve():
    """The experiments mark TPR@0.1% untestable with fewer than 1,000 non-member scores; the audit's table printed it
    (the TPR at FPR 0 under another name)."""
    from rich.console import Console

    from dptopic.reporting.terminal import audit_results_table as results_table

    row = {"auc": 0.7, "auc_se": 0.01, "tpr_at_fpr_0.01": 0.2, "tpr_at_fpr_0.001": 0.1, "tpr_at_fpr_0": 0.1}
    console = Console(width=200, record=True)
    console.print(results_table({"lira_online": {**row, "n_nonmembers": 500}}))
    text = " ".join(console.export_text().split())
    assert "20.000%" in text and "n/r" in text and "fewer non-member scores than 1/FPR" in text
    console = Console(width=200, record=True)
    console.print(results_table({"lira_online": {**row, "n_nonmembers": 5000}}))
    text = console.export_text()
    assert "n/r" not in text and "10.000%" in text


# ---------------------------------------------------------------------------------------------------------------------
# `dptopic train` refuses a flag that does not apply to the chosen trainer even when it is written at its default
# value (it used to compare the value with the default, so `--rounds 50` passed silently with a non-federated
# trainer).

@pytest.mark.parametrize("argv, flag", [
    (["--algorithm", "lda", "--rounds", "50"], "--rounds"),             # FedLDA's default, written out
    (["--algorithm", "lda", "--rounds=50"], "--rounds"),
    (["--algorithm", "lda", "--roun", "50"], "--rounds"),               # an abbreviation argparse accepts
    (["--algorithm", "lda", "--noise", "discrete"], "--noise"),
    (["--algorithm", "lda", "--delta", "1e-5"], "--delta"),
    (["--unit", "document", "--epsilon", "1", "--exclusion", "none"], "--exclusion"),
])
def test_a_foreign_flag_at_its_default_value_is_refused(tmp_path, capsys, argv, flag):
    rc = main(["train", "--corpus", str(tmp_path / "none.npz"), "--out", str(tmp_path / "m")] + argv)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith(f"error: {flag} has no effect with") and err.count("\n") == 1
    assert not (tmp_path / "m").exists()


def test_the_parser_records_what_was_written_not_what_was_defaulted():
    a = build_parser().parse_args(["train", "--corpus", "c.npz", "--algorithm", "fed", "--rounds", "50"])
    assert a.rounds == 50 and {"corpus", "algorithm", "rounds"} <= a._given
    assert "pad_length" not in a._given and "delta" not in a._given and a.pad_length == 512


# ---------------------------------------------------------------------------------------------------------------------
# CLI errors name the flags the user typed (``--n-words``, ``--pad-length``), never the library's Python parameters
# (``n_words=``, ``pad_length``): one ``error: ...`` line on stderr, exit status 2, no traceback.

NAME_WORDS = ("government people congress states war peace year nation country world tax economy law court army"
         " trade money bank school health").split()


def _status(argv):
    try:
        return main([str(x) for x in argv])
    except SystemExit as e:  # argparse refuses a flag's value itself
        return e.code


def _error(capsys, *argv) -> str:
    rc = _status(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.startswith("error")]
    assert rc == 2 and len(lines) == 1, (rc, err)
    return lines[0]


# snake_case identifiers, and "name=" as in "invalid n_words=...", outside quoted text
_PY_NAME = re.compile(r"(?<![\w\-./'])([a-z][a-z0-9]*_[a-z0-9_]+|[a-z]+)=|(?<![\w\-./'])[a-z][a-z0-9]*_[a-z0-9_]+\b")


def _python_names(line: str) -> list:
    """Python-looking parameter names in an error line: ``foo_bar`` or ``foo=`` (eps_I, eps_word: the docs'
    notation, not parameters)."""
    text = re.sub(r"'[^']*'", "", line)
    return [m.group(0) for m in _PY_NAME.finditer(text) if not m.group(0).startswith(("eps_", "eps="))]


def _check(line: str, *flags: str, absent=()) -> None:
    for flag in flags:
        assert flag in line, line
    for name in absent:
        assert name not in line, line
    assert not _python_names(line), (line, _python_names(line))


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """A tiny text corpus: 60 documents over 20 words (loads in milliseconds)."""
    rng = random.Random(0)
    p = tmp_path_factory.mktemp("corpus") / "docs.txt"
    p.write_text("\n".join(" ".join(rng.choice(NAME_WORDS) for _ in range(12)) for _ in range(60)) + "\n")
    return p


@pytest.fixture(scope="module")
def vocab(tmp_path_factory):
    p = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    p.write_text("\n".join(NAME_WORDS[:12]) + "\n")
    return p


@pytest.fixture(scope="module")
def small_model(tmp_path_factory, docs):
    out = tmp_path_factory.mktemp("model") / "m"
    assert _status(["train", "--corpus", docs, "--topics", 2, "--iterations", 2, "--quiet", "--out", out]) == 0
    return out


def _train(docs, out, *extra):
    return ["train", "--corpus", docs, "--topics", 2, "--quiet", "--out", out, *extra]


# ------------------------------------------------------------------ library errors in the command's flags
def test_flag_errors_writes_a_parameter_error_in_the_flags_by_its_structure(monkeypatch):
    from dptopic.cli import _flags
    from dptopic.errors import DPTopicError, ParameterError

    names = {"pad_length": "--pad-length", "sample_ratio": "--sample-ratio", "exclusion": "--exclusion"}
    with pytest.raises(DPTopicError) as e:
        with _flags.flag_errors(names):
            raise ParameterError("{pad_length=} is too small for {sample_ratio=}: raise {pad_length} or"
                                 " {sample_ratio}; see '/tmp/pad_length.txt' ({exclusion=none}).", "pad_length", 1,
                                 values={"sample_ratio": 0.1}, none="none")
    assert str(e.value) == ("--pad-length 1 is too small for --sample-ratio 0.1: raise --pad-length or --sample-ratio;"
                            " see '/tmp/pad_length.txt' (--exclusion none).")
    assert isinstance(e.value.__cause__, ParameterError)
    # an error whose parameters the command does not map goes out as it came
    err = ParameterError("invalid {seed=}.", "seed", -1)
    with pytest.raises(ParameterError) as e:
        with _flags.flag_errors(names):
            raise err
    assert e.value is err


def test_the_command_line_rewrites_no_library_sentence_by_regular_expressions():
    """The library's errors carry their parameters (ParameterError) and say their own sentences; the command line
    maps parameters to flags and keeps no table of (regular expression, replacement) rules over message text.
    Before: 20 such rules in cli/ (``*_RULES``, ``epsilon_rules``, ``epsilon_word_rules``, ``user_budget_rules``)."""
    import ast
    import inspect
    from pathlib import Path

    import dptopic.cli as cli
    from dptopic.cli._flags import flag_errors

    assert list(inspect.signature(flag_errors).parameters) == ["names"]
    rules = []
    for path in sorted(Path(cli.__file__).parent.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            name = (node.name if isinstance(node, ast.FunctionDef) else
                    next((t.id for t in node.targets if isinstance(t, ast.Name)), "")
                    if isinstance(node, ast.Assign) else "")
            if name.upper().endswith("_RULES") or name == "translate":
                rules.append(f"{path.name}: {name}")
            # a pair (pattern, replacement) whose pattern is a regular expression over a message
            if (isinstance(node, ast.Tuple) and len(node.elts) == 2
                    and all(isinstance(x, (ast.Constant, ast.JoinedStr)) for x in node.elts)
                    and isinstance(node.elts[0], ast.Constant) and isinstance(node.elts[0].value, str)
                    and node.elts[0].value.startswith("^")):
                rules.append(f"{path.name}:{node.lineno}: {node.elts[0].value[:40]}")
    print(f"regular-expression rules over library messages in cli/: {len(rules)}")
    assert rules == []


# ------------------------------------------------------------------ train: parameters validated before any data
@pytest.mark.parametrize("extra, flags, absent", [
    (["--sample-ratio", "1.5"], ["--sample-ratio 1.5"], ["sample_ratio"]),
    (["--gamma", "0.5"], ["--gamma 0.5"], ["gamma="]),
    (["--pad-length", "99999999999"], ["--pad-length 99999999999"], ["pad_length"]),
    (["--subset-size", "-1"], ["--subset-size -1"], ["subset_size"]),
    (["--pad-length", "1", "--sample-ratio", "0.1"], ["--pad-length 1", "--sample-ratio 0.1"], ["pad_length"]),
    (["--exclusion", "tail", "--local-inference", "gibbs"], ["--local-inference gibbs", "--exclusion none"],
     ["local_inference", "exclusion="]),
    (["--exclusion", "floor", "--report-words", "10"], ["--report-words 10"], ["report_words"]),
    (["--rounds", "99999999999"], ["--rounds 99999999999"], ["rounds="]),
    (["--jobs", "300"], ["--jobs", "from 1 to 256, got 300"], ["n_jobs", "None"]),  # refused by the flag itself
    (["--beta", "1e300"], ["--beta"], ["beta="]),
])
def test_train_fed_parameters_name_their_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, *_train(docs, tmp_path / "m", "--algorithm", "fed", "--rounds", 1, *extra))
    _check(line, *flags, absent=absent)


def test_train_fed_user_budget_errors_name_user_budget(capsys, tmp_path, docs):
    line = _error(capsys, *_train(docs, tmp_path / "m", "--algorithm", "fed", "--rounds", 1, "--user-budget", "1e12"))
    _check(line, "--user-budget 1e+12", "too large", absent=["pad_length", "--pad-length"])
    line = _error(capsys, *_train(docs, tmp_path / "m", "--algorithm", "fed", "--rounds", 1, "--user-budget", "1e-9"))
    _check(line, "--user-budget 1e-09", "too small", absent=["epsilon="])


@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "svi", "--noise-multiplier", "1e-9"], ["--noise-multiplier 1e-09"], ["noise_multiplier"]),
    (["--algorithm", "svi", "--epsilon", "1", "--sampling-rate", "1e-12", "--epochs", "1"],
     ["--epochs 1", "--sampling-rate 1e-12"], ["n_epochs", "sampling_rate"]),
    (["--algorithm", "svi", "--epsilon", "1", "--beta", "1e-300"], ["--beta 1e-300"], ["eta=", "None"]),
    (["--algorithm", "online-vb", "--epochs", "1e9"], ["--epochs"], ["n_epochs"]),
    (["--algorithm", "docdp-cooc", "--epsilon", "1", "--n-words", "100000"], ["--n-words 100000"], ["n_words"]),
    (["--algorithm", "docdp", "--epsilon", "1e9"], ["--epsilon"], ["epsilon="]),
    (["--unit", "document", "--epsilon", "1", "--n-words", "99999999"], ["--n-words 99999999"], ["n_words"]),
    (["--algorithm", "lda", "--iterations", "99999999999"], ["--iterations 99999999999"], ["n_iter"]),
    (["--algorithm", "lda", "--iterations", 1, "--alpha", "1e300"], ["--alpha"], ["alpha="]),
    (["--algorithm", "hdp", "--iterations", 2, "--epsilon-laplace", "1e9"], ["--epsilon-laplace"], ["epsilon_laplace"]),
    (["--algorithm", "hdp", "--iterations", 2, "--epsilon-inherent", "1e9"], ["--epsilon-inherent"],
     ["epsilon_inherent"]),
    (["--algorithm", "hdp", "--iterations", 2, "--epsilon", "1"], ["--epsilon 1", "--epsilon-inherent 10"],
     ["epsilon_inherent", "epsilon="]),
    (["--unit", "word", "--iterations", 2, "--epsilon", "1"], ["--epsilon 1"], ["epsilon_inherent", "epsilon="]),
    (["--algorithm", "lda", "--iterations", 1, "--private-vocabulary", "1e9,0.5"], ["--private-vocabulary", "(0, 500]"],
     ["eps="]),
])
def test_train_parameters_name_their_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, *_train(docs, tmp_path / "m", *extra))
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ train: errors met while fitting
@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "lda", "--iterations", 1, "--topics", 100], ["--topics 100"], ["n_topics"]),
    (["--algorithm", "fed", "--rounds", 1, "--clients", 100000], ["--clients 100000"], ["n_clients"]),
    (["--algorithm", "fed", "--rounds", 1, "--report-words", 1000], ["--report-words 1000"], ["report_words"]),
    (["--algorithm", "fed", "--rounds", 1, "--subset-size", 1000], ["--subset-size 1000"], ["subset_size"]),
    (["--algorithm", "docdp-cooc", "--epsilon", 1, "--n-words", 3, "--topics", 5], ["--n-words 3", "--topics 5"],
     ["n_words", "n_topics"]),
    (["--algorithm", "docdp-cooc", "--epsilon", 1, "--background-share", 0.5],
     ["--topics 2", "--background-share off"], ["n_topics", "n_background"]),
    (["--algorithm", "cdp", "--iterations", 1, "--paper-epsilon", "1e-13"], ["--paper-epsilon", "too small"], ["scale="]),
    (["--algorithm", "cdp", "--iterations", 1, "--paper-epsilon", "1e9"], ["--paper-epsilon", "too large"],
     ["sensitivity/scale)="]),
    (["--algorithm", "lda", "--iterations", 1, "--min-df", 1000], ["--min-df 1000"], ["min_df", "max_df"]),
    (["--algorithm", "lda", "--iterations", 1, "--min-df", 0.9, "--max-df", 0.1], ["--min-df 0.9", "--max-df 0.1"],
     ["min_df", "max_df"]),
    (["--algorithm", "lda", "--iterations", 1, "--max-df", 1], ["--min-df", "--max-df"], ["min_df", "min_length"]),
])
def test_train_fit_errors_name_their_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, *_train(docs, tmp_path / "m", *extra))
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ local DP: randomize, lp/olp
@pytest.fixture(scope="module")
def reports(tmp_path_factory, docs, vocab):
    out = tmp_path_factory.mktemp("reports") / "reports.bin"
    assert _status(["randomize", "--vocabulary", vocab, "--corpus", docs, "--out", out, "--epsilon-word", 1]) == 0
    return out


@pytest.mark.parametrize("extra, flags, absent", [
    (["--epsilon-word", "1e-300"], ["--epsilon-word 1e-300", "too small"], ["f="]),
    (["--epsilon-word", "1e9"], ["--epsilon-word"], ["epsilon_word"]),
    (["--f", "1.5"], ["--f 1.5"], ["f="]),
    (["--unit", "document", "--epsilon-doc", "1e9"], ["--epsilon-doc"], ["epsilon="]),
])
def test_randomize_names_its_flags(capsys, tmp_path, docs, vocab, extra, flags, absent):
    line = _error(capsys, "randomize", "--vocabulary", vocab, "--corpus", docs, "--out", tmp_path / "r.bin", *extra)
    _check(line, *flags, absent=absent)


@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "olp", "--prior", "none", "--lam", "2"], ["--lam 2"], ["lam="]),
    (["--algorithm", "olp", "--prior", "none", "--omega", "2"], ["--omega 2"], ["omega=", "None"]),
    (["--algorithm", "olp", "--prior", "none", "--omega", "0.3", "--sigma2", "2"], ["--omega", "--sigma2"],
     ["omega=None"]),
    (["--algorithm", "lp", "--topics", "100"], ["--topics 100"], ["n_topics"]),
])
def test_train_local_names_its_flags(capsys, tmp_path, reports, extra, flags, absent):
    line = _error(capsys, "train", "--quiet", "--iterations", 1, "--topics", 2, "--reports", reports,
                  "--out", tmp_path / "m", *extra)
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ evaluate, demo, corpus, privacy
def test_evaluate_top_n(capsys, docs, small_model):
    line = _error(capsys, "evaluate", "--model", small_model, "--corpus", docs, "--top-n", 1)
    _check(line, "--top-n 1", absent=["top_n"])


def test_corpus_info_min_df(capsys, docs):
    line = _error(capsys, "corpus", "info", docs, "--min-df", 1000)
    _check(line, "--min-df 1000", absent=["min_df", "max_df"])


@pytest.mark.parametrize("argv, flags, absent", [
    (["privacy", "hdp", "--epsilon-inherent", "1e9"], ["--epsilon-inherent"], ["epsilon_inherent"]),
    (["privacy", "hdp", "--clip", "3", "--epsilon-laplace", "1e9"], ["--epsilon-laplace"], ["epsilon_laplace"]),
    (["privacy", "hdp", "--clip", "3", "--epsilon-laplace", "1", "--iterations", "99999999999"], ["--iterations"],
     ["n_iter"]),
    (["privacy", "hdp", "--clip", "3", "--epsilon", "1e-9"], ["--epsilon 1e-09", "--clip"], ["epsilon_inherent"]),
    (["privacy", "hdp", "--epsilon-inherent", "3", "--epsilon", "1e-9"], ["--epsilon 1e-09", "--epsilon-inherent 3"],
     ["epsilon_inherent"]),
    (["privacy", "inherent", "--n-t", "99999999999999999999", "--max-n-tprime", "1"], ["--n-t"], ["n_tok"]),
    (["privacy", "fed-report-words", "--epsilon-per-entry", "1e-9", "--vocab-size", "100", "--users", "10"],
     ["--epsilon-per-entry 1e-09"], ["epsilon="]),
])
def test_privacy_calculators_name_their_flags(capsys, argv, flags, absent):
    line = _error(capsys, *argv)
    _check(line, *flags, absent=absent)


# ------------------------------------------------------------------ audit: flags mapped, --set names kept
@pytest.mark.parametrize("extra, flags, absent", [
    (["--algorithm", "lda", "--topics", 2, "--iterations", 1, "--alpha", "0"], ["--alpha 0"], ["alpha="]),
    (["--algorithm", "lda", "--topics", 2, "--iterations", "99999999999"], ["--iterations"], ["n_iter"]),
    (["--algorithm", "lda", "--topics", 100, "--iterations", 1], ["--topics 100"], ["n_topics"]),
    (["--algorithm", "hdp", "--topics", 2, "--iterations", 1, "--epsilon-laplace", "1e9"], ["--epsilon-laplace"], ["epsilon_laplace"]),
    (["--algorithm", "lp", "--topics", 2, "--epsilon", "1e-300"], ["--epsilon 1e-300"], ["f="]),
    (["--algorithm", "lda", "--topics", 2, "--iterations", 1, "--min-df", 1000], ["--min-df 1000"], ["min_df"]),
])
def test_audit_flags(capsys, tmp_path, docs, extra, flags, absent):
    line = _error(capsys, "audit", "--corpus", docs, "--shadows", 4, "--quiet", "--out", tmp_path / "a", *extra)
    _check(line, *flags, absent=absent)


def test_audit_set_keeps_the_name_the_user_typed(capsys, tmp_path, docs):
    base = ["audit", "--corpus", docs, "--shadows", 4, "--quiet", "--out", tmp_path / "a", "--algorithm", "lda",
            "--topics", 2]
    line = _error(capsys, *base, "--iterations", 1, "--set", "n_iter=3")
    assert "--set n_iter=" in line and "--iterations" in line, line      # the clash names the flag
    line = _error(capsys, *base, "--iterations", 1, "--set", "alpha=-1")
    assert "alpha=-1" in line and "--alpha" not in line, line            # typed in --set: left as typed
    line = _error(capsys, *base, "--iterations", 1, "--set", "foo=1")
    assert "valid: n_topics" in line, line                                # the names --set takes


# ------------------------------------------------------------------ serve: fails before serving
@pytest.fixture
def no_serving(monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("starlette")

    def refuse(*a, **k):
        raise AssertionError("a bad flag value reached uvicorn.run")

    monkeypatch.setattr(uvicorn, "run", refuse)
    monkeypatch.setattr(uvicorn, "Config", _NoLoggingConfig)   # uvicorn's Config sets up logging on pytest's stderr
    monkeypatch.setattr(uvicorn.Server, "run", refuse)


class _NoLoggingConfig:
    """Stands in for ``uvicorn.Config`` in tests that stop before serving: the real one configures logging handlers on
    the ``sys.stderr`` of the moment (pytest's capture), which later tests then find closed."""

    def __init__(self, app, **kw):
        self.app, self.kw = app, kw


@pytest.mark.parametrize("extra, flags, absent", [
    (["--epsilon-word", "1", "--lam", "2"], ["--lam 2"], ["lam="]),
    (["--epsilon-word", "1", "--omega", "-1"], ["--omega -1"], ["omega="]),
    (["--epsilon-word", "1", "--train-interval", "-1"], ["--train-interval -1"], ["train_interval"]),
    (["--epsilon-word", "1", "--max-body-bytes", "1"], ["--max-body-bytes 1"], ["max_body_bytes"]),
    (["--epsilon-word", "1", "--topics", "1"], ["--topics 1"], ["n_topics"]),
    (["--epsilon-word", "1e9"], ["--epsilon-word"], ["epsilon_word"]),
    (["--epsilon-word", "1e-300"], ["--epsilon-word 1e-300"], ["f="]),
    (["--report-kind", "document", "--epsilon-doc", "1e9"], ["--epsilon-doc"], ["epsilon_doc"]),
    (["--epsilon-word", "1", "--fed-epsilon-per-entry", "1", "--fed-topics", "2", "--fed-sample-ratio", "0"],
     ["--fed-sample-ratio 0"], ["fed_sample_ratio"]),
    (["--epsilon-word", "1", "--fed-epsilon-per-entry", "1", "--fed-topics", "2", "--fed-min-updates", "-1"],
     ["--fed-min-updates -1"], ["fed_min_updates"]),
    (["--epsilon-word", "1", "--fed-epsilon-per-entry", "1e-9", "--fed-topics", "2"], ["--fed-epsilon-per-entry 1e-09"], ["epsilon="]),
    (["--epsilon-word", "1", "--fed-user-budget", "10", "--fed-topics", "2", "--fed-sample-ratio", "0"],
     ["--fed-sample-ratio 0"], ["sample_ratio"]),
    (["--epsilon-word", "1", "--fed-user-budget", "1e-9", "--fed-topics", "2"], ["--fed-user-budget 1e-09"],
     ["epsilon="]),
])
def test_serve_names_its_flags(capsys, tmp_path, vocab, no_serving, extra, flags, absent):
    line = _error(capsys, "serve", "--vocabulary", vocab, "--database", f"sqlite:///{tmp_path / 's.db'}",
                  "--topics", 2, *extra)
    _check(line, *flags, absent=absent)


def test_serve_database_bound_to_other_settings_names_the_flags(capsys, tmp_path, vocab, monkeypatch):
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("sqlalchemy")
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, **k: setattr(self, "started", True))   # binds, serves nothing
    monkeypatch.setattr(uvicorn, "Config", _NoLoggingConfig)
    base = ["serve", "--vocabulary", vocab, "--database", f"sqlite:///{tmp_path / 's.db'}", "--topics", 2]
    assert _status(base + ["--epsilon-word", 1]) == 0
    capsys.readouterr()
    line = _error(capsys, *base, "--epsilon-word", 2)
    _check(line, "--epsilon-word 1 ", "--epsilon-word 2:", absent=["f="])
    line = _error(capsys, *base, "--epsilon-word", 1, "--fed-epsilon-per-entry", 3, "--fed-topics", 2, "--fed-report-words", 5)
    _check(line, "no --fed-report-words", "--fed-report-words 5", absent=["fed_report_words", "None"])
    other = tmp_path / "other.txt"
    other.write_text("\n".join(NAME_WORDS[5:17]) + "\n")
    line = _error(capsys, "serve", "--vocabulary", other, *base[3:], "--epsilon-word", 1)
    _check(line, "another --vocabulary", absent=["vocabulary_sha256"])


def test_serve_fed_report_words_below_two_is_refused_by_its_flag(capsys, tmp_path, vocab):
    line = _error(capsys, "serve", "--vocabulary", vocab, "--database", f"sqlite:///{tmp_path / 's.db'}",
                  "--epsilon-word", 1, "--fed-epsilon-per-entry", 1, "--fed-report-words", 1)
    _check(line, "--fed-report-words", absent=["fed_report_words"])


# ------------------------------------------------------------------ clients: no traceback for a huge timeout
@pytest.mark.parametrize("argv, flag", [
    (["submit", "--retries", "0", "--timeout", "1e300"], "--timeout"),
    (["submit", "--retries", "-1"], "--retries"),
    (["fed-client", "--retries", "0", "--poll", "1e300"], "--poll"),
    (["fed-client", "--retries", "0", "--round-timeout", "1e300"], "--round-timeout"),
])
def test_clients_refuse_unusable_numbers(capsys, docs, argv, flag):
    line = _error(capsys, argv[0], "--server", "http://127.0.0.1:9", "--corpus", docs, *argv[1:])
    assert flag in line and "argument" in line, line


# ------------------------------------------------------------------ experiments
@pytest.mark.parametrize("argv, flags, absent", [
    (["experiment", "svi", "--corpus", "demo", "--max-docs", 20, "--topics", 2, "--seeds", 1, "--sigmas", 1,
      "--sampling-rates", 0.5, "--delta", 2], ["--delta 2"], ["delta="]),
    (["experiment", "fedlda", "--tasks", "sotu", "--eps-table", 5, "--topics", 2, "--max-docs", 20, "--no-figures",
      "--seed", 0, "--rounds", "99999999999"], ["--rounds 99999999999"], ["rounds="]),
])
def test_experiment_parameters_name_their_flags(capsys, tmp_path, argv, flags, absent):
    line = _error(capsys, *argv, "--out", tmp_path / "x")
    _check(line, *flags, absent=absent)
    assert not (tmp_path / "x").exists()      # a failed experiment leaves no marked folder behind


@pytest.mark.parametrize("argv, flags, absent", [
    (["experiment", "lira", "--corpus", "demo", "--subsample", 20, "--shadows", 4, "--max-vocab", "1"],
     ["--max-vocab"], ["max_vocab"]),
    (["experiment", "lira", "--corpus", "demo", "--subsample", 20, "--shadows", 4, "--private-vocabulary", "1e9"],
     ["--private-vocabulary", "(0, 500]"], ["sensitivity"]),
])
def test_experiment_flags_checked_by_argparse(capsys, tmp_path, argv, flags, absent):
    line = _error(capsys, *argv, "--out", tmp_path / "x")
    _check(line, *flags, absent=absent)


def test_experiment_flag_names_leave_dp_set_names_alone():
    import argparse

    from dptopic.cli.experiment import experiment_flag_names

    a = argparse.Namespace(dp_set=["sampling_rate=5", "n_topics=3"])
    names = experiment_flag_names("lira", a)
    assert names["n_iter"] == "--cgs-iterations" and "n_topics" not in names
    assert experiment_flag_names("fedlda", argparse.Namespace())["epsilon"] == "--eps-table"


@pytest.mark.parametrize("argv", [["audit", "--model", "m", "--jobs", "100000"],
                                  ["experiment", "lira", "--jobs", "100000"],
                                  ["train", "--jobs", "257"], ["demo", "--jobs", "1000"],
                                  ["experiment", "fedlda", "--jobs", "300"]])
def test_jobs_beyond_the_librarys_bound_is_refused_by_the_flag(capsys, argv):
    assert "--jobs: must be an integer from 1 to 256" in _error(capsys, *argv)
