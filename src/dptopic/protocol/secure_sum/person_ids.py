"""The people a served release is charged to: an operator's list of person ids, and a round's invitations bound to
them (docs/secure_sum.md, "Invite the people of your corpora"; docs/budget.md, "Served releases").

A person's total on the dataset ledger spans every release that held them only if each route names them as the
central releases do, by the id their corpora's person field holds. The ids never reach a server: the operator's
ledger turns each into a pseudonym (:meth:`~dptopic.dataset_ledger.ledger.DatasetLedger.pseudonyms`), which the
ledger, and only the ledger, reads back to the person.

- the operator's invitations (``make_invitations(ids=..., ledger=...)``, the command line's ``secure-sum invite``)
  give each id one invitation, the numbers ``0001``, ``0002``, ... drawn in a
  random order (so that a number tells nothing of where its id stood in the file), and writes the person's id into
  their own invitation (``"person"``) and, into the directory, each number's pseudonym for the round under the
  enrollment key's signature (``"people": {"pseudonyms": {number: pseudonym}, "signature"}``). The server charges
  the round's contributors by these pseudonyms (:func:`~dptopic.service.ledger.charge_secure_round`); the
  contributors' side of the round is unchanged.
- :meth:`~dptopic.dataset_ledger.ledger.DatasetLedger.pseudonyms` for ``"collection"`` (the command line's ``budget
  pseudonyms``) gives each id their pseudonym for a collection server (its local reports and FedLDA rounds), which
  each contributor sends as the pseudonym their client names them by.

An ids file holds one id a line (UTF-8), or, read with a field, the column of that name in a CSV file with a header
row. Each person once: two ids that the ledger takes for one person (equal in NFC, or equal but for case) would let
one person take part twice, and are refused, as are an empty id, an id with white space around it or an invisible
character in it, and a file that cannot be read.
"""
from __future__ import annotations

import csv
import io
import secrets
import unicodedata
from pathlib import Path

from ...errors import DPTopicError, ParameterError
from .crypto import sign, verify
from .messages import HEX_SIG, message

PEOPLE_KEY = "people"
"""The key of a directory's binding of its invitations to people (module note)."""


def _problem(value) -> str | None:
    """What is wrong with ``value`` as a person id, or None."""
    from ...corpus.records import invisible_character  # the corpus's rule for user ids (loads numpy)

    if not isinstance(value, str):
        return f"is {type(value).__name__}, not a string"
    if not value.strip():
        return "is empty"
    if value != value.strip():
        return f"has white space at its start or end ({value!r})"
    hidden = invisible_character(value)
    if hidden is not None:
        return f"holds an invisible control or format character ({hidden})"
    return None


def _folded(person: str) -> str:
    return unicodedata.normalize("NFC", person).casefold()


def _first_repeat(ids, where) -> tuple | None:
    """``(where of the first, where of the second, first id, second id)`` of the first two ids that name one person
    (equal in NFC, or but for case)."""
    seen: dict = {}
    for i, p in enumerate(ids):
        f = _folded(p)
        if f in seen:
            j = seen[f]
            return where(j), where(i), ids[j], p
        seen[f] = i
    return None


def check_person_ids(ids) -> list[str]:
    """``ids`` (person ids as a person field holds them, one per person invited) checked: strings, none empty,
    with white space around it or an invisible character, no two naming one person (equal in NFC, or but for case:
    one person would take part twice). One line naming the first that is not, as ``ids[k]``."""
    if isinstance(ids, (str, bytes)) or not hasattr(ids, "__iter__"):
        raise ParameterError("invalid {ids=}: a list of person ids (read a file with read_person_ids).", "ids",
                             str(ids)[:80])
    ids = list(ids)
    if not ids:
        raise ParameterError("{ids} is empty: give the id of every person invited.", "ids")
    for k, p in enumerate(ids):
        why = _problem(p)
        if why is not None:
            raise ParameterError("{ids}[{k}] {why}: give each person's id as their corpora's person field holds it.",
                                 "ids", k=k, why=why)
    twice = _first_repeat(ids, lambda k: f"[{k}]")
    if twice is not None:
        raise ParameterError("{ids}{a} and {ids}{b} name one person ({x!r}, {y!r}: ids equal but for case or Unicode"
                             " form are taken for one): give each person once, or one invitation would let them take"
                             " part twice.", "ids", a=twice[0], b=twice[1], x=twice[2], y=twice[3])
    return ids


