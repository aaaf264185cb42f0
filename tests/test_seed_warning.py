"""A private trainer given an explicit seed warns (SeededNoiseWarning) in Python, not only in its report: the
guarantee holds only while the seed stays secret. Without a seed, and for non-private models, it stays silent."""
import warnings

import pytest

import dptopic
from dptopic import SeededNoiseWarning
from dptopic.corpus import lda_corpus


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=80, vocab_size=30, n_topics=2, doc_length=20, seed=3).corpus


PRIVATE = {
    "HDPLDA": lambda seed: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=5.0, seed=seed, verbose=0),
    "CDPLDA": lambda seed: dptopic.CDPLDA(n_topics=2, n_iter=2, paper_epsilon=5.0, seed=seed, verbose=0),
    "DPSVI": lambda seed: dptopic.DPSVI.from_budget(2.0, 1e-5, n_topics=2, seed=seed, verbose=0),
    "DocDPEM": lambda seed: dptopic.DocDPEM(n_topics=2, epsilon=2.0, seed=seed, verbose=0),
    "DocDPCooccurrence": lambda seed: dptopic.DocDPCooccurrence(n_topics=2, epsilon=2.0, seed=seed, verbose=0),
    "FedLDA": lambda seed: dptopic.FedLDA(n_topics=2, rounds=1, pad_length=8, n_clients=8, seed=seed, verbose=0),
}


@pytest.mark.filterwarnings("ignore:.*already used by an earlier private fit")
@pytest.mark.filterwarnings("ignore::dptopic.SmallCorpusWarning")
@pytest.mark.parametrize("name", sorted(PRIVATE))
def test_a_seeded_private_trainer_warns_and_an_unseeded_one_does_not(name, corpus):
    with pytest.warns(SeededNoiseWarning, match=f"{name} with an explicit seed"):
        m = PRIVATE[name](7).fit(corpus)
    assert m.privacy_["noise_reproducible"] is True
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        m = PRIVATE[name](None).fit(corpus)
    assert not m.privacy_.get("noise_reproducible")


def test_a_seeded_non_private_model_does_not_warn(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        dptopic.LDA(n_topics=2, n_iter=2, seed=7, verbose=0).fit(corpus)
