"""The servers of a round in cohorts (:mod:`dptopic.protocol.secure_sum.cohorts`, read its note first): one
:class:`CohortRound` per cohort and one for the bridge, and the :class:`Coordinator` that adds their totals.

A :class:`CohortRound` is the secure sum's server (:class:`~dptopic.service.secure_sum.default.SecureRound`: the same
admission, checks, durable receipts and running sums, the same unmasking) with one change: what it unmasks is not a
release but a padded total (its cohort's sum minus its delegates' pads, or the bridge's sum of pads), uniform in the
ring, which it keeps (durably) for the coordinator and does not check for a wrap-around (a padded total is meant to
look like one). The round stays at its unmask step until the coordinator, holding every cohort's padded total and the
bridge's, reads the round's sum (:func:`combine`), chooses the kept words (step 0,
on the
whole round's presence sum) or builds the model (step 1) and hands them to every cohort: each cohort's server then
serves the round's model.
"""
from __future__ import annotations

import base64
import json
import tempfile
import threading
from pathlib import Path

import numpy as np
from sqlalchemy import select

from ..._io import load_bundle
from ...accounting.skellam import rounded_norms
from ...errors import DPTopicError
from ...protocol.secure_sum.cohorts import CohortPlan
from ...protocol.secure_sum.messages import PHASES
from ...protocol.secure_sum.ring import from_ring, ring_dtype
from .config import STATES, SecureSumConfig
from .database import t_state, t_uploads
from .default import SecureRound
from .state import charge_or_fail

LEDGER_MARK = "ledger_charge"
"""The key, in the bridge's database, of the round's debit on the dataset ledger (:meth:`Coordinator.charge`)."""
GATE_POLL_S = 0.05
"""How often an unmasking that waits for the ledger's debit looks whether the round failed or the server stopped."""


def combine(cohort_totals, bridge_total, bits: int, cohort_delegates_uploaded, bridge_uploaded) -> np.ndarray:
    """The round's sum (signed integers) from the cohorts' unmasked, padded totals (ring vectors) and the bridge's
    unmasked sum of pads; refused (one line) unless the delegates that uploaded in the cohorts are exactly those that
    uploaded in the bridge (a pad in one and not the other leaves the sum unreadable)."""
    a, b = set(cohort_delegates_uploaded), set(bridge_uploaded)
    if a != b:
        extra = sorted(a ^ b)[:3]
        raise DPTopicError(f"the delegates that uploaded in the cohorts and in the bridge differ ({', '.join(extra)}"
                           f"{', ...' if len(a ^ b) > 3 else ''}): the round's sum cannot be read; nothing released.")
    dtype = ring_dtype(bits)
    total = np.asarray(bridge_total).astype(np.int64).astype(np.uint64).astype(dtype)
    for y in cohort_totals:
        total += np.asarray(y).astype(np.int64).astype(np.uint64).astype(dtype)
    return from_ring(total, bits)


class CohortRound(SecureRound):
    """One cohort's server (or the bridge's): a :class:`SecureRound` whose unmasked totals are padded and kept for
    the :class:`Coordinator` (module note). With a dataset ledger in its settings (``cfg.ledger``), its unmasking of
    step 0 waits until the coordinator has charged the whole round (:attr:`charged`, :meth:`Coordinator.charge`); it
    never charges the ledger itself."""

    def __init__(self, cfg: SecureSumConfig):
        self.padded: dict = {}      # phase -> (padded total as signed integers, sorted uploaders)
        self.charged = threading.Event()       # set once the round may be unmasked (no ledger, or the debit made)
        self.halt = threading.Event()          # the server stopped: a waiting unmasking gives up
        if not cfg.ledger:
            self.charged.set()
        super().__init__(cfg)     # (a restart may start the unmasking here: it waits for the coordinator's look)
        with self.engine.connect() as conn:
            for phase in range(PHASES):
                raw = conn.execute(select(t_state.c.value).where(t_state.c.key == f"padded{phase}")).scalar()
                if raw is not None:
                    doc = json.loads(raw)
                    self.padded[phase] = (np.frombuffer(base64.b64decode(doc["sum"]), dtype="<i8").copy(),
                                          doc["uploaded"])

    def _may_unmask(self) -> bool:
        """Wait for the round's debit on the dataset ledger (:attr:`charged`); False when the round failed meanwhile
        (a refused debit fails every round) or the server stopped: nothing is then unmasked."""
        while not self.charged.wait(GATE_POLL_S):
            if self.st["state"] == "failed" or self.halt.is_set():
                return False
        return self.st["state"] != "failed"

    def uploaders(self, phase: int) -> list:
        """Who uploaded to step ``phase`` (the coordinator charges step 0's to the ledger)."""
        with self.engine.connect() as conn:
            return [u for (u,) in conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == phase))]

    def unmask_held(self) -> None:
        """Nothing: an unmasking that waits for the ledger's debit waits on its own thread (:meth:`_may_unmask`)."""

    def _unmask_step(self, phase: int) -> None:
        if phase in self.padded:
            return
        if phase == 0 and not self._may_unmask():      # spent before anything of the round is unmasked
            return
        total, uploaded = self._unmasked(phase)
        with self.lock, self.engine.begin() as conn:
            if self.st["state"] != f"unmask{phase}":
                return
            conn.execute(t_state.delete().where(t_state.c.key == f"padded{phase}"))
            conn.execute(t_state.insert().values(key=f"padded{phase}", value=json.dumps(
                {"sum": base64.b64encode(total.astype("<i8").tobytes()).decode(), "uploaded": sorted(uploaded)})))
            self.padded[phase] = (total, sorted(uploaded))

    def open_step1(self, kept) -> None:
        """The coordinator's kept words: step 1 opens over the uploaders of step 0."""
        with self.lock, self.engine.begin() as conn:
            if self.st["state"] != "unmask0":
                return
            self._open_upload(conn, 1, list(self.padded[0][1]), kept=[int(k) for k in kept])

    def release(self, doc: dict) -> None:
        """The round's model (the coordinator's): this cohort's server serves it."""
        with self.lock, self.engine.begin() as conn:
            if self.st["state"] != "unmask1":
                return
            self.st = dict(self.st, state="released")
            self._save(conn, model=doc)
            self._model_doc = doc

    def fail(self, reason: str) -> None:
        """The coordinator fails the round here (another cohort failed, or the totals do not add up)."""
        if self.st["state"] not in ("released", "failed"):
            self._fail(reason)


