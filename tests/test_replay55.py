"""A run trained to a budget stops at the replay that makes its plan unaffordable (review 55: a Dask worker killed at
iteration 50 of 600 was noticed at iteration 51, yet the run went on to iteration 597 before the budget refused a
planned sweep); a run with headroom goes on; the replay warning's epsilon is rounded up, as the card shows it."""
import numpy as np
import pytest

from dptopic.backends import ThreadBackend
from dptopic.errors import BudgetExceededError
from dptopic.models import base as model_base
from dptopic.models.private import HDPLDA


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
