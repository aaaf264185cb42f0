"""Each document's content digest (corpus.identity): the same records in any format, order or white space give the
same digests, and the digests follow the documents through every step a corpus goes through."""
import csv
import json
import unicodedata

import numpy as np
import pytest

from dptopic.corpus import Corpus, identity
from dptopic.corpus.identity import (
    READ_MIN_TOKENS,
    TokenKeys,
    bag_digests,
    count_digests,
    normal_text,
    read_bag_digests,
    text_digests,
    token_bag_digests,
    token_digests,
    token_keys,
    token_list_ids,
    word_hashes,
)
from dptopic.corpus.ledger_documents import documents_of
from dptopic.corpus.preprocess import Preprocessor
from dptopic.corpus.readers import read_corpus

TEXTS = ["budget deficit tax revenue", "army navy war defense troops", "school education teachers students",
         "budget  tax\trevenue surplus", "José café river mountain"]


def _sorted(keys):
    return sorted(int(k) for k in keys)


def test_white_space_and_unicode_forms_are_one_text():
    assert normal_text("  a\t b\n") == "a b"
    nfd = unicodedata.normalize("NFD", "José café")
    assert text_digests([nfd])[0] == text_digests(["José café"])[0]
    assert text_digests(["a  b"])[0] == text_digests([" a b "])[0] != text_digests(["a b c"])[0]
    assert token_digests([["a", "b"]])[0] == text_digests(["a b"])[0]


def test_the_readers_give_the_same_digests_in_every_format(tmp_path):
    (tmp_path / "d.txt").write_text("\n".join(TEXTS) + "\n")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps({"text": t}, separators=(" , ", " : ")) + "  \n"
                                              for t in reversed(TEXTS)))
    with open(tmp_path / "d.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text"])
        for t in TEXTS[2:] + TEXTS[:2]:
            w.writerow(["  " + t])
    (tmp_path / "docs").mkdir()
    for i, t in enumerate(TEXTS):
        (tmp_path / "docs" / f"{i}.txt").write_text(t + "\n")
    keys = [_sorted(read_corpus(tmp_path / name, max_vocab=None).content_keys)
            for name in ("d.txt", "d.jsonl", "d.csv", "docs")]
    assert keys[0] == keys[1] == keys[2] == keys[3] == _sorted(text_digests(TEXTS))


def test_the_digests_follow_the_documents(tmp_path):
    c = Corpus.from_texts(TEXTS + ["the and of"], max_vocab=None)     # the last: stop words only, dropped
    assert c.n_docs == len(TEXTS) and _sorted(c.content_keys) == _sorted(text_digests(TEXTS))
    sub = c.subset([3, 1])
    assert list(sub.content_keys) == [c.content_keys[3], c.content_keys[1]]
    kept = c.restrict(["budget", "tax", "army"])          # documents left with no word are dropped with their digest
    assert _sorted(kept.content_keys) == _sorted(text_digests([TEXTS[0], TEXTS[1], TEXTS[3]]))
    train, test = c.stable_split(0.4, key=1)
    assert _sorted(np.r_[train.content_keys, test.content_keys]) == _sorted(c.content_keys)
    c.save(tmp_path / "c.npz")
    assert list(Corpus.load(tmp_path / "c.npz").content_keys) == list(c.content_keys)


def test_a_corpus_without_its_texts_is_known_by_its_bags_of_words():
    c = Corpus.from_texts(TEXTS, max_vocab=None)
    bare = Corpus(c.doc_ptr, c.word_ids, c.vocabulary.words)
    assert bare.content_keys is None
    bags = bag_digests(bare.doc_ptr, bare.word_ids, bare.vocabulary.words)
    shuffled = bare.subset(np.arange(bare.n_docs)[::-1])
    assert _sorted(bags) == _sorted(bag_digests(shuffled.doc_ptr, shuffled.word_ids, shuffled.vocabulary.words))
    assert _sorted(count_digests(bare.to_bow(), bare.vocabulary.words)) == _sorted(bags)
    assert len(set(bags.tolist())) == len(bags)


def test_a_bad_digest_array_is_refused():
    c = Corpus.from_texts(TEXTS, max_vocab=None)
    with pytest.raises(Exception, match="one 64-bit digest per document"):
        Corpus(c.doc_ptr, c.word_ids, c.vocabulary.words, content_keys=np.zeros(2, np.uint64))


# ---------------------------------------------------------------------------------------- what the trainer reads
LONG = ["the budget deficit and the tax revenue of the nation grew again this year while spending on defense and"
        " schools stayed where congress left it last spring after the long debate",
        "army navy war defense troops marched along the river valley toward the mountain forest and the desert"
        " beyond it where the generals waited for orders from the capital"]


