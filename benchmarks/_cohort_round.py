"""A round in cohorts simulated with the real code on both sides: every cohort's server and the bridge's
(:class:`dptopic.service.secure_sum.cohorts.CohortRound`, called directly, no HTTP, each on its own SQLite file), the
:class:`~dptopic.service.secure_sum.cohorts.Coordinator`, and every person as a real contributor
(:class:`dptopic.contributor.secure_sum.cohorts.CohortContributor`, a delegate also as a
:class:`~dptopic.contributor.secure_sum.cohorts.BridgeContributor`). The steps are driven in lock-step, round by round;
what a server *says* to a contributor goes through :meth:`CohortSimulation.say`, which a test replaces to make it lie.

In one process by default; with ``workers=W`` the cohorts are dealt to ``W`` spawned processes (cohort ``c`` to worker
``c mod W``), each running its cohorts' servers and people, while the bridge and the coordinator stay in this
process: the cohorts are independent until the coordinator reads their padded totals, so the steps run side by side.
Every cohort's rounding and noise come from its own seed sequence spawned from ``seed`` (:func:`cohort_streams`), so a
seeded round releases the same sums in one process or in several; keys, masks and pads always come from the OS
CSPRNG, where the real code takes them.

Used by ``benchmarks/bench_secure_sum.py --simulate`` and by the tests (tests/protocol, tests/privacy,
tests/benchmarks)."""
from __future__ import annotations

import multiprocessing
import resource
import time
import traceback
from pathlib import Path

import numpy as np


def _directory(enroll_private: bytes, round_id: str, ids) -> tuple[dict, dict]:
    """``(directory, {id: signing key})``: a signed directory of fresh invitation keys (what ``dptopic secure-sum
    invite`` writes, kept in memory)."""
    from dptopic.protocol.secure_sum.crypto import new_signing_key, sign, signing_public
    from dptopic.protocol.secure_sum.enrollment import DIRECTORY_FORMAT, VERSION, directory_message

    keys = {i: new_signing_key() for i in ids}
    members = {i: signing_public(k).hex() for i, k in keys.items()}
    directory = {"format": DIRECTORY_FORMAT, "version": VERSION, "round_id": round_id,
                 "enrollment_key": signing_public(enroll_private).hex(), "members": members,
                 "signature": sign(enroll_private, directory_message(round_id, members))}
    return directory, keys


def _config(server, words, plan) -> dict:
    return {"api_version": "v1", "report_kind": "secure-sum", "unit": "user", "vocabulary": list(words),
            "vocab_size": len(words), "n_topics": server.cfg.n_topics, "round_id": server.round_id,
            "secure_sum": plan.to_dict(), "epsilon": plan.epsilon, "delta": plan.delta, "fed": None,
            "directory": server.cfg.directory, "max_body_bytes": server.cfg.max_body_bytes}


def cohort_streams(seed: int, cohorts: int) -> list:
    """One seed sequence per cohort, spawned from ``seed``: a cohort's draws do not depend on the process it runs in."""
    return np.random.SeedSequence(seed).spawn(cohorts)


def _build_cohort(tmp, plan, c: int, members, bows, words, topics: int, enroll: bytes, round_id: str, coins,
                  pads_of: dict):
    """Cohort ``c``'s server and people (``bows``: its members', in order). ``coins``: the cohort's Generator (each
    person's rounding and noise from a seed it gives, in member order), or None for the OS CSPRNG; each delegate's
    fresh :class:`~dptopic.contributor.secure_sum.cohorts.Pads` go into ``pads_of``. Returns ``(server, people,
    delegates)``."""
    from dptopic.contributor.secure_sum.cohorts import CohortContributor, Pads
    from dptopic.protocol.secure_sum.cohorts import cohort_round_id
    from dptopic.protocol.secure_sum.crypto import signing_public
    from dptopic.service.secure_sum.cohorts import CohortRound
    from dptopic.service.secure_sum.config import SecureSumConfig

    rid = cohort_round_id(round_id, c)
    directory, keys = _directory(enroll, rid, members)
    cfg = SecureSumConfig(list(words), plan.cohort_plans[c], directory, n_topics=topics,
                          database=f"sqlite:///{tmp}/cohort-{c}.sqlite")
    server = CohortRound(cfg)
    config = _config(server, words, plan.cohort_plans[c])
    delegates = plan.delegates(members, round_id, c)
    people = []
    for i, bow in zip(members, bows):
        inv = {"round_id": rid, "contributor": i, "count": len(members), "signing_key": keys[i],
               "enrollment_key": signing_public(enroll).hex()}
        p = pads_of[i] = Pads() if i in delegates else None
        rng = None if coins is None else np.random.default_rng(coins.integers(2**63))
        people.append(CohortContributor(config, bow, inv, plan, round_id, c, p, rng=rng))
    return server, people, delegates


