"""``dptopic serve --report-kind secure-sum``: one round of secure aggregation of per-person statistics.

The server stores and forwards; the protocol is :mod:`dptopic.protocol.secure_sum` (read its note first). Steps,
each a state of the round (``GET /v1/secure/round``):

``keys``      contributors post their public keys (``POST /v1/secure/keys``); the roster closes at
              ``--min-contributors`` keys.
``shares``    each posts its neighbours' encrypted shares (``POST /v1/secure/shares``) and fetches those addressed to
              it (``GET /v1/secure/shares``); closes when every roster member has, or by the admin.
``upload0``   the masked first vector (presence, V + 1 entries; ``POST /v1/secure/upload/0``, raw little-endian
              uint32); closes when every member has uploaded, or by the admin (``POST /v1/admin/secure/close``).
``unmask0``   the survivors answer with shares (``POST /v1/secure/unmask/0``); once every needed seed has its
              threshold of shares the server unmasks the sum, chooses the kept words and opens
``upload1``   the co-occurrence vector over the kept words (upper triangle), then ``unmask1``, then
``released``  the model (``GET /v1/model``, for ``dptopic pull``). Or ``failed``, with the reason: nothing released.

Every request is refused in one line when it does not fit the state; every upload is stored durably once per
contributor and phase (a retry of the same bytes is acknowledged as a replay, different bytes are refused).
Fewer than ``n - F`` survivors at any step fail the round: the noise was calibrated for at least that many shares.
"""
from __future__ import annotations

import base64
import hashlib
import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field

import numpy as np
from sqlalchemy import Column, Float, Integer, LargeBinary, MetaData, String, Table, Text, func, select
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from pathlib import Path
import hmac
import os
import tempfile

from ..errors import DPTopicError
from ..protocol import secure_sum as ss
from .storage import Storage
from .._io import load_bundle
from ..accounting.skellam import rounded_norms
from ..corpus import Vocabulary

log = logging.getLogger("dptopic.service.secure_sum")
CONTRIBUTOR = re.compile(r"[A-Za-z0-9_.-]{1,64}")
UPLOAD_PHASES = 2

meta = MetaData()
t_state = Table("secure_round", meta, Column("key", String(64), primary_key=True), Column("value", Text))
t_keys = Table("secure_keys", meta, Column("contributor", String(64), primary_key=True),
               Column("c", String(64), nullable=False, unique=True), Column("s", Text, nullable=False),
               Column("at", Float, nullable=False))
t_shares = Table("secure_shares", meta, Column("sender", String(64), primary_key=True),
                 Column("body", Text, nullable=False), Column("sha", String(64), nullable=False))
t_share_to = Table("secure_share_to", meta, Column("receiver", String(64), primary_key=True),
                   Column("sender", String(64), primary_key=True), Column("ct", Text, nullable=False))
t_uploads = Table("secure_uploads", meta, Column("phase", Integer, primary_key=True),
                  Column("contributor", String(64), primary_key=True), Column("sha", String(64), nullable=False),
                  Column("data", LargeBinary, nullable=False), Column("at", Float, nullable=False))
t_unmask = Table("secure_unmask", meta, Column("phase", Integer, primary_key=True),
                 Column("contributor", String(64), primary_key=True), Column("body", Text, nullable=False),
                 Column("sha", String(64), nullable=False))


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class SecureSumConfig:
    """What ``dptopic serve --report-kind secure-sum`` is started with."""

    vocabulary: object
    plan: ss.SecureSumPlan
    n_topics: int = 20
    database: str = "sqlite:///dptopic-secure-sum.db"
    admin_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 16 * 1024 * 1024

    def __post_init__(self):
        if not isinstance(self.vocabulary, Vocabulary):
            self.vocabulary = Vocabulary(list(self.vocabulary))
        if self.plan.vocab_size != len(self.vocabulary):
            raise DPTopicError("the plan's vocabulary size differs from --vocabulary's.")
        if not 2 <= self.n_topics <= len(self.vocabulary):
            raise DPTopicError(f"--topics {self.n_topics} must lie between 2 and the vocabulary's size"
                               f" ({len(self.vocabulary)}).")
        need = 4 * max(self.plan.dims) + 64
        if self.max_body_bytes < need:
            raise DPTopicError(f"--max-body-bytes {self.max_body_bytes} is below the largest secure-sum upload here"
                               f" ({need} bytes): raise it.")


