"""A Dask ``distributed`` backend: one actor per corpus shard, driver-owned counts and recovery.

Each iteration the driver sends every shard actor what it samples against and adds the
returned count changes into the global counts (AD-LDA, Newman et al. 2009). For plain CGS
and the noisy-count trainers every actor keeps a copy of the global word–topic counts, and
the driver sends only the entries that changed since the last sweep (the other shards'
changes and any noise the trainer wrote into the counts), once, in the sweep call itself;
each actor returns only the entries its sweep changed. For sound HDP-LDA only the frozen
noisy release and the K topic totals travel (``docs/privacy.md``): the actors keep no copy
of the true counts. Shards are read by the workers themselves from the files written by
:func:`~dptopic.corpus.shards.write_shards`; only an in-memory corpus is sent from the driver, one
shard to each actor.

Recovery: every call the driver makes to an actor (create and start a shard, sweep,
perturb or collect its document counts, gather its assignments) goes through one path
(:meth:`DaskBackend._call`). Every ``checkpoint_every`` sweeps a shard's sweep also returns
its assignments, which the driver keeps as the shard's checkpoint with the count changes
since then. When a worker dies at any point, its shards restart from their checkpoints on a
live worker, their changes since then are taken out of the global counts (so the counts
stay exactly those of the assignments), and the next :meth:`DaskBackend.sweep` or
:meth:`DaskBackend.collect` tells the trainer how many sweeps each restarted shard must
replay (the trainer makes a fresh release for each: see
:meth:`dptopic.models.base.GibbsTopicModel.fit`).

Needs the optional extra: ``pip install 'dptopic[dask]'``.
"""
from __future__ import annotations

import os
import tempfile
import time

import numpy as np
from numba import typeof

from .. import kernels
from ..corpus import Corpus
from ..corpus.shards import ShardSet
from ..errors import DPTopicError
from ..kernels import SweepArrays, count_assignments, kernel_state, make_shards
from ..kernels.engine import run_kernel as _run_kernel
from .base import Backend

#: attempts to place (or re-place) a shard before giving up on the cluster
_ATTEMPTS = 5


def _require_distributed():
    try:
        import distributed  # optional: the 'dask' extra
    except ImportError:
        raise DPTopicError("backend='dask' needs the 'distributed' package: pip install 'dptopic[dask]'.") from None
    return distributed


# ------------------------------------------------------------------ messages
# A change to a V×K table travels either dense or as (flat indices, values), whichever is smaller.

def _sparse_pays(n_changed: int, table: np.ndarray) -> bool:
    idx_bytes = 4 if table.size < 2**31 else 8
    return n_changed * (idx_bytes + table.itemsize) < table.nbytes


def _changed(new: np.ndarray, old: np.ndarray | None) -> np.ndarray:
    flat = new.reshape(-1)
    idx = np.flatnonzero(flat if old is None else flat != old.reshape(-1))
    return idx.astype(np.int32) if new.size < 2**31 else idx


def pack_delta(new: np.ndarray, old: np.ndarray | None):
    """``new - old`` (``old=None``: ``new``) as a dense array, or ``(indices, values)`` into the flat table."""
    idx = _changed(new, old)
    if not _sparse_pays(idx.size, new):
        return new if old is None else new - old
    vals = new.reshape(-1)[idx]
    if old is not None:
        vals = vals - old.reshape(-1)[idx]
    return idx, vals


def add_delta(target: np.ndarray, delta, sign: int = 1) -> None:
    """``target += sign * delta`` for a delta from :func:`pack_delta` (in place)."""
    if isinstance(delta, tuple):
        idx, vals = delta
        if target.flags.c_contiguous:
            flat = target.reshape(-1)  # a view
            if sign > 0:
                flat[idx] += vals
            else:
                flat[idx] -= vals
            return
        dense = np.zeros(target.shape, dtype=vals.dtype)
        dense.reshape(-1)[idx] = vals
        delta = dense
    if sign > 0:
        target += delta
    else:
        target -= delta


