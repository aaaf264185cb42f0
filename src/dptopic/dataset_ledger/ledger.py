"""The dataset ledger: every private release made from a set of documents, kept across runs, processes and hosts.

A fit's :class:`~dptopic.accounting.ledger.PrivacyLedger` composes what that fit spends and forgets it when the process
ends. This ledger keeps each release (trainer, privacy unit, the events it spends as JSON that re-creates them, its
own (epsilon, delta), when, the model folder it was saved to) with **the documents it read**: each document's content
digest (:mod:`dptopic.corpus.identity`) and, with a person field, its person, both keyed with a key of the ledger's
own before they are stored (the digests never leave it). A set of documents recorded once is one *document set*;
its **dataset** is the name a user gave it (``dataset=``) or ``content:`` and a keyed digest of
its documents, the same for the same documents in any order, file or format.

Totals are per **owner** of documents, a person where some release gave the documents' person and a document
otherwise (:mod:`dptopic.dataset_ledger.totals`): every release that held any of their documents, converted to
the owner's unit by group privacy and composed at one delta. A dataset's total is its largest owner's; overlapping
document sets (a subset, a file with one document dropped, a union) share the owners they have in common, so a
release is charged wherever its documents were charged before. A cap ``(epsilon, delta)`` per dataset, and one per
person for the whole ledger, refuse a release that would take a total past them, before that release draws any
noise.

A debit is one transaction (:mod:`dptopic.dataset_ledger.store`: SQLite's write lock, or a serializable
PostgreSQL transaction behind an advisory lock): it records the documents, reads the releases and caps, checks
every cap the release touches with it included and writes it, or writes nothing. A release is written before its
noise is drawn: a run that dies after the debit leaves its release recorded (the safe side).

Every stored figure is checked when read (finite, in range, and each release's epsilon the one its events give; each
document set's rows holding exactly the documents it recorded, every row of a set of documents naming its document),
and a ledger that fails is refused in one line naming the row: totals are always recomputed from the events.

Nothing here reads a corpus: the models layer passes the documents' digests (docs/budget.md).
"""
from __future__ import annotations

import itertools
import math
import os
import secrets
import time

from ..errors import DPTopicError, ParameterError
from .checked_state import PERSON_CAP, CheckedState
from .identity import Documents, check_person, document_keys, document_rows, document_table, person_id
from .location import location
from .names import check_name, valid_name
from .owner_rows import OwnerRows
from .owner_totals import OwnerTotals
from .plans import Plans
from .releases import events_to_json, merge, release_guarantee
from .store import open_store
from .views import Views


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ------------------------------------------------------------------------------------------------- the ledger
ROWS_PER_WRITE = 100_000
"""A new document set's ``docs`` rows made and written this many at a time (10^6 rows as Python tuples took 200 MB,
twice over while they were written)."""


