"""Tokenisation and vocabulary construction (the setup of Zhao et al. 2020 Sec. VII-A, with the unstated details fixed as below).

* lowercase (unless ``lowercase=False``), tokens are runs of letters (any script, no digits), at least ``min_length``
  letters;
* a stop-word list removed: scikit-learn's English list by default, a file or a list of the user's, or none;
* vocabulary = the ``max_vocab`` most frequent words by total token count over
  the whole corpus (ties broken alphabetically), keeping words whose document
  frequency lies in ``[min_df, max_df]`` (each a count, or a fraction of the documents
  when given as a float, as in scikit-learn's ``CountVectorizer``);
* out-of-vocabulary tokens dropped; documents left empty dropped (counted).

The vocabulary chosen this way is a function of the data. For a private corpus, give a public
vocabulary or select one privately (:mod:`dptopic.corpus.private_vocabulary`).
"""
from __future__ import annotations

import numbers
import re
import unicodedata
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import DPTopicError, ParameterError, user_stacklevel
from ..kernels.tokenize import add_keys, ascii_letters, rehash, restrict_ids, term_document_counts, tokenize_ascii
from .files import not_a_regular_file
from .token_file import TokensOnDisk
from .token_file import blocks as token_blocks

# runs of letters, in any script ("café", "Zürich", "москва"), never digits or _; a zero-width non-joiner or joiner
# between two letters stays in the word (Persian "می‌خواهم" is one word)
_TOKEN = re.compile(r"[^\W\d_]+(?:[\u200c\u200d][^\W\d_]+)*")
# (after NFKC normalisation, so a decomposed "zu\u0308rich" is one word and a full-width "ｗｏｒｄ" is "word"; scripts
# that write vowels as combining marks, such as Devanagari, are split at the marks: tokenise such text yourself and
# pass lists of words)

_CJK = re.compile("[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]+")
"""Runs of Han ideographs, hiragana and katakana: Chinese and Japanese, written without spaces between words."""

_HANGUL = re.compile("[\uac00-\ud7a3]+")
"""Korean words: a Hangul syllable packs two or three letters, so it counts as two against ``min_length`` (a word of
two syllables is kept at the default of 3, one of four needs ``min_length`` 8 or less)."""


_WEB = re.compile(r"""(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>"']+"""          # web addresses
                  r"|\bmailto:[^\s<>\"']+"
                  r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"                          # e-mail addresses
                  r"|(?<![\w@])@\w+", re.IGNORECASE)                       # @handles
"""Web addresses (``http://``, ``https://``, ``ftp://``, ``www.``), e-mail addresses and ``@handles``: dropped from the
text before it is split into words unless ``keep_urls`` (their parts, "http", "www", "com", a host's name, are no words
of the text, yet would become frequent words of its topics)."""


_MAY_HOLD_WEB = re.compile(r"(?<!\S)[^\s@:.]*[@:.]\S*")
"""A run of characters other than white space (the whole run) that holds ``@``, ``:`` or ``.``: each match of
:data:`_WEB` lies inside one such run (none of its parts is white space, and each holds one of the three), and depends
on nothing outside it (its only looks around, a word boundary and "no word character or @ before", see white space
or the start of the text alike at the run's start). :func:`drop_web_addresses` runs :data:`_WEB` on these runs alone,
with the same result as on the whole text, at a fraction of the cost: the expression tries every position of a text
it is run on."""


def drop_web_addresses(text: str) -> str:
    """``text`` with its web addresses, e-mail addresses and @handles (:data:`_WEB`) replaced by a space."""
    if "@" not in text and "://" not in text and "www." not in text.lower() and "mailto:" not in text.lower():
        return text         # the common case: nothing to look for
    return _MAY_HOLD_WEB.sub(_drop_in_run, text)


def _drop_in_run(run: re.Match) -> str:
    return _WEB.sub(" ", run.group())


URL_FRAGMENTS = frozenset({"http", "https", "www", "com", "org", "edu", "html", "htm", "php", "asp", "aspx", "cgi",
                           "ftp", "href", "mailto", "jpg", "jpeg", "png", "gif"})
"""The parts of web addresses that a general word list holds as words (``wordfreq:en`` ranks http, com and www among its
20,000 most common): left out of a general word list (:mod:`dptopic.corpus.wordlist`)."""


DEFAULT_MAX_VOCAB = 1000
"""The vocabulary cap of a vocabulary built from text when none is given (``max_vocab=None``): the most frequent
1,000 words, in every front door (``Corpus.from_texts``, ``read_corpus``, ``load_corpus``, ``dptopic train``)."""

