"""``dptopic serve`` end to end on SQLite: a real uvicorn subprocess on 127.0.0.1, spoken to over HTTP."""
from __future__ import annotations

import base64
import gzip
import html
import http.client as httpclient
import json
import logging
import re
import socket
import struct
import subprocess
import threading

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from conftest import cli_output  # noqa: E402
from dptopic.accounting.local import epsilon_from_f, f_from_epsilon  # noqa: E402
from dptopic.contributor.client import ServerError, ServiceClient, fed_participate, submit  # noqa: E402
from dptopic.contributor.document_randomizer import DocumentRandomizer  # noqa: E402
from dptopic.contributor.randomizer import Randomizer  # noqa: E402
from dptopic.protocol import codec as protocol_codec
from helpers import run_dptopic  # noqa: E402
from service_helpers import (  # noqa: E402
    TOKEN,
    InProcessServer,
    Server,
    admin,
    check_exactly_once,
    corpus_of,
    count_rows,
    get_json,
    http,
    make_data,
    make_words,
    new_database,
    post_reports,
    service_config,
    with_format_version,
)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("svc")
    words, texts = make_data(tmp)
    db = f"sqlite:///{tmp / 'service.db'}"
    srv = Server(tmp, db, "--train-interval", "0", "--fed-epsilon-per-entry", "5", "--fed-topics", "3", "--fed-pad-length",
                 "32", "--fed-min-updates", "2", "--max-body-bytes", "200000").start()
    yield {"tmp": tmp, "words": words, "texts": texts, "db": db, "url": srv.url, "server": srv}
    srv.stop()


def stored(env) -> int:
    return count_rows(env["db"])["n_reports"]


def reports_body(words, texts, n=5, f=None, **kw) -> bytes:
    rz = Randomizer(words, f=f or 2 / (1 + np.exp(2.0)), secure=True)
    return rz.randomize([t.split() for t in texts[:n]]).to_bytes(include_vocabulary=False, **kw)


def with_header_fields(body: bytes, **fields) -> bytes:
    """A word-level report file whose JSON header gets ``fields`` added, checksum valid."""
    import hashlib
    import struct
    (n,) = struct.unpack("<I", body[8:12])
    head = {**json.loads(body[12:12 + n]), **fields}
    h = json.dumps(head).encode()
    core = body[:8] + struct.pack("<I", len(h)) + h + body[12 + n:-32]
    return core + hashlib.sha256(core).digest()


def assert_error(status, doc, want_status, want_code):
    assert status == want_status, doc
    assert set(doc) == {"error"} and set(doc["error"]) == {"code", "message"}
    assert doc["error"]["code"] == want_code
    assert "\n" not in doc["error"]["message"] and doc["error"]["message"]


@pytest.mark.service
def test_config_is_everything_a_client_needs(env):
    assert get_json(env["url"] + "/v1/config")[1]["report_kind"] == "word"
    status, cfg = get_json(env["url"] + "/v1/config")
    assert status == 200
    assert cfg["vocabulary"] == env["words"]
    from dptopic.protocol.reports import vocabulary_fingerprint
    assert cfg["vocabulary_sha256"] == vocabulary_fingerprint(env["words"])
    assert cfg["epsilon_word"] == pytest.approx(2.0)
    assert cfg["f"] == pytest.approx(2 / (1 + np.exp(2.0)))
    assert cfg["report_format"]["version"] == 1 and cfg["fed"]["entries_per_update"] == 32


@pytest.mark.service
def test_submit_sends_no_raw_text_and_stores_every_document(env, monkeypatch):
    before = stored(env)
    sent = []
    real_send = httpclient.HTTPConnection.send
    monkeypatch.setattr(httpclient.HTTPConnection, "send", lambda self, data: (sent.append(bytes(data)),
                                                                                real_send(self, data))[1])
    texts = env["texts"][:60]
    s = submit(env["url"], corpus_of(texts, env["words"]), contributor="alice")
    monkeypatch.undo()
    wire = b"".join(sent)
    assert s["reports"] == 60 and stored(env) == before + 60
    assert len(wire) > 60 * len(env["words"]) // 8
    tokens = {w for t in texts for w in t.split()}
    assert len(tokens) > 50
    leaked = [w for w in tokens if w.encode() in wire]
    assert not leaked, f"raw tokens on the wire: {leaked[:5]}"


@pytest.mark.service
def test_retry_with_same_key_counts_once_and_key_reuse_is_refused(env):
    body = reports_body(env["words"], env["texts"], 7)
    before = stored(env)
    s1, a1 = post_reports(env["url"], body, "retry-key-000001", "bob")
    s2, a2 = post_reports(env["url"], body, "retry-key-000001", "bob")
    assert (s1, s2) == (201, 200) and a1["reports"] == a2["reports"] == 7 and a2["replayed"] is True
    assert stored(env) == before + 7
    other = reports_body(env["words"], env["texts"][10:], 3)
    s3, doc = post_reports(env["url"], other, "retry-key-000001")
    assert_error(s3, doc, 409, "idempotency_key_reused")
    assert stored(env) == before + 7


