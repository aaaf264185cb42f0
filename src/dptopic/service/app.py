"""The ASGI application of ``dptopic serve`` (Starlette).

Every error answers ``{"error": {"code": ..., "message": one line}}`` with a 4xx/5xx status;
nothing reaches storage before it has been fully read (within ``max_body_bytes``), parsed and
checked. See ``docs/service.md`` for the endpoints.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import io
import json
import logging
import math
import re
import threading
import time

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .._io import load_json, pairs_noting_repeats
from ..errors import DPTopicError, ParameterError
from ..protocol import codec as protocol_codec
from . import codec, kinds
from .config import ServiceConfig
from .http import unrouted
from .ingest import GroupCommitWriter
from .lifespan import frozen_lifespan
from .metrics import Metrics
from .status import render_status, render_unavailable, used_prior
from .storage import Storage, StorageError, StoragePermissionError, StorageTimeout, Submission
from .trainer import Trainer

log = logging.getLogger("dptopic.service")
API_VERSION = "v1"
#: model arrays the server keeps for itself: OLP-LDA's word-presence rows of the prior documents (its overlap check)
SERVER_ONLY_ARRAYS = frozenset({"prior_presence"})
_KEY = re.compile(r"^[A-Za-z0-9_\-.:]{8,128}$")
_INLINE_DECODE_BYTES = 64 * 1024
_TRAIN_KEYS = frozenset({"force", "max_batches"})
_ROTATE_KEYS = frozenset({"note"})
MAX_TOPIC_WORDS = 100   # GET /v1/topics?words=N


def _one_line(message) -> str:
    """One line of valid UTF-8: whitespace runs folded, and a lone surrogate a client's JSON escape put into an echoed
    value (``"\\ud800"``) written as its escape, so that answering it can never fail."""
    return " ".join(str(message).split()).encode("utf-8", "backslashreplace").decode("utf-8")


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, _one_line(message)


def setting_line(request: Request, template: str, parameter: str, **fields) -> str:
    """An answer that names a setting of the server (a :class:`ServiceConfig` field, as a ``ParameterError``'s
    ``template`` writes it), in the names of whoever started the server (``create_app``'s ``setting_names``: the flags
    of ``dptopic serve``)."""
    names = getattr(request.app.state, "setting_names", None)
    return ParameterError(template, parameter, **fields).message(names)


def error_response(status: int, code: str, message: str, headers=None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": _one_line(message)}}, status, headers=headers)


class LogThrottle:
    """Logs the first of a run of like errors at once, then at most one per ``every`` seconds, saying how many were
    left out meanwhile: a database outage under load would otherwise write one ERROR line per refused request."""

    def __init__(self, logger: logging.Logger, every: float = 10.0, clock=time.monotonic):
        self.logger, self.every, self.clock = logger, float(every), clock
        self._lock = threading.Lock()
        self._state: dict[str, tuple[float, int]] = {}    # key -> (time of the last line logged, lines left out since)

    def log(self, key: str, level: int, msg: str, *args) -> bool:
        """Log ``msg % args`` unless a line of ``key`` was logged less than ``every`` seconds ago; True if logged."""
        now = self.clock()
        with self._lock:
            last, skipped = self._state.get(key, (None, 0))
            if last is not None and now - last < self.every:
                self._state[key] = (last, skipped + 1)
                return False
            self._state[key] = (now, 0)
        if skipped:
            msg += f" ({skipped} more like it in the last {now - last:.0f} s were not logged)"
        self.logger.log(level, msg, *args)
        return True


#: seconds for which /healthz reports the database's refusal of this server's writes after the last one
WRITE_REFUSED_HEALTH_S = 60.0


class Service:
    """What the endpoints share: configuration, storage, writer, trainer, metrics, caches."""

    def __init__(self, cfg: ServiceConfig, start_trainer: bool = True):
        self.cfg = cfg
        self.start_trainer = start_trainer
        self.metrics = Metrics(self)
        self.storage: Storage | None = None
        self.writer: GroupCommitWriter | None = None
        self.trainer: Trainer | None = None
        self._view_key = None
        self._view = None
        self._view_lock = threading.Lock()
        self._fed_model_key = self._fed_model_doc = None
        self.kind = kinds.get(cfg.report_kind)
        self.fingerprint = protocol_codec.vocabulary_fingerprint(cfg.vocabulary)
        self.rrp = codec.fed_config(cfg) if cfg.fed_epsilon_per_entry is not None else None
        self.started_at = time.time()
        self.storage_log = LogThrottle(log)
        self.write_refused_at: float | None = None    # time.monotonic() of the last permission error of a request
        self._body_timeouts: BodyTimeouts | None = None

    def body_timeouts(self) -> "BodyTimeouts":
        """The request bodies' idle timeouts on the running event loop (one timer for them all)."""
        loop = asyncio.get_running_loop()
        if self._body_timeouts is None or self._body_timeouts.loop is not loop:
            self._body_timeouts = BodyTimeouts(loop)
        return self._body_timeouts

    def settings(self) -> dict:
        """What stored reports are made with: a database serves one vocabulary, one f and one format; and FedLDA on
        or off, with one protocol (:meth:`fed_settings`)."""
        cfg = self.cfg
        return {"vocabulary_sha256": self.fingerprint, "vocab_size": cfg.vocab_size, "f": cfg.f,
                "fed_report_words": cfg.fed_report_words,
                "report_format": self.kind.report_format()["version"], "report_kind": cfg.report_kind,
                **self.kind.settings(cfg), **self.fed_settings()}

    def fed_settings(self) -> dict:
        """FedLDA's protocol, bound to the database like the vocabulary (``storage.settings._check_fed``): the per-entry
        epsilon, K, the failure rate (delta), the entries per update and the rule that randomizes them, which the open
        round's model, the stored updates and the epsilon the users spent depend on. ``fed_epsilon`` is ``None`` with
        FedLDA off. ``fed_min_updates`` is not bound: when a round closes changes neither."""
        rrp = self.rrp
        if rrp is None:
            return {"fed_epsilon": None}
        return {"fed_epsilon": float(rrp.epsilon_per_entry), "fed_topics": int(rrp.n_topics),
                "fed_failure_rate": float(rrp.failure_rate), "fed_gamma": float(rrp.gamma),
                "fed_pad_length": int(rrp.pad_length), "fed_sample_ratio": float(rrp.sample_ratio),
                "fed_variant": rrp.variant, "fed_exclusion": rrp.exclusion, "fed_replacement": rrp.replacement,
                "fed_subset_size": int(rrp.subset_size)}

    def preflight(self) -> None:
        """Open the database once before serving, so that a bad URL, a newer schema, settings that differ from
        the stored reports' or a database role (or file) that may not write fail at start-up in one line instead of
        inside the server."""
        storage = Storage(self.cfg.database, timeout=self.cfg.database_timeout)
        try:
            storage.check_writable()
            storage.bind_settings(self.settings(), fed_user_epsilon=self.cfg.fed_user_epsilon)
        finally:
            storage.close()

    def open(self) -> None:
        cfg = self.cfg
        self.storage = Storage(cfg.database, timeout=cfg.database_timeout)
        self.storage.bind_settings(self.settings(), fed_user_epsilon=cfg.fed_user_epsilon)
        self.storage.active_model()
        if self.rrp is not None:
            self.storage.fed_round(lambda: codec.fed_initial_broadcast(cfg.fed_vocabulary, self.rrp))
        self.writer = GroupCommitWriter(self.storage, max_reports=max(cfg.max_reports_per_request, 20_000)).start()
        self.trainer = Trainer(self.storage, cfg, on_batch=self.metrics.batch_done)
        if self.start_trainer:
            self.trainer.start()

    def close(self) -> None:
        if self.trainer is not None:
            self.trainer.stop()
        if self.writer is not None:
            self.writer.stop()
        if self.storage is not None:
            self.storage.close()

    # --------------------------------------------------------------- views
    def model_view(self, n_words: int = 10) -> dict:
        """Topics and counters of the active model, cached per (model id, version)."""
        row = self.storage.active_model()
        key = (row["id"], row["version"], n_words)
        with self._view_lock:
            if key == self._view_key:
                return self._view
        arrays = None
        if row["meta_json"]:    # model.json and arrays of one version (a step may have been committed meanwhile)
            row, arrays = self.storage.active_model_with_arrays()
            key = (row["id"], row["version"], n_words)
        view = {"model_id": int(row["id"]), "model_version": int(row["version"]),
                "reports_used": int(row["n_reports_used"]), "batches": int(row["n_batches"]),
                "last_report_id": int(row["last_report_id"]), "topics": [], "privacy": None}
        if row["meta_json"]:
            model = codec.model_from_blobs(row["meta_json"], arrays)
            view["topics"] = codec.topics(model, n_words)
            view["privacy"] = model.privacy_
        with self._view_lock:
            self._view_key, self._view = key, view
        return view

    def charge_fed_round(self, round_: int) -> None:
        """A FedLDA round just closed: charged to its clients on the dataset ledger, when the server keeps one
        (:func:`dptopic.service.ledger.charge_fed_round`; a failure is logged, the round stays released)."""
        if not getattr(self.cfg, "ledger", None):
            return
        from .ledger import charge_fed_round  # read when a ledger is named

        try:
            charge_fed_round(self.cfg, self.rrp, round_, self.storage.fed_round_participation(round_))
        except Exception as e:      # noqa: BLE001 - the round is released; the failure is the ledger's, logged
            log.error("ledger: FedLDA round %d could not be recorded: %s", round_, " ".join(str(e).split())[:300])

    def fed_model_doc(self) -> dict | None:
        """``GET /v1/fed/model``'s answer: the model the latest closed FedLDA round released, as model-folder files
        (:func:`codec.fed_model`, written by the model's own ``save``), cached per closed round; None before the first
        round closes."""
        released = self.storage.fed_released()
        if released is None:
            return None
        key = (released["round"], released["n_clients"])
        with self._view_lock:
            if self._fed_model_key == key:
                return self._fed_model_doc
        model = codec.fed_model(self.cfg, self.rrp, released)
        meta_json, arrays = codec.model_to_blobs(model)
        doc = {"api_version": API_VERSION, "round": int(released["round"]), "rounds_closed": int(released["rounds"]),
               "model_json": meta_json,
               "arrays": {name: base64.b64encode(data).decode("ascii") for name, data in arrays.items()}}
        with self._view_lock:
            self._fed_model_key, self._fed_model_doc = key, doc
        return doc

    # the trainer settings a stored model keeps over this start's flags (its own were fixed when it was created)
    _KEPT = ("n_topics", "n_iter", "prior_iter", "lam", "omega", "delta")

    def settings_kept_by_model(self) -> list[tuple[str, object, object]]:
        """``(parameter, the active model's value, this start's value)`` for each trainer setting this start gives
        otherwise than the model already trained holds (a restart with other n_topics, delta, prior, ...): the
        model keeps its own until an admin rotates it (``POST /v1/admin/rotate``); ``prior`` stands for whether a
        prior corpus was used. Empty when no model has been trained yet."""
        storage = (self.storage if self.storage is not None       # before open()
                   else Storage(self.cfg.database, timeout=self.cfg.database_timeout))
        try:
            row, arrays = storage.active_model_with_arrays()
            if not row["meta_json"]:
                return []
            model = codec.model_from_blobs(row["meta_json"], arrays)
        finally:
            if storage is not self.storage:
                storage.close()
        fresh = kinds.new_trainer(self.cfg).get_params()
        held = model.get_params()
        out = [(k, held[k], fresh[k]) for k in self._KEPT if k in held and k in fresh and held[k] != fresh[k]]
        used = used_prior(getattr(model, "privacy_", None))
        if used is not None and used != (getattr(self.cfg, "prior", None) is not None):
            out.append(("prior", used, not used))
        return out

    def contributor_privacy(self, n_reports: int) -> dict:
        """Guarantee for one contributor who sent ``n_reports`` reports: their events compose.

        Basic composition (pure DP, Dwork & Roth 2014, Thm 3.16): ``n·eps_doc`` for any change of
        the contributor's ``n`` documents, ``n·eps_word`` when each document differs in the
        presence of one word. Tight (PLD) composition can only be smaller; it is not computed here
        because at ``eps_doc`` in the thousands its loss grid would be enormous.
        """
        return self.kind.contributor_privacy(self.cfg, max(0, int(n_reports)))

    def config_doc(self) -> dict:
        cfg = self.cfg
        doc = {"api_version": API_VERSION,
               "report_kind": cfg.report_kind,
               "vocabulary": cfg.vocabulary.words,
               "vocab_size": cfg.vocab_size,
               "vocabulary_sha256": self.fingerprint,
               "f": cfg.f,
               "epsilon_word": cfg.epsilon_word,
               "epsilon_doc": self.kind.epsilon_doc(cfg),
               "report_format": self.kind.report_format(),
               "max_body_bytes": cfg.max_body_bytes,
               "max_reports_per_request": cfg.max_reports_per_request,
               "idempotency": "send a fresh Idempotency-Key header (8-128 of A-Z a-z 0-9 _ - . :) per upload and"
                              " reuse it, with the same body, on every retry",
               "contributor": "optional: a Dptopic-Contributor header, a pseudonym of"
                              f" {protocol_codec.PSEUDONYM_RULE}, the same on each of your uploads: the status page counts"
                              " contributors by it (an upload without one counts as a contributor of its own) and"
                              " states the epsilon of the one with the most reports",
               "fed": None}
        if self.rrp is not None:
            V = len(cfg.fed_vocabulary)
            doc["fed"] = {**protocol_codec.fed_config_dict(self.rrp), "report_words": V,
                          # subset_size 0 means "the error-optimal size": the size every client then uses
                          "words_per_report": self.rrp.report_size(V),
                          "vocabulary_fingerprint": protocol_codec.fed_fingerprint(cfg.fed_vocabulary),
                          "min_updates_per_round": cfg.fed_min_updates}
            if self.rrp.exclusion == "none":    # the floor and tail rules' settings, kept for the clients' config
                doc["fed"]["unused_by_this_rule"] = (["failure_rate", "gamma", "variant", "replacement"]
                                                     + (["local_iter"] if self.rrp.local_inference == "em" else []))
        return doc


