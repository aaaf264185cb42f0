"""A lying server against the secure sum's committee mode (``dptopic.protocol.secure_sum.committee``): each attack of
the module note, played with the real contributors and server in process; the server learns no one's statistic, and
where it asks for what it must not have, nothing is revealed."""
import pytest

from dptopic.protocol.secure_sum import committee as sc
from dptopic.protocol.secure_sum import crypto as ss

pytest.importorskip("cryptography")
pytest.importorskip("starlette")


def make(tmp_path, **kw):
    from committee_helpers import InProcessCommitteeRound

    return InProcessCommitteeRound(tmp_path, **{"n": 20, "dropouts": 2, "collusion": 1, **kw})


def revealed(rnd, phase: int) -> dict:
    """``{member: answers}`` the honest committee members made for ``phase``."""
    return rnd.revealed(phase)


def exposed(rnd, phase: int, colluders=()) -> list:
    """The uploaders whose upload the server can unmask alone from what the committee revealed (and ``colluders``,
    committee members who give it their blobs' every share): ``b_u`` and every pairwise seed of ``u`` with the
    members it masked with, each with ``T_c`` shares."""
    tc = rnd.plan.committee_threshold
    got = revealed(rnd, phase)
    out = []
    for u, c in sorted(rnd.by_id.items()):
        masked = c.st["masked_with"].get(str(phase))
        if masked is None or u in colluders:
            continue
        b = sum(1 for a in got.values() if u in a) + len(colluders)
        pairs = [sum(1 for a in got.values() for s, x in a.items() if (s == u and v in x["pairs"])
                     or (s == v and u in x["pairs"])) + len(colluders)
                 for v in c.graph[u] if v in masked and v not in colluders]
        if b >= tc and all(p >= tc for p in pairs):
            out.append(u)
    return out


def to_commit(rnd, phase=0, drop=()):
    rnd.prekeys()
    rnd.open()
    rnd.upload(phase, drop=drop)
    assert rnd.server.state == f"consistency{phase}"


def test_the_exposure_check_finds_an_upload_the_server_can_unmask(tmp_path):
    rnd = make(tmp_path)
    to_commit(rnd)
    u = sorted(rnd.by_id)[0]
    up = rnd.server.step["uploaded"]
    members = set(rnd.committee)
    for m in rnd.committee:      # every member answers twice: for the true set, and for one without u
        c = rnd.by_id[m]
        v = rnd.server.committee_view(0, m)
        c.committee_consistency(0, v)
        sigs = {w: ss.sign(rnd.by_id[w].key, sc.consistency_message(rnd.server.round_id, 0, up)) for w in members}
        c.committee_unmask(0, v, sigs, v["uploads"])
    first = revealed(rnd, 0)
    for m in rnd.committee:
        c = rnd.by_id[m]
        c.st["signed"].pop("0")
        c.st["sent"].pop("unmask0")
        v = {**rnd.server.committee_view(0, m), "uploaded": [i for i in up if i != u]}
        c.committee_consistency(0, v)
        sigs = {w: ss.sign(rnd.by_id[w].key, sc.consistency_message(rnd.server.round_id, 0, v["uploaded"]))
                for w in members}
        ans = c.committee_unmask(0, v, sigs, v["uploads"])["answers"]
        c.st["sent"]["unmask0"] = {"answers": {**first[m], **{s: {"b": first[m][s]["b"], "pairs": {
            **first[m][s]["pairs"], **a["pairs"]}} for s, a in ans.items()}}}
    assert exposed(rnd, 0) == [u]


def test_an_honest_round_releases_and_exposes_no_one(tmp_path):
    rnd = make(tmp_path)
    rnd.prekeys()
    rnd.open()
    drop = [i for i in sorted(rnd.by_id) if i not in rnd.committee][:2]
    assert rnd.run_from_open(drop0=drop)["state"] == "released"
    assert exposed(rnd, 0, colluders=rnd.committee[:1]) == [] and exposed(rnd, 1) == []