@pytest.mark.service
def test_bad_input_is_refused_with_one_line_and_storage_unchanged(env):
    url, words, texts = env["url"], env["words"], env["texts"]
    good = reports_body(words, texts, 4)
    before = count_rows(env["db"])
    other_vocab = list(reversed(words))  # same V, another word list: another fingerprint
    cases = [
        (reports_body(other_vocab, texts, 4), {}, 422, "incompatible_reports"),                 # wrong fingerprint
        (reports_body(make_words(100), texts, 4), {}, 422, "incompatible_reports"),             # wrong length (V)
        (reports_body(words, texts, 4, f=0.5), {}, 422, "incompatible_reports"),                 # wrong f
        (DocumentRandomizer(words, 8.0).randomize([texts[0].split()]).to_bytes(), {}, 422,
         "incompatible_reports"),                                                                 # another kind
        (with_format_version(good, 2), {}, 422, "incompatible_reports"),                         # another version
        (with_header_fields(good, kind="document"), {}, 400, "malformed_reports"),               # inconsistent kind
        (good[:-9], {}, 400, "malformed_reports"),                                               # truncated
        (good[:20] + bytes([good[20] ^ 1]) + good[21:], {}, 400, "malformed_reports"),           # flipped byte
        (b"{not json", {}, 400, "malformed_reports"),
        (b"\0" * 300_000, {}, 413, "body_too_large"),                                            # huge
        (good, {"Idempotency-Key": None}, 400, "missing_idempotency_key"),
        (good, {"Idempotency-Key": "short"}, 400, "bad_idempotency_key"),
        (good, {"Content-Type": "application/json"}, 415, "unsupported_media_type"),
    ]
    for i, (body, hdr, want_status, want_code) in enumerate(cases):
        headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": f"bad-input-{i:04d}"}
        headers.update(hdr)
        headers = {k: v for k, v in headers.items() if v is not None}
        status, _, data = http("POST", url + "/v1/reports", body, headers)
        assert_error(status, json.loads(data), want_status, want_code)
    # admin: bad JSON, missing and wrong token
    status, _, data = http("POST", url + "/v1/admin/rotate", b"{oops", {"Authorization": f"Bearer {TOKEN}"})
    assert_error(status, json.loads(data), 400, "bad_json")
    status, _, data = http("POST", url + "/v1/admin/rotate", b"{}")
    assert_error(status, json.loads(data), 401, "missing_token")
    status, _, data = http("POST", url + "/v1/admin/train", b"{}", {"Authorization": "Bearer not-the-token-at-all"})
    assert_error(status, json.loads(data), 403, "wrong_token")
    status, _, data = http("GET", url + "/v1/nowhere")
    assert_error(status, json.loads(data), 404, "not_found")
    status, _, data = http("POST", url + "/v1/reports", with_format_version(good, 2),
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "bad-input-version"})
    assert "format version 2" in json.loads(data)["error"]["message"]
    # the reasons address the uploader
    status, _, data = http("POST", url + "/v1/reports", with_header_fields(good, kind="document"),
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "bad-input-kind"})
    assert "word-level" in json.loads(data)["error"]["message"] and "'document'" in json.loads(data)["error"]["message"]
    status, _, data = http("POST", url + "/v1/reports", reports_body(words, texts, 4, f=2 / (1 + np.exp(3.0))),
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "bad-input-eps3"})
    reason = json.loads(data)["error"]["message"]
    assert status == 422 and "this server collects f=0.238406" in reason and "GET /v1/config" in reason
    assert "train with" not in reason
    after = count_rows(env["db"])
    assert after["n_reports"] == before["n_reports"] and after["models"] == before["models"]
    assert after["submissions"] == before["submissions"]
    assert post_reports(url, with_header_fields(good, kind="word"), "good-input-kind")[0] == 201  # consistent: stored


@pytest.mark.service
def test_trainer_consumes_every_report_once_and_topics_appear(env):
    body = reports_body(env["words"], env["texts"][100:], 90)
    assert post_reports(env["url"], body, "train-batch-000001", "carol")[0] == 201
    status, done = admin(env["url"], "/v1/admin/train", {"force": True})
    assert status == 200 and done["batches"] and all(b["status"] == "trained" for b in done["batches"])
    status, topics = get_json(env["url"] + "/v1/topics?words=5")
    assert status == 200 and len(topics["topics"]) == 4 and all(len(t["words"]) == 5 for t in topics["topics"])
    assert topics["reports_used"] == topics["reports_stored"] == stored(env)
    assert topics["privacy"]["epsilon_word"] == pytest.approx(2.0)
    assert topics["per_contributor"]["max_reports_from_one_contributor"] == 90
    rows = count_rows(env["db"])
    check_exactly_once(rows)
    # nothing new: a second trigger trains nothing
    assert admin(env["url"], "/v1/admin/train", {"force": True})[1]["batches"] == []
    # the status page shows the topics and the counts
    status, _, page = http("GET", env["url"] + "/")
    page = page.decode()
    assert status == 200 and topics["topics"][0]["words"][0] in page and "Epsilon per contributor" in page
    # a refusal of its own, so that this test does not lean on another's having run in the same server
    assert http("POST", env["url"] + "/v1/admin/train", b"{}", {"Authorization": "Bearer not-the-token-at-all"})[0] == 403
    status, _, metrics = http("GET", env["url"] + "/metrics")
    text = metrics.decode()
    assert f"dptopic_reports_stored {float(rows['n_reports'])}" in text
    assert "dptopic_batches_trained" in text and 'dptopic_errors_total{code="wrong_token"}' in text


@pytest.mark.service
def test_a_server_imports_no_trainer_until_it_trains(tmp_path, monkeypatch):
    """``dptopic serve`` starts, wakes its trainer and stores uploads without importing scikit-learn or a trainer
    (a light, fast start: every test that starts a server waits for it); the first mini-batch it trains imports them."""
    import time

    words, texts = make_data(tmp_path)
    monkeypatch.setenv("PYTHONPROFILEIMPORTTIME", "1")     # the server's log then names every module it imports
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 's.db'}", "--train-interval", "0.2").start()

    def imported():
        return {line.rsplit("|", 1)[1].strip() for line in srv.log_text().splitlines()
                if line.startswith("import time:") and "|" in line}

    try:
        assert post_reports(srv.url, reports_body(words, texts, 5), "light-start-0001")[0] == 201
        time.sleep(1.0)                                     # the trainer wakes: 5 reports are no batch of 40
        before = imported()
        assert "dptopic.protocol.reports" in before and "starlette.applications" in before      # the log is read right
        assert not before & {"sklearn", "sklearn.base", "dptopic.models.base", "dptopic.training", "pandas"}
        status, done = admin(srv.url, "/v1/admin/train", {"force": True})
        assert status == 200 and [b["status"] for b in done["batches"]] == ["trained"]
        assert {"sklearn", "dptopic.models.base", "dptopic.training"} <= imported()
    finally:
        srv.stop()


@pytest.mark.service
def test_rotation_starts_a_new_model_at_the_cursor(env):
    before = count_rows(env["db"])
    status, info = admin(env["url"], "/v1/admin/rotate", {"note": "test"})
    assert status == 200 and info["starts_after_report"] == before["models"][-1]["last_report_id"]
    assert post_reports(env["url"], reports_body(env["words"], env["texts"][200:], 45), "rotate-000001")[0] == 201
    # pending counts what the new model has not consumed (45), as /metrics does, not stored - used by the new model
    topics = get_json(env["url"] + "/v1/topics")[1]
    assert topics["reports_pending"] == 45 < topics["reports_stored"]
    assert "dptopic_reports_pending 45.0" in http("GET", env["url"] + "/metrics")[2].decode()
    admin(env["url"], "/v1/admin/train", {"force": True})
    assert get_json(env["url"] + "/v1/topics")[1]["reports_pending"] == 0
    rows = count_rows(env["db"])
    assert [m["status"] for m in rows["models"]][-2:] == ["retired", "active"]
    assert rows["models"][-1]["n_reports_used"] == 45
    check_exactly_once(rows)


