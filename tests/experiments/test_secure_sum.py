"""``experiments.secure_sum.play_round``: a secure-sum round over HTTP played from a pool of contributor processes,
with its costs counted where they are made."""
import numpy as np
import pytest

pytest.importorskip("cryptography")


def _bows(n, vocab, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        ids = np.sort(rng.choice(vocab, 6, replace=False)).astype("int64")
        out.append((np.array([0, 6], "int64"), ids, np.ones(6, "int64")))
    return out


def test_a_round_is_played_from_several_processes_and_its_costs_are_counted(tmp_path):
    from dptopic.experiments.secure_sum import play_round
    from service_helpers import SecureSumServer

    words = [f"w{i:02d}" for i in range(30)]
    with SecureSumServer(tmp_path, words, n=8, dropouts=2) as srv:
        s = play_round([srv.url], _bows(8, 30), srv.invitations, 0.25, srv.TOKEN, seed=1, workers=2, verbose=0)
        assert s["state"] == "released", s["reason"]
        status, model = srv.call("GET", "/v1/model")
        assert status == 200
    assert s["workers"] == 2 and s["people"] == 8 and s["dropped"] == 2
    # every contributor's own messages: keys, shares, then per step an upload, a signature and perhaps an answer
    assert 2 <= s["requests_per_contributor"] <= 8
    assert s["bytes_per_contributor"] > s["upload_bytes_max"] > 0
    assert s["bytes_down_per_contributor"] > 0 and s["cpu_per_contributor_s"] > 0
    # each contributor process froze what lives as long as its part (its imports at least) out of the collector's
    # full scans once its people were built, and counts the collector's CPU
    assert s["collector_frozen"] > 10_000
    assert s["collector_cpu_per_contributor_s"] >= 0 and len(s["collector_runs"]) == 3
    # the server (here this test's own process) reports its CPU seconds and peak memory
    proc = s["server_process"]
    assert proc["processes"] == 1 and proc["cpu_s"] > 0 and proc["peak_rss_bytes"] > 10 * 2 ** 20


def test_bad_settings_are_refused_before_any_process_starts():
    from dptopic.errors import ParameterError
    from dptopic.experiments.secure_sum import play_round

    bows = _bows(4, 30)
    with pytest.raises(ParameterError, match="invitation"):
        play_round(["http://127.0.0.1:9"], bows, [{}] * 3, 0.0, None, verbose=0)
    with pytest.raises(ParameterError, match="workers"):
        play_round(["http://127.0.0.1:9"], bows, [{}] * 4, 0.0, None, workers=0, verbose=0)
    with pytest.raises(ParameterError, match="token"):
        play_round(["http://127.0.0.1:9"], bows, [{}] * 4, 0.5, None, verbose=0)


def test_the_default_dropout_is_a_tenth_in_a_single_round():
    from dptopic.errors import ParameterError
    from dptopic.experiments.secure_sum import experiment_dropout

    assert experiment_dropout(None) == 0.1 and experiment_dropout(0.25) == 0.25 and experiment_dropout(0) == 0.0
    with pytest.raises(ParameterError, match=r"dropout=1.5 is a share"):
        experiment_dropout(1.5)


# ----------------------------------------------------------------------------- rounds in cohorts
def _seated(n, size, dropouts, collusion=1, round_id="round1"):
    """A cohort plan and each person's cohort and delegacy, the people in the order of their sorted ids."""
    from dptopic.protocol.secure_sum.cohorts import CohortPlan

    plan = CohortPlan(8.0, 1e-5, n, dropouts, 30, size, collusion)
    groups = plan.cohorts([f"{i:04d}" for i in range(1, n + 1)], round_id)
    cohort_of = {m: c for c, g in enumerate(groups) for m in g}
    delegates = {d for c, g in enumerate(groups) for d in plan.delegates(g, round_id, c)}
    ids = sorted(cohort_of)
    return plan, np.array([cohort_of[i] for i in ids]), np.array([i in delegates for i in ids])


@pytest.mark.parametrize("n, size, dropouts, share", [(24, 12, 1, 1 / 3), (300, 100, 30, 0.2)])
def test_the_dropouts_of_a_round_in_cohorts_come_from_the_seed_within_every_tolerance(n, size, dropouts, share):
    from dptopic.experiments.secure_sum import choose_cohort_dropouts

    plan, cohort, delegate = _seated(n, size, dropouts)
    a = choose_cohort_dropouts(plan, cohort, delegate, share, seed=5)
    assert (a == choose_cohort_dropouts(plan, cohort, delegate, share, seed=5)).all()
    assert any((a != choose_cohort_dropouts(plan, cohort, delegate, share, seed=s)).any() for s in range(6, 9))
    assert a.sum() == round(share * n)
    by = np.bincount(cohort[a], minlength=len(plan.sizes))
    assert (by <= plan.cohort_dropouts).all(), (by, plan.cohort_dropouts)
    gone = np.bincount(cohort[a & delegate], minlength=len(plan.sizes))
    assert (plan.n_delegates - gone >= plan.collusion + 1).all() and gone.sum() <= plan.bridge_plan.dropouts
    # by default the dropouts the round's invitations expect
    assert choose_cohort_dropouts(plan, cohort, delegate, None, seed=5).sum() == dropouts


def test_a_dropout_above_what_the_cohorts_tolerate_is_refused_in_one_line():
    from dptopic.errors import ParameterError
    from dptopic.experiments.secure_sum import choose_cohort_dropouts

    plan, cohort, delegate = _seated(24, 12, 1)     # tolerances 4 and 4: at most 8 of 24
    assert choose_cohort_dropouts(plan, cohort, delegate, 8 / 24, seed=0).sum() == 8
    with pytest.raises(ParameterError) as e:
        choose_cohort_dropouts(plan, cohort, delegate, 0.4, seed=0)
    said = e.value.message({"dropout": "--dropout"})
    assert said.startswith("--dropout 0.4 drops 10 of 24 people, more than the round's plan tolerates (8: at most 4")
    assert said.endswith("give --dropout 0.333 or less.") and "\n" not in said
    plan, cohort, delegate = _seated(24, 12, 0)
    assert not choose_cohort_dropouts(plan, cohort, delegate, None).any()
    with pytest.raises(ParameterError, match="tolerates no dropouts .*: give dropout 0"):
        choose_cohort_dropouts(plan, cohort, delegate, 0.1)


def _uploads(live, phase: int) -> list[set]:
    """Who uploaded in ``phase`` in each round of ``live`` (every cohort's, then the bridge's)."""
    from sqlalchemy import select

    from dptopic.service.secure_sum.database import t_uploads

    out = []
    for r in live.server.parts():
        with r.engine.connect() as conn:
            out.append({w for (w,) in conn.execute(select(t_uploads.c.contributor).where(t_uploads.c.phase == phase))})
    return out


@pytest.mark.service
@pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")
def test_a_round_in_cohorts_with_dropouts_releases_without_the_dropped(tmp_path):
    """A quarter of 24 people (two cohorts of 12, each tolerating 4; a bridge of 10 delegates tolerating 3) mask step
    0 and leave; the experiment closes step 0 at the root once the survivors are in: the round releases, every
    survivor's upload and none of the dropped's is in the sums (a delegate's in neither its cohort nor the bridge),
    and the summary counts them."""
    from cohort_helpers import LiveCohortRound, tiny_bows
    from dptopic.experiments.secure_sum import choose_cohort_dropouts, play_cohort_round
    from dptopic.protocol.secure_sum.cohort_enrollment import read_cohort_invitation

    with LiveCohortRound(tmp_path, 24, 12, dropouts=1) as live:
        invitations = [read_cohort_invitation(f) for f in live.files]
        s = play_cohort_round(live.url, tiny_bows(24), invitations, 0.25, live.TOKEN, seed=2, verbose=0)
        uploads = _uploads(live, 0)
    assert s["state"] == "released", s["reason"]
    cohort = [inv["cohorts"]["cohort"] for inv in invitations]
    delegate = [inv["bridge"] is not None for inv in invitations]
    dropped = choose_cohort_dropouts(live.plan, cohort, delegate, 0.25, seed=2)
    gone = {inv["contributor"] for inv, d in zip(invitations, dropped) if d}
    assert s["dropped"] == len(gone) == 6 and s["refused"] == 0 and s["left_out"] == 0
    assert s["dropped_by_cohort"] == [sum(1 for c, d in zip(cohort, dropped) if d and c == k) for k in (0, 1)]
    assert s["tolerance_by_cohort"] == [4, 4] and s["dropped_delegates"] == int(np.sum(dropped & delegate))
    # seed 2 fills cohort 1's tolerance and the bridge's (three delegates): the round still releases
    assert s["dropped_by_cohort"] == [2, 4] and s["dropped_delegates"] == 3
    for k, members in enumerate(live.server.groups):
        assert uploads[k] == set(members) - gone
    bridge = {inv["bridge"]["contributor"] for inv in invitations if inv["bridge"] is not None}
    assert uploads[-1] == {b for b in bridge if b.split("-", 1)[1] not in gone}


@pytest.mark.service
@pytest.mark.filterwarnings("ignore::dptopic.errors.SmallCorpusWarning")
def test_a_round_in_cohorts_from_two_processes_releases_the_sums_of_one(tmp_path):
    """The same 24 people and dropouts (a quarter, from one seed), the noise held fixed in every contributor process:
    played from one contributor process and from two (each its part of the people, every round of theirs at once),
    the rounds release the same sums; the summary gives the costs per contributor and the server's own."""
    from cohort_helpers import LiveCohortRound, hold_noise_fixed_here, tiny_bows
    from dptopic.experiments.secure_sum import play_cohort_round
    from dptopic.protocol.secure_sum.cohort_enrollment import read_cohort_invitation

    sums, summaries, uploads = {}, {}, {}
    for workers in (1, 2):
        with LiveCohortRound(tmp_path / f"w{workers}", 24, 12, dropouts=1) as live:
            invitations = [read_cohort_invitation(f) for f in live.files]
            s = play_cohort_round(live.url, tiny_bows(24), invitations, 0.25, live.TOKEN, seed=2, workers=workers,
                                  verbose=0, initializer=hold_noise_fixed_here)
            assert s["state"] == "released", s["reason"]
            sums[workers] = [live.server.coordinator.sums[p].copy() for p in (0, 1)]
            summaries[workers], uploads[workers] = s, _uploads(live, 0)
    for p in (0, 1):
        assert (sums[1][p] == sums[2][p]).all()
    assert uploads[1] == uploads[2] and sum(map(len, uploads[2][:2])) == 18       # the same 6 dropped
    for workers, s in summaries.items():
        assert s["workers"] == workers and s["dropped"] == 6 and s["refused"] == 0 and s["left_out"] == 0
        assert s["delegates"] == 10 and s["cohorts"] == 2
        # every person's messages of its cohort's round (a delegate's of the bridge's too): keys, shares, then per
        # step an upload, a signature and perhaps an answer
        assert 2 <= s["requests_per_contributor"] <= 16 and s["bytes_per_contributor"] > s["upload_bytes_max"] > 0
        assert s["bytes_down_per_contributor"] > 0 and s["cpu_per_contributor_s"] > 0
        assert s["seconds_per_contributor"] == pytest.approx(s["seconds"] / 24)
        proc = s["server_process"]     # the server (here this test's own process): its CPU and peak memory
        assert proc["processes"] == 1 and proc["cpu_s"] > 0 and proc["peak_rss_bytes"] > 10 * 2 ** 20


def test_a_round_in_cohorts_with_dropouts_needs_the_admin_token_before_anyone_plays(monkeypatch):
    from dptopic.errors import ParameterError
    from dptopic.experiments import secure_sum

    plan, cohort, delegate = _seated(24, 12, 1)

    class Root:
        def __init__(self, *a, **k):
            pass

        def get_json(self, path):
            assert path == "/v1/config"
            return {"cohorts": {"plan": plan.to_dict(), "paths": ["/cohorts/0", "/cohorts/1"], "bridge": "/bridge"}}

    monkeypatch.setattr(secure_sum, "ServiceClient", Root)
    invitations = [{"cohorts": {"cohort": int(c)}, "bridge": {} if d else None} for c, d in zip(cohort, delegate)]
    with pytest.raises(ParameterError, match="give the server's admin token"):
        secure_sum.play_cohort_round("http://127.0.0.1:9", [None] * 24, invitations, 0.25, None, verbose=0)
    with pytest.raises(ParameterError, match="dropout=0.5 drops 12 of 24 people"):
        secure_sum.play_cohort_round("http://127.0.0.1:9", [None] * 24, invitations, 0.5, "t" * 24, verbose=0)
