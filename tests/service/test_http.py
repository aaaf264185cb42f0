"""The service's HTTP layer answers a request too long to parse with a JSON error the client can read: a URL past the
limit gets 414 ``url_too_long``, headers past it 431 ``headers_too_large``, and neither ends in a connection reset."""
from __future__ import annotations

import hashlib
import http.client
import json
import select
import socket
import struct

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("starlette")
pytest.importorskip("sqlalchemy")

from dptopic.service.http import MAX_HEADER_BYTES  # noqa: E402
from service_helpers import (  # noqa: E402
    InProcessServer,
    ServedLikeServe,
    count_rows,
    make_data,
    metric,
    plain_report_body,
    send_raw,
    service_config,
)
from service_helpers import http as request  # noqa: E402

LONG = 200_000      # bytes: a 200 KB query string, or header


@pytest.fixture(params=[True, False], ids=["httptools", "h11"])
def served(tmp_path, request):
    if request.param:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with ServedLikeServe(service_config(words, f"sqlite:///{tmp_path / 'm.db'}"), request.param) as srv:
        yield srv


def _json_error(got: bytes, status: int) -> dict:
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 %d " % status), head[:200]
    assert b"content-type: application/json" in head.lower()
    return json.loads(body)["error"]


@pytest.mark.service
def test_a_url_past_the_limit_gets_a_json_414(served):
    got = send_raw(served.port, b"GET /v1/topics?" + b"q" * LONG + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    err = _json_error(got, 414)
    assert err["code"] == "url_too_long" and str(MAX_HEADER_BYTES) in err["message"], err
    assert metric(served.url, "dptopic_errors_total", "url_too_long") == 1


@pytest.mark.service
def test_headers_past_the_limit_get_a_json_431_whole(served):
    got = send_raw(served.port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * LONG
                              + b"\r\n\r\n")
    assert _json_error(got, 431)["code"] == "headers_too_large"


@pytest.mark.service
def test_a_url_under_the_limit_is_served(served):
    got = send_raw(served.port, b"GET /healthz?" + b"q" * (MAX_HEADER_BYTES // 2)
                              + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert got.startswith(b"HTTP/1.1 200"), got[:200]


# ---------------------------------------------------------------------------------------------------------------------
# The request line and headers are bounded (``dptopic.service.http.MAX_HEADER_BYTES``): httptools' parser keeps
# every header it is sent, so without the bound a client could grow the server's memory without end.

def _send(port: int, chunks, read_after=True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        try:
            for c in chunks:
                s.sendall(c)
        except (BrokenPipeError, ConnectionResetError):
            pass        # the server answered and closed while we were still sending
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
        except ConnectionResetError:
            pass
    return got


def _endless_headers(total: int):
    yield b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
    line = b"X-Pad: " + b"a" * 1000 + b"\r\n"
    for _ in range(total // len(line) + 1):
        yield line
    yield b"\r\n"


@pytest.fixture
def served_with_parser(tmp_path, request):
    if request.param:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with ServedLikeServe(service_config(words, f"sqlite:///{tmp_path / 'm.db'}"), request.param) as srv:
        yield srv, request.param


@pytest.mark.service
@pytest.mark.parametrize("served_with_parser", [True, False], ids=["httptools", "h11"], indirect=True)
def test_headers_past_the_limit_are_refused_and_the_app_is_not_called(served_with_parser):
    srv, fast = served_with_parser
    got = _send(srv.port, _endless_headers(4 * MAX_HEADER_BYTES))
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431"), head          # both protocols give the same answer
    err = json.loads(body)["error"]
    assert err["code"] == "headers_too_large" and str(MAX_HEADER_BYTES) in err["message"]
    assert metric(srv.url, "dptopic_errors_total", "headers_too_large") == 1
    assert b"HTTP/1.1 200" not in got      # /healthz was never answered


@pytest.mark.service
@pytest.mark.parametrize("served_with_parser", [True, False], ids=["httptools", "h11"], indirect=True)
def test_headers_under_the_limit_are_served(served_with_parser):
    srv, _ = served_with_parser
    got = _send(srv.port, [b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
                           b"X-Pad: " + b"a" * (MAX_HEADER_BYTES // 2) + b"\r\n\r\n"])
    assert got.startswith(b"HTTP/1.1 200"), got[:200]


@pytest.mark.service
def test_a_long_url_counts_towards_the_limit(tmp_path):
    pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with ServedLikeServe(service_config(words, f"sqlite:///{tmp_path / 'm.db'}"), True) as srv:
        got = _send(srv.port, [b"GET /healthz?" + b"q" * (MAX_HEADER_BYTES + 10) + b" HTTP/1.1\r\nHost: x\r\n\r\n"])
        assert got.startswith(b"HTTP/1.1 414"), got[:200]      # the URL alone passed it (tests/service/test_http.py)


# ------------------------------------------------------------------ the header deadline (slowloris)
class _Timed(ServedLikeServe):
    def __init__(self, cfg, fast, header_timeout):
        import uvicorn

        from dptopic.service.http import server_options
        super().__init__(cfg, fast)
        opts = {**server_options(fast, header_timeout=header_timeout), "loop": "asyncio"}
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_config=None,
                                                    log_level="warning", access_log=False, lifespan="on", **opts))


def _wait_answer(sock, limit: float):
    """(bytes the server sent before closing, seconds it took); None when still open after ``limit``."""
    import time
    t0 = time.monotonic()
    sock.settimeout(0.2)
    got = b""
    while time.monotonic() - t0 < limit:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            return got, time.monotonic() - t0
        if not chunk:
            return got, time.monotonic() - t0
        got += chunk
    return None


def _one_response(sock) -> bytes:
    """One whole response (head and Content-Length bytes of body) from a kept-alive connection."""
    def more() -> bytes:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection"
        return chunk
    got = b""
    while b"\r\n\r\n" not in got:
        got += more()
    head, _, body = got.partition(b"\r\n\r\n")
    length = int([ln.split(b":", 1)[1] for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += more()
    return head + b"\r\n\r\n" + body


@pytest.mark.service
@pytest.mark.parametrize("fast", [True, False], ids=["httptools", "h11"])
def test_slow_or_silent_connections_are_closed_at_the_header_deadline(tmp_path, fast):
    import time
    if fast:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with _Timed(service_config(words, f"sqlite:///{tmp_path / 'm.db'}"), fast, header_timeout=1.0) as srv:
        silent = socket.create_connection(("127.0.0.1", srv.port))
        slow = socket.create_connection(("127.0.0.1", srv.port))
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        # a slow drip keeps sending, a byte every 0.3 s: the deadline counts from the request's start, not per byte,
        # so the server answers (or closes) while the drip still sends
        t0 = time.monotonic()
        drip = socket.create_connection(("127.0.0.1", srv.port))
        drip.sendall(b"GET /healthz HTTP/1.1\r\n")
        closed = answered = None
        while time.monotonic() - t0 < 4:
            try:
                drip.sendall(b"X")
            except OSError:
                closed = time.monotonic() - t0
                break
            if select.select([drip], [], [], 0.3)[0]:       # the server's answer or its close is in: stop dripping
                try:
                    got = drip.recv(1, socket.MSG_PEEK)     # (left for _wait_answer below)
                except OSError:
                    got = b""
                if got:
                    answered = time.monotonic() - t0
                else:
                    closed = time.monotonic() - t0
                break
        assert closed is not None or answered is not None, "a drip of bytes kept the request past its deadline"
        got, took = _wait_answer(silent, 5)
        assert got == b"" and took < 3                      # nothing sent: closed without an answer
        got, took = _wait_answer(slow, 5)
        head, _, body = got.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408"), head
        assert json.loads(body)["error"]["code"] == "header_timeout"
        drip_answer = _wait_answer(drip, 5)
        assert closed is not None or (drip_answer is not None and drip_answer[0].startswith(b"HTTP/1.1 408"))
        assert metric(srv.url, "dptopic_errors_total", "header_timeout") == 2
        for s in (silent, slow, drip):
            s.close()
        # a request that sends its headers at once is served, and keeps its kept-alive connection past the deadline
        with socket.create_connection(("127.0.0.1", srv.port)) as ok:
            ok.settimeout(3)
            ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _one_response(ok).startswith(b"HTTP/1.1 200")
            time.sleep(1.5)         # the second request on the same connection, after the deadline has passed
            ok.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _one_response(ok).startswith(b"HTTP/1.1 200")


@pytest.mark.service
@pytest.mark.parametrize("fast", [True, False], ids=["httptools", "h11"])
def test_a_later_request_on_a_kept_alive_connection_gets_its_own_full_deadline(tmp_path, fast):
    """One timer per connection: when it fires during a later request's headers it re-arms for that request's own
    time, so the request is refused a whole deadline after its first byte, not when the connection's timer fires."""
    import time
    if fast:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with _Timed(service_config(words, f"sqlite:///{tmp_path / 'm.db'}"), fast, header_timeout=1.0) as srv:
        with socket.create_connection(("127.0.0.1", srv.port)) as s:
            s.settimeout(5)
            t0 = time.monotonic()
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _one_response(s).startswith(b"HTTP/1.1 200")
            time.sleep(0.7)
            begun = time.monotonic()
            s.sendall(b"GET /healthz HTTP/1.1\r\n")          # and its headers never finish
            got = _wait_answer(s, 5)
            refused = time.monotonic()
        assert got is not None and got[0].startswith(b"HTTP/1.1 408")
        assert refused - begun >= 0.95, (refused - begun, begun - t0)      # not at the connection timer's 1.0 s
        assert refused - begun < 3.0
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
    with InProcessServer(service_config(words, db, admin_token=TOKEN)) as srv:
        yield srv, words, texts, db


def test_a_lone_surrogate_in_an_echoed_value_or_a_json_body_is_a_4xx_not_a_500(served_2):
    srv, words, texts, db = served_2
    before = count_rows(db)
    bad = _with_header(plain_report_body(words, texts[:2]), lambda t: t.replace(json.loads(t)["vocabulary_sha256"], "\\ud800"))
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
    status, doc = _raw(port, "POST", "/v1/reports", headers, plain_report_body(words, texts[:2]))
    assert status == 400 and f"the {name.lower()} header is sent 2 times" in doc["error"]["message"].lower(), doc
    assert count_rows(db) == before


def test_two_content_encoding_headers_are_one_list_of_codings(served_2):
    srv, words, texts, db = served_2
    port = int(srv.url.rsplit(":", 1)[1])
    headers = [("Content-Type", "application/octet-stream"), ("Idempotency-Key", "dup-enc-0001"),
               ("Content-Encoding", "identity"), ("Content-Encoding", "gzip")]
    status, doc = _raw(port, "POST", "/v1/reports", headers, plain_report_body(words, texts[:2]))
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
    words, _ = make_data(tmp_path)
    # the app under uvicorn with the protocol class serve uses (httptools'), in this process: no serve process needed
    with ServedLikeServe(service_config(words, f"sqlite:///{tmp_path / 'h.db'}"), True) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head
    assert json.loads(body)["error"]["code"] == "bad_request"