@pytest.mark.service
def test_fed_round_with_two_clients_and_stale_update_refused(env):
    url, words, texts = env["url"], env["words"], env["texts"]
    out = [None, None]

    def run(i):
        out[i] = fed_participate(url, corpus_of(texts[300 + 20 * i: 320 + 20 * i], words), rounds=1, poll=0.1,
                                 timeout=60, client_id=f"user{i}")

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(o is not None and len(o["rounds"]) == 1 for o in out)
    status, headers, msg = http("GET", url + "/v1/fed/round")
    assert status == 200 and int(headers["dptopic-round"]) == 1
    # a client update for round 0 (stale now) is refused, state unchanged
    from dptopic.protocol import codec as protocol_codec
    from dptopic.service import codec
    rrp = protocol_codec.fed_config_from_dict(get_json(url + "/v1/config")[1]["fed"])
    from dptopic.contributor.fedlda import fed_client
    fc = fed_client("user9", corpus_of(texts[:20], words), rrp)
    from dptopic.protocol.fedlda_messages import ModelBroadcast
    stale = fc.run_round(ModelBroadcast(0, protocol_codec.fed_fingerprint(corpus_of(texts[:5], words).vocabulary),
                                        codec.fed_phi(msg)).encode())
    status, _, data = http("POST", url + "/v1/fed/updates", stale,
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "fed-stale-0001"})
    assert_error(status, json.loads(data), 409, "stale_round")
    assert "stale or replayed" in json.loads(data)["error"]["message"]
    # an update for a future round is refused as such, not as stale
    future = fc.run_round(ModelBroadcast(7, protocol_codec.fed_fingerprint(corpus_of(texts[:5], words).vocabulary),
                                         codec.fed_phi(msg)).encode())
    status, _, data = http("POST", url + "/v1/fed/updates", future,
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "fed-future-0001"})
    assert_error(status, json.loads(data), 409, "stale_round")
    reason = json.loads(data)["error"]["message"]
    assert "round 7" in reason and "from a future round" in reason and "stale" not in reason
    fresh = fc.run_round(msg)
    headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": "fed-fresh-0001"}
    assert http("POST", url + "/v1/fed/updates", fresh, headers)[0] == 201
    # the same client again in the same round (new key): duplicate
    headers["Idempotency-Key"] = "fed-fresh-0002"
    status, _, data = http("POST", url + "/v1/fed/updates", fresh, headers)
    assert_error(status, json.loads(data), 409, "duplicate_update")
    status, _, data = http("POST", url + "/v1/fed/updates", fresh[:-3],
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "fed-trunc-0001"})
    assert_error(status, json.loads(data), 400, "malformed_update")
    assert int(http("GET", url + "/v1/fed/round")[1]["dptopic-round"]) == 1


@pytest.mark.service
def test_admin_train_refuses_unknown_keys(env):
    before = count_rows(env["db"])
    status, doc = admin(env["url"], "/v1/admin/train", {"forse": True})
    assert_error(status, doc, 400, "bad_request")
    msg = doc["error"]["message"]
    assert "'forse'" in msg and "'force'" in msg and "'max_batches'" in msg
    assert count_rows(env["db"]) == before
    assert admin(env["url"], "/v1/admin/train", {"force": False, "max_batches": 3})[0] == 200


@pytest.mark.service
def test_client_gives_one_line_error_on_refusal(env):
    c = ServiceClient(env["url"], retries=1, backoff=0.01)
    with pytest.raises(ServerError, match="idempotency_key"):
        c.post_bytes("/v1/reports", b"junk", "x")


@pytest.mark.service
def test_admin_train_names_the_bad_key(env):
    status, doc = admin(env["url"], "/v1/admin/train", {"force": "yes"})
    assert status == 400 and "'force' must be true or false, not \"yes\"" in json.dumps(doc).replace('\\"', '"')
    status, doc = admin(env["url"], "/v1/admin/train", {"max_batches": 0})
    assert status == 400 and "'max_batches' must be an integer in [1, 10000], not 0" in json.dumps(doc)


# ---------------------------------------------------------------------------------------------------------------------
# The status page while the database is down.

@pytest.mark.service
def test_status_page_answers_html_while_the_database_is_down(tmp_path, monkeypatch, caplog):
    from dptopic.service.storage import StorageError

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with InProcessServer(service_config(words, f"sqlite:///{tmp_path / 's.db'}")) as srv:
        status, headers, data = http("GET", srv.url + "/")
        assert status == 200 and "text/html" in headers["content-type"]

        def down(*a, **k):
            raise StorageError('database error: connection to server at "10.1.2.3", port 5432 failed')

        monkeypatch.setattr(srv.service.storage, "counts", down)
        with caplog.at_level(logging.ERROR, logger="dptopic.service"):
            status, headers, data = http("GET", srv.url + "/")
        page = data.decode()
        assert status == 503 and "text/html" in headers["content-type"], (status, headers)
        assert page.startswith("<!doctype html>") and "unavailable" in page and 'http-equiv="refresh"' in page
        assert "10.1.2.3" not in page and "5432" not in page        # the detail stays in the log
        assert any("10.1.2.3" in r.getMessage() for r in caplog.records)
        monkeypatch.undo()
        assert http("GET", srv.url + "/")[0] == 200                  # back when the database is


# ---------------------------------------------------------------------------------------------------------------------
# ``dptopic serve --report-kind document``: a real server on 127.0.0.1 taking document-level local-DP reports.


