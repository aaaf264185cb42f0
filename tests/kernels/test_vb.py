"""The variational E-step kernel (dptopic.kernels.vb) against a plain NumPy E-step, and its threaded form."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.special import psi

import dptopic
import dptopic.models.svi as svi
from dptopic.corpus.synthetic import lda_corpus
from dptopic.kernels.vb import TILE, _exp_digamma, dirichlet_expectation, vb_estep, vb_estep_docs, vb_scatter


def _np_estep(ptr, ids, cts, lam, alpha, gamma0, max_iter, tol, clip):
    """Hoffman et al.'s E-step with explicit φ, one document at a time: ``(gamma, sstats K×V, norms, iterations)``."""
    K, V = lam.shape
    eb = np.exp(dirichlet_expectation(lam))
    gamma, sstats, norms, total = gamma0.copy(), np.zeros((K, V)), np.zeros(len(ptr) - 1), 0
    for d in range(len(ptr) - 1):
        w, n = ids[ptr[d]:ptr[d + 1]], cts[ptr[d]:ptr[d + 1]]
        if len(w) == 0:
            gamma[d] = alpha
            continue
        g = gamma[d]
        for _ in range(max_iter):
            total += 1
            et = np.exp(psi(g) - psi(g.sum()))
            phi = et[:, None] * eb[:, w]
            new = alpha + (phi / phi.sum(axis=0)) @ n
            done = np.mean(np.abs(new - g)) < tol
            g = new
            if done:
                break
        et = np.exp(psi(g) - psi(g.sum()))
        phi = et[:, None] * eb[:, w]
        s = phi / phi.sum(axis=0) * n
        norms[d] = np.linalg.norm(s)
        np.add.at(sstats.T, w, (min(1.0, clip / norms[d]) * s).T)
        gamma[d] = g
    return gamma, sstats, norms, total


