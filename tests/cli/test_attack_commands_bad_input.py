"""The attack and experiment commands on bad input: small or odd inputs give one line naming what is wrong (never a
traceback or a wrong count), and a one-seed run writes no standard deviation of 0."""
import csv
import warnings

import numpy as np
import pytest

from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def _texts(n):
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(n)
    return [" ".join(rng.choice(words, 12)) for _ in range(n)]


def test_lira_too_small_corpus_names_its_own_document_count():
    """An odd corpus loses one document before the halves are drawn: a 3-document corpus was said to have 2 (and a
    1-document corpus 0)."""
    from dptopic.attacks.lira import estimator_trainer, train_shadows

    for n in (1, 3):
        with pytest.raises(DPTopicError, match=rf"corpus too small for LiRA: {n} document"):
            train_shadows(Corpus.from_texts(_texts(n)), estimator_trainer("lda", n_topics=2, n_iter=2), n_shadows=4,
                          seed=0, verbose=0)


def _lira(tmp_path, capsys, *extra):
    from dptopic.cli.main import main

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(_texts(40)) + "\n")
    out = tmp_path / "out"
    rc = main(["experiment", "lira", "--corpus", str(src), "--topics", "3", "--shadows", "4", "--seed", "1",
               "--trainer", "cgs", "--cgs-iterations", "2", "--quiet", "--out", str(out), *extra])
    err = capsys.readouterr().err.strip().splitlines()
    return rc, err, out


def test_experiment_lira_refuses_more_targets_than_shadows_before_any_work(tmp_path, capsys):
    """--targets 9 with --shadows 4 ran (as 4 targets) where 'dptopic audit' refuses it."""
    rc, err, out = _lira(tmp_path, capsys, "--targets", "9")
    assert rc == 2 and len(err) == 1
    assert "--targets 9" in err[0] and "--shadows (4)" in err[0]
    assert not out.exists()


def test_experiment_lira_k_grid_above_the_vocabulary_names_k_grid_before_training(tmp_path, capsys):
    """A --k-grid value above V (cgs trainer) failed after the whole --topics run, reported as '--topics 300'."""
    rc, err, out = _lira(tmp_path, capsys, "--k-grid", "2", "300")
    assert rc == 2 and len(err) == 1
    assert err[0].startswith("error: --k-grid 300 exceeds the vocabulary size"), err
    assert not (out / "table1.csv").exists()      # refused before the main run


def _std_column(path):
    with open(path, newline="") as f:
        return [r["perplexity_std"] for r in csv.DictReader(f)]


def test_one_seed_utility_experiments_leave_the_std_empty(tmp_path):
    """One seed has no spread: hdp-utility and ldp-utility wrote perplexity_std 0.0 (topic-attack leaves it empty)."""
    from dptopic import experiments

    c = Corpus.from_texts(_texts(24))
    train, test = c.subset(np.arange(18)), c.subset(np.arange(18, 24))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        experiments.hdp_utility(train, test, tmp_path / "h", eps_grid=(1.0,), n_topics=2, n_iter=2, seeds=[0])
        experiments.ldp_utility(train, test, tmp_path / "l", eps_grid=(1.0,), n_topics=2, n_iter=2, seeds=[0])
    for path in (tmp_path / "h" / "hdp_utility.csv", tmp_path / "l" / "ldp_utility.csv"):
        col = _std_column(path)
        assert col and all(v == "" for v in col), (path.name, col)