@pytest.mark.service
@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_document_kind_server_stores_trains_and_refuses_the_other_kind(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=600)
    db = f"sqlite:///{tmp_path / 'doc.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", document=True).start()
    try:
        cfg = get_json(srv.url + "/v1/config")[1]
        assert cfg["report_kind"] == "document" and cfg["report_format"]["kind"] == "document"
        assert cfg["epsilon_doc"] == 8.0 and cfg["f"] is None
        rz = DocumentRandomizer(words, 8.0)
        body = rz.randomize([t.split() for t in texts]).to_bytes(include_vocabulary=False)
        assert post_reports(srv.url, body, "doc-upload-0001", "dora")[0] == 201
        before = count_rows(db)
        # word-level reports, other epsilon, other vocabulary: 422 with one line, nothing stored
        word_body = Randomizer(words, epsilon_word=2.0).randomize([texts[0].split()]).to_bytes(include_vocabulary=False)
        other_eps = DocumentRandomizer(words, 4.0).randomize([texts[0].split()]).to_bytes(include_vocabulary=False)
        other_vocab = DocumentRandomizer(list(reversed(words)), 8.0).randomize([texts[0].split()]).to_bytes(
            include_vocabulary=False)
        other_version = with_format_version(body, 2)
        for i, bad in enumerate((word_body, other_eps, other_vocab, other_version)):
            status, _, data = http("POST", srv.url + "/v1/reports", bad,
                                   {"Content-Type": "application/octet-stream", "Idempotency-Key": f"doc-bad-{i:04d}"})
            err = json.loads(data)["error"]
            assert status == 422 and err["code"] == "incompatible_reports" and "\n" not in err["message"]
        assert "word-level" in json.loads(http("POST", srv.url + "/v1/reports", word_body, {
            "Content-Type": "application/octet-stream", "Idempotency-Key": "doc-bad-9999"})[2])["error"]["message"]
        after = count_rows(db)
        assert after["n_reports"] == before["n_reports"] == 600 and after["submissions"] == before["submissions"]
        # the trainer turns the stored reports into LocalDocumentLDA topics, exactly once
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        topics = get_json(srv.url + "/v1/topics")[1]
        assert topics["reports_used"] == 600 and len(topics["topics"]) == 4
        assert topics["privacy"]["epsilon_doc"] == 8.0
        assert topics["per_contributor"]["privacy_of_that_contributor"]["epsilon_contributor_doc_basic"] == 8.0 * 600
        page = http("GET", srv.url + "/")[2].decode()
        assert "eps_doc = 8 per document" in page and "LocalDocumentLDA" in page
        # no word-level wording or column on a document-level server's page
        assert "eps, word level" not in page and "presence of one word" not in page
        assert "Each report protects one whole document" in page
    finally:
        srv.stop()
    # the same database refuses to be served for word-level reports
    word_srv = Server(tmp_path, db, "--train-interval", "0")
    with pytest.raises(RuntimeError, match="--report-kind"):
        word_srv.start_refused(timeout=60)


@pytest.mark.service
def test_submit_to_a_document_kind_server(tmp_path, capsys):
    from dptopic.cli.main import main
    words, texts = make_data(tmp_path, vocab_size=40, n_docs=50)
    db = f"sqlite:///{tmp_path / 'doc.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", document=True).start()
    try:
        assert main(["submit", "--server", srv.url, "--corpus", str(tmp_path / "docs.txt"), "--contributor", "eve"]) == 0
        out = capsys.readouterr().out
        assert "50 randomized reports" in out and "eps_doc=8 per document" in out and "eps_word" not in out
        assert count_rows(db)["n_reports"] == 50
        # documents with fewer than two vocabulary words: the document-level note, not the word-level one
        (tmp_path / "short.txt").write_text(f"{words[0]}\nnothing known here\n{texts[0]}\n")
        assert main(["submit", "--server", srv.url, "--corpus", str(tmp_path / "short.txt")]) == 0
        err = capsys.readouterr().err
        assert "note: 2 of 3 documents have fewer than two vocabulary words" in err and "they report 'no pair'" in err
        assert "outside the guarantee" in err
        assert "contain no word of the vocabulary" not in err
    finally:
        srv.stop()


# ---------------------------------------------------------------------------------------------------------------------
# A deployment of the collection service, against a real
# ``dptopic serve`` on 127.0.0.1: the released model states the worst contributor, not one report; uploads without a
# pseudonym count one by one; the public page names no pseudonym; mistyped report headers are malformed, not another
# version.


def _rewrite_header(body: bytes, **fields) -> bytes:
    """A report file whose header fields are replaced, checksum valid (what a foreign client could send)."""
    import hashlib

    (n,) = struct.unpack("<I", body[8:12])
    head = json.loads(body[12:12 + n])
    head.update(fields)
    h = json.dumps(head).encode()
    core = body[:8] + struct.pack("<I", len(h)) + h + body[12 + n:-32]
    return core + hashlib.sha256(core).digest()


def _post(url, body, key, contributor=None):
    headers = {"Content-Type": "application/octet-stream", "Idempotency-Key": key}
    if contributor:
        headers["Dptopic-Contributor"] = contributor
    status, _, data = http("POST", url + "/v1/reports", body, headers)
    return status, json.loads(data)


