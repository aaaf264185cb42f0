"""The dataset ledger as terminal text (``dptopic budget show``): each dataset's releases, their total and cap.

Light at import, as :mod:`.terminal`: the accountants and rich are read inside the functions.
"""
from __future__ import annotations

import math

from .terminal import esc, print_table


def epsilon_figure(x) -> str:
    """A ledger's epsilon as printed: rounded up at 4 significant digits; "none" for no figure."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "none"
    from ..accounting.verify import rounded_up  # the accountants: not at the command line's start-up

    return f"{rounded_up(x, 4):g}"


def print_ledger(data: dict, path, console) -> None:
    """``DatasetLedger.show()``'s ``data`` (read from the ledger at ``path``): per dataset, its total (and basic
    composition's), its cap, and a table of its releases."""
    from rich.table import Table  # rich's tables: not at the command line's start-up

    _g = epsilon_figure
    console.print(f"ledger: {path}")
    if not data["datasets"]:
        console.print("no dataset has a release yet")
    for d in data["datasets"]:
        cap = d["cap"]
        head = (f"[bold]{esc(d['name'])}[/]: epsilon = {_g(d['epsilon_total'])} at delta = {d['delta_total']:.3g}"
                f" over {len(d['releases'])} release(s) ({esc(d['epsilon_method'])}); basic composition: epsilon ="
                f" {_g(d['epsilon_basic'])}, delta = {_g(d['delta_basic'])}")
        if cap is not None:
            head += f"; cap epsilon = {cap['epsilon']:g}, delta = {cap['delta']:g}"
        console.print(head, markup=True)
        if len(d["units"]) > 1:
            console.print(f"  note: the releases protect different units ({', '.join(d['units'])}): the total adds"
                          " figures stated per different units")
        t = Table(show_header=True)
        for col in ("id", "time", "kind", "trainer", "unit", "epsilon", "delta", "model"):
            t.add_column(col, overflow="fold")
        for r in d["releases"]:
            t.add_row(str(r["id"]), r["time"], r["kind"], r["trainer"], r["unit"],
                      _g(r["epsilon"]) if r["guarantee"] else "no guarantee",
                      "" if r["delta"] is None else f"{r['delta']:.3g}", r["model_path"] or "")
        print_table(console, t)


def cap_lines(dataset: str, epsilon: float, delta: float, path, total: dict) -> list:
    """What ``dptopic budget cap`` says of a cap just set: the cap, the dataset's spend so far (``total``, the
    ledger's :meth:`~dptopic.accounting.dataset_ledger.DatasetLedger.total`), and a warning when it already spent more
    than the cap."""
    lines = [f"dataset {esc(repr(dataset))} capped at epsilon = {epsilon:g}, delta = {delta:g} (ledger {esc(path)}); spent so far:"
             f" epsilon = {epsilon_figure(total['epsilon_total'])} over {total['n_releases']} release(s)"]
    spent = total["epsilon_total"]
    if total["n_releases"] and (spent is None or spent > epsilon):
        lines.append("[bold yellow]warning[/]: the dataset has already spent more than this cap: every further release"
                     " will be refused")
    return lines
