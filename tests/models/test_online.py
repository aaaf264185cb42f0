"""Issue 9: OnlineVB follows Hoffman, Blei & Bach (2010) exactly as scikit-learn's online LDA does.

scikit-learn's ``LatentDirichletAllocation(learning_method="online")`` implements the same algorithm
(step ρ_t = (τ0 + t)^(−κ) with its counter starting at 1, E-step ≤ 100 iterations until the mean absolute
change of γ is below 1e-3, γ and λ drawn from Gamma(100, 1/100), statistics scaled by D / |batch|). These
tests replay its random draws through our kernel and update, so any drift in the schedule, the E-step or
the scaling fails them.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import psi

from dptopic import OnlineVB
from dptopic.corpus import lda_corpus
from dptopic.kernels.vb import dirichlet_expectation, gather_rows, vb_estep
from dptopic.models.svi import ESTEP_MAX_ITER, ESTEP_TOL

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
