"""``dptopic serve --report-kind secure-sum``: one round of secure aggregation of per-person statistics.

The server admits, stores, forwards and unmasks; the protocol is :mod:`dptopic.protocol.secure_sum` (read its note
first) and enrollment :mod:`dptopic.protocol.enrollment`. Steps, each a state of the round (``GET
/v1/secure/round``):

``keys``          each invited contributor registers its keys, signed with its invitation's key
                  (``POST /v1/secure/keys``); the roster closes when every member of the directory has.
``shares``        each posts its neighbours' encrypted shares (``POST /v1/secure/shares``); closes when every roster
                  member has, or by the admin.
``upload{p}``     the signed, masked vector of step p (``POST /v1/secure/upload/{p}``, raw little-endian uint32 or
                  uint64, the plan's ring;
                  step 0 answers with the shares addressed to the uploader); closes when every member has uploaded,
                  or by the admin (``POST /v1/admin/secure/close``).
``consistency{p}``  the survivors sign the set of uploads (``POST /v1/secure/consistency/{p}``); closes when every
                  uploader has signed, or by the admin; the signatures are then public (``GET
                  /v1/secure/signatures/{p}``).
``unmask{p}``     the signers answer with shares (``POST /v1/secure/unmask/{p}``); once every needed seed has its
                  threshold of shares the server unmasks the sum (off the request's thread; resumed after a restart),
                  after step 0 chooses the kept words and opens step 1 (the co-occurrence over them), after step 1
``released``      the model (``GET /v1/model``, for ``dptopic pull``). Or ``failed``, with the reason: nothing released.

Every request is refused in one line when it does not fit the state, is not signed by the member it names, or is
malformed (one contributor's bad key, share or answer is refused, not the round); every message is stored durably
once per contributor and step (a retry of the same bytes is acknowledged as a replay, different bytes are refused).

Uploads are aggregated as they arrive: each is added to its step's running sum (in the plan's ring) in the
transaction that stores its receipt (SHA-256 and signature), so exactly once, and its bytes are not kept. The
server's storage for the uploads is the two running sums plus one receipt per contributor and step, and a server
killed at any moment resumes from them (``tests/integration/test_secure_sum_restart.py``). An upload whose maker is
left with fewer than the threshold of its neighbours among the uploads cannot be unmasked, nor taken out of the sum,
so the step fails; taking it out would rarely save the round (on the ring its neighbours are then short in turn), and
the plan's degree makes it rare under random dropouts (at most 1e-3 contributors expected short).
Fewer than ``n - F`` survivors at any step fail the round: the noise was calibrated for at least that many shares.
The database is created readable by its owner only; SQLite commits in WAL mode and syncs at checkpoints, so a
process killed at any moment loses nothing it acknowledged (a power cut may lose the last acknowledgements, which the
contributors send again from their state files).
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import os
import re
import resource
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sqlalchemy import (
    Column,
    Float,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    func,
    inspect,
    select,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from .._io import load_bundle
from ..accounting.skellam import rounded_norms
from ..corpus import Vocabulary
from ..errors import DPTopicError
from ..protocol import secure_sum as ss
from ..protocol.enrollment import check_directory
from .ledger import charge_secure_round
from .storage import check_backend, safe_url

log = logging.getLogger("dptopic.service.secure_sum")
CONTRIBUTOR = ss.ROUND_ID
UPLOAD_PHASES = ss.PHASES
STATES = ("keys", "shares", "upload0", "consistency0", "unmask0", "upload1", "consistency1", "unmask1", "released",
          "failed")

meta = MetaData()
t_state = Table("secure_round", meta, Column("key", String(64), primary_key=True), Column("value", Text))
t_keys = Table("secure_keys", meta, Column("contributor", String(64), primary_key=True),
               Column("c", String(64), nullable=False, unique=True), Column("s", Text, nullable=False),
               Column("b", Text, nullable=False), Column("signature", String(128), nullable=False),
               Column("at", Float, nullable=False))
t_shares = Table("secure_shares", meta, Column("sender", String(64), primary_key=True),
                 Column("body", Text, nullable=False), Column("sha", String(64), nullable=False))
t_share_to = Table("secure_share_to", meta, Column("receiver", String(64), primary_key=True),
                   Column("sender", String(64), primary_key=True), Column("ct", Text, nullable=False))
t_uploads = Table("secure_upload_receipts", meta, Column("phase", Integer, primary_key=True),
                  Column("contributor", String(64), primary_key=True), Column("sha", String(64), nullable=False),
                  Column("signature", String(128), nullable=False), Column("at", Float, nullable=False))
"""One receipt per contributor and step (the upload's SHA-256 and signature): an upload is added to the step's
running sum exactly once, in the transaction that stores its receipt; the bytes themselves are not kept."""
t_sums = Table("secure_running_sums", meta, Column("phase", Integer, primary_key=True),
               Column("data", LargeBinary, nullable=False), Column("count", Integer, nullable=False))
"""Each step's running sum of the uploads (in the plan's ring) and how many it holds."""
t_consistency = Table("secure_consistency", meta, Column("phase", Integer, primary_key=True),
                      Column("contributor", String(64), primary_key=True),
                      Column("signature", String(128), nullable=False))
t_unmask = Table("secure_unmask", meta, Column("phase", Integer, primary_key=True),
                 Column("contributor", String(64), primary_key=True), Column("body", Text, nullable=False),
                 Column("sha", String(64), nullable=False))


class ApiError(Exception):
    """A refused request: its HTTP status, a code and a one-line message."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class SecureSumConfig:
    """What ``dptopic serve --report-kind secure-sum`` is started with: the public vocabulary, the plan, the
    operator's signed directory of invited contributors (:mod:`dptopic.protocol.enrollment`), and the server's own
    settings."""

    vocabulary: object
    plan: ss.SecureSumPlan
    directory: dict
    n_topics: int = 20
    database: str = "sqlite:///dptopic-secure-sum.db"
    admin_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 16 * 1024 * 1024
    ledger: str | None = None               # the dataset ledger the released round is charged to (service/ledger.py)
    ledger_dataset: str | None = None
    allow_foreign_tables: bool = False

    def __post_init__(self):
        if not isinstance(self.vocabulary, Vocabulary):
            self.vocabulary = Vocabulary(list(self.vocabulary))
        if self.plan.vocab_size != len(self.vocabulary):
            raise DPTopicError("the plan's vocabulary size differs from --vocabulary's.")
        if not 2 <= self.n_topics <= len(self.vocabulary):
            raise DPTopicError(f"--topics {self.n_topics} must lie between 2 and the vocabulary's size"
                               f" ({len(self.vocabulary)}).")
        self.directory = check_directory(self.directory, where="--directory")
        if len(self.directory["members"]) != self.plan.n:
            raise DPTopicError(f"--directory lists {len(self.directory['members'])} invited contributors, but the round"
                               f" takes {self.plan.n} (--min-contributors): give the same number, or invite again.")
        need = self.plan.upload_bytes(max(self.plan.dims)) + 64
        if self.max_body_bytes < need:
            raise DPTopicError(f"--max-body-bytes {self.max_body_bytes} is below the largest secure-sum upload here"
                               f" ({need} bytes): raise it.")

    @property
    def round_id(self) -> str:
        """The round's id: the operator's, from the directory."""
        return self.directory["round_id"]


