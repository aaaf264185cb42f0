"""``dptopic serve --report-kind secure-sum`` killed with SIGKILL in the middle of every step and started again on the
same SQLite file: the round resumes from its durable state (the running sums and the receipts) and releases what a
round never stopped releases."""
from __future__ import annotations

import json
import time

import pytest

from service_helpers import InProcessRound, OverHttp, SecureServe

pytest.importorskip("uvicorn")
pytest.importorskip("cryptography")
pytestmark = pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")


EVERY = ("keys", "shares", "upload0", "consistency0", "unmask0", "answered0", "upload1", "consistency1", "unmask1",
         "answered1")


@pytest.mark.parametrize("points", [
    pytest.param(("upload0", "answered1"), id="in-an-upload-and-before-the-unmasking"),
    pytest.param(EVERY, id="in-every-step", marks=pytest.mark.slow)])
def test_a_server_killed_resumes_and_releases_the_same_sums(tmp_path, points):
    """``points``: where the server is killed (``answered{p}``: after the last answer, before the unmasking)."""
    plain = InProcessRound(tmp_path / "plain", n=10, dropouts=2, collusion=1, seed=4)
    assert plain.run(drop0=[plain.people[-1].me])["state"] == "released"
    direct = plain.server
    rnd = InProcessRound(tmp_path / "killed", n=10, dropouts=2, collusion=1, seed=4)
    srv = SecureServe(tmp_path, rnd).start()
    rnd.server = OverHttp(srv.url)
    kills = 0

    def kill_and_start(point):
        nonlocal kills
        if point not in points:
            return
        srv.kill()
        srv.start()
        kills += 1
    try:
        half = rnd.people[:5]
        for c in half:
            r = c.registration()
            rnd.server.post_keys(r["contributor"], r["keys"], r["signature"])
        kill_and_start("keys")                 # in the middle of the keys
        rnd.keys()                             # the first half again: replays
        roster = rnd.server.roster_view()
        for c in half:
            q = c.shares_request(roster)
            rnd.server.post_shares(q["contributor"], q["shares"])
        kill_and_start("shares")               # in the middle of the shares
        rnd.shares()
        for phase in (0, 1):
            view = rnd.server.view()
            for c in half:
                body, sig = c.upload(phase, view)
                answer = rnd.server.post_upload(phase, c.me, body, sig)[1]
                if phase == 0:
                    c.take_shares(answer["shares"])
            kill_and_start(f"upload{phase}")     # in the middle of an upload step: its running sum is on disk
            rnd.upload(phase, drop=[rnd.people[-1].me] if phase == 0 else ())
            assert rnd.server.view()["state"] == f"consistency{phase}"
            kill_and_start(f"consistency{phase}")
            rnd.consistency(phase)
            kill_and_start(f"unmask{phase}")
            rnd.unmask(phase, wait=False)
            kill_and_start(f"answered{phase}")    # the answers are in; the unmasking resumes on start
            deadline = time.monotonic() + 60
            while rnd.server.view()["state"] == f"unmask{phase}" and time.monotonic() < deadline:
                time.sleep(0.1)
        assert rnd.server.view()["state"] == "released", rnd.server.view()
        model = rnd.server._call("GET", "/v1/model")[1]
    finally:
        srv.stop()
    assert kills == len(points)
    assert json.loads(model["model_json"])["privacy"]["unit"] == "user"
    from sqlalchemy import create_engine, select

    from dptopic.service.secure_sum.database import t_state
    engine = create_engine(srv.database)
    with engine.connect() as a, direct.engine.connect() as b:
        for p in (0, 1):
            q = select(t_state.c.value).where(t_state.c.key == f"sum{p}")
            assert json.loads(a.execute(q).scalar()) == json.loads(b.execute(q).scalar())
    engine.dispose()
