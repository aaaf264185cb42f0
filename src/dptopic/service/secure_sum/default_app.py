"""The HTTP app of a secure-sum round (:func:`create_secure_sum_app`: ``dptopic serve``'s secure-sum kind): one
route for each step of :mod:`.default`, long polling, the admin's close, the model once released."""
from __future__ import annotations

import asyncio
import hmac
import threading
import time

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..lifespan import frozen_lifespan
from .config import STATES, ApiError, SecureSumConfig
from .default import SecureRound
from .web import (
    ERROR_HANDLERS,
    FIRST_LOOK_S,
    LONG_POLL_S,
    LOOK_EVERY_S,
    _contributor,
    _Encoded,
    _in_names,
    _json,
    _phase,
    _respond,
    preload_release_code,
    process_usage,
    wait_timeout,
)


def _round(request: Request) -> SecureRound:
    return request.app.state.round


async def get_config(request: Request):
    r = _round(request)
    cfg = r.cfg
    return JSONResponse({"api_version": "v1", "report_kind": "secure-sum", "unit": "user",
                         "vocabulary": cfg.vocabulary.words, "vocab_size": len(cfg.vocabulary),
                         "n_topics": cfg.n_topics, "round_id": r.round_id, "secure_sum": cfg.plan.to_dict(),
                         "epsilon": cfg.plan.epsilon, "delta": cfg.plan.delta, "fed": None,
                         "directory": cfg.directory, "max_body_bytes": cfg.max_body_bytes})


def _reached(state: str, step: str) -> bool:
    return state == "failed" or STATES.index(state) >= STATES.index(step)


async def _await_view(request: Request, contributor: str | None = None) -> dict:
    """The round's view for ``?wait=STEP[&timeout=S][&include=roster,signatures]``: once the round has reached STEP
    (or failed), or after ``timeout`` seconds (at most :data:`LONG_POLL_S`) as it is; with ``include``, what
    ``contributor`` (the query's ``contributor``, or the one that posted) needs next: the closed roster, and at an
    unmasking the consistency signatures of its neighbours."""
    r = _round(request)
    q = request.query_params
    step = q.get("wait")
    include = set(filter(None, q.get("include", "").split(",")))
    if include - {"roster", "signatures"}:
        raise ApiError(400, "bad_include", "include takes roster and signatures, comma-separated.")
    who = _contributor(q.get("contributor", contributor)) if include else None
    if step is not None:
        timeout = wait_timeout(q, STATES)
        deadline = time.monotonic() + min(timeout, LONG_POLL_S)
        pause = FIRST_LOOK_S    # the state is looked at in memory; at most 4 times a second per waiting contributor
        loop, changed = asyncio.get_running_loop(), asyncio.Event()

        def wake():         # from the thread that moved the round on: one wake-up per waiter and change of step
            try:
                loop.call_soon_threadsafe(changed.set)
            except RuntimeError:        # the loop has closed (the server is stopping)
                pass
        r.listen(wake)
        try:
            while not _reached(r.current_state(), step) and time.monotonic() < deadline:
                try:
                    await asyncio.wait_for(changed.wait(), min(pause, max(0.0, deadline - time.monotonic())))
                except asyncio.TimeoutError:
                    pass
                changed.clear()
                pause = min(LOOK_EVERY_S, pause * 1.5)
        finally:
            r.unlisten(wake)
    view = await run_in_threadpool(r.encoded_view)
    if include:
        state = view["state"]
        if "roster" in include and state not in ("keys", "failed"):
            view["roster"] = _Encoded(await run_in_threadpool(r.roster_json))
        if "signatures" in include and state.startswith("unmask"):
            phase = int(state[-1])
            mine = set(r.graph().get(who, ()))
            view["signatures"] = {k: v for k, v in (await run_in_threadpool(r.signatures, phase)).items()
                                  if k in mine}
    return view


async def get_round(request: Request):
    """``GET /v1/secure/round``: the round's view. Long polling: ``?wait=STEP`` answers once the round has reached
    STEP (or failed), or after ``timeout`` seconds (at most :data:`LONG_POLL_S`) with the view as it is. With
    ``contributor=ID`` the view also carries what that contributor needs next, sparing it a request: the closed
    roster (``include=roster``), and at an unmasking the consistency signatures of its neighbours
    (``include=signatures``)."""
    return _respond(await _await_view(request))


async def _answer(request: Request, contributor: str, status: int, out: dict) -> Response:
    """A message's acknowledgement; with ``?wait=STEP`` (post-and-wait), once stored, it waits as ``GET
    /v1/secure/round?wait=STEP`` does and carries that view as ``view`` (with ``include``'s parts for the poster):
    one request sends a step's message and brings the next step's data."""
    if "wait" in request.query_params:
        out = {**out, "view": await _await_view(request, contributor)}
    return _respond(out, status)


async def _store_or_late(request: Request, phase: int, step: str, store, *args) -> tuple[int, dict]:
    """Store a consistency signature or an unmasking answer; a post-and-wait one that comes after its step closed
    (the others' sufficed: the round has moved on) is acknowledged as ``late`` (nothing stored) rather than refused,
    so that its view still comes back in the same request."""
    r = _round(request)
    try:
        return await run_in_threadpool(store, phase, *args)
    except ApiError as e:
        state = r.current_state()       # another server process may have moved the round on
        moved_on = state != "failed" and STATES.index(state) > STATES.index(f"{step}{phase}")
        if e.code != "round_closed" or "wait" not in request.query_params or not moved_on:
            raise
        return 200, {"replayed": False, "late": True}


async def get_roster(request: Request):
    return Response(await run_in_threadpool(_round(request).roster_json), media_type="application/json")


