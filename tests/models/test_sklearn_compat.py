"""scikit-learn conventions on every estimator: get_params/set_params/clone, tags, score, feature names,
Pipeline and GridSearchCV."""
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

import dptopic
from dptopic.models import TopicModel

TEXTS = (["apple banana cherry apple fruit", "banana cherry apple fruit salad", "fruit apple banana",
          "river mountain valley river lake", "mountain valley lake river", "valley lake mountain hiking"] * 6)


def _X():
    return CountVectorizer().fit_transform(TEXTS)


ESTIMATORS = [lambda: dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0),
              lambda: dptopic.OnlineVB(n_topics=2, n_epochs=3, seed=0, verbose=0)]


@pytest.mark.parametrize("make", ESTIMATORS)
def test_clone_then_fit_gives_an_equal_model(make):
    m = make()
    assert isinstance(m, TopicModel)
    assert m.get_params(deep=True) == m.get_params(deep=False)
    a = m.fit(_X())
    b = clone(m).fit(_X())
    assert np.array_equal(a.components_, b.components_)
    assert clone(m).get_params() == m.get_params()


@pytest.mark.parametrize("make", ESTIMATORS)
def test_the_same_calls_everywhere(make):
    m = make().fit(_X())
    theta = m.transform(_X())
    assert theta.shape == (len(TEXTS), 2) and np.allclose(theta.sum(axis=1), 1)
    assert list(m.get_feature_names_out()) == ["topic0", "topic1"]
    assert m.n_features_in_ == _X().shape[1]
    assert np.isfinite(m.score(_X())) and m.score(_X()) < 0
    for mode in ("paper", "completion"):
        assert m.perplexity(_X(), mode=mode) > 1
    tags = m.__sklearn_tags__()
    assert tags.input_tags.sparse and tags.transformer_tags is not None and not tags.non_deterministic


def test_private_estimators_are_tagged_non_deterministic():
    assert dptopic.DPSVI(n_topics=2).__sklearn_tags__().non_deterministic
    assert dptopic.HDPLDA(n_topics=2).__sklearn_tags__().non_deterministic


def test_score_prefers_the_better_model():
    X = _X()
    good = dptopic.LDA(n_topics=2, n_iter=100, seed=0, verbose=0).fit(X)
    worse = dptopic.LDA(n_topics=2, n_iter=100, alpha=50.0, beta=50.0, seed=0, verbose=0).fit(X)
    assert good.score(X) > worse.score(X)


def test_pipeline_with_countvectorizer_end_to_end():
    pipe = Pipeline([("vec", CountVectorizer()), ("lda", dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0))])
    theta = pipe.fit_transform(TEXTS)
    assert theta.shape == (len(TEXTS), 2)
    assert np.allclose(pipe.transform(TEXTS[:3]), pipe.named_steps["lda"].transform(pipe.named_steps["vec"].transform(TEXTS[:3])))
    assert list(pipe.get_feature_names_out()) == ["topic0", "topic1"]


@pytest.mark.parametrize("make", ESTIMATORS + [lambda: dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0),
                                  lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=50.0, seed=0)])
