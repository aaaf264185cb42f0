"""``dptopic.service.secure_sum.cohort_app``: a round in cohorts served by one process (every cohort's round and the
bridge under their path prefixes, the coordinator in a thread), played over HTTP by the library's client in threads: its
routes, a release equal to the in-process simulation's with the noise held fixed, a restart that resumes, and its
refusals."""
import json

import pytest

from cohort_helpers import (
    WORDS,
    LiveCohortRound,
    check_the_ledgers_refusal_fails_every_round,
    hold_noise_fixed,
    lie_at,
    play_all,
    record_parts,
    record_unmaskings,
    simulation_class,
    tiny_bows,
)
from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum.cohort_enrollment import make_cohort_invitations, read_cohort_directory
from dptopic.protocol.secure_sum.cohorts import CohortPlan, cohort_round_id
from dptopic.service.secure_sum.cohort_app import CohortServer, CohortSumConfig
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
    """... and the round, charged to the dataset ledger before step 0 was unmasked, is not charged again when the
    server resumes (the debit's mark is in the bridge's database)."""
    import threading
    import time

    import uvicorn

    from dptopic.dataset_ledger.ledger import DatasetLedger
    from dptopic.service.secure_sum.cohort_app import create_cohort_app

    hold_noise_fixed(monkeypatch)
    led = tmp_path / "ledger.sqlite"
    live = LiveCohortRound(tmp_path, N, SIZE, ledger=led, dataset="clinic").__enter__()
    out: list = []
    players = threading.Thread(target=lambda: out.extend(play_all(live.url, live.files, tiny_bows(N), tmp_path)))
    players.start()
    deadline = time.monotonic() + 60
    while live.server.view()["state"] not in ("upload1", "consistency1", "unmask1", "released", "failed"):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    live.uvicorn.config.timeout_graceful_shutdown = 0.1     # the held requests are cut as they would be after 2 s
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
    assert len(DatasetLedger(led).releases("clinic")) == 1


def test_a_round_in_cohorts_is_charged_to_the_dataset_ledger_once_before_any_round_unmasks(tmp_path, monkeypatch):
    """One debit for the whole round (not one per cohort, none for the bridge), at the cohort plan's bound, to every
    person who uploaded in step 0 of their cohort, before any cohort's or the bridge's first unmasking."""
    from dptopic.dataset_ledger.ledger import DatasetLedger

    led = tmp_path / "ledger.sqlite"
    seen = record_unmaskings(monkeypatch, led)
    with LiveCohortRound(tmp_path, N, SIZE, ledger=led, dataset="clinic") as live:
        out = play_all(live.url, live.files, tiny_bows(N), tmp_path)
        assert all(isinstance(o, dict) for o in out), [o for o in out if not isinstance(o, dict)]
        assert live.server.view()["state"] == "released"
        rounds = {r.round_id for r in live.server.parts()}
    assert sorted(seen) == sorted((r, p, 1) for r in rounds for p in (0, 1)), seen
    (r,) = DatasetLedger(led).releases("clinic")
    assert r["kind"] == "served" and r["unit"] == "user"
    assert DatasetLedger(led).person_summary()["persons"] == N


def test_a_round_in_cohorts_the_dataset_ledger_refuses_fails_every_round_with_nothing_unmasked(tmp_path, monkeypatch):
    check_the_ledgers_refusal_fails_every_round(tmp_path, monkeypatch, N, SIZE)


def test_the_config_refuses_a_directory_of_another_layout_and_a_database_that_is_not_sqlite(tmp_path):
    make_cohort_invitations(tmp_path / "k", N, tmp_path / "inv", SIZE, 0, 1, "round1")
    directory = read_cohort_directory(tmp_path / "inv" / "directory.json")
    plan = CohortPlan(8.0, 1e-5, N, 0, len(WORDS), SIZE, collusion=2)
    with pytest.raises(ParameterError, match="layout of the round: collusion 1 in the invitations, 2 in the plan"):
        CohortSumConfig(WORDS, plan, directory, n_topics=3, database=f"sqlite:///{tmp_path}/r.db")
    plan = CohortPlan(8.0, 1e-5, N, 0, len(WORDS), SIZE, collusion=1)
    with pytest.raises(ParameterError, match="its own SQLite file .* or in its own schema of a PostgreSQL database"):
        CohortSumConfig(WORDS, plan, directory, n_topics=3, database="mysql://u@h/db")
    forged = dict(directory, cohorts=[directory["cohorts"][1], directory["cohorts"][0]])
    with pytest.raises(DPTopicError, match="cohort 0 is not the one the round's rule seats"):
        CohortSumConfig(WORDS, plan, forged, n_topics=3, database=f"sqlite:///{tmp_path}/r.db")


