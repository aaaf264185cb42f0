"""A vocabulary is "supplied" (public, outside what the guarantee must cover) only when the user gave it: words a
vectorizer learned from the private documents, or a DataFrame's column names, are chosen from the data, and the
privacy card says partial."""
import warnings

import numpy as np
import pytest
from sklearn.pipeline import Pipeline

import dptopic
from dptopic.accounting.card import privacy_card
from helpers import VOCABULARY_TRAINERS, quiet_fit, small_lda_texts

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def texts():
    return small_lda_texts()


@pytest.mark.parametrize("name", sorted(VOCABULARY_TRAINERS))
def test_words_a_vectorizer_learned_are_data_and_given_words_are_supplied(texts, name):
    make = VOCABULARY_TRAINERS[name]
    learned = Pipeline([("vec", dptopic.CountVectorizer()), ("m", make())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        learned.fit(texts)
    rep = learned[-1].privacy_
    assert rep["vocabulary_source"] == "data"
    assert privacy_card(rep, name)["guarantee"] == "partial"
    public = sorted(set(" ".join(texts).split()))
    given = Pipeline([("vec", dptopic.CountVectorizer(vocabulary=public)), ("m", make())])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        given.fit(texts)
    assert given[-1].privacy_["vocabulary_source"] == "supplied"
    assert privacy_card(given[-1].privacy_, name)["guarantee"] == "full"


@pytest.mark.parametrize("name", sorted(VOCABULARY_TRAINERS))
def test_a_dataframes_columns_are_data_unless_passed_as_the_vocabulary(texts, name):
    vec = dptopic.CountVectorizer()
    X = vec.fit_transform(texts)
    df = pd.DataFrame(X.toarray(), columns=vec.get_feature_names_out())
    assert quiet_fit(VOCABULARY_TRAINERS[name](), df).privacy_["vocabulary_source"] == "data"
    m = quiet_fit(VOCABULARY_TRAINERS[name](), df, vocabulary=list(df.columns))
    assert m.privacy_["vocabulary_source"] == "supplied" and np.array_equal(m.vocabulary_.words, list(df.columns))


@pytest.mark.parametrize("name", sorted(VOCABULARY_TRAINERS))
def test_rows_of_a_named_count_matrix_keep_its_words_and_their_provenance(texts, name):
    # X[:n] and the folds of GridSearchCV came back without their words: a public vocabulary read as "data"
    public = sorted(set(" ".join(texts).split()))
    X = dptopic.CountVectorizer(vocabulary=public).fit_transform(texts)
    for rows in (X[:80], X[np.arange(0, 120, 2)], X[np.arange(120) % 3 > 0]):
        assert list(rows.feature_names) == public and rows.public_vocabulary is True
        m = quiet_fit(VOCABULARY_TRAINERS[name](), rows)
        assert m.privacy_["vocabulary_source"] == "supplied" and list(m.vocabulary_.words) == public
    assert X.copy().public_vocabulary is True
    # a selection of columns keeps the words of the columns it holds, but no longer counts as supplied (the columns
    # may have been chosen from the documents)
    assert list(X[:, :5].feature_names) == public[:5] and X[:, :5].public_vocabulary is False
    n = X.shape[1]
    for cols in (X[:, ::-1], X[:, list(range(n))[::-1]]):
        assert list(cols.feature_names) == public[::-1]
    for cols in (X[:, [0] * n], X[np.ix_([0, 1], list(range(n))[::-1])]):
        assert getattr(cols, "feature_names", None) is None        # a repeated column, a 2-D key: names dropped
    assert list(X[:, :].feature_names) == public and list(X[3].feature_names) == public
    assert list(X[np.array([0, 2]), ...].feature_names) == public      # scikit-learn's _safe_indexing key
