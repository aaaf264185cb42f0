"""RandomStoppingSearch: a private hyper-parameter search recorded as one release on the dataset's ledger."""
import json
import math
import warnings

import numpy as np
import pytest

from dptopic.accounting.card import privacy_card
from dptopic.corpus import Corpus
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


# ------------------------------------------------------------------ the score, checked before anything is spent
def _no_run(monkeypatch):
    """Fail the test when the search draws K (its runs begin)."""
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: pytest.fail("the search's runs began"))


@pytest.mark.parametrize("score, fragment", [(lambda m: "high", "returned 'high'"),
                                             (lambda m: m.no_such_attribute, "failed on a stand-in"),
                                             (lambda m: None, "returned None")])
def test_a_score_that_fails_or_returns_no_number_is_refused_before_anything_is_spent(tiny, tmp_path, monkeypatch,
                                                                                       score, fragment):
    L = tmp_path / "l.sqlite"
    _no_run(monkeypatch)
    with pytest.raises(ParameterError, match=fragment) as e:
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]}, score=score, ledger=L,
                             dataset="posts").fit(tiny.corpus)
    assert e.value.parameter == "score"
    assert not L.exists() or DatasetLedger(L).releases("posts") == []


@pytest.mark.parametrize("score, fragment", [("npmi", "is not a function"), (5, "is not a function"),
                                             (float, "is not a function"),
                                             (lambda: 1.0, "one argument"), (lambda m, X: 1.0, "one argument")])
def test_a_score_that_is_no_function_of_the_model_is_refused_before_the_corpus_is_read(tiny, monkeypatch, score,
                                                                                        fragment):
    _no_run(monkeypatch)
    monkeypatch.setattr(private_search, "check_inputs", lambda *a, **k: pytest.fail("the corpus was read"))
    with pytest.raises(ParameterError, match=fragment):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, score=score,
                             ledger=False).fit(tiny.corpus)


def test_a_score_that_fails_after_the_search_was_recorded_says_what_stays_spent(tiny, tmp_path):
    """A score that passes the stand-in and fails on a run: nothing is released, and the line names the release the
    ledger keeps (spent: a run drew its noise)."""
    calls = []

    def score(m):
        calls.append(m)
        return 1.0 if len(calls) == 1 else "high"      # a number on the stand-in, then a string
    L = tmp_path / "l.sqlite"
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, score=score, ledger=L,
                             dataset="posts")
    with pytest.raises(DPTopicError, match="after the search was recorded") as e:
        s.fit(tiny.corpus)
    (r,) = DatasetLedger(L).releases("posts")
    text = str(e.value)
    assert f"release {r['id']} of dataset 'posts'" in text and str(L) in text and "nothing was released" in text
    assert f"epsilon {r['epsilon']:.4g}" in text
    assert s.best_estimator_ is None


def test_a_score_of_nan_ranks_last(tiny, monkeypatch):
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 3)
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, score=lambda m: math.nan,
                             ledger=False).fit(tiny.corpus)
    assert s.best_estimator_ is not None and math.isnan(s.best_score_)


# ------------------------------------------------------------------ the mean number of runs: one rule
@pytest.mark.parametrize("kw, name", [({"gamma": 1e-9}, "gamma"), ({"gamma": 1e-9, "eta": 0.0}, "gamma"),
                                      ({"eta": 500.0, "gamma": 1e-4}, "gamma"),
                                      ({"distribution": "poisson", "mu": 0.5}, "mu")])
def test_a_distribution_of_runs_whose_mean_lies_outside_the_search_range_is_refused(tiny, monkeypatch, kw, name):
    """gamma = 1e-9 is a search of 10^9 runs on average, which ran until killed: the mean is bounded as dptopic search
    and budget plan bound it, (1, 10^6]."""
    from dptopic.accounting.tuning import EXPECTED_RUNS_RANGE

    _no_run(monkeypatch)
    with pytest.raises(ParameterError, match=r"mean number of runs must lie in \(1, 1e\+06\]") as e:
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, ledger=False, **kw).fit(tiny.corpus)
    assert e.value.parameter == name and EXPECTED_RUNS_RANGE == (1.0, 1e6)


# ------------------------------------------------------------------ Ctrl-C
def test_a_ctrl_c_during_the_runs_says_the_release_stays_spent_and_releases_nothing(tiny, tmp_path, monkeypatch):
    def interrupted(model):
        raise KeyboardInterrupt
    monkeypatch.setattr(private_search, "supported_topics_score", interrupted)
    L = tmp_path / "l.sqlite"
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, ledger=L, dataset="posts")
    with pytest.raises(private_search.SearchInterrupted) as e:
        s.fit(tiny.corpus)
    (r,) = DatasetLedger(L).releases("posts")
    text = str(e.value)
    assert text.startswith("interrupted: ") and "released nothing" in text and "stays spent" in text
    assert f"release {r['id']} of dataset 'posts'" in text and "\n" not in text
    assert s.best_estimator_ is None