TOKENIZER_VERSION = 5
"""Bumped whenever :meth:`Preprocessor.tokenize` would split or fold some text differently (2: NFC composition before
the runs of letters; 3: NFKC instead of NFC, Chinese and Japanese read as overlapping character pairs; 4: Turkish
"İ" lower-cased to "i" rather than "i" and a combining dot, which split the word; soft hyphens removed and zero-width
(non-)joiners kept inside words, where they split them; a Korean syllable counted as two letters against
``min_length``; 5: web addresses, e-mail addresses and @handles dropped, unless ``keep_urls``).
ASCII text without web addresses, e-mail addresses or @handles is tokenised as by version 2. Saved in ``model.json``, so that text read into a model saved by another
version warns."""

SAME_ASCII_VERSIONS = (2, 3, 4)
"""Earlier versions that tokenised ASCII text exactly as this one does."""


def lower_word(text: str) -> str:
    """``str.lower`` but for Turkish dotted capital "İ", which becomes "i" (``lower`` gives "i" and a combining dot
    above, which is no letter and would split "İstanbul" into "i" and "stanbul")."""
    return text.replace("\u0130", "i").lower()


COUNT_MATRIX = "count matrix"
"""``tokenizer_["source"]`` of a model fitted on a count matrix that carried its words (a DataFrame's columns, a
vectorizer's): those words were not made by this tokeniser."""


TOKEN_LISTS = "token lists"
"""``tokenizer_["source"]`` of a model fitted on documents tokenised by the caller (lists of words, as gensim and
tomotopy take them): those words were not made by this tokeniser either."""


BAG_OF_WORDS_FILE = "bag-of-words file"
"""``tokenizer_["source"]`` of a model fitted on a bag-of-words file (UCI ``docword``/``vocab``, or a count matrix
made into a :class:`~dptopic.corpus.Corpus` by ``Corpus.from_bow``): its words came with the counts."""


def tokenizer_info(source: str | None = None, keep_urls: bool = False) -> dict:
    """What a saved model records about the tokeniser that made its words from text; ``source=COUNT_MATRIX`` when
    the words came with a count matrix instead, ``source=TOKEN_LISTS`` when they came as tokenised documents.
    ``keep_urls``: the text was read with the words of web addresses kept (recorded, and read so again: ``keeps_urls``)."""
    if source == TOKEN_LISTS:
        return {"version": TOKENIZER_VERSION, "source": TOKEN_LISTS,
                "tokens": "the tokens of the tokenised documents the model was fitted on (lists of words made by the"
                          " caller's tokeniser), not made by dptopic's; raw text is read with dptopic's, which may"
                          " split or fold them differently"}
    if source == BAG_OF_WORDS_FILE:
        return {"version": TOKENIZER_VERSION, "source": BAG_OF_WORDS_FILE,
                "tokens": "the words of the bag-of-words counts the model was fitted on (a UCI vocab file, or the"
                          " vocabulary given with a count matrix), not made by dptopic's tokeniser; raw text is read"
                          " with dptopic's, which may not produce some of them"}
    if source == COUNT_MATRIX:
        return {"version": TOKENIZER_VERSION, "source": COUNT_MATRIX,
                "tokens": "the columns of the count matrix the model was fitted on (a vectorizer's or a DataFrame's"
                          " words), not made by dptopic's tokeniser; raw text is read with dptopic's, which may not"
                          " produce some of them"}
    return {"version": TOKENIZER_VERSION, "tokens": "runs of letters of any script after NFKC normalisation, no digits"
            " or underscores, Chinese and Japanese as overlapping character pairs; web addresses, e-mail addresses and"
            " @handles " + ("KEPT (keep_urls): their words are counted" if keep_urls else "dropped")
            + "; lower-cased, stop words and short words dropped unless configured otherwise (a Korean syllable counts"
            " as two letters)", **({"keep_urls": True} if keep_urls else {})}


def keeps_urls(tokenizer) -> bool:
    """Whether a model's tokeniser record (``tokenizer_``) says its text was read with the words of web addresses,
    e-mail addresses and @handles kept: text read into the model (``transform``) is then read the same way."""
    t = tokenizer if isinstance(tokenizer, dict) else {}
    reading = t.get("reading") if isinstance(t.get("reading"), dict) else {}
    return t.get("keep_urls") is True or reading.get("keep_urls") is True


