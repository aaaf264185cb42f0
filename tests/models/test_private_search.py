"""RandomStoppingSearch: a private hyper-parameter search recorded as one release on the dataset's ledger."""
import warnings

import pytest

from dptopic.accounting.dataset_ledger import DatasetLedger
from dptopic.errors import BudgetExceededError, DPTopicError
from dptopic.models import LDA, DocDPCooccurrence, docdp_cooc
from dptopic.models.private_search import RandomStoppingSearch


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_a_search_is_one_release_covering_its_runs(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]}, gamma=0.3, seed=4, ledger=L,
                             dataset="posts").fit(tiny.corpus)
    assert s.n_runs_ >= 1 and s.best_params_["n_topics"] in (2, 3) and len(s.scores_) == s.n_runs_
    (r,) = DatasetLedger(L).releases("posts")
    assert r["kind"] == "search" and r["events"][0]["type"] == "random_stopping"
    assert r["epsilon"] == pytest.approx(s.privacy_["epsilon"], rel=1e-6)
    assert 1.0 < s.privacy_["epsilon"] < 10.0
    assert s.best_estimator_.privacy_["dataset_ledger"]["n_releases"] == 1


def test_a_capped_search_is_refused_before_any_noise(tiny, tmp_path, monkeypatch):
    L = tmp_path / "l.sqlite"
    DatasetLedger(L).set_cap("posts", 1.5, 1e-5)
    monkeypatch.setattr(docdp_cooc, "gaussian_mechanism", lambda *a, **k: pytest.fail("noise drawn"))
    with pytest.raises(BudgetExceededError):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]}, ledger=L,
                             dataset="posts").fit(tiny.corpus)
    assert DatasetLedger(L).releases("posts") == []


def test_a_search_of_a_non_private_trainer_is_refused(tiny):
    with pytest.raises(DPTopicError, match="without reserving a plan"):
        RandomStoppingSearch(LDA(n_iter=2, verbose=0), {"n_topics": [2]}, score=lambda m: 0.0).fit(tiny.corpus)
