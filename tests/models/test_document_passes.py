"""Where a document-level trainer's documents come from (dptopic.models._document_passes): a corpus in memory is
counted at its first pass, once, after the fit has reserved its releases."""
import warnings

import numpy as np
import pytest

from dptopic.accounting.ledger import RESERVE_HOOK
from dptopic.kernels.docdp import tokens_to_bow
from dptopic.models import DocDPCooccurrence, DocDPEM, _document_passes


@pytest.fixture
def counted(monkeypatch):
    """The calls of the counting, in order, beside the reservations (``events``)."""
    events = []

    def counting(*a, **k):
        events.append("count")
        return tokens_to_bow(*a, **k)
    monkeypatch.setattr(_document_passes, "tokens_to_bow", counting)
    return events


def test_a_corpus_in_memory_is_counted_at_its_first_pass_and_once(planted, counted):
    corpus = planted.corpus
    passes, vocab, _ = _document_passes.document_source(DocDPCooccurrence(n_topics=5), corpus, None)
    assert counted == []
    first, second = list(passes()), list(passes())
    assert counted == ["count"] and len(first) == len(second) == 1
    for got in (first[0], second[0]):
        for a, b in zip(got, tokens_to_bow(corpus.doc_ptr, corpus.word_ids, len(vocab))):
            assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("model", [DocDPCooccurrence(n_topics=5, epsilon=1.0, seed=0),
                                   DocDPEM(n_topics=5, epsilon=1.0, n_iter=2, seed=0)])
def test_a_fit_reserves_its_releases_before_it_counts_the_documents(planted, counted, model):
    def reserve(ledger, plan):
        counted.append("reserve")
    token = RESERVE_HOOK.set(reserve)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(planted.corpus)
    finally:
        RESERVE_HOOK.reset(token)
    assert counted[0] == "reserve" and counted.count("count") == 1, counted


def test_a_large_corpus_is_counted_a_block_at_a_time_at_each_pass(planted, counted, monkeypatch):
    monkeypatch.setattr(_document_passes, "COUNT_BLOCK_DOCS", 64)
    corpus = planted.corpus
    passes, vocab, _ = _document_passes.document_source(DocDPCooccurrence(n_topics=5), corpus, None)
    first, second = list(passes()), list(passes())
    assert len(first) == len(second) == 5 and counted == ["count"] * 10      # counted again at each pass, kept never
    whole = tokens_to_bow(corpus.doc_ptr, corpus.word_ids, len(vocab))
    for blocks in (first, second):
        ptr = np.concatenate([[0]] + [b[0][1:] + off for b, off in zip(blocks, np.cumsum([0] + [
            b[0][-1] for b in blocks[:-1]]))])
        assert np.array_equal(ptr, whole[0])
        for k in (1, 2):
            got = np.concatenate([b[k] for b in blocks])
            assert got.dtype == whole[k].dtype and np.array_equal(got, whole[k])


def test_a_user_level_fit_counts_its_corpus_whole(planted, counted, monkeypatch):
    monkeypatch.setattr(_document_passes, "COUNT_BLOCK_DOCS", 64)
    model = DocDPCooccurrence(n_topics=5, unit="user")
    passes, _, _ = _document_passes.document_source(model, planted.corpus, None)
    assert len(list(passes())) == 1 and len(list(passes())) == 1 and counted == ["count"]


@pytest.mark.parametrize("make", [lambda: DocDPCooccurrence(n_topics=5, epsilon=1.0, seed=0),
                                  lambda: DocDPEM(n_topics=5, epsilon=1.0, n_iter=3, seed=0)])
def test_a_fit_counted_in_blocks_releases_what_one_block_releases_and_gathers_no_whole_part(planted, monkeypatch,
                                                                                               make):
    """The noise held fixed (one seed), a training part counted 64 documents at a time releases what it releases
    counted whole, up to the order of the blocks' float sums, and its topics follow; its tokens are gathered a block
    at a time. The topics are compared more loosely than the release: the co-occurrence trainer's factorization of
    its release (post-processing) carries a difference in the last bits of the sums to a few parts in 10^6 (on some
    machines' BLAS)."""
    from dptopic.corpus import corpus as corpus_module
    from dptopic.corpus import token_file

    train = planted.corpus.subset(np.arange(0, planted.corpus.n_docs, 3) % planted.corpus.n_docs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = make().fit(train.subset(np.arange(train.n_docs)))
        whole = one.components_
        gathered = []
        take = token_file.take_documents
        monkeypatch.setattr(token_file, "take_documents", lambda ids, ptr, index, out: (
            gathered.append(len(index)), take(ids, ptr, index, out))[1])
        monkeypatch.setattr(_document_passes, "COUNT_BLOCK_DOCS", 64)
        monkeypatch.setattr(corpus_module, "TOKEN_BLOCK_DOCS", 64)
        model = make().fit(train)
        blocked = model.components_
    assert gathered and max(gathered) <= 64
    released = [k for k, v in getattr(one, "releases_", {}).items() if isinstance(v, np.ndarray)]
    assert released or not hasattr(one, "releases_")
    for k in released:
        np.testing.assert_allclose(model.releases_[k], one.releases_[k], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(blocked, whole, rtol=1e-9 if not released else 1e-4, atol=1e-12 if not released
                               else 1e-8)
