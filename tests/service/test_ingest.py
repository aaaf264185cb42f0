"""The group-commit writer (``dptopic.service.ingest``): one transaction for the uploads queued together, and a short
wait for an upload still being received before a transaction begins."""
from __future__ import annotations

import asyncio
import threading
import time

from dptopic.service.ingest import GroupCommitWriter
from dptopic.service.storage import Storage, Submission
from dptopic.service.storage.schema import submissions


class _Recorder:
    """A storage whose transactions take ``seconds`` each and record the keys they stored."""

    def __init__(self, seconds: float):
        self.seconds, self.batches, self.lock = seconds, [], threading.Lock()

    def store(self, batch, deadline=None):
        began = time.monotonic()
        time.sleep(self.seconds)
        with self.lock:
            self.batches.append([s.idempotency_key for s in batch])
            self.began = began
        return [("stored", {"idempotency_key": s.idempotency_key}) for s in batch]


def _sub(key: str) -> Submission:
    return Submission(key, "0" * 64, None, [b"\x00"])


def _writer(seconds: float, max_wait: float):
    storage = _Recorder(seconds)
    writer = GroupCommitWriter(storage, max_wait=max_wait).start()
    writer.submit(_sub("warm-up-0")).result(5)          # the writer learns how long a transaction takes
    return storage, writer


def test_an_upload_still_being_received_joins_the_transaction():
    """Transactions of 0.2 s: an upload queued while another is being received waits for it (up to 0.1 s here), and
    one transaction stores both."""
    storage, writer = _writer(0.2, max_wait=1.0)
    try:
        with writer.receiving():
            first = writer.submit(_sub("first-000"))
            time.sleep(0.02)                             # the second upload is still arriving
        second = writer.submit(_sub("second-00"))
        assert first.result(5)[0] == second.result(5)[0] == "stored"
    finally:
        writer.stop()
    assert storage.batches[1:] == [["first-000", "second-00"]]


def test_without_an_upload_on_its_way_a_transaction_begins_at_once():
    """Transactions of 0.6 s: with no upload being received, the writer does not wait its 0.3 s before the next."""
    storage, writer = _writer(0.6, max_wait=1.0)
    try:
        t = time.monotonic()
        writer.submit(_sub("alone-000")).result(5)
    finally:
        writer.stop()
    assert storage.batches[1:] == [["alone-000"]]
    assert storage.began - t < 0.2


def test_the_wait_is_at_most_half_the_last_transaction():
    """An upload announced but never submitted (a refused one) holds a transaction back by at most half the last one's
    time, not the writer's whole max_wait."""
    storage, writer = _writer(0.2, max_wait=5.0)
    try:
        with writer.receiving():
            t = time.monotonic()
            writer.submit(_sub("waits-000")).result(5)
            took = time.monotonic() - t
    finally:
        writer.stop()
    assert storage.batches[1:] == [["waits-000"]]
    assert 0.2 + 0.08 < took < 0.2 + 0.1 + 0.25


def test_an_upload_the_database_refuses_fails_alone_and_its_batch_mates_are_stored(tmp_path):
    from dptopic.service.storage import Storage, StorageError

    storage = Storage(f"sqlite:///{tmp_path / 's.db'}")
    writer = GroupCommitWriter(storage)
    try:
        subs = [Submission(f"key-good-{i:04d}", f"{i:064x}", None, [bytes([i])]) for i in range(3)]
        subs.insert(1, Submission("key-bad-00001", "f" * 64, None, [b"\x07", None]))   # packed is NOT NULL
        futures = [writer.submit(s) for s in subs]      # queued before the writer starts: one group
        writer.start()
        outcomes = []
        for f in futures:
            try:
                outcomes.append(f.result(10)[0])
            except StorageError as e:
                outcomes.append(type(e).__name__)
        assert outcomes == ["stored", "StorageError", "stored", "stored"]
        # the refused upload left nothing; each batch-mate is stored once, acknowledged after its own commit
        assert storage.counts()["submissions"] == 3
        assert [p for _, p in storage.fetch_reports(0, 10)] == [b"\x00", b"\x01", b"\x02"]
    finally:
        writer.stop()
        storage.close()


