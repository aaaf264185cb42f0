"""Edge cases of the topic models and their evaluation, each a bug once fixed."""
import warnings

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.evaluation import npmi_coherence, topic_quality
from helpers import topic_ranking as _topic  # a K = 1 topic whose ranking is the words given

# "aaa" and "bbb" occur in every document; "ccc" and "eee" never occur together
TEXTS = ["aaa bbb ccc", "aaa bbb ddd", "aaa bbb eee", "aaa bbb ccc ddd"]


@pytest.fixture
def ref():
    return Corpus.from_texts(TEXTS, stop_words=None, max_vocab=None)


@pytest.mark.parametrize("window", [None, 110])
def test_words_in_every_reference_document_score_complete_cooccurrence_not_never(ref, window):
    """The eps-smoothed ratio reads log(1 + eps) / -log(1 + eps) = -1 (the value of words that never co-occur) when
    two words are in every document; complete co-occurrence is NPMI's upper bound 1."""
    always = npmi_coherence(_topic(ref, ["aaa", "bbb"]), ref, top_n=2, window=window)
    never = npmi_coherence(_topic(ref, ["ccc", "eee"]), ref, top_n=2, window=window)
    assert always == pytest.approx(1.0)
    assert never < 0 < always
    assert topic_quality(_topic(ref, ["aaa", "bbb"]), ref, top_n=2)["npmi"] == pytest.approx(1.0)


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


def test_umass_takes_a_numpy_integer_top_n_as_the_other_measures_do(ref):
    """``top_n`` from a NumPy array (a grid, ``np.arange``) is an integer to NPMI, C_v and topic_words; UMass refused
    it as "not an integer"."""
    from dptopic.evaluation import umass_coherence

    comp = _topic(ref, ["aaa", "bbb", "ccc"])
    assert umass_coherence(comp, ref, top_n=np.int64(3)) == umass_coherence(comp, ref, top_n=3)
    with pytest.raises(Exception, match="invalid top_n"):
        umass_coherence(comp, ref, top_n=True)