# ----------------------------------------------------------------------------- helpers
def require_identity_encoding(request: Request) -> None:
    """Refuse a body sent with a Content-Encoding (gzip, br, ...): the server does not decode one, and storing the
    bytes as they came would store something other than what the client meant."""
    shown = _codings_other_than(request, "content-encoding", "identity")
    if shown:
        raise ApiError(415, "unsupported_content_encoding", f"the body is sent with Content-Encoding {shown}, which this"
                                                            " server does not decode: send it uncompressed (no"
                                                            " Content-Encoding header, or identity).")


def _codings_other_than(request: Request, header: str, allowed: str) -> str:
    """The codings ``header`` names besides ``allowed``, shown (at most 40 characters); several headers are one list
    of codings (RFC 9110). Empty when there are none."""
    values = header_values(request, header)
    if not values:
        return ""
    codings = [c.strip().lower() for c in ",".join(values).split(",") if c.strip()]
    return ", ".join(c for c in codings if c != allowed)[:40]


def require_plain_transfer(request: Request) -> None:
    """Refuse a body sent with a transfer coding other than ``chunked`` (``Transfer-Encoding: gzip, chunked``): the
    HTTP layer takes the chunks apart but decodes no other coding, so the app would read the coded bytes as the body
    (and a client that names a coding it did not apply would have its bytes stored as they came). The h11 parser
    refuses such a request itself (400); httptools passes it on, so the app refuses it here, also with 400."""
    shown = _codings_other_than(request, "transfer-encoding", "chunked")
    if shown:
        raise ApiError(400, "bad_request", f"the body is sent with Transfer-Encoding {shown}, which this server does"
                                           " not decode: send it as it is, with a Content-Length (or"
                                           " Transfer-Encoding: chunked alone).")