class SecureRound:
    """The round's state, durable in the database; one lock serialises its changes."""

    def __init__(self, cfg: SecureSumConfig):
        self.cfg, self.plan = cfg, cfg.plan
        self.storage = Storage(cfg.database)
        meta.create_all(self.storage.engine)
        self.lock = threading.RLock()
        self.timings: dict = {}
        with self.storage.engine.begin() as conn:
            rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
            if "settings" in rows and json.loads(rows["settings"]) != self._settings():
                raise DPTopicError(f"--database {cfg.database} holds a secure-sum round with other settings: give a"
                                   " new database, or the same settings.")
            if not rows:
                conn.execute(t_state.insert(), [{"key": "settings", "value": json.dumps(self._settings())},
                                                {"key": "round_id", "value": os.urandom(8).hex()},
                                                {"key": "state", "value": json.dumps({"state": "keys"})}])
                rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
        self.round_id = rows["round_id"]
        self.st = json.loads(rows["state"])
        self._model_doc = json.loads(rows["model"]) if "model" in rows else None

    def _settings(self) -> dict:
        return {"plan": self.plan.to_dict(), "n_topics": self.cfg.n_topics,
                "vocabulary_sha256": hashlib.sha256("\n".join(self.cfg.vocabulary.words).encode()).hexdigest()}

    def _save(self, conn, **extra) -> None:
        conn.execute(t_state.delete().where(t_state.c.key == "state"))
        conn.execute(t_state.insert(), [{"key": "state", "value": json.dumps(self.st)}]
                     + [{"key": k, "value": json.dumps(v)} for k, v in extra.items()])

    # ------------------------------------------------------------ views
    def roster(self) -> dict:
        if getattr(self, "_roster", None) is not None:
            return self._roster
        with self.lock, self.storage.engine.connect() as conn:     # not while a step closes (its rows uncommitted)
            roster = {r.contributor: {"c": r.c, "s": json.loads(r.s)}
                      for r in conn.execute(select(t_keys.c.contributor, t_keys.c.c, t_keys.c.s))}
        if self.st["state"] != "keys":      # closed: it never changes again
            self._roster, self._graph = roster, ss.neighbour_graph(roster)
        return roster

    def graph(self) -> dict:
        self.roster()
        return self._graph

    def view(self) -> dict:
        with self.lock:
            return self._view()

    def _view(self) -> dict:
        st = dict(self.st)
        doc = {"round_id": self.round_id, "state": st["state"], "reason": st.get("reason")}
        if st["state"] == "keys":
            with self.storage.engine.connect() as conn:
                doc["keys_received"] = conn.execute(select(func.count()).select_from(t_keys)).scalar()
        else:
            doc["roster"] = self.roster()
        for k in ("members", "uploaded", "kept", "phase"):
            if k in st:
                doc[k] = st[k]
        return doc

    # ------------------------------------------------------------ steps
    def _need(self, *states) -> None:
        if self.st["state"] not in states:
            raise ApiError(409, "round_closed" if self.st["state"] != "keys" else "not_open",
                           f"the round is at step {self.st['state']!r}"
                           + (f" ({self.st.get('reason')})" if self.st.get("reason") else "")
                           + f", not {' or '.join(repr(s) for s in states)}: nothing stored.")

    def _used_keys(self, conn) -> set:
        """Every public key in the roster so far (kept in memory; read once from the database)."""
        if getattr(self, "_used", None) is None:
            rows = conn.execute(select(t_keys.c.c, t_keys.c.s)).all()
            self._used = {k for r in rows for k in [r.c, *json.loads(r.s)]}
            self._n_keys = len(rows)
        return self._used

    def post_keys(self, contributor: str, keys: dict) -> tuple[int, dict]:
        if not (isinstance(keys, dict) and isinstance(keys.get("c"), str) and isinstance(keys.get("s"), list)
                and len(keys["s"]) == UPLOAD_PHASES
                and all(isinstance(k, str) and re.fullmatch(r"[0-9a-f]{64}", k) for k in [keys["c"], *keys["s"]])):
            raise ApiError(400, "bad_keys", f"keys must be {{'c': hex, 's': [{UPLOAD_PHASES} hex]}}, each a 32-byte"
                                            " X25519 public key in lower-case hex.")
        if len({keys["c"], *keys["s"]}) != 1 + UPLOAD_PHASES:
            raise ApiError(400, "keys_reused", "the same public key is given twice: draw a fresh key for each use.")
        with self.lock, self.storage.engine.begin() as conn:
            old = conn.execute(select(t_keys).where(t_keys.c.contributor == contributor)).first()
            if old is not None:
                if old.c == keys["c"] and json.loads(old.s) == keys["s"]:
                    return 200, {"replayed": True, **self.view()}
                raise ApiError(409, "keys_changed", f"contributor {contributor!r} already sent other keys for this"
                                                    " round: a contributor sends one key set per round.")
            self._need("keys")
            used = self._used_keys(conn)
            if used & {keys["c"], *keys["s"]}:
                raise ApiError(409, "keys_reused", "a public key of this set was already sent by another contributor:"
                                                   " re-used keys are refused; draw fresh ones.")
            conn.execute(t_keys.insert().values(contributor=contributor, c=keys["c"], s=json.dumps(keys["s"]),
                                                at=time.time()))
            used.update([keys["c"], *keys["s"]])
            self._n_keys += 1
            if self._n_keys >= self.plan.n:
                self.st = {"state": "shares"}
                self._save(conn)
        return 201, {"replayed": False, **self.view()}

    def post_shares(self, contributor: str, shares: dict) -> tuple[int, dict]:
        roster = self.roster()
        if contributor not in roster:
            raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not in this round's roster.")
        graph = self.graph()
        if not isinstance(shares, dict) or set(shares) != set(graph[contributor]) or not all(
                isinstance(v, str) and re.fullmatch(r"[0-9a-f]{24,20000}", v) for v in shares.values()):
            raise ApiError(400, "wrong_shape", "shares must be one hex ciphertext for each of your neighbours in this"
                                               " round's graph, and none for anyone else.")
        body = json.dumps(shares, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        with self.lock, self.storage.engine.begin() as conn:
            old = conn.execute(select(t_shares.c.sha).where(t_shares.c.sender == contributor)).first()
            if old is not None:
                if old.sha == sha:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already sent other shares: one"
                                                     " set per round.")
            self._need("shares")
            conn.execute(t_shares.insert().values(sender=contributor, body="", sha=sha))
            conn.execute(t_share_to.insert(), [{"receiver": v, "sender": contributor, "ct": ct}
                                               for v, ct in shares.items()])
            n = conn.execute(select(func.count()).select_from(t_shares)).scalar()
            if n >= len(roster):
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
        return 201, {"replayed": False}

    def shares_for(self, contributor: str) -> dict:
        if self.st["state"] in ("keys", "shares"):
            raise ApiError(409, "not_open", "the shares are handed out once the sharing step has closed.")
        with self.storage.engine.connect() as conn:
            return {r.sender: r.ct for r in conn.execute(select(t_share_to.c.sender, t_share_to.c.ct)
                                                         .where(t_share_to.c.receiver == contributor))}

    def _open_upload(self, conn, phase: int, members: list, **extra) -> None:
        if len(members) < self.plan.n - self.plan.dropouts:
            self.st = {"state": "failed", "reason": f"only {len(members)} contributors took part in step {phase},"
                                                    f" fewer than {self.plan.n - self.plan.dropouts} (--min-contributors"
                                                    " minus --dropout-tolerance): nothing released"}
        else:
            self.st = {"state": f"upload{phase}", "phase": phase, "members": members, **extra}
        self._save(conn)

    def dim(self, phase: int) -> int:
        return self.plan.vocab_size + 1 if phase == 0 else ss.triangle_size(len(self.st["kept"]))

    def post_upload(self, phase: int, contributor: str, body: bytes) -> tuple[int, dict]:
        sha = hashlib.sha256(body).hexdigest()
        with self.lock:
            with self.storage.engine.connect() as conn:
                old = conn.execute(select(t_uploads.c.sha).where((t_uploads.c.phase == phase)
                                                                 & (t_uploads.c.contributor == contributor))).first()
            if old is not None:
                if old.sha == sha:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already uploaded other bytes for"
                                                     f" step {phase}: one upload per contributor and step.")
            self._need(f"upload{phase}")
            if contributor not in self.st["members"]:
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not a member of step {phase}.")
            if len(body) != 4 * self.dim(phase):
                raise ApiError(400, "wrong_shape", f"an upload of step {phase} is {self.dim(phase)} little-endian"
                                                   f" uint32 ({4 * self.dim(phase)} bytes), not {len(body)} bytes.")
            with self.storage.engine.begin() as conn:
                conn.execute(t_uploads.insert().values(phase=phase, contributor=contributor, sha=sha, data=body,
                                                       at=time.time()))
                n = conn.execute(select(func.count()).select_from(t_uploads).where(t_uploads.c.phase == phase)).scalar()
                if n >= len(self.st["members"]):
                    self._close_upload(conn, phase)
        return 201, {"replayed": False}

    def _uploaded(self, conn, phase: int) -> list:
        return sorted(r[0] for r in conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == phase)))

    def _close_upload(self, conn, phase: int) -> None:
        uploaded = self._uploaded(conn, phase)
        if len(uploaded) < self.plan.n - self.plan.dropouts:
            self.st = {"state": "failed", "reason": f"only {len(uploaded)} uploads in step {phase}, fewer than"
                                                    f" {self.plan.n - self.plan.dropouts} (--min-contributors minus"
                                                    " --dropout-tolerance): nothing released"}
        else:
            self.st = dict(self.st, state=f"unmask{phase}", uploaded=uploaded)
        self._save(conn)

    def close(self) -> dict:
        """The admin's close of the step under way (the shares or an upload step)."""
        with self.lock, self.storage.engine.begin() as conn:
            state = self.st["state"]
            if state == "shares":
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
            elif state.startswith("upload"):
                self._close_upload(conn, int(state[-1]))
            elif state == "keys":
                n = len(conn.execute(select(t_keys.c.contributor)).all())
                self.st = {"state": "failed", "reason": f"closed with {n} keys, fewer than --min-contributors"
                                                        f" {self.plan.n}: nothing released"}
                self._save(conn)
            else:
                raise ApiError(409, "round_closed", f"the round is at step {state!r}: nothing to close.")
        return self.view()

    def post_unmask(self, phase: int, contributor: str, answers: dict) -> tuple[int, dict]:
        body = json.dumps(answers, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        with self.lock:
            with self.storage.engine.connect() as conn:
                old = conn.execute(select(t_unmask.c.sha).where((t_unmask.c.phase == phase)
                                                                & (t_unmask.c.contributor == contributor))).first()
            if old is not None:
                if old.sha == sha:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already answered step {phase}.")
            self._need(f"unmask{phase}")
            if contributor not in self.st["uploaded"]:
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} did not upload in step {phase}.")
            if not isinstance(answers, dict) or not all(
                    isinstance(a, dict) and a.get("kind") in ("b", "s") and isinstance(a.get("share"), str)
                    for a in answers.values()):
                raise ApiError(400, "wrong_shape", "answers must map each sender to {'kind': 'b'|'s', 'share': hex}.")
            with self.storage.engine.begin() as conn:
                conn.execute(t_unmask.insert().values(phase=phase, contributor=contributor, body=body, sha=sha))
            self._try_unmask(phase, answers, contributor)
        return 201, {"replayed": False}

    def _responses(self, phase: int) -> dict:
        with self.storage.engine.connect() as conn:
            return {r.contributor: json.loads(r.body) for r in
                    conn.execute(select(t_unmask.c.contributor, t_unmask.c.body).where(t_unmask.c.phase == phase))}

    def _try_unmask(self, phase: int, answers: dict | None = None, responder: str | None = None) -> None:
        """Count the new answers (kept in memory per step; rebuilt from the database after a restart) and unmask
        once every needed seed has its threshold of shares."""
        graph = self.graph()
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        counts = getattr(self, "_have", None)
        if counts is None or counts[0] != phase:
            needed = {u: "b" for u in uploaded} | {v: "s" for v in members - uploaded
                                                  if any(u in uploaded for u in graph[v])}
            counts = self._have = (phase, needed, {u: 0 for u in needed}, [0])
            todo = self._responses(phase).items()
        else:
            todo = [(responder, answers)] if answers is not None else []
        _, needed, have, n_resp = counts
        for who, ans in todo:
            n_resp[0] += 1
            for sender, a in ans.items():
                if sender in needed and a.get("kind") == needed[sender] and who in graph[sender]:
                    have[sender] += 1
        if any(have[u] < ss.threshold_for(len(graph[u])) for u in needed):
            if n_resp[0] >= len(uploaded):     # every survivor answered and still too few: it cannot finish
                self._fail(f"too few shares to unmask step {phase}: nothing released")
            return
        if getattr(self, "_unmasking", None) != phase:      # once: off the request's thread (it may take a while)
            self._unmasking = phase
            threading.Thread(target=self._unmask, args=(phase,), name=f"secure-unmask-{phase}", daemon=True).start()

    def _unmask(self, phase: int) -> None:
        """Sum and unmask (the uploads and the answers it reads are those of a closed step: no lock needed), then
        move the round on under the lock."""
        try:
            self._unmask_step(phase)
        except Exception as e:      # noqa: BLE001 (any failure fails the round, in one line, and is logged)
            log.exception("unmasking step %s failed", phase)
            self._fail(f"unmasking step {phase} failed ({' '.join(str(e).split())[:200]}): nothing released")

    def _unmask_step(self, phase: int) -> None:
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        roster, responses = self.roster(), self._responses(phase)
        t0 = time.perf_counter()
        dim = self.dim(phase)
        with self.storage.engine.connect() as conn:
            rows = conn.execution_options(stream_results=True).execute(
                select(t_uploads.c.data).where(t_uploads.c.phase == phase))
            total = ss.ring_sum(np.frombuffer(r[0], dtype=ss.DTYPE) for r in rows)
        t1 = time.perf_counter()
        total = ss.unmask_sum(total, roster, self.round_id, phase, members, uploaded, responses)
        t2 = time.perf_counter()
        self.timings[phase] = {"sum_s": t1 - t0, "unmask_s": t2 - t1, "uploads": len(uploaded), "dim": dim}
        # a wrap-around shows as an entry outside what the signal and the noise can reach

        limit = len(uploaded) * rounded_norms(self.plan.scale, dim)[0] + 2 ** (self.plan.bits - 2)
        if np.any(np.abs(total) > limit):
            self._fail(f"step {phase}'s sum wrapped around the modulus: nothing released")
            return
        if phase == 1:
            with self.storage.engine.connect() as conn:
                s0 = json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == "sum0")).scalar())
            presence = np.frombuffer(base64.b64decode(s0["sum"]), dtype="<i8")
            doc = self._release(presence, total, (s0["shares"], len(uploaded)))
        with self.lock, self.storage.engine.begin() as conn:
            if self.st["state"] != f"unmask{phase}":
                return
            conn.execute(t_state.delete().where(t_state.c.key == f"sum{phase}"))
            conn.execute(t_state.insert().values(key=f"sum{phase}", value=json.dumps(
                {"sum": base64.b64encode(total.astype("<i8").tobytes()).decode(), "shares": len(uploaded)})))
            if phase == 0:
                from ..models.secure_sum import released_words  # start-up: models.secure_sum loads scikit-learn

                kept = released_words(self.plan, total, len(uploaded), self.cfg.n_topics)[0]
                self._open_upload(conn, 1, sorted(uploaded), kept=[int(k) for k in kept])
            else:
                self.st = dict(self.st, state="released")
                self._save(conn, model=doc)
                self._model_doc = doc

    def _release(self, presence, cooc, shares) -> dict:
        from ..models.secure_sum import secure_sum_topics  # start-up: models.secure_sum loads scikit-learn

        model = secure_sum_topics(self.plan, self.cfg.vocabulary, self.cfg.n_topics, presence, cooc, shares,
                                  {"round_id": self.round_id, "timings": self.timings})
        with tempfile.TemporaryDirectory() as d:
            model.save(f"{d}/m")
            meta_doc, _ = load_bundle(f"{d}/m")

            arrays = {p.stem: base64.b64encode(p.read_bytes()).decode() for p in Path(f"{d}/m").glob("*.npy")}
            meta_json = Path(f"{d}/m/model.json").read_text()
        return {"api_version": "v1", "model_id": 1, "model_version": 1, "model_json": meta_json, "arrays": arrays}

    def _fail(self, reason: str) -> None:
        with self.lock, self.storage.engine.begin() as conn:
            self.st = {"state": "failed", "reason": reason}
            self._save(conn)

    def model_doc(self) -> dict:
        if self._model_doc is None:
            raise ApiError(404, "no_model", f"the round has released no model (it is at step {self.st['state']!r}"
                                            + (f": {self.st['reason']}" if self.st.get("reason") else "") + ").")
        return self._model_doc


