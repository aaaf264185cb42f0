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

import math
import os
import secrets
import time

from ..accounting.verify import rounded_up
from ..errors import BudgetExceededError, DPTopicError, ParameterError
from .identity import Documents, check_person, document_keys, document_rows, keyed, person_id, person_text
from .location import location
from .names import check_name, valid_name
from .releases import events_to_json, merge, parsed, release_guarantee
from .store import LedgerFileError, open_store

PERSON_CAP = "person"
"""The ``caps`` row of the cap on every person's (every owner's) total."""

UNITS_NOTE = {"person": "per person", "document": "per document"}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


# ------------------------------------------------------------------------------------------------- the ledger
class DatasetLedger:
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
            doc = resolve_documents(tx, key, docs, document_keys(key, docs))
        fingerprint, content, rows = document_rows(key, docs, doc)
        row = tx.one("SELECT id FROM docsets WHERE fingerprint = ?", (fingerprint,))
        if row is not None:
            if self.version >= 3:
                link_people(tx, key, None, int(row[0]), docs.aliases or ())
            return int(row[0]), content
        persons = int(any(r[2] for r in rows))
        sid = tx.insert("INSERT INTO docsets (fingerprint, content, n_docs, persons, created) VALUES (?, ?, ?, ?, ?)",
                        (fingerprint, content, sum(r[3] for r in rows), persons, _now()))
        tx.many("INSERT INTO docs (docset, doc, owner, person, copies) VALUES (?, ?, ?, ?, ?)",
                [(sid, d, o, p, n) for d, o, p, n in rows])
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
            tx, key, docs, document_keys(key, docs), record=False))[1])

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
    def _damaged(self, why: str) -> LedgerFileError:
        return self.store.bad(f"is damaged: {why}")

    def _release(self, row) -> dict:
        rid, dataset, kind, trainer, unit, events, eps, delta, guarantee, when, path, note, docset, max_tokens = row
        where = f"release {rid} of dataset {str(dataset)[:60]!r}"
        try:
            groups, raw = parsed(events)
        except (ValueError, TypeError, DPTopicError) as e:
            raise self._damaged(f"{where} has damaged events ({' '.join(str(e).split())[:120]})") from None
        if guarantee not in (0, 1):
            raise self._damaged(f"{where} has guarantee {guarantee!r} (0 or 1)")
        if not _number(delta) or not 0 <= float(delta) < 1:
            raise self._damaged(f"{where} states delta {delta!r} (a number in [0, 1))")
        if guarantee:
            if not groups:
                raise self._damaged(f"{where} claims a guarantee but lists no events")
            if not _number(eps) or not 0 <= float(eps) < math.inf:
                raise self._damaged(f"{where} states epsilon {eps!r} (a finite number >= 0)")
            try:
                again = release_guarantee(groups, float(delta))
            except DPTopicError as e:
                raise self._damaged(f"{where}: its events cannot be composed ({str(e)[:100]})") from None
            if not math.isclose(again[0], float(eps), rel_tol=1e-6, abs_tol=1e-9):
                raise self._damaged(f"{where} states epsilon {float(eps):.6g} at delta {float(delta):.3g}, but its"
                                    f" events give {again[0]:.6g}")
        elif eps is not None:
            raise self._damaged(f"{where} claims no guarantee yet states epsilon {eps!r}")
        if docset is not None and (isinstance(docset, bool) or not isinstance(docset, int)):
            raise self._damaged(f"{where} names document set {docset!r}")
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                       or max_tokens < 1):
            raise self._damaged(f"{where} states {max_tokens!r} tokens in its longest document")
        for name, v in (("dataset", dataset), ("kind", kind), ("trainer", trainer), ("unit", unit), ("time", when)):
            if not isinstance(v, str):
                raise self._damaged(f"{where} has no {name} text")
        return {"id": int(rid), "dataset": dataset, "kind": kind, "trainer": trainer, "unit": unit, "groups": groups,
                "events": raw, "epsilon": float(eps) if guarantee else math.inf, "delta": float(delta),
                "guarantee": bool(guarantee), "time": when, "model_path": path, "note": note, "docset": docset,
                "max_tokens": max_tokens}

    def _state(self, tx) -> dict:
        """Every release, dataset cap, the person cap and the document sets, read and checked."""
        cols = ("id, dataset, kind, trainer, unit, events, epsilon, delta, guarantee, time, model_path, note"
                + (", docset, max_tokens" if self.version >= 2 else ", NULL, NULL"))
        releases = [self._release(r) for r in tx.all(f"SELECT {cols} FROM releases ORDER BY id")]
        caps = {}
        datasets = []
        for name, ce, cd, created in tx.all("SELECT name, cap_epsilon, cap_delta, created FROM datasets"
                                            " ORDER BY created, name"):
            datasets.append(name)
            if ce is None and cd is None:
                continue
            if not _number(ce) or not 0 < float(ce) < math.inf or not _number(cd) or not 0 < float(cd) < 1:
                raise self._damaged(f"dataset {str(name)[:60]!r} has cap ({ce!r}, {cd!r}) (epsilon a finite number"
                                    " > 0, delta in (0, 1))")
            caps[name] = (float(ce), float(cd))
        person_cap = None
        docsets = {}
        if self.version >= 2:
            for scope, ce, cd in tx.all("SELECT scope, epsilon, delta FROM caps"):
                if scope != PERSON_CAP or not _number(ce) or not 0 < float(ce) < math.inf or not _number(cd) \
                        or not 0 < float(cd) < 1:
                    raise self._damaged(f"cap {str(scope)[:40]!r} is ({ce!r}, {cd!r}) (the person cap: epsilon a"
                                        " finite number > 0, delta in (0, 1))")
                person_cap = (float(ce), float(cd))
            for sid, content, n, persons in tx.all("SELECT id, content, n_docs, persons FROM docsets"):
                if not isinstance(n, int) or isinstance(n, bool) or n < 1 or persons not in (0, 1):
                    raise self._damaged(f"document set {sid} states {n!r} documents")
                docsets[int(sid)] = {"content": content, "n_docs": n, "persons": bool(persons)}
            key = tx.one("SELECT value FROM meta WHERE key = 'key'")
            if key is not None:
                self._key = None
                self._the_key(tx, create=False)         # 64 hex digits, or the ledger is refused
        for r in releases:
            if r["docset"] is not None and r["docset"] not in docsets:
                raise self._damaged(f"release {r['id']} names document set {r['docset']}, which is not recorded")
            if r["dataset"] not in datasets:
                raise self._damaged(f"release {r['id']} names dataset {r['dataset'][:60]!r}, which is not recorded")
        if self.version >= 2:
            self._check_documents(tx, docsets)
        if self.version >= 3:
            from .linking import links_damage  # loads numpy: 'dptopic budget' reads without it

            damage = links_damage(tx)
            if damage is not None:
                raise self._damaged(damage)
        return {"releases": releases, "by_id": {r["id"]: r for r in releases}, "caps": caps, "datasets": datasets,
                "person_cap": person_cap, "docsets": docsets}

    def _check_documents(self, tx, docsets: dict) -> None:
        """Every document row against the set it belongs to: each set's rows hold the documents it recorded (their
        copies add to its ``n_docs``, so that no row was dropped and none grew), each row of a set of documents names
        its document, each count is whole and at least 1, and no row names a set that is not recorded."""
        rows = tx.all("SELECT docset, SUM(copies), MIN(copies), MAX(copies), SUM(CASE WHEN doc IS NULL THEN 1 ELSE 0"
                      " END), MIN(person), MAX(person) FROM docs GROUP BY docset")
        held = {}
        for sid, total, low, high, nulls, p_low, p_high in rows:
            total = int(total) if type(total).__name__ == "Decimal" and total == int(total) else total   # PostgreSQL
            if sid not in docsets:
                raise self._damaged(f"document rows name document set {sid!r}, which is not recorded")
            held[sid] = (total, low, high, nulls, p_low, p_high)
        for sid, ds in docsets.items():
            n, content = ds["n_docs"], ds["content"]
            if not isinstance(content, str) or not content.startswith(("content:", "people:")):
                raise self._damaged(f"document set {sid} has no content name ({str(content)[:40]!r})")
            if sid not in held:
                raise self._damaged(f"document set {sid} recorded {n} documents, but no document row of it is left")
            total, low, high, nulls, p_low, p_high = held[sid]
            if content.startswith("content:") and nulls:
                raise self._damaged(f"{nulls} document row(s) of document set {sid} name no document (doc is NULL)")
            if not all(isinstance(x, int) and not isinstance(x, bool) for x in (total, low, high)) or low < 1 \
                    or p_low not in (0, 1) or p_high not in (0, 1):
                raise self._damaged(f"a document row of document set {sid} has no whole count >= 1")
            if high > n:
                raise self._damaged(f"a document row of document set {sid} states {high} copies of a document, more"
                                    f" than the {n} documents the set recorded")
            if total != n:
                raise self._damaged(f"document set {sid} recorded {n} documents, but its rows hold {total}")

    def check(self) -> None:
        """Read every row of the ledger and check it (every release's figures, the caps, the document sets and their
        rows, the hashing key), refusing a damaged ledger in one line naming the row; reads, writes nothing. A run
        calls it before it reads its documents."""
        self._read(lambda tx, st: None)

    def _read(self, fn):
        return self.store.run(lambda tx: fn(tx, self._state(tx)))

    # ------------------------------------------------------------------ totals
    def _person_roots(self, tx) -> dict:
        """Each linked owner's root (:func:`~dptopic.dataset_ledger.linking.person_roots`); empty before format 3."""
        from .linking import person_roots  # loads numpy: as above

        return person_roots(tx) if self.version >= 3 else {}

    def _rows(self, tx, docsets=None):
        """The owners of ``docsets`` (None: every owner) with, for each, their documents in every document set; ids
        linked as one person (``links``) are one owner, their root."""
        import numpy as np  # 'dptopic budget' opens its ledger without numpy

        if docsets is not None and not docsets:
            return (np.zeros(0, np.int64),) * 4
        roots = self._person_roots(tx)
        if docsets is None:
            rows = tx.all("SELECT docset, owner, SUM(copies), MAX(person) FROM docs GROUP BY docset, owner")
        elif not roots:
            marks = ", ".join("?" * len(docsets))
            rows = tx.all("SELECT docset, owner, SUM(copies), MAX(person) FROM docs WHERE owner IN (SELECT owner FROM"
                          f" docs WHERE docset IN ({marks})) GROUP BY docset, owner", tuple(sorted(docsets)))
        else:       # the owners of the sets, and every id linked to one of them
            marks = ", ".join("?" * len(docsets))
            mine = {int(r[0]) for r in tx.all(f"SELECT DISTINCT owner FROM docs WHERE docset IN ({marks})",
                                              tuple(sorted(docsets)))}
            people = {roots.get(o, o) for o in mine}
            owners = sorted(mine | {o for o, r in roots.items() if r in people})
            rows = []
            for start in range(0, len(owners), 500):
                part = owners[start:start + 500]
                rows += tx.all("SELECT docset, owner, SUM(copies), MAX(person) FROM docs WHERE owner IN"
                               f" ({', '.join('?' * len(part))}) GROUP BY docset, owner", tuple(part))
        a = np.array(rows, dtype=np.int64).reshape(-1, 4)
        if self.version >= 3:
            a = self._with_held_documents(tx, a, docsets, roots)
        if not len(a):
            return (np.zeros(0, np.int64),) * 4
        if roots:
            return _as_people(a, roots)
        return a[:, 0], a[:, 1], a[:, 2], a[:, 3]

    def _rows_of(self, tx, state, docsets):
        """:meth:`_rows` of ``docsets`` within one transaction's ``state``: the first call reads the sets' owners
        alone; a second (a plan or ``budget show``, which total several datasets) reads every row once and keeps it
        in ``state``, and this call and the later ones filter it, so that a total over a million people is read once
        rather than once per dataset."""
        import numpy as np  # as in _rows

        if docsets is not None and not docsets:
            return self._rows(tx, docsets)
        calls = state["_row_reads"] = state.get("_row_reads", 0) + 1
        if calls == 1 and docsets is not None:
            return self._rows(tx, docsets)
        if "_all_rows" not in state:
            state["_all_rows"] = self._rows(tx, None)
        ds, ow, k, pe = rows = state["_all_rows"]
        if docsets is None:
            return rows
        if "_owner_of_row" not in state:        # each row's owner as a number 0..owners-1, once
            owners, inv = np.unique(ow, return_inverse=True)
            state["_owner_of_row"], state["_owners"] = inv.ravel(), len(owners)
        inv = state["_owner_of_row"]
        touched = np.zeros(state["_owners"], bool)
        touched[inv[np.isin(ds, np.fromiter(docsets, np.int64, len(docsets)))]] = True
        mine = touched[inv]
        if mine.all():          # every owner: the rows themselves (so that _sigs finds them again at once)
            return rows
        return ds[mine], ow[mine], k[mine], pe[mine]

    def _with_held_documents(self, tx, a, docsets, roots: dict):
        """``a``'s rows ``(docset, owner, documents, person)`` with each document that several ids hold charged to
        every one of them: a release that held a document under one id touches every id that holds it (the same
        writing under a re-keyed or renamed id, whether or not the ids were linked). A document counts so only where it
        is evidence of the same writing, as for linking (:data:`~dptopic.dataset_ledger.people.ID_LINK_PARAMS`: at
        least ``min_tokens`` tokens, held by at most ``max_holders`` ids): a short text many people write charges no
        one for another's release."""
        import numpy as np  # as in _rows

        from .people import ID_LINK_PARAMS  # loads numpy: as in _rows

        p = ID_LINK_PARAMS
        shared = tx.all(
            "SELECT d.docset, d.doc, d.owner, d.copies, d.person FROM docs d WHERE d.doc IN (SELECT s.doc FROM docs s"
            " LEFT JOIN doc_info i ON i.doc = s.doc WHERE s.doc IS NOT NULL AND (i.tokens IS NULL OR i.tokens >= ?)"
            " GROUP BY s.doc HAVING COUNT(DISTINCT s.owner) BETWEEN 2 AND ?)", (p["min_tokens"], p["max_holders"]))
        if not shared:
            return a
        r = np.array(shared, dtype=np.int64)           # docset, doc, owner, copies, person
        # each (set, document)'s copies, and each document's holders (owner, person)
        sd, sd_inv = np.unique(r[:, :2], axis=0, return_inverse=True)
        sd_copies = np.bincount(sd_inv.ravel(), weights=r[:, 3], minlength=len(sd)).astype(np.int64)
        holders = np.unique(r[:, [1, 2, 4]], axis=0)                       # doc, owner, person
        lo = np.searchsorted(holders[:, 0], sd[:, 1], "left")
        hi = np.searchsorted(holders[:, 0], sd[:, 1], "right")
        n = hi - lo
        at = np.repeat(lo, n) + (np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n))
        cross = np.stack([np.repeat(sd[:, 0], n), holders[at, 1], np.repeat(sd_copies, n), holders[at, 2]], axis=1)
        minus = np.stack([r[:, 0], r[:, 2], -r[:, 3], np.zeros(len(r), np.int64)], axis=1)
        if docsets is not None:     # the rows read were those of the owners of docsets: every holder's own rows too
            have = set(a[:, 1].tolist())
            extra_owners = sorted(set(holders[:, 1].tolist()) - have)
            more = []
            for start in range(0, len(extra_owners), 500):
                part = extra_owners[start:start + 500]
                more += tx.all("SELECT docset, owner, SUM(copies), MAX(person) FROM docs WHERE owner IN"
                               f" ({', '.join('?' * len(part))}) GROUP BY docset, owner", tuple(part))
            if more:
                a = np.concatenate([a, np.array(more, dtype=np.int64)])
            minus = minus[np.isin(minus[:, 1], a[:, 1])]
        allrows = np.concatenate([a, minus, cross])
        keys, inv = np.unique(allrows[:, :2], axis=0, return_inverse=True)
        inv = inv.ravel()
        k = np.bincount(inv, weights=allrows[:, 2], minlength=len(keys)).astype(np.int64)
        person = np.zeros(len(keys), np.int64)
        np.maximum.at(person, inv, allrows[:, 3])
        out = np.concatenate([keys, k[:, None], person[:, None]], axis=1)[k > 0]
        if docsets is not None:     # the owners (people) the sets touch, with every row of theirs
            touched = set(out[np.isin(out[:, 0], list(docsets)), 1].tolist())
            people = {roots.get(o, o) for o in touched}
            out = out[np.fromiter((roots.get(int(o), int(o)) in people for o in out[:, 1]), dtype=bool,
                                  count=len(out))]
        return out

    @staticmethod
    def _delta_of(state, dataset: str) -> tuple[float, str]:
        """The delta a dataset's total is stated at, and which: its cap's, else its first release's."""
        cap = state["caps"].get(dataset)
        if cap is not None:
            return cap[1], "the cap's delta"
        first = next((r for r in state["releases"] if r["dataset"] == dataset and r["guarantee"] and r["delta"] > 0),
                     None)
        if first is not None:
            return first["delta"], f"the delta of its first release, release {first['id']}"
        return 0.0, "no release states a delta: pure composition"

    def _sigs(self, tx, state, docsets, extra=None, virtual=None) -> list:
        """The signatures of the owners of ``docsets`` (with ``extra``, a release not written); ``virtual``: the
        document sets a planned release would read, as one more set (id -1) holding each of their owners with their
        most documents in any of them."""

        rows = self._rows_of(tx, state, docsets)
        # the same owners read again with the same release added (the datasets a plan or budget show totals often
        # share every person): their signatures once per transaction
        memo = state.setdefault("_sig_memo", [])
        key = (None if extra is None else (extra["id"], extra.get("docset"), extra["dataset"], id(extra)),
               tuple(sorted(virtual or ())))
        for k, seen, out in memo:
            if k == key and len(seen[1]) == len(rows[1]) and all(a is b or (len(a) == len(b) and (a == b).all())
                                                                 for a, b in zip(seen, rows)):
                return out
        out = self._signatures_of(rows, state, extra, virtual)
        memo.append((key, rows, out))
        del memo[:-4]
        return out

    @staticmethod
    def _signatures_of(rows, state, extra, virtual) -> list:
        """:meth:`_sigs`' signatures of ``rows`` (``virtual``: the planned sets as one more set, id -1)."""
        from .totals import signatures  # as in _sigs

        if virtual:
            import numpy as np  # as above

            ds, ow, k, pe = rows
            inside = np.isin(ds, list(virtual))
            if inside.any():
                order = np.lexsort((-k[inside], ow[inside]))
                o, kk, pp = ow[inside][order], k[inside][order], pe[inside][order]
                first = np.r_[True, o[1:] != o[:-1]]
                rows = (np.r_[ds, np.full(int(first.sum()), -1)], np.r_[ow, o[first]], np.r_[k, kk[first]],
                        np.r_[pe, pp[first]])
        return signatures(rows, state["releases"], extra)

    def _total(self, state, sigs, dataset: str | None, docsets, delta: float, memo, extra=None,
               enough: float | None = None) -> dict:
        """The largest owner's total among ``sigs`` touching ``docsets`` (the datasets' named-only releases
        included), at ``delta``."""
        from .totals import Signature, compose_signature  # loads numpy, as above

        by_id = dict(state["by_id"])
        if extra is not None:
            by_id[extra["id"]] = extra
        mine = [s for s in sigs if s.docsets & docsets]
        if not mine and dataset is not None:        # a dataset recorded with no documents: its releases together
            rel = [r for r in state["releases"] if r["dataset"] == dataset]
            if extra is not None and extra["dataset"] == dataset:
                rel.append(extra)
            mine = [Signature(tuple((r["id"], 1) for r in rel), frozenset(), 0, 0, datasets={dataset})] if rel else []
        worst, releases, persons, owners, datasets = None, set(), 0, 0, set()
        for s in mine:
            compose_signature(s, by_id, delta, memo, enough)
            releases |= {rid for rid, _ in s.releases}
            persons += s.persons
            owners += s.owners
            datasets |= s.datasets
            if worst is None or s.epsilon > worst.epsilon:
                worst = s
        if worst is None:
            return {"epsilon_total": 0.0, "delta_total": delta, "epsilon_method": "no releases", "n_releases": 0,
                    "releases": [], "unit": "document", "owners": 0, "persons": 0, "datasets": [], "largest": []}
        eps = worst.epsilon
        return {"epsilon_total": eps if math.isfinite(eps) else None, "delta_total": delta,
                "epsilon_method": worst.method, "n_releases": len(releases), "releases": sorted(releases),
                "unit": "person" if persons else "document", "owners": owners, "persons": persons,
                "datasets": sorted(datasets), "largest": [{"release": rid, "group": k} for rid, k in worst.releases]}

    def _dataset_docsets(self, state, dataset: str) -> set:
        return {r["docset"] for r in state["releases"] if r["dataset"] == dataset and r["docset"] is not None}

    def _dataset_total(self, tx, state, dataset: str, memo=None, extra=None, delta=None, virtual=None,
                       enough: float | None = None) -> dict:
        docsets = self._dataset_docsets(state, dataset)
        if extra is not None and extra["dataset"] == dataset and extra.get("docset") is not None:
            docsets.add(extra["docset"])
        d, source = (delta, "as asked") if delta is not None else self._delta_of(state, dataset)
        sigs = self._sigs(tx, state, docsets | set(virtual or ()), extra, virtual)
        if virtual:
            docsets = docsets | {-1}
        out = self._total(state, sigs, dataset, docsets, d, {} if memo is None else memo, extra, enough)
        basic = [state["by_id"][i] for i in out["releases"] if i in state["by_id"]]
        if extra is not None and extra["id"] in out["releases"] and extra["id"] not in state["by_id"]:
            basic.append(extra)
        guaranteed = all(r["guarantee"] for r in basic)
        out.update(dataset=dataset, delta_source=source, cap=_cap_dict(state["caps"].get(dataset)),
                   epsilon_basic=float(sum(r["epsilon"] for r in basic)) if guaranteed else None,
                   delta_basic=float(sum(r["delta"] for r in basic)) if guaranteed else None)
        return out

    def total(self, dataset: str) -> dict:
        """A dataset's total: its largest owner's (a person's, with a person field; a document's otherwise) over every
        release that held their documents, at the cap's delta, else its first release's (``delta_source`` says
        which); ``n_releases``, ``unit``, ``datasets`` (every dataset whose releases it composes), ``cap``."""
        return self._read(lambda tx, st: self._dataset_total(tx, st, dataset))

    def release_total(self, release_id: int) -> dict:
        """The total of a release's own documents (its largest owner's, at its dataset's delta): the card's line."""
        def go(tx, st):
            r = st["by_id"].get(int(release_id))
            if r is None:
                raise DPTopicError(f"release {release_id} is not in ledger {self.where}")
            if r["docset"] is None:
                return self._dataset_total(tx, st, r["dataset"])
            d, source = self._delta_of(st, r["dataset"])
            sigs = self._sigs(tx, st, {r["docset"]})
            out = self._total(st, sigs, r["dataset"], {r["docset"]}, d, {})
            out.update(dataset=r["dataset"], delta_source=source, cap=_cap_dict(st["caps"].get(r["dataset"])))
            return out
        return self._read(go)

    # ------------------------------------------------------------------ the simple reads
    def datasets(self) -> list[str]:
        return self._read(lambda tx, st: list(st["datasets"]))

    def releases(self, dataset: str) -> list:
        return self._read(lambda tx, st: [r for r in st["releases"] if r["dataset"] == dataset])

    def cap(self, dataset: str):
        return self._read(lambda tx, st: st["caps"].get(dataset))

    def person_cap(self):
        """The cap on every person's total, ``(epsilon, delta)``, or None."""
        return self._read(lambda tx, st: st["person_cap"])

    # ------------------------------------------------------------------ show and export
    def show(self, dataset: str | None = None) -> dict:
        """``{"datasets": [...]}``, the JSON that ``dptopic budget show`` prints (its fields: docs/privacy.md): per
        dataset its releases with their events (every parameter, so that another accountant recomputes the total),
        its total and how it was reached (``largest``: the releases composed for its largest owner and the group
        size each was converted at), the datasets it overlaps and its cap."""
        def go(tx, st):
            if dataset is not None and dataset not in st["datasets"]:
                raise ParameterError("ledger {where} holds no dataset under {dataset=}: 'dptopic budget show' lists the"
                                     " datasets it has.", "dataset", dataset, where=self.where)
            names = st["datasets"] if dataset is None else [dataset]
            shared = self._overlaps(tx, st)
            out = []
            memo: dict = {}
            for name in names:
                tot = self._dataset_total(tx, st, name, memo)
                mine = [r for r in st["releases"] if r["dataset"] == name]
                out.append({
                    "name": name,
                    "releases": [_release_json(r, st) for r in mine],
                    "epsilon_total": tot["epsilon_total"], "delta_total": tot["delta_total"],
                    "delta_source": tot["delta_source"], "unit": tot["unit"],
                    "epsilon_basic": tot["epsilon_basic"], "delta_basic": tot["delta_basic"],
                    "epsilon_method": tot["epsilon_method"], "n_releases": tot["n_releases"],
                    "largest": tot["largest"],
                    "units": sorted({r["unit"] for r in mine}),
                    "overlaps": shared.get(name, []),
                    "cap": _cap_dict(st["caps"].get(name)),
                })
            return {"datasets": out, "person_cap": _cap_dict(st["person_cap"])}
        return self._read(go)

    def _overlaps(self, tx, st) -> dict:
        """Per dataset, the other datasets whose documents it shares and how many owners they share (ids linked as one
        person counted once; exact counts of the private data: outside the guarantee). Read from one row per set and
        owner, not from a join of every document with every other."""
        if self.version < 2:
            return {}
        import numpy as np  # 'dptopic budget' opens its ledger without numpy
        import scipy.sparse as sp  # as above

        of: dict = {}
        for r in st["releases"]:
            if r["docset"] is not None:
                of.setdefault(r["docset"], set()).add(r["dataset"])
        rows = tx.all("SELECT DISTINCT docset, owner FROM docs")
        names = sorted({d for ds in of.values() for d in ds})
        if not rows or len(names) < 2:
            return {}
        roots = self._person_roots(tx)
        a = np.array(rows, dtype=np.int64)
        owner = np.fromiter((roots.get(int(o), int(o)) for o in a[:, 1]), dtype=np.int64, count=len(a))
        code = {n: i for i, n in enumerate(names)}
        ds_rows, ow_rows = [], []
        for sid, dsets in of.items():
            mine = owner[a[:, 0] == sid]
            for d in dsets:
                ds_rows.append(np.full(len(mine), code[d]))
                ow_rows.append(mine)
        u, inv = np.unique(np.concatenate(ow_rows), return_inverse=True)
        held = sp.csr_matrix((np.ones(len(inv)), (np.concatenate(ds_rows), inv.ravel())), shape=(len(names), len(u)))
        held.data[:] = 1.0          # a person in two sets of one dataset counts once
        shared = (held @ held.T).tocoo()
        out: dict = {}
        for i, j, n in sorted(zip(shared.row.tolist(), shared.col.tolist(), shared.data.tolist())):
            if i != j and n > 0:
                out.setdefault(names[i], []).append({"dataset": names[j], "shared_owners": int(round(n))})
        return out

    def person_summary(self, delta: float | None = None, top: int = 10) -> dict:
        """Every owner's total (what ``dptopic budget show`` lists per person): the largest, the distribution over
        owners (counts of the private data: outside the guarantee) and the person cap. ``delta``: the person cap's, else
        the ledger's first release's."""
        from .totals import compose_signature  # loads numpy: 'dptopic budget' opens its ledger without it

        def go(tx, st):
            d, source = delta, "as asked"
            if d is None:
                if st["person_cap"] is not None:
                    d, source = st["person_cap"][1], "the person cap's delta"
                else:
                    first = next((r for r in st["releases"] if r["guarantee"] and r["delta"] > 0), None)
                    d, source = ((first["delta"], f"the delta of the ledger's first release, release {first['id']}")
                                 if first else (0.0, "no release states a delta"))
            sigs = self._sigs(tx, st, None)
            memo: dict = {}
            for s in sigs:
                compose_signature(s, st["by_id"], d, memo)
            sigs.sort(key=lambda s: -s.epsilon)
            owners = sum(s.owners for s in sigs)
            persons = sum(s.persons for s in sigs)
            dist = []
            for s in sigs:
                dist.append({"epsilon": s.epsilon if math.isfinite(s.epsilon) else None, "owners": s.owners,
                             "persons": s.persons, "datasets": sorted(s.datasets),
                             "releases": [{"release": rid, "group": k} for rid, k in s.releases],
                             "method": s.method})
            largest = dist[0] if dist else None
            linked = {"ids": 0, "why": {}}
            if self.version >= 3:
                from .linking import link_reasons  # loads numpy: as above

                why = link_reasons(tx)
                linked = {"ids": sum(why.values()), "why": why}
            return {"delta": d, "delta_source": source, "owners": owners, "persons": persons, "linked": linked,
                    "largest": largest, "distribution": dist[:top] if top else dist,
                    "quantiles": _quantiles(sigs), "person_cap": _cap_dict(st["person_cap"]),
                    "note": "counts of owners are exact figures of the private data: outside the guarantee"}
        return self._read(go)

    def person_total(self, person: str) -> dict:
        """One person's total (their id as the person field gives it: a string, as every person field holds them;
        another type is refused), at the person cap's delta, else the ledger's first release's: ``{"epsilon",
        "delta", "releases", "method"}``; ``epsilon`` 0 for a person not recorded."""
        from .totals import compose_signature, signatures  # loads numpy: as above

        check_person(person)

        def go(tx, st):
            import numpy as np  # as above

            key = self._the_key(tx, create=False)
            if key is None:
                return {"epsilon": 0.0, "delta": None, "releases": [], "method": "no person recorded"}
            o = keyed(key, person_text(person).encode("utf-8", "surrogatepass"), b"ledger-person")
            roots = self._person_roots(tx)
            root = roots.get(o, o)
            ids = sorted({o} | {x for x, r in roots.items() if r == root})
            if self.version >= 3:       # every row a set and its owners, the documents several ids hold counted
                ds, ow, kk, pp = self._rows(tx, {int(r[0]) for r in tx.all(
                    f"SELECT DISTINCT docset FROM docs WHERE owner IN ({', '.join('?' * len(ids))})", tuple(ids))})
                mine = np.fromiter((roots.get(int(x), int(x)) == root for x in ow), dtype=bool, count=len(ow))
                rows = [(int(a), root, int(b), int(c)) for a, b, c in zip(ds[mine], kk[mine], pp[mine])]
            else:
                rows = [(ds, root, n, p) for ds, n, p in tx.all(
                    "SELECT docset, SUM(copies), MAX(person) FROM docs WHERE owner IN"
                    f" ({', '.join('?' * len(ids))}) GROUP BY docset", tuple(ids))]
            d = st["person_cap"][1] if st["person_cap"] else next(
                (r["delta"] for r in st["releases"] if r["guarantee"] and r["delta"] > 0), 0.0)
            if not rows:
                return {"epsilon": 0.0, "delta": d, "releases": [], "method": "no release holds this person"}
            a = np.array(rows, dtype=np.int64)
            (sig,) = signatures((a[:, 0], a[:, 1], a[:, 2], a[:, 3]), st["releases"])
            compose_signature(sig, st["by_id"], d, {})
            return {"epsilon": sig.epsilon, "delta": d, "method": sig.method,
                    "releases": [{"release": rid, "group": k} for rid, k in sig.releases]}
        return self._read(go)

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

    def _check_caps(self, tx, state, new: dict, trainer: str) -> None:
        """Refuse ``new`` (a release not yet written) when a total it touches would pass its cap."""
        memo: dict = {}
        docset = new.get("docset")
        touched = {new["dataset"]}
        if not state["caps"] and state["person_cap"] is None:
            return          # nothing capped: nothing to check
        if docset is not None:
            sigs = self._sigs(tx, state, {docset}, new)
            for s in sigs:
                touched |= s.datasets
        for name in sorted(touched):
            cap = state["caps"].get(name)
            if cap is None:
                continue
            after = self._dataset_total(tx, state, name, memo, extra=new, delta=cap[1], enough=cap[0])
            spent = after["epsilon_total"]
            if spent is None or spent > cap[0] * (1 + 1e-9):
                before = self._dataset_total(tx, state, name, memo, delta=cap[1])
                shared = "" if name == new["dataset"] else f" (this run's documents overlap it: {new['dataset']!r})"
                raise BudgetExceededError(
                    f"dataset {name!r} is capped at epsilon = {cap[0]:g} (delta = {cap[1]:g}) and has spent"
                    f" {_fmt(before['epsilon_total'])} {UNITS_NOTE[before['unit']]} over {before['n_releases']}"
                    f" release(s){shared}; this {trainer} run would bring it to {_fmt(spent)}: refused before any noise"
                    " was drawn, nothing written (raise the cap with 'dptopic budget cap', or spend less;"
                    " docs/budget.md).")
        pc = state["person_cap"]
        if pc is not None and docset is not None:
            from .totals import compose_signature  # loads numpy: 'dptopic budget' opens its ledger without it

            by_id = {**state["by_id"], new["id"]: new}
            for s in self._sigs(tx, state, {docset}, new):
                if docset not in s.docsets:
                    continue
                compose_signature(s, by_id, pc[1], memo, pc[0])
                if not s.epsilon <= pc[0] * (1 + 1e-9):
                    who = "a person" if s.persons else "a document"
                    raise BudgetExceededError(
                        f"every person is capped at epsilon = {pc[0]:g} (delta = {pc[1]:g}) in ledger {self.where};"
                        f" this {trainer} run would bring {who} of its documents to {_fmt(s.epsilon)}: refused before"
                        " any noise was drawn, nothing written (person_summary, or dptopic budget show per person,"
                        " lists the totals; docs/budget.md).")

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

    def plan(self, dataset: str, trainer: str, unit: str, groups, delta: float) -> dict:
        """What a release of ``groups`` from the recorded ``dataset`` (every one of its documents) would add, read
        from the ledger alone: no document is read and nothing is written. Returns, for each cap it touches (its
        dataset's, the datasets sharing its documents, the person cap), the total now, after, and what would
        remain; and whether it would be refused."""
        dataset = valid_name(dataset)       # a recorded dataset, whatever its form
        groups = [(e, int(n)) for e, n in groups]

        def go(tx, st):
            if dataset not in st["datasets"]:
                raise ParameterError("ledger {where} holds no dataset under {dataset=}: 'dptopic budget show' lists the"
                                     " datasets it has (a plan reads what the ledger recorded, never the documents).",
                                     "dataset", dataset, where=self.where)
            eps, d = release_guarantee(groups, delta)
            docsets = self._dataset_docsets(st, dataset)
            tokens = [r["max_tokens"] for r in st["releases"] if r["dataset"] == dataset and r["max_tokens"]]
            new = {"id": -1, "dataset": dataset, "trainer": trainer, "unit": unit, "groups": groups, "epsilon": eps,
                   "delta": d, "guarantee": True, "docset": -1 if docsets else None,
                   "max_tokens": max(tokens) if tokens else None}
            memo: dict = {}
            touched = {dataset}
            for s in self._sigs(tx, st, docsets, new, docsets):
                touched |= s.datasets
            rows = []
            refused = False
            for name in sorted(touched):
                cap = st["caps"].get(name)
                dd = cap[1] if cap else self._delta_of(st, name)[0]
                before = self._dataset_total(tx, st, name, memo, delta=dd)
                after = self._dataset_total(tx, st, name, memo, extra=new, delta=dd, virtual=docsets)
                e_after = after["epsilon_total"]
                over = cap is not None and (e_after is None or e_after > cap[0] * (1 + 1e-9))
                refused |= over
                rows.append({"scope": "dataset", "dataset": name, "unit": after["unit"], "delta": dd,
                             "epsilon_now": before["epsilon_total"], "epsilon_after": e_after,
                             "cap": _cap_dict(cap), "remaining": None if cap is None or e_after is None
                             else cap[0] - e_after, "refused": over})
            pc = st["person_cap"]
            if pc is not None:
                before = self._dataset_total(tx, st, dataset, memo, delta=pc[1])
                after = self._dataset_total(tx, st, dataset, memo, extra=new, delta=pc[1], virtual=docsets)
                e_after = after["epsilon_total"]
                over = e_after is None or e_after > pc[0] * (1 + 1e-9)
                refused |= over
                rows.append({"scope": "person", "dataset": dataset, "unit": after["unit"], "delta": pc[1],
                             "epsilon_now": before["epsilon_total"], "epsilon_after": e_after, "cap": _cap_dict(pc),
                             "remaining": None if e_after is None else pc[0] - e_after, "refused": over})
            return {"dataset": dataset, "trainer": trainer, "unit": unit, "epsilon": eps, "delta": d,
                    "caps": rows, "refused": refused}
        return self._read(go)

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

    def plan_documents(self, documents: Documents, dataset: str | None, trainer: str, unit: str, groups,
                       delta: float) -> dict:
        """What a release of ``groups`` reading ``documents`` (a corpus the ledger may never have seen) would do to
        every total it touches, as :meth:`plan` says it for a recorded dataset: the documents are resolved and their
        people linked exactly as a debit would (:meth:`_ensure_docset`), inside a transaction that is then rolled
        back, so nothing is written. ``dataset``: the name it would be recorded under (default: its content name).
        Also says how many of its people (or documents) the ledger already charged."""
        groups = [(e, int(n)) for e, n in groups]
        if dataset is not None:
            dataset = valid_name(dataset)

        class _Planned(Exception):
            pass

        def go(tx):
            sid, content = self._ensure_docset(tx, documents)
            st = self._state(tx)
            name = dataset or content
            eps, d = release_guarantee(groups, delta)
            new = {"id": -1, "dataset": name, "trainer": trainer, "unit": unit, "groups": groups, "epsilon": eps,
                   "delta": d, "guarantee": True, "docset": sid, "max_tokens": documents.max_tokens}
            memo: dict = {}
            touched = {name}
            sigs = self._sigs(tx, st, {sid}, new)
            for sg in sigs:
                touched |= sg.datasets
            known = sum(sg.owners for sg in sigs if any(rid != -1 for rid, _ in sg.releases))
            rows, refused = [], False
            for ds in sorted(touched):
                cap = st["caps"].get(ds)
                dd = cap[1] if cap else (self._delta_of(st, ds)[0] if ds in st["datasets"] else d)
                before = self._dataset_total(tx, st, ds, memo, delta=dd) if ds in st["datasets"] else None
                after = self._dataset_total(tx, st, ds, memo, extra=new, delta=dd)
                e_after = after["epsilon_total"]
                over = cap is not None and (e_after is None or e_after > cap[0] * (1 + 1e-9))
                refused |= over
                rows.append({"scope": "dataset", "dataset": ds, "unit": after["unit"], "delta": dd,
                             "epsilon_now": before["epsilon_total"] if before else 0.0, "epsilon_after": e_after,
                             "cap": _cap_dict(cap), "remaining": None if cap is None or e_after is None
                             else cap[0] - e_after, "refused": over})
            pc = st["person_cap"]
            if pc is not None:
                from .totals import compose_signature  # loads numpy: 'dptopic budget' opens its ledger without it

                worst_after = 0.0
                for sg in self._sigs(tx, st, {sid}, new):
                    if sid in sg.docsets:
                        compose_signature(sg, {**st["by_id"], -1: new}, pc[1], memo)
                        worst_after = max(worst_after, sg.epsilon)
                over = not worst_after <= pc[0] * (1 + 1e-9)
                refused |= over
                rows.append({"scope": "person", "dataset": name, "unit": "person", "delta": pc[1],
                             "epsilon_now": None, "epsilon_after": worst_after if math.isfinite(worst_after) else None,
                             "cap": _cap_dict(pc), "remaining": pc[0] - worst_after if math.isfinite(worst_after)
                             else None, "refused": over})
            out = {"dataset": name, "trainer": trainer, "unit": unit, "epsilon": eps, "delta": d, "caps": rows,
                   "refused": refused, "owners": sum(sg.owners for sg in sigs), "owners_charged_before": known,
                   "new_dataset": name not in st["datasets"] or not any(r["dataset"] == name
                                                                       for r in st["releases"])}
            raise _Planned(out)

        try:
            self._write(go)
        except _Planned as p:
            return p.args[0]
        raise DPTopicError("the plan was not made")      # go always raises

    def mark_no_guarantee(self, release_id: int, note: str) -> None:
        """Mark a recorded release as claiming no guarantee (its fit turned out to claim none)."""
        self._write(lambda tx: tx.run("UPDATE releases SET guarantee = 0, epsilon = NULL, note = ? WHERE id = ?",
                                      (note, int(release_id))))

    def set_model_path(self, release_id: int, path) -> None:
        """Where the release's model was saved (``model.save``)."""
        self._write(lambda tx: tx.run("UPDATE releases SET model_path = ? WHERE id = ?", (str(path), int(release_id))))


