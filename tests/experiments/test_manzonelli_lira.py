"""Plumbing of the Manzonelli et al. / Zhao et al. Fig. 7 experiments and the classifier attack (tiny sizes)."""
import io
import json
import warnings

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.corpus.corpus import data_cut_of
from dptopic.corpus.synthetic import lda_corpus
from helpers import run_dptopic


@pytest.fixture(scope="module")
def labelled():
    c, _, theta, _ = lda_corpus(n_docs=160, vocab_size=80, n_topics=4, doc_length=40, alpha=0.2, seed=5)
    c.labels = [str(int(np.argmax(t) % 2)) for t in theta]  # a label the topics can predict
    return c


def test_classifier_mia_reports_accuracy_and_f1(labelled):
    from dptopic.attacks.classifier_mia import classifier_mia
    from dptopic.attacks.lira import estimator_trainer

    r = classifier_mia(labelled, estimator_trainer("lda", n_topics=4, n_iter=20), n_shadows=2, seed=0, verbose=0)
    assert 0 <= r["attack_accuracy"] <= 1 and r["n_eval"] == 2 * 40
    assert r["target_accuracy"] > 0.6  # the topics carry the label
    assert 0 < r["target_f1_macro"] <= 1


def test_lira_experiment_writes_results(labelled, tmp_path):
    from dptopic.experiments import lira_experiment

    s = lira_experiment(labelled, tmp_path, trainer="cgs", n_topics=4, n_shadows=6, cgs_iterations=10, k_grid=(2,),
                        verbose=0, n_targets=2)
    doc = json.loads((tmp_path / "results.json").read_text())
    for a in ("lira_online", "lira_offline", "huang_entropy", "huang_std", "huang_max"):
        assert {"auc", "tpr_at_fpr_0.01", "tpr_at_fpr_0.001"} <= set(doc["attacks"][a])
    assert (tmp_path / "fig2_roc.png").exists() and (tmp_path / "fig3_tpr_vs_k.png").exists()
    assert s["fig3"][0]["k"] == 2


def test_fdptm_experiment_writes_results(labelled, tmp_path):
    from dptopic.experiments import fdptm_experiment

    s = fdptm_experiment(labelled, tmp_path, eps_v_grid=(5.0,), trainer="cgs", n_topics=3, n_shadows=4,
                         cgs_iterations=5, verbose=0)
    rows = s["rows"]
    assert [r["config"] for r in rows] == ["public", "eps_V=5"]
    assert rows[1]["mean_vocab_size"] < rows[0]["mean_vocab_size"] == 80
    assert (tmp_path / "fig6_roc.png").exists() and (tmp_path / "fig4_5_coherence.png").exists()


def test_classifier_attack_with_classes_a_shadow_never_sees_and_the_default_classes(tmp_path):

    r = run_dptopic("experiment", "classifier-mia", "--corpus", "demo", "--subsample", "200", "--topics", "3",
                    "--iterations", "5", "--shadows", "2", "--algorithms", "lda", "--seed", "0", "--out", tmp_path / "c")
    assert r.returncode == 0, r.stderr[-400:]   # every party of 200 paragraphs; a shadow's half misses some
    assert (tmp_path / "c" / "fig7.csv").exists()


def test_a_failed_experiment_leaves_no_marked_folder_behind(tmp_path):

    out = tmp_path / "e"
    for _ in range(2):  # the second run must not be refused as "already holds a dptopic ... results"
        r = run_dptopic("experiment", "svi", "--delta", "1", "--out", out)
        assert r.returncode == 2 and "invalid --delta" in r.stderr and "already holds" not in r.stderr
        assert not out.exists()
# ``dptopic.experiments.manzonelli_lira``.


