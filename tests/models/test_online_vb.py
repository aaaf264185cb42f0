"""OnlineVB follows Hoffman, Blei & Bach (2010) exactly as scikit-learn's online LDA does.

scikit-learn's ``LatentDirichletAllocation(learning_method="online")`` implements the same algorithm
(step ρ_t = (τ0 + t)^(−κ) with its counter starting at 1, E-step ≤ 100 iterations until the mean absolute
change of γ is below 1e-3, γ and λ drawn from Gamma(100, 1/100), statistics scaled by D / |batch|). These
tests replay its random draws through our kernel and update, so any drift in the schedule, the E-step or
the scaling fails them.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from scipy.special import psi

import dptopic
from conftest import seeded_randomizer as _seeded
from dptopic import DPTopicError, OnlineVB
from dptopic.accounting.local import local_privacy_report
from dptopic.corpus import lda_corpus
from dptopic.kernels.vb import dirichlet_expectation, gather_rows, vb_estep
from dptopic.models import OLPLDA, OnlineLDA, load
from dptopic.models._variational import ESTEP_MAX_ITER, ESTEP_TOL
from helpers import fitted_state, quiet_small_fits

sklearn_lda = pytest.importorskip("sklearn.decomposition")

K = 5


@pytest.fixture(scope="module")
def bow():
    s = lda_corpus(n_docs=90, vocab_size=60, n_topics=K, doc_length=40, alpha=0.1, beta=0.05, seed=11)
    X = s.corpus.to_bow()
    return X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64), X


def test_step_size_schedule():
    """ρ_t = (τ0 + t + 1)^(−κ) for t = 0, 1, ...: the first step is (τ0 + 1)^(−κ), like scikit-learn's
    counter that starts at 1 (Hoffman et al. 2010, eq. 9: ρ_t = (τ0 + t)^(−κ), t ≥ 1)."""
    m = OnlineVB(K, tau0=10.0, kappa=0.7)
    assert m._rho(0) == pytest.approx(11.0 ** -0.7, rel=1e-15)
    assert [m._rho(t) for t in range(4)] == pytest.approx([(11.0 + t) ** -0.7 for t in range(4)], rel=1e-15)
    assert OnlineVB(K, tau0=0.0, kappa=1.0)._rho(0) == 1.0    # τ0 = 0, κ = 1: the first step replaces λ


def test_estep_stops_at_the_mean_change_tolerance(bow):
    """The E-step stops at the first iteration whose mean |Δγ| is below the tolerance (or after max_iter)."""
    ptr, ids, cts, _ = bow
    rng = np.random.default_rng(0)
    lam = rng.gamma(1.0, 1.0, size=(K, 60)) + 0.05
    eb = np.ascontiguousarray(np.exp(dirichlet_expectation(lam)).T)
    one = gather_rows(ptr, ids, cts, [0])
    g0 = rng.gamma(100.0, 0.01, size=(1, K))
    # replay the fixed-point iteration in NumPy and record the mean change at every step
    w, n = one[1], one[2]
    g, changes = g0[0].copy(), []
    for _ in range(ESTEP_MAX_ITER):
        et = np.exp(psi(g) - psi(g.sum()))
        phi = et[:, None] * eb[w].T
        new = 0.1 + (phi / phi.sum(axis=0)) @ n
        changes.append(np.mean(np.abs(new - g)))
        g = new
    for tol in (ESTEP_TOL, 1e-6):
        expected = next(i for i, c in enumerate(changes) if c < tol) + 1
        gamma = g0.copy()
        it = vb_estep(*one, eb, 0.1, gamma, ESTEP_MAX_ITER, tol, np.inf, np.zeros((60, K)), np.zeros(1))
        assert it == expected
    assert vb_estep(*one, eb, 0.1, g0.copy(), 2, 0.0, np.inf, np.zeros((60, K)), np.zeros(1)) == 2   # max_iter caps


def _sklearn(seed, batch, total, **kw):
    return sklearn_lda.LatentDirichletAllocation(
        n_components=K, learning_method="online", learning_offset=10.0, learning_decay=0.7, batch_size=batch,
        total_samples=total, doc_topic_prior=1 / K, topic_word_prior=1 / K, max_doc_update_iter=ESTEP_MAX_ITER,
        mean_change_tol=ESTEP_TOL, random_state=seed, n_jobs=1, **kw)


def _replay(ptr, ids, cts, V, seed, batch, total, n_batches):
    """Our E-step kernel and SVI update, fed scikit-learn's own random draws (RandomState(seed):
    λ, then γ of each batch)."""
    rs = np.random.RandomState(seed)
    lam = rs.gamma(100.0, 0.01, size=(K, V))
    m = OnlineVB(K, tau0=10.0, kappa=0.7)
    n_docs = len(ptr) - 1
    for t in range(n_batches):
        rows = np.arange(t * batch, min((t + 1) * batch, n_docs))
        sub = gather_rows(ptr, ids, cts, rows)
        eb = np.ascontiguousarray(np.exp(dirichlet_expectation(lam)).T)
        gamma = rs.gamma(100.0, 0.01, size=(len(rows), K))
        ss = np.zeros_like(eb)
        vb_estep(*sub, eb, m.alpha_, gamma, ESTEP_MAX_ITER, ESTEP_TOL, np.inf, ss, np.zeros(len(rows)))
        lam = m._svi_update(lam, (ss * eb).T, total / len(rows), t)
    return lam


def test_partial_fit_steps_equal_scikit_learn(bow):
    """Three mini-batches of 30 with corpus size 900: identical λ to scikit-learn's partial_fit."""
    ptr, ids, cts, X = bow
    sk = _sklearn(3, 30, 900).partial_fit(X)
    ours = _replay(ptr, ids, cts, X.shape[1], 3, 30, 900, 3)
    np.testing.assert_allclose(ours, sk.components_, rtol=1e-5)


