"""Adding discrete Laplace noise to a count array in one compiled pass.

The discrete Laplace with ``P(x) ∝ r^|x|``, ``r = exp(-1/scale)``, is drawn from one exponential
and one sign bit per entry: its magnitude has ``P(|X| = 0) = (1-r)/(1+r)`` and
``P(|X| >= m) = 2r^m/(1+r)`` for ``m >= 1``, which is exactly the law of

    M = 0 if E < t0 else 1 + floor((E - t0) * scale),   E ~ Exp(1),  exp(-t0) = 2r/(1+r),

and the sign is a fair coin, independent of ``M`` (it does nothing when ``M = 0``).

The exponentials come from a ziggurat (Marsaglia & Tsang 2000) driven by the kernels' xorshift128+
stream (:mod:`dptopic.kernels.rng`), whose state is drawn from the caller's Generator: one 64-bit
word per exponential on the fast path (about 99% of draws), no logarithm at all (a draw in the
tail restarts from ``R`` by memorylessness), and no temporary arrays: the noise goes straight
into the counts. Like any floating-point sampler it is the textbook construction, not a hardened
one (Mironov 2012); secure mode uses OpenDP's exact sampler instead.
"""
from __future__ import annotations

import math

import numpy as np

from ._jit import njit
from .rng import _INV53, _S11, xorshift_step

ZIG_LAYERS = 256
ZIG_R = 7.69711747013104972  # right edge of the base layer (Marsaglia & Tsang 2000, exponential, 256 layers)
ZIG_V = 0.0039496598225815571993  # the common area of every layer


def _ziggurat_tables():
    """Layer edges ``x`` (``x[0] = V/f(R)``, ``x[1] = R``, decreasing to ``x[256] = 0``), densities
    ``f = exp(-x)``, the fast-path bounds ``k[i] = floor(x[i+1]/x[i] · 2^53)`` and widths ``w = x/2^53``.

    Layer ``i`` is the rectangle ``[0, x[i]] × [f(x[i]), f(x[i+1])]`` of area ``V``; layer 0 is
    ``[0, R] × [0, f(R)]`` plus the tail beyond ``R`` (area ``e^-R``), mapped onto ``[R, x[0])``.
    """
    n = ZIG_LAYERS
    x = np.empty(n + 1)
    x[0] = ZIG_V / math.exp(-ZIG_R)
    x[1] = ZIG_R
    for i in range(2, n):
        x[i] = -math.log(ZIG_V / x[i - 1] + math.exp(-x[i - 1]))
    x[n] = 0.0
    two53 = float(1 << 53)
    k = np.array([int(x[i + 1] / x[i] * two53) for i in range(n)], dtype=np.uint64)
    return x, np.exp(-x), k, x[:n] / two53


ZIG_X, ZIG_F, ZIG_K, ZIG_W = _ziggurat_tables()
_M255 = np.uint64(255)
_S3 = np.uint64(3)


@njit(inline="always", cache=True)
def _exponential(s0, s1):
    """One Exp(1) draw by the ziggurat above: ``(s0, s1, e)``.

    Bits 3–10 of a 64-bit word pick the layer and its top 53 bits the position in it, so the two
    never share a bit (and the weak lowest bits are not used)."""
    offset = 0.0
    while True:
        s0, s1, bits = xorshift_step(s0, s1)
        i = (bits >> _S3) & _M255
        u = bits >> _S11
        x = np.int64(u) * ZIG_W[i]  # u < 2**53: the signed conversion is exact (and one instruction)
        if u < ZIG_K[i]:  # strictly inside the part of the layer under the curve
            return s0, s1, offset + x
        if i == 0:
            if x < ZIG_R:
                return s0, s1, offset + x
            offset += ZIG_R  # the tail: beyond R the law is R + Exp(1) (memoryless); draw again
        else:
            s0, s1, b2 = xorshift_step(s0, s1)
            if ZIG_F[i] + np.int64(b2 >> _S11) * _INV53 * (ZIG_F[i + 1] - ZIG_F[i]) < math.exp(-x):
                return s0, s1, offset + x  # the wedge between x[i+1] and x[i]: under the curve


@njit(cache=True, nogil=True)
def standard_exponentials(out, state):
    """Fill ``out`` with i.i.d. Exp(1) draws from the xorshift128+ ``state`` (advanced in place)."""
    s0, s1 = state[0], state[1]
    for i in range(out.shape[0]):
        s0, s1, out[i] = _exponential(s0, s1)
    state[0], state[1] = s0, s1


def discrete_laplace_threshold(scale: float) -> float:
    """``t0`` with ``exp(-t0) = 2r/(1+r)``, ``r = exp(-1/scale)``, computed without cancellation."""
    one_minus_r = -math.expm1(-1.0 / scale)
    r = math.exp(-1.0 / scale)
    if r == 0.0:
        return math.inf  # P(X != 0) = 2r/(1+r) underflows: the noise is 0
    return math.log1p(one_minus_r / (2.0 * r))


@njit(cache=True, nogil=True)
def add_discrete_laplace(target, state, scale, t0):
    """``target[i] += ±M_i`` (see the module docstring) for a flat int64 or float64 ``target``.

    ``state`` is a xorshift128+ state (:func:`~dptopic.kernels.kernel_state`), advanced in place.
    Entries are taken in blocks of 64: first one word whose bit ``j`` is the sign of the block's
    entry ``j``, then one exponential per entry.
    """
    n = target.shape[0]
    s0, s1 = state[0], state[1]  # in registers for the whole pass
    for a in range(0, n, 64):
        s0, s1, signs = xorshift_step(s0, s1)
        for i in range(a, min(a + 64, n)):
            s0, s1, e = _exponential(s0, s1)
            # M by truncation: for E >= t0 the argument is >= 1 and truncating it is 1 + floor((E - t0)·scale);
            # for E < t0 it lies in [0, 1) after the max, so M = 0 (also when t0 = inf). No branch.
            m = np.int64(max((e - t0) * scale + 1.0, 0.0))
            neg = -np.int64((signs >> np.uint64(i - a)) & np.uint64(1))  # 0, or -1 (all bits set)
            target[i] += (m ^ neg) - neg  # m, or -m
    state[0], state[1] = s0, s1
