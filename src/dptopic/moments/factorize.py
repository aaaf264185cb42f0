"""Topic-word distributions from a (noisy) symmetric word co-occurrence matrix.

``method="nmf"``: cells below ``threshold`` noise standard deviations set to zero (indistinguishable
from noise), then non-negative matrix factorisation ``Q ~ W H`` (scikit-learn, deterministic NNDSVDa
start, Frobenius loss); the K rows of ``H``, normalised, are the topics.

``method="anchors"``: the anchor-word method of Arora et al. (ICML 2013): rows of ``Q`` normalised to
conditional distributions, K anchor words chosen greedily among the ``n_candidates`` words of largest
row mass (each the row farthest from the span of the previous ones), every word's row written as a
convex combination of the anchors' rows (exponentiated gradient on the simplex, L2 loss), and Bayes'
rule turns those weights and the row masses into topics.

``method="refined-anchors"``: the moment method, consistent as the documents grow (the noise stays fixed while the
signal grows with them). The matrix is taken for ``A R A^T`` (A the V x K topics, R the K x K second moment of the
topic proportions: the expected second moment of a topic model, Arora et al. 2013). Its rank-K eigen-projection
(negative eigenvalues dropped) takes away most of the noise; anchor words are chosen on that projection's
row-normalised rows (its negative cells set to zero) (as above), every word's row is written as a convex combination of the anchors' rows by
non-negative least squares, and Bayes' rule gives A; R is then A's pseudo-inverse applied to both sides, and a
few hundred multiplicative updates refine A and R by least squares ``||Q - A R A^T||_F`` on the matrix itself,
negative (noisy) cells included, so zero-mean noise does not bias the fit (Ding, Li & Jordan 2010's
multiplicative rules for a matrix of mixed signs). On an exact ``A R A^T`` of a separable model it returns A.

All three read nothing but the matrix: post-processing of a differentially private release keeps its
guarantee (Dwork & Roth 2014, Prop. 2.1).
"""
from __future__ import annotations

import re

import numpy as np

from .._shared_filters import SharedFilters
from ..errors import DPTopicError

NMF_CAP_NOTE = ("the factorisation stops at its iteration cap (max_iter, 400 by default); where it reaches the cap the"
                " topics are those of its last iteration, a deterministic function of the released matrix like any"
                " other, so the privacy guarantee is unchanged")
"""What reaching NMF's iteration cap means: scikit-learn's ConvergenceWarning ("Maximum number of iterations ... reached.
Increase it to improve convergence.") is not shown, since no dptopic option acts on it."""


def _nmf_cap_filters() -> list:
    from sklearn.exceptions import ConvergenceWarning  # scikit-learn takes seconds to import

    return [("ignore", re.compile(r"Maximum number of iterations", re.I), ConvergenceWarning,
             re.compile(r"sklearn\.decomposition\._nmf"), 0)]


_quiet_nmf_cap = SharedFilters(_nmf_cap_filters)
"""Silences scikit-learn's NMF warning that it reached ``max_iter`` (and nothing else), thread-safely: NMFs fitted in
parallel threads (an audit's shadow models) would restore one another's ``catch_warnings`` lists and let it
through."""


def _symmetrise(Q) -> np.ndarray:
    Q = np.asarray(Q, dtype=np.float64)
    if Q.ndim != 2 or Q.shape[0] != Q.shape[1]:
        raise DPTopicError(f"a co-occurrence matrix must be square; got shape {Q.shape}.")
    if not np.all(np.isfinite(Q)):
        raise DPTopicError("the co-occurrence matrix has NaN or infinite entries.")
    return (Q + Q.T) / 2.0


def _nmf(Q: np.ndarray, K: int, max_iter: int) -> np.ndarray:
    """The K rows of ``H`` in ``Q ~ W H``, from the deterministic NNDSVDa start. When the thresholded matrix has rank
    below K, that start divides by zero norms and gives NaN (scikit-learn's SVD-based starts all do): the factorisation
    is then run again from scikit-learn's random start with a fixed state, so the topics stay a deterministic function
    of the matrix. Reaching ``max_iter`` is not reported (:data:`NMF_CAP_NOTE`)."""
    from sklearn.decomposition import NMF  # scikit-learn takes seconds to import

    for init in ("nndsvda", "random"):
        # NNDSVDa's division by zero norms (handled below) is numpy's, whose error state is per thread
        with _quiet_nmf_cap(), np.errstate(divide="ignore", invalid="ignore"):
            H = NMF(n_components=K, init=init, max_iter=max_iter, random_state=0).fit(Q).components_
        if np.all(np.isfinite(H)):
            return H
    raise DPTopicError("the co-occurrence matrix could not be factorised (non-finite topics); use fewer topics.")


