"""k-subset selection, a local-DP frequency oracle for large domains (Wang et al. 2016; Ye & Barg 2018).

Each contributor holds one item ``x`` of a public domain ``{0, ..., D-1}`` and reports a set ``S`` of
``k`` distinct items: every ``S`` that contains ``x`` has probability ``e^eps / Z`` and every other
``S`` has ``1 / Z``, with ``Z = C(D-1, k-1) e^eps + C(D-1, k)``. Any two inputs therefore give
report distributions within a factor ``e^eps`` of each other: the report is ``eps``-LDP for the whole
item, whatever the domain size. ``k = D / (e^eps + 1)`` (rounded, at least 1) minimises the
estimator's variance to first order (Wang et al. 2016, Sec. 4).

Sampling: the true item is in ``S`` with probability ``p = k e^eps / (k e^eps + D - k)``; the rest of
``S`` is uniform among the other items. The coin is a uniform 53-bit integer compared with
``T = floor(p 2^53)`` (:func:`keep_threshold`, computed with 60 significant digits), so the realised keep
probability ``T / 2^53`` never exceeds ``p`` and the realised likelihood ratio never exceeds ``e^eps``
(comparing a float in [0, 1) with ``p`` would realise ``ceil(p 2^53) / 2^53``, up to one part in 2^53 above). The server's unbiased count of item ``j`` among ``n`` reports
is ``(c_j - n q) / (p - q)``, ``c_j`` the reports containing ``j`` and ``q`` the probability that a
report whose item is not ``j`` contains ``j``.

Each function returns its output and the event spent, as the other mechanisms do.
"""
from __future__ import annotations

import math
import secrets
from decimal import ROUND_FLOOR, Decimal, localcontext

import numpy as np

from ..accounting.events import PureDPEvent
from ..errors import DPTopicError

LOCAL_RELATION = "any two inputs of one contributor (local DP)"
THEOREM = ("k-subset selection is eps-LDP: a subset's probability is e^eps/Z or 1/Z (Wang et al. 2016;"
           " Ye & Barg 2018)")


def _check(domain_size, epsilon) -> tuple[int, float]:
    if isinstance(domain_size, (bool, np.bool_)) or not (isinstance(domain_size, (int, np.integer)) and domain_size >= 2):
        raise DPTopicError(f"invalid domain_size={domain_size!r}: must be an integer >= 2.")
    if isinstance(epsilon, (bool, np.bool_)) or not (isinstance(epsilon, (int, float, np.integer, np.floating))
                                                     and 0 < epsilon <= 50 and math.isfinite(epsilon)):
        raise DPTopicError(f"invalid epsilon={epsilon!r}: must be a number in (0, 50].")
    return int(domain_size), float(epsilon)


def subset_size(domain_size: int, epsilon: float) -> int:
    """The subset size ``k``: ``D / (e^eps + 1)`` rounded, between 1 and ``D - 1``."""
    D, eps = _check(domain_size, epsilon)
    return int(min(max(1, round(D / (math.exp(eps) + 1.0))), D - 1))


COIN_BITS = 53


def keep_threshold(domain_size: int, epsilon: float, k: int | None = None) -> int:
    """``T = floor(p 2^53)``: a report keeps its own item when a uniform 53-bit integer is below ``T``."""
    D, eps = _check(domain_size, epsilon)
    k = subset_size(D, eps) if k is None else int(k)
    with localcontext() as ctx:
        ctx.prec = 60
        ke = k * Decimal(eps).exp()
        p = ke / (ke + (D - k))
        return int((p * (1 << COIN_BITS)).to_integral_value(rounding=ROUND_FLOOR))


def inclusion_probabilities(domain_size: int, epsilon: float, k: int | None = None) -> tuple[float, float]:
    """``(p, q)``: the (realised) probability that a report contains its own item, ``T / 2^53``, and that it
    contains a given other item."""
    D, eps = _check(domain_size, epsilon)
    k = subset_size(D, eps) if k is None else int(k)
    p = keep_threshold(D, eps, k) / float(1 << COIN_BITS)
    q = (p * (k - 1) + (1 - p) * k) / (D - 1)
    return p, q


