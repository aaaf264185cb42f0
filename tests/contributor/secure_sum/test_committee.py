"""``dptopic.contributor.secure_sum.committee``: a committee-mode contributor's prekey, its one upload per sum (made
once, resumed from its state file), and what only a committee member does."""
import pytest

from dptopic.contributor.secure_sum.committee import CommitteeContributor
from dptopic.contributor.secure_sum.default import SecureContributor
from dptopic.errors import DPTopicError
from dptopic.protocol.secure_sum import default as ss
from dptopic.protocol.secure_sum.crypto import verify
from dptopic.protocol.secure_sum.plan import SecureSumPlan

pytest.importorskip("cryptography")
pytest.importorskip("starlette")


@pytest.fixture
def rnd(tmp_path):
    from committee_helpers import InProcessCommitteeRound

    return InProcessCommitteeRound(tmp_path, n=12, dropouts=1, collusion=1)


def test_the_prekey_is_the_rounds_keys_message_signed_with_the_invitation(rnd):
    c = rnd.people[0]
    b = c.prekey()
    assert b["round_id"] == rnd.server.round_id and b["contributor"] == c.me
    assert verify(bytes.fromhex(c.members[c.me]), b["signature"], ss.keys_message(c.round_id, c.me, b["keys"]))


def test_a_contributor_of_the_other_mode_is_refused_in_one_line(rnd):
    plain = {**rnd.config, "secure_sum": SecureSumPlan(8.0, 1e-5, 12, 1, 30, 1).to_dict()}
    with pytest.raises(DPTopicError, match="without a committee: take part with SecureContributor"):
        CommitteeContributor(plain, rnd.people[0].bow, {**rnd.invitations[0], "committee": False})
    with pytest.raises(DPTopicError, match="^this is a round without a committee: .* ask the round's operator"):
        CommitteeContributor(plain, rnd.people[0].bow, rnd.invitations[0])      # the invitation names the mode
    with pytest.raises(DPTopicError, match="with a committee: take part with CommitteeContributor"):
        SecureContributor(rnd.config, rnd.people[0].bow, rnd.invitations[0])


def test_an_upload_is_made_once_and_a_resumed_contributor_sends_the_same_bytes(rnd, tmp_path):
    rnd.prekeys()
    rnd.open()
    c = rnd.people[0]
    first = c.committee_upload(0, rnd.server.view())
    again = CommitteeContributor(rnd.config, c.bow, rnd.invitations[0], state=tmp_path / f"state-{c.me}.json")
    again.check_round(rnd.server.roster(), rnd.server.committee)
    assert again.committee_upload(0, rnd.server.view()) == first
    with pytest.raises(Exception, match="other members"):
        view = rnd.server.view()
        again.committee_upload(0, {**view, "members": [i for i in view["members"] if i != view["members"][-1]
                                                       or i == c.me]})


def test_only_a_committee_member_signs_or_answers_and_the_secrets_go_at_the_end(rnd, tmp_path):
    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    outsider = next(c for c in rnd.people if c.me not in rnd.committee)
    with pytest.raises(DPTopicError, match="not on the round's committee"):
        outsider.committee_consistency(0, rnd.server.view())
    outsider.finish("released")
    assert outsider.st["secrets"] is None
    inv = next(i for i in rnd.invitations if i["contributor"] == outsider.me)
    later = CommitteeContributor(rnd.config, outsider.bow, inv, state=tmp_path / f"state-{outsider.me}.json")
    with pytest.raises(DPTopicError, match="round is over"):
        later.committee_upload(1, rnd.server.view())


def test_the_first_request_is_the_keys_and_a_refused_plan_sends_nothing_of_the_data(rnd, tmp_path):
    """take_part_committee's first request carries public keys only (signed, for the invitation's round); the answer's
    configuration is checked before the data is read: a plan above max_epsilon leaves after that one request."""
    import json

    from dptopic.contributor.secure_sum.client import take_part_committee

    class Stub:
        keep_alive = False

        def __init__(self):
            self.sent = []

        def request(self, method, path, body=None, headers=None):
            self.sent.append((method, path.split("?")[0], json.loads(body)))
            return 200, {}, json.dumps({"registered": True, "config": rnd.config, "view": {"state": "keys"}}).encode()

    stub, read = Stub(), []
    with pytest.raises(DPTopicError, match="above your max_epsilon"):
        take_part_committee("http://x", lambda config: read.append(1), rnd.invitations[0], tmp_path / "s.json",
                            client=stub, max_epsilon=1.0)
    assert read == [] and [(m, p) for m, p, _ in stub.sent] == [("POST", "/v1/secure/prekeys")]
    doc = stub.sent[0][2]
    (bundle,) = doc["bundles"]
    assert doc["contributor"] == rnd.invitations[0]["contributor"] and set(bundle) == {"round_id", "keys", "signature"}
    assert set(bundle["keys"]) == {"c", "s", "b"}
    kept = json.loads((tmp_path / "s.json").read_text())      # the keys were kept before they were sent
    assert kept["plan"] is None and kept["secrets"] is not None
