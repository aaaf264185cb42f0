"""A Dask ``distributed`` backend: one actor per corpus shard, driver-owned counts and recovery.

Each iteration the driver sends every shard actor the table it samples against (for plain
CGS and the noisy-count trainers the current global counts; for sound HDP-LDA only the
frozen noisy release and the K topic totals) and adds the returned count changes into the
global counts (AD-LDA, Newman et al. 2009). Shards are read by the workers themselves from
the files written by ``dptopic corpus prepare --shards N``; only an in-memory corpus is
sent from the driver, one shard to each actor.

Recovery: the driver checkpoints every shard's assignments every ``checkpoint_every``
sweeps and keeps each shard's count changes since then. When a worker dies, its shards
restart from the checkpoint on a live worker, their changes since the checkpoint are taken
out of the global counts, and :meth:`DaskBackend.sweep` tells the trainer how many sweeps
each restarted shard must replay (the trainer makes a fresh release for each: see
:meth:`dptopic.models.base.GibbsTopicModel.fit`).

Needs the optional extra: ``pip install 'dptopic[dask]'``.
"""
from __future__ import annotations

import numpy as np

from ..corpus import Corpus
from ..errors import DPTopicError
from ..kernels import count_assignments, kernel_state, make_shards
from ..kernels.engine import _run_kernel
from .base import Backend
from .shards import ShardSet


def _require_distributed():
    try:
        import distributed
    except ImportError:
        raise DPTopicError("backend='dask' needs the 'distributed' package: pip install 'dptopic[dask]'.") from None
    return distributed


class ShardActor:
    """Lives on a Dask worker: one shard's tokens, topic assignments ``z`` and document counts ``ndk``."""

    def __init__(self, n_topics: int, vocab_size: int, kind: str, path=None, word_ids=None, doc_ptr=None):
        if path is not None:
            c = Corpus.load(path)
            word_ids, doc_ptr = c.word_ids, c.doc_ptr
        self.word_ids, self.doc_ptr = word_ids, np.ascontiguousarray(doc_ptr)
        self.K, self.V, self.kind = n_topics, vocab_size, kind
        if word_ids.size and int(word_ids.max()) >= vocab_size:
            raise DPTopicError(f"corpus shard {path!r} has word ids beyond the vocabulary size {vocab_size}.")

    def start(self, rng, secure_coins=False):
        """Random start from ``rng``; returns this shard's ``(nwk, nk)``. ``secure_coins``: the
        sampler's state comes from this worker's OS CSPRNG instead of ``rng``."""
        self.z = rng.integers(0, self.K, size=self.word_ids.shape[0], dtype=np.int32)
        self.ndk, nwk, nk = count_assignments(self.word_ids, self.doc_ptr, self.z, self.K, self.V)
        self.state = kernel_state(None if secure_coins else rng)
        return nwk, nk

    def restore(self, z, ndk, state):
        self.z, self.ndk, self.state = z.copy(), ndk.copy(), state.copy()

    def sweep(self, alpha, beta, nwk, nk, word_table, clip, dtype):
        """Sweep against ``nwk`` (or against ``word_table``, ``nwk`` then ``None``); return the count changes."""
        work = nwk.copy() if nwk is not None else np.zeros((self.V, self.K), dtype=dtype)
        nk_work = nk.copy()
        _run_kernel(self.kind, self.word_ids, self.doc_ptr, self.z, self.ndk, word_table, work, nk_work,
                    alpha, beta, clip, self.state)
        if nwk is not None:
            work -= nwk
        return work, nk_work - nk

    def get_z(self):
        return self.z.copy()

    def get_ndk(self):
        return self.ndk.copy()

    def snapshot(self):
        return self.z.copy(), self.ndk.copy()

    def cast_ndk(self, dtype):
        self.ndk = self.ndk.astype(dtype)

    def perturb_ndk(self, fn, rng):
        self.ndk[...] = fn(self.ndk, rng)


def _is_lost_worker(exc: BaseException) -> bool:
    """A failure of the worker holding an actor (not an error raised by the actor's own code)."""
    return isinstance(exc, OSError) or (isinstance(exc, RuntimeError) and "lost" in str(exc).lower()) \
        or type(exc).__name__ in ("KilledWorker", "CommClosedError")