class DatasetLedger(CheckedState, OwnerRows, OwnerTotals, Plans, Views):
    """One ledger: a SQLite file (a path) or a PostgreSQL database (``postgresql://USER@HOST/DB``). Opening it checks
    that it is a dptopic ledger, creating one (or upgrading a version-1 file) unless ``read_only``: a ledger opened
    to read is never created or changed."""

    def __init__(self, path, read_only: bool = False):
        if isinstance(path, (str, os.PathLike)) and not str(path).strip():
            raise ParameterError("{ledger=} names no ledger: give the path of a ledger file or a postgresql:// URL.",
                                 "ledger", path, key="dataset_ledger.ledger.init")
        self.path = location(path) if isinstance(path, (str, os.PathLike)) else path
        if isinstance(self.path, (bool, int, float)) or self.path is None:
            raise ParameterError("invalid {ledger=}: give the path of a ledger file or a postgresql:// URL.",
                                 "ledger", path, key="dataset_ledger.ledger.init.2")
        self.store = open_store(self.path, read_only=read_only)
        self.read_only = read_only
        self.version = self.store.open(create=not read_only)
        self._key = None

    @property
    def where(self) -> str:
        """The ledger as messages name it (a URL without its password)."""
        return self.store.where

    # ------------------------------------------------------------------ the key and the documents
    def _the_key(self, tx, create: bool) -> bytes | None:
        if self._key is not None:
            return self._key
        row = tx.one("SELECT value FROM meta WHERE key = 'key'")
        if row is None and create:
            tx.run("INSERT INTO meta (key, value) VALUES ('key', ?)", (secrets.token_hex(32),))
            row = tx.one("SELECT value FROM meta WHERE key = 'key'")
        if row is None:
            return None
        try:
            key = bytes.fromhex(row[0])
            if len(key) != 32:
                raise ValueError
        except (ValueError, TypeError):
            raise self.store.bad("is damaged: its hashing key (meta row 'key') is not 64 hex digits") from None
        self._key = key
        return key

    def _ensure_docset(self, tx, docs: Documents) -> tuple[int, str]:
        """The id of the document set ``docs`` and its content name, recorded now if it is new (its owners resolved:
        a document whose person another set gave belongs to that person, and a set with persons gives theirs to the
        same documents recorded before without one)."""
        key = self._the_key(tx, create=True)
        from .linking import link_people, resolve_documents  # loads numpy: 'dptopic budget' reads without it

        doc = None
        if self.version >= 3 and docs.digests is not None:
            doc = resolve_documents(tx, key, docs, document_keys(key, docs), blocks=self.version >= 4)
        fingerprint, content, table, has_doc = document_table(key, docs, doc)
        row = tx.one("SELECT id FROM docsets WHERE fingerprint = ?", (fingerprint,))
        if row is not None:
            if self.version >= 3:
                link_people(tx, key, None, int(row[0]), docs.aliases or ())
            return int(row[0]), content
        persons = int(table[:, 2].any())
        sid = tx.insert("INSERT INTO docsets (fingerprint, content, n_docs, persons, created) VALUES (?, ?, ?, ?, ?)",
                        (fingerprint, content, int(table[:, 3].sum()), persons, _now()))
        for start in range(0, len(table), ROWS_PER_WRITE):      # the rows made a batch at a time, a column at once
            batch = table[start:start + ROWS_PER_WRITE]
            tx.many("INSERT INTO docs (docset, doc, owner, person, copies) VALUES (?, ?, ?, ?, ?)",
                    zip(itertools.repeat(sid), batch[:, 0].tolist() if has_doc else itertools.repeat(None),
                        batch[:, 1].tolist(), batch[:, 2].tolist(), batch[:, 3].tolist()))
        del table
        if persons:     # documents recorded before without their person: theirs now
            tx.run("UPDATE docs SET owner = (SELECT n.owner FROM docs n WHERE n.docset = ? AND n.doc = docs.doc"
                   " LIMIT 1), person = 1 WHERE person = 0 AND doc IN (SELECT doc FROM docs WHERE docset = ?)",
                   (sid, sid))
        else:           # this set's documents whose person another set gave
            tx.run("UPDATE docs SET owner = (SELECT p.owner FROM docs p WHERE p.doc = docs.doc AND p.person = 1"
                   " LIMIT 1), person = 1 WHERE docset = ? AND EXISTS (SELECT 1 FROM docs p WHERE p.doc = docs.doc"
                   " AND p.person = 1)", (sid,))
        if self.version >= 3:
            link_people(tx, key, docs, sid, docs.aliases or ())
        return sid, content

    def content_name(self, docs: Documents) -> str:
        """The dataset name of ``docs`` when none is given: ``content:`` and a keyed digest of its documents (the
        same documents in any order, file or format give the same name)."""
        def read(tx):
            return self._the_key(tx, create=False)
        key = self.store.run(read)
        if key is None:
            if self.read_only:
                return "content:(not recorded)"
            key = self.store.run(lambda tx: self._the_key(tx, create=True), write=True)
        if self.version < 3 or docs.digests is None:
            return document_rows(key, docs)[1]
        from .linking import resolve_documents  # loads numpy: as in _ensure_docset

        return self.store.run(lambda tx: document_rows(key, docs, resolve_documents(
            tx, key, docs, document_keys(key, docs), record=False, blocks=self.version >= 4))[1])

    def pseudonyms(self, persons, context: str) -> list[str]:
        """Each of ``persons``' pseudonym for ``context`` (a secure-sum round's id, or
        :data:`~dptopic.dataset_ledger.pseudonyms.COLLECTION` for a collection server's contributors): 48 hex digits
        that name no one without the ledger's key, which a served release charged with that context
        (:func:`~dptopic.dataset_ledger.charge.charge_served`) charges to the person, as a central release that named
        them by their id does (:mod:`dptopic.dataset_ledger.pseudonyms`). Needs the ``cryptography`` package (the
        service extra); creates the ledger's key if it has none (unless opened to read). Spends nothing."""
        from .pseudonyms import check_context, make  # AES-SIV: the service extra, read on use

        persons = [check_person(p) for p in persons]
        check_context(context)
        key = self._key or self.store.run(lambda tx: self._the_key(tx, create=not self.read_only),
                                          write=not self.read_only)
        if key is None:
            raise DPTopicError(f"ledger {self.where} has no key yet (nothing recorded): open it to write once.")
        return make(key, [person_id(key, p) for p in persons], context)

    def foreign_pseudonyms(self, names, context: str) -> list:
        """The names of ``names`` that are not pseudonyms this ledger made for ``context`` (:meth:`pseudonyms`):
        none when every one is (a round's invitations made with this ledger)."""
        from .pseudonyms import check_context, stored_id  # AES-SIV: the service extra, read on use

        check_context(context)
        key = self._key or self.store.run(lambda tx: self._the_key(tx, create=False))
        if key is None:
            return list(names)
        return [n for n in names if stored_id(key, n, context) is None]

    # ------------------------------------------------------------------ reading, every figure checked
    def check(self) -> None:
        """Read every row of the ledger and check it (every release's figures, the caps, the document sets and their
        rows, the hashing key), refusing a damaged ledger in one line naming the row; reads, writes nothing. A run
        calls it before it reads its documents."""
        self._read(lambda tx, st: None)

    def _read(self, fn):
        return self.store.run(lambda tx: fn(tx, self._state(tx)))

    # ------------------------------------------------------------------ the simple reads
    # (the checked state: checked_state.py; owners' rows: owner_rows.py; totals and caps: owner_totals.py; plans:
    # plans.py; show and per-person views: views.py)
    def datasets(self) -> list[str]:
        return self._read(lambda tx, st: list(st["datasets"]))

    def releases(self, dataset: str) -> list:
        return self._read(lambda tx, st: [r for r in st["releases"] if r["dataset"] == dataset])

    def cap(self, dataset: str):
        return self._read(lambda tx, st: st["caps"].get(dataset))

    def person_cap(self):
        """The cap on every person's total, ``(epsilon, delta)``, or None."""
        return self._read(lambda tx, st: st["person_cap"])

    # ------------------------------------------------------------------ writing
    def _write(self, fn):
        return self.store.run(fn, write=True)

    @staticmethod
    def _ensure_dataset(tx, dataset: str) -> None:
        if tx.one("SELECT 1 FROM datasets WHERE name = ?", (dataset,)) is None:
            tx.run("INSERT INTO datasets (name, created) VALUES (?, ?)", (dataset, _now()))

    def set_cap(self, dataset: str, epsilon, delta, *, clear: bool = False) -> None:
        """Cap ``dataset`` at ``(epsilon, delta)`` (``clear``: remove its cap; the dataset must be recorded). A cap
        below what the dataset has already spent is kept (it refuses every later release) and the caller may say
        so."""
        from .._validation import Real, validate_value  # loads numpy: 'dptopic budget' opens its ledger without it

        dataset = valid_name(dataset)
        if clear:
            if epsilon is not None or delta is not None:
                raise ParameterError("give {epsilon} and {delta} (a cap) or {clear} (no cap), not both.", "clear",
                                     True, others=("epsilon", "delta"))
        else:
            epsilon = float(validate_value("epsilon", epsilon, [Real(0, None, "neither")]))
            delta = float(validate_value("delta", delta, [Real(0, 1, "neither")]))

        def go(tx):
            state = self._state(tx)
            check_name(dataset, recorded=state["datasets"])     # a new name by the user's rule
            if clear:
                if tx.one("SELECT 1 FROM datasets WHERE name = ?", (dataset,)) is None:
                    raise ParameterError("ledger {where} holds no dataset under {dataset=}: nothing to clear ('dptopic budget"
                                         " show' lists the datasets it has).", "dataset", dataset, where=self.where)
                tx.run("UPDATE datasets SET cap_epsilon = NULL, cap_delta = NULL WHERE name = ?", (dataset,))
                return
            self._ensure_dataset(tx, dataset)
            tx.run("UPDATE datasets SET cap_epsilon = ?, cap_delta = ? WHERE name = ?", (epsilon, delta, dataset))
        self._write(go)

    def set_person_cap(self, epsilon, delta, *, clear: bool = False) -> None:
        """Cap every person's total (every owner's: a document whose person is not known is its own) at ``(epsilon,
        delta)``, across every dataset of the ledger; ``clear`` removes it."""
        from .._validation import Real, validate_value  # loads numpy: as above

        if not clear:
            epsilon = float(validate_value("epsilon", epsilon, [Real(0, None, "neither")]))
            delta = float(validate_value("delta", delta, [Real(0, 1, "neither")]))

        def go(tx):
            self._state(tx)
            tx.run("DELETE FROM caps WHERE scope = ?", (PERSON_CAP,))
            if not clear:
                tx.run("INSERT INTO caps (scope, epsilon, delta) VALUES (?, ?, ?)", (PERSON_CAP, epsilon, delta))
        self._write(go)

    def debit(self, dataset: str | None, trainer: str, unit: str, groups, delta: float, *, kind: str = "fit",
              guarantee: bool = True, release_id: int | None = None, note: str | None = None,
              planned=(), documents: Documents | None = None) -> int:
        """Record a release of ``groups`` (``[(event, count), ...]``) that read ``documents`` (None: a dataset known
        by its name alone) from ``dataset`` (None: the documents' content name) and return its id; with
        ``release_id``, add ``groups`` to that release instead (more of one fit, such as replayed sweeps). Refused
        with :class:`~dptopic.errors.BudgetExceededError`, nothing written, when a cap it touches would be exceeded:
        its dataset's, every dataset whose documents it shares, the person cap. Call it before the release's noise is
        drawn. ``planned``: the rest of this release, added later with ``release_id`` (a run's fit after its private
        vocabulary): counted in the caps' check now, not written."""
        if dataset is None and documents is None and release_id is None:
            raise DPTopicError("a release needs its dataset's name or its documents.")
        if dataset is not None:
            dataset = valid_name(dataset)       # the ledger's own forms too (an audit's shadows)
        groups = [(e, int(n)) for e, n in groups]
        planned = [(e, int(n)) for e, n in planned]

        def go(tx):
            state = self._state(tx)
            name, docset, max_tokens = dataset, None, None
            mine = None
            if release_id is not None:
                mine = state["by_id"].get(int(release_id))
                if mine is None:
                    raise DPTopicError(f"release {release_id} is not in ledger {self.where}")
                name, docset, max_tokens = mine["dataset"], mine["docset"], mine["max_tokens"]
            elif documents is not None:
                docset, content = self._ensure_docset(tx, documents)
                name = name or content
                max_tokens = documents.max_tokens
            self._ensure_dataset(tx, name)
            whole = merge((mine["groups"] if mine else []) + groups)
            claims = guarantee
            eps, d = release_guarantee(whole, delta) if claims else (math.inf, float(delta))
            if claims and not (math.isfinite(eps) and d < 1):
                # (epsilon, delta) steps whose own deltas add to 1 or more bound nothing: no guarantee is claimed
                claims, eps, d = False, math.inf, float(delta)
            check = merge(whole + planned) if planned else whole
            e_c, d_c = (release_guarantee(check, delta) if guarantee else (math.inf, float(delta))) if planned \
                else (eps, d)
            if not claims:
                e_c, d_c = math.inf, float(delta)
            new = {"id": int(release_id) if release_id is not None else -1, "dataset": name, "trainer": trainer,
                   "unit": mine["unit"] if mine else unit, "groups": check, "epsilon": e_c, "delta": d_c,
                   "guarantee": claims, "docset": docset, "max_tokens": max_tokens}
            if mine is not None:
                state["releases"] = [r for r in state["releases"] if r["id"] != mine["id"]]
                state["by_id"] = {r["id"]: r for r in state["releases"]}
            self._check_caps(tx, state, new, trainer)
            text = events_to_json(whole)
            if mine is not None:
                tx.run("UPDATE releases SET events = ?, epsilon = ?, delta = ?, guarantee = ? WHERE id = ?",
                       (text, eps if claims else None, d, int(claims), mine["id"]))
                return mine["id"]
            return tx.insert(
                "INSERT INTO releases (dataset, kind, trainer, unit, events, epsilon, delta, guarantee, time, note,"
                " docset, max_tokens) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (name, kind, trainer, unit, text, eps if claims else None, d, int(claims), _now(), note,
                 docset, max_tokens))
        return self._write(go)

    def add_aliases(self, pairs, source: str = "aliases") -> int:
        """Record ``pairs`` of person ids ``(alias, canonical)`` as one person each (git's ``.mailmap`` or a CSV read
        by :func:`~dptopic.dataset_ledger.people.read_aliases`; ``source`` names it in errors): every total and cap
        counts them once from now on, earlier releases included (linking only ever charges more). Returns how many
        pairs joined two people who were apart."""
        from .linking import link_people  # loads numpy: 'dptopic budget' reads without it

        pairs = [(check_person(a), check_person(b)) for a, b in pairs]
        if self.read_only:
            raise DPTopicError(f"ledger {self.where} was opened to read only: aliases from {source} need a ledger"
                               " that can be written.")
        return self._write(lambda tx: link_people(tx, self._the_key(tx, create=True), None, 0, pairs)["alias"])

    def mark_no_guarantee(self, release_id: int, note: str) -> None:
        """Mark a recorded release as claiming no guarantee (its fit turned out to claim none)."""
        self._write(lambda tx: tx.run("UPDATE releases SET guarantee = 0, epsilon = NULL, note = ? WHERE id = ?",
                                      (note, int(release_id))))

    def set_model_path(self, release_id: int, path) -> None:
        """Where the release's model was saved (``model.save``)."""
        self._write(lambda tx: tx.run("UPDATE releases SET model_path = ? WHERE id = ?", (str(path), int(release_id))))