def test_pipeline_keeps_the_vectorizers_words(make):
    pipe = Pipeline([("vec", dptopic.CountVectorizer(min_df=2)), ("lda", make())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theta = pipe.fit_transform(TEXTS)
    words = list(pipe.named_steps["vec"].get_feature_names_out())
    model = pipe.named_steps["lda"]
    assert list(model.vocabulary_) == words == list(model.feature_names_in_)
    assert {w for t in model.topic_words(3) for w in t} <= set(words)
    assert theta.shape == (len(TEXTS), 2) and pipe.transform(TEXTS[:2]).shape == (2, 2)
    # the same counts as scikit-learn's own vectorizer
    assert (CountVectorizer(min_df=2).fit_transform(TEXTS) != pipe.named_steps["vec"].transform(TEXTS)).nnz == 0
    # with scikit-learn's own vectorizer the model gets the matrix only, and names its words by column
    plain = Pipeline([("vec", CountVectorizer(min_df=2)), ("lda", make())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain.fit(TEXTS)
    assert list(plain.named_steps["lda"].vocabulary_)[0].startswith("w")


def test_dataframe_columns_name_the_words():
    pd = pytest.importorskip("pandas")
    vec = CountVectorizer()
    df = pd.DataFrame(vec.fit_transform(TEXTS).toarray(), columns=vec.get_feature_names_out())
    m = dptopic.LDA(n_topics=2, n_iter=30, seed=0, verbose=0).fit(df)
    assert list(m.feature_names_in_) == list(vec.get_feature_names_out())
    assert set(w for t in m.topic_words(3) for w in t) <= set(vec.get_feature_names_out())


def test_gridsearch_on_a_non_private_model():
    gs = GridSearchCV(dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0), {"n_topics": [2, 3]}, cv=2)
    gs.fit(_X())
    assert gs.best_params_["n_topics"] in (2, 3) and np.isfinite(gs.best_score_)


def test_gridsearch_on_a_private_model_warns_that_budgets_add():
    from dptopic.models import base

    base._PRIVATE_DOCS.clear()
    X = _X()
    gs = GridSearchCV(dptopic.DPSVI(n_topics=2, noise_multiplier=2.0, sampling_rate=0.5, verbose=0),
                      {"n_topics": [2, 3]}, cv=2)
    with pytest.warns(UserWarning, match="epsilons add up"):
        gs.fit(X)
    assert "epsilons add up" in gs.best_estimator_.privacy_["fits"]


def test_a_parallel_search_on_a_private_model_warns_in_the_calling_process():
    # (walk-through, 2026-11-24) with n_jobs > 1 the fits run in worker processes, whose record of used documents
    # starts empty, so the re-use warning never fired; the clone, made in the calling process, now warns once
    X = _X()
    gs = GridSearchCV(dptopic.DocDPCooccurrence(n_topics=2, epsilon=1, delta=1e-5, verbose=0),
                      {"n_topics": [2, 3]}, cv=2, n_jobs=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gs.fit(X)
    assert sum("was cloned" in str(w.message) for w in caught) == 1
    with warnings.catch_warnings(record=True) as caught:       # a non-private estimator's clone says nothing
        warnings.simplefilter("always")
        clone(dptopic.LDA(n_topics=2, verbose=0))
    assert not caught


def test_clones_of_a_private_trainer_seeded_with_a_generator_draw_their_own_noise():
    # scikit-learn's clone deep-copies a Generator, so every clone drew the same noise: two releases on overlapping
    # documents with equal noise show the difference of their data exactly. A private trainer's clones now get
    # streams spawned from it (still reproducible from the one Generator); a non-private one keeps the copy
    X = _X()
    m = dptopic.DocDPCooccurrence(n_topics=2, epsilon=1, delta=1e-5, seed=np.random.default_rng(3), verbose=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = clone(m), clone(m)
        assert a.seed is not b.seed and not np.array_equal(a.fit(X).components_, b.fit(X).components_)
        c = dptopic.LDA(n_topics=2, n_iter=10, seed=np.random.default_rng(3), verbose=0)
        assert np.array_equal(clone(c).fit(X).components_, clone(c).fit(X).components_)


def test_a_fitted_model_is_never_pickled_an_unfitted_one_is():
    import copy
    import pickle

    m = dptopic.HDPLDA(n_topics=2, n_iter=2, verbose=0)
    assert pickle.loads(pickle.dumps(m)).get_params() == m.get_params()  # joblib's parallel search ships these
    m.fit(_X())
    for dump in (pickle.dumps, copy.deepcopy):
        with pytest.raises(dptopic.DPTopicError, match="never pickled.*model.save"):
            dump(m)


def test_a_dataframe_at_transform_must_have_the_fitted_words_in_order():
    pd = pytest.importorskip("pandas")
    vec = dptopic.CountVectorizer()
    X = vec.fit_transform(TEXTS)
    df = pd.DataFrame(X.toarray(), columns=vec.get_feature_names_out())
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(df)
    assert m.transform(df.iloc[:3]).shape == (3, 2)
    for bad, what in ((df.iloc[:3, ::-1], "another order"), (df.iloc[:3].rename(columns={df.columns[0]: "zzz"}), "'zzz'"),
                      (df.iloc[:3, :4], "nothing")):
        with pytest.raises(dptopic.DPTopicError, match=f"not the words LDA was fitted on.*{what}"):
            m.transform(bad)
    with pytest.raises(dptopic.DPTopicError, match=r"holds text, not counts.*df\['text'\]"):
        dptopic.LDA(n_topics=2, n_iter=5, verbose=0).fit(pd.DataFrame({"text": TEXTS}))


def test_n_jobs_follows_scikit_learns_convention():
    import os

    from dptopic._validation import resolve_n_jobs

    assert resolve_n_jobs(None) == 1 and resolve_n_jobs(3) == 3
    assert resolve_n_jobs(-1) == (os.cpu_count() or 1) and resolve_n_jobs(-1024) == 1
    for n_jobs in (None, -1):
        m = dptopic.LDA(n_topics=2, n_iter=3, seed=0, verbose=0, n_jobs=n_jobs).fit(_X())
        assert m.get_params()["n_jobs"] == n_jobs and m._backend_.n_jobs == resolve_n_jobs(n_jobs)  # threads used
    with pytest.raises(dptopic.DPTopicError, match="invalid n_jobs=0"):
        dptopic.LDA(n_topics=2, n_iter=3, verbose=0, n_jobs=0).fit(_X())


@pytest.mark.parametrize("make", [lambda **kw: dptopic.LDA(n_iter=5, verbose=0, **kw),
                                  lambda **kw: dptopic.DocDPCooccurrence(epsilon=2.0, verbose=0, **kw),
                                  lambda **kw: dptopic.DPSVI.from_budget(2.0, 1e-5, verbose=0, **kw)])
def test_n_components_is_scikit_learns_name_for_n_topics(make):
    import inspect

    from sklearn.base import clone

    m = make(n_components=3)
    assert m.n_topics == 3 and m.n_components == 3 and "n_components" not in m.get_params()
    assert clone(m).n_topics == 3
    m.set_params(n_components=4)
    assert m.get_params()["n_topics"] == 4
    m.n_components = 5
    assert m.n_topics == 5
    assert "n_topics" in inspect.signature(type(m)).parameters          # what scikit-learn's checks read
    with pytest.raises(dptopic.DPTopicError, match="not both"):
        make(n_components=3, n_topics=3)
    with pytest.raises(dptopic.DPTopicError, match="not both"):
        m.set_params(n_components=3, n_topics=3)


def test_a_model_used_before_fit_raises_scikit_learns_not_fitted_error():
    from sklearn.exceptions import NotFittedError

    from dptopic.errors import DPTopicError

    for m in (dptopic.LDA(n_topics=2), dptopic.DocDPCooccurrence(n_topics=2)):
        with pytest.raises(NotFittedError, match="not fitted yet") as e:
            m.transform(_X())
        assert isinstance(e.value, DPTopicError)           # still one line on the command line


def test_report_trained_estimators_do_not_claim_matrix_input():
    # LPLDA, OLPLDA and LocalDocumentLDA fit randomized reports, never a count matrix: their tags must not say
    # that fit takes a (sparse) 2-D array, as the matrix-trained estimators' do
    for m in (dptopic.LPLDA(n_topics=2), dptopic.OLPLDA(n_topics=2), dptopic.LocalDocumentLDA(n_topics=2)):
        tags = m.__sklearn_tags__()
        assert not tags.input_tags.sparse and not tags.input_tags.two_d_array, type(m).__name__
    assert not dptopic.LocalDocumentLDA(n_topics=2).__sklearn_tags__().non_deterministic
    assert dptopic.LDA(n_topics=2).__sklearn_tags__().input_tags.sparse
