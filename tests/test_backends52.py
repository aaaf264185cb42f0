"""A Dask shard that fails mid-sweep (an error of its own, not a lost worker) leaves the other shards ahead of the
driver's counts: the backend then refuses to go on in one line instead of sampling from inconsistent counts."""
import numpy as np
import pytest

from dptopic.errors import DPTopicError


def test_a_failing_dask_shard_stops_the_backend_in_one_line(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from dptopic.backends import dask as dask_backend
    from dptopic.corpus import lda_corpus
    c = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    real = dask_backend.ShardActor.sweep
    calls = {"n": 0, "fail_at": None}

    def sweep(self, *args):
        calls["n"] += 1
        if calls["n"] == calls["fail_at"]:
            raise RuntimeError("disk full")
        return real(self, *args)

    monkeypatch.setattr(dask_backend.ShardActor, "sweep", sweep)
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                                  dashboard_address=None) as cl, distributed.Client(cl) as client:
        b = dask_backend.DaskBackend(client, n_shards=3)
        b.open(c, 2, np.random.default_rng(0), "sparse")
        b.sweep(0.1, 0.05)
        calls["fail_at"] = calls["n"] + 2          # the second shard of the next sweep fails; the others sweep
        with pytest.raises(RuntimeError, match="disk full"):     # the error itself, as raised
            b.sweep(0.1, 0.05)
        for again in (lambda: b.sweep(0.1, 0.05), b.collect, lambda: b.z):
            with pytest.raises(DPTopicError, match="out of step") as e:
                again()
            assert "\n" not in str(e.value)
        b.close()
        # a new fit on the same backend opens the shards anew and runs
        a = b.open(c, 2, np.random.default_rng(0), "sparse")
        b.sweep(0.1, 0.05)
        b.collect()
        assert int(a.nk.sum()) == c.n_tokens
        b.close()


def test_secure_mechanisms_refuse_a_generator_in_one_line():
    """Secure mode's noise comes from the OS CSPRNG; a Generator given beside secure=True used to be ignored silently
    (a caller would believe it had seeded the noise)."""
    from dptopic.mechanisms.gaussian import gaussian_mechanism
    from dptopic.mechanisms.laplace import laplace_mechanism, laplace_with_scale
    rng = np.random.default_rng(0)
    calls = [lambda: laplace_mechanism(np.zeros(3, dtype=np.int64), 1.0, rng, secure=True),
             lambda: laplace_with_scale(np.zeros(3), 1.0, rng, discrete=False, secure=True),
             lambda: gaussian_mechanism(np.zeros(3), 1.0, 1.0, rng, secure=True)]
    for call in calls:
        with pytest.raises(DPTopicError, match="refuses a numpy Generator") as e:
            call()
        assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="Generator is required"):
        gaussian_mechanism(np.zeros(3), 1.0, 1.0, None)
