"""A saved privacy report recomputed from its own events (``accounting.verify``, ``dptopic privacy verify``)."""
import json

import pytest

from dptopic.accounting import ApproxDPEvent, LaplaceEvent, PureDPEvent, RandomizedResponseEvent
from dptopic.accounting.gaussian import SubsampledGaussianEvent, calibrate_noise_multiplier
from dptopic.accounting.ledger import PrivacyLedger
from dptopic.accounting.verify import RunPlan, check_run, event_from_description, recompute_report, verify_report


@pytest.mark.parametrize("event", [
    LaplaceEvent(scale=2.0, changes=(1, 1), discrete=True, label="counts"),
    LaplaceEvent(scale=0.5, changes=(0.5, 0.25)),
    PureDPEvent(1.3, label="exp", theorem="Thm X"),
    ApproxDPEvent(0.4, 5e-6, label="set union", unit="document"),
    SubsampledGaussianEvent(1.7, 0.02, label="sgd"),
    RandomizedResponseEvent(0.3, 12),
])
def test_every_event_is_rebuilt_from_its_description(event):
    d = json.loads(json.dumps(event.describe()))     # as a saved report holds it
    assert event_from_description(d) == event


def test_private_vocabulary_composition_is_recomputed(private_models):
    rep = private_models[-1].privacy_
    new = recompute_report(rep)
    assert rep["epsilon_pld_tight"] == pytest.approx(new["epsilon_pld_tight"], rel=1e-9)
    assert rep["delta"] == pytest.approx(1e-5 + 5e-6)
    assert new["epsilon_basic"] == pytest.approx(0.5 + rep["topic_model"]["epsilon_basic"], rel=1e-9)


def _edited(rep, **changes):
    rep = json.loads(json.dumps(rep))
    rep.update(changes)
    return rep


def test_a_claim_below_its_events_fails(private_models):
    rep = private_models[1].privacy_                                   # DP-SVI at (1, 1e-5)
    v = verify_report(_edited(rep, epsilon_pld=rep["epsilon_pld"] * 0.9))
    assert v.status == "failed" and "epsilon_pld" in v.detail
    assert v.figures["epsilon_pld"]["verdict"] == "BELOW" and v.figures["epsilon_rdp"]["verdict"] == "agrees"
    v = verify_report(_edited(rep, epsilon=0.5))
    assert v.status == "failed" and "epsilon " in v.detail
    v = verify_report(_edited(rep, delta_requested=1e-9))     # the same epsilon at a smaller delta: not supported
    assert v.status == "failed"


def test_events_edited_to_more_noise_or_fewer_steps_are_caught(private_models):
    rep = json.loads(json.dumps(private_models[1].privacy_))
    rep["events"][0]["count"] += 5                            # more steps than the figures were computed for
    assert verify_report(rep).status == "failed"
    hdp = json.loads(json.dumps(private_models[0].privacy_))
    hdp["events"][0]["scale"] *= 2                            # the event's own epsilon no longer follows from it
    v = verify_report(hdp)
    assert v.status == "failed" and "its own parameters" in v.detail


def test_a_looser_or_unreadable_figure_is_valid_not_failed(private_models):
    rep = private_models[2].privacy_
    assert verify_report(_edited(rep, epsilon_rdp=rep["epsilon_rdp"] * 2)).status == "looser"
    assert verify_report(_edited(rep, epsilon_rdp="abc")).status == "looser"
    assert verify_report({"private": False}).status == "no_claim"


def test_a_report_without_what_it_is_rebuilt_from(private_models):
    rep = json.loads(json.dumps(private_models[0].privacy_))          # HDP-LDA's Laplace event, as saved before 'changes'
    del rep["events"][0]["changes"]
    v = verify_report(rep)
    assert v.status == "not_recomputable" and "changed cells" in v.detail


@pytest.mark.parametrize("edit", [
    {"events": []}, {"events": {"a": 1}}, {"events": [5]}, {"delta": 0}, {"delta": "1e-5"}, {"private": "yes"},
    "count as text", "count as float", "unknown type", "bare",
])
def test_a_damaged_report_fails(private_models, edit):
    rep = json.loads(json.dumps(private_models[2].privacy_))          # DocDPCooccurrence: a Gaussian release
    if edit == "count as text":
        rep["events"][0]["count"] = "1"
    elif edit == "count as float":
        rep["events"][0]["count"] = 1.0
    elif edit == "unknown type":
        rep["events"][0]["type"] = "bogus"
    elif edit == "bare":
        rep = {"private": True}
    else:
        rep.update(edit)
    v = verify_report(rep)
    assert v.status == "failed", v.detail
    assert not v.detail.endswith(".")


def test_the_topic_models_own_figures_of_a_private_vocabulary_are_checked(private_models):
    rep = json.loads(json.dumps(private_models[-1].privacy_))
    rep["topic_model"]["epsilon_pld"] /= 6
    v = verify_report(rep)
    assert v.status == "failed" and "topic_model.epsilon_pld" in v.detail


