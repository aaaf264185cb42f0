"""Group commit: one writer thread stores concurrent uploads in shared transactions.

Every upload is validated by the HTTP layer, then queued here; the writer takes whatever is
queued (up to ``max_reports`` reports), stores it in one transaction and only then resolves
each upload's future, so an acknowledgement always follows a durable commit. One fsync then
serves many clients, and report ids are assigned in commit order (the trainer's cursor relies
on it). Requests of the event loop wait on asyncio futures (:meth:`GroupCommitWriter.submit_async`),
resolved after the commit by one call into the loop per transaction, not one per request; the uploads one iteration of
the loop submits are handed to the writer together at its end, with one wake of the writer thread.

While uploads are still being received (:meth:`GroupCommitWriter.receiving`), the writer waits a little for them
before it begins a transaction, as PostgreSQL's ``commit_delay`` does: at most half the time the last transaction took
(and ``max_wait``), so that one commit, and one fsync, serves them too. The slower the commits (a disk busy with other
work), the more uploads each then serves; with fast commits the wait is short; with no upload on its way, none.

On a SQLite file with ``synchronous=full`` (the default; :attr:`~dptopic.service.storage.Storage.syncs_separately`)
the writer's commits do not wait for the disk: each transaction's answers wait instead for an fsync of the database's
log begun after its commit returned (:meth:`~dptopic.service.storage.Storage.sync`), run on a thread beside the writer,
several at once. An acknowledged upload survives a power cut as with an fsync inside the commit, but the writer commits
the next group while the disk syncs the last, and an upload waits for one fsync of its own instead of the one in
progress and then its own (docs/research/service_throughput.md).

Uploads are checked on the event loop before they are queued, so a malformed one never joins a group. A group whose
transaction fails for the values of one of its uploads (:func:`~dptopic.service.storage.is_data_error`: a constraint,
a value the driver refuses; the transaction is rolled back) is stored again one upload to a transaction: that upload
fails alone, and its batch-mates are stored and acknowledged, each after its own commit. A failure of the database
itself (locked, full, unreachable, too slow) fails the whole group with one answer, as a retry per upload would only
wait for it again.

A transaction must end within the storage's ``timeout`` (PostgreSQL, the service's ``database_timeout``) counted
from when its oldest upload was queued, so an upload behind a transaction that waits for a database that stopped
answering is refused (503) within that time too, not after its own transaction waited as long again.
"""
from __future__ import annotations

import asyncio
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

from .storage import Storage, Submission, is_data_error

SYNC_THREADS = 4
"""fsyncs of a SQLite file's log that may be in flight at once (:class:`GroupCommitWriter`)."""


