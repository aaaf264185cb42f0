"""The corpus: documents as CSR token arrays plus a vocabulary.

``doc_ptr`` (int64, length ``D+1``) and ``word_ids`` (int32, length ``N``): the
tokens of document ``d`` are ``word_ids[doc_ptr[d]:doc_ptr[d+1]]``.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
import io
import json
import math
import numbers
import os
import unicodedata
import warnings
import zipfile
import zlib
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import scipy.sparse as sp

from .. import _progress
from .._io import atomic_write_bytes, load_json
from .._validation import Int, IsNone, validate_value
from ..errors import DPTopicError, InputTypeError, ParameterError, ParameterWarning
from ..kernels import segment_sums
from ..kernels.minhash import bag_sums
from ..kernels.sketch_pairs import ranks_among_equal
from . import records
from .identity import SKETCH_PARAMS, TokenKeys, mix64, text_digests, token_digests, token_list_ids
from .identity import token_keys as keys_of_tokens
from .key_file import KeysOnDisk
from .numbered_ids import NumberedIds
from .preprocess import (
    BAG_OF_WORDS_FILE,
    DEFAULT_MAX_VOCAB,
    Preprocessor,
    TokenBags,
    Tokenizer,
    build_vocabulary,
    concatenate_bags,
    df_range,
    lower_word,
    no_words_message,
    resolve_stop_words,
    vocabulary_from_counts,
)

# the checks of one value that the readers of corpus files share (records.py, below this module)
from .records import USER_FIELD, _blank, _is_utf8, _missing_label, invisible_character
from .token_file import TokensOnDisk, gather
from .token_file import blocks as token_file_blocks
from .vocabulary import Vocabulary


def _empty_corpus_error(head: str) -> ParameterError:
    """An empty corpus after preprocessing: the settings that keep more words, in the caller's names."""
    return ParameterError("{head}; give more text or lower {min_df}/min_length.", "min_df", head=head,
                          key="corpus.corpus.empty_corpus", others=("max_df", "stop_words", "vocabulary"))


def _word_hashes(words, key: int) -> np.ndarray:
    """A keyed 64-bit hash of each word (BLAKE2b), so a document's hash is the sum over its tokens."""
    k = str(key).encode()
    return np.array([int.from_bytes(hashlib.blake2b(w.encode("utf-8"), digest_size=8, key=k).digest(), "little")
                     for w in words], dtype=np.uint64)


MAX_TOKENS = 2**31 - 1
"""Most tokens a corpus holds (token positions are indexed by int32 in the kernels' callers)."""
CORPUS_FORMAT_VERSION = 1   # of the .npz header that Corpus.save writes and Corpus.load reads


def _kept_keys(keys, rows: np.ndarray):
    """The keys of the documents ``rows`` keeps (None: none were taken), where they were held: on disk or in
    memory."""
    if keys is None:
        return None
    return keys.kept(rows) if isinstance(keys, KeysOnDisk) else keys.take(rows)


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
    if values is None or isinstance(values, NumberedIds):      # default ids: strings already, made when read
        return values
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
    """Each document's person (``user_ids=``): one non-blank string per document, refused in one line otherwise (a
    number is refused too, so that 7 and '7' cannot name two people), in Unicode normal form NFC, so that one name
    written with a precomposed letter and with a combining accent ('José' either way) is one person."""
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
        hidden = invisible_character(u)
        if hidden is not None:
            raise DPTopicError(f"{where}[{i}] holds an invisible control or format character ({hidden}): two ids"
                               " that look alike would name two people; remove such characters from the user ids.")
    return [unicodedata.normalize("NFC", str(u)) for u in values]




def user_ids_of(corpus, user_ids=None, where: str = "user_ids") -> list[str] | None:
    """The person of each document of ``corpus``: ``user_ids`` (checked as :func:`check_user_ids` checks it) or the
    corpus's own ``user_ids``; both given and different are refused in one line, never one of them used silently."""
    own = getattr(corpus, "user_ids", None)
    if user_ids is None:
        return own
    given = check_user_ids(user_ids, corpus.n_docs, where)
    if own is not None and given != own:
        row = next(i for i, (a, b) in enumerate(zip(given, own)) if a != b)
        raise DPTopicError(f"{where}= differs from the corpus's own user ids (document {row}: {given[row][:40]!r}"
                           f" against {own[row][:40]!r}): give one of them, {where}= or a corpus read with its user"
                           " ids, not both.")
    return given


def _kept_names(values, keep):
    """The entries ``keep`` of a per-document list (default ids: the same, made when read)."""
    if isinstance(values, NumberedIds):
        return values.take(np.asarray(keep, dtype=np.int64))
    return [values[i] for i in keep]


def _listed(values):
    """A per-document list as JSON writes it (default ids made now: a saved corpus's header is as it was)."""
    return list(values) if isinstance(values, NumberedIds) else values


def _sequence(name: str, values):
    """``labels=`` or ``doc_ids=`` as a list in document order; None stays None, and a single string is left for
    :func:`_names` to refuse. A dict or set (no document order), a table or 2-D array (a DataFrame's ``df[['label']]``)
    or a NumPy scalar is refused in one line, never read as its keys, its column names or one entry per row."""
    if values is None or isinstance(values, (str, bytes, NumberedIds)):
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


def reading_of(stop_words, lowercase: bool, min_length: int, keep_urls: bool = False) -> dict:
    """How raw text was read into words, as a corpus's metadata and a fitted model's ``tokenizer_["reading"]``
    record it: the stop words removed (``"english"``, ``"none"``, a file, or a list's size), the case folding, the
    shortest word kept and, when they were kept, the words of web addresses (``keep_urls``). Settings, not data: they
    say how to read more text the same way."""
    return {"stop_words": _stop_words_name(stop_words), "lowercase": bool(lowercase), "min_length": int(min_length),
            **({"keep_urls": True} if keep_urls else {})}


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