def _anchor_rows(Qbar: np.ndarray, candidates: np.ndarray, K: int) -> np.ndarray:
    P = Qbar[candidates]
    first = int(np.argmax((P ** 2).sum(axis=1)))
    chosen = [first]
    R = P - P[first]
    for _ in range(1, K):
        d = (R ** 2).sum(axis=1)
        j = int(np.argmax(d))
        if d[j] <= 0:
            raise DPTopicError(f"the co-occurrence matrix has fewer than {K} distinguishable words; use fewer topics.")
        chosen.append(j)
        b = R[j] / np.sqrt(d[j])
        R = R - np.outer(R @ b, b)
    return candidates[np.asarray(chosen)]


def _simplex_weights(Qbar: np.ndarray, anchors: np.ndarray, n_steps: int = 500) -> np.ndarray:
    A = Qbar[anchors]                       # K x V
    G = A @ A.T
    Bm = Qbar @ A.T                         # V x K
    K = len(anchors)
    C = np.full((Qbar.shape[0], K), 1.0 / K)
    step = 1.0 / max(float(np.linalg.eigvalsh(G)[-1]), 1e-300)
    for _ in range(n_steps):
        g = 2.0 * (C @ G - Bm)
        C = C * np.exp(-np.clip(step * g, -50.0, 50.0))
        C /= C.sum(axis=1, keepdims=True)
    return C


def _rank_k_projection(Q: np.ndarray, K: int) -> np.ndarray:
    """The best rank-K positive semi-definite approximation of the symmetric ``Q`` in Frobenius norm (its K largest
    eigenvalues, those below zero dropped)."""
    w, U = np.linalg.eigh(Q)
    top = np.argsort(-w, kind="stable")[:K]
    w = np.maximum(w[top], 0.0)
    return (U[:, top] * w) @ U[:, top].T


