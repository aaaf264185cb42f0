"""A large corpus's document keys kept on disk (:class:`KeysOnDisk`) while its tokens are in memory.

A corpus read from text carries each document's :class:`~dptopic.corpus.identity.TokenKeys` (about 400 bytes a
document, 380 MB at 10^6), read for one thing: the dataset ledger's record of the documents when a private fit is
charged (``dptopic.corpus.ledger_documents.documents_of``). The streaming reader writes them, chunk by chunk, to
temporary files once a corpus reaches :data:`KEYS_IN_MEMORY` documents; each read of the corpus's ``token_keys``
reads them back whole, and that copy goes with its reader. A training run then holds them only while the ledger
records the documents, not through its split, fit and metrics (docs/research/pipeline.md, "The peak at 10^6
documents under 1.5 GiB").

The files have no name (``tempfile.TemporaryFile``): the operating system removes them when the corpus is let go or
the process ends, however it ends, and no other process can open them by a path. They hold the documents' token-bag
digests and sketches, from which the texts cannot be read back but which say which documents are alike, in the
system's temporary folder (``TMPDIR``). Where it cannot take them (no room, no such folder), the keys stay in memory.
The ledger's record puts its new documents' signatures in order through temporary files of the same kind
(:meth:`SignaturesOnDisk.batches`); a folder that fills while they are written stops the record in one ``OSError``,
inside the ledger's transaction: nothing is recorded or spent.
"""
from __future__ import annotations

import tempfile
import threading

import numpy as np

from .identity import TokenKeys

KEYS_IN_MEMORY = 100_000
"""The documents up to which a corpus read from text keeps its keys in memory (about 40 MB of them)."""


