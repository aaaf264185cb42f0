"""The audit from Python and its record: a verdict beside the claim, the report's guarantee as the claim, the
figures labelled as outside the guarantee, one-line errors, the corpus coverage check and the --out rule."""
import json
import string

import numpy as np
import pytest

import dptopic
from dptopic.attacks import lira, run_lira, run_topic_attack
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError
from dptopic.models.base import OUTSIDE_GUARANTEE
from helpers import claiming_trainer

LEAKY_CLAIM = {"private": True, "epsilon": 0.1, "epsilon_pld": 0.1, "delta": 1e-5, "unit": "document",
               "neighbouring_relation": "document-level replacement"}


def _json_has_no_inf(doc):
    text = json.dumps(doc, allow_nan=False)     # raises on a float infinity
    assert '"inf"' not in text and '"Infinity"' not in text


# ----------------------------------------------------------------- 1-3: verdict, claim, label
def test_a_leaky_trainer_claiming_epsilon_0_1_exceeds_its_claim(small):
    # 16 shadow models: the bound treats each model's scores as one cluster, and 4 models a half (8 shadows) bound
    # nothing at the attacks' Bonferroni confidence
    r = run_lira(small, claiming_trainer(LEAKY_CLAIM), n_shadows=16, seed=0, verbose=0)
    doc = r.to_json()
    assert doc["claimed_privacy"]["epsilon"] == 0.1 and doc["claimed_privacy"]["guarantee"] == "full"
    assert doc["empirical_epsilon"]["epsilon_lower_bound"] > 0.1
    assert doc["verdict"] == r.verdict == "exceeds the claim" and "exceeds" in doc["verdict_note"]
    assert doc["metrics_guarantee"] == OUTSIDE_GUARANTEE
    _json_has_no_inf(doc)


def test_word_level_claim_is_not_comparable_and_no_claim_is_null(small):
    word = dict(LEAKY_CLAIM, unit="word", neighbouring_relation="word-level replacement")
    r = run_lira(small, claiming_trainer(word), n_shadows=4, seed=0, verbose=0)
    assert r.verdict == "units differ"
    assert any("group privacy" in n for n in r.to_json()["claimed_privacy"]["notes"])
    r = run_lira(small, claiming_trainer({"private": False, "reason": "plain LDA"}), n_shadows=4, seed=0, verbose=0)
    doc = r.to_json()
    assert r.verdict == "no claim" and doc["claimed_privacy"]["epsilon"] is None
    _json_has_no_inf(doc)


def test_the_claim_is_the_reports_guarantee_not_its_pld_figure(small):
    # the report's guarantee (epsilon) is looser than its PLD figure: the audit compares with the guarantee
    rep = dict(LEAKY_CLAIM, epsilon=50.0, epsilon_pld=0.1, delta=1e-3)
    r = run_lira(small, claiming_trainer(rep), n_shadows=4, seed=0, verbose=0)
    assert r.to_json()["claimed_privacy"]["epsilon"] == 50.0
    assert r.verdict == "consistent with the claim" and r.empirical_epsilon["delta"] == 1e-3


def test_a_report_that_claims_nothing_says_no_guarantee_claimed(small):
    tail = {"private": True, "epsilon": None, "delta": 1e-5, "unit": "user", "guarantee": "none",
            "epsilon_method": "none: the events' own deltas add to 205, so no guarantee with delta < 1 follows"}
    r = run_lira(small, claiming_trainer(tail), n_shadows=4, seed=0, verbose=0)
    c = r.to_json()["claimed_privacy"]
    assert c["private"] and c["epsilon"] is None and c["guarantee"] == "none"
    assert c["reason"].startswith("no guarantee claimed")
    assert r.verdict == "no claim" and r.empirical_epsilon["delta"] == 1e-5   # the delta the report states


