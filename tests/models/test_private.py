"""HDP-LDA and the CDP-LDA baselines: what ``epsilon`` names (the guarantee in total, per word; a baseline without a
guarantee takes the paper's figure as ``paper_epsilon``), and folders saved under the old names."""
from __future__ import annotations

import json

import pytest

import dptopic
from dptopic import CDPLDA, CDPLDAPlus, HDPLDA
from dptopic.errors import DPTopicError
import numpy as np

from dptopic.backends import ThreadBackend
from dptopic.errors import BudgetExceededError
from dptopic.models import base as model_base


def test_hdplda_epsilon_is_the_whole_runs_total_split_as_from_budget_does():
    kw = dict(delta=1e-5, n_iter=20, epsilon_inherent=10.0)
    direct = HDPLDA(epsilon=400.0, **kw)
    assert direct.epsilon_laplace_ == pytest.approx(HDPLDA.from_budget(400.0, **kw).epsilon_laplace)
    assert HDPLDA().epsilon_laplace_ == 1.0 and HDPLDA(epsilon_laplace=2.0).epsilon_laplace_ == 2.0
    with pytest.raises(DPTopicError, match="not both") as e:
        HDPLDA(epsilon=400.0, epsilon_laplace=2.0, **kw)._validate()
    assert "\n" not in str(e.value)


def test_hdplda_epsilon_fit_reports_at_most_the_total():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    m = HDPLDA(n_topics=2, epsilon=400.0, n_iter=5, epsilon_inherent=10.0, seed=0, verbose=0)
    with pytest.warns(UserWarning):
        m.fit(c)
    assert m.privacy_["epsilon"] <= 400.0 * (1 + 1e-9) and m.privacy_["budget"]["epsilon"] == 400.0


@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus])
def test_cdp_baselines_take_paper_epsilon_and_refuse_epsilon(cls):
    assert cls(paper_epsilon=2.0).paper_epsilon == 2.0
    for make in (lambda: cls(epsilon=2.0), lambda: cls().set_params(epsilon=2.0)):
        with pytest.raises(DPTopicError, match="paper_epsilon=") as e:
            make()
        assert "\n" not in str(e.value)


def test_a_cdp_folder_saved_with_epsilon_loads_as_paper_epsilon(tmp_path):
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    m = CDPLDA(n_topics=2, paper_epsilon=2.0, n_iter=2, verbose=0).fit(c)
    m.save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["params"] = {("epsilon" if k == "paper_epsilon" else k): v for k, v in meta["params"].items()}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert dptopic.load(tmp_path / "m").paper_epsilon == 2.0


# ---------------------------------------------------------------- CDP-LDA's delta: of a partial figure, not a guarantee
@pytest.mark.parametrize("cls", [CDPLDA, CDPLDAPlus])
def test_cdp_takes_the_count_releases_delta_as_count_release_delta_and_refuses_delta(cls):
    with pytest.raises(DPTopicError, match="count_release_delta=") as e:
        cls(n_topics=2, delta=1e-6)
    assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match="count_release_delta="):
        cls(n_topics=2).set_params(delta=1e-6)
    assert cls(count_release_delta=1e-3).get_params()["count_release_delta"] == 1e-3
    assert "delta" not in cls().get_params()


def test_the_count_release_figure_is_reported_at_count_release_delta():
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    reps = [CDPLDAPlus(n_topics=2, paper_epsilon=2.0, n_iter=3, verbose=0, count_release_delta=d).fit(c)
            .privacy_["count_release_epsilon"] for d in (1e-3, 1e-9)]
    assert [r["delta"] for r in reps] == [1e-3, 1e-9]
    assert reps[0]["epsilon"] < reps[1]["epsilon"]      # the same releases: a smaller delta, a larger epsilon


def test_a_cdp_folder_saved_with_delta_loads_as_count_release_delta(tmp_path):
    from dptopic.corpus.synthetic import lda_corpus

    c = lda_corpus(n_docs=20, vocab_size=30, n_topics=2, doc_length=10, seed=0).corpus
    CDPLDA(n_topics=2, n_iter=2, verbose=0, count_release_delta=1e-4).fit(c).save(tmp_path / "m")
    meta = json.loads((tmp_path / "m" / "model.json").read_text())
    meta["params"] = {("delta" if k == "count_release_delta" else k): v for k, v in meta["params"].items()}
    (tmp_path / "m" / "model.json").write_text(json.dumps(meta))
    assert dptopic.load(tmp_path / "m").count_release_delta == 1e-4


# ---------------------------------------------------------------------------------------------------------------------
# A run trained to a budget stops at the replay that makes its plan unaffordable (a Dask worker killed at
# iteration 50 of 600 was noticed at iteration 51, yet the run went on to iteration 597 before the budget refused a
# planned sweep); a run with headroom goes on; the replay warning's epsilon is rounded up, as the card shows it.

class _LosesAShardOnce(ThreadBackend):
    """Threads, but the second sweep reports shard 0 lost with one sweep to replay (as the Dask backend does)."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.calls = 0

    def sweep(self, alpha, beta, word_table=None, clip=np.inf, shards=None):
        super().sweep(alpha, beta, word_table=word_table, clip=clip, shards=shards)
        if shards is None:
            self.calls += 1
            if self.calls == 2:
                return {0: 1}
        return {}


@pytest.fixture
def backend(monkeypatch):
    made = {}

    def make(name, n_jobs=1, client=None, parallel="adlda"):
        made["b"] = _LosesAShardOnce(n_jobs, parallel)
        return made["b"]

    monkeypatch.setattr(model_base, "make_backend", make)
    return made


def test_a_budgeted_run_stops_at_the_replay_not_at_the_end(tiny, backend):
    m = HDPLDA.from_budget(500.0, 1e-5, n_iter=40, n_topics=3, seed=0, verbose=0, backend="dask")
    with pytest.raises(BudgetExceededError, match=r"after a Dask worker was lost: 1 replayed sweep\(s\)"):
        m.fit(tiny.corpus)
    assert backend["b"].calls == 2         # stopped at the replay: none of the 38 planned sweeps after it ran


def test_a_run_with_headroom_goes_on_and_reports_the_replay(tiny, backend):
    m = HDPLDA(n_topics=3, epsilon_laplace=1.0, n_iter=6, seed=0, verbose=0, backend="dask")
    with pytest.warns(UserWarning, match="1 sweep") as rec:
        m.fit(tiny.corpus)
    assert backend["b"].calls == 6 and m.n_replayed_ == 1
    from dptopic.accounting.card import epsilon_text

    shown = epsilon_text(m.privacy_["epsilon"])
    assert any(f"({shown}) includes them" in str(w.message) for w in rec)
    assert float(shown) >= m.privacy_["epsilon"]        # never below the epsilon computed
