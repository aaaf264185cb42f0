"""uvicorn's HTTP/1.1 protocols with one change: a request so malformed that the server answers before the app
sees it (a bad Content-Length, a broken request line) gets the service's JSON error body, not plain text, and is
counted in ``/metrics`` as ``dptopic_errors_total{code="bad_request"}`` like the app's own 400s.

The request line and headers together are bounded by :data:`MAX_HEADER_BYTES`: httptools' parser has no limit of its
own, so a client could otherwise send headers without end and the server would keep them all in memory. Past the
limit the server answers 431 ``headers_too_large`` (JSON, connection closed, the app never called): httptools' protocol
counts the bytes itself, h11 bounds its buffer to the same size. A request line that passes the limit by itself (a
URL of 200 KB) gets 414 ``url_too_long`` instead.

An answer the protocol gives on its own closes the connection gracefully: the server stops sending, reads and drops
what the client is still sending for a short while (:data:`DRAIN_SECONDS`, at most :data:`DRAIN_BYTES`), then closes.
Closing at once with the rest of a long request unread makes the kernel reset the connection, and a reset can discard
the answer before the client has read it: the client saw "connection reset" instead of the JSON error.

They must also arrive in time (``header_timeout``, :data:`HEADER_TIMEOUT` by default, which ``dptopic
serve`` sets too): uvicorn arms no timer until a first response, so a client that connects and sends nothing, or
sends its headers a byte at a time, would otherwise hold a connection for ever (the "slowloris" attack). A connection
that sent nothing is closed; one whose headers are incomplete gets 408 ``header_timeout``. The deadline counts from
the connection (or from the first byte of a later request on a kept-alive one) to the end of the headers, whatever
the pace of the bytes in between; a body has its own timeout (``body_timeout``).

:func:`server_options` picks the fastest implementation installed: httptools' parser and uvloop's event loop (both in
the ``service`` extra), else h11 and asyncio.
"""
from __future__ import annotations

import json

MAX_HEADER_BYTES = 64 * 1024
"""The most bytes a request line and its headers may take (URL, names and values; separators not counted)."""
HEADER_TIMEOUT = 30.0
"""Seconds a request's line and headers may take to arrive, from the connection or the request's first byte."""
DRAIN_SECONDS = 2.0
"""After a protocol-level error answer: how long what the client still sends is read and dropped before closing."""
DRAIN_BYTES = 4 * 1024 * 1024
"""After a protocol-level error answer: the most bytes read and dropped before closing anyway."""


def _raw_error(status: int, code: str, msg: str, default_headers=()) -> bytes:
    reason = {400: b"Bad Request", 408: b"Request Timeout", 414: b"URI Too Long",
              431: b"Request Header Fields Too Large"}[status]
    body = _error_body(msg, code)
    content = [b"HTTP/1.1 %d %s\r\n" % (status, reason)]
    for name, value in default_headers:
        content.extend([name, b": ", value, b"\r\n"])
    content.extend([b"content-type: application/json\r\n",
                    b"content-length: " + str(len(body)).encode("ascii") + b"\r\n",
                    b"connection: close\r\n", b"\r\n", body])
    return b"".join(content)


