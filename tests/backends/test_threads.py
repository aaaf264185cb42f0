"""``dptopic.backends.threads``."""
import numpy as np
import pytest

from dptopic.backends import ThreadBackend, make_backend
from helpers import check_backend_run, empty_and_small_corpora


def test_thread_backend_checkpoint_restore(planted):
    b = ThreadBackend(2)
    arrays = b.open(planted.corpus, 4, np.random.default_rng(0), "sparse")
    b.checkpoint()
    before = arrays.z.copy(), arrays.nwk.copy()
    b.sweep(0.1, 0.05)
    assert not np.array_equal(arrays.z, before[0])
    b.restore(0)
    np.testing.assert_array_equal(arrays.z, before[0])
    np.testing.assert_array_equal(arrays.nwk, before[1])
    b.close()
    assert isinstance(make_backend("threads", 3), ThreadBackend)


# ------------------------------------------------------------------ backends
def _backend(tiny_corpus, n_jobs, scheme, kind="sparse", K=4):
    from dptopic.backends import ThreadBackend
    b = ThreadBackend(n_jobs, scheme)
    return b, b.open(tiny_corpus, K, np.random.default_rng(0), kind)


@pytest.mark.parametrize("scheme", ["adlda", "partition"])
@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_a_failing_thread_shard_leaves_the_state_unchanged(planted, monkeypatch, scheme, kind):
    import threading

    import dptopic.kernels.engine as engine
    c = planted.corpus
    b, a = _backend(c, 3, scheme, kind)
    ref, ra = _backend(c, 3, scheme, kind)
    b.sweep(0.1, 0.05)
    ref.sweep(0.1, 0.05)
    before = [b.z.copy(), a.ndk.copy(), a.nwk.copy(), a.nk.copy()] + [s.copy() for s in b._states]
    real, lock, calls = engine._run_kernel, threading.Lock(), []

    def failing(*args, **kw):
        with lock:
            calls.append(1)
            n = len(calls)
        if n == 3:                      # one shard (or cell) fails; the others have run or are running
            raise MemoryError("no memory for this shard")
        return real(*args, **kw)

    monkeypatch.setattr(engine, "_run_kernel", failing)
    with pytest.raises(MemoryError):
        b.sweep(0.1, 0.05)
    monkeypatch.setattr(engine, "_run_kernel", real)
    after = [b.z, a.ndk, a.nwk, a.nk] + list(b._states)
    for x, y in zip(after, before):
        np.testing.assert_array_equal(x, y)
    # a retry makes the very sweep the failure interrupted
    b.sweep(0.1, 0.05)
    ref.sweep(0.1, 0.05)
    np.testing.assert_array_equal(b.z, ref.z)
    np.testing.assert_array_equal(a.nwk, ra.nwk)
    np.testing.assert_array_equal(a.ndk, ra.ndk)
    b.close()
    ref.close()


def test_a_failing_cell_leaves_float_counts_unchanged(planted, monkeypatch):
    # a trainer that writes noise into the counts makes them float: the partition scheme copies them whole, since
    # taking one count out and putting it back need not give the same float (integer counts are put back by moves)
    import dptopic.kernels.engine as engine

    b, a = _backend(planted.corpus, 2, "partition", "dense")
    b.sweep(0.1, 0.05)
    noise = np.random.default_rng(3).normal(0, 0.3, a.nwk.shape)
    a.nwk = a.nwk + noise
    a.ndk = a.ndk + np.random.default_rng(4).normal(0, 0.3, a.ndk.shape)
    a.nk = a.nwk.sum(axis=0)
    b._sweeper.arrays = a
    before = [b.z.copy(), a.ndk.copy(), a.nwk.copy(), a.nk.copy()]
    real, calls = engine._run_kernel, []

    def failing(*args, **kw):
        calls.append(1)
        if len(calls) == 3:             # round 1: both cells of round 0 have run
            raise MemoryError("no memory for this cell")
        return real(*args, **kw)

    monkeypatch.setattr(engine, "_run_kernel", failing)
    with pytest.raises(MemoryError):
        b.sweep(0.1, 0.05)
    for x, y in zip([b.z, a.ndk, a.nwk, a.nk], before):
        np.testing.assert_array_equal(x, y)
    b.close()


@pytest.mark.parametrize("scheme", ["adlda", "partition"])
def test_thread_backend_with_no_documents_or_more_threads_than_documents(scheme):
    from dptopic.backends import ThreadBackend
    for corpus in empty_and_small_corpora():
        check_backend_run(ThreadBackend(5, scheme), corpus)
