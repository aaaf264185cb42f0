"""A round in cohorts simulated in one process with the real code on both sides: every cohort's server and the
bridge's (:class:`dptopic.service.cohorts.CohortRound`, called directly, no HTTP, each on its own SQLite file), the
:class:`~dptopic.service.cohorts.Coordinator`, and every person as a real contributor
(:class:`dptopic.contributor.cohorts.CohortContributor`, a delegate also as a
:class:`~dptopic.contributor.cohorts.BridgeContributor`). The steps are driven in lock-step, round by round; what a
server *says* to a contributor goes through :meth:`CohortSimulation.say`, which a test replaces to make it lie.

Used by ``benchmarks/bench_secure_sum.py --cohorts`` and by the tests (tests/protocol, tests/privacy)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np


def _directory(enroll_private: bytes, round_id: str, ids) -> tuple[dict, dict]:
    """``(directory, {id: signing key})``: a signed directory of fresh invitation keys (what ``dptopic secure-sum
    invite`` writes, kept in memory)."""
    from dptopic.protocol.enrollment import DIRECTORY_FORMAT, VERSION, directory_message
    from dptopic.protocol.secure_sum import new_signing_key, sign, signing_public

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


class CohortSimulation:
    """A round of ``len(bows)`` people under ``plan`` (a :class:`~dptopic.protocol.cohorts.CohortPlan`) in ``tmp``.
    The rounding and noise are seeded from ``seed`` (a simulation) unless ``secure``; the keys, masks and pads always
    come from the OS CSPRNG. ``progress``: a callable given one line per stage (timings)."""

    def __init__(self, tmp, plan, bows, words, topics: int = 3, seed: int = 0, secure: bool = False,
                 round_id: str = "round1", progress=None):
        from dptopic.contributor.cohorts import BridgeContributor, CohortContributor, Pads
        from dptopic.protocol.cohorts import bridge_round_id, cohort_round_id
        from dptopic.protocol.enrollment import contributor_ids
        from dptopic.protocol.secure_sum import new_signing_key, signing_public
        from dptopic.service.cohorts import CohortRound, Coordinator
        from dptopic.service.secure_sum import SecureSumConfig

        self.tmp, self.plan, self.words = Path(tmp), plan, list(words)
        self.tmp.mkdir(parents=True, exist_ok=True)
        self.progress = progress or (lambda line: None)
        self.refused: dict = {}
        self.timings: dict = {}
        t0 = time.perf_counter()
        enroll = new_signing_key()
        ids = contributor_ids(len(bows))
        bow_of = dict(zip(ids, bows))
        self.groups = plan.cohorts(ids, round_id)
        self.servers, self.people, self.delegates, bridge_ids = [], [], [], []
        pads: dict = {}
        rng = None if secure else np.random.default_rng(seed)
        for c, members in enumerate(self.groups):
            rid = cohort_round_id(round_id, c)
            directory, keys = _directory(enroll, rid, members)
            cfg = SecureSumConfig(self.words, plan.cohort_plans[c], directory, n_topics=topics,
                                  database=f"sqlite:///{self.tmp}/cohort-{c}.sqlite")
            server = CohortRound(cfg)
            config = _config(server, self.words, plan.cohort_plans[c])
            delegates = plan.delegates(members, round_id, c)
            self.delegates.append(delegates)
            bridge_ids.append([f"c{c}-{d}" for d in delegates])
            people = []
            for i in members:
                inv = {"round_id": rid, "contributor": i, "count": len(members), "signing_key": keys[i],
                       "enrollment_key": signing_public(enroll).hex()}
                p = pads[i] = Pads() if i in delegates else None
                coins = None if rng is None else np.random.default_rng(rng.integers(2**63))
                people.append(CohortContributor(config, bow_of[i], inv, plan, round_id, c, p, rng=coins))
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
        self.progress(f"set up {len(ids):,} contributors in {len(self.groups)} cohorts and a bridge of {len(flat)}"
                      f" delegates: {self.timings['setup_s']:.1f} s")

    # ------------------------------------------------------------ what the servers say
    def say(self, where: int, step: str, who: str, what: str, value):
        """What round ``where`` (a cohort's index, or -1 for the bridge) tells ``who`` at ``step`` (``what``: view,
        roster, shares or signatures); honest here."""
        return value

    def rounds(self):
        """``(index, server, contributors)`` of every cohort, then the bridge (index -1)."""
        return [*((k, s, p) for k, (s, p) in enumerate(zip(self.servers, self.people))),
                (-1, self.bridge, self.bridge_people)]

    def _run(self, c, step, f, *args):
        from dptopic.contributor.secure_sum import LeftOut, ServerLied

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
        for _, server, people in self.rounds():
            for c in people:
                r = c.registration()
                server.post_keys(r["contributor"], r["keys"], r["signature"])

    def shares(self):
        for k, server, people in self.rounds():
            roster = server.roster_view()
            for c in people:
                q = self._run(c, "shares", c.shares_request, self.say(k, "shares", c.me, "roster", roster))
                if q is not None:
                    server.post_shares(q["contributor"], q["shares"])

    def upload(self, phase: int, drop=(), bridge_drop=()):
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
                if phase == 0:
                    c.take_shares(self.say(k, "upload0", c.me, "shares", answer.get("shares", {})))
            if server.view()["state"] == f"upload{phase}":
                server.close()

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

    def unmask(self, phase: int, timeout: float = 3600.0):
        from dptopic.service.secure_sum import ApiError

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
        deadline = time.monotonic() + timeout       # each server unmasks off the caller's thread
        while time.monotonic() < deadline:
            states = [s.st["state"] for _, s, _ in self.rounds()]
            if self.coordinator.ready(phase) or any(not s.startswith("unmask") for s in states):
                break
            time.sleep(0.02)
        return self.coordinator.step(phase)

    def run(self, drop0=(), bridge_drop0=()) -> str:
        """Every step; ``drop0``: people (their ids in the cohorts) who mask step 0 and never upload, in their cohort
        and the bridge; ``bridge_drop0``: delegates who upload in their cohort but not in the bridge. Returns the
        round's outcome: ``released`` or ``failed: why``."""
        t = time.perf_counter()
        self.keys()
        self.shares()
        self.timings["keys_shares_s"] = time.perf_counter() - t
        self.progress(f"keys and shares: {self.timings['keys_shares_s']:.1f} s")
        for phase in (0, 1):
            t = time.perf_counter()
            self.upload(phase, drop=drop0 if phase == 0 else (), bridge_drop=bridge_drop0 if phase == 0 else ())
            self.consistency(phase)
            self.unmask(phase)
            self.timings[f"step{phase}_s"] = time.perf_counter() - t
            self.progress(f"step {phase}: {self.timings[f'step{phase}_s']:.1f} s")
            if self.coordinator.failed() or phase not in self.coordinator.sums:
                break
        why = self.coordinator.failed()
        if why is None and self.coordinator.model_doc is None:
            why = "the round stopped before its release: " + ", ".join(
                f"{k}:{s.st['state']}" for k, s, _ in self.rounds() if s.st["state"] != "unmask1")[:300]
        return "released" if why is None else f"failed: {why}"
