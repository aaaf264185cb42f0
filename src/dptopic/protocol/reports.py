"""A set of randomized reports and its file format.

File format ``dptopic-ldp-reports`` version 1 (one file, little-endian, no pickle):

====================  =========================================================
bytes                 content
====================  =========================================================
8                     magic ``b"DPTLDPR\\n"``
4                     ``H``: header length, unsigned 32-bit
H                     header: UTF-8 JSON object (fields below)
n_reports × row       payload: the packed reports, row after row
32                    SHA-256 of every preceding byte (detects corruption)
====================  =========================================================

Header fields: ``format`` (``"dptopic-ldp-reports"``), ``version`` (1), ``vocab_size``,
``vocabulary_sha256`` (SHA-256 of the vocabulary as a compact JSON list of words, in
id order), ``f`` (the flip parameter, a float), ``epsilon_word``, ``n_reports``,
``bytes_per_report`` (``ceil(V/8)``), ``bit_order`` (``"little"``: word ``j`` is bit
``j % 8`` of byte ``j // 8``; padding bits are 0), and optionally ``vocabulary`` (the
word list itself, which must match the fingerprint; a single contributor's upload
leaves it out), and optionally ``upload_nonce`` (32 lowercase hex digits drawn from the OS
CSPRNG for one upload by ``dptopic submit``: it makes honest uploads distinct byte for
byte, so that the server can refuse the same upload stored twice; it is independent of
the data).

A reader checks the magic, the version, the length, the checksum and the padding, and,
when told what to expect, the vocabulary fingerprint and ``f``; it refuses anything else
with a one-line error. The same bytes travel over HTTP (``to_bytes``/``from_bytes``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
import struct
from pathlib import Path

import numpy as np

from .._io import atomic_write_bytes, load_json, pairs_noting_repeats
from ..accounting.local import (
    FlipParameterMixin,
    RandomizedResponseEvent,
    check_f,
    epsilon_from_f,
    local_privacy_report,
)
from ..corpus import Vocabulary
from ..errors import DPTopicError, ParameterError
from ..kernels.randomized_response import last_byte_mask, packed_column_sums

MAGIC = b"DPTLDPR\n"

UPLOAD_NONCE = "upload_nonce"
"""The optional header field that makes one upload's bytes unique (see the module docstring)."""


def new_upload_nonce() -> str:
    """A fresh upload nonce: 128 bits from the OS CSPRNG, as 32 lowercase hex digits."""
    return secrets.token_hex(16)


MAX_REPORT_VOCAB = 2 ** 24
"""The largest vocabulary a report file may declare (2 MiB of bits per report); a header beyond it is corrupt."""


def parse_header(text: str, bad: str, again: str) -> dict:
    """A report file's JSON header: nesting bounded, a JSON object, and no field given twice (a reader that kept the
    first value would read another file than one that keeps the last); one-line errors start with ``bad`` and end
    with ``again`` (how to re-create the file)."""
    repeated: set = set()
    try:
        head = load_json(text, "the report header", object_pairs_hook=pairs_noting_repeats(repeated))
    except DPTopicError as e:
        raise DPTopicError(f"{bad} {e}".rstrip(".") + f"; {again}.") from None
    except ValueError:
        raise DPTopicError(f"{bad} the header is not JSON; {again}.") from None
    if not isinstance(head, dict):
        raise DPTopicError(f"{bad} the header is not a JSON object; {again}.")
    if repeated:
        raise DPTopicError(f"{bad} the header gives the field(s) {', '.join(sorted(map(repr, repeated)))[:80]} more"
                           f" than once; {again}.")
    return head


_PADDING_CLEAR = [bytes(b for b in range(256) if not b & ~last_byte_mask(r or 8) & 0xFF) for r in range(8)]
"""Per ``V % 8``: the values a report's last byte may take (its bits beyond the vocabulary clear)."""


def padding_set(packed: np.ndarray, V: int) -> bool:
    """Whether a report of ``packed`` (``(n, ceil(V/8))`` bytes) sets a padding bit beyond the ``V`` words (one pass in
    C over the last bytes, none when V is a multiple of 8: a single report's check costs no array reduction)."""
    if V % 8 == 0 or not packed.shape[0]:
        return False
    return bool(packed[:, -1].tobytes().translate(None, _PADDING_CLEAR[V % 8]))


