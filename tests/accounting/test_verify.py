"""A saved privacy report recomputed from its own events (``accounting.verify``, ``dptopic privacy verify``)."""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import dptopic
from dptopic.accounting import ApproxDPEvent, LaplaceEvent, PureDPEvent, RandomizedResponseEvent
from dptopic.accounting.gaussian import SubsampledGaussianEvent
from dptopic.accounting.verify import event_from_description, recompute_report, verify_report
from dptopic.errors import CorruptModelError

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _cli(*args):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=180)


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


@pytest.fixture(scope="module")
def corpus():
    return dptopic.lda_corpus(n_docs=300, vocab_size=60, n_topics=4, seed=0).corpus


def _trainers(corpus):
    from dptopic.local import Randomizer
    from dptopic.models.fdptm import fit_fdptm

    reports = Randomizer.for_simulation(corpus.vocabulary, epsilon_word=3).randomize(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield dptopic.HDPLDA(n_topics=4, n_iter=4, epsilon_laplace=1, verbose=0).fit(corpus)
        yield dptopic.DPSVI.from_budget(1, 1e-5, n_topics=4, verbose=0).fit(corpus)
        yield dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.DocDPEM(n_topics=4, epsilon=1, delta=1e-5, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, verbose=0).fit(corpus)
        yield dptopic.FedLDA(n_topics=4, rounds=2, n_clients=20, exclusion="tail", verbose=0).fit(corpus)
        yield dptopic.LPLDA(n_topics=4, n_iter=3, epsilon_word=3, verbose=0).fit(reports)
        yield fit_fdptm(dptopic.HDPLDA(n_topics=4, n_iter=3, epsilon_laplace=1, verbose=0), corpus, 0.5, 5e-6)[0]
        yield fit_fdptm(dptopic.DocDPCooccurrence(n_topics=4, epsilon=1, delta=1e-5, verbose=0), corpus, 0.5, 5e-6)[0]


@pytest.fixture(scope="module")
def models(corpus):
    return list(_trainers(corpus))


def test_every_trainer_report_verifies_before_and_after_saving(models, tmp_path):
    for i, m in enumerate(models):
        v = verify_report(m.privacy_)
        assert v.status == "verified", (type(m).__name__, v.detail)
        assert "epsilon_pld" in v.figures and v.figures["epsilon_pld"]["stated"] == pytest.approx(
            v.figures["epsilon_pld"]["recomputed"], rel=1e-9)
        m.save(tmp_path / str(i))
        back = dptopic.load(tmp_path / str(i))
        assert verify_report(back.privacy_).status == "verified", type(m).__name__


def test_private_vocabulary_composition_is_recomputed(models):
    rep = models[-1].privacy_
    new = recompute_report(rep)
    assert rep["epsilon_pld_tight"] == pytest.approx(new["epsilon_pld_tight"], rel=1e-9)
    assert rep["delta"] == pytest.approx(1e-5 + 5e-6)
    assert new["epsilon_basic"] == pytest.approx(0.5 + rep["topic_model"]["epsilon_basic"], rel=1e-9)


def _edited(rep, **changes):
    rep = json.loads(json.dumps(rep))
    rep.update(changes)
    return rep


def test_a_claim_below_its_events_fails(models):
    rep = models[1].privacy_                                   # DP-SVI at (1, 1e-5)
    v = verify_report(_edited(rep, epsilon_pld=rep["epsilon_pld"] * 0.9))
    assert v.status == "failed" and "epsilon_pld" in v.detail
    assert v.figures["epsilon_pld"]["verdict"] == "BELOW" and v.figures["epsilon_rdp"]["verdict"] == "agrees"
    v = verify_report(_edited(rep, epsilon=0.5))
    assert v.status == "failed" and "epsilon " in v.detail
    v = verify_report(_edited(rep, delta_requested=1e-9))     # the same epsilon at a smaller delta: not supported
    assert v.status == "failed"


def test_events_edited_to_more_noise_or_fewer_steps_are_caught(models):
    rep = json.loads(json.dumps(models[1].privacy_))
    rep["events"][0]["count"] += 5                            # more steps than the figures were computed for
    assert verify_report(rep).status == "failed"
    hdp = json.loads(json.dumps(models[0].privacy_))
    hdp["events"][0]["scale"] *= 2                            # the event's own epsilon no longer follows from it
    v = verify_report(hdp)
    assert v.status == "failed" and "its own parameters" in v.detail


def test_a_looser_or_unreadable_figure_is_valid_not_failed(models):
    rep = models[2].privacy_
    assert verify_report(_edited(rep, epsilon_rdp=rep["epsilon_rdp"] * 2)).status == "looser"
    assert verify_report(_edited(rep, epsilon_rdp="abc")).status == "looser"
    assert verify_report({"private": False}).status == "no_claim"


def test_a_report_without_what_it_is_rebuilt_from(models):
    rep = json.loads(json.dumps(models[0].privacy_))          # HDP-LDA's Laplace event, as saved before 'changes'
    del rep["events"][0]["changes"]
    v = verify_report(rep)
    assert v.status == "not_recomputable" and "changed cells" in v.detail


@pytest.mark.parametrize("edit", [
    {"events": []}, {"events": {"a": 1}}, {"events": [5]}, {"delta": 0}, {"delta": "1e-5"}, {"private": "yes"},
    "count as text", "count as float", "unknown type", "bare",
])
def test_a_damaged_report_fails(models, edit):
    rep = json.loads(json.dumps(models[2].privacy_))          # DocDPCooccurrence: a Gaussian release
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


def test_the_saved_claim_is_checked_before_load_names_it_again(models, tmp_path):
    d = tmp_path / "m"
    models[0].save(d)                                         # HDP-LDA, word level
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"]["epsilon"] = meta["privacy"]["epsilon"] / 2
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="epsilon is stated as"):
        dptopic.load(d)
    old = json.loads(json.dumps(models[0].privacy_))         # a report saved before 'epsilon' named the guarantee
    del old["epsilon"], old["epsilon_method"]
    assert verify_report(old).status == "verified"


