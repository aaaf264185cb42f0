"""The default round's state as stored (:class:`RoundStore`): the database opened and checked on start, each
change one transaction that holds the round's state row, the state read again when another server process has
moved the round, the running sums of the uploads, and the long polls woken when the round moves on. The tables are
:mod:`.database`'s; the steps, :mod:`.state`'s; the messages, :mod:`.default`'s."""
from __future__ import annotations

import hashlib
import json
import threading
import time
from contextlib import contextmanager

import numpy as np
from sqlalchemy import func, inspect, select
from sqlalchemy.exc import SQLAlchemyError

from ...errors import DPTopicError, ParameterError
from ...protocol.secure_sum.messages import canonical, digest
from ...protocol.secure_sum.ring import triangle_size
from ..storage import safe_url
from .config import STATES, ApiError, SecureSumConfig
from .database import _Q, meta, t_keys, t_state, t_sums, t_unmask, t_used_keys
from .engine import _open_engine, hold_round_lock

STATE_LOOK_S = 0.1
"""On PostgreSQL, the least time between two reads of a round's step from the database by one server process's long
polls (all its waiting contributors share each read)."""


class RoundStore:
    """The round's state, durable in the database. Every change is one transaction that holds the round's state row
    (on PostgreSQL ``SELECT ... FOR UPDATE``, so that several server processes share one round; on SQLite one
    process serves the round, and a lock of its own serialises its threads); what is kept in memory (the state, the
    running sums, the closed roster) is read again when the database shows another process changed it."""

    def __init__(self, cfg: SecureSumConfig):
        self.cfg, self.plan = cfg, cfg.plan
        self.round_id = cfg.round_id
        self.members = dict(cfg.directory["members"])
        self.ids = sorted(self.members)
        self.lock = threading.RLock()
        self.timings: dict = {}
        self._sums: dict = {}        # phase -> (running sum, uploads in it), as committed; keyed by the count
        self._st_raw = None          # the state row as last read or written (None: read it again)
        self._looked, self._polled = 0.0, "keys"     # long polling's reading of the state row, and when
        self._changing = 0           # inside a change (:meth:`_txn`) of this process
        self._waiters: set = set()   # long polls of this process, woken when the round's step changes (:meth:`_save`)
        self._waiters_lock = threading.Lock()
        rows, n_keys = self._open(cfg)
        self.st, self._model_doc = self._check_stored(rows, n_keys)
        self._st_raw = rows["state"]
        try:
            opened = float(json.loads(rows["opened_at"]))
        except (TypeError, ValueError):
            raise ParameterError("{database=} holds a damaged secure-sum round (its opening time does not read): give a"
                                 " new database; the contributors then join a new round.", "database",
                                 safe_url(cfg.database)) from None
        #: when the roster closes with those registered (a Unix time), or None: once every one has registered
        self.registration_deadline = None if cfg.registration_s is None else opened + float(cfg.registration_s)

    def _open(self, cfg: SecureSumConfig) -> tuple[dict, int]:
        """Open the round's database (its tables created, and a new round's first rows) and read its state rows:
        ``(the rows of the state table, the key sets registered)``; one line naming the database when it cannot
        hold the round."""
        try:
            self.engine = _open_engine(cfg.database, cfg.schema)
            self.shared = self.engine.dialect.name != "sqlite"      # several server processes may share the round
            found = set(inspect(self.engine).get_table_names())
            if "committee_round" in found and not cfg.allow_foreign_tables:     # a round restarts in its mode
                raise ParameterError("{database=} holds a committee-mode round: restart the server in the committee"
                                     " mode, as it was started, or give a new database.", "database",
                                     safe_url(cfg.database))
            foreign = sorted(found - set(meta.tables))
            if foreign and not cfg.allow_foreign_tables:
                tables = f"{', '.join(foreign[:5])}{', ...' if len(foreign) > 5 else ''}"
                line = "{database=} already holds tables that are not the secure sum's ({tables}): give a new database,"
                raise ParameterError(line + " or pass allow_foreign_tables=True to add the round's tables beside them.",
                                     "database", safe_url(cfg.database), tables=tables,
                                     others=("allow_foreign_tables",), key="service.secure_sum.store.foreign_tables")
            with self.engine.begin() as conn:
                if self.shared:     # server processes starting together: one creates the tables and the round
                    hold_round_lock(conn, self.round_id)
                meta.create_all(conn)
                rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
                if not rows:
                    conn.execute(t_state.insert(), [{"key": "settings", "value": json.dumps(self._settings())},
                                                    {"key": "round_id", "value": self.round_id},
                                                    {"key": "state", "value": json.dumps({"state": "keys"})}])
                    rows = dict(conn.execute(select(t_state.c.key, t_state.c.value)).all())
                if "opened_at" not in rows:     # when the round first opened: its registration deadline counts from it
                    rows["opened_at"] = json.dumps(time.time())
                    conn.execute(t_state.insert(), [{"key": "opened_at", "value": rows["opened_at"]}])
                n_keys = conn.execute(select(func.count()).select_from(t_keys)).scalar()
                if n_keys and not conn.execute(select(func.count()).select_from(t_used_keys)).scalar():
                    conn.execute(t_used_keys.insert(), [{"key": k} for r in conn.execute(select(t_keys.c.c, t_keys.c.s))
                                                        for k in [r.c, *json.loads(r.s)]])     # an older round's
        except DPTopicError:
            raise
        except SQLAlchemyError as e:
            raise ParameterError("{database=} cannot hold the round ({why}): give a new SQLite file (sqlite:///PATH)"
                                 " or a PostgreSQL database the server may write.", "database", safe_url(cfg.database),
                                 why=" ".join(str(getattr(e, "orig", e)).split())[:160]) from None
        return rows, n_keys

    def refresh(self, conn=None, lock: bool = False) -> None:
        """Read the round's state row again (``lock``: ``FOR UPDATE``, held to the end of ``conn``'s transaction, so
        that the server processes sharing the round change it one at a time) and, when another process has moved
        the round on, take its state (and the model, once released)."""
        if conn is None:
            with self.engine.connect() as c:
                return self.refresh(c)
        raw = conn.execute(_Q.state_locked if lock else _Q.state).scalar()
        if raw is None:
            raise DPTopicError(f"the database {safe_url(self.cfg.database)!r} lost the round's state row: give a new"
                               " database.")
        if raw == self._st_raw:
            return
        st = json.loads(raw)
        if st.get("state") == "released" and self._model_doc is None:
            model = conn.execute(select(t_state.c.value).where(t_state.c.key == "model")).scalar()
            self._model_doc = json.loads(model) if model else None
        self.st, self._st_raw = st, raw

    def fresh(self) -> None:
        """Before a request is answered: the state as committed (several server processes share the round on
        PostgreSQL; on SQLite this process alone changes it). Not within a change (:meth:`_txn` has read it)."""
        if self.shared:
            with self.lock:
                if not self._changing:
                    self.refresh()

    def current_state(self) -> str:
        """The round's step, for long polling: on PostgreSQL read from the database (as committed, whichever process
        moved it) at most 10 times a second by this process."""
        if not self.shared:
            return self.st["state"]
        if time.monotonic() - self._looked > STATE_LOOK_S:
            with self.engine.connect() as conn:
                raw = conn.execute(select(t_state.c.value).where(t_state.c.key == "state")).scalar()
            self._polled, self._looked = json.loads(raw)["state"], time.monotonic()
        return self._polled

    @contextmanager
    def _txn(self):
        """One change of the round: a transaction holding the round's state row (``SELECT ... FOR UPDATE`` on
        PostgreSQL: the server processes sharing the round change it one at a time; this process's lock besides), the
        state read again first. A change that fails rolls back, and the state is read again by the next."""
        with self.lock:
            self._changing += 1
            try:
                with self.engine.begin() as conn:
                    if self.shared or self._st_raw is None:
                        self.refresh(conn, lock=True)
                    yield conn
            except BaseException:
                self._st_raw = None      # what this change set in memory is not committed
                raise
            finally:
                self._changing -= 1

    def _settings(self) -> dict:
        return {"plan": self.plan.to_dict(), "n_topics": self.cfg.n_topics,
                "directory_sha256": digest(canonical(self.cfg.directory)),
                "vocabulary_sha256": hashlib.sha256("\n".join(self.cfg.vocabulary.words).encode()).hexdigest()}

    def _check_stored(self, rows: dict, n_keys: int) -> tuple[dict, dict | None]:
        """The stored state checked on start: the same settings, a known step with its fields, a model when
        released, every key of a closed roster; one line naming the database otherwise."""
        db = safe_url(self.cfg.database)

        def damaged(what):
            return ParameterError("{database=} holds a damaged secure-sum round ({what}): give a new database; the"
                                  " contributors then join a new round.", "database", db, what=what)
        try:
            settings = json.loads(rows["settings"])
            st = json.loads(rows["state"])
            model = json.loads(rows["model"]) if "model" in rows else None
        except (KeyError, TypeError, ValueError):
            raise damaged("its settings, state or model do not read") from None
        if settings != self._settings() or rows.get("round_id") != self.round_id:
            raise ParameterError("{database=} holds a secure-sum round with other settings (plan, vocabulary or"
                                 " directory): give a new database, or the same settings.", "database", db)
        state = st.get("state") if isinstance(st, dict) else None
        if state not in STATES:
            raise damaged(f"an unknown step {str(state)[:40]!r}")
        if state not in ("keys", "failed"):     # the roster's size as it closed (a round stored before: n)
            try:
                closed = int(json.loads(rows["roster"])) if "roster" in rows else self.plan.n
            except (TypeError, ValueError):
                raise damaged("its roster's size does not read") from None
            if n_keys != closed or not self.plan.n - self.plan.dropouts <= closed <= self.plan.n:
                raise damaged(f"{n_keys} registered keys for a closed roster of {closed}")
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
        raw = json.dumps(self.st)
        # the state row is updated in place, never deleted and inserted again: a process waiting on its lock
        # (FOR UPDATE) then reads the new row; a new row would leave it with none, and unlocked
        conn.execute(_Q.save_state, {"p_value": raw})
        if extra:
            conn.execute(t_state.delete().where(t_state.c.key.in_(list(extra))))
            conn.execute(t_state.insert(), [{"key": k, "value": json.dumps(v)} for k, v in extra.items()])
        self._st_raw = raw
        self._wake()

    def listen(self, wake) -> None:
        """Call ``wake()`` (from whichever thread changes the round) each time this process moves the round to another
        step, until :meth:`unlisten`: a long poll then answers at once rather than at its next look. (Another server
        process's change is seen at the next look, as before.)"""
        with self._waiters_lock:
            self._waiters.add(wake)

    def unlisten(self, wake) -> None:
        """Stop calling ``wake``."""
        with self._waiters_lock:
            self._waiters.discard(wake)

    def _wake(self) -> None:
        with self._waiters_lock:
            waiters = list(self._waiters)
        for wake in waiters:
            wake()

    def shares_for(self, contributor: str, conn=None) -> dict:
        """The ciphertexts addressed to ``contributor`` (by the members of step 0: those who sent shares)."""
        if conn is None:
            self.fresh()
        if self.st["state"] in ("keys", "shares"):
            raise ApiError(409, "not_open", "the shares are handed out once the sharing step has closed.")
        if conn is not None:
            return {r.sender: r.ct for r in conn.execute(_Q.shares_for, {"p_who": contributor})}
        with self.engine.connect() as c:
            return {r.sender: r.ct for r in c.execute(_Q.shares_for, {"p_who": contributor})}

    def dim(self, phase: int) -> int:
        """Entries of an upload of ``phase``."""
        return self.plan.vocab_size + 1 if phase == 0 else triangle_size(len(self.st["kept"]))

    def _running(self, conn, phase: int) -> tuple[np.ndarray, int]:
        """``(running sum, uploads in it)`` of ``phase``: kept in memory, read from the database after a restart or when
        another server process has added to it (its count differs from the one in memory)."""
        if phase in self._sums and self.shared:
            count = conn.execute(select(t_sums.c.count).where(t_sums.c.phase == phase)).scalar()
            if (count or 0) != self._sums[phase][1]:
                del self._sums[phase]
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

    def _responses(self, phase: int) -> dict:
        with self.engine.connect() as conn:
            return {r.contributor: json.loads(r.body) for r in
                    conn.execute(select(t_unmask.c.contributor, t_unmask.c.body).where(t_unmask.c.phase == phase))}

    def timings_view(self) -> dict:
        """``GET /v1/secure/timings``: each unmasked step's sum and unmasking seconds (by whichever server process
        unmasked it)."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(t_state.c.key, t_state.c.value).where(t_state.c.key.in_(["timings0",
                                                                                                "timings1"])))
            return {**{k[-1]: json.loads(v) for k, v in rows}, **{str(k): v for k, v in self.timings.items()}}
