"""The request line and headers are bounded (``dptopic.service.http.MAX_HEADER_BYTES``): httptools' parser keeps
every header it is sent, so without the bound a client could grow the server's memory without end."""
import json
import socket

import pytest

from dptopic.service.http import MAX_HEADER_BYTES
from test_walk48_submit import _ServedLikeServe, _cfg, _metric, make_data


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
def served(tmp_path, request):
    if request.param:
        pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with _ServedLikeServe(_cfg(words, f"sqlite:///{tmp_path / 'm.db'}"), request.param) as srv:
        yield srv, request.param


@pytest.mark.parametrize("served", [True, False], ids=["httptools", "h11"], indirect=True)
def test_headers_past_the_limit_are_refused_and_the_app_is_not_called(served):
    srv, fast = served
    got = _send(srv.port, _endless_headers(4 * MAX_HEADER_BYTES))
    head, _, body = got.partition(b"\r\n\r\n")
    if fast:
        assert head.startswith(b"HTTP/1.1 431"), head
        err = json.loads(body)["error"]
        assert err["code"] == "headers_too_large" and str(MAX_HEADER_BYTES) in err["message"]
        assert _metric(srv.url, "dptopic_errors_total", "headers_too_large") == 1
    else:
        assert head.startswith(b"HTTP/1.1 400"), head
        assert json.loads(body)["error"]["code"] == "bad_request"
    assert b"HTTP/1.1 200" not in got      # /healthz was never answered


@pytest.mark.parametrize("served", [True, False], ids=["httptools", "h11"], indirect=True)
def test_headers_under_the_limit_are_served(served):
    srv, _ = served
    got = _send(srv.port, [b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n",
                           b"X-Pad: " + b"a" * (MAX_HEADER_BYTES // 2) + b"\r\n\r\n"])
    assert got.startswith(b"HTTP/1.1 200"), got[:200]


def test_a_long_url_counts_towards_the_limit(tmp_path):
    pytest.importorskip("httptools")
    words, _ = make_data(tmp_path, vocab_size=60, n_docs=5, n_prior=5)
    with _ServedLikeServe(_cfg(words, f"sqlite:///{tmp_path / 'm.db'}"), True) as srv:
        got = _send(srv.port, [b"GET /healthz?" + b"q" * (MAX_HEADER_BYTES + 10) + b" HTTP/1.1\r\nHost: x\r\n\r\n"])
        assert got.startswith(b"HTTP/1.1 431"), got[:200]
