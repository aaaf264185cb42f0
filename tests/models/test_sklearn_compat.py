"""scikit-learn conventions on every estimator: get_params/set_params/clone, tags, score, feature names,
Pipeline and GridSearchCV."""
import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

import dptopic
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
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
    # with n_jobs > 1 the fits run in worker processes, whose record of used documents
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


WITH_EMPTY = TEXTS[:5] + ["", "the of and"] + TEXTS[5:]          # an empty text, and one of stop words only


EMPTY_ROWS = [5, 6]


def _frame(X):
    pd = pytest.importorskip("pandas")
    vec = CountVectorizer()
    counts = vec.fit_transform(X).toarray()
    return pd.DataFrame(counts, columns=vec.get_feature_names_out(), index=[f"d{i}" for i in range(len(X))])


DOCUMENT_LEVEL = {"DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0),
                  "DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=50.0, seed=0),
                  "for_unit(document)": lambda: dptopic.for_unit("document", 5.0, n_topics=2, seed=0)}


WORD_LEVEL = {"HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_inherent=10.0, seed=0, verbose=0),
              "CDPLDA": lambda: dptopic.CDPLDA(n_topics=2, n_iter=3, seed=0, verbose=0),
              "CDPLDAPlus": lambda: dptopic.CDPLDAPlus(n_topics=2, n_iter=3, seed=0, verbose=0),
              "for_unit(word)": lambda: dptopic.for_unit("word", 500.0, n_topics=2, n_iter=3, seed=0, verbose=0)}


@pytest.mark.parametrize("make", DOCUMENT_LEVEL.values(), ids=DOCUMENT_LEVEL.keys())
def test_set_output_pandas_applies_to_transform_of_the_document_level_trainers(make):
    df = _frame(TEXTS)
    m = make().set_output(transform="pandas").fit(df)
    out = m.transform(df.iloc[:4])
    pd = pytest.importorskip("pandas")
    assert isinstance(out, pd.DataFrame), type(out).__name__
    assert list(out.columns) == ["topic0", "topic1"] and list(out.index) == ["d0", "d1", "d2", "d3"]
    assert np.allclose(out.to_numpy().sum(axis=1), 1)
    # the same rows as without pandas output, and as fit_transform gives (a DataFrame already before the fix)
    assert np.allclose(out.to_numpy(), make().fit(df).transform(df.iloc[:4]))
    assert isinstance(make().set_output(transform="pandas").fit_transform(df), pd.DataFrame)


def test_set_output_pandas_applies_to_transform_of_local_document_lda():
    pd = pytest.importorskip("pandas")
    from dptopic.contributor.document_randomizer import DocumentRandomizer

    vocab = ["tax", "budget", "war", "army", "school", "teachers"]
    rs = DocumentRandomizer.for_simulation(vocab, 4.0, seed=3).randomize(
        [["tax", "budget"], ["war", "army"], ["school", "teachers"]] * 100)
    m = dptopic.LocalDocumentLDA(n_topics=2).set_output(transform="pandas").fit(rs)
    out = m.transform([["tax", "budget"], ["war", "army"]])
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["topic0", "topic1"]


def test_a_pipeline_with_pandas_output_runs_through_a_document_level_trainer():
    pd = pytest.importorskip("pandas")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    # the step after the topic model reads the topic columns by name, as pandas output promises
    # (a vectorizer has no set_output, so the pipeline's own set_output refuses: the model's step is set)
    pipe = make_pipeline(dptopic.CountVectorizer(),
                         dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0).set_output(transform="pandas"),
                         FunctionTransformer(lambda t: t[["topic0"]]))
    pipe.fit(TEXTS)
    out = pipe.transform(pd.Series(TEXTS[:3], index=["a", "b", "c"]))
    assert list(out.columns) == ["topic0"] and out.shape == (3, 1)


