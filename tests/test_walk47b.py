"""Walk-through B (Dask backend, secure mode, shards): replays against a budget, a lost scheduler, the replay
warning, OpenDP checked before the data, the secure-mode texts, one type for noise_reproducible, the empty-corpus
hint and an unfinished shard folder."""
import argparse
import logging
import sys
import warnings

import numpy as np
import pytest

from dptopic.backends import ThreadBackend
from dptopic.errors import BudgetExceededError, DPTopicError
from dptopic.models import base as model_base
from dptopic.models.private import HDPLDA


class _LosesAShard(ThreadBackend):
    """The thread backend, but its second sweep reports shard 0 lost with ``lost`` sweeps to replay, as the Dask
    backend does when a worker dies (``sweep`` returns ``{shard: sweeps to redo}``)."""

    def __init__(self, *a, lost=2, **kw):
        super().__init__(*a, **kw)
        self._calls, self._lost = 0, lost

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        super().sweep(alpha, beta, word_table=word_table, clip=clip, shards=shards)
        if shards is None:
            self._calls += 1
            if self._calls == 2:
                return {0: self._lost}
        return {}


@pytest.fixture
def lossy(monkeypatch):
    monkeypatch.setattr(model_base, "make_backend", lambda name, n_jobs=1, client=None, parallel="adlda":
                        _LosesAShard(n_jobs, parallel))


@pytest.mark.parametrize("lost", [2, 5])   # 2: a later planned sweep goes over; 5: a replay itself goes over
def test_a_budgeted_run_that_must_replay_says_a_worker_was_lost(tiny, monkeypatch, lost):
    # item 1: from_budget spends the whole budget on the plan, so any replay goes over it; the error used to say only
    # "raise the budget or run fewer iterations", never that a Dask worker had died
    monkeypatch.setattr(model_base, "make_backend", lambda name, n_jobs=1, client=None, parallel="adlda":
                        _LosesAShard(n_jobs, parallel, lost=lost))
    m = HDPLDA.from_budget(50.0, 1e-5, n_iter=4, n_topics=3, seed=0, verbose=0, backend="dask")
    with pytest.raises(BudgetExceededError) as e:
        m.fit(tiny.corpus)
    msg = str(e.value)
    assert f"after a Dask worker was lost: {lost} replayed sweep(s)" in msg and "exceed its budget" in msg
    assert "no headroom for replays" in msg and "threads" in msg and "\n" not in msg


def test_a_replay_is_warned_with_its_count_and_the_epsilon_includes_it(tiny, lossy):
    # item 3: a replay raises epsilon above the plan; the fit said nothing about it
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=4, seed=0, verbose=0, backend="dask")
    with pytest.warns(UserWarning, match=r"a Dask worker was lost and 2 sweep\(s\) were replayed") as rec:
        m.fit(tiny.corpus)
    assert m.n_replayed_ == 2 and m.privacy_["replayed_iterations"] == 2
    text = " ".join(str(w.message) for w in rec)
    from dptopic.accounting.card import epsilon_text

    assert f"({epsilon_text(m.privacy_['epsilon'])}) includes them" in text
    # a run with no loss does not warn
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=4, seed=0, verbose=0).fit(tiny.corpus)
    assert not [w for w in rec if "replayed" in str(w.message)]


@pytest.mark.parametrize("exc", [OSError("Timed out trying to connect to tcp://127.0.0.1:18786 after 20 s")])
def test_a_scheduler_lost_after_the_reconnect_timeout_is_one_line(capsys, monkeypatch, exc):
    # item 2: distributed raises a plain OSError once its reconnect time-out is over; the CLI printed
    # "error: OSError: Timed out trying to connect ..." instead of its scheduler-lost line
    from dptopic.cli import _common, main as cli_main

    def lost(a):
        raise exc

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=lost, scheduler="tcp://127.0.0.1:18786", dask_local=None)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: lost the connection to the Dask scheduler")


@pytest.mark.parametrize("exc", [FileNotFoundError(2, "No such file or directory", "s3://bucket/x.npz"),
                                 TimeoutError("lock timed out")])
def test_an_ordinary_os_error_on_a_cluster_run_keeps_its_own_line(capsys, monkeypatch, exc):
    # a missing file whose name holds "://", or a time-out of something else, is not a lost scheduler
    from dptopic.cli import _common, main as cli_main

    def fails(a):
        raise exc

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=fails, scheduler="tcp://127.0.0.1:18786", dask_local=None)) == 2
    err = capsys.readouterr().err.strip()
    assert "Dask scheduler" not in err and err.startswith(f"error: {type(exc).__name__}"), err


