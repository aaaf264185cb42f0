"""The secure sum against the adversaries it names: a server that lies, and strangers who try to join.

Each test plays one lie against the real contributor code
(:class:`~dptopic.contributor.secure_sum.default.SecureContributor`) and, where the lie is the server's own, the real
server code for everything else (``service_helpers.InProcessRound``); then it checks that every honest contributor the
lie reached refused at the step named, and that the adversary (the server with everything stored and every answer given,
and the colluders' own secrets) cannot unmask any contributor's upload alone. The two gaps a review found beside the
lies are here too: the noise in a release is the noise the plan promised, and the released model is post-processing of
the released sums alone.
"""
import json

import numpy as np
import pytest

from dptopic.contributor.secure_sum.default import LeftOut, ServerLied
from dptopic.protocol import secure_sum as ss
from dptopic.protocol.secure_sum import shamir
from service_helpers import InProcessRound

pytestmark = pytest.mark.service
pytest.importorskip("cryptography")
pytest.importorskip("starlette")


# ----------------------------------------------------------------------------- what the adversary can unmask
def revealed(answers: list, colluders, rnd) -> dict:
    """``{(sender, kind, phase): {holder index: share bytes}}`` the adversary holds: every answer given, and every
    share a colluder holds (it reveals all)."""
    index = ss.holder_index(rnd.by_id)
    out: dict = {}
    for holder, phase, ans in answers:
        for sender, a in ans.items():
            out.setdefault((sender, a["kind"], phase), {})[index[holder]] = bytes.fromhex(a["share"])
    for cid in colluders:
        c = rnd.by_id[cid]
        for sender, sh in (c.held or {}).items():
            for phase in range(ss.PHASES):
                for kind in ("b", "s"):
                    out.setdefault((sender, kind, phase), {})[index[cid]] = bytes.fromhex(sh[kind][phase])
    return out


def exposed(rnd, answers: list, colluders=()) -> list:
    """The honest contributors whose upload of some step the adversary can unmask alone: it holds (or reconstructs
    from ``T`` shares) their self-mask seed, and the pairwise seed with every neighbour they masked with (from either
    side's key: reconstructed, or a colluder's own)."""
    held = revealed(answers, colluders, rnd)
    T = rnd.plan.threshold

    def has(sender, kind, phase):
        return sender in colluders or len(held.get((sender, kind, phase), {})) >= T

    out = []
    for c in rnd.people:
        if c.me in colluders:
            continue
        for phase in range(ss.PHASES):
            masked = c.st["masked_with"].get(str(phase))
            if masked is None or not has(c.me, "b", phase):
                continue
            if all(has(c.me, "s", phase) or has(v, "s", phase) for v in c.graph[c.me] if v in set(masked)):
                out.append((c.me, phase))
    return out


def stored_answers(rnd) -> list:
    """Every answer the server stored: ``[(holder, phase, answers)]``."""
    return [(who, phase, ans) for phase in range(ss.PHASES) for who, ans in rnd.server._responses(phase).items()]


def test_the_exposure_check_finds_an_upload_the_server_can_unmask(tmp_path):
    """The check can fail: shares enough to rebuild a contributor's self-mask seed and its neighbours' keys expose it
    (what an old contributor revealed under split views)."""
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.run()
    target = rnd.people[0]
    forged = []
    for v in target.graph[target.me]:
        c = rnd.by_id[v]
        forged.append((v, 0, {target.me: {"kind": "b", "share": c.held[target.me]["b"][0]},
                              **{w: {"kind": "s", "share": c.held[w]["s"][0]} for w in c.held if w != target.me}}))
    assert (target.me, 0) in exposed(rnd, forged)
    assert exposed(rnd, stored_answers(rnd)) == []       # the honest round's answers expose no one


# ----------------------------------------------------------------------------- the honest round
def test_an_honest_round_releases_and_exposes_no_one(tmp_path):
    rnd = InProcessRound(tmp_path, n=12, dropouts=2, collusion=1)
    view = rnd.run(drop0={rnd.people[5].me})
    assert view["state"] == "released", view
    assert rnd.refused == {} and exposed(rnd, stored_answers(rnd), colluders={rnd.people[1].me}) == []


