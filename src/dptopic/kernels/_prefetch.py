"""A software prefetch hint for the kernels (LLVM's ``llvm.prefetch``).

The samplers read one word's row of the word–topic tables per token, at a random place in
tables that outgrow the per-core cache. Asking for the row of the token a few positions
ahead lets those loads overlap with the current token's work instead of stalling it.
A prefetch never faults and never changes a result; it is only a hint.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ._jit import njit


@intrinsic
def _prefetch_hint(typingctx, arr, flat_index):
    """Hint that element ``flat_index`` of the C-contiguous array ``arr`` will be read soon."""
    if not isinstance(arr, types.Array) or not isinstance(flat_index, types.Integer):
        return None
    sig = types.void(arr, flat_index)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        i8p = ir.IntType(8).as_pointer()
        ptr = builder.bitcast(builder.gep(ary.data, [args[1]]), i8p)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = builder.module.globals.get("llvm.prefetch.p0i8")
        if fn is None:
            fn = ir.Function(builder.module, fnty, name="llvm.prefetch.p0i8")
        # read access, high temporal locality, data cache
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True)
def _probe(a):
    _prefetch_hint(a, 0)


@njit(inline="always", cache=True)
def _no_prefetch(arr, flat_index):
    pass


try:  # a numba/llvmlite that cannot lower the hint gets a no-op: slower, never wrong
    _probe(np.zeros(1))
    prefetch = _prefetch_hint
except Exception:  # pragma: no cover - depends on the installed compiler
    prefetch = _no_prefetch
