"""The one-run audit from Python: canaries that memory or the corpus cannot hold are refused before any is written."""
import numpy as np
import pytest

from dptopic.attacks import one_run
from dptopic.errors import DPTopicError


def _never(*args, **kwargs):
    raise AssertionError("reached although the canaries were refused")


def test_canaries_beyond_memory_or_the_corpus_are_refused_first(tiny, monkeypatch):
    monkeypatch.setattr(one_run, "make_canaries", _never)
    train = lambda c, rng: np.ones((2, c.vocab_size))      # noqa: E731
    with pytest.raises(DPTopicError, match=r"canary_length=1,000,000,000: .*more than the 10,000,000"):
        one_run.one_run_audit(tiny.corpus, train, n_canaries=10, canary_length=10 ** 9, seed=0)
    with pytest.raises(DPTopicError, match=r"canary_length=161: longer than the whole corpus \(160 tokens\)"):
        one_run.one_run_audit(tiny.corpus, train, n_canaries=4, canary_length=tiny.corpus.n_tokens + 1, seed=0)
