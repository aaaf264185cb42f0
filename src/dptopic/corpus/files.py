"""Reading files as text: strict UTF-8 (a binary or UTF-16 file refused in one line), gzip, a text file's lines,
CSV rows and their header (Orange's three header rows of a ``.tab``), and what a missing path or a broken link says.
The readers of corpus files (:mod:`dptopic.corpus.records`) are built on them."""
from __future__ import annotations

import csv
import gzip
import io
import os
import stat
import sys
import zlib
from pathlib import Path

from ..errors import DPTopicError, ParameterError


def _read_csv(path, delimiter: str):
    """The header, the rows (blank lines skipped) and the line each row ends on. A quote that is never closed would
    make the rest of the file one field, and is refused; other quoting that Python's strict reader refuses (a space
    after a closing quote) is read as its lenient reader reads it."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    for strict in (True, False):
        with _open_text(path, "a CSV file of UTF-8 text") as fh:
            reader = csv.reader(fh, delimiter=delimiter, strict=strict)
            rows, lines, start = [], [], 1
            try:
                for row in reader:
                    if row:
                        rows.append(row)
                        lines.append(reader.line_num)
                    start = reader.line_num + 1
            except csv.Error as e:
                if str(e).startswith("unexpected end of data"):
                    raise DPTopicError(f"bad CSV file {str(path)!r}: a quote in the row from line {start} on is never"
                                       " closed, so the rest of the file would be one field: close it (a quote inside a"
                                       ' field is written as two, "").') from None
                if strict:
                    continue
                raise DPTopicError(f"bad CSV file {str(path)!r}: line {reader.line_num}: {e}.") from None
        nul = next((i for i, r in enumerate(rows) if any("\x00" in f for f in r)), None)
        if nul is not None:
            raise _nul_error(path, lines[nul], "a CSV file of UTF-8 text")
        return (rows[0] if rows else []), rows[1:], lines[1:]


ORANGE_TYPES = frozenset({"d", "discrete", "c", "continuous", "s", "string", "t", "time", "text"})


ORANGE_FLAGS = frozenset({"class", "c", "meta", "m", "ignore", "i", "weight", "w"})


def orange_header_rows(rows, lines) -> int:
    """How many of ``rows`` (those below the names row of a tab-separated file, on ``lines``) are the rest of an Orange
    header (https://orange3.readthedocs.io/projects/orange-data-mining-library/en/latest/reference/data.io.html, its
    three-row header): 2, the columns' types and flags; 1, the types alone when the flags line is blank (no row);
    0, a plain one-row header."""
    if not rows or not any(f.strip() for f in rows[0]):
        return 0
    if not all(f.strip().lower() in ORANGE_TYPES or not f.strip() for f in rows[0]):
        return 0

    def flag(field: str) -> bool:        # "meta include=True": flags and key=value attributes
        return all(w.lower() in ORANGE_FLAGS or "=" in w for w in field.split())

    return 2 if len(rows) > 1 and lines[1] == lines[0] + 1 and all(flag(f) for f in rows[1]) else 1


def tab_header_rows(path) -> int:
    """The header rows of a tab-separated file: 3 for Orange's header (names, types, flags), else 1."""
    rows, lines = [], []
    with _open_text(path) as fh:
        reader = csv.reader(fh, delimiter="\t")
        try:
            for row in reader:
                if row:
                    rows.append(row)
                    lines.append(reader.line_num)
                if len(rows) == 3:
                    break
        except csv.Error:       # said by the reader itself, in its own words
            pass
    return 1 + (orange_header_rows(rows[1:], lines[1:]) if rows else 0)


def _column_list(cols, limit: int = 8, width: int = 40) -> str:
    """The header's column names for an error line: at most ``limit`` names of at most ``width`` characters (a first
    line that is a document, not a header, would otherwise put its whole text in the message)."""
    shown = [c if len(c) <= width else c[:width - 3] + "..." for c in cols[:limit]]
    text = ", ".join(" ".join(repr(c)[1:-1].split()) for c in shown)
    return text + (f", ... ({len(cols)} columns)" if len(cols) > limit else "")


def _other_delimiter_char(cols, delimiter: str) -> str | None:
    """The separator a header read as one column holds instead of ``delimiter``, if any."""
    if len(cols) != 1:
        return None
    return next((c for c in (";", "\t", "|", ",") if c != delimiter and c in cols[0]), None)


