"""What ``dptopic export`` writes, computed in the library (``reporting/export.py``)."""
import numpy as np

from dptopic.corpus import Corpus, Vocabulary
from dptopic.reporting.export import kept_words, pyldavis_data, spread_summary


class _Model:
    """A fitted model as the export reads it: topics over 4 words, proportions from ``transform``."""

    def __init__(self, components):
        self.components_ = np.asarray(components, dtype=np.float64)
        self.vocabulary_ = Vocabulary(["a", "b", "c", "d"])

    def transform(self, docs):
        return np.tile([0.25, 0.75], (docs.n_docs, 1))


def _docs():   # documents [a a b], [d], [c b]
    return Corpus(np.array([0, 3, 4, 6]), np.array([0, 0, 1, 3, 2, 1]), Vocabulary(["a", "b", "c", "d"]))


def test_pyldavis_data_by_hand():
    m = _Model([[2, 1, 1, 0], [0, 1, 1, 2]])
    d = pyldavis_data(m, _docs())
    assert np.allclose(d["topic_term_dists"], [[0.5, 0.25, 0.25, 0], [0, 0.25, 0.25, 0.5]])
    assert d["doc_lengths"] == [3, 1, 2] and d["term_frequency"] == [2, 2, 1, 1] and d["vocab"] == ["a", "b", "c", "d"]
    # only words a and d: each topic renormalised over them, lengths and frequencies count their tokens only
    w = pyldavis_data(m, _docs(), words=np.array([0, 3]))
    assert np.allclose(w["topic_term_dists"], [[1, 0], [0, 1]])
    assert w["doc_lengths"] == [2, 1, 0] and w["term_frequency"] == [2, 1] and w["vocab"] == ["a", "d"]
    # only topic 1: each document's proportions renormalised over it
    t = pyldavis_data(m, _docs(), topics=[1])
    assert np.allclose(t["doc_topic_dists"], 1.0) and len(t["topic_term_dists"]) == 1


def test_spread_summary_and_kept_words_of_another_model():
    m = _Model([[4, 2, 1, 1], [1, 1, 2, 4]])
    s = spread_summary(m, np.array([0, 3]))
    assert s["kept_words"] == 2 and s["vocabulary_words"] == 4
    assert s["weight_outside_kept_words"] == round(1 - (5 / 8 + 5 / 8) / 2, 4)
    assert s["weight_on_top_10_words"] == 1.0           # 4 words: all of the weight
    assert kept_words(m) is None                         # not a document-level trainer
