"""``dptopic.service.secure_sum.committee``: a committee-mode round, in process, from the prekeys to the release, and
what the server refuses."""
import base64
import contextlib
import json

import numpy as np
import pytest

from dptopic.protocol.secure_sum import committee as sc
from dptopic.protocol.secure_sum import default as ss
from dptopic.protocol.secure_sum.crypto import sign
from dptopic.protocol.secure_sum.plan import SecureSumPlan
from dptopic.service.secure_sum.config import ApiError

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
    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_invitation

    make_invitations(tmp_path / "other.key", 3, tmp_path / "other", round_id="round1", collusion=0)
    stranger = read_invitation(sorted((tmp_path / "other").glob("invitation-*.json"))[0])
    c = rnd.people[0]
    bundle = c.prekey()
    forged = {**bundle, "signature": sign(stranger["signing_key"], ss.keys_message("round1", c.me,
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


@contextlib.contextmanager
def _live_committee_round(tmp_path, n: int):
    """A committee-mode round of ``n`` invited contributors (V = 30, K = 3) served by uvicorn on 127.0.0.1: yields
    ``(app, url)``."""
    import uvicorn

    from dptopic.protocol.secure_sum.enrollment import make_invitations, read_directory
    from dptopic.service.secure_sum.committee_app import create_committee_app
    from service_helpers import free_port, start_uvicorn, stop_uvicorn

    make_invitations(tmp_path / "enroll.key", n, tmp_path / "inv", round_id="round1", committee=True, dropouts=1,
                     collusion=1)
    plan = SecureSumPlan(8.0, 1e-5, n, 1, 30, 1, committee="auto")
    app = create_committee_app(plan, read_directory(tmp_path / "inv" / "directory.json"),
                               [f"w{i:03d}" for i in range(30)], 3, admin_token="t" * 24)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, log_level="warning",
                                           access_log=False))
    thread = start_uvicorn(server, "the committee server")
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        stop_uvicorn(server, thread)


def test_over_http_an_ordinary_contributor_makes_three_requests_and_a_committee_member_seven(tmp_path):
    """Every request of every contributor in a live committee-mode round (one contributor late by a second and a
    half, one whose keys were posted ahead at enrolment): REQUESTS_COMMITTEE for an ordinary contributor (its keys
    first, held until the roster closes), REQUESTS_COMMITTEE_MEMBER for a committee member; the round releases its
    model."""
    import threading
    import time

    from cohort_helpers import tiny_bows
    from dptopic.contributor.client import ServiceClient
    from dptopic.contributor.secure_sum.client import (
        PREKEY_REQUESTS,
        REQUESTS_COMMITTEE,
        REQUESTS_COMMITTEE_MEMBER,
        post_prekey,
        take_part_committee,
    )
    from service_helpers import http

    class Counting(ServiceClient):
        def request(self, method, path, *a, **k):
            self.sent.append(f"{method} {path.split('?')[0]}")
            return super().request(method, path, *a, **k)

    n = 10
    with _live_committee_round(tmp_path, n) as (app, url):
        files = sorted((tmp_path / "inv").glob("invitation-*.json"))
        bows = tiny_bows(n, 0, 30)
        ahead = Counting(url)
        ahead.sent = []
        post_prekey(url, bows[1], files[1], tmp_path / "s1.json", client=ahead)     # the option: keys at enrolment
        assert ahead.sent == list(PREKEY_REQUESTS)
        clients = [Counting(url) for _ in files]
        out = [None] * n

        def one(i):
            clients[i].sent = []
            if i == 0:
                time.sleep(1.5)     # late: the others wait inside their first request
            out[i] = take_part_committee(url, (lambda config: bows[i]) if i == 2 else bows[i], files[i],
                                         tmp_path / f"s{i}.json", client=clients[i], timeout=60)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert all(isinstance(o, dict) for o in out), out
        committee = set(app.state.served.rnd.committee)
        assert len(REQUESTS_COMMITTEE) == 3 and len(REQUESTS_COMMITTEE_MEMBER) == 7
        for i, o in enumerate(out):
            want = list(REQUESTS_COMMITTEE_MEMBER if o["contributor"] in committee else REQUESTS_COMMITTEE)
            if i == 1:
                want[0] = "GET /v1/config"      # its keys went ahead: the round's first request is the long poll
            assert clients[i].sent == want, (o["contributor"], clients[i].sent)
        status, _, data = http("GET", url + "/v1/model")
        assert status == 200 and b"model_json" in data


def test_the_sql_round_server_refuses_a_committee_plan_in_one_line(rnd):
    from dptopic.errors import ParameterError
    from dptopic.service.secure_sum.config import SecureSumConfig

    with pytest.raises(ParameterError, match="committee mode is not served"):
        SecureSumConfig(rnd.words, rnd.plan, rnd.directory, n_topics=3)


def test_malformed_answers_from_a_committee_member_are_ignored_and_a_changed_one_refused(rnd):
    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    rnd.consistency(0)
    m = rnd.committee[0]
    u = rnd.server.step["uploaded"][0]
    bad = {u: {"b": "zz", "pairs": ["not", "a", "dict"]}, "x": 3}
    key = rnd.by_id[m].key
    rnd.server.post_unmask(0, m, bad, sign(key, sc.answers_message(rnd.server.round_id, 0, m, bad)))
    other = {"x": 4}
    with pytest.raises(ApiError, match="already stored"):
        rnd.server.post_unmask(0, m, other, sign(key, sc.answers_message(rnd.server.round_id, 0, m, other)))
    rnd.refused[m] = ("test", "answered already")        # the others answer; theirs suffice
    rnd.unmask(0)
    assert rnd.server.state == "upload1", rnd.server.reason
    assert np.array_equal(rnd.server.sums[0], rnd.plain_sum(0))


def test_a_stored_round_restarted_at_every_step_releases_the_exact_sums_and_a_refused_message_stores_nothing(
        tmp_path):
    """StoredCommitteeRound on a SQLite file, opened again (a new server object on the same file) after every step,
    an answer of the unmasking included (the last answer in: the new server unmasks on start)."""
    import json

    from committee_helpers import InProcessCommitteeRound
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound, c_answers, c_state

    rnd = InProcessCommitteeRound(tmp_path, n=12, dropouts=1, collusion=1)
    url = f"sqlite:///{tmp_path}/committee.db"

    def reopen():
        rnd.server.dispose()
        rnd.server = StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, url)
    rnd.server = StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, url)
    c = rnd.people[0]
    rnd.server.post_prekeys(c.me, [c.prekey()])
    reopen()
    assert rnd.server.state == "keys" and list(rnd.server.keys) == [c.me]
    rnd.prekeys()
    reopen()
    rnd.open()
    ordinary = [i for i in sorted(rnd.by_id) if i not in rnd.committee]
    for phase in (0, 1):
        rnd.upload(phase, drop=ordinary[:1] if phase == 0 else ())
        assert rnd.server.state == f"consistency{phase}"
        before = rnd.server.view()
        with pytest.raises(ApiError):       # a refused message: nothing stored
            rnd.server.post_consistency(phase, ordinary[1], "00" * 64)
        reopen()
        assert rnd.server.view() == before
        rnd.consistency(phase)
        reopen()
        signers = rnd.server.view()["signers"]
        answers = {}
        for m in signers:
            v = rnd.server.committee_view(phase, m)
            answers[m] = rnd.by_id[m].committee_unmask(phase, v, rnd.server.signatures(phase), v["uploads"])
        for m in signers[:-1]:
            rnd.server.post_unmask(phase, m, answers[m]["answers"], answers[m]["signature"])
        assert rnd.server.state == f"unmask{phase}"
        q = answers[signers[-1]]
        with rnd.server.engine.begin() as conn:     # the last answer stored as the server would, then a restart
            seq = rnd.server._version + 1
            conn.execute(c_answers.insert().values(phase=phase, member=signers[-1],
                                                   answers=json.dumps(q["answers"]), seq=seq))
            conn.execute(c_state.update().where(c_state.c.key == "version").values(
                value=json.dumps({"v": seq, "state": f"unmask{phase}"})))
        reopen()
        assert rnd.server.state == ("upload1" if phase == 0 else "released"), rnd.server.reason
    for phase in (0, 1):
        assert np.array_equal(rnd.server.sums[phase], rnd.plain_sum(phase))
    rnd.server.dispose()


