"""The trainer loop: stored reports → OLP-LDA mini-batches, exactly once.

Each step reads the ``batch_size`` reports after the active model's cursor and trains the model on them through the
library's steps for a batch (:func:`dptopic.training.train_batch`: the steps ``dptopic.train`` runs on a report
file, with ``partial_fit``, so that the saved model states what ``dptopic.train`` would). It then commits the new
model state (``model.json`` + ``.npy`` bytes), the new cursor and a batch record in one transaction guarded by the
model's version (:meth:`Storage.commit_batch`). A ``kill -9`` before the commit loses only the computation; the
same reports are trained again after the restart, and never twice.
"""
from __future__ import annotations

import logging
import threading
import time

from ..errors import BudgetExceededError, DPTopicError
from . import codec, kinds
from .ledger import charge_reports
from .storage import Storage

log = logging.getLogger("dptopic.service")


class Trainer:
    """Holds the active model in memory and advances it batch by batch."""

    def __init__(self, storage: Storage, cfg, on_batch=None):
        self.storage = storage
        self.cfg = cfg
        self.on_batch = on_batch
        self._lock = threading.Lock()
        self._row = None
        self._model = None
        self._stop = threading.Event()
        self._thread = None
        self.errors = 0

    # ------------------------------------------------------------------ state
    def _load(self) -> None:
        row = self.storage.active_model()
        if self._row is not None and row["id"] == self._row["id"] and row["version"] == self._row["version"]:
            return
        arrays = None
        if row["meta_json"]:
            row, arrays = self.storage.active_model_with_arrays()   # model.json and arrays of one version
        if row["meta_json"]:
            self._model = codec.model_from_blobs(row["meta_json"], arrays)
        else:   # no model yet: the first batch builds it (the trainers' imports wait until there is one to train)
            self._model = None
        self._row = row

    def step(self, force: bool = False) -> dict | None:
        """Train one mini-batch; ``force`` trains a short one too. Returns what was done, or ``None``."""
        with self._lock:
            self._load()
            row = self._row
            rows = self.storage.fetch_reports(row["last_report_id"], self.cfg.batch_size)
            if not rows or (len(rows) < self.cfg.batch_size and not force):
                return None
            first, last = rows[0][0], rows[-1][0]
            reports = kinds.get(self.cfg.report_kind).from_rows([p for _, p in rows], self.cfg)
            # the saved report states the guarantee of the contributor with the most reports in the store, not of
            # one report (read before training: a failed read must not log a batch the model took as skipped)
            most = max(1, self.storage.max_reports_per_contributor())
            refused = self._ledger_refusal(first, last)
            if self._model is None:
                self._model = kinds.new_trainer(self.cfg)
            ok, status, note, seconds = self._train_and_commit(row, rows, reports, most, refused)
            if not ok:
                return None
            if note:
                log.warning("trainer: the batch of reports %d-%d (model %d) was %s: %s", first, last, row["id"],
                            "trained with a warning" if status == "trained" else "skipped", note)
            self._row = {**row, "version": row["version"] + 1, "last_report_id": last}
            if status == "skipped":
                # the refusal may have come after the model took the batch (saving it, restating its guarantee):
                # the database holds the model without it, and so must memory, or the next trained batch would
                # save a model holding reports recorded as skipped
                self._row = self._model = None
            done = {"model": row["id"], "version": row["version"] + 1, "first_report_id": first,
                    "last_report_id": last, "reports": len(rows), "status": status, "note": note,
                    "seconds": round(seconds, 4)}
        if self.on_batch is not None:
            self.on_batch(done)
        return done

    def _ledger_refusal(self, first: int, last: int) -> str | None:
        """The batch on the dataset ledger before the model reads it, charged to its contributors
        (service/ledger.py): a batch a cap refuses is skipped (its refusal returned); a ledger that cannot be written
        stops the step, the batch kept."""
        if not getattr(self.cfg, "ledger", None):
            return None
        try:
            charge_reports(self.cfg, self.storage.report_contributors(first, last), first, last)
        except BudgetExceededError as e:
            return f"refused by the dataset ledger: {e}"
        return None

    def _train_and_commit(self, row, rows, reports, most, refused) -> tuple:
        """The batch trained (or skipped, with its reason) and committed with the model: ``(committed, status, note,
        seconds)``."""
        first, last = rows[0][0], rows[-1][0]
        t0 = time.perf_counter()
        status, note, meta, arrays = "trained", None, None, None
        ok = False
        try:
            try:
                if refused:
                    raise DPTopicError(refused)
                # OLP-LDA's prior-overlap finding becomes the batch's note: stored with the batch row
                # (GET /v1/admin/models) and logged once per batch by step
                # the library's steps for a batch (dptopic.training.train_batch): checked, partial_fit, the
                # guarantee restated for the contributor with the most reports, the card
                note = codec.train_batch(self._model, reports, self.cfg.vocabulary, most)
                meta, arrays = codec.model_to_blobs(self._model)
            except DPTopicError as e:  # a batch the model refuses is consumed and logged, never retried forever
                status, note = "skipped", str(e)
            seconds = time.perf_counter() - t0
            ok = self.storage.commit_batch(row["id"], row["version"], first, last, len(rows), meta, arrays,
                                           status, note, seconds)
        finally:
            if not ok:
                # memory may be ahead of the database (the model took this batch, then saving it or the commit
                # failed, or it was another trainer's): reload next time, or the batch would be trained into the
                # in-memory model again on the next try and the model saved then would hold it twice
                self._row = self._model = None
        return ok, status, note, seconds

    def drain(self, force: bool = False, max_batches: int = 1000) -> list[dict]:
        out = []
        for _ in range(max_batches):
            d = self.step(force=force)
            if d is None:
                break
            out.append(d)
        return out

    def rotate(self, note: str) -> dict:
        with self._lock:
            info = self.storage.rotate(note)
            self._row = self._model = None
        return info

    # ------------------------------------------------------------------- loop
    def start(self) -> "Trainer":
        if self.cfg.train_interval > 0:
            self._thread = threading.Thread(target=self._run, name="dptopic-trainer", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.cfg.train_interval):
            try:
                while not self._stop.is_set() and self.step() is not None:
                    pass
            except Exception as e:  # noqa: BLE001 - keep serving; the error is counted and logged
                self.errors += 1
                log.error("trainer: %s", " ".join(str(e).split())[:300])

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