def _open_engine(url: str):
    """The round's database engine: SQLite (created readable by its owner only, WAL, synced at checkpoints) or
    PostgreSQL."""
    check_backend(url)
    try:
        u = make_url(url)
    except Exception:       # noqa: BLE001 - SQLAlchemy's own words say why
        raise DPTopicError(f"--database {url!r} is not a database URL: give sqlite:///PATH or"
                           " postgresql+psycopg://USER@HOST/DB.") from None
    if u.get_backend_name() == "sqlite":
        path = u.database
        if path and path != ":memory:" and not path.startswith("file:"):
            p = Path(path)
            if not p.exists():
                os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            elif p.is_file() and p.stat().st_mode & 0o077 and p.stat().st_uid == os.getuid():
                p.chmod(0o600)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _connect(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")     # WAL: a killed process loses no commit (module note)
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()
        return engine
    return create_engine(url, pool_pre_ping=True)


class SecureRound:
    """The round's state, durable in the database; one lock serialises its changes."""

    def __init__(self, cfg: SecureSumConfig):
        self.cfg, self.plan = cfg, cfg.plan
        self.round_id = cfg.round_id
        self.members = dict(cfg.directory["members"])
        self.ids = sorted(self.members)
        self.lock = threading.RLock()
        self.timings: dict = {}
        self._graph = ss.neighbour_graph(self.ids, self.round_id, self.plan.degree)
        self.T = self.plan.threshold
        self._roster = None
        self._have = None
        self._unmasking = None
        self._sums: dict = {}        # phase -> (running sum, uploads in it), as committed
        try:
            self.engine = _open_engine(cfg.database)
            found = set(inspect(self.engine).get_table_names())
            foreign = sorted(found - set(meta.tables))
            if foreign and not cfg.allow_foreign_tables:
                raise DPTopicError(f"--database {safe_url(cfg.database)!r} already holds tables that are not the secure"
                                   f" sum's ({', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}): give a"
                                   " new database, or pass --allow-foreign-tables to add the round's tables beside"
                                   " them.")
            meta.create_all(self.engine)
            with self.engine.begin() as conn:
                rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
                if not rows:
                    conn.execute(t_state.insert(), [{"key": "settings", "value": json.dumps(self._settings())},
                                                    {"key": "round_id", "value": self.round_id},
                                                    {"key": "state", "value": json.dumps({"state": "keys"})}])
                    rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
                n_keys = conn.execute(select(func.count()).select_from(t_keys)).scalar()
        except DPTopicError:
            raise
        except SQLAlchemyError as e:
            raise DPTopicError(f"--database {safe_url(cfg.database)!r} cannot hold the round"
                               f" ({' '.join(str(getattr(e, 'orig', e)).split())[:160]}): give a new SQLite file"
                               " (sqlite:///PATH) or a PostgreSQL database the server may write.") from None
        self.st, self._model_doc = self._check_stored(rows, n_keys)
        self._used = None
        if self.st["state"].startswith("unmask"):      # killed between the last answer and the unmasking: resume
            self._try_unmask(int(self.st["state"][-1]))

    def _settings(self) -> dict:
        return {"plan": self.plan.to_dict(), "n_topics": self.cfg.n_topics,
                "directory_sha256": ss.digest(ss.canonical(self.cfg.directory)),
                "vocabulary_sha256": hashlib.sha256("\n".join(self.cfg.vocabulary.words).encode()).hexdigest()}

    def _check_stored(self, rows: dict, n_keys: int) -> tuple[dict, dict | None]:
        """The stored state checked on start: the same settings, a known step with its fields, a model when
        released, every key of a closed roster; one line naming the database otherwise."""
        where = f"--database {safe_url(self.cfg.database)!r}"

        def damaged(what):
            return DPTopicError(f"{where} holds a damaged secure-sum round ({what}): give a new database; the"
                                " contributors then join a new round.")
        try:
            settings = json.loads(rows["settings"])
            st = json.loads(rows["state"])
            model = json.loads(rows["model"]) if "model" in rows else None
        except (KeyError, TypeError, ValueError):
            raise damaged("its settings, state or model do not read") from None
        if settings != self._settings() or rows.get("round_id") != self.round_id:
            raise DPTopicError(f"{where} holds a secure-sum round with other settings (plan, vocabulary or"
                               " directory): give a new database, or the same settings.")
        state = st.get("state") if isinstance(st, dict) else None
        if state not in STATES:
            raise damaged(f"an unknown step {str(state)[:40]!r}")
        if state not in ("keys", "failed") and n_keys != self.plan.n:
            raise damaged(f"{n_keys} registered keys for a closed roster of {self.plan.n}")
        ids = set(self.ids)
        for k in ("members", "uploaded", "signers"):
            if k in st and not (isinstance(st[k], list) and set(st[k]) <= ids):
                raise damaged(f"its {k}")
        needs = {"upload": ("members",), "consistency": ("members", "uploaded"),
                 "unmask": ("members", "uploaded", "signers")}
        for prefix, keys in needs.items():
            if state.startswith(prefix) and not all(k in st for k in keys):
                raise damaged(f"step {state!r} without its {', '.join(keys)}")
        if state.endswith("1") and not isinstance(st.get("kept"), list):
            raise damaged("step 1 without its kept words")
        if state == "released" and not (isinstance(model, dict) and "model_json" in model):
            raise damaged("released without a model")
        if state == "failed" and not isinstance(st.get("reason"), str):
            raise damaged("failed without a reason")
        return st, model

    def _save(self, conn, **extra) -> None:
        conn.execute(t_state.delete().where(t_state.c.key.in_(["state", *extra])))
        conn.execute(t_state.insert(), [{"key": "state", "value": json.dumps(self.st)}]
                     + [{"key": k, "value": json.dumps(v)} for k, v in extra.items()])

    # ------------------------------------------------------------ views
    def roster(self) -> dict:
        """``{id: {"c", "s", "b", "signature"}}`` (the registered keys, each signed by its member)."""
        if self._roster is not None:
            return self._roster
        with self.lock, self.engine.connect() as conn:     # not while a step closes (its rows uncommitted)
            roster = {r.contributor: {"c": r.c, "s": json.loads(r.s), "b": json.loads(r.b), "signature": r.signature}
                      for r in conn.execute(select(t_keys))}
        if self.st["state"] != "keys":      # closed: it never changes again
            self._roster = roster
        return roster

    def graph(self) -> dict:
        """The round's neighbour graph (from the directory and the plan: fixed before anyone registers)."""
        return self._graph

    def view(self) -> dict:
        """``GET /v1/secure/round``: the step, and the sets and words the contributors check."""
        with self.lock:
            st = dict(self.st)
            doc = {"round_id": self.round_id, "state": st["state"], "reason": st.get("reason")}
            if st["state"] == "keys":
                with self.engine.connect() as conn:
                    doc["keys_received"] = conn.execute(select(func.count()).select_from(t_keys)).scalar()
            for k in ("members", "uploaded", "signers", "kept", "phase"):
                if k in st:
                    doc[k] = st[k]
            return doc

    def roster_view(self) -> dict:
        """``GET /v1/secure/roster``: the closed roster."""
        if self.st["state"] == "keys":
            raise ApiError(409, "not_open", "the roster is handed out once every invited contributor has registered.")
        return self.roster()

    # ------------------------------------------------------------ steps
    def _in(self, key: str) -> set:
        """``set(self.st[key])``, built once for each state the round passes through."""
        memo = self.__dict__.setdefault("_sets", {})
        if memo.get("_st") is not self.st:
            memo.clear()
            memo["_st"] = self.st
        if key not in memo:
            memo[key] = set(self.st.get(key) or ())
        return memo[key]

    def _uploads_message(self, phase: int) -> bytes:
        """The consistency message of ``phase`` over the server's set of uploads (made once per state)."""
        self._in("uploaded")
        memo = self.__dict__["_sets"]
        if ("msg", phase) not in memo:
            memo[("msg", phase)] = ss.consistency_message(self.round_id, phase, self.st["uploaded"])
        return memo[("msg", phase)]

    def _need(self, *states) -> None:
        if self.st["state"] not in states:
            raise ApiError(409, "round_closed" if self.st["state"] != "keys" else "not_open",
                           f"the round is at step {self.st['state']!r}"
                           + (f" ({self.st.get('reason')})" if self.st.get("reason") else "")
                           + f", not {' or '.join(repr(s) for s in states)}: nothing stored.")

    def _signed(self, contributor: str, signature, msg: bytes) -> None:
        if contributor not in self.members:
            raise ApiError(403, "not_enrolled", f"contributor {contributor!r} holds no invitation to this round (it is"
                                                " not in the operator's directory).")
        if not ss.verify(bytes.fromhex(self.members[contributor]), signature, msg):
            raise ApiError(403, "bad_signature", f"the request is not signed by {contributor!r}'s invitation key (or"
                                                 " not over this step's message): refused.")

    def post_keys(self, contributor: str, keys, signature) -> tuple[int, dict]:
        """A member registers its keys (signed)."""
        self._signed(contributor, signature, ss.keys_message(self.round_id, contributor, keys)
                     if isinstance(keys, dict) and {"c", "s", "b"} <= set(keys) else b"")
        why = ss.check_keys(keys)
        if why is not None:
            raise ApiError(400, "bad_keys", why + ".")
        with self.lock, self.engine.begin() as conn:
            old = conn.execute(select(t_keys).where(t_keys.c.contributor == contributor)).first()
            if old is not None:
                if old.c == keys["c"] and json.loads(old.s) == keys["s"] and json.loads(old.b) == keys["b"]:
                    return 200, {"replayed": True, **self.view()}
                raise ApiError(409, "keys_changed", f"contributor {contributor!r} already registered other keys for"
                                                    " this round: one key set per invitation.")
            self._need("keys")
            if self._used is None:
                rows = conn.execute(select(t_keys.c.c, t_keys.c.s)).all()
                self._used = {k for r in rows for k in [r.c, *json.loads(r.s)]}
            if self._used & {keys["c"], *keys["s"]}:
                raise ApiError(409, "keys_reused", "a public key of this set was already registered by another"
                                                   " contributor: re-used keys are refused; draw fresh ones.")
            conn.execute(t_keys.insert().values(contributor=contributor, c=keys["c"], s=json.dumps(keys["s"]),
                                                b=json.dumps(keys["b"]), signature=signature, at=time.time()))
            self._used.update([keys["c"], *keys["s"]])
            if conn.execute(select(func.count()).select_from(t_keys)).scalar() >= self.plan.n:
                self.st = {"state": "shares"}
                self._save(conn)
        return 201, {"replayed": False, "state": self.st["state"]}

    def post_shares(self, contributor: str, shares) -> tuple[int, dict]:
        """A registered member's encrypted shares, one for each of its neighbours."""
        if self.st["state"] == "keys":
            raise ApiError(409, "not_open", "the shares are sent once the roster has closed.")
        if contributor not in self.members:
            raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not in this round's roster.")
        graph = self.graph()
        if not isinstance(shares, dict) or set(shares) != set(graph[contributor]) or not all(
                isinstance(v, str) and re.fullmatch(r"[A-Za-z0-9+/]{16,4000}={0,2}", v) for v in shares.values()):
            raise ApiError(400, "wrong_shape", "shares must be one base64 ciphertext for each of your neighbours in"
                                               " this round's graph, and none for anyone else.")
        body = json.dumps(shares, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        with self.lock, self.engine.begin() as conn:
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
            if n >= self.plan.n:
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
        return 201, {"replayed": False}

    def shares_for(self, contributor: str, conn=None) -> dict:
        """The ciphertexts addressed to ``contributor`` (by the members of step 0: those who sent shares)."""
        if self.st["state"] in ("keys", "shares"):
            raise ApiError(409, "not_open", "the shares are handed out once the sharing step has closed.")
        query = select(t_share_to.c.sender, t_share_to.c.ct).where(t_share_to.c.receiver == contributor)
        if conn is not None:
            return {r.sender: r.ct for r in conn.execute(query)}
        with self.engine.connect() as c:
            return {r.sender: r.ct for r in c.execute(query)}

    def _fail(self, reason: str, conn=None) -> None:
        with self.lock:
            self.st = {"state": "failed", "reason": reason}
            if conn is not None:
                self._save(conn)
                return
            with self.engine.begin() as c:
                self._save(c)

    def _short(self, ids) -> str | None:
        """A contributor of ``ids`` with fewer than the threshold of its neighbours among them, or None."""
        s = set(ids)
        graph = self.graph()
        return next((u for u in sorted(s) if sum(1 for w in graph[u] if w in s) < self.T), None)

    def _open_upload(self, conn, phase: int, members: list, **extra) -> None:
        least = self.plan.n - self.plan.dropouts
        short = self._short(members)
        if len(members) < least:
            self._fail(f"only {len(members)} contributors took part in step {phase}, fewer than {least}"
                       " (--min-contributors minus --dropout-tolerance): nothing released", conn)
        elif short is not None:
            self._fail(f"contributor {short!r} has fewer than {self.T} of its neighbours among the members of step"
                       f" {phase}: its shares cannot be completed; nothing released", conn)
        else:
            self.st = {"state": f"upload{phase}", "phase": phase, "members": members, **extra}
            self._save(conn)

    def dim(self, phase: int) -> int:
        """Entries of an upload of ``phase``."""
        return self.plan.vocab_size + 1 if phase == 0 else ss.triangle_size(len(self.st["kept"]))

    def post_upload(self, phase: int, contributor: str, body: bytes, signature) -> tuple[int, dict]:
        """A member's masked upload of ``phase`` (signed); step 0 answers with the shares addressed to it."""
        self._signed(contributor, signature, ss.upload_message(self.round_id, phase, contributor, body))
        sha = hashlib.sha256(body).hexdigest()
        with self.lock:
            with self.engine.connect() as conn:
                old = conn.execute(select(t_uploads.c.sha).where((t_uploads.c.phase == phase)
                                                                 & (t_uploads.c.contributor == contributor))).first()
            extra = {}
            if old is not None:
                if old.sha == sha:
                    if phase == 0:
                        extra["shares"] = self.shares_for(contributor)
                    return 200, {"replayed": True, **extra}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already uploaded other bytes for"
                                                     f" step {phase}: one upload per contributor and step.")
            self._need(f"upload{phase}")
            if contributor not in self._in("members"):
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not a member of step {phase}.")
            want = self.plan.upload_bytes(self.dim(phase))
            if len(body) != want:
                raise ApiError(400, "wrong_shape", f"an upload of step {phase} is {self.dim(phase)} little-endian"
                                                   f" uint{self.plan.bits} ({want} bytes), not {len(body)} bytes.")
            with self.engine.begin() as conn:
                conn.execute(t_uploads.insert().values(phase=phase, contributor=contributor, sha=sha,
                                                       signature=signature, at=time.time()))
                total, n = self._running(conn, phase)
                total = total + np.frombuffer(body, dtype=self.plan.dtype)      # modulo 2^bits: the ring wraps
                n += 1
                conn.execute(t_sums.delete().where(t_sums.c.phase == phase))
                conn.execute(t_sums.insert().values(phase=phase, data=total.tobytes(), count=n))
                if phase == 0:
                    extra["shares"] = self.shares_for(contributor, conn)
                if n >= len(self.st["members"]):
                    self._close_upload(conn, phase)
            self._sums[phase] = (total, n)      # committed: the running sum in memory follows the database
        return 201, {"replayed": False, **extra}

    def _running(self, conn, phase: int) -> tuple[np.ndarray, int]:
        """``(running sum, uploads in it)`` of ``phase``: kept in memory, read from the database after a restart."""
        if phase not in self._sums:
            row = conn.execute(select(t_sums.c.data, t_sums.c.count).where(t_sums.c.phase == phase)).first()
            if row is None:
                self._sums[phase] = (np.zeros(self.dim(phase), dtype=self.plan.dtype), 0)
            else:
                total = np.frombuffer(row.data, dtype=self.plan.dtype)
                if len(total) != self.dim(phase):
                    raise DPTopicError(f"the database {safe_url(self.cfg.database)!r} holds a running sum of step"
                                       f" {phase} of {len(total)} entries, not {self.dim(phase)}: give a new database.")
                self._sums[phase] = (total, int(row.count))
        return self._sums[phase]

    def _close_upload(self, conn, phase: int) -> None:
        uploaded = set(r[0] for r in conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == phase)))
        # an upload whose maker has fewer than T neighbours among the uploads could not be unmasked (its neighbours
        # refuse, rightly), and it is in the running sum, which keeps no upload to take out: the round fails. Taking
        # it out would rarely help: on the ring its nearest uploading neighbour is then short too, and so on around
        # (docs/research/secure_sum.md). The plan's degree makes it rare under random dropouts (SecureSumPlan.degree:
        # the expected number of contributors left short of T neighbours is at most 1e-3)
        short = self._short(uploaded)
        least = self.plan.n - self.plan.dropouts
        if len(uploaded) < least:
            self._fail(f"only {len(uploaded)} uploads in step {phase}, fewer than {least}"
                       " (--min-contributors minus --dropout-tolerance): nothing released", conn)
        elif short is not None:
            self._fail(f"contributor {short!r} uploaded in step {phase} with fewer than {self.T} of its neighbours"
                       " among the uploads: its upload cannot be unmasked nor taken out of the running sum; nothing"
                       " released", conn)
        else:
            self.st = dict(self.st, state=f"consistency{phase}", uploaded=sorted(uploaded))
            self._save(conn)

    def post_consistency(self, phase: int, contributor: str, signature) -> tuple[int, dict]:
        """An uploader's signature over the set of uploads of ``phase``."""
        with self.lock:
            with self.engine.connect() as conn:
                old = conn.execute(select(t_consistency.c.signature).where(
                    (t_consistency.c.phase == phase) & (t_consistency.c.contributor == contributor))).first()
            if old is not None:
                if old.signature == signature:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already signed step {phase}.")
            self._need(f"consistency{phase}")
            if contributor not in self._in("uploaded"):
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} is not among the uploads of step"
                                                    f" {phase}.")
            self._signed(contributor, signature, self._uploads_message(phase))
            with self.engine.begin() as conn:
                conn.execute(t_consistency.insert().values(phase=phase, contributor=contributor, signature=signature))
                n = conn.execute(select(func.count()).select_from(t_consistency)
                                 .where(t_consistency.c.phase == phase)).scalar()
                if n >= len(self.st["uploaded"]):
                    self._close_consistency(conn, phase)
        return 201, {"replayed": False}

    def _close_consistency(self, conn, phase: int) -> None:
        signers = sorted(r[0] for r in conn.execute(select(t_consistency.c.contributor)
                                                    .where(t_consistency.c.phase == phase)))
        least = self.plan.n - self.plan.dropouts
        graph, s = self.graph(), set(signers)
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        needed = uploaded | {v for v in members - uploaded if any(u in uploaded for u in graph[v])}
        short = next((u for u in sorted(needed) if sum(1 for w in graph[u] if w in s) < self.T), None)
        if len(signers) < least:
            self._fail(f"only {len(signers)} contributors signed the uploads of step {phase}, fewer than {least}:"
                       " nothing released", conn)
        elif short is not None:
            self._fail(f"contributor {short!r} has fewer than {self.T} signers among its neighbours in step {phase}:"
                       " its seeds cannot be unmasked; nothing released", conn)
        else:
            self.st = dict(self.st, state=f"unmask{phase}", signers=signers)
            self._have = None
            self._save(conn)

    def signatures(self, phase: int) -> dict:
        """``GET /v1/secure/signatures/{phase}``: every stored consistency signature of ``phase`` (public once the step
        has closed)."""
        if STATES.index(self.st["state"]) <= STATES.index(f"consistency{phase}") and self.st["state"] != "failed":
            raise ApiError(409, "not_open", f"the signatures of step {phase} are handed out once its consistency step"
                                            " has closed.")
        with self.engine.connect() as conn:
            return {r.contributor: r.signature for r in conn.execute(
                select(t_consistency.c.contributor, t_consistency.c.signature).where(t_consistency.c.phase == phase))}

    def close(self) -> dict:
        """The admin's close of the step under way (the shares, an upload or a consistency step)."""
        with self.lock, self.engine.begin() as conn:
            state = self.st["state"]
            if state == "shares":
                self._open_upload(conn, 0, sorted(r[0] for r in conn.execute(select(t_shares.c.sender))))
            elif state.startswith("upload"):
                self._close_upload(conn, int(state[-1]))
            elif state.startswith("consistency"):
                self._close_consistency(conn, int(state[-1]))
            elif state == "keys":
                n = conn.execute(select(func.count()).select_from(t_keys)).scalar()
                self._fail(f"closed with {n} registered contributors, fewer than the {self.plan.n} invited: nothing"
                           " released", conn)
            else:
                raise ApiError(409, "round_closed", f"the round is at step {state!r}: nothing to close.")
        return self.view()

    def _check_answers(self, phase: int, contributor: str, answers) -> None:
        """One contributor's answers checked on arrival: each a well-formed share of a neighbour, of the secret its
        status calls for (refused alone, the round goes on)."""
        if not isinstance(answers, dict):
            raise ApiError(400, "wrong_shape", "answers must map each sender to {'kind': 'b'|'s', 'share': hex}.")
        graph = self.graph()
        members, uploaded = self._in("members"), self._in("uploaded")
        for sender, a in answers.items():
            if sender not in members or contributor not in graph.get(sender, ()):
                raise ApiError(400, "wrong_shape", f"an answer names {str(sender)[:40]!r}, who is not a neighbour of"
                                                   f" {contributor!r} among the members of step {phase}.")
            kind = "b" if sender in uploaded else "s"
            if not isinstance(a, dict) or a.get("kind") != kind or not ss.check_share(a.get("share")):
                raise ApiError(400, "wrong_shape", f"the answer for {str(sender)[:40]!r} must be {{'kind': {kind!r},"
                                                   f" 'share': {ss.SHARE_HEX} hex digits}} (a Shamir share).")

    def post_unmask(self, phase: int, contributor: str, answers, signature) -> tuple[int, dict]:
        """A signer's answers for the unmasking of ``phase`` (signed, checked on arrival)."""
        body = json.dumps(answers, sort_keys=True)
        sha = hashlib.sha256(body.encode()).hexdigest()
        with self.lock:
            with self.engine.connect() as conn:
                old = conn.execute(select(t_unmask.c.sha).where((t_unmask.c.phase == phase)
                                                                & (t_unmask.c.contributor == contributor))).first()
            if old is not None:
                if old.sha == sha:
                    return 200, {"replayed": True}
                raise ApiError(409, "second_upload", f"contributor {contributor!r} already answered step {phase}.")
            self._need(f"unmask{phase}")
            if contributor not in self._in("signers"):
                raise ApiError(403, "not_in_round", f"contributor {contributor!r} did not sign the uploads of step"
                                                    f" {phase}.")
            self._signed(contributor, signature, ss.answers_message(self.round_id, phase, contributor, answers)
                         if isinstance(answers, dict) else b"")
            self._check_answers(phase, contributor, answers)
            with self.engine.begin() as conn:
                conn.execute(t_unmask.insert().values(phase=phase, contributor=contributor, body=body, sha=sha))
            self._try_unmask(phase, answers, contributor)
        return 201, {"replayed": False}

    def _responses(self, phase: int) -> dict:
        with self.engine.connect() as conn:
            return {r.contributor: json.loads(r.body) for r in
                    conn.execute(select(t_unmask.c.contributor, t_unmask.c.body).where(t_unmask.c.phase == phase))}

    def _try_unmask(self, phase: int, answers: dict | None = None, responder: str | None = None) -> None:
        """Count the new answers (kept in memory per step; rebuilt from the database after a restart) and unmask
        once every needed seed has its threshold of shares."""
        graph = self.graph()
        members, uploaded = set(self.st["members"]), set(self.st["uploaded"])
        counts = self._have
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
        if any(have[u] < self.T for u in needed):
            if n_resp[0] >= len(self.st["signers"]):     # every signer answered and still too few: it cannot finish
                self._fail(f"too few shares to unmask step {phase}: nothing released")
            return
        if self._unmasking != phase:      # once: off the request's thread (it may take a while)
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
        with self.engine.connect() as conn:
            total, n = self._running(conn, phase)
        if n != len(uploaded):
            raise DPTopicError(f"the running sum of step {phase} holds {n} uploads, not the {len(uploaded)} counted")
        t1 = time.perf_counter()
        total = ss.unmask_sum(total, roster, self.round_id, phase, self.graph(), self.T, members, uploaded, responses)
        t2 = time.perf_counter()
        self.timings[phase] = {"sum_s": t1 - t0, "unmask_s": t2 - t1, "uploads": len(uploaded), "dim": dim}
        # a wrap-around shows as an entry outside what the signal and the noise can reach
        limit = len(uploaded) * rounded_norms(self.plan.scale, dim)[0] + 2 ** (self.plan.bits - 2)
        if np.any(np.abs(total) > limit):
            self._fail(f"step {phase}'s sum wrapped around the modulus: nothing released")
            return
        doc = None
        if phase == 1:
            with self.engine.connect() as conn:
                s0 = json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == "sum0")).scalar())
            presence = np.frombuffer(base64.b64decode(s0["sum"]), dtype="<i8")
            doc = release_document(self.plan, self.cfg.vocabulary, self.cfg.n_topics, presence, total,
                                   (s0["shares"], len(uploaded)), self.round_id)
        with self.lock, self.engine.begin() as conn:
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
        if phase == 1:
            # the dataset ledger: the released round charged to its contributors (service/ledger.py; a failure is
            # logged, the round stays released) -- the one call of the secure-sum server into the ledger
            charge_secure_round(self.cfg.ledger, self.cfg.ledger_dataset, doc["model_json"], sorted(uploaded))

    def model_doc(self) -> dict:
        """``GET /v1/model``: the released model."""
        if self._model_doc is None:
            raise ApiError(404, "no_model", f"the round has released no model (it is at step {self.st['state']!r}"
                                            + (f": {self.st['reason']}" if self.st.get("reason") else "") + ").")
        return self._model_doc