def _nnls_simplex_weights(Qbar: np.ndarray, anchors: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """For each row of ``Qbar`` in ``rows``, non-negative weights ``c`` (summing to 1: the rows and the anchors' rows
    each sum to 1, and a unit-weight row of ones holds the sum where the fit is not exact) with ``c Qbar[anchors]``
    closest to the row in L2. Solved on the K x K Cholesky factor of the anchors' Gram matrix."""
    from scipy.optimize import nnls  # scipy.optimize: the refined-anchors method only

    M = np.vstack([Qbar[anchors].T, np.ones((1, len(anchors)))])      # (V + 1) x K
    G = M.T @ M
    L = np.linalg.cholesky(G + 1e-12 * np.trace(G) / len(anchors) * np.eye(len(anchors)))
    target = np.linalg.solve(L, M[:-1].T @ Qbar[rows].T + M[-1][:, None])   # K x rows
    C = np.empty((len(rows), len(anchors)))
    for i in range(len(rows)):
        C[i] = nnls(L.T, target[:, i])[0]
    sums = C.sum(axis=1, keepdims=True)
    return np.divide(C, sums, out=np.full_like(C, 1.0 / len(anchors)), where=sums > 0)


def refine_moments(Q: np.ndarray, A: np.ndarray, R: np.ndarray, n_iter: int = 300):
    """Least squares ``Q ~ A R A^T`` (A >= 0, V x K, columns summing to 1; R >= 0 symmetric K x K) refined from
    ``(A, R)`` by multiplicative updates that put the negative part of ``Q`` in the denominator, square-rooted
    (Ding, Li & Jordan 2010): ``Q``'s noisy negative cells count as they are, so zero-mean noise does not bias the fit.
    After each step A's columns are scaled to sum 1 and R takes the scale (``A R A^T`` unchanged). A cell of A or R at
    zero stays there. Returns ``(A, R)``."""
    Qp, Qm = np.maximum(Q, 0.0), np.maximum(-Q, 0.0)
    A = np.array(A, dtype=np.float64)
    A /= np.maximum(A.sum(axis=0, keepdims=True), 1e-300)
    R = np.maximum((R + R.T) / 2.0, 0.0)
    tiny = 1e-300
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(int(n_iter)):
            AtA = A.T @ A
            R = R * np.sqrt((A.T @ Qp @ A) / np.maximum(AtA @ R @ AtA + A.T @ Qm @ A, tiny))
            R = (R + R.T) / 2.0
            AR = A @ R
            A = A * np.sqrt((Qp @ AR) / np.maximum(A @ (R @ (AtA @ R)) + Qm @ AR, tiny))
            s = np.maximum(A.sum(axis=0, keepdims=True), tiny)
            A /= s
            R = R * s.T * s
    return A, R


def _anchor_candidates(M: np.ndarray, K: int, n_candidates: int | None):
    """``(row mass, candidate anchor words)``: the ``n_candidates`` words with the most mass in the non-negative
    ``M`` (all by default), those with none left out; refused in one line when fewer than ``K`` remain."""
    mass = M.sum(axis=1)
    cand = np.argsort(-mass, kind="stable")[: (n_candidates or M.shape[0])]
    cand = cand[mass[cand] > 0]
    if len(cand) < K:
        raise DPTopicError(f"only {len(cand)} words have co-occurrence mass; use fewer topics than that.")
    return mass, cand


def refined_anchor_topics(Q: np.ndarray, K: int, n_candidates: int | None = None, n_iter: int = 300) -> np.ndarray:
    """``method="refined-anchors"`` (module note) on the symmetric ``Q``: the K x V topics, rows summing to 1."""
    V = Q.shape[0]
    # the projection's negative cells (noise the projection kept) are dropped for the anchor step only: rows of
    # conditional probabilities need non-negative weights (an exact A R A^T has none)
    P = np.maximum(_rank_k_projection(Q, K), 0.0)
    A = np.zeros((V, K))
    try:
        mass, cand = _anchor_candidates(P, K, n_candidates)
        live = np.flatnonzero(mass > 0)
        Pbar = P / np.where(mass > 0, mass, 1.0)[:, None]
        anchors = _anchor_rows(Pbar, cand, K)
        A[live] = _nnls_simplex_weights(Pbar, anchors, live) * mass[live, None]     # Bayes' rule: p(word, topic)
    except DPTopicError:
        # fewer than K words with mass, or fewer than K distinguishable rows, in the projection (its rank fell below
        # K: a tiny or topicless matrix, or noise that drowns the signal): the refinement starts from the NMF of the
        # matrix's non-negative part instead, still deterministic; the caller's support check says whether the
        # topics stand above the noise
        A = _nmf(np.maximum(Q, 0.0), K, 200).T
    A = A / np.maximum(A.sum(axis=0, keepdims=True), 1e-300)
    # a word with no weight anywhere would stay at zero under multiplicative updates: a floor far below any topic's
    A += 1e-9 / V
    A /= A.sum(axis=0, keepdims=True)
    Ainv = np.linalg.pinv(A)
    R = np.maximum(Ainv @ P @ Ainv.T, 0.0)
    A, _ = refine_moments(Q, A, R, n_iter)
    return A.T


def topics_from_cooccurrence(Q, n_topics: int, method: str = "nmf", noise_std: float = 0.0,
                             threshold: float = 2.0, n_candidates: int | None = None,
                             max_iter: int = 400, floor: float = 1e-9) -> np.ndarray:
    """``n_topics x V`` topic-word distributions (rows sum to 1) from the V x V matrix ``Q``.

    ``noise_std``: the standard deviation of the noise on each off-diagonal cell of the symmetrised
    matrix (0 for an exact matrix); cells below ``threshold * noise_std`` are set to zero first.
    Deterministic: the same matrix always gives the same topics. ``method="refined-anchors"`` reads the matrix as it
    is (no threshold: its least-squares fit needs the noisy negative cells, module note), with ``max_iter``
    refinement steps.
    """
    K = int(n_topics)
    Q = _symmetrise(Q)
    V = Q.shape[0]
    if not 1 <= K <= V:
        raise DPTopicError(f"n_topics={n_topics} must be between 1 and the number of words ({V}).")
    if noise_std < 0 or threshold < 0:
        raise DPTopicError("noise_std and threshold must be >= 0.")
    if method == "refined-anchors":
        H = refined_anchor_topics(Q, K, n_candidates, max_iter) + floor
        return H / H.sum(axis=1, keepdims=True)
    Q = Q.copy()
    Q[Q < threshold * noise_std] = 0.0
    Q = np.maximum(Q, 0.0)
    if method == "nmf":
        H = _nmf(Q, K, max_iter)
    elif method == "anchors":
        mass, cand = _anchor_candidates(Q, K, n_candidates)
        Qbar = Q / np.maximum(mass, 1e-300)[:, None]
        C = _simplex_weights(Qbar, _anchor_rows(Qbar, cand, K))
        H = (C * mass[:, None]).T
    else:
        raise DPTopicError(f"invalid method={method!r}: must be 'nmf', 'anchors' or 'refined-anchors'.")
    H = np.asarray(H, dtype=np.float64) + floor
    return H / H.sum(axis=1, keepdims=True)
