"""The server of a round in cohorts (``dptopic serve``'s secure sum with a cohort size): one process serves
every cohort's round, the bridge and the coordinator (:mod:`dptopic.protocol.secure_sum.cohorts`, read its note first).

Each cohort's round and the bridge's is a :class:`~dptopic.service.secure_sum.cohorts.CohortRound`: the secure sum's
server, with its own SQLite file beside the round's database (``round.db`` gives ``round-c0.db``, ``round-c1.db``, ...,
``round-bridge.db``), its own routes under a path prefix, the single round's (``/cohorts/{c}/v1/secure/...``,
``/bridge/v1/secure/...``: a contributor's client speaks to its cohort as to a single round's server at that
address), and the same durability: a server killed at any moment resumes from each round's receipts and running
sums, and the coordinator reads again the padded totals each round kept. The
:class:`~dptopic.service.secure_sum.cohorts.Coordinator` runs in the process: once every cohort's padded total and the
bridge's are in for a step, it reads the round's sum, chooses the kept words (step 0) and opens step 1 everywhere,
or builds the model (step 1) that every cohort then serves.

The root serves what a contributor reads first: ``GET /v1/config`` (the cohort plan, :meth:`CohortPlan.to_dict
<dptopic.protocol.secure_sum.cohorts.CohortPlan.to_dict>`, each cohort's members and where each round is served; a
contributor finds its cohort by the plan's rule and refuses a server that seats anyone elsewhere), ``GET
/v1/secure/round`` (every round's step), ``GET /v1/model`` (the released model, for ``dptopic pull``) and ``POST
/v1/admin/secure/close`` (the admin closes the round's step, the earliest of its rounds', in every round at that step,
once the survivors are in; a round past it closes its own steps).
"""
from __future__ import annotations

import asyncio
import hmac
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Mount, Route

from ...corpus import Vocabulary
from ...errors import DPTopicError, ParameterError, ParameterText
from ...protocol.secure_sum.cohort_enrollment import bridge_id, check_cohort_directory, plan_layout
from ...protocol.secure_sum.cohorts import BRIDGE_PATH, COHORT_PATH, CohortPlan
from ...protocol.secure_sum.enrollment import layout_difference
from ..lifespan import frozen_lifespan
from ..storage import safe_url
from .cohorts import CohortRound, Coordinator
from .committee_cohorts import CommitteeCohortRound, committee_cohort_app, wake_on_change
from .config import STATES, ApiError, SecureSumConfig
from .default_app import create_secure_sum_app
from .engine import _advisory_key
from .web import ERROR_HANDLERS

log = logging.getLogger("dptopic.service.secure_sum.cohort_app")
COHORT_PREFIX = COHORT_PATH
BRIDGE_PREFIX = BRIDGE_PATH
TICK_S = 0.05
"""How often the coordinator looks whether every round has unmasked a step (the rounds unmask off the requests'
threads)."""


