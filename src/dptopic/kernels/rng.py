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

from ._jit import njit

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
def uniform_step(s0, s1):
    """:func:`xorshift_step` with a double in [0, 1) in place of the bits: ``(s0, s1, u)``, ``u`` the number
    :func:`next_uniform` draws from the same state."""
    s0, s1, bits = xorshift_step(s0, s1)
    return s0, s1, (bits >> _S11) * _INV53


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


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(inline="always", cache=True)
def splitmix64(x):
    """The splitmix64 finaliser of ``x + golden ratio`` (Steele, Lea & Flood 2014): 64 well-mixed bits."""
    z = x + _GOLDEN
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def document_state(base, word_ids, start, stop):
    """A xorshift128+ state for one document: the base state mixed with the document's word ids, so a document's
    draws depend on the seed and its own words only, never on which other documents share the call or their order
    (what makes ``transform`` a function of each row, as scikit-learn's ``check_methods_subset_invariance`` asks)."""
    h = splitmix64(base[0] ^ np.uint64(stop - start))
    for i in range(start, stop):
        h = splitmix64(h ^ np.uint64(word_ids[i]))
    s0 = splitmix64(h ^ base[1])
    s1 = splitmix64(s0 ^ base[0])
    if s0 == 0 and s1 == 0:
        s1 = np.uint64(1)
    out = np.empty(2, dtype=np.uint64)
    out[0] = s0
    out[1] = s1
    return out


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

    @staticmethod
    def splitmix64(x: int) -> int:
        M = PyXorShift.M
        z = (x + 0x9E3779B97F4A7C15) & M
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        return z ^ (z >> 31)

    @classmethod
    def for_document(cls, base, words) -> "PyXorShift":
        """The twin of :func:`document_state`: the stream of one document's draws."""
        mix = cls.splitmix64
        h = mix(int(base[0]) ^ len(words))
        for w in words:
            h = mix(h ^ int(w))
        s0 = mix(h ^ int(base[1]))
        s1 = mix(s0 ^ int(base[0]))
        return cls((s0, s1 if (s0 or s1) else 1))
