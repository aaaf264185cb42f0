"""Randomized response on word-presence vectors (Zhao et al. 2020, Sec. V, user side).

:func:`randomized_response` returns ``(packed_reports, event)`` like every mechanism.
``secure=True`` takes its coins from the operating system's CSPRNG (``os.urandom``) and
takes no generator; otherwise the compiled kernel draws from a xorshift128+ stream
seeded from the given :class:`numpy.random.Generator`. Both flip a bit when a 32-bit
integer falls below ``T = ceil((f/2)·2**32)``, so both realise the same exact flip
probability ``T/2**32 >= f/2``.
"""
from __future__ import annotations

import os

import numpy as np

from .._validation import Int, validate_value
from ..accounting.events import RandomizedResponseEvent, check_f
from ..errors import DPTopicError
from ..kernels.randomized_response import flip_threshold, last_byte_mask, presence_packed, randomize_presence
from ..kernels.rng import kernel_state

SECURE_CHUNK_BITS = 1 << 24  # urandom draws per chunk (64 MiB of 32-bit coins)


def secure_flip_mask(n_docs: int, vocab_size: int, threshold: int) -> np.ndarray:
    """Packed flip masks ``(n_docs, ceil(V/8))`` from the OS CSPRNG; bit set with prob. ``T/2**32``."""
    nb = (vocab_size + 7) // 8
    out = np.empty((n_docs, nb), dtype=np.uint8)
    rows = max(1, SECURE_CHUNK_BITS // (8 * nb))
    for a in range(0, n_docs, rows):
        b = min(n_docs, a + rows)
        coins = np.frombuffer(os.urandom(4 * (b - a) * 8 * nb), dtype="<u4").reshape(b - a, 8 * nb)
        out[a:b] = np.packbits(coins < threshold, axis=1, bitorder="little")
    if n_docs:
        out[:, -1] &= np.uint8(last_byte_mask(vocab_size))
    return out


def _check_csr(word_ids, doc_ptr, vocab_size):
    """The corpus as contiguous arrays, refused in one line unless ``doc_ptr`` runs from 0 to ``len(word_ids)`` without
    decreasing and every word id lies in ``[0, vocab_size)``: the compiled kernels index with them unchecked (an id out
    of range was silently dropped or written past the report, a bad pointer read past the corpus)."""
    validate_value("vocab_size", vocab_size, [Int(1, None)])
    try:
        w = np.asarray(word_ids)
        p = np.asarray(doc_ptr)
    except (TypeError, ValueError):
        w = p = None
    if w is None or w.ndim != 1 or p.ndim != 1 or p.size < 1 or (w.size and w.dtype.kind not in "iu") \
            or p.dtype.kind not in "iu":
        raise DPTopicError("invalid corpus: give word_ids and doc_ptr as 1-D integer arrays (CSR, doc_ptr[0] = 0).")
    if w.size and (int(w.min()) < 0 or int(w.max()) >= vocab_size):
        raise DPTopicError(f"invalid word_ids: every id must lie in [0, {int(vocab_size)}).")
    if int(p[0]) != 0 or int(p[-1]) != w.size or np.any(np.diff(p) < 0):
        raise DPTopicError("invalid doc_ptr: it must start at 0, never decrease and end at len(word_ids).")
    return np.ascontiguousarray(w, dtype=np.int32), np.ascontiguousarray(p, dtype=np.int64)


def randomized_response(word_ids, doc_ptr, vocab_size: int, f: float, rng: np.random.Generator | None = None,
                        secure: bool = False):
    """Randomize the presence vector of every document of a CSR corpus.

    Returns ``(packed, RandomizedResponseEvent(f, vocab_size))``: one event per document,
    each document being a different contributor's.
    """
    f = check_f(f)
    word_ids, doc_ptr = _check_csr(word_ids, doc_ptr, vocab_size)
    T = flip_threshold(f / 2.0)
    if secure:
        if rng is not None:
            raise DPTopicError("secure=True takes its coins from the operating system's CSPRNG and refuses a generator or seed.")
        packed = presence_packed(word_ids, doc_ptr, vocab_size)
        packed ^= secure_flip_mask(packed.shape[0], vocab_size, T)
    else:
        if rng is None:
            raise DPTopicError("a numpy Generator is required unless secure=True.")
        packed = randomize_presence(word_ids, doc_ptr, vocab_size, T, kernel_state(rng))
    return packed, RandomizedResponseEvent(f, vocab_size)
