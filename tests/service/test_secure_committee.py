"""``dptopic.service.secure_committee``: a committee-mode round, in process, from the prekeys to the release, and what
the server refuses."""
import base64

import numpy as np
import pytest

from dptopic.protocol import secure_sum as ss
from dptopic.service.secure_sum import ApiError

pytest.importorskip("cryptography")
pytest.importorskip("starlette")


@pytest.fixture
def rnd(tmp_path):
    from committee_helpers import InProcessCommitteeRound

    return InProcessCommitteeRound(tmp_path, n=20, dropouts=2, collusion=1)


def test_a_round_with_a_tenth_dropping_releases_the_uploaders_exact_sums_in_three_requests_each(rnd):
    rnd.prekeys()
    rnd.open()
    ordinary = [i for i in sorted(rnd.by_id) if i not in rnd.committee]
    drop = ordinary[:2]
    view = rnd.run_from_open(drop0=drop)
    assert view["state"] == "released" and not rnd.refused, (view, rnd.refused)
    assert rnd.server.uploaded[0] == sorted(set(rnd.by_id) - set(drop))
    for phase in (0, 1):
        assert np.array_equal(rnd.server.sums[phase], rnd.plain_sum(phase))
    assert rnd.requests[ordinary[3]] == ["GET /v1/config", "POST /v1/secure/upload/0", "POST /v1/secure/upload/1"]
    member = rnd.committee[0]
    assert rnd.requests[member] == ["GET /v1/config", "POST /v1/secure/upload/0", "POST /v1/secure/consistency/0",
                                    "POST /v1/secure/unmask/0", "POST /v1/secure/upload/1",
                                    "POST /v1/secure/consistency/1", "POST /v1/secure/unmask/1"]
    assert (rnd.plan.committee, rnd.plan.committee_threshold) == (6, 4)


def test_a_strangers_or_a_forged_prekey_bundle_is_refused(rnd, tmp_path):
    from dptopic.protocol.enrollment import make_invitations, read_invitation

    make_invitations(tmp_path / "other.key", 3, tmp_path / "other", round_id="round1")
    stranger = read_invitation(sorted((tmp_path / "other").glob("invitation-*.json"))[0])
    c = rnd.people[0]
    bundle = c.prekey()
    forged = {**bundle, "signature": ss.sign(stranger["signing_key"], ss.keys_message("round1", c.me,
                                                                                       bundle["keys"]))}
    with pytest.raises(ApiError, match="not signed by"):
        rnd.server.post_prekeys(c.me, [forged])
    with pytest.raises(ApiError, match="no invitation"):
        rnd.server.post_prekeys("9999", [bundle])
    with pytest.raises(ApiError, match="exactly one bundle"):
        rnd.server.post_prekeys(c.me, [{**bundle, "round_id": "round2"}])
    assert rnd.server.post_prekeys(c.me, [bundle]) == {"registered": True}
    assert rnd.server.post_prekeys(c.me, [bundle]) == {"replayed": True}
    assert rnd.server.state == "keys"


def test_a_replaced_blob_or_body_is_refused_and_changes_nothing(rnd):
    rnd.prekeys()
    rnd.open()
    c = rnd.people[0]
    body, header, blobs, sig = c.committee_upload(0, rnd.server.view())
    m = rnd.committee[0]
    other = rnd.people[1].committee_upload(0, rnd.server.view())[2][m]
    with pytest.raises(ApiError, match="blobs are not the ones"):
        rnd.server.post_upload(0, c.me, body, header, {**blobs, m: other}, sig)
    with pytest.raises(ApiError, match="not signed by"):
        rnd.server.post_upload(0, c.me, body, {**header, "blobs": {**header["blobs"], m: "0" * 64}}, blobs, sig)
    flipped = bytearray(body)
    flipped[0] ^= 1
    with pytest.raises(ApiError, match="not signed by"):
        rnd.server.post_upload(0, c.me, bytes(flipped), header, blobs, sig)
    assert rnd.server._running is None
    assert rnd.server.post_upload(0, c.me, body, header, blobs, sig) == {"stored": True}
    assert rnd.server.post_upload(0, c.me, body, header, blobs, sig) == {"replayed": True}
    with pytest.raises(ApiError, match="not 'consistency0'"):
        rnd.server.post_consistency(0, m, "00" * 64)


def test_too_few_uploads_fail_the_round_with_nothing_revealed(rnd):
    rnd.prekeys()
    rnd.open()
    rnd.upload(0, drop=sorted(rnd.by_id)[:3])
    assert rnd.server.state == "failed" and "fewer than N - F" in rnd.server.reason


def test_the_body_is_the_plans_ring_and_each_upload_carries_one_blob_per_member(rnd):
    rnd.prekeys()
    rnd.open()
    body, header, blobs, _ = rnd.people[0].committee_upload(0, rnd.server.view())
    assert len(body) == rnd.plan.upload_bytes(rnd.plan.vocab_size + 1)
    assert sorted(blobs) == rnd.committee == sorted(header["blobs"])
    neighbours = rnd.people[0].graph[rnd.people[0].me]
    assert sorted(header["pairs"]) == sorted(neighbours)
    assert {len(base64.b64decode(b)) for b in blobs.values()} == {12 + 16 + 32 * (1 + len(neighbours))}
