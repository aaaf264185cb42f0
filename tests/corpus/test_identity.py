"""Each document's content digest (corpus.identity): the same records in any format, order or white space give the
same digests, and the digests follow the documents through every step a corpus goes through."""
import csv
import json
import unicodedata

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.corpus.identity import bag_digests, count_digests, normal_text, text_digests, token_digests
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
