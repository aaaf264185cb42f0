"""Topic-word distributions from a (noisy) symmetric word co-occurrence matrix.

``method="nmf"``: cells below ``threshold`` noise standard deviations set to zero (indistinguishable
from noise), then non-negative matrix factorisation ``Q ~ W H`` (scikit-learn, deterministic NNDSVDa
start, Frobenius loss); the K rows of ``H``, normalised, are the topics.

``method="anchors"``: the anchor-word method of Arora et al. (ICML 2013): rows of ``Q`` normalised to
conditional distributions, K anchor words chosen greedily among the ``n_candidates`` words of largest
row mass (each the row farthest from the span of the previous ones), every word's row written as a
convex combination of the anchors' rows (exponentiated gradient on the simplex, L2 loss), and Bayes'
rule turns those weights and the row masses into topics.

Both read nothing but the matrix: post-processing of a differentially private release keeps its
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
    from sklearn.exceptions import ConvergenceWarning

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
    from sklearn.decomposition import NMF

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


def topics_from_cooccurrence(Q, n_topics: int, method: str = "nmf", noise_std: float = 0.0,
                             threshold: float = 2.0, n_candidates: int | None = None,
                             max_iter: int = 400, floor: float = 1e-9) -> np.ndarray:
    """``n_topics x V`` topic-word distributions (rows sum to 1) from the V x V matrix ``Q``.

    ``noise_std``: the standard deviation of the noise on each off-diagonal cell of the symmetrised
    matrix (0 for an exact matrix); cells below ``threshold * noise_std`` are set to zero first.
    Deterministic: the same matrix always gives the same topics.
    """
    K = int(n_topics)
    Q = _symmetrise(Q)
    V = Q.shape[0]
    if not 1 <= K <= V:
        raise DPTopicError(f"n_topics={n_topics} must be between 1 and the number of words ({V}).")
    if noise_std < 0 or threshold < 0:
        raise DPTopicError("noise_std and threshold must be >= 0.")
    Q = Q.copy()
    Q[Q < threshold * noise_std] = 0.0
    Q = np.maximum(Q, 0.0)
    if method == "nmf":
        H = _nmf(Q, K, max_iter)
    elif method == "anchors":
        mass = Q.sum(axis=1)
        order = np.argsort(-mass, kind="stable")
        cand = order[: (n_candidates or V)]
        cand = cand[mass[cand] > 0]
        if len(cand) < K:
            raise DPTopicError(f"only {len(cand)} words have co-occurrence mass; use fewer topics than that.")
        Qbar = Q / np.maximum(mass, 1e-300)[:, None]
        C = _simplex_weights(Qbar, _anchor_rows(Qbar, cand, K))
        H = (C * mass[:, None]).T
    else:
        raise DPTopicError(f"invalid method={method!r}: must be 'nmf' or 'anchors'.")
    H = np.asarray(H, dtype=np.float64) + floor
    return H / H.sum(axis=1, keepdims=True)
