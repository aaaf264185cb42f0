"""FedLDA protocol messages and their byte encoding (no pickle).

Wire format, version 1 (all integers little-endian)::

    b"DPTF"                       4 bytes, magic
    version                       1 byte  (= 1)
    header_length                 4 bytes, unsigned
    header                        header_length bytes of UTF-8 JSON
    array payloads                raw C-order bytes, in the order listed in header["arrays"]
    crc32                         4 bytes, unsigned, CRC-32 of everything before it

The JSON header holds ``kind`` (``"broadcast"`` or ``"update"``), ``round``, ``vocab`` (the
vocabulary fingerprint), ``client`` (updates only) and ``arrays``: a list of
``{"name", "dtype", "shape"}`` with dtype ``"<i4"`` or ``"<f8"``. Decoding checks every field and
raises :class:`~dptopic.errors.DPTopicError` with a one-line reason on anything malformed.
The format is described for users in ``docs/fedlda.md``.
"""
from __future__ import annotations

import hashlib
import json
import math
import struct
import zlib
from dataclasses import dataclass

import numpy as np

from ..errors import DPTopicError

MAGIC = b"DPTF"
VERSION = 1
_DTYPES = {"<i4": np.dtype("<i4"), "<f8": np.dtype("<f8")}
_MAX_HEADER = 1 << 20
_MAX_ARRAYS = 16
_MAX_NDIM = 4


class MessageError(DPTopicError):
    """A protocol message is malformed, stale, duplicated or for another vocabulary."""


def vocabulary_fingerprint(words) -> str:
    """SHA-256 (first 16 hex digits) of the vocabulary's words, in order."""
    h = hashlib.sha256("\n".join(words).encode("utf-8"))
    return h.hexdigest()[:16]


def _encode(header: dict, arrays: dict) -> bytes:
    specs, blobs = [], []
    for name, arr in arrays.items():
        dt = "<i4" if np.issubdtype(arr.dtype, np.integer) else "<f8"
        a = np.ascontiguousarray(arr, dtype=_DTYPES[dt])
        specs.append({"name": name, "dtype": dt, "shape": list(a.shape)})
        blobs.append(a.tobytes())
    head = json.dumps({**header, "arrays": specs}, separators=(",", ":")).encode("utf-8")
    body = MAGIC + struct.pack("<BI", VERSION, len(head)) + head + b"".join(blobs)
    return body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)


def _fail(why: str):
    raise MessageError(f"malformed message: {why}; the sender must re-encode it with dptopic.protocol.fedlda_messages.")


class _RepeatedKey(Exception):
    pass


