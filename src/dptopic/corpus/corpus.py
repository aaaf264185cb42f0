"""The corpus: documents as CSR token arrays plus a vocabulary.

``doc_ptr`` (int64, length ``D+1``) and ``word_ids`` (int32, length ``N``): the
tokens of document ``d`` are ``word_ids[doc_ptr[d]:doc_ptr[d+1]]``.
"""
from __future__ import annotations

import contextlib
import contextvars
import csv
import gzip
import io
import json
import math
import os
import re
import sys
import unicodedata
import warnings
import zlib
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .._io import atomic_write_bytes, load_json, pairs_noting_repeats
from .._validation import Int, IsNone, validate_value
from ..kernels._bow import segment_sums
from ..errors import DPTopicError, InputTypeError
from .preprocess import Preprocessor, build_vocabulary, df_range, lower_word, resolve_stop_words
from .vocabulary import Vocabulary


def _word_hashes(words, key: int) -> np.ndarray:
    """A keyed 64-bit hash of each word (BLAKE2b), so a document's hash is the sum over its tokens."""
    import hashlib

    k = str(key).encode()
    return np.array([int.from_bytes(hashlib.blake2b(w.encode("utf-8"), digest_size=8, key=k).digest(), "little")
                     for w in words], dtype=np.uint64)