def release_document(plan, vocabulary, n_topics: int, presence, cooc, shares: tuple[int, int], round_id: str) -> dict:
    """The model a round releases, as ``GET /v1/model`` serves it: built from the two unmasked sums, the public
    settings and the round's id alone (post-processing: the same sums give the same bytes, whatever the corpus)."""
    from ..models.secure_sum import secure_sum_topics  # start-up: models.secure_sum loads scikit-learn

    model = secure_sum_topics(plan, vocabulary, n_topics, presence, cooc, shares, {"round_id": round_id})
    with tempfile.TemporaryDirectory() as d:
        model.save(f"{d}/m")
        load_bundle(f"{d}/m")       # it loads back
        arrays = {p.stem: base64.b64encode(p.read_bytes()).decode() for p in sorted(Path(f"{d}/m").glob("*.npy"))}
        meta_json = Path(f"{d}/m/model.json").read_text()
    return {"api_version": "v1", "model_id": 1, "model_version": 1, "model_json": meta_json, "arrays": arrays}


# ----------------------------------------------------------------------------- HTTP
def _round(request: Request) -> SecureRound:
    return request.app.state.round


def _contributor(value) -> str:
    if not isinstance(value, str) or not CONTRIBUTOR.fullmatch(value):
        raise ApiError(400, "bad_contributor", "the contributor id must be 1-64 of A-Z a-z 0-9 _ -.")
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
                         "directory": cfg.directory, "max_body_bytes": cfg.max_body_bytes})