def test_fit_epoch_equals_scikit_learn_including_short_last_batch(bow):
    """One epoch of fit (batches of 40: 40, 40, 10): the short last batch is scaled by D / 10, the corpus
    size is the number of training documents."""
    ptr, ids, cts, X = bow
    sk = _sklearn(5, 40, 1e6, max_iter=1).fit(X)   # fit ignores total_samples
    ours = _replay(ptr, ids, cts, X.shape[1], 5, 40, X.shape[0], 3)
    np.testing.assert_allclose(ours, sk.components_, rtol=1e-5)


def test_fit_without_shuffle_streams_the_given_order(bow):
    """shuffle=False: one epoch of fit is exactly partial_fit on consecutive batches (same seed, corpus
    size D), i.e. the documents are streamed in the order given, as scikit-learn does."""
    _, _, _, X = bow
    D = X.shape[0]
    a = OnlineVB(K, batch_size=40, n_epochs=1, shuffle=False, seed=4, verbose=0).fit(X)
    b = OnlineVB(K, total_docs=D, seed=4, verbose=0)
    for s in range(0, D, 40):
        b.partial_fit(X[s:s + 40])
    np.testing.assert_allclose(a.lambda_, b.lambda_, rtol=1e-12)
    c = OnlineVB(K, batch_size=40, n_epochs=1, shuffle=True, seed=4, verbose=0).fit(X)
    assert not np.allclose(c.lambda_, a.lambda_, rtol=1e-3)


def _reports(corpus, seed=0):
    from dptopic.contributor.randomizer import Randomizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3.0, seed=seed).randomize(corpus)


# ----------------------------------------------------------------------------- OnlineLDA / OLPLDA: fit is atomic
@quiet_small_fits
@pytest.mark.parametrize("bad", ["negative counts", "no documents", "batch_size=-1", "lam=5"])
def test_a_refused_refit_of_online_lda_leaves_the_fitted_model(corpus30, counts30, bad):
    m = dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(corpus30)
    before = fitted_state(m)
    X = {"negative counts": counts30 - 1, "no documents": counts30[:0]}.get(bad, corpus30)
    if "=" in bad:
        name, value = bad.split("=")
        m.set_params(**{name: float(value) if name == "lam" else int(value)})
    with pytest.raises(DPTopicError):
        m.fit(X)
    assert fitted_state(m) == before
    assert m.components_.shape == (2, 12)


@quiet_small_fits
def test_olplda_fit_refuses_an_empty_report_set_and_keeps_the_fitted_model(corpus30):
    """An empty ReportSet was streamed as no batches: fit returned an unfitted model (and dropped the fitted one)."""
    reports = _reports(corpus30)
    m = dptopic.OLPLDA("none", n_topics=2, n_iter=2, batch_size=10, seed=0, verbose=0).fit(reports)
    before = fitted_state(m)
    with pytest.raises(DPTopicError, match="no reports"):
        m.fit(reports[:0])
    assert fitted_state(m) == before
    m.set_params(batch_size=-1)
    with pytest.raises(DPTopicError, match="batch_size"):
        m.fit(reports)
    assert fitted_state(m) == before


# --------------------------------------------------------------- partial_fit after set_params(n_topics=...) etc.
@quiet_small_fits
@pytest.mark.parametrize("make", [lambda: dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0),
                                  lambda: dptopic.OnlineVB(2, seed=0, verbose=0)], ids=["OnlineLDA", "OnlineVB"])
def test_partial_fit_refuses_a_changed_n_topics_in_one_line(corpus30, make):
    """OnlineLDA raised numpy's broadcast error; OnlineVB went on with K=2 while n_topics said 5 (its numba E-step
    wrote past its K-sized buffers) and saved a model that load() called corrupt."""
    m = make().partial_fit(corpus30)
    before = fitted_state(m)
    m.set_params(n_topics=5)
    with pytest.raises(DPTopicError, match="n_topics=5"):
        m.partial_fit(corpus30)
    assert fitted_state(m) == before