def test_classifier_mia_shadow_half_with_one_class_is_no_traceback():
    """A random half of a skewed corpus can hold one class only: LogisticRegression's ValueError escaped (seeds 1-3
    here); such a shadow classifier now predicts its one class."""
    from dptopic.attacks.classifier_mia import classifier_mia
    from dptopic.attacks.lira import estimator_trainer

    c = Corpus.from_texts(["apple banana cherry grape"] * 10 + ["river ocean storm rain"] * 2,
                          labels=["a"] * 10 + ["b"] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in (1, 2):
            r = classifier_mia(c, estimator_trainer("lda", n_topics=2, n_iter=2), n_shadows=3, seed=seed, verbose=0)
            assert 0.0 <= r["attack_accuracy"] <= 1.0


def test_classifier_mia_refuses_a_corpus_of_one_class():
    from dptopic.attacks.classifier_mia import classifier_mia
    from dptopic.attacks.lira import estimator_trainer

    c = Corpus.from_texts(_texts(8), labels=["a"] * 8)
    with pytest.raises(DPTopicError, match="at least two classes"):
        classifier_mia(c, estimator_trainer("lda", n_topics=2, n_iter=2), n_shadows=2, seed=0, verbose=0)


def test_fedlda_auc_losses_of_a_zero_centralized_auc_is_no_zero_division():
    """'experiment fedlda --max-docs 8 --seed 0' (a test set of 2 documents): the centralized AUC was 0 and the
    relative loss divided by it (ZeroDivisionError, a traceback)."""
    from dptopic.experiments.fedlda import auc_losses

    table = [{"task": "sotu", "epsilon_per_word": None, "exclusion": "-", "auc": 0.0},
             {"task": "sotu", "epsilon_per_word": 5.0, "exclusion": "none", "auc": 0.0},
             {"task": "sotu", "epsilon_per_word": 7.5, "exclusion": "tail", "auc": 0.5}]
    out = auc_losses(table)
    assert out["sotu none eps=5"]["points"] == 0.0 and np.isnan(out["sotu none eps=5"]["relative_pct"])
    assert out["sotu tail eps=7.5"]["points"] == -50.0


def test_fedlda_undefined_auc_loss_is_not_tested_rather_than_not_met(tmp_path, monkeypatch):
    """A test set of one class has no AUC (NaN): its loss was counted as "target not met" (NaN < 5 is False)."""
    from dptopic.experiments import fedlda

    c = Corpus.from_texts(_texts(12), labels=["Democratic", "Republican"] * 6)
    tr, te = c.subset(np.arange(10)), c.subset(np.arange(10, 12))
    y = lambda x: np.array([1 if label == "Democratic" else 0 for label in x.labels])  # noqa: E731
    monkeypatch.setattr(fedlda, "task_corpora", lambda t, m, s: (tr, te, y(tr), y(te)))
    monkeypatch.setattr(fedlda, "classify", lambda *a, **k: {"precision": 1.0, "recall": 1.0, "f1": 1.0,
                                                             "auc": float("nan")})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = fedlda.fedlda_experiment(tmp_path, tasks=("sotu",), eps_table=(5.0,), n_topics=2, rounds=1, n_iter_lda=2,
                                     figures=False, rules=("tail",), seed=0)
    assert s["auc_loss_meets_target"] == {"sotu tail eps=5": None}
    assert s["poster_claim_holds_for_tail_rule"] is None


def test_experiment_fedlda_prints_an_undefined_loss_as_not_tested(tmp_path, monkeypatch, capsys):
    """The command line printed "target < 5 points: NOT met" and "nan% relative" for a loss that is undefined (NaN)
    or relative to a centralized AUC of 0; the saved summary already said None (not tested)."""
    import dptopic.experiments as experiments
    from dptopic.cli.main import main

    nan = float("nan")
    summary = {"auc_loss": {"sotu none eps=5": {"points": nan, "relative_pct": nan, "target_points": 5.0},
                            "sotu none eps=7.5": {"points": 1.0, "relative_pct": nan, "target_points": 3.0}},
               "auc_loss_meets_target": {"sotu none eps=5": None, "sotu none eps=7.5": True}}
    monkeypatch.setattr(experiments, "fedlda_experiment", lambda *a, **k: summary)
    assert main(["experiment", "fedlda", "--no-figures", "--seed", "0", "--out", str(tmp_path / "o")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "AUC loss sotu none eps=5: undefined" in out and "target not tested" in out
    assert "NOT met" not in out and "nan" not in out
    assert "AUC loss sotu none eps=7.5: 1.0 points -> target < 3 points: met" in out
    # a verdict of one seed says so, and names the mean the docs hold the targets to
    assert "each verdict reads one run of one seed" in out and "mean of seeds 0, 1 and 2" in out


def test_experiment_fedlda_says_nothing_of_seeds_when_no_target_was_tested(tmp_path, monkeypatch, capsys):
    import dptopic.experiments as experiments
    from dptopic.cli.main import main

    summary = {"auc_loss": {"sotu none eps=2.5": {"points": 9.0, "relative_pct": 15.0, "target_points": None}},
               "auc_loss_meets_target": {"sotu none eps=2.5": None}}
    monkeypatch.setattr(experiments, "fedlda_experiment", lambda *a, **k: summary)
    assert main(["experiment", "fedlda", "--no-figures", "--seed", "0", "--out", str(tmp_path / "o")]) == 0
    assert "one seed" not in " ".join(capsys.readouterr().out.split())