class _HeaderDeadline:
    """The header deadline, shared by both protocols. One timer per connection, not per request: when it fires it
    checks the request whose headers are pending (if any) and re-arms for what is left of that request's time, so a
    kept-alive connection's fast requests cost no timer of their own."""

    header_timeout: float = HEADER_TIMEOUT
    _header_timer = None
    _pending_since = None      # loop time of the first byte of the request whose headers are not complete
    _requests_begun = 0

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._arm_header_deadline(self.header_timeout)

    def connection_lost(self, exc) -> None:
        self._disarm_header_deadline()
        super().connection_lost(exc)

    _draining = False
    _drained = 0

    def _send_error(self, status: int, code: str, msg: str) -> None:
        """Answer with the service's JSON error and close the connection (counted in ``/metrics`` under ``code``)."""
        _count_bad_request(self.app, code)
        self.transport.write(_raw_error(status, code, msg, self.server_state.default_headers))
        self._close_after_answer()

    def _close_after_answer(self) -> None:
        """Stop sending, drop what the client still sends for :data:`DRAIN_SECONDS` (at most :data:`DRAIN_BYTES`),
        then close: the client reads the answer instead of a reset (see the module's docstring)."""
        self._draining = True
        self._disarm_header_deadline()
        try:
            if self.transport.can_write_eof():
                self.transport.write_eof()
        except (OSError, RuntimeError, NotImplementedError):
            self.transport.close()
            return
        self.loop.call_later(DRAIN_SECONDS, self.transport.close)   # a no-op once the client has closed

    def data_received(self, data: bytes) -> None:
        if self._draining:       # answered already: the rest of the request is read and dropped
            self._drained += len(data)
            if self._drained > DRAIN_BYTES:
                self.transport.close()
            return
        super().data_received(data)

    def _send_headers_too_large(self) -> None:
        self._send_error(431, "headers_too_large", f"the request line and headers take more than {MAX_HEADER_BYTES}"
                         " bytes: send shorter headers (a report goes in the body).")

    def _send_url_too_long(self) -> None:
        self._send_error(414, "url_too_long", f"the URL takes more than {MAX_HEADER_BYTES} bytes: send a shorter one"
                         " (a report goes in the body).")

    def _arm_header_deadline(self, delay: float) -> None:
        if self._header_timer is None and self.header_timeout:
            self._header_timer = self.loop.call_later(delay, self._header_deadline_passed)

    def _disarm_header_deadline(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_begin(self) -> None:
        self._pending_since = self.loop.time()
        self._requests_begun += 1
        self._arm_header_deadline(self.header_timeout)

    def _headers_end(self) -> None:
        self._pending_since = None

    def _header_deadline_passed(self) -> None:
        self._header_timer = None
        if self.transport.is_closing():
            return
        if self._pending_since is not None:
            left = self._pending_since + self.header_timeout - self.loop.time()
            if left > 0:                 # a later request, begun after the timer was armed: its own time is left
                self._arm_header_deadline(left)
                return
            self._send_error(408, "header_timeout", f"the request line and headers did not arrive within"
                             f" {self.header_timeout:g} s: send a request's headers at once.")
        elif self._requests_begun == 0:  # connected and sent nothing: closed without an answer
            self.transport.close()
        # otherwise the connection is between requests: uvicorn's keep-alive timeout closes it when idle


def unrouted(method: str, path: str, status: int, headers=None, docs: str = "docs/service.md") -> tuple[str, str]:
    """``(code, message)`` of the router's own answers in the API's JSON error shape (every server app of the service
    answers them so): 404 ``not_found``, a route no endpoint has; 405 ``method_not_allowed``, a method the route does
    not take (``headers``: the answer's, with its ``Allow``); ``docs``: the page that lists the server's endpoints."""
    path = path[:200]
    if status == 404:
        return "not_found", f"no endpoint {path} on this server (its endpoints: {docs})."
    if status == 405:
        allow = {k.lower(): v for k, v in dict(headers or {}).items()}.get("allow", "")
        return "method_not_allowed", f"{path} does not take {method}" + (f": it takes {allow}." if allow else ".")
    return "http_error", f"{method} {path}: HTTP {status}."


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
    import h11  # h11: optional (comes with uvicorn, the [service] extra)
    from uvicorn.protocols.http.h11_impl import H11Protocol  # uvicorn: optional (the [service] extra)

    class JSONErrorH11Protocol(_HeaderDeadline, H11Protocol):
        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:        # the headers are in (perhaps all in this one call)
                self._headers_end()
                self._requests_begun = self._requests_begun or 1
            elif self.conn.trailing_data[0] and self._pending_since is None:   # a request's first bytes
                self._headers_begin()

        def send_400_response(self, msg: str) -> None:
            if self.conn.their_state is h11.ERROR and len(self.conn.trailing_data[0]) > MAX_HEADER_BYTES:
                # h11 gave up at its buffer limit (its own hint is 431): 414 when the request line alone passed it
                line_end = bytes(self.conn.trailing_data[0][:MAX_HEADER_BYTES + 2]).find(b"\r\n")
                if line_end < 0 or line_end > MAX_HEADER_BYTES:
                    self._send_url_too_long()
                else:
                    self._send_headers_too_large()
            else:
                self._send_error(400, "bad_request", msg)

    return JSONErrorH11Protocol


def _httptools_protocol():
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol  # uvicorn: optional (the [service] extra)

    class JSONErrorHttpToolsProtocol(_HeaderDeadline, HttpToolsProtocol):
        _header_bytes = 0
        _too_large = False
        _url_too_long = False

        def send_400_response(self, msg: str) -> None:
            self._send_error(400, "bad_request", msg)

        # the request line and headers, counted as the parser hands them over; past the limit nothing more is kept
        def on_message_begin(self) -> None:
            self._header_bytes = 0
            self._headers_begin()
            super().on_message_begin()

        def _count(self, n: int) -> bool:
            self._header_bytes += n
            if self._header_bytes > MAX_HEADER_BYTES:
                self._too_large = True
            return not self._too_large

        def on_url(self, url: bytes) -> None:
            if self._count(len(url)):
                super().on_url(url)
            else:
                self._url_too_long = True   # the request line alone passed the limit

        def on_header(self, name: bytes, value: bytes) -> None:
            if self._count(len(name) + len(value)):
                super().on_header(name, value)

        def on_headers_complete(self) -> None:
            self._headers_end()
            if not self._too_large:      # a request past the limit never reaches the app
                super().on_headers_complete()

        def on_body(self, body: bytes) -> None:
            if not self._too_large:
                super().on_body(body)

        def on_message_complete(self) -> None:
            if not self._too_large:
                super().on_message_complete()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)      # once answered, _HeaderDeadline drops the rest
            if self._too_large and not self.transport.is_closing() and not self._draining:
                self._send_url_too_long() if self._url_too_long else self._send_headers_too_large()

    return JSONErrorHttpToolsProtocol


def server_options(fast: bool = True, header_timeout: float = HEADER_TIMEOUT) -> dict:
    """``uvicorn.run`` keyword arguments: the HTTP protocol class (JSON 400s, bounded headers, the header deadline
    ``header_timeout`` seconds; 0 turns it off) and the event loop."""
    def timed(cls):
        return type(cls.__name__, (cls,), {"header_timeout": float(header_timeout)})

    opts = {"http": timed(_h11_protocol()), "loop": "asyncio", "h11_max_incomplete_event_size": MAX_HEADER_BYTES}
    if fast:
        try:
            import httptools  # noqa: F401

            opts["http"] = timed(_httptools_protocol())
        except ImportError:
            pass
        try:
            import uvloop  # noqa: F401

            opts["loop"] = "uvloop"
        except ImportError:
            pass
    return opts
