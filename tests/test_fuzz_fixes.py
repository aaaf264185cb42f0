"""Bad inputs found by fuzzing: each gives a one-line error (or is shown as it is), never a traceback."""
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dptopic
from dptopic.errors import DPTopicError

SRC = str(Path(__file__).resolve().parents[1] / "src")
TEXTS = ["apple banana cherry apple", "dog cat mouse dog", "apple cherry banana", "cat dog mouse cat"] * 5


def _cli(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz") / "m"
    dptopic.HDPLDA(n_topics=2, n_iter=2).fit(TEXTS).save(d)
    return d


def _edited(model_dir, tmp_path, **privacy):
    d = tmp_path / "edited"
    shutil.copytree(model_dir, d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"].update(privacy)
    (d / "model.json").write_text(json.dumps(meta))
    return d


def _privacy_text(report) -> str:
    from rich.console import Console

    from dptopic.cli._common import print_privacy

    buf = io.StringIO()
    print_privacy(report, Console(file=buf, width=200))
    return buf.getvalue()


# ----------------------------------------------------------------- 1: odd values in a privacy report's extra fields
ODD = [{"epsilon_nominal": "x"}, {"claimed_by_paper": 5}, {"count_release_epsilon": {"a": 1}},
       {"count_release_epsilon": 7}, {"warnings": 5}, {"epsilon_basic": "abc"}, {"epsilon_pld": "abc"},
       {"epsilon_rdp": [1]}, {"epsilon_paper": "x"}, {"per_document": 5}, {"per_document": {"examples": 3}},
       {"per_document": {"rule": "r", "examples": {"10": "x"}}}, {"epsilon_nominal": 10**400}]


@pytest.mark.parametrize("private", [True, False])
@pytest.mark.parametrize("odd", ODD, ids=[next(iter(o)) + str(i) for i, o in enumerate(ODD)])
def test_print_privacy_shows_odd_values_as_they_are(model_dir, private, odd):
    report = dict(json.loads((model_dir / "model.json").read_text())["privacy"], **odd)
    report["private"] = private
    text = _privacy_text(report)
    assert "Privacy report" in text


@pytest.mark.parametrize("odd", ODD, ids=[next(iter(o)) + str(i) for i, o in enumerate(ODD)])
def test_html_report_renders_odd_values(model_dir, odd):
    from dptopic.reporting import privacy_card, render_report

    report = dict(json.loads((model_dir / "model.json").read_text())["privacy"], **odd)
    for private in (True, False):
        report["private"] = private
        html = render_report(title="t", trainer="HDPLDA", card=privacy_card(report, "HDPLDA"),
                             topics=[[("a", 0.5), ("b", 0.5)]])
        assert "Privacy card" in html


def test_topics_and_report_cli_with_odd_warnings(model_dir, tmp_path):
    d = _edited(model_dir, tmp_path, warnings=5, epsilon_nominal="x", epsilon_pld="abc")
    r = _cli("topics", "--model", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "abc" in r.stdout
    r = _cli("report", "--model", d, "--out", tmp_path / "r.html")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "r.html").is_file()


def test_topics_cli_not_private_with_odd_claims(model_dir, tmp_path):
    d = _edited(model_dir, tmp_path, private=False, claimed_by_paper=5, count_release_epsilon={"a": 1})
    r = _cli("topics", "--model", d)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr


# ----------------------------------------------------------------- 2: an audit whose claimed_privacy is not an object
@pytest.mark.parametrize("claim", ["x", 5, None, ["a"]])
def test_html_audit_section_with_odd_claim(claim):
    from dptopic.reporting import privacy_card, render_report

    audit = {"claimed_privacy": claim, "empirical_epsilon": {"lira": 0.1}, "attacks": {"lira": {"auc": 0.5}}}
    html = render_report(title="t", trainer="LDA", card=privacy_card({"private": False}, "LDA"),
                         topics=[[("a", 1.0)]], audit=audit)
    assert "membership inference" in html


# ----------------------------------------------------------------- 3: corpus info on a corpus of no documents
@pytest.fixture
def empty_npz(tmp_path):
    c = dptopic.Corpus.from_texts(["apple banana cherry", "dog cat mouse"])
    c.save(tmp_path / "c.npz")
    z = dict(np.load(tmp_path / "c.npz", allow_pickle=False))
    meta = json.loads(bytes(z["meta"]).decode())
    meta.pop("doc_ids", None)
    z["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    z["doc_ptr"] = np.array([0], dtype=z["doc_ptr"].dtype)
    z["word_ids"] = z["word_ids"][:0]
    np.savez(tmp_path / "empty.npz", **z)
    return tmp_path / "empty.npz"


def test_corpus_summary_of_no_documents(empty_npz):
    from dptopic.corpus.summary import corpus_summary
    from dptopic.corpus import Corpus

    info = corpus_summary(Corpus.load(empty_npz))
    assert info["documents"] == 0 and info["document_length"] == {"min": 0, "median": 0.0, "mean": 0.0, "max": 0}
    assert all(w["document_share"] == 0.0 for w in info["top_words"])


def test_corpus_info_cli_of_no_documents(empty_npz):
    r = _cli("corpus", "info", empty_npz, "--json")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert json.loads(r.stdout)["documents"] == 0


# ----------------------------------------------------------------- 4: evaluate --window beyond a machine integer
def test_evaluate_window_is_bounded(tmp_path):
    _one_line_error(_cli("evaluate", "--model", tmp_path, "--corpus", "demo", "--window", "99999999999999999999"),
                    "--window", "at most")


# ----------------------------------------------------------------- 5: privacy fed-report-words --epsilon
@pytest.mark.parametrize("eps", ["1e-300", "1e-10", "700", "1e300", "nan", "inf", "0"])
def test_fed_report_words_epsilon_range(eps):
    _one_line_error(_cli("privacy", "fed-report-words", "--epsilon-per-entry", eps, "--vocab-size", 10, "--users", 5),
                    "epsilon")


def test_fed_report_words_still_answers():
    r = _cli("privacy", "fed-report-words", "--epsilon-per-entry", 5, "--vocab-size", 1000, "--users", 100)
    assert r.returncode == 0 and "--report-words" in r.stdout, r.stderr


def test_subset_report_variance_refuses_a_vanishing_epsilon():
    from dptopic.accounting.fedlda import check_informative, subset_report_variance

    with pytest.raises(DPTopicError, match="too small"):
        subset_report_variance(1e-300, 10)
    with pytest.raises(DPTopicError, match="too small"):
        check_informative(1e-10, 10)
    check_informative(1.0, 10)


# ----------------------------------------------------------------- 6: --private-vocabulary with a huge epsilon
@pytest.mark.parametrize("eps", [600.0, 1000.0, 1e300])
def test_gaussian_sigma_refuses_an_epsilon_out_of_range(eps):
    from dptopic.accounting.set_union import gaussian_sigma

    with pytest.raises(DPTopicError, match=r"invalid eps=.*\[0, 500\]"):
        gaussian_sigma(eps, 1e-5)


def test_train_private_vocabulary_huge_epsilon_cli(tmp_path):
    _one_line_error(_cli("train", "--corpus", "demo", "--topics", 2, "--iterations", 1, "--private-vocabulary",
                         "1000,1e-5", "--out", tmp_path / "x", timeout=300), "--private-vocabulary", "(0, 500]")


# ----------------------------------------------------------------- 7: privacy compose too long to compute
def test_compose_too_large_to_compute():
    _one_line_error(_cli("privacy", "compose", "--laplace", 500, 10000000), "too large to compute")


# ----------------------------------------------------------------- 8: audit --shadows
def test_audit_shadows_is_bounded(tmp_path):
    _one_line_error(_cli("audit", "--model", tmp_path, "--corpus", "demo", "--shadows", "100000000000000000000"),
                    "--shadows")


# ----------------------------------------------------------------- 9: --scheduler and --dask-local
@pytest.mark.parametrize("address", ["tcp://[::1:5", "tcp://host:99999", "[::1"])
def test_scheduler_address_malformed(address):
    from dptopic.cli._cluster import check_scheduler_address

    with pytest.raises(DPTopicError, match="invalid --scheduler"):
        check_scheduler_address(address)


def test_scheduler_cli_malformed(tmp_path):
    _one_line_error(_cli("train", "--corpus", "demo", "--topics", 2, "--iterations", 1, "--scheduler",
                         "tcp://[::1:5", "--out", tmp_path / "x"), "invalid --scheduler")


class _Listener:
    """A TCP listener on 127.0.0.1 that accepts connections, greets each with ``greeting`` (bytes, maybe none) and,
    with ``hang_up``, closes it at once."""

    def __init__(self, greeting=b"", hang_up=False):
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = "tcp://127.0.0.1:%d" % self.sock.getsockname()[1]
        self.greeting, self.hang_up, self.held = greeting, hang_up, []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.greeting:
                conn.sendall(self.greeting)
            if self.hang_up:
                conn.close()
            else:
                self.held.append(conn)

    def close(self):
        self.sock.close()
        for c in self.held:
            c.close()


@pytest.mark.parametrize("greeting, hang_up, what", [(b"", False, "sent no greeting"),
                                                     (b"SSH-2.0-OpenSSH_9.2\r\n", False, "another protocol"),
                                                     (b"HTTP/1.1", True, "closed the connection")])
def test_scheduler_address_held_by_another_service_is_refused_not_waited_on(greeting, hang_up, what):
    # distributed.Client waits for a scheduler's handshake without a time limit, so a port held by a web server
    # hung `--scheduler` for good; the probe refuses it in one line
    from dptopic.cli._cluster import probe_scheduler

    srv = _Listener(greeting, hang_up)
    try:
        with pytest.raises(DPTopicError, match=what):
            probe_scheduler(srv.address, seconds=0.5)
    finally:
        srv.close()


def test_scheduler_probe_passes_a_dask_greeting_and_leaves_a_closed_port_to_the_client():
    import struct

    from dptopic.cli._cluster import probe_scheduler

    srv = _Listener(struct.pack("<QQQ", 58, 1, 42) + b"x" * 42)
    try:
        probe_scheduler(srv.address, seconds=0.5)  # no error
    finally:
        srv.close()
    probe_scheduler(srv.address, seconds=0.5)  # nothing listens any more: Client's own error names it


def test_scheduler_cli_refuses_a_web_server_in_one_line(tmp_path):
    srv = _Listener()
    try:
        r = _cli("train", "--corpus", "demo", "--topics", 2, "--iterations", 1, "--scheduler", srv.address,
                 "--out", tmp_path / "x", timeout=60)
    finally:
        srv.close()
    _one_line_error(r, "not a Dask scheduler", "sent no greeting")
    assert not (tmp_path / "x").exists()


def test_dask_local_is_bounded(tmp_path):
    _one_line_error(_cli("train", "--corpus", "demo", "--topics", 2, "--iterations", 1, "--dask-local",
                         "99999999999999999999", "--out", tmp_path / "x", timeout=60), "--dask-local")


# ----------------------------------------------------------------- 10: pull --timeout / --retries
@pytest.mark.parametrize("flag,value", [("--timeout", "nan"), ("--timeout", "-1"), ("--timeout", "inf"),
                                        ("--timeout", "0"), ("--timeout", "1e300"), ("--retries", "-5")])
def test_pull_timeout_and_retries(tmp_path, flag, value):
    _one_line_error(_cli("pull", "--server", "http://127.0.0.1:1", "--out", tmp_path / "p", flag, value), flag)


# ----------------------------------------------------------------- 11: transform never replaces a user's own .npy
def test_transform_keeps_a_users_npy(model_dir, tmp_path):
    docs = tmp_path / "in.txt"
    docs.write_text("apple banana cherry\ndog cat mouse\n")
    mine = tmp_path / "mydata.npy"
    np.save(mine, np.full((2, 2), 0.5))
    before = mine.read_bytes()
    line = _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", mine, "--overwrite"),
                           "refusing to replace")
    assert "another --out" in line and mine.read_bytes() == before
    # a table transform wrote is still replaced with --overwrite, and refused without it
    out = tmp_path / "t.npy"
    r = _cli("transform", "--model", model_dir, "--corpus", docs, "--out", out)
    assert r.returncode == 0, r.stderr
    assert np.load(out).shape == (2, 2)
    _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", out), "--overwrite")
    r = _cli("transform", "--model", model_dir, "--corpus", docs, "--out", out, "--overwrite")
    assert r.returncode == 0, r.stderr
    # a user's array saved over our table afterwards is theirs again
    np.save(out, np.full((2, 2), 0.5))
    _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", out, "--overwrite"),
                    "refusing to replace")


def test_transform_keeps_a_users_file_where_it_would_write_its_stamp(model_dir, tmp_path):
    docs = tmp_path / "in.txt"
    docs.write_text("apple banana cherry\ndog cat mouse\n")
    stamp = tmp_path / ".t.npy.dptopic"
    stamp.write_text("my notes")
    line = _one_line_error(_cli("transform", "--model", model_dir, "--corpus", docs, "--out", tmp_path / "t.npy"),
                           "did not write")
    assert "another --out" in line and stamp.read_text() == "my notes" and not (tmp_path / "t.npy").exists()