# ----------------------------------------------------------------------------- HTTP
def _round(request: Request) -> SecureRound:
    return request.app.state.round


def _contributor(value) -> str:
    if not isinstance(value, str) or not CONTRIBUTOR.fullmatch(value):
        raise ApiError(400, "bad_contributor", "the contributor id must be 1-64 of A-Z a-z 0-9 _ . -.")
    return value


async def _json(request: Request, limit: int) -> dict:
    body = await request.body()
    if len(body) > limit:
        raise ApiError(413, "too_large", f"the body is over {limit} bytes.")
    try:
        doc = json.loads(body)
    except ValueError:
        raise ApiError(400, "bad_json", "the body is not JSON.") from None
    if not isinstance(doc, dict):
        raise ApiError(400, "bad_json", "the body must be a JSON object.")
    return doc


def _phase(request: Request) -> int:
    p = request.path_params["phase"]
    if p not in ("0", "1"):
        raise ApiError(404, "no_such_step", "steps are 0 (presence) and 1 (co-occurrence).")
    return int(p)


async def get_config(request: Request):
    r = _round(request)
    cfg = r.cfg
    return JSONResponse({"api_version": "v1", "report_kind": "secure-sum", "unit": "user",
                         "vocabulary": cfg.vocabulary.words, "vocab_size": len(cfg.vocabulary),
                         "n_topics": cfg.n_topics, "round_id": r.round_id, "secure_sum": cfg.plan.to_dict(),
                         "epsilon": cfg.plan.epsilon, "delta": cfg.plan.delta, "fed": None,
                         "max_body_bytes": cfg.max_body_bytes})


