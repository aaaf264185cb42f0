"""Reading a dataset ledger, every figure checked: the part of :class:`~dptopic.dataset_ledger.ledger.DatasetLedger`
that reads its releases, caps and document sets in one transaction and refuses a damaged ledger in one line naming
the row (docs/budget.md: a total is always recomputed from the events, never read from a stored figure)."""
from __future__ import annotations

import math

from ..errors import DPTopicError
from .releases import parsed, release_guarantee
from .store import LedgerFileError

PERSON_CAP = "person"
"""The ``caps`` row of the cap on every person's (every owner's) total."""


class CheckedState:
    """:class:`~dptopic.dataset_ledger.ledger.DatasetLedger`'s reading of its whole state (``_state``), checked."""

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
            if damage is None and self.version >= 4:
                from .key_blocks import blocks_damage  # why: with links_damage, past 'dptopic budget's numpy-free reads

                damage = blocks_damage(tx)
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


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
