"""``GET /v1/fed/model`` and ``dptopic pull --fed``: a FedLDA deployment serves its result as a model folder with a
privacy card. A real ``dptopic serve`` on 127.0.0.1, three ``fed-client`` participants, two rounds."""
from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

import dptopic  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.federated import decode_message  # noqa: E402
from dptopic.federated.server import full_vocabulary_topics  # noqa: E402
from dptopic.models import FedLDA  # noqa: E402
from dptopic.service.client import ServiceClient, fed_participate, pull  # noqa: E402

from service_helpers import SRC, Server, corpus_of, get_json, http, make_data  # noqa: E402

EPS, K, PAD, N_REPORT, USERS, ROUNDS = 5.0, 3, 16, 30, 3, 2


def run_cli(*args, timeout=120):
    import os

    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def one_line_error(r):
    """A CLI failure in one line of error, never a traceback."""
    assert r.returncode != 0
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.fixture(scope="module")
def fed(tmp_path_factory):
    """A FedLDA server over a vocabulary listed most common first (reports over its first N_REPORT words); what it
    answered before any round closed; then two rounds of three clients, the released broadcast and a pulled folder."""
    tmp = tmp_path_factory.mktemp("fedmodel")
    words, texts = make_data(tmp, vocab_size=60, n_docs=60, n_prior=10)
    counts = Counter(w for t in texts for w in t.split())
    words = sorted(words, key=lambda w: -counts[w])      # most common first (stable), not alphabetical
    assert words != sorted(words)
    (tmp / "vocab.txt").write_text("\n".join(words) + "\n")
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon", str(EPS),
                 "--fed-topics", str(K), "--fed-pad-length", str(PAD), "--fed-min-updates", str(USERS),
                 "--fed-report-words", str(N_REPORT)).start()
    try:
        before = get_json(srv.url + "/v1/fed/model")
        try:
            pull(srv.url, tmp / "early", fed=True)
            pull_before = None
        except DPTopicError as e:
            pull_before = e
        users = [corpus_of(texts[20 * i: 20 * i + 20], words) for i in range(USERS)]
        out = [None] * USERS

        def run(i):
            out[i] = fed_participate(srv.url, users[i], rounds=ROUNDS, poll=0.05, timeout=60, client_id=f"user{i}")

        threads = [threading.Thread(target=run, args=(i,)) for i in range(USERS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert all(o is not None and len(o["rounds"]) == ROUNDS for o in out), out
        status, headers, message = http("GET", srv.url + "/v1/fed/round")
        assert status == 200 and int(headers["dptopic-round"]) == ROUNDS    # rounds 0 and 1 closed
        status, served = get_json(srv.url + "/v1/fed/model")
        assert status == 200, served
        r = run_cli("pull", "--server", srv.url, "--out", str(tmp / "model"), "--fed")
        assert r.returncode == 0, r.stderr
        page = http("GET", srv.url + "/")[2].decode()
        assert "/v1/fed/model" in page and "dptopic pull --fed" in page      # the status page says where it is
        yield {"tmp": tmp, "url": srv.url, "words": words, "texts": texts, "users": users, "before": before,
               "pull_before": pull_before, "message": message, "served": served, "folder": tmp / "model",
               "participants": out, "cli": r}
    finally:
        srv.stop()


def test_no_model_before_any_round_closes(fed):
    status, doc = fed["before"]
    assert status == 404 and set(doc) == {"error"}
    assert doc["error"]["code"] == "no_fed_model"
    msg = doc["error"]["message"]
    assert "\n" not in msg and "round 0 is open" in msg
    e = fed["pull_before"]
    assert isinstance(e, DPTopicError) and "no_fed_model" in str(e) and "\n" not in str(e)
    assert not (fed["tmp"] / "early").exists()      # nothing written


def test_served_document_has_the_wire_shape_of_v1_model(fed):
    doc = fed["served"]
    assert doc["api_version"] == "v1"
    assert doc["round"] == ROUNDS - 1 and doc["rounds_closed"] == ROUNDS
    assert isinstance(doc["model_json"], str) and set(doc["arrays"]) == {"components"}
    meta = json.loads(doc["model_json"])
    assert meta["class"] == "FedLDA" and meta["params"]["seed"] is None
    assert "FedLDA model of round 1 written to" in " ".join(fed["cli"].stdout.split())


def test_pulled_components_are_the_broadcasts_full_vocabulary_topics(fed):
    m = dptopic.load(fed["folder"])
    assert isinstance(m, FedLDA)
    assert list(m.vocabulary_.words) == fed["words"]
    phi = decode_message(fed["message"]).phi        # the open round's broadcast: what closing round 1 published
    assert phi.shape == (K, N_REPORT)
    # independently: the first N words keep their share H_N / H_V of each topic, the rest 1 / (r H_V) by Zipf
    V = len(fed["words"])
    inv = 1.0 / np.arange(1, V + 1)
    want = np.empty((K, V))
    want[:, :N_REPORT] = phi * inv[:N_REPORT].sum() / inv.sum()
    want[:, N_REPORT:] = inv[N_REPORT:] / inv.sum()
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(m.components_, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m.components_, full_vocabulary_topics(phi, V), rtol=1e-12, atol=1e-15)
    assert np.allclose(m.components_[:, N_REPORT:], m.components_[0, N_REPORT:])   # equal in every topic


def test_pulled_model_transforms_and_names_topic_words(fed):
    m = dptopic.load(fed["folder"])
    theta = m.transform(corpus_of(fed["texts"][:5], fed["words"]))
    assert theta.shape == (5, K) and np.allclose(theta.sum(axis=1), 1.0)
    tw = m.topic_words(4)
    assert len(tw) == K and all(len(t) == 4 and set(t) <= set(fed["words"]) for t in tw)
    assert m.report_words_ == N_REPORT


def test_privacy_report_is_an_in_process_fedldas(fed):
    served = dptopic.load(fed["folder"]).privacy_
    local = FedLDA(n_topics=K, epsilon_per_entry=EPS, pad_length=PAD, rounds=ROUNDS, report_words=N_REPORT, secure=True,
                   verbose=0).fit(fed["users"]).privacy_
    assert set(served) - set(local) == {"deployment"} and set(local) <= set(served)
    differ = [k for k in local if served[k] != local[k]]
    # the two texts worded for a simulation say what a deployment does instead
    assert sorted(differ) == ["fits", "report_words_note"], {k: (served[k], local[k]) for k in differ}
    assert "federation" in served["fits"] and "published by the server" in served["report_words_note"]
    assert "simulation" in local["report_words_note"] and "simulation" not in served["report_words_note"]
    # and the figures computed independently of both
    entries = PAD                                          # sample_ratio 1: every padded entry is sent
    assert served["unit"] == "user"
    assert served["epsilon_per_entry"] == EPS and served["epsilon_nominal"] == EPS
    assert served["epsilon_basic"] == pytest.approx(EPS * entries)     # randomized once: rounds cost nothing more
    assert served["epsilon_pld"] <= EPS * entries + 1e-9 and served["epsilon"] <= served["epsilon_basic"] + 1e-9
    assert [(ev["epsilon"], ev["count"]) for ev in served["events"]] == [(EPS, entries)]
    params = served["parameters"]
    assert params["entries_per_round"] == entries and params["rounds"] == ROUNDS and params["exclusion"] == "none"
    assert params["report_words"] == N_REPORT and params["vocab_size"] == 60
    assert params["report_words_rule"] == "given"
    s = max(1, round(N_REPORT / (math.exp(EPS) + 1)))    # error-optimal words per report (Ye & Barg)
    assert params["words_per_report"] == s
    assert params["inclusion_probability"] == pytest.approx(s * math.exp(EPS) / (s * math.exp(EPS) + N_REPORT - s))
    assert served["guarantee"] == "full" and served["vocabulary_source"] == "supplied"
    assert "randomized once" in served["neighbouring_relation"]
    assert "NOT covered" in served["scope"] and served["secure_noise"] is True
    assert f"first {N_REPORT} of 60 words" in served["report_words_note"]
    assert served["noise_reproducible"] is False        # the clients' coins come from their OS, no seed
    assert "dptopic serve" in served["deployment"] and "after round 1" in served["deployment"]
    # what each participant was told it spent is what the card states per user
    for p in fed["participants"]:
        assert p["epsilon_basic"] == pytest.approx(served["epsilon_basic"])


def test_training_record_holds_only_what_the_server_knows(fed):
    meta = json.loads((fed["folder"] / "model.json").read_text())
    training = meta["training"]
    assert training["n_clients"] == USERS
    assert training["rounds"] == [{"round": r, "updates": USERS} for r in range(ROUNDS)]
    assert training["report_words"] == N_REPORT and training["entries_per_update"] == PAD
    assert not {"n_docs", "n_tokens"} & set(training)
    assert meta["params"]["seed"] is None and meta["metrics"] == {}


def test_report_renders_the_privacy_card(fed):
    out = fed["tmp"] / "card.html"
    r = run_cli("report", str(fed["folder"]), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    html = out.read_text()
    assert "federated with local DP, deployed" in html
    assert "per-user" in html and "FedLDA" in html
    assert "simulated: FedLDA.fit held every client" not in html   # the card's trust model is the deployment's
    v = run_cli("privacy", "verify", str(fed["folder"]))
    assert v.returncode == 0 and "verified" in v.stdout


def test_pull_refuses_a_non_empty_folder_without_overwrite(fed):
    taken = fed["tmp"] / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    line = one_line_error(run_cli("pull", "--server", fed["url"], "--out", str(taken), "--fed"))
    assert str(taken) in line or "taken" in line
    assert (taken / "notes.txt").read_text() == "mine" and sorted(p.name for p in taken.iterdir()) == ["notes.txt"]
    with pytest.raises(DPTopicError):
        pull(fed["url"], taken, fed=True)
    # a model folder is replaced only with --overwrite
    again = fed["tmp"] / "again"
    assert run_cli("pull", "--server", fed["url"], "--out", str(again), "--fed").returncode == 0
    one_line_error(run_cli("pull", "--server", fed["url"], "--out", str(again), "--fed"))
    r = run_cli("pull", "--server", fed["url"], "--out", str(again), "--fed", "--overwrite")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(dptopic.load(again).components_, dptopic.load(fed["folder"]).components_)


class _Answers(ServiceClient):
    """A client whose GETs are answered from a dict (path -> document): the malformed answers a proxy or another
    server could give."""

    def __init__(self, answers):
        super().__init__("http://127.0.0.1:9")
        self.answers = answers

    def get_json(self, path):
        return self.answers[path]


def test_pull_fed_refuses_malformed_answers_in_one_line(fed, tmp_path):
    config = {"api_version": "v1", "fed": {"epsilon": EPS}}
    good = fed["served"]
    meta = json.loads(good["model_json"])
    meta["privacy"]["epsilon_basic"] = 8.0           # a figure below what the events give: refused on load
    understated = json.dumps(meta)
    cases = [
        ({"/v1/config": {**config, "api_version": "v2"}}, "speaks API 'v2'"),
        ({"/v1/config": {**config, "fed": None}}, "runs no FedLDA rounds"),
        ({"/v1/config": config, "/v1/fed/model": {"round": 1}}, "malformed model"),
        ({"/v1/config": config, "/v1/fed/model": {**good, "arrays": {"components": "!!"}}}, "malformed model"),
        ({"/v1/config": config, "/v1/fed/model": {**good, "model_json": 3}}, "malformed model"),
        ({"/v1/config": config, "/v1/fed/model": {**good, "model_json": understated}}, "does not load"),
    ]
    for i, (answers, words) in enumerate(cases):
        with pytest.raises(DPTopicError) as e:
            pull("http://127.0.0.1:9", tmp_path / f"m{i}", fed=True, client=_Answers(answers))
        assert words in str(e.value) and "\n" not in str(e.value), (i, str(e.value))
        assert not (tmp_path / f"m{i}").exists()


def test_fed_model_is_404_fed_disabled_without_fed_epsilon(fed):
    tmp = fed["tmp"]
    srv = Server(tmp, f"sqlite:///{tmp / 'nofed.db'}", "--train-interval", "0").start()
    try:
        status, doc = get_json(srv.url + "/v1/fed/model")
        assert status == 404 and doc["error"]["code"] == "fed_disabled" and "\n" not in doc["error"]["message"]
        line = one_line_error(run_cli("pull", "--server", srv.url, "--out", str(tmp / "nofed"), "--fed"))
        assert "no FedLDA rounds" in line
        assert not (tmp / "nofed").exists()
    finally:
        srv.stop()
