"""The Dask backend on a local multi-process cluster: the same quality as threads, recovery from a killed worker with
nothing lost and the replay on the ledger, workers reading their own shard files, and the CLI's cluster options."""
import os
import signal

import numpy as np
import pytest

from dptopic.backends import ShardSet, training_source, write_shards
from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation.topic_matching import topic_recovery
from dptopic.kernels import count_assignments
from dptopic.models import HDPLDA, LDA, CDPLDAPlus
from helpers import check_backend_run, empty_and_small_corpora

pytestmark = pytest.mark.dask     # each test here starts a local Dask cluster

distributed = pytest.importorskip("distributed")


@pytest.fixture
def short_checkpoints(monkeypatch):
    from dptopic.backends.dask import DaskBackend

    monkeypatch.setattr(DaskBackend, "CHECKPOINT_EVERY", 3)


def _killer(model, client, at):
    """A callback that kills the worker process holding shard 1 after iteration ``at``."""
    pids = client.run(os.getpid)

    def cb(info):
        if info.iteration == at:
            os.kill(pids[model._backend_.where[1]], signal.SIGKILL)
    return cb


def test_dask_same_quality_as_threads(planted, fresh):
    kw = dict(n_topics=5, n_iter=60, seed=1, verbose=0)
    threads = LDA(n_jobs=2, **kw).fit(planted.corpus)
    dask = LDA(backend="dask", client=fresh, **kw).fit(planted.corpus)
    r_t, r_d = topic_recovery(threads.components_, planted.phi), topic_recovery(dask.components_, planted.phi)
    assert r_d >= 0.9 and r_t >= 0.9
    assert abs(r_d - r_t) < 0.03
    assert dask.privacy_["replayed_iterations"] == 0
    assert np.isfinite(dask.log_likelihood_[-1][1])
    # the Dask run is reproducible for a fixed seed too
    again = LDA(backend="dask", client=fresh, **kw).fit(planted.corpus)
    np.testing.assert_array_equal(dask.components_, again.components_)


def test_noisy_count_trainer_on_dask(planted, fresh):
    m = CDPLDAPlus(n_topics=5, n_iter=8, paper_epsilon=5.0, seed=4, verbose=0, backend="dask", client=fresh)
    m.fit(planted.corpus)
    assert m.ledger_.n_events == 8 and m.privacy_["replayed_iterations"] == 0
    assert np.all(np.isfinite(m.components_))


def test_workers_read_their_own_shard_files(planted, fresh, tmp_path):
    c = planted.corpus
    paths = write_shards(c, tmp_path / "shards", 3)
    assert [p.name for p in paths] == ["shard-00000.npz", "shard-00001.npz", "shard-00002.npz"]
    src = training_source(tmp_path / "shards")
    assert isinstance(src, ShardSet) and src.n_tokens == c.n_tokens and src.vocabulary == c.vocabulary
    m = LDA(n_topics=5, n_iter=40, seed=5, verbose=0, backend="dask", client=fresh).fit(src)
    assert all(set(spec) == {"path"} for spec in m._backend_._specs)  # only file names travel
    assert len(m._backend_._specs) == 3
    assert topic_recovery(m.components_, planted.phi) >= 0.9
    # the thread backend reads the same files into one corpus: bit-identical to the in-memory corpus
    a = LDA(n_topics=5, n_iter=5, seed=5, verbose=0, n_jobs=2).fit([str(p) for p in paths])
    b = LDA(n_topics=5, n_iter=5, seed=5, verbose=0, n_jobs=2).fit(c)
    np.testing.assert_array_equal(a.components_, b.components_)
    with pytest.raises(DPTopicError, match="already holds shard files"):
        write_shards(c, tmp_path / "shards", 2)


def test_a_dask_client_is_shared_by_clones_and_anything_else_is_refused_in_one_line(planted, fresh):
    # clone deep-copied the client (TypeError: cannot pickle 'socket'), so a grid search
    # failed; an address string and a closed client ended in AttributeError and RuntimeError
    from sklearn.base import clone

    m = LDA(n_topics=3, n_iter=2, backend="dask", client=fresh, verbose=0)
    twin = clone(m)
    assert twin.client is fresh and twin.get_params()["n_topics"] == 3
    with pytest.raises(DPTopicError, match="takes a distributed.Client, not the address"):
        LDA(n_topics=3, n_iter=2, backend="dask", client="tcp://127.0.0.1:1", verbose=0).fit(planted.corpus)
    closed = distributed.Client(fresh.scheduler.address, set_as_default=False)
    closed.close()
    with pytest.raises(DPTopicError, match="client is closed"):
        LDA(n_topics=3, n_iter=2, backend="dask", client=closed, verbose=0).fit(planted.corpus)


