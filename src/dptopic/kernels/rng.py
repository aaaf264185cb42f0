"""A tiny counter-free PRNG (xorshift128+) usable inside numba kernels.

Kernels are pure functions of their inputs and a 2-word ``uint64`` state, which is
seeded from the user's :class:`numpy.random.Generator`, or in secure mode from the
operating system's CSPRNG through :mod:`secrets` (see :func:`kernel_state`).
A pure-Python twin (:class:`PyXorShift`) lets the NumPy reference reproduce a
kernel's stream bit for bit in tests.
"""
from __future__ import annotations

import secrets

import numpy as np
from numba import njit

_S23 = np.uint64(23)
_S17 = np.uint64(17)
_S26 = np.uint64(26)
_S11 = np.uint64(11)
_INV53 = 1.0 / 9007199254740992.0


@njit(inline="always", cache=True)
def xorshift_step(s0, s1):
    """One step of xorshift128+ on a state held in two locals (registers): ``(s0, s1, 64 random bits)``.
    Kernels that draw in a tight loop keep the state in locals and write it back once."""
    x = s0 ^ (s0 << _S23)
    x = x ^ s1 ^ (x >> _S17) ^ (s1 >> _S26)
    return s1, x, x + s1


@njit(inline="always", cache=True)
def next_uint64(state):
    """Advance ``state`` (uint64[2]) in place; return 64 random bits."""
    s0, s1, bits = xorshift_step(state[0], state[1])
    state[0] = s0
    state[1] = s1
    return bits


@njit(inline="always", cache=True)
def next_uniform(state):
    """Advance ``state`` (uint64[2]) in place; return a double in [0, 1)."""
    return (next_uint64(state) >> _S11) * _INV53


LINE = 64  # bytes in a cache line


def own_line(values: np.ndarray) -> np.ndarray:
    """A copy of ``values`` that starts a cache line and shares no line with any other object.

    Threads that write small arrays on every token (a sampler's state, a copy of the topic totals)
    must not share a cache line: a line written by two cores moves between them on every write,
    which costs more than the sweep's own work. The copy is a view into a slightly larger buffer."""
    values = np.ascontiguousarray(values)
    pad = LINE // values.itemsize
    buf = np.zeros(values.size + 2 * pad, dtype=values.dtype)  # room to align the start and to fill the last line
    off = (-buf.ctypes.data % LINE) // values.itemsize
    out = buf[off:off + values.size].reshape(values.shape)
    out[...] = values
    return out


def kernel_state(rng: np.random.Generator | None) -> np.ndarray:
    """Draw a fresh, non-zero kernel state from a Generator, or from the OS CSPRNG when ``rng`` is None.

    The state owns its cache line (:func:`own_line`): each worker thread advances its own on every token.

    ``None`` is secure mode: the 128 state bits come from :func:`secrets.randbits`, so no
    seed, Generator state or PCG64 output determines the sampler's stream.
    """
    if rng is None:
        words = [0, 0]
        while words == [0, 0]:                # xorshift128+ must not start from the all-zero state
            words = [secrets.randbits(64), secrets.randbits(64)]
        return own_line(np.array(words, dtype=np.uint64))
    return own_line(rng.integers(1, 2**63 - 1, size=2, dtype=np.int64).astype(np.uint64))


class PyXorShift:
    """Pure-Python xorshift128+ with the same stream as :func:`next_uniform` (tests only)."""

    M = (1 << 64) - 1

    def __init__(self, state):
        self.s0, self.s1 = int(state[0]), int(state[1])

    def uint64(self) -> int:
        x, y = self.s0, self.s1
        self.s0 = y
        x ^= (x << 23) & self.M
        x = x ^ y ^ (x >> 17) ^ (y >> 26)
        self.s1 = x
        return (x + y) & self.M

    def uniform(self) -> float:
        return float(self.uint64() >> 11) * _INV53
