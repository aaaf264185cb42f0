"""The neighbour graph of a round and the thresholds it needs: who masks with whom (a ring, SecAgg+), each
contributor's Shamir evaluation point, and the degree and committee size that survive a plan's dropouts
(:data:`LIVENESS_TARGET`)."""
from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from types import MappingProxyType

from ...errors import ParameterError
from .messages import PROTOCOL


def default_collusion(n: int) -> int:
    """The colluders a round of ``n`` tolerates unless told otherwise: ``ceil(log2 n) + 1`` (13 at 3,000)."""
    return math.ceil(math.log2(max(n, 2))) + 1


LIVENESS_TARGET = 1e-3
"""A plan's degree makes the expected number of contributors whose neighbours drop below the threshold, with F of the
N dropping at random, at most this."""


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def neighbours_short(n: int, dropouts: int, degree: int, threshold: int) -> float:
    """The expected number of the ``n`` contributors left with fewer than ``threshold`` of their ``degree``
    neighbours when ``dropouts`` of the others drop out at random (a hypergeometric tail)."""
    most = degree - threshold          # neighbours that may drop
    if dropouts <= most:
        return 0.0
    total = _log_comb(n - 1, degree)
    tail = sum(math.exp(_log_comb(dropouts, k) + _log_comb(n - 1 - dropouts, degree - k) - total)
               for k in range(most + 1, min(degree, dropouts) + 1) if degree - k <= n - 1 - dropouts)
    return n * tail


def threshold_of(degree: int, collusion: int) -> int:
    """The Shamir threshold, the consistency signatures and the neighbours in a set a contributor requires:
    ``degree // 2 + collusion + 1`` (:mod:`dptopic.protocol.secure_sum.default`'s note)."""
    return degree // 2 + collusion + 1


def committee_threshold(size: int, collusion: int) -> int:
    """``T_c = floor((C + t) / 2) + 1``: the committee's signatures over one set, and its shares of one secret, that a
    step needs (module note of :mod:`dptopic.protocol.secure_sum.committee`: no two sets reach it, and the server never
    holds it for both of a person's secrets, with ``t`` colluders)."""
    return (int(size) + int(collusion)) // 2 + 1


def committee_fails(n: int, dropouts: int, size: int, threshold: int) -> float:
    """The probability that fewer than ``threshold`` of a committee of ``size`` survive when ``dropouts`` of the ``n``
    drop out at random (a hypergeometric tail)."""
    most = size - threshold
    if most < 0:
        return 1.0
    if dropouts <= most:
        return 0.0
    total = _log_comb(n, size)
    return sum(math.exp(_log_comb(dropouts, k) + _log_comb(n - dropouts, size - k) - total)
               for k in range(most + 1, min(size, dropouts) + 1) if size - k <= n - dropouts)


def committee_size(n: int, dropouts: int, collusion: int) -> int:
    """The smallest committee whose threshold (:func:`committee_threshold`) survives ``dropouts`` random dropouts with
    probability at least ``1 -`` :data:`LIVENESS_TARGET`; refused (one line) when no committee of the ``n`` does."""
    for size in range(int(collusion) + 2, int(n) + 1):
        if committee_fails(n, dropouts, size, committee_threshold(size, collusion)) <= LIVENESS_TARGET:
            return size
    raise ParameterError("{dropouts=} with {collusion=} among {n} contributors: no committee survives it (its"
                         " threshold needs more than half of it and the colluders beside): lower {dropouts} or"
                         " {collusion}, or run without a committee.", "dropouts", dropouts,
                         values={"collusion": collusion}, n=n)


def ring_order(ids, round_id: str) -> list:
    """The contributors in their places on the ring: sorted by SHA-256 of the round and their id."""
    return sorted(ids, key=lambda i: hashlib.sha256(f"{PROTOCOL}/ring/{round_id}/{i}".encode()).digest())