class DaskBackend(Backend):
    """Shards as Dask actors on the workers of ``client`` (a ``distributed.Client``).

    Parameters
    ----------
    client : the ``distributed.Client`` of the cluster.
    n_shards : shards for an in-memory corpus (default: one per worker); a shard set keeps its files.
    checkpoint_every : sweeps between checkpoints of every shard's assignments (driver memory).
    """

    name = "dask"

    #: default sweeps between checkpoints
    CHECKPOINT_EVERY = 5

    def __init__(self, client, n_shards: int | None = None, checkpoint_every: int | None = None):
        _require_distributed()
        if client is None:
            raise DPTopicError("backend='dask' needs client=distributed.Client(...) (or --scheduler/--dask-local on the CLI).")
        self.client = client
        self._n_shards = n_shards
        self.checkpoint_every = checkpoint_every or self.CHECKPOINT_EVERY
        self.n_restarts = 0
        self._actors = []

    # ------------------------------------------------------------------ workers
    def _workers(self) -> list[str]:
        ws = list(self.client.scheduler_info()["workers"])
        if not ws:
            self.client.wait_for_workers(1, timeout=120)
            ws = list(self.client.scheduler_info()["workers"])
        return sorted(ws)

    def _place(self, j: int, avoid=None):
        """Create shard ``j``'s actor on a live worker (the least loaded one, not ``avoid``)."""
        last = None
        for _ in range(5):
            ws = [w for w in self._workers() if w != avoid] or self._workers()
            load = {w: sum(1 for x in self.where if x == w) for w in ws}
            w = min(ws, key=lambda a: (load[a], a)) if avoid is not None else ws[j % len(ws)]
            try:
                fut = self.client.submit(ShardActor, self.K, self.V, self.kind, actor=True, workers=[w],
                                         allow_other_workers=False, pure=False, **self._specs[j])
                actor = fut.result()
            except Exception as e:  # the chosen worker died meanwhile: pick another
                if not _is_lost_worker(e):
                    raise
                last = e
                continue
            self.where[j] = w
            return fut, actor
        raise DPTopicError(f"could not place corpus shard {j} on a live Dask worker ({type(last).__name__}); check the cluster.")

    # --------------------------------------------------------------- interface
    def open(self, source, n_topics, rng, kind, secure_coins=False):
        self.K, self.V, self.kind = n_topics, source.vocab_size, kind
        self._secure_coins = secure_coins
        if isinstance(source, ShardSet):
            self._specs = [{"path": str(p)} for p in source.paths]
        else:
            n = self._n_shards or len(self._workers())
            self._specs = [{"word_ids": source.word_ids[s.tok_start:s.tok_stop],
                            "doc_ptr": source.doc_ptr[s.doc_start:s.doc_stop + 1] - s.tok_start}
                           for s in make_shards(source.doc_ptr, n)]
        self._doc_lengths = source.doc_lengths
        n = len(self._specs)
        children = rng.spawn(n)
        self._recovery_rng = rng.spawn(1)[0]
        self.where = [None] * n
        placed = [self._place(j) for j in range(n)]
        self._futures = [p[0] for p in placed]
        self._actors = [p[1] for p in placed]
        parts = [f.result() for f in [a.start(r, secure_coins) for a, r in zip(self._actors, children)]]
        nwk = sum(p[0] for p in parts)
        nk = sum(p[1] for p in parts)
        from ..kernels import SweepArrays

        self.arrays = SweepArrays(None, None, None, None, nwk, nk)
        self._sweeps = 0
        self.checkpoint()
        return self.arrays

    @property
    def n_shards(self) -> int:
        return len(self._actors)

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        a = self.arrays
        full = shards is None
        shards = range(self.n_shards) if full else shards
        # sound HDP-LDA: the frozen noisy table and the topic totals travel, never the true word counts
        nwk = a.nwk if word_table is None else None
        calls = {j: self._actors[j].sweep(alpha, beta, nwk, a.nk, word_table, clip, a.nwk.dtype.str)
                 for j in shards}
        lost = []
        for j, call in calls.items():
            try:
                dnwk, dnk = call.result()
            except Exception as e:
                if not _is_lost_worker(e):
                    raise
                lost.append(j)
                continue
            a.nwk += dnwk
            a.nk += dnk
            if self._since[j].dtype != a.nwk.dtype:
                self._since[j] = self._since[j].astype(a.nwk.dtype)
                self._since_nk[j] = self._since_nk[j].astype(a.nk.dtype)
            self._since[j] += dnwk
            self._since_nk[j] += dnk
            self._since_n[j] += 1
        todo = {}
        for j in lost:
            todo[j] = self._since_n[j] + 1   # the sweeps since the checkpoint, and this one
            self.restore(j)
        if full and not lost:
            self._sweeps += 1
            if self._sweeps % self.checkpoint_every == 0:
                self.checkpoint()
        return todo

    def _gather(self, method):
        return [f.result() for f in [getattr(act, method)() for act in self._actors]]

    @property
    def z(self):
        return np.concatenate(self._gather("get_z"))

    def doc_topic_counts(self):
        return np.concatenate(self._gather("get_ndk"))

    @property
    def doc_lengths(self):
        return self._doc_lengths

    def cast_doc_counts(self, dtype):
        for f in [act.cast_ndk(np.dtype(dtype).str) for act in self._actors]:
            f.result()
        self.checkpoint()

    def perturb_doc_counts(self, fn, rng):
        rngs = rng.spawn(self.n_shards) if rng is not None else [None] * self.n_shards
        for f in [act.perturb_ndk(fn, r) for act, r in zip(self._actors, rngs)]:
            f.result()
        self.checkpoint()  # a restarted shard must come back with its noisy document counts

    def checkpoint(self):
        self._ckpt = self._gather("snapshot")
        self._since = [np.zeros_like(self.arrays.nwk) for _ in self._actors]
        self._since_nk = [np.zeros_like(self.arrays.nk) for _ in self._actors]
        self._since_n = [0] * self.n_shards

    def restore(self, shard):
        a = self.arrays
        self._futures[shard], self._actors[shard] = self._place(shard, avoid=self.where[shard])
        z, ndk = self._ckpt[shard]
        self._actors[shard].restore(z, ndk, kernel_state(None if self._secure_coins else self._recovery_rng)).result()
        a.nwk -= self._since[shard]
        a.nk -= self._since_nk[shard]
        self._since[shard][...] = 0
        self._since_nk[shard][...] = 0
        self._since_n[shard] = 0
        self.n_restarts += 1

    def close(self):
        self._actors = []
        self._futures = []