def _once_each(pairs) -> dict:
    """A JSON object whose keys are all distinct: which of two values a reader keeps is its parser's choice (Python's
    the last, others the first), so a message read by two of them could say two things; report headers refuse it
    too."""
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        raise _RepeatedKey(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return out


def _decode(data) -> tuple[dict, dict]:
    if not isinstance(data, (bytes, bytearray, memoryview)):
        _fail(f"expected bytes, got {type(data).__name__}")
    data = bytes(data)
    if len(data) < 13 or data[:4] != MAGIC:
        _fail("bad magic or too short")
    (crc,) = struct.unpack("<I", data[-4:])
    if zlib.crc32(data[:-4]) & 0xFFFFFFFF != crc:
        _fail("checksum mismatch (corrupted in transit)")
    version, hlen = struct.unpack("<BI", data[4:9])
    if version != VERSION:
        _fail(f"unsupported format version {version} (this library reads version {VERSION})")
    if hlen > _MAX_HEADER or 9 + hlen > len(data) - 4:
        _fail("header length out of range")
    try:
        header = json.loads(data[9:9 + hlen].decode("utf-8"), object_pairs_hook=_once_each)
    except _RepeatedKey as e:
        _fail(f"header gives the key {str(e)[:40]!r} more than once")
    except (UnicodeDecodeError, json.JSONDecodeError):
        _fail("header is not UTF-8 JSON")
    except RecursionError:
        _fail("header JSON is nested too deeply")
    except ValueError:  # an integer of more than 4,300 digits
        _fail("header JSON holds a number too long to read")
    if not isinstance(header, dict) or not isinstance(header.get("arrays"), list):
        _fail("header has no 'arrays' list")
    pos, end, arrays = 9 + hlen, len(data) - 4, {}
    if len(header["arrays"]) > _MAX_ARRAYS:
        _fail(f"more than {_MAX_ARRAYS} arrays")
    for spec in header["arrays"]:
        try:
            name, dt, shape = spec["name"], _DTYPES[spec["dtype"]], spec["shape"]
        except (KeyError, TypeError):
            _fail("bad array description")
        if (not isinstance(name, str) or not isinstance(shape, list) or len(shape) > _MAX_NDIM
                or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= end for s in shape)):
            _fail(f"bad array description (a shape is a list of at most {_MAX_NDIM} sizes, each no larger than"
                  " the message)")
        if name in arrays:      # two arrays of one name: a reader keeping the first would read another message
            _fail(f"the array {name[:20]!r} is listed twice")
        shape = tuple(shape)
        n = math.prod(shape) * dt.itemsize  # exact (Python ints): no overflow before the size check
        if pos + n > end:
            _fail(f"array {name!r} is truncated")
        arrays[name] = np.frombuffer(data, dtype=dt, count=n // dt.itemsize, offset=pos).reshape(shape).copy()
        pos += n
    if pos != end:
        _fail("trailing bytes after the arrays")
    return header, arrays


def _int(header, key):
    v = header.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        _fail(f"field {key!r} must be a non-negative integer")
    return v


def _str(header, key):
    v = header.get(key)
    if not isinstance(v, str) or not v or len(v) > 256:
        _fail(f"field {key!r} must be a non-empty string")
    try:        # a JSON escape of a lone surrogate ("\ud800") is no Unicode text: nothing could store or echo it
        v.encode("utf-8")
    except UnicodeEncodeError:
        _fail(f"field {key!r} holds a lone surrogate escape, not Unicode text")
    return v


@dataclass(frozen=True)
class ModelBroadcast:
    """Server → clients: the global topic–word distributions Φ (``K × V``) for ``round``."""

    round: int
    vocab: str
    phi: np.ndarray

    def encode(self) -> bytes:
        return _encode({"kind": "broadcast", "round": int(self.round), "vocab": self.vocab}, {"phi": self.phi})


@dataclass(frozen=True)
class ClientUpdate:
    """Client → server: the perturbed entries ``(topics[i], words[i])`` of one client for ``round``.

    ``words`` is 1-D (one word per entry: the floor and tail rules) or 2-D (``exclusion="none"``: row ``i``
    is entry ``i``'s randomized report, a set of distinct words)."""

    round: int
    client: str
    vocab: str
    topics: np.ndarray
    words: np.ndarray

    def encode(self) -> bytes:
        return _encode({"kind": "update", "round": int(self.round), "client": self.client, "vocab": self.vocab},
                       {"topics": self.topics, "words": self.words})


def decode_message(data) -> ModelBroadcast | ClientUpdate:
    """Parse bytes into a message; raise :class:`MessageError` (one line) if anything is malformed."""
    header, arrays = _decode(data)
    kind = header.get("kind")
    expected = {"broadcast": {"phi"}, "update": {"topics", "words"}}.get(kind)
    if expected is not None and set(arrays) - expected:
        _fail(f"a{'n' if kind == 'update' else ''} {kind} carries the arrays {', '.join(sorted(expected))} only, not"
              f" {', '.join(repr(a[:20]) for a in sorted(set(arrays) - expected))}")
    if kind == "broadcast":
        phi = arrays.get("phi")
        if phi is None or phi.ndim != 2 or phi.dtype != np.float64:
            _fail("a broadcast needs a 2-D float64 array 'phi'")
        return ModelBroadcast(_int(header, "round"), _str(header, "vocab"), phi)
    if kind == "update":
        t, w = arrays.get("topics"), arrays.get("words")
        if (t is None or w is None or t.ndim != 1 or w.ndim not in (1, 2) or w.shape[:1] != t.shape
                or t.dtype != np.int32 or w.dtype != np.int32):
            _fail("an update needs int32 arrays 'topics' (1-D) and 'words' (1-D, or 2-D with one report of words per"
                  " row) with one row per topic")
        return ClientUpdate(_int(header, "round"), _str(header, "client"), _str(header, "vocab"), t, w)
    _fail(f"unknown kind {kind!r}")
