"""The thread pool a kernel's driver holds between calls (a sweeper, an accumulator): made once for its threads
beyond the caller's, shut down by ``close`` or at the end of a ``with`` block."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


class PoolOwner:
    """Holds ``_pool``: a :class:`~concurrent.futures.ThreadPoolExecutor` of ``workers`` threads, or None when there
    is no work for another thread. A subclass that keeps more state between calls extends :meth:`close`."""

    _pool: ThreadPoolExecutor | None = None

    def _start_pool(self, workers: int, name: str = "dptopic") -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix=name) if workers > 0 else None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system says, else the machine's count)."""
    import os  # why: only a driver that splits its work asks

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # not Linux
        return max(1, os.cpu_count() or 1)


def run_in_slices(work, n: int, threads: int | None = None, min_slice: int = 1 << 16) -> None:
    """Call ``work(start, stop)`` over ``range(n)`` cut into one contiguous slice a thread (``threads``: the usable
    cores when None), each at least ``min_slice`` long; on the caller's thread alone when one slice holds it all.
    ``work`` must release the GIL (a ``nogil`` kernel) and write only its own slice of the output, so that the result
    is the one a single call over ``range(n)`` gives."""
    threads = usable_cores() if threads is None else max(1, int(threads))
    parts = max(1, min(threads, n // max(1, min_slice)))
    if parts == 1:
        work(0, n)
        return
    bounds = [n * i // parts for i in range(parts + 1)]
    with ThreadPoolExecutor(parts - 1, thread_name_prefix="dptopic-slice") as pool:
        done = [pool.submit(work, a, b) for a, b in zip(bounds[1:-1], bounds[2:])]
        work(bounds[0], bounds[1])
        for f in done:
            f.result()


def ordered_ahead(work, items, ahead: int | None = None):
    """``work(item)`` for each of ``items``, yielded in their order, while up to ``ahead`` of the next items are
    worked on in threads (None: one fewer than the usable cores, at most 4): besides the result the caller holds, at
    most ``ahead`` are in memory, done or being made. ``work`` should spend its time in code that releases the GIL
    (NumPy's sorts, a ``nogil`` kernel); the results are those of calling it in order on one thread. Nothing is
    worked on ahead when ``ahead`` is 0."""
    from collections import deque  # why: only a driver that overlaps its steps asks

    items = iter(items)
    ahead = min(4, usable_cores() - 1) if ahead is None else max(0, int(ahead))
    if ahead == 0:
        for item in items:
            yield work(item)
        return
    with ThreadPoolExecutor(ahead, thread_name_prefix="dptopic-ahead") as pool:
        # ``ahead`` at work while the caller holds a result: each result it takes frees one place
        waiting = deque(pool.submit(work, item) for _, item in zip(range(ahead), items))
        try:
            while waiting:
                result = waiting.popleft().result()
                for item in items:          # the next item, if any, takes the freed place
                    waiting.append(pool.submit(work, item))
                    break
                yield result
        finally:
            for f in waiting:              # a consumer that stopped early: nothing more is started
                f.cancel()
