"""``GET /v1/fed/model`` and ``dptopic pull --fed``: a FedLDA deployment serves its result as a model folder with a
privacy card. A real ``dptopic serve`` on 127.0.0.1, three ``fed-client`` participants, two rounds."""
from __future__ import annotations

import json
import math
import threading
from collections import Counter

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

import dptopic  # noqa: E402
from dptopic.contributor.client import ServiceClient, fed_participate  # noqa: E402
from dptopic.errors import DPTopicError  # noqa: E402
from dptopic.models import FedLDA  # noqa: E402
from dptopic.protocol.fedlda_messages import ModelBroadcast, decode_message  # noqa: E402
from dptopic.protocol.fedlda_server import full_vocabulary_topics  # noqa: E402
from dptopic.reporting.pull import pull  # noqa: E402
from helpers import one_line_error, run_dptopic  # noqa: E402
from service_helpers import (  # noqa: E402
    InProcessServer,
    Server,
    StubServer,
    corpus_of,
    get_json,
    http,
    make_data,
    raw_fed_message,
    service_config,
)

EPS, K, PAD, N_REPORT, USERS, ROUNDS = 5.0, 3, 16, 30, 3, 2


def run_cli(*args, timeout=120):
    """``dptopic ARGS`` run in this process (``helpers.run_dptopic``): the client commands these tests run need no
    process of their own, and a new interpreter's imports took seconds per call."""
    return run_dptopic(*args, timeout=timeout)


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
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", str(EPS),
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
        assert "/v1/fed/model" in page and "dptopic pull" in page      # the status page says where it is
        yield {"tmp": tmp, "url": srv.url, "words": words, "texts": texts, "users": users, "before": before,
               "pull_before": pull_before, "message": message, "served": served, "folder": tmp / "model",
               "participants": out, "cli": r}
    finally:
        srv.stop()


@pytest.mark.service
def test_no_model_before_any_round_closes(fed):
    status, doc = fed["before"]
    assert status == 404 and set(doc) == {"error"}
    assert doc["error"]["code"] == "no_fed_model"
    msg = doc["error"]["message"]
    assert "\n" not in msg and "round 0 is open" in msg
    e = fed["pull_before"]
    assert isinstance(e, DPTopicError) and "no_fed_model" in str(e) and "\n" not in str(e)
    assert not (fed["tmp"] / "early").exists()      # nothing written


@pytest.mark.service
def test_served_document_has_the_wire_shape_of_v1_model(fed):
    doc = fed["served"]
    assert doc["api_version"] == "v1"
    assert doc["round"] == ROUNDS - 1 and doc["rounds_closed"] == ROUNDS
    assert isinstance(doc["model_json"], str) and set(doc["arrays"]) == {"components"}
    meta = json.loads(doc["model_json"])
    assert meta["class"] == "FedLDA" and meta["params"]["seed"] is None
    assert "FedLDA model of round 1 written to" in " ".join(fed["cli"].stdout.split())


@pytest.mark.service
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


@pytest.mark.service
def test_pulled_model_transforms_and_names_topic_words(fed):
    m = dptopic.load(fed["folder"])
    theta = m.transform(corpus_of(fed["texts"][:5], fed["words"]))
    assert theta.shape == (5, K) and np.allclose(theta.sum(axis=1), 1.0)
    tw = m.topic_words(4)
    assert len(tw) == K and all(len(t) == 4 and set(t) <= set(fed["words"]) for t in tw)
    assert m.report_words_ == N_REPORT


@pytest.mark.service
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


@pytest.mark.service
def test_training_record_holds_only_what_the_server_knows(fed):
    meta = json.loads((fed["folder"] / "model.json").read_text())
    training = meta["training"]
    assert training["n_clients"] == USERS
    assert training["rounds"] == [{"round": r, "updates": USERS} for r in range(ROUNDS)]
    assert training["report_words"] == N_REPORT and training["entries_per_update"] == PAD
    assert not {"n_docs", "n_tokens"} & set(training)
    assert meta["params"]["seed"] is None and meta["metrics"] == {}


