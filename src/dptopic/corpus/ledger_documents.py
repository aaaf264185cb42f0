"""The documents an input holds, as the dataset ledger knows them (:mod:`dptopic.dataset_ledger.charge`): each
document's content digest (:mod:`dptopic.corpus.identity`) and, where the input carries one, its person."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from .corpus import Corpus
from .identity import bag_digests, count_digests, text_digests, token_digests

if TYPE_CHECKING:
    from ..dataset_ledger.identity import Documents


def documents_of(X, user_ids=None) -> Documents | None:
    """The documents a fit of ``X`` reads, as the ledger knows them (:class:`~dptopic.dataset_ledger.identity.
    Documents`): a Corpus read from text by its texts' digests, one without its
    texts (or a count matrix, or a DataFrame) by its bags of words, strings by their texts, token lists by their
    words; their persons from ``user_ids`` or the corpus's own. None for an input that cannot be read twice (an
    iterator, a function)."""
    import scipy.sparse as sp  # scipy.sparse: kept off this module's import (a light start)

    persons = None if user_ids is None else [str(u) for u in user_ids]
    if isinstance(X, Corpus):
        keys = X.content_keys if X.content_keys is not None else bag_digests(X.doc_ptr, X.word_ids, X.vocabulary.words)
        persons = persons if persons is not None else X.user_ids
        lengths = X.doc_lengths
        return _documents(keys, persons, int(lengths.max()) if len(lengths) else 0)
    if sp.issparse(X) or isinstance(X, np.ndarray) and X.ndim == 2 and X.dtype.kind in "uif":
        m = sp.csr_matrix(X)
        words = getattr(X, "feature_names", None) or [f"#{j}" for j in range(m.shape[1])]
        return _documents(count_digests(m, list(words)), persons, int(np.asarray(m.sum(axis=1)).max(initial=0)))
    if hasattr(X, "to_numpy") and hasattr(X, "columns"):      # a DataFrame of counts
        m = sp.csr_matrix(np.asarray(X.to_numpy(), dtype=float))
        return _documents(count_digests(m, [str(c) for c in X.columns]), persons,
                          int(np.asarray(m.sum(axis=1)).max(initial=0)))
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, str) for d in X):
        # a token is at least one character and the next starts after another: at most (length + 1) / 2 of them
        return _documents(text_digests(X), persons, max((len(d) + 1) // 2 for d in X))
    if isinstance(X, (list, tuple)) and X and all(isinstance(d, (list, tuple)) and all(isinstance(w, str) for w in d)
                                                  for d in X):
        return _documents(token_digests(X), persons, max(len(d) for d in X))
    paths = getattr(X, "paths", None)      # a shard set: each shard is a saved corpus
    if isinstance(paths, (list, tuple)) and paths and all(os.path.isfile(str(p)) for p in paths):
        parts = [documents_of(Corpus.load(p)) for p in paths]
        people = None if any(p.persons is None for p in parts) else [u for p in parts for u in p.persons]
        return _documents(np.concatenate([p.digests for p in parts]), persons or people,
                          max(p.max_tokens or 0 for p in parts))
    return None


def _documents(keys, persons, max_tokens) -> Documents | None:
    from ..dataset_ledger.identity import Documents  # the ledger's record (SQLite): loaded when a fit is charged

    if keys is None or not len(keys):
        return None
    if persons is not None and len(persons) != len(keys):
        persons = None          # a fit refuses persons that do not match its documents, in its own words
    return Documents(np.asarray(keys, dtype=np.uint64), persons, max_tokens or None)
