"""uvicorn's HTTP/1.1 protocols with one change: a request so malformed that the server answers before the app
sees it (a bad Content-Length, a broken request line) gets the service's JSON error body, not plain text, and is
counted in ``/metrics`` as ``dptopic_errors_total{code="bad_request"}`` like the app's own 400s.

The request line and headers together are bounded by :data:`MAX_HEADER_BYTES`: httptools' parser has no limit of its
own, so a client could otherwise send headers without end and the server would keep them all in memory. Past the
limit the httptools protocol answers 431 ``headers_too_large`` (JSON, connection closed, the app never called); h11
bounds the same bytes itself and answers 400.

:func:`server_options` picks the fastest implementation installed: httptools' parser and uvloop's event loop (both in
the ``service`` extra), else h11 and asyncio.
"""
from __future__ import annotations

import json

MAX_HEADER_BYTES = 64 * 1024
"""The most bytes a request line and its headers may take (URL, names and values; separators not counted)."""


def _error_body(msg: str, code: str = "bad_request") -> bytes:
    text = f"malformed HTTP request: {msg}" if code == "bad_request" else msg
    return json.dumps({"error": {"code": code, "message": " ".join(text.split())}}).encode()


def _count_bad_request(app, code: str = "bad_request") -> None:
    """Count a 400 the protocol answered in the metrics of the service behind ``app`` (uvicorn's wrappers, such as
    its proxy-headers middleware, hold the next app in ``.app``); nothing when there is none (another ASGI app)."""
    try:
        for _ in range(16):
            service = getattr(getattr(app, "state", None), "service", None)
            if service is not None:
                service.metrics.error(code)
                return
            app = getattr(app, "app", None)
            if app is None:
                return
    except Exception:  # noqa: BLE001 - counting must never stop the answer
        return


def _h11_protocol():
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class JSONErrorH11Protocol(H11Protocol):
        def send_400_response(self, msg: str) -> None:
            _count_bad_request(self.app)
            body = _error_body(msg)
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                       (b"connection", b"close")]
            for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body),
                          h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
            self.transport.close()

    return JSONErrorH11Protocol


def _httptools_protocol():
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

    class JSONErrorHttpToolsProtocol(HttpToolsProtocol):
        _header_bytes = 0
        _too_large = False

        def send_400_response(self, msg: str) -> None:
            self._send_error(400, "bad_request", msg)

        def _send_error(self, status: int, code: str, msg: str) -> None:
            _count_bad_request(self.app, code)
            body = _error_body(msg, code)
            content = [STATUS_LINE[status]]
            for name, value in self.server_state.default_headers:
                content.extend([name, b": ", value, b"\r\n"])
            content.extend([b"content-type: application/json\r\n",
                            b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                            b"connection: close\r\n", b"\r\n", body])
            self.transport.write(b"".join(content))
            self.transport.close()

        # the request line and headers, counted as the parser hands them over; past the limit nothing more is kept
        def on_message_begin(self) -> None:
            self._header_bytes = 0
            super().on_message_begin()

        def _count(self, n: int) -> bool:
            self._header_bytes += n
            if self._header_bytes > MAX_HEADER_BYTES:
                self._too_large = True
            return not self._too_large

        def on_url(self, url: bytes) -> None:
            if self._count(len(url)):
                super().on_url(url)

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._count(len(name) + len(value)):
                super().on_header(name, value)

        def on_headers_complete(self) -> None:
            if not self._too_large:      # a request past the limit never reaches the app
                super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._too_large:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self._too_large:
                super().on_message_complete()

        def data_received(self, data: bytes) -> None:
            if self._too_large:          # already answered; the connection is closing
                return
            super().data_received(data)
            if self._too_large and not self.transport.is_closing():
                self._send_error(431, "headers_too_large",
                                 f"the request line and headers take more than {MAX_HEADER_BYTES} bytes: send"
                                 " shorter headers (a report goes in the body).")

    return JSONErrorHttpToolsProtocol


def server_options(fast: bool = True) -> dict:
    """``uvicorn.run`` keyword arguments: the HTTP protocol class (with JSON 400s) and the event loop."""
    opts = {"http": _h11_protocol(), "loop": "asyncio", "h11_max_incomplete_event_size": MAX_HEADER_BYTES}
    if fast:
        try:
            import httptools  # noqa: F401

            opts["http"] = _httptools_protocol()
        except ImportError:
            pass
        try:
            import uvloop  # noqa: F401

            opts["loop"] = "uvloop"
        except ImportError:
            pass
    return opts
