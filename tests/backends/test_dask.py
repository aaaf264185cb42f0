"""``dptopic.backends.dask``."""
import json
import os

import numpy as np
import pytest

from dptopic.backends import dask as dask_backend  # noqa: E402
from dptopic.backends import write_shards
from dptopic.cli.main import main
from dptopic.errors import DPTopicError
from dptopic.models import DocDPCooccurrence, DocDPEM
from dptopic.models import docdp as docdp_module
from dptopic.models import docdp_cooc as cooc_module


def test_a_cluster_without_workers_says_it_waits_before_it_waits():
    """Review 55: with no live worker the run showed only a progress bar standing still for 120 s."""
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    class NoWorkers:
        def scheduler_info(self):
            return {"workers": {}}

        def wait_for_workers(self, n, timeout=None):
            raise TimeoutError

    b = DaskBackend.__new__(DaskBackend)
    b.client = NoWorkers()
    with pytest.warns(UserWarning, match="no live worker yet: waiting up to 120 s"):
        with pytest.raises(DPTopicError, match="no live worker \\(waited 120 s\\)"):
            b._workers()


# ---------------------------------------------------------------- item 5: OpenDP missing on a Dask worker
class _Answer:
    def __init__(self, exc):
        self.exc = exc

    def result(self):
        raise self.exc


class _ActorWithoutOpenDP:
    def perturb_ndk(self, *a):
        from dptopic.mechanisms.laplace import OPENDP_MISSING

        return _Answer(DPTopicError(OPENDP_MISSING))    # what the worker raises, as the actor's future gives it back


def test_a_worker_without_opendp_is_named():
    # the driver has OpenDP; the error said only "pip install 'dptopic[secure]'", not that a worker lacks it
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    b = DaskBackend.__new__(DaskBackend)
    b._actors, b.where = [_ActorWithoutOpenDP()], ["tcp://10.0.0.7:40123"]
    with pytest.raises(DPTopicError) as e:
        b._call("perturb_ndk", {0: ()})
    msg = str(e.value)
    assert "Dask worker" in msg and "tcp://10.0.0.7:40123 lacks it" in msg and "on every worker" in msg


def test_another_worker_error_passes_through_unchanged():
    pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend

    class Other:
        def perturb_ndk(self, *a):
            return _Answer(DPTopicError("something else"))

    b = DaskBackend.__new__(DaskBackend)
    b._actors, b.where = [Other()], ["tcp://10.0.0.7:40123"]
    with pytest.raises(DPTopicError, match="^something else$"):
        b._call("perturb_ndk", {0: ()})


# --------------------------------------------------------------------------------------------------------------
# Document-level trainers on a Dask cluster (``backend="dask"``, ``--dask-local``): each worker sums its shards'
# bounded statistics with the same kernel, the driver adds the partials in shard order and draws the noise once.
# Checked here: the statistic before noise equals one machine's (to float rounding), the ledger's events are the same,
# a worker killed mid-pass costs time only (its task is recomputed, the noise is drawn once), and bad input (shards
# that disagree on the vocabulary, a cluster that loses every worker) is refused in one line before any noise is
# drawn.
distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.dask, pytest.mark.filterwarnings("ignore::UserWarning")]

TRAINERS = {
    "docdp-cooc": (cooc_module, lambda **k: DocDPCooccurrence(n_topics=5, epsilon=2.0, n_words=50, seed=11, **k)),
    "docdp": (docdp_module, lambda **k: DocDPEM(n_topics=5, epsilon=2.0, n_iter=2, seed=11, **k)),
}


@pytest.fixture(scope="module")
def shard_folder(planted, tmp_path_factory):
    folder = tmp_path_factory.mktemp("docdp-dask") / "shards"
    write_shards(planted.corpus, folder, 4)
    return folder


def _spy(monkeypatch, module):
    """Record what each noise draw of ``module``'s trainer is given (the statistic before noise)."""
    seen = []
    real = module.gaussian_mechanism

    def spy(values, *a, **k):
        seen.append(np.array(values, dtype=np.float64, copy=True))
        return real(values, *a, **k)
    monkeypatch.setattr(module, "gaussian_mechanism", spy)
    return seen


