"""A general word list as a public vocabulary, for a user who has no word list of their own domain.

The list is the ``wordfreq`` package's (Speer 2022; word frequencies of Wikipedia, subtitles, news, books and web
text, published with the package): public text that never saw the private corpus, so a vocabulary taken from it is
public and costs no privacy. With a document-level trainer the first noisy release then chooses among its words inside
the whole budget; measured against DP set union, which spends part of the budget to choose the words from the private
documents themselves, it gave more coherent topics on every corpus tried (``docs/document_dp.md``). ``wordfreq`` is an
optional dependency: ``pip install 'dptopic[wordlist]'``.
"""
from __future__ import annotations

import hashlib
import warnings
from pathlib import Path, PurePath

from ..errors import DPTopicError, ParameterError
from .files import broken_link, not_a_regular_file, read_text_file
from .preprocess import _CJK, URL_FRAGMENTS, Preprocessor, lower_word
from .vocabulary import Vocabulary

SPEC_PREFIX = "wordfreq:"
"""``vocabulary="wordfreq:LANG[:SIZE]"`` names this list (e.g. ``wordfreq:en:50000``)."""

DEFAULT_SIZE = 50_000


def general_word_list(language: str = "en", size: int = DEFAULT_SIZE, min_length: int = 3) -> list[str]:
    """The ``size`` most common words of ``language`` in ``wordfreq``'s list that dptopic's default tokeniser can count,
    most common first: lower case, ``min_length`` letters or more (a Korean syllable counts as two), not one of the
    English stop words it drops (whatever the language), and for Chinese and Japanese, whose text it reads as
    overlapping pairs of characters, words of two characters only. Fewer than ``size`` (with a warning) when the list
    runs out. The parts of web addresses it ranks as words (http, www, com: :data:`~dptopic.corpus.preprocess.URL_FRAGMENTS`)
    are left out, as the tokeniser drops web addresses. ``wordfreq`` case-folds its words: a Greek final sigma is restored (``σ`` at the end of a word is ``ς``),
    but a German ``ß`` cannot be (its ``gross`` never matches ``groß`` in text)."""
    if isinstance(size, bool) or not isinstance(size, int) or not 2 <= size <= 1_000_000:
        raise DPTopicError(f"invalid word-list size {size!r}: give a whole number of words from 2 to 1,000,000.")
    try:
        from wordfreq import available_languages, top_n_list  # optional: the 'wordlist' extra
    except ImportError:
        raise DPTopicError("the general word list needs the wordfreq package: pip install 'dptopic[wordlist]' (or"
                           " give a word list file of your own).") from None
    if language not in available_languages():
        raise DPTopicError(f"wordfreq has no word list for language {language!r}: give one of"
                           f" {', '.join(sorted(available_languages()))}.")
    # the tokeniser itself decides: a word is kept when reading it as text gives back that word (the English stop
    # words, digits, punctuation, a word too short, a CJK word of 3 characters read as pairs: never counted)
    pre = Preprocessor(min_length=min_length)
    n = 4 * size    # read more than asked, since some are filtered out; four times more again while the list has more
    while True:
        listed = top_n_list(language, n)
        words, seen = [], set()
        for w in listed:
            w = lower_word(w)
            if language == "el" and w.endswith("σ"):
                w = w[:-1] + "ς"
            if (w not in seen and w not in URL_FRAGMENTS and pre.tokenize(w) == [w]
                    and (len(w) == 2 or not _CJK.search(w))):
                seen.add(w)
                words.append(w)
                if len(words) == size:
                    return words
        if len(listed) < n:
            break
        n *= 4
    if len(words) < 2:
        raise DPTopicError(f"wordfreq's {language!r} list gave {len(words)} word(s) that the tokeniser counts: give a"
                           " word list file instead.")

    warnings.warn(f"wordfreq's {language!r} list holds {len(words):,} words that the tokeniser counts: the vocabulary"
                  f" has {len(words):,} words, not {size:,}.", UserWarning, stacklevel=2)
    return words