def test_the_fdptm_experiment_runs_on_a_pool_cut_once_before_its_shadows(tmp_path):
    """The experiment's pool is cut by its counts once (its --max-vocab); a shadow's candidates are that fixed list
    whichever half of the pool it holds, so the shadows' set union runs (it refused the cut pool before)."""
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.experiments import fdptm_experiment

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=400, n_topics=3, doc_length=30, alpha=0.2, seed=5)
    pool = Corpus.from_tokens([c.doc_words(d) for d in range(c.n_docs)], max_vocab=30,
                              labels=[str(int(np.argmax(t) % 2)) for t in theta])
    assert data_cut_of(pool) == "built with max_vocab=30"
    s = fdptm_experiment(pool, tmp_path, eps_v_grid=(5.0,), trainer="cgs", n_topics=3, n_shadows=4,
                         cgs_iterations=3, verbose=0)
    assert [r["config"] for r in s["rows"]] == ["public", "eps_V=5"]
    assert 0 < s["rows"][1]["mean_vocab_size"] <= 30


def test_the_classifier_attack_keeps_the_classes_asked_and_refuses_what_cannot_be_attacked():
    import numpy as np
    import pytest

    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.errors import DPTopicError
    from dptopic.experiments.manzonelli_lira import check_classifier_trainers, labelled_documents, subsample

    corpus = lda_corpus(n_docs=30, vocab_size=40, n_topics=2, doc_length=("poisson", 20), seed=0).corpus
    with pytest.raises(DPTopicError, match="needs labels"):
        labelled_documents(corpus)
    corpus.labels = np.array(["a", "b", "c"] * 10)
    assert sorted(set(labelled_documents(corpus, ["a", "b"]).labels)) == ["a", "b"]
    with pytest.raises(DPTopicError, match="^classes z: no document") as e:      # a parameter, the CLI's flag
        labelled_documents(corpus, ["a", "z"])
    assert e.value.message({"classes": "--classes"}).startswith("--classes z: no document")
    with pytest.raises(DPTopicError, match="fewer than two classes"):
        labelled_documents(corpus, ["a"])
    assert subsample(corpus, 10, 0).n_docs == 10 and subsample(corpus, None, 0) is corpus
    with pytest.raises(DPTopicError, match="ldp-doc"):
        check_classifier_trainers(["lda", "ldp-doc"])


# --------------------------------------------------------------------------------------------------------------
# The audit experiments as a privacy engineer runs them (LiRA, the classifier attack and Zhao et al.'s Fig. 7): claims
# within the standard errors are inconclusive, owner-only files, the bound over several attacks, warnings that do not
# leak from threads, and the help and docs that describe them.
@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=40, vocab_size=30, n_topics=2, doc_length=15, alpha=0.5, beta=0.1, seed=0).corpus


@pytest.fixture(scope="module")
def labelled_small():
    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=60, n_topics=4, doc_length=30, alpha=0.2, seed=5)
    c.labels = [str(int(np.argmax(t) % 2)) for t in theta]
    return c


# ---- 1: classifier-mia's verdict: a difference within the standard errors is inconclusive, never "yes"
# a run where every attack is at chance (+-0.025), the private targets at chance on 20 classes
CHANCE_ROWS = [["lda", None, 0.497, 0.025, 0.235, 0.18, 0.03, 0.02, 0.09],
               ["svi", 1.0, 0.458, 0.025, 0.050, 0.037, 0.015, 0.012, 0.09],
               ["svi", 8.0, 0.495, 0.025, 0.035, 0.016, 0.013, 0.006, 0.09],
               ["svi", 100.0, 0.482, 0.025, 0.065, 0.040, 0.017, 0.012, 0.09]]


def test_fig7_claims_within_the_standard_errors_are_inconclusive_and_never_give_the_paper_shape():
    from dptopic.experiments.manzonelli_lira import INCONCLUSIVE, fig7_checks, fig7_shape

    checks, untested = fig7_checks(CHANCE_ROWS, ("lda", "svi"))
    assert True not in checks.values()           # the old code said "yes" to all 4
    below = "(a) svi: attack accuracy below non-private CGS (lda) at every eps"
    assert checks[below] is None and untested[below].startswith(INCONCLUSIVE) and "at chance" in untested[below]
    grows = "(a) svi: attack accuracy grows with eps (higher at the largest eps than at the smallest)"
    assert checks[grows] is None and untested[grows].startswith(INCONCLUSIVE)
    assert fig7_shape(checks, untested) is not True
    # a significant difference still decides (both ways)
    rows = [["lda", None, 0.70, 0.01, 0.9, 0.9], ["cdp", 1.0, 0.52, 0.01, 0.8, 0.8], ["cdp", 5.0, 0.60, 0.01, 0.85, 0.85]]
    checks, untested = fig7_checks(rows, ("lda", "cdp"))
    assert checks[below.replace("svi", "cdp")] is True and checks[grows.replace("svi", "cdp")] is True
    rows = [["lda", None, 0.70, 0.01, 0.9, 0.9], ["cdp", 1.0, 0.60, 0.01, 0.8, 0.8], ["cdp", 5.0, 0.52, 0.01, 0.85, 0.85]]
    checks, untested = fig7_checks(rows, ("lda", "cdp"))
    assert checks[grows.replace("svi", "cdp")] is False and fig7_shape(checks, untested) is False