@quiet_small_fits
def test_online_lda_partial_fit_checks_parameters_set_since_the_last_batch(corpus30):
    m = dptopic.OnlineLDA(n_topics=2, n_iter=2, seed=0, verbose=0).partial_fit(corpus30)
    before = fitted_state(m)
    for name, value in (("lam", 5.0), ("n_jobs", "x")):
        old = m.get_params()[name]
        m.set_params(**{name: value})
        with pytest.raises(DPTopicError, match=f"invalid {name}="):
            m.partial_fit(corpus30)
        m.set_params(**{name: old})
        assert fitted_state(m) == before


@pytest.mark.parametrize("cls", [OnlineLDA, OLPLDA], ids=lambda c: c.__name__)
def test_online_models_say_what_save_writes_and_how_to_resume(cls):
    doc = inspect.getdoc(cls.save)
    assert doc and "dptopic.load" in doc and "partial_fit" in doc and "prior_corpus" in doc


# ------------------------------------------------------------------ 1. OLP-LDA counts its batches
@pytest.fixture(scope="module")
def stream():
    c = lda_corpus(n_docs=400, vocab_size=50, n_topics=3, doc_length=20, alpha=0.1, beta=0.05, seed=7).corpus
    prior, docs = c.subset(np.arange(100)), c.subset(np.arange(100, 400))
    return prior, _seeded(docs.vocabulary, epsilon_word=2.0, seed=1).randomize(docs)


@pytest.mark.parametrize("n_calls", [2, 3])
def test_olplda_report_names_its_batches_and_composes_over_them(stream, n_calls, tmp_path):
    prior, rs = stream
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = OLPLDA(prior, n_topics=3, n_iter=2, prior_iter=5, seed=2, verbose=0)
        sizes = [100, 60, 80][:n_calls]
        start = 0
        for k in sizes:
            m.partial_fit(rs[start:start + k])
            start += k
    s = m.privacy_["stream"]
    assert s["n_batches"] == n_calls and s["n_reports"] == sum(sizes)
    assert f"{n_calls} mini-batch" in s["composition"]
    # a contributor with one report in each batch: n_calls randomized-response events, composed by the ledger
    ledger = local_privacy_report(m.f_, 50, m.delta, reports_per_contributor=n_calls)
    assert s["epsilon_doc_contributor_in_every_batch"] >= ledger["epsilon_basic"] * (1 - 1e-12)
    assert s["epsilon_doc_contributor_in_every_batch"] >= ledger["epsilon"]
    assert s["epsilon_doc_contributor_in_every_batch"] == pytest.approx(n_calls * m.privacy_["epsilon_doc"])
    assert s["epsilon_word_contributor_in_every_batch"] == pytest.approx(n_calls * 2.0)
    # the headline figure is for one report per contributor, as it says; never above the every-batch figure
    assert m.privacy_["reports_per_contributor"] == 1
    assert m.privacy_["epsilon"] <= s["epsilon_doc_contributor_in_every_batch"]
    # saved and resumed: the count goes on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.save(tmp_path / "olp")
        back = load(tmp_path / "olp")
        assert back.privacy_["stream"]["n_batches"] == n_calls
        back.partial_fit(rs[240:300])
    assert back.privacy_["stream"]["n_batches"] == n_calls + 1
    assert back.privacy_["stream"]["n_reports"] == sum(sizes) + 60


def test_olplda_every_batch_figure_never_below_the_stated_reports(stream):
    prior, rs = stream
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = OLPLDA(prior, n_topics=3, n_iter=2, prior_iter=5, seed=2, verbose=0)
        m.partial_fit(rs[:100])
        m.partial_fit(rs[100:200])
        m.for_contributors(5)               # a collection server knows of up to 5 reports per pseudonym
    s = m.privacy_["stream"]
    assert s["n_batches"] == 2 and s["reports_per_contributor_stated"] == 5
    assert s["epsilon_doc_contributor_in_every_batch"] == pytest.approx(5 * m.privacy_["epsilon_doc"])


def test_max_doc_update_iter_caps_the_fixed_point_and_keeps_the_default(tiny):
    """scikit-learn's name for the inner iterations: 100 is the default model exactly; a cap of 1 stops each
    document after one update (a different model); 0 is refused in one line."""
    from dptopic import OnlineVB
    from dptopic.errors import DPTopicError

    kw = dict(n_topics=3, n_epochs=2, seed=0, verbose=0)
    default = OnlineVB(**kw).fit(tiny.corpus)
    same = OnlineVB(max_doc_update_iter=100, **kw).fit(tiny.corpus)
    capped = OnlineVB(max_doc_update_iter=1, **kw).fit(tiny.corpus)
    np.testing.assert_array_equal(default.components_, same.components_)
    assert not np.allclose(default.components_, capped.components_)
    assert OnlineVB().get_params()["max_doc_update_iter"] == 100
    with pytest.raises(DPTopicError, match="max_doc_update_iter") as e:
        OnlineVB(max_doc_update_iter=0, **kw).fit(tiny.corpus)
    assert "\n" not in str(e.value)