def _events(model):
    return model.ledger_.report(1e-5)["events"]


@pytest.mark.parametrize("name", TRAINERS)
@pytest.mark.parametrize("source", ["shard folder", "corpus in memory"])
def test_dask_sums_equal_one_machine(name, source, planted, shard_folder, fresh, monkeypatch):
    module, make = TRAINERS[name]
    X = shard_folder if source == "shard folder" else planted.corpus
    seen = _spy(monkeypatch, module)
    here = make().fit(X)
    on_one = [s.copy() for s in seen]
    seen.clear()
    there = make(backend="dask", client=fresh).fit(X)
    assert len(seen) == len(on_one) == 2          # two releases each: the word ranking and the co-occurrence; two EM steps
    for a, b in zip(on_one, seen):       # the statistic before noise: equal up to float rounding
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    # the same seed draws the same noise on the driver: the same topics, the same events on the ledger
    # sums in shard order round differently (1e-16); the recovery's refinement steps carry that to about 1e-6
    np.testing.assert_allclose(there.components_, here.components_, rtol=1e-4, atol=1e-9)
    assert _events(there) == _events(here)
    assert there.privacy_["epsilon"] == here.privacy_["epsilon"]
    ran = there.privacy_["execution"]
    assert ran["backend"] == "dask" and ran["workers"] == 2
    assert ran["shards"] == (4 if source == "shard folder" else 2)
    assert "execution" not in here.privacy_
    assert "Dask cluster" in there.privacy_["scope"] and "Dask cluster" not in here.privacy_["scope"]
    from dptopic.accounting.card import privacy_card

    assert privacy_card(there.privacy_, type(there).__name__)["execution"] == ran


# the recovery is the Dask backend's, the same for both trainers: docdp's case in the default run, docdp-cooc's slow
@pytest.mark.parametrize("name", [pytest.param("docdp-cooc", marks=pytest.mark.slow), "docdp"])
def test_a_worker_killed_mid_pass_is_recomputed_and_the_noise_drawn_once(name, shard_folder, fresh, monkeypatch,
                                                                        tmp_path):
    """A real worker process kills itself while reading its first shard (the first of the two workers to get there,
    once: a marker file decides); its nanny restarts it, the scheduler reruns the task, and the run equals an
    undisturbed one, with the two releases drawn once each."""
    module, make = TRAINERS[name]
    ref = make(backend="dask", client=fresh).fit(shard_folder)
    marker = str(tmp_path / "killed")
    before = set(fresh.run(os.getpid).values())

    def arm(marker=marker):
        import os
        import signal

        from dptopic.models import _document_passes as mod
        real = mod._block_bow

        def dying(block, vocab, on_worker=False):
            try:
                os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return real(block, vocab, on_worker)
            os.kill(os.getpid(), signal.SIGKILL)      # this worker dies mid-pass, holding its task
        mod._block_bow = dying
    fresh.run(arm)
    seen = _spy(monkeypatch, module)
    m = make(backend="dask", client=fresh).fit(shard_folder)
    assert os.path.exists(marker)
    fresh.wait_for_workers(2, timeout=60)
    assert set(fresh.run(os.getpid).values()) != before          # a worker was indeed replaced
    assert len(seen) == m.ledger_.n_events == ref.ledger_.n_events == 2   # each release drawn once: none twice
    assert _events(m) == _events(ref)
    np.testing.assert_allclose(m.components_, ref.components_, rtol=1e-4, atol=1e-9)

    def disarm():
        import importlib

        from dptopic.models import _document_passes as mod
        importlib.reload(mod)
    fresh.run(disarm)