@pytest.mark.service
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


@pytest.mark.service
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


@pytest.mark.service
def test_pull_fed_refuses_malformed_answers_in_one_line(fed, tmp_path):
    config = {"api_version": "v1", "fed": {"epsilon": EPS}}
    good = fed["served"]
    meta = json.loads(good["model_json"])
    meta["privacy"]["epsilon_basic"] = 8.0           # a figure below what the events give: refused on load
    understated = json.dumps(meta)
    cases = [
        ({"/v1/config": {**config, "api_version": "v2"}}, 'speaks API "v2"'),
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


@pytest.mark.service
def test_fed_model_is_404_fed_disabled_without_fed_epsilon(fed):
    tmp = fed["tmp"]
    # the service app without FedLDA under uvicorn in this process: what it answers needs no serve process
    with InProcessServer(service_config(fed["words"], f"sqlite:///{tmp / 'nofed.db'}")) as srv:
        status, doc = get_json(srv.url + "/v1/fed/model")
        assert status == 404 and doc["error"]["code"] == "fed_disabled" and "\n" not in doc["error"]["message"]
        line = one_line_error(run_cli("pull", "--server", srv.url, "--out", str(tmp / "nofed"), "--fed"))
        assert "no FedLDA rounds" in line
        assert not (tmp / "nofed").exists()


# ---------------------------------------------------------------------------------------------------------------------
# The FedLDA participant's checks of its server: the settings a ``dptopic fed-client`` takes from a server it does not
# trust (``/v1/config``'s ``fed``) are checked against the ranges ``FedLDA`` takes, in one line, before anything is
# randomized, kept or sent. Before, ``sample_ratio`` 2 or ``n_topics`` 0 failed inside NumPy with a traceback after the
# reports were drawn, ``pad_length`` 10^9 exhausted the device's memory, and a negative ``alpha`` or a fractional
# ``subset_size`` was taken as it came.


def _fake(doc):
    """A server that answers ``/v1/config`` with ``doc`` (404 else) and records every request: ``(server, seen)``."""
    seen: list = []

    def answer(request):
        seen.append((request.command, request.path))
        return (200, doc) if request.path == "/v1/config" else (404, {"error": {"code": "x"}})

    return StubServer(answer), seen


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
    return run_dptopic("fed-client", "--server", url, "--corpus", corpus, "--state", state, "--rounds", "1", "--poll",
                       "0.05", "--retries", "0", *extra)


@pytest.mark.service
@pytest.mark.parametrize("name,value", [("sample_ratio", 2.0), ("n_topics", 0), ("alpha", -1.0),
                                        ("subset_size", 2.5)])
def test_fed_client_refuses_a_servers_malformed_setting_in_one_line_and_sends_nothing(served, tmp_path, name, value):
    doc = json.loads(json.dumps(served["config"]))
    doc["fed"][name] = value
    httpd, seen = _fake(doc)
    with httpd:
        state = tmp_path / "state"
        r = _fed_client(httpd.url, served["tmp"] / "mine.txt", state)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and f"has fed.{name} = {value}" in lines[0] and "nothing was randomized or sent" in lines[0], \
        r.stderr
    assert seen == [("GET", "/v1/config")]             # no round fetched, no update sent
    assert not state.exists()                                 # no reports drawn and kept


@pytest.mark.service
def test_fed_client_refuses_a_per_user_epsilon_above_its_limit_before_drawing(served, tmp_path):
    """--max-epsilon bounds one entry only, and the server chooses how many entries an update holds: a server asking
    for 8 entries at epsilon 3 per entry took a per-user epsilon of 24 from a user with no way to cap it."""
    httpd, seen = _fake(json.loads(json.dumps(served["config"])))
    with httpd:
        state = tmp_path / "state"
        r = _fed_client(httpd.url, served["tmp"] / "mine.txt", state, "--max-user-epsilon", "20")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "per-user epsilon" in lines[0] and "= 24" in lines[0], r.stderr
    assert "--max-user-epsilon" in lines[0] and "limit of 20" in lines[0], r.stderr
    assert seen == [("GET", "/v1/config")] and not state.exists()


@pytest.mark.service
def test_a_user_without_a_report_word_takes_part_with_padding_only(served):
    """docs/fedlda.md: a user with none of the report words takes part and sends padding only (so taking part says
    nothing about the text); fed_participate restricted the documents with drop_empty and refused the empty corpus."""
    from dptopic.contributor.client import fed_participate
    from dptopic.corpus import Corpus

    outside = Corpus.from_texts(["zebra xylophone quokka", "quokka zebra yak"], max_vocab=None)
    s = fed_participate(served["url"], outside, rounds=1, poll=0.05, timeout=30, state=None)
    assert len(s["rounds"]) == 1 and s["epsilon_basic"] > 0


@pytest.mark.service
def test_a_failure_after_an_update_left_says_what_was_spent(served, monkeypatch):
    """Only a refused upload said what the run had spent; a failure after an update had left (here: the next
    round's broadcast refused, as for a server that changed its vocabulary) did not."""
    from dptopic.contributor import client as service_client
    from dptopic.contributor import fedlda as participant
    from dptopic.corpus import Corpus
    from dptopic.errors import DPTopicError

    real = participant.fed_client

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

    monkeypatch.setattr(participant, "fed_client", fed_client)
    texts = (served["tmp"] / "mine.txt").read_text().splitlines()
    corpus = Corpus.from_texts(texts, max_vocab=None)
    with pytest.raises(DPTopicError) as e:
        service_client.fed_participate(served["url"], corpus, rounds=2, poll=0.05, timeout=30, state=None)
    msg = str(e.value)
    assert "not this client's" in msg and "spent so far: epsilon 24 by basic composition over 1 update" in msg, msg


# ------------------------------------------------------------------ item 18
# ------------------------------------------------------------------ items 17 and 18 on a live server
@pytest.fixture(scope="module")
def fed_server(tmp_path_factory):
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from service_helpers import Server, make_data

    tmp = tmp_path_factory.mktemp("fedsvc")
    words, texts = make_data(tmp, n_docs=120, n_prior=40)
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "5",
                 "--fed-topics", "3", "--fed-pad-length", "32", "--fed-min-updates", "1").start()
    yield {"url": srv.url, "words": words, "texts": texts}
    srv.stop()