def test_a_delegates_refusal_in_one_round_stops_its_other_round_at_once(tmp_path, monkeypatch):
    """A bridge that hides cohort 1's delegates is refused by cohort 0's; their cohort round, waiting for a step the
    bridge never opens, is stopped by that refusal (not left waiting in its thread until its timeout). Once both
    parts of both refusing delegates have ended, everyone else (whom no check here concerns) is stopped too, rather
    than left waiting out its timeout for steps that never come."""
    from dptopic.contributor.secure_sum.client import STOP_HOLD_S, Stopped
    from dptopic.contributor.secure_sum.default import ServerLied

    ended = record_parts(monkeypatch)
    with LiveCohortRound(tmp_path, N, SIZE) as live:
        docs = [json.loads(f.read_text()) for f in live.files]
        refusing = [d["contributor"] for d in docs if "bridge" in d and d["cohorts"]["cohort"] == 0]
        ended.watch(k for d in docs if d["contributor"] in refusing
                    for k in ((cohort_round_id("round1", 0), d["contributor"]),
                              (d["bridge"]["round_id"], d["bridge"]["contributor"])))
        lie_at(live, "/bridge", lambda v: dict(v, uploaded=[u for u in v["uploaded"] if not u.startswith("c1-")])
               if isinstance(v.get("uploaded"), list) else v)
        timeout = 12.0
        out = play_all(live.url, live.files, tiny_bows(N), tmp_path, timeout=timeout, stop=ended.settled)
    assert len(refusing) == 2
    for d, o in zip(docs, out):
        if d["contributor"] in refusing:
            assert isinstance(o, ServerLied)
            me, bridge_me = d["contributor"], f"c0-{d['contributor']}"
            refused_at, lied = ended[next(k for k in ended if k[1] == bridge_me)]
            stopped_at, stopped = ended[cohort_round_id("round1", 0), me]
            assert isinstance(lied, ServerLied) and isinstance(stopped, Stopped), stopped
            assert stopped_at - refused_at < STOP_HOLD_S + 3 < timeout


class Dropped(Exception):
    """A contributor gone after masking (raised in its thread)."""


def drop_after_masking(monkeypatch, gone) -> None:
    """The people ``gone`` (their ids; a delegate in its cohort and the bridge alike) mask step 0, then never upload.
    A delegate leaves once it has masked in both rounds: the part that masks first waits for the other (left at once,
    it would stop the other part, which may not yet have sent its shares: its round then never reaches step 0)."""
    import threading

    from dptopic.contributor.secure_sum.cohorts import BridgeContributor
    from dptopic.contributor.secure_sum.default import SecureContributor

    upload = SecureContributor.upload
    both = {who: threading.Barrier(2) for who in gone}      # a delegate's two parts, each once it has masked

    def upload_(self, phase, view):
        out = upload(self, phase, view)
        who = self.me.split("-")[-1]
        if phase == 0 and who in gone:
            if isinstance(self, BridgeContributor) or getattr(self, "pads", None) is not None:
                try:
                    both[who].wait(60)
                except threading.BrokenBarrierError:
                    pass
            raise Dropped(self.me)
        return out

    monkeypatch.setattr(SecureContributor, "upload", upload_)


def uploads_of_step_0(live) -> list:
    """How many uploads of step 0 each round (every cohort's, then the bridge's) holds a receipt of."""
    from sqlalchemy import func, select

    from dptopic.service.secure_sum.database import t_uploads

    out = []
    for r in live.server.parts():
        with r.engine.connect() as conn:
            out.append(conn.execute(select(func.count()).select_from(t_uploads).where(t_uploads.c.phase == 0)).scalar())
    return out


def play_with_dropouts(live, bows, gone, tmp, closed=None) -> list:
    """Everyone plays the round at ``live`` (``gone`` drop out after masking); the admin closes the upload of step 0
    at the root once every round holds its survivors' uploads (then sets ``closed``, an event, if given). What each
    person's play returned or raised."""
    import threading
    import time

    out: list = []
    # generous waits: under a loaded machine (the whole suite on 2 cores) a step of 40 people can take tens of seconds
    players = threading.Thread(target=lambda: out.extend(play_all(live.url, live.files, bows, tmp, timeout=150)))
    players.start()
    want = [len([m for m in g if m not in gone]) for g in live.server.groups]
    want.append(sum(live.plan.n_delegates - len(set(live.plan.delegates(g, "round1", c)) & set(gone))
                    for c, g in enumerate(live.server.groups)))
    deadline = time.monotonic() + 180
    while uploads_of_step_0(live) != want:
        assert time.monotonic() < deadline and players.is_alive(), (  # every person's outcome, in full
            f"step-0 uploads {uploads_of_step_0(live)}, want {want}; views"
            f" {[r.view().get('state') for r in live.server.parts()]}; plays:\n" + "\n".join(map(repr, out)))
        time.sleep(0.05)
    status, _, body = http("POST", live.url + "/v1/admin/secure/close", b"",
                           {"Authorization": f"Bearer {live.TOKEN}"})
    assert status == 200, body
    if closed is not None:
        closed.set()
    players.join(120)
    return out


