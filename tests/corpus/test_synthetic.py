"""``dptopic.corpus.synthetic``."""
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus import lda_corpus


def test_synthetic_shapes(planted):
    c, phi, theta, z = planted
    assert phi.shape == (5, 200) and theta.shape == (300, 5) and z.shape == (c.n_tokens,)
    assert np.allclose(phi.sum(1), 1) and np.allclose(theta.sum(1), 1)
    # words were drawn from their topic: empirical topic-word frequencies track phi
    emp = np.zeros_like(phi)
    np.add.at(emp, (z, c.word_ids), 1)
    emp /= emp.sum(1, keepdims=True)
    assert np.abs(emp - phi).sum(1).max() < 0.35


TRAINERS = {"DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, verbose=0),
            "DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=1.0, n_iter=2, verbose=0),
            "DPSVI": lambda: dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=2, verbose=0),
            "HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=3.0, verbose=0)}


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=200, vocab_size=40, n_topics=2, doc_length=20, seed=1).corpus


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "HDPLDA", "DPSVI"])
def test_a_private_fit_on_a_vocabulary_from_its_documents_warns_and_a_public_one_does_not(name, small):
    make, c = TRAINERS[name], small
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", dptopic.DataVocabularyWarning)
        with pytest.warns(dptopic.DataVocabularyWarning, match="chosen from the training documents"):
            make().fit(c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", dptopic.DataVocabularyWarning)
        m = make().fit(c, vocabulary=c.vocabulary.words)
    assert m.privacy_["vocabulary_source"] == "supplied"
