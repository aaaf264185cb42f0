"""``dptopic.local.document``."""
import numpy as np
import pytest
from dptopic import DPTopicError
import warnings
from dptopic.corpus import lda_corpus
from dptopic.local import DocumentRandomizer, DocumentReportSet
from dptopic.corpus import Corpus


@pytest.mark.filterwarnings('ignore::dptopic.SeededNoiseWarning')
@pytest.mark.filterwarnings('ignore::dptopic.SmallCorpusWarning')
@pytest.mark.filterwarnings('ignore::dptopic.DataVocabularyWarning')
@pytest.mark.filterwarnings('ignore:.*already used by an earlier private fit')
@pytest.mark.filterwarnings('ignore:.*trained a private model in this process')
@pytest.mark.parametrize("make", ["word", "document"])
def test_randomizers_refuse_a_one_dimensional_array_and_a_number_as_a_document_in_one_line(make):
    import numpy as np

    from dptopic.local import DocumentRandomizer, Randomizer

    words = [f"w{i}" for i in range(10)]
    r = (Randomizer(words, epsilon_word=2.0, secure=True) if make == "word" else DocumentRandomizer(words, epsilon=4.0))
    X = np.ones((3, 10), dtype=int)
    assert r.randomize(X).n_reports == 3
    for bad, says in ((X[0], "X.reshape(1, -1)"), (np.array(5), "2-D"), ([1, 2, 3], "not a int")):
        with pytest.raises(DPTopicError, match=None) as e:
            r.randomize(bad)
        assert says in str(e.value) and "\n" not in str(e.value)


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=60, vocab_size=40, n_topics=2, doc_length=15, seed=1).corpus


# ----------------------------------------------------------------- DocumentReportSet
def test_document_report_set_has_a_readable_repr(small):
    words = list(small.vocabulary.words)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rs = DocumentRandomizer.for_simulation(words, epsilon=8.0, seed=0).randomize(small.subset(np.arange(3)))
    assert isinstance(rs, DocumentReportSet)
    text = repr(rs)
    assert text == (f"DocumentReportSet(3 reports, V={len(words)}, eps_doc=8, subset_size={rs.subset_size})")
    assert "object at 0x" not in repr(rs[:1]) and repr(rs[:1]).startswith("DocumentReportSet(1 reports")


def test_the_document_randomizer_refuses_a_corpus_that_left_out_its_empty_documents():
    """One report per document, an empty one included: a corpus that already dropped documents with no vocabulary
    word would send fewer reports, by a number read from the text."""
    from dptopic.local.document import DocumentRandomizer

    words = ["fever", "cough", "rash", "pain"]
    texts = ["fever cough today", "nothing here at all", "rash and pain"]
    r = DocumentRandomizer.for_simulation(words, 4.0, seed=0)
    dropped = Corpus.from_texts(texts, vocabulary=words)
    assert dropped.n_docs == 2 and dropped.n_empty_dropped == 1
    with pytest.raises(DPTopicError, match="left out 1 document") as e:
        r.randomize(dropped)
    assert "drop_empty=False" in str(e.value) and "\n" not in str(e.value)
    kept = Corpus.from_texts(texts, vocabulary=words, drop_empty=False)
    assert len(r.sample_pairs(kept)) == 3
    assert len(r.sample_pairs([t.split() for t in texts])) == 3