def _nbytes(obj) -> int:
    """Bytes of the arrays in a message (what travels, less framing)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    return 0


# ------------------------------------------------------------------ compiling on the workers
# Two worker processes on one machine that compile the same numba function at the same moment write its cache files
# over each other, and a process that then loads them can crash (numba issue #4807; a worker died of SIGSEGV in a
# test run this way, the first time two workers met the float-count sweep of a noisy-count trainer). So a worker
# compiles (or loads) each kernel signature once, the first time it needs it, holding a lock file that every worker
# process on the machine shares; later calls take no lock.
_WARM: set = set()
"""Keys of what this worker process has compiled or loaded under the lock."""


_LOCK_PATH: list = []


def _compile_lock_path() -> str:
    """Chosen once per process: next to numba's cache of the kernels when that folder is writable, else in the
    temporary folder under a name of this user's (another user's lock file may not be ours to open)."""
    if not _LOCK_PATH:
        cache = os.path.join(os.path.dirname(kernels.__file__), "__pycache__")   # where numba caches the kernels
        if os.path.isdir(cache) and os.access(cache, os.W_OK):
            _LOCK_PATH.append(os.path.join(cache, "dptopic-numba-compile.lock"))
        else:
            uid = os.getuid() if hasattr(os, "getuid") else "user"
            _LOCK_PATH.append(os.path.join(tempfile.gettempdir(), f"dptopic-numba-compile-{uid}.lock"))
    return _LOCK_PATH[0]


def _first_time_locked(key, call):
    """``call()``; the first time this process meets ``key``, under the machine-wide compile lock (without it where
    the lock cannot be had: no flock on this system, or a lock file this process may not open)."""
    if key in _WARM:
        return call()
    try:
        import fcntl  # POSIX only

        fd = os.open(_compile_lock_path(), os.O_RDONLY | os.O_CREAT, 0o666)   # flock needs no write access
    except (ImportError, OSError):
        out = call()
    else:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            out = call()
        finally:
            os.close(fd)            # closing the descriptor releases the lock
    _WARM.add(key)
    return out


def _array_key(*values) -> tuple:
    """What selects a compiled signature: numba's type of each value (dtype, dimensions, layout, read-only for an
    array; int or float for a scalar)."""
    return tuple(None if v is None else str(typeof(v)) for v in values)


def _warm_sweep(kind, word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, clip, state) -> None:
    """Compile or load the sweep kernels for these arrays' types without sweeping: the same call on zero documents
    (``doc_ptr[:1]``), on copies of everything a sweep writes, so nothing of the shard or its sampler state changes."""
    key = ("sweep", kind, nk.shape[0]) + _array_key(word_ids, doc_ptr, z, ndk, word_table, nwk, nk, alpha, beta, clip,
                                                    state)  # K picks between two compiled dense kernels
    if key in _WARM:
        return
    _first_time_locked(key, lambda: _run_kernel(kind, word_ids, doc_ptr[:1], z, ndk, word_table, nwk.copy(), nk.copy(),
                                                alpha, beta, clip, state.copy()))


def _narrow(z: np.ndarray, n_topics: int) -> np.ndarray:
    """Assignments in the smallest unsigned type that holds ``n_topics`` (checkpoint traffic)."""
    dtype = np.uint8 if n_topics <= 2**8 else np.uint16 if n_topics <= 2**16 else np.int32
    return z.astype(dtype)


def load_shard(path) -> Corpus:
    """Run on a Dask worker: the corpus shard at ``path``, or one line saying the workers need the files."""
    if not os.path.isfile(path):
        raise DPTopicError(f"a Dask worker cannot read corpus shard {path!r}: the shard files must be at the same"
                           " path on every worker (e.g. a shared file system).")
    return Corpus.load(path)


class ShardActor:
    """Lives on a Dask worker: one shard's tokens, topic assignments ``z`` and document counts ``ndk``.

    ``base`` is this actor's copy of the global word–topic counts as of the start of its last
    sweep (``None`` when it samples against a table sent with each sweep, as sound HDP-LDA does).
    """

    def __init__(self, n_topics: int, vocab_size: int, kind: str, path=None, word_ids=None, doc_ptr=None):
        if path is not None:
            c = load_shard(path)
            word_ids, doc_ptr = c.word_ids, c.doc_ptr
        self.word_ids, self.doc_ptr = word_ids, np.ascontiguousarray(doc_ptr)
        self.K, self.V, self.kind = n_topics, vocab_size, kind
        if word_ids.size and int(word_ids.max()) >= vocab_size:
            raise DPTopicError(f"corpus shard {path!r} has word ids beyond the vocabulary size {vocab_size}.")
        self.base = None
        self.noisy_ndk = False   # ndk no longer follows from z (document-side noise / cast)

    def start(self, rng, secure_coins=False):
        """Random start from ``rng``; returns this shard's ``(nwk, nk, checkpoint)``. ``secure_coins``:
        the sampler's state comes from this worker's OS CSPRNG instead of ``rng``."""
        self.z = rng.integers(0, self.K, size=self.word_ids.shape[0], dtype=np.int32)
        self.ndk, nwk, nk = _first_time_locked(
            ("count_assignments",) + _array_key(self.word_ids, self.doc_ptr, self.z),
            lambda: count_assignments(self.word_ids, self.doc_ptr, self.z, self.K, self.V))
        self.state = kernel_state(None if secure_coins else rng)
        return nwk, nk, self.snapshot()

    def restore(self, ckpt, state):
        """Restart from a checkpoint; ``state=None``: a fresh sampler state from this worker's CSPRNG."""
        z, ndk, ndk_dtype = ckpt
        self.z = z.astype(np.int32)
        if ndk is None:
            ndk = _first_time_locked(("count_assignments",) + _array_key(self.word_ids, self.doc_ptr, self.z),
                                     lambda: count_assignments(self.word_ids, self.doc_ptr, self.z, self.K, self.V))[0]
        self.ndk = np.array(ndk, dtype=ndk_dtype)
        self.noisy_ndk = ckpt[1] is not None
        self.state = kernel_state(None) if state is None else np.array(state)
        self.base = None

    def snapshot(self):
        """This shard's checkpoint: ``(z, ndk or None when it follows from z, ndk dtype)``."""
        return _narrow(self.z, self.K), (self.ndk.copy() if self.noisy_ndk else None), self.ndk.dtype.str

    def sweep(self, alpha, beta, update, nk, word_table, clip, dtype, checkpoint):
        """One sweep. ``update``: ``("full", nwk)`` or ``("set", indices, values)`` brings ``base`` to the
        global counts; ``None`` with ``word_table`` (sampled against instead, no copy of the counts kept).

        Returns ``(count changes as from pack_delta, topic-total changes, checkpoint or None, seconds
        this call took on the worker)``.
        """
        t0 = time.perf_counter()
        if word_table is not None:
            self.base = None
            work = np.zeros((self.V, self.K), dtype=dtype)
        else:
            if update[0] == "full":
                self.base = np.array(update[1], order="C")
            else:
                self.base.reshape(-1)[update[1]] = update[2]
            work = self.base.copy()
        nk_work = np.array(nk)
        _warm_sweep(self.kind, self.word_ids, self.doc_ptr, self.z, self.ndk, word_table, work, nk_work,
                    alpha, beta, clip, self.state)
        _run_kernel(self.kind, self.word_ids, self.doc_ptr, self.z, self.ndk, word_table, work, nk_work,
                    alpha, beta, clip, self.state)
        out = pack_delta(work, self.base), nk_work - nk, (self.snapshot() if checkpoint else None)
        return out + (time.perf_counter() - t0,)

    def collect(self):
        return self.z.copy(), self.ndk.copy()

    def cast_ndk(self, dtype):
        self.ndk = self.ndk.astype(dtype)
        self.noisy_ndk = True
        return self.snapshot()

    def perturb_ndk(self, fn, rng):
        # keyed by the noise's kind and settings, never by the object (a new one comes with every call)
        settings = tuple(sorted((k, v) for k, v in getattr(fn, "__dict__", {}).items()
                                if isinstance(v, (bool, int, float, str))))
        kind = getattr(fn, "__qualname__", None) or type(fn).__module__ + "." + type(fn).__qualname__
        out = _first_time_locked(("perturb_ndk", kind, settings) + _array_key(self.ndk), lambda: fn(self.ndk, rng))
        if out is not self.ndk:  # fn may noise the counts in place
            self.ndk[...] = out
        self.noisy_ndk = True
        return self.snapshot()