def test_a_cluster_that_loses_every_worker_fails_before_any_noise(planted, tmp_path, monkeypatch):
    """The only worker leaves the cluster, nanny and all, as the first shard's task is submitted (nothing restarts
    it): after the grace the pass fails in one line, with no noise drawn and nothing fitted."""
    folder = tmp_path / "shards"
    write_shards(planted.corpus, folder, 3)
    monkeypatch.setattr(dask_backend, "LOST_GRACE", 1.0)
    seen = _spy(monkeypatch, cooc_module)
    with distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=1, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        real, gone = client.submit, []

        def submit(fn, *a, **k):
            if fn is not dask_backend._n_workers_here and not gone:
                gone.extend(client.scheduler_info()["workers"])
                client.retire_workers(gone, close_workers=True)
                assert dask_backend.n_workers(client) == 0
            return real(fn, *a, **k)
        monkeypatch.setattr(client, "submit", submit)
        m = DocDPCooccurrence(n_topics=5, epsilon=2.0, backend="dask", client=client)
        with pytest.raises(DPTopicError) as e:
            m.fit(folder)
    msg = str(e.value)
    assert "lost every worker" in msg and "noise was not drawn" in msg and "\n" not in msg
    assert seen == [] and not hasattr(m, "components_")


def _mixed_vocabulary_folder(c, tmp_path):
    """A shard folder whose second shard has a shorter vocabulary than the first."""
    folder = tmp_path / "mixed"
    folder.mkdir()
    c.subset(np.arange(100)).save(folder / "shard-0000.npz")
    c.subset(np.arange(100, 200)).restrict(c.vocabulary.words[:150]).save(folder / "shard-0001.npz")
    return folder


def test_shards_that_disagree_on_the_vocabulary_are_refused_first(planted, tmp_path, fresh, monkeypatch):
    folder = _mixed_vocabulary_folder(planted.corpus, tmp_path)
    seen = _spy(monkeypatch, cooc_module)
    with pytest.raises(DPTopicError, match="different vocabulary"):
        DocDPCooccurrence(n_topics=5, epsilon=2.0, backend="dask", client=fresh).fit(folder)
    assert seen == []


def test_a_client_is_needed_and_only_with_the_dask_backend(planted, fresh):
    with pytest.raises(DPTopicError, match="needs client="):
        DocDPEM(n_topics=3, epsilon=1.0, backend="dask").fit(planted.corpus)
    with pytest.raises(DPTopicError, match="used only with backend='dask'"):
        DocDPEM(n_topics=3, epsilon=1.0, client=fresh).fit(planted.corpus)
    with pytest.raises(DPTopicError, match="mini-batches"):
        DocDPEM(n_topics=3, epsilon=1.0, backend="dask", client=fresh).fit([planted.corpus.subset(np.arange(50))])