def test_an_os_error_off_the_cluster_keeps_its_own_line(capsys, monkeypatch):
    from dptopic.cli import _common, main as cli_main

    def denied(a):
        raise PermissionError(13, "Permission denied", "/x/model")

    monkeypatch.setattr(_common, "resolve_model_arg", lambda a: None)
    assert cli_main._dispatch(argparse.Namespace(func=denied, scheduler=None, dask_local=None)) == 2
    assert capsys.readouterr().err.strip() == "error: PermissionError: Permission denied (/x/model)"


def test_the_cli_keeps_distributed_logs_off_stderr():
    # item 2: distributed's loggers printed ERROR lines and tracebacks during a CLI run on a cluster
    from dptopic.cli._cluster import quiet_cluster_logs

    client = logging.getLogger("distributed.client")
    client.setLevel(logging.WARNING)        # distributed's default config gives it a level of its own
    before = (logging.getLogger("distributed").level, client.level)
    with quiet_cluster_logs():
        assert not client.isEnabledFor(logging.ERROR)
        assert not logging.getLogger("distributed.scheduler").isEnabledFor(logging.ERROR)
        assert not logging.getLogger("distributed.nanny.new_child").isEnabledFor(logging.WARNING)
    assert (logging.getLogger("distributed").level, client.level) == before


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


# ---------------------------------------------------------------- item 7: OpenDP checked before the data
def _no_opendp(monkeypatch):
    monkeypatch.setitem(sys.modules, "opendp", None)     # "import opendp.prelude" now raises ImportError
    monkeypatch.setitem(sys.modules, "opendp.prelude", None)


def _touched(*a, **kw):
    raise AssertionError("the data was read before OpenDP was checked")


def test_secure_gibbs_checks_opendp_before_reading_data(tiny, monkeypatch):
    _no_opendp(monkeypatch)
    monkeypatch.setattr(model_base, "training_source", _touched)
    for m in (HDPLDA(n_topics=3, n_iter=2, secure=True, verbose=0),):
        with pytest.raises(DPTopicError, match="secure mode needs OpenDP"):
            m.fit(tiny.corpus)
    from dptopic.models.private import CDPLDAPlus

    with pytest.raises(DPTopicError, match="secure mode needs OpenDP"):
        CDPLDAPlus(n_topics=3, n_iter=2, secure=True, verbose=0).fit(tiny.corpus)


def test_secure_document_level_trainers_check_opendp_before_reading_data(tiny, monkeypatch):
    from dptopic.models import DPSVI, DocDPCooccurrence, DocDPEM, docdp, docdp_cooc

    _no_opendp(monkeypatch)
    monkeypatch.setattr(docdp, "document_source", _touched)
    monkeypatch.setattr(docdp_cooc, "document_source", _touched)
    monkeypatch.setattr(DPSVI, "_train_corpus", _touched)
    for m in (DocDPEM(n_topics=3, secure=True), DocDPCooccurrence(n_topics=3, secure=True),
              DPSVI(n_topics=3, secure=True, verbose=0)):
        with pytest.raises(DPTopicError, match="secure mode needs OpenDP"):
            m.fit(tiny.corpus)


def test_train_checks_opendp_after_its_flags_and_before_the_corpus(capsys, monkeypatch, tmp_path):
    # a missing OpenDP is one line before any corpus is read, but only once the flags are known to apply: a flag
    # refusal (--secure with --seed, --secure on a trainer that takes none) keeps its own message
    from dptopic.cli import train as cli_train
    from dptopic.cli.main import main

    _no_opendp(monkeypatch)
    monkeypatch.setattr(cli_train, "_training_corpus", lambda *a, **k: _touched(None))
    missing = tmp_path / "never-read.txt"
    argv = ["train", "--corpus", str(missing), "--topics", "2", "--iterations", "2", "--out", str(tmp_path / "m")]
    assert main(argv + ["--algorithm", "hdp", "--secure"]) == 2
    assert capsys.readouterr().err.strip().startswith("error: secure mode needs OpenDP")
    assert main(argv + ["--algorithm", "hdp", "--secure", "--seed", "1"]) == 2
    assert "refuses a seed" in capsys.readouterr().err


