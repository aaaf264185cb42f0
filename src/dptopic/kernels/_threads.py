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