def _mix64(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: every bit of a sum of word hashes spreads over the whole output."""
    h = np.asarray(h, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


MAX_TOKENS = 2**31 - 1
"""Most tokens a corpus holds (token positions are indexed by int32 in the kernels' callers)."""
CORPUS_FORMAT_VERSION = 1   # of the .npz header that Corpus.save writes and Corpus.load reads


def _index_array(name: str, x, dtype) -> np.ndarray:
    """A 1-D integer array; float input is accepted only when every value is a whole number (never truncated)."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.ndim != 1 or a.dtype.kind not in "biuf" or (a.dtype.kind == "f" and not (
            np.all(np.isfinite(a)) and np.all(a == np.round(a)))):
        raise DPTopicError(f"corrupt corpus: {name} must be a 1-D array of whole numbers (got {a.dtype}, {a.ndim}-D).")
    if a.size and (a.min() < np.iinfo(dtype).min or a.max() > np.iinfo(dtype).max):
        raise DPTopicError(f"corrupt corpus: {name} has values outside the {np.dtype(dtype).name} range.")
    return np.ascontiguousarray(a, dtype=dtype)


def _names(name: str, values) -> list[str] | None:
    """Labels or document ids as strings, one per document; a missing one (None) is refused rather than written as
    'None', and so is a single string (which would be read letter by letter)."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)):
        raise DPTopicError(f"{name} must be a list with one entry per document, not a single string.")
    try:
        values = list(values)
    except TypeError:
        raise DPTopicError(f"{name} must be a list with one entry per document, not a {type(values).__name__}.") from None
    bad = next((i for i, x in enumerate(values) if x is None), None)
    if bad is not None:
        raise DPTopicError(f"{name}[{bad}] is None: give every document a {name[:-1].replace('_', ' ')}"
                           f" (or pass {name}=None for none).")
    _check_entries(name, values, blank=False)
    return [str(x) for x in values]


def _check_entries(name: str, values: list, blank: bool = True) -> None:
    """Refuse a label or document id that no loader reads as one: a missing value (NaN of any float type, pandas'
    NA, a NaT; ``blank``: also a string of spaces or invisible characters only), a list, tuple, dict, set or array
    (one value per document: what a JSONL loader refuses too), bytes, an infinite number, or a string holding a lone
    surrogate (which no UTF-8 output can hold: transform's rows of ids would fail to be written). None is for the
    caller to name. A saved corpus's strings pass (``blank=False``: its '' labels were read before this rule)."""
    if (all(isinstance(x, str) for x in values) and _is_utf8("".join(values))
            and not (blank and any(map(_blank, values)))):
        return      # strings, the common case (a saved corpus's, a subset's): one quick pass
    what = "label" if name == "labels" else "id"
    for i, x in enumerate(values):
        if x is None:
            continue
        if isinstance(x, (list, tuple, dict, set, frozenset, np.ndarray)):
            raise DPTopicError(f"{name}[{i}] is a {type(x).__name__}, not one {what}: {name} must be strings or"
                               " numbers, one per document.")
        if isinstance(x, (bytes, bytearray)):
            raise DPTopicError(f"{name}[{i}] is {type(x).__name__} ({bytes(x)[:20]!r}), not text: decode the {name} to"
                               " strings first (for example [x.decode('utf-8') for x in " + name + "]).")
        if _missing_label(x) and (blank or not isinstance(x, str)):
            one = "a label" if what == "label" else "an id"
            raise DPTopicError(f"{name}[{i}] is {str(x)!r}, no {what}: give every document {one} or drop the"
                               f" {'unlabelled' if what == 'label' else 'unnamed'} ones (or pass {name}=None for"
                               " none).")
        if isinstance(x, (float, np.floating)) and math.isinf(x):
            raise DPTopicError(f"{name}[{i}] is {x!r}, not a finite number: {name} must be strings or finite numbers.")
        if isinstance(x, str) and not _is_utf8(x):
            raise DPTopicError(f"{name}[{i}] holds a lone surrogate ({x[:20]!r}, half of a character), which no UTF-8"
                               f" output can hold: fix the {what} (a file name read with os.fsdecode? decode its bytes"
                               " as UTF-8).")


def check_user_ids(values, n_docs: int, where: str = "user_ids") -> list[str]:
    """Each document's person, as given (``user_ids=``): one non-blank string per document, refused in one line
    otherwise (a number is refused too, so that 7 and '7' cannot name two people)."""
    values = _sequence(where, values)
    if values is None or isinstance(values, (str, bytes)):
        raise DPTopicError(f"{where} must be a list of strings, one per document (the person who wrote it).")
    if len(values) != n_docs:
        raise DPTopicError(f"{where} has {len(values)} entries but there are {n_docs} documents: give one user id per"
                           " document.")
    for i, u in enumerate(values):
        if u is None or (isinstance(u, float) and u != u):
            raise DPTopicError(f"document {i} has no user id: give every document the id of the person who wrote it.")
        if not isinstance(u, str):
            raise DPTopicError(f"the user id of document {i} is {type(u).__name__} {str(u)[:40]!r}, not a string: give"
                               " user ids as strings (str(id)), so that 7 and '7' cannot name two people.")
        if _blank(u):
            raise DPTopicError(f"document {i} has a blank user id: give every document the id of the person who wrote"
                               " it.")
    return [str(u) for u in values]


def _sequence(name: str, values):
    """``labels=`` or ``doc_ids=`` as a list in document order; None stays None, and a single string is left for
    :func:`_names` to refuse. A dict or set (no document order), a table or 2-D array (a DataFrame's ``df[['label']]``)
    or a NumPy scalar is refused in one line, never read as its keys, its column names or one entry per row."""
    if values is None or isinstance(values, (str, bytes)):
        return values
    kind = type(values).__name__
    if isinstance(values, (dict, set, frozenset)) or (hasattr(values, "keys") and not hasattr(values, "ndim")):
        raise DPTopicError(f"{name} must be a sequence in document order (a list, tuple, array or Series), not a"
                           f" {kind}, which has none: pass one entry per document, in the documents' order.")
    ndim = getattr(values, "ndim", 1)
    if ndim == 0:       # a NumPy scalar or 0-D array: iterating it raised a TypeError
        raise DPTopicError(f"{name} must be a list with one entry per document, not a single value (a 0-D {kind}).")
    if ndim != 1:
        how = "df['label'] rather than df[['label']]" if hasattr(values, "columns") else "arr.ravel() for one column"
        raise DPTopicError(f"{name} must be one-dimensional, one entry per document, but the {kind} given is"
                           f" {ndim}-D{f' (shape {values.shape})' if hasattr(values, 'shape') else ''}: pass one column"
                           f" ({how}).")
    try:
        return list(values)
    except TypeError:
        raise DPTopicError(f"{name} must be a list with one entry per document, not a {kind}.") from None


def _json_kind(v) -> str:
    return {dict: "an object", list: "a list", type(None): "null", bool: "true/false"}.get(type(v), "a number")


def _missing_label(v) -> bool:
    """A label that is not there: None, NaN (of any float type: Python's, NumPy's float32, a Decimal), pandas' NA, a
    NaT, or a string that is empty or holds only spaces and invisible characters (controls such as NUL, a zero-width
    space, a stray byte-order mark). Every loader that reads labels refuses one, rather than read it as a class of its
    own ('' or 'nan')."""
    if v is None or type(v).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(v, str):
        return _blank(v)
    if isinstance(v, (np.datetime64, np.timedelta64)):
        return bool(np.isnat(v))
    if isinstance(v, (list, tuple, dict, set, frozenset, np.ndarray, bytes, bytearray)):
        return False
    try:
        return bool(v != v)     # NaN is the one value unequal to itself
    except Exception:           # a signalling Decimal NaN, or a type whose comparison fails
        return type(v).__name__ == "Decimal" and v.is_nan()


def _blank(s: str) -> bool:
    """Whether ``s`` shows nothing: empty, or spaces, control characters and invisible format characters only."""
    if s and s[0].isprintable() and not s[0].isspace():      # a visible first character: the common case
        return False
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in s)


def _missing_label_fix(param: str) -> str:
    """How to mend a document without a label, for the error that refuses it (``param``: the loader's setting)."""
    return (f"fill in every document's label or drop the unlabelled ones, or read no labels (leave out {param}; CLI:"
            " --label-field)")


def _stop_words_name(spec) -> str:
    """A stop-word setting as text: ``"english"``, ``"none"``, a file's name (without its folders, which may name
    people or clients: a saved model is meant to be shared), or how many words a list held."""
    if spec is None:
        return "none"
    if isinstance(spec, (str, os.PathLike)):
        return "+".join(part if part.lower() in ("english", "none") else Path(part).name
                        for part in str(spec).split("+"))
    try:
        return f"a list of {len(set(spec))} words"
    except TypeError:
        return "a list of words"


def reading_of(stop_words, lowercase: bool, min_length: int) -> dict:
    """How raw text was read into words, as a corpus's metadata and a fitted model's ``tokenizer_["reading"]``
    record it: the stop words removed (``"english"``, ``"none"``, a file, or a list's size), the case folding and the
    shortest word kept. Settings, not data: they say how to read more text the same way."""
    return {"stop_words": _stop_words_name(stop_words), "lowercase": bool(lowercase), "min_length": int(min_length)}


def _cuts(max_vocab, min_df, max_df) -> dict:
    """The settings that chose a vocabulary from the data (:data:`VOCABULARY_CUTS`; None: no limit)."""
    as_number = lambda v: None if v is None else (float(v) if isinstance(v, (float, np.floating)) else int(v))  # noqa: E731
    return {"max_vocab": as_number(max_vocab), "min_df": as_number(min_df), "max_df": as_number(max_df)}


_TOKENISING_PROGRESS = contextvars.ContextVar("dptopic_tokenising_progress", default=False)
PROGRESS_MIN_DOCS = 20_000
"""Fewest documents for which :func:`tokenising_progress` shows a bar (a smaller input is read in a moment)."""


@contextlib.contextmanager
def tokenising_progress():
    """Within this block, :meth:`Corpus.from_texts` shows a progress bar on stderr while it tokenises a large input
    (``dptopic corpus prepare`` and ``corpus info``); the Python API stays silent elsewhere."""
    token = _TOKENISING_PROGRESS.set(True)
    try:
        yield
    finally:
        _TOKENISING_PROGRESS.reset(token)


def _tokenize_all(pre, texts) -> list:
    """``pre.tokenize`` of every text, with a progress bar inside :func:`tokenising_progress` for a large input."""
    if not _TOKENISING_PROGRESS.get() or len(texts) < PROGRESS_MIN_DOCS:
        return [pre.tokenize(t) for t in texts]
    from .._progress import progress_bar

    out: list = []
    step = max(1000, len(texts) // 200)
    with progress_bar(len(texts), "tokenising", transient=True) as bar:     # no line left behind (stderr stays
        # the command's own: a one-line error after it stays one line)
        for start in range(0, len(texts), step):
            out.extend(pre.tokenize(t) for t in texts[start:start + step])
            bar.advance(min(step, len(texts) - start))
    return out


def _seed_generator(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def no_word_of_vocabulary(n_docs: int, vocabulary, where: str = "empty corpus", whose: str = "the given") -> str:
    """The refusal of documents none of which has a word of the vocabulary they are read in (a model's or a given
    one): one message wherever documents are refused for it, after ``where`` (the command line's flag and file)."""
    return (f"{where}: none of the {n_docs} documents has a word of {whose} vocabulary ({len(vocabulary)} words,"
            f" e.g. {', '.join(_short_repr(w) for w in vocabulary.words[:3])}): give documents in the vocabulary's"
            " language and domain.")


def _short_repr(word, limit: int = 40) -> str:
    """``repr`` of a word, cut to ``limit`` characters: an example in a message, not a dump of a line of text."""
    w = str(word)
    return repr(w if len(w) <= limit else w[:limit - 3] + "...")


def _warn_unreachable_words(words, pre) -> None:
    """Warn when words of a given vocabulary can never be counted in text read by ``pre``: a stop word, a word shorter
    than its ``min_length``, or one that does not tokenise to itself (upper case under lower-casing, punctuation,
    spaces). They stay in the vocabulary (and in a model's topics) without a single count."""
    import warnings

    import unicodedata

    stop, bad, unnormal = [], [], []
    for w in words:
        w = str(w)
        if w in pre._stop:
            stop.append(w)
        elif pre.tokenize(w) != [w]:
            # a decomposed accent or a ligature: text is read in NFKC form, where this spelling never occurs
            (unnormal if pre.tokenize(unicodedata.normalize("NFKC", w)) == [unicodedata.normalize("NFKC", w)]
             else bad).append(w)
    if stop or bad or unnormal:
        parts = []
        if unnormal:
            parts.append(f"{len(unnormal)} not in Unicode NFKC form ({', '.join(map(_short_repr, unnormal[:3]))}"
                         f"{', ...' if len(unnormal) > 3 else ''}: a decomposed accent, a ligature or full-width"
                         " letters, while text is read in NFKC form, where 'cafe' and a combining accent is 'café':"
                         " normalise the word list, e.g. with unicodedata.normalize('NFKC', word))")
        if stop:
            parts.append(f"{len(stop)} stop word(s) ({', '.join(map(_short_repr, stop[:3]))}{', ...' if len(stop) > 3 else ''}:"
                         " pass stop_words=None or --stop-words none to count them)")
        if bad:
            parts.append(f"{len(bad)} that the tokeniser never produces ({', '.join(map(_short_repr, bad[:3]))}"
                         f"{', ...' if len(bad) > 3 else ''}: upper case, punctuation, digits, spaces or fewer than"
                         f" {pre.min_length} letters)")
        warnings.warn("the given vocabulary holds words that are never counted in text read with these options: "
                      + "; ".join(parts) + ". They stay in the vocabulary without counts.", UserWarning, stacklevel=3)


VOCABULARY_SOURCE = "vocabulary_source"    # metadata key: "supplied" (the caller's word list) or "data"
TOKENS_SOURCE = "tokens_source"   # metadata key: set when the words came with counts, not from dptopic's tokeniser
READING = "reading"     # metadata key: how raw text was tokenised (lowercase, stop words, min_length); see reading_of
# metadata key: the max_vocab, min_df and max_df that chose a vocabulary from the data (settings, not data), and under
# "pruned" those of a later prune
VOCABULARY_CUTS = "vocabulary_cuts"


NO_CAP = 2**31 - 1
"""A ``max_vocab`` at least this large keeps every word (the CLI's ``--max-vocab all``)."""


def data_cut_of(corpus) -> str | None:
    """The recorded cut, if any, that chose ``corpus``'s words by its own documents' counts (at build time or in a
    later prune), as a phrase for an error; None when none did or none is recorded. DP set union needs its candidate
    words to be each document's own, whatever the neighbouring corpus: a word cap binds on some corpus one document
    away even where it left nothing out of this one (a document with new words pushes the rarest out), and document
    frequency bounds move with one document too. So every finite ``max_vocab``, an integer ``min_df`` above 1, any
    fractional ``min_df`` above 0 (its count grows with the corpus) and any ``max_df`` but a fraction of at least 1
    counts."""
    if corpus.metadata.get(VOCABULARY_SOURCE) == "supplied":
        return None                                     # the caller's word list, not chosen from these counts
    cuts = corpus.metadata.get(VOCABULARY_CUTS)
    if not isinstance(cuts, dict):
        return None
    found = []
    for where, c in (("built with", cuts), ("pruned with", cuts.get("pruned"))):
        if not isinstance(c, dict):
            continue
        max_vocab, min_df, max_df = c.get("max_vocab"), c.get("min_df"), c.get("max_df")
        if max_vocab is not None and max_vocab < NO_CAP:
            found.append(f"{where} max_vocab={max_vocab}")
        if min_df is not None and (min_df > 1 if isinstance(min_df, int) else min_df > 0):
            found.append(f"{where} min_df={min_df}")
        if max_df is not None and (isinstance(max_df, int) or max_df < 1):
            found.append(f"{where} max_df={max_df}")
    return ", ".join(found) or None


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


class Corpus:
    """A tokenised corpus.

    Parameters
    ----------
    doc_ptr, word_ids : CSR arrays (``word_ids`` are vocabulary ids).
    vocabulary : :class:`Vocabulary` or list of words.
    labels : optional per-document labels (strings).
    doc_ids : optional per-document names.
    user_ids : optional per-document person (strings), for a guarantee per person (``unit="user"``).
    """

    def __init__(self, doc_ptr, word_ids, vocabulary, labels=None, doc_ids=None,
                 n_empty_dropped: int = 0, metadata: dict | None = None, user_ids=None):
        self.doc_ptr = _index_array("doc_ptr", doc_ptr, np.int64)
        self.word_ids = _index_array("word_ids", word_ids, np.int32)
        self.vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        self.labels = _names("labels", labels)
        self.doc_ids = _names("doc_ids", doc_ids)
        self.n_empty_dropped = int(n_empty_dropped)
        self.metadata = dict(metadata or {})
        self._vocabulary_cut = None     # {"max_vocab", "words", "tokens_read"}: a max_vocab that cut words (from_texts)
        self._check()
        self.user_ids = None if user_ids is None else check_user_ids(user_ids, self.n_docs)

    # ------------------------------------------------------------------ basics
    def _check(self) -> None:
        p, w, V = self.doc_ptr, self.word_ids, len(self.vocabulary)
        if p.ndim != 1 or len(p) < 1 or p[0] != 0 or p[-1] != len(w) or np.any(np.diff(p) < 0):
            raise DPTopicError("corrupt corpus: doc_ptr must start at 0, be non-decreasing and end at the number of tokens.")
        if len(w) and (w.min() < 0 or w.max() >= V):
            bad = int(w.min()) if w.min() < 0 else int(w.max())
            raise DPTopicError(f"unknown word id {bad}: word ids must lie in [0, {V}) for a vocabulary of {V} words.")
        D = len(p) - 1
        for name, vals in (("labels", self.labels), ("doc_ids", self.doc_ids)):
            if vals is not None and len(vals) != D:
                raise DPTopicError(f"{name} has {len(vals)} entries but the corpus has {D} documents: give one per document.")

    @property
    def n_docs(self) -> int:
        return len(self.doc_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.word_ids)

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    @property
    def doc_lengths(self) -> np.ndarray:
        return np.diff(self.doc_ptr)

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        return f"Corpus({self.n_docs} documents, {self.n_tokens} tokens, V={self.vocab_size})"

    def doc(self, d: int) -> np.ndarray:
        return self.word_ids[self.doc_ptr[d]:self.doc_ptr[d + 1]]

    def doc_words(self, d: int) -> list[str]:
        return [self.vocabulary[i] for i in self.doc(d)]

    def require_nonempty(self, what: str = "corpus") -> "Corpus":
        if self.n_docs == 0 or self.n_tokens == 0:
            raise DPTopicError(f"empty {what}: it has no tokens after preprocessing; give more text or lower min_df/min_length.")
        return self

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_token_ids(cls, docs: Sequence[Sequence[int]], vocabulary, **kw) -> "Corpus":
        lengths = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
        ptr = np.zeros(len(docs) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        ids = np.fromiter((w for d in docs for w in d), dtype=np.int64, count=int(ptr[-1]))
        V = len(vocabulary)
        if len(ids) and (ids.min() < 0 or ids.max() >= V):
            bad = int(ids.min()) if ids.min() < 0 else int(ids.max())
            raise DPTopicError(f"unknown word id {bad}: word ids must lie in [0, {V}) for a vocabulary of {V} words.")
        return cls(ptr, ids.astype(np.int32), vocabulary, **kw)

    @classmethod
    def from_texts(cls, texts: Iterable[str], labels=None, doc_ids=None, *, vocabulary=None,
                   max_vocab: int | None = 1000, min_df=1, max_df=None, min_length: int = 3,
                   stop_words="english", lowercase: bool = True, remove_stop_words: bool = True,
                   drop_empty: bool = True, user_ids=None) -> "Corpus":
        """Tokenise raw strings, build (or apply) a vocabulary, drop OOV tokens and empty documents.

        ``min_df``/``max_df``: document-frequency bounds, each a count or (a float) a fraction of the documents;
        ``stop_words``: ``"english"``, ``None``, a file with one word per line, or a list of words;
        ``lowercase=False`` keeps case (``Paris`` and ``paris`` are two words). ``remove_stop_words=False`` is the
        older spelling of ``stop_words=None``. ``lowercase="match"`` (with a ``vocabulary``; how text is read into a
        fitted model's words): no stop-word list or length filter, and each token counts as written when the
        vocabulary has it, else lowercased, so a vocabulary with "NASA" and "markets" reads "NASA" and "Markets".
        ``user_ids``: each text's person (strings), kept with the documents kept."""
        if isinstance(texts, (str, bytes)):
            raise DPTopicError("texts must be a list of strings (one per document), not a single string.")
        try:
            texts = list(texts)
        except TypeError:
            raise DPTopicError(f"texts must be a list of strings (one per document), not {type(texts).__name__}.") from None
        if not texts:
            raise DPTopicError("empty corpus: no documents were given; pass at least one non-empty text.")
        bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
        if bad is not None:
            raise DPTopicError(f"document {bad} is a {type(texts[bad]).__name__}, not a string: give one string per document.")
        validate_value("max_vocab", max_vocab, [IsNone(), Int(2, None)])
        df_range(min_df, max_df, len(texts))
        validate_value("min_length", min_length, [Int(1, None)])
        if not (isinstance(lowercase, (bool, np.bool_)) or (isinstance(lowercase, str) and lowercase == "match")):
            raise DPTopicError(f"invalid lowercase={lowercase!r}: give True or False (or 'match', with a vocabulary,"
                               " to read text into its words).")
        if vocabulary is not None and not isinstance(vocabulary, Vocabulary):
            vocabulary = Vocabulary(vocabulary)                 # read once, used twice
        if lowercase == "match":
            if vocabulary is None:
                raise DPTopicError("lowercase='match' reads text into a given vocabulary: pass vocabulary=.")
            words = set(vocabulary.words)
            pre = Preprocessor(min_length=1, remove_stop_words=False, stop_words=None, lowercase=False)
            toks = [[t if t in words else lower_word(t) for t in pre.tokenize(x)] for x in texts]
            return cls._from_token_lists(toks, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty,
                                         user_ids=user_ids)
        pre = Preprocessor(min_length=min_length, remove_stop_words=remove_stop_words, stop_words=stop_words,
                           lowercase=bool(lowercase))
        if vocabulary is not None:
            _warn_unreachable_words(vocabulary.words, pre)
        toks = _tokenize_all(pre, texts)
        return cls._from_token_lists(toks, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty,
                                     reading=reading_of(stop_words if remove_stop_words else None, bool(lowercase),
                                                        min_length), user_ids=user_ids)

    @classmethod
    def from_tokens(cls, docs, labels=None, doc_ids=None, *, vocabulary=None, max_vocab: int | None = 1000,
                    min_df=1, max_df=None, drop_empty: bool = True) -> "Corpus":
        """Documents already tokenised, one list of words each (what gensim's ``Dictionary`` and tomotopy's
        ``add_doc`` take). The words are used as given: no lowercasing, stop-word removal or length filter. A
        vocabulary is built from them (``max_vocab``, ``min_df``, ``max_df`` as in :meth:`from_texts`) or, with
        ``vocabulary``, applied (other words are dropped)."""
        if isinstance(docs, (str, bytes)):
            raise DPTopicError("tokenised documents must be a list of lists of words, not a single string.")
        docs = list(docs)
        if not docs:
            raise DPTopicError("empty corpus: no documents were given; pass at least one list of words.")
        for i, d in enumerate(docs):
            if isinstance(d, np.ndarray) and d.ndim == 1:
                d = docs[i] = d.tolist()
            if isinstance(d, (str, bytes)) or not isinstance(d, (list, tuple)):
                raise DPTopicError(f"document {i} is a {type(d).__name__}, not a list of words: give one list of"
                                   " words per document (or one string per document for dptopic to tokenise).")
            j = next((j for j, w in enumerate(d) if not isinstance(w, str)), None)  # the word may itself be None
            if j is not None:
                bad = d[j]
                raise DPTopicError(f"document {i} holds {str(repr(bad))[:40]} (type {type(bad).__name__}), not a word:"
                                   " every token of a tokenised document must be a string.")
        validate_value("max_vocab", max_vocab, [IsNone(), Int(2, None)])
        df_range(min_df, max_df, len(docs))
        return cls._from_token_lists(docs, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty)

    @classmethod
    def _from_token_lists(cls, toks, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty,
                          reading=None, user_ids=None):
        """Checked lists of words: build (or apply) the vocabulary, map words to ids, drop the rest. ``reading``: how
        the words were made from text (:func:`reading_of`), kept in the metadata."""
        given = vocabulary is not None
        cut = None
        if vocabulary is None:
            words = build_vocabulary(toks, max_vocab=None, min_df=min_df, max_df=max_df)   # by frequency
            if max_vocab is not None and len(words) > max_vocab:
                cut = (max_vocab, len(words))       # the words that pass the other filters, and how many were kept
                words = words[:max_vocab]
            vocabulary = Vocabulary(words)
        elif not isinstance(vocabulary, Vocabulary):
            vocabulary = Vocabulary(vocabulary)
        index = vocabulary._index
        docs = [[index[w] for w in ts if w in index] for ts in toks]
        doc_ids = doc_ids if doc_ids is not None else [f"doc{i}" for i in range(len(docs))]
        if given and drop_empty and toks and not any(docs) and any(toks):
            raise DPTopicError(no_word_of_vocabulary(len(docs), vocabulary))
        if reading is not None and drop_empty and toks and not any(toks):     # the tokenizer itself kept nothing
            from .preprocess import no_words_message

            raise DPTopicError(no_words_message(len(toks), reading.get("min_length", 3),
                                                reading.get("stop_words", "english")))
        if given and drop_empty and toks and not any(toks):     # no text at all, whatever the vocabulary
            raise DPTopicError(f"empty corpus: none of the {len(toks)} documents holds any word (each text is empty,"
                               " blank or punctuation only): give documents with text.")
        out = cls._finish(docs, vocabulary, labels, doc_ids, drop_empty, given=given, user_ids=user_ids,
                          metadata={VOCABULARY_SOURCE: "supplied" if given else "data",
                                    **({} if reading is None else {READING: reading}),
                                    **({} if given else {VOCABULARY_CUTS: _cuts(max_vocab, min_df, max_df)})})
        if cut is not None:     # for the CLI's note (not saved: figures of the documents, not settings)
            out._vocabulary_cut = {"max_vocab": cut[0], "words": cut[1], "tokens_read": sum(len(t) for t in toks)}
        return out

    @classmethod
    def _finish(cls, docs, vocabulary, labels, doc_ids, drop_empty=True, metadata=None, given=True,
                user_ids=None) -> "Corpus":
        """The corpus of ``docs`` (word ids). ``given``: the vocabulary is the caller's, not built from ``docs``."""
        if user_ids is not None:
            user_ids = check_user_ids(user_ids, len(docs))
        labels, doc_ids = _sequence("labels", labels), _sequence("doc_ids", doc_ids)
        if labels is not None:      # NaN or '' is no label (not the class 'nan' or ''); None: _names says so
            _check_entries("labels", labels)
        labels, doc_ids = _names("labels", labels), _names("doc_ids", doc_ids)
        for name, vals in (("labels", labels), ("doc_ids", doc_ids)):
            if vals is not None and len(vals) != len(docs):
                raise DPTopicError(f"{name} has {len(vals)} entries but there are {len(docs)} documents: give one per"
                                   " document.")
        if doc_ids is not None and len(set(doc_ids)) != len(doc_ids):
            seen: set = set()
            dup = next(x for x in doc_ids if x in seen or seen.add(x))
            raise DPTopicError(f"doc_ids holds {dup!r} more than once: give every document its own id.")
        keep = [i for i, d in enumerate(docs) if len(d) > 0] if drop_empty else list(range(len(docs)))
        n_drop = len(docs) - len(keep)
        if not keep:
            raise DPTopicError("empty corpus: every document is empty after preprocessing; give more text or lower min_df/min_length.")
        # a vocabulary built from the documents to model them needs two words; documents kept one row per input
        # (drop_empty=False) with words of their own are read to be mapped onto a vocabulary given later (a server's:
        # submit, fed-client), where one distinct word, or none, is a valid contribution
        if len(vocabulary) < 2 and (given or drop_empty):
            raise DPTopicError(f"vocabulary too small: {len(vocabulary)} word(s) survived preprocessing; at least 2 are needed (lower min_df or give more text).")
        return cls.from_token_ids([docs[i] for i in keep], vocabulary,
                                  labels=None if labels is None else [labels[i] for i in keep],
                                  doc_ids=None if doc_ids is None else [doc_ids[i] for i in keep],
                                  user_ids=None if user_ids is None else [user_ids[i] for i in keep],
                                  n_empty_dropped=n_drop, metadata=metadata)

    @classmethod
    def from_bow(cls, X, vocabulary=None) -> "Corpus":
        """From a document-term count matrix (scipy.sparse or dense), as scikit-learn users pass. A matrix that
        carries its columns' words (:class:`dptopic.corpus.CountVectorizer`'s) must carry ``vocabulary``'s."""
        words = getattr(X, "feature_names", None) if sp.issparse(X) else None
        if getattr(X, "columns", None) is not None and hasattr(X, "to_numpy"):
            # a pandas DataFrame: its column names are the words, as a model's fit reads them (feature_names_in_)
            words, X = [str(c) for c in X.columns], X.to_numpy()
            if vocabulary is not None:
                words = None                      # the words given replace the column names
        if words is not None and vocabulary is not None and len(words) == X.shape[1]:
            given = list(vocabulary.words if isinstance(vocabulary, Vocabulary) else vocabulary)
            what = column_difference(words, given, "the vocabulary")
            if what:
                raise DPTopicError(f"the count matrix's columns are the words of another vectorizer ({what}): count the"
                                   " texts with the vectorizer the model was fitted after, or pass the texts themselves.")
        if not sp.issparse(X):
            try:
                X = np.asarray(X)
            except (TypeError, ValueError):
                raise DPTopicError("invalid document-term matrix: give a 2-D array of counts.") from None
        if X.ndim != 2:
            hint = (" (Reshape your data: X.reshape(1, -1) for a single document; texts go in as a list of strings)"
                    if X.ndim == 1 else "")
            raise DPTopicError(f"invalid document-term matrix: it has {X.ndim} dimension(s); give a 2-D documents × words"
                              f" array{hint}.")
        if X.dtype.kind in "OUS" and not sp.issparse(X) and any(isinstance(v, (str, bytes)) for v in X.flat):
            raise InputTypeError("invalid document-term matrix: it holds text, not counts; pass the column of texts itself"
                                 " (df['text'], or a list of strings, one per document).")
        if X.dtype.kind == "O" and not sp.issparse(X):
            try:
                X = X.astype(np.float64)
            except (TypeError, ValueError) as e:
                bad = next((v for v in X.flat if not _is_number(v)), None)
                # numpy's own reason in full (scikit-learn's checks read it): cut, it ended "not 'NAT)"
                what = ("is missing (None, or pandas NA in a nullable column): fill or drop the missing counts"
                        if bad is None or type(bad).__name__ in ("NAType", "NaTType", "NoneType") else
                        f"is not a number ({' '.join(str(e).split())[:120]}): give integer counts")
                raise InputTypeError(f"invalid document-term matrix: an entry {what}.") from None
        if X.dtype.kind == "c":
            raise DPTopicError("Complex data not supported: a document-term matrix holds real, integer counts.")
        if X.dtype.kind not in "biuf":
            raise DPTopicError(f"invalid document-term matrix: its dtype is {X.dtype}; give real-valued (integer) counts.")
        if X.dtype == np.float16:               # scipy.sparse holds no float16: read it as float32 (every value kept)
            X = X.astype(np.float32)
        elif sp.issparse(X) and (X.dtype.kind == "b" or (X.dtype.kind in "iu" and X.dtype.itemsize < 8)):
            # a COO matrix's repeated entries are added up in its own dtype, where int8/uint8/int16 sums wrap
            # (200 + 200 as uint8 is 144, 100 + 100 as int8 is -56) and booleans are OR-ed (True + True is True):
            # add them up as int64
            X = X.astype(np.int64)
        X = sp.csr_matrix(X)
        if X.shape[1] < 2:
            raise DPTopicError(f"vocabulary too small: the document-term matrix has {X.shape[1]} feature(s)"
                              f" (shape={X.shape}) while a minimum of 2 is required: give at least two word columns.")
        X.sum_duplicates()
        data = X.data
        if len(data) and not np.all(np.isfinite(data)):
            raise DPTopicError("invalid document-term matrix: Input contains NaN or infinity; entries must be finite,"
                               " non-negative integer counts.")
        if len(data) and np.any(data < 0):
            raise DPTopicError("Negative values in data: a document-term matrix holds non-negative integer counts.")
        if len(data) and np.any(data != np.round(data)):
            raise DPTopicError("invalid document-term matrix: entries must be finite, non-negative integer counts.")
        # summed as float64: an integer sum wraps (uint64 or int64 counts near 2**63 would look small, or negative)
        total = float(data.sum(dtype=np.float64)) if len(data) else 0.0
        if total > MAX_TOKENS:
            raise DPTopicError(f"document-term matrix holds {total:.3g} tokens, more than the {MAX_TOKENS:.3g} a corpus"
                               f" supports: check the counts, or split the corpus.")
        counts = X.data.astype(np.int64)
        cols = np.repeat(X.indices.astype(np.int32), counts)
        ptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(segment_sums(counts, X.indptr), out=ptr[1:])
        if vocabulary is None and words is not None and len(words) == X.shape[1]:
            vocabulary = [str(w) for w in words]          # the vectorizer's words, not placeholders
        vocab = vocabulary if vocabulary is not None else [f"w{i}" for i in range(X.shape[1])]
        if len(vocab) != X.shape[1]:
            raise DPTopicError(f"vocabulary has {len(vocab)} words but the matrix has {X.shape[1]} columns: they must match.")
        from .preprocess import BAG_OF_WORDS_FILE

        c = cls(ptr, cols, vocab, metadata={TOKENS_SOURCE: BAG_OF_WORDS_FILE})
        if c.n_tokens == 0:
            raise DPTopicError("empty corpus: the document-term matrix has no counts.")
        return c

    @classmethod
    def from_uci(cls, docword: str | os.PathLike, vocab: str | os.PathLike, drop_empty: bool = True) -> "Corpus":
        """Read the UCI bag-of-words format (``docword.*.txt[.gz]`` + ``vocab.*.txt``). Each document's id
        (``doc_ids``) is its UCI document number (``"1"``, ``"2"``, ...), so the documents that have no entry, which
        are dropped (counted in ``n_empty_dropped``), show as missing numbers; ``drop_empty=False`` keeps them as
        empty documents (one per document number, as ``dptopic transform`` reads them)."""
        if vocab is None:
            raise DPTopicError(f"the UCI corpus {str(docword)!r} needs its vocabulary file: pass vocab= the path of its"
                               " vocab.*.txt (one word per line).")
        if isinstance(vocab, (str, os.PathLike)) and os.fspath(vocab).strip() and Path(vocab).is_dir():
            raise DPTopicError(f"the UCI vocabulary {str(vocab)!r} is a folder, not a file: give its vocab.*.txt (one"
                               " word per line).")
        with _open_text(vocab) as fh:
            lines = [w.strip() for w in fh.read().split("\n")]
        while lines and not lines[-1]:          # blank lines at the end name no word
            lines.pop()
        blank = next((n for n, w in enumerate(lines, 1) if not w), None)
        if blank is not None:   # line n is word n: a blank line would shift every word after it onto another id
            raise DPTopicError(f"bad UCI vocabulary file {str(vocab)!r}: line {blank} is blank, and in the UCI format line"
                               f" n names word n, so every word after it would take the next one's id: remove the line"
                               f" (or put the missing word there).")
        words = lines
        seen: dict = {}
        for n, w in enumerate(words, 1):    # two ids for one word: its counts would be split between them
            if w in seen:
                raise DPTopicError(f"bad UCI vocabulary file {str(vocab)!r}: line {n} repeats the word {w[:40]!r} of line"
                                   f" {seen[w]}, and each line names one word id: merge the two words' counts in the"
                                   " docword file and remove one line.")
            seen[w] = n
        with _open_text(docword) as fh:
            header = [fh.readline().strip() for _ in range(3)]
            try:
                D, W, NNZ = (int(h) for h in header)
            except ValueError:
                raise DPTopicError(f"bad UCI docword file {str(docword)!r}: the first three lines must be D, W and NNZ.") from None
            for name, v, lo in (("D", D, 1), ("W", W, 2), ("NNZ", NNZ, 0)):
                if v < lo:
                    raise DPTopicError(f"bad UCI docword file {str(docword)!r}: header {name}={v} must be at least {lo}.")
            if W != len(words):
                raise DPTopicError(f"UCI files disagree: docword says W={W} but {str(vocab)!r} has {len(words)} words.")
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)  # "input contained no data": reported below
                    arr = np.loadtxt(fh, dtype=np.int64, ndmin=2) if NNZ else np.zeros((0, 3), np.int64)
            except DPTopicError:        # the file itself cannot be read (a truncated .gz): said as it is
                raise
            except ValueError as e:
                raise DPTopicError(f"bad UCI docword file {str(docword)!r}: each line must be 'docID wordID count'"
                                   f" ({_uci_row_error(str(e), docword)}).") from None
        if arr.shape[1:] != (3,) and len(arr):
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: each line must be 'docID wordID count'"
                               f" (3 numbers), found {arr.shape[1]}.")
        if arr.shape[0] != NNZ:
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: header says NNZ={NNZ} but {arr.shape[0]} triples were read.")
        if D > NNZ + 10 ** 7 or W > NNZ + 10 ** 7:  # sizes no entry supports: a wrong header, not 10 million empty rows
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: header says D={D} documents and W={W} words for"
                               f" only {NNZ} entries; correct the first two lines.")
        d, w, c = arr[:, 0] - 1, arr[:, 1] - 1, arr[:, 2]
        if len(arr) and (d.min() < 0 or d.max() >= D):
            row = int(np.flatnonzero((d < 0) | (d >= D))[0])
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: line {_uci_line(docword, row)} has document id"
                               f" {int(arr[row, 0])}, and ids must lie in [1, {D}] (the header's D): correct the id or"
                               f" the first line.")
        if len(arr) and (w.min() < 0 or w.max() >= W):
            raise DPTopicError(f"unknown word id {int(w.max() + 1 if w.max() >= W else w.min() + 1)} in {str(docword)!r}: ids must lie in [1, {W}].")
        if len(arr) and c.min() < 1:
            raise DPTopicError(f"bad UCI docword file {str(docword)!r}: counts must be positive.")
        if len(arr) > 1:        # an entry given twice (a broken export) would silently add its counts up
            key = d * W + w
            order = np.argsort(key, kind="stable")
            same = np.flatnonzero(key[order][1:] == key[order][:-1])
            if len(same):
                j = same[np.argmin(order[same + 1])]       # the first line that repeats an earlier one
                first, again = int(order[j]), int(order[j + 1])
                raise DPTopicError(f"bad UCI docword file {str(docword)!r}: line {_uci_line(docword, again)} repeats the"
                                   f" entry of line {_uci_line(docword, first)} (document {int(arr[again, 0])}, word"
                                   f" {int(arr[again, 1])}); each pair is listed once with its count: merge the two"
                                   " lines into one.")
        X = sp.csr_matrix((c, (d, w)), shape=(D, W))
        c = cls.from_bow(X, vocabulary=words)
        c = cls(c.doc_ptr, c.word_ids, c.vocabulary, doc_ids=[str(i) for i in range(1, D + 1)], metadata=c.metadata)
        return c.drop_empty() if drop_empty else c

    @classmethod
    def from_jsonl(cls, path, text_field: str = "text", label_field: str | None = None, id_field: str | None = None,
                   require_ids: bool = True, user_field: str | None = None, **kw) -> "Corpus":
        """One JSON object per line; ``id_field`` names the field holding each document's id (``doc_ids``, which
        ``dptopic transform`` writes beside its rows). Every record must have it, unless ``require_ids=False``: then
        the ids are used only when every record has one, and are ``doc0, doc1, ...`` otherwise. Two records with the
        same id are refused (used as ``doc0, ...`` with ``require_ids=False``). ``user_field`` names the field holding
        each document's person (``user_ids``, a string in every record)."""
        _check_field_names(("text_field", text_field, False), ("label_field", label_field, True),
                           ("id_field", id_field, True), ("user_field", user_field, True))
        texts, labels, ids, users = [], [], [], []
        with _open_text(path) as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                repeated: set = set()
                try:
                    rec = load_json(line, f"line {n} of {str(path)!r}", pairs_noting_repeats(repeated))
                except json.JSONDecodeError:
                    if "\x00" in line:
                        raise _nul_error(path, n, "a JSONL file of UTF-8 text") from None
                    hint = (": it looks like pretty-printed JSON; a JSONL file holds one JSON object per line (for"
                            " example jq -c '.[]' for a file that is one array)") if line.strip() in ("[", "{") else ""
                    raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} is not valid JSON{hint}.") from None
                if isinstance(rec, list):
                    raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} is a JSON array, not an object: a JSONL"
                                       " file holds one JSON object per line (write each element of the array on its"
                                       " own line, for example with jq -c '.[]').")
                for key in (label_field, id_field, user_field) if isinstance(rec, dict) else ():   # written out
                    v = rec.get(key)
                    if isinstance(v, str) and not _is_utf8(v):
                        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} field {key!r} holds a lone"
                                           " surrogate (an escape such as \\udc00 that is half of a character), which"
                                           " no UTF-8 output can hold: fix the value.")
                if not isinstance(rec, dict):       # a number, a string, null, true/false
                    kind = "a string" if isinstance(rec, str) else _json_kind(rec)
                    raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} is {kind}, not a JSON object: a JSONL"
                                       f" file holds one JSON object per line, the text in a field ({text_field!r}).")
                twice = [k for k in (text_field, label_field, id_field, user_field) if k is not None and k in repeated]
                if twice:   # json.loads would keep the last value silently
                    raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} has the field {twice[0]!r} more than"
                                       " once; keep one value per field.")
                if text_field not in rec:
                    raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} has no field {text_field!r} (fields:"
                                       f" {_column_list([str(k) for k in rec])}); set text_field (CLI: --text-field)"
                                       " to the field that holds the text.")
                if not isinstance(rec[text_field], str):
                    raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} field {text_field!r} is"
                                       f" {_json_kind(rec[text_field])}, not a string.")
                texts.append(rec[text_field])
                if user_field is not None:
                    users.append(_record_user(rec.get(user_field), user_field in rec, f"bad JSONL file {str(path)!r}:"
                                              f" line {n}", user_field, "field"))
                if label_field is not None:
                    if label_field not in rec:
                        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} has no field {label_field!r}, so no"
                                           f" label: {_missing_label_fix('label_field')}; if another field holds"
                                           " them, set label_field to it.")
                    lab = rec[label_field]
                    if lab is None or (isinstance(lab, str) and _missing_label(lab)):
                        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} has no label (field {label_field!r}"
                                           f" is {'null' if lab is None else repr(lab)}):"
                                           f" {_missing_label_fix('label_field')}.")
                    if isinstance(lab, bool) or not isinstance(lab, (str, int, float)):
                        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} label {label_field!r} is"
                                           f" {_json_kind(lab)}; labels must be strings or numbers.")
                    if isinstance(lab, float) and not math.isfinite(lab):   # NaN, Infinity: not standard JSON
                        raise DPTopicError(f"bad JSONL file {str(path)!r}: line {n} label {label_field!r} is {lab!r},"
                                           " not a finite number; labels must be strings or finite numbers.")
                    if isinstance(lab, float) and lab.is_integer() and abs(lab) < 2**53:  # JSON's 1.0 is 1: "1"
                        lab = int(lab)
                    labels.append(lab)
                if id_field is not None:
                    # a record that holds the field holds a string or a number there, whether the field was named
                    # or is transform's default 'id' (null, true/false, an object or a list: refused, never renamed)
                    ids.append(_record_id(rec[id_field], f"bad JSONL file {str(path)!r}: line {n}", id_field, "field",
                                          null_ok=False) if id_field in rec else None)
        if not texts:
            raise DPTopicError(f"empty corpus: JSONL file {str(path)!r} holds no records; give one JSON object per line,"
                               f" the text in a field ({text_field!r}).")
        return cls.from_texts(texts, labels=labels if label_field else None,
                              doc_ids=_ids_or_none(ids, id_field, require_ids, f"JSONL file {str(path)!r}", "field",
                                                   "id_field"), user_ids=users if user_field else None, **kw)

    @classmethod
    def from_csv(cls, path, text_column: str = "text", label_column: str | None = None, id_column: str | None = None,
                 require_ids: bool = True, delimiter: str | None = None, user_column: str | None = None,
                 **kw) -> "Corpus":
        """A CSV file with a header row; ``id_column`` names the column of document ids (``doc_ids``). Every row must
        have one, unless ``require_ids=False``: then the ids are used only when every row has one, and are
        ``doc0, doc1, ...`` otherwise. Two rows with the same id are refused (used as ``doc0, ...`` with
        ``require_ids=False``). ``delimiter``: the character between fields (``"\\t"`` for tab-separated values); by
        default ``","``, or the ``";"``, ``"|"`` or tab a header without a comma holds between the columns asked for
        (with a warning); a delimiter given is never replaced. ``user_column``: the column of each document's person
        (``user_ids``; no row may leave it empty)."""
        _check_field_names(("text_column", text_column, False), ("label_column", label_column, True),
                           ("id_column", id_column, True), ("user_column", user_column, True))
        guess = delimiter is None           # the default, ',': another one seen in the header may replace it
        delimiter = "," if delimiter is None else delimiter
        if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
            raise DPTopicError(f"invalid delimiter={delimiter!r}: give one character, such as ',' or '\\t'.")
        cols, rows, lines = _read_csv(path, delimiter)
        wanted = [c for c in (text_column, label_column, id_column if require_ids else None, user_column)
                  if c is not None]
        other = _other_delimiter_char(cols, delimiter) if guess else None
        if other is not None and any(c not in cols for c in wanted):
            # a header read as one field that holds another separator (';' from a spreadsheet in many locales): read
            # with it when that finds the columns asked for, and say so; otherwise the error below names it
            o_cols, o_rows, o_lines = _read_csv(path, other)
            if all(c in o_cols for c in wanted):
                import warnings

                warnings.warn(f"CSV file {str(path)!r}: its header has no {delimiter!r} but {other!r} between the"
                              f" column names, so it was read with {other!r} between the fields.", UserWarning,
                              stacklevel=2)
                cols, rows, lines, delimiter = o_cols, o_rows, o_lines, other
        if delimiter == "\t":      # Orange's .tab: the names, then a row of types and a row of flags
            skip = orange_header_rows(rows, lines)
            rows, lines = rows[skip:], lines[skip:]
        bad = f"bad CSV file {str(path)!r}"
        if not cols:
            raise DPTopicError(f"{bad}: it is empty; give a header row naming the columns ({text_column!r}, ...) and one"
                               " row per document.")
        if not rows:
            raise DPTopicError(f"empty corpus: CSV file {str(path)!r} has a header but no rows; give one row per"
                               " document below it.")
        if id_column is not None and id_column not in cols and not require_ids:
            id_column = None
        if text_column not in cols and cols and cols[0].lstrip().startswith("{"):
            raise DPTopicError(f"{bad}: its first line is a JSON object ({_column_list(cols[:1])}), not a header: the"
                               " file looks like JSON Lines; read it as JSONL (CLI: --format jsonl, or a name ending"
                               " in .jsonl).")
        for col in (text_column, label_column, id_column, user_column):
            if col is not None and col not in cols:
                hint = _other_delimiter(cols, delimiter)
                near = [c for c in cols if c.strip().casefold() == col.strip().casefold()]
                if not hint and near:      # "text " or "Text": the list of columns below shows no difference
                    param, flag = (("text_column", "--text-field") if col == text_column else
                                   ("label_column", "--label-field") if col == label_column else
                                   ("user_column", "--user-field") if col == user_column else
                                   ("id_column", "--id-field"))
                    how = ("case" if near[0].strip() == near[0] else "spaces around it"
                           if near[0].strip() == col.strip() else "case and spaces around it")
                    raise DPTopicError(f"{bad}: no column {col!r}, but the header has {near[0]!r}, which differs in"
                                       f" {how}: set {param} (CLI: {flag}) to {near[0]!r}, or write the header as"
                                       f" {col!r}.")
                if not hint:       # name the setting that picks the column, as the JSONL reader does
                    param, flag = (("text_column", "--text-field") if col == text_column else
                                   ("label_column", "--label-field") if col == label_column else
                                   ("user_column", "--user-field") if col == user_column else
                                   ("id_column", "--id-field"))
                    hint = f"; set {param} (CLI: {flag}) to the column that holds it"
                raise DPTopicError(f"{bad}: no column {col!r} (columns: {_column_list(cols)}){hint}.")
            if col is not None and cols.count(col) > 1:
                raise DPTopicError(f"{bad}: the header names the column {col!r} {cols.count(col)} times: rename all but"
                                   " one, so that it says which to read.")
        at = {col: cols.index(col) for col in (text_column, label_column, id_column, user_column) if col is not None}
        # a row with more fields than the header: refused unless the extra ones are empty (a spreadsheet's trailing
        # comma, "hello world,a,")
        long = next((i for i, r in enumerate(rows) if len(r) > len(cols) and any(f.strip() for f in r[len(cols):])),
                    None)
        if long is not None:  # an unquoted delimiter inside a field: the words after it would be lost unseen
            raise DPTopicError(f"{bad}: the row on line {lines[long]} has {len(rows[long])} fields where the header names"
                               f" {len(cols)}: a field that holds {delimiter!r} must be quoted (\"like{delimiter} this\"),"
                               f" or add the missing column names to the header.")
        for col in (text_column, label_column, user_column):    # a row too short to reach it: refused, not "" or 'None'
            short = next((i for i, r in enumerate(rows) if col is not None and len(r) <= at[col]), None)
            if short is not None:
                raise DPTopicError(f"{bad}: the row on line {lines[short]} has {len(rows[short])} field(s), so no"
                                   f" {col!r} (column {at[col] + 1} of {len(cols)}): give every row a field for"
                                   " each column of the header (an empty field is fine).")
        texts = [r[at[text_column]] for r in rows]
        labels = [r[at[label_column]] for r in rows] if label_column else None
        blank = next((i for i, lab in enumerate(labels or ()) if _missing_label(lab)), None)
        if blank is not None:       # an empty cell is no label, as JSON's null is: not the class ''
            what = (f"an empty {label_column!r} field" if not labels[blank] else
                    f"a blank {label_column!r} field ({labels[blank]!r}: spaces or invisible characters only)")
            raise DPTopicError(f"{bad}: the row on line {lines[blank]} has {what}, so no label:"
                               f" {_missing_label_fix('label_column')}.")
        ids = None
        if id_column is not None:
            ids = _ids_or_none([_record_id(r[at[id_column]] if len(r) > at[id_column] and r[at[id_column]] else None,
                                           "", id_column, "column") for r in rows], id_column,
                               require_ids, f"CSV file {str(path)!r}", "column", "id_column")
        users = None if user_column is None else [
            _record_user(r[at[user_column]], True, f"{bad}: the row on line {line}", user_column, "column")
            for r, line in zip(rows, lines)]
        return cls.from_texts(texts, labels=labels, doc_ids=ids, user_ids=users, **kw)

    @classmethod
    def from_directory(cls, path, pattern: str = "*.txt", users_by_folder: bool = False, **kw) -> "Corpus":
        """One document per file matching ``pattern`` (the default ``*.txt`` in any case: ``NOTES.TXT`` too) in the
        folder and its sub-folders (a sub-folder's name is its
        files' label, and when there are sub-folders a file directly in the folder gets the folder's own name), in
        sorted order; hidden files and folders (names starting with '.') are left out. ``users_by_folder``: a folder
        of folders, one per person: each file's ``user_ids`` entry is the sub-folder it lies in (at any depth)."""
        if isinstance(path, (str, os.PathLike)) and not os.fspath(path).strip():     # Path("") is the current folder
            raise DPTopicError("the corpus path is empty: give a folder of .txt files.")
        path = Path(path)
        if not path.is_dir():
            raise DPTopicError(f"{str(path)!r} is not a directory: pass a folder with one .txt file per document.")
        if not isinstance(pattern, str) or not pattern or Path(pattern).is_absolute() or ".." in Path(pattern).parts:
            raise DPTopicError(f"invalid pattern={pattern!r}: give a file pattern inside the folder, such as '*.txt' or"
                               " 'news/*.txt' (not an absolute path, and no '..').")
        # hidden files and folders (.ipynb_checkpoints/, .git/, editors' backups) are no documents: a checkpoint's
        # copy of a text would count one person's document twice
        found = list(path.rglob(pattern))
        if pattern == "*.txt":      # NOTES.TXT (as Windows tools name files) is a text file too, not left out unseen
            found = sorted(set(found) | {f for f in path.rglob("*.[tT][xX][tT]") if f.suffix.lower() == ".txt"})
        found = [f for f in found if not any(part.startswith(".") for part in f.relative_to(path).parts)]
        linked = sorted(str(f.relative_to(path)) for f in path.rglob("*") if f.is_symlink() and f.is_dir()
                        and next(f.rglob(pattern), None) is not None and not any(part.startswith(".") for part in f.relative_to(path).parts))
        if linked:      # never descended into (a link may loop, or repeat the folder's files): its files would be lost
            raise DPTopicError(f"{str(path)!r} holds {len(linked)} link{'s' if len(linked) > 1 else ''} to a folder"
                               f" ({', '.join(linked[:3])}{', ...' if len(linked) > 3 else ''}), whose files are not"
                               " read: copy the folder in instead of the link, or remove the link.")
        broken = sorted(str(f.relative_to(path)) for f in found if f.is_symlink() and not f.exists())
        if broken:      # a document whose file is gone: leaving it out would train on fewer documents unawares
            raise DPTopicError(f"{str(path)!r} holds {len(broken)} broken link{'s' if len(broken) > 1 else ''}"
                               f" ({', '.join(broken[:3])}{', ...' if len(broken) > 3 else ''}) whose target is"
                               " missing: restore the file or remove the link.")
        files = sorted(f for f in found if f.is_file())
        first: dict = {}
        for f in files:     # a link to another file of the folder: one person's document is read twice
            real = f.resolve()
            if real in first:
                a, b = sorted((first[real], f), key=lambda g: (not g.is_symlink(), g))
                warnings.warn(f"{str(path)!r}: {str(a.relative_to(path))!r} is a link to {str(b.relative_to(path))!r},"
                              " which the folder holds too, so that document is read twice: remove the link unless"
                              " that is meant.", UserWarning,
                              stacklevel=2)
            first[real] = f
        if not files:
            if any(Path(path).glob("shard-*.npz")):       # written by dptopic corpus prepare --shards
                raise DPTopicError(f"{str(path)!r} is a folder of corpus shards, not of {pattern} files: only training"
                                   " reads a shard folder whole ('dptopic train --corpus FOLDER', fit(FOLDER)); here"
                                   " give one corpus file: one of its shard-*.npz files, or a corpus prepared without"
                                   " --shards.")
            from .shards import check_unfinished_shard_folder     # a killed 'corpus prepare --shards'

            check_unfinished_shard_folder(path)
            raise DPTopicError(f"empty corpus: no {pattern} files in {str(path)!r}.")
        texts = [read_text_file(f, f"a folder of UTF-8 text files, one document each: move {f.name!r} out of the"
                                    " folder (in Python, from_directory's pattern= can leave it out)") for f in files]
        top = path.resolve().name or str(path.resolve())    # the folder's own name, also for '.' (never '')
        labels = ([_name_text(f.parent.name) if f.parent != path else _name_text(top) for f in files]
                  if any(f.parent != path for f in files) else None)
        if labels is not None:      # a/x/ and b/x/ (or a sub-folder named as the folder): one label, said aloud
            folders: dict = {}
            for f, lab in zip(files, labels):
                folders.setdefault(lab, set()).add(f.parent)
            shared = sorted(lab for lab, where in folders.items() if len(where) > 1)
            if shared:
                where = sorted(str(d.relative_to(path)) or "." for d in folders[shared[0]])
                more = " (and so do other folders)" if len(shared) > 1 else ""
                warnings.warn(f"{str(path)!r}: the folders {', '.join(repr(w) for w in where[:3])} share the name"
                              f" {shared[0]!r}, so their files get one label{more}: rename one of them if they are"
                              " different classes.", UserWarning, stacklevel=2)
        users = None
        if users_by_folder:
            loose = next((f for f in files if f.parent == path), None)
            if loose is not None:
                raise DPTopicError(f"{str(path)!r}: {loose.name!r} lies in the folder itself, not in a person's"
                                   " sub-folder: with one folder per person, move each file into its author's folder.")
            users = [_name_text(f.relative_to(path).parts[0]) for f in files]
        return cls.from_texts(texts, labels=labels, doc_ids=[_name_text(str(f.relative_to(path))) for f in files],
                              user_ids=users, **kw)

    # ------------------------------------------------------------ transforms
    def subset(self, indices) -> "Corpus":
        idx = np.asarray(indices, dtype=np.int64)
        lengths = self.doc_lengths[idx]
        ptr = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        if len(idx):
            starts = self.doc_ptr[idx]
            gather = np.repeat(starts - ptr[:-1], lengths) + np.arange(ptr[-1])
            ids = self.word_ids[gather]
        else:
            ids = np.zeros(0, np.int32)
        pick = lambda v: None if v is None else [v[i] for i in idx]  # noqa: E731
        return Corpus(ptr, ids, self.vocabulary, labels=pick(self.labels), doc_ids=pick(self.doc_ids),
                      metadata=self.metadata, user_ids=pick(self.user_ids))

    def drop_empty(self) -> "Corpus":
        keep = np.flatnonzero(self.doc_lengths > 0)
        out = self.subset(keep)
        out.n_empty_dropped = self.n_empty_dropped + (self.n_docs - len(keep))
        return out.require_nonempty()

    def train_test_split(self, test_size: float = 0.2, seed=None) -> tuple["Corpus", "Corpus"]:
        """Random split of documents; ``test_size`` is a fraction in (0, 1) or a count."""
        D = self.n_docs
        if D < 2:
            raise DPTopicError(f"cannot split a corpus of {D} document(s) into train and test parts: give at least 2 documents.")
        n_test = int(round(test_size * D)) if isinstance(test_size, float) and 0 < test_size < 1 else test_size
        if not isinstance(n_test, (int, np.integer)) or not 1 <= n_test < D:
            raise DPTopicError(f"invalid test_size={test_size!r}: must be a fraction in (0, 1) or a count in [1, {D - 1}] leaving both parts non-empty.")
        perm = _seed_generator(seed).permutation(D)
        return self.subset(np.sort(perm[n_test:])), self.subset(np.sort(perm[:n_test]))

    def stable_split(self, test_size: float = 0.2, key: int = 0) -> tuple["Corpus", "Corpus"]:
        """Split where each document's side depends on its own words alone: it goes to the test part when a keyed
        hash of its bag of words, read as a number in [0, 1), is below ``test_size`` (a fraction).

        Adding or removing one document therefore changes no other document's side, so a private trainer's
        per-document guarantee on the training part carries over to the corpus given, as long as the vocabulary
        does not come from the documents (a public one, or one chosen with DP); a random permutation
        (:meth:`train_test_split`) reshuffles every document when one is added. The parts' sizes are about, not
        exactly, ``test_size``; the copies of one document are told apart by their rank among its copies. ``key``
        (public) picks another split.
        """
        self._check_split(test_size, "a stable split")
        word_hash = _word_hashes(self.vocabulary.words, int(key))
        cs = np.zeros(self.n_tokens + 1, dtype=np.uint64)
        np.cumsum(word_hash[self.word_ids], out=cs[1:])            # sums modulo 2**64
        h = _mix64(cs[self.doc_ptr[1:]] - cs[self.doc_ptr[:-1]])
        # the k-th copy of a bag of words hashes with k: copies spread over both parts, and adding one more copy
        # adds one document to one part (which copy is which does not matter: they are the same document)
        _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
        order = np.argsort(inverse, kind="stable")
        copy = np.empty(len(h), dtype=np.uint64)
        copy[order] = np.arange(len(h), dtype=np.uint64) - np.repeat(
            np.searchsorted(inverse[order], np.arange(len(first))), np.bincount(inverse)).astype(np.uint64)
        with np.errstate(over="ignore"):
            u = (_mix64(h ^ (copy * np.uint64(0x9E3779B97F4A7C15))) >> np.uint64(11)) / float(2 ** 53)
        return self._parts(u < test_size)

    def position_split(self, test_size: float = 0.2, key: int = 0) -> tuple["Corpus", "Corpus"]:
        """Split where each document's side depends on its position alone: it goes to the test part when a keyed
        hash of its index, read as a number in [0, 1), is below ``test_size``.

        The split for word-level guarantees: their neighbours replace one token's word by another word of the
        vocabulary, which moves no document here, while :meth:`stable_split` hashes a document's words, so one
        replaced word can move the whole document to the other part (and change the training part's size). Adding or
        removing a document shifts the positions after it: for document-level guarantees use :meth:`stable_split`.
        ``key`` (public) picks another split."""
        self._check_split(test_size, "a split")
        with np.errstate(over="ignore"):
            h = _mix64(np.arange(self.n_docs, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                       + _mix64(np.array([int(key) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)))
        return self._parts(((h >> np.uint64(11)) / float(2 ** 53)) < test_size)

    def _check_split(self, test_size, what: str) -> None:
        """The checks of :meth:`stable_split` and :meth:`position_split`: a fraction, and two documents to split."""
        import numbers

        if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) or isinstance(test_size, numbers.Integral) \
                or not 0 < test_size < 1:
            raise DPTopicError(f"invalid test_size={test_size!r}: {what} needs a fraction in (0, 1).")
        if self.n_docs < 2:
            raise DPTopicError(f"cannot split a corpus of {self.n_docs} document(s) into train and test parts: give at"
                               " least 2 documents.")

    def _parts(self, test: np.ndarray) -> tuple["Corpus", "Corpus"]:
        """``(train, test)`` from a boolean mask of the test documents, neither part empty."""
        if test.all() or not test.any():
            raise DPTopicError(f"the split put all {self.n_docs} documents in one part: give more documents, or another"
                               " --test-size (another key, in the API).")
        return self.subset(np.flatnonzero(~test)), self.subset(np.flatnonzero(test))

    def restrict(self, vocabulary, drop_empty: bool = True) -> "Corpus":
        """Map onto another vocabulary; tokens whose word is missing there are dropped."""
        vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        mapping = np.array([vocabulary.get(w) for w in self.vocabulary], dtype=np.int64)
        new = mapping[self.word_ids] if self.n_tokens else np.zeros(0, np.int64)
        keep_tok = new >= 0
        ptr = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(segment_sums(keep_tok, self.doc_ptr), out=ptr[1:])
        kept = {k: v for k, v in self.metadata.items() if k != VOCABULARY_CUTS}    # no cut chose these words
        out = Corpus(ptr, new[keep_tok].astype(np.int32), vocabulary, labels=self.labels,
                     doc_ids=self.doc_ids, n_empty_dropped=self.n_empty_dropped, user_ids=self.user_ids,
                     metadata={**kept, VOCABULARY_SOURCE: "supplied"})   # the caller's word list
        return out.drop_empty() if drop_empty else out

    def prune(self, max_vocab: int | None = 1000, min_df=1, max_df=None, remove_stop_words: bool = False,
              stop_words=None) -> "Corpus":
        """Keep the ``max_vocab`` most frequent words (by token count) whose document frequency lies in
        ``[min_df, max_df]`` (counts, or fractions of the documents) and that are not stop words
        (``stop_words`` as in :meth:`from_texts`; ``remove_stop_words=True`` means ``"english"``)."""
        validate_value("max_vocab", max_vocab, [IsNone(), Int(2, None)])
        lo, hi = df_range(min_df, max_df, self.n_docs)
        V = self.vocab_size
        tf = np.bincount(self.word_ids, minlength=V)
        X = self.to_bow()
        df = np.asarray((X > 0).sum(axis=0)).ravel()
        sw = resolve_stop_words("english" if remove_stop_words and stop_words is None else stop_words)
        words = self.vocabulary.words
        if sw:      # a word of a UCI vocab file may be written decomposed: matched in the NFKC form, as text is read
            import unicodedata

            sw = sw | {w for w in words if not w.isascii() and unicodedata.normalize("NFKC", w) in sw}
        cands = [i for i in range(V) if lo <= df[i] <= hi and tf[i] > 0 and words[i] not in sw]
        cands.sort(key=lambda i: (-tf[i], words[i]))
        if max_vocab is not None:
            cands = cands[:max_vocab]
        if len(cands) < 2:
            raise DPTopicError(f"vocabulary too small: {len(cands)} word(s) pass min_df={min_df}, max_df={max_df} and the"
                               f" stop-word list; at least 2 are needed.")
        out = self.restrict([words[i] for i in cands])
        out.metadata[VOCABULARY_SOURCE] = "data"        # chosen by the documents' counts
        if sw and isinstance(out.metadata.get(READING), dict):    # stop words pruned after tokenising
            out.metadata[READING] = {**out.metadata[READING],
                                     "stop_words_pruned": _stop_words_name("english" if stop_words is None
                                                                           else stop_words)}
        built = self.metadata.get(VOCABULARY_CUTS)      # the cuts of this prune, beside those that built it
        out.metadata[VOCABULARY_CUTS] = {**(built if isinstance(built, dict) else {}),
                                         "pruned": _cuts(max_vocab, min_df, max_df)}
        return out

    @property
    def vocabulary_supplied(self) -> bool:
        """True when the vocabulary was given by the caller (``vocabulary=`` of :meth:`from_texts`,
        :meth:`from_tokens` and the loaders, or :meth:`restrict`) rather than chosen from these documents' counts
        (built from them, or :meth:`prune`). Private trainers then record it as supplied (public), as they do with
        ``fit(vocabulary=...)``; corpora saved before this was recorded count as chosen from the data."""
        return self.metadata.get(VOCABULARY_SOURCE) == "supplied"

    def to_bow(self) -> sp.csr_matrix:
        """Document-term count matrix (scipy.sparse CSR, ``D × V``)."""
        rows = np.repeat(np.arange(self.n_docs), self.doc_lengths)
        X = sp.csr_matrix((np.ones(self.n_tokens, dtype=np.int64), (rows, self.word_ids)),
                          shape=(self.n_docs, self.vocab_size))
        X.sum_duplicates()
        return X

    # ------------------------------------------------------------------ I/O
    def save(self, path: str | os.PathLike) -> Path:
        """Write a single ``.npz`` (arrays + a JSON header), atomically and without pickle."""
        path = Path(path)
        if path.is_dir():
            raise DPTopicError(f"{str(path)!r} is a folder: give the name of the .npz file to write (for example"
                               f" {str(path / 'corpus.npz')!r}).")
        meta = {"format": "dptopic-corpus", "version": CORPUS_FORMAT_VERSION, "vocabulary": self.vocabulary.words,
                "labels": self.labels, "doc_ids": self.doc_ids, "n_empty_dropped": self.n_empty_dropped,
                "metadata": self.metadata, **({} if self.user_ids is None else {"user_ids": self.user_ids})}
        buf = io.BytesIO()
        np.savez(buf, doc_ptr=self.doc_ptr, word_ids=self.word_ids,
                 meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8))
        atomic_write_bytes(path, buf.getvalue(), private=True)  # documents: readable by their owner only (0600)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Corpus":
        path = Path(path)
        if not path.is_file():
            raise DPTopicError(f"corpus file {str(path)!r} {'is a directory' if path.is_dir() else 'does not exist'}:"
                               " give a .npz file written by 'dptopic corpus prepare'.")
        bad = f"corrupt corpus file {str(path)!r}"
        fix = "re-create it with 'dptopic corpus prepare'"
        try:
            with open(path, "rb") as fh:
                zipped = fh.read(4) == b"PK\x03\x04"
        except OSError as e:
            raise DPTopicError(f"cannot read corpus file {str(path)!r} ({type(e).__name__}): check its permissions.") from None
        if not zipped:  # a text, JSONL or CSV file given to the .npz reader
            raise DPTopicError(f"{str(path)!r} is not an .npz corpus (a file written by 'dptopic corpus prepare'): give"
                               " --format for what it holds (text: one document per line, jsonl, csv), or prepare it"
                               " with 'dptopic corpus prepare'.")
        import zipfile

        try:
            with np.load(path, allow_pickle=False) as z:
                missing = [k for k in ("meta", "doc_ptr", "word_ids") if k not in z.files]
                if missing:     # another program's .npz (or an array saved with np.savez): say what it holds
                    held = ", ".join(z.files[:5]) + (", ..." if len(z.files) > 5 else "") if z.files else "none"
                    raise DPTopicError(f"{str(path)!r} is not a dptopic corpus: it has no {missing[0]!r} array"
                                       f" (arrays: {held}); give a .npz written by 'dptopic corpus prepare'.")
                meta = load_json(z["meta"].tobytes().decode("utf-8"), "the corpus header")
                ptr, ids = z["doc_ptr"], z["word_ids"]
        except DPTopicError:
            raise
        except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as e:    # cut short or damaged
            raise DPTopicError(f"{bad}: the archive is truncated or damaged ({type(e).__name__}: an interrupted copy or"
                               f" write?); {fix}.") from None
        except Exception as e:  # KeyError/ValueError/JSON
            if "allow_pickle" in str(e):
                raise DPTopicError(f"{bad}: it holds pickled Python objects, which dptopic never loads (they can run"
                                   f" code); {fix}.") from None
            raise DPTopicError(f"{bad}: {type(e).__name__}; {fix}.") from None
        if not isinstance(meta, dict) or meta.get("format") != "dptopic-corpus":
            raise DPTopicError(f"{bad}: not a dptopic corpus; {fix}.")
        version = meta.get("version", 1)
        if version != CORPUS_FORMAT_VERSION:
            raise DPTopicError(f"corpus file {str(path)!r} has format version {version!r}, and this dptopic reads version"
                               f" {CORPUS_FORMAT_VERSION}: re-create it with this version's 'dptopic corpus prepare'"
                               " (or read it with the dptopic that wrote it).")
        vocab = meta.get("vocabulary")
        if not isinstance(vocab, list) or not all(isinstance(w, str) for w in vocab):
            raise DPTopicError(f"{bad}: its header has no 'vocabulary' list of words; {fix}.")
        for key in ("labels", "doc_ids"):
            v = meta.get(key)
            if v is not None and (not isinstance(v, list) or not all(isinstance(x, (str, int, float)) for x in v)):
                raise DPTopicError(f"{bad}: '{key}' must be a list of strings; {fix}.")
        n_drop, extra = meta.get("n_empty_dropped", 0), meta.get("metadata")
        if isinstance(n_drop, bool) or not isinstance(n_drop, int) or n_drop < 0 or not isinstance(extra, (dict, type(None))):
            raise DPTopicError(f"{bad}: 'n_empty_dropped' must be a count and 'metadata' an object; {fix}.")
        try:
            return cls(ptr, ids, vocab, labels=meta.get("labels"), doc_ids=meta.get("doc_ids"),
                       n_empty_dropped=n_drop, metadata=extra, user_ids=meta.get("user_ids"))
        except DPTopicError as e:
            raise DPTopicError(f"{bad}: {str(e).rstrip('.')}; {fix}.") from None


