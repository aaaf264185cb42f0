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

from ..errors import DPTopicError


def _pos(name, v):
    if not (isinstance(v, (int, float, np.floating, np.integer)) and v > 0 and math.isfinite(v)):
        raise DPTopicError(f"invalid {name}={v!r}: must be a finite number > 0.")


def eps_replaced_state(nk_t, nk_tp, beta: float) -> float:
    """Proposition 1: ``2·max_k |log((n_k^{t'}+β)/(n_k^t+β))|`` from the current counts."""
    _pos("beta", beta)
    a, b = np.asarray(nk_tp, float), np.asarray(nk_t, float)
    return float(2 * np.max(np.abs(np.log((a + beta) / (b + beta)))))


def eps_related(beta: float) -> float:
    """Proposition 2: ``2·log(1 + 1/β)`` per related token and iteration."""
    _pos("beta", beta)
    return 2 * math.log1p(1 / beta)


def eps_iter_state(N_kt, n_tok, t: int, beta: float) -> float:
    """Theorem 1, first inequality (Appendix B), maximised over ``t' ≠ t``. ``N_kt`` is K×V."""
    N_kt = np.asarray(N_kt, float)
    n_tok = np.asarray(n_tok, float)
    K, V = N_kt.shape
    others = np.array([u for u in range(V) if u != t])
    ratios = np.abs(np.log((N_kt[:, others] + beta) / (N_kt[:, [t]] + beta))).max(axis=0)
    per = 2 * ratios + (n_tok[t] - 1 + n_tok[others]) * eps_related(beta)
    return float(per.max())


def eps_iter_static(n_tok, beta: float, t: int, cmax: float | None = None) -> float:
    """Theorem 1, second inequality: needs only word totals (and ``cmax ≥ max n_k^{t'}``)."""
    _pos("beta", beta)
    n_tok = np.asarray(n_tok, float)
    cmax = float(n_tok.max()) if cmax is None else float(cmax)
    others = np.delete(n_tok, t)
    return 2 * (math.log(cmax / beta + 1) + (others.max() + n_tok[t] - 1) * math.log1p(1 / beta))


def eps_total(per_iter) -> float:
    """Theorem 2: ``max_t Σ_i ε_i(t)`` from a (T × V) record of per-iteration, per-word losses."""
    return float(np.asarray(per_iter, float).sum(axis=0).max())


def eps_total_static(n_tok, beta: float, n_iter: int, cmax: float | None = None) -> float:
    n_tok = np.asarray(n_tok, float)
    return n_iter * max(eps_iter_static(n_tok, beta, t, cmax) for t in range(len(n_tok)))


def hdp_epsilon_inherent(clip: float, beta: float) -> float:
    """HDP-LDA's per-iteration inherent loss (Theorem 3, eq. 7): ``ε_I = 2·log(C/β + 1)``."""
    _pos("clip", clip)
    _pos("beta", beta)
    return 2 * math.log(clip / beta + 1)


def hdp_clip_bound(epsilon_inherent: float, beta: float) -> float:
    """Inverse of eq. 7: ``C = β·(exp(ε_I/2) − 1)``."""
    _pos("epsilon_inherent", epsilon_inherent)
    _pos("beta", beta)
    return beta * math.expm1(epsilon_inherent / 2)
