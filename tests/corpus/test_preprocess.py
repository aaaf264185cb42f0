"""``dptopic.corpus.preprocess``."""
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


def test_max_df_below_min_df_is_refused():
    with pytest.raises(DPTopicError, match="max_df.*below min_df"):
        Corpus.from_texts(TEXTS, min_df=3, max_df=2)
    with pytest.raises(DPTopicError, match="fraction"):
        df_range(1, 1.5, 10)
    with pytest.raises(DPTopicError, match="count"):
        df_range(0, None, 10)


def test_lowercase_switch():
    assert "paris" in vocab() and "Paris" not in vocab()
    cased = vocab(lowercase=False)
    assert "Paris" in cased and "paris" in cased
    assert Preprocessor(lowercase=False, stop_words=None).tokenize("Hello WORLD hello") == ["Hello", "WORLD", "hello"]


def test_max_vocab_ties_alphabetical():
    # token counts: apple 6, banana 3, cherry 2, paris 2, durian 1
    assert build_vocabulary([Preprocessor().tokenize(t) for t in TEXTS], max_vocab=3) == ["apple", "banana", "cherry"]


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


@pytest.mark.parametrize("text", [
    "read http://www.cbc.ca/cmp/rss/news.html today", "read https://example.org/a?b=c&d=e today",
    "read www.example.com/page today", "read ftp://files.example.net/pub today",
    "read editor.desk@news-room.example.co.uk today", "read mailto:someone@example.com today",
    "read @cbcnews today", "read (@some_handle) today",
])
def test_web_addresses_email_addresses_and_handles_are_dropped_by_default(text):
    from dptopic.corpus.preprocess import Preprocessor

    assert Preprocessor().tokenize(text) == ["read", "today"]
    assert len(Preprocessor(keep_urls=True).tokenize(text)) > 2      # kept when asked: their words are counted


def test_text_without_addresses_is_read_as_before_and_an_at_sign_between_words_is_no_handle():
    from dptopic.corpus.preprocess import Preprocessor

    assert Preprocessor().tokenize("Meet me at noon @ the station, caf\u00e9 open") == ["meet", "noon", "station",
                                                                                        "caf\u00e9", "open"]


def test_a_corpus_of_raw_texts_keeps_no_address_fragment_unless_told():
    from dptopic.corpus import Corpus

    texts = ["cbc news http://www.cbc.ca/cmp/rss health report", "health report www.cbc.ca/news today",
             "contact tips@cbc.ca or @cbcnews about the health report"]
    words = set(Corpus.from_texts(texts).vocabulary.words)
    assert not words & {"http", "www", "com", "cmp", "rss", "tips", "cbcnews"}, words
    kept = set(Corpus.from_texts(texts, keep_urls=True).vocabulary.words)
    assert {"http", "www", "cmp", "cbcnews"} <= kept


def test_the_general_word_list_holds_no_part_of_a_web_address():
    pytest.importorskip("wordfreq")
    from dptopic.corpus.preprocess import URL_FRAGMENTS
    from dptopic.corpus.wordlist import general_word_list

    words = set(general_word_list("en", 20_000))
    assert {"http", "www", "com"} <= URL_FRAGMENTS and not words & URL_FRAGMENTS
