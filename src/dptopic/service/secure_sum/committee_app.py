"""The HTTP app of a committee-mode round (:func:`create_committee_app`, what ``dptopic serve`` runs for one):
each message on a worker thread under the round's lock, the unmasking included, so that the event
loop answers views and long polls meanwhile (read :mod:`.committee` first)."""
from __future__ import annotations

import asyncio
import hmac
import logging
import time
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...corpus import Vocabulary
from ...errors import DPTopicError
from ...protocol.secure_sum.plan import SecureSumPlan
from .committee import CommitteeRound
from .committee_store import StoredCommitteeRound
from .config import ApiError
from .state import release_document
from .web import (
    ERROR_HANDLERS,
    FIRST_LOOK_S,
    LONG_POLL_S,
    LOOK_EVERY_S,
    _json,
    _phase,
    parse_json,
    process_usage,
    wait_timeout,
)

log = logging.getLogger("dptopic.service")


STATES = ("keys", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released", "failed")


MAX_META_BYTES = 4 * 1024 * 1024


def _reached(state: str, step: str) -> bool:
    return state == "failed" or STATES.index(state) >= STATES.index(step)


class _Served:
    """A :class:`CommitteeRound` served over HTTP: each message runs on a worker thread under the round's lock
    (:func:`_call`), views on the event loop, and each change of step wakes the held requests."""

    def __init__(self, rnd: CommitteeRound, admin_token: str | None, vocabulary, n_topics: int):
        self.rnd, self.admin_token = rnd, admin_token
        self.vocabulary, self.n_topics = vocabulary, n_topics
        self.changed = asyncio.Event()
        self.model = None
        self.config_extra: dict = {}     # what /v1/config adds (a cohort's round: the round in cohorts' own)

    def moved(self, before: str) -> None:
        """Wake every held request if the round left step ``before`` (each waits on the event of the step it saw: a
        new one per change, never cleared, so no wake-up is lost)."""
        if self.rnd.state != before:
            old, self.changed = self.changed, asyncio.Event()
            old.set()

    async def wait(self, step: str, timeout: float) -> None:
        """Until the round reaches ``step`` or ``timeout`` passes: woken by this process's changes of step, and where
        other server processes share the round, looking at the stored step between (pauses growing from
        :data:`~dptopic.service.secure_sum.web.FIRST_LOOK_S` to
        :data:`~dptopic.service.secure_sum.web.LOOK_EVERY_S`)."""
        deadline = time.monotonic() + min(timeout, LONG_POLL_S)
        pause = FIRST_LOOK_S if self.rnd.shared else LONG_POLL_S
        while not _reached(self.rnd.current_state(), step) and time.monotonic() < deadline:
            changed = self.changed          # the event of the step just seen (no await since the look)
            try:
                await asyncio.wait_for(changed.wait(), max(0.0, min(pause, deadline - time.monotonic())))
            except asyncio.TimeoutError:
                pass
            pause = min(LOOK_EVERY_S, pause * 1.5) if self.rnd.shared else pause


def _served(request) -> _Served:
    return request.app.state.served


async def _view(request, who: str | None = None) -> dict:
    """The round's view, once it reached ``?wait=STEP`` (or after ``timeout``, at most :data:`LONG_POLL_S`), with
    what ``include`` asks for the poster (or ``contributor``): ``roster`` (and the committee), ``committee`` (a
    member's uploads and blobs at its consistency and unmasking), ``signatures`` (the committee's)."""
    s = _served(request)
    q = request.query_params
    step = q.get("wait")
    if step is not None:
        await s.wait(step, wait_timeout(q, STATES))
    r = s.rnd
    include = set(filter(None, q.get("include", "").split(",")))
    if include - {"roster", "committee", "signatures"}:
        raise ApiError(400, "bad_include", "include takes roster, committee and signatures, comma-separated.")
    who = q.get("contributor", who)

    def made() -> dict:
        view = r.view()
        state = view["state"]
        if "roster" in include and state not in ("keys", "failed"):
            view["roster"] = r.roster()
        if "committee" in include and who in r.committee and state[:-1] in ("consistency", "unmask"):
            view["uploads"] = r.committee_view(int(state[-1]), who)["uploads"]
        if "signatures" in include and state.startswith("unmask"):
            view["signatures"] = r.signatures(int(state[-1]))
        return view
    # off the event loop where it reads the database: a shared round's view, a member's blobs of a stored round
    return await run_in_threadpool(made) if r.shared or "committee" in include else made()


async def _call(rnd: CommitteeRound, method, *args):
    """``method(*args)`` under the round's lock on a worker thread: the event loop answers views and long polls
    meanwhile (an unmasking takes seconds at 1,000 people)."""
    def locked():
        with rnd.lock:
            return method(*args)
    return await run_in_threadpool(locked)


def _respond(doc: dict, status: int = 200):
    return JSONResponse(doc, status)


async def _after(request, who: str, out: dict, before: str):
    s = _served(request)
    s.moved(before)
    if "wait" in request.query_params:
        out = {**out, "view": await _view(request, who)}
    return _respond(out)


def _config(s: _Served) -> dict:
    r = s.rnd
    return {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": s.vocabulary,
            "vocab_size": len(s.vocabulary), "n_topics": s.n_topics, "round_id": r.round_id,
            "secure_sum": r.plan.to_dict(), "epsilon": r.plan.epsilon, "delta": r.plan.delta, "fed": None,
            "directory": r.directory, "max_body_bytes": 64 * 1024 * 1024, **s.config_extra}


async def http_config(request):
    """``GET /v1/config``: the round's public settings; with ``?wait=upload0`` held until the roster is closed and
    answered with the view, the roster and the committee (``round``): the first request of a contributor whose keys
    were posted ahead."""
    s = _served(request)
    r = s.rnd
    doc = _config(s)
    if "wait" in request.query_params:
        doc["round"] = await _view(request)
        if doc["round"]["state"] not in ("keys", "failed"):
            doc["round"]["roster"] = await run_in_threadpool(r.roster) if r.shared else r.roster()
    return _respond(doc)


async def http_prekeys(request):
    """``POST /v1/secure/prekeys``: ``{"contributor", "bundles": [{"round_id", "keys", "signature"}]}`` (public keys
    only). Answered with the round's configuration (``config``, as ``GET /v1/config``), and with ``?wait=upload0``
    held until the roster closes: a contributor's first request of a round (it checks the plan before anything of
    its data is computed)."""
    doc = await _json(request, MAX_META_BYTES)
    s = _served(request)
    before = s.rnd.state
    out = await _call(s.rnd, s.rnd.post_prekeys, str(doc.get("contributor")), doc.get("bundles"))
    return await _after(request, str(doc.get("contributor")), {**out, "config": _config(s)}, before)


async def http_upload(request):
    """``POST /v1/secure/upload/{p}``: the body is the JSON ``{"header", "blobs"}`` (its length in the
    ``Dptopic-Meta-Length`` header) followed by the masked vector (raw little-endian, the plan's ring); signed
    (``Dptopic-Signature``) by ``Dptopic-Contributor``."""
    phase = _phase(request)
    who = request.headers.get("dptopic-contributor", "")
    data = await request.body()
    try:
        n = int(request.headers.get("dptopic-meta-length", ""))
    except ValueError:
        n = 0
    meta = parse_json(data[:n], "the upload's header") if 0 < n <= min(len(data), MAX_META_BYTES) else None
    if not isinstance(meta, dict):
        raise ApiError(400, "bad_upload", "an upload is its JSON header (Dptopic-Meta-Length bytes), then the vector.")
    r = _served(request).rnd
    before = r.state
    out = await _call(r, r.post_upload, phase, who, data[n:], meta.get("header"), meta.get("blobs"),
                      request.headers.get("dptopic-signature"))
    return await _after(request, who, out, before)


async def _late(request, store, *args) -> dict:
    try:
        return await _call(_served(request).rnd, store, *args)
    except ApiError as e:
        if e.code == "round_closed" and "wait" in request.query_params:
            return {"late": True}
        raise


async def http_consistency(request):
    """``POST /v1/secure/consistency/{p}`` (a committee member): ``{"contributor", "signature"}``."""
    phase = _phase(request)
    doc = await _json(request, MAX_META_BYTES)
    r = _served(request).rnd
    before, who = r.state, str(doc.get("contributor"))
    out = await _late(request, r.post_consistency, phase, who, doc.get("signature"))
    return await _after(request, who, out, before)


async def http_unmask(request):
    """``POST /v1/secure/unmask/{p}`` (a committee member): ``{"contributor", "answers", "signature"}``."""
    phase = _phase(request)
    doc = await _json(request, MAX_META_BYTES)
    r = _served(request).rnd
    before, who = r.state, str(doc.get("contributor"))
    out = await _late(request, r.post_unmask, phase, who, doc.get("answers"), doc.get("signature"))
    return await _after(request, who, out, before)


async def http_round(request):
    """``GET /v1/secure/round[?wait=STEP&contributor=ID&include=...]``: the view (a long poll with ``wait``)."""
    return _respond(await _view(request))


async def http_close(request):
    """``POST /v1/admin/secure/close`` (``Authorization: Bearer TOKEN``): the open step closes."""
    s = _served(request)
    auth = request.headers.get("authorization", "")
    if s.admin_token is None or not auth.startswith("Bearer ") or not hmac.compare_digest(
            auth[7:].strip().encode(), s.admin_token.encode()):
        raise ApiError(403, "wrong_token", "send 'Authorization: Bearer TOKEN' (the server's admin_token).")
    before = s.rnd.state
    out = await _call(s.rnd, s.rnd.close)
    s.moved(before)
    return _respond(out)


async def http_timings(request):
    """``GET /v1/secure/timings``: this server process's own CPU seconds and peak memory."""
    return _respond({"process": process_usage()})


async def http_model(request):
    """``GET /v1/model``: the released model."""
    s = _served(request)
    r = s.rnd
    if r.shared and s.model is None:
        await run_in_threadpool(r.fresh)        # another server process may have released it
    if r.state != "released":
        raise ApiError(404, "no_model", f"the round has released no model (it is at step {r.state!r}).")
    if s.model is None:
        s.model = release_document(r.plan, s.vocabulary, s.n_topics, r.sums[0], r.sums[1],
                                   (r.shares_of_sum[0], r.shares_of_sum[1]), r.round_id)
    return _respond(s.model)


def create_committee_app(plan: SecureSumPlan, directory: dict, vocabulary, n_topics: int = 3,
                         admin_token: str | None = None, database: str | None = None, rnd=None,
                         ledger: str | None = None, ledger_dataset: str | None = None,
                         registration_s: float | None = None):
    """The ASGI app of one committee-mode round: ``/v1/config`` (long-polled
    with ``?wait=upload0`` for the roster and committee), ``/v1/secure/prekeys``, ``/v1/secure/upload/{p}``,
    ``/v1/secure/consistency/{p}``, ``/v1/secure/unmask/{p}``, ``/v1/secure/round``, ``/v1/admin/secure/close``,
    ``/v1/model``; every post takes ``?wait=STEP`` (post-and-wait) and ``include``. ``database``: the round kept
    in that database (:class:`StoredCommitteeRound`: SQLite or PostgreSQL, resumed after a restart), None: in
    memory. ``rnd``: the round, made by the caller (a cohort's, :mod:`dptopic.service.secure_sum.committee_cohorts`),
    instead of one made from the other arguments. ``ledger``, ``ledger_dataset``: the dataset ledger the round is
    charged to (:meth:`CommitteeRound._charge`). ``registration_s``: the registration deadline, seconds after the round
    first opened (then the roster closes with those registered, :meth:`CommitteeRound.close_roster_if_due`), or None."""
    words = vocabulary.words if isinstance(vocabulary, Vocabulary) else list(vocabulary)
    if rnd is None:
        led = {"ledger": ledger, "ledger_dataset": ledger_dataset, "registration_s": registration_s}
        rnd = CommitteeRound(plan, directory, words, n_topics, **led) if database is None else \
            StoredCommitteeRound(plan, directory, words, n_topics, database, **led)

    routes = [Route("/v1/config", http_config, methods=["GET"]),
              Route("/v1/secure/round", http_round, methods=["GET"]),
              Route("/v1/secure/prekeys", http_prekeys, methods=["POST"]),
              Route("/v1/secure/upload/{phase}", http_upload, methods=["POST"]),
              Route("/v1/secure/consistency/{phase}", http_consistency, methods=["POST"]),
              Route("/v1/secure/unmask/{phase}", http_unmask, methods=["POST"]),
              Route("/v1/admin/secure/close", http_close, methods=["POST"]),
              Route("/v1/secure/timings", http_timings, methods=["GET"]),
              Route("/v1/model", http_model, methods=["GET"])]
    served = _Served(rnd, admin_token, words, n_topics)

    @asynccontextmanager
    async def lifespan(app):
        watcher = asyncio.create_task(_watch_deadline(served)) if rnd.registration_deadline is not None else None
        try:
            yield
        finally:
            if watcher is not None:
                watcher.cancel()

    app = Starlette(routes=routes, exception_handlers=dict(ERROR_HANDLERS), lifespan=lifespan)
    app.state.served = served
    return app


async def _watch_deadline(served: _Served) -> None:
    """Until the roster closes: at the registration deadline close it as it stands (on a worker thread, under the
    round's lock), and wake the held requests; looks at the round at least once a second."""
    rnd = served.rnd
    while rnd.current_state() == "keys":
        left = rnd.registration_deadline - time.time()
        if left <= 0:
            before = rnd.state
            try:
                await _call(rnd, rnd.close_roster_if_due)
            except (ApiError, DPTopicError) as e:       # a database that went away a moment: try again
                log.warning("closing the roster at its deadline: %s", e)
            served.moved(before)
        await asyncio.sleep(min(1.0, left) if left > 0 else 1.0)
