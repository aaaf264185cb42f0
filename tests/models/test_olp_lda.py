"""``dptopic.models.olp_lda``: OLPLDA, online LP-LDA on batches of randomized reports."""
import warnings

import numpy as np
import pytest


def test_olplda_without_prior_data_does_not_halve_its_prior_mean():
    """Without prior data the first batch has no prior mean (a 0 placeholder with weight 0); eq. (21) then averaged
    that 0 with the first estimate, so the second batch's prior mean was half the document frequencies and its
    denoised estimates about 20% low (omega = 0.4)."""
    from dptopic.contributor.randomizer import Randomizer
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.models import OLPLDA
    from dptopic.protocol.estimation import document_frequencies

    c = lda_corpus(n_docs=2000, vocab_size=60, n_topics=3, doc_length=20, alpha=0.1, beta=0.05, seed=7).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = Randomizer(c.vocabulary, simulation=True, epsilon_word=3.0, seed=1).randomize(c)
        m = OLPLDA("none", n_topics=3, n_iter=1, seed=0, verbose=0)
        m.partial_fit(rs[:1000])
        eta1 = m.eta_.copy()
        assert np.array_equal(m.mu_, eta1)          # the first estimate is the prior mean it leaves
        m.partial_fit(rs[1000:])
    assert m.omega_history_ == [0.0, 0.4]
    assert np.allclose(m.mu_, eta1)                 # eq. (21): (eta1 + eta1) / 2 * 1000 / 1000
    true = document_frequencies(c.subset(np.arange(1000, 2000)))
    assert m.eta_.sum() / true.sum() == pytest.approx(1.0, abs=0.05)