@pytest.mark.parametrize("make", WORD_LEVEL.values(), ids=WORD_LEVEL.keys())
def test_fit_transform_of_texts_gives_one_row_per_text(make):
    m = make()
    theta = m.fit_transform(WITH_EMPTY)
    assert theta.shape == (len(WITH_EMPTY), 2) and np.allclose(theta.sum(axis=1), 1) and np.all(theta >= 0)
    # the texts that trained: their rows are training_theta_ (covered by the report); the empty ones the prior's
    kept = [i for i in range(len(WITH_EMPTY)) if i not in EMPTY_ROWS]
    assert m.training_theta_.shape == (len(kept), 2)
    assert np.array_equal(theta[kept], m.training_theta_)
    assert np.allclose(theta[EMPTY_ROWS], 0.5)
    assert np.allclose(theta[EMPTY_ROWS], m.transform([WITH_EMPTY[i] for i in EMPTY_ROWS]))   # as transform gives
    # token lists too (gensim's and tomotopy's input)
    assert make().fit_transform([t.split() for t in WITH_EMPTY]).shape == (len(WITH_EMPTY), 2)


def test_fit_transform_with_pandas_output_keeps_the_texts_index():
    pd = pytest.importorskip("pandas")
    texts = pd.Series(WITH_EMPTY, index=[f"r{i}" for i in range(len(WITH_EMPTY))])
    out = WORD_LEVEL["HDPLDA"]().set_output(transform="pandas").fit_transform(texts)
    assert isinstance(out, pd.DataFrame) and list(out.index) == list(texts.index)


def test_fit_transform_of_a_corpus_or_a_matrix_is_unchanged():
    # a Corpus's documents are the samples as given; a count matrix keeps every row (an all-zero one included)
    m = WORD_LEVEL["HDPLDA"]()
    corpus = dptopic.Corpus.from_texts(WITH_EMPTY)
    assert np.array_equal(m.fit_transform(corpus), m.training_theta_) and m.training_theta_.shape[0] == corpus.n_docs
    X = CountVectorizer().fit_transform(WITH_EMPTY)
    assert WORD_LEVEL["HDPLDA"]().fit_transform(X).shape == (len(WITH_EMPTY), 2)
    assert WORD_LEVEL["HDPLDA"]().fit_transform(TEXTS).shape == (len(TEXTS), 2)   # nothing dropped: as before


def test_fedlda_report_says_whether_its_noise_is_reproducible_like_every_private_trainer():
    """An unseeded FedLDA's report had no noise_reproducible field, where every other private trainer says false."""
    from dptopic.corpus import lda_corpus
    from dptopic.models import FedLDA

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=20, seed=0).corpus
    m = FedLDA(n_topics=2, epsilon_per_entry=5.0, rounds=2, pad_length=16, n_clients=4).fit(c)
    assert m.privacy_["noise_reproducible"] is False
    with pytest.warns(UserWarning):
        seeded = FedLDA(n_topics=2, epsilon_per_entry=5.0, rounds=2, pad_length=16, n_clients=4, seed=1).fit(c)
    assert seeded.privacy_["noise_reproducible"] is True


@pytest.fixture(scope="module")
def X():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=3, doc_length=30, seed=1).corpus.to_bow()


@pytest.mark.parametrize("verbose", [False, True])
def test_verbose_takes_a_bool_as_scikit_learn_does(X, verbose):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=verbose).fit(X)
        dptopic.OnlineVB(n_topics=3, n_epochs=1, seed=0, verbose=verbose).fit(X)
        dptopic.DocDPCooccurrence(n_topics=3, epsilon=4.0, delta=1e-5, verbose=verbose).fit(X)
    with pytest.raises(DPTopicError, match="verbose=3"):
        dptopic.LDA(n_topics=3, verbose=3).fit(X)