def usage() -> dict:
    """This process's CPU seconds (user and system) and peak resident memory in bytes: Linux's ``VmHWM`` where there
    is one (``ru_maxrss`` keeps, across the exec of a spawned process, the peak of the process it was forked from: a
    worker spawned by a parent of 600 MiB would report at least 600 MiB)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    peak = ru.ru_maxrss * 1024
    try:
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        pass
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_bytes": peak}


class _Steps:
    """The steps of a round, each over the rounds this process holds (:meth:`rounds`)."""

    refused: dict

    def rounds(self) -> list:
        """``(index, server, contributors)`` of each round held here (index -1: the bridge)."""
        raise NotImplementedError

    def say(self, where: int, step: str, who: str, what: str, value):
        """What round ``where`` (a cohort's index, or -1 for the bridge) tells ``who`` at ``step`` (``what``: view,
        roster, shares or signatures); honest here."""
        return value

    def done(self, where: int, step: str, people: int) -> None:
        """Round ``where`` has been through ``step`` (``people``: its contributors here); nothing by default."""

    def _run(self, c, step, f, *args):
        from dptopic.contributor.secure_sum.checks import LeftOut, ServerLied

        try:
            return f(*args)
        except ServerLied as e:
            self.refused[(c.round_id, c.me)] = (step, str(e))
        except LeftOut:
            pass
        return None

    def _gone(self, c, drop) -> bool:
        tail = c.me.split("-", 1)[-1]
        return (c.round_id, c.me) in self.refused or c.me in drop or tail in drop or f"x-{tail}" in drop

    # ------------------------------------------------------------ steps, each over every round
    def keys(self):
        for k, server, people in self.rounds():
            for c in people:
                r = c.registration()
                server.post_keys(r["contributor"], r["keys"], r["signature"])
            self.done(k, "keys", len(people))

    def shares(self):
        for k, server, people in self.rounds():
            roster = server.roster_view()
            for c in people:
                q = self._run(c, "shares", c.shares_request, self.say(k, "shares", c.me, "roster", roster))
                if q is not None:
                    server.post_shares(q["contributor"], q["shares"])
                    c.acknowledged("shares")        # never resent here: the copy kept for a resend goes
            self.done(k, "shares", len(people))

    def upload(self, phase: int, drop=(), bridge_drop=()):
        drop = set(drop)
        for k, server, people in self.rounds():
            if k == -1:
                drop = set(drop) | {f"x-{i}" for i in bridge_drop}
            if server.view()["state"] != f"upload{phase}":
                continue
            view = server.view()
            for c in people:
                if self._gone(c, drop):
                    continue
                out = self._run(c, f"upload{phase}", c.upload, phase, self.say(k, f"upload{phase}", c.me, "view", view))
                if out is None:
                    continue
                status, answer = server.post_upload(phase, c.me, *out)
                c.acknowledged(f"upload{phase}")
                if phase == 0:
                    c.take_shares(self.say(k, "upload0", c.me, "shares", answer.get("shares", {})))
            if server.view()["state"] == f"upload{phase}":
                server.close()
            self.done(k, f"upload{phase}", len(people))

    def consistency(self, phase: int):
        for k, server, people in self.rounds():
            view = server.view()
            if view["state"] != f"consistency{phase}":
                continue
            up = set(view["uploaded"])
            for c in people:
                if (c.round_id, c.me) in self.refused or c.me not in up:
                    continue
                q = self._run(c, f"consistency{phase}", c.consistency, phase,
                              self.say(k, f"consistency{phase}", c.me, "view", view))
                if q is not None:
                    server.post_consistency(phase, q["contributor"], q["signature"])
            if server.view()["state"] == f"consistency{phase}":
                server.close()
            self.done(k, f"consistency{phase}", len(people))

    def unmask_here(self, phase: int, timeout: float = 3600.0) -> None:
        """Every signer's answers to its round's server, then wait until each round held here has unmasked
        ``phase`` (each server unmasks off the caller's thread) or left the step."""
        from dptopic.service.secure_sum.config import ApiError

        for k, server, people in self.rounds():
            view = server.view()
            if view["state"] != f"unmask{phase}":
                continue
            sigs = server.signatures(phase)
            signers = set(view["signers"])
            for c in people:
                if (c.round_id, c.me) in self.refused or c.me not in signers:
                    continue
                q = self._run(c, f"unmask{phase}", c.unmask, phase, self.say(k, f"unmask{phase}", c.me, "view", view),
                              self.say(k, f"unmask{phase}", c.me, "signatures", sigs))
                if q is None:
                    continue
                try:
                    server.post_unmask(phase, q["contributor"], q["answers"], q["signature"])
                except ApiError as e:
                    if e.code != "round_closed":
                        raise
                c.acknowledged(f"unmask{phase}")
            self.done(k, f"unmask{phase}", len(people))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if all(phase in s.padded or not s.st["state"].startswith("unmask") for _, s, _ in self.rounds()):
                break
            time.sleep(0.02)


class _Worker(_Steps):
    """A worker process's cohorts (``cohorts``: ``{c: (members, bows, seed sequence or None)}``)."""

    def __init__(self, tmp, plan, cohorts: dict, words, topics: int, enroll: bytes, round_id: str, worker: int = 0,
                 verbose: bool = False):
        self.worker, self.verbose, self.started = worker, verbose, time.perf_counter()
        self.refused: dict = {}
        self.held = []
        self.pads: dict = {}
        for c, (members, bows, stream) in sorted(cohorts.items()):
            coins = None if stream is None else np.random.default_rng(stream)
            server, people, _ = _build_cohort(tmp, plan, c, members, bows, words, topics, enroll, round_id, coins,
                                              self.pads)
            self.held.append((c, server, people))
        self.by_index = {c: server for c, server, _ in self.held}

    def rounds(self) -> list:
        """This worker's cohorts."""
        return self.held

    def done(self, where: int, step: str, people: int) -> None:
        """With ``verbose``, one line on standard output per cohort and step: a partial run still shows its pace."""
        if self.verbose:
            u = usage()
            print(f"    worker {self.worker}: cohort {where} {step} ({people} people) at"
                  f" {time.perf_counter() - self.started:.0f} s, CPU {u['cpu_s']:.0f} s, peak"
                  f" {u['peak_rss_bytes'] / 2**20:.0f} MiB", flush=True)

    def states(self, phase: int | None = None) -> dict:
        """``{c: (state, reason, {phase: padded total and uploaders}, when unmasked)}``."""
        return {c: (s.st["state"], s.st.get("reason"), {phase: s.padded[phase]} if phase in s.padded else {})
                for c, s, _ in self.held}

    def call(self, name: str, *args):
        """One command of the parent: a step over every cohort held here, or a coordinator's call to one."""
        if name in ("open_step1", "release", "fail"):
            c, *rest = args
            getattr(self.by_index[c], name)(*rest)
            return self.states()
        if name == "report":
            return {**usage(), "refused": [[r, m, list(v)] for (r, m), v in self.refused.items()],
                    "timings": {c: dict(s.timings) for c, s, _ in self.held}}
        getattr(self, name)(*args)
        return self.states(args[0] if name == "unmask_here" else None)


def _worker_main(conn, setup: dict) -> None:
    """A worker process: build its cohorts, send their delegates' pad seeds, then answer commands until ``stop``."""
    start = time.perf_counter()
    try:
        w = _Worker(**setup)
        conn.send(("ok", {i: [seed.hex() for seed in p.seeds] for i, p in w.pads.items() if p is not None}))
    except Exception:       # noqa: BLE001 (the parent prints it and stops)
        conn.send(("error", traceback.format_exc()))
        return
    while True:
        name, args = conn.recv()
        if name == "stop":
            conn.send(("ok", {**usage(), "wall_s": time.perf_counter() - start}))
            return
        try:
            conn.send(("ok", w.call(name, *args)))
        except Exception:       # noqa: BLE001
            conn.send(("error", traceback.format_exc()))


class _RemoteCohort:
    """A cohort's server in a worker process, as the coordinator sees it: its padded totals and state, mirrored after
    each command, and the coordinator's three calls sent on."""

    def __init__(self, sim: CohortSimulation, worker: int, c: int):
        self.sim, self.worker, self.c = sim, worker, c
        self.padded: dict = {}
        self.st: dict = {"state": "keys"}
        self.timings: dict = {}

    def open_step1(self, kept) -> None:
        """Step 1 opens with the coordinator's kept words."""
        self.sim._call(self.worker, "open_step1", self.c, [int(k) for k in kept])

    def release(self, doc: dict) -> None:
        """The round's model, served by this cohort."""
        self.sim._call(self.worker, "release", self.c, doc)

    def fail(self, reason: str) -> None:
        """The coordinator fails the round here."""
        self.sim._call(self.worker, "fail", self.c, reason)


class CohortSimulation(_Steps):
    """A round of ``len(bows)`` people under ``plan`` (a :class:`~dptopic.protocol.secure_sum.cohorts.CohortPlan`) in
    ``tmp``.
    The rounding and noise are seeded from ``seed`` (one stream a cohort, :func:`cohort_streams`) unless ``secure``;
    the keys, masks and pads always come from the OS CSPRNG. ``workers``: run the cohorts in that many spawned
    processes (None: all in this one). ``progress``: a callable given one line per stage (timings); ``verbose``: each
    worker also prints a line per cohort and step."""

    def __init__(self, tmp, plan, bows, words, topics: int = 3, seed: int = 0, secure: bool = False,
                 round_id: str = "round1", progress=None, workers: int | None = None, verbose: bool = False):
        from dptopic.contributor.secure_sum.cohorts import BridgeContributor, Pads
        from dptopic.protocol.secure_sum.cohorts import bridge_round_id
        from dptopic.protocol.secure_sum.crypto import new_signing_key, signing_public
        from dptopic.protocol.secure_sum.enrollment import contributor_ids
        from dptopic.service.secure_sum.cohorts import CohortRound, Coordinator
        from dptopic.service.secure_sum.config import SecureSumConfig

        self.tmp, self.plan, self.words = Path(tmp), plan, list(words)
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.progress = progress or (lambda line: None)
        self.refused: dict = {}
        self.timings: dict = {}
        self.processes: list = []
        self._conns: list = []
        self._procs: list = []
        t0 = time.perf_counter()
        self.started = t0
        enroll = new_signing_key()
        ids = contributor_ids(len(bows))
        bow_of = dict(zip(ids, bows))
        self.groups = plan.cohorts(ids, round_id)
        streams = cohort_streams(seed, len(self.groups))
        self.servers, self.people, self.delegates, bridge_ids = [], [], [], []
        pads: dict = {}
        if workers:
            ctx = multiprocessing.get_context("spawn")      # no fork of a process that may hold threads
            for w in range(int(workers)):
                mine = {c: (self.groups[c], [bow_of[i] for i in self.groups[c]], None if secure else streams[c])
                        for c in range(w, len(self.groups), int(workers))}
                if not mine:
                    continue
                parent, child = ctx.Pipe()
                setup = {"tmp": str(self.tmp), "plan": plan, "cohorts": mine, "words": self.words, "topics": topics,
                         "enroll": enroll, "round_id": round_id, "worker": w, "verbose": verbose}
                proc = ctx.Process(target=_worker_main, args=(child, setup), daemon=True)
                proc.start()
                self._conns.append(parent)
                self._procs.append(proc)
            try:
                for k in range(len(self._conns)):
                    pads.update({i: Pads([bytes.fromhex(h) for h in seeds]) for i, seeds in self._answer(k).items()})
            except BaseException:
                self.close()
                raise
            owner = {c: k for k in range(len(self._conns)) for c in range(k, len(self.groups), len(self._conns))}
            for c, members in enumerate(self.groups):
                self.servers.append(_RemoteCohort(self, owner[c], c))
                self.people.append([])
                delegates = plan.delegates(members, round_id, c)
                self.delegates.append(delegates)
                bridge_ids.append([f"c{c}-{d}" for d in delegates])
        else:
            for c, members in enumerate(self.groups):
                coins = None if secure else np.random.default_rng(streams[c])
                server, people, delegates = _build_cohort(self.tmp, plan, c, members, [bow_of[i] for i in members],
                                                          self.words, topics, enroll, round_id, coins, pads)
                self.delegates.append(delegates)
                bridge_ids.append([f"c{c}-{d}" for d in delegates])
                self.servers.append(server)
                self.people.append(people)
        brid = bridge_round_id(round_id)
        flat = [b for bs in bridge_ids for b in bs]
        directory, keys = _directory(enroll, brid, flat)
        cfg = SecureSumConfig(self.words, plan.bridge_plan, directory, n_topics=topics,
                              database=f"sqlite:///{self.tmp}/bridge.sqlite")
        self.bridge = CohortRound(cfg)
        config = _config(self.bridge, self.words, plan.bridge_plan)
        self.bridge_people = [BridgeContributor(config, {"round_id": brid, "contributor": b, "count": len(flat),
                                                         "signing_key": keys[b],
                                                         "enrollment_key": signing_public(enroll).hex()},
                                                plan, round_id, pads[b.split("-", 1)[1]]) for b in flat]
        self.coordinator = Coordinator(plan, self.servers, self.bridge, self.delegates, bridge_ids, self.words, topics,
                                       round_id)
        self.timings["setup_s"] = time.perf_counter() - t0
        self.progress(f"set up {len(ids):,} contributors in {len(self.groups)} cohorts"
                      f"{f' ({len(self._conns)} worker processes)' if self._conns else ''} and a bridge of {len(flat)}"
                      f" delegates: {self.timings['setup_s']:.1f} s")

    # ------------------------------------------------------------ the worker processes
    def _answer(self, k: int):
        status, value = self._conns[k].recv()
        if status != "ok":
            raise RuntimeError(f"cohort worker {k} failed:\n{value}")
        return value

    def _mirror(self, states: dict) -> None:
        for c, (state, reason, padded) in states.items():
            r = self.servers[c]
            r.st = {"state": state, "reason": reason}
            r.padded.update(padded)

    def _call(self, k: int, name: str, *args):
        self._conns[k].send((name, args))
        self._mirror(self._answer(k))

    def _everywhere(self, name: str, *args) -> None:
        """``name`` over every round: sent to the workers, run on the bridge here meanwhile, then their answers."""
        for conn in self._conns:
            conn.send((name, args))
        getattr(self, name)(*args)
        for k in range(len(self._conns)):
            self._mirror(self._answer(k))

    def close(self) -> list:
        """Stop the worker processes; their CPU seconds, peak memory and wall time (``processes``)."""
        for k, conn in enumerate(self._conns):
            try:
                conn.send(("stop", ()))
                self.processes.append({"process": f"worker {k}", **self._answer(k)})
            except (OSError, EOFError, RuntimeError):
                pass
        for proc in self._procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.terminate()
        self._conns, self._procs = [], []
        return self.processes

    def report(self) -> dict:
        """The workers' refusals and servers' timings (``{"refused", "timings"}``), or this process's."""
        if not self._conns:
            return {"refused": self.refused, "timings": {k: s.timings for k, s, _ in self.rounds()}}
        out = {"refused": dict(self.refused), "timings": {-1: self.bridge.timings}}
        for k, conn in enumerate(self._conns):
            conn.send(("report", ()))
            status, value = conn.recv()
            if status == "ok":
                out["refused"].update({(r, m): tuple(v) for r, m, v in value["refused"]})
                out["timings"].update({int(c): t for c, t in value["timings"].items()})
        return out

    def rounds(self):
        """``(index, server, contributors)`` of every cohort held in this process, then the bridge (index -1)."""
        here = [] if self._conns else [(k, s, p) for k, (s, p) in enumerate(zip(self.servers, self.people))]
        return [*here, (-1, self.bridge, self.bridge_people)]

    def unmask(self, phase: int, timeout: float = 3600.0):
        """Every round's unmasking of ``phase``, then the coordinator's reading of the round's sum."""
        self._everywhere("unmask_here", phase, timeout)
        return self.coordinator.step(phase)

    def run(self, drop0=(), bridge_drop0=()) -> str:
        """Every step; ``drop0``: people (their ids in the cohorts) who mask step 0 and never upload, in their cohort
        and the bridge; ``bridge_drop0``: delegates who upload in their cohort but not in the bridge. Returns the
        round's outcome: ``released`` or ``failed: why``. The worker processes, if any, are stopped at the end
        (their figures in :attr:`processes`)."""
        try:
            t = time.perf_counter()
            self._everywhere("keys")
            self._everywhere("shares")
            self.timings["keys_shares_s"] = time.perf_counter() - t
            self.progress(f"keys and shares: {self.timings['keys_shares_s']:.1f} s")
            for phase in (0, 1):
                t = time.perf_counter()
                self._everywhere("upload", phase, tuple(drop0) if phase == 0 else (),
                                 tuple(bridge_drop0) if phase == 0 else ())
                self._everywhere("consistency", phase)
                self.unmask(phase)
                self.timings[f"step{phase}_s"] = time.perf_counter() - t
                self.progress(f"step {phase}: {self.timings[f'step{phase}_s']:.1f} s")
                if self.coordinator.failed() or phase not in self.coordinator.sums:
                    break
            self.server_report = self.report()
            self.refused.update(self.server_report["refused"])
        finally:
            if self._conns:
                self.close()
        why = self.coordinator.failed()
        if why is None and self.coordinator.model_doc is None:
            why = "the round stopped before its release: " + ", ".join(
                f"{k}:{s.st['state']}" for k, s in enumerate([*self.servers, self.bridge])
                if s.st["state"] != "unmask1")[:300]
        return "released" if why is None else f"failed: {why}"
