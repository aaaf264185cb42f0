"""``dptopic.models.online_lda``: OnlineLDA, online variational Bayes on mini-batches (non-private)."""
import numpy as np
import pytest

from dptopic.errors import DPTopicError
from dptopic.models import OnlineLDA


def test_online_lda_takes_what_the_other_trainers_take():
    texts = ["space nasa orbit launch", "tax budget congress spending", "orbit moon nasa", "budget tax deficit"] * 10
    m = OnlineLDA(n_topics=2, n_iter=5, batch_size=10, seed=0, verbose=0).fit(texts)
    assert m.n_batches_ == 4 and "nasa" in m.vocabulary_.words
    before = m.components_.copy()
    m.partial_fit(["nasa launch orbit", "tax budget"])                       # texts, read into its vocabulary
    X = np.ones((3, len(m.vocabulary_)), dtype=np.int64)
    m.partial_fit(X)                                                         # a count matrix with its columns
    assert m.n_batches_ == 6
    after = m.components_.copy()
    with pytest.raises(DPTopicError, match="columns"):
        m.partial_fit(np.ones((3, len(m.vocabulary_) + 1), dtype=np.int64))
    assert np.array_equal(m.components_, after) and not np.array_equal(before, after)


def test_online_lda_checks_a_later_frames_columns_and_keeps_its_own():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(0).poisson(1, (30, 6)), columns=list("abcdef"))
    m = OnlineLDA(n_topics=2, n_iter=3, batch_size=10, seed=0, verbose=0).fit(X)
    with pytest.raises(DPTopicError, match="columns are not the words"):
        m.partial_fit(X[list("fedcba")])
    m.partial_fit(X.iloc[:5])
    m.partial_fit([["a", "b", "c"]])                   # token lists read into its words; its columns stay
    assert list(m.feature_names_in_) == list("abcdef")