class KeysOnDisk:
    """:class:`~dptopic.corpus.identity.TokenKeys` in temporary files, one per column, rows appended in order; the
    sketch's bands one file per band, so that the ledger's record reads one band at a time (:meth:`band`,
    :meth:`with_sketches_on_disk`), and its signatures read in order (:meth:`chunks`).

    ``len()`` is the rows written; :meth:`load` reads them back whole, :meth:`take` some rows (in memory), and
    :meth:`kept` some rows into new files. Raises ``OSError`` where the files cannot be made or written (the caller
    keeps the keys in memory then)."""

    def __init__(self, first: TokenKeys):
        self._files: dict = {}
        self._rows: dict = {}
        self._lock = threading.Lock()
        self.n = 0
        try:
            for f in TokenKeys.FIELDS:
                column = np.asarray(getattr(first, f))
                self._rows[f] = (column.dtype, column.shape[1:])
                for name in self._file_names(f):
                    self._files[name] = tempfile.TemporaryFile(prefix="dptopic-keys-")
        except OSError:
            self.close()
            raise
        self.append(first)

    def _file_names(self, field: str) -> list:
        """The files of one column: the bands' one per band (``bands:0``, ...), any other column's one."""
        if field == "bands":
            return [f"bands:{j}" for j in range(int(np.prod(self._rows[field][1], dtype=np.int64)))]
        return [field]

    @property
    def n_bands(self) -> int:
        return len(self._file_names("bands"))

    def __len__(self) -> int:
        return self.n

    def append(self, keys: TokenKeys) -> None:
        """Write the rows of ``keys`` after those written (each column of the dtype and row shape of the first)."""
        columns = {f: np.ascontiguousarray(getattr(keys, f), dtype=self._rows[f][0]) for f in TokenKeys.FIELDS}
        for f, column in columns.items():
            if column.shape[1:] != self._rows[f][1] or len(column) != len(keys):
                raise ValueError(f"token keys' {f} has rows of shape {column.shape[1:]}, not {self._rows[f][1]}")
        if not len(keys):
            return
        with self._lock:
            for f, column in columns.items():
                parts = [np.ascontiguousarray(column[:, j]) for j in range(column.shape[1])] if f == "bands" \
                    else [column]
                for name, part in zip(self._file_names(f), parts):
                    fh = self._files[name]
                    fh.seek(0, 2)
                    fh.write(memoryview(part).cast("B"))
                    fh.flush()
            self.n += len(keys)

    def column(self, field: str) -> np.ndarray:
        """One column, every row, read into a new array."""
        dtype, row = self._rows[field]
        if field == "bands":
            out = np.empty((self.n, *row), dtype)
            for j in range(self.n_bands):
                out[:, j] = self.band(j)
            return out
        return self._read(field, np.empty((self.n, *row), dtype))

    def band(self, j: int) -> np.ndarray:
        """Band ``j`` of every row's sketch (uint64[n]), read into a new array."""
        return self._read(f"bands:{j}", np.empty(self.n, self._rows["bands"][0]))

    def _read(self, name: str, out: np.ndarray) -> np.ndarray:
        """The file ``name`` read whole into ``out``."""
        if not out.size:
            return out
        with self._lock:
            fh = self._files[name]
            fh.seek(0)
            _read_into(fh, memoryview(out).cast("B"))
        return out

    def with_sketches_on_disk(self) -> TokenKeys:
        """Every column left here: the sketch's bands as :class:`BandsOnDisk` (read a band at a time by the ledger's
        record: 256 of the 400 bytes a document), the signatures as :class:`SignaturesOnDisk` (never read whole by
        the record: in order a chunk at a time for the sketches' one-bit bound, and some rows for the pairs it
        verifies: 128 bytes), the bag digests and lengths as :class:`ColumnOnDisk` (read whole by each step of the
        record that reads them, and let go after it: not held through the comparison of the sketches, 12 bytes)."""
        on_disk = {"bands": BandsOnDisk, "signatures": SignaturesOnDisk}
        return TokenKeys(*(on_disk[f](self) if f in on_disk else ColumnOnDisk.of_keys(self, f)
                           for f in TokenKeys.FIELDS))

    def chunks(self, field: str, rows: int):
        """``(start, array)``: column ``field`` (not the bands) read in order, ``rows`` rows at a time."""
        for start in range(0, self.n, rows):
            yield start, self.rows_between(field, start, min(start + rows, self.n))

    def rows_between(self, field: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start`` to ``stop`` (not included) of column ``field`` (not the bands), read into a new array."""
        dtype, row = self._rows[field]
        width = int(np.prod(row, dtype=np.int64)) * dtype.itemsize
        out = np.empty((max(0, stop - start), *row), dtype)
        if out.size:
            with self._lock:
                fh = self._files[field]
                fh.seek(start * width)
                _read_into(fh, memoryview(out).cast("B"))
        return out

    def load(self) -> TokenKeys:
        """Every row, in memory."""
        return TokenKeys(*(self.column(f) for f in TokenKeys.FIELDS))

    def take(self, index) -> TokenKeys:
        """The rows of ``index`` (an integer array or a boolean mask), in its order, in memory (one column read at a
        time)."""
        return TokenKeys(*(self.column(f)[index] for f in TokenKeys.FIELDS))

    def kept(self, index) -> "KeysOnDisk":
        """The rows of ``index`` in new files (read through memory: :meth:`take`, then written)."""
        return KeysOnDisk(self.take(index))

    def close(self) -> None:
        for fh in self._files.values():
            fh.close()
        self._files = {}

    def __del__(self):
        self.close()


def _read_into(fh, view: memoryview) -> None:
    """Fill ``view`` from ``fh`` where it stands; a file that ends first is an ``OSError`` (never short keys)."""
    got = 0
    while got < len(view):
        n = fh.readinto(view[got:])
        if not n:
            raise OSError(f"a temporary file of the documents' keys ended after {got} of {len(view)} bytes")
        got += n


CHUNK_ROWS = 1 << 18
"""Rows of a column read at once when it is read in order (:meth:`KeysOnDisk.chunks`: 32 MiB of signatures)."""
TAKE_ROWS = 1 << 15
"""Rows of signatures read at once by :meth:`SignaturesOnDisk.take` (4 MiB of 128-byte sketches): a stretch that
holds none of the rows asked for is not read."""
BUCKET_BYTES = 32 << 20
"""The most bytes of rows :meth:`SignaturesOnDisk.batches` keeps in one temporary bucket (read back whole)."""


class SignaturesOnDisk:
    """The compact signatures (uint8[n, K]) of a :class:`KeysOnDisk`, left on disk: read in order a chunk at a time
    (:meth:`chunks`), some rows (:meth:`take`), or some rows in a given order a batch at a time (:meth:`batches`).
    Whatever reads them as an array (``np.asarray``) reads them all."""

    ndim = 2

    def __init__(self, keys: KeysOnDisk):
        self.keys = keys
        self.dtype = keys._rows["signatures"][0]

    @property
    def shape(self) -> tuple:
        return (len(self.keys), *self.keys._rows["signatures"][1])

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.keys)

    def __array__(self, dtype=None, copy=None):
        out = self.keys.column("signatures")
        return out if dtype is None else out.astype(dtype, copy=False)

    def batches(self, rows, size: int):
        """The rows ``rows`` (integers, each row at most once), ``size`` at a time in the order of ``rows``: each
        batch an array ``[len(batch), K]``. The file is read once, in order; each row is put in the temporary bucket
        of its batch's group (:data:`BUCKET_BYTES` of rows a bucket), and each bucket is read back whole and put in
        order when its batches are reached. At no time are more rows than one chunk and one bucket in memory (the
        ledger's record wants its new documents' sketches in the order of their ids, which is no order of the rows:
        read as they were wanted, the whole column was held)."""
        rows = np.asarray(rows, dtype=np.int64)
        width = int(np.prod(self.shape[1:], dtype=np.int64))
        per_bucket = max(1, BUCKET_BYTES // max(1, size * (width + 8))) * size
        n_buckets = -(-len(rows) // per_bucket)
        if n_buckets <= 1:      # one bucket: the rows read as one batch group, no temporary file
            whole = self.take(rows)
            for start in range(0, len(rows), size):
                yield whole[start:start + size]
            return
        place = np.full(len(self.keys), -1, np.int64)
        place[rows] = np.arange(len(rows))
        record = np.dtype([("at", "<i8"), ("row", self.dtype, (width,))])
        files = [tempfile.TemporaryFile(prefix="dptopic-keys-") for _ in range(n_buckets)]
        try:
            for start, chunk in self.keys.chunks("signatures", CHUNK_ROWS):
                at = place[start:start + len(chunk)]
                mine = np.flatnonzero(at >= 0)
                out = np.empty(len(mine), record)
                out["at"], out["row"] = at[mine], chunk[mine].reshape(len(mine), width)
                bucket = out["at"] // per_bucket
                for b in np.unique(bucket).tolist():
                    files[b].write(memoryview(np.ascontiguousarray(out[bucket == b])).cast("B"))
            del place
            for fh in files:
                got = np.empty(fh.tell() // record.itemsize, record)
                fh.seek(0)
                _read_into(fh, memoryview(got).cast("B"))
                fh.close()
                order = np.argsort(got["at"])       # each place once: a batch gathered, not the bucket sorted
                for start in range(0, len(got), size):
                    yield got["row"][order[start:start + size]].reshape(-1, *self.shape[1:])
                del got, order
        finally:
            for fh in files:
                fh.close()

    def chunks(self, rows: int = CHUNK_ROWS):
        """``(start, table)`` for each ``rows`` rows in order: the column read once, a chunk at a time."""
        return self.keys.chunks("signatures", rows)

    def take(self, rows) -> np.ndarray:
        """The rows ``rows`` (integers, any order, repeats allowed) in their order, the column read once in order
        :data:`TAKE_ROWS` at a time, skipping the stretches that hold none of them: only the rows asked for are
        held."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), *self.shape[1:]), self.dtype)
        order = np.argsort(rows, kind="stable")
        sorted_rows = rows[order]
        n = len(self)
        for start in np.unique(sorted_rows // TAKE_ROWS) * TAKE_ROWS if len(rows) else ():
            start = int(start)
            chunk = self.keys.rows_between("signatures", start, min(start + TAKE_ROWS, n))
            lo, hi = np.searchsorted(sorted_rows, [start, start + len(chunk)])
            out[order[lo:hi]] = chunk[sorted_rows[lo:hi] - start]
        return out


class ColumnOnDisk:
    """One column (1-D) left in a temporary file: a column of a :class:`KeysOnDisk` (:meth:`of_keys`), or an array
    written to a file of its own (:meth:`of_array`). Whatever reads it as an array (``np.asarray``) reads it whole,
    each time: nothing is held between two reads."""

    ndim = 1

    def __init__(self, read, n: int, dtype):
        self._read_all, self.n, self.dtype = read, int(n), np.dtype(dtype)

    @classmethod
    def of_keys(cls, keys: KeysOnDisk, field: str) -> ColumnOnDisk:
        """Column ``field`` of ``keys`` (one value a row)."""
        dtype, row = keys._rows[field]
        if row != ():
            raise ValueError(f"ColumnOnDisk holds a column of one value a row, not {field!r} of rows {row}")
        return cls(lambda: keys.column(field), keys.n, dtype)

    @classmethod
    def of_array(cls, values) -> ColumnOnDisk | np.ndarray:
        """``values`` (1-D) written to a temporary file of their own; the array itself where no file can be made or
        written (``TMPDIR`` full or missing)."""
        values = np.ascontiguousarray(values)
        if values.ndim != 1:
            raise ValueError(f"ColumnOnDisk holds a 1-D column, not shape {values.shape}")
        try:
            fh = tempfile.TemporaryFile(prefix="dptopic-keys-")
        except OSError:
            return values
        try:
            fh.write(memoryview(values).cast("B"))
            fh.flush()
        except OSError:
            fh.close()
            return values
        n, dtype, lock = len(values), values.dtype, threading.Lock()

        def read() -> np.ndarray:        # (the file and its size, never the array written)
            out = np.empty(n, dtype)
            if n:
                with lock:
                    fh.seek(0)
                    _read_into(fh, memoryview(out).cast("B"))
            return out
        return cls(read, n, dtype)

    @property
    def shape(self) -> tuple:
        return (self.n,)

    @property
    def size(self) -> int:
        return self.n

    def __len__(self) -> int:
        return self.n

    def __array__(self, dtype=None, copy=None):
        out = self._read_all()
        return out if dtype is None else out.astype(dtype, copy=False)


class BandsOnDisk:
    """The sketch bands (uint64[n, B]) of a :class:`KeysOnDisk`, read a band at a time (:meth:`column`). Whatever
    reads them as an array (``np.asarray``) reads them all."""

    ndim = 2
    dtype = np.dtype(np.uint64)

    def __init__(self, keys: KeysOnDisk):
        self.keys = keys

    @property
    def shape(self) -> tuple:
        return (len(self.keys), self.keys.n_bands)

    @property
    def size(self) -> int:
        return self.shape[0] * self.shape[1]

    def __len__(self) -> int:
        return len(self.keys)

    def column(self, j: int) -> np.ndarray:
        """Band ``j`` of every row (uint64[n])."""
        return self.keys.band(j)

    def __array__(self, dtype=None, copy=None):
        out = self.keys.column("bands")
        return out if dtype is None else out.astype(dtype, copy=False)
