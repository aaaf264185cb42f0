"""What a dataset ledger shows: per dataset its releases, total and overlaps, per person the totals and their
distribution, and the one line a card and a report print (``dptopic budget show``; docs/budget.md)."""
from __future__ import annotations

import math

from ..errors import ParameterError
from .identity import check_person, keyed, person_text
from .owner_totals import UNITS_NOTE, _cap_dict, _fmt


class Views:
    """:class:`~dptopic.dataset_ledger.ledger.DatasetLedger`'s views: ``show``, ``person_summary``,
    ``person_total``."""

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
