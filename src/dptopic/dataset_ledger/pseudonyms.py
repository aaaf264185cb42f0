"""Keyed pseudonyms of people for the releases a server makes from them (docs/budget.md, "Served releases").

A server that charges a release to people must not learn who they are, and the ledger must charge each to the same
person as the central releases that held their documents. The ledger stores a person as a keyed hash of their id
(:mod:`dptopic.dataset_ledger.identity`), which it cannot turn back into the id. A *pseudonym* is that stored value
encrypted, deterministically, under a key drawn from the ledger's own with a purpose of its own (AES-SIV, RFC 5297,
with the route's *context* as associated data): the ledger reads it back to the person it stores, anyone without its
key sees 48 hex digits that name no one, and:

- the context binds a pseudonym to one route: a secure-sum round's id (its invitations name each person by one),
  or :data:`COLLECTION` (the pseudonym a contributor sends a collection server with its local reports or FedLDA
  updates). The same person has unrelated pseudonyms in two rounds, so the public directory of one round names no
  one in another, nor in a collection;
- a pseudonym is authenticated: a string the ledger did not make for that context (another ledger's, another round's,
  a changed digit) is not one of its pseudonyms (:func:`stored_id` returns None);
- the ledger keeps no table of pseudonyms: it stores what it stored before, the person.

Nothing here reads the key's file or a person's id: the ledger passes its key and the stored ids.
"""
from __future__ import annotations

import hashlib
import re

from ..errors import ParameterError

COLLECTION = "collection"
"""The context of the pseudonym a contributor sends a collection server (one that charges a dataset ledger) with its
local reports or FedLDA updates: one per person and ledger."""

PSEUDONYM = re.compile(r"[0-9a-f]{48}")
"""A pseudonym as written (used with fullmatch): 48 lowercase hex digits (the SIV and the 8 bytes it encrypts)."""

_PURPOSE = b"dptopic-person-pseudonym"
_CIPHERS: dict = {}


def _cipher(key: bytes):
    """AES-SIV under the pseudonyms' key, drawn from the ledger's ``key`` for this purpose alone."""
    c = _CIPHERS.get(key)
    if c is None:
        from cryptography.hazmat.primitives.ciphers.aead import AESSIV  # optional dependency: the service extra

        if len(_CIPHERS) >= 8:
            _CIPHERS.clear()
        c = _CIPHERS[key] = AESSIV(hashlib.blake2b(b"", key=key, digest_size=64, person=b"ledger-pseudonym").digest())
    return c


def check_context(context) -> str:
    """A pseudonym's context (a round's id, or :data:`COLLECTION`): a non-empty line of printable ASCII, at most 200
    characters."""
    if not (isinstance(context, str) and 0 < len(context) <= 200 and context.isascii() and context.isprintable()):
        raise ParameterError("invalid {context=}: a round's id, or 'collection'.", "context", context)
    return context


def make(key: bytes, stored: list, context: str) -> list[str]:
    """The pseudonyms for ``context`` of the persons the ledger (of ``key``) stores as ``stored`` (signed 64-bit
    keyed ids)."""
    c, ad = _cipher(key), [_PURPOSE, check_context(context).encode("ascii")]
    return [c.encrypt(int(s).to_bytes(8, "little", signed=True), ad).hex() for s in stored]


def stored_id(key: bytes, text, context: str) -> int | None:
    """The person (the signed 64-bit id the ledger of ``key`` stores) a pseudonym ``text`` for ``context`` stands for;
    None when ``text`` is not one this ledger made for ``context``."""
    if not isinstance(text, str) or not PSEUDONYM.fullmatch(text):
        return None
    from cryptography.exceptions import InvalidTag  # optional dependency: the service extra

    try:
        plain = _cipher(key).decrypt(bytes.fromhex(text), [_PURPOSE, check_context(context).encode("ascii")])
    except InvalidTag:
        return None
    return int.from_bytes(plain, "little", signed=True)