def test_the_plan_matches_the_ledgers_reservation():
    from dptopic.accounting.verify import RunPlan, Verification, check_run

    lap = LaplaceEvent(scale=2.0, changes=(1, 1), label="a")
    rep = {"events": [dict(lap.describe(), count=3)]}
    ok = Verification("verified", "x", {})
    assert check_run(ok, RunPlan(events=[(lap, 2), (lap, 1)]), rep).status == "verified"   # equal events add up
    v = check_run(Verification("verified", "x", {}), RunPlan(events=[(lap, 3), (PureDPEvent(1.0), 3)]), rep)
    assert v.status == "failed" and "its events list 0" in v.detail
    v = check_run(Verification("verified", "x", {}), RunPlan(events=[(LaplaceEvent(scale=2.0, changes=(1, 0.5)), 3)]),
                  rep)
    assert v.status == "failed" and "do not plan" in v.detail
    assert check_run(Verification("failed", "y", {}), RunPlan(events=[]), rep).detail == "y"   # failed stays failed
    assert check_run(ok, None, rep) is ok


def _gaussian_report(sigma, n, delta):
    led = PrivacyLedger(unit="document", relation="add/remove")
    led.spend(SubsampledGaussianEvent(sigma, 1.0), n)
    return led.report(delta)


def test_check_run_lets_only_float_noise_above_the_budget():
    """A run whose events give an epsilon 5e-5 (relative) above the budget its noise was calibrated to spent more
    than it was asked to: check_run let up to 1e-4 pass."""
    delta, n = 1e-5, 5
    rep = _gaussian_report(calibrate_noise_multiplier(1.0, delta, 1.0, n), n, delta)
    check = verify_report(rep)
    assert check.status == "verified"
    claim = check.figures["epsilon"]["recomputed"]
    over = check_run(verify_report(rep), RunPlan(budget=(claim * (1 - 5e-5), delta)), rep, who="DocDPEM")
    assert over.status == "failed" and "was asked for epsilon" in over.detail
    assert over.figures["budget epsilon (requested)"]["verdict"] == "exceeds"
    # floating-point noise is no excess, and a run within its budget agrees
    for budget in (claim * (1 - 1e-12), claim, 1.0):
        ok = check_run(verify_report(rep), RunPlan(budget=(budget, delta)), rep, who="DocDPEM")
        assert ok.status == "verified", ok.detail
    # delta too: a delta above the budget's by more than float noise fails
    worse = check_run(verify_report(rep), RunPlan(budget=(1.0, delta * (1 - 5e-5))), rep, who="DocDPEM")
    assert worse.status == "failed" and "was asked for delta" in worse.detail


def test_check_run_message_shows_digits_that_differ():
    delta, n = 1e-5, 5
    rep = _gaussian_report(calibrate_noise_multiplier(1.0, delta, 1.0, n), n, delta)
    claim = verify_report(rep).figures["epsilon"]["recomputed"]
    out = check_run(verify_report(rep), RunPlan(budget=(claim * (1 - 1e-7), delta)), rep, who="DocDPEM")
    assert out.status == "failed"
    said = out.detail.split("its events give ")[1].split(";")[0]
    assert said != f"{claim * (1 - 1e-7):.6g}" and float(said) > claim * (1 - 1e-7)


# ---------------------------------------------------------------- privacy verify: no tolerance below a claim
def _local_report():
    from dptopic.accounting.local import f_from_epsilon, local_privacy_report

    return json.loads(json.dumps(local_privacy_report(f_from_epsilon(1.0), 3)))


@pytest.mark.parametrize("key", ["epsilon", "epsilon_pld", "epsilon_basic", "epsilon_rdp"])
def test_verify_fails_a_figure_stated_slightly_below_its_events(key):
    """RTOL = 1e-4 applied both ways: a report stating an epsilon 5e-5 (relative) below its own events verified."""
    from dptopic.accounting.verify import verify_report

    rep = _local_report()
    assert verify_report(rep).status == "verified"
    rep[key] = rep[key] * (1 - 5e-5)
    v = verify_report(rep)
    assert v.status == "failed" and key in v.detail and v.figures[key]["verdict"] == "BELOW"


def test_verify_still_accepts_floating_point_noise_and_a_slightly_looser_claim():
    from dptopic.accounting.verify import verify_report

    rep = _local_report()
    assert verify_report(dict(rep, epsilon_pld=rep["epsilon_pld"] * (1 - 1e-13))).status == "verified"
    assert verify_report(dict(rep, epsilon_pld=rep["epsilon_pld"] * (1 + 5e-5))).status == "verified"
    assert verify_report(dict(rep, epsilon_pld=rep["epsilon_pld"] * 1.01)).status == "looser"


def test_saved_card_slightly_below_its_events_fails():
    from dptopic.accounting.verify import check_saved_card, verify_report

    rep = _local_report()
    v = check_saved_card({"epsilon": rep["epsilon"] * (1 - 5e-5)}, verify_report(rep))
    assert v.status == "failed" and "privacy card" in v.detail
