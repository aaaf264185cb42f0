"""OnlineVB and DPSVI take n_jobs, as scikit-learn's LatentDirichletAllocation does: threads share each E-step, each
over its own block of documents, and the result is the one-thread result up to the order of a float sum."""
import warnings

import numpy as np
import pytest

import dptopic
import dptopic.models.svi as svi
from dptopic.corpus.synthetic import lda_corpus


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=300, vocab_size=60, n_topics=4, doc_length=40, seed=3).corpus


def test_blocks_cover_every_document_once_with_about_equal_tokens():
    ptr = np.concatenate([[0], np.cumsum(np.random.default_rng(0).integers(1, 200, size=500))])
    blocks = svi._token_blocks(ptr, 4)
    assert len(blocks) == 4 and blocks[0][0] == 0 and blocks[-1][1] == 500
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    tokens = [ptr[hi] - ptr[lo] for lo, hi in blocks]
    assert max(tokens) - min(tokens) <= 2 * 200
    assert svi._token_blocks(ptr[:3], 8) == [(0, 2)]          # too few tokens: one block


@pytest.mark.parametrize("cls,kw", [(dptopic.OnlineVB, {"n_epochs": 2, "batch_size": 100}),
                                    (dptopic.DPSVI, {"n_epochs": 1.0, "sampling_rate": 0.5, "clip": 5.0})])
def test_two_threads_give_the_one_thread_model(corpus, monkeypatch, cls, kw):
    monkeypatch.setattr(svi, "MIN_TOKENS_PER_THREAD", 100)      # split even these small batches
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = cls(n_topics=4, seed=5, verbose=0, n_jobs=1, **kw).fit(corpus)
        two = cls(n_topics=4, seed=5, verbose=0, n_jobs=2, **kw).fit(corpus)
    np.testing.assert_allclose(two.lambda_, one.lambda_, rtol=1e-9)
    np.testing.assert_allclose(two.transform(corpus), one.transform(corpus), rtol=1e-9, atol=1e-12)


def test_the_blocks_run_and_clip_each_document_on_its_own(corpus, monkeypatch):
    monkeypatch.setattr(svi, "MIN_TOKENS_PER_THREAD", 100)
    m = dptopic.OnlineVB(n_topics=4, seed=0, verbose=0, n_epochs=1).fit(corpus)
    ptr, ids, cts = m._bow(corpus)
    g1, s1, n1 = m._estep(m.lambda_, ptr, ids, cts, None, clip=2.0)
    m.set_params(n_jobs=3)
    assert len(svi._token_blocks(ptr, 3)) == 3
    g3, s3, n3 = m._estep(m.lambda_, ptr, ids, cts, None, clip=2.0)
    np.testing.assert_allclose(g3, g1, rtol=1e-12)
    np.testing.assert_allclose(n3, n1, rtol=1e-12)
    np.testing.assert_allclose(s3, s1, rtol=1e-10)
    assert np.all(n1 > 0)