# ----------------------------------------------------------------------------- the upload step's members
@pytest.mark.parametrize("lie, why", [("members of one", "fewer than the 50 the noise"),
                                      ("members without the target's neighbours", "fewer than the threshold")])
def test_members_too_few_are_refused_before_masking(tmp_path, lie, why):
    rnd = InProcessRound(tmp_path, n=60, dropouts=10, collusion=1)
    rnd.keys()
    rnd.shares()
    view = rnd.server.view()
    target = rnd.people[0]
    if lie == "members of one":
        told = {**view, "members": [target.me]}
    else:       # as many as the plan allows, but too few of the target's neighbours: its masks would come off
        cut = set(target.graph[target.me][:len(target.graph[target.me]) - rnd.plan.threshold + 1])
        told = {**view, "members": [i for i in view["members"] if i not in cut]}
        assert len(told["members"]) >= rnd.plan.n - rnd.plan.dropouts
    with pytest.raises(ServerLied, match=why):
        target.upload(0, told)
    assert "0" not in target.st["masked_with"] and "upload0" not in target.st["sent"]      # it never masked


# ----------------------------------------------------------------------------- split views at the unmasking
def _split_view_attack(rnd, target, consistent_signers_lie=False):
    """The review's attack: every neighbour of the target is told that the target uploaded and that the target's other
    neighbours dropped; everyone signs what it was shown; the server hands every signature it holds back."""
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    truth = rnd.server.view()["uploaded"]
    mates = set(target.graph[target.me])
    views = {}
    for c in rnd.people:
        if c.me in mates:           # you and the target uploaded; the target's other neighbours dropped
            views[c.me] = sorted(i for i in truth if i not in mates or i == c.me)
        else:
            views[c.me] = list(truth)
    sigs, answers = {}, []
    for c in rnd.people:
        try:
            sigs[c.me] = c.consistency(0, {"uploaded": views[c.me]})["signature"]
        except (ServerLied, LeftOut) as e:
            rnd.refused[c.me] = ("consistency0", str(e))
    for c in rnd.people:
        if c.me in rnd.refused:
            continue
        try:
            answers.append((c.me, 0, c.unmask(0, {"uploaded": views[c.me]}, sigs)["answers"]))
        except (ServerLied, LeftOut) as e:
            rnd.refused[c.me] = ("unmask0", str(e))
    return answers


def test_split_views_at_the_unmasking_are_caught_and_nothing_is_revealed(tmp_path):
    rnd = InProcessRound(tmp_path, n=16, dropouts=6, collusion=1)
    target = rnd.people[0]
    answers = _split_view_attack(rnd, target)
    for v in target.graph[target.me]:           # every neighbour shown a lie refused, at one step or the other
        assert v in rnd.refused, v
        assert rnd.refused[v][0] in ("consistency0", "unmask0")
    assert exposed(rnd, answers) == []
    assert exposed(rnd, answers, colluders={target.graph[target.me][0]}) == []


def test_one_consistent_view_with_the_targets_neighbours_dropped_is_refused(tmp_path):
    """The same lie told to everyone alike (the signatures then agree): too few of the target's neighbours counted
    as uploaded, so the target's upload would nearly stand alone; no one reveals its self-mask seed."""
    rnd = InProcessRound(tmp_path, n=60, dropouts=10, collusion=1)
    target = rnd.people[0]
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    mates = target.graph[target.me]
    cut = set(mates[:len(mates) - rnd.plan.threshold + 1])
    alone = sorted(i for i in rnd.server.view()["uploaded"] if i not in cut)
    assert len(alone) >= rnd.plan.n - rnd.plan.dropouts
    sigs, answers = {}, []
    for c in rnd.people:
        try:
            sigs[c.me] = c.consistency(0, {"uploaded": alone})["signature"]
        except (ServerLied, LeftOut) as e:
            rnd.refused[c.me] = ("consistency0", str(e))
    assert rnd.refused[target.me][0] == "consistency0"         # the target: too few of its neighbours
    for c in rnd.people:
        if c.me in sigs:
            try:
                answers.append((c.me, 0, c.unmask(0, {"uploaded": alone}, sigs)["answers"]))
            except (ServerLied, LeftOut) as e:
                rnd.refused[c.me] = ("unmask0", str(e))
    assert all(v in rnd.refused for v in mates if v not in cut)    # each neighbour refused, at one step or the other
    assert not any(target.me in ans for _, _, ans in answers)
    assert exposed(rnd, answers) == []