async def get_round(request: Request):
    return JSONResponse(await run_in_threadpool(_round(request).view))


async def post_keys(request: Request):
    doc = await _json(request, 4096)
    status, out = await run_in_threadpool(_round(request).post_keys, _contributor(doc.get("contributor")),
                                          doc.get("keys"))
    return JSONResponse(out, status)


async def post_shares(request: Request):
    doc = await _json(request, 4 * 1024 * 1024)
    status, out = await run_in_threadpool(_round(request).post_shares, _contributor(doc.get("contributor")),
                                          doc.get("shares"))
    return JSONResponse(out, status)


async def get_shares(request: Request):
    who = _contributor(request.query_params.get("contributor"))
    return JSONResponse(await run_in_threadpool(_round(request).shares_for, who))


async def post_upload(request: Request):
    r = _round(request)
    phase = _phase(request)
    who = _contributor(request.headers.get("dptopic-contributor"))
    body = await request.body()
    if len(body) > r.cfg.max_body_bytes:
        raise ApiError(413, "too_large", f"the upload is over --max-body-bytes {r.cfg.max_body_bytes}.")
    status, out = await run_in_threadpool(r.post_upload, phase, who, body)
    return JSONResponse(out, status)


async def post_unmask(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4 * 1024 * 1024)
    status, out = await run_in_threadpool(_round(request).post_unmask, phase, _contributor(doc.get("contributor")),
                                          doc.get("answers"))
    return JSONResponse(out, status)