def _bow(rng, D, V, max_len, long_doc=0):
    docs = [rng.integers(0, V, size=rng.integers(0, max_len)) for _ in range(D)]
    if long_doc:                                   # more distinct words than a tile holds
        docs[D // 2] = np.concatenate([rng.permutation(V)[:long_doc], rng.integers(0, V, size=50)])
    ptr, ids, cts = [0], [], []
    for doc in docs:
        u, c = np.unique(doc, return_counts=True)
        ids += list(u)
        cts += list(c)
        ptr.append(len(ids))
    return np.array(ptr, np.int64), np.array(ids, np.int64), np.array(cts, np.float64)


@pytest.mark.parametrize("K,clip,long_doc", [(5, np.inf, 0), (13, 3.0, 0), (20, np.inf, TILE + 37), (9, 2.0, TILE + 3)])
def test_estep_matches_the_numpy_reference(K, clip, long_doc):
    """Any K (not only multiples of the vector width), clipped or not, a document longer than a tile (gathered tile by
    tile every iteration) and an empty document: the same γ, statistics, norms and iteration count."""
    rng = np.random.default_rng(K)
    V = 700 if long_doc else 40
    ptr, ids, cts = _bow(rng, 14, V, 60, long_doc)
    ptr = np.insert(ptr, 3, ptr[3])                 # document 3 is empty
    lam = rng.gamma(100.0, 0.01, size=(K, V)) + rng.random((K, V)) * 5
    gamma0 = rng.gamma(100.0, 0.01, size=(len(ptr) - 1, K))
    eb_vk = np.ascontiguousarray(np.exp(dirichlet_expectation(lam)).T)
    gamma, ss, norms = gamma0.copy(), np.zeros((V, K)), np.zeros(len(ptr) - 1)
    it = vb_estep(ptr, ids, cts, eb_vk, 0.2, gamma, 100, 1e-6, clip, ss, norms)
    ref_g, ref_s, ref_n, ref_it = _np_estep(ptr, ids, cts, lam, 0.2, gamma0, 100, 1e-6, clip)
    assert it == ref_it
    # the kernel's ψ series is exact to ~1e-11 (scipy's to ~1e-16); the fixed point carries that error a little further
    np.testing.assert_allclose(gamma, ref_g, rtol=1e-8)
    np.testing.assert_allclose((ss * eb_vk).T, ref_s, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(norms, ref_n, rtol=1e-8)
    assert gamma[3].tolist() == [0.2] * K and norms[3] == 0.0
    if np.isfinite(clip):
        assert (norms > clip).any() and (norms < clip).any()


def test_exp_digamma_matches_scipy():
    xs = np.concatenate([np.logspace(-2, 5, 3000), [0.5, 1.0, 5.999, 6.0, 6.001]])
    out = np.empty_like(xs)
    _exp_digamma(xs, out)
    np.testing.assert_allclose(out, np.exp(psi(xs)), rtol=3e-11)     # the series at x + 6 >= 6: ~1e-11 in psi


def test_chunks_in_any_order_and_split_scatter_give_the_serial_sums_bit_for_bit():
    rng = np.random.default_rng(7)
    K, V = 6, 50
    ptr, ids, cts = _bow(rng, 40, V, 70)
    eb = np.ascontiguousarray(np.exp(dirichlet_expectation(rng.gamma(1.0, 1.0, size=(K, V)))).T)
    g0 = rng.gamma(100.0, 0.01, size=(len(ptr) - 1, K))
    D = len(ptr) - 1
    g1, ss1, n1 = g0.copy(), np.zeros((V, K)), np.zeros(D)
    it1 = vb_estep(ptr, ids, cts, eb, 0.1, g1, 100, 1e-4, 2.0, ss1, n1)
    g2, ss2, n2 = g0.copy(), np.zeros((V, K)), np.zeros(D)
    w, et, it2 = np.empty(len(ids)), np.empty((D, K)), 0
    for lo, hi in [(30, 40), (0, 11), (11, 30)]:
        it2 += vb_estep_docs(ptr, ids, cts, eb, 0.1, g2, 100, 1e-4, 2.0, lo, hi, w, et, n2)
    for lo, hi in [(17, V), (0, 17)]:
        vb_scatter(ptr, ids, w, et, ss2, lo, hi)
    assert it1 == it2
    assert np.array_equal(g1, g2) and np.array_equal(n1, n2) and np.array_equal(ss1, ss2)


@pytest.mark.parametrize("cls,kw", [(dptopic.OnlineVB, {"n_epochs": 2, "batch_size": 100}),
                                    (dptopic.DPSVI, {"n_epochs": 1.0, "sampling_rate": 0.5, "clip": 5.0})])
def test_threads_give_the_one_thread_model_exactly(monkeypatch, cls, kw):
    """The threads take chunks of documents in whatever order they finish; the statistics are still added in document
    order, so two or three threads give the one-thread model bit for bit."""
    corpus = lda_corpus(n_docs=300, vocab_size=60, n_topics=4, doc_length=40, seed=3).corpus
    monkeypatch.setattr(svi, "MIN_TOKENS_PER_THREAD", 100)      # split even these small batches ...
    monkeypatch.setattr(svi, "CHUNK_TOKENS", 64)                # ... into many chunks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # DPSVI's seed and vocabulary warnings
        one = cls(n_topics=4, seed=5, verbose=0, n_jobs=1, **kw).fit(corpus)
        many = [cls(n_topics=4, seed=5, verbose=0, n_jobs=jobs, **kw).fit(corpus) for jobs in (2, 3)]
    for m in many:
        assert np.array_equal(m.lambda_, one.lambda_)
        assert np.array_equal(m.transform(corpus), one.transform(corpus))


def test_doc_chunks_cover_every_document_once_in_order():
    ptr = np.concatenate([[0], np.cumsum(np.random.default_rng(0).integers(0, 90, size=500))])
    chunks = svi._doc_chunks(ptr, 2)
    assert chunks[0][0] == 0 and chunks[-1][1] == 500 and len(chunks) > 8
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(chunks, chunks[1:]))
    assert svi._doc_chunks(ptr[:2], 4) == [(0, 1)]
