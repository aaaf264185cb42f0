"""Joint log-likelihood log p(w, z) of a CGS state (Griffiths & Steyvers 2004)."""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln


def joint_log_likelihood(nwk: np.ndarray, nk: np.ndarray, ndk: np.ndarray, doc_lengths: np.ndarray,
                         alpha: float, beta: float) -> float:
    V, K = nwk.shape
    D = ndk.shape[0]
    lw = K * (gammaln(V * beta) - V * gammaln(beta)) + gammaln(nwk + beta).sum() - gammaln(nk + V * beta).sum()
    lz = D * (gammaln(K * alpha) - K * gammaln(alpha)) + gammaln(ndk + alpha).sum() \
        - gammaln(doc_lengths + K * alpha).sum()
    return float(lw + lz)