def _open_round(url) -> int:
    from service_helpers import http

    return int(http("GET", url + "/v1/fed/round")[1]["dptopic-round"])


@pytest.mark.service
def test_retry_of_an_update_that_closed_its_round_is_replayed(fed_server):
    from dptopic.protocol import codec as protocol_codec
    from service_helpers import corpus_of, get_json, http

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    rrp = protocol_codec.fed_config_from_dict(get_json(url + "/v1/config")[1]["fed"])
    from dptopic.contributor.fedlda import fed_client
    fc = fed_client("retry-user", corpus_of(texts[:10], words), rrp)
    rnd = _open_round(url)
    update = fc.run_round(http("GET", url + "/v1/fed/round")[2])
    headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": "fed-retry-00001"}
    status, _, data = http("POST", url + "/v1/fed/updates", update, headers)
    assert status == 201 and json.loads(data)["round_closed"] is True
    assert _open_round(url) == rnd + 1
    status, h, data = http("POST", url + "/v1/fed/updates", update, headers)  # the retry after a lost ack
    assert status == 200, data
    assert json.loads(data)["replayed"] is True and json.loads(data)["round"] == rnd
    assert _open_round(url) == rnd + 1
    # the same key with another body is still a conflict, and an unseen stale update still 409 stale_round
    other = fc.run_round(http("GET", url + "/v1/fed/round")[2])
    status, _, data = http("POST", url + "/v1/fed/updates", other, headers)
    assert status == 409 and json.loads(data)["error"]["code"] == "idempotency_key_reused"
    status, _, data = http("POST", url + "/v1/fed/updates", update,
                           {**headers, "Idempotency-Key": "fed-retry-00002"})
    assert status == 409 and json.loads(data)["error"]["code"] == "stale_round"


