"""Shard-and-merge sweeps (AD-LDA), the unit of work for threads and, later, workers.

The unit of work is :func:`sweep_shard`: a pure function that sweeps one shard of
documents against a *snapshot* of the word–topic counts and returns the shard's
new assignments plus the count deltas. :class:`ShardedSweeper` runs one call per
shard (in threads; the kernels release the GIL), then adds the deltas to the
global counts. With one shard the kernel works on the global counts directly,
which is exactly sequential CGS and bit-for-bit reproducible for a fixed seed.
"""
from __future__ import annotations

from concurrent.futures import wait
from dataclasses import dataclass

import numpy as np

from ._threads import PoolOwner
from .counts import list_positions, undo_moves
from .dense import dense_sweep
from .frozen import frozen_sweep
from .rng import own_line
from .sparse import build_word_lists, sparse_sweep


@dataclass(frozen=True)
class Shard:
    """A contiguous block of documents ``[doc_start, doc_stop)`` and its token range."""

    doc_start: int
    doc_stop: int
    tok_start: int
    tok_stop: int


def make_shards(doc_ptr: np.ndarray, n_shards: int) -> list[Shard]:
    """Split documents into ``n_shards`` contiguous blocks of roughly equal token counts."""
    D = len(doc_ptr) - 1
    n_shards = max(1, min(n_shards, D))
    targets = np.linspace(0, doc_ptr[-1], n_shards + 1)[1:-1]
    cuts = [0] + sorted(set(int(np.searchsorted(doc_ptr, t)) for t in targets) - {0, D}) + [D]
    return [Shard(a, b, int(doc_ptr[a]), int(doc_ptr[b])) for a, b in zip(cuts[:-1], cuts[1:])]


@dataclass
class SweepArrays:
    """The sampler state of one corpus: tokens, assignments and counts.

    ``nwk`` is the word–topic count matrix stored word-major (``V × K``) for locality;
    ``word_table`` is what the sampler reads as the word factor (``nwk`` itself for
    plain CGS, a frozen noisy release for sound HDP-LDA).
    """

    word_ids: np.ndarray
    doc_ptr: np.ndarray
    z: np.ndarray
    ndk: np.ndarray
    nwk: np.ndarray
    nk: np.ndarray


def _run_kernel(kind, word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, clip, state, lists=None):
    vbeta = beta * nwk.shape[0]
    if kind == "sparse":
        wnz, wpos, wlen = build_word_lists(nwk) if lists is None else lists
        sparse_sweep(word_ids, doc_ptr, z, ndk, nwk, nk, wnz, wpos, wlen, alpha, beta, vbeta, state)
    elif kind == "frozen":
        # word_table is the frozen factor clip(S, 0, C) + beta (sound HDP-LDA)
        frozen_sweep(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, vbeta, state)
    else:
        table = nwk if word_table is None else word_table
        dense_sweep(word_ids, doc_ptr, z, ndk, table, nwk, nk, alpha, beta, vbeta, clip, state)


run_kernel = _run_kernel   # its public name, for the backends (engine's own sweeps call _run_kernel)


def _shard_views(arr: SweepArrays, sh: Shard):
    ptr = arr.doc_ptr[sh.doc_start:sh.doc_stop + 1] - sh.tok_start
    return (arr.word_ids[sh.tok_start:sh.tok_stop], ptr, arr.z[sh.tok_start:sh.tok_stop],
            arr.ndk[sh.doc_start:sh.doc_stop])


def sweep_shard(kind: str, word_ids, doc_ptr, z, ndk, nwk_snapshot, nk_snapshot, alpha: float,
                beta: float, state: np.ndarray, word_table=None, clip: float = np.inf):
    """Pure unit of work: sweep one shard against a snapshot; return results and deltas.

    Inputs are not modified. Returns ``(z, ndk, delta_nwk, delta_nk, state)``.
    ``doc_ptr`` must start at 0 and index into ``word_ids``.
    """
    z, ndk, state = z.copy(), ndk.copy(), state.copy()
    nwk, nk = nwk_snapshot.copy(), nk_snapshot.copy()
    _run_kernel(kind, word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, clip, state)
    return z, ndk, nwk - nwk_snapshot, nk - nk_snapshot, state