def test_an_audited_models_claim_sets_delta_and_relation(small):
    saved = dict(LEAKY_CLAIM, epsilon=3.0, delta=1e-3, neighbouring_relation="add/remove one document",
                 vocabulary_source="private", vocabulary_selection={"eps": 1.0})
    r = run_lira(small, claiming_trainer(LEAKY_CLAIM), n_shadows=4, seed=0, verbose=0, claim=saved)
    e, c = r.empirical_epsilon, r.to_json()["claimed_privacy"]
    assert e["delta"] == 1e-3 and e["relation"] == "add_remove"        # the saved model's, not the shadows'
    assert c["epsilon"] == 3.0 and any("private vocabulary selection" in n for n in c["notes"])
    assert r.settings["claim_from"] == "the audited model's report"


def test_shadow_claims_drop_the_seed_disclosure_and_keep_partial(small):
    fn = lira.estimator_trainer("hdp", n_topics=3, n_iter=2, epsilon_laplace=0.5)
    r = run_lira(small.subset(range(20)), fn, n_shadows=4, seed=0, verbose=0)
    assert r.claimed["private"] and "noise_reproducible" not in r.claimed
    assert "explicit seed" not in str(r.claimed.get("warning", ""))
    assert r.claimed["guarantee"] == "partial" and r.claimed["audit_note"] == lira.SHADOW_SEED_NOTE
    c = r.to_json()["claimed_privacy"]
    assert c["guarantee"] == "partial" and any(n.startswith("the claim is partial") for n in c["notes"])


def test_classifier_attack_claim_and_label(small):
    from dptopic.attacks.classifier_mia import classifier_mia

    labelled = Corpus(small.doc_ptr, small.word_ids, small.vocabulary,
                      labels=["a" if i % 2 else "b" for i in range(small.n_docs)])
    r = classifier_mia(labelled, lira.estimator_trainer("hdp", n_topics=3, n_iter=2, epsilon_laplace=1.0), n_shadows=1,
                       seed=0, verbose=0)
    claim = r["claimed_privacy"]
    assert claim["private"] and "noise_reproducible" not in claim and claim["guarantee"] == "partial"
    assert "explicit seed" not in str(claim.get("warning", "")) and "seeds its own" in claim["audit_note"]
    assert r["metrics_guarantee"] == OUTSIDE_GUARANTEE


# ----------------------------------------------------------------- 5: one-line errors from the Python API
def _phi(value):
    return lambda corpus, rng: value(corpus.vocab_size)


@pytest.mark.parametrize("call, words", [
    (lambda c: run_lira(c, claiming_trainer(LEAKY_CLAIM), n_shadows=4, n_targets=0, verbose=0), "n_targets"),
    (lambda c: run_lira(c, claiming_trainer(LEAKY_CLAIM), n_shadows=4, n_targets=-1, verbose=0), "n_targets"),
    (lambda c: run_lira(c, claiming_trainer(LEAKY_CLAIM), n_shadows=4, n_jobs=0, verbose=0), "n_jobs"),
    (lambda c: run_lira(c, claiming_trainer(LEAKY_CLAIM), n_shadows=4.0, verbose=0), "n_shadows"),
    (lambda c: run_lira(["a b c", "d e f"], claiming_trainer(LEAKY_CLAIM), n_shadows=4, verbose=0), "Corpus"),
    (lambda c: lira.sklearn_trainer(3, foo=1), "foo"),
    (lambda c: run_lira(c, _phi(lambda V: np.ones(V)), n_shadows=4, verbose=0), "K x V"),
    (lambda c: run_lira(c, _phi(lambda V: np.full((3, V), np.nan)), n_shadows=4, verbose=0), "NaN"),
    (lambda c: run_lira(c, _phi(lambda V: -np.ones((3, V))), n_shadows=4, verbose=0), "negative"),
    (lambda c: run_lira(c, _phi(lambda V: np.vstack([np.ones(V), np.zeros(V)])), n_shadows=4, verbose=0),
     "no weight"),
    (lambda c: run_topic_attack(lambda s: dptopic.LDA(n_topics=3, n_iter=2, seed=s, verbose=0), c, seeds=[]),
     "no seeds"),
    (lambda c: run_topic_attack(lambda s: dptopic.DPSVI(n_topics=3, noise_multiplier=1.0, sampling_rate=0.5,
                                                        n_epochs=1), c, seeds=[0], n_targets=2), "DPSVI"),
    (lambda c: run_topic_attack(lambda s: dptopic.DocDPCooccurrence(n_topics=3, epsilon=1, delta=1e-5), c,
                                seeds=[0], n_targets=2), "DocDPCooccurrence"),
])
def test_api_errors_are_one_line(small, call, words):
    with pytest.raises(DPTopicError) as e:
        call(small.subset(range(20)))
    assert words in str(e.value) and "\n" not in str(e.value)


