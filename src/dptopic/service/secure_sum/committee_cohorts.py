"""A round in cohorts whose cohorts are committee-mode rounds (``CohortPlan(committee=...)``; read the note of
:mod:`dptopic.protocol.secure_sum.cohorts`, "A committee in each cohort", first).

:class:`CommitteeCohortRound` is a cohort's server: a :class:`~dptopic.service.secure_sum.committee.CommitteeRound`
(the same prekeys, uploads with their committee blobs, signatures and answers, the same checks and refusals) whose
unmasked sum is a padded total (its cohort's sum minus its delegates' pads), kept for the
:class:`~dptopic.service.secure_sum.cohorts.Coordinator` as a :class:`~dptopic.service.secure_sum.cohorts.CohortRound`
keeps it: the round stays at its unmask step until the coordinator opens step 1 with the round's kept words or hands it
the round's model. It offers the coordinator what a :class:`~dptopic.service.secure_sum.cohorts.CohortRound` does
(``padded``, ``st``, ``charged``, ``halt``, :meth:`open_step1`, :meth:`release`, :meth:`fail`).
:class:`StoredCommitteeCohortRound` keeps it in the cohort's own SQLite file, or its own schema of a PostgreSQL database
(a :class:`~dptopic.service.secure_sum.committee_store.StoredCommitteeRound`; one process serves the round in cohorts),
so that a server killed at any moment resumes every cohort, and the coordinator reads their padded totals again, as it
does for default cohorts. With a dataset ledger, a cohort's round never charges it: its unmasking of step 0 is held
until the coordinator's one debit of the whole round (:meth:`~dptopic.service.secure_sum.cohorts.Coordinator.charge`),
then run by the coordinator (:meth:`unmask_held`).

:func:`committee_cohort_app` serves one cohort's round at its prefix
(:data:`~dptopic.protocol.secure_sum.cohorts.COHORT_PATH`) with the committee mode's routes, its ``/v1/config`` holding
the round in cohorts' own (``cohort_root``), so that an ordinary member's first request, its keys posted to its cohort,
brings everything it checks (3 requests in all)."""
from __future__ import annotations

import threading

from ...errors import DPTopicError
from .committee import CommitteeRound
from .committee_app import create_committee_app
from .committee_store import StoredCommitteeRound
from .config import ApiError


class CommitteeCohortRound(CommitteeRound):
    """One cohort's committee-mode round, whose unmasked totals are padded and kept for the coordinator (module
    note). The arguments are :class:`~dptopic.service.secure_sum.committee.CommitteeRound`'s, but ``ledger``: whether
    the whole round is charged to a dataset ledger (by the coordinator; this round waits for it, :attr:`charged`)."""

    def __init__(self, plan, directory: dict, vocabulary, n_topics: int = 3, ledger=None, **kw):
        self.padded: dict = {}      # phase -> (padded total as signed integers, sorted uploaders)
        self.charged = threading.Event()       # set once the round may be unmasked (no ledger, or the debit made)
        if not ledger:
            self.charged.set()
        self.held = False           # an admin's close of step 0's unmasking held until the debit (not kept)
        self.halt = threading.Event()
        self._model_doc: dict | None = None
        self.on_change = None       # called (from the coordinator's thread) when the coordinator moves the round
        super().__init__(plan, directory, vocabulary, n_topics, **kw)

    @property
    def st(self) -> dict:
        """The round's step and the reason of a failure (as a :class:`~dptopic.service.secure_sum.cohorts.CohortRound`
        states them to the coordinator)."""
        return {"state": self.state, "reason": self.reason}

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def _charge(self) -> bool:
        """Never charges: the coordinator charges the whole round once (step 0's unmasking waits until then)."""
        if not self.charged.is_set():
            self.held = True
            return False
        return True

    def uploaders(self, phase: int) -> list:
        """Who uploaded to step ``phase`` (once its uploads closed; the coordinator charges step 0's)."""
        return list(self.uploaded.get(phase, ()))

    def unmask_held(self) -> None:
        """The coordinator's call once the round is charged: step 0's unmasking, held until then, runs now (every
        signer's answers in, or an admin closed it meanwhile)."""
        if self.state != "unmask0" or 0 in self.padded or not self.charged.is_set() or not (
                self.held or len(self._answers.get(0, {})) == len(self.step.get("signers", ()))):
            return
        self.held = False
        self._apply(lambda: self._unmask(0) if self.state == "unmask0" else None)
        self._changed()

    def close(self) -> dict:
        """The admin's close of the open step; the requests the cohort's app holds are woken (the close at the root
        runs off the cohort's event loop: unwoken, each long poll would wait out its timeout)."""
        out = super().close()
        self._changed()
        return out

    def _unmask(self, phase: int) -> None:
        if phase in self.padded:        # kept once; an admin's close at this step reads nothing again
            return
        super()._unmask(phase)

    def _unmasked_sum(self, phase: int, total, up) -> None:
        """Keep the padded total and its uploaders for the coordinator (as the step's sum, which a stored round
        keeps); the round stays at ``unmask{phase}``."""
        self.sums[phase], self.shares_of_sum[phase] = total, len(up)
        self.padded[phase] = (total, sorted(up))

    def _apply(self, change) -> None:
        """``change()`` under the round's lock (a stored round also commits it)."""
        with self.lock:
            change()

    def open_step1(self, kept) -> None:
        """The coordinator's kept words: step 1 opens over the uploaders of step 0."""
        def change():
            if self.state == "unmask0":
                self._open_upload(1, list(self.padded[0][1]), kept=[int(k) for k in kept])
        self._apply(change)
        self._changed()

    def release(self, doc: dict) -> None:
        """The round's model (the coordinator's): this cohort's server serves it. After a restart the coordinator
        hands the same model again (made from the same sums) to a round already released."""
        def change():
            if self.state == "unmask1" or (self.state == "released" and self._model_doc is None):
                self._model_doc = doc
                self.state = "released"
        self._apply(change)
        self._changed()

    def model_doc(self) -> dict:
        """``GET /v1/model`` at the root: the round's model, once the coordinator handed it over."""
        if self._model_doc is None:
            raise ApiError(404, "no_model", f"the round has released no model (it is at step {self.state!r}"
                                            + (f": {self.reason}" if self.reason else "") + ").")
        return self._model_doc

    def fail(self, reason: str) -> None:
        """The coordinator fails the round here (another round failed, or the totals do not add up)."""
        def change():
            if self.state not in ("released", "failed"):
                self._fail(reason)
        self._apply(change)
        self._changed()


