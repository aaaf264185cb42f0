"""Post-processing of released counts (free in privacy terms): clamping to a range and normalising rows to
probabilities. Nothing here bounds a contribution (clipping, which is part of a mechanism, lives with it)."""
from __future__ import annotations

import numpy as np


def clamp(values: np.ndarray, low: float = 0.0, high: float = np.inf, dtype=np.float64) -> np.ndarray:
    """``min(max(values, low), high)`` as a new array of ``dtype``."""
    return np.clip(np.asarray(values, dtype=dtype), low, high)


def normalize_rows(counts: np.ndarray, prior: float) -> np.ndarray:
    """``(max(counts,0) + prior)`` normalised row-wise: a post-processed probability matrix."""
    c = np.maximum(np.asarray(counts, dtype=np.float64), 0) + prior
    return c / c.sum(axis=1, keepdims=True)