def parse_spec(spec: str) -> tuple[str, int] | None:
    """``(language, size)`` of a ``wordfreq:LANG[:SIZE]`` vocabulary spec, or None for anything else (a file)."""
    if not isinstance(spec, str) or not spec.startswith(SPEC_PREFIX):
        return None
    parts = spec[len(SPEC_PREFIX):].split(":")
    if len(parts) > 2 or not parts[0]:
        raise DPTopicError(f"invalid vocabulary {spec!r}: write wordfreq:LANG or wordfreq:LANG:SIZE, e.g."
                           " wordfreq:en:50000.")
    size = DEFAULT_SIZE
    if len(parts) == 2:
        try:
            size = int(parts[1])
        except ValueError:
            raise DPTopicError(f"invalid vocabulary {spec!r}: SIZE must be a whole number, e.g. wordfreq:en:50000.") \
                from None
    return parts[0], size


WORD_LIST_HASH = "sha256 of its words, one per line in its order, UTF-8, each line ending in a newline"
"""What :func:`word_list_record`'s ``sha256`` is the hash of: a clean word-list file (``sha256sum FILE``) gives it."""


def word_list_record(spec, words) -> dict:
    """What a privacy report records of the public word list a model was trained on (``vocabulary=``): its
    name (a file by its name only, its folders kept private, as the stop-word files are; a general list by its spec,
    e.g. ``wordfreq:en:50000``), its number of words and the sha256 of the words (:data:`WORD_LIST_HASH`), so that a
    reviewer can tell which list it was."""
    words = [str(w) for w in words]
    spec = str(spec)
    name = spec if spec.startswith(SPEC_PREFIX) else (PurePath(spec).name or spec)
    digest = hashlib.sha256("".join(w + "\n" for w in words).encode("utf-8")).hexdigest()
    return {"name": name, "n_words": len(words), "sha256": digest, "sha256_of": WORD_LIST_HASH}


def record_word_list(model, spec, words) -> None:
    """Record in ``model.privacy_`` which public word list it was trained on (:func:`word_list_record`); nothing
    when none was given (``spec`` None)."""
    if spec is None or not isinstance(getattr(model, "privacy_", None), dict):
        return
    model.privacy_["vocabulary_list"] = word_list_record(spec, getattr(words, "words", words))


def read_vocabulary(path):
    """A public vocabulary file (``vocabulary``): one word per line, blank lines and surrounding spaces ignored; or
    ``wordfreq:LANG[:SIZE]``, a general word list of that language (:mod:`dptopic.corpus.wordlist`)."""
    spec = parse_spec(str(path))
    if spec is not None:
        return Vocabulary(general_word_list(*spec))
    p = Path(path)
    if p.is_dir():
        raise ParameterError("{vocabulary} {path!r} is a folder: give the vocabulary file itself, a text file with"
                             " one word per line.", "vocabulary", str(path), path=str(path))
    if not p.is_file():
        odd = not_a_regular_file(p)
        if odd is not None:     # /dev/zero, a FIFO: named for what it is, not as missing
            raise ParameterError("{vocabulary} {path!r} {odd}: give a regular text file with one word per line.",
                                 "vocabulary", str(path), path=str(path), odd=odd)
        raise DPTopicError(f"vocabulary file {str(path)!r} not found{broken_link(p)}: give a text file with one word"
                           " per line.")
    # strict UTF-8: a Latin-1 'café' must not become another word
    words = [ln.strip() for ln in read_text_file(p, "a text file with one word per line").splitlines() if ln.strip()]
    if len(words) < 2:
        raise DPTopicError(f"vocabulary file {str(path)!r} has {len(words)} word(s): a vocabulary needs at least 2, one per line.")
    long = [w for w in words if len(w.split()) > 3]
    if len(long) * 2 > len(words):        # an n-gram vocabulary has a few spaces per line, not sentences
        eg = long[0] if len(long[0]) <= 60 else long[0][:57] + "..."
        raise DPTopicError(f"vocabulary file {str(path)!r} holds text, not words ({len(long)} of its {len(words)} lines"
                           f" have more than three words, e.g. {eg!r}): a vocabulary is one word per line; give the"
                           " documents as the corpus.")
    return Vocabulary(words)
