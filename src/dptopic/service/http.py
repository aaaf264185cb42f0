"""uvicorn's HTTP/1.1 protocols with one change: a request so malformed that the server answers before the app
sees it (a bad Content-Length, a broken request line) gets the service's JSON error body, not plain text, and is
counted in ``/metrics`` as ``dptopic_errors_total{code="bad_request"}`` like the app's own 400s.

:func:`server_options` picks the fastest implementation installed: httptools' parser and uvloop's event loop (both in
the ``service`` extra), else h11 and asyncio.
"""
from __future__ import annotations

import json


def _error_body(msg: str) -> bytes:
    return json.dumps({"error": {"code": "bad_request",
                                 "message": " ".join(f"malformed HTTP request: {msg}".split())}}).encode()


def _count_bad_request(app) -> None:
    """Count a 400 the protocol answered in the metrics of the service behind ``app`` (uvicorn's wrappers, such as
    its proxy-headers middleware, hold the next app in ``.app``); nothing when there is none (another ASGI app)."""
    try:
        for _ in range(16):
            service = getattr(getattr(app, "state", None), "service", None)
            if service is not None:
                service.metrics.error("bad_request")
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
        def send_400_response(self, msg: str) -> None:
            _count_bad_request(self.app)
            body = _error_body(msg)
            content = [STATUS_LINE[400]]
            for name, value in self.server_state.default_headers:
                content.extend([name, b": ", value, b"\r\n"])
            content.extend([b"content-type: application/json\r\n",
                            b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                            b"connection: close\r\n", b"\r\n", body])
            self.transport.write(b"".join(content))
            self.transport.close()

    return JSONErrorHttpToolsProtocol


def server_options(fast: bool = True) -> dict:
    """``uvicorn.run`` keyword arguments: the HTTP protocol class (with JSON 400s) and the event loop."""
    opts = {"http": _h11_protocol(), "loop": "asyncio"}
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