def _is_utf8(s: str) -> bool:
    """Whether ``s`` can be written as UTF-8 (holds no lone surrogate such as JSON's ``"\\udc00"``)."""
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _name_text(name: str) -> str:
    """A file or folder name as a label or document id: itself, or, for a name whose bytes are not UTF-8 (a Latin-1
    name, which Python reads with lone surrogates that no UTF-8 output can hold: ``transform`` failed to write its
    rows), those bytes written as backslash escapes (byte 0xe9 as the four characters ``\\xe9``)."""
    return name if _is_utf8(name) else os.fsencode(name).decode("utf-8", "backslashreplace")


def _check_field_names(*specs) -> None:
    """Each ``(parameter, value, may_be_none)`` names a JSONL field or CSV column: a string (or None where allowed)."""
    for name, v, none_ok in specs:
        if not isinstance(v, str) and not (none_ok and v is None):
            raise DPTopicError(f"invalid {name}={v!r}: give the name of a JSONL field or CSV column as a string"
                               + (", or None." if none_ok else "."))


def _record_id(value, where: str, name: str, kind: str, null_ok: bool = True):
    """A document id read from a record: a string or a number (kept as its text), or None when the record lacks it
    (``null_ok``: None is a missing value). A blank string is no id, in a JSONL field as in a CSV cell (it named no
    document: transform's rows could not be joined back by it); null (unless ``null_ok``), true/false, an object or a
    list is refused."""
    if (value is None and null_ok) or (isinstance(value, str) and _blank(value)):
        return None
    if value is None or isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise DPTopicError(f"{where}: id {kind} {name!r} is {_json_kind(value)}; ids must be strings or numbers: give"
                           f" the record one, or drop the {kind} from it.")
    return str(value)


