"""``dptopic.service.cohort_app``: a round in cohorts served by one process (every cohort's round and the bridge under
their path prefixes, the coordinator in a thread), played over HTTP by the library's client in threads: its routes,
a release equal to the in-process simulation's with the noise held fixed, a restart that resumes, and its refusals."""
import json

import pytest

from cohort_helpers import WORDS, LiveCohortRound, hold_noise_fixed, lie_at, play_all, simulation_class, tiny_bows
from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.cohort_enrollment import make_cohort_invitations, read_cohort_directory
from dptopic.protocol.cohorts import CohortPlan, cohort_round_id
from dptopic.service.cohort_app import CohortServer, CohortSumConfig
from service_helpers import http

pytestmark = [pytest.mark.service, pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")]
N, SIZE = 24, 12


def get(url: str):
    status, _, body = http("GET", url)
    return status, json.loads(body)


def test_the_root_names_the_cohort_plan_and_each_cohort_is_a_round_under_its_prefix(tmp_path):
    with LiveCohortRound(tmp_path, N, SIZE) as live:
        status, cfg = get(live.url + "/v1/config")
        assert status == 200 and cfg["report_kind"] == "secure-sum" and cfg["round_id"] == "round1"
        assert CohortPlan.from_dict(cfg["cohorts"]["plan"]).to_dict() == live.plan.to_dict()
        assert cfg["cohorts"]["members"] == live.plan.cohorts([f"{i:04d}" for i in range(1, N + 1)], "round1")
        assert cfg["cohorts"]["paths"] == ["/cohorts/0", "/cohorts/1"] and cfg["cohorts"]["bridge"] == "/bridge"
        for c, path in enumerate(cfg["cohorts"]["paths"]):
            status, sub = get(live.url + path + "/v1/config")
            assert status == 200 and sub["round_id"] == cohort_round_id("round1", c)
            assert sub["secure_sum"] == live.plan.cohort_plans[c].to_dict()
            assert sorted(sub["directory"]["members"]) == cfg["cohorts"]["members"][c]
        assert get(live.url + "/bridge/v1/config")[1]["secure_sum"] == live.plan.bridge_plan.to_dict()
        status, view = get(live.url + "/v1/secure/round")
        assert status == 200 and view["state"] == "keys" and view["cohorts"] == ["keys", "keys"]
        status, err = get(live.url + "/v1/model")
        assert status == 404 and err["error"]["code"] == "no_model"
        status, _, body = http("POST", live.url + "/v1/admin/secure/close", b"", {"Authorization": "Bearer wrong"})
        assert status == 403 and json.loads(body)["error"]["code"] == "wrong_token"


def test_a_round_over_http_releases_the_simulations_model_with_the_noise_held_fixed(tmp_path, monkeypatch):
    hold_noise_fixed(monkeypatch)
    bows = tiny_bows(N)
    with LiveCohortRound(tmp_path / "live", N, SIZE) as live:
        out = play_all(live.url, live.files, bows, tmp_path / "live")
        assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
        assert get(live.url + "/v1/secure/round")[1]["state"] == "released"
        served = get(live.url + "/v1/model")[1]
        assert get(live.url + "/cohorts/1/v1/model")[1] == served       # every cohort serves the round's model
        delegates = [o for o in out if o["bridge"] is not None]
        assert len(delegates) == 2 * live.plan.n_delegates and all(o["bridge"]["steps"] for o in delegates)
        assert {o["cohort"] for o in out} == {0, 1}
        sums = {p: live.server.coordinator.sums[p].copy() for p in (0, 1)}
    sim = simulation_class()(tmp_path / "sim", live.plan, bows, WORDS, round_id="round1")
    assert sim.run() == "released"
    for p in (0, 1):
        assert (sim.coordinator.sums[p] == sums[p]).all()
    assert sim.coordinator.model_doc == served


def test_a_restarted_server_resumes_each_round_and_reads_the_steps_again(tmp_path, monkeypatch):
    hold_noise_fixed(monkeypatch)
    with LiveCohortRound(tmp_path, N, SIZE) as live:
        assert all(isinstance(o, dict) for o in play_all(live.url, live.files, tiny_bows(N), tmp_path))
        served = get(live.url + "/v1/model")[1]
        sums = live.server.coordinator.sums[1].copy()
    live.server.stop()
    again = CohortServer(live.cfg)      # the same databases: every round resumes, the coordinator reads them again
    assert again.view()["state"] == "released" and again.rounds[0].model_doc() == served
    assert (again.coordinator.sums[1] == sums).all()


def test_a_server_stopped_mid_round_and_started_again_on_its_databases_finishes_it(tmp_path, monkeypatch):
    import threading
    import time

    import uvicorn

    from dptopic.service.cohort_app import create_cohort_app

    hold_noise_fixed(monkeypatch)
    live = LiveCohortRound(tmp_path, N, SIZE).__enter__()
    out: list = []
    players = threading.Thread(target=lambda: out.extend(play_all(live.url, live.files, tiny_bows(N), tmp_path)))
    players.start()
    deadline = time.monotonic() + 60
    while live.server.view()["state"] not in ("upload1", "consistency1", "unmask1", "released", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    live.__exit__()         # step 0 released its kept words; the contributors retry meanwhile
    app = create_cohort_app(live.cfg, freeze_gc=False)
    again = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=live.port, log_config=None, log_level="error",
                                          access_log=False, timeout_graceful_shutdown=2))
    thread = threading.Thread(target=again.run, daemon=True)
    thread.start()
    try:
        players.join(180)
        assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
        assert app.state.cohort_server.view()["state"] == "released"
    finally:
        again.should_exit = True
        thread.join(30)