def test_the_topic_models_own_figures_of_a_private_vocabulary_are_checked(models):
    rep = json.loads(json.dumps(models[-1].privacy_))
    rep["topic_model"]["epsilon_pld"] /= 6
    v = verify_report(rep)
    assert v.status == "failed" and "topic_model.epsilon_pld" in v.detail


def test_load_refuses_a_report_that_claims_more_than_its_events(models, tmp_path):
    d = tmp_path / "m"
    models[2].save(d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"]["epsilon_pld"] = meta["privacy"]["epsilon_pld"] / 2
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="does not match its own events"):
        dptopic.load(d)


def test_card_and_html_show_the_check(models):
    from dptopic.reporting import privacy_card, render_report

    card = privacy_card(models[2].privacy_, "DocDPCooccurrence")
    assert card["ledger_check"]["status"] == "verified"
    assert "ledger_check" not in privacy_card(models[2].privacy_, "DocDPCooccurrence", check=False)
    html = render_report(title="t", trainer="DocDPCooccurrence", card=card, topics=[[("a", 1.0)]])
    assert "recomputed from its events" in html and "verified" in html


def test_cli_verify(models, tmp_path):
    d = tmp_path / "m"
    models[0].save(d)
    r = _cli("privacy", "verify", d)
    assert r.returncode == 0, r.stderr
    out = " ".join(r.stdout.split())
    assert "verified:" in out and "epsilon_pld" in out
    r = _cli("report", "--model", d, "--out", tmp_path / "r.html")
    assert r.returncode == 0, r.stderr
    assert "recomputed from the report's events: verified" in " ".join(r.stdout.split())
    report = tmp_path / "report.json"                         # a bare report (model.privacy_) as JSON
    report.write_text(json.dumps(_edited(models[0].privacy_, epsilon_pld=1.0)))
    r = _cli("privacy", "verify", report)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "does not match its own events" in lines[0]
    assert "BELOW" in r.stdout
    r = _cli("privacy", "verify", report, "--format", "json")
    assert r.returncode == 2 and json.loads(r.stdout)["status"] == "failed"
    r = _cli("privacy", "verify", d, "--format", "json")
    got = json.loads(r.stdout)
    assert r.returncode == 0 and got["status"] == "verified" and got["figures"]["epsilon_pld"]["recomputed"] > 0
    meta = json.loads((d / "model.json").read_text())
    meta["privacy_card"]["epsilon"] = 0.001                   # the card a reader of the file sees
    (tmp_path / "card.json").write_text(json.dumps(meta))
    r = _cli("privacy", "verify", tmp_path / "card.json")
    assert r.returncode == 2 and "privacy card saved in model.json" in r.stderr
    old = _edited(models[0].privacy_)
    del old["events"][0]["changes"]
    (tmp_path / "old.json").write_text("\ufeff" + json.dumps(old))     # a byte-order mark is read as text
    r = _cli("privacy", "verify", tmp_path / "old.json")
    assert r.returncode == 2 and "cannot be verified" in r.stderr and "Traceback" not in r.stderr
    for name, text in (("bad.json", "{bad"), ("empty.json", ""), ("lines.jsonl", '{"text": "a"}\n{"text": "b"}\n')):
        (tmp_path / name).write_text(text)
        r = _cli("privacy", "verify", tmp_path / name)
        assert r.returncode == 2 and "not valid JSON" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = _cli("privacy", "verify", tmp_path / "missing")
    assert r.returncode == 2 and "does not exist" in r.stderr and "Traceback" not in r.stderr
    (tmp_path / "plain.json").write_text("[1, 2]")
    r = _cli("privacy", "verify", tmp_path / "plain.json")
    assert r.returncode == 2 and "holds no privacy report" in r.stderr