def test_split_views_among_the_committee_gather_no_quorum_and_nothing_is_revealed(tmp_path):
    rnd = make(tmp_path)
    to_commit(rnd)
    u = sorted(i for i in rnd.by_id if i not in rnd.committee)[0]
    half = set(rnd.committee[: len(rnd.committee) // 2])
    true_set = rnd.server.step["uploaded"]
    other = [i for i in true_set if i != u]      # to the other half: u dropped (its pair seeds from its neighbours)

    def say(step, who, what, value):
        if what in ("view",) and who not in half and step in ("consistency0", "unmask0"):
            return {**value, "uploaded": other}
        if what == "signatures":        # the server hands each half every signature it holds
            return {**value, **split_sigs}
        return value
    split_sigs: dict = {}
    rnd.say = say
    for m in rnd.committee:
        q = rnd.by_id[m].committee_consistency(0, say("consistency0", m, "view", rnd.server.committee_view(0, m)))
        split_sigs[m] = q["signature"]
    for m in rnd.committee:
        v = rnd.server.committee_view(0, m)
        rnd._run(rnd.by_id[m], "unmask0", rnd.by_id[m].committee_unmask, 0, say("unmask0", m, "view", v),
                 say("unmask0", m, "signatures", {}), v["uploads"])
    assert revealed(rnd, 0) == {}
    assert set(rnd.refused) == set(rnd.committee)
    assert all("fewer than the committee's threshold" in why for _, why in rnd.refused.values())


def test_a_committee_other_than_the_public_one_is_refused_before_anything_is_sent(tmp_path):
    rnd = make(tmp_path)
    rnd.prekeys()
    ids = sorted(rnd.by_id)
    chosen = sorted(i for i in ids if i not in rnd.server.committee)[: rnd.plan.committee]   # the server's friends
    rnd.say = lambda step, who, what, value: {**value, "committee": chosen} if what == "config" else value
    rnd.open()
    assert set(rnd.refused) == set(ids)
    assert all("another committee" in why for _, why in rnd.refused.values())
    assert all(c.committee is None and "upload0" not in c.st["sent"] for c in rnd.people)


def test_a_forged_key_for_a_committee_member_is_refused_before_anything_is_encrypted_to_it(tmp_path):
    rnd = make(tmp_path)
    rnd.prekeys()
    m = rnd.server.committee[0]
    server_c = ss.new_private_key()
    forged = {i: dict(e) for i, e in rnd.server.roster().items()}
    forged[m]["c"] = ss.public_key(server_c).hex()          # the server would read every blob addressed to m
    rnd.say = lambda step, who, what, value: {**value, "roster": forged} if what == "config" else value
    rnd.open()
    assert set(rnd.refused) == set(rnd.by_id)
    assert all(c.committee is None for c in rnd.people)


def test_a_server_that_claims_an_uploader_dropped_gets_neither_its_pair_seeds_nor_anything_else(tmp_path):
    rnd = make(tmp_path)
    to_commit(rnd)
    u = sorted(i for i in rnd.by_id if i not in rnd.committee)[0]
    rnd.consistency(0)          # every member signs the true set, with u in it
    assert rnd.server.state == "unmask0"
    liars = set(rnd.committee[: rnd.plan.committee_threshold])
    rnd.say = lambda step, who, what, value: ({**value, "uploaded": [i for i in value["uploaded"] if i != u]}
                                              if what == "view" and who in liars else value)
    rnd.unmask(0)
    assert set(rnd.refused) == liars
    assert all("another set of uploads than the one you signed" in why for _, why in rnd.refused.values())
    answered = revealed(rnd, 0)
    assert not any(u in a["pairs"] for ans in answered.values() for a in ans.values())
    assert exposed(rnd, 0, colluders=rnd.committee[-1:]) == []


def test_a_set_in_which_an_uploader_keeps_fewer_than_its_threshold_of_neighbours_is_refused(tmp_path):
    rnd = make(tmp_path, n=100, dropouts=10)
    rnd.prekeys()
    rnd.open()
    view = rnd.server.view()
    for m in rnd.committee:
        rnd.server.post_upload(0, m, *rnd.by_id[m].committee_upload(0, view))
    u = sorted(i for i in rnd.by_id if i not in rnd.committee)[0]
    c = rnd.by_id[rnd.committee[0]]
    cut = [w for w in c.graph[u] if w not in rnd.committee][: rnd.plan.degree - rnd.plan.threshold + 1]
    assert len(cut) == rnd.plan.degree - rnd.plan.threshold + 1 <= rnd.plan.dropouts
    members_of_one = [i for i in sorted(rnd.by_id) if i not in cut]
    for m in rnd.committee:
        rnd._run(rnd.by_id[m], "consistency0", rnd.by_id[m].committee_consistency, 0,
                 {**view, "uploaded": members_of_one})
    assert set(rnd.refused) == set(rnd.committee)
    assert all(f"counts {u!r} as uploaded with" in why for _, why in rnd.refused.values())
    assert all("0" not in rnd.by_id[m].st["signed"] for m in rnd.committee)


def test_a_replaced_blob_or_header_is_skipped_by_the_member_and_reveals_nothing_for_it(tmp_path):
    rnd = make(tmp_path)
    to_commit(rnd)
    rnd.consistency(0)
    ids = rnd.server.step["uploaded"]
    u, w = [i for i in ids if i not in rnd.committee][:2]
    m = rnd.committee[0]
    v = rnd.server.committee_view(0, m)
    uploads = dict(v["uploads"])
    uploads[u] = {**uploads[u], "pairs": "0" * 64}                     # commitments the server chose
    uploads[w] = {**uploads[w], "blob": v["uploads"][u]["blob"]}         # another uploader's blob
    ans = rnd.by_id[m].committee_unmask(0, v, rnd.server.signatures(0), uploads)["answers"]
    assert u not in ans and w not in ans and len(ans) == len(ids) - 2