def tokenising() -> bool:
    """Whether this runs inside :func:`tokenising_progress` (a reader then shows a bar for a large input)."""
    return _TOKENISING_PROGRESS.get()


def _read_all(tok: Tokenizer, texts) -> TokenBags:
    """``tok.read`` of every text, with a progress bar inside :func:`tokenising_progress` for a large input."""
    if not _TOKENISING_PROGRESS.get() or len(texts) < PROGRESS_MIN_DOCS:
        return tok.read(texts)
    parts: list = []
    step = max(1000, len(texts) // 200)
    # transient: no line left behind (stderr stays the command's own: a one-line error after it stays one line)
    with _progress.progress_bar(len(texts), "tokenising", transient=True) as bar:
        for start in range(0, len(texts), step):
            parts.append(tok.read(texts[start:start + step]))
            bar.advance(min(step, len(texts) - start))
    return concatenate_bags(parts)


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


def warn_unreachable_words(words, pre) -> None:
    """Warn when words of a given vocabulary can never be counted in text read by ``pre``: a stop word, a word shorter
    than its ``min_length``, or one that does not tokenise to itself (upper case under lower-casing, punctuation,
    spaces). They stay in the vocabulary (and in a model's topics) without a single count."""

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
            parts.append(f"{len(stop)} stop word(s) ({', '.join(map(_short_repr, stop[:3]))}"
                         f"{', ...' if len(stop) > 3 else ''})")
        if bad:
            parts.append(f"{len(bad)} that the tokeniser never produces ({', '.join(map(_short_repr, bad[:3]))}"
                         f"{', ...' if len(bad) > 3 else ''}: upper case, punctuation, digits, spaces or fewer than"
                         f" {pre.min_length} letters)")
        # the words go in as a field (a word may hold braces); the advice names stop_words as data (ParameterWarning)
        warnings.warn(ParameterWarning(
            "the given vocabulary holds words that are never counted in text read with these options: {found}."
            " They stay in the vocabulary without counts." + (" Pass {stop_words=} to count the stop words." if stop
                                                             else ""),
            "stop_words", "none", found="; ".join(parts)), stacklevel=3)


VOCABULARY_SOURCE = "vocabulary_source"    # metadata key: "supplied" (the caller's word list) or "data"
TOKENS_SOURCE = "tokens_source"   # metadata key: set when the words came with counts, not from dptopic's tokeniser
READING = "reading"     # metadata key: how raw text was tokenised (lowercase, stop words, min_length); see reading_of
# metadata key: the max_vocab, min_df and max_df that chose a vocabulary from the data (settings, not data), and under
# "pruned" those of a later prune
VOCABULARY_CUTS = "vocabulary_cuts"


NO_CAP = 2**31 - 1
"""A ``max_vocab`` at least this large keeps every word."""


def data_cuts(corpus) -> list:
    """The recorded cuts that chose ``corpus``'s words by its own documents' counts (at build time or in a later
    prune), as ``(where, parameter, value)`` (``("built with", "max_vocab", 4)``); empty when none did or none is
    recorded. DP set union needs its candidate
    words to be each document's own, whatever the neighbouring corpus: a word cap binds on some corpus one document
    away even where it left nothing out of this one (a document with new words pushes the rarest out), and document
    frequency bounds move with one document too. So every finite ``max_vocab``, an integer ``min_df`` above 1, any
    fractional ``min_df`` above 0 (its count grows with the corpus) and any ``max_df`` but a fraction of at least 1
    counts."""
    if corpus.metadata.get(VOCABULARY_SOURCE) == "supplied":
        return []                                       # the caller's word list, not chosen from these counts
    cuts = corpus.metadata.get(VOCABULARY_CUTS)
    if not isinstance(cuts, dict):
        return []
    found = []
    for where, c in (("built with", cuts), ("pruned with", cuts.get("pruned"))):
        if not isinstance(c, dict):
            continue
        max_vocab, min_df, max_df = c.get("max_vocab"), c.get("min_df"), c.get("max_df")
        if max_vocab is not None and max_vocab < NO_CAP:
            found.append((where, "max_vocab", max_vocab))
        if min_df is not None and (min_df > 1 if isinstance(min_df, int) else min_df > 0):
            found.append((where, "min_df", min_df))
        if max_df is not None and (isinstance(max_df, int) or max_df < 1):
            found.append((where, "max_df", max_df))
    return found


def data_cut_of(corpus) -> str | None:
    """The recorded cut, if any, that chose ``corpus``'s words by its own documents' counts, as a phrase for an error
    (``built with max_vocab=4``); None when none did or none is recorded (:func:`data_cuts`)."""
    return ", ".join(f"{where} {name}={value}" for where, name, value in data_cuts(corpus)) or None


def _is_number(v) -> bool:
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


TOKEN_BLOCK_DOCS = 1 << 16
"""Documents in one block of :meth:`Corpus.token_blocks` by default: about 16 MB of tokens at 60 words a document."""


class _Rows:
    """A subset's tokens not yet gathered: rows ``rows`` of the CSR arrays ``ptr``, ``ids`` (:meth:`Corpus.subset`)."""

    __slots__ = ("ids", "ptr", "rows")

    def __init__(self, ids: np.ndarray, ptr: np.ndarray, rows: np.ndarray):
        self.ids, self.ptr, self.rows = ids, ptr, rows


class Corpus:
    """A tokenised corpus.

    Parameters
    ----------
    doc_ptr, word_ids : CSR arrays (``word_ids`` are vocabulary ids).
    vocabulary : :class:`Vocabulary` or list of words.
    labels : optional per-document labels (strings).
    doc_ids : optional per-document names.
    user_ids : optional per-document person (strings), for a guarantee per person (``unit="user"``).
    content_keys : optional per-document digest of its text as read (:mod:`dptopic.corpus.identity`; the readers
        of text set it), by which the dataset ledger knows a document; without it the ledger knows each document by
        its bag of words.
    token_keys : optional :class:`~dptopic.corpus.identity.TokenKeys`, one row per document: its token bag before
        the vocabulary's cut, its sketch and its length, taken in the pass that read it (the readers of text set it),
        by which the ledger also knows it (docs/research/identity.md).
    """

    def __init__(self, doc_ptr, word_ids, vocabulary, labels=None, doc_ids=None,
                 n_empty_dropped: int = 0, metadata: dict | None = None, user_ids=None, content_keys=None,
                 token_keys=None):
        self.doc_ptr = _index_array("doc_ptr", doc_ptr, np.int64)
        #: a subset's tokens as ``(ids, ptr, rows)`` of the corpus it was taken from, gathered when first read
        self._word_ids_of = None
        if isinstance(word_ids, _Rows):
            self._word_ids, self._word_ids_of = None, (word_ids.ids, word_ids.ptr, word_ids.rows)
        elif isinstance(word_ids, TokensOnDisk):
            self._word_ids = word_ids
        else:
            self._word_ids = _index_array("word_ids", word_ids, np.int32)
        self.vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        self.labels = _names("labels", labels)
        self.doc_ids = _names("doc_ids", doc_ids)
        self.n_empty_dropped = int(n_empty_dropped)
        self.metadata = dict(metadata or {})
        self._vocabulary_cut = None     # {"max_vocab", "words", "tokens_read"}: a max_vocab that cut words (from_texts)
        self._check()
        self.user_ids = None if user_ids is None else check_user_ids(user_ids, self.n_docs)
        #: a part's text digests as ``(digests, rows)`` of the corpus it was taken from, gathered when read
        self._content_keys_of = None
        self.content_keys = None
        if content_keys is not None:
            keys = np.asarray(content_keys)
            if keys.shape != (self.n_docs,) or keys.dtype.kind not in "ui":
                raise DPTopicError(f"content_keys must hold one 64-bit digest per document ({self.n_docs}), not an"
                                   f" array of shape {keys.shape}.")
            self.content_keys = keys.astype(np.uint64, copy=False)
        if token_keys is not None and (not isinstance(token_keys, (TokenKeys, KeysOnDisk))
                                       or len(token_keys) != self.n_docs):
            raise DPTopicError(f"token_keys must be TokenKeys of one row per document ({self.n_docs}).")
        self._token_keys = token_keys
        self._token_keys_of = None      # a subset's (its corpus's keys, its rows), gathered when first read

    @property
    def token_keys(self) -> TokenKeys | None:
        """The documents' :class:`~dptopic.corpus.identity.TokenKeys` (None: not taken). A :meth:`subset` gathers
        its rows of its corpus's keys when they are first read: a split's parts are trained on and scored by their
        tokens, and their keys (about 380 bytes a document, 375 MB at 10^6 documents) are read only where a part is
        itself charged or saved. Keys the reader kept on disk (a corpus of more than ``KEYS_IN_MEMORY`` documents read
        from text: :mod:`dptopic.corpus.key_file`) are read back at each read, and the copy goes with its reader."""
        if self._token_keys_of is not None:
            keys, rows = self._token_keys_of
            self._token_keys, self._token_keys_of = keys.take(rows), None
        keys = self._token_keys
        return keys.load() if isinstance(keys, KeysOnDisk) else keys

    def _held_keys(self) -> TokenKeys | KeysOnDisk | None:
        """The keys as this corpus holds them, for a copy of it: keys on disk stay there."""
        return self.token_keys if self._token_keys_of is not None else self._token_keys

    @property
    def word_ids(self) -> np.ndarray:
        """The tokens' vocabulary ids (int32), document after document. A :meth:`subset` gathers its documents' ids
        from its corpus when they are first read, and keeps them; a corpus the streaming reader left on disk
        (:mod:`dptopic.corpus.token_file`) reads them back once, and keeps them. A training run reads neither whole:
        its split, its ledger's record and its trainer read a block of documents at a time (:meth:`token_blocks`), so
        at 10^6 documents neither the corpus's 190 MB nor its training part's 150 MB are held beside the ledger's
        record and the counts (docs/research/pipeline.md). Until it is read, a subset reads its corpus's arrays:
        change them in place and it reads the change."""
        if self._word_ids_of is not None:
            self._word_ids, self._word_ids_of = self._gathered(), None
        elif isinstance(self._word_ids, TokensOnDisk):
            self._word_ids = self._word_ids.load()
        return self._word_ids

    def _gathered(self) -> np.ndarray:
        """A subset's ids, gathered from its corpus a block at a time into one array (rows of a corpus on disk are
        read as the ranges they span, never the whole file at once)."""
        out = np.empty(self.n_tokens, np.int32)
        for a, b, ptr, ids in self._blocks(TOKEN_BLOCK_DOCS):
            out[self.doc_ptr[a]:self.doc_ptr[b]] = ids
        return out

    def __getstate__(self) -> dict:
        """A copy (``copy.deepcopy``) holds its documents' ids, not its corpus's arrays and an index, nor a file, so two
        copies of one corpus are alike whether or not its ids were read."""
        state = dict(self.__dict__)
        if self._word_ids_of is not None:
            state["_word_ids_of"], state["_word_ids"] = None, self._gathered()
        elif isinstance(self._word_ids, TokensOnDisk):
            state["_word_ids"] = self._word_ids.load()
        if self._content_keys_of is not None:
            state["_content_keys_of"], state["_content_keys"] = None, self.content_keys
        return state

    def token_blocks(self, block_docs: int | None = None):
        """``(ptr, ids)`` of ``block_docs`` (None: :data:`TOKEN_BLOCK_DOCS`) documents at a time, in order: ``ptr``
        (int64, from 0) and ``ids`` (the block's tokens, int32), document ``d`` of the block being
        ``ids[ptr[d]:ptr[d + 1]]``. A corpus's blocks are views of its arrays; a :meth:`subset` whose ids were not read
        gathers each block from its corpus, and a corpus on disk reads each block from its file: neither holds any."""
        block_docs = TOKEN_BLOCK_DOCS if block_docs is None else block_docs
        validate_value("block_docs", block_docs, [Int(1, None)])
        for _, _, ptr, ids in self._blocks(block_docs):
            yield ptr, ids

    def _blocks(self, block_docs: int):
        """``(first, stop, ptr, ids)`` of each block of :meth:`token_blocks`."""
        if self._word_ids_of is None:       # views of the ids in memory, or read from their file
            yield from token_file_blocks(self._word_ids, self.doc_ptr, block_docs)
            return
        ids, src_ptr, rows = self._word_ids_of
        for a in range(0, self.n_docs, block_docs):
            b = min(a + block_docs, self.n_docs)
            ptr = self.doc_ptr[a:b + 1] - self.doc_ptr[a]
            yield a, b, ptr, gather(ids, src_ptr, rows[a:b], ptr)

    # ------------------------------------------------------------------ basics
    def _check(self) -> None:
        p, w, V = self.doc_ptr, self._word_ids, len(self.vocabulary)
        n = len(w) if w is not None else int(p[-1])     # a subset's lengths are its corpus's, checked there
        if p.ndim != 1 or len(p) < 1 or p[0] != 0 or p[-1] != n or np.any(np.diff(p) < 0):
            raise DPTopicError("corrupt corpus: doc_ptr must start at 0, be non-decreasing and end at the number of tokens.")
        # ids on disk checked a block at a time; a subset's were checked in its corpus
        for block in ([w] if isinstance(w, np.ndarray) else (b[3] for b in token_file_blocks(w, p)) if w is not None
                      else ()):
            if len(block) and (block.min() < 0 or block.max() >= V):
                bad = int(block.min()) if block.min() < 0 else int(block.max())
                raise DPTopicError(f"unknown word id {bad}: word ids must lie in [0, {V}) for a vocabulary of {V}"
                                   " words.")
        D = len(p) - 1
        for name, vals in (("labels", self.labels), ("doc_ids", self.doc_ids)):
            if vals is not None and len(vals) != D:
                raise DPTopicError(f"{name} has {len(vals)} entries but the corpus has {D} documents: give one per document.")

    @property
    def n_docs(self) -> int:
        return len(self.doc_ptr) - 1

    @property
    def n_tokens(self) -> int:
        return int(self.doc_ptr[-1])

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    @property
    def vocabulary_cut(self) -> dict | None:
        """What a default ``max_vocab`` left out when the vocabulary was built from text (``max_vocab``, ``words``,
        ``tokens_read``), or None when it left nothing out."""
        return None if self._vocabulary_cut is None else dict(self._vocabulary_cut)

    @property
    def doc_lengths(self) -> np.ndarray:
        return np.diff(self.doc_ptr)

    def __len__(self) -> int:
        return self.n_docs

    def __repr__(self) -> str:
        return f"Corpus({self.n_docs} documents, {self.n_tokens} tokens, V={self.vocab_size})"

    def doc(self, d: int) -> np.ndarray:
        if isinstance(self._word_ids, TokensOnDisk):        # that document alone, read from the file
            d = range(self.n_docs)[d]
            return self._word_ids.read(self.doc_ptr[d], self.doc_ptr[d + 1])
        return self.word_ids[self.doc_ptr[d]:self.doc_ptr[d + 1]]

    def doc_words(self, d: int) -> list[str]:
        return [self.vocabulary[i] for i in self.doc(d)]

    def require_nonempty(self, what: str = "corpus") -> "Corpus":
        if self.n_docs == 0 or self.n_tokens == 0:
            raise _empty_corpus_error(f"empty {what}: it has no tokens after preprocessing")
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
                   max_vocab: int | None = DEFAULT_MAX_VOCAB, min_df=1, max_df=None, min_length: int = 3,
                   stop_words="english", lowercase: bool = True, remove_stop_words: bool = True,
                   drop_empty: bool = True, user_ids=None, keep_urls: bool = False) -> "Corpus":
        """Tokenise raw strings, build (or apply) a vocabulary, drop OOV tokens and empty documents.

        ``min_df``/``max_df``: document-frequency bounds, each a count or (a float) a fraction of the documents;
        ``stop_words``: ``"english"``, ``None``, a file with one word per line, or a list of words;
        ``lowercase=False`` keeps case (``Paris`` and ``paris`` are two words). ``remove_stop_words=False`` is the
        older spelling of ``stop_words=None``. ``lowercase="match"`` (with a ``vocabulary``; how text is read into a
        fitted model's words): no stop-word list or length filter, and each token counts as written when the
        vocabulary has it, else lowercased, so a vocabulary with "NASA" and "markets" reads "NASA" and "Markets".
        ``user_ids``: each text's person (strings), kept with the documents kept. Web addresses, e-mail addresses and
        @handles are dropped before the text is split into words, unless ``keep_urls=True`` (docs/preprocessing.md)."""
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
            pre = Preprocessor(min_length=1, remove_stop_words=False, stop_words=None, lowercase=False,
                               keep_urls=bool(keep_urls))
            tok = Tokenizer(pre, vocabulary=vocabulary, grow=True)       # every token, as written
            bags = _read_all(tok, texts)
            # a token counts as written when the vocabulary has it (its first words), else lower-cased
            index, V = vocabulary._index, len(vocabulary)
            remap = np.fromiter((k if k < V else index.get(lower_word(w), -1) for k, w in enumerate(tok.words)),
                                np.int64, count=tok.n_words)
            return cls._from_bags(bags, tok, texts, labels, doc_ids, vocabulary, max_vocab, min_df, max_df,
                                  drop_empty, reading=None, user_ids=user_ids, content_keys=text_digests(texts),
                                  remap=remap, token_keys=keys_of_tokens(bags.ptr, bags.ids, tok.words))
        if not isinstance(keep_urls, (bool, np.bool_)):
            raise DPTopicError(f"invalid keep_urls={keep_urls!r}: give True (count the words of web addresses, e-mail"
                               " addresses and @handles) or False (drop them, the default).")
        pre = Preprocessor(min_length=min_length, remove_stop_words=remove_stop_words, stop_words=stop_words,
                           lowercase=bool(lowercase), keep_urls=bool(keep_urls))
        if vocabulary is not None:
            warn_unreachable_words(vocabulary.words, pre)
        # every token read, a given vocabulary's words first: the token bags before its cut are the ledger's keys
        tok = Tokenizer(pre, vocabulary=vocabulary, grow=True)
        bags = _read_all(tok, texts)
        remap = None
        if vocabulary is not None:          # the cut to the given vocabulary: its words are the table's first
            remap = np.arange(tok.n_words, dtype=np.int64)
            remap[len(vocabulary):] = -1
        return cls._from_bags(bags, tok, texts, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty,
                              reading=reading_of(stop_words if remove_stop_words else None, bool(lowercase),
                                                 min_length, bool(keep_urls)), user_ids=user_ids,
                              content_keys=text_digests(texts), remap=remap,
                              token_keys=keys_of_tokens(bags.ptr, bags.ids, tok.words))

    @classmethod
    def from_tokens(cls, docs, labels=None, doc_ids=None, *, vocabulary=None, max_vocab: int | None = DEFAULT_MAX_VOCAB,
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
        return cls._from_token_lists(docs, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty,
                                     content_keys=token_digests(docs), token_keys=keys_of_tokens(*token_list_ids(docs)))

    @classmethod
    def _from_token_lists(cls, toks, labels, doc_ids, vocabulary, max_vocab, min_df, max_df, drop_empty,
                          reading=None, user_ids=None, content_keys=None, token_keys=None):
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
        doc_ids = doc_ids if doc_ids is not None else NumberedIds(len(docs))
        if given and drop_empty and toks and not any(docs) and any(toks):
            raise DPTopicError(no_word_of_vocabulary(len(docs), vocabulary))
        if reading is not None and drop_empty and toks and not any(toks):     # the tokenizer itself kept nothing
            raise DPTopicError(no_words_message(len(toks), reading.get("min_length", 3),
                                                reading.get("stop_words", "english")))
        if given and drop_empty and toks and not any(toks):     # no text at all, whatever the vocabulary
            raise DPTopicError(f"empty corpus: none of the {len(toks)} documents holds any word (each text is empty,"
                               " blank or punctuation only): give documents with text.")
        out = cls._finish(docs, vocabulary, labels, doc_ids, drop_empty, given=given, user_ids=user_ids,
                          content_keys=content_keys, token_keys=token_keys,
                          metadata={VOCABULARY_SOURCE: "supplied" if given else "data",
                                    **({} if reading is None else {READING: reading}),
                                    **({} if given else {VOCABULARY_CUTS: _cuts(max_vocab, min_df, max_df)})})
        if cut is not None:     # for the CLI's note (not saved: figures of the documents, not settings)
            out._vocabulary_cut = {"max_vocab": cut[0], "words": cut[1], "tokens_read": sum(len(t) for t in toks)}
        return out

    @classmethod
    def _from_bags(cls, bags: TokenBags, tok: Tokenizer, texts, labels, doc_ids, vocabulary, max_vocab, min_df,
                   max_df, drop_empty, reading, user_ids=None, content_keys=None, remap=None, token_keys=None):
        """:meth:`_from_token_lists` of texts read by ``tok`` into ``bags`` (its words' ids: every token read), the
        same corpus without a Python object per token. ``remap``, with a given ``vocabulary``: each of the
        tokenizer's words' id in it (-1: none). ``token_keys``: the documents' keys before the cut
        (:func:`~dptopic.corpus.identity.token_keys` of ``bags``), kept with the documents kept."""
        given = vocabulary is not None
        cut = None
        read_any = bags.n_tokens > 0            # whether the tokenizer kept any word of any document
        if not given:
            tf, df = bags.counts(tok.n_words)
            words, passed = vocabulary_from_counts(tok.words, tf, df, bags.n_docs, max_vocab, min_df, max_df)
            if max_vocab is not None and passed > max_vocab:
                cut = (max_vocab, passed)
            vocabulary = Vocabulary(words)
            remap = np.full(tok.n_words, -1, np.int64)
            remap[tok.word_ids(words, grow=False)] = np.arange(len(words))
            docs = bags.restrict(remap)
        else:                                   # every token was read: the given vocabulary's cut
            docs = bags.restrict(remap)
        tokens_read = bags.n_tokens
        del bags            # every token read, let go once cut (a caller that passes its bags holds them no longer)
        doc_ids = doc_ids if doc_ids is not None else NumberedIds(docs.n_docs)
        if given and drop_empty and docs.n_docs and docs.n_tokens == 0 and read_any:
            raise DPTopicError(no_word_of_vocabulary(docs.n_docs, vocabulary))
        if reading is not None and drop_empty and docs.n_docs and not read_any:     # the tokenizer kept nothing
            raise DPTopicError(no_words_message(docs.n_docs, reading.get("min_length", 3),
                                                reading.get("stop_words", "english")))
        if given and drop_empty and docs.n_docs and not read_any:     # no text at all, whatever the vocabulary
            raise DPTopicError(f"empty corpus: none of the {docs.n_docs} documents holds any word (each text is"
                               " empty, blank or punctuation only): give documents with text.")
        out = cls._finish(docs, vocabulary, labels, doc_ids, drop_empty, given=given, user_ids=user_ids,
                          content_keys=content_keys, token_keys=token_keys,
                          metadata={VOCABULARY_SOURCE: "supplied" if given else "data",
                                    **({} if reading is None else {READING: reading}),
                                    **({} if given else {VOCABULARY_CUTS: _cuts(max_vocab, min_df, max_df)})})
        if cut is not None:     # for the CLI's note (not saved: figures of the documents, not settings)
            out._vocabulary_cut = {"max_vocab": cut[0], "words": cut[1], "tokens_read": tokens_read}
        return out

    @classmethod
    def _finish(cls, docs, vocabulary, labels, doc_ids, drop_empty=True, metadata=None, given=True,
                user_ids=None, content_keys=None, token_keys=None) -> "Corpus":
        """The corpus of ``docs`` (word ids: a list per document, or :class:`TokenBags` of the vocabulary's ids).
        ``given``: the vocabulary is the caller's, not built from ``docs``."""
        bags = docs if isinstance(docs, TokenBags) else None
        lengths = bags.lengths() if bags is not None else np.fromiter(map(len, docs), np.int64, count=len(docs))
        if user_ids is not None:
            user_ids = check_user_ids(user_ids, len(lengths))
        labels, doc_ids = _sequence("labels", labels), _sequence("doc_ids", doc_ids)
        if labels is not None:      # NaN or '' is no label (not the class 'nan' or ''); None: _names says so
            _check_entries("labels", labels)
        labels, doc_ids = _names("labels", labels), _names("doc_ids", doc_ids)
        for name, vals in (("labels", labels), ("doc_ids", doc_ids)):
            if vals is not None and len(vals) != len(lengths):
                raise DPTopicError(f"{name} has {len(vals)} entries but there are {len(lengths)} documents: give one"
                                   " per document.")
        if doc_ids is not None and not isinstance(doc_ids, NumberedIds) and len(set(doc_ids)) != len(doc_ids):
            seen: set = set()
            dup = next(x for x in doc_ids if x in seen or seen.add(x))
            raise DPTopicError(f"doc_ids holds {dup!r} more than once: give every document its own id.")
        kept = np.flatnonzero(lengths > 0) if drop_empty else np.arange(len(lengths))
        n_drop = len(lengths) - len(kept)
        # every document kept: its fields as they are, not a copy (at 10^7 documents a list of their numbers took
        # 360 MB, and each field's copy 80 MB more)
        keep = kept.tolist() if n_drop or bags is None else range(len(lengths))
        if not len(keep):
            raise _empty_corpus_error("empty corpus: every document is empty after preprocessing")
        # a vocabulary built from the documents to model them needs two words; documents kept one row per input
        # (drop_empty=False) with words of their own are read to be mapped onto a vocabulary given later (a server's:
        # submit, fed-client), where one distinct word, or none, is a valid contribution
        if len(vocabulary) < 2 and (given or drop_empty):
            raise DPTopicError(f"vocabulary too small: {len(vocabulary)} word(s) survived preprocessing; at least 2 are needed (lower min_df or give more text).")
        rows = dict(labels=None if labels is None else [labels[i] for i in keep] if n_drop else labels,
                    doc_ids=None if doc_ids is None else _kept_names(doc_ids, keep) if n_drop else doc_ids,
                    user_ids=None if user_ids is None else [user_ids[i] for i in keep] if n_drop else user_ids,
                    # every document kept: the keys as they are, not a copy (at 10^6 documents, 380 MB of sketches)
                    content_keys=None if content_keys is None else np.asarray(content_keys)[keep] if n_drop else
                    np.asarray(content_keys),
                    token_keys=_kept_keys(token_keys, kept.astype(np.int64)) if n_drop else token_keys,
                    n_empty_dropped=n_drop, metadata=metadata)
        if bags is None:
            return cls.from_token_ids([docs[i] for i in keep], vocabulary, **rows)
        ptr = np.zeros(len(keep) + 1, np.int64)     # an empty document dropped held no ids: the ids stay as they are
        np.cumsum(lengths[kept], out=ptr[1:])
        return cls(ptr, bags.ids, vocabulary, **rows)

    @classmethod
    def from_bow(cls, X, vocabulary=None) -> "Corpus":
        """From a document-term count matrix (scipy.sparse or dense), as scikit-learn users pass. A matrix that
        carries its columns' words (:class:`dptopic.corpus.vectorizer.CountVectorizer`'s) must carry ``vocabulary``'s."""
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
        c = cls(ptr, cols, vocab, metadata={TOKENS_SOURCE: BAG_OF_WORDS_FILE})
        if c.n_tokens == 0:
            raise DPTopicError("empty corpus: the document-term matrix has no counts.")
        return c

    @classmethod
    def from_uci(cls, docword, vocab, drop_empty: bool = True) -> "Corpus":
        """Read the UCI bag-of-words format (``docword.*.txt[.gz]`` + ``vocab.*.txt``). Each document's id
    (``doc_ids``) is its UCI document number (``"1"``, ``"2"``, ...), so the documents that have no entry, which
    are dropped (counted in ``n_empty_dropped``), show as missing numbers; ``drop_empty=False`` keeps them as
    empty documents (one per document number, as ``dptopic transform`` reads them)."""
        X, words = records.uci_counts(docword, vocab)
        c = cls.from_bow(X, vocabulary=words)
        c = cls(c.doc_ptr, c.word_ids, c.vocabulary, doc_ids=[str(i) for i in range(1, X.shape[0] + 1)],
                metadata=c.metadata)
        return c.drop_empty() if drop_empty else c

    @classmethod
    def from_jsonl(cls, path, text_field: str = "text", label_field: str | None = None, id_field: str | None = None,
                   require_ids: bool = True, user_field: str | None = None, **kw) -> "Corpus":
        """One JSON object per line; ``id_field`` names the field holding each document's id (``doc_ids``, which
        ``dptopic transform`` writes beside its rows). Every record must have it, unless ``require_ids=False``: then
        the ids are used only when every record has one, and are ``doc0, doc1, ...`` otherwise. Two records with the
        same id are refused (used as ``doc0, ...`` with ``require_ids=False``). ``user_field`` names the field holding
        each document's person (``user_ids``, a string in every record)."""
        read = records.jsonl_records(path, text_field, label_field, id_field, require_ids, user_field)
        return cls._from_records(read, **kw)

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
        read = records.csv_records(path, text_column, label_column, id_column, require_ids, delimiter, user_column)
        return cls._from_records(read, **kw)

    @classmethod
    def from_directory(cls, path, pattern: str = "*.txt", users_by_folder: bool = False, **kw) -> "Corpus":
        """One document per file matching ``pattern`` (the default ``*.txt`` in any case: ``NOTES.TXT`` too) in the
        folder and its sub-folders (a sub-folder's name is its
        files' label, and when there are sub-folders a file directly in the folder gets the folder's own name), in
        sorted order; hidden files and folders (names starting with '.') are left out. ``users_by_folder``: a folder
        of folders, one per person: each file's ``user_ids`` entry is the sub-folder it lies in (at any depth)."""
        return cls._from_records(records.directory_records(path, pattern, users_by_folder), **kw)

    @classmethod
    def _from_records(cls, read: "records.TextRecords", **kw) -> "Corpus":
        """The corpus of the documents of a file as :mod:`dptopic.corpus.records` read them (``kw``: as for
        :meth:`from_texts`); where their persons were read from is kept in the metadata (``user_field``: the model and
        its card name it)."""
        c = cls.from_texts(read.texts, labels=read.labels, doc_ids=read.doc_ids, user_ids=read.user_ids, **kw)
        if read.user_source:
            c.metadata[USER_FIELD] = read.user_source
        return c

    def subset(self, indices) -> "Corpus":
        # the rows as they are now (a copy: the caller's index may change), one read-only array shared by the tokens,
        # the keys and the default ids that a part gathers when first read (three copies took 24 bytes a document)
        idx = np.array(indices, dtype=np.int64)
        idx.flags.writeable = False
        lengths = self.doc_lengths[idx]
        ptr = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lengths, out=ptr[1:])
        rows = idx                          # this corpus's rows, as the part's tokens and keys name them
        if self._word_ids_of is None:
            ids = _Rows(self._word_ids, self.doc_ptr, rows)
        else:
            rows = self._word_ids_of[2][idx]
            rows.flags.writeable = False
            ids = _Rows(self._word_ids_of[0], self._word_ids_of[1], rows)
        pick = lambda v: None if v is None else _kept_names(v, idx)  # noqa: E731
        out = Corpus(ptr, ids, self.vocabulary, labels=pick(self.labels), doc_ids=pick(self.doc_ids),
                     metadata=self.metadata, user_ids=pick(self.user_ids),
                     content_keys=None)
        # the text digests, as the tokens, named by the first corpus's rows and gathered when read (a part of 8 x 10^6
        # documents held 61 MB of them through the ledger's record, which reads the whole corpus's)
        if self._content_keys_of is not None:
            src, src_rows = self._content_keys_of
            same = self._word_ids_of is not None and src_rows is self._word_ids_of[2]
            out._content_keys_of = (src, rows if same else src_rows[idx])
        elif self._content_keys is not None:
            out._content_keys_of = (self._content_keys, idx)
        if self._token_keys is not None or self._token_keys_of is not None:
            if self._token_keys_of is None:
                out._token_keys_of = (self._token_keys, idx)
            else:       # the same rows as the tokens' where both name the first corpus's (no second array)
                src = self._token_keys_of[1]
                same = self._word_ids_of is not None and src is self._word_ids_of[2]
                out._token_keys_of = (self._token_keys_of[0], rows if same else src[idx])
        return out

    @property
    def content_keys(self):
        """Each document's text digest as read (uint64[n]), or None. A part of a corpus (:meth:`subset`) gathers its
        own from the corpus's when read: each read is a new array, and none is held by the part."""
        if self._content_keys_of is None:
            return self._content_keys
        keys, rows = self._content_keys_of
        return keys[rows]

    @content_keys.setter
    def content_keys(self, value):
        self._content_keys, self._content_keys_of = value, None

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
        # each document's sum of its words' hashes, modulo 2**64, compiled: no array of the tokens' size (a gather of
        # the hashes and its cumulative sum took two, 800 MB at 10^6 documents, the split's peak)
        sums = np.empty(self.n_docs, dtype=np.uint64)
        for a, b, ptr, ids in self._blocks(TOKEN_BLOCK_DOCS):       # a block at a time: a corpus on disk stays there
            bag_sums(np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(ids), word_hash, sums[a:b])
        h = mix64(sums)
        del sums
        # the k-th copy of a bag of words hashes with k: copies spread over both parts, and adding one more copy
        # adds one document to one part (which copy is which does not matter: they are the same document); each
        # copy's k by one sort in place (np.unique's inverse and its stable argsort took 90 bytes a document)
        copy = ranks_among_equal(h)
        with np.errstate(over="ignore"):
            u = (mix64(h ^ (copy * np.uint64(0x9E3779B97F4A7C15))) >> np.uint64(11)) / float(2 ** 53)
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
            h = mix64(np.arange(self.n_docs, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                       + mix64(np.array([int(key) & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)))
        return self._parts(((h >> np.uint64(11)) / float(2 ** 53)) < test_size)

    def person_split(self, test_size: float = 0.2, key: int = 0, user_ids=None) -> tuple["Corpus", "Corpus"]:
        """Split where whole people fall on one side: every document of a person goes to the test part when a keyed
        hash (BLAKE2b) of the person's id, read as a number in [0, 1), is below ``test_size`` (a fraction).

        The split for user-level guarantees (one person's documents added or removed): adding or removing a person
        moves no other person's document, whatever they wrote, while :meth:`stable_split` tells the copies of one
        message apart by their rank in file order, so removing one person's copy could move other people's copies
        across. The person of each document is ``user_ids`` (one string per document) or, when it is None, the
        corpus's own :attr:`user_ids`; the parts carry them. ``key`` (public) picks another split."""
        ids = self.user_ids if user_ids is None else check_user_ids(user_ids, self.n_docs)
        if ids is None:
            raise ParameterError("a split by person needs the person of each document: give {user_ids=} (one string"
                                 " per document), or a Corpus read with its user ids ({user_field=}).", "user_ids",
                                 others=("user_field",))
        self._check_split(test_size, "a split by person")
        src = self if ids is self.user_ids else Corpus(
            self.doc_ptr, self.word_ids, self.vocabulary, labels=self.labels, doc_ids=self.doc_ids,
            n_empty_dropped=self.n_empty_dropped, metadata=self.metadata, user_ids=ids, content_keys=self.content_keys,
            token_keys=self._held_keys())
        k = (int(key) & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")
        side: dict = {}
        for u in ids:
            if u not in side:
                h = int.from_bytes(hashlib.blake2b(u.encode("utf-8"), digest_size=8, key=k).digest(), "little")
                side[u] = (h >> 11) / float(2 ** 53) < test_size
        test = np.fromiter((side[u] for u in ids), dtype=bool, count=len(ids))
        return src._parts(test, f"{len(side)} people")

    def _check_split(self, test_size, what: str) -> None:
        """The checks of :meth:`stable_split` and :meth:`position_split`: a fraction, and two documents to split."""
        if isinstance(test_size, bool) or not isinstance(test_size, numbers.Real) or isinstance(test_size, numbers.Integral) \
                or not 0 < test_size < 1:
            raise DPTopicError(f"invalid test_size={test_size!r}: {what} needs a fraction in (0, 1).")
        if self.n_docs < 2:
            raise DPTopicError(f"cannot split a corpus of {self.n_docs} document(s) into train and test parts: give at"
                               " least 2 documents.")

    def _parts(self, test: np.ndarray, what: str | None = None) -> tuple["Corpus", "Corpus"]:
        """``(train, test)`` from a boolean mask of the test documents, neither part empty (``what``: what was split,
        "12 people"; the documents by default)."""
        if test.all() or not test.any():
            what = what or f"{self.n_docs} documents"
            raise ParameterError("the split put all {what} in one part: give more {unit}, or another {test_size} or"
                                 " key.", "test_size", what=what, unit=what.split()[-1],
                                 key="corpus.corpus.parts")
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
                     content_keys=self.content_keys, token_keys=self._held_keys(),
                     metadata={**kept, VOCABULARY_SOURCE: "supplied"})   # the caller's word list
        return out.drop_empty() if drop_empty else out

    def prune(self, max_vocab: int | None = DEFAULT_MAX_VOCAB, min_df=1, max_df=None, remove_stop_words: bool = False,
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
                "labels": self.labels, "doc_ids": _listed(self.doc_ids), "n_empty_dropped": self.n_empty_dropped,
                "metadata": self.metadata, **({} if self.user_ids is None else {"user_ids": self.user_ids})}
        buf = io.BytesIO()
        keys = {} if self.content_keys is None else {"content_keys": self.content_keys}  # the ledger's identity
        token = self.token_keys     # read once: keys on disk are read back at each read
        if token is not None:     # and its token bags and sketches, with the sketch's parameters
            keys.update(token.arrays())
            meta["sketch_params"] = SKETCH_PARAMS
        np.savez(buf, doc_ptr=self.doc_ptr, word_ids=self.word_ids,
                 meta=np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8), **keys)
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
            raise ParameterError("{path} is not an .npz corpus (a file written by 'dptopic corpus prepare'): give"
                                 " {format=shown} for what it holds (text: one document per line, jsonl, csv), or"
                                 " prepare it with 'dptopic corpus prepare'.", "format", "npz", path=repr(str(path)),
                                 shown="FORMAT")
        try:
            with np.load(path, allow_pickle=False) as z:
                missing = [k for k in ("meta", "doc_ptr", "word_ids") if k not in z.files]
                if missing:     # another program's .npz (or an array saved with np.savez): say what it holds
                    held = ", ".join(z.files[:5]) + (", ..." if len(z.files) > 5 else "") if z.files else "none"
                    raise DPTopicError(f"{str(path)!r} is not a dptopic corpus: it has no {missing[0]!r} array"
                                       f" (arrays: {held}); give a .npz written by 'dptopic corpus prepare'.")
                meta = load_json(z["meta"].tobytes().decode("utf-8"), "the corpus header")
                ptr, ids = z["doc_ptr"], z["word_ids"]
                keys = z["content_keys"] if "content_keys" in z.files else None
                tokens = {f: z[f] for f in z.files if f.startswith("token_")}
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
            # token keys made with other sketch parameters are left out (a ledger compares sketches of one kind)
            tk = (TokenKeys.from_arrays(tokens, len(ptr) - 1) if meta.get("sketch_params") == SKETCH_PARAMS
                  else None)
            return cls(ptr, ids, vocab, labels=meta.get("labels"), doc_ids=meta.get("doc_ids"),
                       n_empty_dropped=n_drop, metadata=extra, user_ids=meta.get("user_ids"), content_keys=keys,
                       token_keys=tk)
        except DPTopicError as e:
            raise DPTopicError(f"{bad}: {str(e).rstrip('.')}; {fix}.") from None




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
