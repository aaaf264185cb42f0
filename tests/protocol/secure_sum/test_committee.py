"""``dptopic.protocol.secure_sum.committee``: the committee's size and threshold (the quorum argument), its public
choice, the blobs of shares and the committee's unmasking."""
import hashlib
import itertools

import numpy as np
import pytest

from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum import committee as sc
from dptopic.protocol.secure_sum import shamir
from dptopic.protocol.secure_sum.crypto import public_key
from dptopic.protocol.secure_sum.graph import (
    LIVENESS_TARGET,
    committee_fails,
    committee_size,
    committee_threshold,
    neighbour_graph,
)
from dptopic.protocol.secure_sum.messages import PROTOCOL
from dptopic.protocol.secure_sum.plan import SecureSumPlan

pytest.importorskip("cryptography")


def test_the_committee_threshold_keeps_every_set_and_secret_below_what_colluders_can_complete():
    for size, t in itertools.product(range(3, 60), range(0, 20)):
        if size < t + 2:
            continue
        tc = committee_threshold(size, t)
        assert t < tc <= size
        assert 2 * tc - size > t                # two signer quorums share an honest member
        assert 2 * (tc - t) > size - t          # honest members, one secret each, never give both of a pair


def test_the_plan_chooses_the_smallest_committee_that_survives_its_dropouts():
    plan = SecureSumPlan(1.0, 1e-5, 1000, 100, 50, collusion=11, committee="auto")
    c, tc = plan.committee, plan.committee_threshold
    assert tc == (c + 11) // 2 + 1
    assert committee_fails(1000, 100, c, tc) <= LIVENESS_TARGET
    assert committee_fails(1000, 100, c - 1, committee_threshold(c - 1, 11)) > LIVENESS_TARGET
    assert SecureSumPlan(1.0, 1e-5, 1000, 300, 50, collusion=11, committee="auto").committee > c
    assert SecureSumPlan(1.0, 1e-5, 1000, 100, 50, collusion=11).committee == 0      # off by default
    assert "committee" not in SecureSumPlan(1.0, 1e-5, 1000, 100, 50, collusion=11).to_dict()
    assert SecureSumPlan(1.0, 1e-5, 1000, 100, 50, collusion=11, committee=c + 5).committee == c + 5


def test_a_committee_that_cannot_survive_is_refused_in_one_line():
    with pytest.raises(ParameterError, match="committee=13.*would fail"):
        SecureSumPlan(1.0, 1e-5, 1000, 100, 50, collusion=11, committee=13)
    for bad in (-1, 1, "big", 1001, True):
        with pytest.raises(ParameterError, match="committee"):
            SecureSumPlan(1.0, 1e-5, 1000, 100, 50, collusion=11, committee=bad)
    with pytest.raises(ParameterError, match="no committee survives"):
        committee_size(40, 30, 3)


def test_a_stated_committee_is_recomputed_and_a_tampered_one_refused():
    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3, committee="auto")
    assert SecureSumPlan.from_dict(plan.to_dict()) == plan
    assert plan.to_dict()["committee"] == plan.committee
    with pytest.raises(DPTopicError, match="committee_threshold"):
        SecureSumPlan.from_dict({**plan.to_dict(), "committee_threshold": plan.committee_threshold - 1})
    with pytest.raises(DPTopicError):
        SecureSumPlan.from_dict({**plan.to_dict(), "committee": 2})


def test_the_committee_is_a_public_function_of_the_roster_and_the_round():
    ids = [f"c{i:03d}" for i in range(50)]
    a = sc.committee_of(ids, "r1", 7)
    assert a == sc.committee_of(list(reversed(ids)), "r1", 7) and len(a) == 7 and a == sorted(a)
    want = sorted(sorted(ids, key=lambda i: hashlib.sha256(f"{PROTOCOL}/committee/r1/{i}".encode()).digest())[:7])
    assert a == want
    assert sc.committee_of(ids, "r2", 7) != a


def _keys(i):
    def h(tag):
        d = hashlib.sha256(f"{tag}/{i}".encode()).digest()
        return bytes([d[0] & 0x3F]) + d[1:]
    return h("c"), h("s"), h("b")