def test_fig7_warns_when_the_non_private_attack_or_the_targets_are_at_chance():
    from dptopic.experiments.manzonelli_lira import chance_warnings

    found = chance_warnings(CHANCE_ROWS)
    assert any("non-private lda is at chance" in w for w in found)
    assert any("target classifiers are at chance" in w and "svi eps=1" in w for w in found)
    assert all("\n" not in w for w in found)
    assert chance_warnings([["lda", None, 0.70, 0.01, 0.9, 0.9, 0.02, 0.02, 0.5]]) == []


def test_fig7_figure_has_error_bars_a_chance_line_and_owner_only_files(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.axes import Axes

    from dptopic.experiments.manzonelli_lira import write_fig7

    calls = {"errorbar": 0, "hlines": []}
    real_errorbar, real_axhline = Axes.errorbar, Axes.axhline

    def errorbar(self, *a, **k):
        calls["errorbar"] += int(k.get("yerr") is not None)
        return real_errorbar(self, *a, **k)

    def axhline(self, y=0, *a, **k):
        calls["hlines"].append(y)
        return real_axhline(self, y, *a, **k)

    monkeypatch.setattr(Axes, "errorbar", errorbar)
    monkeypatch.setattr(Axes, "axhline", axhline)
    write_fig7(CHANCE_ROWS, ("lda", "svi"), tmp_path)
    assert calls["errorbar"] == 3 and 0.5 in calls["hlines"]
    for f in ("fig7.csv", "fig7.png"):
        assert (tmp_path / f).stat().st_mode & 0o777 == 0o600


def test_classifier_mia_experiment_writes_owner_only_and_records_the_standard_errors(labelled_small, tmp_path):
    from dptopic.experiments import classifier_mia_experiment

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = classifier_mia_experiment(labelled_small, tmp_path, algorithms=("lda",), n_topics=3, n_iter=5, n_shadows=1,
                                      seed=0, verbose=0)
    row = s["rows"][0]
    assert {"target_accuracy_se", "target_f1_macro_se", "target_majority_class_accuracy"} <= set(row)
    assert "has_paper_shape" in s and "inconclusive" in s
    for f in ("fig7.csv", "fig7.png", "fig7_results.json"):
        assert (tmp_path / f).stat().st_mode & 0o777 == 0o600       # were 0644


def test_lira_experiment_files_are_owner_only(small, tmp_path):
    from dptopic.experiments.manzonelli_lira import lira_experiment

    lira_experiment(small, tmp_path, trainer="cgs", n_topics=2, n_shadows=4, seed=0, n_jobs=1, cgs_iterations=2,
                    verbose=0)
    for f in ("results.json", "table1.csv", "fig2_roc.png"):
        assert (tmp_path / f).stat().st_mode & 0o777 == 0o600


# ---- 2: the bound is the strongest attack's, each attack at a Bonferroni-corrected confidence
def test_bound_is_the_largest_over_the_attacks_with_a_bonferroni_correction():
    from dptopic.attacks import metrics
    from dptopic.attacks.lira import strongest_bound

    rng = np.random.default_rng(0)
    y = np.arange(4000) % 2 == 0
    pooled = {"lira_online": (rng.normal(size=4000), y),                       # no signal
              "lira_offline": (rng.normal(size=4000) + 1.5 * y, y),            # a strong one
              "huang_max": (rng.normal(size=4000) + 0.3 * y, y)}
    e = strongest_bound(pooled, delta=0.0, confidence=0.95, relation="replace_one")
    assert e["attack"] == "lira_offline" and e["n_attacks"] == 3 and e["confidence"] == 0.95
    assert e["per_attack_confidence"] == pytest.approx(1 - 0.05 / 3)
    each = metrics.empirical_epsilon(*pooled["lira_offline"], confidence=1 - 0.05 / 3)["epsilon_lower_bound"]
    assert e["epsilon_lower_bound"] == pytest.approx(each) == pytest.approx(max(e["per_attack"].values()))
    # corrected: never above the attack's own bound at the uncorrected confidence
    assert e["epsilon_lower_bound"] <= metrics.empirical_epsilon(*pooled["lira_offline"])["epsilon_lower_bound"]
    assert "Bonferroni" in e["selection"]
    # every bound 0: online LiRA is named
    flat = {k: (np.zeros(200), np.arange(200) % 2 == 0) for k in ("huang_max", "lira_online")}
    assert strongest_bound(flat, 0.0, 0.95, "replace_one")["attack"] == "lira_online"


def test_run_lira_reports_the_strongest_attack(small):
    from dptopic.attacks.lira import estimator_trainer, run_lira

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = run_lira(small, estimator_trainer("lda", n_topics=2, n_iter=3), n_shadows=4, seed=0, verbose=0)
    e = r.empirical_epsilon
    assert e["attack"] in r.summaries and e["epsilon_lower_bound"] == max(e["per_attack"].values())
    assert set(e["per_attack"]) == set(r.summaries)


# ---- 3: the ROC title and the attacked line name the claimed epsilon (from the privacy report) and the shadows
def test_caption_takes_epsilon_from_the_privacy_report_not_the_params(small):
    from dptopic.attacks.lira import attacked_caption, make_estimator
    from dptopic.attacks.provenance import audited_procedure, describe

    est = make_estimator("svi", seed=0, epsilon=8.0, delta=1e-5, n_topics=2, n_epochs=1, sampling_rate=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(small)
    audited = audited_procedure("svi", est)
    assert "epsilon" not in audited["params"]           # DP-SVI keeps its noise multiplier, not epsilon
    settings = {"audited": audited, "n_shadows": 16, "n_docs_audited": 40}
    title = attacked_caption(settings, claim=est.privacy_)
    from dptopic.attacks.lira import claim_text

    eps = est.privacy_["epsilon"]                       # calibrated to at most the 8 asked for (7.99...)
    assert 7.9 < eps <= 8.0
    assert f"claimed ε = {claim_text(eps)} per document" in title and "16 shadow models" in title
    line = describe(audited, {"spec": "x.jsonl", "read": "as train reads it"}, 16, claim=est.privacy_)
    assert f"claimed ε = {claim_text(eps)}" in line
    assert "not private" in attacked_caption(settings, claim={"private": False})


# ---- 4: scikit-learn's NMF convergence warning never leaks, also from parallel threads (audit shadows)
def test_nmf_iteration_cap_warning_does_not_leak_from_threads():
    from concurrent.futures import ThreadPoolExecutor

    from dptopic.moments import topics_from_cooccurrence

    rng = np.random.default_rng(0)
    Q = rng.random((30, 30))
    Q = Q @ Q.T
    import sklearn.decomposition

    from dptopic.moments import factorize

    seen, during = [], []
    real_fit = sklearn.decomposition.NMF.fit

    def fit(self, *a, **k):         # the filters while a fit runs: dptopic's one cap filter is in place, once
        during.append(sum(1 for f in warnings.filters if any(f is a for a in factorize._quiet_nmf_cap.added)))
        return real_fit(self, *a, **k)

    before = list(warnings.filters)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda message, *a, **k: seen.append(str(message))
        sklearn.decomposition.NMF.fit = fit
        try:
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda i: topics_from_cooccurrence(Q, 5, max_iter=2), range(600)))
        finally:
            sklearn.decomposition.NMF.fit = real_fit
    assert not [m for m in seen if "Maximum number of iterations" in m]
    assert during and set(during) == {1}                      # every fit ran under exactly one cap filter
    assert warnings.filters == before and factorize._quiet_nmf_cap.depth == 0       # removed after
    assert factorize._quiet_nmf_cap.added == []


