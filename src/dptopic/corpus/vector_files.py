"""The files public word vectors are read from: a ``.npy`` array beside its word list, or the GloVe or word2vec text
format, gzipped or not, each read within the bounds its format sets so that a file of NUL bytes, a device or a
file that never ends a line is refused as it is met, in one line naming the file (:mod:`dptopic.corpus.vectors`
says which sources there are and checks what these return)."""
from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np

from ..errors import DPTopicError, ParameterError
from .files import _GZIP_ERRORS, _gzip_error, _nul_error, _refuse_utf16, is_gzip_name, not_a_regular_file

MAX_DIMENSION = 4096
"""The most values a vector of a text file holds (GloVe's and word2vec's are 50 to 300)."""
MAX_WORD_BYTES = 1024
"""The most bytes (UTF-8) a word of a text file or word list takes (GloVe 6B's longest word takes 68)."""
VALUE_BYTES = 32
"""The most characters one value of a text file takes with the separator before it (a float written in full,
``-1.2345678901234567e-308``, takes 24). A line of a ``d``-dimensional file takes at most ``MAX_WORD_BYTES + d *
VALUE_BYTES`` bytes before its line end (a 300-dimensional one, 10,624); the first line, before ``d`` is known, at
most that of :data:`MAX_DIMENSION`."""
MAX_VALUES = 1 << 30
"""The most values (words x dimension) a text file gives: 4 GiB as float32 (word2vec's Google News vectors hold 0.9
billion, GloVe 840B 0.66 billion)."""
MAX_BLANK_LINES = 1000
"""The most blank lines a text file holds (with :data:`MAX_VALUES` and the line bound, the whole read is bounded)."""


def _refused(spec, rest: str) -> ParameterError:
    """The refusal of the vectors ``spec`` names (a name or a path), in one line that starts with the parameter,
    ``public_vectors`` (the command line writes its flag in its place), and ``spec``: ``rest`` follows."""
    return ParameterError("{public_vectors} {spec}" + rest.replace("{", "{{").replace("}", "}}"), "public_vectors",
                          spec=repr(str(spec)))


def _read_npy(path: Path) -> np.ndarray:
    """A ``.npy`` array, memory-mapped (read without pickle); :class:`PublicVectors` checks it when made."""
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise _refused(str(path), f" is not a readable .npy array ({str(e)[:80]}): give the"
                                  " vectors as a 2-D float array saved with numpy.save.") from None


def _first_non_finite(arr) -> int | None:
    for start in range(0, arr.shape[0], 100_000):
        ok = np.isfinite(np.asarray(arr[start:start + 100_000])).all(axis=1)
        if not ok.all():
            return start + int(np.flatnonzero(~ok)[0])
    return None


def _word_list_of(path: Path) -> Path:
    for suffix in (".txt", ".words", ".vocab"):
        cand = path.with_suffix(suffix)
        if cand.is_file():
            return cand
    raise _refused(str(path), f" needs its word list beside it: {path.with_suffix('.txt').name}"
                              " (one word a line, in the rows' order).")


def _read_word_list(path: Path, n_rows: int | None) -> list:
    """The words of a word list beside ``n_rows`` rows: one a line (UTF-8, a byte-order mark dropped), at most
    :data:`MAX_WORD_BYTES` bytes each, so the file is refused unread when it is larger than ``n_rows`` such lines
    (None: rows that are no array of vectors, refused once the words are read)."""
    odd = not_a_regular_file(path)
    if odd is not None:
        raise DPTopicError(f"the word list {str(path)!r} {odd}: give a regular file of one word a line.")
    limit = 3 + (n_rows or 0) * (MAX_WORD_BYTES + 2)
    size = path.stat().st_size
    if n_rows is not None and size > limit:
        raise DPTopicError(f"the word list {str(path)!r} holds {size:,} bytes, more than {n_rows:,} words of at most"
                           f" {MAX_WORD_BYTES:,} bytes a line take ({limit:,}): give the word list of these vectors,"
                           " one word a line.")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise DPTopicError(f"the word list {str(path)!r} is not UTF-8 text: give one word a line.") from None
    words = text.split("\n")
    if words and words[-1] == "":
        words.pop()
    words = [w.rstrip("\r") for w in words]
    for i, w in enumerate(words):
        if not w.strip() or w != w.strip():
            raise DPTopicError(f"the word list {str(path)!r}: line {i + 1:,} is empty or has spaces around its word;"
                               " give one word a line.")
    return words


_SEPARATORS = re.compile(r"[ \t]+")
_TEXT_FORMATS = "the GloVe or word2vec text format (a word and its values a line, separated by spaces)"


def _line_bound(dim: int | None) -> int:
    """The most bytes a line of a ``dim``-dimensional text file takes, its line end included (:data:`VALUE_BYTES`)."""
    return MAX_WORD_BYTES + (MAX_DIMENSION if dim is None else dim) * VALUE_BYTES + 2


