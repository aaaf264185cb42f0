"""A release as the ledger stores it: its events as JSON that re-creates them, its own ``(epsilon, delta)``, and the
total of several releases composed as one owner's."""
from __future__ import annotations

import json
import math

from ..accounting.verify import event_from_description
from ..errors import DPTopicError


def events_to_json(groups) -> str:
    """``[(event, count), ...]`` as the JSON list a report's ``events`` holds (each event's description with its
    count): :func:`events_from_json` re-creates the same events from it."""
    return json.dumps([dict(e.describe(), count=int(n)) for e, n in groups], sort_keys=True, allow_nan=False)


def events_from_json(text: str) -> list:
    """The ``[(event, count), ...]`` a release's JSON describes (:func:`~dptopic.accounting.verify.
    event_from_description` rebuilds each event; its stated epsilon must agree with its parameters)."""
    items = json.loads(text)
    if not isinstance(items, list):
        raise DPTopicError("a release's events are not a list")
    out = []
    for d in items:
        n = d.get("count") if isinstance(d, dict) else None
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise DPTopicError("a release's event has no whole count >= 1")
        out.append((event_from_description(d), n))
    return out


def merge(groups) -> list:
    """``[(event, count), ...]`` with each event once, its counts added."""
    merged: dict = {}
    for e, n in groups:
        merged[e] = merged.get(e, 0) + int(n)
    return list(merged.items())


_GUARANTEES: dict = {}


def release_guarantee(groups, delta: float) -> tuple[float, float]:
    """A release's own ``(epsilon, delta)``: the smallest valid figure of its events at ``delta`` (PLD, RDP, or basic
    composition when its events are pure: then delta is 0), as a fit's report names it."""
    from ..accounting.ledger import (  # loads numpy: 'dptopic budget' opens its ledger without it
        compose_pld,
        compose_rdp,
        pure_basic_bound,
    )

    groups = merge(groups)
    try:
        key = (frozenset(groups), float(delta))
        hash(key)
    except TypeError:       # an event that is not a frozen dataclass: not memoized
        key = None
    if key is not None and key in _GUARANTEES:
        return _GUARANTEES[key]
    pure = pure_basic_bound(groups)
    d_events = sum(getattr(e, "delta_event", 0.0) * n for e, n in groups)
    if d_events >= delta:        # (epsilon, delta) steps whose own deltas add past delta: basic composition at theirs
        out = float(sum(e.epsilon * n for e, n in groups)), float(d_events)
    else:
        tight = min(compose_pld(groups, delta), compose_rdp(groups, delta))
        out = (pure, 0.0) if math.isfinite(pure) and pure <= tight * (1 + 1e-9) else (float(tight), float(delta))
    if key is not None:
        _GUARANTEES[key] = out
    return out


def compose_releases(releases: list, delta: float | None = None) -> dict:
    """The total of ``releases`` (dicts with ``groups``, ``epsilon``, ``delta``, ``guarantee``) composed as one
    owner's, at ``delta`` (None: the first release's that states one): ``epsilon_total`` (None when a release claims
    no guarantee, or when no figure holds at ``delta``); ``epsilon_basic``/``delta_basic``, the releases' own figures
    added."""
    from .totals import compose_at  # loads numpy: 'dptopic budget' opens its ledger without it

    basic = float(sum(r["epsilon"] for r in releases if r["guarantee"]))
    d_basic = float(sum(r["delta"] for r in releases if r["guarantee"]))
    if delta is None:
        delta = next((float(r["delta"]) for r in releases if r["guarantee"] and r["delta"] > 0), 0.0)
    out = {"epsilon_total": 0.0, "delta_total": float(delta), "epsilon_basic": basic, "delta_basic": d_basic,
           "epsilon_method": "no releases"}
    if not releases:
        return out
    without = [r for r in releases if not r["guarantee"]]
    if without:
        out.update(epsilon_total=None, epsilon_basic=None, delta_basic=None,
                   epsilon_method=(f"none: {len(without)} release(s) claim no differential privacy guarantee"
                                   f" (release {without[0]['id']}, {without[0]['trainer']}), so no total bounds"
                                   " what was released"))
        return out
    floor = max((float(r["epsilon"]) for r in releases if float(r["delta"]) <= delta * (1 + 1e-12)), default=0.0)
    eps, method = compose_at([g for r in releases for g in r["groups"]], float(delta), floor)
    out.update(epsilon_total=eps if math.isfinite(eps) else None, epsilon_method=method)
    return out


_PARSED: dict = {}


def parsed(text) -> tuple:
    """A release's events as stored: ``(groups, the JSON list)``, parsed once per process (a ledger read at every
    debit holds the same rows)."""
    if not isinstance(text, str):
        raise DPTopicError("a release's events are not JSON text")
    hit = _PARSED.get(text)
    if hit is None:
        hit = _PARSED[text] = (events_from_json(text), json.loads(text))
        if len(_PARSED) > 4096:
            _PARSED.pop(next(iter(_PARSED)))
    return hit