def test_a_blob_holds_the_members_shares_and_threshold_of_them_give_the_seeds_back():
    ids = [f"c{i:02d}" for i in range(8)]
    sec = {i: _keys(i) for i in ids}
    roster = {i: {"c": public_key(sec[i][0]).hex(), "s": [public_key(sec[i][1]).hex()]} for i in ids}
    committee, tc = ids[:5], 3
    seeds = {v: sc.pair_seed_c(sec["c07"][1], bytes.fromhex(roster[v]["s"][0]), "r", 0, "c07", v) for v in ids[5:7]}
    assert seeds["c05"] == sc.pair_seed_c(sec["c05"][1], bytes.fromhex(roster["c07"]["s"][0]), "r", 0, "c05", "c07")
    blobs = sc.make_blobs("c07", sec["c07"][0], roster, "r", 0, committee, sec["c07"][2], seeds, tc)
    opened = {m: sc.open_blob(m, sec[m][0], roster, "r", 0, "c07", blobs[m], ["c05", "c06"]) for m in committee}
    index = sc.committee_index(committee)
    some = {index[m]: opened[m][0] for m in committee[:tc]}
    assert shamir.reconstruct(some, tc, 32) == sec["c07"][2]
    pair = {index[m]: opened[m][1]["c06"] for m in committee[2:]}
    assert shamir.reconstruct(pair, tc, 32) == seeds["c06"]
    with pytest.raises(DPTopicError, match="does not decrypt"):      # addressed to another member, or another step
        sc.open_blob("c01", sec["c01"][0], roster, "r", 0, "c07", blobs["c00"], ["c05", "c06"])
    with pytest.raises(DPTopicError, match="does not decrypt"):
        sc.open_blob("c00", sec["c00"][0], roster, "r", 1, "c07", blobs["c00"], ["c05", "c06"])


def test_a_set_is_refused_unless_every_uploader_keeps_its_threshold_of_neighbours():
    ids = [f"c{i:02d}" for i in range(12)]
    graph = neighbour_graph(ids, "r", 4)
    assert sc.set_problem(ids, ids, graph, 10, 3) is None
    assert "fewer than the 11" in sc.set_problem(ids[:10], ids, graph, 11, 3)
    assert "not a member" in sc.set_problem(ids, ids[:-1], graph, 10, 3)
    target = ids[0]
    alone = [i for i in ids if i not in graph[target][:2]]
    assert "with 2 of its neighbours" in sc.set_problem(alone, ids, graph, 10, 3)


def test_the_committee_unmasks_the_uploaders_sum_exactly_with_a_neighbour_dropped(tmp_path):
    from committee_helpers import InProcessCommitteeRound

    rnd = InProcessCommitteeRound(tmp_path, n=12, dropouts=2, collusion=1)
    rnd.prekeys()
    rnd.open()
    drop = [i for i in sorted(rnd.by_id) if i not in rnd.committee][:2]
    rnd.upload(0, drop=drop)
    rnd.consistency(0)
    rnd.unmask(0)
    assert rnd.server.state == "upload1" and not rnd.refused
    assert np.array_equal(rnd.server.sums[0], rnd.plain_sum(0))


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 9, 28])
def test_each_members_merkle_path_leads_to_the_signed_root_and_nothing_else_does(size):
    blobs = {f"{k:04d}": sc.blob_digest(f"blob{k}") for k in range(size)}
    root = sc.blobs_root(blobs)
    for m, d in blobs.items():
        path = sc.blob_path(blobs, m)
        assert len(path) <= max(1, size - 1).bit_length()
        assert sc.root_from_path(m, d, path) == root
        assert sc.root_from_path(m, sc.blob_digest("another"), path) != root
        other = next((o for o in blobs if o != m), None)
        if other is not None:
            assert sc.root_from_path(other, d, path) != root
        if path:
            flipped = [["R" if s == "L" else "L", h] for s, h in path]
            assert sc.root_from_path(m, d, flipped) != root
    assert sc.root_from_path("0000", blobs["0000"], [["X", "0" * 64]]) is None
