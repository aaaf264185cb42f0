"""``njit`` for the kernels: numba's, whose on-disk cache a failed save cannot turn into an error.

Every kernel is compiled with ``cache=True``. Numba saves a kernel's machine code after compiling it, and that save can
fail with ``RuntimeError: no compiled object yet`` while another process (a second test worker, a second command) is
compiling and caching the same kernels at the same time: the compiled kernel was already added to its dispatcher and
runs, only its cache entry was not written. Numba raises that error to the caller of the kernel, as a traceback. Here
the save of a kernel is guarded: on that error the kernel runs uncached in this process (the next process compiles it
again), and any other error is raised as before.
"""
from __future__ import annotations

import numba
from numba.core.caching import FunctionCache

_UNSAVED = "no compiled object yet"


class _GuardedCache(FunctionCache):
    """numba's per-function cache, whose ``save_overload`` skips a save that finds no compiled object."""

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except RuntimeError as e:
            if _UNSAVED not in str(e):
                raise


def guard_cache(dispatcher):
    """Give ``dispatcher`` (a numba ``@njit(cache=True)`` function) the guarded cache; returns it."""
    cache = getattr(dispatcher, "_cache", None)
    if type(cache) is FunctionCache:           # caching on: same state, a save that cannot break the caller
        cache.__class__ = _GuardedCache
    return dispatcher


def njit(*args, **kwargs):
    """``numba.njit``, used the same ways (``@njit`` or ``@njit(cache=True, ...)``), with :func:`guard_cache`."""
    if args and callable(args[0]):
        return guard_cache(numba.njit(*args, **kwargs))
    decorate = numba.njit(*args, **kwargs)
    return lambda func: guard_cache(decorate(func))
