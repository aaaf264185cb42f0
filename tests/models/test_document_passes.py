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
