"""Calculators for the inherent privacy of collapsed Gibbs sampling (Zhao et al. 2020, Sec. IV-B/C)
and for HDP-LDA's clipping bound (Theorem 3, eq. 7).

Caveat (docs/privacy.md): the Proposition/Theorem 1–2 bounds are computed from the
private counts themselves; publishing them leaks, and they are not worst-case DP
guarantees over all neighbouring datasets. Use them to monitor, or feed public
upper bounds.
"""
from __future__ import annotations

import math

import numpy as np

from .._validation import Int, Real, validate_value
from ..errors import DPTopicError
from .events import EPSILON_MAX

BETA_MAX = 1e6  # the estimators' bound on beta


def _pos(name, v, hi=None):
    validate_value(name, v, [Real(0, hi, "neither" if hi is None else "right")])


def _log1p_ratio(a: float, b: float) -> float:
    """``log(1 + a/b)`` without overflow when ``a/b`` exceeds the float range (tiny beta)."""
    return float(np.logaddexp(math.log(a) - math.log(b), 0.0)) if a > 0 else 0.0


COUNT_MAX = 1e15  # counts beyond any corpus; keeps sums of them finite


def _counts(name, x, ndim: int, min_len: int = 1, hi: float = COUNT_MAX) -> np.ndarray:
    """A finite, non-negative real array of ``ndim`` dimensions (counts or per-word losses), entries <= ``hi``."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError):
        a = np.asarray(None)
    if a.dtype.kind not in "biuf" or a.ndim != ndim or min(a.shape, default=0) < min_len:
        raise DPTopicError(f"invalid {name}: must be a {ndim}-D array of non-negative numbers with at least {min_len}"
                           f" entr{'y' if min_len == 1 else 'ies'} per axis.")
    a = a.astype(float)
    if not np.all(np.isfinite(a)) or np.any(a < 0) or np.any(a > hi):
        raise DPTopicError(f"invalid {name}: entries must be finite, non-negative and at most {hi:g}.")
    return a


def eps_replaced_state(nk_t, nk_tp, beta: float) -> float:
    """Proposition 1: ``2·max_k |log((n_k^{t'}+β)/(n_k^t+β))|`` from the current counts."""
    _pos("beta", beta, BETA_MAX)
    a, b = _counts("nk_tp", nk_tp, 1), _counts("nk_t", nk_t, 1)
    if a.shape != b.shape:
        raise DPTopicError(f"nk_t and nk_tp must have the same length, got {len(b)} and {len(a)}.")
    return float(2 * np.max(np.abs(np.log((a + beta) / (b + beta)))))


def eps_related(beta: float) -> float:
    """Proposition 2: ``2·log(1 + 1/β)`` per related token and iteration."""
    _pos("beta", beta, BETA_MAX)
    return 2 * _log1p_ratio(1.0, beta)


def eps_iter_state(N_kt, n_tok, t: int, beta: float) -> float:
    """Theorem 1, first inequality (Appendix B), maximised over ``t' ≠ t``. ``N_kt`` is K×V."""
    _pos("beta", beta, BETA_MAX)
    N_kt = _counts("N_kt", N_kt, 2)
    n_tok = _counts("n_tok", n_tok, 1, 2)
    K, V = N_kt.shape
    if len(n_tok) != V or V < 2:
        raise DPTopicError(f"n_tok must have one total per column of N_kt ({V}, at least 2), got {len(n_tok)}.")
    validate_value("t", t, [Int(0, V - 1)])
    others = np.array([u for u in range(V) if u != t])
    ratios = np.abs(np.log((N_kt[:, others] + beta) / (N_kt[:, [t]] + beta))).max(axis=0)
    per = 2 * ratios + (n_tok[t] - 1 + n_tok[others]) * eps_related(beta)
    return float(per.max())


def eps_iter_static(n_tok, beta: float, t: int, cmax: float | None = None) -> float:
    """Theorem 1, second inequality: needs only word totals, and ``cmax`` at least every topic's count of ``t`` and of
    every other word, ``max_k max(n_k^t, n_k^{t'})``: the absolute log ratio of the first inequality can be dominated
    by either (default: the largest total, which bounds both)."""
    _pos("beta", beta, BETA_MAX)
    n_tok = _counts("n_tok", n_tok, 1, 2)
    validate_value("t", t, [Int(0, len(n_tok) - 1)])
    if cmax is not None:
        _pos("cmax", cmax, COUNT_MAX)
    cmax = float(n_tok.max()) if cmax is None else float(cmax)
    others = np.delete(n_tok, t)
    return 2 * (_log1p_ratio(cmax, beta) + (others.max() + n_tok[t] - 1) * _log1p_ratio(1.0, beta))


def eps_total(per_iter) -> float:
    """Theorem 2: ``max_t Σ_i ε_i(t)`` from a (T × V) record of per-iteration, per-word losses."""
    return float(_counts("per_iter", per_iter, 2, hi=1e300).sum(axis=0).max())


def eps_total_static(n_tok, beta: float, n_iter: int, cmax: float | None = None) -> float:
    validate_value("n_iter", n_iter, [Int(1, 10**9)])
    n_tok = _counts("n_tok", n_tok, 1, 2)
    return n_iter * max(eps_iter_static(n_tok, beta, t, cmax) for t in range(len(n_tok)))


def hdp_epsilon_inherent(clip: float, beta: float) -> float:
    """HDP-LDA's per-iteration inherent loss (Theorem 3, eq. 7): ``ε_I = 2·log(C/β + 1)``."""
    _pos("clip", clip)
    _pos("beta", beta, BETA_MAX)
    eps = 2 * _log1p_ratio(clip, beta)
    if eps > EPSILON_MAX:
        raise DPTopicError(f"clip={clip:g} with beta={beta:g} gives eps_I = {eps:.4g} > {EPSILON_MAX:g}, beyond the"
                           f" accountants' range: lower the clip bound.")
    return eps


def hdp_clip_bound(epsilon_inherent: float, beta: float) -> float:
    """Inverse of eq. 7: ``C = β·(exp(ε_I/2) − 1)``."""
    _pos("epsilon_inherent", epsilon_inherent, EPSILON_MAX)
    _pos("beta", beta, BETA_MAX)
    return beta * math.expm1(epsilon_inherent / 2)