def warn_if_other_tokenizer(saved: dict | None, stacklevel: int = 2, words=None) -> None:
    """Raw text about to be read into a model whose words were made by another version of the tokeniser (``saved``:
    the model's ``tokenizer_``): some words may be split or folded differently, so say so. Token lists and counts are
    read exactly and need no warning. ``words`` (the model's vocabulary): a model whose words came with a count
    matrix warns only when some of them are not runs of letters, which the tokeniser cannot make."""
    source = (saved or {}).get("source")
    if source in (COUNT_MATRIX, TOKEN_LISTS, BAG_OF_WORDS_FILE):
        # dptopic's tokeniser makes runs of letters (read into a model in the vocabulary's own case): a word of
        # another kind is never counted from text
        odd = None if words is None else [w for w in words if not str(w).isalpha()]
        if odd == []:
            return
        example = f" (e.g. {', '.join(repr(w) for w in odd[:3])})" if odd else ""
        if source == TOKEN_LISTS:
            warnings.warn(f"this model's words{example} came from the tokenised documents it was fitted on, not from"
                          " dptopic's tokeniser, which reads this text (runs of letters): words it does not"
                          " make are never counted; pass the texts tokenised as the training documents were (lists of"
                          " words) to be exact.", UserWarning, stacklevel=user_stacklevel())
            return
        came = ("the bag-of-words counts it was fitted on (a UCI vocab file, or the vocabulary given with a count"
                " matrix)" if source == BAG_OF_WORDS_FILE else
                "the count matrix it was fitted on (a vectorizer's or a DataFrame's columns)")
        how = ("count the texts as the bag-of-words file was counted and pass the counts over the model's words (or"
               " the texts as lists of tokens)" if source == BAG_OF_WORDS_FILE else
               "count the texts with the same vectorizer (pipeline.transform(texts))")
        warnings.warn(f"this model's words{example} came with {came}, not from dptopic's tokeniser, which reads this text: words it does not"
                      f" make (numbers, words with digits or apostrophes) are never counted; {how} to be exact.",
                      UserWarning, stacklevel=user_stacklevel())
        return
    version = (saved or {}).get("version", TOKENIZER_VERSION)
    if version != TOKENIZER_VERSION:
        same_ascii = (" (ASCII text without web addresses, e-mail addresses or @handles is read as it was then;"
                      " other text may not be)" if version in SAME_ASCII_VERSIONS else "")
        warnings.warn(f"this model was saved with tokeniser version {version} and dptopic now reads text with version"
                      f" {TOKENIZER_VERSION}: some words may be split differently than in training{same_ascii}; pass"
                      " lists of tokens made as the training text was to be exact.", UserWarning,
                      stacklevel=user_stacklevel())


