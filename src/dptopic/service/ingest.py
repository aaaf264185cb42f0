"""Group commit: one writer thread stores concurrent uploads in shared transactions.

Every upload is validated by the HTTP layer, then queued here; the writer takes whatever is
queued (up to ``max_reports`` reports), stores it in one transaction and only then resolves
each upload's future, so an acknowledgement always follows a durable commit. One fsync then
serves many clients, and report ids are assigned in commit order (the trainer's cursor relies
on it).
"""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future

from .storage import Storage, Submission


class GroupCommitWriter:
    """Queue of :class:`Submission` s drained by one thread into :meth:`Storage.store`."""

    def __init__(self, storage: Storage, max_reports: int = 20_000, max_items: int = 512):
        self.storage = storage
        self.max_reports = max_reports
        self.max_items = max_items
        self._q: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dptopic-writer", daemon=True)
        self.transactions = 0

    def start(self) -> "GroupCommitWriter":
        self._thread.start()
        return self

    def submit(self, sub: Submission) -> Future:
        fut: Future = Future()
        if self._stop.is_set():
            fut.set_exception(RuntimeError("the server is shutting down"))
        else:
            self._q.put((sub, fut))
        return fut

    def _take(self):
        try:
            first = self._q.get(timeout=0.2)
        except queue.Empty:
            return []
        items, n = [first], len(first[0].rows)
        while len(items) < self.max_items and n < self.max_reports:
            try:
                item = self._q.get_nowait()
            except queue.Empty:
                break
            items.append(item)
            n += len(item[0].rows)
        return items

    def _run(self) -> None:
        while not (self._stop.is_set() and self._q.empty()):
            items = self._take()
            if not items:
                continue
            live = [(s, f) for s, f in items if f.set_running_or_notify_cancel()]
            if not live:
                continue
            try:
                results = self.storage.store([s for s, _ in live])
            except BaseException as e:  # noqa: BLE001 - every waiting request learns the failure
                for _, f in live:
                    f.set_exception(e)
                continue
            self.transactions += 1
            for (_, f), r in zip(live, results):
                f.set_result(r)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._thread.join(timeout)
