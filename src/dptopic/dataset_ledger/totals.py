"""The totals a dataset ledger states: per owner of documents (a person, or a document whose person is not known),
the composition of every release that held any of their documents, each converted to that owner's unit.

An owner is a person when some recorded release gave the person of the document (a person field), else the
document itself. A release touches an owner with ``k`` documents (the owner's documents among the release's); it is
converted to the owner's unit before it is composed:

- a **document-level** release protects one document: an owner with ``k`` of them is a group of ``k`` documents,
  so each of its events is rebuilt with ``k`` times its sensitivity (:mod:`dptopic.accounting.group`, the figures
  the privacy card states as ``group_privacy``; an event that cannot be rebuilt so takes the release's own
  ``(epsilon, delta)`` through the group-privacy bound ``(k eps, k e^((k-1) eps) delta)``, Dwork & Roth 2014,
  Thm 2.2);
- a **user-level** release protects all of one person's documents together: it counts once, whatever ``k``;
- a **word-level** release protects one token: an owner's ``k`` documents of at most ``L`` tokens each (``L`` the
  longest document of the release, which the ledger records with it) are a group of ``k L`` tokens (group privacy
  of the release's own figure).

The events converted are composed at one delta (the cap's, else the first release's, the caller says which), by
privacy loss distributions and by Renyi DP (the smaller), exactly for Gaussian releases of the whole data (Balle &
Wang 2018), and never below the largest own epsilon of a release composed unconverted (each is itself a bound for
the whole, so a total never reads below a model's own epsilon). Owners that share the same releases with the same
``k`` share one total, computed once.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..accounting.group import gaussian_epsilon, scaled_event


@dataclass
class Signature:
    """Owners touched by the same releases with the same group sizes: ``releases`` ``((release id, k), ...)``."""

    releases: tuple
    docsets: frozenset = frozenset()
    owners: int = 0
    persons: int = 0
    epsilon: float | None = None
    method: str = ""
    datasets: set = field(default_factory=set)


def _merge(groups) -> list:
    merged: dict = {}
    for e, n in groups:
        merged[e] = merged.get(e, 0) + int(n)
    return list(merged.items())


def _approx(epsilon: float, delta: float, k: int):
    """A release's own ``(epsilon, delta)`` as one event, for a group of ``k`` (Dwork & Roth 2014, Thm 2.2)."""
    from ..accounting.events import ApproxDPEvent, PureDPEvent  # loads numpy: 'dptopic budget' reads without it

    eps = epsilon * k
    if not math.isfinite(eps) or eps > 500:
        return None
    if delta <= 0:
        return PureDPEvent(eps, label=f"a release's own epsilon, for a group of {k}")
    grown = k * math.exp(min((k - 1) * epsilon, 700.0)) * delta
    if grown >= 1:
        return None
    return ApproxDPEvent(eps, grown, label=f"a release's own (epsilon, delta), for a group of {k}", unit="group")


def group_size(release: dict, k: int) -> int:
    """How many of the release's own units an owner with ``k`` documents in it is (module note)."""
    unit = release["unit"]
    if unit == "user":
        return 1
    if unit == "word":
        return max(1, int(k)) * max(1, int(release.get("max_tokens") or 0)) if release.get("max_tokens") else 0
    return max(1, int(k))


def in_owner_unit(release: dict, k: int):
    """``release``'s events for an owner with ``k`` documents in it, or None when no guarantee covers the owner (a
    release that claims none, or a group too large for any figure)."""
    if not release["guarantee"]:
        return None
    m = group_size(release, k)
    if m == 1:
        return list(release["groups"])
    if m == 0:      # a word-level release whose documents' lengths are not recorded
        return None
    if release["unit"] != "word":
        scaled = [(scaled_event(e, float(m)), n) for e, n in release["groups"]]
        if all(e is not None for e, _ in scaled):
            return scaled
    ev = _approx(float(release["epsilon"]), float(release["delta"]), m)
    return None if ev is None else [(ev, 1)]