def word_blocks(word_ids: np.ndarray, vocab_size: int, n_blocks: int) -> np.ndarray:
    """Block index of every word: contiguous word-id ranges with about equal token counts."""
    freq = np.bincount(word_ids, minlength=vocab_size).astype(np.float64)
    cum = np.cumsum(freq) - freq / 2  # a word goes where its tokens' midpoint falls
    total = max(float(freq.sum()), 1.0)
    return np.minimum((cum * n_blocks / total).astype(np.int64), n_blocks - 1)


class Partition:
    """Documents × words split into ``P × P`` blocks, swept one diagonal at a time (Yan et al. 2009).

    In round ``r`` worker ``p`` sweeps the tokens of document block ``p`` whose words lie in word
    block ``(p + r) mod P``: the workers write disjoint rows of ``ndk`` and of ``nwk`` (and of the
    sparse sampler's per-word lists), so the word–topic counts need no snapshot and no merge.
    Only the ``K`` topic totals are copied per worker and summed after each round.
    Tokens are kept permuted so that every block is a contiguous range.
    """

    def __init__(self, word_ids, doc_ptr, vocab_size: int, n_blocks: int):
        shards = make_shards(doc_ptr, n_blocks)
        P = len(shards)
        blocks = word_blocks(word_ids, vocab_size, P)
        # word block q is the word ids words[q] .. words[q + 1] - 1 (the blocks are contiguous and in order)
        self.words = np.searchsorted(blocks, np.arange(P + 1)).tolist()
        self.shards = shards
        wb = blocks.astype(np.int16 if P < 2**15 else np.int64)[word_ids]  # radix sort
        order = np.empty(word_ids.shape[0], dtype=np.int64)
        self.cells = {}
        for p, sh in enumerate(shards):
            blk = wb[sh.tok_start:sh.tok_stop]
            local = np.argsort(blk, kind="stable")  # grouped by word block, in document order inside
            order[sh.tok_start:sh.tok_stop] = local + sh.tok_start
            doc = np.repeat(np.arange(sh.doc_stop - sh.doc_start), np.diff(doc_ptr[sh.doc_start:sh.doc_stop + 1]))
            start = sh.tok_start
            for q in range(P):
                in_q = blk == q
                ptr = np.zeros(sh.doc_stop - sh.doc_start + 1, dtype=np.int64)
                np.cumsum(np.bincount(doc[in_q], minlength=sh.doc_stop - sh.doc_start), out=ptr[1:])
                stop = start + int(ptr[-1])
                self.cells[p, q] = (start, stop, ptr, sh.doc_start, sh.doc_stop)
                start = stop
        self.order = order
        self.word_ids = np.ascontiguousarray(word_ids[order])
        self.n_blocks = P