def _other_delimiter(cols, delimiter: str) -> str:
    """A hint for a header read as one column because the file separates its fields with another character."""
    other = _other_delimiter_char(cols, delimiter)
    if other is None:
        return ""
    name = "tabs" if other == "\t" else repr(other)
    how = ("name it .tsv (read with tabs), or in Python pass delimiter='\\t'" if other == "\t" else
           "name it .csv (read with commas), or in Python pass delimiter=','" if other == "," else
           f"save it with commas between the fields, or in Python pass delimiter={other!r}")
    return f"; the file looks delimited by {name}, not {delimiter!r}: {how}"


def not_a_regular_file(path) -> str | None:
    """What ``path`` is when it exists but is no regular file a reader can read once and whole, as the end of a
    sentence naming it ("is a folder", "is a device (such as /dev/zero), not a regular file", "is a named pipe
    (FIFO), not a regular file", ...); None for a regular file (or a link to one) and for a path that does not exist,
    which the caller names as missing."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    kind = ("a device (such as /dev/zero or /dev/null)" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else
            "a named pipe (FIFO), which would be read until its writer closes it" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a file of any kind dptopic reads")
    return f"is {kind}, not a regular file"


def _check_file(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise DPTopicError(f"expected the path of a corpus file, got {type(path).__name__}: give a file name.")
    if not os.fspath(path).strip():     # Path("") is the current folder
        raise DPTopicError("the corpus path is empty: give a file name.")
    path = Path(path)
    if path.is_dir():
        raise ParameterError("{path} is a folder, not a file: give a file, or {format=folder} for a folder of .txt files.",
                             "format", path=repr(str(path)), folder="dir")
    if not path.is_file():
        if path.exists():  # /dev/null, a FIFO, a socket: nothing a corpus can be read from once and whole
            raise DPTopicError(f"{str(path)!r} {not_a_regular_file(path) or 'is not a regular file'}: give a corpus"
                               " file (save the data to a regular file first).")
        raise DPTopicError(f"file {str(path)!r} does not exist{broken_link(path)}.")
    return path


def broken_link(path) -> str:
    """What to add to "does not exist" when ``path`` is a symbolic link whose target is missing."""
    path = Path(path)
    if not path.is_symlink():
        return ""
    try:
        target = os.readlink(path)
    except OSError:
        return " (it is a broken symbolic link)"
    return f" (it is a symbolic link to {target!r}, which does not exist)"


def is_gzip_name(path) -> bool:
    """Whether ``path``'s name ends in ``.gz``, in any case (``corpus.JSONL.GZ``): such a file is read through gzip."""
    return Path(path).suffix.lower() == ".gz"


def _gzip_error(path, e: BaseException) -> DPTopicError:
    """A ``.gz`` file that cannot be decompressed, in one line naming it: cut short, not gzip at all, or damaged."""
    name = str(path)
    if isinstance(e, EOFError):
        return DPTopicError(f"{name!r} is truncated: its gzip data ends before the end of the compressed stream (an"
                            " interrupted download or copy?); fetch or compress it again.")
    if isinstance(e, gzip.BadGzipFile) and str(e).startswith("Not a gzipped file"):
        try:
            with open(path, "rb") as fh:
                gzipped = fh.read(2) == b"\x1f\x8b"
        except OSError:
            gzipped = False
        if gzipped:     # a gzip stream followed by bytes that start none (zero padding, a damaged copy)
            return DPTopicError(f"{name!r} holds gzip data followed by bytes that are not gzip data (padding, or"
                                " a damaged or appended-to copy?): fetch or compress it again (zcat FILE | gzip >"
                                " NEW.gz keeps the readable part).")
        return DPTopicError(f"{name!r} is not gzip data although its name ends in .gz: rename it without .gz if it is"
                            " plain text, or compress it with gzip.")
    return DPTopicError(f"{name!r} is corrupt gzip data ({str(e) or type(e).__name__}); fetch or compress it again.")


_GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def read_text_file(path, want: str = "a text file (one document per line), or a corpus in another format (format=FORMAT)") -> str:
    """A text file's contents (UTF-8, ``.gz`` transparently); binary files are refused, not tokenised. ``want`` ends
    the message that refuses a binary file: what to give instead. The file is read in blocks and refused at the first
    block that holds a NUL byte, so that a large binary file (a disk image, a sparse file of zeros) is never read
    whole before it is refused."""
    path = _check_file(path)

    def first(block: bytes) -> None:
        _refuse_utf16(path, block)
        if b"\x00" in block:
            text = block.decode("utf-8", errors="replace")
            if text.count("\ufffd") > max(8, len(text) // 100):
                raise DPTopicError(f"{str(path)!r} looks like a binary file, not UTF-8 text: give {want}.")

    try:
        with _open_guarded(path, want, first) as fh:
            data = b"".join(iter(lambda: fh.read(_BLOCK), b""))
    except _GZIP_ERRORS as e:
        raise _gzip_error(path, e) from None
    except OSError as e:
        raise DPTopicError(f"cannot read {str(path)!r} ({type(e).__name__}): give a plain or gzipped text file.") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        if text.count("\ufffd") > max(8, len(text) // 100):
            raise DPTopicError(f"{str(path)!r} looks like a binary file, not UTF-8 text: give {want}.") from None
        raise _not_utf8(path, data[e.start], data[:e.start].count(b"\n") + 1) from None
    return text


_BLOCK = 1 << 16
"""The block a text file is read and checked in (bytes): the first one for a binary or UTF-16 file, each one for a
NUL byte."""


class _GuardedBytes(io.RawIOBase):
    """A file's bytes read through a check: the first block (at least 4 KiB) by ``first(block)`` (a UTF-16 or binary
    file refused by its start), and every block for a NUL byte, which no text file holds. A file is thus refused at the
    first block that shows it is not text, and never read whole first (a sparse file of zeros, a disk image)."""

    def __init__(self, fh, path, want: str, first=None):
        super().__init__()
        self._fh, self._path, self._want, self._first = fh, path, want, first
        self._pending, self._lines = b"", 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        if self._first is not None:
            first, self._first = self._first, None
            self._pending = self._fh.read(max(4096, len(buf)))
            first(self._pending[:4096])
        data, self._pending = (self._pending, b"") if self._pending else (self._fh.read(len(buf)), b"")
        if len(data) > len(buf):        # the first block, read larger than this buffer: hand it out in parts
            data, self._pending = data[:len(buf)], data[len(buf):]
        nul = data.find(b"\x00")
        if nul >= 0:
            raise _nul_error(self._path, self._lines + data.count(b"\n", 0, nul) + 1, self._want)
        self._lines += data.count(b"\n")
        buf[:len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            super().close()


def _open_guarded(path, want: str, first=None) -> _GuardedBytes:
    """``path``'s bytes (decompressed when it ends in ``.gz``) through :class:`_GuardedBytes`."""
    fh = gzip.open(path, "rb") if is_gzip_name(path) else open(path, "rb")
    return _GuardedBytes(fh, path, want, first)


def _nul_error(path, line: int, want: str) -> DPTopicError:
    """A file that holds a NUL byte is refused rather than read with it as a word break (a tar archive of texts would
    be read with its headers as words, a zero-filled file as an empty document)."""
    name = Path(path).name
    return DPTopicError(f"{str(path)!r} holds a NUL byte (on line {line}), which no text file holds: it looks binary or"
                        f" damaged; give {want}, or remove the NUL bytes if the rest is text (tr -d '\\000' < {name}"
                        f" > clean-{name}).")


def read_lines(path) -> list[str]:
    """The lines of a text file of one document per line: split at line feeds only (a trailing carriage return
    dropped), so that line ``n`` is document ``n - 1`` (``doc{n-1}``), blank lines included. Form feeds, U+0085,
    U+2028 and the other separators that :meth:`str.splitlines` also splits at stay inside their line. A file with
    carriage returns and no line feed at all (classic Mac OS line endings) is split at its carriage returns."""
    text = read_text_file(path)
    lines = text.split("\r" if "\n" not in text and "\r" in text else "\n")
    if lines and lines[-1] == "":        # the line feed that ends the last line starts no document
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _refuse_utf16(path, start: bytes) -> None:
    """Refuse UTF-16 text: with its byte-order mark, or without one when every other byte of ``start`` (the file's
    first bytes) is NUL and the bytes between are not, as in UTF-16 text of Latin letters (which would otherwise be
    read as single letters and give an empty corpus)."""
    even, odd = start[0::2], start[1::2]
    enc = "UTF-16" if start[:2] in (b"\xff\xfe", b"\xfe\xff") else None
    if enc is None and len(start) >= 4:
        for nul, other, name in ((odd, even, "UTF-16LE"), (even, odd, "UTF-16BE")):
            if nul.count(0) >= 0.9 * len(nul) and other.count(0) <= 0.1 * len(other):
                enc = name
    if enc is not None:
        how = "" if enc == "UTF-16" else " without a byte-order mark (every other byte is NUL)"
        raise DPTopicError(f"{str(path)!r} is UTF-16 text{how}: save it as UTF-8 (for example iconv -f {enc} -t UTF-8"
                           f" {Path(path).name} > utf8-{Path(path).name}).")


def _not_utf8(path, byte: int, line: int) -> DPTopicError:
    """Text that is not UTF-8 is refused rather than read with its accented letters lost ('café' as 'caf')."""
    where = f" on line {line}" if line else ""
    return DPTopicError(f"{str(path)!r} is not UTF-8 text: byte 0x{byte:02x}{where} is not valid UTF-8 (a"
                        f" Latin-1 or Windows-1252 file?); save it as UTF-8 (for example iconv -f WINDOWS-1252 -t"
                        f" UTF-8 {Path(path).name} > utf8-{Path(path).name}).")


class _CheckedText:
    """A text stream of a corpus file that turns a byte that is not UTF-8 into a one-line error naming the file and
    line, wherever the reader meets it (``csv``, line by line, or all at once)."""

    def __init__(self, fh, path):
        self._fh, self._path = fh, path

    def _fail(self, e: UnicodeDecodeError):
        # the stream decodes ahead in chunks, so find the line again in the raw bytes (on this error path only)
        opener = gzip.open if is_gzip_name(self._path) else open
        with opener(self._path, "rb") as raw:
            for i, line in enumerate(raw):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as bad:
                    return _not_utf8(self._path, line[bad.start], i + 1)
        return _not_utf8(self._path, e.object[e.start], 0)

    def __iter__(self):
        return self

    def __next__(self):
        try:
            return next(self._fh)
        except UnicodeDecodeError as e:
            raise self._fail(e) from None
        except _GZIP_ERRORS as e:
            raise _gzip_error(self._path, e) from None

    def read(self, *a):
        try:
            return self._fh.read(*a)
        except UnicodeDecodeError as e:
            raise self._fail(e) from None
        except _GZIP_ERRORS as e:
            raise _gzip_error(self._path, e) from None

    def readline(self, *a):
        try:
            return self._fh.readline(*a)
        except UnicodeDecodeError as e:
            raise self._fail(e) from None
        except _GZIP_ERRORS as e:
            raise _gzip_error(self._path, e) from None

    def close(self):
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _open_text(path, want: str = "a UTF-8 text file") -> _CheckedText:
    """``path`` as UTF-8 text, read in blocks: a UTF-16 or binary start, and a NUL byte in any block, are refused in
    one line as the block is read (``want``: what to give instead), so a large binary file is never read whole."""
    path = _check_file(path)
    gz = is_gzip_name(path)

    def first(block: bytes) -> None:
        _refuse_utf16(path, block)
        _refuse_binary(path, block)

    raw = io.BufferedReader(_open_guarded(path, want, first), _BLOCK)
    # -sig: a BOM (Excel) is not text; a .gz file's line ends are read as they were before (universal newlines)
    fh = io.TextIOWrapper(raw, encoding="utf-8-sig", **({} if gz else {"newline": ""}))
    return _CheckedText(fh, path)


def _refuse_binary(path, start: bytes) -> None:
    """Refuse a binary file given as text (a prepared ``.npz`` read with ``format='jsonl'``, say) in one line that
    names it, rather than as text that is "not UTF-8" with advice to convert it from Windows-1252."""
    zipped = start[:4] == b"PK\x03\x04"
    if zipped or (b"\x00" in start and start[:-4].decode("utf-8", errors="replace").count("\ufffd") > 8):
        what = " (a zip archive, such as a corpus .npz that 'dptopic corpus prepare' writes)" if zipped else ""
        raise ParameterError("{path} is a binary file{what}, not UTF-8 text: read a prepared .npz with {format=npz} or"
                             " {format=auto} (Corpus.load in Python), and give JSONL, CSV or text files as UTF-8 text.",
                             "format", path=repr(str(path)), what=what, npz="npz", auto="auto")

