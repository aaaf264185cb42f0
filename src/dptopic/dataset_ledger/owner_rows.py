"""The rows a dataset ledger's totals are computed from: per document set and owner, how many of the owner's documents
it holds. The part of :class:`~dptopic.dataset_ledger.ledger.DatasetLedger` that reads them, ids linked as one person
read as one owner (:mod:`~dptopic.dataset_ledger.linking`), and a document several ids hold charged to each
(:mod:`~dptopic.dataset_ledger.people`)."""
from __future__ import annotations

SHARED_DOCUMENTS = (
    "SELECT d.docset, d.doc, d.owner, d.copies, d.person FROM docs d WHERE d.doc IN (SELECT c.doc FROM (SELECT s.doc"
    " FROM docs s WHERE s.doc IS NOT NULL GROUP BY s.doc HAVING COUNT(DISTINCT s.owner) BETWEEN 2 AND ?) c"
    " LEFT JOIN doc_info i ON i.doc = c.doc WHERE i.tokens IS NULL OR i.tokens >= ?)")
"""The rows of every document held by 2 to ``max_holders`` owners and long enough to count (``min_tokens``; a document
with no length recorded counts). The holders are counted first and only the documents found are looked up in
``doc_info``: a document's length is one value, so this is the filter applied before the grouping, and a ledger
charged per document (one owner a document) joins nothing (10^6 documents: 0.62 -> 0.31 s; 10^7: 6.6 -> 3.1-3.7 s)."""


class OwnerRows:
    """:class:`~dptopic.dataset_ledger.ledger.DatasetLedger`'s reading of owner rows (``_rows``, ``_rows_of``)."""

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
            rows = _rows_array(tx, "SELECT docset, owner, SUM(copies), MAX(person) FROM docs GROUP BY docset, owner")
        elif not roots:
            marks = ", ".join("?" * len(docsets))
            rows = _rows_array(tx, "SELECT docset, owner, SUM(copies), MAX(person) FROM docs WHERE owner IN (SELECT"
                               f" owner FROM docs WHERE docset IN ({marks})) GROUP BY docset, owner",
                               tuple(sorted(docsets)))
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
        a = np.asarray(rows, dtype=np.int64).reshape(-1, 4)
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

    def _sorted_batches(self, tx, state, docsets):
        """:meth:`_rows_of` of ``docsets`` as a first read in ``state``, a batch of :data:`ROWS_AT_ONCE` rows at a time
        in the order of the owner (``(docset, owner, documents, person)`` arrays, for
        :func:`~dptopic.dataset_ledger.totals.sorted_signatures`), or None where the rows are not read as stored: a
        later read (it reads every row once, :meth:`_rows_of`), linked ids (read as their root) or documents several
        ids hold (charged to each). The batches are read lazily: the transaction runs nothing else until the last."""
        import numpy as np  # as in _rows

        if not docsets or state.get("_row_reads") or self._person_roots(tx):
            return None
        if self.version >= 3:
            from .people import ID_LINK_PARAMS  # loads numpy: as in _rows

            p = ID_LINK_PARAMS
            if tx.one(SHARED_DOCUMENTS + " LIMIT 1", (p["max_holders"], p["min_tokens"])) is not None:
                return None
        state["_row_reads"] = 1
        marks = ", ".join("?" * len(docsets))
        sql = ("SELECT docset, owner, SUM(copies), MAX(person) FROM docs WHERE owner IN (SELECT owner FROM docs WHERE"
               f" docset IN ({marks})) GROUP BY owner, docset ORDER BY owner, docset")
        return (np.array(rows, dtype=np.int64).reshape(-1, 4).T
                for rows in tx.batches(sql, ROWS_AT_ONCE, tuple(sorted(docsets))))

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
        shared = tx.all(SHARED_DOCUMENTS, (p["max_holders"], p["min_tokens"]))
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


ROWS_AT_ONCE = 100_000
"""Owner rows turned into an array at a time (:func:`_rows_array`)."""


def _rows_array(tx, sql: str, params=()):
    """The rows of ``sql`` (four integers each) as an int64 array, read :data:`ROWS_AT_ONCE` at a time: a ledger of
    10^7 documents charged per document has 10^7 owner rows, about 1.7 GB as Python tuples at once."""
    import numpy as np  # as in OwnerRows._rows

    parts = [np.array(rows, dtype=np.int64).reshape(-1, 4) for rows in tx.batches(sql, ROWS_AT_ONCE, params)]
    return np.concatenate(parts) if parts else np.zeros((0, 4), np.int64)