#: the actor methods that change a shard's state: one failing among several leaves the shards out of step
_CHANGES_STATE = frozenset({"sweep", "perturb_ndk", "cast_ndk"})


def _is_lost_worker(exc: BaseException) -> bool:
    """A failure of the worker holding an actor (not an error raised by the actor's own code)."""
    return isinstance(exc, OSError) or (isinstance(exc, RuntimeError) and "lost" in str(exc).lower()) \
        or type(exc).__name__ in ("KilledWorker", "CommClosedError", "FutureCancelledError", "CancelledError")


def _on_worker(e: Exception, worker) -> Exception:
    """A worker's error, as the driver reports it: a missing OpenDP names the worker that lacks it (the driver may
    well have it); any other error unchanged."""
    if isinstance(e, DPTopicError) and str(e).startswith("secure mode needs OpenDP"):
        where = f" {worker}" if worker else ""
        return DPTopicError(f"secure mode needs OpenDP on every Dask worker, and worker{where} lacks it (it draws"
                            " noise for its shards): install dptopic[secure] (pip install 'dptopic[secure]') on every"
                            " worker, then run the command again.")
    return e


class DaskBackend(Backend):
    """Shards as Dask actors on the workers of ``client`` (a ``distributed.Client``).

    Parameters
    ----------
    client : the ``distributed.Client`` of the cluster.
    n_shards : shards for an in-memory corpus (default: one per worker); a shard set keeps its files.
    checkpoint_every : sweeps between checkpoints of a shard's assignments (kept in driver memory).
    """

    name = "dask"

    #: default sweeps between checkpoints
    CHECKPOINT_EVERY = 5
    #: why the shards are out of step with the driver's counts (a shard failed mid-change), else None
    _broken = None

    def __init__(self, client, n_shards: int | None = None, checkpoint_every: int | None = None):
        self.client = check_client(client)
        self._n_shards = n_shards
        self.checkpoint_every = checkpoint_every or self.CHECKPOINT_EVERY
        self.n_restarts = 0
        self._actors = []
        #: array bytes sent to and received from the actors by sweeps (a measure of the per-iteration traffic)
        self.traffic = {"to_workers": 0, "from_workers": 0, "sweeps": 0}
        #: per full sweep: (seconds on the driver, seconds of the slowest actor's own work)
        self.timings: list[tuple[float, float]] = []

    # ------------------------------------------------------------------ workers
    def _workers(self) -> list[str]:
        ws = list(self.client.scheduler_info()["workers"])
        if not ws:
            import warnings  # said before the wait, which otherwise shows only a progress bar standing still

            warnings.warn("the Dask cluster has no live worker yet: waiting up to 120 s for one to join (start"
                          " workers, e.g. 'dask worker SCHEDULER_ADDRESS').", UserWarning, stacklevel=2)
            try:
                self.client.wait_for_workers(1, timeout=120)
            except TimeoutError:
                raise DPTopicError("the Dask cluster has no live worker (waited 120 s): start workers or check the"
                                   " scheduler address.") from None
            ws = list(self.client.scheduler_info()["workers"])
        return sorted(ws)

    def _place(self, j: int, avoid=None) -> None:
        """Create shard ``j``'s actor on a live worker (the least loaded one, not ``avoid``)."""
        last = None
        for _ in range(_ATTEMPTS):
            ws = [w for w in self._workers() if w != avoid] or self._workers()
            load = {w: sum(1 for x in self.where if x == w) for w in ws}
            w = min(ws, key=lambda a: (load[a], a)) if avoid is not None else ws[j % len(ws)]
            fut = self.client.submit(ShardActor, self.K, self.V, self.kind, actor=True, workers=[w],
                                     allow_other_workers=False, pure=False, **self._specs[j])
            try:
                actor = self._await_actor(fut, w)
            except Exception as e:  # the chosen worker died meanwhile: pick another
                if not (_is_lost_worker(e) or isinstance(e, TimeoutError)):
                    raise
                fut.cancel()
                last, avoid = e, w
                continue
            self.where[j], self._futures[j], self._actors[j] = w, fut, actor
            return
        raise DPTopicError(f"could not place corpus shard {j} on a live Dask worker ({type(last).__name__}); check the cluster.")

    PLACE_TIMEOUT = 120.0
    """Seconds to wait for a shard's actor to start on a worker that stays alive."""

    def _await_actor(self, fut, w: str, poll: float = 1.0):
        """The actor of ``fut``, created on worker ``w``. A task pinned to a worker that dies is never run
        elsewhere and never fails: so the wait checks every ``poll`` seconds that ``w`` is still in the
        cluster, and raises :class:`TimeoutError` as soon as it is not (or after ``PLACE_TIMEOUT``)."""
        deadline = time.monotonic() + self.PLACE_TIMEOUT
        while True:
            try:
                return fut.result(timeout=poll)
            except TimeoutError:
                alive = w in self.client.scheduler_info()["workers"]
                if not alive or time.monotonic() > deadline:
                    raise TimeoutError(f"worker {w} {'left the cluster' if not alive else 'did not start'} the"
                                       " shard's actor") from None

    def _call(self, method: str, args: dict, in_flight: bool = False) -> dict:
        """Call ``method(*args[j])`` on every shard ``j`` in ``args`` at once; return ``{j: result}``
        for the shards whose worker answered. The others are restarted from their checkpoints
        (:meth:`restore`), and are left out; ``in_flight``: the call was a sweep, to be replayed too."""
        if self._broken:
            raise DPTopicError(self._broken)
        calls, out = {}, {}
        for j, a in args.items():
            try:
                calls[j] = getattr(self._actors[j], method)(*a)
            except Exception as e:
                if not _is_lost_worker(e):
                    raise
                calls[j] = e
        lost = []
        for j, call in calls.items():
            try:
                if isinstance(call, BaseException):
                    raise call
                out[j] = call.result()
            except Exception as e:
                if not _is_lost_worker(e):
                    if method in _CHANGES_STATE:
                        # the other shards may have changed already, and their changes are not in the driver's counts
                        self._broken = ("the Dask shards are out of step with the counts after a shard failed in"
                                        f" {method} ({type(e).__name__}): fit again, which opens the shards anew.")
                    raise _on_worker(e, self.where[j] if j < len(self.where) else None) from None
                lost.append(j)
        for j in lost:
            # back to the checkpoint: the sweeps since then (and this one) are to be done again
            self._pending[j] = self._pending.get(j, 0) + self._since_n[j] + int(in_flight)
            self.restore(j)
        return out

    def _take_pending(self) -> dict[int, int]:
        todo = {j: n for j, n in self._pending.items() if n > 0}
        self._pending = {}
        return todo

    # --------------------------------------------------------------- interface
    def open(self, source, n_topics, rng, kind, secure_coins=False):
        self.K, self.V, self.kind = n_topics, source.vocab_size, kind
        self._secure_coins = secure_coins
        if isinstance(source, ShardSet):
            # absolute: a worker reads the file from its own working directory, which need not be the driver's
            self._specs = [{"path": os.path.abspath(p)} for p in source.paths]
        else:
            n = self._n_shards or len(self._workers())
            self._specs = [{"word_ids": source.word_ids[s.tok_start:s.tok_stop],
                            "doc_ptr": source.doc_ptr[s.doc_start:s.doc_stop + 1] - s.tok_start}
                           for s in make_shards(source.doc_ptr, n)]
        self._doc_lengths = source.doc_lengths
        self._n_tokens = int(np.sum(source.doc_lengths))
        n = len(self._specs)
        children = rng.spawn(n)
        self._recovery_rng = rng.spawn(1)[0]
        self.where, self._futures, self._actors = [None] * n, [None] * n, [None] * n
        self._ckpt, self._since, self._since_n = [None] * n, [[] for _ in range(n)], [0] * n
        self._pending, self._mirror, self._synced, self._collected = {}, None, [False] * n, None
        self._broken = None
        for j in range(n):
            self._place(j)
        parts = {}
        for _ in range(_ATTEMPTS):   # a start is a data-independent random draw: a lost one is just redone
            parts.update(self._call("start", {j: (children[j], secure_coins) for j in range(n) if j not in parts}))
            if len(parts) == n:
                break
        else:
            raise DPTopicError("could not start the corpus shards on the Dask workers: check the cluster.")
        self._pending = {}
        # each shard counts in int32; their sum is int64, since a shard set (unlike one corpus in memory) may hold more
        # than 2**31 tokens, where an int32 sum would wrap to negative topic totals without a word
        nwk = sum(parts[j][0].astype(np.int64) for j in range(n))
        nk = sum(parts[j][1].astype(np.int64) for j in range(n))
        for j in range(n):
            self._ckpt[j] = parts[j][2]
        self.arrays = SweepArrays(None, None, None, None, nwk, nk)
        return self.arrays

    @property
    def n_shards(self) -> int:
        return len(self._actors)

    def _updates(self, shards, full: bool):
        """The message that brings each actor's copy of the counts to the driver's ``nwk``."""
        nwk = self.arrays.nwk
        m = self._mirror
        if not full or m is None or m.dtype != nwk.dtype or m.shape != nwk.shape:
            if full:
                self._mirror = np.array(nwk, order="C")
                self._synced = [False] * self.n_shards
            return {j: ("full", nwk) for j in shards}
        idx = _changed(nwk, m)
        if _sparse_pays(idx.size, nwk):
            vals = nwk.reshape(-1)[idx]
            m.reshape(-1)[idx] = vals
            msg = ("set", idx, vals)
        else:
            m[...] = nwk
            msg = ("full", nwk)
        return {j: msg if self._synced[j] else ("full", nwk) for j in shards}

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        a = self.arrays
        full = shards is None
        shards = list(range(self.n_shards)) if full else sorted(shards)
        self._collected = None
        if word_table is None:
            msgs = self._updates(shards, full)
        else:
            # sound HDP-LDA: the frozen noisy table and the topic totals travel, never the true word counts
            msgs = dict.fromkeys(shards)
        dtype = a.nwk.dtype.str
        args = {j: (alpha, beta, msgs[j], a.nk, word_table, clip, dtype,
                    self._since_n[j] + 1 >= self.checkpoint_every) for j in shards}
        t0 = time.perf_counter()
        out = self._call("sweep", args, in_flight=True)
        self.traffic["to_workers"] += _nbytes(list(args.values()))
        self.traffic["from_workers"] += _nbytes(list(out.values()))
        self.traffic["sweeps"] += full
        for j in shards:  # in shard order: the float sums do not depend on which worker answered first
            if j not in out:
                continue
            dnwk, dnk, ckpt, _ = out[j]
            add_delta(a.nwk, dnwk)
            a.nk += dnk
            self._synced[j] = full and word_table is None
            if ckpt is not None:
                self._ckpt[j], self._since[j], self._since_n[j] = ckpt, [], 0
            else:
                self._since[j].append((dnwk, dnk))
                self._since_n[j] += 1
        if full and len(out) == len(shards):
            self.timings.append((time.perf_counter() - t0, max(o[3] for o in out.values())))
        return self._take_pending()

    def collect(self) -> dict[int, int]:
        """Gather every shard's ``z`` and ``ndk`` onto the driver (kept until the next sweep).

        Returns the sweeps that shards restarted since the last sweep must replay; the gathered
        state is consistent with the global counts either way, and current once this returns ``{}``.
        """
        if self._collected is not None and not self._pending:
            return {}
        got = {}
        for _ in range(_ATTEMPTS):
            got.update(self._call("collect", {j: () for j in range(self.n_shards) if j not in got}))
            if len(got) == self.n_shards:
                break
        else:
            raise DPTopicError("could not gather the corpus shards from the Dask workers: check the cluster.")
        z = np.concatenate([got[j][0] for j in range(self.n_shards)])
        ndk = np.concatenate([got[j][1] for j in range(self.n_shards)])
        self._collected = z, ndk
        return self._take_pending()

    @property
    def z(self):
        if self._collected is None:
            todo = self.collect()
            self._pending.update(todo)  # replayed by the next sweep
        return self._collected[0]

    def doc_topic_counts(self):
        if self._collected is None:
            self._pending.update(self.collect())
        return self._collected[1]

    @property
    def doc_lengths(self):
        return self._doc_lengths

    def _for_all(self, method: str, make_args) -> None:
        """``method`` on every shard, redone on the restarted copy of a shard whose worker died; the result is its new checkpoint."""
        self._collected = None
        done = set()
        for _ in range(_ATTEMPTS):
            out = self._call(method, {j: make_args(j) for j in range(self.n_shards) if j not in done})
            for j, ckpt in out.items():
                self._ckpt[j], self._since[j], self._since_n[j] = ckpt, [], 0
            done.update(out)
            if len(done) == self.n_shards:
                return
        raise DPTopicError(f"could not run {method} on the corpus shards: check the Dask cluster.")

    def cast_doc_counts(self, dtype):
        dtype = np.dtype(dtype).str
        self._for_all("cast_ndk", lambda j: (dtype,))

    def perturb_doc_counts(self, fn, rng):
        n = self.n_shards
        rngs = rng.spawn(n) if rng is not None else [None] * n
        first = set()

        def args(j):  # a shard that lost its worker draws fresh noise on its restarted copy
            r = rngs[j] if j not in first else (None if rng is None else rng.spawn(1)[0])
            first.add(j)
            return fn, r
        self._for_all("perturb_ndk", args)

    def checkpoint(self):
        """Checkpoint every shard now (a sweep also checkpoints its shard every ``checkpoint_every`` sweeps)."""
        self._for_all("snapshot", lambda j: ())

    def restore(self, shard):
        """Restart ``shard`` from its checkpoint on a live worker and take its changes since then out of the
        counts (a shard not started yet only gets a new actor: :meth:`open` starts it again)."""
        state = None if self._secure_coins else kernel_state(self._recovery_rng)
        for _ in range(_ATTEMPTS):
            self._place(shard, avoid=self.where[shard])
            if self._ckpt[shard] is None:
                break
            try:
                self._actors[shard].restore(self._ckpt[shard], state).result()
                break
            except Exception as e:
                if not _is_lost_worker(e):
                    raise
        else:
            raise DPTopicError(f"could not restart corpus shard {shard} on a live Dask worker: check the cluster.")
        for dnwk, dnk in reversed(self._since[shard]):
            add_delta(self.arrays.nwk, dnwk, -1)
            self.arrays.nk -= dnk
        self._since[shard], self._since_n[shard], self._synced[shard] = [], 0, False
        self._collected = None
        self.n_restarts += 1

    def close(self):
        """Let the actors go (their workers drop them); keep the counts and the gathered state, drop the rest."""
        self._actors, self._futures = [], []
        self._mirror, self._ckpt, self._since = None, [], []