def report_bytes(data, where: str) -> bytes:
    """``data`` as bytes (bytes, bytearray or memoryview); anything else is refused in one line."""
    if isinstance(data, memoryview):
        return data.tobytes()
    if not isinstance(data, (bytes, bytearray)):
        raise DPTopicError(f"{where}: expected the bytes of a report file, got {type(data).__name__}.")
    return bytes(data)


_NONCE = re.compile(r"[0-9a-f]{32}")


def upload_nonce_of(head: dict, bad: str) -> str | None:
    """The header's ``upload_nonce`` (None when absent); anything but 32 lowercase hex digits is refused."""
    v = head.get(UPLOAD_NONCE)
    if v is None:
        return None
    if not isinstance(v, str) or not _NONCE.fullmatch(v):
        raise DPTopicError(f"{bad} the header's {UPLOAD_NONCE} is not 32 lowercase hex digits; re-create it.")
    return v
FORMAT = "dptopic-ldp-reports"
VERSION = 1

WORD_SCOPE = ("covers everything the server computes from the randomized reports (post-processing), for any two"
              " documents of a contributor (eps_doc = V x eps_word per report) and all of a contributor's reports"
              " together, up to reports_per_contributor of them (their epsilons add, basic composition). NOT covered:"
              " the public vocabulary; how many reports a contributor sends and when; contributors who send more than"
              " reports_per_contributor reports in all (one person under several pseudonyms counts as several"
              " contributors).")
"""What word-level reports cover and what they do not (docs/local_dp.md, "The guarantee")."""

REFIT_NOTE = ("this report covers every fit on these reports: fitting the same reports again (a refit, each candidate"
              " of a grid search, another trainer) is post-processing and spends nothing more; only new reports spend"
              " (documents randomized again are new reports, and a contributor's reports add up, basic composition)")
"""The ``fits`` field of a model trained from randomized reports (a central fit's says that refits add up)."""
_DIGEST = 32