def _record_user(value, present: bool, where: str, name: str, kind: str) -> str:
    """A record's user id (``user_field``): a non-blank string, else refused in one line naming the record."""
    fix = (f"give every record the id of the person who wrote it, or set user_{kind} (CLI: --user-field) to the"
           f" {kind} that holds them")
    if not present:
        raise DPTopicError(f"{where} has no {kind} {name!r}, so no user id: {fix}.")
    if not isinstance(value, str):
        raise DPTopicError(f"{where}: user id {kind} {name!r} is {_json_kind(value)}, not a string: write user ids as"
                           " strings (\"17\", not 17), so that one person has one id.")
    if _blank(value):
        raise DPTopicError(f"{where} has an empty user id ({kind} {name!r}): {fix}.")
    return value


def _uci_line(docword, row: int):
    """The file line (from 1) of the UCI data row ``row`` (from 0; blank lines are no rows), after the 3 header lines;
    None when the file has fewer rows."""
    seen = -1
    with _open_text(docword) as fh:
        for n, text in enumerate(fh, 1):
            if n > 3 and text.strip():
                seen += 1
                if seen == row:
                    return n
    return None


def _uci_row_error(message: str, docword) -> str:
    """NumPy's loadtxt error in the file's own terms, no NumPy words (``could not convert string 'x' to int64 at row
    0, column 3.`` → ``line 4, field 3 is 'x', not a whole number``): NumPy counts the data rows it read, blank lines
    not included, so the line is found again in the file."""
    def line_of(row: int):
        return _uci_line(docword, row)

    m = re.search(r"string '(.*)' to \w+ at row (\d+), column (\d+)", message)
    if m:                                        # this message counts rows from 0
        where = line_of(int(m.group(2)))
        return f"{'line ' + str(where) if where else 'a line'}, field {m.group(3)} is {m.group(1)!r}, not a whole number"
    m = re.search(r"columns changed from (\d+) to (\d+) at row (\d+)", message)
    if m:                                        # and this one from 1
        # NumPy takes the first data line's field count as the rule: when that line is the odd one, it blames the next
        if m.group(1) != "3":
            where, got = line_of(0), m.group(1)
        else:
            where, got = line_of(int(m.group(3)) - 1), m.group(2)
        return f"{'line ' + str(where) if where else 'a line'} has {got} fields, not 3 ('docID wordID count')"
    return message.rstrip(".")