class GroupCommitWriter:
    """Queue of :class:`Submission` s drained by one thread into :meth:`Storage.store`."""

    def __init__(self, storage: Storage, max_reports: int = 20_000, max_items: int = 512, max_wait: float = 0.002):
        self.storage = storage
        self.max_reports = max_reports
        self.max_items = max_items
        self.max_wait = max_wait
        self._receiving = 0         # uploads being received and checked, not queued yet (changed on one thread only)
        self._receipt = _Receiving(self)
        self._held: dict = {}       # event loop -> its uploads submitted in its current iteration, not handed over yet
        self._last_seconds = 0.0    # how long the last transaction took
        self._q: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dptopic-writer", daemon=True)
        self.transactions = 0
        # a SQLite file with synchronous=full: each transaction's fsync on a thread of its own, several in flight
        self._syncer = (ThreadPoolExecutor(max_workers=SYNC_THREADS, thread_name_prefix="dptopic-sync")
                        if getattr(storage, "syncs_separately", False) else None)

    def start(self) -> "GroupCommitWriter":
        self._thread.start()
        return self

    def receiving(self) -> "_Receiving":
        """Around the receipt and the checks of an upload that will be submitted (from the event loop's thread only):
        while it lasts, the writer waits a little for the upload before it begins a transaction (module docstring)."""
        return self._receipt

    def submit(self, sub: Submission) -> Future:
        """Queue ``sub``; the returned :class:`concurrent.futures.Future` resolves after its commit."""
        fut: Future = Future()
        if self._stop.is_set():
            fut.set_exception(RuntimeError("the server is shutting down"))
        else:
            self._q.put([(sub, fut, None, time.monotonic())])
        return fut

    def submit_async(self, sub: Submission) -> asyncio.Future:
        """Queue ``sub`` from the running event loop; the returned asyncio future resolves after its commit. The
        uploads submitted in one iteration of the loop are handed to the writer together, at its end (one wake of the
        writer thread for them all, not one each)."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        if self._stop.is_set():
            fut.set_exception(RuntimeError("the server is shutting down"))
            return fut
        held = self._held.get(loop)
        if held is None:
            held = self._held[loop] = []
            loop.call_soon(self._hand_over, loop)
        held.append((sub, fut, loop, time.monotonic()))
        return fut

    def _hand_over(self, loop) -> None:
        """On ``loop``'s thread, at the end of the iteration that submitted them: its uploads to the writer."""
        held = self._held.pop(loop)
        if self._stop.is_set() and not self._thread.is_alive():     # nobody left to store them
            _resolve([(f, None) for _, f, _, _ in held], RuntimeError("the server is shutting down"))
        else:
            self._q.put(held)

    def _take(self):
        try:
            items = self._q.get(timeout=0.2)
        except queue.Empty:
            return []
        n = sum(len(item[0].rows) for item in items)
        deadline = None
        while len(items) < self.max_items and n < self.max_reports:
            try:
                more = self._q.get_nowait()
            except queue.Empty:
                if self._receiving <= 0 and not self._held:     # no upload on its way
                    break
                if deadline is None:
                    deadline = time.monotonic() + min(self.max_wait, 0.5 * self._last_seconds)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                try:
                    more = self._q.get(timeout=remaining)
                except queue.Empty:
                    break
            items += more
            n += sum(len(item[0].rows) for item in more)
        return items

    def _run(self) -> None:
        while not (self._stop.is_set() and self._q.empty()):
            items = self._take()
            if not items:
                continue
            # a request whose client went away before its turn is not stored
            kept = [item for item in items
                    if (not item[1].cancelled() if item[2] is not None else item[1].set_running_or_notify_cancel())]
            if not kept:
                continue
            live = [(s, f, loop) for s, f, loop, _ in kept]
            timeout = getattr(self.storage, "timeout", None)
            began = time.monotonic()
            try:
                subs = [s for s, _, _ in live]
                if self._syncer is not None:
                    results = self.storage.store(subs, durable=False)
                elif timeout:
                    results = self.storage.store(subs, deadline=min(t for *_, t in kept) + timeout)
                else:
                    results = self.storage.store(subs)
            except BaseException as e:  # noqa: BLE001 - every waiting request learns the failure
                if len(live) > 1 and is_data_error(e):  # one upload's values: the others need not fail with it
                    self._one_by_one(live, min(t for *_, t in kept) + timeout if timeout else None)
                else:                                   # the database's own trouble: one answer for the group
                    self._settle(live, [None] * len(live), e)
                continue
            self.transactions += 1
            self._last_seconds = time.monotonic() - began
            if self._syncer is not None:
                try:
                    self._syncer.submit(self._sync_and_settle, live, results)
                except RuntimeError:    # stop() gave up waiting for this thread and shut the syncs down
                    self._sync_and_settle(live, results)
            else:
                self._settle(live, results, None)

    def _sync_and_settle(self, live, results) -> None:
        """On a sync thread: an fsync begun after ``live``'s commit returned, then their answers (a failed sync fails
        them all: what was committed may not survive a power cut, and a retry under the same key is answered as a
        replay once it has)."""
        try:
            self.storage.sync()
        except BaseException as e:  # noqa: BLE001 - every waiting request learns the failure
            self._settle(live, [None] * len(live), e)
            return
        self._settle(live, results, None)

    def _one_by_one(self, live, deadline) -> None:
        """After a group's transaction failed (and was rolled back): each of its uploads in a transaction of its own,
        so that one the database refuses fails alone and its batch-mates are stored and acknowledged; a failure of the
        database itself fails each of them again, each with its own error."""
        for s, f, loop in live:
            try:
                result = (self.storage.store([s], deadline=deadline) if deadline is not None
                          else self.storage.store([s]))
            except BaseException as e:  # noqa: BLE001 - this request learns its failure
                self._settle([(s, f, loop)], [None], e)
                continue
            self.transactions += 1
            self._settle([(s, f, loop)], result, None)

    @staticmethod
    def _settle(live, results, error) -> None:
        """Resolve every future of one transaction: thread-safe ones directly, each event loop's in one call."""
        per_loop: dict = {}
        for (_, f, loop), r in zip(live, results):
            if loop is None:
                if error is None:
                    f.set_result(r)
                else:
                    f.set_exception(error)
            else:
                per_loop.setdefault(loop, []).append((f, r))
        for loop, pairs in per_loop.items():
            try:
                loop.call_soon_threadsafe(_resolve, pairs, error)
            except RuntimeError:  # the loop has closed: nobody is waiting any more
                pass

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._q.put([])     # wakes the writer's wait for uploads (0.2 s) at once: an empty hand-over stores nothing
        self._thread.join(timeout)
        if self._syncer is not None:
            self._syncer.shutdown(wait=True)


class _Receiving:
    """:meth:`GroupCommitWriter.receiving`'s context manager (a class: a generator's costs more, on every upload)."""

    __slots__ = ("_writer",)

    def __init__(self, writer: GroupCommitWriter):
        self._writer = writer

    def __enter__(self) -> None:
        self._writer._receiving += 1

    def __exit__(self, *exc) -> None:
        self._writer._receiving -= 1


def _resolve(pairs, error) -> None:
    for f, r in pairs:
        if not f.done():
            if error is None:
                f.set_result(r)
            else:
                f.set_exception(error)
