"""Huang et al. (2022) membership statistics on the inferred topic distribution θ̂_d.

Members' θ̂ concentrate on few topics (Schofield et al. 2017), so each statistic is
turned into a score where HIGHER means "member": ``-entropy(θ̂)``, ``std(θ̂)``,
``max(θ̂)``. One global threshold per statistic (the ROC sweeps it); there is no
per-document calibration, which is what LiRA adds (Manzonelli et al. 2024, Sec. 3.3).
"""
from __future__ import annotations

import numpy as np

from ..evaluation import infer_theta

HUANG_STATISTICS = ("entropy", "std", "max")


def huang_theta(components, corpus, n_iter: int = 10, seed=0) -> np.ndarray:
    """θ̂ by fold-in Gibbs with Φ fixed, α = 1/K, 10 sweeps averaged (as in Huang et al.'s attack)."""
    phi = np.asarray(components, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    K = phi.shape[0]
    return infer_theta(phi, corpus.word_ids, corpus.doc_ptr, 1.0 / K, n_iter, 0, seed)


def huang_scores(theta) -> dict:
    """Member-high scores from θ̂ (D × K): ``{"entropy": -H, "std": sd, "max": max}``."""
    t = np.clip(np.asarray(theta, dtype=np.float64), 1e-300, None)
    t = t / t.sum(axis=1, keepdims=True)
    ent = -(t * np.log(t)).sum(axis=1)
    return {"entropy": -ent, "std": t.std(axis=1), "max": t.max(axis=1)}
