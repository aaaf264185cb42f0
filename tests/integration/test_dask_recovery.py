"""Dask backend: a worker lost at any call the driver makes (start, sweep, checkpoint, document
noise, gathering z) is recovered through one path, the counts stay exactly those of the
assignments, and replayed iterations of a private trainer are on the ledger. One test kills a
real worker process after the last sweep (so the loss shows up in the final collection); the
others make one actor call fail as a lost worker's does, at a chosen point. Also: what travels
per sweep (only the changed entries, and for sound HDP-LDA never the true counts)."""
import os
import signal

import numpy as np
import pytest

from conftest import counts_from_z
from dptopic.kernels import count_assignments
from dptopic.models import CDPLDA, HDPLDA, LDA, CDPLDAPlus

distributed = pytest.importorskip("distributed")
from dptopic.backends import dask as dask_backend  # noqa: E402
from dptopic.backends.dask import DaskBackend, add_delta, pack_delta  # noqa: E402

pytestmark = pytest.mark.dask     # each test here starts a local Dask cluster


@pytest.fixture
def every3(monkeypatch):
    monkeypatch.setattr(DaskBackend, "CHECKPOINT_EVERY", 3)


class _Failed:
    def result(self, timeout=None):
        raise OSError("Unable to contact Actor's worker")


class _FailOnce:
    """Stands in for a shard's actor: the first call of ``method`` fails as if its worker had died."""

    def __init__(self, actor, method):
        self._actor, self._method, self.failed = actor, method, False

    def __getattr__(self, name):
        if name == self._method and not self.failed:
            self.failed = True
            return lambda *a, **k: _Failed()
        return getattr(self._actor, name)


def _consistent(backend, corpus, K):
    """The driver's counts are exactly the counts of the gathered assignments."""
    z = backend.z
    ndk, nwk = counts_from_z(corpus, z, K)
    a = backend.arrays
    assert int(a.nk.sum()) == corpus.n_tokens and int(a.nwk.sum()) == corpus.n_tokens
    np.testing.assert_array_equal(a.nwk, nwk)
    np.testing.assert_array_equal(a.nk, nwk.sum(axis=0))
    np.testing.assert_array_equal(backend.doc_topic_counts(), ndk)


def _catch_up(b, todo):
    while todo:
        again = b.sweep(0.1, 0.05, shards=sorted(todo))
        todo = {j: n - 1 for j, n in todo.items() if n > 1}
        for j, n in again.items():
            todo[j] = todo.get(j, 0) + n


def test_a_loss_at_every_kind_of_call_is_recovered(planted, fresh):
    c, K = planted.corpus, 4
    b = DaskBackend(fresh, checkpoint_every=3)
    b.open(c, K, np.random.default_rng(0), "sparse")
    assert b.sweep(0.1, 0.05) == {} and b.sweep(0.1, 0.05) == {}     # 2 sweeps since the start's checkpoint
    # lost during a sweep: the 2 sweeps since the checkpoint and this one are replayed
    b._actors[1] = _FailOnce(b._actors[1], "sweep")
    todo = b.sweep(0.1, 0.05)
    assert todo == {1: 3} and b.n_restarts == 1
    _catch_up(b, todo)
    _consistent(b, c, K)
    # lost while gathering z: state stays consistent (behind); the replays come with collect()
    b.sweep(0.1, 0.05)
    b._actors[0] = _FailOnce(b._actors[0], "collect")
    todo = b.collect()
    assert todo == {0: 1} and b.n_restarts == 2
    _consistent(b, c, K)                                                # consistent even before the replay
    _catch_up(b, todo)
    assert b.collect() == {}
    _consistent(b, c, K)
    # lost while checkpointing: restarted from the previous checkpoint, nothing to replay after a fresh one
    b._actors[1] = _FailOnce(b._actors[1], "snapshot")
    b.checkpoint()
    assert b.n_restarts == 3
    _catch_up(b, b.collect())
    _consistent(b, c, K)
    # lost between sweeps: the next sweep finds out
    b.sweep(0.1, 0.05)
    b._actors[0] = _FailOnce(b._actors[0], "sweep")
    _catch_up(b, b.sweep(0.1, 0.05))
    assert b.collect() == {}
    _consistent(b, c, K)
    assert b.n_restarts == 4 and len(set(b.where)) == 2
    b.close()