def test_plot_errors_are_one_line(small, tmp_path):
    r = run_lira(small.subset(range(20)), claiming_trainer(LEAKY_CLAIM, 3), n_shadows=4, seed=0, verbose=0)
    with pytest.raises(DPTopicError, match="unknown attack 'nope'"):
        r.plot(tmp_path / "x.png", attacks=["nope"])
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(DPTopicError, match="cannot write the ROC plot"):
        r.plot(tmp_path / "file" / "roc.png")
    assert r.plot(tmp_path / "new" / "roc.png").stat().st_size > 1000   # a folder that can be made is made


# ----------------------------------------------------------------- HTML
def test_html_audit_section_shows_verdict_label_and_unit_note():
    from dptopic.accounting.card import privacy_card
    from dptopic.reporting.html import render_report

    claim = lira.claimed_epsilon(dict(LEAKY_CLAIM, unit="word"))
    audit = {"attacks": {"lira_online": {"auc": 0.9}}, "empirical_epsilon": {"epsilon_lower_bound": 2.0},
             "claimed_privacy": claim, "verdict": "exceeds the claim", "verdict_note": "bound 2 above 0.1",
             "metrics_guarantee": OUTSIDE_GUARANTEE}
    html = render_report(title="t", trainer="LDA", card=privacy_card({"private": False}, "LDA"),
                         topics=[[("a", 1.0)]], audit=audit)
    assert "more leakage than the model claims" in html and "exceeds the claim" in html
    assert "outside the guarantee" in html and "group privacy" in html
    html = render_report(title="t", trainer="LDA", card=privacy_card({"private": False}, "LDA"),
                         topics=[[("a", 1.0)]], audit=dict(audit, verdict="consistent with the claim"))
    assert "more leakage than the model claims" not in html


# ----------------------------------------------------------------- CLI
def _letters(i, n=3):
    out = ""
    for _ in range(n):
        i, r = divmod(i, 26)
        out += string.ascii_lowercase[r]
    return out


def _write_jsonl(path, corpus, prefix, labels=False):
    with open(path, "w") as fh:
        for d in range(corpus.n_docs):
            ids = corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]
            rec = {"text": " ".join(prefix + _letters(int(w)) for w in ids)}
            if labels:
                rec["party"] = "red" if d % 2 else "blue"
            fh.write(json.dumps(rec) + "\n")
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, small):
    from dptopic.cli.main import main

    d = tmp_path_factory.mktemp("walk")
    a = _write_jsonl(d / "a.jsonl", small, "zork", labels=True)
    other = lda_corpus(n_docs=60, vocab_size=80, n_topics=3, doc_length=("poisson", 40), seed=6).corpus
    b = _write_jsonl(d / "b.jsonl", other, "quux")
    mixed = d / "mixed.jsonl"   # the model's words plus a few unknown ones (about 5% of tokens)
    mixed.write_text("".join(json.dumps({"text": json.loads(line)["text"] + " quuxaaa quuxbbb"}) + "\n"
                             for line in a.read_text().splitlines()))
    model = d / "model"
    assert main(["train", "--corpus", str(a), "--topics", "3", "--iterations", "3", "--out", str(model), "--quiet",
                 "--seed", "0"]) == 0
    return d, a, b, mixed, model


