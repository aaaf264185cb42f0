"""One spelling of a flag works wherever its meaning is the same (2026-11-24)."""
import json

import pytest

from dptopic.cli.main import main

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
    from argparse import Namespace

    from dptopic.cli.audit import _model_reading
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
    a = Namespace(format="auto", corpus=str(tmp_path / "c.jsonl"))
    assert _model_reading(model, a)["stop_words"] in ("english", "none")     # its words unknown: the vocabulary tells
    plain = [" ".join(WORDS[(i * 5 + j) % len(WORDS)] for j in range(10)) for i in range(40)]   # no stop word
    (tmp_path / "c2.jsonl").write_text("".join(json.dumps({"text": t}) + "\n" for t in plain))
    assert main(["train", "--algorithm", "lda", "--corpus", str(tmp_path / "c2.jsonl"), "--topics", "2", "--iterations",
                 "2", "--seed", "0", "--quiet", "--stop-words", "none", "--out", str(tmp_path / "m2")]) in (0, None)
    # recorded "none": read so, though the vocabulary (no English stop word in it) would suggest "english"
    assert _model_reading(load_model(tmp_path / "m2"), a) == {"stop_words": "none"}


def test_randomizers_say_which_budget_they_take():
    """Randomizer takes epsilon_word and DocumentRandomizer epsilon: the other's spelling was a bare TypeError."""
    from dptopic.errors import DPTopicError
    from dptopic.local import DocumentRandomizer, Randomizer

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
    from dptopic.cli.serve import check_port_free

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
    assert "train on all 40 (--test-size 0: no held-out part" in printed
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

    from dptopic.errors import DPTopicError
    from dptopic.local import Randomizer

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

    from dptopic.errors import DPTopicError
    from dptopic.local import DocumentRandomizer

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

    from dptopic.cli.audit import results_table

    row = {"auc": 0.7, "auc_se": 0.01, "tpr_at_fpr_0.01": 0.2, "tpr_at_fpr_0.001": 0.1, "tpr_at_fpr_0": 0.1}
    console = Console(width=200, record=True)
    console.print(results_table({"lira_online": {**row, "n_nonmembers": 500}}))
    text = " ".join(console.export_text().split())
    assert "20.000%" in text and "n/r" in text and "fewer non-member scores than 1/FPR" in text
    console = Console(width=200, record=True)
    console.print(results_table({"lira_online": {**row, "n_nonmembers": 5000}}))
    text = console.export_text()
    assert "n/r" not in text and "10.000%" in text
