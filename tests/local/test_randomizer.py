"""Gaps closed in the mechanisms, local randomizers and accountants."""
from __future__ import annotations


import numpy as np
import pytest

from dptopic import Corpus
from dptopic.errors import DPTopicError

WORDS = ["apple", "pear", "plum"]
TEXTS = ["apple pear", "zzz qqq", "plum apple"]     # the second document holds no vocabulary word


# ---------------------------------------------------------------- word-level randomizer: one report per document
def test_the_word_randomizer_refuses_a_corpus_that_left_out_its_empty_documents():
    """Real reports from a Corpus built with the default drop_empty=True were one fewer per document without a
    vocabulary word: their number was an exact function of the text (DocumentRandomizer already refused it)."""
    from dptopic.local import Randomizer

    dropped = Corpus.from_texts(TEXTS, vocabulary=WORDS)
    assert dropped.n_docs == 2 and dropped.n_empty_dropped == 1
    with pytest.raises(DPTopicError, match="drop_empty=False"):
        Randomizer(WORDS, epsilon_word=3.0).randomize(dropped)


def test_the_word_randomizer_sends_one_report_per_document_however_they_are_given():
    from dptopic.local import Randomizer

    rz = Randomizer(WORDS, epsilon_word=3.0)
    kept = Corpus.from_texts(TEXTS, vocabulary=WORDS, drop_empty=False)
    assert rz.randomize(kept).n_reports == 3
    assert rz.randomize([t.split() for t in TEXTS]).n_reports == 3
    assert rz.randomize(np.array([[1, 1, 0], [0, 0, 0], [1, 0, 1]])).n_reports == 3
    # a simulation randomizes the documents it is given (experiments and audits on a prepared corpus)
    with pytest.warns(UserWarning):
        sim = Randomizer.for_simulation(WORDS, epsilon_word=3.0, seed=0)
    assert sim.randomize(Corpus.from_texts(TEXTS, vocabulary=WORDS)).n_reports == 2


WORDS_2 = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


# ---- item 5: the contributor-side default is the OS CSPRNG
def test_randomizer_default_is_cryptographic():
    from dptopic.local import Randomizer

    rz = Randomizer(WORDS_2, epsilon_word=1.0)
    assert rz.secure and not rz.simulation and "CSPRNG" in rz.privacy_report()["randomness"]
    fast = Randomizer.for_simulation(WORDS_2, epsilon_word=1.0)
    assert not fast.secure and "SIMULATION" in fast.privacy_report()["randomness"]
    assert rz.randomize([["apple"], [], ["fig", "kiwi"]]).n_reports == 3
