"""How any secure-sum message is written: the protocol's name, its identifiers, the canonical bytes a signature or a
digest covers, and the digest of a set of contributor ids (every mode signs these; the default mode's own step messages
are :mod:`dptopic.protocol.secure_sum.default`'s)."""
from __future__ import annotations

import hashlib
import json
import re

PHASES = 2
PROTOCOL = "dptopic-secure-sum/2"
ROUND_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A round id and a contributor id: what the protocol accepts (and what a file name may hold)."""
HEX32 = re.compile(r"[0-9a-f]{64}")
HEX_SIG = re.compile(r"[0-9a-f]{128}")


def canonical(doc) -> bytes:
    """The canonical JSON bytes of ``doc`` (sorted keys, no spaces): what a digest or a signature covers."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def message(kind: str, round_id: str, *fields) -> bytes:
    """The bytes a contributor signs for one step: the protocol, the step's kind, the round and the step's fields."""
    return PROTOCOL.encode() + b"\n" + canonical([kind, round_id, *fields])


def digest(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


_SET_DIGESTS: dict = {}


def set_digest(ids) -> str:
    """The digest of a set of contributor ids (sorted, one a line): what a consistency signature covers. Of a
    ``frozenset`` (whose hash Python keeps), memoised: a contributor digests one set of uploads several times."""
    if not isinstance(ids, frozenset):
        return digest("\n".join(sorted(ids)).encode())
    found = _SET_DIGESTS.get(ids)
    if found is None:
        if len(_SET_DIGESTS) >= 16:
            _SET_DIGESTS.clear()
        found = _SET_DIGESTS[ids] = digest("\n".join(sorted(ids)).encode())
    return found
