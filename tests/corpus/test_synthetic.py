"""``dptopic.corpus.synthetic``."""
import warnings

import numpy as np
import pytest

import dptopic
from helpers import SMALL_PRIVATE_TRAINERS


def test_synthetic_shapes(planted):
    c, phi, theta, z = planted
    assert phi.shape == (5, 200) and theta.shape == (300, 5) and z.shape == (c.n_tokens,)
    assert np.allclose(phi.sum(1), 1) and np.allclose(theta.sum(1), 1)
    # words were drawn from their topic: empirical topic-word frequencies track phi
    emp = np.zeros_like(phi)
    np.add.at(emp, (z, c.word_ids), 1)
    emp /= emp.sum(1, keepdims=True)
    assert np.abs(emp - phi).sum(1).max() < 0.35



@pytest.mark.parametrize("name", ["DocDPCooccurrence", "HDPLDA", "DPSVI"])
def test_a_private_fit_on_a_vocabulary_from_its_documents_warns_and_a_public_one_does_not(name, corpus200):
    make, c = SMALL_PRIVATE_TRAINERS[name], corpus200
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
