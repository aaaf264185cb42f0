"""Issue 20, FedLDA items: saved sizes (6), partial guarantee (7), retried updates (17), huge shapes (18),
K > V (20), epsilon range (21), a refused broadcast leaves the client untouched (24)."""
from __future__ import annotations

import json
import struct
import zlib

import numpy as np
import pytest

from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.federated import FedClient, MessageError, ModelBroadcast, RRPConfig, decode_message
from dptopic.federated.messages import MAGIC, VERSION
from dptopic.models import FedLDA, load


def _fit(**kw):
    c = lda_corpus(n_docs=12, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    params = dict(n_topics=2, rounds=2, pad_length=16, seed=3, verbose=0)
    with pytest.warns(UserWarning, match="seed"):
        return FedLDA(**{**params, **kw}).fit(c), c


# ------------------------------------------------------------------ item 6
def test_saved_model_holds_no_exact_corpus_sizes_and_old_folders_load(tmp_path):
    m, _ = _fit()
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    assert "n_docs" not in meta["training"] and "n_tokens" not in meta["training"]
    assert meta["training"]["entries_per_update"] == 16 and meta["training"]["vocab_size"] == 20
    # a folder written before the fix (with the exact sizes) still loads, and a re-save drops them
    meta["training"].update(n_docs=12, n_tokens=120)
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    old = load(tmp_path / "m")
    np.testing.assert_array_equal(old.components_, m.components_)
    old.save(tmp_path / "again")
    again = json.loads((tmp_path / "again" / "model.json").read_text())["training"]
    assert "n_docs" not in again and "n_tokens" not in again


# ------------------------------------------------------------------ item 7
@pytest.mark.parametrize("replacement", ["mixture", "topic"])
def test_report_says_partial_because_topic_labels_go_out_in_the_clear(replacement):
    m, _ = _fit(replacement=replacement, exclusion="floor")
    rep = m.privacy_
    assert rep["guarantee"] == "partial"
    assert "topic labels go out unperturbed" in rep["note"]
    assert ("local theta" in rep["note"]) == (replacement == "mixture")
    assert rep["scope"].startswith("covers the word of every entry one user reports")
    assert "topic label of each entry" in rep["scope"]
    assert ("replacement='mixture'" in rep["scope"]) == (replacement == "mixture")


def test_tail_exclusion_keeps_both_reasons():
    m, _ = _fit(exclusion="tail")
    # partial where an (epsilon, delta) follows; here the excluded masses add past any delta: no guarantee at all
    assert m.privacy_["epsilon"] is None and m.privacy_["guarantee"] == "none"
    assert "topic labels" in m.privacy_["note"] and "Zipf" in m.privacy_["note"]


# ------------------------------------------------------------------ item 18
def _raw_message(header: dict, payload: bytes = b"") -> bytes:
    head = json.dumps(header).encode()
    body = MAGIC + struct.pack("<BI", VERSION, len(head)) + head + payload
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


HUGE = [[2 ** 40, 2 ** 40], [10 ** 30], [2 ** 62, 4], [1, 1, 1, 1, 1, 1, 1, 1, 1], ["3"], [True], [1.5]]


@pytest.mark.parametrize("shape", HUGE)
def test_huge_or_odd_shapes_are_one_line_message_errors(shape):
    msg = _raw_message({"kind": "update", "round": 0, "client": "a", "vocab": "v",
                        "arrays": [{"name": "topics", "dtype": "<i4", "shape": shape},
                                   {"name": "words", "dtype": "<i4", "shape": shape}]}, b"\0" * 16)
    with pytest.raises(MessageError, match="malformed message") as e:
        decode_message(msg)
    assert "\n" not in str(e.value)


def test_deeply_nested_header_is_a_message_error():
    head = b'{"arrays":' + b"[" * 30000 + b"]" * 30000 + b"}"
    body = MAGIC + struct.pack("<BI", VERSION, len(head)) + head
    with pytest.raises(MessageError, match="nested too deeply"):
        decode_message(body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF))