def test_a_committee_member_downloads_its_own_blob_and_a_path_not_every_header(rnd):
    """What a member reads per uploader: its blob, the body's digest, the pair commitments' digest, a Merkle path of
    at most log2(C) + 1 steps and the signature; no other member's blob digest, no pair commitment."""
    import json

    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    m = rnd.committee[0]
    uploads = rnd.server.committee_view(0, m)["uploads"]
    assert sorted(uploads) == rnd.server.step["uploaded"]
    for u, got in uploads.items():
        assert set(got) == {"sha", "pairs", "path", "signature", "blob"}
        assert len(got["path"]) <= len(rnd.committee).bit_length()
        header = rnd.server._receipts[(0, u)][1]
        assert got["blob"] == rnd.server._blobs[(0, m)][u] and not set(header["blobs"].values()) & set(
            json.dumps(got).split('"'))


def _ledger_round(tmp_path, stored=False, n=8):
    from committee_helpers import InProcessCommitteeRound
    from dptopic.service.secure_sum.committee import CommitteeRound
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound

    rnd = InProcessCommitteeRound(tmp_path, n=n, dropouts=1, collusion=1)
    led = {"ledger": str(tmp_path / "ledger.sqlite"), "ledger_dataset": "clinic-people"}
    rnd.server = StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, f"sqlite:///{tmp_path}/c.db", **led) \
        if stored else CommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, **led)
    return rnd, tmp_path / "ledger.sqlite"