def _err(capsys):
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_cli_coverage_check_is_real(files, capsys):
    from dptopic.cli.main import main

    d, a, b, mixed, model = files
    base = ["audit", "--model", str(model), "--shadows", "4", "--seed", "0", "--quiet"]
    assert main(base + ["--corpus", str(b), "--out", str(d / "cov1")]) == 2
    err = _err(capsys)
    assert "% of the tokens" in err and "--restrict" in err and not (d / "cov1").exists()
    # a few unknown words (under the limit): audited, with a note naming their share
    assert main(base + ["--corpus", str(mixed), "--out", str(d / "cov2")]) == 0
    out = " ".join(capsys.readouterr().out.split())       # the console wraps long lines
    assert "outside the model's vocabulary and were dropped" in out and "verdict: no claim" in out
    doc = json.loads((d / "cov2" / "audit.json").read_text())
    assert "outside the model's vocabulary" in doc["settings"]["coverage"]
    assert doc["metrics_guarantee"] == OUTSIDE_GUARANTEE and doc["claimed_privacy"]["epsilon"] is None


def test_cli_restrict_proceeds_on_a_foreign_corpus(files, capsys):
    from dptopic.cli.main import main

    d, a, b, mixed, model = files
    def half(line):
        words = json.loads(line)["text"].split()
        return words[: len(words) // 2]

    partial = d / "half.jsonl"    # every document: half of its own words, half words the model does not know
    partial.write_text("".join(json.dumps({"text": " ".join(half(x) + half(y))}) + "\n"
                               for x, y in zip(a.read_text().splitlines(), b.read_text().splitlines())))
    args = ["audit", "--model", str(model), "--shadows", "4", "--seed", "0", "--quiet", "--corpus", str(partial)]
    assert main(args + ["--out", str(d / "r1")]) == 2
    assert "--restrict" in _err(capsys)
    assert main(args + ["--restrict", "--out", str(d / "r2")]) == 0
    assert "(--restrict)" in " ".join(capsys.readouterr().out.split())


def test_cli_overwrite_never_replaces_another_commands_folder(files, capsys):
    from dptopic._io import mark_output_folder
    from dptopic.cli.main import main

    d, a, *_ = files
    other = d / "cmia"
    other.mkdir()
    (other / "fig7.csv").write_text("x\n")
    mark_output_folder(other, "experiment classifier-mia", done=True)
    assert main(["audit", "--algorithm", "lda", "--topics", "3", "--iterations", "2", "--corpus", str(a),
                 "--shadows", "4", "--quiet", "--out", str(other), "--overwrite"]) == 2
    assert "experiment classifier-mia" in _err(capsys) and (other / "fig7.csv").exists()
    assert not (other / "audit.json").exists()
    # and an experiment never replaces an audit's folder (or another experiment's)
    audited = d / "audited"
    audited.mkdir()
    (audited / "audit.json").write_text("{}")
    mark_output_folder(audited, "audit", done=True)
    assert main(["experiment", "topic-attack", "--out", str(audited), "--overwrite"]) == 2
    assert "written by 'dptopic audit'" in _err(capsys) and (audited / "audit.json").read_text() == "{}"


def test_cli_prints_a_loud_verdict(files, capsys, monkeypatch):
    from dptopic.cli import audit
    from dptopic.cli.main import main

    d, a, *_ = files
    from dptopic.attacks.audit import AuditedProcedure

    monkeypatch.setattr(audit, "_trainer_from_args", lambda args: AuditedProcedure(claiming_trainer(LEAKY_CLAIM), None, "leaky fake"))
    assert main(["audit", "--algorithm", "lda", "--corpus", str(a), "--shadows", "16", "--seed", "0", "--quiet",
                 "--out", str(d / "loud")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "WARNING: verdict: exceeds the claim" in out and "outside the guarantee" in out
    assert json.loads((d / "loud" / "audit.json").read_text())["verdict"] == "exceeds the claim"


def test_cli_classifier_mia_takes_a_label_field(files, capsys):
    from dptopic.cli.main import main

    d, a, *_ = files
    args = ["experiment", "classifier-mia", "--corpus", str(a), "--algorithms", "lda", "--topics", "3",
            "--iterations", "2", "--shadows", "1", "--seed", "0", "--quiet"]
    assert main(args + ["--out", str(d / "m0")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]     # after the experiment's note
    assert err.startswith("error: ") and "--label-field" in err
    assert main(args + ["--label-field", "party", "--out", str(d / "m1")]) == 0
    doc = json.loads((d / "m1" / "fig7_results.json").read_text())
    assert doc["labels"] == ["blue", "red"] and doc["metrics_guarantee"] == OUTSIDE_GUARANTEE


# ----------------------------------------------------------------- the audit run from Python (attacks/audit.py)
def test_the_one_run_audit_from_python_records_and_prints_what_the_command_does(small, tmp_path):
    from dptopic.attacks import audit

    proc = audit.trainer_procedure("lda", topics=3, iterations=3)
    assert proc.model is None and proc.claim() is None and not proc.user_level
    doc = audit.audit_one_run(small, proc, canaries=20, canary_length=10, seed=0, scale="one model")
    assert doc["design"] == "one-run" and doc["settings"]["scale"] == "one model"
    assert doc["settings"]["reproducible"].startswith("yes: run again with seed=0")
    written = audit.write_audit(tmp_path / "a", doc)
    assert json.loads(written[0].read_text())["verdict"] == doc["verdict"]
    lines = audit.summary_lines(doc, written)
    texts = [t for t, _ in lines]
    assert texts[0].startswith("guesses: ") and "20 canaries" in texts[0]
    assert texts[1].startswith("empirical epsilon lower bound (for adding/removing one canary document;")
    assert "claimed epsilon: none (not private)" in texts
    assert any(t.startswith("verdict: ") for t in texts) and texts[-1] == f"written: {written[0]}"
    assert dict(lines)[next(t for t in texts if t.startswith("claimed"))] == "claim"


def test_the_audit_names_a_refused_setting_as_its_caller_writes_it():
    from dptopic.attacks import audit

    with pytest.raises(DPTopicError, match=r"^epsilon is the guarantee .* settings=\{'paper_epsilon': VALUE\}"):
        audit.trainer_procedure("cdp", epsilon=1.0)
    with pytest.raises(DPTopicError, match=r"^--epsilon is the guarantee .* --set paper_epsilon=VALUE"):
        audit.trainer_procedure("cdp", epsilon=1.0, names={"epsilon": "--epsilon", "settings": "--set"})
    with pytest.raises(DPTopicError, match=r"^--epsilon is the guarantee"):
        audit.trainer_procedure("cdp", epsilon=1.0, names={"epsilon": "--epsilon"})
    with pytest.raises(DPTopicError, match=r"invalid shadows 5: need an even number"):
        audit.lira_settings(shadows=5)
    with pytest.raises(DPTopicError, match=r"invalid --targets 9: at most --shadows \(8\)"):
        audit.lira_settings(shadows=8, targets=9, names={"shadows": "--shadows", "targets": "--targets"})
    assert audit.lira_settings() == (audit.DEFAULT_SHADOWS, None, audit.DEFAULT_JOBS)
    with pytest.raises(DPTopicError, match="more than the 5,000,000 canary documents"):
        audit.release_settings(canaries=300_000, canary_unit="person")
    assert audit.release_settings() == (audit.RELEASE_CANARIES, "document", 1)


def test_a_word_list_corpus_is_restricted_to_the_models_words_with_a_note(small):
    from dptopic.attacks.audit import restricted_to_model

    class Model:
        vocabulary_ = small.vocabulary.__class__(list(small.vocabulary.words)[:70])

    corpus, note = restricted_to_model(Model(), small, restrict=True, vocabulary="the list")
    assert corpus.vocab_size == 70 and "were dropped (restrict=True)" in note
    with pytest.raises(DPTopicError, match="outside the model's vocabulary"):
        restricted_to_model(Model(), small.restrict(small.vocabulary.__class__(list(small.vocabulary.words)[70:])))


def test_check_renamed_refuses_a_renamed_setting_with_the_trainers_public_line():
    from dptopic import FedLDA
    from dptopic.attacks.audit import check_renamed
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError) as e:
        check_renamed(FedLDA, {"delta": 0.1})
    assert str(e.value) == f"invalid settings={{'delta': ...}}: {FedLDA.renamed_parameter('delta')}"
    with pytest.raises(DPTopicError) as e:
        check_renamed(FedLDA, {"delta": 0.1}, names={"settings": "--set"})
    assert str(e.value) == f"invalid --set delta=...: {FedLDA.renamed_parameter('delta')}"
    check_renamed(FedLDA, {"failure_rate": 0.1})


def test_the_library_reads_no_private_model_attribute_outside_the_models():
    """Above the models, a model's training sizes, renamed parameters and FedLDA's per-entry epsilon are read by
    their public names (training_stats_, renamed_parameter, epsilon_per_entry_)."""
    import pathlib

    import dptopic

    root = pathlib.Path(dptopic.__file__).parent
    private = ("._train_stats", "_renamed_params", "._entry_epsilon", '"_train_stats"', '"_renamed_params"')
    found = [f"{p.relative_to(root)}: {name}" for package in ("attacks", "service", "training", "reporting",
                                                              "experiments", "cli")
             for p in sorted((root / package).rglob("*.py")) for name in private if name in p.read_text()]
    assert not found, found


def test_the_design_is_chosen_from_the_settings_and_a_setting_it_does_not_read_is_refused():
    from dptopic.attacks.audit import audit_design

    assert audit_design() == "lira" and audit_design("one-run") == "one-run"
    assert audit_design("one-run", "release", canary_unit="person", canary_documents=3) == "release"
    with pytest.raises(DPTopicError, match=r"^canaries and score apply to design one-run only"):
        audit_design(canaries=5, score="model")
    with pytest.raises(DPTopicError, match=r"^--shadows applies to the LiRA design only .* drop it\.$"):
        audit_design("one-run", shadows=4, names={"shadows": "--shadows"})
    with pytest.raises(DPTopicError, match=r"^canary_length does not apply to score release"):
        audit_design("one-run", "release", canary_length=4)
    with pytest.raises(DPTopicError, match=r"^canary_unit applies to score release only"):
        audit_design("one-run", canary_unit="person")
    with pytest.raises(DPTopicError, match=r"^canary_documents applies to canary_unit person"):
        audit_design("one-run", "release", canary_documents=3)


def test_a_user_level_procedure_needs_the_person_of_each_document():
    from dptopic.attacks.audit import AuditedProcedure, check_user_field

    def trained(unit):
        def train(corpus, rng):
            return None
        train.audited = {"params": {"unit": unit}}
        return AuditedProcedure(train, None, "fake")

    assert check_user_field(trained("user"), "person") and check_user_field(trained("user"), None, by_folder=True)
    assert not check_user_field(trained("document"), None)
    with pytest.raises(DPTopicError, match=r"per person \(unit user\): give --user-field FIELD"):
        check_user_field(trained("user"), None, names={"user_field": "--user-field"})
    with pytest.raises(DPTopicError, match=r"^user_field person applies to a user-level model only"):
        check_user_field(trained("document"), "person")


def test_the_audit_corpus_is_built_as_train_builds_it_or_refused_in_one_line(tmp_path):
    from dptopic.attacks.audit import audit_corpus, prepared_spec

    assert prepared_spec("docword.kos.txt") and prepared_spec("c.npz") and prepared_spec("x", "uci")
    assert not prepared_spec("c.jsonl") and not prepared_spec("c.npz", "jsonl")
    corpus, note, read = audit_corpus("demo")
    assert corpus.n_docs > 100 and note is None and read["read"] == "built as 'dptopic train' builds it"
    assert read["max_vocab"] == 1000 and read["max_vocab_is"] == "the default (no max_vocab given)"
    with pytest.raises(DPTopicError, match=r"^--restrict applies with --model only"):
        audit_corpus("demo", restrict=True, names={"restrict": "--restrict", "model": "--model"})
    model = dptopic.LDA(n_topics=2, n_iter=2, seed=0, verbose=0).fit(corpus)
    with pytest.raises(DPTopicError, match=r"^with model the corpus is read into the model's own vocabulary.*drop"
                                           r" max_vocab, lowercase \(or give vocabulary FILE\)"):
        audit_corpus("demo", model, max_vocab=10, lowercase=False)
    again, note, read = audit_corpus("demo", model)
    assert list(again.vocabulary.words) == list(model.vocabulary_.words) and read["read"].startswith("into the model's")
    assert note is None or "held none of its words" in note