# ------------------------------------------------------------------ items 20 and 21
def test_more_topics_than_words_is_refused_before_training():
    c = lda_corpus(n_docs=6, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    with pytest.raises(DPTopicError, match="n_topics=30 exceeds the vocabulary size 20"):
        FedLDA(n_topics=30, rounds=1, pad_length=16, verbose=0).fit(c)
    with pytest.raises(DPTopicError, match="exceeds the vocabulary size"):
        FedClient("u", c, RRPConfig(30, 5.0, pad_length=16), np.random.default_rng(0))


@pytest.mark.parametrize("eps", [1e-300, 1e-3])
def test_epsilon_too_small_for_the_vocabulary_is_one_line(eps):
    c = lda_corpus(n_docs=6, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    with pytest.raises(DPTopicError, match="too small for a vocabulary of 20 words") as e:
        FedLDA(n_topics=2, epsilon_per_entry=eps, rounds=1, pad_length=16, exclusion="floor", verbose=0).fit(c)
    assert "\n" not in str(e.value)


def test_coincide_with_tiny_epsilon_still_runs():
    m, _ = _fit(epsilon_per_entry=1e-300, variant="coincide", exclusion="floor")
    assert m.privacy_["epsilon_basic"] > 0


@pytest.mark.parametrize("bad", [["--topics", "100000"], ["--epsilon-per-entry", "1e-300", "--exclusion", "floor"],
                                 ["--epsilon", "1e308"], ["--subset-size", "20"]])
def test_cli_refuses_fed_settings_in_one_line(tmp_path, capsys, bad):
    from dptopic.cli.main import main

    c = lda_corpus(n_docs=10, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    path = c.save(tmp_path / "c.npz")
    args = ["train", "--algorithm", "fed", "--corpus", str(path), "--rounds", "1", "--pad-length", "16",
            "--topics", "2", "--out", str(tmp_path / "m"), "--quiet"]
    try:
        rc = main(args + bad)
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "error" in err.lower()
    assert len(err.strip().splitlines()) <= 2
    assert not (tmp_path / "m").exists()


# ------------------------------------------------------------------ item 24
def _client():
    c = lda_corpus(n_docs=4, vocab_size=20, n_topics=2, doc_length=10, seed=1).corpus
    cfg = RRPConfig(2, 5.0, pad_length=64)
    return FedClient("u", c, cfg, np.random.default_rng(4)), c


@pytest.mark.parametrize("poison", ["nan", "neg", "zero", "inf", "unnormalised"])
def test_refused_broadcast_leaves_client_state_bit_for_bit(poison):
    client, c = _client()
    phi = np.full((2, 20), 1 / 20)
    if poison == "nan":
        phi[0, 3] = np.nan
    elif poison == "neg":
        phi[1, 0], phi[1, 1] = -0.05, 0.15
    elif poison == "zero":
        phi[0, 0], phi[0, 1] = 0.0, 0.1
    elif poison == "inf":
        phi[1, 2] = np.inf
    else:
        phi *= 3
    before = (client.z.copy(), client.ndk.copy(), client._rng.bit_generator.state, client.n_truncated)
    with pytest.raises(DPTopicError, match="broadcast phi must hold finite, positive probabilities"):
        client.run_round(ModelBroadcast(0, client.vocab, phi).encode())
    assert client.z.tobytes() == before[0].tobytes() and client.ndk.tobytes() == before[1].tobytes()
    assert client._rng.bit_generator.state == before[2] and client.n_truncated == before[3]
    # a good broadcast still works afterwards
    client.run_round(ModelBroadcast(0, client.vocab, np.full((2, 20), 1 / 20)).encode())


# ------------------------------------------------------------------ items 17 and 18 on a live server
@pytest.fixture(scope="module")
def fed_server(tmp_path_factory):
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from service_helpers import Server, make_data

    tmp = tmp_path_factory.mktemp("fedsvc")
    words, texts = make_data(tmp, n_docs=120, n_prior=40)
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon", "5",
                 "--fed-topics", "3", "--fed-pad-length", "32", "--fed-min-updates", "1").start()
    yield {"url": srv.url, "words": words, "texts": texts}
    srv.stop()


def _open_round(url) -> int:
    from service_helpers import http

    return int(http("GET", url + "/v1/fed/round")[1]["dptopic-round"])


def test_retry_of_an_update_that_closed_its_round_is_replayed(fed_server):
    from service_helpers import corpus_of, get_json, http

    from dptopic.service import codec

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    rrp = codec.fed_config_from_dict(get_json(url + "/v1/config")[1]["fed"])
    fc = codec.fed_client("retry-user", corpus_of(texts[:10], words), rrp)
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


def test_fed_client_counts_a_round_whose_ack_was_lost(fed_server):
    from service_helpers import corpus_of

    from dptopic.service.client import ServiceClient, fed_participate

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


@pytest.mark.parametrize("shape", [[2 ** 40, 2 ** 40], [10 ** 30]])
def test_huge_shapes_are_http_400_on_fed_updates(fed_server, shape):
    from service_helpers import http

    msg = _raw_message({"kind": "update", "round": 0, "client": "a", "vocab": "v",
                        "arrays": [{"name": "topics", "dtype": "<i4", "shape": shape},
                                   {"name": "words", "dtype": "<i4", "shape": shape}]}, b"\0" * 16)
    status, _, data = http("POST", fed_server["url"] + "/v1/fed/updates", msg,
                           {"Content-Type": "application/octet-stream",
                            "Idempotency-Key": f"fed-huge-{len(shape)}0000"})
    assert status == 400
    err = json.loads(data)["error"]
    assert err["code"] == "malformed_update" and "\n" not in err["message"]


def test_fed_client_summary_says_full_for_the_default_rule(fed_server):
    from service_helpers import corpus_of

    from dptopic.service.client import fed_participate

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    out = fed_participate(url, corpus_of(texts[40:50], words), rounds=1, poll=0.1, timeout=30)
    # the service's default rule is exclusion="none": labels are post-processing of the randomized words
    assert out["guarantee"] == "full" and "post-processing" in out["note"]


def test_a_user_without_any_report_word_takes_part_with_padding(fed_server):
    """Whether someone takes part must say nothing of their text: under the sound rule a user none of whose words
    the rounds take still sends its update (padding only), as the simulation does."""
    from dptopic.corpus import Corpus
    from dptopic.service.client import fed_participate

    url, words = fed_server["url"], fed_server["words"]
    out = fed_participate(url, Corpus.from_token_ids([[]], words), rounds=1, poll=0.1, timeout=30)
    assert out["guarantee"] == "full"


def test_serve_with_a_per_user_budget_runs_rounds_at_the_chosen_split(tmp_path):
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from service_helpers import Server, corpus_of, get_json, make_data

    from dptopic.accounting.fedlda import entries_for_user_budget
    from dptopic.service import codec
    from dptopic.service.client import fed_participate

    words, texts = make_data(tmp_path, n_docs=60, n_prior=20)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'service.db'}", "--train-interval", "0", "--fed-user-budget", "90",
                 "--fed-topics", "3", "--fed-min-updates", "1").start()
    try:
        eps, entries = entries_for_user_budget(90, len(words))
        rrp = codec.fed_config_from_dict(get_json(srv.url + "/v1/config")[1]["fed"])
        assert rrp.epsilon == pytest.approx(eps) and rrp.n_entries == entries
        out = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30)
        assert out["guarantee"] == "full" and len(out["rounds"]) == 1
        assert out["epsilon_basic"] == pytest.approx(90)          # the contributor's whole spend: the budget
    finally:
        srv.stop()