class ShardedSweeper(PoolOwner):
    """Runs sweeps over ``n_jobs`` shards in threads and merges their count deltas.

    With one shard the sparse sampler keeps its per-word topic lists across sweeps (the
    sweeper owns the counts between sweeps: call :meth:`invalidate` after changing them).
    With several shards, shard 0 sweeps the global counts in place and the others sweep
    copies of the snapshot; their V×K deltas are merged after the sweep (AD-LDA).
    (Exchanging only the moved tokens instead was measured slower: two random-access list
    updates per changed token cost more than one vectorised V×K merge.)
    """

    def __init__(self, arrays: SweepArrays, n_jobs: int, kind: str, scheme: str = "adlda"):
        self.arrays = arrays
        self.kind = kind
        self.shards = make_shards(arrays.doc_ptr, n_jobs)
        self._start_pool(len(self.shards) - 1)
        self._lists = None
        self._partition = None
        self._zp = None  # partition scheme: z in block order, written back by sync()
        if scheme == "partition" and self._pool is not None:
            self._partition = Partition(arrays.word_ids, arrays.doc_ptr, arrays.nwk.shape[0], len(self.shards))

    def invalidate(self) -> None:
        """Forget cached sampler state (the counts or assignments were changed outside the sweeper)."""
        self._lists = None
        self._zp = None

    def sync(self) -> None:
        """Bring ``arrays.z`` up to date (the partition scheme keeps it in block order between sweeps)."""
        if self._zp is not None:
            self.arrays.z[self._partition.order] = self._zp

    @property
    def n_shards(self) -> int:
        return len(self.shards)

    def close(self) -> None:
        self.sync()
        self._zp = None
        self._lists = None
        super().close()

    def sweep(self, alpha: float, beta: float, states: list[np.ndarray], word_table=None,
              clip: float = np.inf) -> None:
        """One full sweep. ``states[j]`` is the kernel RNG state of shard ``j`` (advanced in place).

        With several shards, one that fails (an error in its thread) leaves ``z``, ``ndk``, ``nwk`` and ``nk`` as
        they were before the sweep, and ``states`` too (the others' changes are rolled back once every thread has
        stopped), and the error is raised: a retry makes the sweep the failure interrupted."""
        a = self.arrays
        if self._pool is None:
            wid, ptr, z, ndk = _shard_views(a, self.shards[0])
            if self.kind == "sparse" and self._lists is None:
                self._lists = build_word_lists(a.nwk)
            _run_kernel(self.kind, wid, ptr, z, ndk, word_table, a.nwk, a.nk, alpha, beta, clip, states[0],
                        self._lists)
            return
        if self._partition is not None:
            return self._sweep_partition(alpha, beta, states, word_table, clip)
        # Shard 0 sweeps the global counts in place; shards 1.. sweep private copies of the
        # snapshot and return deltas, merged once all shards are done (AD-LDA). Same result as
        # giving every shard a copy, with one copy, one subtraction and one merge fewer.
        snap_nwk, snap_nk = a.nwk.copy(), a.nk.copy()
        saved = a.z.copy(), a.ndk.copy(), [st.copy() for st in states]   # a failing shard changes nothing (< 1%)

        def work(j):
            wid, ptr, z, ndk = _shard_views(a, self.shards[j])
            if j == 0:
                _run_kernel(self.kind, wid, ptr, z, ndk, word_table, a.nwk, a.nk, alpha, beta, clip, states[0])
                return None
            nwk, nk = snap_nwk.copy(), snap_nk.copy()
            _run_kernel(self.kind, wid, ptr, z, ndk, word_table, nwk, nk, alpha, beta, clip, states[j])
            nwk -= snap_nwk
            nk -= snap_nk
            return nwk, nk

        try:
            deltas = self._run(work, [(j,) for j in range(len(self.shards))])
        except BaseException:
            a.z[...], a.ndk[...], a.nwk[...], a.nk[...] = saved[0], saved[1], snap_nwk, snap_nk
            for st, old in zip(states, saved[2]):
                st[...] = old
            raise
        for delta in deltas[1:]:
            a.nwk += delta[0]
            a.nk += delta[1]

    def _sweep_partition(self, alpha, beta, states, word_table, clip) -> None:
        a, part = self.arrays, self._partition
        P = part.n_blocks
        if self.kind == "sparse" and self._lists is None:
            self._lists = build_word_lists(a.nwk)  # rows are only ever touched by one worker at a time
        if self._zp is None:
            self._zp = a.z[part.order]
        z = self._zp
        # What a failing cell must not leave changed, copied by the worker that writes it, as its first round starts:
        # worker p writes its documents' assignments and rows of ndk in every round, and the rows of word block p
        # (nwk, the word lists) first, in round 0. In parallel, and into the caches of the core about to use them.
        # With integer counts only the assignments and the word lists are copied (_save_partition_block).
        saved_nk, saved_states = a.nk.copy(), [st.copy() for st in states]
        saved = [None] * P

        def work(p, r):
            if r == 0:
                saved[p] = self._save_partition_block(p)
            start, stop, ptr, d0, d1 = part.cells[p, (p + r) % P]
            nk = own_line(a.nk)  # written on every moved token: no cache line shared with the other workers
            if stop > start:
                _run_kernel(self.kind, part.word_ids[start:stop], ptr, z[start:stop], a.ndk[d0:d1], word_table,
                            a.nwk, nk, alpha, beta, clip, states[p], self._lists)
            return nk

        try:
            for r in range(P):
                base = a.nk.copy()
                for nk in self._run(work, [(p, r) for p in range(P)]):
                    a.nk += nk - base
        except BaseException:
            for p in range(P):
                if saved[p] is not None:
                    self._restore_partition_block(p, saved[p])
            a.nk[...] = saved_nk
            for st, old in zip(states, saved_states):
                st[...] = old
            raise

    def _partition_block(self, p):
        """The arrays worker ``p`` of the partition scheme writes: its documents' assignments (in block order) and
        rows of ``ndk``, and the rows of word block ``p`` in ``nwk`` and in the sparse sampler's word lists."""
        a, part = self.arrays, self._partition
        sh, (v0, v1) = part.shards[p], part.words[p:p + 2]
        out = [self._zp[sh.tok_start:sh.tok_stop], a.ndk[sh.doc_start:sh.doc_stop], a.nwk[v0:v1]]
        if self._lists is not None:     # their order decides the draws
            out += [x[v0:v1] for x in self._lists]
        return out

    def _save_partition_block(self, p):
        """What :meth:`_restore_partition_block` needs to undo worker ``p``'s cells of this sweep.

        With integer counts, the worker's assignments and the word lists of its block (``wnz`` and ``wlen``; ``wpos``
        follows from them): the counts are put back from the assignments' moves (:func:`undo_moves`, exact in integer
        arithmetic), not copied: 5.2 MB a sweep instead of 14.4 at K = 200, 3.5 instead of 5.5 at K = 50, on the
        800,000 tokens of benchmarks/bench_cgs.py; a copy that two threads make and one does not
        (docs/research/cgs_scaling.md).
        Float counts (a trainer that adds noise to them) are copied whole: there, taking one count out and putting it
        back need not give the same number."""
        a, part = self.arrays, self._partition
        if not (np.issubdtype(a.nwk.dtype, np.integer) and np.issubdtype(a.ndk.dtype, np.integer)):
            return "copy", [x.copy() for x in self._partition_block(p)]
        sh, (v0, v1) = part.shards[p], part.words[p:p + 2]
        lists = [] if self._lists is None else [self._lists[0][v0:v1].copy(), self._lists[2][v0:v1].copy()]
        return "moves", [self._zp[sh.tok_start:sh.tok_stop].copy(), *lists]

    def _restore_partition_block(self, p, saved):
        how, arrays = saved
        if how == "copy":
            for x, old in zip(self._partition_block(p), arrays):
                x[...] = old
            return
        a, part = self.arrays, self._partition
        sh, (v0, v1) = part.shards[p], part.words[p:p + 2]
        z_before = arrays[0]
        for q in range(part.n_blocks):      # every cell of worker p's documents; a cell that did not run moved nothing
            start, stop, ptr, d0, d1 = part.cells[p, q]
            if stop > start:
                undo_moves(part.word_ids[start:stop], ptr, self._zp[start:stop],
                           z_before[start - sh.tok_start:stop - sh.tok_start], a.ndk[d0:d1], a.nwk)
        self._zp[sh.tok_start:sh.tok_stop] = z_before
        if len(arrays) > 1:                 # the word lists of block p, in the order that decides the draws
            wnz, wpos, wlen = self._lists
            wnz[v0:v1], wlen[v0:v1] = arrays[1], arrays[2]
            list_positions(wnz[v0:v1], wlen[v0:v1], wpos[v0:v1])

    def _run(self, work, args):
        """``[work(*a) for a in args]``, the first on the calling thread and the rest on the pool: one
        thread fewer to wake per step (waking an idle thread costs about 0.1–0.2 ms on a small VM)."""
        futures = [self._pool.submit(work, *a) for a in args[1:]]
        try:
            first = work(*args[0])
        finally:
            wait(futures)  # never leave a shard running on the counts, even when the first one failed
        return [first] + [f.result() for f in futures]
