"""A Dask worker compiles each kernel signature once, under a lock shared by the machine's worker processes (two
processes compiling the same numba function at once can corrupt its cache and crash the next one that loads it), and
the compile-only call changes nothing of the shard."""
import os

import numpy as np
import pytest

pytest.importorskip("distributed")
fcntl = pytest.importorskip("fcntl")

from dptopic.backends import dask as dask_backend  # noqa: E402
from dptopic.corpus import lda_corpus  # noqa: E402
from dptopic.kernels import count_assignments, kernel_state  # noqa: E402

pytestmark = pytest.mark.dask     # each test here starts a local Dask cluster


@pytest.fixture()
def shard():
    c = lda_corpus(n_docs=30, vocab_size=25, n_topics=3, doc_length=12, seed=2).corpus
    rng = np.random.default_rng(0)
    z = rng.integers(0, 3, size=c.n_tokens, dtype=np.int32)
    ndk, nwk, nk = count_assignments(c.word_ids, c.doc_ptr, z, 3, c.vocab_size)
    return c, z, ndk, nwk.astype(np.float64), nk.astype(np.float64), kernel_state(rng)


def _lock_is_held() -> bool:
    with open(dask_backend._compile_lock_path(), "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
        return False


@pytest.fixture(autouse=True)
def own_lock_file(tmp_path, monkeypatch):
    """A lock file of this test's own: another process (a concurrent run) holding the machine's would look held."""
    monkeypatch.setattr(dask_backend, "_LOCK_PATH", [str(tmp_path / "compile.lock")])


@pytest.mark.parametrize("kind", ["dense", "sparse"])
def test_the_first_sweep_of_a_signature_compiles_under_the_lock_and_changes_nothing(shard, kind, monkeypatch):
    c, z, ndk, nwk, nk, state = shard
    nwk = nwk.astype(np.int32) if kind == "sparse" else nwk
    nk = nk.astype(np.int32) if kind == "sparse" else nk
    monkeypatch.setattr(dask_backend, "_WARM", set())
    held, real = [], dask_backend._run_kernel

    def spy(*args, **kw):
        held.append((int(args[2].shape[0]) - 1, _lock_is_held()))     # (documents swept, lock held)
        return real(*args, **kw)

    monkeypatch.setattr(dask_backend, "_run_kernel", spy)
    before = [a.copy() for a in (z, ndk, nwk, nk, state)]
    dask_backend._warm_sweep(kind, c.word_ids, c.doc_ptr, z, ndk, None, nwk, nk, 0.1, 0.01, np.inf, state)
    for a, b in zip((z, ndk, nwk, nk, state), before):
        np.testing.assert_array_equal(a, b)
    assert held == [(0, True)] and not _lock_is_held()
    dask_backend._warm_sweep(kind, c.word_ids, c.doc_ptr, z, ndk, None, nwk, nk, 0.1, 0.01, np.inf, state)
    assert held == [(0, True)]      # once per signature and process
    assert os.path.exists(dask_backend._compile_lock_path())


def test_noise_objects_of_the_same_kind_share_one_key(monkeypatch):
    monkeypatch.setattr(dask_backend, "_WARM", set())

    class Noise:
        def __init__(self, scale):
            self.scale = scale

        def __call__(self, ndk, rng):
            return ndk

    calls = []
    real = dask_backend._first_time_locked
    monkeypatch.setattr(dask_backend, "_first_time_locked", lambda key, call: (calls.append(key), real(key, call))[1])
    actor = dask_backend.ShardActor.__new__(dask_backend.ShardActor)
    actor.ndk, actor.z, actor.K = np.zeros((3, 2), dtype=np.int32), np.zeros(4, dtype=np.int32), 2
    for _ in range(3):
        actor.perturb_ndk(Noise(1.0), None)
    actor.perturb_ndk(Noise(2.0), None)
    assert len(set(calls)) == 2 and len(dask_backend._WARM) == 2


def test_an_unopenable_lock_file_compiles_without_the_lock(monkeypatch, tmp_path):
    monkeypatch.setattr(dask_backend, "_WARM", set())
    monkeypatch.setattr(dask_backend, "_LOCK_PATH", [str(tmp_path / "no" / "such" / "folder" / "x.lock")])
    assert dask_backend._first_time_locked(("k2",), lambda: 5) == 5 and ("k2",) in dask_backend._WARM


def test_an_error_releases_the_lock_and_is_tried_again(monkeypatch):
    monkeypatch.setattr(dask_backend, "_WARM", set())

    def boom():
        assert _lock_is_held()
        raise ValueError("compile failed")

    with pytest.raises(ValueError):
        dask_backend._first_time_locked(("k",), boom)
    assert not _lock_is_held() and ("k",) not in dask_backend._WARM
    assert dask_backend._first_time_locked(("k",), lambda: 7) == 7 and ("k",) in dask_backend._WARM
