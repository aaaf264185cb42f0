"""The default backend: document shards swept by threads on this machine (:class:`~dptopic.kernels.ShardedSweeper`)."""
from __future__ import annotations

import numpy as np

from ..corpus.shards import ShardSet
from ..kernels import ShardedSweeper, SweepArrays, count_assignments, kernel_state
from ..kernels.warp import WarpSweeper
from .base import Backend


class ThreadBackend(Backend):
    """``n_jobs`` shards in threads, sharing the counts in memory. Nothing can be lost, so nothing is replayed.

    ``parallel``: ``"adlda"`` (document shards against a snapshot, deltas merged) or ``"partition"``
    (documents × words blocks swept diagonal by diagonal, no merge; :class:`~dptopic.kernels.engine.Partition`).

    For a fixed seed and ``n_jobs`` the run is bit-for-bit reproducible.
    """

    name = "threads"

    def __init__(self, n_jobs: int = 1, parallel: str = "adlda"):
        self.n_jobs = n_jobs
        self.parallel = parallel
        self._sweeper = None

    def open(self, source, n_topics, rng, kind, secure_coins=False):
        corpus = source.load_all() if isinstance(source, ShardSet) else source
        self._doc_lengths = corpus.doc_lengths
        worker_rngs = rng.spawn(self.n_jobs)
        z = rng.integers(0, n_topics, size=corpus.n_tokens, dtype=np.int32)  # data-independent start
        ndk, nwk, nk = count_assignments(corpus.word_ids, corpus.doc_ptr, z, n_topics, corpus.vocab_size)
        self.arrays = SweepArrays(corpus.word_ids, corpus.doc_ptr, z, ndk, nwk, nk)
        self._states = [kernel_state(None if secure_coins else r) for r in worker_rngs]
        if kind == "warp":  # word-ordered Metropolis-Hastings passes: their own blocks, whatever `parallel` says
            self._sweeper = WarpSweeper(self.arrays, self.n_jobs)
        else:
            self._sweeper = ShardedSweeper(self.arrays, self.n_jobs, kind, self.parallel)
        return self.arrays

    @property
    def n_shards(self) -> int:
        return self._sweeper.n_shards

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        self._sweeper.sweep(alpha, beta, self._states, word_table=word_table, clip=clip)
        return {}

    @property
    def z(self):
        if self._sweeper is not None:
            self._sweeper.sync()
        return self.arrays.z

    def doc_topic_counts(self):
        if isinstance(self._sweeper, WarpSweeper):
            self._sweeper.sync()    # the warp sampler brings ndk up to date only when it is read
        return self.arrays.ndk

    @property
    def doc_lengths(self):
        return self._doc_lengths

    def cast_doc_counts(self, dtype):
        self.arrays.ndk = self.arrays.ndk.astype(dtype)

    def perturb_doc_counts(self, fn, rng):
        out = fn(self.arrays.ndk, rng)
        if out is not self.arrays.ndk:  # fn may noise the counts in place
            self.arrays.ndk[...] = out

    def checkpoint(self):
        self._sweeper.sync()
        a = self.arrays
        self._saved = (a.z.copy(), a.ndk.copy(), a.nwk.copy(), a.nk.copy())

    def restore(self, shard=0):
        a = self.arrays
        z, ndk, nwk, nk = self._saved
        a.z[...] = z
        a.ndk[...] = ndk
        a.nwk[...] = nwk
        a.nk[...] = nk
        self._sweeper.invalidate()

    def close(self):
        if self._sweeper is not None:
            self._sweeper.close()
            self._sweeper = None
