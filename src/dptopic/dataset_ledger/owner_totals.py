"""Totals and caps: the part of :class:`~dptopic.dataset_ledger.ledger.DatasetLedger` that composes each owner's
releases (:mod:`~dptopic.dataset_ledger.totals`) into a dataset's total, and refuses a release that would take a
total past its cap before any noise is drawn."""
from __future__ import annotations

import math

from ..accounting.verify import rounded_up
from ..errors import BudgetExceededError, DPTopicError

UNITS_NOTE = {"person": "per person", "document": "per document"}


class OwnerTotals:
    """:class:`~dptopic.dataset_ledger.ledger.DatasetLedger`'s totals (``total``, ``release_total``) and the cap
    check of a debit (``_check_caps``)."""

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
        most documents in any of them. A first read of the sets' owners, as stored, is counted a batch at a time
        (:meth:`_sorted_batches`): no array of the owners is made."""
        batches = None if virtual else self._sorted_batches(tx, state, docsets)
        if batches is not None:
            from .totals import sorted_signatures  # loads numpy: 'dptopic budget' opens its ledger without it

            return sorted_signatures(batches, state["releases"], extra)
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


def _cap_dict(cap):
    return None if cap is None else {"epsilon": cap[0], "delta": cap[1]}


def _fmt(x) -> str:
    if x is None or not math.isfinite(x):
        return "no bound"
    return f"{rounded_up(x, 4):g}"
