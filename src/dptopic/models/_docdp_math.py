"""Non-private maths of the document-level DP-EM trainer (:mod:`dptopic.models.docdp`).

Each document's contribution to one EM iteration is its expected word-topic counts, computed
with every word count divided by the document's L2 norm ``||c_d||_2``. The contribution
``S_d[k, w] = c_dw / ||c_d||_2 * phi_dwk`` then has Frobenius norm at most 1 (``sum_k phi_dwk^2 <= 1``),
so adding or removing one document moves the summed statistic by at most 1 in L2, whatever its
length: no clip is chosen from the data.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def unit_l2_rows(X: sp.csr_matrix) -> sp.csr_matrix:
    """Each non-empty row of ``X`` divided by its L2 norm (empty rows stay empty), with ``X``'s own index order (so
    its entries stay aligned with anything computed per entry of ``X``)."""
    X = sp.csr_matrix(X, dtype=np.float64)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    unit = count_units(X)[0][rows]         # no square overflows or underflows, whatever the counts
    scaled = X.data * unit
    Xs = sp.csr_matrix((scaled, X.indices, X.indptr), shape=X.shape)
    norms = np.sqrt(np.asarray(Xs.multiply(Xs).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix((scaled / norms[rows], X.indices.copy(), X.indptr.copy()), shape=X.shape)


def count_units(X: sp.csr_matrix):
    """``(norm_factor, theta_factor)`` per row of ``X``, as :func:`dptopic.kernels.docdp.count_units` gives them for a
    document: ``2^-600`` for a row whose largest count is above ``2^400``, ``2^600`` (the norm only) below
    ``2^-400``, else 1 (exact multiplications)."""
    from ..kernels.docdp import BIG_COUNT, SMALL_COUNT, UNIT_SHIFT  # start-up: kernels.docdp loads numba

    X = sp.csr_matrix(X)
    m = np.zeros(X.shape[0])
    nz = np.diff(X.indptr) > 0
    if X.nnz:
        m[nz] = np.maximum.reduceat(X.data, X.indptr[:-1][nz])
    big = m > BIG_COUNT
    return np.where(big, 1.0 / UNIT_SHIFT, np.where(m < SMALL_COUNT, UNIT_SHIFT, 1.0)), np.where(big, 1.0 / UNIT_SHIFT, 1.0)


def word_topic_responsibilities(X: sp.csr_matrix, beta: np.ndarray, alpha: float, inner: int,
                                theta: np.ndarray | None = None):
    """``(phi, theta)``: ``phi`` (nnz x K) each (document, word) entry's posterior over topics under
    ``beta``; ``theta`` (D x K) the documents' topic counts plus ``alpha``.

    A few fixed-point iterations of the document-topic mixture (variational-EM style) with a
    symmetric Dirichlet(``alpha``) smoothing, started from ``theta`` when given (a warm start from
    the previous iteration: private state that is never released); rows of ``phi`` sum to 1.
    """
    X = sp.csr_matrix(X)
    D = X.shape[0]
    rows = np.repeat(np.arange(D), np.diff(X.indptr))
    cols, vals = X.indices, X.data.astype(np.float64)
    K = beta.shape[0]
    agg = sp.csr_matrix((np.ones(len(rows)), (rows, np.arange(len(rows)))), shape=(D, len(rows)))
    bw = beta[:, cols].T
    if theta is None:
        theta = np.full((D, K), 1.0 / K)
    tu = count_units(X)[1]          # a document with a count above 2^400: counts and theta in units (no overflow)
    vals = vals * tu[rows]
    prior = (alpha * tu)[:, None]
    phi = bw
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(inner):
            phi = np.maximum(theta[rows] * bw, 0.0)
            total = phi.sum(axis=1, keepdims=True)
            phi /= total + 1e-300
            phi[~((total[:, 0] > 0) & (total[:, 0] < np.inf))] = 0.0   # no weight, or an overflow: as the kernel
            theta = agg @ (phi * vals[:, None]) + prior
    return phi, theta


def normalised_statistic(X: sp.csr_matrix, beta: np.ndarray, alpha: float, inner: int,
                         theta: np.ndarray | None = None):
    """``(sum_d S_d, theta)``: the K x V sum, each document's ``S_d`` of Frobenius norm <= 1 (see the
    module note), and the documents' warm-start state for the next iteration."""
    X = sp.csr_matrix(X, dtype=np.float64)
    Xn = unit_l2_rows(X)                 # same entry order as X, hence as phi
    phi, theta = word_topic_responsibilities(X, beta, alpha, inner, theta)
    V = X.shape[1]
    scatter = sp.csr_matrix((np.ones(len(Xn.indices)), (Xn.indices, np.arange(len(Xn.indices)))),
                            shape=(V, len(Xn.indices)))
    return np.asarray((scatter @ (phi * Xn.data[:, None])).T), theta


def per_document_statistic(x: np.ndarray, beta: np.ndarray, alpha: float, inner: int) -> np.ndarray:
    """One document's ``S_d`` (K x V) from its dense count vector ``x`` (for checks and tests)."""
    return normalised_statistic(sp.csr_matrix(np.asarray(x, dtype=np.float64)[None, :]), beta, alpha, inner)[0]


#: the floor every cell of a denoised release gets, in noise standard deviations (see :func:`denoise`)
FLOOR_PER_NOISE_STD = 1e-3


def denoise(release: np.ndarray, noise_std: float, threshold: float) -> np.ndarray:
    """Topic-word distributions from a noisy release only (post-processing).

    Cells below ``threshold * noise_std`` are set to zero (they are indistinguishable from noise); every cell then
    gets the floor ``FLOOR_PER_NOISE_STD * noise_std`` (one thousandth of the noise standard deviation), which keeps
    every word possible, and rows are renormalised. The floor reads only the public noise scale, never the data.
    Being in units of the noise, it makes the topics depend on the release only through ``release / noise_std``
    (the signal-to-noise ratio of each cell): a cell that passed the threshold outweighs a floored one by at least
    ``threshold / FLOOR_PER_NOISE_STD`` (2,000 at the default threshold 2) at every noise level, and under extreme
    noise (a tiny epsilon) the few cells that pass by chance do not take a topic's whole mass, as a fixed floor,
    vanishing beside a huge noise scale, let them (:class:`~dptopic.models.docdp_cooc.DocDPCooccurrence` floors its
    weights the same way). A row with no weight at all (only with ``noise_std = 0``) comes out uniform.
    """
    N = np.array(release, dtype=np.float64)
    scale = float(noise_std)
    N[N < threshold * scale] = 0.0
    N += FLOOR_PER_NOISE_STD * scale
    total = N.sum(axis=1, keepdims=True)
    empty = ~(total[:, 0] > 0)
    N[empty] = 1.0
    total[empty] = N.shape[1]
    return N / total