class StoredCommitteeCohortRound(CommitteeCohortRound, StoredCommitteeRound):
    """A :class:`CommitteeCohortRound` kept in ``database`` (a SQLite file, one per cohort, or a PostgreSQL
    database, each cohort's round in its own ``schema``) as a
    :class:`~dptopic.service.secure_sum.committee_store.StoredCommitteeRound` keeps a round: every accepted message, the
    padded totals (as the step's sums) and the coordinator's moves are committed before they are answered; started
    again on the same file it resumes, and its padded totals are read again for the coordinator."""

    def __init__(self, plan, directory: dict, vocabulary, n_topics: int = 3, database: str = "", ledger=None,
                 schema: str | None = None):
        super().__init__(plan, directory, vocabulary, n_topics, database=database, ledger=ledger, schema=schema)

    def _refresh(self, conn) -> None:
        super()._refresh(conn)
        self.padded = {p: (self.sums[p], sorted(self.uploaded[p])) for p in self.sums}

    def _apply(self, change) -> None:
        def changed() -> dict:
            change()
            return {}
        self._store(lambda conn, out, seq: None, changed)


def committee_cohort_app(plan, directory: dict, vocabulary, n_topics: int, admin_token: str | None = None,
                         database: str | None = None, ledger=None, schema: str | None = None):
    """The app of one committee-mode cohort (``plan``: its :class:`~dptopic.protocol.secure_sum.plan.SecureSumPlan`,
    with
    a committee; ``directory``: its signed directory):
    :func:`~dptopic.service.secure_sum.committee_app.create_committee_app` over a :class:`CommitteeCohortRound`, whose
    model, once the coordinator hands it over, its ``/v1/model`` serves. ``app.state.served.config_extra`` is what its
    ``/v1/config`` adds (the server in cohorts puts its own there). ``database``: the cohort's SQLite file
    (:class:`StoredCommitteeCohortRound`), or None: in memory. ``ledger``: whether the coordinator charges the round to
    a dataset ledger (the round then waits for its debit). ``schema``: on PostgreSQL, the schema that keeps the cohort's
    round (its round id, as default cohorts keep theirs)."""
    if not plan.committee:
        raise DPTopicError("a committee cohort needs a plan with a committee (CohortPlan(committee=...)).")
    rnd = CommitteeCohortRound(plan, directory, vocabulary, n_topics, ledger=ledger) if database is None else \
        StoredCommitteeCohortRound(plan, directory, vocabulary, n_topics, database, ledger=ledger, schema=schema)
    app = create_committee_app(plan, directory, vocabulary, n_topics, admin_token=admin_token, rnd=rnd)
    served = app.state.served
    release = rnd.release

    def released(doc: dict) -> None:
        release(doc)
        if rnd.state == "released":
            served.model = doc
    rnd.release = released
    return app


def wake_on_change(app, loop) -> None:
    """Have the coordinator's moves of ``app``'s round (made on its own thread) wake the requests the app holds on
    ``loop`` (each long poll then sees the new step at once, not at its timeout)."""
    served = app.state.served
    if loop is None:
        served.rnd.on_change = None
        return
    served.rnd.on_change = lambda: loop.call_soon_threadsafe(served.moved, "")


__all__ = ["CommitteeCohortRound", "StoredCommitteeCohortRound", "committee_cohort_app", "wake_on_change"]
