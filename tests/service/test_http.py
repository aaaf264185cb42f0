"""The service's HTTP layer answers a request too long to parse with a JSON error the client can read: a URL past the
limit gets 414 ``url_too_long``, headers past it 431 ``headers_too_large``, and neither ends in a connection reset."""
from __future__ import annotations

import json

import pytest
import hashlib
import http.client
import struct
from service_helpers import count_rows, http as request
from inprocess_server import InProcessServer, _body
import socket

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")

from dptopic.service.http import MAX_HEADER_BYTES  # noqa: E402

# _raw: a plain client that sends the whole request, then reads the answer (a reset raises ConnectionResetError)
from test_walk48_submit import _raw as _send_all_then_read  # noqa: E402
from test_walk48_submit import _ServedLikeServe, _cfg, _metric, make_data  # noqa: E402

LONG = 200_000      # bytes: a 200 KB query string, or header


@pytest.fixture(params=[True, False], ids=["httptools", "h11"])
def served(tmp_path, request):
    if request.param:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with _ServedLikeServe(_cfg(words, f"sqlite:///{tmp_path / 'm.db'}"), request.param) as srv:
        yield srv


def _json_error(got: bytes, status: int) -> dict:
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), head[:200]
    assert b"content-type: application/json" in head.lower()
    return json.loads(body)["error"]


def test_a_url_past_the_limit_gets_a_json_414(served):
    got = _send_all_then_read(served.port, b"GET /v1/topics?" + b"q" * LONG + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    err = _json_error(got, 414)
    assert err["code"] == "url_too_long" and str(MAX_HEADER_BYTES) in err["message"], err
    assert _metric(served.url, "dptopic_errors_total", "url_too_long") == 1


def test_headers_past_the_limit_get_a_json_431_whole(served):
    got = _send_all_then_read(served.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * LONG
                              + b"\r\n\r\n")
    assert _json_error(got, 431)["code"] == "headers_too_large"


def test_a_url_under_the_limit_is_served(served):
    got = _send_all_then_read(served.port, b"GET /healthz?" + b"q" * (MAX_HEADER_BYTES // 2)
                              + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert got.startswith(b"HTTP/1.1 200"), got[:200]


TOKEN = "A" * 32


def _raw(port: int, method: str, path: str, headers: list, body: bytes = b"") -> tuple[int, dict]:
    """A request whose headers may repeat (urllib folds them)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.putrequest(method, path)
    for k, v in headers:
        c.putheader(k, v)
    c.putheader("Content-Length", str(len(body)))
    c.endheaders(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, json.loads(data)


def _with_header(raw: bytes, edit) -> bytes:
    (H,) = struct.unpack("<I", raw[8:12])
    head = edit(raw[12:12 + H].decode())
    body = raw[:8] + struct.pack("<I", len(head.encode())) + head.encode() + raw[12 + H:-32]
    return body + hashlib.sha256(body).digest()


@pytest.fixture()
def served_2(tmp_path):
    words, texts = make_data(tmp_path, vocab_size=60, n_docs=30, n_prior=5)
    db = f"sqlite:///{tmp_path / 'f.db'}"
    with InProcessServer(_cfg(words, db, admin_token=TOKEN)) as srv:
        yield srv, words, texts, db


def test_a_lone_surrogate_in_an_echoed_value_or_a_json_body_is_a_4xx_not_a_500(served_2):
    srv, words, texts, db = served_2
    before = count_rows(db)
    bad = _with_header(_body(words, texts[:2]), lambda t: t.replace(json.loads(t)["vocabulary_sha256"], "\\ud800"))
    status, _, data = request("POST", srv.url + "/v1/reports", bad,
                              {"Content-Type": "application/octet-stream", "Idempotency-Key": "dup-sur-0001"})
    doc = json.loads(data)
    assert status == 422 and doc["error"]["code"] == "incompatible_reports", doc
    status, _, data = request("POST", srv.url + "/v1/admin/rotate", b'{"note": "\\ud800"}',
                              {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    doc = json.loads(data)
    assert status == 400 and doc["error"]["code"] == "bad_json" and "surrogate" in doc["error"]["message"], doc
    assert count_rows(db) == before


@pytest.mark.parametrize("name, values", [("Idempotency-Key", ["dup-key-AAAA", "dup-key-BBBB"]),
                                          ("Content-Type", ["application/octet-stream", "text/plain"]),
                                          ("Dptopic-Contributor", ["alice", "mallory"])])
def test_a_header_sent_twice_is_refused(served_2, name, values):
    srv, words, texts, db = served_2
    port = int(srv.url.rsplit(":", 1)[1])
    base = {"Content-Type": "application/octet-stream", "Idempotency-Key": "dup-key-CCCC"}
    headers = [(k, v) for k, v in base.items() if k != name] + [(name, v) for v in values]
    before = count_rows(db)
    status, doc = _raw(port, "POST", "/v1/reports", headers, _body(words, texts[:2]))
    assert status == 400 and f"the {name.lower()} header is sent 2 times" in doc["error"]["message"].lower(), doc
    assert count_rows(db) == before


def test_two_content_encoding_headers_are_one_list_of_codings(served_2):
    srv, words, texts, db = served_2
    port = int(srv.url.rsplit(":", 1)[1])
    headers = [("Content-Type", "application/octet-stream"), ("Idempotency-Key", "dup-enc-0001"),
               ("Content-Encoding", "identity"), ("Content-Encoding", "gzip")]
    status, doc = _raw(port, "POST", "/v1/reports", headers, _body(words, texts[:2]))
    assert status == 415 and doc["error"]["code"] == "unsupported_content_encoding", doc


def test_a_query_parameter_given_twice_is_refused(served_2):
    srv, *_ = served_2
    for query in ("words=abc&words=5", "words=5&words=abc", "words=5&words=5"):
        status, _, data = request("GET", srv.url + "/v1/topics?" + query)
        doc = json.loads(data)
        assert status == 400 and "words is given 2 times" in doc["error"]["message"], (query, doc)
    assert request("GET", srv.url + "/v1/topics?words=5")[0] in (200, 404)


def test_malformed_http_framing_gets_the_json_error(tmp_path):
    pytest.importorskip("uvicorn")
    from service_helpers import Server, make_data

    make_data(tmp_path)
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'h.db'}", "--train-interval", "0").start()
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    finally:
        srv.stop()
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert json.loads(body)["error"]["code"] == "bad_request"
