"""Per-document second-moment statistics whose L2 sensitivity is 1 by construction.

For one document with word counts ``c`` (over the words kept), its contribution is
``M_d = (c c^T - diag(c)) / ||c c^T - diag(c)||_F``: the pairs of distinct tokens of the document,
scaled to Frobenius norm 1 (an empty or one-token document contributes nothing). Adding or removing
one document therefore moves the sum ``sum_d M_d`` by at most 1 in Frobenius (L2) norm, whatever its
length, so no clip is chosen from the data.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _frobenius_of_pairs(X: sp.csr_matrix) -> np.ndarray:
    """``||c c^T - diag(c)||_F`` for every row ``c`` of ``X``."""
    s2 = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    s4 = np.asarray(X.power(4).sum(axis=1)).ravel()
    diag = np.asarray((X.multiply(X) - X).power(2).sum(axis=1)).ravel()
    # ||c c^T||_F^2 = s2^2; replacing the diagonal c_i^2 by c_i^2 - c_i changes s4 into diag
    return np.sqrt(np.maximum(s2 ** 2 - s4 + diag, 0.0))


def normalised_cooccurrence(X, columns=None) -> np.ndarray:
    """The dense V' x V' sum of every document's ``M_d`` (module note), over ``columns`` of ``X``
    (all columns when None). Each document's term has Frobenius norm 1, or 0 when it has fewer than
    two tokens among the columns."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if columns is not None:
        X = sp.csr_matrix(X[:, np.asarray(columns, dtype=np.int64)])
    norms = _frobenius_of_pairs(X)
    w = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    W = sp.diags(w)
    M = np.asarray((X.T @ W @ X).todense())
    M[np.diag_indices_from(M)] -= np.asarray((W @ X).sum(axis=0)).ravel()
    return M


def document_frequency_statistic(X, with_document: bool = False, with_counts: bool = False) -> np.ndarray:
    """``sum_d b_d / ||b_d||_2`` with ``b_d`` the document's 0/1 word-presence vector: each
    document moves it by at most 1 in L2 (its term has norm 1, or 0 when empty). Its ranking of the
    words follows their document frequency. With ``with_document``, ``b_d`` has one more entry, always 1 (every
    document, empty or not, then adds a unit vector), and the word entries divided by that last one estimate the
    share of documents that hold each word."""
    B = (sp.csr_matrix(X) > 0).astype(np.float64)
    n = np.asarray(B.sum(axis=1)).ravel() + (1.0 if with_document else 0.0)
    w = np.divide(1.0, np.sqrt(n), out=np.zeros_like(n), where=n > 0)
    words = np.asarray((sp.diags(w) @ B).sum(axis=0)).ravel()
    out = np.append(words, w.sum()) if with_document else words
    if not with_counts:
        return out
    # with_counts: also sum_d c_d / ||c_d||_2, and both parts scaled by 1/sqrt(2) (norm at most 1 together)
    C = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(C.multiply(C).sum(axis=1)).ravel())
    u = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    counts = np.asarray((sp.diags(u) @ C).sum(axis=0)).ravel()
    return np.concatenate([out, counts]) / np.sqrt(2.0)


def per_document_cooccurrence(x) -> np.ndarray:
    """One document's ``M_d`` from its dense count vector (for checks and tests)."""
    return normalised_cooccurrence(sp.csr_matrix(np.asarray(x, dtype=np.float64)[None, :]))


def normalised_rectangular(X, rows, columns, groups=None) -> np.ndarray:
    """The dense ``len(rows) x n_columns`` sum of every document's ``(r c^T - P) / ||r c^T - P||_F`` (NumPy reference
    of :func:`dptopic.kernels.pair_moments.normalised_rectangular_bow`): ``r`` the document's counts of the words
    ``rows``, ``c`` its counts of the columns (the words ``columns``, or with ``groups`` the sums of each group's
    words), ``P`` a token paired with itself (``P[a, column of row a's word] = r_a``). Each document's term has
    Frobenius norm 1, or 0 when it holds no pair of distinct tokens between a row and a column."""
    X = sp.csr_matrix(X, dtype=np.float64)
    rows, columns = np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)
    groups = np.arange(len(columns)) if groups is None else np.asarray(groups, dtype=np.int64)
    n = int(groups.max()) + 1 if len(groups) else 0
    G = sp.csr_matrix((np.ones(len(columns)), (columns, groups)), shape=(X.shape[1], n))
    R = X[:, rows].toarray()
    C = (X @ G).toarray()
    col_of = np.full(X.shape[1], -1, dtype=np.int64)
    col_of[columns] = groups
    row_col = col_of[rows]
    has = row_col >= 0
    own = np.zeros_like(R)
    own[:, has] = C[:, row_col[has]]          # c at each row word's own column
    f2 = (R ** 2).sum(axis=1) * (C ** 2).sum(axis=1) + (R[:, has] ** 2 * (1.0 - 2.0 * own[:, has])).sum(axis=1)
    w = np.divide(1.0, np.sqrt(np.maximum(f2, 0.0)), out=np.zeros_like(f2), where=f2 > 1e-12)
    M = (R * w[:, None]).T @ C
    np.subtract.at(M, (np.flatnonzero(has), row_col[has]), (R[:, has] * w[:, None]).sum(axis=0))
    return M
