"""A large corpus's token ids kept on disk (:class:`TokensOnDisk`), read a block of documents at a time.

A corpus read from text by the streaming reader (:mod:`dptopic.corpus.stream`) holds each token's vocabulary id (4
bytes a token: 190 MB at 10^6 documents of 60 words, 1.9 GB at 10^7). A training run reads them in passes: the
split hashes each document's bag, the ledger digests it, the trainer counts it. Each of those reads a block of
documents at a time (:meth:`dptopic.corpus.Corpus.token_blocks`), so past :data:`TOKENS_IN_MEMORY` documents the
reader writes each chunk's ids to a temporary file as it reads them, counts the vocabulary from it and cuts it a
block at a time into another, which the corpus keeps; the split's parts gather their blocks from it. Whatever
reads a corpus's ``word_ids`` whole (a save, a restriction to other words, a count matrix) reads the file back
once, and the corpus keeps them in memory from then on (docs/research/pipeline.md).

The file has no name (``tempfile.TemporaryFile``): the operating system removes it when the corpus is let go or the
process ends, and no other process can open it by a path. It holds the documents' word ids in order, from which the
documents' bags of words can be read back (with the vocabulary, which is not in it), in the system's temporary folder
(``TMPDIR``). Where that folder cannot take it, the ids stay in memory.
"""
from __future__ import annotations

import tempfile
import threading

import numpy as np

from ..kernels.tokenize import take_documents

TOKENS_IN_MEMORY = 100_000
"""The documents up to which the streaming reader keeps a corpus's token ids in memory (about 24 MB of them)."""


class TokensOnDisk:
    """A corpus's token ids (int32) in a temporary file, read back a range at a time (:meth:`read`) or whole
    (:meth:`load`). Raises ``OSError`` where the file cannot be made or written (the caller keeps the ids)."""

    dtype = np.dtype(np.int32)

    def __init__(self, ids: np.ndarray):
        self._lock = threading.Lock()
        self.n = 0
        self._fh = tempfile.TemporaryFile(prefix="dptopic-tokens-")
        try:
            self.append(ids)
        except OSError:
            self.close()
            raise

    def __len__(self) -> int:
        return self.n

    def append(self, ids: np.ndarray) -> None:
        """Write ``ids`` after those written."""
        ids = np.ascontiguousarray(ids, dtype=self.dtype)
        view = memoryview(ids).cast("B")
        with self._lock:
            self._fh.seek(0, 2)
            for at in range(0, len(view), 1 << 26):         # 64 MiB a write
                self._fh.write(view[at:at + (1 << 26)])
            self._fh.flush()
            self.n += len(ids)

    def read(self, start: int, stop: int) -> np.ndarray:
        """Ids ``start`` to ``stop`` (a new array)."""
        start, stop = int(start), int(stop)
        if not 0 <= start <= stop <= self.n:
            raise IndexError(f"token range {start}:{stop} outside the {self.n} tokens on disk")
        out = np.empty(stop - start, self.dtype)
        if not len(out):
            return out
        view = memoryview(out).cast("B")
        with self._lock:
            self._fh.seek(start * self.dtype.itemsize)
            got = 0
            while got < len(view):
                n = self._fh.readinto(view[got:])
                if not n:
                    raise OSError(f"the temporary file of the corpus's tokens ended after {got} of {len(view)} bytes")
                got += n
        return out

    def load(self) -> np.ndarray:
        """Every id, in memory."""
        return self.read(0, self.n)

    def close(self) -> None:
        fh, self._fh = getattr(self, "_fh", None), None
        if fh is not None:
            fh.close()

    def __del__(self):
        self.close()


SPAN_TOKENS = 1 << 22
"""Tokens :func:`gather` reads from disk at once at most, beside a document's own (16 MiB)."""


def gather(ids, ptr: np.ndarray, rows: np.ndarray, out_ptr: np.ndarray) -> np.ndarray:
    """The token ids of documents ``rows`` (in their order) of the corpus ``(ptr, ids)``, laid end to end as
    ``out_ptr`` says (:func:`~dptopic.kernels.tokenize.take_documents`). ``ids`` in memory, or on disk: the rows are
    read in the file's order as the ranges they span, :data:`SPAN_TOKENS` at a time (rows in another order gathered
    so, then put in theirs), never the whole file for a few of its documents."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return np.zeros(0, np.int32)
    if not isinstance(ids, TokensOnDisk):
        return take_documents(ids, ptr, rows, out_ptr)
    if np.all(rows[1:] >= rows[:-1]):
        return _gather_in_order(ids, ptr, rows, out_ptr)
    order = np.argsort(rows, kind="stable")
    in_order = rows[order]
    order_ptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(ptr[in_order + 1] - ptr[in_order], out=order_ptr[1:])
    where = np.empty(len(rows), np.int64)
    where[order] = np.arange(len(rows), dtype=np.int64)     # row i's place among the rows in the file's order
    return take_documents(_gather_in_order(ids, ptr, in_order, order_ptr), order_ptr, where, out_ptr)


def _gather_in_order(ids: TokensOnDisk, ptr: np.ndarray, rows: np.ndarray, out_ptr: np.ndarray) -> np.ndarray:
    """:func:`gather` of non-decreasing ``rows`` from the file, a window of :data:`SPAN_TOKENS` at a time."""
    starts = np.asarray(ptr[rows], dtype=np.int64)
    out = np.empty(int(out_ptr[-1]), np.int32)
    window = (starts - starts[0]) // SPAN_TOKENS
    cuts = np.concatenate([[0], np.flatnonzero(window[1:] != window[:-1]) + 1, [len(rows)]])
    for a, b in zip(cuts[:-1], cuts[1:]):
        lo, hi = int(starts[a]), int(ptr[rows[b - 1] + 1])
        part = out_ptr[a:b + 1] - out_ptr[a]
        out[out_ptr[a]:out_ptr[b]] = take_documents(ids.read(lo, hi), starts[a:b] - lo,
                                                    np.arange(b - a, dtype=np.int64), part)
    return out


BLOCK_DOCS = 1 << 16
"""Documents read at once by :func:`blocks` (about 16 MB of tokens at 60 words a document)."""


def blocks(ids, ptr: np.ndarray, block_docs: int | None = None):
    """``(first, stop, block ptr from 0, block ids)`` of ``block_docs`` documents at a time of the CSR ``(ptr, ids)``,
    ``ids`` in memory (views) or on disk (read)."""
    block_docs = BLOCK_DOCS if block_docs is None else block_docs
    n = len(ptr) - 1
    for a in range(0, n, block_docs):
        b = min(a + block_docs, n)
        lo, hi = int(ptr[a]), int(ptr[b])
        yield a, b, ptr[a:b + 1] - lo, ids.read(lo, hi) if isinstance(ids, TokensOnDisk) else ids[lo:hi]
