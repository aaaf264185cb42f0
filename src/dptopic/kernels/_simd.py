"""Four-wide weights and lane sums for the dense draw with 8 to 64 topics.

The dense samplers compute, per token, ``p[j] = (min(max(T[w,j], 0), clip) + β) · h[j]`` for the
``K`` topics and then the eight lane sums ``Σ_m p[c + 8m]`` of :func:`dptopic.kernels.dense._lane_draw`.
Written as numba loops, the weights are vectorised by LLVM but the lane sums are 56 scalar
additions read back from ``p`` (numba turns LLVM's SLP vectoriser off), and they sit on the chain
from one token's draw to the next. Here both are emitted as LLVM vector code: eight blocks of two
``<4 x double>`` halves, the row of ``T`` read with masked loads so that nothing past column ``K``
is touched, and the lane sums added as the same tree as the scalar code, so the draw is bit for bit
the one the NumPy reference computes. If the installed numba/llvmlite cannot build or run it
correctly, :func:`lane_weights` is the scalar version: slower, never different.
"""
from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from ._jit import njit

VECTOR_FROM = 33  # with fewer topics the 64-wide pass mostly adds zeros: kernels keep the scalar loop
LANES = 64  # the lane path covers up to 64 topics; ``h`` and ``p`` must have at least this many entries

_MASKED = {types.float64: "v4f64", types.float32: "v4f32", types.int32: "v4i32", types.int64: "v4i64"}


def _tree8(builder, x):
    """((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)): the scalar lane sums' order."""
    a = builder.fadd(builder.fadd(x[0], x[1]), builder.fadd(x[2], x[3]))
    b = builder.fadd(builder.fadd(x[4], x[5]), builder.fadd(x[6], x[7]))
    return builder.fadd(a, b)


@intrinsic
def _lane_weights_vector(typingctx, table, row, h, beta, clip, p):
    """The vector version of :func:`_lane_weights_scalar` (same arguments, same results)."""
    ok = (isinstance(table, types.Array) and table.ndim == 2 and table.layout == "C" and table.dtype in _MASKED
          and all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float64
                  for a in (h, p))
          and isinstance(row, types.Integer) and isinstance(beta, types.Float) and isinstance(clip, types.Float))
    if not ok:
        return None
    sig = types.UniTuple(types.float64, 8)(table, row, h, beta, clip, p)

    def codegen(context, builder, signature, args):
        tty, rty, hty, bty, cty, pty = signature.args
        tarr = context.make_array(tty)(context, builder, args[0])
        harr = context.make_array(hty)(context, builder, args[2])
        parr = context.make_array(pty)(context, builder, args[5])
        i1, i32, i64, f64 = ir.IntType(1), ir.IntType(32), ir.IntType(64), ir.DoubleType()
        v4, vi = ir.VectorType(f64, 4), ir.VectorType(i64, 4)
        elem = context.get_data_type(tty.dtype)
        ve = ir.VectorType(elem, 4)

        def splat(x, vty):
            v = ir.Constant(vty, ir.Undefined)
            for c in range(4):
                v = builder.insert_element(v, x, ir.Constant(i32, c))
            return v

        K = builder.extract_value(tarr.shape, 1)
        row = context.cast(builder, args[1], rty, types.int64)
        beta = splat(context.cast(builder, args[3], bty, types.float64), v4)
        clip = splat(context.cast(builder, args[4], cty, types.float64), v4)
        zero = ir.Constant(v4, [0.0] * 4)
        kvec = splat(K, vi)
        base = builder.gep(tarr.data, [builder.mul(row, K)])
        name = f"llvm.masked.load.{_MASKED[tty.dtype]}.p0"
        load = builder.module.globals.get(name)
        if load is None:
            load = ir.Function(builder.module, ir.FunctionType(ve, [base.type, i32, ir.VectorType(i1, 4), ve]),
                               name=name)
        align = ir.Constant(i32, context.get_abi_sizeof(elem))

        halves = []
        for o in range(0, LANES, 4):
            off = ir.Constant(i64, o)
            inside = builder.icmp_signed("<", ir.Constant(vi, [o, o + 1, o + 2, o + 3]), kvec)
            x = builder.call(load, [builder.gep(base, [off]), align, inside, ir.Constant(ve, None)])  # 0 past K
            if elem == f64:
                pass
            elif isinstance(elem, ir.FloatType):
                x = builder.fpext(x, v4)
            else:
                x = builder.sitofp(x, v4)
            x = builder.select(builder.fcmp_ordered(">", x, zero), x, zero)  # max(T, 0)
            x = builder.select(builder.fcmp_ordered("<", x, clip), x, clip)  # min(., clip)
            hv = builder.load(builder.bitcast(builder.gep(harr.data, [off]), v4.as_pointer()), align=8)
            wv = builder.fmul(builder.fadd(x, beta), hv)
            builder.store(wv, builder.bitcast(builder.gep(parr.data, [off]), v4.as_pointer()), align=8)
            halves.append(wv)
        lo, hi = _tree8(builder, halves[0::2]), _tree8(builder, halves[1::2])  # lanes 0-3 and 4-7
        vals = [builder.extract_element(v, ir.Constant(i32, c)) for v in (lo, hi) for c in range(4)]
        return context.make_tuple(builder, signature.return_type, vals)

    return sig, codegen