def compose_at(groups, delta: float, floor: float = 0.0, enough: float | None = None) -> tuple:
    """``(epsilon, method)`` of ``groups`` at ``delta``: the smallest of PLD, RDP, basic composition of pure events and,
    for Gaussian releases of the whole data alone, the exact figure; ``inf`` when no figure holds at ``delta``. Never
    below ``floor`` (a release's own figure, itself a bound for the whole). ``enough``: a cap to check against: a
    cheap figure (all but PLD) at or below it is returned without composing the privacy loss distributions, which
    could only lower it (a valid bound, not always the smallest)."""
    from ..accounting.events import SubsampledGaussianEvent  # loads numpy: 'dptopic budget' reads without it
    from ..accounting.ledger import compose_pld, compose_rdp, pure_basic_bound  # as above

    groups = _merge(groups)
    if not groups:
        return 0.0, "no releases"
    d_events = sum(getattr(e, "delta_event", 0.0) * n for e, n in groups)
    pure = pure_basic_bound(groups)
    if d_events >= delta and not math.isfinite(pure):
        basic = float(sum(e.epsilon * n for e, n in groups))
        return math.inf, (f"none at delta = {delta:.3g}: the releases' own (epsilon, delta) steps add to delta ="
                          f" {d_events:.3g} (basic composition: epsilon = {basic:.4g} at that delta)")
    cands = []
    if math.isfinite(pure):
        cands.append((pure, "basic composition of pure steps"))
    if 0 < delta < 1:
        if all(isinstance(e, SubsampledGaussianEvent) and e.sampling_rate >= 1 for e, _ in groups):
            # Gaussian releases of the whole data compose to one Gaussian mechanism: its figure is exact, and no
            # accountant can give a smaller one
            mu = math.sqrt(sum(n / e.noise_multiplier ** 2 for e, n in groups))
            exact = gaussian_epsilon(mu, delta)
            if math.isfinite(exact):
                if floor > exact:
                    return float(floor), "a release's own epsilon (the composition's figure is below it)"
                return float(exact), "exact, Gaussian releases of the whole data"
        for fn, name in ((compose_rdp, "RDP"), (compose_pld, "PLD")):
            if fn is compose_pld and enough is not None and cands \
                    and max(floor, min(e for e, _ in cands)) <= enough * (1 + 1e-9):
                break       # already within the cap: the privacy loss distributions could only lower the figure
            try:
                cands.append((fn(groups, delta), name))
            except Exception:       # noqa: BLE001 - an accountant that cannot compose these events: the others do
                pass
            cands = [(e, m) for e, m in cands if e is not None and math.isfinite(e)]
    cands = [(e, m) for e, m in cands if e is not None and math.isfinite(e)]
    if not cands:
        return math.inf, f"none at delta = {delta:.3g}: no accountant bounds these releases together"
    eps, method = min(cands, key=lambda c: c[0])
    if floor > eps:
        return float(floor), "a release's own epsilon (the composition's figure is below it)"
    return float(eps), method


def signatures(rows, releases: list, extra: dict | None = None) -> list:
    """The owners' signatures: ``rows`` is ``(docset, owner, documents, person)`` arrays (one row per owner and
    document set); ``releases`` the ledger's releases (dicts with ``id``, ``docset``, ``dataset``, ``unit``);
    ``extra`` one more (a release being checked, not written). Returns :class:`Signature` objects with ``owners``
    and ``persons`` counted (their totals not yet composed)."""
    import numpy as np  # 'dptopic budget' opens its ledger without numpy

    docset, owner, k, person = (np.asarray(a) for a in rows)
    order = np.lexsort((docset, owner))
    return sorted_signatures([(docset[order], owner[order], k[order], person[order])], releases, extra)


def sorted_signatures(batches, releases: list, extra: dict | None = None) -> list:
    """:func:`signatures` of rows read a batch at a time: ``batches`` yields ``(docset, owner, documents, person)``
    arrays whose rows run in the order of the owner across the batches (an owner's rows may go on into the next
    batch). What is kept between batches is the rows of one owner and, for each distinct signature, its first
    owner's rows and its counts: a ledger of 10^7 owners is read without an array of its owners (the card's total
    at the end of a 10^7-document run held 1 GB of rows, their sorted copies and codes)."""
    import numpy as np  # as in signatures

    firsts: dict = {}       # each owner code: [its first owner's (set, documents) pairs, owners, persons]
    carry = None
    for batch in batches:
        batch = tuple(np.asarray(a, dtype=np.int64) for a in batch)
        if carry is not None:
            batch = tuple(np.concatenate([c, b]) for c, b in zip(carry, batch))
        if not len(batch[1]):
            continue
        last = int(np.searchsorted(batch[1], batch[1][-1], "left"))     # the last owner's rows may go on
        carry = tuple(a[last:] for a in batch)
        _count_owners(tuple(a[:last] for a in batch), firsts)
    if carry is not None:
        _count_owners(carry, firsts)
    by_docset: dict = {}
    datasets_of: dict = {}
    allr = list(releases) + ([extra] if extra is not None else [])
    for r in allr:
        if r.get("docset") is not None:
            by_docset.setdefault(int(r["docset"]), []).append(r)
            datasets_of.setdefault(int(r["docset"]), set()).add(r["dataset"])
    named: dict = {}
    for r in allr:
        if r.get("docset") is None:
            named.setdefault(r["dataset"], []).append(r)
    out: dict = {}
    for code in sorted(firsts):
        pairs, n, p = firsts[code]
        key, dsets = _releases_of(pairs, by_docset, datasets_of, named)
        s = out.get(key)
        if s is None:
            s = out[key] = Signature(key, frozenset(ds for ds, _ in pairs), 0, 0, datasets=set(dsets))
        else:
            s.docsets = s.docsets | frozenset(ds for ds, _ in pairs)
            s.datasets |= dsets
        s.owners += n
        s.persons += p
    return list(out.values())


