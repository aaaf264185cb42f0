"""Adding discrete Laplace noise to a count array in one pass.

The discrete Laplace with ``P(x) ∝ r^|x|``, ``r = exp(-1/scale)``, is drawn from one exponential
and one sign bit per entry: its magnitude has ``P(|X| = 0) = (1-r)/(1+r)`` and
``P(|X| >= m) = 2r^m/(1+r)`` for ``m >= 1``, which is exactly the law of

    M = 0 if E < t0 else 1 + floor((E - t0) * scale),   E ~ Exp(1),  exp(-t0) = 2r/(1+r),

and the sign is a fair coin, independent of ``M`` (it does nothing when ``M = 0``). Half the
exponentials of the usual difference of two geometrics, and no temporaries: the noise goes
straight into the counts. Like any floating-point sampler it is the textbook construction, not
a hardened one (Mironov 2012); secure mode uses OpenDP's exact sampler instead.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit


def discrete_laplace_threshold(scale: float) -> float:
    """``t0`` with ``exp(-t0) = 2r/(1+r)``, ``r = exp(-1/scale)``, computed without cancellation."""
    one_minus_r = -math.expm1(-1.0 / scale)
    r = math.exp(-1.0 / scale)
    if r == 0.0:
        return math.inf  # P(X != 0) = 2r/(1+r) underflows: the noise is 0
    return math.log1p(one_minus_r / (2.0 * r))


@njit(cache=True, nogil=True)
def add_discrete_laplace(target, expo, sign_words, scale, t0):
    """``target[i] += ±M_i`` (see the module docstring) for a flat int64 or float64 ``target``.

    ``expo[i]`` are i.i.d. Exp(1) and bit ``i % 64`` of ``sign_words[i // 64]`` is the sign of entry ``i``.
    """
    for i in range(target.shape[0]):
        # branch-free: for E < t0 the floor is at most -1, so the max gives 0 (also when t0 = inf)
        m = max(np.floor((expo[i] - t0) * scale) + 1.0, 0.0)
        neg = (sign_words[i >> 6] >> np.uint64(i & 63)) & np.uint64(1)
        target[i] += np.int64(m) * (1 - 2 * np.int64(neg))