@pytest.mark.service
@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_document_server_releases_the_worst_contributors_epsilon_and_names_no_pseudonym(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=300)
    db = f"sqlite:///{tmp_path / 'doc.db'}"
    srv = Server(tmp_path, db, "--train-interval", "0", document=True).start()
    try:
        rz = DocumentRandomizer(words, 8.0)

        def body(docs):
            return rz.randomize([t.split() for t in docs]).to_bytes(include_vocabulary=False)

        assert post_reports(srv.url, body(texts[:40]), "walk-upload-0001", "contributor-0001")[0] == 201
        assert post_reports(srv.url, body(texts[40:60]), "walk-upload-0002", "contributor-0002")[0] == 201
        # one upload of 90 documents without a pseudonym, one of 10: each is a contributor of its own
        assert post_reports(srv.url, body(texts[60:150]), "walk-upload-0003")[0] == 201
        assert post_reports(srv.url, body(texts[150:160]), "walk-upload-0004")[0] == 201
        per = get_json(srv.url + "/v1/topics")[1]["per_contributor"]
        assert per["max_reports_from_one_contributor"] == 90     # not the 40 of the largest pseudonym
        assert "each upload without one counts as a contributor of its own" in per["note"]
        for path in ("/v1/config", "/v1/topics", "/healthz"):   # HEAD is answered where GET is, with no body
            assert http("HEAD", srv.url + path)[::2] == (200, b"")
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        status, doc = get_json(srv.url + "/v1/model")
        assert status == 200
        privacy = json.loads(doc["model_json"])["privacy"]
        # the model pulled from the server states what /v1/topics states: 90 reports of eps_doc 8, composed
        assert privacy["reports_per_contributor"] == 90 and privacy["epsilon_contributor"] == pytest.approx(720.0)
        assert privacy["epsilon"] == pytest.approx(720.0, rel=1e-3) and privacy["epsilon_doc"] == 8.0
        card = json.loads(doc["model_json"])["privacy_card"]
        assert card["trust_model"].startswith("local") and card["epsilon"] == pytest.approx(720.0, rel=1e-3)
        page = http("GET", srv.url + "/")[2].decode()
        assert "contributor-" not in page                          # pseudonyms are not published
        assert "2 pseudonymous contributors and 2 uploads without a pseudonym" in " ".join(page.split())
        assert "(one upload without a pseudonym)" in page and "All 4 contributors" in " ".join(page.split())
        # a header that mistypes a field is malformed (400), not "another version" (422), and nothing is stored
        good = body(texts[160:170])
        before = get_json(srv.url + "/v1/topics")[1]["reports_stored"]
        for i, fields in enumerate(({"version": "1"}, {"n_reports": "10"}, {"n_reports": True}, {"epsilon": "8"},
                                    {"subset_size": 4.0})):
            status, err = _post(srv.url, _rewrite_header(good, **fields), f"walk-bad-{i:04d}")
            assert status == 400 and err["error"]["code"] == "malformed_reports", (fields, err)
            assert "\n" not in err["error"]["message"]
        assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before
        # an admin body that is not UTF-8 is named as such
        status, _, data = http("POST", srv.url + "/v1/admin/train", b'{"force":"\xff"}',
                               {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        assert status == 400 and "not UTF-8" in json.loads(data)["error"]["message"]
    finally:
        srv.stop()


@pytest.mark.service
@pytest.mark.filterwarnings("ignore:an explicit seed")
def test_word_server_keeps_the_prior_documents_rows_and_mistyped_headers_are_malformed(tmp_path, capsys):
    from dptopic.cli.main import main
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=120, n_prior=40)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'w.db'}", "--train-interval", "0").start()
    try:
        rz = Randomizer(words, epsilon_word=2.0)
        good = rz.randomize([t.split() for t in texts[:50]]).to_bytes(include_vocabulary=False)
        for i, fields in enumerate(({"n_reports": "50"}, {"version": "1"}, {"epsilon_word": 5.0}, {"f": True})):
            status, err = _post(srv.url, _rewrite_header(good, **fields), f"word-bad-{i:04d}")
            assert status == 400 and err["error"]["code"] == "malformed_reports", (fields, err)
        assert post_reports(srv.url, good, "word-good-0001", "wendy")[0] == 201
        assert admin(srv.url, "/v1/admin/train", {"force": True})[0] == 200
        doc = get_json(srv.url + "/v1/model")[1]
        meta = json.loads(doc["model_json"])
        assert "prior_presence" not in doc["arrays"] and "prior_presence" not in meta["arrays"]
        assert meta["privacy"]["reports_per_contributor"] == 50
        arrays = {k: np.frombuffer(base64.b64decode(v), np.uint8) for k, v in doc["arrays"].items()}
        assert set(arrays) == set(meta["arrays"])                   # what is listed is what is sent
        page = " ".join(http("GET", srv.url + "/")[2].decode().split())
        assert "of the prior corpus, which it uses in the clear and no epsilon covers" in page
        # submit's summary composes both guarantees a word-level report gives, not only the nominal document one
        (tmp_path / "mine.txt").write_text("\n".join(texts[50:53]) + "\n")
        assert main(["submit", "--server", srv.url, "--corpus", str(tmp_path / "mine.txt"), "--retries", "0"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert ("Privacy of these 3 documents (V=60; eps_word=2, eps_doc=120 per document; together eps_word=6 for one"
                " word's presence in each and eps=360 for the documents") in out
    finally:
        srv.stop()


@pytest.mark.service
def test_topics_words_takes_ascii_digits_only(tmp_path):
    from dptopic.service.config import ServiceConfig

    words, _ = make_data(tmp_path, vocab_size=60, n_docs=10, n_prior=10)
    # a document-kind app under uvicorn in this process: what /v1/topics answers needs no serve process
    cfg = ServiceConfig(words, None, database=f"sqlite:///{tmp_path / 'q.db'}", report_kind="document",
                        epsilon_doc=8.0, n_topics=4, train_interval=0)
    with InProcessServer(cfg) as srv:
        assert http("GET", srv.url + "/v1/topics?words=5")[0] == 200
        for bad in ("%D9%A1%D9%A0", "1_0", "%205", "-1", "0", "101", "x"):
            status, _, data = http("GET", srv.url + f"/v1/topics?words={bad}")
            assert status == 400 and json.loads(data)["error"]["code"] == "bad_request", bad


# ---------------------------------------------------------------------------------------------------------------------
# The collection service as a user runs it: a port already in use is refused in one line before the database is
# touched; /v1/topics says the range of ``words``; a compressed upload is refused (415) instead of stored as it
# came; submit counts one document in the singular. (The command-line checks of serve and randomize are in
# tests/cli/test_serve.py and tests/cli/test_randomize.py.)


def _run(*args, timeout: float = 120) -> subprocess.CompletedProcess:
    return run_dptopic(*args)


# ----------------------------------------------------------------------------- A: a port already in use
@pytest.mark.service
def test_serve_refuses_a_port_in_use_in_one_line_and_creates_no_database(tmp_path):
    make_data(tmp_path, vocab_size=40, n_docs=20, n_prior=10)
    db = tmp_path / "service.db"
    with socket.socket() as listener:       # a real listener on the port serve is asked for
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        r = _run("serve", "--database", f"sqlite:///{db}", "--host", "127.0.0.1", "--port", str(port),
                 "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "2", "--topics", "4")
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr                    # no banner, no uvicorn INFO/ERROR lines
    assert lines[0].startswith(f"error: port {port} on 127.0.0.1 is in use")
    assert "choose another --port" in lines[0] and "Traceback" not in r.stderr
    assert not any(tmp_path.glob("service.db*"))        # nothing created: no tables, vocabulary or epsilon bound


# ----------------------------------------------------------------------------- E and F(ii): a live server
@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("walk2-live")
    words, texts = make_data(tmp, vocab_size=60, n_docs=50, n_prior=20)
    srv = Server(tmp, f"sqlite:///{tmp / 'svc.db'}", "--train-interval", "0").start()
    try:
        yield srv, words, texts
    finally:
        srv.stop()


@pytest.mark.service
def test_topics_says_the_range_of_words(live):
    srv = live[0]
    for raw in ("-1", "100000000", "0", "101", "99999999999999999999999"):
        status, _, data = http("GET", f"{srv.url}/v1/topics?words={raw}")
        msg = json.loads(data)["error"]["message"]
        assert status == 400 and "from 1 to 100" in msg and "must be an integer" not in msg, (raw, msg)
        assert "out of range" in msg
    for raw in ("abc", "1_0", "%205"):
        status, _, data = http("GET", f"{srv.url}/v1/topics?words={raw}")
        msg = json.loads(data)["error"]["message"]
        assert status == 400 and "an integer from 1 to 100" in msg, (raw, msg)
    assert get_json(srv.url + "/v1/topics?words=100")[0] == 200
    assert get_json(srv.url + "/v1/topics?words=000000000000000000003")[0] == 200    # leading zeros: 3


@pytest.mark.service
def test_an_upload_with_a_content_encoding_is_refused_and_stores_nothing(live):
    srv, words, texts = live
    rz = Randomizer(words, epsilon_word=2.0)
    body = rz.randomize([t.split() for t in texts[:5]]).to_bytes(include_vocabulary=False)
    before = get_json(srv.url + "/v1/topics")[1]["reports_stored"]
    base = {"Content-Type": "application/octet-stream"}
    for i, (encoding, payload) in enumerate((("gzip", body), ("gzip", gzip.compress(body)), ("br", body),
                                             ("identity, gzip", body), ("deflate", body))):
        status, _, data = http("POST", srv.url + "/v1/reports", payload,
                               {**base, "Idempotency-Key": f"walk2-encoded-{i:04d}", "Content-Encoding": encoding})
        assert status == 415, (encoding, status, data)
        err = json.loads(data)["error"]
        assert err["code"] == "unsupported_content_encoding", (encoding, err)
        assert "send it uncompressed" in err["message"] and "\n" not in err["message"]
    assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before    # nothing stored
    status, _, _ = http("POST", srv.url + "/v1/reports", body,
                        {**base, "Idempotency-Key": "walk2-identity-0001", "Content-Encoding": "identity"})
    assert status == 201
    assert get_json(srv.url + "/v1/topics")[1]["reports_stored"] == before + 5


@pytest.mark.service
def test_submit_counts_one_document_in_the_singular(live, tmp_path, capsys):
    srv, _, texts = live
    (tmp_path / "one.txt").write_text(texts[10] + "\n")
    code, out, err = cli_output(capsys, "submit", "--server", srv.url, "--corpus", str(tmp_path / "one.txt"),
                          "--retries", "0")
    assert code == 0, err
    assert f"1 randomized report uploaded to {srv.url} in 1 upload." in out, out
    assert "Privacy of these 1 document" not in out and "1 randomized reports" not in out


# ---------------------------------------------------------------------------------------------------------------------
# Against a real ``dptopic serve`` on 127.0.0.1 (SQLite): every epsilon the service and its
# clients show is rounded up (never below the one composed), a body with a transfer coding the server does not decode
# is refused, an admin JSON body with a repeated key is refused and changes nothing, and a restart keeps the counts,
# rounds and per-contributor ledger exactly.


EPS_WORD = 1.23444      # to 4 digits, round-to-nearest shows it as 1.234: below the guarantee
FED_EPS = 4.12344       # likewise 4.123; 30 entries: 123.7032 per user, shown 123.7
FED_ENTRIES = 30
ARGS = ("--train-interval", "0", "--epsilon-word", str(EPS_WORD), "--fed-epsilon-per-entry", str(FED_EPS), "--fed-topics", "3",
        "--fed-pad-length", str(FED_ENTRIES), "--fed-min-updates", "1")


@pytest.fixture(scope="module")
def restarting_env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("svc52")
    words, texts = make_data(tmp, vocab_size=120, n_docs=120, n_prior=40)
    db = f"sqlite:///{tmp / 's.db'}"
    env = {"tmp": tmp, "words": words, "texts": texts, "db": db, "server": Server(tmp, db, *ARGS).start()}
    yield env
    env["server"].stop()    # the restart test replaces it


_N = iter(range(10**6))


def _key() -> str:
    return f"svc52-key-{next(_N):06d}"


def _body(words, texts) -> bytes:
    rz = Randomizer(words, f=f_from_epsilon(EPS_WORD), secure=True)
    return protocol_codec.encode_reports(rz.randomize([t.split() for t in texts]))


def _page(url: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", http("GET", url + "/")[2].decode()))


def _contributor_rows(page: str) -> list[tuple[str, ...]]:
    table = page.split("id=\"contributors\"", 1)[1].split("</table>", 1)[0]
    return [tuple(re.findall(r"<td>([^<]*)</td>", row)) for row in re.findall(r"<tr>(.*?)</tr>", table)[1:]]


def _shown_at_least(shown: str, true: float) -> None:
    assert float(shown) >= true, f"epsilon shown as {shown}, below the {true!r} composed"


@pytest.mark.service
def test_the_status_page_never_shows_an_epsilon_below_the_composed_one(restarting_env):
    """eps_word = 1.23444 was shown as 1.234, a contributor's 3 reports (3.70332) as 3.703, FedLDA's per-entry 4.12344
    as 4.123 and its per-user 123.7032 as 123.7: a privacy figure below the guarantee. Now rounded up."""
    url, words, texts = restarting_env["server"].url, restarting_env["words"], restarting_env["texts"]
    assert post_reports(url, _body(words, texts[:3]), _key(), "carol52")[0] == 201
    eps_word = epsilon_from_f(f_from_epsilon(EPS_WORD))
    page = _page(url)
    m = re.search(r"eps_word = ([0-9.e+]+) per word, eps_doc = ([0-9.e+]+) per document", page)
    _shown_at_least(m.group(1), eps_word)
    _shown_at_least(m.group(2), 120 * eps_word)
    assert m.group(1) == "1.235" and m.group(2) == "148.2"
    (rank, n, word, doc), = [r for r in _contributor_rows(page) if r[1] == "3"]
    _shown_at_least(word, 3 * eps_word)
    _shown_at_least(doc, 3 * 120 * eps_word)
    assert word == "3.704"
    m = re.search(r"per-entry epsilon ([0-9.e+]+), 30 entries per update: epsilon ([0-9.e+]+) per user", page)
    _shown_at_least(m.group(1), FED_EPS)
    _shown_at_least(m.group(2), FED_EPS * FED_ENTRIES)
    assert (m.group(1), m.group(2)) == ("4.124", "123.8")
    # what /v1/topics gives (exact floats) is the figure the page rounds up
    most = get_json(url + "/v1/topics")[1]["per_contributor"]["privacy_of_that_contributor"]
    assert most["epsilon_contributor_word_basic"] == pytest.approx(3 * eps_word, rel=1e-12)


def _cli_ok_out(capsys, argv) -> str:
    from dptopic.cli.main import main

    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    return " ".join(out.out.split())


@pytest.mark.service
def test_submit_and_fed_client_print_what_was_spent_rounded_up(restarting_env, capsys):
    """``dptopic submit`` printed eps_word=1.234 per document and 3.703 for three; ``fed-client`` printed 123.7 by basic
    composition: each below what the contributor spent."""
    url, tmp, texts = restarting_env["server"].url, restarting_env["tmp"], restarting_env["texts"]
    docs = tmp / "mine.txt"
    docs.write_text("\n".join(texts[10:13]) + "\n")
    out = _cli_ok_out(capsys, ["submit", "--server", url, "--corpus", docs, "--state", "none", "--contributor", "dave52"])
    assert "eps_word=1.235, eps_doc=148.2 per document" in out, out
    assert "together eps_word=3.704 for one word's presence" in out, out
    out = _cli_ok_out(capsys, ["fed-client", "--server", url, "--corpus", docs, "--state", "none", "--client-id", "erin52",
                        "--rounds", "1", "--poll", "0.1", "--round-timeout", "60"])
    m = re.search(r"epsilon of your reports \(this user\): ([0-9.e+]+) basic", out)
    assert m is not None, out
    _shown_at_least(m.group(1), FED_EPS * FED_ENTRIES)
    assert m.group(1) == "123.8"


def _raw(port: int, request: bytes) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def _chunked(body: bytes, size: int = 50) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + size]), body[i:i + size])
                    for i in range(0, len(body), size)) + b"0\r\n\r\n"


