"""Preprocessing a user can steer: document-frequency bounds, stop-word lists, case, and `corpus info`."""
import json
import subprocess
import sys

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.corpus.preprocess import Preprocessor, build_vocabulary, df_range
from dptopic.errors import DPTopicError

# Hand-counted: document frequencies over the 4 documents (stop words "the", "and" are in sklearn's list)
#   apple 4 | banana 3 | cherry 2 | Paris/paris: "Paris" in doc 0, "paris" in doc 1 | durian 1
TEXTS = [
    "apple banana cherry Paris the",
    "apple banana paris and",
    "apple banana cherry durian",
    "apple apple apple",
]


def vocab(**kw):
    return sorted(Corpus.from_texts(TEXTS, **kw).vocabulary.words)


def test_min_df_as_count_and_fraction():
    assert vocab(min_df=2) == ["apple", "banana", "cherry", "paris"]
    assert vocab(min_df=3) == ["apple", "banana"]
    assert vocab(min_df=0.75) == ["apple", "banana"]       # ceil(0.75 * 4) = 3 documents
    assert vocab(min_df=0.5) == vocab(min_df=2)


def test_max_df_as_count_and_fraction():
    assert vocab(max_df=3) == ["banana", "cherry", "durian", "paris"]   # apple is in all 4
    assert vocab(max_df=2) == ["cherry", "durian", "paris"]
    assert vocab(max_df=0.5) == ["cherry", "durian", "paris"]            # floor(0.5 * 4) = 2
    assert vocab(min_df=2, max_df=0.75) == ["banana", "cherry", "paris"]


def test_max_df_below_min_df_is_refused():
    with pytest.raises(DPTopicError, match="max_df.*below min_df"):
        Corpus.from_texts(TEXTS, min_df=3, max_df=2)
    with pytest.raises(DPTopicError, match="fraction"):
        df_range(1, 1.5, 10)
    with pytest.raises(DPTopicError, match="count"):
        df_range(0, None, 10)


def test_stop_word_lists(tmp_path):
    assert "the" not in vocab()                                 # English list by default
    assert {"the", "and"} <= set(vocab(stop_words=None))
    assert {"the", "and"} <= set(vocab(remove_stop_words=False))
    f = tmp_path / "stop.txt"
    f.write_text("banana\n\n  cherry  \n")
    assert vocab(stop_words=str(f)) == ["and", "apple", "durian", "paris", "the"]
    assert vocab(stop_words=["apple"]) == ["and", "banana", "cherry", "durian", "paris", "the"]
    with pytest.raises(DPTopicError, match="unknown stop-word list"):
        Corpus.from_texts(TEXTS, stop_words="klingon")


def test_lowercase_switch():
    assert "paris" in vocab() and "Paris" not in vocab()
    cased = vocab(lowercase=False)
    assert "Paris" in cased and "paris" in cased
    assert Preprocessor(lowercase=False, stop_words=None).tokenize("Hello WORLD hello") == ["Hello", "WORLD", "hello"]


def test_max_vocab_ties_alphabetical():
    # token counts: apple 6, banana 3, cherry 2, paris 2, durian 1
    assert build_vocabulary([Preprocessor().tokenize(t) for t in TEXTS], max_vocab=3) == ["apple", "banana", "cherry"]