def subset_selection(items, domain_size: int, epsilon: float, rng: np.random.Generator | None = None,
                     secure: bool = False):
    """Randomize each item of ``items`` into a sorted row of ``k`` distinct items; returns ``(reports, event)``.

    ``reports`` is a ``uint32`` array ``(n, k)``. ``secure=True`` takes every coin from the operating system's
    CSPRNG (``secrets``) and refuses a Generator; otherwise ``rng`` (simulations only) is required.
    """
    D, eps = _check(domain_size, epsilon)
    x = np.asarray(items)
    if x.ndim != 1 or (x.size and (x.dtype.kind not in "iu" or x.min() < 0 or x.max() >= D)):
        raise DPTopicError(f"items must be a 1-D array of integers in [0, {D}).")
    k = subset_size(D, eps)
    T = keep_threshold(D, eps, k)
    out = np.empty((x.size, k), dtype=np.uint32)
    if secure:
        if rng is not None:
            raise DPTopicError("secure=True takes its coins from the operating system's CSPRNG: pass no Generator.")
        sysrand = secrets.SystemRandom()
        for i, xi in enumerate(x.tolist()):
            keep = secrets.randbits(COIN_BITS) < T
            others = np.asarray(sysrand.sample(range(D - 1), k - 1 if keep else k), dtype=np.int64)
            out[i] = np.sort(np.concatenate([np.where(others >= xi, others + 1, others), [xi] if keep else []]))
    else:
        if not isinstance(rng, np.random.Generator):
            raise DPTopicError("a numpy Generator is required unless secure=True.")
        keep = rng.random(x.size) < T / float(1 << COIN_BITS)     # random() is a multiple of 2^-53: exact
        for i in range(x.size):
            xi = int(x[i])
            others = rng.choice(D - 1, size=k - 1 if keep[i] else k, replace=False)
            others = np.where(others >= xi, others + 1, others)
            out[i] = np.sort(np.concatenate([others, [xi]]) if keep[i] else others)
    return out, PureDPEvent(eps, label=f"k-subset selection (D={D}, k={k})", theorem=THEOREM, relation=LOCAL_RELATION)


def subset_selection_counts(reports, domain_size: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """``(estimate, std)``: the unbiased count of every item among the reports, and its standard deviation
    when the item's true count is 0 (the noise floor). Reads only the reports (post-processing)."""
    D, eps = _check(domain_size, epsilon)
    R = np.asarray(reports)
    k = subset_size(D, eps)
    if R.ndim != 2 or (R.size and R.shape[1] != k):
        raise DPTopicError(f"reports must be an (n, {k}) array for domain {D} at epsilon {eps:g}.")
    c = np.bincount(R.ravel().astype(np.int64), minlength=D)[:D].astype(np.float64)
    return subset_selection_estimate(c, R.shape[0], D, eps)


def subset_selection_estimate(inclusions, n_reports: int, domain_size: int, epsilon: float):
    """``(estimate, std)`` from the sufficient statistic: how many of ``n_reports`` reports contain each item."""
    D, eps = _check(domain_size, epsilon)
    c = np.asarray(inclusions, dtype=np.float64)
    if c.shape != (D,) or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise DPTopicError(f"inclusion counts must be {D} finite non-negative numbers.")
    if isinstance(n_reports, (bool, np.bool_)) or not isinstance(n_reports, (int, float, np.integer, np.floating)) \
            or not (math.isfinite(n_reports) and n_reports >= 0 and float(n_reports).is_integer()) \
            or (c.size and c.max() > n_reports):
        raise DPTopicError(f"invalid n_reports={n_reports!r}: must be a whole number >= 0, at least every item's"
                           " inclusion count.")
    n = int(n_reports)
    p, q = inclusion_probabilities(D, eps)
    est = (c - n * q) / (p - q)
    std = math.sqrt(n * q * (1 - q)) / (p - q)
    return est, np.full(D, std)
