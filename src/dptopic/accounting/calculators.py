"""The privacy calculators: the figures ``dptopic privacy inherent``, ``hdp``, ``compose`` and ``fed-report-words``
print, for any front door. They read no data: counts, budgets and sizes the caller states.

Each checks every input before it computes (a bad one is a :class:`~dptopic.errors.ParameterError` naming the
parameter), and returns its figures as a dict; :mod:`dptopic.reporting.calculators` writes them as text."""
from __future__ import annotations

import math

import numpy as np

from ..errors import ParameterError
from .budget import hdp_total_epsilon, solve_hdp_epsilon_laplace
from .events import EPSILON_MAX, LaplaceEvent, PureDPEvent
from .fedlda import check_informative, report_words_for, subset_report_variance, subset_size
from .inherent import eps_iter_static, eps_related, hdp_clip_bound, hdp_epsilon_inherent
from .ledger import MAX_COUNT, PrivacyLedger
from .units import HDP_DEFAULT_BETA


def inherent_bounds(n_t: int, max_n_tprime: int, beta: float = 0.01, cmax: float | None = None, n_iter: int = 1) -> dict:
    """Plain collapsed Gibbs sampling's inherent privacy in its static form (Zhao et al. 2020, Prop. 2, Thm 1-2), for a
    word ``t`` of total count ``n_t`` whose most frequent other word has ``max_n_tprime``. These bounds read the
    private counts (docs/privacy.md): monitoring figures, not a guarantee.

    Returns ``{"related", "per_iteration", "total", "n_iter"}``: Prop. 2's loss per related token and iteration,
    Thm 1's bound per iteration and Thm 2's over ``n_iter``."""
    most = max(n_t, max_n_tprime)
    if cmax is not None and cmax > most:
        # the bound's first term is 2 max_k |log((n_k^t' + beta) / (n_k^t + beta))|, so cmax must bound the count of
        # t and of another word t' in any one topic: neither exceeds its word's total, hence the larger of the two
        raise ParameterError("{cmax=:g} is larger than both {n_t=} and {max_n_tprime=}: it bounds the count of t or of"
                             " another word in one topic, which never exceeds that word's total; give {cmax} at most"
                             " {most} or leave it out.", "cmax", cmax, values={"n_t": n_t, "max_n_tprime": max_n_tprime},
                             most=most)
    per = eps_iter_static(np.array([n_t, max_n_tprime], float), beta, 0, cmax=cmax)
    return {"related": eps_related(beta), "per_iteration": per, "total": n_iter * per, "n_iter": n_iter}


def hdp_calculator(beta: float = HDP_DEFAULT_BETA, clip: float | None = None, epsilon_inherent: float | None = None,
                   epsilon: float | None = None, epsilon_laplace: float | None = None, delta: float = 1e-5,
                   n_iter: int = 100) -> dict:
    """HDP-LDA's per-iteration inherent loss ``eps_I = 2 log(C/beta + 1)`` for a clip ``C`` (Zhao et al. 2020, Thm 3),
    or the clip of an ``epsilon_inherent``; then, given a total ``epsilon``, the largest Laplace ``eps_L`` per
    iteration it allows over ``n_iter`` iterations (against the accountant the card states its total by, discrete
    Laplace noise), or, given ``epsilon_laplace``, the total of ``n_iter`` iterations (basic and tight). One question at a time: exactly one of ``clip`` and
    ``epsilon_inherent``, at most one of ``epsilon`` and ``epsilon_laplace``.

    Returns ``{"beta", "clip", "epsilon_inherent", "clip_given", "n_iter", "delta"}``, with ``"split"`` (the largest
    ``epsilon_laplace`` and the paper's basic total) or ``"composed"`` (``"basic"`` and ``"pld"``), and
    ``"small_clip"`` (the eps_I that a clip of one token needs) when the clip is under one token: every topic's
    count of a word is then clamped below 1, so the topics can hardly differ (as ``HDPLDA.fit`` warns)."""
    if (clip is None) == (epsilon_inherent is None):
        raise ParameterError("give exactly one of {clip} or {epsilon_inherent}.", "clip", clip,
                             others=("epsilon_inherent",))
    if epsilon is not None and epsilon_laplace is not None:
        raise ParameterError("give at most one of {epsilon} (a total budget to split) or {epsilon_laplace} (a"
                             " per-iteration eps_L to compose); the calculator answers one question at a time.",
                             "epsilon", epsilon, others=("epsilon_laplace",))
    eps_i = epsilon_inherent if clip is None else hdp_epsilon_inherent(clip, beta)
    c = clip if clip is not None else hdp_clip_bound(epsilon_inherent, beta)
    out = {"beta": beta, "clip": c, "epsilon_inherent": eps_i, "clip_given": clip is not None, "n_iter": n_iter,
           "delta": delta}
    if epsilon is not None:
        eps_l = solve_hdp_epsilon_laplace(epsilon, delta, n_iter, eps_i)
        out["split"] = {"epsilon": epsilon, "epsilon_laplace": eps_l, "basic": n_iter * (eps_l + eps_i)}
    elif epsilon_laplace is not None:
        tight = hdp_total_epsilon(epsilon_laplace, eps_i, n_iter, delta, discretization=1e-4)
        out["composed"] = {"epsilon_laplace": epsilon_laplace, "basic": n_iter * (epsilon_laplace + eps_i),
                           "pld": tight}
    if c < 1:
        out["small_clip"] = hdp_epsilon_inherent(1.0, beta)
    return out