@dataclass
class CohortSumConfig:
    """What the server of a round in cohorts is started with:
    :class:`~dptopic.service.secure_sum.config.SecureSumConfig`'s settings, with the round's
    :class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan` as ``plan`` and the operator's cohort directory
    (:func:`~dptopic.protocol.secure_sum.cohort_enrollment.make_cohort_invitations`) as ``directory``. ``database``:
    a SQLite file; each round's file lies beside it (:meth:`database_of`). ``ledger`` and ``ledger_dataset``: the
    dataset ledger the whole round is charged to, once, before any of its rounds unmasks anything
    (:meth:`~dptopic.service.secure_sum.cohorts.Coordinator.charge`)."""

    vocabulary: object
    plan: CohortPlan
    directory: dict
    n_topics: int = 20
    database: str = "sqlite:///dptopic-secure-sum.db"
    admin_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 16 * 1024 * 1024
    allow_foreign_tables: bool = False
    ledger: str | None = None
    ledger_dataset: str | None = None

    def __post_init__(self):
        if not isinstance(self.vocabulary, Vocabulary):
            self.vocabulary = Vocabulary(list(self.vocabulary))
        if self.plan.vocab_size != len(self.vocabulary):
            raise ParameterError("the plan's vocabulary size differs from {vocabulary}'s.", "vocabulary")
        cap = self.plan.round_plan
        if self.n_topics > cap.max_kept_words:      # as each round's SecureSumConfig says, before any round is made
            raise ParameterError("{n_topics=} must be at most {max_words=} (the words the second sum holds, at least"
                                 " one a topic).", "n_topics", self.n_topics, values={"max_words": cap.max_words})
        self.directory = check_cohort_directory(self.directory, where="the config's directory")
        layout, want = self.directory["layout"], plan_layout(self.plan)
        if layout != want:
            diff = layout_difference(want, layout, "{key} {pinned} in the invitations, {stated} in the plan")
            raise ParameterError("{directory} was written for another layout of the round: {diff}; start the server"
                                 " with the invitations' settings, or invite again.", "directory", diff=diff)
        self._path = self._sqlite_path(self.database)

    @staticmethod
    def _sqlite_path(url: str) -> Path | None:
        """The round's SQLite file, or None on PostgreSQL (each round then keeps its tables in a schema named by its
        round id, :meth:`part`)."""
        try:
            u = make_url(url)
        except Exception:       # noqa: BLE001 (any malformed URL: one line)
            u = None
        if u is not None and u.get_backend_name() == "postgresql":
            return None
        if u is None or u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:":
            raise ParameterError("{database=}: a round in cohorts keeps each cohort's round in its own SQLite file"
                                 " beside the round's, or in its own schema of a PostgreSQL database; give"
                                 " sqlite:///PATH or postgresql+psycopg://USER@HOST/DB.", "database",
                                 safe_url(str(url)))
        return Path(u.database)

    @property
    def sqlite_path(self) -> Path | None:
        """The round's SQLite file (each round's lies beside it), or None on PostgreSQL."""
        return self._path

    @property
    def round_id(self) -> str:
        """The whole round's id (each cohort's round adds its number)."""
        return self.directory["round_id"]

    @property
    def cohorts(self) -> int:
        """How many cohorts."""
        return len(self.directory["cohorts"])

    def database_of(self, part) -> str:
        """The SQLite URL of cohort ``part``'s round (an index), or of the bridge's (``"bridge"``); on PostgreSQL the
        round's own database (each round in its own schema)."""
        p = self._path
        if p is None:
            return self.database
        tail = "bridge" if part == "bridge" else f"c{int(part)}"
        return f"sqlite:///{p.with_name(f'{p.stem}-{tail}{p.suffix}')}"

    def part(self, part) -> SecureSumConfig:
        """The :class:`~dptopic.service.secure_sum.config.SecureSumConfig` of cohort ``part``'s round, or the bridge's
        (with the round's ``ledger``: a :class:`~dptopic.service.secure_sum.cohorts.CohortRound` then waits for the
        coordinator's one debit before it unmasks step 0; it never charges the ledger itself)."""
        if part == "bridge":
            plan, directory = self.plan.bridge_plan, self.directory["bridge"]
        else:
            plan, directory = self.plan.cohort_plans[int(part)], self.directory["cohorts"][int(part)]
        return SecureSumConfig(self.vocabulary, plan, directory, n_topics=self.n_topics,
                               database=self.database_of(part), admin_token=self.admin_token,
                               max_body_bytes=self.max_body_bytes, allow_foreign_tables=self.allow_foreign_tables,
                               ledger=self.ledger, ledger_dataset=self.ledger_dataset,
                               schema=self.schema_of(part))

    def schema_of(self, part) -> str | None:
        """On PostgreSQL the schema of cohort ``part``'s round (or the bridge's): its round id; None on SQLite."""
        if self._path is not None:
            return None
        return (self.directory["bridge"] if part == "bridge" else self.directory["cohorts"][int(part)])["round_id"]


