"""The privacy calculators' answers (:mod:`dptopic.accounting.calculators`) as lines of text, as ``dptopic privacy``
prints them (rich markup: ``[dim]...[/]``).

An epsilon (an upper bound) is shown rounded up, a largest allowed value (an eps_L within a budget, a clip for an
eps_I) rounded down, at 6 significant digits: using the figure shown never spends more than the one computed."""
from __future__ import annotations

from ..accounting.verify import rounded_up
from .terminal import plural


def up(x: float) -> str:
    """An epsilon (an upper bound) at 6 significant digits, rounded up: never below the one computed."""
    return f"{rounded_up(x, 6):.6g}"


def down(x: float) -> str:
    """A largest allowed value at 6 significant digits, rounded down: using the figure shown never spends more than
    asked."""
    return f"{rounded_up(x, 6, down=True):.6g}"


def inherent_lines(b: dict) -> list:
    """:func:`~dptopic.accounting.calculators.inherent_bounds`'s figures."""
    return [f"Prop. 2, per related token and iteration: eps = 2 log(1 + 1/beta) = {up(b['related'])}",
            f"Thm 1 (static), per iteration: eps_i <= {up(b['per_iteration'])}",
            f"Thm 2 (static), over {plural(b['n_iter'], 'iteration')}: eps <= {up(b['total'])}",
            "[dim]These bounds use the private counts (see docs/privacy.md): monitoring numbers, not DP guarantees.[/]"]


def hdp_lines(h: dict, total: str = "epsilon", component: str = "epsilon_laplace") -> tuple:
    """``(lines, warnings)`` of :func:`~dptopic.accounting.calculators.hdp_calculator`'s figures; ``total`` and
    ``component`` name how a budget is given (the calculator's parameters, or a command line's flags), when none
    was."""
    beta, T, delta = h["beta"], h["n_iter"], h["delta"]
    # a clip computed from eps_I is shown rounded down (a smaller clip gives a smaller eps_I), an eps_I computed from
    # the clip rounded up; one given is shown as given
    shown_c = f"{h['clip']:.6g}" if h["clip_given"] else down(h["clip"])
    shown_i = up(h["epsilon_inherent"]) if h["clip_given"] else f"{h['epsilon_inherent']:.6g}"
    lines = [f"beta={beta:g}: clip C = {shown_c}  <->  eps_I = 2 log(C/beta + 1) = {shown_i} per iteration"]
    if "split" in h:
        s = h["split"]
        lines.append(f"budget (eps={s['epsilon']:g}, delta={delta:g}) over T={T}: largest eps_L ="
                     f" {down(s['epsilon_laplace'])} per iteration (solved against the card's accountant); paper's basic total T(eps_L+eps_I) ="
                     f" {up(s['basic'])}")
    elif "composed" in h:
        c = h["composed"]
        lines.append(f"T={T}, eps_L={c['epsilon_laplace']:g}: basic eps = {up(c['basic'])}, tight eps({delta:g}) ="
                     f" {up(c['pld'])} (the card's figure: the least of PLD, RDP and basic; discrete Laplace noise,"
                     " train's default)")
    else:
        lines.append(f"[dim]give {total} to split a total budget, or {component} to compose one per"
                     " iteration.[/]")
    warnings = []
    if "small_clip" in h:
        warnings.append(f"a clip C = {h['clip']:.3g} under one token clamps every topic's count of a word below 1, so"
                        f" the topics can hardly differ; C >= 1 needs eps_I >= {up(h['small_clip'])} at beta={beta:g}"
                        " (docs/privacy.md).")
    return lines, warnings


def compose_lines(report: dict, unit: str, delta: float) -> list:
    """:func:`~dptopic.accounting.calculators.compose`'s figures, per ``unit``."""
    return [f"per {unit}:",
            f"basic composition: eps = {up(report['epsilon_basic'])} (delta = 0)",
            f"tight PLD:         eps = {up(report['epsilon_pld'])} (delta = {delta:g})",
            f"RDP cross-check:   eps = {up(report['epsilon_rdp'])} (delta = {delta:g})"]


def fed_report_words_lines(f: dict) -> list:
    """:func:`~dptopic.accounting.calculators.fed_report_words`'s answer, with how to use it from Python."""
    n, eps, V = f["report_words"], f["epsilon"], f["vocab_size"]
    who = f"{plural(f['users'], 'user')} x {plural(f['entries'], 'entry', 'entries')}"
    return [f"FedLDA (exclusion none), eps={eps:g} per entry, {who}: reports over the first {n:,} of {V:,} words (those"
            f" whose share the reports can tell from zero at z={f['z']:g}; the vocabulary listed most common first)",
            f"  {f['subset_size']} word(s) per report; randomization variance summed over the words: {f['variance']:.3g}"
            f" (every word: {f['variance_every_word']:.3g}; sampling alone: 1)",
            f"  FedLDA(report_words={n}) or report_words='auto' (docs/fedlda.md)"]