def stop_words() -> frozenset[str]:
    """scikit-learn's English stop-word list."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS  # scikit-learn takes seconds to import

    return frozenset(ENGLISH_STOP_WORDS)


def resolve_stop_words(spec) -> frozenset[str]:
    """The stop words named by ``spec``: ``"english"`` (scikit-learn's list), ``None`` or ``"none"`` (no
    list), a path to a text file with one word per line, ``"english+FILE"`` (both), or an iterable of words."""
    if isinstance(spec, str) and spec.lower().startswith("english+"):
        return stop_words() | resolve_stop_words(spec[len("english+"):])
    if spec is None or (isinstance(spec, str) and spec.lower() == "none"):
        return frozenset()
    if isinstance(spec, str) and spec.lower() == "english":
        return stop_words()
    if isinstance(spec, (str, Path)):
        if not str(spec).strip():
            raise DPTopicError("empty stop-word list name: give 'english', 'none' or a text file with one word per line.")
        p = Path(spec)
        if p.is_dir():
            raise DPTopicError(f"stop-word list {str(spec)!r} is a directory: give 'english', 'none' or a text file"
                               f" with one word per line.")
        if not p.is_file():
            odd = not_a_regular_file(p)
            if odd is not None:     # /dev/zero, a FIFO: named for what it is
                raise DPTopicError(f"stop-word list {str(spec)!r} {odd}: give 'english', 'none' or a regular text"
                                   " file with one word per line.")
            raise DPTopicError(f"unknown stop-word list {str(spec)!r}: give 'english', 'none' or an existing text file"
                               f" with one word per line.")
        from .files import read_text_file  # strict UTF-8; a binary file is refused, not read as words

        lines = read_text_file(p, "a text file with one stop word per line").splitlines()
        words = [w.strip() for w in lines if w.strip()]
        if not words:       # an empty file would silently replace the English list with nothing
            raise DPTopicError(f"stop-word file {str(spec)!r} holds no words: give one stop word per line, or 'none'"
                               " instead of the file for no stop words.")
        n, several = next(((n, w) for n, w in enumerate(lines, 1) if _SEVERAL_WORDS.search(w.strip())), (0, None))
        if several is not None:     # "the, and, of" is one stop word that no token ever equals: nothing is removed
            raise DPTopicError(f"stop-word file {str(spec)!r}: line {n} holds {several.strip()[:40]!r}, more than one"
                               " word: put one stop word per line.")
        return _normalised(words)
    try:
        words = frozenset(spec)
    except TypeError:
        raise DPTopicError(f"invalid stop_words={spec!r}: give 'english', None, a file path or a list of words.") from None
    if not all(isinstance(w, str) for w in words):
        raise DPTopicError("invalid stop_words: every stop word must be a string.")
    return _normalised(words)


_SEVERAL_WORDS = re.compile(r"[\s,;]")
"""What separates words in a line of a stop-word file that holds several (``the, and, of``)."""


def _normalised(words) -> frozenset[str]:
    """The stop words, each also in the NFKC form tokens are read in (soft hyphens removed, as in
    :meth:`Preprocessor.tokenize`): a word list saved with decomposed accents ("cafe" and a combining acute, as macOS
    writes file names) removes "café" from the text as the composed one does."""
    words = frozenset(words)
    return words | frozenset(unicodedata.normalize("NFKC", w).replace("\u00ad", "") for w in words if not w.isascii())


@dataclass(frozen=True)
class Preprocessor:
    """Turns a text into its list of tokens. ``stop_words`` as in :func:`resolve_stop_words`;
    ``remove_stop_words=False`` is the older spelling of ``stop_words=None``. With ``lowercase`` the stop words are
    lower-cased too, as the tokens they are matched against (``"The"`` removes ``the``). Web addresses, e-mail
    addresses and @handles are dropped before the text is split (:func:`drop_web_addresses`) unless ``keep_urls``."""

    min_length: int = 3
    remove_stop_words: bool = True
    lowercase: bool = True
    stop_words: object = "english"
    keep_urls: bool = False
    _stop: frozenset = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        stop = resolve_stop_words(self.stop_words) if self.remove_stop_words else frozenset()
        if self.lowercase is True:
            stop = frozenset(lower_word(w) for w in stop)
        object.__setattr__(self, "_stop", stop)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``, in its order (the module's rules)."""
        if not self.keep_urls:
            text = drop_web_addresses(text)
        return self._split(text)

    def _split(self, text: str) -> list[str]:
        """The tokens of ``text`` whose web addresses were dropped already (or are kept)."""
        sw, n = self._stop, self.min_length
        if text.isascii():                   # the common case: nothing to normalise
            return [t for t in _TOKEN.findall(text.lower() if self.lowercase else text) if len(t) >= n and t not in sw]
        text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")   # a soft hyphen is no break in a word
        out = []
        # lower(), not casefold(): folding would turn "straße" into "strasse" and a final "ς" into "σ", so words of a
        # public vocabulary spelt as written could never be counted
        for t in _TOKEN.findall(lower_word(text) if self.lowercase else text):
            if _CJK.search(t) is None:
                if (len(t) >= n or (_HANGUL.fullmatch(t) and 2 * len(t) >= n)) and t not in sw:
                    out.append(t)
                continue
            for part in _split_cjk(t):       # a Chinese or Japanese pair is kept whatever min_length (it is 2 long)
                if (len(part) >= n or _CJK.match(part)) and part not in sw:
                    out.append(part)
        return out


def no_words_message(n_docs: int, min_length: int = 3, stop_words: str = "english") -> str:
    """The empty-corpus error when the tokenizer itself kept no word of any document (before any vocabulary cut)."""
    sw = "" if str(stop_words) == "none" else ", and stop words are dropped (stop_words)"
    return (f"empty corpus: the tokenizer kept no word of the {n_docs} document(s): tokens are runs of"
            f" {min_length} or more letters, digits and '_' split words (so 'w1500' is read as 'w', which is too"
            f" short){sw}; see docs/preprocessing.md. Give text made of words, or tokenise it yourself and pass each"
            f" document as a list of words.")


def _split_cjk(token: str) -> list[str]:
    """A run of letters holding Chinese or Japanese characters, as its other letters' runs and overlapping pairs of
    the CJK characters (a lone character stays one token): "東京大学" gives "東京", "京大", "大学", the way search
    engines index text without spaces. A word segmenter (jieba, MeCab) gives better words: pass its tokens instead."""
    out, at = [], 0
    for m in _CJK.finditer(token):
        if token[at:m.start()].strip("\u200c\u200d"):       # a joiner beside a CJK character is no word of its own
            out.append(token[at:m.start()].strip("\u200c\u200d"))
        run = m.group()
        out.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
        at = m.end()
    if token[at:].strip("\u200c\u200d"):
        out.append(token[at:].strip("\u200c\u200d"))
    return out