def vocabulary_fingerprint(vocabulary) -> str:
    """SHA-256 (hex) of the word list in id order, as compact JSON."""
    words = vocabulary.words if isinstance(vocabulary, Vocabulary) else [str(w) for w in vocabulary]
    return hashlib.sha256(json.dumps(words, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()



class HeaderFieldError(ValueError):
    """A report header's field is missing or of another JSON type than the format's."""


def header_field(head: dict, key: str, kind: str):
    """A report header's field of exactly its JSON type: ``"count"`` (an integer, not a boolean), ``"real"`` (a
    finite number, not a boolean, as a float) or ``"text"``; :class:`HeaderFieldError` naming it otherwise ("150"
    and true are not counts: a header that mistypes a field was not written by dptopic)."""
    if key not in head:
        raise HeaderFieldError(f"the header has no field {key!r}")
    v = head[key]
    if kind == "count" and isinstance(v, int) and not isinstance(v, bool):
        return v
    if kind == "real" and isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            x = float(v)
        except OverflowError:   # an integer beyond a float's range (JSON integers have no bound)
            x = math.inf
        if math.isfinite(x):
            return x
    if kind == "text" and isinstance(v, str):
        return v
    want = {"count": "a whole number", "real": "a finite number", "text": "a string"}[kind]
    raise HeaderFieldError(f"the header's field {key!r} is {json.dumps(v)[:20]}, not {want}")

class ReportSet(FlipParameterMixin):
    """Randomized presence reports of many documents, bit-packed, with what they were made with.

    Parameters
    ----------
    packed : ``(n_reports, ceil(V/8))`` ``uint8`` array (layout in the module docstring).
    vocab_size : V.
    vocabulary_sha256 : :func:`vocabulary_fingerprint` of the vocabulary used.
    f : flip parameter of the randomizer.
    vocabulary : optional :class:`~dptopic.corpus.Vocabulary` (public); checked against the fingerprint.
    """

    def __init__(self, packed, vocab_size: int, vocabulary_sha256: str, f: float, vocabulary=None):
        f = check_f(f)
        packed = np.ascontiguousarray(packed, dtype=np.uint8)
        V = int(vocab_size)
        if V < 1:
            raise DPTopicError(f"invalid vocab_size={vocab_size!r}: must be an integer >= 1.")
        nb = (V + 7) // 8
        if packed.ndim != 2 or packed.shape[1] != nb:
            raise DPTopicError(f"reports have the wrong length: expected {nb} bytes per report for V={V} words,"
                               f" got shape {packed.shape}.")
        if padding_set(packed, V):
            raise DPTopicError("corrupt reports: padding bits beyond the vocabulary are set; re-create the reports.")
        self.packed = packed
        self.vocab_size = V
        self.vocabulary_sha256 = str(vocabulary_sha256)
        self.f = f
        self.vocabulary = None
        if vocabulary is not None:
            vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
            self.check(vocabulary=vocabulary)
            self.vocabulary = vocabulary

    # ----------------------------------------------------------------- basics
    @property
    def n_reports(self) -> int:
        return self.packed.shape[0]

    def __len__(self) -> int:
        return self.n_reports

    def __repr__(self) -> str:
        return f"ReportSet({self.n_reports} reports, V={self.vocab_size}, f={self.f:.6g}, eps_word={self.epsilon_word:.4g})"

    @property
    def event(self) -> RandomizedResponseEvent:
        """The privacy event of one report (one contributor's document)."""
        return RandomizedResponseEvent(self.f, self.vocab_size)

    def privacy_report(self, delta: float = 1e-5) -> dict:
        return local_privacy_report(self.f, self.vocab_size, delta, scope=WORD_SCOPE)

    def bits(self) -> np.ndarray:
        """Unpacked reports, ``(n_reports, V)`` boolean."""
        return np.unpackbits(self.packed, axis=1, count=self.vocab_size, bitorder="little").astype(bool)

    def column_sums(self) -> np.ndarray:
        """``n_t``: how many reports have bit ``t`` set (Zhao et al. Sec. V, server Step 1)."""
        return packed_column_sums(self.packed, self.vocab_size)

    def __getitem__(self, idx) -> "ReportSet":
        sel = self.packed[idx]
        if sel.ndim == 1:
            sel = sel[None, :]
        return ReportSet(sel, self.vocab_size, self.vocabulary_sha256, self.f, self.vocabulary)

    def batches(self, size: int):
        """Consecutive mini-batches of ``size`` reports (the last may be smaller)."""
        for a in range(0, self.n_reports, size):
            yield self[a:a + size]

    def compatible(self, other: "ReportSet") -> None:
        self.check(vocabulary_sha256=other.vocabulary_sha256, vocab_size=other.vocab_size, f=other.f)

    @classmethod
    def concatenate(cls, sets) -> "ReportSet":
        sets = list(sets)
        if not sets:
            raise DPTopicError("nothing to concatenate: give at least one ReportSet.")
        other = next((s for s in sets if not isinstance(s, ReportSet)), None)
        if other is not None:
            raise DPTopicError(f"cannot concatenate a {type(other).__name__} with word-level ReportSets: reports of"
                               " one kind only (document-level sets: DocumentReportSet.concatenate).")
        for s in sets[1:]:
            sets[0].compatible(s)
        vocab = next((s.vocabulary for s in sets if s.vocabulary is not None), None)
        return cls(np.concatenate([s.packed for s in sets]), sets[0].vocab_size, sets[0].vocabulary_sha256, sets[0].f,
                   vocab)

    def check(self, vocabulary=None, f=None, vocabulary_sha256=None, vocab_size=None, where: str = "reports") -> "ReportSet":
        """Refuse reports made with another vocabulary or another ``f``."""
        if vocabulary is not None:
            vocab_size = len(vocabulary)
            vocabulary_sha256 = vocabulary_fingerprint(vocabulary)
        if vocab_size is not None and vocab_size != self.vocab_size:
            raise DPTopicError(f"{where}: made for a vocabulary of {self.vocab_size} words but {vocab_size} are"
                               " expected: use the vocabulary the reports were randomized with.")
        if vocabulary_sha256 is not None and vocabulary_sha256 != self.vocabulary_sha256:
            raise DPTopicError(f"{where}: made with another vocabulary (fingerprint {self.vocabulary_sha256[:12]}"
                               f" != {vocabulary_sha256[:12]}): use the vocabulary the reports were randomized with.")
        if f is not None and not math.isclose(float(f), self.f, rel_tol=1e-12, abs_tol=0.0):
            raise DPTopicError(f"{where}: randomized with f={self.f:.6g} (eps_word={self.epsilon_word:.4g}) but"
                               f" f={float(f):.6g} is expected: train with the reports' own f or re-collect.")
        return self

    # -------------------------------------------------------------- bytes I/O
    def header(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "vocab_size": self.vocab_size,
                "vocabulary_sha256": self.vocabulary_sha256, "f": self.f, "epsilon_word": self.epsilon_word,
                "n_reports": self.n_reports, "bytes_per_report": self.packed.shape[1], "bit_order": "little"}

    upload_nonce: str | None = None
    """The ``upload_nonce`` of the bytes this set was read from (None when they had none)."""

    def to_bytes(self, include_vocabulary: bool = True, nonce: str | None = None) -> bytes:
        """The file format above; the word list is embedded when known and ``include_vocabulary``; ``nonce``: an
        ``upload_nonce`` for the header (:func:`new_upload_nonce`)."""
        head = self.header()
        if include_vocabulary and self.vocabulary is not None:
            head["vocabulary"] = self.vocabulary.words
        if nonce is not None:
            head[UPLOAD_NONCE] = upload_nonce_of({UPLOAD_NONCE: nonce}, "upload nonce:")
        head = json.dumps(head, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        body = MAGIC + struct.pack("<I", len(head)) + head + self.packed.tobytes()
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, vocabulary=None, f=None, where: str = "reports") -> "ReportSet":
        """Parse :meth:`to_bytes` output; refuse bad magic, version, length, checksum, vocabulary or f."""
        data = report_bytes(data, where)
        bad = f"corrupt {where}:"
        if data[:8] == b"DPTLDPD\n":       # protocol.document_reports' format: whole-document reports
            raise ParameterError("{where} holds document-level reports (a DocumentRandomizer's): train on them with"
                                 " {algorithm=document} (LocalDocumentLDA), not a word-level trainer.", "algorithm",
                                 where=where, document="ldp-doc")
        if len(data) < len(MAGIC) + 4 + _DIGEST or data[:len(MAGIC)] != MAGIC:
            raise DPTopicError(f"{bad} not a dptopic report file (bad magic or too short); re-create it with 'dptopic randomize'.")
        (H,) = struct.unpack("<I", data[8:12])
        if 12 + H + _DIGEST > len(data):
            raise DPTopicError(f"{bad} the file is truncated (header runs past the end); re-send or re-create it.")
        if hashlib.sha256(data[:-_DIGEST]).digest() != data[-_DIGEST:]:
            raise DPTopicError(f"{bad} checksum mismatch (truncated or modified); re-send or re-create it.")
        try:
            text = data[12:12 + H].decode("utf-8")
        except UnicodeDecodeError:
            raise DPTopicError(f"{bad} the header is not a dptopic report header; re-create it with 'dptopic randomize'.") from None
        head = parse_header(text, bad, "re-create it with 'dptopic randomize'")
        if head.get("format") != FORMAT:
            raise DPTopicError(f"{bad} the header is not a dptopic report header; re-create it with 'dptopic randomize'.")
        try:    # an integer: true and 1.0 equal 1 in Python, "1" is a mistyped header, none of them dptopic's
            version = header_field(head, "version", "count")
        except HeaderFieldError as e:
            raise DPTopicError(f"{bad} {e}; re-create it with 'dptopic randomize'.") from None
        if version != VERSION:
            raise DPTopicError(f"{where}: format version {version}; this dptopic reads version"
                               f" {VERSION}: upgrade dptopic or re-create the reports.")
        if head.get("kind", "word") != "word":      # headers before report kinds carry none
            raise DPTopicError(f"{bad} a word-level report file ({FORMAT}) whose header declares kind"
                               f" {str(head.get('kind'))[:20]!r}; re-create it with 'dptopic randomize'.")
        try:
            V, n, nb = (header_field(head, k, "count") for k in ("vocab_size", "n_reports", "bytes_per_report"))
            fp, fv = header_field(head, "vocabulary_sha256", "text"), header_field(head, "f", "real")
            eps_w = header_field(head, "epsilon_word", "real") if "epsilon_word" in head else None
        except HeaderFieldError as e:
            raise DPTopicError(f"{bad} {e}; re-create it with 'dptopic randomize'.") from None
        if eps_w is not None and not (0 < fv < 1 and math.isclose(eps_w, epsilon_from_f(fv), rel_tol=1e-9)):
            raise DPTopicError(f"{bad} its header states epsilon_word {eps_w:g}, which its f = {fv:g} does not give;"
                               " re-create it with 'dptopic randomize'.")
        if not 1 <= V <= MAX_REPORT_VOCAB:
            raise DPTopicError(f"{bad} vocab_size {V} is out of range (1 to {MAX_REPORT_VOCAB:,}); re-create it with"
                               " 'dptopic randomize'.")
        payload = data[12 + H:-_DIGEST]
        if V < 1 or n < 0 or nb != (V + 7) // 8 or len(payload) != n * nb:
            raise DPTopicError(f"{bad} payload of {len(payload)} bytes does not hold {n} reports of V={V} words;"
                               " re-create it.")
        if head.get("bit_order") != "little":
            raise DPTopicError(f"{bad} unknown bit order {head.get('bit_order')!r}; re-create it.")
        words = head.get("vocabulary")
        if words is not None and (not isinstance(words, list) or vocabulary_fingerprint(words) != fp):
            raise DPTopicError(f"{bad} the embedded vocabulary does not match its fingerprint; re-create it.")
        nonce = upload_nonce_of(head, bad)
        rs = cls(np.frombuffer(payload, dtype=np.uint8).reshape(n, nb).copy(), V, fp, fv, words)
        rs.upload_nonce = nonce
        return rs.check(vocabulary=vocabulary, f=f, where=where)

    @staticmethod
    def known_header(vocab_size: int, vocabulary_sha256: str, f: float) -> "KnownHeader":
        """The header :meth:`to_bytes` writes for reports of these settings, to read such files fast
        (:class:`KnownHeader`)."""
        return KnownHeader(vocab_size, vocabulary_sha256, f)

    def save(self, path) -> Path:
        """Write the report file atomically."""
        path = Path(path)
        atomic_write_bytes(path, self.to_bytes())
        return path

    @classmethod
    def load(cls, path, vocabulary=None, f=None) -> "ReportSet":
        path = Path(path)
        if not path.is_file():
            raise DPTopicError(f"report file {str(path)!r} {'is a directory' if path.is_dir() else 'does not exist'}:"
                               " give the file written by 'dptopic randomize'.")
        return cls.from_bytes(path.read_bytes(), vocabulary=vocabulary, f=f, where=f"report file {os.fspath(path)!r}")


class KnownHeader:
    """The header that :meth:`ReportSet.to_bytes` writes for reports of one vocabulary (its size and fingerprint) and
    one ``f``, with no word list embedded (a contributor's upload), as bytes: a reader that expects those settings (a
    collection server, every upload) recognises such a file by comparing bytes instead of parsing its JSON, which was
    most of a single-report upload's decoding (docs/research/service_throughput.md).

    :meth:`read` gives the same :class:`ReportSet` as :meth:`ReportSet.from_bytes` for a file whole (magic, length,
    checksum) whose header is byte for byte this one, any ``n_reports`` and ``upload_nonce`` aside; for any other file
    it gives None, and the caller reads it with :meth:`ReportSet.from_bytes`, which reads it or refuses it."""

    def __init__(self, vocab_size: int, vocabulary_sha256: str, f: float):
        V = int(vocab_size)
        self.vocab_size, self.vocabulary_sha256 = V, str(vocabulary_sha256)
        self.bytes_per_report = (V + 7) // 8
        model = ReportSet(np.zeros((0, self.bytes_per_report), np.uint8), V, vocabulary_sha256, f)
        self.f = model.f
        text = json.dumps(model.header(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        at = text.index(b'"n_reports":0') + len(b'"n_reports":')      # the count and the nonce vary per upload
        self._pattern = re.compile(re.escape(text[:at]) + rb"(0|[1-9][0-9]{0,8})" + re.escape(text[at + 1:-1])
                                   + rb'(?:,"' + UPLOAD_NONCE.encode() + rb'":"([0-9a-f]{32})")?\}')

    def read(self, data) -> ReportSet | None:
        """The reports of ``data`` (bytes), or None when it is not a whole file with this header."""
        if len(data) < 12 + _DIGEST or data[:8] != MAGIC:
            return None
        H = int.from_bytes(data[8:12], "little")
        end = 12 + H
        if end + _DIGEST > len(data):
            return None
        m = self._pattern.fullmatch(data, 12, end)
        if m is None:
            return None
        n, nb = int(m[1]), self.bytes_per_report
        if len(data) - end - _DIGEST != n * nb or \
                hashlib.sha256(memoryview(data)[:-_DIGEST]).digest() != data[-_DIGEST:]:
            return None
        packed = np.frombuffer(data, dtype=np.uint8, count=n * nb, offset=end).reshape(n, nb).copy()
        if padding_set(packed, self.vocab_size):    # refused by from_bytes, in its words
            return None
        rs = ReportSet(packed, self.vocab_size, self.vocabulary_sha256, self.f)
        if m[2] is not None:
            rs.upload_nonce = m[2].decode("ascii")
        return rs