def _ids_or_none(ids, name, require_ids: bool, what: str, kind: str, param: str):
    """The ids read from the records; None when ``name`` is None, or with ``require_ids=False`` when a record has
    none; with ``require_ids=True`` a record without one is refused."""
    if name is None:
        return None
    missing = [i for i, v in enumerate(ids) if v is None]
    if not missing:
        first: dict = {}
        for i, v in enumerate(ids):
            if str(v) in first:     # rows written beside the ids could not be joined back to their records
                if not require_ids:
                    warnings.warn(f"{what}: records {first[str(v)] + 1} and {i + 1} share the {kind} {name!r} value"
                                  f" {str(v)!r}, so the documents are named doc0, doc1, ... in their order instead;"
                                  f" give every record its own id to keep them.", UserWarning, stacklevel=4)
                    return None
                raise DPTopicError(f"bad {what}: records {first[str(v)] + 1} and {i + 1} share the id {str(v)!r}: give"
                                   f" every record its own id, or set {param} (CLI: --id-field) to a {kind} that has"
                                   " one per record.")
            first[str(v)] = i
        return ids
    if not require_ids:
        if len(missing) < len(ids):     # some records have ids: the rows written could not be joined back by them
            warnings.warn(f"{what}: record {missing[0] + 1} has no {kind} {name!r} ({len(ids) - len(missing)} of"
                          f" {len(ids)} records have one), so the documents are named doc0, doc1, ... in their order"
                          " instead; give every record its own id to keep them.", UserWarning, stacklevel=4)
        return None
    raise DPTopicError(f"bad {what}: record {missing[0] + 1} has no id {kind} {name!r} ({len(ids) - len(missing)} of"
                       f" {len(ids)} records have one): give every record an id, or set {param} (CLI: --id-field) to the"
                       f" {kind} that holds them.")


