"""``plan_budget``: what a run or a private search would add to the ledger, reading no document."""
import pytest

from dptopic.accounting.tuning import RandomStoppingEvent
from dptopic.errors import ParameterError
from dptopic.models import DocDPCooccurrence
from dptopic.training.budget import plan_budget, release_groups


@pytest.fixture
def ledger(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    DocDPCooccurrence(epsilon=1.0, n_topics=2, ledger=L, dataset="posts").fit(tiny.corpus)
    return L


def test_a_planned_search_is_the_search_of_that_mean_number_of_runs(ledger):
    """budget plan --search-runs 10 plans the search dptopic search --expected-runs 10 runs: a geometric number of
    runs of mean 10 (gamma = 1/10), not of mean 11."""
    model = DocDPCooccurrence(epsilon=1.0, n_topics=2)
    groups, _, _ = release_groups(model)
    out = plan_budget("posts", model=model, ledger=str(ledger), search_runs=10)
    want = RandomStoppingEvent((tuple(groups),), gamma=0.1)
    assert want.expected_runs == pytest.approx(10.0)
    assert out["epsilon"] == pytest.approx(want.epsilon_at(out["delta"]), rel=1e-9)


@pytest.mark.parametrize("mean", [0.5, 1.0, 1e300, float("nan"), "ten"])
def test_a_mean_of_runs_no_search_can_have_is_refused_naming_search_runs(ledger, mean):
    with pytest.raises(ParameterError, match=r"mean number of runs must lie in \(1, 1e\+06\]") as e:
        plan_budget("posts", algorithm="docdp-cooc", epsilon=1.0, ledger=str(ledger), search_runs=mean)
    assert e.value.parameter == "search_runs"