# ----------------------------------------------------------------------------- the roster, the plan, the words
@pytest.mark.parametrize("lie", ["missing entry", "stranger", "forged keys", "key given twice"])
def test_a_roster_that_is_not_the_directory_is_refused(tmp_path, lie):
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    roster = rnd.server.roster_view()
    victim = rnd.people[3].me
    bad = {k: dict(v) for k, v in roster.items()}
    if lie == "missing entry":
        del bad[victim]
    elif lie == "stranger":
        bad["9999"] = dict(bad[victim])
    elif lie == "forged keys":                  # the server's own keys in a member's place (it cannot sign them)
        bad[victim]["c"] = ss.public_key(ss.new_private_key()).hex()
    else:
        bad[victim]["s"] = [bad[victim]["c"], bad[victim]["s"][1]]
    if lie == "missing entry":      # a member left out is a no-show to the others (one of the F dropouts): it refuses
        refused = set()
        for c in rnd.people:
            try:
                assert victim not in c.shares_request(bad)["shares"]
            except ServerLied:
                refused.add(c.me)
        assert refused == {victim}
        return
    rnd.say = lambda step, who, what, value: bad if what == "roster" else value
    rnd.shares()
    told = [c.me for c in rnd.people if lie in ("stranger", "key given twice") or victim in c.graph[c.me]]
    assert told and all(rnd.refused.get(i, ("",))[0] == "shares" for i in told)


@pytest.mark.parametrize("max_words", [None, 5])
def test_kept_words_out_of_the_plan_are_refused(tmp_path, max_words):
    """A server that names kept words the plan does not allow (repeated, unsorted, out of the vocabulary, too few,
    not ids, or more than the plan's cap on the words step 1 sums) is refused before anything of step 1 is sent."""
    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1, **({"max_words": max_words} if max_words else {}))
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    rnd.unmask(0)
    view = rnd.server.view()
    assert view["state"] == "upload1"
    c = rnd.people[0]
    lies = [[3, 3, 5], [5, 3], [0, 30], [-1, 2], list(range(31)), [1], ["1", "2"], [True, 2], None]
    if max_words:       # one word more than the cap: distinct ids within the vocabulary, beyond the plan
        lies.append(list(range(max_words + 1)))
    for kept in lies:
        with pytest.raises(ServerLied, match="kept words"):
            c.upload(1, {**view, "kept": kept})
    assert "upload1" not in c.st["sent"]
    c.upload(1, view)       # the server's own words pass


def test_a_changed_plan_is_refused_by_a_contributor_who_accepted_another(tmp_path):
    from dptopic.contributor.secure_sum.default import SecureContributor

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    rnd.keys()
    c = rnd.people[0]
    changed = rnd.config_doc()
    changed["secure_sum"] = ss.SecureSumPlan(9.0, 1e-5, 10, 2, 30, 1).to_dict()
    changed["epsilon"] = 9.0
    with pytest.raises(ServerLied, match="differs from the one you accepted"):
        SecureContributor(changed, c.bow, rnd.invitations[0], state=c.path)
    lower = dict(rnd.config_doc(), epsilon=0.5)          # the top-level epsilon is not the plan's
    with pytest.raises(ServerLied, match="differs from its plan"):
        SecureContributor(lower, c.bow, rnd.invitations[0])