def test_serve_with_fed_report_words_runs_rounds_over_the_first_words(tmp_path):
    """``--fed-report-words N``: the rounds range over the vocabulary's first N words; /v1/config says so, a
    contributor's client restricts its documents to them, and the database refuses a restart with another N."""
    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    import subprocess
    import sys

    from service_helpers import Server, corpus_of, get_json, http, make_data

    from dptopic.federated import vocabulary_fingerprint
    from dptopic.service.client import fed_participate

    words, texts = make_data(tmp_path, n_docs=60, n_prior=20)
    words = words[::-1]             # the helper's words are alphabetical, which --fed-report-words refuses
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n")
    db = f"sqlite:///{tmp_path / 'service.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", "--fed-epsilon", "5", "--fed-topics", "3",
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
    again = Server(tmp_path, db, "--train-interval", "0", "--fed-epsilon", "5", "--fed-topics", "3",
                   "--fed-report-words", "50")
    with pytest.raises(RuntimeError, match="--fed-report-words 40"):
        again.start(timeout=60)
    # settings that cannot work: one line, before anything starts
    for extra, msg in ((["--fed-report-words", "40"], "no effect without FedLDA"),
                       (["--fed-epsilon", "5", "--fed-report-words", "500"], "between --fed-topics")):
        r = subprocess.run([sys.executable, "-m", "dptopic", "serve", "--vocabulary", str(tmp_path / "vocab.txt"),
                            "--epsilon-word", "2", "--database", f"sqlite:///{tmp_path / 'other.db'}", *extra],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr


# ------------------------------------------------------------------ a user's reports kept between runs (--state)
def _capturing_client(url):
    from dptopic.service.client import ServiceClient

    class Capturing(ServiceClient):
        updates: list = []

        def _once(self, method, path, body, headers):
            if path == "/v1/fed/updates":
                type(self).updates.append(body)
            return super()._once(method, path, body, headers)

    Capturing.updates = []
    return Capturing(url, retries=2, backoff=0.01)


def test_fed_client_state_reuses_the_reports_drawn_once_across_runs(fed_server, tmp_path):
    # each run drew new reports under the "spent once" claim: three runs spent three times m x eps
    from service_helpers import corpus_of

    from dptopic.service.client import fed_participate

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


def test_fed_client_state_of_another_client_or_server_is_refused_before_anything_is_sent(fed_server, tmp_path):
    from service_helpers import corpus_of

    from dptopic.service.client import fed_participate

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    state = tmp_path / "s.json"
    fed_participate(url, corpus_of(texts[70:80], words), rounds=1, poll=0.1, timeout=30, client_id="alice",
                    state=state)
    c = _capturing_client(url)
    with pytest.raises(DPTopicError, match="belongs to client 'alice', not 'bob'"):
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


def test_fed_client_refuses_a_server_asking_for_more_than_the_users_limit(fed_server):
    from service_helpers import corpus_of

    from dptopic.service.client import fed_participate

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    c = _capturing_client(url)
    with pytest.raises(DPTopicError, match=r"epsilon per entry = 5, above your limit of 4 .*nothing was randomized"):
        fed_participate(url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30, client=c, max_epsilon=4)
    assert c.updates == []


def test_fed_client_cli_keeps_its_reports_in_the_state_folder_by_default(fed_server, tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    url, texts = fed_server["url"], fed_server["texts"]
    (tmp_path / "docs.txt").write_text("\n".join(texts[80:90]) + "\n")
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"),
               PYTHONPATH=str(Path(__file__).resolve().parents[1] / "src"))

    def run(*extra):
        r = subprocess.run([sys.executable, "-m", "dptopic", "fed-client", "--server", url, "--corpus", "docs.txt",
                            "--poll", "0.1", "--round-timeout", "60", *extra], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=120)
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
    r = subprocess.run([sys.executable, "-m", "dptopic", "fed-client", "--server", url, "--corpus", "docs.txt",
                        "--max-epsilon", "2", "--retries", "0"], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=120)
    assert r.returncode == 2 and "above your limit of 2" in r.stderr and "Traceback" not in r.stderr


def test_kept_reports_wait_for_the_next_round_when_they_already_took_part_in_the_open_one(tmp_path):
    # a rerun with the kept client id met its own update of the still-open round: 409 duplicate_update, a hard error
    import threading

    pytest.importorskip("starlette")
    pytest.importorskip("sqlalchemy")
    pytest.importorskip("uvicorn")
    from service_helpers import Server, corpus_of, make_data

    from dptopic.service.client import fed_participate

    words, texts = make_data(tmp_path, n_docs=60, n_prior=20)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'service.db'}", "--train-interval", "0", "--fed-epsilon", "5",
                 "--fed-topics", "3", "--fed-pad-length", "16", "--fed-min-updates", "2").start()
    try:
        folder = tmp_path / "state"
        folder.mkdir()
        first = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=30, state=folder)
        rnd = first["rounds"][0]["round"]
        out = {}

        def rerun():
            try:
                out["ok"] = fed_participate(srv.url, corpus_of(texts[:10], words), rounds=1, poll=0.1, timeout=60,
                                            state=folder)
            except Exception as e:  # noqa: BLE001 - reported below
                out["error"] = e

        t = threading.Thread(target=rerun)
        t.start()
        import time

        time.sleep(1.0)    # the rerun meets round rnd, which its reports already joined, and waits
        fed_participate(srv.url, corpus_of(texts[20:30], words), rounds=1, poll=0.1, timeout=30)  # closes rnd
        t.join(90)
        assert "error" not in out, out.get("error")
        assert out["ok"]["reused_reports"] is True and out["ok"]["client"] == first["client"]
        assert [r["round"] for r in out["ok"]["rounds"]] == [rnd + 1]
    finally:
        srv.stop()