# ------------------------------------------------------------------ map-reduce of per-shard statistics
# The document-level trainers (DocDPEM, DocDPCooccurrence) need no actors: one pass is a sum over documents of a
# bounded statistic, so each shard's partial sum is a plain Dask task. A task lost with its worker is recomputed by
# the scheduler from the same inputs (the same partial: no noise is drawn on a worker), and the driver adds the noise
# once, after every partial is in.

LOST_GRACE = 30.0
"""Seconds the cluster may have no worker (a nanny restarts a killed one in a few) before a pass fails."""


def check_client(client):
    """``client`` if it is an open ``distributed.Client``, else one line saying what to pass."""
    _require_distributed()
    if client is None:
        raise DPTopicError("backend='dask' needs client=distributed.Client(...).")
    from distributed import Client  # optional: the 'dask' extra

    if not isinstance(client, Client):
        what = f"the address {client!r}" if isinstance(client, str) else f"a {type(client).__name__}"
        raise DPTopicError(f"client= takes a distributed.Client, not {what}: pass client=distributed.Client("
                           f"{client if isinstance(client, str) else 'ADDRESS'!r}).")
    if client.status in ("closing", "closed"):
        raise DPTopicError("the Dask client is closed: open a new one (distributed.Client(ADDRESS)) and pass it"
                           " as client=.")
    return client


