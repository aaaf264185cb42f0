"""The dataset ledger as terminal text (``dptopic budget show``, ``cap`` and ``plan``): each dataset's releases, its
total (in its unit, at its delta, and which delta), the datasets its documents overlap, its cap; every person's
total; what a planned run would add.

Light at import, as :mod:`.terminal`: the accountants and rich are read inside the functions. Names a user gave
(datasets) are printed as text, never read as markup.
"""
from __future__ import annotations

import math

from .terminal import esc, print_table

OUTSIDE = "outside the guarantee"
UNIT_WORDS = {"person": "per person", "document": "per document"}


def epsilon_figure(x) -> str:
    """A ledger's epsilon as printed: rounded up at 4 significant digits; "no bound" for none."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "no bound"
    from ..accounting.verify import rounded_up  # the accountants: not at the command line's start-up

    return f"{rounded_up(x, 4):g}"


def print_ledger(data: dict, where, console) -> None:
    """``DatasetLedger.show()``'s ``data`` (read from the ledger ``where``): per dataset, its total (and basic
    composition's), its cap, the datasets it overlaps, and a table of its releases."""
    from rich.table import Table  # rich's tables: not at the command line's start-up

    _g = epsilon_figure
    console.print(f"ledger: {where}")
    if not data["datasets"]:
        console.print("no dataset has a release yet")
    pc = data.get("person_cap")
    if pc:
        console.print(f"every person capped at epsilon = {pc['epsilon']:g}, delta = {pc['delta']:g}")
    for d in data["datasets"]:
        cap = d["cap"]
        unit = UNIT_WORDS.get(d.get("unit"), "per document")
        head = (f"[bold]{esc(d['name'])}[/]: epsilon = {_g(d['epsilon_total'])} {unit} at delta ="
                f" {d['delta_total']:.3g} ({esc(d.get('delta_source', ''))}) over {d.get('n_releases', 0)}"
                f" release(s) ({esc(d['epsilon_method'])}); basic composition: epsilon = {_g(d['epsilon_basic'])},"
                f" delta = {_g(d['delta_basic'])}")
        if cap is not None:
            head += f"; cap epsilon = {cap['epsilon']:g}, delta = {cap['delta']:g}"
        console.print(head, markup=True)    # rich markup, the names in it escaped
        if d.get("unit") != "person":
            console.print("  no person field: the total is per document (a person who wrote k documents spends"
                          " more: give the person field, docs/budget.md)")
        if len(d.get("units") or []) > 1:
            console.print(f"  its releases protect different units ({', '.join(d['units'])}): each is converted to"
                          f" the total's unit ({unit}) by group privacy before they are composed")
        for o in d.get("overlaps") or []:
            console.print(f"  shares documents with {o['dataset']} ({o['shared_owners']:,}"
                          f" {'people or documents' if d.get('unit') == 'person' else 'documents'}: an exact count of"
                          f" the private data, {OUTSIDE}): their releases count in this total")
        t = Table(show_header=True)
        for col in ("id", "time", "kind", "trainer", "unit", "epsilon", "delta", "model"):
            t.add_column(col, overflow="fold")
        for r in d["releases"]:
            t.add_row(str(r["id"]), r["time"], r["kind"], r["trainer"], r["unit"],
                      _g(r["epsilon"]) if r["guarantee"] else "no guarantee",
                      "" if r["delta"] is None else f"{r['delta']:.3g}", r["model_path"] or "")
        print_table(console, t)