class CohortServer:
    """Every round of a round in cohorts and its coordinator, in one process (module note)."""

    def __init__(self, cfg: CohortSumConfig, setting_names=None):
        self.cfg, self.plan = cfg, cfg.plan
        self._held = None
        self._hold()        # before any round is opened (a restart may resume one's unmasking)
        names = dict(setting_names or {})
        if self.plan.committee:         # each cohort a committee-mode round in its file (.committee_cohorts)
            self.apps = [committee_cohort_app(self.plan.cohort_plans[c], cfg.directory["cohorts"][c],
                                              cfg.vocabulary.words, cfg.n_topics, cfg.admin_token,
                                              database=cfg.database_of(c), ledger=cfg.ledger,
                                              schema=cfg.schema_of(c))
                         for c in range(cfg.cohorts)]
            self.rounds = [a.state.served.rnd for a in self.apps]
        else:
            self.apps = [create_secure_sum_app(cfg.part(c), names, freeze_gc=False, round_class=CohortRound)
                         for c in range(cfg.cohorts)]
            self.rounds = [a.state.round for a in self.apps]
        self.bridge_app = create_secure_sum_app(cfg.part("bridge"), names, freeze_gc=False, round_class=CohortRound)
        self.bridge = self.bridge_app.state.round
        self.groups = [sorted(d["members"]) for d in cfg.directory["cohorts"]]
        delegates = [self.plan.delegates(g, cfg.round_id, c) for c, g in enumerate(self.groups)]
        self.coordinator = Coordinator(self.plan, self.rounds, self.bridge, delegates,
                                       [[bridge_id(c, d) for d in ds] for c, ds in enumerate(delegates)],
                                       cfg.vocabulary, cfg.n_topics, cfg.round_id, ledger=cfg.ledger,
                                       dataset=cfg.ledger_dataset, directory=cfg.directory)
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.plan.committee:         # a member's first request (its keys) brings the round in cohorts' own
            for a in self.apps:
                a.state.served.config_extra = {"cohort_root": self.config()}
        self.advance()      # a restart: the steps every round had unmasked are read again

    def _hold(self) -> None:
        """On PostgreSQL, hold the round's advisory lock while this process serves it: the coordinator runs in one
        process, so a second server of the same round is refused in one line (on SQLite each round's file lock
        does the same)."""
        if self.cfg.sqlite_path is not None or self._held is not None:
            return
        engine = create_engine(self.cfg.database, pool_size=1, max_overflow=0)
        try:
            conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            got = conn.execute(text("SELECT pg_try_advisory_lock(:k)"),
                               {"k": _advisory_key(f"cohorts:{self.cfg.round_id}")}).scalar()
        except SQLAlchemyError as e:
            engine.dispose()
            raise ParameterError("{database=} cannot hold the round ({why}): give a new SQLite file (sqlite:///PATH)"
                                 " or a PostgreSQL database the server may write.", "database",
                                 safe_url(self.cfg.database),
                                 why=" ".join(str(getattr(e, "orig", e)).split())[:160]) from None
        if not got:
            conn.close()
            engine.dispose()
            raise DPTopicError(f"the round in cohorts {self.cfg.round_id!r} on {safe_url(self.cfg.database)!r} is"
                               " served by another server process: one process serves a round in cohorts.")
        self._held = (engine, conn)

    def _release(self) -> None:
        if self._held is not None:
            engine, conn = self._held
            self._held = None
            conn.close()
            engine.dispose()

    def advance(self) -> None:
        """One look of the coordinator (a failure of its own fails the whole round, in one line)."""
        with self.lock:
            try:
                self.coordinator.advance()
            except Exception as e:      # noqa: BLE001 (any failure fails the round, in one line, and is logged)
                log.exception("the coordinator failed")
                self.coordinator._fail(f"the coordinator failed ({' '.join(str(e).split())[:200]}): nothing released")

    def start(self) -> None:
        """The coordinator's thread: it looks every :data:`TICK_S` seconds until :meth:`stop`."""
        self._hold()
        if self.plan.committee:         # the coordinator's moves wake the cohorts' held requests on this loop
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:        # started off an event loop (a test): the long polls time out instead
                loop = None
            for a in self.apps:
                wake_on_change(a, loop)
        if self._thread is None:
            self._stop.clear()
            for r in self.parts():
                r.halt.clear()
            self._thread = threading.Thread(target=self._run, name="cohort-coordinator", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(TICK_S):
            self.advance()

    def stop(self) -> None:
        """Stop the coordinator's thread."""
        self._stop.set()
        for r in self.parts():      # an unmasking that waits for the ledger's debit gives up
            r.halt.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        self._release()

    def parts(self) -> list:
        """Every cohort's round, then the bridge's."""
        return [*self.rounds, self.bridge]

    def config(self) -> dict:
        """``GET /v1/config``: the round's public settings and its cohort plan."""
        cfg, plan = self.cfg, self.plan
        return {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "round_id": cfg.round_id,
                "vocabulary": cfg.vocabulary.words, "vocab_size": len(cfg.vocabulary), "n_topics": cfg.n_topics,
                "epsilon": plan.epsilon, "delta": plan.delta, "fed": None, "max_body_bytes": cfg.max_body_bytes,
                "cohorts": {"plan": plan.to_dict(), "members": self.groups,
                            "paths": [COHORT_PREFIX.format(c=c) for c in range(cfg.cohorts)],
                            "bridge": BRIDGE_PREFIX, "delegates_per_cohort": plan.n_delegates}}

    def view(self) -> dict:
        """``GET /v1/secure/round``: the whole round's step (the earliest of its rounds', ``failed`` if any failed,
        ``released`` once every one serves the model) and each round's."""
        views = [r.view() for r in self.parts()]
        states = [v["state"] for v in views]
        reason = self.coordinator.failed()
        if "failed" in states or reason is not None:
            state = "failed"
        else:
            state = min(states, key=STATES.index)
        return {"round_id": self.cfg.round_id, "state": state, "reason": reason, "cohorts": states[:-1],
                "bridge": states[-1], "kept": next((v["kept"] for v in views if "kept" in v), None)}

    def close(self) -> dict:
        """The admin's close of the whole round's step (:meth:`view`'s: the earliest of its rounds') in every round
        at that step; a round already past it (one no one dropped out of) is left to close its own steps, as its
        survivors answer."""
        states = [r.view()["state"] for r in self.parts()]
        if "failed" in states:
            return self.view()
        step = min(states, key=STATES.index)
        for r, state in zip(self.parts(), states):
            if state == step and (state == "shares" or state.startswith(("upload", "consistency"))
                                  or (state == "keys" and isinstance(r, CommitteeCohortRound))):
                try:
                    r.close()
                except ApiError:        # moved on meanwhile
                    pass
        self.advance()
        return self.view()


def _server(request: Request) -> CohortServer:
    return request.app.state.cohort_server


async def get_config(request: Request):
    return JSONResponse(_server(request).config())


async def get_round(request: Request):
    return JSONResponse(await run_in_threadpool(_server(request).view))


async def get_model(request: Request):
    return JSONResponse(await run_in_threadpool(_server(request).rounds[0].model_doc))


async def admin_close(request: Request):
    s = _server(request)
    token, auth = s.cfg.admin_token, request.headers.get("authorization", "")
    names = getattr(request.app.state, "setting_names", None)
    if token is None:
        raise ApiError(403, "admin_disabled", ParameterText(
            "admin endpoints are disabled: start the server with an {admin_token}.", "admin_token",
            key="service.secure_sum.admin_disabled").message(names))
    if not auth.startswith("Bearer ") or not hmac.compare_digest(auth[7:].strip().encode(), token.encode()):
        raise ApiError(403, "wrong_token", ParameterText(
            "send 'Authorization: Bearer TOKEN' (the server's {admin_token}).", "admin_token",
            key="service.secure_sum.wrong_token").message(names))
    return JSONResponse(await run_in_threadpool(s.close))


def create_cohort_app(cfg: CohortSumConfig, setting_names=None, freeze_gc: bool = True) -> Starlette:
    """The ASGI app of a round in cohorts (every round's database opened and checked at once; module note). The
    coordinator's thread runs while the app is served (its lifespan), and :attr:`state.cohort_server
    <CohortServer>` is the round's. ``setting_names`` and ``freeze_gc``: as
    :func:`~dptopic.service.secure_sum.default_app.create_secure_sum_app`'s."""
    server = CohortServer(cfg, setting_names)
    lifespan = frozen_lifespan(server.start, server.stop, freeze_gc=freeze_gc)

    routes = [Route("/v1/config", get_config, methods=["GET"]),
              Route("/v1/secure/round", get_round, methods=["GET"]),
              Route("/v1/model", get_model, methods=["GET"]),
              Route("/v1/admin/secure/close", admin_close, methods=["POST"]),
              *[Mount(COHORT_PREFIX.format(c=c), app=a) for c, a in enumerate(server.apps)],
              Mount(BRIDGE_PREFIX, app=server.bridge_app)]
    app = Starlette(routes=routes, exception_handlers=dict(ERROR_HANDLERS), lifespan=lifespan)
    app.state.cohort_server = server
    app.state.setting_names = dict(setting_names or {})
    return app




def cohort_banner(cfg: CohortSumConfig, url: str) -> str:
    """The line a server of a round in cohorts says as it starts (as :func:`~dptopic.service.startup.banner` for a
    single round)."""
    plan = cfg.plan
    d = plan.describe()
    return (f"dptopic serve: secure sum in cohorts, V={len(cfg.vocabulary)}, K={cfg.n_topics}, epsilon={plan.epsilon:g}"
            f" per person (delta={plan.delta:g}), {plan.n} invited contributors (round {cfg.round_id}) in"
            f" {d['cohorts']} cohorts of {d['cohort_sizes'][0]}-{d['cohort_sizes'][1]}, each tolerating"
            f" {d['cohort_dropouts'][0]}-{d['cohort_dropouts'][1]} dropouts, {plan.collusion} colluding, a bridge of"
            f" {d['delegates_per_cohort']} delegates a cohort; sums modulo 2^{plan.ring_bits}, noise x"
            f"{plan.noise_cost:.3f} of a single round's; "
            + (f"each cohort a committee-mode round (committees of {d['cohort_committee'][0]}-"
               f"{d['cohort_committee'][1]}); " if plan.committee else "")
            + (f"each round's database beside {cfg.sqlite_path}" if cfg.sqlite_path is not None else
               f"each round in its own schema of {safe_url(cfg.database)}")
            + (f"; charged to the dataset ledger {cfg.ledger}" if cfg.ledger else "")
            + f"; admin {'on' if cfg.admin_token else 'off'}; {url} (cohorts under /cohorts/C, the bridge under"
              " /bridge)")


__all__ = ["CohortSumConfig", "CohortServer", "create_cohort_app", "cohort_banner", "COHORT_PREFIX", "BRIDGE_PREFIX"]