async def admin_close(request: Request):
    r = _round(request)
    token = r.cfg.admin_token
    auth = request.headers.get("authorization", "")

    if token is None:
        raise ApiError(403, "admin_disabled", "admin endpoints are disabled: start the server with --token-file.")
    if not auth.startswith("Bearer ") or not hmac.compare_digest(auth[7:].strip().encode(), token.encode()):
        raise ApiError(403, "wrong_token", "send 'Authorization: Bearer TOKEN' (the token from --token-file).")
    return JSONResponse(await run_in_threadpool(r.close))


async def get_model(request: Request):
    return JSONResponse(_round(request).model_doc())


async def get_timings(request: Request):
    return JSONResponse(_round(request).timings)


async def _api_error(request: Request, exc: ApiError):
    return JSONResponse({"error": {"code": exc.code, "message": " ".join(exc.message.split())}}, exc.status)


async def _dptopic_error(request: Request, exc: DPTopicError):
    return JSONResponse({"error": {"code": "refused", "message": " ".join(str(exc).split())}}, 400)


def create_secure_sum_app(cfg: SecureSumConfig) -> Starlette:
    """The ASGI app of one secure-sum round (its database opened at once)."""
    rnd = SecureRound(cfg)
    routes = [Route("/v1/config", get_config, methods=["GET"]),
              Route("/v1/secure/round", get_round, methods=["GET"]),
              Route("/v1/secure/keys", post_keys, methods=["POST"]),
              Route("/v1/secure/shares", post_shares, methods=["POST"]),
              Route("/v1/secure/shares", get_shares, methods=["GET"]),
              Route("/v1/secure/upload/{phase}", post_upload, methods=["POST"]),
              Route("/v1/secure/unmask/{phase}", post_unmask, methods=["POST"]),
              Route("/v1/secure/timings", get_timings, methods=["GET"]),
              Route("/v1/admin/secure/close", admin_close, methods=["POST"]),
              Route("/v1/model", get_model, methods=["GET"])]
    app = Starlette(routes=routes, exception_handlers={ApiError: _api_error, DPTopicError: _dptopic_error})
    app.state.round = rnd
    return app
