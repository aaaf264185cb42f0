"""RandomStoppingSearch: a private hyper-parameter search recorded as one release on the dataset's ledger."""
import json
import warnings

import numpy as np
import pytest

from dptopic.accounting.card import privacy_card
from dptopic.dataset_ledger.ledger import DatasetLedger
from dptopic.errors import BudgetExceededError, DPTopicError, ParameterError
from dptopic.models import LDA, DocDPCooccurrence, docdp_cooc
from dptopic.training import private_search
from dptopic.training.private_search import RandomStoppingSearch


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_a_search_is_one_release_covering_its_runs(tiny, tmp_path):
    L = tmp_path / "l.sqlite"
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]}, gamma=0.3, ledger=L,
                             dataset="posts").fit(tiny.corpus)
    assert s.best_params_["n_topics"] in (2, 3)
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


def _walk_keys(o):
    if isinstance(o, dict):
        for k, v in o.items():
            yield k
            yield from _walk_keys(v)
    elif isinstance(o, list):
        for v in o:
            yield from _walk_keys(v)


def test_the_search_publishes_the_best_run_alone_never_K(tiny, tmp_path, monkeypatch):
    """Papernot & Steinke's bound covers the best run with K secret: no count of runs, no other run's score."""
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 3)
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]}, ledger=False).fit(tiny.corpus)
    assert not hasattr(s, "n_runs_") and not hasattr(s, "scores_")
    assert not {"runs", "n_runs"} & set(_walk_keys(s.privacy_))
    assert not {"runs", "n_runs"} & set(_walk_keys(s.best_estimator_.privacy_))
    s.best_estimator_.save(tmp_path / "best")
    saved = json.loads((tmp_path / "best" / "model.json").read_text())
    assert not {"runs", "n_runs"} & set(_walk_keys(saved))
    assert "K secret" in s.privacy_["scope"]


def test_K_and_the_candidates_come_from_os_entropy_and_a_seed_is_refused(tiny, monkeypatch):
    drawn = []

    def runs(rng, *a, **k):
        drawn.append(rng.bit_generator.seed_seq.entropy)
        return 1
    monkeypatch.setattr(private_search, "sample_runs", runs)
    grid = {"n_topics": [2, 3]}
    with pytest.raises(ParameterError, match="seed"):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), grid, seed=4, ledger=False).fit(tiny.corpus)
    assert drawn == []      # refused before anything was drawn
    for _ in range(2):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), grid, ledger=False).fit(tiny.corpus)
    assert len(drawn) == 2 and drawn[0] != drawn[1] and drawn[0] not in (4, 0)


def test_the_runs_warnings_are_shown_once_whatever_K(tiny, monkeypatch):
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 4)

    def score(m):
        warnings.warn("a run's note", UserWarning)
        return 0.0
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, score=score,
                             ledger=False).fit(tiny.corpus)
    assert sum(str(x.message) == "a run's note" for x in w) == 1


def test_a_runs_parameter_warning_is_shown_as_itself_naming_its_parameters(tiny, monkeypatch):
    """A run's ParameterWarning (a vocabulary chosen from the data) reaches the caller as that warning, with the
    parameters it names as data (the command line writes them in its flags), not rebuilt from its text."""
    from dptopic.errors import DataVocabularyWarning

    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, ledger=False).fit(tiny.corpus)
    said = [x.message for x in w if x.category is DataVocabularyWarning]
    assert len(said) == 1 and "vocabulary" in said[0].parameters
    assert "--vocabulary" in said[0].message({"vocabulary": "--vocabulary"})


def test_the_best_models_card_states_the_search_and_that_K_is_secret(tiny, monkeypatch):
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 2)
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]}, ledger=False).fit(tiny.corpus)
    card = privacy_card(s.best_estimator_.privacy_, "DocDPCooccurrence")
    assert card["epsilon"] == pytest.approx(s.privacy_["epsilon"]) and card["epsilon"] > 1.0
    assert "search" in card["epsilon_is"] and "K secret" in card["covered"]
    assert "K itself" in card["not_covered"]
    assert card["ledger_check"]["status"] == "verified"     # the run's own figures, recomputed from its events
    assert np.isfinite(card["search"]["epsilon"])