async def read_body(request: Request, limit: int) -> bytes:
    require_identity_encoding(request)
    require_plain_transfer(request)
    cl = single_header(request, "content-length")
    if cl is not None:
        try:
            n = int(cl)
        except ValueError:
            raise ApiError(400, "bad_request", "invalid Content-Length header.") from None
        if n > limit:
            raise ApiError(413, "body_too_large", f"the body has {n} bytes, more than the limit of {limit}: split the"
                                                  " upload into smaller requests.")
    chunks, n = [], 0
    svc = request.app.state.service
    idle = svc.cfg.body_timeout
    # an idle timeout, moved on at every chunk: a client that stops sending before its Content-Length (or its last
    # chunk) would otherwise hold the request, and the memory of what it sent, for as long as it likes
    timer = svc.body_timeouts().start(idle)
    receive = request.receive   # the ASGI messages read as Starlette's Request.stream reads them, without its generator
    try:
        while True:
            message = await receive()
            if message["type"] != "http.request":
                if message["type"] == "http.disconnect":
                    raise ApiError(400, "truncated_body", "the client disconnected before sending the whole body.")
                continue
            timer.touch()
            chunk = message.get("body", b"")
            n += len(chunk)
            if n > limit:
                raise ApiError(413, "body_too_large", f"the body exceeds the limit of {limit} bytes: split the"
                                                      " upload into smaller requests.")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
    except asyncio.CancelledError:
        if timer.expired():
            raise ApiError(408, "body_timeout", setting_line(request, "no byte of the body arrived for {idle:g} s:"
                                                             " send the whole body at once (the server's"
                                                             " {body_timeout}).", "body_timeout", idle=idle)) from None
        raise
    finally:
        timer.close()
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class BodyTimeouts:
    """The idle timeouts of the request bodies being read on one event loop, all on one timer: each read
    (:meth:`start`) cancels its task once ``idle`` seconds pass without a :meth:`_BodyRead.touch`, as
    ``asyncio.timeout`` moved on at every chunk would, without a timer armed and cancelled per request (every upload
    reads a body). The timer falls due at the earliest moment a read may have been idle too long, and is armed again
    at the next such moment while reads remain."""

    def __init__(self, loop):
        self.loop = loop
        self._reads: dict = {}
        self._handle = None
        self._at = math.inf

    def start(self, idle: float) -> "_BodyRead":
        """The timeout of the current task's body read (``close`` it when the read ends)."""
        read = _BodyRead(self, idle)
        self._reads[id(read)] = read
        due = read.last + idle
        if due < self._at:      # no timer, or one due after this read may time out
            if self._handle is not None:
                self._handle.cancel()
            self._at, self._handle = due, self.loop.call_at(due, self._due)
        return read

    def _due(self) -> None:
        now = self.loop.time()
        soonest = math.inf
        for key, read in list(self._reads.items()):
            due = read.last + read.idle
            if due <= now:
                del self._reads[key]
                read.fire()
            elif due < soonest:
                soonest = due
        self._at, self._handle = soonest, (self.loop.call_at(soonest, self._due) if soonest < math.inf else None)