def _read_text_vectors(path: Path) -> tuple[list, np.ndarray]:
    """The GloVe text format (``word v1 ... vd``), or word2vec's (the same after a line ``N d``), gzipped or not;
    values separated by spaces or tabs. Read a line at a time within the format's bounds (module note)."""
    name = str(path)
    table = _TextTable(name)
    try:
        with (gzip.open(path, "rb") if is_gzip_name(path) else open(path, "rb")) as fh:
            lineno = 1
            while (line := _next_text_line(fh, path, lineno, table.dim)) is not None:
                table.add(lineno, line)
                lineno += 1
    except _GZIP_ERRORS as e:
        raise _gzip_error(path, e) from None
    except OSError as e:
        raise _refused(name, f" cannot be read ({type(e).__name__}: {str(e)[:60]}).") from None
    return table.result()


def _next_text_line(fh, path: Path, lineno: int, dim: int | None) -> str | None:
    """Line ``lineno`` of a text vectors file, decoded and stripped of its line end and trailing blanks, read within
    the bound of a line of ``dim`` values (:func:`_line_bound`); None at the end of the file."""
    name = str(path)
    limit = _line_bound(dim)
    raw = fh.readline(limit + 1)
    if not raw:
        return None
    if lineno == 1:
        _refuse_utf16(path, raw[:4096])
        if raw.startswith(b"\xef\xbb\xbf"):     # a UTF-8 byte-order mark: not part of the first word
            raw = raw[3:]
    if b"\x00" in raw:
        raise _nul_error(path, lineno, _TEXT_FORMATS + ", or a .npy array with its word list")
    if len(raw) > limit or (len(raw) == limit and not raw.endswith(b"\n")):
        what = (f"a word of at most {MAX_WORD_BYTES:,} bytes and its {dim:,} values of at most"
                f" {VALUE_BYTES} characters each" if dim is not None else
                f"a word of at most {MAX_WORD_BYTES:,} bytes and at most {MAX_DIMENSION:,} values of"
                f" at most {VALUE_BYTES} characters each")
        raise _refused(name, f": line {lineno:,} is longer than {limit - 2:,} bytes ({what}): not {_TEXT_FORMATS}.")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _refused(name, f" is not UTF-8 text: byte 0x{raw[e.start]:02x} on line {lineno:,} is not valid UTF-8;"
                             f" give {_TEXT_FORMATS}, or a .npy array with its word list.") from None
    return line.rstrip("\r\n").rstrip(" \t")


class _TextTable:
    """The words and vectors of a text vectors file, added a line at a time, each line checked against the format
    (a word2vec header first, one word and ``dim`` numbers a line, the bounds of the module note)."""

    def __init__(self, name: str):
        self.name = name
        self.words: list = []
        self.rows: list = []
        self.dim = self.expected = None
        self.blank = 0

    def add(self, lineno: int, line: str) -> None:
        name, dim = self.name, self.dim
        if not line:
            self.blank += 1
            if self.blank > MAX_BLANK_LINES:
                raise _refused(name, f" holds more than {MAX_BLANK_LINES:,} blank lines (line {lineno:,}): not"
                                     f" {_TEXT_FORMATS}.")
            return
        parts = _SEPARATORS.split(line)
        if lineno == 1 and len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
            self.expected, self.dim = int(parts[0]), int(parts[1])        # word2vec's header
            if not 1 <= self.dim <= MAX_DIMENSION or self.expected * self.dim > MAX_VALUES:
                raise _refused(name, f": its first line announces {self.expected:,} words of {self.dim:,} values:"
                                     f" give at most {MAX_DIMENSION:,} values a word and {MAX_VALUES:,} in all.")
            return
        if parts[0] == "":
            raise _refused(name, f": line {lineno:,} starts with a space or tab: give the word first, then its"
                                 " values.")
        if len(parts) == 1:
            raise _refused(name, f": line {lineno:,} holds a word and no values: give {_TEXT_FORMATS}.")
        if dim is None:
            dim = self.dim = len(parts) - 1
        if len(parts) != dim + 1:
            n = len(parts) - 1
            raise _refused(name, f": line {lineno:,} has {n:,} value{'s' * (n != 1)}, not {dim:,} (a corrupt or"
                                 f" truncated file); give one word and its {dim:,} values a line.")
        if len(parts[0].encode("utf-8")) > MAX_WORD_BYTES:
            raise _refused(name, f": the word on line {lineno:,} is longer than {MAX_WORD_BYTES:,} bytes: not"
                                 f" {_TEXT_FORMATS}.")
        if (len(self.rows) + 1) * dim > MAX_VALUES:
            raise _refused(name, f" holds more than {MAX_VALUES:,} values ({len(self.rows):,} words of {dim:,} by"
                                 f" line {lineno:,}): give fewer words (the most frequent ones come first in GloVe"
                                 " and word2vec files).")
        try:
            self.rows.append(np.array(parts[1:], dtype=np.float32))
        except ValueError:
            raise _refused(name, f": line {lineno:,} holds a value that is not a number (a corrupt file).") from None
        self.words.append(parts[0])

    def result(self) -> tuple[list, np.ndarray]:
        if not self.rows:
            raise _refused(self.name, f" holds no vectors: give {_TEXT_FORMATS}.")
        if self.expected is not None and self.expected != len(self.rows):
            raise _refused(self.name, f": its first line announces {self.expected:,} words but it holds"
                                      f" {len(self.rows):,} (a truncated file).")
        return self.words, np.vstack(self.rows)