@pytest.mark.service
@pytest.mark.parametrize("path", ["/v1/reports", "/v1/fed/updates"])
def test_a_body_with_a_transfer_coding_the_server_does_not_decode_is_refused(restarting_env, path):
    """``Transfer-Encoding: gzip, chunked``: httptools takes the chunks apart and passed the rest on, so the bytes were
    read (and a valid report stored, 201) as if no coding applied; h11 refuses such a request. Now 400 and nothing
    stored; plain chunked still works."""
    srv, words, texts = restarting_env["server"], restarting_env["words"], restarting_env["texts"]
    body = _body(words, texts[20:22]) if path == "/v1/reports" else b"DPTF" + b"\0" * 40
    before = count_rows(restarting_env["db"])

    def send(coding: bytes, key: str):
        return _raw(srv.port, b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                              b"Idempotency-Key: %s\r\nTransfer-Encoding: %s\r\nConnection: close\r\n\r\n"
                    % (path.encode(), key.encode(), coding) + _chunked(body))

    for coding in (b"gzip, chunked", b"deflate,chunked"):
        status, doc = send(coding, _key())
        assert status == 400 and doc["error"]["code"] == "bad_request", doc
        assert "Transfer-Encoding" in doc["error"]["message"] and "\n" not in doc["error"]["message"]
    assert count_rows(restarting_env["db"]) == before
    if path == "/v1/reports":
        status, doc = send(b"chunked", _key())
        assert status == 201 and doc["reports"] == 2, doc
        assert count_rows(restarting_env["db"])["n_reports"] == before["n_reports"] + 2