def test_on_a_sqlite_file_with_full_sync_an_upload_is_answered_after_an_fsync_begun_after_its_commit(tmp_path):
    """synchronous=full (the default): the writer commits without waiting for the disk and answers a group only after
    an fsync of the log that began once its commit had returned (the syncs run beside the writer, several at once), so
    an acknowledged upload survives a power cut; a failed fsync fails the group's uploads."""
    from dptopic.service.storage import Storage, StorageError

    storage = Storage(f"sqlite:///{tmp_path / 's.db'}")
    real_sync, gate, began = storage.sync, threading.Event(), []

    def sync():
        began.append(storage.count_reports())       # what was committed when this sync began
        if not gate.wait(10):
            raise StorageError("the disk did not answer (simulated)")
        real_sync()

    storage.sync = sync
    writer = GroupCommitWriter(storage).start()
    try:
        first = writer.submit(Submission("key-sync-0001", "1" * 64, None, [b"\x01"]))
        deadline = time.monotonic() + 10
        while not began and time.monotonic() < deadline:
            time.sleep(0.01)
        second = writer.submit(Submission("key-sync-0002", "2" * 64, None, [b"\x02"]))
        time.sleep(0.2)
        assert began[:1] == [1] and storage.count_reports() == 2   # both committed while the first sync waits
        assert not first.done() and not second.done()              # neither answered before its fsync
        gate.set()
        assert first.result(10)[0] == second.result(10)[0] == "stored"
        assert began == [1, 2]
        with storage.read() as conn:    # the upload's connection is back in the pool with its commits synced again
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2
        storage.sync = lambda: (_ for _ in ()).throw(StorageError("fsync failed (simulated)"))
        try:
            writer.submit(Submission("key-sync-0003", "3" * 64, None, [b"\x03"])).result(10)
            raise AssertionError("a failed fsync answered the upload")
        except StorageError:
            pass
    finally:
        gate.set()
        writer.stop()
        storage.close()


def test_the_uploads_of_one_loop_iteration_reach_the_writer_in_one_hand_over():
    """Uploads submitted from the event loop in one iteration are queued for the writer together at its end (one
    wake of the writer thread, not one per upload), and stored in one transaction."""
    import asyncio

    storage = _Recorder(0.0)
    writer = GroupCommitWriter(storage)
    puts = []
    real_put = writer._q.put
    writer._q.put = lambda items: (puts.append(len(items)), real_put(items))[1]

    async def main():
        futures = [writer.submit_async(_sub(f"loop-{i:05d}")) for i in range(5)]
        assert puts == []                               # held until the iteration ends
        writer.start()
        return await asyncio.gather(*futures)

    try:
        answers = asyncio.run(main())
        handed_over = list(puts)                        # before stop(), whose empty hand-over wakes the writer
    finally:
        writer.stop()
    assert [a[0] for a in answers] == ["stored"] * 5
    assert handed_over == [5] and storage.batches == [[f"loop-{i:05d}" for i in range(5)]]


def test_stop_wakes_the_writer_waiting_for_uploads():
    """``stop()`` ends the writer's wait for uploads at once (a server stops without waiting out the writer's poll):
    here the wait is made a minute long, and the writer's thread has ended when ``stop`` returns."""
    writer = GroupCommitWriter(_Recorder(0.0))
    real_get = writer._q.get
    writer._q.get = lambda block=True, timeout=None: real_get(block, 60 if block else None)
    writer.start()
    writer.stop(timeout=10)
    assert not writer._thread.is_alive()


def test_writer_acknowledges_each_request_after_its_commit_with_one_loop_call_per_transaction(tmp_path):
    """Requests wait on asyncio futures; each is resolved only once the transaction holding it committed, and a
    transaction wakes the event loop once, not once per request. A failed commit fails every request it held."""
    storage = Storage(f"sqlite:///{tmp_path / 's.db'}")
    committed, gate = set(), threading.Event()

    class GatedStorage:
        fail = False

        def store(self, batch):
            gate.wait(10)  # let the requests pile up behind the first transaction
            if self.fail:
                raise RuntimeError("disk full")
            out = storage.store(batch)
            committed.update(s.idempotency_key for s in batch)
            return out

    async def run(fail):
        loop = asyncio.get_running_loop()
        calls = []
        real = loop.call_soon_threadsafe
        loop.call_soon_threadsafe = lambda *a, **k: (calls.append(a[0]), real(*a, **k))[1]
        backend = GatedStorage()
        backend.fail = fail
        writer = GroupCommitWriter(backend).start()
        try:
            subs = [Submission(f"{'f' if fail else 'k'}-key-{i:04d}", f"{i:064x}", None, [bytes([i])]) for i in range(20)]
            futs = [writer.submit_async(s) for s in subs]

            async def acked(sub, fut):
                outcome, ack = await fut
                assert sub.idempotency_key in committed  # the commit came first
                return outcome

            waits = [asyncio.ensure_future(acked(s, f)) for s, f in zip(subs, futs)]
            await asyncio.sleep(0.05)
            gate.set()
            results = await asyncio.gather(*waits, return_exceptions=True)
            return results, len(calls), writer.transactions
        finally:
            writer.stop()
            gate.clear()

    results, calls, transactions = asyncio.run(run(False))
    assert results == ["stored"] * 20 and 1 <= transactions < 20 and calls == transactions
    results, calls, _ = asyncio.run(run(True))
    assert all(isinstance(r, RuntimeError) and str(r) == "disk full" for r in results) and 1 <= calls < 20
    with storage.read() as c:
        assert {r.idempotency_key for r in c.execute(submissions.select())} >= {f"k-key-{i:04d}" for i in range(20)}
    storage.close()