def n_workers(client) -> int:
    """The workers the scheduler of ``client`` has now (0 when the scheduler itself cannot be reached)."""
    try:
        return len(client.scheduler_info()["workers"])
    except Exception:       # the scheduler itself is gone
        return 0


def _all_lost(what: str, seconds: float) -> DPTopicError:
    return DPTopicError(f"the Dask cluster lost every worker while {what} (none for {seconds:g} s): this pass's"
                        " noise was not drawn and nothing was saved; restart the workers or check the scheduler, then"
                        " run the command again.")


def map_shards(client, fn, items, *args, what: str = "summing the shards' statistics", poll: float = 0.5,
               **kwargs):
    """Yield ``fn(item, *args, **kwargs)`` for each of ``items``, in their order, computed as Dask tasks.

    Every task is submitted at once; each result is fetched when the caller asks for it, so the driver holds one at a
    time. A task whose worker dies is recomputed on another by the scheduler (it holds the task's inputs), so a lost
    worker costs time only. When the cluster has no worker for :data:`LOST_GRACE` seconds (at the start or mid-pass),
    or a task has killed a worker each time it ran, the pass fails in one line and the tasks left are cancelled. Array
    arguments above 1 MiB are sent to every worker once (``scatter(broadcast=True)``), not with every task."""
    from distributed import wait  # optional: the 'dask' extra

    def ship(v):
        if isinstance(v, np.ndarray) and v.nbytes > 1 << 20:
            return client.scatter(v, broadcast=True, hash=False)
        return v

    def watch(future):
        lost_since = None
        while True:
            try:
                return wait([future], timeout=poll)
            except TimeoutError:
                pass
            if n_workers(client) == 0:
                lost_since = lost_since or time.monotonic()
                if time.monotonic() - lost_since > LOST_GRACE:
                    raise _all_lost(what, LOST_GRACE)
            else:
                lost_since = None

    futures = []
    try:
        probe = client.submit(_n_workers_here, pure=False)
        watch(probe)                    # a worker is there (or joins within the grace)
        probe.release()
        args = tuple(ship(a) for a in args)
        kwargs = {k: ship(v) for k, v in kwargs.items()}
        futures = [client.submit(fn, item, *args, pure=False, **kwargs) for item in items]
        for f in futures:
            watch(f)
            yield f.result()
            f.release()
    except DPTopicError:
        raise
    except Exception as e:
        if type(e).__name__ == "KilledWorker":
            raise DPTopicError(f"a Dask task died with its worker each time it ran while {what} (a worker out of"
                               " memory?): this pass's noise was not drawn and nothing was saved; give the workers more"
                               " memory or write more, smaller shards, then run the command again.") from None
        if _is_lost_worker(e):
            raise _all_lost(what, LOST_GRACE) from None
        raise _on_worker(e, None) from None
    finally:
        for f in futures:
            if not f.done():
                f.cancel()


def _n_workers_here() -> int:
    """A task that does nothing: it runs once a worker is there."""
    return 1


def read_jsonl_shards(client, paths, **kw) -> Corpus:
    """The corpus of the JSONL files ``paths``, the shards of one corpus in order, each read, tokenised and keyed by
    a worker of ``client`` where it lies (the streaming reader, :func:`dptopic.corpus.stream.read_jsonl`, ``kw`` its
    settings): the files must be at the same path on every worker (a shared file system). The driver receives each
    shard's token ids and keys, never its text, and builds the corpus one machine builds from the same lines: a
    model trained on it is the same release for the same seed."""
    from ..corpus import stream  # the streaming reader: loaded only when a corpus is read on the cluster

    def on_cluster(fn, items, *args):
        return map_shards(client, fn, items, *args, what="reading the corpus shards", on_worker=True)

    return stream.read_jsonl(list(paths), map_files=on_cluster, **kw)
