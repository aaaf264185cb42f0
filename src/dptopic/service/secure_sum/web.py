"""What every secure-sum round's HTTP app shares (the default round's, the committee mode's, a round in
cohorts'): reading a request (its contributor, JSON body and step), writing an answer (JSON encoded once where N
contributors ask for the same), long polling's timings, the error handlers, and the process's own usage."""
from __future__ import annotations

import json
import logging
import os
import resource

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..._io import load_json
from ...errors import MISSING, DPTopicError, ParameterText
from ...protocol.secure_sum.messages import ROUND_ID
from ..http import unrouted
from .config import ApiError

log = logging.getLogger("dptopic.service.secure_sum")


CONTRIBUTOR = ROUND_ID


def _contributor(value) -> str:
    if not isinstance(value, str) or not CONTRIBUTOR.fullmatch(value):
        raise ApiError(400, "bad_contributor", "the contributor id must be 1-64 of A-Z a-z 0-9 _ -.")
    return value


def parse_json(data: bytes, what: str = "the body") -> object:
    """A JSON message of a round's server (a body, an upload's header) read as input from outside: UTF-8, its
    nesting bounded before it is parsed (:func:`~dptopic._io.load_json`: 3,000 nested brackets cannot exhaust the
    stack); a 400 ``bad_json`` in one line otherwise, whichever route reads it."""
    try:
        return load_json(bytes(data).decode("utf-8"), what)
    except UnicodeDecodeError:
        raise ApiError(400, "bad_json", f"{what} is not UTF-8: send UTF-8 JSON.") from None
    except DPTopicError as e:       # nested too deeply, or a number too long to read
        raise ApiError(400, "bad_json", " ".join(str(e).split())) from None
    except ValueError:
        raise ApiError(400, "bad_json", f"{what} is not JSON.") from None


async def _json(request: Request, limit: int) -> dict:
    body = await request.body()
    if len(body) > limit:
        raise ApiError(413, "too_large", f"the body is over {limit} bytes.")
    doc = parse_json(body)
    if not isinstance(doc, dict):
        raise ApiError(400, "bad_json", "the body must be a JSON object.")
    return doc


def _phase(request: Request) -> int:
    p = request.path_params["phase"]
    if p not in ("0", "1"):
        raise ApiError(404, "no_such_step", "steps are 0 (presence) and 1 (co-occurrence).")
    return int(p)


class _Encoded(bytes):
    """JSON already encoded (the closed roster), put into a response as it is."""


def _encode(doc) -> bytes:
    """``doc`` as JSONResponse encodes it, with each :class:`_Encoded` value spliced in as it is (the value of a
    top-level key, or of a key of a dict nested at the top level)."""
    if isinstance(doc, _Encoded):
        return bytes(doc)
    if isinstance(doc, dict) and any(isinstance(v, (_Encoded, dict)) for v in doc.values()):
        parts = [json.dumps(k, ensure_ascii=False) + ":" for k in doc]
        return b"{" + b",".join(k.encode() + (_encode(v) if isinstance(v, (_Encoded, dict)) else _plain(v))
                                 for k, v in zip(parts, doc.values())) + b"}"
    return _plain(doc)


def _plain(doc) -> bytes:
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


def _respond(doc: dict, status: int = 200) -> Response:
    return Response(_encode(doc), status, media_type="application/json")


LONG_POLL_S = 20.0
"""The longest ``GET /v1/secure/round?wait=STEP`` holds its request (below a client's 30 s read timeout)."""


LOOK_EVERY_S = 0.25
"""The longest a long poll waits between two looks at the round's step (its pauses grow from 20 ms to this); a step
that this process moves on wakes it at once (:meth:`SecureRound.listen`)."""


FIRST_LOOK_S = 0.02
"""A long poll's first pause between two looks (each next one 1.5 times longer, up to :data:`LOOK_EVERY_S`)."""


def wait_timeout(q, states) -> float:
    """The ``timeout`` of a ``?wait=STEP[&timeout=S]`` query ``q`` (at most an hour; :data:`LONG_POLL_S` unless given),
    once STEP is checked to be one of the round's ``states``; a 400 in one line otherwise. Both round servers read
    their long polls with it."""
    if q.get("wait") not in states:
        raise ApiError(400, "no_such_step", f"wait names no step of the round ({', '.join(states)}).")
    try:
        timeout = float(q.get("timeout", LONG_POLL_S))
    except ValueError:
        timeout = -1.0
    if not 0 <= timeout <= 3600:
        raise ApiError(400, "bad_timeout", "timeout is a number of seconds, 0 or more.")
    return timeout


def process_usage() -> dict:
    """This server process's own CPU seconds and peak resident memory since it started."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return {"pid": os.getpid(), "cpu_s": u.ru_utime + u.ru_stime, "peak_rss_bytes": u.ru_maxrss * 1024}


def _in_names(request: Request, template: str, parameter: str, value=MISSING, **kw) -> str:
    """An answer that names a setting of the server (a :class:`SecureSumConfig` field or a setting of
    :func:`~dptopic.service.startup.secure_sum_settings`), in the names of whoever started it
    (:func:`create_secure_sum_app`'s ``setting_names``: ``dptopic serve``'s flags)."""
    return ParameterText(template, parameter, value, **kw).message(getattr(request.app.state, "setting_names", None))


async def _api_error(request: Request, exc: ApiError):
    return JSONResponse({"error": {"code": exc.code, "message": " ".join(exc.message.split())}}, exc.status)


async def _dptopic_error(request: Request, exc: DPTopicError):
    return JSONResponse({"error": {"code": "refused", "message": " ".join(str(exc).split())}}, 400)


async def _http_error(request: Request, exc: HTTPException):
    """Starlette's own answers (no such route, a method the route does not take) in the API's JSON error shape."""
    code, msg = unrouted(request.method, request.url.path, exc.status_code, exc.headers, "docs/secure_sum.md")
    return JSONResponse({"error": {"code": code, "message": msg}}, exc.status_code, headers=exc.headers)


async def _internal_error(request: Request, exc: Exception):
    log.exception("internal error")
    return JSONResponse({"error": {"code": "internal_error", "message": f"internal error ({type(exc).__name__}); see"
                                                                          " the server log."}}, 500)


ERROR_HANDLERS = {ApiError: _api_error, DPTopicError: _dptopic_error, HTTPException: _http_error,
                  Exception: _internal_error}
"""The exception handlers of every round's server (this one, the committee mode's, a round in cohorts'): each
refusal, an unknown route or method and an internal error alike answered in the API's JSON error shape
(``{"error": {"code", "message"}}``)."""


def preload_release_code() -> None:
    """Import the code that reads the unmasked sums (:mod:`dptopic.models.secure_sum`, which loads scikit-learn and
    SciPy: about 1.4 s of CPU here), so that the round does not wait for it between step 0's unmasking and step 1's
    opening, when every contributor is waiting (docs/research/secure_sum_cpu.md). Run on a thread of its own once the
    server has started: the server answers at once, as before."""
    from ...models import secure_sum  # noqa: F401 - start-up: it loads scikit-learn (here, off the start)