def test_a_state_folder_holds_one_set_of_reports_per_server_whatever_the_client_id(fed_server, tmp_path):
    # the file was named from the client id too, so a run with --client-id after one without drew (and spent) again
    from service_helpers import corpus_of

    from dptopic.service.client import fed_participate

    url, words, texts = fed_server["url"], fed_server["words"], fed_server["texts"]
    folder = tmp_path / "st"
    folder.mkdir()
    a = fed_participate(url, corpus_of(texts[90:100], words), rounds=1, poll=0.1, timeout=30, client_id="alice",
                        state=folder)
    b = fed_participate(url, corpus_of(texts[90:100], words), rounds=1, poll=0.1, timeout=30, state=folder)
    assert a["reused_reports"] is False and b["reused_reports"] is True and b["client"] == "alice"
    assert len(list(folder.glob("fed-*.json"))) == 1
    with pytest.raises(DPTopicError, match="belongs to client 'alice', not 'bob'"):
        fed_participate(url, corpus_of(texts[90:100], words), rounds=1, poll=0.1, timeout=30, client_id="bob",
                        state=folder)


def test_two_first_runs_at_once_keep_one_set_of_reports(tmp_path):
    from dptopic.service.client import _create_fed_state, _load_fed_state

    key = {"vocabulary_sha256": "x", "epsilon": 5.0, "entries": 2, "words_per_report": 1, "exclusion": "none"}
    p = tmp_path / "s.json"
    assert _create_fed_state(p, key, "first", [[1], [2]]) is True
    assert _create_fed_state(p, key, "second", [[3], [4]]) is False     # the later run finds the first's reports
    cid, sets = _load_fed_state(p, key, None)
    assert cid == "first" and sets.tolist() == [[1], [2]]
    assert (p.stat().st_mode & 0o777) == 0o600 and [q.name for q in tmp_path.iterdir()] == ["s.json"]