# ---- 5, 6: a too-small audit warns; the scoring phase has its own progress bar; the shadow bar names documents
def test_small_audit_warns_and_scoring_has_a_progress_bar(small, monkeypatch):
    import contextlib

    from dptopic.attacks import lira
    from dptopic.errors import SmallCorpusWarning

    labels = []
    real = lira.progress_bar

    @contextlib.contextmanager
    def spy(total, description, verbose=1, **kw):
        labels.append((description, total))
        with real(total, description, 0) as bar:
            yield bar

    monkeypatch.setattr(lira, "progress_bar", spy)
    with pytest.warns(SmallCorpusWarning, match=r"40 documents \(fewer than 100\) and 4 shadow models"):
        r = lira.run_lira(small, lira.estimator_trainer("lda", n_topics=2, n_iter=3), n_shadows=4, seed=0)
    assert "too small" in r.settings["small_audit"]
    assert labels[0][0] == "shadow models (40 documents)"
    assert labels[1][0].startswith("scoring the attacks (4 targets x 40 documents)") and labels[1][1] > 4
    assert lira.small_audit_warning(100, 16) is None


def test_auditing_docs_state_the_small_audit_threshold():
    from pathlib import Path

    from dptopic.attacks.lira import MIN_DOCUMENTS, MIN_SHADOWS

    text = (Path(__file__).parents[2] / "docs" / "auditing.md").read_text()
    assert f"{MIN_DOCUMENTS} documents" in text and f"{MIN_SHADOWS} shadow models" in text
    assert "Bonferroni" in text


