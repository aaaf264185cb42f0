"""The small codecs and limits of the collection service's HTTP API that a contributor and the server share.

A pseudonym's rule (the ``Dptopic-Contributor`` header, a FedLDA client id), a participant's default ceiling on the
epsilon a server may ask of it, the report upload body (a report file without its vocabulary, with a fresh nonce), and
FedLDA's settings as ``/v1/config`` carries them. Importing this module loads no numerical library.
"""
from __future__ import annotations

import re
from dataclasses import asdict, fields

from . import formats

#: a contributor's pseudonym (the Dptopic-Contributor header) and a FedLDA client id: stored, so bounded
PSEUDONYM = re.compile(r"[A-Za-z0-9_\-.:]{1,128}")     # used with fullmatch: "$" would let a final newline in
PSEUDONYM_RULE = "1-128 characters of A-Z a-z 0-9 _ - . :"

#: the largest epsilon per report a contributor accepts by default (per word for word-level reports, per document for
#: document-level ones, per entry for FedLDA): deployed local DP states 2 to 16 (docs/local_dp.md)
DEFAULT_MAX_EPSILON = 16.0

report_format = formats.report_format

# the protocol's keys before RRPConfig named them by what they are (the same meaning: epsilon per reported entry and
# the randomizer's failure rate): a participant still reads them from an older server; a server sends only the new
# names, since a key "epsilon" would read as a guarantee's total
FED_WIRE_RENAMED = {"epsilon": "epsilon_per_entry", "delta": "failure_rate"}


def vocabulary_fingerprint(vocabulary) -> str:
    """The SHA-256 fingerprint a report file and ``/v1/config`` give a word list."""
    from .reports import vocabulary_fingerprint as fp  # start-up: protocol.reports loads numba

    return fp(vocabulary)


def encode_reports(reports) -> bytes:
    """The upload body for a report set of any kind (the vocabulary is never embedded), with a fresh
    ``upload_nonce``: honest uploads never share their bytes, so the server can refuse one upload stored twice
    under two keys without refusing two contributors whose reports happen to coincide."""
    from .reports import new_upload_nonce  # start-up: protocol.reports loads numba

    return reports.to_bytes(include_vocabulary=False, nonce=new_upload_nonce())


def fed_config_dict(rrp) -> dict:
    """FedLDA's settings as ``/v1/config`` sends them."""
    return {**asdict(rrp), "entries_per_update": rrp.n_entries}


def fed_config_from_dict(d: dict):
    """FedLDA's settings read from ``/v1/config`` (the older key names too), checked by :class:`RRPConfig`."""
    from .fedlda import RRPConfig  # start-up: protocol.fedlda loads numpy

    names = {f.name for f in fields(RRPConfig)}
    d = {**{new: d[old] for old, new in FED_WIRE_RENAMED.items() if old in d and new not in d}, **d}
    return RRPConfig(**{k: v for k, v in d.items() if k in names})


def fed_fingerprint(vocabulary) -> str:
    """The fingerprint FedLDA's messages give a :class:`~dptopic.corpus.Vocabulary`."""
    from .fedlda_messages import vocabulary_fingerprint as fp  # start-up: fedlda_messages loads numpy

    return fp(list(vocabulary.words))
