"""A rectangular co-occurrence release with public word vectors (``vectors_route="rectangular"``): many words as
rows, against a few columns (the most frequent words, "hubs", and groups of the other words made by their vectors).

The square grouped release (:mod:`dptopic.moments.public_groups`) holds a quarter of the kept words as words of
their own, so only those get topic weights of their own; the release over every kept word puts each of their pairs
under noise whose spectral edge grows as ``2 s sqrt(n)``. A rectangular release ``n_rows x n_columns`` has its
noise's largest singular value near ``s (sqrt(n_rows) + sqrt(n_columns))`` (``support.rectangular_edge``): with
500 rows and 100 columns that is 32.4 s against 44.7 s for a 500-word square release (27% lower), while every row
word still gets a topic profile of its own (its row: its pairs with the columns).

The per-document statistic: ``r`` the document's counts of the row words, ``c`` its counts of the columns (a word
column counts its word, a group column the sum of its words), ``P`` the pairs of a token with itself (a row word
that is also in a column: ``P[a, column of a] = r_a``), and the document adds ``(r c^T - P) / ||r c^T - P||_F``:
one document moves the sum by at most 1 in Frobenius norm, the sensitivity of the square release
(:func:`dptopic.moments.document_statistics.normalised_rectangular`, compiled in
:func:`dptopic.kernels.pair_moments.normalised_rectangular_bow`). Its expectation under a topic model is ``A_rows R
B_columns^T``; :func:`rectangular_topics` reads the rows' topics from the Gram matrix ``M M^T`` less its noise's
expected part, ``n_columns s^2 I``, which has the form ``A R' A^T`` the refined anchors read
(:mod:`dptopic.moments.factorize`). Which topics stand above the noise is decided on ``M``'s singular values
(:func:`dptopic.moments.support.rectangular_supported_topics`).

Everything here reads the first release's noisy counts, public vectors and the noisy rectangular release, never the
documents: post-processing (Dwork & Roth 2014, Prop 2.1). Measured against the other routes:
``docs/research/public_vectors.md``.
"""
from __future__ import annotations

import numpy as np

from .factorize import refined_anchor_topics
from .public_groups import word_groups

RECT_ROWS = 500
"""Row words of the rectangular release with ``n_words="auto"`` (the most frequent by noisy count that clear the
false-words threshold)."""
HUBS_PER_ROW = 0.1
"""Columns that are single words (the most frequent), per row: 50 for 500 rows."""
GROUPS_PER_ROW = 0.1
"""Columns that are groups of every other word with a vector (k-means of their vectors), per row: 50 for 500 rows."""


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
    input). ``n_hubs``, ``n_groups``: by default :func:`n_hubs_for` and :func:`n_groups_for` the rows taken."""
    weight = np.maximum(np.asarray(counts, dtype=np.float64), 0.0) + 1e-3 * float(sigma_rank)
    eligible = np.asarray(eligible, dtype=np.int64)
    rows = np.sort(eligible[:int(n_rows)])
    n_hubs = n_hubs_for(len(rows)) if n_hubs is None else n_hubs
    n_groups = n_groups_for(len(rows)) if n_groups is None else n_groups
    hubs = eligible[:max(1, min(int(n_hubs), len(rows)))]
    order = np.asarray(order, dtype=np.int64)
    candidates = np.concatenate([hubs, order[~np.isin(order, hubs)]])
    columns, groups = word_groups(candidates, weight, E, found, len(hubs), int(n_groups))
    return rows, columns, groups


def rectangular_topics(M, n_topics: int, noise_std: float) -> np.ndarray:
    """Topics over the rows (``n_topics x n_rows``, rows summing to 1) of the rectangular release ``M`` (noise of
    standard deviation ``noise_std`` a cell): the refined anchors (:func:`~dptopic.moments.factorize.
    refined_anchor_topics`) read on ``M M^T - n_columns noise_std^2 I``, whose expectation is ``A R' A^T`` with ``A``
    the rows' topics and ``R' = R B^T B R`` (``B`` the columns' topics)."""
    M = np.asarray(M, dtype=np.float64)
    G = M @ M.T
    G[np.diag_indices_from(G)] -= M.shape[1] * float(noise_std) ** 2
    K = int(min(n_topics, M.shape[0]))
    H = refined_anchor_topics((G + G.T) / 2.0, K) + 1e-9
    return H / H.sum(axis=1, keepdims=True)
