"""The default document ids of a corpus given none, ``doc0``, ``doc1``, ..., made only when read.

A corpus read without an id field names its documents by their place in the input. As a list of Python strings these
names took about 63 bytes a document (the string and its slot in the list), 0.6 GB at 10^7 documents, held from the
reading to the end of a run that never printed one (``docs/research/pipeline.md``). :class:`NumberedIds` holds the
documents' numbers instead (nothing for a whole corpus, 8 bytes a document for a part of one) and makes each name when
it is read; it reads, compares, saves and subsets as the list of the same names does.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

PREFIX = "doc"
"""A default id is this and the document's number in its input (``doc0`` the first)."""


class NumberedIds(Sequence):
    """The ids ``doc{k}`` for each ``k`` of ``numbers`` (None: ``0 .. n - 1``), in that order, as a read-only
    sequence of strings. ``take(index)`` is the ids of some of them (a corpus's part keeps its documents' names)."""

    __slots__ = ("_n", "_numbers")

    def __init__(self, n: int, numbers: np.ndarray | None = None):
        self._numbers = None if numbers is None else np.asarray(numbers, dtype=np.int64)
        self._n = int(n) if numbers is None else len(self._numbers)

    def _number(self, i: int) -> int:
        return i if self._numbers is None else int(self._numbers[i])

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            r = range(self._n)[i]
            return self.take(np.arange(r.start, r.stop, r.step, dtype=np.int64))
        i = operator.index(i)
        if not -self._n <= i < self._n:
            raise IndexError(f"document id {i} of {self._n}")
        return f"{PREFIX}{self._number(i + self._n if i < 0 else i)}"

    def __iter__(self):
        if self._numbers is None:
            return (f"{PREFIX}{k}" for k in range(self._n))
        return (f"{PREFIX}{k}" for k in self._numbers.tolist())

    def take(self, index) -> "NumberedIds":
        """The ids of the documents ``index`` (integers, in their order)."""
        index = np.asarray(index, dtype=np.int64)
        return NumberedIds(len(index), index if self._numbers is None else self._numbers[index])

    def __eq__(self, other) -> bool:
        if isinstance(other, NumberedIds):
            if self._numbers is None and other._numbers is None:
                return self._n == other._n
            return len(self) == len(other) and bool(np.array_equal(self._numbers_array(), other._numbers_array()))
        if isinstance(other, (list, tuple)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None

    def _numbers_array(self) -> np.ndarray:
        return np.arange(self._n, dtype=np.int64) if self._numbers is None else self._numbers

    def __repr__(self) -> str:
        shown = ", ".join(repr(x) for x in self[:3])
        return f"NumberedIds([{shown}{', ...' if self._n > 3 else ''}], {self._n} documents)"