def _as_people(a, roots: dict):
    """Rows ``(docset, owner, documents, person)`` with each linked owner replaced by its root, one row per set and
    person (documents added, person the largest)."""
    import numpy as np  # as in _rows

    owner = np.fromiter((roots.get(int(o), int(o)) for o in a[:, 1]), dtype=np.int64, count=len(a))
    pairs, inv = np.unique(np.stack([a[:, 0], owner], axis=1), axis=0, return_inverse=True)
    inv = inv.ravel()
    docs = np.bincount(inv, weights=a[:, 2], minlength=len(pairs)).astype(np.int64)
    person = np.zeros(len(pairs), np.int64)
    np.maximum.at(person, inv, a[:, 3])
    return pairs[:, 0], pairs[:, 1], docs, person


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _cap_dict(cap):
    return None if cap is None else {"epsilon": cap[0], "delta": cap[1]}


def _release_json(r: dict, st: dict) -> dict:
    ds = st["docsets"].get(r["docset"]) if r["docset"] is not None else None
    return {"id": r["id"], "time": r["time"], "kind": r["kind"], "trainer": r["trainer"], "unit": r["unit"],
            "epsilon": r["epsilon"] if r["guarantee"] else None, "delta": r["delta"] if r["guarantee"] else None,
            "guarantee": r["guarantee"], "model_path": r["model_path"], "note": r["note"],
            "documents": None if ds is None else ds["content"], "events": r["events"]}