@pytest.mark.service
@pytest.mark.parametrize("path, body", [
    ("/v1/admin/train", b'{"max_batches": 100000, "max_batches": 1}'),
    ("/v1/admin/rotate", b'{"note": "first", "note": "second"}'),
    ("/v1/admin/rotate", b'{"note": "x", "extra": {"a": 1, "a": 2}, "note": "y"}'),
])
def test_an_admin_body_that_repeats_a_key_is_refused_and_changes_nothing(restarting_env, path, body):
    """Python's JSON keeps a repeated key's last value, other parsers (a proxy, a gateway) its first: ``{"note": "a",
    "note": "b"}`` rotated the model with "b", and max_batches 100000 then 1 was taken as 1. The report header already
    refuses a repeated field; the admin bodies now do too (400, nothing changed)."""
    url = restarting_env["server"].url
    before = count_rows(restarting_env["db"])
    status, _, data = http("POST", url + path, body, {"Authorization": f"Bearer {TOKEN}",
                                                      "Content-Type": "application/json"}, timeout=120)
    doc = json.loads(data)
    assert status == 400 and doc["error"]["code"] == "bad_json", doc
    assert "more than once" in doc["error"]["message"]
    assert count_rows(restarting_env["db"]) == before
    # a body that gives each key once is still taken (a nested object's own keys are no concern of the endpoint's)
    status, _, _ = http("POST", url + "/v1/admin/train", b'{"force": false, "max_batches": 1}',
                        {"Authorization": f"Bearer {TOKEN}"}, timeout=120)
    assert status == 200


def _ledger(url: str) -> dict:
    topics = get_json(url + "/v1/topics")[1]
    page = _page(url)
    gauges = {line.split()[0]: line.split()[1] for line in http("GET", url + "/metrics")[2].decode().splitlines()
              if line.startswith("dptopic_") and "_total" not in line}
    return {"stored": topics["reports_stored"], "pending": topics["reports_pending"], "model": topics["model_id"],
            "version": topics["model_version"], "per_contributor": topics["per_contributor"],
            "rows": _contributor_rows(page), "round": http("GET", url + "/v1/fed/round")[1]["dptopic-round"],
            "fed_rows": re.findall(r"<tr><td>\d+</td><td>\d+</td></tr>", page),
            "received": re.search(r"Reports received: <b id=\"reports-stored\">\d+</b> in [^;]*;", page).group(0),
            "gauges": gauges}


@pytest.mark.service
def test_a_restart_keeps_counts_rounds_and_the_per_contributor_ledger_exactly(restarting_env):
    """Replays, a duplicate upload and a FedLDA update before a stop; a start on the same database shows the same
    counts, round, contributors and epsilons (runs last in this module: it restarts the server)."""
    srv, words, texts = restarting_env["server"], restarting_env["words"], restarting_env["texts"]
    url = srv.url
    body, key = _body(words, texts[30:34]), _key()
    assert post_reports(url, body, key, "frank52")[0] == 201
    assert post_reports(url, body, key, "someone-else")[0] == 200        # a retry: tallied once, under frank52
    assert post_reports(url, body, _key(), "frank52")[1]["error"]["code"] == "duplicate_body"
    rows = count_rows(restarting_env["db"])
    assert rows["submissions"][key] == 4 and rows["per_key"][key] == 4
    before = _ledger(url)
    assert ("4" in [r[1] for r in before["rows"]]) and before["stored"] == rows["n_reports"]
    srv.stop()
    again = Server(restarting_env["tmp"], restarting_env["db"], *ARGS).start()
    restarting_env["server"] = again
    assert _ledger(again.url) == before
    assert count_rows(restarting_env["db"]) == rows