# ---- 8: the PLD discretisation is per trainer in the docs
def test_privacy_docs_do_not_state_one_pld_discretisation():
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / "privacy.md").read_text()
    assert "pessimistic discretisation 1e-4)" not in text
    assert "accounting_method" in text


# ---- 9: a saved model folder as --out is named as such
def test_out_refuses_a_model_folder_saying_what_it_is(tmp_path):
    from dptopic._io import check_output_folder
    from dptopic.errors import DPTopicError

    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "model.json").write_text("{}")
    with pytest.raises(DPTopicError) as e:
        check_output_folder(tmp_path / "m", overwrite=True, what="audit")
    assert "saved model folder" in str(e.value) and "did not write" not in str(e.value)


# ---- 10: help, the record of max_vocab, the --model message
def test_audit_help_max_vocab_record_and_model_message(tmp_path, capsys):
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    assert "runs/audit" in " ".join(capsys.readouterr().out.split())
    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:60]))
    out = tmp_path / "a"
    assert main(["audit", "--algorithm", "lda", "--topics", "2", "--iterations", "2", "--corpus", str(src),
                 "--shadows", "4", "--seed", "0", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "audit.json").read_text())
    assert doc["settings"]["corpus"]["max_vocab"] == 1000               # was null: the default cut applied
    assert "shadow models" in doc["settings"]["attacked"]
    capsys.readouterr()
    assert main(["audit", "--model", str(tmp_path / "nope"), "--epsilon", "1", "--corpus", str(src)]) == 2
    err = capsys.readouterr().err
    assert "do(es)" not in err and "--epsilon does not apply with --model" in err


# ---- 1 (CLI): an inconclusive claim is printed as such, not as "not tested" nor "yes"
def test_print_checks_names_inconclusive_claims():
    from rich.console import Console

    from dptopic.cli.experiment_manzonelli import print_checks
    from dptopic.experiments.manzonelli_lira import fig7_checks

    buf = io.StringIO()
    print_checks(Console(file=buf, width=300), *fig7_checks(CHANCE_ROWS, ("lda", "svi")))
    out = buf.getvalue()
    assert "inconclusive (a) svi: attack accuracy below non-private CGS" in out and "at chance" in out
    assert "yes " not in out and "0 of 0" not in out and "This run tests none of these claims." in out