def read_person_ids(path, field: str | None = None) -> list[str]:
    """The person ids in the file ``path``: one a line (UTF-8, a byte-order mark allowed), or with ``field``, that
    column of a CSV file with a header row. Checked as :func:`check_person_ids` does, each refusal one line naming
    the file and the line."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        why = "not UTF-8 text" if isinstance(e, UnicodeDecodeError) else "it is a folder, not a file" \
            if p.is_dir() else e.strerror or type(e).__name__
        raise DPTopicError(f"cannot read the ids file {p}: {why}; give a text file of person ids, one a line.") \
            from None
    if field is None:
        rows = list(enumerate(text.splitlines(), 1))     # a line may hold commas (a display name): it is one id
    else:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        try:
            header = reader.fieldnames or []
            if field not in header:
                raise DPTopicError(f"the ids file {p} has no column {field!r} in its header (its columns:"
                                   f" {', '.join(map(repr, header[:8])) or 'none'}): give the column that holds the"
                                   " person ids.")
            rows = [(reader.line_num, row.get(field)) for row in reader]
        except csv.Error as e:
            raise DPTopicError(f"the ids file {p} is not a CSV file (line {reader.line_num}: {e}).") from None
    if not rows:
        raise DPTopicError(f"the ids file {p} holds no id: give the id of every person invited, one a line.")
    for n, value in rows:
        why = _problem(value if value is not None else "")
        if why is not None:
            raise DPTopicError(f"the ids file {p}: the id on line {n} {why}: give each person's id as their corpora's"
                               " person field holds it, one a line.")
    ids = [v for _, v in rows]
    twice = _first_repeat(ids, lambda k: rows[k][0])
    if twice is not None:
        raise DPTopicError(f"the ids file {p}: lines {twice[0]} and {twice[1]} name one person ({twice[2]!r},"
                           f" {twice[3]!r}: ids equal but for case or Unicode form are taken for one): give each"
                           " person once, or one invitation would let them take part twice.")
    return ids


def checked_binding(ids, count, ledger) -> tuple[int, list | None]:
    """``(count, ids)`` of invitations bound to people, checked before anything is written: ``ids`` None (numbers
    only: ``count`` invitations) or a list (:func:`check_person_ids`), one invitation each, so ``count`` is None or
    ``len(ids)`` (an invitation without a person would be charged to no one, a person without one not invited: both
    refused); ``ledger`` given with ``ids`` (its key makes the pseudonyms)."""
    if ids is None:
        return count, None
    ids = check_person_ids(ids)
    if count is not None and count != len(ids):
        raise ParameterError("{ids} names {n} people and {count=}: one invitation per person; leave {count} out, or"
                             " give the ids of every person invited.", "ids", values={"count": count}, n=len(ids))
    if ledger is None or ledger is False:
        raise ParameterError("{ids} binds each invitation to a person of a dataset ledger, whose key makes the"
                             " pseudonyms the server sees: give {ledger} too (the one the central releases are"
                             " recorded on).", "ids", others=("ledger",))
    return len(ids), ids


def bind(ids: list, numbers: list, ledger, round_id: str) -> tuple[dict, dict]:
    """``({number: person id}, {number: pseudonym})``: each of ``ids`` given one of ``numbers`` (as many) in a
    random order drawn from the operator's OS entropy, and its pseudonym for the round ``round_id`` from ``ledger``
    (a path, URL or :class:`~dptopic.dataset_ledger.ledger.DatasetLedger`)."""
    from ...dataset_ledger.ledger import DatasetLedger  # read when invitations name people

    order = list(ids)
    secrets.SystemRandom().shuffle(order)
    led = ledger if isinstance(ledger, DatasetLedger) else DatasetLedger(ledger)
    pseudonyms = led.pseudonyms(order, round_id)
    return dict(zip(numbers, order)), dict(zip(numbers, pseudonyms))


def people_entry(private: bytes, round_id: str, pseudonyms: dict) -> dict:
    """A directory's ``people`` (module note): each number's pseudonym, signed with the enrollment key ``private``."""
    return {"pseudonyms": dict(pseudonyms), "signature": sign(private, message(PEOPLE_KEY, round_id, pseudonyms))}


def check_people(doc: dict, enrollment_key: str, members, where: str = "the directory") -> dict | None:
    """The pseudonyms ``{number: pseudonym}`` of the directory ``doc`` (its round ``doc["round_id"]``), checked: one
    for each of ``members`` (the numbers of its invitations), 48 hex digits each, signed by the enrollment key
    (``enrollment_key``, hex); None for a directory whose invitations name no people. One line otherwise."""
    from ...dataset_ledger.pseudonyms import PSEUDONYM  # (the format only)

    entry = doc.get(PEOPLE_KEY)
    if entry is None:
        return None
    ps = entry.get("pseudonyms") if isinstance(entry, dict) else None
    sig = entry.get("signature") if isinstance(entry, dict) else None
    if not (isinstance(ps, dict) and isinstance(sig, str) and HEX_SIG.fullmatch(sig)
            and all(isinstance(v, str) and PSEUDONYM.fullmatch(v) for v in ps.values())):
        raise DPTopicError(f"{where}'s people (the pseudonyms of its invitations) are malformed: invite again.")
    if set(ps) != set(members):
        raise DPTopicError(f"{where}'s people name {len(ps)} invitations, its members {len(set(members))}: they"
                           " must be the same; invite again.")
    if len(set(ps.values())) != len(ps):
        raise DPTopicError(f"{where}'s people name one pseudonym for two invitations: refused.")
    if not verify(bytes.fromhex(enrollment_key), sig, message(PEOPLE_KEY, doc["round_id"], ps)):
        raise DPTopicError(f"{where}'s people do not verify under its enrollment key: they were altered after the"
                           " operator signed them.")
    return ps


def seat_by_person(invitations: list, people: list) -> list:
    """``invitations`` in the order of ``people`` (each person's own, by the id in it, ``"person"``), for a
    simulation that plays each person of a corpus; ``invitations`` as they are when none names a person. One line
    when the invitations name other people than ``people``."""
    named = [inv.get("person") for inv in invitations]
    if all(n is None for n in named):
        return invitations
    by = {unicodedata.normalize("NFC", n): inv for n, inv in zip(named, invitations) if n is not None}
    want = [unicodedata.normalize("NFC", str(p)) for p in people]
    missing = [p for p in want if p not in by]
    if missing or len(by) != len(invitations) or len(want) != len(invitations):
        raise DPTopicError(f"the invitations name other people than the corpus's {len(want)}"
                           + (f" (none for {missing[0]!r})" if missing else "")
                           + ": give the invitations written for the people of this corpus (with their ids).")
    return [by[p] for p in want]

