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
