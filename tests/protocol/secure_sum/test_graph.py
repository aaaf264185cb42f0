"""``dptopic.protocol.secure_sum.graph``: the neighbour graph, each contributor's rows of it, and the Shamir evaluation
points."""
import hashlib

import pytest

from dptopic.protocol.secure_sum.graph import _GRAPH_MEMO, holder_index, neighbour_graph
from dptopic.protocol.secure_sum.messages import PROTOCOL


def test_the_graph_is_regular_and_symmetric():
    ids = [f"c{i:03d}" for i in range(200)]
    g = neighbour_graph(ids, "r", 20)
    assert all(len(v) == 20 for v in g.values())
    assert all(u in g[v] for u in ids for v in g[u])
    assert neighbour_graph(ids[:10], "r", 20) == {i: [j for j in ids[:10] if j != i] for i in ids[:10]}


def _whole_graph(ids, round_id, degree):
    """The whole graph built row by row from the ring, as the protocol states it (the reference)."""
    ring = sorted(ids, key=lambda i: hashlib.sha256(f"{PROTOCOL}/ring/{round_id}/{i}".encode()).digest())
    n, h = len(ring), degree // 2
    if degree >= n - 1:
        return {i: sorted(j for j in ids if j != i) for i in ids}
    return {i: sorted(ring[(k + o) % n] for o in range(-h, h + 1) if o != 0) for k, i in enumerate(ring)}


@pytest.mark.parametrize("n,degree", [(9, 8), (9, 20), (50, 6), (301, 52)])
def test_one_contributors_rows_equal_the_whole_graphs_rows(n, degree):
    ids = [f"p{i:04d}" for i in range(n)]
    whole = _whole_graph(ids, "round-x", degree)
    _GRAPH_MEMO.clear()
    g = neighbour_graph(list(reversed(ids)), "round-x", degree)
    me = ids[n // 3]
    assert g[me] == whole[me]
    assert all(g[v] == whole[v] for v in g[me])
    assert g.rows_computed() == min(n, len(whole[me]) + 1)     # a contributor's rows only, not the whole graph
    assert dict(g.items()) == whole and len(g) == n and sorted(g) == sorted(ids)
    assert me in g and "stranger" not in g and g.get("stranger") is None
    with pytest.raises(KeyError):
        g["stranger"]


def test_holder_indices_are_the_sorted_places_made_once_and_read_only():
    ids = [f"p{i:03d}" for i in range(40)]
    roster = {i: {} for i in reversed(ids)}
    assert dict(holder_index(roster)) == {i: k + 1 for k, i in enumerate(ids)} == dict(holder_index(ids))
    index = holder_index(roster)
    assert holder_index(roster) is index          # every contributor a process plays indexes the same ids
    with pytest.raises(TypeError):
        index["p000"] = 7
