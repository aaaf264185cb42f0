"""uvicorn's HTTP/1.1 protocol with one change: a request so malformed that the server answers before the app
sees it (a bad Content-Length, a broken request line) gets the service's JSON error body, not plain text."""
from __future__ import annotations

import json

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class JSONErrorH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        body = json.dumps({"error": {"code": "bad_request",
                                     "message": " ".join(f"malformed HTTP request: {msg}".split())}}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body),
                      h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        self.transport.close()