def test_a_plan_other_than_the_invitations_pin_is_refused_by_every_contributor(tmp_path):
    """The operator planned N = 40 with 4 dropping out and 7 colluders (degree 24, threshold 20); a server that
    states no colluder (degree 10, threshold 6) would leave the masks to withstand none. Every invitation pins the
    operator's plan, and each of the 40 refuses the server's before anything is computed or sent; so does each
    for a server that states other dropouts, or runs the committee mode its invitation does not name."""
    from dptopic.contributor.secure_sum.default import SecureContributor, WrongMode

    rnd = InProcessRound(tmp_path, n=40, dropouts=4, collusion=7)
    assert (rnd.plan.degree, rnd.plan.threshold) == (24, 20)
    for stated, why in ((ss.SecureSumPlan(8.0, 1e-5, 40, 4, 30, 0), "collusion 0 \\(your invitation: 7\\)"),
                        (ss.SecureSumPlan(8.0, 1e-5, 40, 6, 30, 7), "dropouts 6 \\(your invitation: 4\\)")):
        config = {**rnd.config_doc(), "secure_sum": stated.to_dict()}
        for c, inv in zip(rnd.people, rnd.invitations):
            with pytest.raises(ServerLied, match="differs from the one your invitation pins: " + why):
                SecureContributor(config, c.bow, inv, state=tmp_path / f"other-{c.me}.json")
    committee = {**rnd.config_doc(), "secure_sum": ss.SecureSumPlan(8.0, 1e-5, 40, 4, 30, 7, committee="auto")
                 .to_dict()}
    with pytest.raises(WrongMode, match="^this is a committee round: "):
        SecureContributor(committee, rnd.people[0].bow, rnd.invitations[0])
    assert not list(tmp_path.glob("other-*.json"))      # nothing written, nothing sent


# ----------------------------------------------------------------------------- strangers, forgeries, replays
def test_strangers_and_forgeries_are_refused_by_the_server(tmp_path):
    from dptopic.service.secure_sum.config import ApiError

    rnd = InProcessRound(tmp_path, n=10, dropouts=2, collusion=1)
    c = rnd.people[0]
    reg = c.registration()
    outsider = ss.new_signing_key()
    cases = [("9999", reg["keys"], ss.sign(outsider, ss.keys_message("round1", "9999", reg["keys"])), "not_enrolled"),
             (c.me, reg["keys"], ss.sign(outsider, ss.keys_message("round1", c.me, reg["keys"])), "bad_signature"),
             (c.me, reg["keys"], ss.sign(rnd.invitations[0]["signing_key"],      # a registration of another round
                                         ss.keys_message("round0", c.me, reg["keys"])), "bad_signature")]
    for who, keys, sig, code in cases:
        with pytest.raises(ApiError) as e:
            rnd.server.post_keys(who, keys, sig)
        assert e.value.code == code
    rnd.keys()
    rnd.shares()
    view = rnd.server.view()
    body, sig = rnd.people[1].upload(0, view)
    for who, b, s in ((rnd.people[2].me, body, sig), (rnd.people[1].me, body[:-4] + b"\0\0\0\0", sig)):
        with pytest.raises(ApiError) as e:          # an upload under another's name, or altered on the way
            rnd.server.post_upload(0, who, b, s)
        assert e.value.code == "bad_signature"
    assert rnd.server.post_upload(0, rnd.people[1].me, body, sig)[0] == 201