def _pairs(parameter: str, pairs, zero_ok: bool) -> list:
    """The ``(epsilon, count)`` pairs of ``parameter``, as numbers (strings are read), each checked."""
    out = []
    for eps, n in pairs or ():
        fields = {"eps": eps, "n": n}
        try:
            e = float(eps)
        except (TypeError, ValueError):
            e = None
        if e is None or not (0 <= e <= EPSILON_MAX) or (e == 0 and not zero_ok):
            rng = f"{'[' if zero_ok else '('}0, {EPSILON_MAX:g}]"
            raise ParameterError("{parameter} pair ({eps}, {n}): its epsilon must be a number in {rng}.", parameter,
                                 (eps, n), key="accounting.calculators.pairs",
                                 rng=rng, **fields)
        if parameter == "laplace" and not math.isfinite(1.0 / e):
            # a subnormal epsilon: its Laplace scale 1/epsilon is not a finite number (the mechanism takes none)
            raise ParameterError("{parameter} pair ({eps}, {n}): the epsilon is so small that the Laplace scale 1/epsilon"
                                 " overflows; give an epsilon of at least 1e-308 (one that small adds next to nothing).",
                                 parameter, (eps, n), key="accounting.calculators.pairs.2", **fields)
        try:
            k = int(n)
        except (TypeError, ValueError):
            k = None
        if k is None or k != float(n) or not 1 <= k <= MAX_COUNT:
            raise ParameterError("{parameter} pair ({eps}, {n}): its count must be a whole number in [1, {most:g}].",
                                 parameter, (eps, n), key="accounting.calculators.pairs.3", most=MAX_COUNT, **fields)
        out.append((e, k))
    return out


def compose(laplace=(), pure=(), delta: float = 1e-5, unit: str = "word") -> dict:
    """Compose ``laplace`` (pairs ``(epsilon, count)``: count Laplace mechanisms of sensitivity 1 at epsilon each) and
    ``pure`` (count pure epsilon-DP steps) on a :class:`~dptopic.accounting.ledger.PrivacyLedger` per ``unit``, and
    return its report at ``delta`` (``epsilon_basic``, ``epsilon_pld``, ``epsilon_rdp`` ...)."""
    laplace, pure = _pairs("laplace", laplace, False), _pairs("pure", pure, True)
    led = PrivacyLedger(unit=unit)
    for eps, n in laplace:
        led.spend(LaplaceEvent(scale=1.0 / eps), n)
    for eps, n in pure:
        led.spend(PureDPEvent(eps), n)
    if led.n_events == 0:
        raise ParameterError("nothing to compose: give {laplace} and/or {pure} pairs (epsilon, count).", "laplace",
                             key="accounting.calculators.compose",
                             others=("pure",))
    return led.report(delta)


def fed_report_words(epsilon: float, vocab_size: int, users: int, entries: int = 512, z: float = 1.0) -> dict:
    """How many of the vocabulary's first words FedLDA's reports should range over (exclusion ``none``): those whose
    share the reports of ``users`` x ``entries`` entries at ``epsilon`` per entry can tell from zero at ``z`` standard
    errors (docs/fedlda.md). Refused, as FedLDA refuses it, when a report would carry nothing.

    Returns ``{"report_words", "subset_size", "variance", "variance_every_word"}``: the words, the words per report,
    the randomization variance summed over the words, and the same over every word."""
    check_informative(epsilon, vocab_size)  # the reports would carry nothing: FedLDA refuses such an epsilon
    n = report_words_for(epsilon, vocab_size, users * entries, z)
    check_informative(epsilon, n)
    return {"epsilon": epsilon, "vocab_size": vocab_size, "users": users, "entries": entries, "z": z,
            "report_words": n, "subset_size": subset_size(epsilon, n),
            "variance": n * subset_report_variance(epsilon, n),
            "variance_every_word": vocab_size * subset_report_variance(epsilon, vocab_size)}
