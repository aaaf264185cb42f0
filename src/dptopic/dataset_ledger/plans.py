"""Plans: what a release would do to every total it touches, read from the ledger in a transaction that writes
nothing (``dptopic budget plan``; docs/budget.md)."""
from __future__ import annotations

import math

from ..errors import DPTopicError, ParameterError
from .identity import Documents
from .names import valid_name
from .owner_totals import _cap_dict
from .releases import release_guarantee


class Plans:
    """:class:`~dptopic.dataset_ledger.ledger.DatasetLedger`'s plans: of a recorded dataset (``plan``) and of
    documents it may never have seen (``plan_documents``)."""

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
            rows = self._dataset_rows(tx, st, touched, new, memo, d, virtual=docsets)
            refused = any(r["refused"] for r in rows)
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
            rows = self._dataset_rows(tx, st, touched, new, memo, d)
            refused = any(r["refused"] for r in rows)
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

    def _dataset_rows(self, tx, st, touched, new: dict, memo: dict, delta: float, virtual=None) -> list:
        """A plan's row for each dataset in ``touched``: its total now and with ``new`` (a release not written;
        ``virtual``: the document sets it would read, for a recorded dataset), at its cap's delta, else at the delta
        of its first release, else (a dataset not recorded yet) at ``delta``; what would remain under its cap, and
        whether the cap would refuse it."""
        rows = []
        for name in sorted(touched):
            cap = st["caps"].get(name)
            recorded = name in st["datasets"]
            dd = cap[1] if cap else (self._delta_of(st, name)[0] if recorded else delta)
            before = self._dataset_total(tx, st, name, memo, delta=dd) if recorded else None
            after = self._dataset_total(tx, st, name, memo, extra=new, delta=dd, virtual=virtual)
            e_after = after["epsilon_total"]
            over = cap is not None and (e_after is None or e_after > cap[0] * (1 + 1e-9))
            rows.append({"scope": "dataset", "dataset": name, "unit": after["unit"], "delta": dd,
                         "epsilon_now": before["epsilon_total"] if before else 0.0, "epsilon_after": e_after,
                         "cap": _cap_dict(cap), "remaining": None if cap is None or e_after is None
                         else cap[0] - e_after, "refused": over})
        return rows