@pytest.mark.service
def test_fed_client_counts_a_round_whose_ack_was_lost(fed_server):
    from dptopic.contributor.client import ServiceClient, fed_participate
    from service_helpers import corpus_of

    class LosesFirstAck(ServiceClient):
        lost = False

        def _once(self, method, path, body, headers):
            out = super()._once(method, path, body, headers)
            if path == "/v1/fed/updates" and not self.lost:
                self.lost = True  # the update arrived and closed the round, but the answer never came back
                raise ConnectionResetError("connection reset by peer")
            return out

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    rnd = _open_round(url)
    client = LosesFirstAck(url, retries=2, backoff=0.01)
    out = fed_participate(url, corpus_of(texts[20:30], words), rounds=1, poll=0.1, timeout=30, client=client)
    assert client.lost
    assert [r["round"] for r in out["rounds"]] == [rnd]  # the aggregated round, counted once
    assert _open_round(url) == rnd + 1  # and no extra round joined


@pytest.mark.service
@pytest.mark.parametrize("shape", [[2 ** 40, 2 ** 40], [10 ** 30]])
def test_huge_shapes_are_http_400_on_fed_updates(fed_server, shape):
    from service_helpers import http

    msg = raw_fed_message({"kind": "update", "round": 0, "client": "a", "vocab": "v",
                        "arrays": [{"name": "topics", "dtype": "<i4", "shape": shape},
                                   {"name": "words", "dtype": "<i4", "shape": shape}]}, b"\0" * 16)
    status, _, data = http("POST", fed_server["url"] + "/v1/fed/updates", msg,
                           {"Content-Type": "application/octet-stream",
                            "Idempotency-Key": f"fed-huge-{len(shape)}0000"})
    assert status == 400
    err = json.loads(data)["error"]
    assert err["code"] == "malformed_update" and "\n" not in err["message"]


@pytest.mark.service
def test_fed_client_summary_says_full_for_the_default_rule(fed_server):
    from dptopic.contributor.client import fed_participate
    from service_helpers import corpus_of

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    out = fed_participate(url, corpus_of(texts[40:50], words), rounds=1, poll=0.1, timeout=30)
    # the service's default rule is exclusion="none": labels are post-processing of the randomized words
    assert out["guarantee"] == "full" and "post-processing" in out["note"]


@pytest.mark.service
def test_a_user_without_any_report_word_takes_part_with_padding(fed_server):
    """Whether someone takes part must say nothing of their text: under the sound rule a user none of whose words
    the rounds take still sends its update (padding only), as the simulation does."""
    from dptopic.contributor.client import fed_participate
    from dptopic.corpus import Corpus

    url, words = fed_server["url"], fed_server["words"]
    out = fed_participate(url, Corpus.from_token_ids([[]], words), rounds=1, poll=0.1, timeout=30)
    assert out["guarantee"] == "full"