# ------------------------------------------------------------------ the command line
@pytest.fixture(scope="module")
def text_shards(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("docdp-dask-cli")
    rng = np.random.default_rng(0)
    themes = [[f"{t}{i}" for i in range(10)] for t in ("fruit", "river", "engine", "music")]
    lines = [" ".join(rng.choice(themes[d % 4], 15)) for d in range(240)]
    (tmp / "docs.txt").write_text("\n".join(lines) + "\n")
    assert main(["corpus", "prepare", "--corpus", str(tmp / "docs.txt"), "--shards", "3", "--out",
                 str(tmp / "sh") + "/"]) == 0
    return tmp / "sh"


def _run(capsys, argv):
    capsys.readouterr()
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    return rc, capsys.readouterr()


# docdp-cooc's Dask path is in the default run through test_dask_sums_equal_one_machine; the CLI's through docdp
@pytest.mark.parametrize("algorithm", [pytest.param("docdp-cooc", marks=pytest.mark.slow), "docdp"])
def test_cli_trains_document_level_on_dask_local(algorithm, text_shards, tmp_path, capsys):
    args = ["train", "--corpus", text_shards, "--algorithm", algorithm, "--topics", "4", "--epsilon", "4",
            "--seed", "3", "--quiet"]
    rc, cap = _run(capsys, args + ["--dask-local", "2", "--out", tmp_path / "dask"])
    assert rc in (0, None), cap.err
    rc, cap = _run(capsys, args + ["--out", tmp_path / "here"])
    assert rc in (0, None), cap.err
    dask_meta = json.loads((tmp_path / "dask" / "model.json").read_text())
    here_meta = json.loads((tmp_path / "here" / "model.json").read_text())
    assert dask_meta["privacy"]["execution"] == {"backend": "dask", "workers": 2, "shards": 3}
    assert dask_meta["privacy"]["events"] == here_meta["privacy"]["events"]
    np.testing.assert_allclose(np.load(tmp_path / "dask" / "components.npy"),
                               np.load(tmp_path / "here" / "components.npy"), rtol=1e-4, atol=1e-9)


def test_cli_refuses_a_mixed_vocabulary_folder_before_a_cluster_starts(planted, tmp_path, capsys, monkeypatch):
    folder = _mixed_vocabulary_folder(planted.corpus, tmp_path)
    monkeypatch.setattr(distributed, "LocalCluster", None)   # starting a cluster would fail loudly
    rc, cap = _run(capsys, ["train", "--corpus", folder, "--algorithm", "docdp-cooc", "--topics", "4", "--epsilon",
                            "1", "--dask-local", "2", "--out", tmp_path / "m"])
    err = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert rc == 2 and len(err) == 1 and "different vocabulary" in err[0] and "Traceback" not in cap.err
    assert not (tmp_path / "m").exists()


def test_cli_still_refuses_dask_for_trainers_that_cannot(text_shards, tmp_path, capsys):
    rc, cap = _run(capsys, ["train", "--corpus", "demo", "--algorithm", "svi", "--epsilon", "1", "--dask-local", "2",
                            "--out", tmp_path / "m"])
    assert rc == 2 and "--dask-local has no effect with --algorithm svi" in cap.err


def test_the_user_unit_stays_on_this_machine(planted, fresh, tmp_path, capsys):
    users = [f"u{i % 40}" for i in range(planted.corpus.n_docs)]
    with pytest.raises(DPTopicError, match="unit='user'"):
        DocDPCooccurrence(n_topics=5, epsilon=2.0, unit="user", backend="dask", client=fresh).fit(
            planted.corpus, user_ids=users)


def test_cli_refuses_a_cluster_for_the_user_unit(tmp_path, capsys):
    rng = np.random.default_rng(0)
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean".split()
    path = tmp_path / "u.jsonl"
    path.write_text("".join(json.dumps({"user": f"u{i % 10}", "text": " ".join(rng.choice(words, 10))}) + "\n"
                            for i in range(60)))
    rc, cap = _run(capsys, ["train", "--corpus", path, "--user-field", "user", "--unit", "user", "--topics", "2",
                            "--epsilon", "1", "--dask-local", "2", "--out", tmp_path / "m"])
    err = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert rc == 2 and len(err) == 1 and "--dask-local has no effect with --unit user" in err[0]
    assert not (tmp_path / "m").exists()


def test_a_jsonl_corpus_in_shards_read_on_the_workers_gives_the_release_of_one_machine(tmp_path, fresh):
    import warnings

    import dptopic
    from dptopic.corpus import Corpus

    rng = np.random.default_rng(3)
    words = ["market", "stocks", "trade", "price", "goal", "match", "team", "score", "café", "vote", "party"]
    lines = [json.dumps({"text": " ".join(rng.choice(words, size=int(rng.integers(0, 30)))), "user": f"u{i % 30}"})
             for i in range(900)]
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join(lines) + "\n")
    shards = []
    for j, (a, b) in enumerate([(0, 250), (250, 600), (600, 900)]):
        shards.append(tmp_path / f"part{j}.jsonl")
        shards[-1].write_text("\n".join(lines[a:b]) + "\n")
    here = Corpus.from_jsonl(whole, user_field="user")
    there = dask_backend.read_jsonl_shards(fresh, shards, user_field="user", chunk_docs=100)
    assert np.array_equal(here.word_ids, there.word_ids) and np.array_equal(here.doc_ptr, there.doc_ptr)
    assert here.vocabulary.words == there.vocabulary.words and here.user_ids == there.user_ids
    assert np.array_equal(here.token_keys.bands, there.token_keys.bands)
    assert np.array_equal(here.content_keys, there.content_keys)
    fitted = []
    for corpus in (here, there):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted.append(dptopic.train(corpus, unit="document", epsilon=2.0, n_topics=3, seed=1,
                                        metrics=False).model.components_)
    assert np.array_equal(fitted[0], fitted[1])


def test_a_shard_no_worker_can_read_is_refused_in_one_line(tmp_path, fresh):
    with pytest.raises(DPTopicError, match="cannot read corpus shard .*same path on every worker"):
        dask_backend.read_jsonl_shards(fresh, [tmp_path / "missing.jsonl"])
