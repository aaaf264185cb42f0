"""The OLP-LDA models the trainer writes: the active one and its arrays, the version-guarded training commit, and
rotations.

Exactly-once training: a mini-batch is the reports with ``last_report_id < id <= new cursor``; the trainer writes the
new model state, the new cursor and the batch row in ONE transaction (:meth:`ModelStore.commit_batch`), guarded by
``version``, so a crash at any point either commits all three or none. Report ids must become visible in increasing
order for the cursor to be safe: inserts are serialized (one writer thread per process, plus ``BEGIN IMMEDIATE`` on
SQLite and a transaction-scoped advisory lock on PostgreSQL across processes).
"""
from __future__ import annotations

import time

from sqlalchemy import func, select

from .database import Database
from .errors import StorageError, refuse_nul
from .schema import model_arrays, models, train_batches


class ModelStore(Database):
    """The trainer's models (tables ``models``, ``model_arrays``, ``train_batches``)."""

    def active_model(self) -> dict:
        """The active model's row; created (empty, version 0) on first use."""
        with self.read() as conn:
            row = conn.execute(select(models).where(models.c.status == "active")).mappings().first()
        if row is not None:
            return dict(row)
        with self.write() as conn:
            self._lock(conn)    # two servers starting at once on PostgreSQL must not both create one
            row = conn.execute(select(models).where(models.c.status == "active")).mappings().first()
            if row is None:
                last = conn.execute(select(func.max(models.c.last_report_id))).scalar() or 0
                self._new_model(conn, last, "first model")
                row = conn.execute(select(models).where(models.c.status == "active")).mappings().first()
        return dict(row)

    def active_model_with_arrays(self) -> tuple[dict, dict[str, bytes]]:
        """The active model's row and its arrays, read in ONE statement: one snapshot on SQLite and on PostgreSQL
        (whose default isolation gives each statement its own), so that a training step committed meanwhile cannot
        pair this version's ``model.json`` with the next version's arrays (which the model's digests then refuse as a
        corrupt model)."""
        q = (select(models, model_arrays.c.name.label("array_name"), model_arrays.c.data.label("array_data"))
             .select_from(models.outerjoin(model_arrays, model_arrays.c.model_id == models.c.id))
             .where(models.c.status == "active"))
        for _ in range(10):
            with self.read(limit="long") as conn:     # the arrays of a large model take a while
                rows = conn.execute(q).mappings().all()
            if rows:
                row = {c.name: rows[0][c.name] for c in models.c}
                return row, {r["array_name"]: bytes(r["array_data"]) for r in rows if r["array_name"] is not None}
            self.active_model()     # none yet: the first one is created on first use
        raise StorageError("no active model could be read: another process keeps rotating it.")

    def _new_model(self, conn, start: int, note: str) -> int:
        now = time.time()
        return conn.execute(models.insert().values(
            status="active", version=0, first_report_id=start, last_report_id=start, n_reports_used=0, n_batches=0,
            meta_json=None, created_at=now, updated_at=now, note=note).returning(models.c.id)).scalar_one()

    def commit_batch(self, model_id: int, version: int, first_id: int, last_id: int, n_reports: int,
                     meta_json: str | None, arrays: dict[str, bytes] | None, status: str, note: str | None,
                     seconds: float) -> bool:
        """Write the new model state, the cursor and the batch row in ONE transaction.

        Returns ``False`` (and writes nothing) when the model moved on meanwhile (another trainer
        or a rotation): the caller reloads and tries again.
        """
        now = time.time()
        with self.write(limit="long") as conn:    # a large model's arrays: the trainer's own, longer limit
            # FOR UPDATE (PostgreSQL; SQLite's BEGIN IMMEDIATE already serializes): another server's trainer that
            # commits this version meanwhile must be waited for and seen, or both would commit the same batch
            cur = conn.execute(select(models.c.version, models.c.status, models.c.last_report_id)
                               .where(models.c.id == model_id).with_for_update()).first()
            if cur is None or cur.version != version or cur.status != "active" or cur.last_report_id >= last_id:
                return False
            values = dict(version=version + 1, last_report_id=last_id,
                          n_reports_used=models.c.n_reports_used + n_reports, updated_at=now)
            if status == "trained":
                values.update(n_batches=models.c.n_batches + 1, meta_json=meta_json)
                conn.execute(model_arrays.delete().where(model_arrays.c.model_id == model_id))
                conn.execute(model_arrays.insert(), [{"model_id": model_id, "name": k, "data": v}
                                                     for k, v in arrays.items()])
            conn.execute(models.update().where(models.c.id == model_id).values(**values))
            conn.execute(train_batches.insert().values(
                model_id=model_id, model_version=version + 1, first_report_id=first_id, last_report_id=last_id,
                n_reports=n_reports, status=status, note=note, seconds=seconds, created_at=now))
        return True

    def rotate(self, note: str) -> dict:
        """Retire the active model and start a new one at its cursor (no report lost, none reused)."""
        refuse_nul(note=note)
        with self.write(limit="long") as conn:
            self._lock(conn)    # one rotation at a time across servers, and the cursor of a step committed meanwhile
            cur = conn.execute(select(models).where(models.c.status == "active").with_for_update()).mappings().first()
            start = cur["last_report_id"] if cur is not None else 0
            if cur is not None:
                conn.execute(models.update().where(models.c.id == cur["id"])
                             .values(status="retired", retired_at=time.time(), version=cur["version"] + 1))
            new_id = self._new_model(conn, start, note)
        return {"retired_model": cur["id"] if cur is not None else None, "new_model": new_id,
                "starts_after_report": start}

    def batches(self, model_id: int | None = None) -> list[dict]:
        q = select(train_batches).order_by(train_batches.c.id)
        if model_id is not None:
            q = q.where(train_batches.c.model_id == model_id)
        with self.read() as conn:
            return [dict(r) for r in conn.execute(q).mappings()]

    def list_models(self) -> list[dict]:
        with self.read() as conn:
            return [dict(r) for r in conn.execute(
                select(models.c.id, models.c.status, models.c.version, models.c.first_report_id,
                       models.c.last_report_id, models.c.n_reports_used, models.c.n_batches, models.c.created_at,
                       models.c.retired_at, models.c.note).order_by(models.c.id)).mappings()]
