"""The service's HTTP layer answers a request too long to parse with a JSON error the client can read: a URL past the
limit gets 414 ``url_too_long``, headers past it 431 ``headers_too_large``, and neither ends in a connection reset."""
from __future__ import annotations

import json

import pytest

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
