"""A round in committee cohorts attacked by its own servers (``dptopic.protocol.secure_sum.cohorts``'s note, "A
committee in each
cohort"): the real cohort servers (:class:`~dptopic.service.secure_sum.committee_cohorts.CommitteeCohortRound`),
coordinator and contributors in process, driven by the committee mode's harness (``committee_helpers``). Each lie that
would let the operator read one cohort's total is refused: a set of uploads short of ``t + 1`` of the cohort's delegates
(really short, or shown so to a quorum of the committee), and a delegate counted in the bridge but not in its cohort."""
import pytest

from dptopic.protocol import secure_sum as ss
from dptopic.protocol.secure_sum import committee as sc

pytest.importorskip("cryptography")
pytest.importorskip("starlette")
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")


def cohorts(tmp_path):
    from committee_helpers import InProcessCommitteeRound

    return InProcessCommitteeRound.cohorts(tmp_path, n=40, cohort_size=20, dropouts=4, collusion=1)


def test_a_cohort_whose_operator_drops_its_delegates_uploads_is_refused_by_its_committee(tmp_path):
    """The operator takes every upload of cohort 0 but those of all its delegates save ``t``: the set of uploads is
    large enough and every uploader has its threshold of neighbours in it, yet its total would be padded by the
    colluder's pad alone. Every committee member shown it refuses to sign; nothing is revealed, the step fails."""
    _, rounds = cohorts(tmp_path)
    rnd = rounds[0]
    rnd.prekeys()
    rnd.open()
    t = int(rnd.cohort_plan.collusion)
    rnd.upload(0, drop=rnd.delegates[t:])
    assert rnd.server.state == "consistency0"
    shown = [m for m in rnd.committee if m in rnd.server.step["uploaded"]]
    rnd.consistency(0)
    rnd.unmask(0)
    assert rnd.revealed(0) == {}
    assert set(rnd.refused) == set(shown)
    assert all(step == "consistency0" and "of the cohort's" in why and "delegates" in why
               for step, why in rnd.refused.values())
    assert rnd.server.state == "failed" and 0 not in rnd.server.padded


def test_a_quorum_of_the_committee_shown_a_set_short_of_delegates_reveals_nothing(tmp_path):
    """Every upload is in, but the operator shows ``T_c`` committee members (a quorum) a set without all but ``t`` of
    the cohort's delegates, and hands them their own signatures over it: with the check, none signs and none reveals;
    without it they would sign, gather ``T_c`` signatures and reveal shares for a total padded by a colluder's pad."""
    _, rounds = cohorts(tmp_path)
    rnd = rounds[0]
    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    t, tc = int(rnd.cohort_plan.collusion), rnd.plan.committee_threshold
    short = [u for u in rnd.server.step["uploaded"] if u not in rnd.delegates[t:]]
    quorum = [m for m in rnd.committee if m not in rnd.delegates[t:]][:tc]
    assert len(quorum) == tc
    sigs = {}
    for m in quorum:
        view = {**rnd.server.committee_view(0, m), "uploaded": short}
        q = rnd._run(rnd.by_id[m], "consistency0", rnd.by_id[m].committee_consistency, 0, view)
        if q is not None:
            sigs[m] = q["signature"]
    for m in quorum:
        view = {**rnd.server.committee_view(0, m), "uploaded": short}
        rnd._run(rnd.by_id[m], "unmask0", rnd.by_id[m].committee_unmask, 0, view, sigs, view["uploads"])
    assert sigs == {} and rnd.revealed(0) == {}
    assert set(rnd.refused) == set(quorum)
    assert all("delegates" in why for _, why in rnd.refused.values())
    # the signatures a quorum would have given are over the short set: what the server would unmask with
    assert all(not ss.verify(bytes.fromhex(rnd.by_id[m].members[m]), s, sc.consistency_message(
        rnd.server.round_id, 0, rnd.server.step["uploaded"])) for m, s in sigs.items())


def test_a_delegate_gone_from_its_cohort_but_counted_in_the_bridge_fails_the_round_with_nothing_read(tmp_path):
    """A delegate of cohort 0 does not upload there (the operator dropped it, or it left), yet the bridge's sum
    counts its pad: the cohort's total is then off by that pad, and the coordinator refuses to combine (the
    delegates on the two sides differ); no sum is read, no round moves to step 1, every round fails."""
    server, rounds = cohorts(tmp_path)
    pads = []
    for c, rnd in enumerate(rounds):
        rnd.prekeys()
        rnd.open()
        gone = rnd.delegates[:1] if c == 0 else []
        rnd.upload(0, drop=gone)
        rnd.consistency(0)
        rnd.unmask(0)
        assert 0 in rnd.server.padded
        pads += [rnd.by_id[d].pads.vector(0, rnd.plan.vocab_size + 1, rnd.plan.bits) for d in rnd.delegates]
    bits = rounds[0].plan.bits
    server.bridge.padded[0] = (ss.from_ring(ss.ring_sum(pads, bits), bits),
                               sorted(f"c{c}-{d}" for c, rnd in enumerate(rounds) for d in rnd.delegates))
    server.advance()
    assert "differ" in (server.coordinator.failed() or "")
    assert server.coordinator.sums == {}
    assert all(r.state == "failed" for r in server.rounds)
