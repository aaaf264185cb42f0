"""Document-level noisy EM (DocDPEM): sensitivity, noise, accounting, post-processing, recovery."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import dptopic
from dptopic.corpus import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models.docdp import DocDPEM
from helpers import random_count_csr


def test_noise_std_matches_calibration():
    from dptopic.accounting.gaussian import calibrate_noise_multiplier
    from dptopic.mechanisms import gaussian_mechanism
    c = lda_corpus(n_docs=60, vocab_size=50, n_topics=3, doc_length=20, seed=1).corpus
    m = DocDPEM(n_topics=3, epsilon=1.0, n_iter=2, seed=3).fit(c)
    sigma = calibrate_noise_multiplier(1.0, 1e-5, 1.0, 2)
    assert m.noise_std_ == pytest.approx(sigma)
    # the release the trainer makes (sensitivity 1): its noise has std sigma within 4 standard errors
    stat = np.zeros((3, 4000))
    noisy, event = gaussian_mechanism(stat, sigma, 1.0, np.random.default_rng(0))
    assert abs(noisy.std() - sigma) < 4 * sigma / np.sqrt(2 * noisy.size)
    assert abs(noisy.mean()) < 4 * sigma / np.sqrt(noisy.size)
    assert event.noise_multiplier == pytest.approx(sigma) and event.sampling_rate == 1.0


def test_accountant_matches_dp_accounting_gaussian():
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant
    c = lda_corpus(n_docs=30, vocab_size=30, n_topics=2, doc_length=15, seed=2).corpus
    m = DocDPEM(n_topics=2, epsilon=1.0, delta=1e-5, n_iter=4, seed=0).fit(c)
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(dp_event.GaussianDpEvent(m.noise_std_), 4)
    ref = acc.get_epsilon(1e-5)
    assert m.privacy_["epsilon"] == pytest.approx(ref, rel=2e-2)
    assert m.privacy_["epsilon"] <= 1.0 + 1e-9
    assert m.privacy_["unit"] == "document" and m.privacy_["delta"] == 1e-5
    assert "add/remove" in m.privacy_["neighbouring_relation"]
    # the analytic Gaussian at (1, 1e-5) for one release: sigma about 3.73
    assert DocDPEM(epsilon=1.0, n_iter=1).fit(c).noise_std_ == pytest.approx(3.73, abs=0.02)


def test_planted_topics_recovered_at_large_epsilon():
    s = lda_corpus(n_docs=400, vocab_size=60, n_topics=3, doc_length=60, alpha=0.1, beta=0.05, seed=4)
    m = DocDPEM(n_topics=3, epsilon=500.0, n_iter=15, seed=0).fit(s.corpus)
    phi = np.asarray(s.phi)
    # each planted topic is matched by a learned topic with small L1 distance
    dist = np.abs(phi[:, None, :] - m.components_[None, :, :]).sum(-1)
    assert dist.min(axis=1).max() < 0.5


# ---------------------------------------------------------------- speed and scale: kernel, threads, streaming


def test_threads_share_the_estep_with_the_same_sum():
    from dptopic.kernels.docdp import normalised_statistic as fast
    rng = np.random.default_rng(0)
    X = random_count_csr(rng, 301, 50)
    b = rng.dirichlet(np.ones(50), size=4)
    ptr = X.indptr.astype(np.int64)
    S1, th1 = fast(ptr, X.indices, X.data, b, 0.1, 10, n_jobs=1, want_theta=True)
    for n_jobs in (2, 3, 8):
        Sj, thj = fast(ptr, X.indices, X.data, b, 0.1, 10, n_jobs=n_jobs, want_theta=True)
        np.testing.assert_allclose(Sj, S1, rtol=0, atol=1e-10)
        np.testing.assert_allclose(thj, th1, rtol=0, atol=1e-12)   # per-document results: rounding only
    c = lda_corpus(n_docs=120, vocab_size=40, n_topics=3, doc_length=30, seed=2).corpus
    m1 = DocDPEM(n_topics=3, epsilon=5.0, seed=1).fit(c)
    m2 = DocDPEM(n_topics=3, epsilon=5.0, seed=1, n_jobs=2).fit(c)
    np.testing.assert_allclose(m2.components_, m1.components_, rtol=0, atol=1e-9)
    assert m2.privacy_["epsilon"] == m1.privacy_["epsilon"] and m2.noise_std_ == m1.noise_std_


def test_fit_streams_shards_from_disk_once_per_iteration(tmp_path, monkeypatch):
    from dptopic.backends import write_shards
    from dptopic.corpus import Corpus
    c = lda_corpus(n_docs=150, vocab_size=40, n_topics=3, doc_length=("poisson", 25), seed=7).corpus
    write_shards(c, tmp_path / "sh", 4)
    ref = DocDPEM(n_topics=3, epsilon=3.0, n_iter=3, seed=5).fit(c)
    loads = []
    real = Corpus.load.__func__

    def counting(cls, path):
        loads.append(path)
        return real(cls, path)

    monkeypatch.setattr(Corpus, "load", classmethod(counting))
    m = DocDPEM(n_topics=3, epsilon=3.0, n_iter=3, seed=5).fit(tmp_path / "sh")
    assert len(loads) == 4 * 3                          # every shard read in every iteration, nothing kept
    np.testing.assert_allclose(m.components_, ref.components_, rtol=0, atol=1e-12)   # same documents and order
    assert m.vocabulary_ == c.vocabulary and m.privacy_["epsilon"] <= 3.0 + 1e-9
    m2 = DocDPEM(n_topics=3, epsilon=3.0, n_iter=3, seed=5, n_jobs=2).fit(str(tmp_path / "sh"))
    np.testing.assert_allclose(m2.components_, ref.components_, rtol=0, atol=1e-9)


def test_fit_takes_mini_batches_in_memory_or_from_a_function():
    c = lda_corpus(n_docs=90, vocab_size=30, n_topics=2, doc_length=20, seed=8).corpus
    X = c.to_bow()
    ref = DocDPEM(n_topics=2, epsilon=4.0, seed=2).fit(X)
    parts = [X[:40], X[40:41], X[41:]]
    m = DocDPEM(n_topics=2, epsilon=4.0, seed=2).fit(parts)
    np.testing.assert_allclose(m.components_, ref.components_, rtol=0, atol=1e-12)
    calls = []

    def batches():
        calls.append(1)
        return (p for p in parts)

    m2 = DocDPEM(n_topics=2, epsilon=4.0, seed=2).fit(batches, vocabulary=c.vocabulary)
    np.testing.assert_allclose(m2.components_, ref.components_, rtol=0, atol=1e-12)
    assert len(calls) >= 3 and m2.topic_words(2)[0][0].startswith("w")
    corpora = [c.subset(np.arange(0, 50)), c.subset(np.arange(50, 90))]
    m3 = DocDPEM(n_topics=2, epsilon=4.0, seed=2).fit(corpora)
    np.testing.assert_allclose(m3.components_, ref.components_, rtol=0, atol=1e-12)


def test_streaming_bad_input_is_refused_in_one_line(tmp_path):
    X = sp.csr_matrix(np.ones((4, 5)))
    for bad, needle in ((iter([X]), "iterator"), ([X, sp.csr_matrix(np.ones((2, 6)))], "columns"),
                        (lambda: iter([]), "no mini-batches"), (tmp_path, "shard"),
                        (lambda: iter([sp.csr_matrix((3, 5))]), "empty")):
        m = DocDPEM(n_topics=2, seed=0)
        with pytest.raises(DPTopicError, match=needle) as e:
            m.fit(bad)
        assert "\n" not in str(e.value) and not hasattr(m, "components_")


def test_batches_with_no_vocabulary_word_are_refused():
    from dptopic.corpus import Corpus
    other = Corpus.from_token_ids([[0, 1, 1], [1]], ["x", "y"])
    with pytest.raises(DPTopicError, match="no word of the vocabulary"):
        DocDPEM(n_topics=2, seed=0).fit([other], vocabulary=["a", "b", "c"])


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
def test_public_start_is_used_checked_and_not_saved(tmp_path):
    import json

    from sklearn.base import clone

    from dptopic.evaluation.topic_matching import topic_recovery
    s = lda_corpus(n_docs=300, vocab_size=60, n_topics=3, doc_length=60, alpha=0.1, beta=0.05, seed=4)
    phi = np.asarray(s.phi)
    # a public start near the planted topics: one release keeps them; a random start after one release does not
    rng = np.random.default_rng(7)
    start = 0.5 * phi + 0.5 * rng.dirichlet(np.ones(60), size=3)
    warm = DocDPEM(n_topics=3, epsilon=200.0, n_iter=1, init=start, seed=0).fit(s.corpus)
    cold = DocDPEM(n_topics=3, epsilon=200.0, n_iter=1, seed=0).fit(s.corpus)
    assert topic_recovery(warm.components_, phi) > 0.95 > topic_recovery(cold.components_, phi)
    # the first iteration is the E-step under exactly the given (normalised) topics: same release, same result
    again = DocDPEM(n_topics=3, epsilon=200.0, n_iter=1, init=list(map(list, start * 5.0)), seed=0).fit(s.corpus)
    np.testing.assert_allclose(again.components_, warm.components_, atol=1e-12)
    rep = warm.privacy_
    assert rep["parameters"]["start"] == "public topics given by the user" and "public starting topics" in rep["scope"]
    assert cold.privacy_["parameters"]["start"] == "random"
    # clone keeps the array; the saved model does not carry it
    assert np.array_equal(clone(warm).init, start)
    warm.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "model.json").read_text())["params"]["init"] is None
    np.testing.assert_array_equal(dptopic.load(tmp_path / "m").components_, warm.components_)
    # bad starts: one line each
    for bad, why in ((start[:2], "shape"), (-start, "non-negative"), (np.full((3, 60), np.nan), "finite"),
                     (np.zeros((3, 60)), "positive sum"), ([["a"] * 60] * 3, "array")):
        with pytest.raises(DPTopicError, match=why):
            DocDPEM(n_topics=3, n_iter=1, init=bad, seed=0).fit(s.corpus)
    with pytest.raises(DPTopicError, match="init"):
        DocDPEM(n_topics=3, init="lda", seed=0).fit(s.corpus)


WORDS = ["recipe", "oven", "flour", "sugar", "storm", "rain", "wind", "cloud", "market", "stock", "bank", "fund"]


def _texts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS[4 * (i % 3):4 * (i % 3) + 4], 10)) for i in range(n)]


def test_docdpem_verbose_shows_a_bar_over_its_em_iterations(monkeypatch):
    import contextlib

    import dptopic.models.docdp as docdp

    calls = []

    @contextlib.contextmanager
    def spy(total, description, verbose=1, transient=False):
        class Bar:
            def advance(self, n=1, **fields):
                calls.append(("advance", verbose))
        calls.append(("open", total, verbose))
        yield Bar()

    monkeypatch.setattr(docdp, "progress_bar", spy)
    X = dptopic.CountVectorizer().fit_transform(_texts())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dptopic.DocDPEM(n_topics=2, n_iter=3, seed=0, verbose=1).fit(X)
    assert calls[0] == ("open", 3, 1) and calls.count(("advance", 1)) == 3


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("unit", ["document", "user"])
def test_fit_spends_exactly_its_release_plan(unit):
    """n_iter releases at the noise of release_plan(n_words=V), and the plan's epsilon(delta) is the card's."""
    from helpers import assert_fit_spent_its_plan

    c = lda_corpus(n_docs=40, vocab_size=30, n_topics=3, doc_length=15, seed=2).corpus
    kw = {"user_ids": [f"u{i % 10}" for i in range(c.n_docs)]} if unit == "user" else {}
    m = DocDPEM(n_topics=3, epsilon=1.0, n_iter=3, seed=0, unit=unit).fit(c, **kw)
    plan = assert_fit_spent_its_plan(m)
    assert plan.releases[0].count == 3 and m.noise_std_ == plan.releases[0].scale
