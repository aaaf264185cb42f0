"""A rectangular co-occurrence release with public word vectors (``vectors_route="rectangular"``): many words as
rows, against a few columns (the most frequent words, "hubs", and groups of the other words made by their vectors).

The square grouped release (:mod:`dptopic.moments.public_groups`) holds a quarter of the kept words as words of
their own, so only those get topic weights of their own; the release over every kept word puts each of their pairs
under noise whose spectral edge grows as ``2 s sqrt(n)``. A rectangular release ``n_rows x n_columns`` has its
noise's largest singular value near ``s (sqrt(n_rows) + sqrt(n_columns))`` (``support.rectangular_edge``), with no
symmetrising to halve the noise's variance: with 500 rows and 50 columns that is 29.4 s against 31.6 s for a
500-word square release (``2 (s / sqrt(2)) sqrt(500)``), while every row word still gets a topic profile of its own
(its row: its pairs with the columns), and the column groups carry the rarer words.

The per-document statistic: ``r`` the document's counts of the row words, ``c`` its counts of the columns (a word
column counts its word, a group column the sum of its words), ``P`` the pairs of a token with itself (a row word
that is also in a column: ``P[a, column of a] = r_a``), and the document adds ``(r c^T - P) / ||r c^T - P||_F``:
one document moves the sum by at most 1 in Frobenius norm, the sensitivity of the square release
(:func:`dptopic.moments.document_statistics.normalised_rectangular`, compiled in
:func:`dptopic.kernels.pair_moments.normalised_rectangular_bow`). Its expectation under a topic model is ``A_rows R
B_columns^T``; :func:`rectangular_topics` reads the rows' topics by the anchor method on its rows
(``method="direct"``, what the library uses) or on its Gram matrix ``M M^T`` less its noise's expected part
(``"gram"``), and the columns' weights in each topic, by which :func:`place_by_columns` places the words outside
the rows. Which topics stand above the noise is decided on ``M``'s singular values
(:func:`dptopic.moments.support.rectangular_supported_topics`).

Everything here reads the first release's noisy counts, public vectors and the noisy rectangular release, never the
documents: post-processing (Dwork & Roth 2014, Prop 2.1). Measured against the other routes:
``docs/research/public_vectors.md``.
"""
from __future__ import annotations

import numpy as np

from ..errors import DPTopicError
from .factorize import _anchor_candidates, _anchor_rows, _nmf, _nnls_simplex_weights, refined_anchor_topics
from .public_groups import word_groups

RECT_ROWS = 500
"""Row words of the rectangular release with ``n_words="auto"`` (the most frequent by noisy count that clear the
false-words threshold)."""
HUBS_PER_ROW = 0.05
"""Columns that are single words (the most frequent), per row: 25 for 500 rows (measured on 20 Newsgroups against
10, 20, 50 and 100: docs/research/public_vectors.md)."""
GROUPS_PER_ROW = 0.05
"""Columns that are groups of every other word with a vector (k-means of their vectors), per row: 25 for 500
rows."""


def n_hubs_for(n_rows: int) -> int:
    """Single-word columns beside ``n_rows`` rows (:data:`HUBS_PER_ROW`, at least 1)."""
    return max(1, int(round(HUBS_PER_ROW * n_rows)))


def n_groups_for(n_rows: int) -> int:
    """Group columns beside ``n_rows`` rows (:data:`GROUPS_PER_ROW`, at least 2)."""
    return max(2, int(round(GROUPS_PER_ROW * n_rows)))


def rectangular_layout(eligible, order, counts, sigma_rank: float, E, found, n_rows: int = RECT_ROWS,
                       n_hubs: int | None = None, n_groups: int | None = None):
    """``(rows, columns, groups)`` of a rectangular release: the first ``n_rows`` of ``eligible`` (the words whose
    noisy count cleared the threshold, decreasing), sorted; the column words (every candidate of ``order`` with a
    column) and each one's column: the first ``n_hubs`` of ``eligible`` alone, every other word of ``order`` with a
    vector in ``n_groups`` k-means groups weighted by noisy count (post-processing of the first release and public
    input). ``n_hubs``, ``n_groups``: by default :func:`n_hubs_for` and :func:`n_groups_for` the rows asked
    (``n_rows``), not the rows taken: where fewer words clear the threshold (a small corpus), the columns stay those
    the benchmark measured (25 words and 25 groups for 500 rows; docs/research/public_vectors.md, fourth round)."""
    weight = np.maximum(np.asarray(counts, dtype=np.float64), 0.0) + 1e-3 * float(sigma_rank)
    eligible = np.asarray(eligible, dtype=np.int64)
    rows = np.sort(eligible[:int(n_rows)])
    n_hubs = n_hubs_for(int(n_rows)) if n_hubs is None else n_hubs
    n_groups = n_groups_for(int(n_rows)) if n_groups is None else n_groups
    hubs = eligible[:max(1, min(int(n_hubs), len(rows)))]
    order = np.asarray(order, dtype=np.int64)
    candidates = np.concatenate([hubs, order[~np.isin(order, hubs)]])
    columns, groups = word_groups(candidates, weight, E, found, len(hubs), int(n_groups))
    return rows, columns, groups