def _releases(led) -> list:
    from dptopic.dataset_ledger.ledger import DatasetLedger

    return DatasetLedger(led).releases("clinic-people") if led.exists() else []


def test_a_committee_round_is_charged_once_before_any_answer_of_its_committee_is_used(tmp_path, monkeypatch):
    """As the default round: the debit comes once step 0's uploads, signatures and answers are in, before the server
    uses one answer, at the plan's bound, to every uploader of step 0, once for the round."""
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum import committee_state as server

    rnd, led = _ledger_round(tmp_path)
    seen = []
    real = server.unmask_committee_sum

    def unmask(running, keys, round_id, phase, *a, **k):
        seen.append((phase, len(_releases(led))))
        return real(running, keys, round_id, phase, *a, **k)
    monkeypatch.setattr(server, "unmask_committee_sum", unmask)
    rnd.prekeys()
    rnd.open()
    drop = [i for i in sorted(rnd.by_id) if i not in rnd.committee][:1]
    assert rnd.run_from_open(drop0=drop)["state"] == "released"
    assert seen == [(0, 1), (1, 1)]
    (r,) = _releases(led)
    assert r["kind"] == "served" and r["unit"] == "user"
    assert DatasetLedger(led).person_summary()["persons"] == 7      # step 0's uploaders, the one gone not charged


def test_a_committee_round_the_ledger_refuses_fails_with_nothing_unmasked(tmp_path, monkeypatch):
    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum import committee_state as server

    rnd, led = _ledger_round(tmp_path)
    DatasetLedger(led).set_cap("clinic-people", 0.5, 1e-5)      # below the round's epsilon (8)
    unmasked = []
    monkeypatch.setattr(server, "unmask_committee_sum", lambda *a, **k: unmasked.append(a[3]) or a[0])
    view = rnd.run()
    assert view["state"] == "failed" and "ledger" in view["reason"] and "nothing" in view["reason"], view
    assert unmasked == [] and rnd.server.sums == {} and _releases(led) == []


