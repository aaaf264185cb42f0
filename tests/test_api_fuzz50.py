"""Odd inputs through the Python API of the estimators: one clear line, and a refused fit/partial_fit leaves a fitted
model as it was (fuzzing round 50)."""
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic import DPTopicError
from dptopic.corpus import Corpus, lda_corpus

pytestmark = [pytest.mark.filterwarnings("ignore::dptopic.SeededNoiseWarning"),
              pytest.mark.filterwarnings("ignore::dptopic.SmallCorpusWarning"),
              pytest.mark.filterwarnings("ignore::dptopic.DataVocabularyWarning"),
              pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit"),
              pytest.mark.filterwarnings("ignore:.*trained a private model in this process")]


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=30, vocab_size=12, n_topics=2, doc_length=10, seed=1).corpus


@pytest.fixture(scope="module")
def counts(corpus):
    return corpus.to_bow().toarray()


def _state(model) -> dict:
    """Every fitted attribute (name ending in ``_``), pickled, to compare before and after."""
    return {k: pickle.dumps(v) for k, v in vars(model).items() if k.endswith("_") and not k.startswith("__")}


# ------------------------------------------------------------------------------------------- count-matrix dtypes
def test_a_float16_count_matrix_is_read_like_any_other(counts):
    """scipy.sparse has no float16: it was a ValueError listing scipy's dtypes, from inside scipy."""
    assert Corpus.from_bow(counts.astype(np.float16)).n_tokens == counts.sum()
    m = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(counts)
    assert m.transform(counts.astype(np.float16)).shape == (len(counts), 2)


@pytest.mark.parametrize("dtype, value", [(np.uint8, 200), (np.int8, 100), (np.int16, 20_000)])
def test_repeated_coo_entries_of_a_small_integer_dtype_are_added_without_wrapping(dtype, value):
    """A COO matrix's repeated entries are summed: in uint8 200 + 200 was 144 (silently wrong counts), in int8
    100 + 100 was -56 ("Negative values in data")."""
    X = sp.coo_matrix((np.array([value, value], dtype), (np.array([0, 0]), np.array([1, 1]))), shape=(2, 4))
    c = Corpus.from_bow(X)
    assert c.n_tokens == 2 * value
    assert np.bincount(c.word_ids, minlength=4)[1] == 2 * value


def test_uint64_counts_too_large_for_a_corpus_are_refused_in_one_line(counts):
    """Their integer sum wrapped, so the size check passed and np.repeat failed on 'negative' repeats."""
    X = counts.astype(np.uint64) * np.uint64(2 ** 62)
    with pytest.raises(DPTopicError, match="tokens, more than"):
        dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(X)


# ----------------------------------------------------------------------------- OnlineLDA / OLPLDA: fit is atomic
@pytest.mark.parametrize("bad", ["negative counts", "no documents", "batch_size=-1", "lam=5"])
def test_a_refused_refit_of_online_lda_leaves_the_fitted_model(corpus, counts, bad):
    m = dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(corpus)
    before = _state(m)
    X = {"negative counts": counts - 1, "no documents": counts[:0]}.get(bad, corpus)
    if "=" in bad:
        name, value = bad.split("=")
        m.set_params(**{name: float(value) if name == "lam" else int(value)})
    with pytest.raises(DPTopicError):
        m.fit(X)
    assert _state(m) == before
    assert m.components_.shape == (2, 12)


def _reports(corpus, seed=0):
    from dptopic.local import Randomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3.0, seed=seed).randomize(corpus)


def test_olplda_fit_refuses_an_empty_report_set_and_keeps_the_fitted_model(corpus):
    """An empty ReportSet was streamed as no batches: fit returned an unfitted model (and dropped the fitted one)."""
    reports = _reports(corpus)
    m = dptopic.OLPLDA("none", n_topics=2, n_iter=2, batch_size=10, seed=0, verbose=0).fit(reports)
    before = _state(m)
    with pytest.raises(DPTopicError, match="no reports"):
        m.fit(reports[:0])
    assert _state(m) == before
    m.set_params(batch_size=-1)
    with pytest.raises(DPTopicError, match="batch_size"):
        m.fit(reports)
    assert _state(m) == before


# --------------------------------------------------------------- partial_fit after set_params(n_topics=...) etc.
@pytest.mark.parametrize("make", [lambda: dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0),
                                  lambda: dptopic.OnlineVB(2, seed=0, verbose=0)], ids=["OnlineLDA", "OnlineVB"])