async def post_keys(request: Request):
    doc = await _json(request, 8192)
    who = _contributor(doc.get("contributor"))
    status, out = await run_in_threadpool(_round(request).post_keys, who, doc.get("keys"), doc.get("signature"))
    return await _answer(request, who, status, out)


async def post_shares(request: Request):
    doc = await _json(request, 4 * 1024 * 1024)
    who = _contributor(doc.get("contributor"))
    status, out = await run_in_threadpool(_round(request).post_shares, who, doc.get("shares"))
    return await _answer(request, who, status, out)


async def get_shares(request: Request):
    who = _contributor(request.query_params.get("contributor"))
    return JSONResponse(await run_in_threadpool(_round(request).shares_for, who))


async def post_upload(request: Request):
    r = _round(request)
    phase = _phase(request)
    who = _contributor(request.headers.get("dptopic-contributor"))
    body = await request.body()
    if len(body) > r.cfg.max_body_bytes:
        raise ApiError(413, "too_large", _in_names(request, "the upload is over {max_body_bytes=}.", "max_body_bytes",
                                                   r.cfg.max_body_bytes))
    status, out = await run_in_threadpool(r.post_upload, phase, who, body, request.headers.get("dptopic-signature"))
    return await _answer(request, who, status, out)


async def post_consistency(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4096)
    who = _contributor(doc.get("contributor"))
    status, out = await _store_or_late(request, phase, "consistency", _round(request).post_consistency, who,
                                       doc.get("signature"))
    return await _answer(request, who, status, out)


async def get_signatures(request: Request):
    phase = _phase(request)
    return JSONResponse(await run_in_threadpool(_round(request).signatures, phase))


async def post_unmask(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4 * 1024 * 1024)
    who = _contributor(doc.get("contributor"))
    status, out = await _store_or_late(request, phase, "unmask", _round(request).post_unmask, who,
                                       doc.get("answers"), doc.get("signature"))
    return await _answer(request, who, status, out)


async def admin_close(request: Request):
    r = _round(request)
    token = r.cfg.admin_token
    auth = request.headers.get("authorization", "")
    if token is None:
        raise ApiError(403, "admin_disabled", _in_names(
            request, "admin endpoints are disabled: start the server with an {admin_token}.", "admin_token",
            key="service.secure_sum.admin_disabled"))
    if not auth.startswith("Bearer ") or not hmac.compare_digest(auth[7:].strip().encode(), token.encode()):
        raise ApiError(403, "wrong_token", _in_names(
            request, "send 'Authorization: Bearer TOKEN' (the server's {admin_token}).", "admin_token",
            key="service.secure_sum.wrong_token"))
    return JSONResponse(await run_in_threadpool(r.close))


async def get_model(request: Request):
    return JSONResponse(_round(request).model_doc())


async def get_timings(request: Request):
    timings = await run_in_threadpool(_round(request).timings_view)
    return JSONResponse({**timings, "process": process_usage()})


def create_secure_sum_app(cfg: SecureSumConfig, setting_names=None, freeze_gc: bool = True,
                          round_class=None, preload: bool = True) -> Starlette:
    """The ASGI app of one secure-sum round (its database opened and checked at once). ``setting_names``: how
    whoever starts the server names its settings (``dptopic serve`` by its flags), for the answers and the round's
    failure reasons that name one (as :func:`dptopic.service.create_app`'s); by default the :class:`SecureSumConfig`
    fields and :func:`~dptopic.service.startup.secure_sum_settings` parameters. ``freeze_gc``: once the server has
    started, every object alive (imports, the round's directory and neighbour graph) is moved out of the cyclic
    collector's full scans (:func:`gc.freeze`, as :func:`dptopic.service.create_app` does). ``round_class``: the
    round's class (default :class:`SecureRound`; a cohort's, :mod:`dptopic.service.secure_sum.cohort_app`). ``preload``:
    the code that reads the unmasked sums is imported on a thread of its own once the server has started
    (:func:`preload_release_code`), not in the middle of the round."""
    rnd = (round_class or SecureRound)(cfg)
    rnd.setting_names = dict(setting_names or {})

    def started() -> None:
        if preload:
            threading.Thread(target=preload_release_code, name="secure-preload", daemon=True).start()
        if rnd.registration_deadline is not None:       # the roster closes at its deadline, whoever registers
            threading.Thread(target=rnd.watch_deadline, name="secure-deadline", daemon=True).start()

    lifespan = frozen_lifespan(freeze_gc=freeze_gc, started=started)

    routes = [Route("/v1/config", get_config, methods=["GET"]),
              Route("/v1/secure/round", get_round, methods=["GET"]),
              Route("/v1/secure/roster", get_roster, methods=["GET"]),
              Route("/v1/secure/keys", post_keys, methods=["POST"]),
              Route("/v1/secure/shares", post_shares, methods=["POST"]),
              Route("/v1/secure/shares", get_shares, methods=["GET"]),
              Route("/v1/secure/upload/{phase}", post_upload, methods=["POST"]),
              Route("/v1/secure/consistency/{phase}", post_consistency, methods=["POST"]),
              Route("/v1/secure/signatures/{phase}", get_signatures, methods=["GET"]),
              Route("/v1/secure/unmask/{phase}", post_unmask, methods=["POST"]),
              Route("/v1/secure/timings", get_timings, methods=["GET"]),
              Route("/v1/admin/secure/close", admin_close, methods=["POST"]),
              Route("/v1/model", get_model, methods=["GET"])]
    app = Starlette(routes=routes, exception_handlers=dict(ERROR_HANDLERS), lifespan=lifespan)
    app.state.round = rnd
    app.state.setting_names = rnd.setting_names
    return app