def test_forged_and_replayed_consistency_signatures_do_not_count(tmp_path):
    rnd = InProcessRound(tmp_path, n=12, dropouts=2, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    rnd.consistency(0)
    real = rnd.server.signatures(0)
    view = rnd.server.view()
    outsider = ss.new_signing_key()
    msg = ss.consistency_message("round1", 0, view["uploaded"])
    forged = {i: ss.sign(outsider, msg) for i in real}
    for bad in (forged, {}, {i: s for i, s in list(real.items())[:3]}):
        with pytest.raises(ServerLied, match="fewer than"):
            rnd.people[0].unmask(0, view, bad)
    rnd.unmask(0)
    rnd.upload(1)
    rnd.consistency(1)
    view1 = rnd.server.view()
    with pytest.raises(ServerLied, match="fewer than"):        # step 0's signatures replayed at step 1
        rnd.people[0].unmask(1, view1, real)


def test_a_second_set_for_one_step_is_refused_even_after_a_restart(tmp_path):
    from dptopic.contributor.secure_sum.default import SecureContributor

    rnd = InProcessRound(tmp_path, n=10, dropouts=3, collusion=1)
    rnd.keys()
    rnd.shares()
    rnd.upload(0)
    view = rnd.server.view()
    c = rnd.people[0]
    c.consistency(0, view)
    again = SecureContributor(rnd.config_doc(), c.bow, rnd.invitations[0], state=c.path)
    other = [i for i in view["uploaded"] if i != view["uploaded"][-1] or i == c.me]
    with pytest.raises(ServerLied, match="second, different set"):
        again.consistency(0, {"uploaded": other})


# ----------------------------------------------------------------------------- the two gaps
@pytest.mark.parametrize("bits", [None, 64])
def test_the_released_noise_is_the_planned_noise(tmp_path, bits):
    """Every statistic zero: each released sum is pure noise, whose variance must be what the plan calibrated for the
    uploads in it (2 mu_share per share), in the ring the plan chose (32 bits here) and modulo 2^64. A release drawn
    with half the planned noise fails here."""
    n, V = 12, 400
    zero = (np.array([0, 0]), np.zeros(0, np.int64), np.zeros(0, np.int64))
    rnd = InProcessRound(tmp_path, n=n, dropouts=2, collusion=1, vocab=V, bows=[zero] * n, secure=True, bits=bits)
    assert rnd.plan.bits == (32 if bits is None else bits)
    assert rnd.run()["state"] == "released"
    import base64

    from sqlalchemy import select

    from dptopic.service.secure_sum.database import t_state
    with rnd.server.engine.connect() as conn:
        s0 = json.loads(conn.execute(select(t_state.c.value).where(t_state.c.key == "sum0")).scalar())
    noise = np.frombuffer(base64.b64decode(s0["sum"]), dtype="<i8").astype(float)
    planned = 2 * rnd.plan.mu_shares[0] * s0["shares"]
    assert s0["shares"] >= rnd.plan.n - rnd.plan.dropouts
    assert abs(noise.var() / planned - 1) < 5 * np.sqrt(2 / len(noise)), (noise.var(), planned)
    assert abs(noise.mean()) < 5 * np.sqrt(planned / len(noise))
    assert noise.var() > 0.75 * planned        # half the noise is far outside the band above


def test_two_corpora_replaying_the_same_releases_save_byte_identical_models(tmp_path, monkeypatch):
    """The model is post-processing of the two released sums: a round over other people that replays the first
    round's sums releases the same bytes (nothing of the corpus, the server's clock or its randomness enters it)."""
    import dptopic
    from dptopic.service.secure_sum import default as server

    real, sums = server.ss.unmask_sum, {}

    def record(*a, **k):
        sums[a[3]] = out = real(*a, **k)
        return out
    monkeypatch.setattr(server.ss, "unmask_sum", record)
    first = InProcessRound(tmp_path / "a", n=10, dropouts=2, collusion=1, seed=5)
    assert first.run()["state"] == "released"

    def replay(*a, **k):
        real(*a, **k)                   # the second round's own sum, computed and dropped
        return sums[a[3]]
    monkeypatch.setattr(server.ss, "unmask_sum", replay)
    second = InProcessRound(tmp_path / "b", n=10, dropouts=2, collusion=1, seed=6)
    assert second.bows[0][1].tolist() != first.bows[0][1].tolist()
    assert second.run()["state"] == "released"
    a, b = first.server.model_doc(), second.server.model_doc()
    assert a == b
    for rnd, name in ((first, "a"), (second, "b")):
        doc = rnd.server.model_doc()
        dptopic.models.model_from_blobs(doc["model_json"], {k: __import__("base64").b64decode(v)
                                                            for k, v in doc["arrays"].items()}).save(tmp_path / name
                                                                                                     / "model")
    files = sorted(p.name for p in (tmp_path / "a" / "model").iterdir())
    assert files == sorted(p.name for p in (tmp_path / "b" / "model").iterdir())
    for f in files:
        assert (tmp_path / "a" / "model" / f).read_bytes() == (tmp_path / "b" / "model" / f).read_bytes(), f


def test_the_shares_held_for_a_neighbour_are_its_own(tmp_path):
    """A sanity check of the harness: the shares a contributor holds rebuild its neighbour's seed."""
    rnd = InProcessRound(tmp_path, n=8, dropouts=1, collusion=1)
    rnd.run()
    c = rnd.people[0]
    index = ss.holder_index(rnd.by_id)
    shares = {index[v]: bytes.fromhex(rnd.by_id[v].held[c.me]["b"][0]) for v in c.graph[c.me]}
    seed = shamir.reconstruct(shares, rnd.plan.threshold, ss.SEED_BYTES)
    assert ss.seed_commitment("round1", c.me, 0, seed) == rnd.server.roster()[c.me]["b"][0]