def test_privacy_report_of_numpy_typed_parameters_is_plain_json(X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdp = dptopic.HDPLDA(n_topics=np.int64(3), n_iter=np.int64(3), epsilon_laplace=np.float32(2.0),
                             delta=np.float32(1e-5), seed=0).fit(X)
        fed = dptopic.FedLDA(n_topics=np.int64(3), rounds=np.int64(2), epsilon_per_entry=np.float32(5.0), pad_length=20,
                             seed=0, verbose=0).fit(X)
    for m in (hdp, fed):
        back = json.loads(json.dumps(m.privacy_))
        assert back["epsilon"] == pytest.approx(m.privacy_["epsilon"])


def test_a_typed_load_refuses_another_kind_of_model(X, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.LDA(n_topics=3, n_iter=3, seed=0, verbose=0).fit(X).save(tmp_path / "lda")
    assert type(dptopic.load(tmp_path / "lda")).__name__ == "LDA"
    assert type(dptopic.LDA.load(tmp_path / "lda")).__name__ == "LDA"
    with pytest.raises(DPTopicError, match="holds a LDA model, not a HDPLDA"):
        dptopic.HDPLDA.load(tmp_path / "lda")


def test_online_lda_reads_a_later_batch_with_column_names_as_transform_does(X):
    pd = pytest.importorskip("pandas")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.OnlineLDA(n_topics=3, n_iter=3, seed=0, verbose=0).fit(X.toarray())
    df = pd.DataFrame(X.toarray(), columns=[f"c{i}" for i in range(X.shape[1])])
    with pytest.warns(UserWarning, match="fitted without them"):
        m.partial_fit(df)
    assert m.n_batches_ == 2


def test_the_pipeline_saving_recipe_of_the_sklearn_page_runs_as_written(tmp_path, monkeypatch):
    from pathlib import Path

    from sklearn.pipeline import Pipeline

    import dptopic

    page = (Path(__file__).resolve().parents[2] / "docs" / "sklearn.md").read_text()
    block = page.split("### Saving a fitted pipeline", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    rng = np.random.default_rng(0)
    words = ["apple", "pear", "plum", "kiwi", "fig", "lime", "rock", "sand", "clay", "stone", "the", "and"]
    texts = [" ".join(rng.choice(words[:6] if i % 2 else words[6:], 15)) for i in range(60)]
    pipe = Pipeline([("vec", dptopic.CountVectorizer(min_df=2, stop_words="english")),
                     ("lda", dptopic.LDA(n_topics=2, n_iter=20, seed=0, verbose=0))]).fit(texts)
    before = pipe.transform(texts)
    monkeypatch.chdir(tmp_path)
    scope = {"pipe": pipe, "texts": texts}
    exec(compile(block, "docs/sklearn.md", "exec"), scope)
    np.testing.assert_allclose(scope["theta"], before)
    assert scope["pipe"] is not pipe and "the" not in scope["lda"].vocabulary_.words


@pytest.mark.parametrize("cls, other, ours", [("LDA", "max_iter", "n_iter"), ("LDA", "doc_topic_prior", "alpha"),
                                               ("LDA", "topic_word_prior", "beta"), ("OnlineVB", "topic_word_prior", "eta"),
                                               ("OnlineVB", "max_iter", "n_epochs"), ("OnlineVB", "learning_decay", "kappa"),
                                               ("FedLDA", "max_iter", "rounds"), ("LDA", "num_topics", "n_topics"),
                                               ("LDA", "evaluate_every", "eval_every")])
def test_another_librarys_parameter_name_is_answered_with_dptopics(cls, other, ours):
    import dptopic
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match=f"takes {ours}=, not {other}="):
        getattr(dptopic, cls)(**{other: 3})


def test_the_sklearn_page_names_every_estimator_whose_verbose_default_is_0():
    import inspect
    from pathlib import Path

    import dptopic.models as M

    page = (Path(__file__).resolve().parents[2] / "docs" / "sklearn.md").read_text()
    para = page[page.index("`verbose=1` by default"):]
    para = para[:para.index("\n- ") if "\n- " in para else para.index("\n\n")]
    quiet = [n for n in dir(M) if inspect.isclass(getattr(M, n)) and hasattr(getattr(M, n), "get_params")
             and inspect.signature(getattr(M, n)).parameters.get("verbose") is not None
             and inspect.signature(getattr(M, n)).parameters["verbose"].default == 0]
    assert quiet and all(f"`{n}`" in para for n in quiet), (quiet, para)
