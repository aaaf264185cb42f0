"""Protocol review 52 of the FedLDA participant: the settings a ``dptopic fed-client`` takes from a server it does not
trust (``/v1/config``'s ``fed``) are checked against the ranges ``FedLDA`` takes, in one line, before anything is
randomized, kept or sent. Before, ``sample_ratio`` 2 or ``n_topics`` 0 failed inside NumPy with a traceback after the
reports were drawn, ``pad_length`` 10^9 exhausted the device's memory, and a negative ``alpha`` or a fractional
``subset_size`` was taken as it came."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

import dptopic
from dptopic.errors import DPTopicError
from dptopic.federated import FedClient, RRPConfig

from service_helpers import Server, corpus_of, get_json, make_data, make_words

SRC = str(Path(dptopic.__file__).resolve().parents[1])     # the dptopic under test, in the CLI too

BAD = [("sample_ratio", 2.0), ("sample_ratio", -1.0), ("pad_length", 0), ("pad_length", 10 ** 7 + 1),
       ("pad_length", 8.5), ("n_topics", 0), ("alpha", -1.0), ("alpha", float("nan")), ("subset_size", 2.5), ("subset_size", True),
       ("local_iter", 0), ("exclusion", "bogus"), ("variant", "bogus")]


@pytest.mark.parametrize("name,value", BAD)
def test_a_setting_out_of_range_is_refused_in_one_line_before_anything_is_drawn(name, value):
    words = make_words(10)
    c = corpus_of([" ".join(words[:8])], words)
    kw = {"n_topics": 2, "epsilon": 3.0, "pad_length": 8, name: value}
    with pytest.raises(DPTopicError, match=f"^invalid {name}=") as e:
        FedClient("u", c, RRPConfig(**kw), np.random.default_rng(0), secure=True)
    assert "\n" not in str(e.value)


def test_the_participants_ranges_are_fedlda_s():
    from dptopic.federated.client import _protocol_rules
    from dptopic.models.fedlda import FedLDA

    rules = _protocol_rules()
    assert set(rules) == {"n_topics", "epsilon", "delta", "gamma", "pad_length", "sample_ratio", "alpha", "local_iter",
                          "variant", "exclusion", "replacement", "subset_size", "local_inference"}
    # the wire keeps RRPConfig's names: epsilon per entry (FedLDA's epsilon_per_entry; its epsilon is the per-user
    # total) and delta, the failure rate (FedLDA's failure_rate)
    ours = {"epsilon": "epsilon_per_entry", "delta": "failure_rate"}
    for name, r in rules.items():
        mine = [c for c in FedLDA._parameter_constraints[ours.get(name, name)] if type(c).__name__ != "IsNone"]
        assert r == mine, name


class _Fake(BaseHTTPRequestHandler):
    """A server that answers ``/v1/config`` with a stored document and records every request."""

    doc: dict = {}
    seen: list = []

    def _answer(self):
        type(self).seen.append((self.command, self.path))
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        body = json.dumps(self.doc).encode() if self.path == "/v1/config" else b'{"error": {"code": "x"}}'
        self.send_response(200 if self.path == "/v1/config" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fed52")
    words, texts = make_data(tmp, vocab_size=30, n_docs=20, n_prior=10)
    (tmp / "mine.txt").write_text("\n".join(texts[:4]) + "\n")
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "3",
                 "--fed-topics", "2", "--fed-pad-length", "8", "--fed-min-updates", "1").start()
    try:
        status, cfg = get_json(srv.url + "/v1/config")
        assert status == 200 and cfg["fed"]
        r = _fed_client(srv.url, tmp / "mine.txt", tmp / "state")     # the server's own settings are taken
        assert r.returncode == 0 and "took part in 1 round(s)" in " ".join(r.stdout.split()), r.stderr
        yield {"tmp": tmp, "url": srv.url, "config": cfg}
    finally:
        srv.stop()


def _fed_client(url, corpus, state, *extra):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "dptopic", "fed-client", "--server", url, "--corpus", str(corpus),
                           "--state", str(state), "--rounds", "1", "--poll", "0.05", "--retries", "0", *extra],
                          capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.parametrize("name,value", [("sample_ratio", 2.0), ("n_topics", 0), ("alpha", -1.0),
                                        ("subset_size", 2.5)])
def test_fed_client_refuses_a_servers_malformed_setting_in_one_line_and_sends_nothing(served, tmp_path, name, value):
    doc = json.loads(json.dumps(served["config"]))
    doc["fed"][name] = value
    handler = type("Fake", (_Fake,), {"doc": doc, "seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        state = tmp_path / "state"
        r = _fed_client(f"http://127.0.0.1:{httpd.server_address[1]}", served["tmp"] / "mine.txt", state)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"error: invalid {name}="), r.stderr
    assert handler.seen == [("GET", "/v1/config")]             # no round fetched, no update sent
    assert not state.exists()                                 # no reports drawn and kept


def test_fed_client_refuses_a_per_user_epsilon_above_its_limit_before_drawing(served, tmp_path):
    """--max-epsilon bounds one entry only, and the server chooses how many entries an update holds: a server asking
    for 8 entries at epsilon 3 per entry took a per-user epsilon of 24 from a user with no way to cap it."""
    handler = type("Fake", (_Fake,), {"doc": json.loads(json.dumps(served["config"])), "seen": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        state = tmp_path / "state"
        r = _fed_client(f"http://127.0.0.1:{httpd.server_address[1]}", served["tmp"] / "mine.txt", state,
                        "--max-user-epsilon", "20")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "per-user epsilon" in lines[0] and "= 24" in lines[0], r.stderr
    assert "--max-user-epsilon" in lines[0] and "limit of 20" in lines[0], r.stderr
    assert handler.seen == [("GET", "/v1/config")] and not state.exists()


def test_a_user_without_a_report_word_takes_part_with_padding_only(served):
    """docs/fedlda.md: a user with none of the report words takes part and sends padding only (so taking part says
    nothing about the text); fed_participate restricted the documents with drop_empty and refused the empty corpus."""
    from dptopic.corpus import Corpus
    from dptopic.service.client import fed_participate

    outside = Corpus.from_texts(["zebra xylophone quokka", "quokka zebra yak"], max_vocab=None)
    s = fed_participate(served["url"], outside, rounds=1, poll=0.05, timeout=30, state=None)
    assert len(s["rounds"]) == 1 and s["epsilon_basic"] > 0


def test_serve_refuses_a_body_limit_below_its_largest_fedlda_update(tmp_path, capsys):
    """With --fed-pad-length 600000 an update is about 4.8 MB, over the 4 MiB default: participants drew their
    reports, spent their epsilon, and the upload was refused (a reset connection)."""
    from dptopic.cli.main import main
    from dptopic.federated import RRPConfig
    from dptopic.service import codec

    vocab = tmp_path / "v.txt"
    vocab.write_text("\n".join(f"word{c}" for c in "abcdefghij") + "\n")
    base = ["serve", "--vocabulary", str(vocab), "--topics", "2", "--epsilon-word", "2", "--fed-epsilon-per-entry", "3",
            "--fed-topics", "2", "--database", f"sqlite:///{tmp_path / 'x.db'}"]
    assert main(base + ["--fed-pad-length", "600000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "smaller than a FedLDA update" in err and "--fed-pad-length" in err, err
    assert not (tmp_path / "x.db").exists()          # refused before the database is touched
    # the bound is an upper bound of what a client really sends
    from dptopic.corpus import Corpus
    from dptopic.federated import FedClient, FedServer

    rrp = RRPConfig(2, 3.0, 0.1, 1.0, 40, 1.0)
    words = [f"word{c}" for c in "abcdefghij"]
    corpus = Corpus.from_texts(["worda wordb wordc " * 5], vocabulary=words)
    server = FedServer.from_config(corpus.vocabulary, rrp, ["c" * 128], rng=np.random.default_rng(0))
    client = FedClient("c" * 128, corpus, rrp, np.random.default_rng(1))
    update = client.run_round(server.broadcast())
    assert len(update) <= codec.fed_largest_update(rrp, 10)


def test_a_failure_after_an_update_left_says_what_was_spent(served, monkeypatch):
    """Only a refused upload said what the run had spent; a failure after an update had left (here: the next
    round's broadcast refused, as for a server that changed its vocabulary) did not."""
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError
    from dptopic.service import client as service_client
    from dptopic.service import codec

    real = codec.fed_client

    def fed_client(*a, **k):
        fc = real(*a, **k)
        first = fc.run_round
        calls = []

        def run_round(msg):
            calls.append(1)
            if len(calls) > 1:
                raise DPTopicError("the broadcast's vocabulary is not this client's")
            return first(msg)
        fc.run_round = run_round
        return fc

    monkeypatch.setattr(codec, "fed_client", fed_client)
    texts = (served["tmp"] / "mine.txt").read_text().splitlines()
    corpus = Corpus.from_texts(texts, max_vocab=None)
    with pytest.raises(DPTopicError) as e:
        service_client.fed_participate(served["url"], corpus, rounds=2, poll=0.05, timeout=30, state=None)
    msg = str(e.value)
    assert "not this client's" in msg and "spent so far: epsilon 24 by basic composition over 1 update" in msg, msg
