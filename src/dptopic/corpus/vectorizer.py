"""scikit-learn's ``CountVectorizer`` whose count matrices carry their words, so that a dptopic model placed after it in
a ``Pipeline`` names its topics' words (scikit-learn passes the next step only the matrix)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer as _SKCountVectorizer


class NamedCounts(sp.csr_matrix):
    """A CSR document-term count matrix with ``feature_names`` (its columns' words). ``public_vocabulary`` is True
    only when the vectorizer was given its words (``CountVectorizer(vocabulary=...)``) rather than learning them
    from the documents it was fitted on: a private trainer counts only such words as a supplied, public vocabulary."""

    feature_names: np.ndarray | None = None
    public_vocabulary: bool = False

    def _keep_names(self, out):
        """``out`` (a matrix with this one's columns, in order) with this matrix's words."""
        if isinstance(out, NamedCounts) and out.ndim == 2 and out.shape[1] == self.shape[1]:
            out.feature_names, out.public_vocabulary = self.feature_names, self.public_vocabulary
        return out

    def __getitem__(self, key):
        out = super().__getitem__(key)
        # a selection of rows keeps the columns as they are (X[:n], the folds of cross-validation); a selection of
        # columns (a permutation, feature selection) is named by the words of the columns it holds
        rows_only = not isinstance(key, tuple) or len(key) == 1 or (len(key) == 2 and (
            key[1] is Ellipsis or (isinstance(key[1], slice) and key[1] == slice(None))))
        if not rows_only:
            return self._selected_columns(out, key[1])
        return self._keep_names(out)

    def _selected_columns(self, out, cols):
        """``out`` (``X[rows, cols]``) named by the words of the columns it holds, when that selection can be read
        (a slice, integers, a boolean mask); otherwise a plain matrix, whose columns a model names ``w0, w1, ...``.
        The selection may have been made from the documents (feature selection), so its words no longer count as a
        supplied, public vocabulary."""
        if not isinstance(out, sp.spmatrix) or out.ndim != 2 or self.feature_names is None:
            return out
        try:
            idx = np.arange(self.shape[1])[cols]
        except (IndexError, TypeError, ValueError):
            idx = None
        idx = None if idx is None else np.atleast_1d(idx)
        if idx is None or idx.ndim != 1 or len(idx) != out.shape[1] or len(np.unique(idx)) != len(idx):
            # a column repeated would name two columns by one word, which no vocabulary holds
            return sp.csr_matrix(out)
        named = out if isinstance(out, NamedCounts) else NamedCounts(out)
        named.feature_names = np.asarray(self.feature_names, dtype=object)[idx]
        named.public_vocabulary = False
        return named

    def copy(self):
        return self._keep_names(super().copy())


def _named(X, names, public: bool) -> NamedCounts:
    out = NamedCounts(X)
    out.feature_names = np.asarray(names, dtype=object)
    out.public_vocabulary = bool(public)
    return out


class CountVectorizer(_SKCountVectorizer):
    """Exactly scikit-learn's ``CountVectorizer`` (same parameters, same counts), except that ``fit_transform`` and
    ``transform`` return a :class:`NamedCounts` matrix: ``make_pipeline(CountVectorizer(), LDA())`` then keeps the
    vectorizer's words in the model (``topic_words``, ``vocabulary_``, ``feature_names_in_``). Words it learned from the
    documents are, for a private trainer, chosen from the data (not covered by the guarantee); give it a public word list
    (``vocabulary=``) for a vocabulary the guarantee can treat as public."""

    def fit_transform(self, raw_documents, y=None):
        return _named(super().fit_transform(raw_documents, y), self.get_feature_names_out(), self.vocabulary is not None)

    def transform(self, raw_documents):
        return _named(super().transform(raw_documents), self.get_feature_names_out(), self.vocabulary is not None)