class _BodyRead:
    """One body read's place in :class:`BodyTimeouts`."""

    __slots__ = ("_timeouts", "idle", "last", "_task", "_cancelling", "_fired")

    def __init__(self, timeouts: BodyTimeouts, idle: float):
        self._timeouts, self.idle = timeouts, idle
        self.last = timeouts.loop.time()
        self._task = asyncio.current_task()
        self._cancelling = self._task.cancelling()
        self._fired = False

    def touch(self) -> None:
        self.last = self._timeouts.loop.time()

    def fire(self) -> None:
        self._fired = True
        self._task.cancel()

    def expired(self) -> bool:
        """On a ``CancelledError``: whether it is this timeout's own (then the cancellation is withdrawn), not one of
        the server's (a shutdown), as ``asyncio.timeout`` tells them apart."""
        return self._fired and self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        self._timeouts._reads.pop(id(self), None)


async def read_json(request: Request, limit: int) -> dict:
    """A JSON body, read by the service's one rule for text (docs/service.md): UTF-8 (RFC 8259, section 8.1), a byte
    order mark ignored, no other encoding, whether declared (a Content-Type charset) or detected (UTF-16, UTF-32,
    Latin-1 bytes); an object, each key once; its strings Unicode text (no lone surrogate) without NUL, which no
    database column of the service can hold (PostgreSQL's text refuses it). Every refusal is a 400 ``bad_json``."""
    charset = _declared_charset(request)
    if charset is not None and charset not in ("utf-8", "utf8"):
        raise ApiError(400, "bad_json", f"the body is declared as charset {charset[:40]} (Content-Type): send the JSON as"
                                        " UTF-8 (charset=utf-8, or no charset).")
    body = await read_body(request, limit)
    if not body.strip():
        return {}
    text = _utf8_text(body)
    repeated: set = set()
    try:
        doc = load_json(text, "the body", object_pairs_hook=pairs_noting_repeats(repeated))
    except ValueError as e:
        raise ApiError(400, "bad_json", f"the body is not valid JSON ({' '.join(str(e).split())}).") from None
    if not isinstance(doc, dict):
        raise ApiError(400, "bad_json", "the JSON body must be an object.")
    if repeated:    # which value counts is a parser's choice (Python's keeps the last, others the first): not ours
        shown = ", ".join(repr(k[:20]) for k in sorted(repeated)[:5])
        raise ApiError(400, "bad_json", f"the JSON body gives the key(s) {shown} more than once: give each once.")
    fault = _text_fault(doc)
    if fault == "surrogate":    # JSON may escape a lone surrogate ("\ud800"), which is no Unicode text
        raise ApiError(400, "bad_json", "the JSON body holds a lone surrogate escape (such as \\ud800), which is not"
                                        " Unicode text: send valid UTF-8 strings.")
    if fault is not None:
        raise ApiError(400, "bad_json", f"the JSON body holds a NUL character (\\u0000) in {fault}, which the service"
                                        " stores in no text: remove it.")
    return doc


def _declared_charset(request: Request) -> str | None:
    """The ``charset`` parameter of the request's Content-Type, lower case, or None."""
    for param in single_header(request, "content-type", "").split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip('"').lower()
    return None


def _utf8_text(body: bytes) -> str:
    """``body`` as UTF-8 text (a UTF-8 byte order mark dropped); a 400 naming the encoding it is in otherwise."""
    found = json.detect_encoding(body)      # UTF-16 and UTF-32 by their BOM or their NUL bytes, else UTF-8
    if found not in ("utf-8", "utf-8-sig"):
        raise ApiError(400, "bad_json", f"the body is {found.upper().replace('-BE', '').replace('-LE', '')} text: send"
                                        " the JSON as UTF-8.")
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ApiError(400, "bad_json", f"the body is not UTF-8 (byte 0x{body[e.start]:02x} at offset {e.start}; Latin-1"
                                        " or another 8-bit encoding?): send the JSON as UTF-8.") from None