@pytest.mark.parametrize("where", ["both cohorts", "one cohort"])
def test_a_round_with_dropouts_over_http_closed_by_the_admin_releases_the_simulations_sums(tmp_path, monkeypatch,
                                                                                         where):
    """Three people (one of them a delegate) mask step 0 and leave; the admin's close at the root closes the upload
    of every round that waits for it: the round releases the sums the simulation releases with the same people gone,
    the noise held fixed. With everyone gone from one cohort, the other (its signatures held back until the close)
    is past its upload when the admin closes, and is left to close its own step. The dataset ledger is charged for
    the people who uploaded, not for those gone."""
    import threading

    from dptopic.contributor.secure_sum.default import SecureContributor
    from dptopic.dataset_ledger.ledger import DatasetLedger

    hold_noise_fixed(monkeypatch)
    n, size, bows = 40, 20, tiny_bows(40)
    led = tmp_path / "ledger.sqlite"
    with LiveCohortRound(tmp_path / "live", n, size, dropouts=4, ledger=led, dataset="clinic") as live:
        groups = live.server.groups
        delegate = live.plan.delegates(groups[1 if where == "both cohorts" else 0], "round1",
                                        1 if where == "both cohorts" else 0)[0]
        gone = [m for m in groups[0] if m not in live.plan.delegates(groups[0], "round1", 0)][:2] + [delegate]
        drop_after_masking(monkeypatch, gone)
        closed = threading.Event()
        if where == "one cohort":
            consistency = SecureContributor.consistency

            def held(self, phase, view):
                if self.round_id == cohort_round_id("round1", 1):
                    closed.wait(60)
                return consistency(self, phase, view)

            monkeypatch.setattr(SecureContributor, "consistency", held)
        out = play_with_dropouts(live, bows, gone, tmp_path / "live", closed)
        mine = {d["contributor"]: o for d, o in zip((json.loads(f.read_text()) for f in live.files), out)}
        assert all(isinstance(mine[g], Dropped) for g in gone)
        assert all(isinstance(o, dict) for i, o in mine.items() if i not in gone), mine
        view = get(live.url + "/v1/secure/round")[1]
        assert view["state"] == "released", view
        served = get(live.url + "/v1/model")[1]
        sums = {p: live.server.coordinator.sums[p].copy() for p in (0, 1)}
        assert sorted(set(live.server.bridge.view()["uploaded"])) == sorted(
            f"c{c}-{d}" for c, g in enumerate(groups) for d in live.plan.delegates(g, "round1", c) if d != delegate)
    assert len(DatasetLedger(led).releases("clinic")) == 1
    assert DatasetLedger(led).person_summary()["persons"] == n - len(gone)
    monkeypatch.undo()
    hold_noise_fixed(monkeypatch)
    sim = simulation_class()(tmp_path / "sim", live.plan, bows, WORDS, round_id="round1")
    assert sim.run(drop0=gone) == "released"
    for p in (0, 1):
        assert (sim.coordinator.sums[p] == sums[p]).all()
    assert sim.coordinator.model_doc == served


def test_a_round_where_too_many_of_one_cohort_drop_fails_in_one_line_and_releases_nothing(tmp_path, monkeypatch):
    n, size = 40, 20
    with LiveCohortRound(tmp_path, n, size, dropouts=4) as live:
        tolerance = live.plan.cohort_dropouts[0]
        gone = [m for m in live.server.groups[0] if m not in live.plan.delegates(live.server.groups[0], "round1", 0)]
        gone = gone[:tolerance + 1]
        drop_after_masking(monkeypatch, gone)
        out = play_with_dropouts(live, tiny_bows(n), gone, tmp_path)
        view = get(live.url + "/v1/secure/round")[1]
        assert view["state"] == "failed" and view["reason"] and "\n" not in view["reason"], view
        assert f"{size - tolerance - 1}" in view["reason"] and "nothing released" in view["reason"]
        assert get(live.url + "/v1/model")[0] == 404 and live.server.coordinator.model_doc is None
        assert not any(isinstance(o, dict) for o in out)
        said = {str(o) for o in out if not isinstance(o, Dropped)}
        assert said and all(s.startswith("the round failed") and "\n" not in s for s in said), said