def _count_owners(rows, firsts: dict) -> None:
    """Add the owners of ``rows`` (sorted by owner; every row of each owner) to ``firsts``
    (:func:`sorted_signatures`): one code an owner (:func:`_owner_codes`), and for a code not seen before, its first
    owner's ``(set, documents)`` pairs; a document of no known person counts once whatever its copies."""
    import numpy as np  # as in signatures

    docset, owner, k, person = rows
    if not len(owner):
        return
    k_eff = np.where(person > 0, k, 1).astype(np.int64)
    starts, sig = _owner_codes(docset, owner, k_eff)
    is_person = np.maximum.reduceat(person, starts) > 0
    uniq, first, counts = np.unique(sig, return_index=True, return_counts=True)
    persons = np.bincount(np.searchsorted(uniq, sig), weights=is_person, minlength=len(uniq)).astype(int)
    ends = np.r_[starts[1:], len(owner)]
    for code, i, n, p in zip(uniq.tolist(), first, counts, persons):
        seen = firsts.get(code)
        if seen is None:
            firsts[code] = [[(int(docset[j]), int(k_eff[j])) for j in range(starts[i], ends[i])], int(n), int(p)]
        else:
            seen[1] += int(n)
            seen[2] += int(p)


def compose_signature(sig: Signature, by_id: dict, delta: float, memo: dict | None = None,
                      enough: float | None = None) -> None:
    """Set ``sig.epsilon`` and ``sig.method``: its releases converted (:func:`in_owner_unit`) and composed at
    ``delta`` (:func:`compose_at`; ``enough``: a cap to check against); ``inf`` when one of them leaves the owner
    without a guarantee."""
    memo = {} if memo is None else memo
    key = (sig.releases, float(delta), enough)
    if key in memo:
        sig.epsilon, sig.method = memo[key]
        return
    groups, floor = [], 0.0
    for rid, k in sig.releases:
        r = by_id[rid]
        conv = in_owner_unit(r, k)
        if conv is None:
            why = ("a release claims no guarantee" if not r["guarantee"] else
                   f"release {rid} ({r['unit']}-level) gives a group of {k} document(s) no bound")
            memo[key] = (math.inf, f"none: {why}")
            sig.epsilon, sig.method = memo[key]
            return
        groups += conv
        if group_size(r, k) == 1 and r["epsilon"] is not None and float(r["delta"]) <= delta * (1 + 1e-12):
            floor = max(floor, float(r["epsilon"]))
    memo[key] = compose_at(groups, delta, floor, enough)
    sig.epsilon, sig.method = memo[key]


def _owner_codes(docset, owner, k_eff):
    """``(starts, codes)``: where each owner's rows start (rows sorted by owner, then set) and a 64-bit code of each
    owner's rows ``(set, documents)``, the same for two owners with the same rows: a sum of a mixed hash of each row
    (splitmix64's finaliser), so that equal signatures are found by one ``np.unique``."""
    import numpy as np  # as in signatures

    with np.errstate(over="ignore"):
        code = (docset.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ (k_eff.astype(np.uint64)
                                                                              * np.uint64(0xC2B2AE3D27D4EB4F))
        code ^= code >> np.uint64(29)
        code *= np.uint64(0xBF58476D1CE4E5B9)
        code ^= code >> np.uint64(32)
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        return starts, np.add.reduceat(code, starts)


def _releases_of(pairs, by_docset: dict, datasets_of: dict, named: dict) -> tuple[tuple, set]:
    """An owner's releases as ``((release id, group size), ...)`` and the datasets they belong to, from the owner's
    ``pairs`` ``(document set, documents)``: each release of a set the owner is in, at the owner's documents in it
    (1 for a user-level release), and each named-only release of those datasets at the owner's most documents in
    any of the dataset's sets."""
    rel = {}
    dsets: set = set()
    for ds, kk in pairs:
        dsets |= datasets_of.get(ds, set())
        for r in by_docset.get(ds, []):
            rel[(r["id"], kk if r["unit"] != "user" else 1)] = 1
    for d in sorted(dsets):
        kk = max((kk for ds, kk in pairs if d in datasets_of.get(ds, set())), default=1)
        for r in named.get(d, []):
            rel[(r["id"], kk if r["unit"] != "user" else 1)] = 1
    return tuple(sorted(rel)), dsets