@pytest.mark.service
def test_serve_with_a_per_user_budget_runs_rounds_at_the_chosen_split(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from dptopic.accounting.fedlda import entries_for_user_budget
    from dptopic.contributor.client import fed_participate
    from dptopic.protocol import codec as protocol_codec
    from service_helpers import Server, corpus_of, get_json, make_data

    words, texts = make_data(tmp_path, n_docs=60, n_prior=20)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'service.db'}", "--train-interval", "0", "--fed-user-budget", "90",
                 "--fed-topics", "3", "--fed-min-updates", "1").start()
    try:
        eps, entries = entries_for_user_budget(90, len(words))
        rrp = protocol_codec.fed_config_from_dict(get_json(srv.url + "/v1/config")[1]["fed"])
        assert rrp.epsilon_per_entry == pytest.approx(eps) and rrp.n_entries == entries
        out = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30)
        assert out["guarantee"] == "full" and len(out["rounds"]) == 1
        assert out["epsilon_basic"] == pytest.approx(90)          # the contributor's whole spend: the budget
    finally:
        srv.stop()


@pytest.mark.service
def test_serve_with_fed_report_words_runs_rounds_over_the_first_words(tmp_path):
    """``--fed-report-words N``: the rounds range over the vocabulary's first N words; /v1/config says so, a
    contributor's client restricts its documents to them, and the database refuses a restart with another N."""
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from dptopic.contributor.client import fed_participate
    from dptopic.protocol.fedlda_messages import vocabulary_fingerprint
    from service_helpers import Server, corpus_of, get_json, http, make_data

    words, texts = make_data(tmp_path, n_docs=60, n_prior=20)
    words = words[::-1]             # the helper's words are alphabetical, which --fed-report-words refuses
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    db = f"sqlite:///{tmp_path / 'service.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", "--fed-epsilon-per-entry", "5", "--fed-topics", "3",
                 "--fed-pad-length", "32", "--fed-min-updates", "1", "--fed-report-words", "40").start()
    try:
        fed = get_json(srv.url + "/v1/config")[1]["fed"]
        assert fed["report_words"] == 40 and fed["vocabulary_fingerprint"] == vocabulary_fingerprint(words[:40])
        out = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30)
        assert out["guarantee"] == "full" and out["rounds"][0]["round_closed"]
        msg = decode_message(http("GET", srv.url + "/v1/fed/round")[2])
        assert isinstance(msg, ModelBroadcast) and msg.phi.shape == (3, 40) and msg.round == 1
    finally:
        srv.stop()
    # the same database with another number of report words: refused at start-up, in one line
    again = Server(tmp_path, db, "--train-interval", "0", "--fed-epsilon-per-entry", "5", "--fed-topics", "3",
                   "--fed-report-words", "50")
    with pytest.raises(RuntimeError, match="--fed-report-words 40"):
        again.start_refused(timeout=60)
    # settings that cannot work: one line, before anything starts
    for extra, msg in ((["--fed-report-words", "40"], "no effect without FedLDA"),
                       (["--fed-epsilon-per-entry", "5", "--fed-report-words", "500"], "between --fed-topics")):
        r = run_dptopic("serve", "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--database",
                        f"sqlite:///{tmp_path / 'other.db'}", *extra, timeout=120)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ a user's reports kept between runs (--state)
def _capturing_client(url):
    from dptopic.contributor.client import ServiceClient

    class Capturing(ServiceClient):
        updates: list = []

        def _once(self, method, path, body, headers):
            if path == "/v1/fed/updates":
                type(self).updates.append(body)
            return super()._once(method, path, body, headers)

    Capturing.updates = []
    return Capturing(url, retries=2, backoff=0.01)