# ---------------------------------------------------------------- items 8 and 9: the document-level reports
def test_each_document_level_trainer_names_its_own_coins_and_noise_reproducible_is_a_bool(tiny):
    pytest.importorskip("opendp")
    from dptopic.models import DPSVI, DocDPCooccurrence, DocDPEM

    texts = {}
    for cls, kw in ((DocDPEM, dict(epsilon=5.0, n_iter=2)), (DocDPCooccurrence, dict(epsilon=5.0)),
                    (DPSVI, dict(n_epochs=1, sampling_rate=0.5, verbose=0))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rep = cls(n_topics=3, secure=True, **kw).fit(tiny.corpus).privacy_
        assert rep["noise_reproducible"] is False and rep["secure_noise"] is True
        texts[cls.__name__] = rep["randomness"]
    assert "Poisson" not in texts["DocDPEM"] and "Poisson" not in texts["DocDPCooccurrence"]
    assert "DPSVI" not in texts["DocDPEM"] + texts["DocDPCooccurrence"]
    assert "Dirichlet" in texts["DocDPEM"] and "draws nothing else at random" in texts["DocDPCooccurrence"]
    assert "Poisson sampling" in texts["DPSVI"] and "amplification by subsampling" in texts["DPSVI"]
    assert "in secure mode those coins come from PCG64" in texts["DPSVI"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seeded = DocDPEM(n_topics=3, epsilon=5.0, n_iter=2, seed=1).fit(tiny.corpus).privacy_
    assert seeded["noise_reproducible"] is True


# ---------------------------------------------------------------- item 6: a folder left by a killed prepare --shards
@pytest.mark.parametrize("partial", [True, False])
def test_a_folder_left_by_a_killed_shard_run_is_named_incomplete(tmp_path, partial, capsys):
    from pathlib import Path

    from dptopic._io import mark_output_folder
    from dptopic.backends import training_source
    from dptopic.cli.main import main
    from dptopic.corpus import Corpus

    folder = tmp_path / "xKILL"
    mark_output_folder(str(folder), "corpus prepare --shards")       # what a run killed while writing leaves
    if partial:
        Path(folder, ".shard-00000.npz.partial").write_bytes(b"half a shard")
    for read in (lambda: Corpus.from_directory(folder), lambda: training_source(str(folder))):
        with pytest.raises(DPTopicError, match="is incomplete: its 'corpus prepare --shards' run did not finish;"
                                               " re-run it with --overwrite"):
            read()
    assert main(["corpus", "info", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is incomplete" in err[0] and "no *.txt files" not in err[0]


def test_an_empty_folder_is_still_an_empty_corpus(tmp_path):
    from dptopic.corpus import Corpus

    with pytest.raises(DPTopicError, match=r"^empty corpus: no \*\.txt files"):
        Corpus.from_directory(tmp_path)


# ---------------------------------------------------------------- item 10: the tokenizer rule in the empty-corpus error
def test_every_token_dropped_names_the_tokenizer_rule():
    from dptopic.corpus import Corpus

    with pytest.raises(DPTopicError) as e:
        Corpus.from_texts(["w1500 w22 x9", "a1 b2 c3"], stop_words=None)
    msg = str(e.value)
    assert "runs of 3 or more letters" in msg and "digits" in msg and "'w1500' is read as 'w'" in msg
    assert "docs/preprocessing.md" in msg and "stop words" not in msg
    with pytest.raises(DPTopicError, match="min_df"):      # words that a document-frequency cut removes: as before
        Corpus.from_texts(["alpha beta", "gamma delta"], min_df=2)


# ---------------------------------------------------------------- item 11: a Dask-trained model's scope
def test_a_dask_trained_model_says_its_transport_must_be_secured(tiny, lossy):
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=2, verbose=0, backend="dask")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(tiny.corpus)
    assert "Dask's transport" in m.privacy_["scope"] and "TLS" in m.privacy_["scope"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        threads = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=2, verbose=0).fit(tiny.corpus)
    assert "Dask" not in threads.privacy_["scope"]


def test_the_terminal_card_of_a_report_without_a_guarantee_shows_replayed_sweeps(capsys):
    # CDP-LDA+'s report (no proven guarantee) took a branch of print_privacy that left replayed_iterations out
    from dptopic.cli._common import make_console, print_privacy

    print_privacy({"private": False, "mode": "CDP-LDA+", "scope": "s", "replayed_iterations": 2},
                  make_console())
    assert "replayed_iterations 2" in " ".join(capsys.readouterr().out.replace("│", " ").split())