def _read_csv(path, delimiter: str):
    """The header, the rows (blank lines skipped) and the line each row ends on. A quote that is never closed would
    make the rest of the file one field, and is refused; other quoting that Python's strict reader refuses (a space
    after a closing quote) is read as its lenient reader reads it."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    for strict in (True, False):
        with _open_text(path) as fh:
            reader = csv.reader(fh, delimiter=delimiter, strict=strict)
            rows, lines, start = [], [], 1
            try:
                for row in reader:
                    if row:
                        rows.append(row)
                        lines.append(reader.line_num)
                    start = reader.line_num + 1
            except csv.Error as e:
                if str(e).startswith("unexpected end of data"):
                    raise DPTopicError(f"bad CSV file {str(path)!r}: a quote in the row from line {start} on is never"
                                       " closed, so the rest of the file would be one field: close it (a quote inside a"
                                       ' field is written as two, "").') from None
                if strict:
                    continue
                raise DPTopicError(f"bad CSV file {str(path)!r}: line {reader.line_num}: {e}.") from None
        nul = next((i for i, r in enumerate(rows) if any("\x00" in f for f in r)), None)
        if nul is not None:
            raise _nul_error(path, lines[nul], "a CSV file of UTF-8 text")
        return (rows[0] if rows else []), rows[1:], lines[1:]


ORANGE_TYPES = frozenset({"d", "discrete", "c", "continuous", "s", "string", "t", "time", "text"})
ORANGE_FLAGS = frozenset({"class", "c", "meta", "m", "ignore", "i", "weight", "w"})


def orange_header_rows(rows, lines) -> int:
    """How many of ``rows`` (those below the names row of a tab-separated file, on ``lines``) are the rest of an Orange
    header (https://orange3.readthedocs.io/projects/orange-data-mining-library/en/latest/reference/data.io.html, its
    three-row header): 2, the columns' types and flags; 1, the types alone when the flags line is blank (no row);
    0, a plain one-row header."""
    if not rows or not any(f.strip() for f in rows[0]):
        return 0
    if not all(f.strip().lower() in ORANGE_TYPES or not f.strip() for f in rows[0]):
        return 0

    def flag(field: str) -> bool:        # "meta include=True": flags and key=value attributes
        return all(w.lower() in ORANGE_FLAGS or "=" in w for w in field.split())

    return 2 if len(rows) > 1 and lines[1] == lines[0] + 1 and all(flag(f) for f in rows[1]) else 1


def tab_header_rows(path) -> int:
    """The header rows of a tab-separated file: 3 for Orange's header (names, types, flags), else 1."""
    rows, lines = [], []
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter="\t")
        try:
            for row in reader:
                if row:
                    rows.append(row)
                    lines.append(reader.line_num)
                if len(rows) == 3:
                    break
        except csv.Error:       # said by the reader itself, in its own words
            pass
    return 1 + (orange_header_rows(rows[1:], lines[1:]) if rows else 0)