def test_token_bags_are_multisets_of_the_tokens_before_the_cut():
    docs = [["b", "a", "a"], ["a", "b", "a"], ["a", "b"], []]
    ptr, ids, words = token_list_ids(docs)
    bags = token_bag_digests(ptr, ids, words)
    assert bags[0] == bags[1] != bags[2] and bags[3] == 0          # order-free, counts matter, empty: no key
    assert token_bag_digests(ptr, ids, hashes=word_hashes(words)).tolist() == bags.tolist()
    X = Corpus.from_tokens(docs[:3], max_vocab=None).to_bow()      # the same counts as a matrix: the same digest
    assert _sorted(count_digests(X, Corpus.from_tokens(docs[:3], max_vocab=None).vocabulary.words)) == \
        _sorted(bags[:3])


def test_a_corpus_read_from_text_keeps_its_token_keys_through_every_step(tmp_path):
    c = Corpus.from_texts(LONG + ["the and of"], max_vocab=4, min_df=1)     # a cut to 4 words; the last is dropped
    assert c.n_docs == 2 and c.token_keys is not None
    pre = Preprocessor()
    expect = token_keys(*token_list_ids([pre.tokenize(t) for t in LONG]))
    assert c.token_keys.bags.tolist() == expect.bags.tolist()              # before the cut: every token
    assert np.array_equal(c.token_keys.bands, expect.bands) and c.token_keys.lengths.tolist() == [16, 15]
    sub = c.subset([1])
    assert sub.token_keys.bags.tolist() == [expect.bags[1]]
    train, test = c.stable_split(0.5, key=1)
    assert _sorted(np.r_[train.token_keys.bags, test.token_keys.bags]) == _sorted(expect.bags)
    c.save(tmp_path / "c.npz")
    back = Corpus.load(tmp_path / "c.npz")
    assert np.array_equal(back.token_keys.signatures, c.token_keys.signatures)


def test_token_keys_made_with_other_sketch_parameters_are_left_out(tmp_path, monkeypatch):
    c = Corpus.from_texts(LONG, max_vocab=None)
    c.save(tmp_path / "c.npz")
    monkeypatch.setitem(identity.SKETCH_PARAMS, "threshold", 0.5)
    assert Corpus.load(tmp_path / "c.npz").token_keys is None


def test_the_keys_are_the_same_in_any_chunking():
    rng = np.random.default_rng(0)
    docs = [[f"w{j}" for j in rng.integers(0, 300, rng.integers(10, 50))] for _ in range(40)]
    whole = token_keys(*token_list_ids(docs))
    halves = TokenKeys.concatenate([token_keys(*token_list_ids(docs[:13])), token_keys(*token_list_ids(docs[13:]))])
    assert all(np.array_equal(getattr(whole, f), getattr(halves, f)) for f in TokenKeys.FIELDS)


def test_documents_of_every_input_kind_carry_what_the_trainer_reads():
    import scipy.sparse as sp

    c = Corpus.from_texts(LONG, max_vocab=None)
    from_corpus = documents_of(c)
    assert from_corpus.bags.tolist() == c.token_keys.bags.tolist()
    assert from_corpus.read_bags.tolist() == read_bag_digests(c.doc_ptr, c.word_ids, c.vocabulary.words).tolist()
    from_texts = documents_of(LONG)                     # strings: read once more by the default tokenizer
    assert from_texts.bags.tolist() == from_corpus.bags.tolist()
    assert np.array_equal(from_texts.bands, from_corpus.bands)
    tokens = [Preprocessor().tokenize(t) for t in LONG]
    assert documents_of(tokens).bags.tolist() == from_corpus.bags.tolist()
    X = sp.csr_matrix(c.to_bow())
    X.feature_names = c.vocabulary.words
    matrix = documents_of(X)                            # no cut: the counts are the bag before and after it
    assert matrix.bags.tolist() == matrix.read_bags.tolist() == from_corpus.bags.tolist()
    assert np.array_equal(matrix.bands, from_corpus.bands) and matrix.lengths.tolist() == [16, 15]
    bare = documents_of(Corpus(c.doc_ptr, c.word_ids, c.vocabulary.words))    # a UCI file's corpus
    assert bare.bags.tolist() == bare.read_bags.tolist() == from_corpus.bags.tolist()
    weights = documents_of(sp.csr_matrix(np.array([[0.5, 1.25], [2.0, 0.0]])))     # tf-idf: digests alone
    assert weights.bags is None and weights.bands is None and len(weights.digests) == 2


def test_a_short_bag_as_read_is_no_key():
    c = Corpus.from_texts(["budget tax army navy river", "budget tax army navy"], max_vocab=None)
    read = documents_of(c).read_bags
    assert read[0] != 0 and read[1] == 0 and READ_MIN_TOKENS == 5
