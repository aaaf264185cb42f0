"""``exp`` and ``exp(ψ)`` that LLVM can vectorise, for the variational kernels' loops over topics and words.

Numba compiles ``math.exp`` to a call of the C library's ``exp``, one value at a time: a loop that calls it is never
vectorised (numba's vector math library, SVML, is an optional Intel package). :func:`vexp` is the same function
written out (Cody and Waite's reduction ``x = n ln 2 + r``, ``|r| <= ln 2 / 2``, a degree-13 Taylor polynomial of
``e^r`` and ``2^n`` built from its bits), so a loop of them runs four or eight at a time. It is within one unit in
the last place of ``exp`` over the normal range (``tests/kernels/test_vmath.py``); results below ``2^-1022`` (where
``exp`` itself gives subnormals) may differ in their last bits, and ``x < -746`` gives 0.

:func:`exp_psi` is ``exp(ψ(x) − c)`` for ``x > 0`` with one ``exp`` and no ``log``: ``ψ(x) = ψ(x + 10) −
Σ_{j<10} 1/(x + j)`` (the ten reciprocals added in pairs, five divisions; for every ``x``, so that nothing branches),
then, for ``y = x + 10``,
``exp(ψ(y)) = y · exp(−1/(2y) − Σ_{n<=7} B_2n / (2n y^2n))``, whose first omitted term is below ``5e-17``: the result
is as accurate as ``exp(scipy.special.psi(x) − c)`` (a few units in the last place; for small ``x``, where ``ψ(x) ≈
−1/x`` is large, both carry the rounding of ``ψ`` itself into the relative error of the exponential).

Both are inlined into their callers by numba (``inline="always"``: LLVM would not inline a function this long, and
a loop that calls a function is not vectorised), so they take the caller's compile options: a caller compiles with
numba's NumPy error model (a division by zero is not checked for, which would branch; none happens) and LLVM's
``contract`` flag only (fused multiply-adds), never with re-association, which would undo the two-part reduction.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._jit import njit

_CONTRACT = {"contract"}

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01     # ln 2 in two parts: n · _LN2_HI is exact for |n| < 2^11
_LN2_LO = 1.90821492927058770002e-10


@intrinsic
def _bits_as_float(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits`` (a bit cast, which vectorises)."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.bitcast(value, ir.DoubleType())

    return types.float64(bits), codegen


@njit(cache=True, nogil=True, fastmath=_CONTRACT, error_model="numpy", inline="always")
def vexp(x):
    """``exp(x)`` within one unit in the last place over the normal range; branch-free, so loops of it vectorise."""
    x = min(max(x, -746.0), 710.0)
    n = math.floor(x * _LOG2E + 0.5)
    r = (x - n * _LN2_HI) - n * _LN2_LO
    p = 1.0 / 6227020800.0                  # Σ_{i<=13} r^i / i!, |r| <= 0.347: remainder below 2e-16 relative
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    m = np.int64(n)
    a = m >> 1                              # 2^n as 2^a · 2^b, both normal for every n in [-1077, 1025]
    b = m - a
    return p * _bits_as_float((a + 1023) << 52) * _bits_as_float((b + 1023) << 52)


@njit(cache=True, nogil=True, fastmath=_CONTRACT, error_model="numpy", inline="always")
def exp_psi(x, c):
    """``exp(ψ(x) − c)`` for ``x > 0`` (see the module's docstring); branch-free, so loops of it vectorise."""
    r = ((2.0 * x + 1.0) / (x * (x + 1.0)) + (2.0 * x + 5.0) / ((x + 2.0) * (x + 3.0))
         + (2.0 * x + 9.0) / ((x + 4.0) * (x + 5.0)) + (2.0 * x + 13.0) / ((x + 6.0) * (x + 7.0))
         + (2.0 * x + 17.0) / ((x + 8.0) * (x + 9.0)))
    y = x + 10.0
    f = 1.0 / (y * y)
    t = f * (1.0 / 12 + f * (-1.0 / 120 + f * (1.0 / 252 + f * (-1.0 / 240 + f * (1.0 / 132 + f * (
        -691.0 / 32760 + f * (1.0 / 12)))))))
    return y * vexp(-(r + c) - 0.5 / y - t)