# ---------------------------------------------------------------------------------------------------------------------
# What the admin routes' JSON bodies may hold, the same on SQLite and PostgreSQL: text that no database column of the
# service can store (a NUL, which PostgreSQL's text refuses: it answered 503, which no retry can fix) is a 400 before
# the database is touched; and one rule for the body's encoding on every JSON route, UTF-8 (RFC 8259; UTF-16 was
# decoded, Latin-1 refused).

@pytest.fixture(scope="module")
def pg_url():
    from service_helpers import throwaway_postgres_url

    yield from throwaway_postgres_url()


def _database(backend, request, tmp_path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'admin.db'}"
    return new_database(request.getfixturevalue("pg_url"), "admin_bodies")


def _admin_raw(url: str, path: str, body: bytes, content_type: str = "application/json"):
    status, _, data = http("POST", url + path, body, {"Authorization": f"Bearer {TOKEN}", "Content-Type": content_type},
                           timeout=120)
    return status, json.loads(data)


BACKENDS = [pytest.param("postgresql", marks=pytest.mark.postgres), "sqlite"]


@pytest.mark.service
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nul_in_an_admin_note_is_a_400_on_every_database_and_changes_nothing(backend, request, tmp_path):
    words = make_words(40)
    cfg = service_config(words, _database(backend, request, tmp_path), admin_token=TOKEN)
    with InProcessServer(cfg) as srv:
        before = srv.service.storage.list_models()
        for body in (b'{"note": "before\\u0000after"}', b'{"note": "\\u0000"}', '{"note": "caf\\u00e9\\u0000"}'.encode()):
            status, doc = _admin_raw(srv.url, "/v1/admin/rotate", body)
            assert_error(status, doc, 400, "bad_json")
            assert "NUL" in doc["error"]["message"] and "'note'" in doc["error"]["message"], doc
        status, doc = _admin_raw(srv.url, "/v1/admin/rotate", b'{"note": "a\0b"}')    # a raw NUL is no JSON at all
        assert_error(status, doc, 400, "bad_json")
        assert srv.service.storage.list_models() == before
        status, doc = _admin_raw(srv.url, "/v1/admin/rotate", '{"note": "café, rotated"}'.encode())
        assert status == 200, doc
        assert srv.service.storage.list_models()[-1]["note"] == "café, rotated"


@pytest.mark.postgres
def test_storage_refuses_a_nul_in_any_text_before_the_database_is_touched(request, tmp_path):
    from dptopic.errors import DPTopicError
    from dptopic.service.storage import Storage, StorageError, Submission

    st = Storage(_database("postgresql", request, tmp_path))
    try:
        for call in (lambda: st.rotate("a\0b"), lambda: Submission("key-0123456789", "0" * 64, "bob\0", []),
                     lambda: Submission("key-\x000123456789", "0" * 64, None, []),
                     lambda: st.fed_store_update(0, "c\0", "key-0123456789", "0" * 64, b"", 1, None)):
            with pytest.raises(DPTopicError, match="NUL") as e:
                call()
            assert not isinstance(e.value, StorageError)        # not "the database is unavailable; retry"
        assert st.list_models() == []
    finally:
        st.close()


ADMIN_JSON_ROUTES = ["/v1/admin/train", "/v1/admin/rotate", "/v1/admin/fed/close-round"]


@pytest.fixture(scope="module")
def admin_server(tmp_path_factory):
    words = make_words(40)
    db = f"sqlite:///{tmp_path_factory.mktemp('enc') / 'enc.db'}"
    with InProcessServer(service_config(words, db, admin_token=TOKEN, fed_epsilon_per_entry=5.0, fed_pad_length=16,
                                        fed_min_updates=50)) as srv:
        yield srv


@pytest.mark.service
@pytest.mark.parametrize("path", ADMIN_JSON_ROUTES)
@pytest.mark.parametrize("body, content_type, said", [
    ("{}".encode("utf-16"), "application/json", "UTF-16"),
    ("{}".encode("utf-16-le"), "application/json", "UTF-16"),
    ("{}".encode("utf-32"), "application/json", "UTF-32"),
    (" {}".encode("utf-32-be"), "application/json", "UTF-32"),
    ('{"note": "café"}'.encode("latin-1"), "application/json", "not UTF-8 (byte 0xe9"),
    (b"{}", "application/json; charset=latin-1", "charset latin-1"),
    (b"{}", "application/json; charset=UTF-16", "charset utf-16"),
], ids=["utf-16", "utf-16-le", "utf-32", "utf-32-be", "latin-1", "declared latin-1", "declared utf-16"])
def test_every_json_route_takes_utf8_only_and_says_so(admin_server, path, body, content_type, said):
    before = admin_server.service.storage.list_models()
    status, doc = _admin_raw(admin_server.url, path, body, content_type)
    assert_error(status, doc, 400, "bad_json")
    assert said in doc["error"]["message"] and "UTF-8" in doc["error"]["message"], doc
    assert admin_server.service.storage.list_models() == before


@pytest.mark.service
@pytest.mark.parametrize("body, content_type", [
    ('{"note": "café"}'.encode("utf-8"), "application/json"),
    ('{"note": "café"}'.encode("utf-8-sig"), "application/json"),                  # a byte order mark is ignored
    ('{"note": "café"}'.encode("utf-8"), 'application/json; charset="UTF-8"'),
    ('{"note": "café"}'.encode("utf-8"), "application/json;charset=utf8"),
], ids=["utf-8", "utf-8 with a bom", "declared UTF-8", "declared utf8"])
def test_utf8_bodies_are_taken_with_or_without_a_bom_or_charset(admin_server, body, content_type):
    status, doc = _admin_raw(admin_server.url, "/v1/admin/rotate", body, content_type)
    assert status == 200, doc
    assert admin_server.service.storage.list_models()[-1]["note"] == "café"