@pytest.mark.service
def test_fed_client_state_reuses_the_reports_drawn_once_across_runs(fed_server, tmp_path):
    # each run drew new reports under the "spent once" claim: three runs spent three times m x eps
    from dptopic.contributor.client import fed_participate
    from service_helpers import corpus_of

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    state = tmp_path / "fed-state.json"
    c1 = _capturing_client(url)
    out1 = fed_participate(url, corpus_of(texts[50:60], words), rounds=1, poll=0.1, timeout=30, client=c1, state=state)
    assert state.is_file() and (state.stat().st_mode & 0o777) == 0o600 and out1["reused_reports"] is False
    saved = json.loads(state.read_text())
    assert saved["client"] == out1["client"]
    c2 = _capturing_client(url)
    # other documents on the second run: the reports of the first are what is sent
    out2 = fed_participate(url, corpus_of(texts[60:70], words), rounds=1, poll=0.1, timeout=30, client=c2, state=state)
    assert out2["reused_reports"] is True and out2["client"] == out1["client"]
    assert json.loads(state.read_text()) == saved
    sent = [decode_message(b) for b in c1.updates[-1:] + c2.updates[-1:]]
    np.testing.assert_array_equal(sent[0].words, np.asarray(saved["reports"]))
    np.testing.assert_array_equal(sent[1].words, sent[0].words)
    assert out2["epsilon_basic"] == pytest.approx(out1["epsilon_basic"])  # once, whatever the runs
    # without --state a run draws anew (what the status page now says costs the per-user epsilon again)
    c3 = _capturing_client(url)
    fed_participate(url, corpus_of(texts[50:60], words), rounds=1, poll=0.1, timeout=30, client=c3)
    assert not np.array_equal(decode_message(c3.updates[-1]).words, sent[0].words)


@pytest.mark.service
def test_fed_client_state_of_another_client_or_server_is_refused_before_anything_is_sent(fed_server, tmp_path):
    from dptopic.contributor.client import fed_participate
    from service_helpers import corpus_of

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    state = tmp_path / "s.json"
    fed_participate(url, corpus_of(texts[70:80], words), rounds=1, poll=0.1, timeout=30, client_id="alice",
                    state=state)
    c = _capturing_client(url)
    with pytest.raises(DPTopicError, match="belongs to client 'alice', not client_id='bob': leave out client_id"):
        fed_participate(url, corpus_of(texts[70:80], words), rounds=1, poll=0.1, timeout=30, client_id="bob",
                        client=c, state=state)
    doc = json.loads(state.read_text())
    doc["server"]["epsilon"] = 7.5
    state.write_text(json.dumps(doc))
    with pytest.raises(DPTopicError, match="another server configuration"):
        fed_participate(url, corpus_of(texts[70:80], words), rounds=1, poll=0.1, timeout=30, client=c, state=state)
    doc["server"]["epsilon"] = 5.0
    doc["reports"] = [row[:-1] + [row[-1] + 10 ** 6] for row in doc["reports"]]   # a word id past the vocabulary
    state.write_text(json.dumps(doc))
    with pytest.raises(DPTopicError, match="sorted sets of"):
        fed_participate(url, corpus_of(texts[70:80], words), rounds=1, poll=0.1, timeout=30, client=c, state=state)
    state.write_text("[1, 2]")
    with pytest.raises(DPTopicError, match="not a FedLDA state file"):
        fed_participate(url, corpus_of(texts[70:80], words), rounds=1, poll=0.1, timeout=30, client=c, state=state)
    assert c.updates == []


@pytest.mark.service
def test_fed_client_refuses_a_server_asking_for_more_than_the_users_limit(fed_server):
    from dptopic.contributor.client import fed_participate
    from service_helpers import corpus_of

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    c = _capturing_client(url)
    with pytest.raises(DPTopicError, match=r"epsilon per entry = 5, above your limit of 4 .*nothing was randomized"):
        fed_participate(url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30, client=c, max_epsilon=4)
    assert c.updates == []