def test_the_config_refuses_a_directory_of_another_layout_and_a_database_that_is_not_sqlite(tmp_path):
    make_cohort_invitations(tmp_path / "k", N, tmp_path / "inv", SIZE, 0, 1, "round1")
    directory = read_cohort_directory(tmp_path / "inv" / "directory.json")
    plan = CohortPlan(8.0, 1e-5, N, 0, len(WORDS), SIZE, collusion=2)
    with pytest.raises(ParameterError, match="layout of the round: collusion 1 in the invitations, 2 in the plan"):
        CohortSumConfig(WORDS, plan, directory, n_topics=3, database=f"sqlite:///{tmp_path}/r.db")
    plan = CohortPlan(8.0, 1e-5, N, 0, len(WORDS), SIZE, collusion=1)
    with pytest.raises(ParameterError, match="its own SQLite file"):
        CohortSumConfig(WORDS, plan, directory, n_topics=3, database="postgresql+psycopg://u@h/db")
    forged = dict(directory, cohorts=[directory["cohorts"][1], directory["cohorts"][0]])
    with pytest.raises(DPTopicError, match="cohort 0 is not the one the round's rule seats"):
        CohortSumConfig(WORDS, plan, forged, n_topics=3, database=f"sqlite:///{tmp_path}/r.db")


def test_a_delegates_refusal_in_one_round_stops_its_other_round_at_once(tmp_path, monkeypatch):
    """A bridge that hides cohort 1's delegates is refused by cohort 0's; their cohort round, waiting for a step the
    bridge never opens, is stopped by that refusal (not left waiting in its thread until its timeout)."""
    import time

    from dptopic.contributor import cohort_client
    from dptopic.contributor.secure_client import STOP_HOLD_S, Stopped
    from dptopic.contributor.secure_sum import ServerLied

    ended: dict = {}
    take_part = cohort_client.take_part

    def recorded(*args, contributor, **kw):
        try:
            out = take_part(*args, contributor=contributor, **kw)
        except Exception as e:      # noqa: BLE001 (recorded, then raised as before)
            out = e
        ended[contributor.round_id, contributor.me] = (time.monotonic(), out)
        if isinstance(out, Exception):
            raise out
        return out

    monkeypatch.setattr(cohort_client, "take_part", recorded)
    with LiveCohortRound(tmp_path, N, SIZE) as live:
        lie_at(live, "/bridge", lambda v: dict(v, uploaded=[u for u in v["uploaded"] if not u.startswith("c1-")])
               if isinstance(v.get("uploaded"), list) else v)
        timeout = 12.0
        out = play_all(live.url, live.files, tiny_bows(N), tmp_path, timeout=timeout)
    docs = [json.loads(f.read_text()) for f in live.files]
    refusing = [d["contributor"] for d in docs if "bridge" in d and d["cohorts"]["cohort"] == 0]
    assert len(refusing) == 2
    for d, o in zip(docs, out):
        if d["contributor"] in refusing:
            assert isinstance(o, ServerLied)
            me, bridge_me = d["contributor"], f"c0-{d['contributor']}"
            refused_at, lied = ended[next(k for k in ended if k[1] == bridge_me)]
            stopped_at, stopped = ended[cohort_round_id("round1", 0), me]
            assert isinstance(lied, ServerLied) and isinstance(stopped, Stopped), stopped
            assert stopped_at - refused_at < STOP_HOLD_S + 3 < timeout