def test_a_loss_during_the_start_redoes_the_start(planted, fresh, monkeypatch):
    real = DaskBackend._place
    wrapped = []

    def place(self, j, avoid=None):
        real(self, j, avoid)
        if j == 1 and not wrapped:
            wrapped.append(j)
            self._actors[j] = _FailOnce(self._actors[j], "start")
    monkeypatch.setattr(DaskBackend, "_place", place)
    c = planted.corpus
    m = LDA(n_topics=5, n_iter=4, seed=2, verbose=0, backend="dask", client=fresh).fit(c)
    ref = LDA(n_topics=5, n_iter=4, seed=2, verbose=0, backend="dask", client=fresh).fit(c)
    assert wrapped and m._backend_.n_restarts == 1 and m.n_replayed_ == 0
    # a start is a data-independent draw from the shard's own generator: redoing it changes nothing
    np.testing.assert_array_equal(m.components_, ref.components_)
    _consistent(m._backend_, c, 5)


def test_lost_during_document_noise_draws_fresh_noise(planted, fresh):
    c = planted.corpus
    m = CDPLDAPlus(n_topics=5, n_iter=5, paper_epsilon=5.0, seed=4, verbose=0, backend="dask", client=fresh)

    def cb(info):
        if info.iteration == 2:   # the next call to shard 0 is iteration 3's document noise
            b = m._backend_
            b._actors[0] = _FailOnce(b._actors[0], "perturb_ndk")
    cb.needs_release = cb.needs_z = False
    m.fit(c, callback=cb)
    assert m._backend_.n_restarts == 1
    # back to its checkpoint from iteration 2's noise (fresh noise is drawn on the restarted copy);
    # sweep 2 is replayed, with another noisy release, on the ledger
    assert m.n_replayed_ == 1 and m.privacy_["replayed_iterations"] == 1
    assert m.ledger_.n_events == 5 + 1 and np.all(np.isfinite(m.components_))


def test_sound_hdp_ships_only_the_noisy_table(planted, fresh, monkeypatch):
    """What an actor receives per sweep: for sound HDP-LDA the frozen table and the topic totals only."""
    seen = []
    real = DaskBackend._call

    def spy(self, method, args, in_flight=False):
        if method == "sweep":
            seen.extend(args.values())
        return real(self, method, args, in_flight)
    monkeypatch.setattr(DaskBackend, "_call", spy)
    m = HDPLDA(n_topics=5, n_iter=3, seed=1, verbose=0, backend="dask", client=fresh).fit(planted.corpus)
    assert len(seen) == 3 * len(m._backend_._specs)
    for alpha, beta, update, nk, table, clip, dtype, ckpt in seen:
        assert update is None and table is not None and table.dtype == np.float64 and nk.shape == (5,)
    seen.clear()
    LDA(n_topics=5, n_iter=4, seed=1, verbose=0, backend="dask", client=fresh).fit(planted.corpus)
    kinds = [s[2][0] for s in seen]
    assert kinds[:2] == ["full", "full"] and all(k in ("full", "set") for k in kinds)


def _force_messages(client, sparse):
    """Make every count message sparse (True), dense (False) or the smaller one (None), on the driver and workers."""
    def setter(rule=sparse):
        from dptopic.backends import dask as mod
        if not hasattr(mod, "_real_sparse_pays"):
            mod._real_sparse_pays = mod._sparse_pays
        mod._sparse_pays = mod._real_sparse_pays if rule is None else (lambda n, table: rule)
    setter()
    client.run(setter)


@pytest.mark.parametrize("make", [
    lambda c: LDA(n_topics=5, n_iter=6, seed=7, verbose=0, backend="dask", client=c),
    lambda c: CDPLDA(n_topics=5, n_iter=6, paper_epsilon=3.0, noise="continuous", seed=7, verbose=0, backend="dask", client=c),
], ids=["lda", "cdp-lda float counts"])
def test_sparse_and_dense_messages_give_the_same_run(planted, fresh, make):
    runs = []
    try:
        for rule in (True, False):
            _force_messages(fresh, rule)
            m = make(fresh).fit(planted.corpus)
            runs.append((m.components_, m._backend_.z, m._backend_.arrays.nwk))
    finally:
        _force_messages(fresh, None)
    for x, y in zip(*runs):   # bit for bit, also for noisy float counts
        np.testing.assert_array_equal(x, y)
    if isinstance(m, CDPLDA):
        assert runs[0][2].dtype == np.float64
    else:
        _, nwk = counts_from_z(planted.corpus, runs[0][1], 5)
        np.testing.assert_array_equal(runs[0][2], nwk)