def _column_list(cols, limit: int = 8, width: int = 40) -> str:
    """The header's column names for an error line: at most ``limit`` names of at most ``width`` characters (a first
    line that is a document, not a header, would otherwise put its whole text in the message)."""
    shown = [c if len(c) <= width else c[:width - 3] + "..." for c in cols[:limit]]
    text = ", ".join(" ".join(repr(c)[1:-1].split()) for c in shown)
    return text + (f", ... ({len(cols)} columns)" if len(cols) > limit else "")


def _other_delimiter_char(cols, delimiter: str) -> str | None:
    """The separator a header read as one column holds instead of ``delimiter``, if any."""
    if len(cols) != 1:
        return None
    return next((c for c in (";", "\t", "|", ",") if c != delimiter and c in cols[0]), None)


def _other_delimiter(cols, delimiter: str) -> str:
    """A hint for a header read as one column because the file separates its fields with another character."""
    other = _other_delimiter_char(cols, delimiter)
    if other is None:
        return ""
    name = "tabs" if other == "\t" else repr(other)
    how = ("name it .tsv (read with tabs), or in Python pass delimiter='\\t'" if other == "\t" else
           "name it .csv (read with commas), or in Python pass delimiter=','" if other == "," else
           f"save it with commas between the fields, or in Python pass delimiter={other!r}")
    return f"; the file looks delimited by {name}, not {delimiter!r}: {how}"


def column_difference(names, expected, whose: str = "the model") -> str | None:
    """Where a matrix's column words first differ from ``expected`` (``"column 3 is 'tax' where the model has
    'war'"``), for an error that names it; None when they are the same words in the same order."""
    names, expected = [str(w) for w in names], [str(w) for w in expected]
    if names == expected:
        return None
    if sorted(names) == sorted(expected):
        return "the same words in another order"
    i = next((j for j, (a, b) in enumerate(zip(names, expected)) if a != b), min(len(names), len(expected)))
    if i >= len(expected):
        return f"{len(names)} columns for {len(expected)} words"
    return f"column {i} is {repr(names[i]) if i < len(names) else 'nothing'} where {whose} has {expected[i]!r}"


