"""scikit-learn habits the estimators now take: verbose as a bool, reports from NumPy-typed parameters that
json.dumps takes, a typed load that refuses another kind of model, and OnlineLDA reading a later batch's
columns as every other estimator does."""
import json
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError


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