def test_cli_trains_on_a_scheduler(fresh, tmp_path, capsys):
    shards = tmp_path / "sh"
    assert main(["corpus", "prepare", "--out", str(shards), "--shards", "2", "--max-vocab", "300"]) in (0, None)
    out = tmp_path / "model"
    rc = main(["train", "--corpus", str(shards), "--scheduler", fresh.scheduler.address, "--topics", "5",
               "--iterations", "3", "--algorithm", "hdp", "--quiet", "--out", str(out)])
    assert rc in (0, None)
    text = capsys.readouterr().out
    assert "2 shards" in text and "replayed_iterations" in text
    assert (out / "model.json").is_file() and "Client" not in (out / "model.json").read_text()


def test_killed_worker_loses_nothing_and_the_replay_is_on_the_ledger(planted, fresh, short_checkpoints):
    """Runs last: it kills a worker process of the module's cluster."""
    c = planted.corpus
    m = HDPLDA(n_topics=5, n_iter=10, seed=3, verbose=0, backend="dask", client=fresh)
    kill = _killer(m, fresh, at=4)
    seen = {}

    def cb(info):
        kill(info)
        if info.iteration == m.n_iter - 1:
            seen["z"] = info.z.copy()
    cb.needs_release = False
    m.fit(c, callback=cb)
    assert m._backend_.n_restarts == 1
    # checkpoint after sweep 3; sweeps 4 and 5 done, the 6th fails: the lost shard replays 3 sweeps
    r = m.n_replayed_
    assert r == 3 and m.privacy_["replayed_iterations"] == r
    assert m.ledger_.n_events == 2 * (m.n_iter + r)  # an eps_L release and an eps_I sweep per replay too
    eps = m.epsilon_laplace_ + m.epsilon_inherent_
    assert m.privacy_["epsilon_basic"] == pytest.approx((m.n_iter + r) * eps)
    # nothing lost: the driver's true counts are exactly the counts of the gathered assignments
    _, nwk, nk = count_assignments(c.word_ids, c.doc_ptr, seen["z"], 5, c.vocab_size)
    assert seen["z"].shape == (c.n_tokens,) and nk.sum() == c.n_tokens
    np.testing.assert_array_equal(m._backend_.arrays.nwk, nwk)
    np.testing.assert_array_equal(m._backend_.arrays.nk, nk)
    assert np.allclose(m.components_.sum(axis=1), 1.0)


def test_the_drivers_global_counts_on_dask_are_int64(planted, fresh):
    """Each shard counts in int32; a shard set may hold more than 2**31 tokens, so the driver's sum must not be int32
    (it would wrap to negative topic totals without a word)."""
    m = LDA(n_topics=5, n_iter=2, seed=1, verbose=0, backend="dask", client=fresh).fit(planted.corpus)
    arrays = m._backend_.arrays
    assert arrays.nwk.dtype == np.int64 and arrays.nk.dtype == np.int64
    assert int(arrays.nk.sum()) == planted.corpus.n_tokens


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


def test_dask_edge_cases_and_results_whatever_the_number_of_workers():
    distributed = pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend
    from dptopic.corpus import lda_corpus
    c = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    runs = []
    for n_workers in (1, 3):
        with distributed.LocalCluster(n_workers=n_workers, processes=False, threads_per_worker=1,
                                      dashboard_address=None) as cl, distributed.Client(cl) as client:
            if n_workers == 3:
                for corpus in empty_and_small_corpora():      # no documents; more workers (and shards) than documents
                    check_backend_run(DaskBackend(client), corpus)
                    check_backend_run(DaskBackend(client, n_shards=5), corpus)
            b = DaskBackend(client, n_shards=3)
            a = b.open(c, 3, np.random.default_rng(1), "sparse")
            for _ in range(4):
                b.sweep(0.1, 0.05)
            b.collect()
            runs.append((b.z.copy(), b.doc_topic_counts().copy(), a.nwk.copy()))
            b.close()
    for x, y in zip(*runs):       # a fixed number of shards: the same run on one worker or three
        np.testing.assert_array_equal(x, y)


def _corpus():
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    return Corpus.from_tokens([list(rng.choice(words, size=8)) for _ in range(40)])


def test_a_relative_shard_folder_reaches_workers_in_another_directory(tmp_path, monkeypatch, dask_client):
    write_shards(_corpus(), tmp_path / "sh", 2)
    monkeypatch.chdir(tmp_path)       # the workers stay where the cluster started them
    m = LDA(n_topics=2, n_iter=2, backend="dask", client=dask_client, seed=0, verbose=0).fit("sh")
    assert m.components_.shape == (2, 12)