class NeighbourGraph(Mapping):
    """``{id: sorted neighbour ids}`` of :func:`neighbour_graph`, each row computed when first read: a contributor
    reads its own row and its neighbours' (``d + 1`` rows of ``d`` ids), not the ``N`` rows of the whole graph; the
    server reads every row. The ring's order (one hash per id, :func:`ring_order`) is computed once, on creation."""

    def __init__(self, ids, round_id: str, degree: int):
        self._ids = tuple(sorted(ids))
        self._degree = int(degree)
        self._complete = self._degree >= len(self._ids) - 1
        self._ring = self._ids if self._complete else tuple(ring_order(self._ids, round_id))
        self._place = {i: k for k, i in enumerate(self._ring)}
        self._rows: dict = {}

    def __getitem__(self, i: str) -> list[str]:
        row = self._rows.get(i)
        if row is None:
            k = self._place[i]      # KeyError for an id not in the round, as a dict's
            ring, n = self._ring, len(self._ring)
            if self._complete:
                row = [j for j in self._ids if j != i]
            else:
                h = self._degree // 2
                row = sorted(ring[(k + o) % n] for o in range(-h, h + 1) if o != 0)
            self._rows[i] = row
        return row

    def __contains__(self, i) -> bool:
        return i in self._place

    def __iter__(self):
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def rows_computed(self) -> int:
        """How many rows have been read (computed) so far."""
        return len(self._rows)


_GRAPH_MEMO: dict = {}


def neighbour_graph(ids, round_id: str, degree: int) -> NeighbourGraph:
    """``{id: sorted neighbour ids}`` (a :class:`NeighbourGraph`, a read-only mapping): each contributor joined to
    the ``degree // 2`` nearest on either side of the ring (:func:`ring_order`), or to everyone else when
    ``degree >= len(ids) - 1``. Memoised per round (a process playing many contributors orders the ring once)."""
    ids = tuple(sorted(ids))
    key = (ids, round_id, int(degree))
    graph = _GRAPH_MEMO.get(key)
    if graph is None:
        graph = NeighbourGraph(ids, round_id, degree)
        if len(_GRAPH_MEMO) > 4:
            _GRAPH_MEMO.clear()
        _GRAPH_MEMO[key] = graph
    return graph


_HOLDERS: dict = {}


def holder_index(ids) -> Mapping[str, int]:
    """Each contributor's Shamir evaluation point: 1 + its place in the sorted ids (read-only; memoised by the ids, in
    their order: every contributor a process plays, and the server, index the same N ids)."""
    key = tuple(ids)
    found = _HOLDERS.get(key)
    if found is None:
        if len(_HOLDERS) >= 4:
            _HOLDERS.clear()
        found = _HOLDERS[key] = MappingProxyType({i: k + 1 for k, i in enumerate(sorted(key))})
    return found


def consistent_signers(graph: dict, u: str, signatures_ok: set, threshold: int) -> bool:
    """Whether ``u``'s neighbours include ``threshold`` of ``signatures_ok`` (those whose consistency signatures over
    one's own view were checked)."""
    return sum(1 for w in graph[u] if w in signatures_ok) >= threshold



def plan_degree(n: int, dropouts: int, collusion: int) -> int:
    """Neighbours per contributor of a round of ``n`` with ``dropouts`` dropping out and ``collusion`` colluders: the
    smallest even degree (at least ``2 t + 2``) whose threshold survives ``dropouts`` random dropouts
    (:data:`LIVENESS_TARGET`), or everyone else; refused (one line) when even everyone else cannot. Memoised."""
    key = ("degree", int(n), int(dropouts), int(collusion))
    if key not in _DEGREES:
        n, F, t = key[1:]
        d = 2 * t + 2
        while d < n - 1 and neighbours_short(n, F, d, threshold_of(d, t)) > LIVENESS_TARGET:
            d += 2
        if d >= n - 1:
            d = n - 1
            if threshold_of(d, t) > d or neighbours_short(n, F, d, threshold_of(d, t)) > LIVENESS_TARGET:
                most = max(0, d - threshold_of(d, t))
                raise ParameterError("{dropouts=} with {collusion=} among {n} contributors: no neighbour graph"
                                     " survives it (each contributor needs {need} of its {d} neighbours, so at"
                                     " most {most} may drop out): lower {dropouts} or {collusion}, or enroll more"
                                     " contributors.", "dropouts", F, values={"collusion": t}, n=n,
                                     need=threshold_of(d, t), d=d, most=most)
        _DEGREES[key] = d
    return _DEGREES[key]


_DEGREES: dict = {}