def _df_bound(name: str, v, n_docs: int) -> int:
    """A document-frequency bound as a count: an int is a count, a float in (0, 1] a fraction of ``n_docs``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise DPTopicError(f"invalid {name}={v!r}: give a document count (integer >= 1) or a fraction in (0, 1].")
    if isinstance(v, numbers.Integral):
        if v < 1:
            raise DPTopicError(f"invalid {name}={v}: a document count must be >= 1 (or give a fraction in (0, 1]).")
        return int(v)
    if not 0 < v <= 1:
        raise DPTopicError(f"invalid {name}={v}: a fraction of the documents must lie in (0, 1] (or give an integer count).")
    return int(v * n_docs) if name == "max_df" else max(1, -int(-v * n_docs // 1))  # floor for max, ceil for min


def df_range(min_df, max_df, n_docs: int) -> tuple[int, int]:
    """``[lo, hi]`` document counts from ``min_df``/``max_df`` (counts or fractions); refuses an empty range."""
    lo = _df_bound("min_df", 1 if min_df is None else min_df, n_docs)
    hi = n_docs if max_df is None else _df_bound("max_df", max_df, n_docs)
    if hi < lo and max_df is None:      # no upper bound to raise
        raise ParameterError("{min_df=} keeps only words in at least {lo} documents, but the corpus has {n_docs}: no"
                             " word can pass; lower {min_df}.", "min_df", min_df, lo=lo, n_docs=n_docs)
    if hi < lo:
        raise ParameterError("{max_df=} keeps words in at most {hi} of {n_docs} documents, below {min_df=} ({lo}"
                             " documents): no word can pass; raise {max_df} or lower {min_df}.", "max_df", max_df,
                             values={"min_df": min_df}, hi=hi, lo=lo, n_docs=n_docs)
    return lo, hi


def build_vocabulary(token_lists: list[list[str]], max_vocab: int | None = 1000,
                     min_df=1, max_df=None) -> list[str]:
    """The ``max_vocab`` most frequent words (token count, ties alphabetical) with document frequency in
    ``[min_df, max_df]``."""
    lo, hi = df_range(min_df, max_df, len(token_lists))
    tf: Counter = Counter()
    df: Counter = Counter()
    for toks in token_lists:
        tf.update(toks)
        df.update(set(toks))
    cands = [w for w in tf if lo <= df[w] <= hi]
    cands.sort(key=lambda w: (-tf[w], w))
    if max_vocab is not None:
        cands = cands[:max_vocab]
    return cands


# ------------------------------------------------------------------ texts to token ids, in chunks

_WORD_OUTSIDE_ASCII = re.compile(r"[^\W\d_\x00-\x7f]|[\u200c\u200d]")
"""A character outside ASCII that :data:`_TOKEN` may put in a word: a letter, or a zero-width (non-)joiner. Every
other character outside ASCII (a dash, a bullet, a symbol, a digit of another script) is a word boundary to
:data:`_TOKEN`, like ``?``, which reads nothing of a character but whether it is a letter or a joiner: after NFKC and
lower-casing, a text without one splits as its ASCII encoding with ``?`` for each of those (:meth:`Tokenizer.read`)."""

_CHUNK_CHARS = 1 << 23
"""Characters of text read by one scan of :meth:`Tokenizer.read` (its buffers are a few times this)."""


@dataclass(frozen=True)
class TokenBags:
    """Documents as token ids: document ``d``'s tokens, in the order of its text, are ``ids[ptr[d]:ptr[d + 1]]``
    (``ptr``: int64, one more than the documents; ``ids``: int32), each the number of a word of the
    :class:`Tokenizer` that read them (``tokenizer.words[i]``)."""

    ptr: np.ndarray
    ids: np.ndarray

    @property
    def n_docs(self) -> int:
        """How many documents."""
        return len(self.ptr) - 1

    @property
    def n_tokens(self) -> int:
        """How many tokens, over all documents."""
        return len(self.ids)

    def lengths(self) -> np.ndarray:
        """Each document's number of tokens."""
        return np.diff(self.ptr)

    def restrict(self, remap) -> "TokenBags":
        """The same documents with each id ``k`` made ``remap[k]`` (an integer array over the tokenizer's words),
        the tokens made -1 left out: a vocabulary's cut of the bags, their order kept. Ids on disk
        (:class:`~dptopic.corpus.token_file.TokensOnDisk`) are cut a block of documents at a time into a new file."""
        remap = np.asarray(remap, dtype=np.int64)
        if not isinstance(self.ids, TokensOnDisk):
            ptr, ids = restrict_ids(self.ids, self.ptr, remap)
            return TokenBags(ptr, ids)
        lengths = np.empty(self.n_docs, np.int64)
        out = None
        for a, b, p, ids in token_blocks(self.ids, self.ptr):
            q, cut = restrict_ids(ids, p, remap)
            lengths[a:b] = np.diff(q)
            if out is None:
                out = TokensOnDisk(cut)
            else:
                out.append(cut)
        ptr = np.zeros(self.n_docs + 1, np.int64)
        np.cumsum(lengths, out=ptr[1:])
        return TokenBags(ptr, out if out is not None else np.zeros(0, np.int32))

    def counts(self, n_words: int) -> tuple[np.ndarray, np.ndarray]:
        """Each word's token count and document count over these documents (words ``0 .. n_words-1``), a block of
        documents at a time where the ids are on disk."""
        if not isinstance(self.ids, TokensOnDisk):
            return term_document_counts(self.ids, self.ptr, n_words)
        tf, df = None, None
        for _, _, p, ids in token_blocks(self.ids, self.ptr):
            t, d = term_document_counts(ids, p, n_words)
            tf, df = (t, d) if tf is None else (tf + t, df + d)
        return (tf, df) if tf is not None else term_document_counts(np.zeros(0, np.int32), self.ptr[:1], n_words)