def _text_fault(doc, where: str = "the body"):
    """``"surrogate"`` when a string of ``doc`` (a key or a value, at any depth) holds a lone surrogate, else the key
    under which one holds a NUL (``'note'``), else None."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        here = repr(k[:20]) if isinstance(k, str) else where
        for text in (k, v):
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    return "surrogate"
        if isinstance(v, str) and "\0" in v or isinstance(k, str) and "\0" in k:
            return here
        inner = _text_fault(v, here)
        if inner is not None:
            return inner
    return None


_UPLOAD_HEADERS = frozenset(("content-type", "content-length", "content-encoding", "transfer-encoding", "idempotency-key",
                             "dptopic-contributor"))


def header_values(request: Request, name: str) -> list[str]:
    """Every value of the request header ``name`` (lower case), in order. The headers an upload reads (six of them,
    some twice) are gathered in one pass over the request's headers, kept with the request; the others are looked up
    as Starlette does."""
    if name not in _UPLOAD_HEADERS:
        return request.headers.getlist(name)
    found = request.scope.get("dptopic.headers")
    if found is None:
        found = {}
        for key, value in request.scope["headers"]:     # names in lower case (ASGI), bytes decoded as Starlette does
            key = key.decode("latin-1")
            if key in _UPLOAD_HEADERS:
                found.setdefault(key, []).append(value.decode("latin-1"))
        request.scope["dptopic.headers"] = found
    return found.get(name, [])


def single_header(request: Request, name: str, default=None):
    """The one value of a request header; 400 when it is sent more than once (two Idempotency-Keys or two pseudonyms
    would be read as whichever came first, and a proxy that reorders headers would change what is stored)."""
    values = header_values(request, name)
    if len(values) > 1:
        raise ApiError(400, "bad_request", f"the {name} header is sent {len(values)} times: send it once.")
    return values[0] if values else default


def idempotency_key(request: Request) -> str:
    key = single_header(request, "idempotency-key")
    if key is None:
        raise ApiError(400, "missing_idempotency_key", "send an Idempotency-Key header (a fresh random string per"
                                                       " upload, reused on retries).")
    if not _KEY.fullmatch(key):
        raise ApiError(400, "bad_idempotency_key", "the Idempotency-Key must be 8-128 characters of A-Z a-z 0-9 _ - . :")
    return key


def require_octet_stream(request: Request) -> None:
    ctype = single_header(request, "content-type", "").split(";")[0].strip().lower()
    if ctype != "application/octet-stream":
        raise ApiError(415, "unsupported_media_type", f"send the body as application/octet-stream, not {ctype or 'nothing'}.")


def refuse_unknown_keys(doc: dict, allowed: frozenset, described: str | None) -> None:
    """400 for a JSON body with keys the endpoint does not read (a misspelt option must not be ignored silently);
    ``described``: the allowed keys in words, ``None`` for an endpoint that takes none."""
    unknown = sorted(set(doc) - allowed)
    if unknown:
        shown = ", ".join(repr(k[:20]) for k in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        raise ApiError(400, "bad_request", f"unknown key(s) {shown}: " + (f"the allowed keys are {described}." if described
                                                                         else "this endpoint takes no keys; send an"
                                                                              " empty body or {}."))


def require_admin(request: Request) -> None:
    svc: Service = request.app.state.service
    if svc.cfg.admin_token is None:
        raise ApiError(403, "admin_disabled", setting_line(request, "admin endpoints are disabled: the server was"
                                                           " started without {admin_token}; start it with one.",
                                                           "admin_token"))
    auth = single_header(request, "authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise ApiError(401, "missing_token", setting_line(request, "send 'Authorization: Bearer TOKEN' (the token of"
                                                          " the server's {admin_token}).", "admin_token"))
    if not svc.cfg.check_token(token.strip()):
        raise ApiError(403, "wrong_token", "the bearer token is wrong.")


# ----------------------------------------------------------------------------- endpoints
async def get_config(request: Request):
    return JSONResponse(request.app.state.service.config_doc())


async def store_upload(request: Request) -> tuple[int, dict]:
    """``POST /v1/reports``: read and check the upload, queue it for the writer and wait for its commit; the answer's
    status and document (an :class:`ApiError` or a storage error for a refusal)."""
    svc: Service = request.app.state.service
    require_octet_stream(request)
    key = idempotency_key(request)
    contributor = single_header(request, "dptopic-contributor")
    if contributor is not None and not protocol_codec.PSEUDONYM.fullmatch(contributor):
        raise ApiError(400, "bad_contributor", f"the Dptopic-Contributor pseudonym must be {protocol_codec.PSEUDONYM_RULE}")
    with svc.writer.receiving():    # the writer waits a little for an upload on its way (service/ingest.py)
        body = await read_body(request, svc.cfg.max_body_bytes)
        try:
            if len(body) <= _INLINE_DECODE_BYTES:  # small uploads: parsing costs less than a hop to the thread pool
                rs = svc.kind.decode(body, svc.cfg, svc.fingerprint)
            else:
                rs = await run_in_threadpool(svc.kind.decode, body, svc.cfg, svc.fingerprint)
        except codec.MalformedReports as e:
            raise ApiError(400, "malformed_reports", str(e)) from None
        except codec.IncompatibleReports as e:
            raise ApiError(422, "incompatible_reports", str(e)) from None
        if rs.n_reports > svc.cfg.max_reports_per_request:
            raise ApiError(413, "too_many_reports", f"{rs.n_reports} reports in one upload, more than the limit of"
                                                    f" {svc.cfg.max_reports_per_request}: split it.")
        sub = Submission(key, hashlib.sha256(body).hexdigest(), contributor, codec.report_rows(rs),
                         unique_body=getattr(rs, "upload_nonce", None) is not None)
    outcome, ack = await svc.writer.submit_async(sub)
    if outcome == "conflict":
        raise ApiError(409, "idempotency_key_reused", f"the Idempotency-Key {key!r} was already used for a different"
                                                      " body: use a fresh key for new reports.")
    if outcome == "duplicate":
        raise ApiError(409, "duplicate_body", duplicate_body_message(ack))
    svc.metrics.upload(outcome, len(sub.rows))
    if outcome == "stored":
        svc.write_refused_at = None     # the database took a write again
    return (201 if outcome == "stored" else 200), {**ack, "replayed": outcome == "replayed"}


# Starlette's JSONResponse renders with these settings; the upload's answer is written with the same
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
_JSON_TYPE = (b"content-type", b"application/json")
_REPLAYED = (b"idempotent-replayed", b"true")


class UploadEndpoint:
    """``POST /v1/reports`` as a plain ASGI app: the request read from the scope, the answer sent as two ASGI messages.
    Every upload takes this path, and Starlette's middleware, router and response objects were a fifth of the event
    loop's work per single-report upload (docs/research/service_throughput.md); :class:`ServiceApp` calls it before
    them. A refusal is answered by the app's exception handlers, as on every other route."""

    async def __call__(self, scope, receive, send) -> None:
        request = Request(scope, receive)
        try:
            status, doc = await store_upload(request)
        except Exception as exc:  # noqa: BLE001 - answered as Starlette's handlers answer it on the other routes
            response = await _handle(request, exc)
            await response(scope, receive, send)
            return
        body = _JSON.encode(doc).encode("utf-8")
        headers = [(b"content-length", b"%d" % len(body)), _JSON_TYPE]
        if doc["replayed"]:
            headers.append(_REPLAYED)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class ServiceApp(Starlette):
    """The service's Starlette app, with the upload (``POST /v1/reports``, the one request every contributor sends)
    answered before Starlette's middleware and router: :class:`UploadEndpoint`, the endpoint of the same route."""

    upload = UploadEndpoint()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"] == "/v1/reports" and scope["method"] == "POST" \
                and not scope.get("root_path"):
            scope["app"] = self
            await self.upload(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)