def test_partial_fit_refuses_a_changed_n_topics_in_one_line(corpus, make):
    """OnlineLDA raised numpy's broadcast error; OnlineVB went on with K=2 while n_topics said 5 (its numba E-step
    wrote past its K-sized buffers) and saved a model that load() called corrupt."""
    m = make().partial_fit(corpus)
    before = _state(m)
    m.set_params(n_topics=5)
    with pytest.raises(DPTopicError, match="n_topics=5"):
        m.partial_fit(corpus)
    assert _state(m) == before


def test_online_lda_partial_fit_checks_parameters_set_since_the_last_batch(corpus):
    m = dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0).partial_fit(corpus)
    before = _state(m)
    for name, value in (("lam", 5.0), ("n_jobs", "x")):
        old = m.get_params()[name]
        m.set_params(**{name: value})
        with pytest.raises(DPTopicError, match=f"invalid {name}="):
            m.partial_fit(corpus)
        m.set_params(**{name: old})
        assert _state(m) == before


@pytest.mark.parametrize("make", [lambda: dptopic.OnlineVB(2, seed=0, verbose=0),
                                  lambda: dptopic.DPSVI.from_budget(2.0, 1e-5, n_topics=2, seed=0, verbose=0)],
                         ids=["OnlineVB", "DPSVI"])
def test_variational_transform_keeps_the_fitted_k_after_set_params(corpus, counts, make):
    """transform sized θ by the new n_topics (5 columns for a 2-topic model)."""
    m = make().fit(corpus)
    m.set_params(n_topics=5)
    theta = m.transform(counts)
    assert theta.shape == (len(counts), 2)
    assert np.all(np.isfinite(theta)) and np.allclose(theta.sum(axis=1), 1)


# ----------------------------------------------------------------- inference with an alpha set after the fit
@pytest.mark.parametrize("make", [lambda: dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0),
                                  lambda: dptopic.DocDPEM(n_topics=2, epsilon=2.0, seed=0, verbose=0),
                                  lambda: dptopic.OnlineVB(2, seed=0, verbose=0)], ids=["LDA", "DocDPEM", "OnlineVB"])
@pytest.mark.parametrize("alpha", [float("nan"), float("inf"), 0.0])
def test_transform_and_perplexity_refuse_an_invalid_alpha_set_after_the_fit(corpus, counts, make, alpha):
    """NaN/inf proportions came back silently (and OnlineVB raised ZeroDivisionError for alpha=0)."""
    m = make().fit(corpus)
    m.set_params(alpha=alpha)
    for call in (m.transform, m.perplexity, m.score):
        with pytest.raises(DPTopicError, match="invalid alpha="):
            call(counts)


# ------------------------------------------------------------------------------- LocalDocumentLDA: fit is atomic
def test_a_refused_refit_of_local_document_lda_leaves_the_fitted_model(corpus, counts):
    from dptopic.local.document import DocumentRandomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reports = DocumentRandomizer(corpus.vocabulary, epsilon=2.0, seed=0, simulation=True).randomize(corpus)
    m = dptopic.LocalDocumentLDA(n_topics=2).fit(reports)
    before = _state(m)
    for bad in (reports[:0], counts, None):
        with pytest.raises(DPTopicError):
            m.fit(bad)
        assert _state(m) == before
    m.set_params(n_topics=0)
    with pytest.raises(DPTopicError, match="invalid n_topics"):
        m.fit(reports)
    assert _state(m) == before


@pytest.mark.parametrize("make", ["word", "document"])
def test_randomizers_refuse_a_one_dimensional_array_and_a_number_as_a_document_in_one_line(make):
    import numpy as np

    from dptopic.local import DocumentRandomizer, Randomizer

    words = [f"w{i}" for i in range(10)]
    r = (Randomizer(words, epsilon_word=2.0, secure=True) if make == "word" else DocumentRandomizer(words, epsilon=4.0))
    X = np.ones((3, 10), dtype=int)
    assert r.randomize(X).n_reports == 3
    for bad, says in ((X[0], "X.reshape(1, -1)"), (np.array(5), "2-D"), ([1, 2, 3], "not a int")):
        with pytest.raises(DPTopicError, match=None) as e:
            r.randomize(bad)
        assert says in str(e.value) and "\n" not in str(e.value)