@pytest.mark.service
def test_fed_client_cli_keeps_its_reports_in_the_state_folder_by_default(fed_server, tmp_path):
    import os
    from pathlib import Path

    url, texts = fed_server["url"], fed_server["texts"]
    (tmp_path / "docs.txt").write_text("\n".join(texts[80:90]) + "\n")
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"),
               PYTHONPATH=str(Path(__file__).resolve().parents[2] / "src"))

    def run(*extra):
        r = run_dptopic("fed-client", "--server", url, "--corpus", "docs.txt", "--poll", "0.1", "--round-timeout", "60",
                        *extra, env=env, cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return " ".join(r.stdout.split())

    first = run()
    files = list((tmp_path / "state" / "dptopic").glob("fed-*.json"))
    assert len(files) == 1 and "drawn once and kept in" in first, (first, list((tmp_path / "state").rglob("*")))
    assert (files[0].stat().st_mode & 0o777) == 0o600 and ((tmp_path / "state" / "dptopic").stat().st_mode & 0o777) == 0o700
    client = json.loads(files[0].read_text())["client"]
    second = run()
    assert f"as {client};" in second and "reused the reports drawn before" in second and "spent nothing more" in second
    third = run("--state", "none")
    assert "drawn anew for this run" in third and f"as {client};" not in third
    r = run_dptopic("fed-client", "--server", url, "--corpus", "docs.txt", "--max-epsilon", "2", "--retries", "0",
                    env=env, cwd=tmp_path)
    assert r.returncode == 2 and "above your limit of 2" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.service
def test_kept_reports_wait_for_the_next_round_when_they_already_took_part_in_the_open_one(tmp_path):
    # a rerun with the kept client id met its own update of the still-open round: 409 duplicate_update, a hard error
    import threading

    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from dptopic.contributor.client import ServerError, ServiceClient, fed_participate
    from service_helpers import Server, corpus_of, make_data

    words, texts = make_data(tmp_path, n_docs=60, n_prior=20)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "5",
                 "--fed-topics", "3", "--fed-pad-length", "16", "--fed-min-updates", "2").start()
    try:
        folder = tmp_path / "state"
        folder.mkdir()
        first = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30, state=folder)
        rnd = first["rounds"][0]["round"]
        out = {}
        met_its_own_update = threading.Event()

        class Watched(ServiceClient):
            def post_bytes(self, path, *a, **k):
                try:
                    return super().post_bytes(path, *a, **k)
                except ServerError as e:
                    if e.code == "duplicate_update":
                        met_its_own_update.set()
                    raise

        def rerun():
            try:
                out["ok"] = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=120,
                                            state=folder, client=Watched(srv.url))
            except Exception as e:  # noqa: BLE001 - reported below
                out["error"] = e

        t = threading.Thread(target=rerun)
        t.start()
        # the rerun meets round rnd, which its reports already joined, and waits; only then is rnd closed
        assert met_its_own_update.wait(120), out.get("error")
        fed_participate(srv.url, corpus_of(texts[20:30], words), rounds=1, poll=0.1, timeout=30)  # closes rnd
        t.join(150)
        assert "error" not in out, out.get("error")
        assert out["ok"]["reused_reports"] is True and out["ok"]["client"] == first["client"]
        assert [r["round"] for r in out["ok"]["rounds"]] == [rnd + 1]
    finally:
        srv.stop()


@pytest.mark.service
def test_a_state_folder_holds_one_set_of_reports_per_server_whatever_the_client_id(fed_server, tmp_path):
    # the file was named from the client id too, so a run with --client-id after one without drew (and spent) again
    from dptopic.contributor.client import fed_participate
    from service_helpers import corpus_of

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    folder = tmp_path / "st"
    folder.mkdir()
    a = fed_participate(url, corpus_of(texts[90:100], words), rounds=1, poll=0.1, timeout=30, client_id="alice",
                        state=folder)
    b = fed_participate(url, corpus_of(texts[90:100], words), rounds=1, poll=0.1, timeout=30, state=folder)
    assert a["reused_reports"] is False and b["reused_reports"] is True and b["client"] == "alice"
    assert len(list(folder.glob("fed-*.json"))) == 1
    with pytest.raises(DPTopicError, match="belongs to client 'alice', not client_id='bob': leave out client_id"):
        fed_participate(url, corpus_of(texts[90:100], words), rounds=1, poll=0.1, timeout=30, client_id="bob",
                        state=folder)
