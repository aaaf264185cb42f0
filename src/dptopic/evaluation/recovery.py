"""Topic recovery against a synthetic ground truth: mean cosine after Hungarian matching."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return a @ b.T


def topic_recovery(estimated: np.ndarray, true: np.ndarray, return_matching: bool = False):
    """Mean cosine between true topics and their Hungarian-matched estimates (1 = perfect)."""
    sim = cosine_matrix(np.asarray(true, float), np.asarray(estimated, float))
    rows, cols = linear_sum_assignment(-sim)
    score = float(sim[rows, cols].mean())
    return (score, cols) if return_matching else score