def test_a_ctrl_c_before_the_search_is_recorded_says_nothing_was_spent(tiny, tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(RandomStoppingSearch, "_plans", interrupted)
    L = tmp_path / "l.sqlite"
    with pytest.raises(private_search.SearchInterrupted, match="nothing was spent"):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, ledger=L,
                             dataset="posts").fit(tiny.corpus)
    assert DatasetLedger(L).releases("posts") == []


# ------------------------------------------------------------------ the unit and the vocabulary, as train takes them
def _people(tiny):
    return Corpus(tiny.corpus.doc_ptr, tiny.corpus.word_ids, tiny.corpus.vocabulary,
                  user_ids=[f"p{i % 5}" for i in range(tiny.corpus.n_docs)])


@pytest.mark.parametrize("given", ["corpus", "user_ids"])
def test_a_user_level_search_is_charged_per_person(tiny, tmp_path, monkeypatch, given):
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 2)
    L = tmp_path / "l.sqlite"
    people = _people(tiny)
    X, kw = (people, {}) if given == "corpus" else (tiny.corpus, {"user_ids": people.user_ids})
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0, unit="user"), {"n_topics": [2, 3]}, ledger=L,
                             dataset="posts").fit(X, **kw)
    (r,) = DatasetLedger(L).releases("posts")
    assert r["unit"] == "user" and s.privacy_["unit"] == "user"
    total = DatasetLedger(L).person_total("p0")
    assert total["epsilon"] == pytest.approx(s.privacy_["epsilon"], rel=1e-6)
    assert total["releases"] == [{"release": r["id"], "group": 1}]      # 4 documents, charged once: per person


def test_a_user_level_search_of_a_corpus_without_people_is_refused_before_anything(tiny, tmp_path, monkeypatch):
    _no_run(monkeypatch)
    L = tmp_path / "l.sqlite"
    with pytest.raises(DPTopicError, match="needs each document's person"):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0, unit="user"), {"n_topics": [2]}, ledger=L,
                             dataset="posts").fit(tiny.corpus)
    assert not L.exists()


def test_a_public_vocabulary_is_every_runs_and_the_best_model_records_it(tiny, monkeypatch):
    from dptopic.errors import DataVocabularyWarning

    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 2)
    words = list(tiny.corpus.vocabulary.words)[:20]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2, 3]},
                                 ledger=False).fit(tiny.corpus, vocabulary=("words.txt", words))
    assert not [x for x in w if x.category is DataVocabularyWarning]
    best = s.best_estimator_
    assert list(best.vocabulary_.words) == words
    assert best.privacy_["vocabulary_list"]["name"] == "words.txt"
    assert privacy_card(best.privacy_, "DocDPCooccurrence")["guarantee"] == "full"


def _texts(n=300):
    """``n`` texts over 14 words in two planted topics (enough documents for DP set union to keep words)."""
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(0)
    return [" ".join(rng.choice(words[:7] if i % 2 else words[7:], 12)) for i in range(n)]


def test_a_private_vocabulary_is_one_release_with_the_search(tmp_path, monkeypatch):
    monkeypatch.setattr(private_search, "sample_runs", lambda *a, **k: 2)
    L = tmp_path / "l.sqlite"
    s = RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, ledger=L, dataset="posts",
                             private_vocabulary=(4.0, 1e-6)).fit(_texts())
    (r,) = DatasetLedger(L).releases("posts")
    assert r["kind"] == "search" and [e["type"] for e in r["events"]] == ["approximate_dp", "random_stopping"]
    card = privacy_card(s.best_estimator_.privacy_, "DocDPCooccurrence")
    assert card["epsilon"] == pytest.approx(r["epsilon"], rel=1e-6) and card["delta"] == pytest.approx(1e-5 + 1e-6)
    assert card["vocabulary_source"] == "private" and card["guarantee"] == "full"
    assert card["epsilon"] > 4.0 and "words chosen by DP set union" in card["covered"]


def test_a_private_vocabulary_at_the_user_unit_is_refused_before_anything(tiny, tmp_path, monkeypatch):
    _no_run(monkeypatch)
    L = tmp_path / "l.sqlite"
    with pytest.raises(DPTopicError, match="per document, not per person"):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0, unit="user"), {"n_topics": [2]}, ledger=L,
                             dataset="posts", private_vocabulary=(4.0, 1e-6)).fit(_people(tiny))
    assert not L.exists()


def test_a_private_vocabulary_refused_by_the_cap_spends_nothing(tmp_path, monkeypatch):
    """The cap is checked for the whole search (the words' selection and the runs' plans) before the set union draws."""
    from dptopic.training import fdptm

    L = tmp_path / "l.sqlite"
    DatasetLedger(L).set_cap("posts", 4.5, 1e-5)
    monkeypatch.setattr(fdptm, "dp_set_union", lambda *a, **k: pytest.fail("the set union drew"))
    with pytest.raises(BudgetExceededError):
        RandomStoppingSearch(DocDPCooccurrence(epsilon=1.0), {"n_topics": [2]}, ledger=L, dataset="posts",
                             private_vocabulary=(4.0, 1e-6)).fit(_texts())
    assert DatasetLedger(L).releases("posts") == []