def test_prune_takes_the_same_bounds():
    c = Corpus.from_texts(TEXTS, stop_words=None)
    assert sorted(c.prune(None, min_df=2, max_df=3, stop_words="english").vocabulary.words) == ["banana", "cherry", "paris"]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_prepare_and_info(tmp_path):
    src = tmp_path / "docs.txt"
    src.write_text("\n".join(TEXTS) + "\n")
    out = tmp_path / "c.npz"
    r = _cli("corpus", "prepare", "--corpus", str(src), "--max-df", "0.75", "--min-df", "2", "--out", str(out), "--private")
    assert r.returncode == 0, r.stderr
    assert sorted(Corpus.load(out).vocabulary.words) == ["banana", "cherry", "paris"]
    r = _cli("corpus", "info", str(out), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert (info["documents"], info["vocabulary_size"]) == (3, 3)   # "apple apple apple" is left empty
    assert info["tokens"] == 7 and info["empty_documents_dropped"] == 1
    assert [w["word"] for w in info["top_words"]] == ["banana", "cherry", "paris"]
    assert info["top_words"][0] == {"word": "banana", "tokens": 3, "documents": 3, "document_share": 1.0}
    assert "NOT protected" in r.stderr and "NOT protected" in info["warning"]
    r = _cli("corpus", "info", str(src), "--stop-words", "none", "--top", "2")
    assert r.returncode == 0, r.stderr
    assert "NOT protected" not in r.stderr                          # not marked private
    assert "apple" in r.stdout and "5 words" not in r.stdout


def test_cli_preprocessing_errors(tmp_path):
    src = tmp_path / "docs.txt"
    src.write_text("\n".join(TEXTS) + "\n")
    r = _cli("corpus", "info", str(src), "--min-df", "3", "--max-df", "2")
    assert r.returncode == 2 and "--max-df 2" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = _cli("corpus", "info", str(src), "--max-df", "1.5")
    assert r.returncode == 2 and "(0, 1]" in r.stderr
    r = _cli("corpus", "info", str(src), "--stop-words", "nosuchlist")
    assert r.returncode == 2 and "unknown stop-word list" in r.stderr
    out = tmp_path / "c.npz"
    assert _cli("corpus", "prepare", "--corpus", str(src), "--out", str(out)).returncode == 0
    r = _cli("corpus", "info", str(out), "--no-lowercase")
    assert r.returncode == 2 and "raw text" in r.stderr


def test_tokens_are_runs_of_letters_in_any_script():
    from dptopic.corpus import Corpus

    c = Corpus.from_texts(["Le café à Zürich, Straße 42", "café Zürich façade Straße", "Москва город Москва"],
                          stop_words=None, min_df=1)
    assert {"café", "zürich", "straße", "façade", "москва", "город"} <= set(c.vocabulary.words)
    assert not any(ch.isdigit() for w in c.vocabulary.words for ch in w)


def test_unicode_is_normalised_by_nfkc_and_cjk_read_as_pairs():
    import re

    from dptopic.corpus import Corpus
    from dptopic.corpus.preprocess import Preprocessor

    p = Preprocessor(stop_words=None)
    # compatibility forms (full-width letters, a ligature) and decomposed accents are the words they stand for
    assert p.tokenize("ＺÜＲＩＣＨ zu\u0308rich Zürich ﬁnal final") == ["zürich"] * 3 + ["final"] * 2
    # lower(), not case folding: a public vocabulary's "straße" and a final sigma are counted as spelt
    assert p.tokenize("Straße STRASSE λόγος") == ["straße", "strasse", "λόγος"]
    assert Preprocessor(lowercase=False, stop_words=None).tokenize("Straße") == ["Straße"]
    # Chinese and Japanese have no spaces: overlapping character pairs, kept although shorter than min_length 3
    assert p.tokenize("我爱北京 and 東京大学") == ["我爱", "爱北", "北京", "and", "東京", "京大", "大学"]
    assert p.tokenize("猫 café東京") == ["猫", "café", "東京"]
    # a stop word is matched after lower-casing, whatever its case in the list
    assert Preprocessor(stop_words=["STRASSE"]).tokenize("Strasse wien") == ["wien"]
    assert Preprocessor(stop_words=["straße"]).tokenize("strasse here") == ["strasse", "here"]
    # ASCII text is tokenised exactly as before the change (version 2: lower-cased runs of letters)
    text = "The Senate's 42 bills_ passed; NASA's budget, e-mail & co-operation!! Über"[:-5]
    old = [t for t in re.findall(r"[^\W\d_]+", text.lower()) if len(t) >= 3]
    assert p.tokenize(text) == old
    # text read into a fitted model's words: as written when the vocabulary has it, else lowercased
    c = Corpus.from_texts(["STRASSE Straße NASA nasa"], vocabulary=["strasse", "straße", "NASA"], lowercase="match")
    assert sorted(c.vocabulary.words[i] for i in c.doc(0)) == ["NASA", "strasse", "straße"]    # "nasa" is not "NASA"


def test_text_mapped_onto_a_vocabulary_keeps_its_stop_words_short_words_and_case():
    import dptopic
    from dptopic.corpus import Corpus

    # training with a supplied vocabulary still applies the stop-word list and min_length ...
    c = Corpus.from_texts(["the cat is on the mat"] * 3, vocabulary=["the", "is", "on", "cat"])
    assert sorted(c.vocabulary.words[i] for i in c.doc(0)) == ["cat"]
    # ... reading text into a fitted model's words (lowercase="match") does not, and keeps the vocabulary's case
    c = Corpus.from_texts(["The cat is on the mat, NASA"] * 3, vocabulary=["the", "is", "on", "cat", "NASA"],
                          lowercase="match")
    assert sorted(c.vocabulary.words[i] for i in c.doc(0)) == ["NASA", "cat", "is", "on", "the", "the"]
    texts = ["the cat and the dog", "the dog and a cat", "cat dog the and"] * 5
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_texts(texts, stop_words=None))
    assert "the" in m.vocabulary_.words
    m.transform(["the and the"])  # stop words of the model's own vocabulary count: no "none of the words" error
    cased = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(
        Corpus.from_texts(["Paris France wine", "Paris France cheese"] * 4, lowercase=False, stop_words=None))
    cased.transform(["Paris and France"])  # matched as written, not lowercased away
    with pytest.warns(UserWarning, match="none of the input's words"):  # lowercase words are not this vocabulary's
        assert np.allclose(cased.transform(["paris and france"]), 0.5)
    with pytest.raises(dptopic.DPTopicError, match="none of the input's words"):
        cased.perplexity(["paris and france"])


def test_transform_of_a_batch_without_vocabulary_words_gives_the_prior_as_inside_a_batch():
    import scipy.sparse as sp

    import dptopic

    texts = ["apple banana cherry", "banana cherry apple", "river lake mountain", "lake river mountain"] * 5
    m = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(Corpus.from_texts(texts))
    inside = m.transform(["apple banana", "zzzz qqqq"])[1]
    with pytest.warns(UserWarning, match="every row is the prior alone"):
        alone = m.transform(["zzzz qqqq"])
    with pytest.warns(UserWarning, match="every row is the prior alone"):
        zeros = m.transform(sp.csr_matrix((3, len(m.vocabulary_))))
    np.testing.assert_allclose(alone[0], inside)
    assert zeros.shape == (3, 2) and np.allclose(zeros, inside)


def test_stop_words_english_plus_a_file_and_a_csv_with_a_byte_order_mark(tmp_path):
    from dptopic.corpus.preprocess import resolve_stop_words, stop_words

    f = tmp_path / "mine.txt"
    f.write_text("zebra\nquagga\n")
    both = resolve_stop_words(f"english+{f}")
    assert both == stop_words() | {"zebra", "quagga"} and resolve_stop_words(str(f)) == {"zebra", "quagga"}
    csv = tmp_path / "excel.csv"
    csv.write_bytes("\ufeffbody,label\napple banana cherry,a\nbanana cherry apple,b\n".encode("utf-8"))
    c = Corpus.from_csv(csv, text_column="body", label_column="label", min_df=1)  # "\ufeffbody" before the fix
    assert c.n_docs == 2 and c.labels == ["a", "b"]