def print_persons(data: dict, where, console) -> None:
    """``DatasetLedger.person_summary()``: the largest person total, the distribution and the person cap."""
    _g = epsilon_figure
    console.print(f"ledger: {where}")
    if not data["owners"]:
        console.print("no release records its documents yet")
        return
    big = data["largest"]
    names = ", ".join(str(x) for x in big["datasets"]) or "no dataset"
    console.print(f"largest total of a person: epsilon = {_g(big['epsilon'])} at delta = {data['delta']:.3g}"
                  f" ({data['delta_source']}; {big['method']}), over {len(big['releases'])} release(s)"
                  f" of {names}")
    q = data["quantiles"]
    console.print(f"people: {data['persons']:,}, and {data['owners'] - data['persons']:,} documents whose person no"
                  f" release gave ({OUTSIDE}: exact counts of the private data)")
    linked = data.get("linked") or {}
    if linked.get("ids"):
        why = linked["why"]
        parts = [f"{why[k]:,} by {text}" for k, text in (("documents", "the documents they share"),
                                                        ("case", "the same id in another case or form"),
                                                        ("alias", "an alias given")) if why.get(k)]
        console.print(f"ids linked to another id as one person: {linked['ids']:,} ({', '.join(parts)}); each person"
                      " counted once, with every release of each of their ids (docs/budget.md)")
    console.print("distribution of the totals: median " + _g(q.get("0.5")) + ", 90% " + _g(q.get("0.9")) + ", 99% "
                  + _g(q.get("0.99")) + ", largest " + _g(q.get("1.0")))
    for s in data["distribution"]:
        groups = ", ".join(f"release {x['release']}" + (f" as a group of {x['group']}" if x["group"] > 1 else "")
                           for x in s["releases"])
        console.print(f"  epsilon = {_g(s['epsilon'])}: {s['owners']:,} ({groups})", markup=False)
    pc = data.get("person_cap")
    if pc:
        console.print(f"every person capped at epsilon = {pc['epsilon']:g}, delta = {pc['delta']:g}")


def print_plan(data: dict, console) -> None:
    """``dptopic budget plan``: the release planned and, per total it touches, now, after and what would remain."""
    _g = epsilon_figure
    corpus = "owners_charged_before" in data        # planned on a corpus: read, but nothing written
    console.print(f"ledger: {data['ledger']}; nothing was {'written' if corpus else 'read'} or spent")
    console.print(f"{data['trainer']} on dataset {data['dataset']}: epsilon = {_g(data['epsilon'])}"
                  f" {data['unit']}-level at delta = {data['delta']:.3g} ({data['how']})")
    if corpus:
        who = "people or documents"
        console.print(f"  of the {data['owners']:,} {who} it reads, {data['owners_charged_before']:,} were charged"
                      f" before ({OUTSIDE}: exact counts of the private data)"
                      + ("; a dataset the ledger has not recorded" if data.get("new_dataset") else ""))
    for c in data["caps"]:
        scope = f"dataset {esc(c['dataset'])}" if c["scope"] == "dataset" else "every person"
        cap = c["cap"]
        line = (f"  {scope}: {_g(c['epsilon_now'])} now, {_g(c['epsilon_after'])} after"
                f" ({UNIT_WORDS.get(c['unit'], c['unit'])}, delta {c['delta']:.3g})")
        if cap is not None:
            line += f"; cap {cap['epsilon']:g}: " + ("[bold red]refused[/]" if c["refused"] else
                                                    f"{_g(c['remaining'])} would remain")
        console.print(line, markup=True)    # rich markup, the dataset's name escaped
    if data["refused"]:
        console.print("the run would be refused before it drew any noise")


def cap_lines(dataset: str, epsilon: float, delta: float, where, total: dict) -> list:
    """What ``dptopic budget cap`` says of a cap just set: the cap, the dataset's spend so far (``total``, the
    ledger's :meth:`~dptopic.dataset_ledger.ledger.DatasetLedger.total`), and a warning when it already spent more
    than the cap."""
    unit = UNIT_WORDS.get(total.get("unit"), "per document")
    lines = [f"dataset {esc(repr(dataset))} capped at epsilon = {epsilon:g}, delta = {delta:g} (ledger {esc(where)});"
             f" spent so far: epsilon = {epsilon_figure(total['epsilon_total'])} {unit} over {total['n_releases']}"
             " release(s)"]
    spent = total["epsilon_total"]
    if total["n_releases"] and (spent is None or spent > epsilon):
        lines.append("[bold yellow]warning[/]: the dataset has already spent more than this cap: every further release"
                     " will be refused")
    return lines


def person_cap_lines(cap, where, summary) -> list:
    """What ``dptopic budget cap`` says of the cap per person: the cap (or none), and a warning when a person is
    past it."""
    if cap is None:
        return [f"no cap per person (ledger {esc(where)})"]
    lines = [f"every person capped at epsilon = {cap[0]:g}, delta = {cap[1]:g} (ledger {esc(where)})"]
    big = (summary or {}).get("largest")
    if big is not None:
        lines[0] += f"; the largest total so far: epsilon = {epsilon_figure(big['epsilon'])}"
        if big["epsilon"] is None or big["epsilon"] > cap[0]:
            lines.append("[bold yellow]warning[/]: a person has already spent more than this cap: every release that"
                         " holds their documents will be refused")
    return lines
