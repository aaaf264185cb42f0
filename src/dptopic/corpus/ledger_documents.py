"""The documents an input holds, as the dataset ledger knows them (:mod:`dptopic.dataset_ledger.charge`): each
document's content digest and what the trainer reads of it (:mod:`dptopic.corpus.identity`: its token bag before and
after the vocabulary's cut, its sketch, its length) and, where the input carries one, its person."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .corpus import Corpus
from .identity import (
    READ_MIN_TOKENS,
    TokenKeys,
    bag_digests,
    count_digests,
    read_bag_digests,
    text_digests,
    token_digests,
    token_keys,
    token_list_ids,
    word_hashes,
)
from .key_file import ColumnOnDisk, KeysOnDisk
from .preprocess import Preprocessor, Tokenizer

if TYPE_CHECKING:
    from ..dataset_ledger.identity import Documents


def documents_of(X, user_ids=None) -> Documents | None:
    """The documents a fit of ``X`` reads, as the ledger knows them (:class:`~dptopic.dataset_ledger.identity.
    Documents`), with their persons from ``user_ids`` or the corpus's own; None for an input that cannot be read twice
    (an iterator, a function).

    - a Corpus read from text: its texts' digests, its token bags and sketches as its reader took them (before the
      vocabulary's cut), and its bags of words as read (after the cut);
    - a Corpus without its texts (a UCI file, a count matrix read), a count matrix or a DataFrame of counts: its
      bags of words, which are its token bags (before and after the cut alike), and their sketches;
    - strings: their texts' digests, and their tokens as ``fit`` reads them (the default tokenizer,
      :class:`~dptopic.corpus.preprocess.Preprocessor`), read once more here;
    - token lists: the words joined as the text, and the words as given as the token bag."""
    import scipy.sparse as sp  # scipy.sparse: kept off this module's import (a light start)

    persons = None if user_ids is None else [str(u) for u in user_ids]
    if isinstance(X, Corpus):
        hashes = word_hashes(X.vocabulary.words)
        digests, read = [], []
        keys = X.content_keys       # read once (a part of a corpus gathers its digests at each read)
        for p, ids in X.token_blocks():      # a block at a time: a corpus on disk, or a split's part, never whole
            if keys is None:
                digests.append(bag_digests(p, ids, hashes=hashes))
            read.append(read_bag_digests(p, ids, hashes=hashes))
        keys = keys if keys is not None else _joined(digests)
        read = _joined(read)
        persons = persons if persons is not None else X.user_ids
        lengths = X.doc_lengths
        held = X._held_keys()
        # read once: keys on disk are read back at each read (dptopic.corpus.key_file), and their sketch bands are
        # read by the ledger's record a band at a time
        if isinstance(held, KeysOnDisk):        # a large corpus: its read bags on disk beside its keys
            tk = held.with_sketches_on_disk()
            read = ColumnOnDisk.of_array(read)
        else:
            tk = X.token_keys
        if tk is None:
            tk = token_keys(X.doc_ptr, X.word_ids, X.vocabulary.words)
        return _documents(keys, persons, int(lengths.max()) if len(lengths) else 0, tk, read)
    if sp.issparse(X) or isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "uif":
        m = sp.csr_matrix(X)
        words = getattr(X, "feature_names", None) or [f"#{j}" for j in range(m.shape[1])]
        return _counts(m, list(words), persons)
    if hasattr(X, "to_numpy") and hasattr(X, "columns"):      # a DataFrame of counts
        return _counts(sp.csr_matrix(np.asarray(X.to_numpy(), dtype=float)), [str(c) for c in X.columns], persons)
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, str) for d in X):
        # a token is at least one character and the next starts after another: at most (length + 1) / 2 of them
        tok = Tokenizer(Preprocessor())
        bags = tok.read(list(X))
        tk = token_keys(bags.ptr, bags.ids, tok.words)
        return _documents(text_digests(X), persons, max((len(d) + 1) // 2 for d in X), tk)
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, (list, tuple)) and all(isinstance(w, str) for w in d)
                                                  for d in X):
        return _documents(token_digests(X), persons, max(len(d) for d in X), token_keys(*token_list_ids(X)))
    paths = getattr(X, "paths", None)      # a shard set: each shard is a saved corpus
    if isinstance(paths, (list, tuple)) and paths and all(os.path.isfile(str(p)) for p in paths):
        parts = [documents_of(Corpus.load(p)) for p in paths]
        people = None if any(p.persons is None for p in parts) else [u for p in parts for u in p.persons]
        tk = TokenKeys(*(np.concatenate([getattr(p, f) for p in parts])
                         for f in ("bags", "bands", "signatures", "lengths")))
        return _documents(np.concatenate([p.digests for p in parts]), persons or people,
                          max(p.max_tokens or 0 for p in parts), tk, np.concatenate([p.read_bags for p in parts]))
    return None


def _joined(parts: list) -> np.ndarray:
    """The blocks' digests end to end (none for a corpus of no document)."""
    return np.concatenate(parts) if parts else np.zeros(0, np.uint64)


def _counts(m, words: list, persons) -> Documents | None:
    """The documents of a CSR count matrix: their bags of words (before and after the cut: the same) and sketches,
    a document's tokens being its counts (a matrix of weights, not counts, is known by its digests alone)."""
    digests = count_digests(m, words)
    counts = np.asarray(m.data)
    tk = None
    if not counts.size or not (np.any(counts < 0) or np.any(counts != np.round(counts))):
        reps = counts.astype(np.int64)
        ids = np.repeat(m.indices.astype(np.int64), reps)
        rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
        ptr = np.zeros(m.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, weights=reps, minlength=m.shape[0]).astype(np.int64), out=ptr[1:])
        tk = token_keys(ptr, ids, words)
    read = None
    if tk is not None:
        read = digests.copy()
        read[tk.lengths < READ_MIN_TOKENS] = 0
    return _documents(digests, persons, int(np.asarray(m.sum(axis=1)).max(initial=0)), tk, read)


def _documents(keys, persons, max_tokens, tk: TokenKeys | None = None, read_bags=None) -> Documents | None:
    from ..dataset_ledger.identity import Documents  # the ledger's record (SQLite): loaded when a fit is charged

    if keys is None or not len(keys):
        return None
    if persons is not None and len(persons) != len(keys):
        persons = None          # a fit refuses persons that do not match its documents, in its own words
    extra = {} if tk is None else dict(bags=tk.bags, bands=tk.bands, signatures=tk.signatures, lengths=tk.lengths)
    if read_bags is not None and not isinstance(read_bags, ColumnOnDisk):
        read_bags = np.asarray(read_bags, dtype=np.uint64)
    return Documents(np.asarray(keys, dtype=np.uint64), persons, max_tokens or None, read_bags=read_bags, **extra)