def _check_file(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise DPTopicError(f"expected the path of a corpus file, got {type(path).__name__}: give a file name.")
    if not os.fspath(path).strip():     # Path("") is the current folder
        raise DPTopicError("the corpus path is empty: give a file name.")
    path = Path(path)
    if path.is_dir():
        raise DPTopicError(f"{str(path)!r} is a folder, not a file: give a file, or --format dir for a folder of .txt files.")
    if not path.is_file():
        if path.exists():  # /dev/null, a FIFO, a socket: nothing a corpus can be read from once and whole
            raise DPTopicError(f"{str(path)!r} is not a regular file (a device, pipe or socket): give a corpus file.")
        raise DPTopicError(f"file {str(path)!r} does not exist{broken_link(path)}.")
    return path


def broken_link(path) -> str:
    """What to add to "does not exist" when ``path`` is a symbolic link whose target is missing."""
    path = Path(path)
    if not path.is_symlink():
        return ""
    try:
        target = os.readlink(path)
    except OSError:
        return " (it is a broken symbolic link)"
    return f" (it is a symbolic link to {target!r}, which does not exist)"


def _gzip_error(path, e: BaseException) -> DPTopicError:
    """A ``.gz`` file that cannot be decompressed, in one line naming it: cut short, not gzip at all, or damaged."""
    name = str(path)
    if isinstance(e, EOFError):
        return DPTopicError(f"{name!r} is truncated: its gzip data ends before the end of the compressed stream (an"
                            " interrupted download or copy?); fetch or compress it again.")
    if isinstance(e, gzip.BadGzipFile) and str(e).startswith("Not a gzipped file"):
        try:
            with open(path, "rb") as fh:
                gzipped = fh.read(2) == b"\x1f\x8b"
        except OSError:
            gzipped = False
        if gzipped:     # a gzip stream followed by bytes that start none (zero padding, a damaged copy)
            return DPTopicError(f"{name!r} holds gzip data followed by bytes that are not gzip data (padding, or"
                                " a damaged or appended-to copy?): fetch or compress it again (zcat FILE | gzip >"
                                " NEW.gz keeps the readable part).")
        return DPTopicError(f"{name!r} is not gzip data although its name ends in .gz: rename it without .gz if it is"
                            " plain text, or compress it with gzip.")
    return DPTopicError(f"{name!r} is corrupt gzip data ({str(e) or type(e).__name__}); fetch or compress it again.")


_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def read_text_file(path, want: str = "a text file (one document per line), or a corpus in another format (--format)") -> str:
    """A text file's contents (UTF-8, ``.gz`` transparently); binary files are refused, not tokenised. ``want`` ends
    the message that refuses a binary file: what to give instead."""
    path = _check_file(path)
    try:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    except _GZIP_ERRORS as e:
        raise _gzip_error(path, e) from None
    except OSError as e:
        raise DPTopicError(f"cannot read {str(path)!r} ({type(e).__name__}): give a plain or gzipped text file.") from None
    _refuse_utf16(path, data[:4096])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        if b"\x00" in data[:65536] or text.count("\ufffd") > max(8, len(text) // 100):
            raise DPTopicError(f"{str(path)!r} looks like a binary file, not UTF-8 text: give {want}.") from None
        raise _not_utf8(path, data[e.start], data[:e.start].count(b"\n") + 1) from None
    if "\x00" in text:     # valid UTF-8, yet no text file holds NUL: a tar archive, a zero-filled or damaged file
        raise _nul_error(path, text.count("\n", 0, text.index("\x00")) + 1, want)
    return text


def _nul_error(path, line: int, want: str) -> DPTopicError:
    """A file that holds a NUL byte is refused rather than read with it as a word break (a tar archive of texts would
    be read with its headers as words, a zero-filled file as an empty document)."""
    name = Path(path).name
    return DPTopicError(f"{str(path)!r} holds a NUL byte (on line {line}), which no text file holds: it looks binary or"
                        f" damaged; give {want}, or remove the NUL bytes if the rest is text (tr -d '\\000' < {name}"
                        f" > clean-{name}).")


def read_lines(path) -> list[str]:
    """The lines of a text file of one document per line: split at line feeds only (a trailing carriage return
    dropped), so that line ``n`` is document ``n - 1`` (``doc{n-1}``), blank lines included. Form feeds, U+0085,
    U+2028 and the other separators that :meth:`str.splitlines` also splits at stay inside their line. A file with
    carriage returns and no line feed at all (classic Mac OS line endings) is split at its carriage returns."""
    text = read_text_file(path)
    lines = text.split("\r" if "\n" not in text and "\r" in text else "\n")
    if lines and lines[-1] == "":        # the line feed that ends the last line starts no document
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _refuse_utf16(path, start: bytes) -> None:
    """Refuse UTF-16 text: with its byte-order mark, or without one when every other byte of ``start`` (the file's
    first bytes) is NUL and the bytes between are not, as in UTF-16 text of Latin letters (which would otherwise be
    read as single letters and give an empty corpus)."""
    even, odd = start[0::2], start[1::2]
    enc = "UTF-16" if start[:2] in (b"\xff\xfe", b"\xfe\xff") else None
    if enc is None and len(start) >= 4:
        for nul, other, name in ((odd, even, "UTF-16LE"), (even, odd, "UTF-16BE")):
            if nul.count(0) >= 0.9 * len(nul) and other.count(0) <= 0.1 * len(other):
                enc = name
    if enc is not None:
        how = "" if enc == "UTF-16" else " without a byte-order mark (every other byte is NUL)"
        raise DPTopicError(f"{str(path)!r} is UTF-16 text{how}: save it as UTF-8 (for example iconv -f {enc} -t UTF-8"
                           f" {Path(path).name} > utf8-{Path(path).name}).")


def _not_utf8(path, byte: int, line: int) -> DPTopicError:
    """Text that is not UTF-8 is refused rather than read with its accented letters lost ('café' as 'caf')."""
    where = f" on line {line}" if line else ""
    return DPTopicError(f"{str(path)!r} is not UTF-8 text: byte 0x{byte:02x}{where} is not valid UTF-8 (a"
                        f" Latin-1 or Windows-1252 file?); save it as UTF-8 (for example iconv -f WINDOWS-1252 -t"
                        f" UTF-8 {Path(path).name} > utf8-{Path(path).name}).")


class _CheckedText:
    """A text stream of a corpus file that turns a byte that is not UTF-8 into a one-line error naming the file and
    line, wherever the reader meets it (``csv``, line by line, or all at once)."""

    def __init__(self, fh, path):
        self._fh, self._path = fh, path

    def _fail(self, e: UnicodeDecodeError):
        # the stream decodes ahead in chunks, so find the line again in the raw bytes (on this error path only)
        opener = gzip.open if Path(self._path).suffix == ".gz" else open
        with opener(self._path, "rb") as raw:
            for i, line in enumerate(raw):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as bad:
                    return _not_utf8(self._path, line[bad.start], i + 1)
        return _not_utf8(self._path, e.object[e.start], 0)

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._fh)
        except UnicodeDecodeError as e:
            raise self._fail(e) from None
        except _GZIP_ERRORS as e:
            raise _gzip_error(self._path, e) from None

    def read(self, *a):
        try:
            return self._fh.read(*a)
        except UnicodeDecodeError as e:
            raise self._fail(e) from None
        except _GZIP_ERRORS as e:
            raise _gzip_error(self._path, e) from None

    def readline(self, *a):
        try:
            return self._fh.readline(*a)
        except UnicodeDecodeError as e:
            raise self._fail(e) from None
        except _GZIP_ERRORS as e:
            raise _gzip_error(self._path, e) from None

    def close(self):
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _open_text(path) -> _CheckedText:
    path = _check_file(path)
    if path.suffix == ".gz":
        fh = io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig")
    else:
        with open(path, "rb") as raw:
            start = raw.read(4096)
        _refuse_utf16(path, start)
        _refuse_binary(path, start)
        fh = open(path, "r", encoding="utf-8-sig", newline="")   # -sig: a BOM (Excel) is not text
    return _CheckedText(fh, path)


def _refuse_binary(path, start: bytes) -> None:
    """Refuse a binary file given as text (a prepared ``.npz`` read with ``--format jsonl``, say) in one line that
    names it, rather than as text that is "not UTF-8" with advice to convert it from Windows-1252."""
    zipped = start[:4] == b"PK\x03\x04"
    if zipped or (b"\x00" in start and start[:-4].decode("utf-8", errors="replace").count("\ufffd") > 8):
        what = " (a zip archive, such as a corpus .npz that 'dptopic corpus prepare' writes)" if zipped else ""
        raise DPTopicError(f"{str(path)!r} is a binary file{what}, not UTF-8 text: read a prepared .npz with --format"
                           " npz or auto (Corpus.load in Python), and give JSONL, CSV or text files as UTF-8 text.")


def is_token_lists(data) -> bool:
    """Whether ``data`` looks like tokenised documents: a list of lists (or arrays), with a string among their
    items."""
    return (isinstance(data, (list, tuple)) and bool(data)
            and all(isinstance(d, (list, tuple)) or (isinstance(d, np.ndarray) and d.ndim == 1) for d in data)
            and any(isinstance(w, str) for d in data for w in d))


def is_text_column(data) -> bool:
    """Whether ``data`` is a 1-D NumPy array or pandas Series whose entries are all strings. A column of texts with a
    missing entry (None, NaN) is refused here, in one line, rather than read as numbers."""
    if not (isinstance(data, np.ndarray) or (hasattr(data, "to_numpy") and not hasattr(data, "columns"))):
        return False
    values = data.to_numpy() if hasattr(data, "to_numpy") else data
    if values.ndim != 1 or not len(values) or values.dtype.kind not in "UO":
        return False
    bad = next((i for i, t in enumerate(values) if not isinstance(t, str)), None)
    if bad is not None and any(isinstance(t, str) for t in values):
        raise DPTopicError(f"text {bad} of the column is {values[bad]!r}, not a string: fill or drop the missing texts"
                           " first (for example df['text'].fillna('')).")
    return bad is None


def refuse_gensim_bow(data) -> None:
    """gensim's bag-of-words corpus (a list of documents, each a list of ``(word_id, count)`` pairs) is neither a
    count matrix nor token lists: refuse it in one line that says how to convert it, rather than reading it as a
    3-D array. (Its width, the number of ``Dictionary`` entries, is not in the pairs: converting it here could
    drop the last words.)"""
    if not (isinstance(data, (list, tuple)) and data and all(isinstance(d, (list, tuple)) for d in data)):
        return
    pairs = (p for d in data for p in d)            # stops at the first item that is no pair (a row of counts)
    if any(len(d) for d in data) and all(isinstance(p, (list, tuple)) and len(p) == 2 and not isinstance(p[0], str)
                                         for p in pairs):
        raise DPTopicError("this looks like gensim's bag-of-words corpus (lists of (word_id, count) pairs): pass the"
                           " tokenised documents (lists of words), or the count matrix"
                           " gensim.matutils.corpus2csc(bow, num_terms=len(dictionary)).T with"
                           " vocabulary=[dictionary[i] for i in range(len(dictionary))].")


def as_corpus(data, vocabulary=None, uncut: bool = False) -> Corpus:
    """Accept a :class:`Corpus`, a scipy.sparse/dense document-term matrix (or an array-like, nested lists of
    counts), a list of strings (tokenised here) or a list of lists of words (tokenised already). ``uncut``: a
    vocabulary built here from texts or words keeps every word (no ``max_vocab``), as DP set union needs."""
    if isinstance(data, Corpus):
        return data.require_nonempty()
    if isinstance(data, (list, tuple)) and not data:
        raise DPTopicError("empty corpus: no documents were given; pass at least one document.")
    cap = {"max_vocab": None} if uncut and vocabulary is None else {}
    if is_text_column(data):                     # a NumPy array or pandas Series of texts (df["text"])
        return Corpus.from_texts([str(t) for t in data], vocabulary=vocabulary, **cap)
    if sp.issparse(data) or isinstance(data, np.ndarray):
        return Corpus.from_bow(data, vocabulary=vocabulary)
    if isinstance(data, (list, tuple)) and data and all(isinstance(t, str) for t in data):
        return Corpus.from_texts(data, vocabulary=vocabulary, **cap)
    if (isinstance(data, (list, tuple)) and any(isinstance(t, str) for t in data)
            and all(isinstance(t, str) or t is None or (isinstance(t, float) and t != t) for t in data)):
        bad = next(i for i, t in enumerate(data) if not isinstance(t, str))      # a missing text (None, NaN)
        raise DPTopicError(f"document {bad} of the list is {data[bad]!r}, not a string: give a string for every"
                           " document ('' for an empty one), or drop the missing ones.")
    if is_token_lists(data):
        return Corpus.from_tokens(data, vocabulary=vocabulary, **cap)
    refuse_gensim_bow(data)
    if hasattr(data, "__array__") or (isinstance(data, (list, tuple)) and data
                                      and all(isinstance(r, (list, tuple, np.ndarray)) for r in data)):
        return Corpus.from_bow(data, vocabulary=vocabulary)      # an array-like or nested lists of counts
    raise DPTopicError(f"cannot use a {type(data).__name__} as a corpus: pass a dptopic Corpus, a document-term matrix, a list of strings (one per document) or a list of lists of words.")