def test_a_stored_committee_round_restarted_after_its_debit_is_not_charged_again(tmp_path, monkeypatch):
    """The server dies after the debit is made and marked, before the unmasking is committed (the last answer is
    lost with it); a new server on the same database takes the answer again and unmasks without a second debit."""
    from dptopic.service.secure_sum import committee_state as server
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound

    rnd, led = _ledger_round(tmp_path, stored=True)
    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    rnd.consistency(0)
    signers = rnd.server.view()["signers"]
    answers = {}
    for m in signers:
        v = rnd.server.committee_view(0, m)
        answers[m] = rnd.by_id[m].committee_unmask(0, v, rnd.server.signatures(0), v["uploads"])
    for m in signers[:-1]:
        rnd.server.post_unmask(0, m, answers[m]["answers"], answers[m]["signature"])
    real = server.unmask_committee_sum

    def killed(*a, **k):
        raise SystemExit("killed after the debit")
    monkeypatch.setattr(server, "unmask_committee_sum", killed)
    last = answers[signers[-1]]
    with pytest.raises(SystemExit):
        rnd.server.post_unmask(0, signers[-1], last["answers"], last["signature"])
    assert len(_releases(led)) == 1
    monkeypatch.setattr(server, "unmask_committee_sum", real)
    rnd.server.dispose()
    rnd.server = StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, f"sqlite:///{tmp_path}/c.db",
                                      ledger=str(led), ledger_dataset="clinic-people")
    assert rnd.server.state == "unmask0"
    rnd.server.post_unmask(0, signers[-1], last["answers"], last["signature"])
    assert rnd.server.state == "upload1", rnd.server.reason
    assert len(_releases(led)) == 1
    rnd.server.dispose()


def test_a_long_poll_is_refused_for_an_unknown_step_or_timeout_and_answers_at_its_timeout(tmp_path):
    """``?wait=STEP[&timeout=S]`` is read as the default round reads it: a step the committee round does not have, or
    a timeout that is not 0 to 3,600 seconds, is a 400 in one line; a short timeout answers with the round as it is."""
    import time

    from service_helpers import http

    with _live_committee_round(tmp_path, 6) as (_, url):
        round_url = url + "/v1/secure/round"
        for query, code in (("?wait=shares", "no_such_step"), ("?wait=upload0&timeout=soon", "bad_timeout"),
                            ("?wait=upload0&timeout=-1", "bad_timeout"), ("?wait=upload0&timeout=7200", "bad_timeout")):
            status, _, data = http("GET", round_url + query)
            assert status == 400 and json.loads(data)["error"]["code"] == code, (query, data)
        t = time.monotonic()
        status, _, data = http("GET", round_url + "?wait=released&timeout=0.3")
        assert status == 200 and json.loads(data)["state"] == "keys" and 0.25 <= time.monotonic() - t < 10


def test_a_stored_round_holds_no_blob_in_memory_and_hands_each_member_the_blobs_addressed_to_it(tmp_path):
    """The blobs (C an upload, most of a large round's bytes) stay in the database until a member reads its own: the
    server object keeps none, and each member's view carries exactly the blob every uploader addressed to it."""
    from committee_helpers import InProcessCommitteeRound
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound

    rnd = InProcessCommitteeRound(tmp_path, n=12, dropouts=1, collusion=1)
    rnd.server = StoredCommitteeRound(rnd.plan, rnd.directory, rnd.words, 3, f"sqlite:///{tmp_path}/c.db")
    sent: dict = {}
    post = rnd.server.post_upload

    def recording(phase, who, body, header, blobs, signature):
        sent[who] = dict(blobs)
        return post(phase, who, body, header, blobs, signature)
    rnd.server.post_upload = recording
    rnd.prekeys()
    rnd.open()
    rnd.upload(0)
    assert sent and not rnd.server._blobs
    for m in rnd.committee:
        uploads = rnd.server.committee_view(0, m)["uploads"]
        assert {u: v["blob"] for u, v in uploads.items()} == {u: b[m] for u, b in sent.items()}
    assert not rnd.server._blobs
    rnd.server.dispose()