def _quantiles(sigs) -> dict:
    """The owners' totals at the 50th, 90th and 99th percentiles and the largest (None where unbounded)."""
    order = sorted(sigs, key=lambda s: s.epsilon)
    n = sum(s.owners for s in order)
    out = {}
    for q in (0.5, 0.9, 0.99, 1.0):
        need, seen = max(1, math.ceil(q * n)), 0
        for s in order:
            seen += s.owners
            if seen >= need:
                out[str(q)] = s.epsilon if math.isfinite(s.epsilon) else None
                break
    return out


def _fmt(x) -> str:
    if x is None or not math.isfinite(x):
        return "no bound"
    return f"{rounded_up(x, 4):g}"


def total_line(total: dict) -> str:
    """The card's and the report's line: ``releases recorded for these documents in ledger L: epsilon = X per person
    (delta = D, the cap's) over N releases``."""
    n = total.get("n_releases", 0)
    eps = total.get("epsilon_total")
    unit = UNITS_NOTE.get(total.get("unit") or "document", "per document")
    what = f"epsilon = {_fmt(eps)} {unit}" if eps is not None else f"no bound {unit} ({total.get('epsilon_method')})"
    d = total.get("delta_total")
    if d:
        what += f" (delta = {d:.3g}, {total.get('delta_source') or 'its delta'})"
    others = [x for x in total.get("datasets") or [] if x != total.get("dataset")]
    also = f"; they overlap dataset{'s' if len(others) > 1 else ''} {', '.join(others)}" if others else ""
    where = total.get("ledger")
    return (f"releases recorded for these documents{f' in ledger {where}' if where else ''}: {what} over {n}"
            f" release{'s' if n != 1 else ''}{also}"
            + ("" if total.get("unit") == "person" else "; no person field: the total is per document"))