def rectangular_topics(M, n_topics: int, noise_std: float, method: str = "gram", n_iter: int = 300,
                       with_columns: bool = False):
    """Topics over the rows (``n_topics x n_rows``, rows summing to 1) of the rectangular release ``M`` (noise of
    standard deviation ``noise_std`` a cell).

    ``method="gram"``: the refined anchors (:func:`~dptopic.moments.factorize.refined_anchor_topics`) read on
    ``M M^T - n_columns noise_std^2 I``, whose expectation is ``A R' A^T`` with ``A`` the rows' topics and
    ``R' = R B^T B R`` (``B`` the columns' topics). ``method="direct"``: the anchor method on ``M``'s own rows
    (each row word's profile over the columns, from ``M``'s rank-K projection, written as a convex combination of
    the anchors' rows by non-negative least squares), then ``M ~ A W`` refined by multiplicative updates that keep
    ``M``'s noisy negative cells (:func:`refine_rectangular`); ``with_columns`` also returns ``W`` (K x
    n_columns), the columns' weights in each topic (``"direct"`` only)."""
    M = np.asarray(M, dtype=np.float64)
    K = int(min(n_topics, M.shape[0]))
    if method == "gram":
        G = M @ M.T
        G[np.diag_indices_from(G)] -= M.shape[1] * float(noise_std) ** 2
        H = refined_anchor_topics((G + G.T) / 2.0, K) + 1e-9
        return H / H.sum(axis=1, keepdims=True)
    n = M.shape[0]
    U, S, Vt = np.linalg.svd(M, full_matrices=False)
    P = np.maximum((U[:, :K] * S[:K]) @ Vt[:K], 0.0)
    A = np.zeros((n, K))
    try:
        mass, cand = _anchor_candidates(P, K, None)
        live = np.flatnonzero(mass > 0)
        Pbar = P / np.where(mass > 0, mass, 1.0)[:, None]
        anchors = _anchor_rows(Pbar, cand, K)
        A[live] = _nnls_simplex_weights(Pbar, anchors, live) * mass[live, None]
    except DPTopicError:        # the projection's rank fell below K: start from the NMF of M's non-negative part
        A = _nmf(np.maximum(M, 0.0), K, 200)
        A = np.maximum(np.linalg.lstsq(A.T, np.maximum(M, 0.0).T, rcond=None)[0].T, 0.0) + 1e-12
    A = A / np.maximum(A.sum(axis=0, keepdims=True), 1e-300) + 1e-9 / n
    A /= A.sum(axis=0, keepdims=True)
    W = np.maximum(np.linalg.pinv(A) @ P, 0.0)
    A, W = refine_rectangular(M, A, W, n_iter)
    H = A.T + 1e-9
    if with_columns:
        return H / H.sum(axis=1, keepdims=True), W
    return H / H.sum(axis=1, keepdims=True)


def place_by_columns(beta: np.ndarray, rows, columns, groups, W: np.ndarray) -> np.ndarray:
    """Topics over every word (K x V, rows summing to 1) from ``beta``, whose words outside ``rows`` share a tail
    alike in every topic: each such word that is in a column of the release (``columns``, ``groups``: the column
    words and their columns) keeps its tail total across topics but is placed in the topics by its column's weights
    ``p(k | column)`` read from the release (``W``, K x n_columns: :func:`rectangular_topics`'s column factor), each
    topic keeping its tail total. Post-processing of the release."""
    beta = np.asarray(beta, dtype=np.float64)
    W = np.maximum(np.asarray(W, dtype=np.float64), 0.0)
    columns, groups = np.asarray(columns, dtype=np.int64), np.asarray(groups, dtype=np.int64)
    outside = ~np.isin(columns, np.asarray(rows, dtype=np.int64))
    words, cols = columns[outside], groups[outside]
    total = W.sum(axis=0)
    ok = total[cols] > 0
    words, cols = words[ok], cols[ok]
    if not len(words):
        return beta
    pk = W[:, cols] / total[cols][None, :]
    out = beta.copy()
    out[:, words] = pk * beta[:, words].sum(axis=0)[None, :]
    old, new = beta[:, words].sum(axis=1), out[:, words].sum(axis=1)
    out[:, words] *= (old / np.maximum(new, 1e-300))[:, None]
    return out / out.sum(axis=1, keepdims=True)


def refine_rectangular(M: np.ndarray, A: np.ndarray, W: np.ndarray, n_iter: int = 300) -> np.ndarray:
    """Least squares ``M ~ A W`` (``A >= 0``, n_rows x K, columns summing to 1; ``W >= 0``, K x n_columns) refined
    from ``(A, W)`` by multiplicative updates with ``M``'s negative part in the denominator (Ding, Li & Jordan
    2010), as :func:`~dptopic.moments.factorize.refine_moments` does for a square release. Returns ``(A, W)``."""
    Mp, Mm = np.maximum(M, 0.0), np.maximum(-M, 0.0)
    tiny = 1e-300
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(int(n_iter)):
            W = W * np.sqrt((A.T @ Mp) / np.maximum(A.T @ A @ W + A.T @ Mm, tiny))
            A = A * np.sqrt((Mp @ W.T) / np.maximum(A @ (W @ W.T) + Mm @ W.T, tiny))
            s = np.maximum(A.sum(axis=0, keepdims=True), tiny)
            A /= s
            W = W * s.T
    return A, W