class Tokenizer:
    """Reads chunks of texts into token ids without a Python object per token: the same tokens as
    :meth:`Preprocessor.tokenize` of each text, in the same order, as numbers of words in a table of its own.

    A text that is ASCII once its web addresses are dropped (:func:`drop_web_addresses`), or becomes ASCII when it
    is normalised as :meth:`Preprocessor.tokenize` normalises it (NFKC, soft hyphens removed, lower-cased) and holds
    no letter or joiner outside ASCII (:data:`_WORD_OUTSIDE_ASCII`; its dashes, bullets and symbols made ``?``), is
    scanned as bytes by a compiled kernel (:func:`dptopic.kernels.tokenize.tokenize_ascii`): its words are the runs
    of ASCII letters, exactly :data:`_TOKEN`'s matches in such a text. Any other text (a letter outside ASCII: an
    accent, another script) is read by :meth:`Preprocessor.tokenize`'s own code, and its words looked up in the same
    table. Large inputs are read a few megabytes at a time.

    ``vocabulary``: words given (a list, or a :class:`~dptopic.corpus.Vocabulary`); word ``i`` of the table is then
    the vocabulary's word ``i``. ``grow`` (default: True without a vocabulary, else False): every token read is kept
    and a word first seen is added to the table (``words`` grows; a document's ids are then its whole bag of tokens,
    before any vocabulary's cut: the ids below ``vocabulary_size`` are the vocabulary's words); without ``grow`` a
    token not in the vocabulary is dropped. Stop words are in the table too but never read as tokens.

    One tokenizer per process: a worker makes its own from the same settings, and a parent maps a worker's word
    numbers into its own table with :meth:`word_ids` of the worker's new :meth:`words_from`."""

    def __init__(self, preprocessor: Preprocessor | None = None, vocabulary=None, grow: bool | None = None):
        self.preprocessor = Preprocessor() if preprocessor is None else preprocessor
        words = [] if vocabulary is None else [str(w) for w in vocabulary]
        self.grow = vocabulary is None if grow is None else bool(grow)
        self.vocabulary_size = len(words)
        self._cls = ascii_letters(bool(self.preprocessor.lowercase))
        self._n = 0
        self._slots = np.full(1 << 12, -1, np.int32)
        self._hash = np.zeros(1 << 11, np.int64)
        self._ptr = np.zeros((1 << 11) + 1, np.int64)
        self._bytes = np.zeros(1 << 16, np.uint8)
        self._drop = np.zeros(1 << 11, np.uint8)
        self._words: list[str] = []
        ids = self._add(words, grow=True, mark_drop=False)
        if len(set(words)) != len(words) or not np.array_equal(ids, np.arange(len(words))):
            raise DPTopicError("the vocabulary holds a word more than once: give each word once.")
        self._add(sorted(self.preprocessor._stop), grow=True, mark_drop=True)

    # ---------------------------------------------------------------- the table
    @property
    def n_words(self) -> int:
        """How many words the table holds (the vocabulary's, the stop words, and every word read since)."""
        return self._n

    @property
    def words(self) -> list[str]:
        """The table's words, in the order of their numbers (the ids :meth:`read` gives)."""
        if len(self._words) < self._n:
            self._words.extend(self.words_from(len(self._words)))
        return self._words

    def words_from(self, start: int) -> list[str]:
        """The words numbered ``start`` and after: those a worker sends its parent after each chunk."""
        have = self._words
        old = have[start:self._n]
        at = start + len(old)
        if at >= self._n:
            return old
        ptr = self._ptr[at:self._n + 1].tolist()
        raw = self._bytes[ptr[0]:ptr[-1]].tobytes()
        a0 = ptr[0]
        return old + [raw[a - a0:b - a0].decode("utf-8", "surrogatepass") for a, b in zip(ptr[:-1], ptr[1:])]

    def _room(self, keys: int, nbytes: int) -> None:
        """Make the table hold ``keys`` more words of ``nbytes`` more bytes (at most half its slots used)."""
        need = self._n + keys + 1
        if need > len(self._hash) or 2 * need > len(self._slots):
            cap = 1 << max(need - 1, 1).bit_length()
            for name in ("_hash", "_drop"):
                old = getattr(self, name)
                setattr(self, name, np.concatenate([old[:self._n], np.zeros(cap - self._n, old.dtype)]))
            ptr = np.zeros(cap + 1, np.int64)
            ptr[:self._n + 1] = self._ptr[:self._n + 1]
            self._ptr = ptr
            self._slots = np.full(2 * cap, -1, np.int32)
            rehash(self._slots, self._hash, self._n)
        used = int(self._ptr[self._n])
        if used + nbytes > len(self._bytes):
            grown = np.zeros(max(2 * len(self._bytes), used + nbytes), np.uint8)
            grown[:used] = self._bytes[:used]
            self._bytes = grown

    def _add(self, words, grow: bool, mark_drop: bool):
        """The numbers of ``words`` (strings) in the table, added when ``grow`` (-1: not there, or a stop word)."""
        encoded = [w.encode("utf-8", "surrogatepass") for w in words]
        ptr = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, encoded), np.int64, count=len(encoded)), out=ptr[1:])
        buf = np.frombuffer(b"".join(encoded), np.uint8)
        if grow:
            self._room(len(encoded), len(buf))
        out = np.empty(len(encoded), np.int64)
        self._n = add_keys(buf, ptr, self._slots, self._hash, self._ptr, self._bytes, self._drop, self._n, grow,
                           mark_drop, out)
        return out

    def word_ids(self, words, grow: bool | None = None):
        """The numbers of ``words`` in this table (int64; -1 for a word not there or a stop word); words not there
        are added when ``grow`` (default: this tokenizer's). How a parent maps a worker's words into its own."""
        return self._add(list(words), self.grow if grow is None else bool(grow), False)

    # ---------------------------------------------------------------- reading
    def read(self, texts) -> TokenBags:
        """The token ids of each text of ``texts`` (a list of strings): a :class:`TokenBags`, the tokens of each
        text exactly :meth:`Preprocessor.tokenize`'s, each the number of its word (``words``). Large inputs are
        scanned a few megabytes at a time."""
        if not isinstance(texts, list):
            texts = list(texts)
        ends = np.cumsum(np.fromiter(map(len, texts), np.int64, count=len(texts)))
        parts, start = [], 0
        while True:             # chunks of _CHUNK_CHARS characters or a little more (a longer text, alone)
            stop = min(len(texts), 1 + int(np.searchsorted(ends, (ends[start - 1] if start else 0) + _CHUNK_CHARS)))
            parts.append(self._read_chunk(texts[start:stop]))
            start = stop
            if start >= len(texts):
                return concatenate_bags(parts)

    def tokens(self, texts) -> list[list[str]]:
        """Each text's tokens as strings (:meth:`read`, its ids made words): a check beside
        :meth:`Preprocessor.tokenize`, not a fast path."""
        bags = self.read(texts)
        words = self.words
        ids = bags.ids.tolist()
        return [[words[i] for i in ids[a:b]] for a, b in zip(bags.ptr[:-1].tolist(), bags.ptr[1:].tolist())]

    def _scannable(self, text: str) -> tuple[str | None, str]:
        """``text`` as the kernel may scan it (ASCII, splitting into the same tokens), or None if it cannot; and
        ``text`` with its web addresses dropped (unless kept), which :meth:`Preprocessor._split` splits."""
        pre = self.preprocessor
        if not pre.keep_urls:
            text = drop_web_addresses(text)
        if text.isascii():
            return text, text
        norm = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
        if pre.lowercase:
            norm = lower_word(norm)
        if _WORD_OUTSIDE_ASCII.search(norm) is not None:
            return None, text
        return norm.encode("ascii", "replace").decode("ascii"), text       # each other character a boundary, "?"

    def _read_chunk(self, texts: list, web_dropped: bool = False) -> TokenBags:
        """:meth:`read` of a chunk of texts (``web_dropped``: their web addresses were dropped already)."""
        pre = self.preprocessor
        D = len(texts)
        scan = texts
        check_web = np.full(D, not (pre.keep_urls or web_dropped), np.uint8)
        apart: dict = {}                    # the texts read by Preprocessor._split: their tokens, by document
        joined = "".join(scan)
        if not joined.isascii():            # O(1): Python knows whether a string is ASCII
            scan, exact = list(texts), {}
            for d, t in enumerate(texts):
                if not t.isascii():
                    s, dropped = self._scannable(t)
                    if s is None:
                        exact[d] = dropped
                    scan[d] = s or ""
                    check_web[d] = 0        # dropped already: once only, before NFKC, as tokenize does
            joined = "".join(scan)
            words = [pre._split(t) for t in exact.values()]
            found = self._add([w for ws in words for w in ws], self.grow, False)
            cuts = np.cumsum([0] + [len(ws) for ws in words])
            for i, d in enumerate(exact):
                ids = found[cuts[i]:cuts[i + 1]]
                apart[d] = ids[ids >= 0].astype(np.int32)          # without the words outside the vocabulary
        buf = np.frombuffer(joined.encode("ascii"), np.uint8)
        lengths = np.fromiter(map(len, scan), np.int64, count=D)
        ends = np.cumsum(lengths)
        starts = ends - lengths
        m = pre.min_length
        out = np.empty(int(((lengths + 1) // (m + 1)).sum()), np.int32)
        out_ptr = np.zeros(D + 1, np.int64)
        web = np.zeros(D, np.uint8)
        d, n_out = 0, 0
        while d < D:
            d, self._n, n_out = tokenize_ascii(buf, starts, ends, d, self._cls, m, self._slots, self._hash, self._ptr,
                                               self._bytes, self._drop, self._n, self.grow, out, out_ptr, n_out,
                                               check_web, web)
            if d < D:                       # the table is full: make room for this document's words, then go on
                size = int(lengths[d])
                self._room((size + 1) // (m + 1) + 1, size)
        hinted = np.flatnonzero(web).tolist()
        if hinted:                          # drop_web_addresses' own check and expression, then read again
            again = self._read_chunk([drop_web_addresses(scan[d]) for d in hinted], web_dropped=True)
            for i, d in enumerate(hinted):
                apart[d] = again.ids[again.ptr[i]:again.ptr[i + 1]]
        if not apart:
            return TokenBags(out_ptr, out[:n_out].copy())
        lengths = np.diff(out_ptr)          # the scan's (none for a document read apart), then those read apart
        for d, ids in apart.items():
            lengths[d] = len(ids)
        ptr = np.zeros(D + 1, np.int64)
        np.cumsum(lengths, out=ptr[1:])
        ids = np.empty(int(ptr[-1]), np.int32)
        ids[np.arange(n_out) + np.repeat(ptr[:-1] - out_ptr[:-1], np.diff(out_ptr))] = out[:n_out]
        for d, part in apart.items():
            ids[ptr[d]:ptr[d + 1]] = part
        return TokenBags(ptr, ids)


def concatenate_bags(parts) -> TokenBags:
    """One :class:`TokenBags` of the documents of ``parts`` (token bags of the same tokenizer), in order."""
    parts = list(parts)
    if len(parts) == 1:
        return parts[0]
    ptr = np.zeros(sum(p.n_docs for p in parts) + 1, np.int64)
    np.cumsum(np.concatenate([np.diff(p.ptr) for p in parts]), out=ptr[1:])
    return TokenBags(ptr, np.concatenate([p.ids for p in parts]).astype(np.int32, copy=False))


def vocabulary_from_counts(words, tf, df, n_docs: int, max_vocab: int | None = 1000, min_df=1,
                           max_df=None) -> tuple[list[str], int]:
    """:func:`build_vocabulary`'s words from each word's token count ``tf`` and document count ``df`` over
    ``n_docs`` documents (``words[i]``'s counts are ``tf[i]`` and ``df[i]``; a word of count 0 was never read):
    the ``max_vocab`` most frequent (ties alphabetical) of those whose document count lies in ``[min_df, max_df]``,
    and how many words passed that test."""
    lo, hi = df_range(min_df, max_df, n_docs)
    tf, df = np.asarray(tf), np.asarray(df)
    cand = np.flatnonzero((tf > 0) & (df >= lo) & (df <= hi))
    n = len(cand)
    if max_vocab is not None and n > max_vocab:         # only the words that can be among the first max_vocab
        kth = np.partition(tf[cand], n - max_vocab)[n - max_vocab]
        cand = cand[tf[cand] >= kth]
    counts = tf.tolist()
    order = sorted(cand.tolist(), key=lambda k: (-counts[k], words[k]))
    if max_vocab is not None:
        order = order[:max_vocab]
    return [words[k] for k in order], n
