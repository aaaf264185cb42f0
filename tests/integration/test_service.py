"""``dptopic serve`` end to end on SQLite: a real uvicorn subprocess on 127.0.0.1, spoken to over HTTP."""
from __future__ import annotations

import http.client as httpclient
import json
import threading

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")
pytest.importorskip("uvicorn")

from dptopic.local import DocumentRandomizer, Randomizer  # noqa: E402
from dptopic.service.client import ServerError, ServiceClient, fed_participate, submit  # noqa: E402

from service_helpers import (TOKEN, Server, admin, check_exactly_once, corpus_of, count_rows, get_json, http,  # noqa: E402
                             make_data, make_words, post_reports, with_format_version)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("svc")
    words, texts = make_data(tmp)
    db = f"sqlite:///{tmp / 'service.db'}"
    srv = Server(tmp, db, "--train-interval", "0", "--fed-epsilon", "5", "--fed-topics", "3", "--fed-pad-length",
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


def test_config_is_everything_a_client_needs(env):
    assert get_json(env["url"] + "/v1/config")[1]["report_kind"] == "word"
    status, cfg = get_json(env["url"] + "/v1/config")
    assert status == 200
    assert cfg["vocabulary"] == env["words"]
    from dptopic.local import vocabulary_fingerprint
    assert cfg["vocabulary_sha256"] == vocabulary_fingerprint(env["words"])
    assert cfg["epsilon_word"] == pytest.approx(2.0)
    assert cfg["f"] == pytest.approx(2 / (1 + np.exp(2.0)))
    assert cfg["report_format"]["version"] == 1 and cfg["fed"]["entries_per_update"] == 32


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
    from dptopic.service import codec
    rrp = codec.fed_config_from_dict(get_json(url + "/v1/config")[1]["fed"])
    fc = codec.fed_client("user9", corpus_of(texts[:20], words), rrp)
    from dptopic.federated import ModelBroadcast
    stale = fc.run_round(ModelBroadcast(0, codec.fed_fingerprint(corpus_of(texts[:5], words).vocabulary),
                                        codec.fed_phi(msg)).encode())
    status, _, data = http("POST", url + "/v1/fed/updates", stale,
                           {"Content-Type": "application/octet-stream", "Idempotency-Key": "fed-stale-0001"})
    assert_error(status, json.loads(data), 409, "stale_round")
    assert "stale or replayed" in json.loads(data)["error"]["message"]
    # an update for a future round is refused as such, not as stale
    future = fc.run_round(ModelBroadcast(7, codec.fed_fingerprint(corpus_of(texts[:5], words).vocabulary),
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


def test_admin_train_refuses_unknown_keys(env):
    before = count_rows(env["db"])
    status, doc = admin(env["url"], "/v1/admin/train", {"forse": True})
    assert_error(status, doc, 400, "bad_request")
    msg = doc["error"]["message"]
    assert "'forse'" in msg and "'force'" in msg and "'max_batches'" in msg
    assert count_rows(env["db"]) == before
    assert admin(env["url"], "/v1/admin/train", {"force": False, "max_batches": 3})[0] == 200


def test_client_gives_one_line_error_on_refusal(env):
    c = ServiceClient(env["url"], retries=1, backoff=0.01)
    with pytest.raises(ServerError, match="idempotency_key"):
        c.post_bytes("/v1/reports", b"junk", "x")


def test_start_up_objects_are_frozen_out_of_the_collector(tmp_path):
    """Full collections under load would otherwise scan every object the start-up left (imports, vocabulary, prior
    model): pauses of 100-250 ms for every request in flight on a 2-core machine (benchmarks/bench_service.py)."""
    import asyncio
    import gc

    from dptopic.service import ServiceConfig, create_app

    cfg = ServiceConfig(make_words(50), 0.2, database=f"sqlite:///{tmp_path / 'gc.db'}")

    async def frozen_while_serving(app):
        async with app.router.lifespan_context(app):
            return gc.get_freeze_count()

    gc.unfreeze()
    try:
        assert asyncio.run(frozen_while_serving(create_app(cfg, start_trainer=False))) > 1000
        gc.unfreeze()
        assert asyncio.run(frozen_while_serving(create_app(cfg, start_trainer=False, freeze_gc=False))) == 0
    finally:
        gc.unfreeze()


def test_admin_train_names_the_bad_key(env):
    status, doc = admin(env["url"], "/v1/admin/train", {"force": "yes"})
    assert status == 400 and "'force' must be true or false, not \"yes\"" in json.dumps(doc).replace('\\"', '"')
    status, doc = admin(env["url"], "/v1/admin/train", {"max_batches": 0})
    assert status == 400 and "'max_batches' must be an integer in [1, 10000], not 0" in json.dumps(doc)
