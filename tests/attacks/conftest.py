"""Fixtures of the attack and audit tests."""
import pytest

from dptopic.corpus.synthetic import lda_corpus


@pytest.fixture(scope="session")
def small():
    """Few long documents over a small vocabulary: a non-private LDA memorises them visibly with 8 shadows."""
    return lda_corpus(n_docs=60, vocab_size=80, n_topics=3, doc_length=("poisson", 40), alpha=0.5, beta=0.05,
                      seed=5).corpus
