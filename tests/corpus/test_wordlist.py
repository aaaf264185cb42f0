"""Rough edges found walking through the general word list (``--vocabulary wordfreq:LANG[:SIZE]``) and the one-run
audit (``dptopic audit --design one-run``) as a new user."""

import builtins

import pytest

from dptopic.errors import DPTopicError


# ----------------------------------------------------------------- the general word list
def test_small_sizes_read_on_until_enough_words_are_kept():
    """wordfreq:en:2 gave 0 words: the 8 words read were all stop words or short."""
    pytest.importorskip("wordfreq")
    from dptopic.corpus import general_word_list

    words = general_word_list("en", 2)
    assert len(words) == 2 and words == general_word_list("en", 100)[:2]


@pytest.mark.parametrize("language", ["ja", "zh", "ko", "de", "el", "en"])
def test_every_word_kept_is_one_the_tokeniser_counts(language):
    """CJK words of 3+ characters (read as pairs), 2-syllable Korean words (kept by the tokeniser, dropped by the list),
    English stop words in other languages' lists, a Greek final sigma case-folded to σ: words never counted."""
    pytest.importorskip("wordfreq")
    from dptopic.corpus import general_word_list
    from dptopic.corpus.preprocess import Preprocessor

    pre = Preprocessor()
    words = general_word_list(language, 2000)
    assert len(words) == 2000
    assert all(pre.tokenize(w) == [w] for w in words)
    if language == "ko":
        assert any(len(w) == 2 for w in words)       # 사람 (person): two syllables, counted by the tokeniser
    if language == "el":
        assert "της" in words and not any(w.endswith("σ") for w in words)


def test_a_list_shorter_than_asked_warns():
    pytest.importorskip("wordfreq")
    from dptopic.corpus import general_word_list

    with pytest.warns(UserWarning, match="not 50,000"):
        words = general_word_list("ko", 50_000)
    assert 2 <= len(words) < 50_000


def test_general_word_list_keeps_what_a_built_vocabulary_would():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from dptopic.corpus import general_word_list

    words = general_word_list("en", 3000)
    assert len(words) == 3000 and len(set(words)) == 3000
    assert all(w.isalpha() and w == w.lower() and len(w) >= 3 for w in words)
    assert not set(words) & set(ENGLISH_STOP_WORDS)
    assert "the" not in words and "and" not in words
    # most common first: an everyday word comes long before a rare one
    assert "people" in words[:300] and words.index("people") < words.index("government")
    assert general_word_list("en", 100) == words[:100]


def test_without_wordfreq_the_error_says_what_to_install(monkeypatch):
    from dptopic.corpus import general_word_list

    real = builtins.__import__

    def no_wordfreq(name, *a, **k):
        if name == "wordfreq":
            raise ImportError("No module named 'wordfreq'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_wordfreq)
    with pytest.raises(DPTopicError) as e:
        general_word_list("en", 100)
    assert "pip install 'dptopic[wordlist]'" in str(e.value)