LONG_POLL_S = 20.0
"""The longest ``GET /v1/secure/round?wait=STEP`` holds its request (below a client's 30 s read timeout)."""


def _reached(state: str, step: str) -> bool:
    return state == "failed" or STATES.index(state) >= STATES.index(step)


async def get_round(request: Request):
    """``GET /v1/secure/round``: the round's view. Long polling: ``?wait=STEP`` answers once the round has reached
    STEP (or failed), or after ``timeout`` seconds (at most :data:`LONG_POLL_S`) with the view as it is. With
    ``contributor=ID`` the view also carries what that contributor needs next, sparing it a request: the closed
    roster (``include=roster``), and at an unmasking the consistency signatures of its neighbours
    (``include=signatures``)."""
    r = _round(request)
    q = request.query_params
    step = q.get("wait")
    if step is not None:
        if step not in STATES:
            raise ApiError(400, "no_such_step", f"wait names no step of the round ({', '.join(STATES)}).")
        try:
            timeout = float(q.get("timeout", LONG_POLL_S))
        except ValueError:
            timeout = -1.0
        if not 0 <= timeout <= 3600:
            raise ApiError(400, "bad_timeout", "timeout is a number of seconds, 0 or more.")
        deadline = time.monotonic() + min(timeout, LONG_POLL_S)
        pause = 0.02        # the state is looked at in memory; at most 4 times a second per waiting contributor
        while not _reached(r.st["state"], step) and time.monotonic() < deadline:
            await asyncio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(0.25, pause * 1.5)
    view = await run_in_threadpool(r.view)
    include = set(filter(None, q.get("include", "").split(",")))
    if include - {"roster", "signatures"}:
        raise ApiError(400, "bad_include", "include takes roster and signatures, comma-separated.")
    if include:
        who = _contributor(q.get("contributor"))
        state = view["state"]
        if "roster" in include and state not in ("keys", "failed"):
            view["roster"] = await run_in_threadpool(r.roster)
        if "signatures" in include and state.startswith("unmask"):
            phase = int(state[-1])
            mine = set(r.graph().get(who, ()))
            view["signatures"] = {k: v for k, v in (await run_in_threadpool(r.signatures, phase)).items()
                                  if k in mine}
    return JSONResponse(view)