def test_a_composition_long_enough_for_a_coarse_grid_recomputes():
    from dptopic.accounting import f_from_epsilon, local_privacy_report

    # a contributor's 1,400 whole-document reports over 1,500 words: basic epsilon 6e6, PLD grid step above 1
    rep = local_privacy_report(f_from_epsilon(3), 1500, reports_per_contributor=1400)
    assert rep["pld_discretization"] > 1
    assert verify_report(rep).status == "verified"


def _recomputed_consistently(rep):
    """``rep`` with every figure recomputed from its (edited) events, as someone editing a report would."""
    new = recompute_report(rep)
    rep.update({k: v for k, v in new.items() if k in rep or k in ("epsilon", "delta")})
    return rep


def test_every_trainer_report_matches_what_its_parameters_plan(models):
    from dptopic.models.base import planned_spend_check

    checked = set()
    for m in models:
        v = planned_spend_check(verify_report(m.privacy_), m, m.privacy_)
        assert v.status == "verified", (type(m).__name__, v.detail)
        if m._planned_spend(m.privacy_) is not None:
            checked.add(type(m).__name__)
            assert "match what" in v.detail
    # the trainers whose events follow from their parameters, and LP-LDA, whose plan fixes only its unit and
    # relation (local reports carry their own events)
    assert checked == {"HDPLDA", "DPSVI", "DocDPCooccurrence", "DocDPEM", "FedLDA", "LPLDA"}


@pytest.mark.parametrize("i, what", [(0, "fewer iterations"), (1, "fewer steps"), (2, "more noise"), (3, "more noise"),
                                     (4, "fewer entries")])
