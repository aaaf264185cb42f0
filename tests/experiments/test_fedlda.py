"""``dptopic.experiments.fedlda``: the FedLDA reproduction's table and targets."""
import pytest

from dptopic.corpus.synthetic import lda_corpus


def test_experiment_targets_are_in_points_by_epsilon():
    from dptopic.experiments.fedlda import auc_losses, loss_target

    assert (loss_target(7.5), loss_target(5.0), loss_target(3.0)) == (3.0, 5.0, None)
    table = [{"task": "t", "epsilon_per_word": None, "auc": 0.9, "exclusion": "-"},
             {"task": "t", "epsilon_per_word": 5.0, "auc": 0.86, "exclusion": "none"}]
    out = auc_losses(table)["t none eps=5"]
    assert out["points"] == pytest.approx(4.0) and out["target_points"] == 5.0


def test_fedlda_experiment_writes_table_figures_and_verdict(tmp_path, monkeypatch):
    import json

    import dptopic.experiments.fedlda as fx

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=60, n_topics=3, doc_length=30, seed=8)
    y = (theta.argmax(axis=1) == 0).astype(int)
    monkeypatch.setattr(fx, "task_corpora", lambda t, m, s: (c.subset(range(80)), c.subset(range(80, 120)),
                                                             y[:80], y[80:]))
    s = fx.fedlda_experiment(tmp_path, tasks=("sotu",), eps_table=(7.5,), eps_grid=(7.5,), k_grid=(3,),
                          ratio_grid=(0.5,), n_topics=3, rounds=2, n_iter_lda=5, pad_length=64)
    for f in ("fedlda_table.csv", "fedlda_figures.csv", "fedlda_summary.json", "fedlda_budget.png",
              "fedlda_topics.png", "fedlda_ratio.png"):
        assert (tmp_path / f).stat().st_size > 0
    assert set(s["auc_loss"]) == {"sotu none eps=7.5", "sotu tail eps=7.5", "sotu floor eps=7.5"}
    assert json.loads((tmp_path / "fedlda_summary.json").read_text())["settings"]["rounds"] == 2
    assert all(0 <= r["auc"] <= 1 for r in s["table"])


def test_fedlda_experiment_runs_only_the_rules_asked(tmp_path, monkeypatch):
    import dptopic.experiments.fedlda as fx
    from dptopic.cli.main import main

    c, _, theta, _ = lda_corpus(n_docs=120, vocab_size=60, n_topics=3, doc_length=30, seed=8)
    y = (theta.argmax(axis=1) == 0).astype(int)
    monkeypatch.setattr(fx, "task_corpora", lambda t, m, s: (c.subset(range(80)), c.subset(range(80, 120)),
                                                             y[:80], y[80:]))
    s = fx.fedlda_experiment(tmp_path, tasks=("sotu",), eps_table=(7.5, 5.0), n_topics=3, rounds=2, n_iter_lda=5,
                             pad_length=32, figures=False, rules=("none",), local_inference="gibbs")
    assert set(s["auc_loss"]) == {"sotu none eps=7.5", "sotu none eps=5"}
    assert s["settings"]["local_inference"] == "gibbs" and s["settings"]["pad_length"] == 32
    rc = main(["experiment", "fedlda", "--no-figures", "--tasks", "sotu", "--rules", "none", "--eps-table", "10",
               "--pad-length", "16", "--rounds", "1", "--topics", "3", "--seed", "0", "--out", str(tmp_path / "cli")])
    assert rc in (0, None)
    import json

    summary = json.loads((tmp_path / "cli" / "fedlda_summary.json").read_text())
    assert [r["exclusion"] for r in summary["table"]] == ["-", "none"] and summary["settings"]["pad_length"] == 16