@njit(inline="always", cache=True)
def _lane_weights_scalar(table, row, h, beta, clip, p):
    """Write ``p[j] = (min(max(table[row,j], 0), clip) + beta) · h[j]`` for ``j < K`` and return the eight
    lane sums ``Σ_m p[c + 8m]`` as trees. ``h`` and ``p`` have at least 64 entries, ``p`` zero beyond ``K``;
    ``h`` must be zero beyond ``K`` for the vector version, which computes all 64."""
    K = table.shape[1]
    for j in range(K):
        p[j] = (min(max(table[row, j], 0), clip) + beta) * h[j]
    return (((p[0] + p[8]) + (p[16] + p[24])) + ((p[32] + p[40]) + (p[48] + p[56])),
            ((p[1] + p[9]) + (p[17] + p[25])) + ((p[33] + p[41]) + (p[49] + p[57])),
            ((p[2] + p[10]) + (p[18] + p[26])) + ((p[34] + p[42]) + (p[50] + p[58])),
            ((p[3] + p[11]) + (p[19] + p[27])) + ((p[35] + p[43]) + (p[51] + p[59])),
            ((p[4] + p[12]) + (p[20] + p[28])) + ((p[36] + p[44]) + (p[52] + p[60])),
            ((p[5] + p[13]) + (p[21] + p[29])) + ((p[37] + p[45]) + (p[53] + p[61])),
            ((p[6] + p[14]) + (p[22] + p[30])) + ((p[38] + p[46]) + (p[54] + p[62])),
            ((p[7] + p[15]) + (p[23] + p[31])) + ((p[39] + p[47]) + (p[55] + p[63])))


@njit(cache=True)
def _vector_probe(table, row, h, beta, clip, p):
    return _lane_weights_vector(table, row, h, beta, clip, p)


@njit(cache=True)
def _scalar_probe(table, row, h, beta, clip, p):
    return _lane_weights_scalar(table, row, h, beta, clip, p)


@functools.lru_cache(maxsize=None)
def vector_works() -> bool:
    """Whether :func:`lane_weights` uses the LLVM vector version (for C-contiguous tables of more than 32
    topics). Decided once, when a kernel using it is first compiled: the vector version is built and run
    on every table type and a few ``K`` and must equal the scalar one."""
    rng = np.random.default_rng(0)
    try:
        for dtype in (np.float64, np.float32, np.int32, np.int64):
            for K in (8, 13, 32, 33, 50, 64):
                table = rng.integers(-3, 9, size=(3, K)).astype(dtype)
                h = np.zeros(LANES)
                h[:K] = rng.uniform(0.1, 1.0, K)
                for clip in (np.inf, 2.5):
                    p1, p2 = np.zeros(LANES), np.zeros(LANES)
                    s1 = _vector_probe(table, 2, h, 0.01, clip, p1)
                    s2 = _scalar_probe(table, 2, h, 0.01, clip, p2)
                    if s1 != s2 or not np.array_equal(p1, p2):
                        return False
    except Exception:  # pragma: no cover - depends on the installed compiler
        return False
    return True


def lane_weights(table, row, h, beta, clip, p):
    """:func:`_lane_weights_scalar`'s contract. Inside compiled kernels it is the vector version where that
    applies; called from Python it runs the scalar version."""
    return _scalar_probe(table, row, h, beta, clip, p)


@overload(lane_weights, inline="always")
def _lane_weights_impl(table, row, h, beta, clip, p):
    vector = (isinstance(table, types.Array) and table.layout == "C" and table.dtype in _MASKED
              and all(isinstance(a, types.Array) and a.layout == "C" and a.dtype == types.float64 for a in (h, p))
              and vector_works())
    if vector:
        return lambda table, row, h, beta, clip, p: _lane_weights_vector(table, row, h, beta, clip, p)
    return lambda table, row, h, beta, clip, p: _lane_weights_scalar(table, row, h, beta, clip, p)
