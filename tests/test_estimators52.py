"""scikit-learn conventions that the estimator checks of tests/test_sklearn_checks.py cannot see (their test-only
subclass defines its own ``transform``, which scikit-learn then wraps for ``set_output``; and they feed count
matrices, never texts).

- ``set_output(transform="pandas")`` must make ``transform`` return a DataFrame for every estimator: the
  document-level trainers (DocDPEM, DocDPCooccurrence, ``for_unit("document")``, LocalDocumentLDA) inherit their
  ``transform`` from a mixin that was no transformer, so scikit-learn never wrapped it: ``transform`` gave an array
  while ``fit_transform`` gave a DataFrame, and a ``Pipeline`` set to pandas output broke at the next step.
- ``fit_transform`` returns one row per input sample: the private Gibbs trainers (HDPLDA, CDPLDA, CDPLDAPlus,
  ``for_unit("word")``) returned the rows of the documents they trained on, so a list of texts holding an empty one
  (or one of stop words only) gave fewer rows than texts, and with pandas output scikit-learn failed deep inside
  pandas ("Shape of passed values is (36, 2), indices imply (38, 2)").
"""
import warnings

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer

import dptopic

TEXTS = (["apple banana cherry apple fruit", "banana cherry apple fruit salad", "fruit apple banana",
          "river mountain valley river lake", "mountain valley lake river", "valley lake mountain hiking"] * 6)
WITH_EMPTY = TEXTS[:5] + ["", "the of and"] + TEXTS[5:]          # an empty text, and one of stop words only
EMPTY_ROWS = [5, 6]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # seeded private fits, vocabularies from the data, re-use
        yield


def _frame(X):
    pd = pytest.importorskip("pandas")
    vec = CountVectorizer()
    counts = vec.fit_transform(X).toarray()
    return pd.DataFrame(counts, columns=vec.get_feature_names_out(), index=[f"d{i}" for i in range(len(X))])


DOCUMENT_LEVEL = {"DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=50.0, seed=0),
                  "DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=50.0, seed=0),
                  "for_unit(document)": lambda: dptopic.for_unit("document", 5.0, n_topics=2, seed=0)}


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
    from dptopic.local.document import DocumentRandomizer

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


WORD_LEVEL = {"HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=3, epsilon_inherent=10.0, seed=0, verbose=0),
              "CDPLDA": lambda: dptopic.CDPLDA(n_topics=2, n_iter=3, seed=0, verbose=0),
              "CDPLDAPlus": lambda: dptopic.CDPLDAPlus(n_topics=2, n_iter=3, seed=0, verbose=0),
              "for_unit(word)": lambda: dptopic.for_unit("word", 500.0, n_topics=2, n_iter=3, seed=0, verbose=0)}


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