async def get_roster(request: Request):
    return JSONResponse(await run_in_threadpool(_round(request).roster_view))


async def post_keys(request: Request):
    doc = await _json(request, 8192)
    status, out = await run_in_threadpool(_round(request).post_keys, _contributor(doc.get("contributor")),
                                          doc.get("keys"), doc.get("signature"))
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
    status, out = await run_in_threadpool(r.post_upload, phase, who, body, request.headers.get("dptopic-signature"))
    return JSONResponse(out, status)


async def post_consistency(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4096)
    status, out = await run_in_threadpool(_round(request).post_consistency, phase,
                                          _contributor(doc.get("contributor")), doc.get("signature"))
    return JSONResponse(out, status)


async def get_signatures(request: Request):
    phase = _phase(request)
    return JSONResponse(await run_in_threadpool(_round(request).signatures, phase))


async def post_unmask(request: Request):
    phase = _phase(request)
    doc = await _json(request, 4 * 1024 * 1024)
    status, out = await run_in_threadpool(_round(request).post_unmask, phase, _contributor(doc.get("contributor")),
                                          doc.get("answers"), doc.get("signature"))
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


def process_usage() -> dict:
    """This server process's own CPU seconds and peak resident memory since it started."""
    u = resource.getrusage(resource.RUSAGE_SELF)
    return {"pid": os.getpid(), "cpu_s": u.ru_utime + u.ru_stime, "peak_rss_bytes": u.ru_maxrss * 1024}


async def get_timings(request: Request):
    return JSONResponse({**_round(request).timings, "process": process_usage()})


async def _api_error(request: Request, exc: ApiError):
    return JSONResponse({"error": {"code": exc.code, "message": " ".join(exc.message.split())}}, exc.status)


async def _dptopic_error(request: Request, exc: DPTopicError):
    return JSONResponse({"error": {"code": "refused", "message": " ".join(str(exc).split())}}, 400)


def create_secure_sum_app(cfg: SecureSumConfig) -> Starlette:
    """The ASGI app of one secure-sum round (its database opened and checked at once)."""
    rnd = SecureRound(cfg)
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
    app = Starlette(routes=routes, exception_handlers={ApiError: _api_error, DPTopicError: _dptopic_error})
    app.state.round = rnd
    return app