class Coordinator:
    """Adds the cohorts' padded totals and the bridge's sum of pads, once each has unmasked a step (module note).

    ``plan``: the round's :class:`CohortPlan`; ``cohorts``: the cohorts' :class:`CohortRound` in order; ``bridge``:
    the bridge's; ``delegates``: each cohort's delegates (their ids in the cohort); ``bridge_ids``: each cohort's
    delegates' ids in the bridge, in the same order. ``ledger`` and ``dataset``: the dataset ledger the whole round is
    charged to (:meth:`charge`), or None; ``directory``: the round's cohort directory (the people its invitations
    name are charged by their pseudonyms)."""

    def __init__(self, plan: CohortPlan, cohorts, bridge: CohortRound, delegates, bridge_ids, vocabulary,
                 n_topics: int, round_id: str, ledger: str | None = None, dataset: str | None = None,
                 directory: dict | None = None):
        self.ledger, self.dataset, self.directory = ledger, dataset, directory
        self.plan, self.cohorts, self.bridge = plan, list(cohorts), bridge
        self.rename = {}
        for ds, bs in zip(delegates, bridge_ids):
            if len(ds) != len(bs):
                raise DPTopicError("each cohort's delegates need one bridge id each.")
            self.rename.update(zip(bs, ds))
        self.delegates = [set(d) for d in delegates]
        self.vocabulary, self.n_topics, self.round_id = vocabulary, int(n_topics), round_id
        self.shares: dict = {}
        self.sums: dict = {}
        self.model_doc: dict | None = None
        self.reason: str | None = None

    def rounds(self) -> list:
        """Every cohort's round and the bridge's."""
        return [*self.cohorts, self.bridge]

    def ready(self, phase: int) -> bool:
        """Whether every round has unmasked ``phase``."""
        return all(phase in r.padded for r in self.rounds())

    def failed(self) -> str | None:
        """The first failure among the rounds (then the whole round fails), or None."""
        for k, r in enumerate(self.rounds()):
            if r.st["state"] == "failed":
                return f"{'the bridge' if r is self.bridge else f'cohort {k}'} failed: {r.st.get('reason')}"
        return self.reason

    def _fail(self, reason: str) -> None:
        self.reason = reason
        for r in self.rounds():
            r.fail(reason)

    def advance(self) -> bool:
        """What a server in cohorts calls whenever a round may have moved
        (:mod:`dptopic.service.secure_sum.cohort_app`): a failure anywhere fails every round, and each step every round
        has unmasked is read (:meth:`step`), in order; after a restart the sums are read again from the padded totals
        each round kept. Returns whether it moved the round on."""
        why = self.failed()
        if why is not None:
            if any(r.st["state"] not in ("released", "failed") for r in self.rounds()):
                self._fail(why)
                return True
            return False
        moved = False
        if not all(r.charged.is_set() for r in self.rounds()):
            if not self.charge():
                return False
            moved = True
        for r in self.rounds():     # a committee cohort's unmasking held until the debit runs now
            r.unmask_held()
        for phase in range(PHASES):
            if phase not in self.sums:
                if not self.ready(phase):
                    break
                moved = self.step(phase) or moved
                if phase not in self.sums:
                    break
        return moved

    def charge(self) -> bool:
        """The whole round charged to the dataset ledger, once, before any cohort's or the bridge's first unmasking
        (each waits for it: :meth:`CohortRound._may_unmask`): once every cohort has closed the uploads of step 0,
        at the round's plan's bound (:attr:`CohortPlan.round_plan
        <dptopic.protocol.secure_sum.cohorts.CohortPlan.round_plan>`:
        the noise is the whole round's), to every person who uploaded to their cohort in step 0
        (:func:`~dptopic.service.ledger.charge_secure_round`, as a single round). The debit is marked in the bridge's
        database (:data:`LEDGER_MARK`): a restart after it charges nothing more, and a process killed between the
        debit and its mark charges the round again when it resumes (the ledger then holds it twice, never not at
        all). A refused debit fails every round with nothing revealed. Returns whether the rounds may unmask."""
        if self.ledger and not self._marked():
            if any(STATES.index(r.st["state"]) < STATES.index("consistency0") for r in self.cohorts):
                return False        # who took part is known once every cohort's uploads of step 0 are in
            people = {u for r in self.cohorts for u in r.uploaders(0)}
            charged, release = charge_or_fail(self._fail, self.ledger, self.dataset, self.plan.round_plan,
                                              sorted(people), self.directory)
            if not charged:
                return False
            with self.bridge.lock, self.bridge.engine.begin() as conn:
                conn.execute(t_state.insert().values(key=LEDGER_MARK, value=json.dumps(
                    {"release": release, "people": len(people)})))
        for r in self.rounds():
            r.charged.set()
        return True

    def _marked(self) -> bool:
        with self.bridge.engine.connect() as conn:
            return conn.execute(select(t_state.c.key).where(t_state.c.key == LEDGER_MARK)).first() is not None

    def step(self, phase: int) -> bool:
        """Read the round's sum of ``phase`` once every round has unmasked it; step 0 then opens step 1 everywhere
        with the kept words, step 1 releases the model everywhere. Returns whether it moved the round on."""
        if phase in self.sums or not self.ready(phase):
            return False
        uploaded_delegates = [u for r, ds in zip(self.cohorts, self.delegates) for u in r.padded[phase][1] if u in ds]
        bridge_up = [self.rename.get(u, u) for u in self.bridge.padded[phase][1]]
        try:
            total = combine([r.padded[phase][0] for r in self.cohorts], self.bridge.padded[phase][0],
                            self.plan.ring_bits, uploaded_delegates, bridge_up)
        except DPTopicError as e:
            self._fail(str(e).rstrip("."))
            return False
        rp = self.plan.round_plan
        shares = sum(len(r.padded[phase][1]) for r in self.cohorts)
        dim = len(total)
        limit = shares * rounded_norms(rp.scale, dim)[0] + 2 ** (rp.bits - 2)
        if np.any(np.abs(total) > limit):
            self._fail(f"step {phase}'s sum wrapped around the modulus: nothing released")
            return False
        self.sums[phase], self.shares[phase] = total, shares
        if phase == 0:
            from ...models.secure_sum import released_words  # start-up: models.secure_sum loads scikit-learn

            kept = [int(k) for k in released_words(rp, total, shares, self.n_topics)[0]]
            for r in self.rounds():
                r.open_step1(kept)
            return True
        self.model_doc = self.release_document()
        for r in self.rounds():
            r.release(self.model_doc)
        return True

    def release_document(self) -> dict:
        """The round's model, as each cohort's ``GET /v1/model`` serves it (post-processing of the two sums and the
        public plan)."""
        from ...models.secure_sum import secure_sum_topics, trust_model  # start-up: it loads scikit-learn

        model = secure_sum_topics(self.plan.round_plan, self.vocabulary, self.n_topics, self.sums[0], self.sums[1],
                                  (self.shares[0], self.shares[1]),
                                  {"round_id": self.round_id, "cohorts": self.plan.describe()})
        model._secure_report["trust_model"] = trust_model(self.plan)       # the cohorts' own statement
        model.privacy_ = dict(model.privacy_, trust_model=model._secure_report["trust_model"])
        with tempfile.TemporaryDirectory() as d:
            model.save(f"{d}/m")
            load_bundle(f"{d}/m")
            arrays = {p.stem: base64.b64encode(p.read_bytes()).decode() for p in sorted(Path(f"{d}/m").glob("*.npy"))}
            meta_json = Path(f"{d}/m/model.json").read_text()
        return {"api_version": "v1", "model_id": 1, "model_version": 1, "model_json": meta_json, "arrays": arrays}


__all__ = ["CohortRound", "Coordinator"]