def duplicate_body_message(info: dict) -> str:
    """The refusal of a body already stored under another Idempotency-Key: when, and how many reports, but neither
    that upload's key nor its pseudonym (whoever holds the bytes, not only their uploader, gets this answer)."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(info["stored_at"]))
    return (f"these {info['reports']} reports were already stored (an upload of the same bytes at {when}, under"
            " another Idempotency-Key): nothing was stored. A retry must reuse its Idempotency-Key (it is then"
            " answered as a replay); storing the same randomized reports twice would count them twice.")


async def get_topics(request: Request):
    svc: Service = request.app.state.service
    given = request.query_params.getlist("words")
    if len(given) > 1:      # as a header sent twice: which one was meant is not for the server to guess
        raise ApiError(400, "bad_request", f"words is given {len(given)} times: give it once.")
    raw = given[0] if given else "10"
    # ASCII digits only: int() would also take " 5", "1_0" and other scripts' digits
    if not re.fullmatch(r"[+-]?[0-9]+", raw):
        raise ApiError(400, "bad_request", f"words must be an integer from 1 to {MAX_TOPIC_WORDS}, not"
                                           f" {raw[:20]!r}{'...' if len(raw) > 20 else ''}.")
    n = int(raw) if len(raw.lstrip("+-0")) <= 12 else None    # more digits: out of range whatever they are
    if n is None or not 1 <= n <= MAX_TOPIC_WORDS:
        raise ApiError(400, "bad_request", f"words={raw[:20]}{'...' if len(raw) > 20 else ''} is out of range: give"
                                           f" a number of words per topic from 1 to {MAX_TOPIC_WORDS}.")
    view = await run_in_threadpool(svc.model_view, n)
    counts = await run_in_threadpool(svc.storage.counts)
    most = await run_in_threadpool(svc.storage.max_reports_per_contributor)
    # pending = what the active model has not consumed yet (as /metrics counts it): reports after its cursor; after a
    # rotation the new model starts at the old one's cursor, so stored - used would count the retired model's reports
    pending = await run_in_threadpool(svc.storage.count_reports, view["last_report_id"])
    doc = {**view, "reports_stored": counts["reports_stored"],
           "reports_pending": int(pending),
           "per_contributor": {"max_reports_from_one_contributor": most,
                               "privacy_of_that_contributor": svc.contributor_privacy(most) if most else None,
                               "note": "contributors are counted by the pseudonym their client sends, and each"
                                       " upload without one counts as a contributor of its own; one person using"
                                       " several pseudonyms is counted several times"}}
    return JSONResponse(doc)


async def get_model(request: Request):
    """The active model as the files of a model folder (``model.json`` and base64 ``.npy``), for ``dptopic pull``:
    the released topics, as public as ``/v1/topics``."""
    svc: Service = request.app.state.service
    row, arrays = await run_in_threadpool(svc.storage.active_model_with_arrays)     # one snapshot of both
    if not row["meta_json"]:
        raise ApiError(404, "no_model", f"no model has been trained yet{' since the last rotation' if row['id'] > 1 else ''}:"
                                        f" the next mini-batch of {svc.cfg.batch_size} reports trains one (an admin can"
                                        " train on fewer with POST /v1/admin/train).")
    meta_json, arrays = public_model(row["meta_json"], arrays)
    return JSONResponse({"api_version": API_VERSION, "model_id": int(row["id"]), "model_version": int(row["version"]),
                         "model_json": meta_json,
                         "arrays": {name: base64.b64encode(data).decode("ascii") for name, data in arrays.items()}})


def public_model(meta_json: str, arrays: dict[str, bytes]) -> tuple[str, dict[str, bytes]]:
    """The model folder ``/v1/model`` publishes: without what the server keeps for its overlap check on the prior
    documents (not every consented corpus is public). The prior documents' word-presence rows
    (:data:`SERVER_ONLY_ARRAYS`) are dropped with their names in ``arrays`` and their SHA-256 in ``array_sha256`` (an
    unsalted digest of the prior, against which a guessed prior corpus could be tested); ``stream_state``'s overlap
    threshold and rate, computed from the prior documents, are blanked (NaN: a pulled model has no prior rows to
    check against anyway) and its digest recomputed, so that the folder loads and verifies as saved."""
    import numpy as np  # numpy: kept off this module's import (a light start)

    held = set(arrays) & SERVER_ONLY_ARRAYS
    state = arrays.get("stream_state")
    if not held and state is None:
        return meta_json, arrays
    meta = json.loads(meta_json)
    arrays = {k: v for k, v in arrays.items() if k not in SERVER_ONLY_ARRAYS}
    meta["arrays"] = [a for a in meta.get("arrays", []) if a not in SERVER_ONLY_ARRAYS]
    digests = meta.get("array_sha256")
    if isinstance(digests, dict):
        digests = {k: v for k, v in digests.items() if k not in SERVER_ONLY_ARRAYS}
    if state is not None:
        values = np.load(io.BytesIO(state), allow_pickle=False)
        if values.ndim == 1 and values.shape[0] >= 4 and np.isfinite(values[2:4]).any():
            values = values.copy()
            values[2:4] = np.nan    # [prior size, f, overlap threshold, overlap rate] (OLPLDA._extra_arrays)
            buf = io.BytesIO()
            np.save(buf, values, allow_pickle=False)
            arrays["stream_state"] = buf.getvalue()
            if isinstance(digests, dict) and "stream_state" in digests:
                digests["stream_state"] = hashlib.sha256(arrays["stream_state"]).hexdigest()
    if isinstance(digests, dict):
        meta["array_sha256"] = digests
    return json.dumps(meta), arrays


async def get_fed_round(request: Request):
    svc: Service = request.app.state.service
    if svc.rrp is None:
        raise _fed_disabled(request)
    rnd, msg = await run_in_threadpool(svc.storage.fed_round)
    return Response(msg, media_type="application/octet-stream", headers={"Dptopic-Round": str(rnd)})


FED_DISABLED = "FedLDA rounds are disabled on this server (start it with {fed_epsilon_per_entry})."
"""The answer of a FedLDA endpoint on a server without FedLDA (:func:`setting_line`'s template)."""


def _fed_disabled(request: Request) -> ApiError:
    return ApiError(404, "fed_disabled", setting_line(request, FED_DISABLED, "fed_epsilon_per_entry"))


async def get_fed_model(request: Request):
    """The FedLDA model the latest closed round released, as the files of a model folder (the wire shape of
    ``/v1/model``, plus ``round``), for a client that pulls it: built from that round's broadcast, the public settings
    and the server's own counts only (:func:`codec.fed_model`). 404 ``fed_disabled`` with FedLDA off, 404
    ``no_fed_model`` before the first round closes."""
    svc: Service = request.app.state.service
    if svc.rrp is None:
        raise _fed_disabled(request)
    doc = await run_in_threadpool(svc.fed_model_doc)
    if doc is None:
        rnd, _ = await run_in_threadpool(svc.storage.fed_round)
        when = (setting_line(request, "once {n} updates arrived ({fed_min_updates}), or ", "fed_min_updates",
                             n=svc.cfg.fed_min_updates) + " " if svc.cfg.fed_min_updates else "")
        raise ApiError(404, "no_fed_model", f"no FedLDA round has closed yet (round {rnd if rnd is not None else 0} is"
                                            f" open): a model is released when a round closes, {when}when an admin"
                                            " closes it (POST /v1/admin/fed/close-round).")
    return JSONResponse(doc)


async def post_fed_update(request: Request):
    svc: Service = request.app.state.service
    if svc.rrp is None:
        raise _fed_disabled(request)
    require_octet_stream(request)
    key = idempotency_key(request)
    body = await read_body(request, svc.cfg.max_body_bytes)
    sha = hashlib.sha256(body).hexdigest()
    # a retry (same key) is answered from what was stored before anything else: its round may have closed since
    known = await run_in_threadpool(svc.storage.fed_replay, key, sha)
    if known is not None and known[0] == "conflict":
        # another body under a used key: a body the server would refuse anyway gets that refusal first, as on
        # /v1/reports (a stale round is no reason to refuse it here: the key's conflict is answered)
        await _checked_fed_update(svc, body, stale_refused=False)
    if known is not None:
        return _fed_ack(svc, key, *known)
    try:
        rnd, client = await _checked_fed_update(svc, body, stale_refused=True)
    except ApiError as e:
        if e.code != "stale_round":
            raise
        # a retry racing its original: the original may have been stored (and closed the round) since the lookup
        # above; it is then answered as a replay, as it would be a moment later
        known = await run_in_threadpool(svc.storage.fed_replay, key, sha)
        if known is None:
            raise
        return _fed_ack(svc, key, *known)

    def aggregate(round_, bodies, broadcast):
        return codec.fed_aggregate(svc.cfg.fed_vocabulary, svc.rrp, round_, bodies, broadcast=broadcast)

    outcome, info = await run_in_threadpool(svc.storage.fed_store_update, rnd, client, key, sha, body,
                                            svc.cfg.fed_min_updates, aggregate)
    if outcome == "stale":
        raise ApiError(409, "stale_round", f"update refused: round {rnd} closed meanwhile; fetch /v1/fed/round.")
    if outcome == "duplicate":
        raise ApiError(409, "duplicate_update", f"client {client!r} already sent its update for round {rnd}.")
    if outcome == "stored" and info.get("round_closed"):
        await run_in_threadpool(svc.charge_fed_round, rnd)      # on the dataset ledger (service/ledger.py)
    return _fed_ack(svc, key, outcome, info)


async def _checked_fed_update(svc, body: bytes, stale_refused: bool):
    """``(open round, client id)`` of a FedLDA update checked against the open round, or its refusal as an
    :class:`ApiError` (400 malformed, 422 incompatible, 409 stale unless ``stale_refused`` is False)."""
    rnd, _ = await run_in_threadpool(svc.storage.fed_round)
    try:
        client, _ = await run_in_threadpool(codec.fed_check_update, body, svc.cfg.fed_vocabulary, svc.rrp, rnd)
    except codec.StaleMessage as e:
        if stale_refused:
            raise ApiError(409, "stale_round", str(e)) from None
        return rnd, None
    except codec.MalformedReports as e:
        raise ApiError(400, "malformed_update", str(e)) from None
    except codec.IncompatibleReports as e:
        raise ApiError(422, "incompatible_update", str(e)) from None
    return rnd, client


def _fed_ack(svc, key: str, outcome: str, info: dict):
    if outcome == "conflict":
        raise ApiError(409, "idempotency_key_reused", f"the Idempotency-Key {key!r} was already used for a different"
                                                      " body: use a fresh key.")
    svc.metrics.fed_update(outcome)
    if outcome == "stored":
        svc.write_refused_at = None     # the database took a write again
    return JSONResponse({**info, "replayed": outcome == "replayed"}, 201 if outcome == "stored" else 200)


async def healthz(request: Request):
    svc: Service = request.app.state.service
    if svc.storage is None:
        return error_response(503, "starting", "the server is starting.")
    try:
        svc.storage.check_file()    # a removed SQLite file still answers reads through the handles open on it
        version = await run_in_threadpool(svc.storage.schema_version)
    except StorageError as e:   # unauthenticated: the database's host, port and driver message stay in the log
        svc.storage_log.log("healthz", logging.ERROR, "healthz: %s", e)
        return error_response(503, "storage_unavailable", "database unavailable.")
    refused = svc.write_refused_at
    if refused is not None and time.monotonic() - refused < WRITE_REFUSED_HEALTH_S:
        return error_response(500, "storage_misconfigured", "the database refuses this server's writes; see the"
                                                            " server log.")
    return JSONResponse({"status": "ok", "schema_version": version, "database": svc.storage.dialect})


async def metrics(request: Request):
    svc: Service = request.app.state.service
    body, ctype = await run_in_threadpool(svc.metrics.render)
    return Response(body, media_type=ctype)


async def status_page(request: Request):
    svc: Service = request.app.state.service
    if svc.storage is None:
        return HTMLResponse(render_unavailable("the server is starting."), 503, headers={"Retry-After": "1"})
    try:
        html = await run_in_threadpool(render_status, svc)
    except StorageError as e:   # a person reads this page: an HTML answer, the database's detail only in the log
        svc.metrics.error("storage_unavailable")
        svc.storage_log.log("unavailable", logging.ERROR, "status page: %s", e)
        return HTMLResponse(render_unavailable("the server cannot read its database; it is probably restarting or"
                                               " unreachable."), 503, headers={"Retry-After": "1"})
    return HTMLResponse(html)


async def admin_train(request: Request):
    require_admin(request)
    svc: Service = request.app.state.service
    doc = await read_json(request, 64 * 1024)
    refuse_unknown_keys(doc, _TRAIN_KEYS, "'force' (bool, default true) and 'max_batches' (int in [1, 10000],"
                                          " default 100)")
    force = doc.get("force", True)
    max_batches = doc.get("max_batches", 100)
    if not isinstance(force, bool):
        raise ApiError(400, "bad_request", f"'force' must be true or false, not {json.dumps(force)[:40]}.")
    if not isinstance(max_batches, int) or isinstance(max_batches, bool) or not 1 <= max_batches <= 10_000:
        raise ApiError(400, "bad_request", f"'max_batches' must be an integer in [1, 10000], not"
                                           f" {json.dumps(max_batches)[:40]}.")
    done = await run_in_threadpool(svc.trainer.drain, force, max_batches)
    return JSONResponse({"batches": done})


async def admin_rotate(request: Request):
    require_admin(request)
    svc: Service = request.app.state.service
    doc = await read_json(request, 64 * 1024)
    refuse_unknown_keys(doc, _ROTATE_KEYS, "'note' (a string of at most 500 characters, default \"rotated by admin\")")
    note = doc.get("note", "rotated by admin")
    if not isinstance(note, str) or len(note) > 500:
        raise ApiError(400, "bad_request", "note must be a string of at most 500 characters.")
    return JSONResponse(await run_in_threadpool(svc.trainer.rotate, note))


async def admin_close_round(request: Request):
    require_admin(request)
    svc: Service = request.app.state.service
    if svc.rrp is None:
        raise _fed_disabled(request)
    refuse_unknown_keys(await read_json(request, 64 * 1024), frozenset(), None)

    def aggregate(round_, bodies, broadcast):
        return codec.fed_aggregate(svc.cfg.fed_vocabulary, svc.rrp, round_, bodies, broadcast=broadcast)

    try:
        info = await run_in_threadpool(svc.storage.fed_close_round, aggregate)
    except StorageError as e:
        raise ApiError(409, "round_not_closable", str(e)) from None
    await run_in_threadpool(svc.charge_fed_round, info["closed_round"])    # on the dataset ledger (service/ledger.py)
    return JSONResponse(info)


async def admin_models(request: Request):
    require_admin(request)
    svc: Service = request.app.state.service
    models = await run_in_threadpool(svc.storage.list_models)
    batches = await run_in_threadpool(svc.storage.batches)
    return JSONResponse({"models": models, "batches": batches})


# ----------------------------------------------------------------------------- errors
async def _api_error(request: Request, exc: ApiError):
    request.app.state.service.metrics.error(exc.code)
    return error_response(exc.status, exc.code, exc.message)


async def _http_error(request: Request, exc: HTTPException):
    code, msg = unrouted(request.method, request.url.path, exc.status_code, exc.headers)
    request.app.state.service.metrics.error(code)
    return error_response(exc.status_code, code, msg, headers=exc.headers)


async def _storage_error(request: Request, exc: StorageError):
    svc: Service = request.app.state.service
    if isinstance(exc, StoragePermissionError):
        # a permanent misconfiguration (the role may not write, a read-only file): a retry would fail the same way,
        # so no 503 and no Retry-After; the operator learns what to grant from the log
        svc.write_refused_at = time.monotonic()
        svc.metrics.error("storage_misconfigured")
        svc.storage_log.log("permission", logging.ERROR, "storage: the database refuses this server's writes (%s):"
                            " grant the server's database role INSERT, UPDATE and DELETE on the service's tables"
                            " (and USAGE on their sequences), or make the database file writable; dptopic serve"
                            " checks this at start-up", exc)
        return error_response(500, "storage_misconfigured", "the server's database refuses to store this (a"
                                                            " permission error on the server): retrying will not help"
                                                            " until its operator fixes it.")
    svc.metrics.error("storage_unavailable")
    svc.storage_log.log("unavailable", logging.ERROR, "storage: %s", exc)
    if isinstance(exc, StorageTimeout):     # nothing was stored (a retry under the same key is safe either way)
        return error_response(503, "storage_unavailable", f"the database did not answer within"
                                                          f" {svc.cfg.database_timeout:g} s; retry later.",
                              headers={"Retry-After": "1"})
    return error_response(503, "storage_unavailable", "the database is unavailable; retry later.",
                          headers={"Retry-After": "1"})


async def _dptopic_error(request: Request, exc: DPTopicError):
    request.app.state.service.metrics.error("invalid_request")
    return error_response(422, "invalid_request", str(exc))


async def _internal_error(request: Request, exc: Exception):
    request.app.state.service.metrics.error("internal_error")
    log.exception("internal error")
    return error_response(500, "internal_error", f"internal error ({type(exc).__name__}); see the server log.")


_HANDLERS = {ApiError: _api_error, HTTPException: _http_error, StorageError: _storage_error,
             DPTopicError: _dptopic_error, Exception: _internal_error}


async def _handle(request: Request, exc: Exception):
    """The answer of the app's exception handlers to ``exc`` (the handler of its nearest class, as Starlette's)."""
    for cls in type(exc).__mro__:
        if cls in _HANDLERS:
            return await _HANDLERS[cls](request, exc)
    raise exc


def create_app(cfg: ServiceConfig, start_trainer: bool = True, freeze_gc: bool = True,
               setting_names: dict | None = None) -> Starlette:
    """The ASGI app; storage is opened on startup (lifespan) and closed on shutdown.

    ``freeze_gc``: after start-up, move every object alive then into the garbage collector's permanent generation
    (:func:`gc.freeze`), so that full collections under load scan only the objects of requests in flight.

    ``setting_names``: how whoever starts the server names its settings (a command line by its flags), for
    the answers that tell a client which setting of the server to change (:func:`setting_line`); by default the
    fields of :class:`ServiceConfig`.
    """
    service = Service(cfg, start_trainer=start_trainer)
    lifespan = frozen_lifespan(service.open, service.close, freeze_gc=freeze_gc, in_thread=True)

    routes = [
        Route("/v1/reports", ServiceApp.upload, methods=["POST"]),    # first: the router tries the routes in order
        Route("/", status_page, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/v1/config", get_config, methods=["GET"]),
        Route("/v1/topics", get_topics, methods=["GET"]),
        Route("/v1/model", get_model, methods=["GET"]),
        Route("/v1/fed/round", get_fed_round, methods=["GET"]),
        Route("/v1/fed/updates", post_fed_update, methods=["POST"]),
        Route("/v1/fed/model", get_fed_model, methods=["GET"]),
        Route("/v1/admin/train", admin_train, methods=["POST"]),
        Route("/v1/admin/rotate", admin_rotate, methods=["POST"]),
        Route("/v1/admin/fed/close-round", admin_close_round, methods=["POST"]),
        Route("/v1/admin/models", admin_models, methods=["GET"]),
    ]
    app = ServiceApp(routes=routes, exception_handlers=dict(_HANDLERS), lifespan=lifespan)
    app.state.service = service
    app.state.setting_names = dict(setting_names or {})
    return app
