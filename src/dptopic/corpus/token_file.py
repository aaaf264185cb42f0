"""A large corpus's token ids kept on disk (:class:`TokensOnDisk`), read a block of documents at a time.

A corpus read from text by the streaming reader (:mod:`dptopic.corpus.stream`) holds each token's vocabulary id (4
bytes a token: 190 MB at 10^6 documents of 60 words, 1.9 GB at 10^7). A training run reads them in passes: the
split hashes each document's bag, the ledger digests it, the trainer counts it. Each of those reads a block of
documents at a time (:meth:`dptopic.corpus.Corpus.token_blocks`), so the reader moves a corpus of at least
:data:`TOKENS_IN_MEMORY` documents to a temporary file once it is read, and the split's parts gather their blocks
from it. Whatever reads a corpus's ``word_ids`` whole (a save, a restriction to other words, a count matrix) reads
the file back once, and the corpus keeps them in memory from then on (docs/research/pipeline.md).

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
        ids = np.ascontiguousarray(ids, dtype=self.dtype)
        self._lock = threading.Lock()
        self._fh = tempfile.TemporaryFile(prefix="dptopic-tokens-")
        try:
            view = memoryview(ids).cast("B")
            for at in range(0, len(view), 1 << 26):         # 64 MiB a write
                self._fh.write(view[at:at + (1 << 26)])
            self._fh.flush()
        except OSError:
            self.close()
            raise
        self.n = len(ids)

    def __len__(self) -> int:
        return self.n

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


def gather(ids, ptr: np.ndarray, rows: np.ndarray, out_ptr: np.ndarray) -> np.ndarray:
    """The token ids of documents ``rows`` (in their order) of the corpus ``(ptr, ids)``, laid end to end as
    ``out_ptr`` says (:func:`~dptopic.kernels.tokenize.take_documents`). ``ids`` in memory, or on disk: increasing
    rows (a split's, a block of them) are read as the one range they span; others read the ids whole."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return np.zeros(0, np.int32)
    if not isinstance(ids, TokensOnDisk):
        return take_documents(ids, ptr, rows, out_ptr)
    if len(rows) > 1 and not np.all(rows[1:] > rows[:-1]):
        return take_documents(ids.load(), ptr, rows, out_ptr)
    lo, hi = int(ptr[rows[0]]), int(ptr[rows[-1] + 1])
    span = ids.read(lo, hi)
    starts = np.asarray(ptr[rows], dtype=np.int64) - lo
    return take_documents(span, starts, np.arange(len(rows), dtype=np.int64), out_ptr)