def test_events_edited_with_their_figures_are_caught_by_the_plan(models, tmp_path, i, what):
    # an edit that recomputes every figure from the edited events passes the recomputation; the plan catches it
    m = models[i]
    rep = json.loads(json.dumps(m.privacy_))
    if what == "more noise":
        rep["events"][0]["noise_multiplier"] *= 1.5
    else:
        rep["events"][0]["count"] = max(1, rep["events"][0]["count"] // 2)
    rep = _recomputed_consistently(rep)
    assert verify_report(rep).status == "verified"
    d = tmp_path / "m"
    m.save(d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"] = rep
    meta.pop("privacy_card", None)
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="do not match the run its parameters describe"):
        dptopic.load(d)
    r = _cli("privacy", "verify", d)
    assert r.returncode == 2 and "parameters plan" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "differs" in r.stdout


@pytest.mark.parametrize("break_params", ["unknown class", "unknown parameter", "invalid parameters"])
def test_events_edited_with_their_figures_fail_verify_when_the_parameters_cannot_be_planned(models, tmp_path,
                                                                                             break_params):
    # with the trainer's parameters made unusable, the plan was skipped and `privacy verify` said "verified" (exit 0)
    # on events edited down with their figures
    m = models[0]                                              # HDP-LDA
    rep = json.loads(json.dumps(m.privacy_))
    rep["events"][0]["count"] = max(1, rep["events"][0]["count"] // 2)
    rep = _recomputed_consistently(rep)
    d = tmp_path / "m"
    m.save(d)
    meta = json.loads((d / "model.json").read_text())
    meta["privacy"] = rep
    meta.pop("privacy_card", None)
    if break_params == "unknown class":
        meta["class"] = "Foo"
    elif break_params == "unknown parameter":
        meta["params"]["colour"] = "red"
    else:
        meta["params"]["n_iter"] = -3
    (d / "model.json").write_text(json.dumps(meta))
    r = _cli("privacy", "verify", d)
    assert r.returncode == 2 and "cannot be compared with what the trainer" in r.stderr, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr


def test_a_model_whose_figures_cannot_be_recomputed_loads_with_a_warning(models, tmp_path):
    # its figures were shown as saved, with no word that nothing had checked them
    d = tmp_path / "m"
    models[0].save(d)
    meta = json.loads((d / "model.json").read_text())
    del meta["privacy"]["events"][0]["changes"]
    (d / "model.json").write_text(json.dumps(meta))
    with pytest.warns(UserWarning, match="cannot be recomputed from its events .*unchecked"):
        dptopic.load(d)
    r = _cli("topics", "--model", d)
    assert r.returncode == 0 and "unchecked" in " ".join(r.stderr.split()), r.stderr


def test_a_run_over_its_budget_and_parameters_edited_down_are_caught(models, tmp_path):
    d = tmp_path / "m"
    models[3].save(d)                                          # DocDPEM at (1, 1e-5)
    meta = json.loads((d / "model.json").read_text())
    meta["params"]["epsilon"] = 0.5                            # the parameters claim a smaller budget than was spent
    (d / "model.json").write_text(json.dumps(meta))
    r = _cli("privacy", "verify", d, "--format", "json")
    got = json.loads(r.stdout)
    assert r.returncode == 2 and got["status"] == "failed"
    assert "asked for epsilon 0.5" in got["detail"] and got["figures"]["budget epsilon (requested)"]["verdict"] == "exceeds"
    d2 = tmp_path / "m2"
    models[0].save(d2)                                         # HDP-LDA, 4 iterations
    meta = json.loads((d2 / "model.json").read_text())
    meta["params"]["n_iter"] = 40
    (d2 / "model.json").write_text(json.dumps(meta))
    with pytest.raises(CorruptModelError, match="plan 40"):
        dptopic.load(d2)


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


@pytest.mark.parametrize("i, field, value", [
    (0, "unit", "document"),                          # HDP-LDA: word-level, edited to claim a whole document
    (0, "neighbouring_relation", "add/remove one document"),
    (1, "unit", "user"),                              # DP-SVI: document-level, edited to a user
    (2, "neighbouring_relation", "replace one user's documents"),
    (4, "unit", "document"),                          # FedLDA: per user
    (6, "unit", "word"),                              # LP-LDA: local, per document, edited to one word
    (6, "neighbouring_relation", "add/remove one document"),
    (7, "unit", "document"),                          # HDP-LDA on a private vocabulary: "document + word" edited
    (7, "topic_model.unit", "document"),
])
def test_a_unit_or_relation_edited_away_from_the_trainers_is_refused(models, tmp_path, i, field, value):
    # the figures still recompute from the events (they carry no unit), so only the trainer's own unit catches this
    d = tmp_path / "m"
    models[i].save(d)
    meta = json.loads((d / "model.json").read_text())
    rep = meta["privacy"]
    dptopic.load(d)                                   # as saved, it loads
    if "." in field:
        rep["topic_model"]["unit"] = value
    else:
        assert rep[field] != value
        rep[field] = value
    meta.pop("privacy_card", None)
    (d / "model.json").write_text(json.dumps(meta))
    assert verify_report(rep).status == "verified"
    with pytest.raises(CorruptModelError, match="names the (unit|neighbouring relation)"):
        dptopic.load(d)


@pytest.mark.filterwarnings("ignore:an explicit seed")
@pytest.mark.parametrize("field, value", [("unit", "word"), ("unit", "document"),
                                          ("neighbouring_relation", "add/remove one document")])
def test_a_document_level_local_models_unit_edited_is_refused(tmp_path, field, value):
    # local models had no run plan, so an edited unit or relation loaded as it was
    from dptopic.local.document import DocumentRandomizer
    from dptopic.models import LocalDocumentLDA

    s = dptopic.lda_corpus(n_docs=400, vocab_size=30, n_topics=3, doc_length=12, seed=2)
    rs = DocumentRandomizer.for_simulation(s.corpus.vocabulary, 8.0, seed=0).randomize(s.corpus)
    m = LocalDocumentLDA(n_topics=3, reports_per_contributor=2).fit(rs)
    d = tmp_path / "m"
    m.save(d)
    dptopic.load(d)                                   # as saved, it loads
    meta = json.loads((d / "model.json").read_text())
    assert meta["privacy"][field] != value
    meta["privacy"][field] = value
    meta.pop("privacy_card", None)
    (d / "model.json").write_text(json.dumps(meta))
    assert verify_report(meta["privacy"]).status == "verified"
    with pytest.raises(CorruptModelError, match="names the (unit|neighbouring relation)"):
        dptopic.load(d)
