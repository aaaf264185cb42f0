"""``dptopic.evaluation.coherence``."""
import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError
from dptopic.evaluation import umass_coherence
from helpers import topic_ranking as _topic  # a K = 1 topic whose ranking is the words given


def test_umass_by_hand():
    c = Corpus.from_token_ids([[0, 1], [0], [1, 2], [0, 1, 2]], ["a", "b", "c"])
    comp = np.array([[0.5, 0.3, 0.2]])  # top words a, b, c
    D = {0: 3, 1: 3, 2: 2}
    co = {(1, 0): 2, (2, 0): 1, (2, 1): 2}
    mimno = sum(np.log((co[(m, l)] + 1) / D[l]) for (m, l) in co)  # noqa: E741 - the paper's indices
    authors = sum(np.log((co[(m, l)] + 1) / D[m]) for (m, l) in co)  # noqa: E741 - the paper's indices
    assert umass_coherence(comp, c, top_n=3) == pytest.approx(mimno)
    assert umass_coherence(comp, c, top_n=3, variant="authors") == pytest.approx(authors)
    with pytest.raises(DPTopicError, match="top_n"):
        umass_coherence(comp, c, top_n=9)


def test_the_authors_umass_variant_still_skips_unseen_pairs_as_their_code_does():
    from dptopic.evaluation import umass_coherence

    words = [f"w{i}" for i in range(6)]
    comp = np.array([[6.0, 5, 3, 4, 2, 1]])        # top 4: w0, w1, w3, w2; w3 occurs nowhere
    ref = Corpus.from_tokens([["w0", "w1"], ["w1", "w2"], ["w0", "w2"]], vocabulary=words)
    assert np.isfinite(umass_coherence(comp, ref, 4, variant="authors", per_topic=True)[0])
    assert np.isnan(umass_coherence(comp, ref, 4, variant="mimno", per_topic=True)[0])


def test_umass_takes_a_numpy_integer_top_n_as_the_other_measures_do():
    """``top_n`` from a NumPy array (a grid, ``np.arange``) is an integer to NPMI, C_v and topic_words; UMass refused
    it as "not an integer"."""
    edge_ref = Corpus.from_texts(["aaa bbb ccc", "aaa bbb ddd", "aaa bbb eee", "aaa bbb ccc ddd"], stop_words=None,
                                 max_vocab=None)
    comp = _topic(edge_ref, ["aaa", "bbb", "ccc"])
    assert umass_coherence(comp, edge_ref, top_n=np.int64(3)) == umass_coherence(comp, edge_ref, top_n=3)
    with pytest.raises(Exception, match="invalid top_n"):
        umass_coherence(comp, edge_ref, top_n=True)
