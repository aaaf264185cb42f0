"""``dptopic.kernels.bow``."""
from dptopic.kernels.docdp import tokens_to_bow


def test_a_canonical_bag_of_words_is_used_as_it_is():
    from dptopic.corpus import lda_corpus
    from dptopic.kernels._bow import canonical_bow
    c = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=0).corpus
    ptr, ids, cts = tokens_to_bow(c.doc_ptr, c.word_ids, c.vocab_size)   # first-occurrence order, not sorted
    p2, i2, c2 = canonical_bow(ptr, ids, cts, c.vocab_size)
    assert p2 is ptr and i2 is ids and c2 is cts                          # no copy on the hot path