# ----------------------------------------------------------------------------- no-shows
def test_a_roster_closed_without_a_no_show_releases_the_registered_contributors_exact_sums(rnd):
    """An invited contributor who never posts its keys is one of the F dropouts: the admin closes the roster with the
    others, every registered contributor takes that roster (it refused one that was not the whole directory
    before), the committee is drawn from it, and the round releases the exact sums of those who uploaded."""
    x = sorted(rnd.by_id)[-1]
    rnd.prekeys(absent=[x])
    assert rnd.server.state == "keys" and rnd.server.view()["keys_received"] == 19
    assert rnd.server.close()["state"] == "upload0"
    rnd.open()
    assert x not in rnd.committee and not rnd.refused, rnd.refused
    view = rnd.run_from_open()
    assert view["state"] == "released" and not rnd.refused, (view, rnd.refused)
    assert rnd.server.uploaded[0] == sorted(set(rnd.by_id) - {x})
    for phase in (0, 1):
        assert np.array_equal(rnd.server.sums[phase], rnd.plain_sum(phase))


def test_a_committee_round_closed_with_fewer_than_the_plan_needs_fails_and_refuses_a_late_registration(rnd):
    absent = sorted(rnd.by_id)[:3]
    rnd.prekeys(absent=absent)
    view = rnd.server.close()
    assert view["state"] == "failed" and view["reason"].startswith(
        "the roster closed (by the admin) with 17 of the 20 invited contributors registered, fewer than N - F = 18")
    with pytest.raises(ApiError, match="roster has closed without contributor .* registered too late"):
        rnd.server.post_prekeys(absent[0], [rnd.by_id[absent[0]].prekey()])


def test_a_committee_roster_closes_at_its_registration_deadline_and_the_round_releases_over_http(tmp_path):
    """``registration_s``: the committee server states when its roster closes, closes it at the deadline with those
    registered (its own task: no request needed) and the round releases without the no-show, whose late keys are
    refused with nothing stored; a stored round keeps its opening time across a restart."""
    import json
    import threading
    import time

    from cohort_helpers import tiny_bows
    from committee_helpers import CommitteeServer
    from dptopic.contributor.secure_sum.client import take_part_committee
    from dptopic.protocol.secure_sum.enrollment import read_invitation
    from dptopic.service.secure_sum.committee_store import StoredCommitteeRound
    from service_helpers import http

    words = [f"w{i:03d}" for i in range(30)]
    bows = tiny_bows(6, 0, 30)
    with CommitteeServer(tmp_path, words, n=6, dropouts=2, registration_s=3.0) as srv:
        view = json.loads(http("GET", srv.url + "/v1/secure/round")[2])
        assert view["state"] == "keys" and view["registration_closes_at"] > time.time()
        out: dict = {}

        def one(k):
            try:
                out[k] = take_part_committee(srv.url, bows[k], srv.invitation_files[k], tmp_path / f"s{k}.json",
                                             timeout=60)
            except Exception as e:      # noqa: BLE001 (returned to the test)
                out[k] = e
        threads = [threading.Thread(target=one, args=(k,)) for k in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(90)
        assert all(isinstance(out[k], dict) for k in range(5)), out
        assert srv.round.state == "released" and len(srv.round.keys) == 5
        late = read_invitation(srv.invitation_files[5])
        with pytest.raises(Exception, match="round_closed"):
            take_part_committee(srv.url, bows[5], late, tmp_path / "s5.json", timeout=5)
    plan = SecureSumPlan(8.0, 1e-5, 6, 2, 30, 0, committee="auto")
    from dptopic.protocol.secure_sum.enrollment import read_directory

    directory = read_directory(tmp_path / "inv" / "directory.json")
    db = f"sqlite:///{tmp_path}/stored.sqlite"
    first = StoredCommitteeRound(plan, directory, words, 3, db, registration_s=60)
    first.dispose()
    time.sleep(0.05)
    again = StoredCommitteeRound(plan, directory, words, 3, db, registration_s=60)
    assert again.opened_at == first.opened_at and again.registration_deadline == first.opened_at + 60
    again.dispose()