def test_sparse_messages_round_trip():
    rng = np.random.default_rng(0)
    old = rng.integers(0, 9, size=(50, 8)).astype(np.int32)
    new = old.copy()
    new[3, 2] += 2
    new[7, 1] -= 1
    d = pack_delta(new, old)
    assert isinstance(d, tuple) and d[0].dtype == np.int32 and d[0].size == 2
    back = old.copy()
    add_delta(back, d)
    np.testing.assert_array_equal(back, new)
    add_delta(back, d, -1)
    np.testing.assert_array_equal(back, old)
    dense = pack_delta(new + 1, old)          # every entry changed: dense is smaller
    assert isinstance(dense, np.ndarray)
    np.testing.assert_array_equal(old + dense, new + 1)
    z = rng.integers(0, 200, 30).astype(np.int32)
    assert dask_backend._narrow(z, 200).dtype == np.uint8
    assert dask_backend._narrow(z, 300).dtype == np.uint16
    _, nwk, _ = count_assignments(np.arange(3, dtype=np.int32), np.array([0, 3]), np.zeros(3, np.int32), 2, 3)
    assert isinstance(pack_delta(nwk, None), (tuple, np.ndarray))


def test_a_worker_dying_while_its_actor_starts(planted, fresh, monkeypatch):
    """A real worker process is killed just as a shard's actor is submitted to it. A task pinned to a dead worker
    would wait forever, so the driver notices the worker leave, places the shard on another worker, and the run
    equals an undisturbed one (a shard's coins are its own, wherever it lives)."""
    import time

    c, K = planted.corpus, 5
    ref = LDA(n_topics=K, n_iter=3, seed=5, verbose=0, backend="dask", client=fresh).fit(c)
    fresh.wait_for_workers(2, timeout=60)
    pids = fresh.run(os.getpid)
    real, killed, n = fresh.submit, [], [0]

    def submit(fn, *a, **k):
        if k.get("actor"):
            n[0] += 1
            if n[0] == 2:  # shard 1's first placement
                killed.append(k["workers"][0])
                os.kill(pids[killed[0]], signal.SIGKILL)
        return real(fn, *a, **k)
    monkeypatch.setattr(fresh, "submit", submit)
    t = time.monotonic()
    m = LDA(n_topics=K, n_iter=3, seed=5, verbose=0, backend="dask", client=fresh).fit(c)
    assert killed and killed[0] not in m._backend_.where
    assert time.monotonic() - t < DaskBackend.PLACE_TIMEOUT / 2  # found by polling, not by the long timeout
    np.testing.assert_array_equal(m.components_, ref.components_)
    _consistent(m._backend_, c, K)


def test_worker_killed_before_the_final_collection(planted, fresh, every3):
    """A real worker process dies after the last sweep: the final gathering of z finds it, the
    shard restarts from its checkpoint and replays with fresh releases, and nothing is lost.
    Runs last in this module: it kills a worker of the module's cluster."""
    c, K = planted.corpus, 5
    m = HDPLDA(n_topics=K, n_iter=8, seed=3, verbose=0, backend="dask", client=fresh)
    pids = fresh.run(os.getpid)

    def cb(info):
        if info.iteration == m.n_iter - 1:
            os.kill(pids[m._backend_.where[1]], signal.SIGKILL)
    cb.needs_release = cb.needs_z = False    # nothing is gathered before the final collection
    m.fit(c, callback=cb)
    b = m._backend_
    assert b.n_restarts == 1
    # checkpoints after sweeps 3 and 6: sweeps 7 and 8 of the lost shard are replayed
    r = m.n_replayed_
    assert r == 2 and m.privacy_["replayed_iterations"] == r
    assert m.ledger_.n_events == 2 * (m.n_iter + r)      # an eps_L release and an eps_I sweep per replay too
    assert m.privacy_["epsilon_basic"] == pytest.approx((m.n_iter + r) * (m.epsilon_laplace_ + m.epsilon_inherent_))
    _consistent(b, c, K)
    ndk = b.doc_topic_counts()
    np.testing.assert_allclose(m.training_theta_.sum(axis=1), 1.0)
    assert ndk.sum() == c.n_tokens
