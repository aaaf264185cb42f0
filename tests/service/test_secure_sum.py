"""A secure-sum round against a live server on 127.0.0.1 (uvicorn in a thread)."""
import threading

import numpy as np
import pytest
from service_helpers import SecureSumServer

from dptopic.contributor.secure_client import SecureContributor, take_part

pytestmark = pytest.mark.service
V = 40
WORDS = [f"word{i:02d}" for i in range(V)]
TOKEN = SecureSumServer.TOKEN


def Live(tmp, n=6, dropouts=2):
    return SecureSumServer(tmp, WORDS, n=n, dropouts=dropouts)


def wait_state(live, *states, timeout=60):
    """The round's view once it reaches one of ``states`` (the server unmasks off the request's thread)."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        view = live.call("GET", "/v1/secure/round")[1]
        if view["state"] in states or time.monotonic() > deadline:
            return view
        time.sleep(0.05)


def bow(seed):
    rng = np.random.default_rng(seed)
    ptr, ids = [0], []
    for _ in range(3):
        ids += list(np.unique(rng.integers(0, V, 12)))
        ptr.append(len(ids))
    return np.array(ptr), np.array(ids), np.ones(len(ids), np.int64)


def run_all(url, n, skip=()):
    out = [None] * n

    def one(i):
        try:
            out[i] = take_part(url, bow(i), poll=0.05, timeout=60)
        except Exception as e:      # noqa: BLE001 (reported below)
            out[i] = e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n) if i not in skip]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return out


def test_a_round_releases_a_model_that_pull_loads(tmp_path):
    from dptopic.reporting.pull import pull

    with Live(tmp_path) as live:
        out = run_all(live.url, 6)
        assert all(isinstance(o, dict) for o in out), out
        assert wait_state(live, "released", "failed")["state"] == "released"
        s = pull(live.url, tmp_path / "model")
    assert s["class"] == "SecureSumTopics"
    import dptopic

    m = dptopic.load(tmp_path / "model")
    assert m.privacy_["unit"] == "user" and "honest-but-curious" in m.privacy_["trust_model"]
    assert m.privacy_["epsilon"] <= 8.0


def test_bad_input_is_refused_and_nothing_counted_twice(tmp_path):
    with Live(tmp_path, n=6, dropouts=1) as live:
        cfg = live.call("GET", "/v1/config")[1]
        people = [SecureContributor(cfg, bow(i), contributor=f"p{i}") for i in range(6)]
        for c in people[:5]:
            assert live.call("POST", "/v1/secure/keys", c.keys_request())[0] == 201
        # a replay is acknowledged once; other keys for one contributor, or keys another one sent, are refused
        assert live.call("POST", "/v1/secure/keys", people[0].keys_request()) == (200, pytest.approx(
            live.call("POST", "/v1/secure/keys", people[0].keys_request())[1]))
        other = people[5].keys_request()
        status, err = live.call("POST", "/v1/secure/keys", {"contributor": "p0", "keys": other["keys"]})
        assert status == 409 and err["error"]["code"] == "keys_changed"
        status, err = live.call("POST", "/v1/secure/keys", {"contributor": "p9", "keys": people[1].secrets.public()})
        assert status == 409 and err["error"]["code"] == "keys_reused"
        assert live.call("POST", "/v1/secure/keys", people[5].keys_request())[0] == 201
        status, err = live.call("POST", "/v1/secure/keys", {"contributor": "late", "keys": {
            "c": "ab" * 32, "s": ["cd" * 32, "ef" * 32]}})
        assert status == 409 and err["error"]["code"] == "round_closed"
        roster = live.call("GET", "/v1/secure/round")[1]["roster"]
        for c in people:
            assert live.call("POST", "/v1/secure/shares", c.shares_request(roster))[0] == 201
        view = live.call("GET", "/v1/secure/round")[1]
        assert view["state"] == "upload0"
        for c in people:
            c.take_shares(roster, live.call("GET", f"/v1/secure/shares?contributor={c.me}")[1])
        body = people[0].upload_body(0, roster, view["members"])
        h = {"Dptopic-Contributor": "p0", "Content-Type": "application/octet-stream"}
        status, err = live.call("POST", "/v1/secure/upload/0", body=body[:-4], headers=h)
        assert status == 400 and err["error"]["code"] == "wrong_shape"
        assert live.call("POST", "/v1/secure/upload/0", body=body, headers=h)[0] == 201
        assert live.call("POST", "/v1/secure/upload/0", body=body, headers=h) == (200, {"replayed": True})
        status, err = live.call("POST", "/v1/secure/upload/0", body=bytes(len(body)), headers=h)
        assert status == 409 and err["error"]["code"] == "second_upload"
        # a resumed contributor sends the same bytes (kept), so a retry is a replay
        assert people[0].upload_body(0, roster, view["members"]) == body
        # closing with too few uploads releases nothing
        status, view = live.call("POST", "/v1/admin/secure/close", body=b"",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
        assert view["state"] == "failed" and "nothing released" in view["reason"]
        status, err = live.call("GET", "/v1/model")
        assert status == 404
        status, err = live.call("POST", "/v1/secure/upload/0", body=people[1].upload_body(0, roster, roster),
                                headers={**h, "Dptopic-Contributor": "p1"})
        assert status == 409 and err["error"]["code"] == "round_closed"


def test_dropouts_within_the_tolerance_still_release(tmp_path):
    with Live(tmp_path, n=6, dropouts=2) as live:
        cfg = live.call("GET", "/v1/config")[1]
        people = [SecureContributor(cfg, bow(i), contributor=f"p{i}") for i in range(6)]
        for c in people:
            live.call("POST", "/v1/secure/keys", c.keys_request())
        roster = live.call("GET", "/v1/secure/round")[1]["roster"]
        for c in people:
            live.call("POST", "/v1/secure/shares", c.shares_request(roster))
        for c in people:
            c.take_shares(roster, live.call("GET", f"/v1/secure/shares?contributor={c.me}")[1])
        for phase in (0, 1):
            view = wait_state(live, f"upload{phase}", "failed")
            for c in people[: 4 if phase == 0 else 6]:
                if c.me in view["members"]:
                    live.call("POST", f"/v1/secure/upload/{phase}", body=c.upload_body(
                        phase, roster, view["members"], view.get("kept")), headers={"Dptopic-Contributor": c.me})
            if phase == 0:
                live.call("POST", "/v1/admin/secure/close", body=b"", headers={"Authorization": f"Bearer {TOKEN}"})
            view = live.call("GET", "/v1/secure/round")[1]
            assert view["state"] == f"unmask{phase}", view
            for c in people:
                if c.me in view["uploaded"]:
                    live.call("POST", f"/v1/secure/unmask/{phase}", c.unmask_request(phase, view["uploaded"],
                                                                                   view["members"]))
        assert wait_state(live, "released", "failed")["state"] == "released"


def test_a_contributor_refuses_a_larger_epsilon_before_computing(tmp_path):
    from dptopic.errors import DPTopicError

    with Live(tmp_path) as live:
        cfg = live.call("GET", "/v1/config")[1]
        with pytest.raises(DPTopicError, match="above your --max-epsilon"):
            SecureContributor(cfg, bow(0), max_epsilon=1.0, state=tmp_path / "state.json")
    assert not (tmp_path / "state.json").exists()


def test_a_resumed_contributor_sends_the_same_keys_shares_and_upload(tmp_path):
    import os
    import stat

    with Live(tmp_path, n=3, dropouts=0) as live:
        cfg = live.call("GET", "/v1/config")[1]
        state = tmp_path / "state.json"
        first = SecureContributor(cfg, bow(0), state=state)
        assert stat.S_IMODE(os.stat(state).st_mode) == 0o600      # it holds the round's secrets
        others = [SecureContributor(cfg, bow(i)) for i in (1, 2)]
        for c in [first, *others]:
            live.call("POST", "/v1/secure/keys", c.keys_request())
        roster = live.call("GET", "/v1/secure/round")[1]["roster"]
        shares = first.shares_request(roster)
        again = SecureContributor(cfg, bow(0), state=state)      # a new run on the same state
        assert again.keys_request() == first.keys_request()
        assert again.shares_request(roster) == shares
        for c in (first, *others):
            assert live.call("POST", "/v1/secure/shares", c.shares_request(roster))[0] in (200, 201)
        assert live.call("POST", "/v1/secure/shares", again.shares_request(roster)) == (200, {"replayed": True})
        members = live.call("GET", "/v1/secure/round")[1]["members"]
        for c in (first, again):
            c.take_shares(roster, live.call("GET", f"/v1/secure/shares?contributor={c.me}")[1])
        body = first.upload_body(0, roster, members)
        third = SecureContributor(cfg, bow(0), state=state)
        assert third.upload_body(0, roster, members) == body
