"""Inference reads the parameters a model was fitted with: ``set_params`` after a fit changes the next fit only
(scikit-learn's LDA keeps its fitted ``doc_topic_prior_`` the same way), so a model answers the same in process and
after ``save``/``load``. And ``client=`` is a Dask client: refused with any other backend."""
import numpy as np
import pytest

import dptopic
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=120, vocab_size=60, n_topics=3, seed=0).corpus


def _models():
    return [
        ("LDA", lambda: dptopic.LDA(3, n_iter=15, seed=0, verbose=0)),
        ("OnlineVB", lambda: dptopic.OnlineVB(3, seed=0) if hasattr(dptopic, "OnlineVB") else None),
        ("DocDPEM", lambda: dptopic.DocDPEM(3, epsilon=5.0, delta=1e-5, seed=0)),
        ("DocDPCooccurrence", lambda: dptopic.DocDPCooccurrence(3, epsilon=5.0, delta=1e-5, seed=0)),
    ]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name,make", _models(), ids=[n for n, _ in _models()])
def test_set_params_after_fit_leaves_inference_as_fitted_and_as_reloaded(corpus, tmp_path, name, make):
    m = make()
    if m is None:
        pytest.skip(f"{name} not exported")
    m.fit(corpus)
    before = m.transform(corpus, seed=3)
    perp = m.perplexity(corpus, seed=3)
    m.set_params(alpha=7.0)
    assert m.get_params()["alpha"] == 7.0          # the next fit's α
    after = m.transform(corpus, seed=3)
    np.testing.assert_array_equal(after, before)
    assert m.perplexity(corpus, seed=3) == perp
    m.save(tmp_path / "m")
    back = dptopic.load(tmp_path / "m")
    np.testing.assert_allclose(back.transform(corpus, seed=3), after, rtol=0, atol=1e-12)


@pytest.mark.filterwarnings("ignore")
def test_a_refit_uses_the_new_alpha(corpus):
    m = dptopic.LDA(3, n_iter=15, seed=0, verbose=0).fit(corpus)
    before = m.transform(corpus, seed=3)
    m.set_params(alpha=7.0).fit(corpus)
    assert not np.allclose(m.transform(corpus, seed=3), before)   # the refit and its inference take α = 7


def test_client_without_dask_backend_is_refused(corpus):
    with pytest.raises(DPTopicError, match="backend='dask'"):
        dptopic.LDA(3, n_iter=2, seed=0, client=object(), verbose=0).fit(corpus)


@pytest.mark.filterwarnings("ignore")
def test_a_refit_scores_its_eval_set_with_its_own_alpha(corpus):
    """DPSVI/OnlineVB score ``eval_set`` during the fit: a refit after ``set_params(alpha=...)`` must score with the
    α it trains with, not the previous fit's."""
    a = dptopic.OnlineVB(3, seed=0, alpha=0.1).fit(corpus)
    a.set_params(alpha=2.0).fit(corpus, eval_set=corpus)
    fresh = dptopic.OnlineVB(3, seed=0, alpha=2.0).fit(corpus, eval_set=corpus)
    assert a.perplexity_ == fresh.perplexity_
