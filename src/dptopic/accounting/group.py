"""What a guarantee stated for one unit gives a group of units, and a unit replaced rather than added or removed,
computed from a privacy report's own events with the accountants that composed them (never k x epsilon).

A group of ``k`` units (k people, or one person filed under k ids) moves every released statistic by at most ``k``
times the sensitivity of one, so each event is rebuilt with its sensitivity scaled by ``k`` (a Gaussian's noise
multiplier divided by ``k``, a Laplace release's changed cells multiplied by ``k``, a pure step's epsilon multiplied by
``k``, an (epsilon, delta) step given the group-privacy bound ``(k eps, k e^((k-1) eps) delta)``, Dwork & Roth 2014,
Thm 2.2 and its approximate form) and the events are composed again at the same delta. Where every event is a
Gaussian release of the whole data (sampling rate 1), the composition is exactly a Gaussian mechanism, and its
epsilon(delta) is solved exactly (Balle & Wang 2018, Thm 8). The group's epsilon at the same delta is above
``k x epsilon``: delta's share of the guarantee grows with ``k``.

Replacing one unit by another is one removal and one addition: under add/remove calibration the released statistics
move by ``sqrt(2)`` at most where they are sums of non-negative contributions of norm at most 1 (``|a - b|^2 <= |a|^2
+ |b|^2`` when ``a . b >= 0``), so the Gaussian releases are rebuilt with their sensitivity scaled by ``sqrt(2)``;
other events take the group of 2.
"""
from __future__ import annotations

import dataclasses
import math

from ..errors import DPTopicError
from .events import ApproxDPEvent, LaplaceEvent, PureDPEvent, SubsampledGaussianEvent
from .ledger import PrivacyLedger
from .verify import event_from_description

GROUP_SIZES = (2, 10)
"""The group sizes a privacy card states (``group_privacy``)."""


def scaled_event(ev, factor: float, gaussian_only_factor: float | None = None):
    """``ev`` with its sensitivity scaled by ``factor`` (see the module's text); None where it cannot be."""
    if isinstance(ev, SubsampledGaussianEvent):
        if ev.sampling_rate < 1:        # a subsampled group is not a scaled sensitivity
            return None
        return dataclasses.replace(ev, noise_multiplier=ev.noise_multiplier / factor)
    k = gaussian_only_factor if gaussian_only_factor is not None else factor
    if not float(k).is_integer():
        return None
    k = int(k)
    if isinstance(ev, LaplaceEvent):
        return dataclasses.replace(ev, changes=tuple(c * k for c in ev.changes))
    if isinstance(ev, PureDPEvent):
        return dataclasses.replace(ev, eps=ev.eps * k)
    if isinstance(ev, ApproxDPEvent):
        return dataclasses.replace(ev, eps=ev.eps * k, delta=min(1.0, k * math.exp((k - 1) * ev.eps) * ev.delta))
    return None


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon(delta) of a Gaussian mechanism whose sensitivity is ``mu`` noise standard deviations
    (Balle & Wang 2018, Thm 8): the smallest epsilon with ``Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) <=
    delta``."""
    from scipy.special import log_ndtr  # scipy.special: only the Gaussian's group figure needs it

    def excess(eps):
        a = log_ndtr(-eps / mu + mu / 2)
        b = eps + log_ndtr(-eps / mu - mu / 2)
        return (math.exp(a) - math.exp(b)) - delta if a > b else -delta

    if excess(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while excess(hi) > 0:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def scaled_epsilon(report: dict, factor: float, delta: float, replacement: bool = False) -> float | None:
    """The epsilon at ``delta`` of the report's events with every release's sensitivity scaled by ``factor`` (a
    group of ``factor`` units; ``replacement``: ``factor`` is sqrt(2) for the Gaussian releases and 2 for the
    others); None where some event cannot be scaled or the accountants cannot compose the result."""
    events = report.get("events")
    if not isinstance(events, list) or not events or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        return None
    vocab = report.get("vocabulary_selection")
    descriptions = list(events) + ([vocab] if isinstance(vocab, dict) and isinstance(report.get("topic_model"), dict)
                                   else [])
    try:
        groups = [(event_from_description(d), int(d.get("count", 1))) for d in descriptions]
    except (DPTopicError, TypeError, ValueError, AttributeError):
        return None
    if all(isinstance(e, SubsampledGaussianEvent) and e.sampling_rate >= 1 for e, _ in groups):
        mu = factor * math.sqrt(sum(n / e.noise_multiplier ** 2 for e, n in groups))
        return gaussian_epsilon(mu, float(delta))
    ledger = PrivacyLedger(unit=str(report.get("unit", "")), relation=str(report.get("neighbouring_relation", "")))
    try:
        for e, n in groups:
            scaled = scaled_event(e, factor, 2 if replacement else None)
            if scaled is None:
                return None
            ledger.spend(scaled, n)
        eps = ledger.report(float(delta)).get("epsilon")
    except DPTopicError:
        return None
    return float(eps) if isinstance(eps, (int, float)) and math.isfinite(eps) else None


def group_privacy(report: dict, delta: float, sizes=GROUP_SIZES) -> dict | None:
    """``{"2": eps_2, "10": eps_10}``: the epsilon at ``delta`` that protects a group of that many units, from the
    report's events; None where it cannot be computed."""
    out = {}
    for k in sizes:
        eps = scaled_epsilon(report, float(k), delta)
        if eps is None:
            return None
        out[str(k)] = eps
    return out


def replacement_epsilon(report: dict, delta: float) -> float | None:
    """The epsilon at ``delta`` that protects one unit replaced by another (one removed, one added), from the
    report's events; None where it cannot be computed."""
    return scaled_epsilon(report, math.sqrt(2.0), delta, replacement=True)
