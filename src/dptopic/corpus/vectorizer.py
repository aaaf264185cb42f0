"""scikit-learn's ``CountVectorizer`` whose count matrices carry their words, so that a dptopic model placed after it in
a ``Pipeline`` names its topics' words (scikit-learn passes the next step only the matrix)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer as _SKCountVectorizer


class NamedCounts(sp.csr_matrix):
    """A CSR document-term count matrix with ``feature_names`` (its columns' words)."""

    feature_names: np.ndarray | None = None


def _named(X, names) -> NamedCounts:
    out = NamedCounts(X)
    out.feature_names = np.asarray(names, dtype=object)
    return out


class CountVectorizer(_SKCountVectorizer):
    """Exactly scikit-learn's ``CountVectorizer`` (same parameters, same counts), except that ``fit_transform`` and
    ``transform`` return a :class:`NamedCounts` matrix: ``Pipeline([CountVectorizer(), LDA()])`` then keeps the
    vectorizer's words in the model (``topic_words``, ``vocabulary_``, ``feature_names_in_``)."""

    def fit_transform(self, raw_documents, y=None):
        return _named(super().fit_transform(raw_documents, y), self.get_feature_names_out())

    def transform(self, raw_documents):
        return _named(super().transform(raw_documents), self.get_feature_names_out())
