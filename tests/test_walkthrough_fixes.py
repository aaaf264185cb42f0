"""Fixes from a new user's walk-through (2026-11-23): reports that describe what happened, one way to read text."""
import warnings

import pytest

import dptopic
from dptopic.corpus import lda_corpus


def _quiet_fit(model, X, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X, **kw)


@pytest.mark.parametrize("vocab_size, releases", [(60, 1), (600, 2)])
def test_the_cooccurrence_report_names_the_releases_it_made(vocab_size, releases):
    c = lda_corpus(n_docs=300, vocab_size=vocab_size, n_topics=3, doc_length=30, seed=4).corpus
    rep = _quiet_fit(dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, verbose=0), c).privacy_
    assert len(rep["events"]) == releases
    assert ("two statistics" in rep["theorem"]) == (releases == 2)
    assert ("chose the kept words" in rep["scope"]) == (releases == 2)
