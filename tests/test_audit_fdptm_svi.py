"""Auditing DP-SVI and the FDPTM eps_T sweep; the empirical epsilon bound's relation and its coverage."""
import json

import numpy as np
import pytest

from dptopic.attacks import lira, metrics
from dptopic.cli.main import main
from dptopic.corpus import lda_corpus


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=120, vocab_size=80, n_topics=4, doc_length=40, alpha=0.2, beta=0.05, seed=5).corpus


# --------------------------------------------------------------- the bound
def test_epsilon_from_rates_relations():
    p, q, d = 0.6, 0.02, 1e-3
    assert metrics.epsilon_from_rates(p, q) == pytest.approx(np.log(p / q))
    assert metrics.epsilon_from_rates(p, q, d) == pytest.approx(np.log((p - d) / q))
    # add/remove via group privacy: without delta exactly half; with delta the root of the inequality
    assert metrics.epsilon_from_rates(p, q, 0.0, "add_remove") == pytest.approx(np.log(p / q) / 2)
    e = float(metrics.epsilon_from_rates(p, q, d, "add_remove"))
    x = np.exp(e)
    assert q * x * x + (1 + x) * d == pytest.approx(p)
    assert 0 < e < np.log((p - d) / q) / 2
    # a test no better than chance refutes nothing
    assert metrics.epsilon_from_rates(0.1, 0.2) == 0 and metrics.epsilon_from_rates(0.1, 0.2, 0, "add_remove") == 0
    with pytest.raises(Exception, match="relation"):
        metrics.empirical_epsilon(np.arange(10.0), np.arange(10) % 2, relation="swap")


def _randomized_response(eps, n, rng):
    """Independent trials of an eps-DP (replace-one) test: the membership bit kept w.p. e^eps/(1+e^eps)."""
    y = rng.random(n) < 0.5
    keep = rng.random(n) < np.exp(eps) / (1 + np.exp(eps))
    return np.where(keep, y, ~y).astype(float), y


def test_bound_is_tight_and_never_exceeds_a_known_epsilon():
    rng = np.random.default_rng(7)
    eps = 2.0
    # power: with 20,000 independent trials the bound comes close to the true epsilon, from below
    s, y = _randomized_response(eps, 20000, rng)
    e = metrics.empirical_epsilon(s, y, confidence=0.95)
    assert 1.75 < e["epsilon_lower_bound"] <= eps and e["relation"] == "replace_one"
    e = metrics.empirical_epsilon(s, y, confidence=0.95, relation="add_remove")
    assert 0.85 < e["epsilon_lower_bound"] <= eps / 2
    assert e["epsilon_lower_bound_replace_one"] == pytest.approx(2 * e["epsilon_lower_bound"])
    # coverage: over independent replicates the bound exceeds the true epsilon in at most ~5% of them
    over = sum(metrics.empirical_epsilon(*_randomized_response(eps, 400, rng), confidence=0.9,
                                         seed=i)["epsilon_lower_bound"] > eps for i in range(200))
    assert over <= 20  # expected <= 10 at confidence 0.9; 20 is > 3 standard deviations above


def test_claim_relation():
    assert lira.claim_relation(None) == "replace_one"
    assert lira.claim_relation({"private": True, "neighbouring_relation": "document-level add/remove: ..."}) == "add_remove"
    assert lira.claim_relation({"private": True, "neighbouring_relation": "word-level replacement"}) == "replace_one"
    assert lira.claim_relation({"private": False, "neighbouring_relation": "add/remove"}) == "replace_one"


# --------------------------------------------------------------- DP-SVI as an audited trainer
def test_svi_is_calibrated_from_a_budget():
    assert lira.epsilon_parameter("svi") == "epsilon"
    assert lira.epsilon_parameter("lp") == "epsilon_word" and lira.epsilon_parameter("hdp") == "epsilon_laplace"
    assert lira.epsilon_parameter("lda", required=False) is None
    a = lira.make_estimator("svi", n_topics=3, epsilon=1.0, n_epochs=2, sampling_rate=0.2)
    b = lira.make_estimator("svi", n_topics=3, epsilon=4.0, n_epochs=2, sampling_rate=0.2)
    assert a.noise_multiplier > b.noise_multiplier > 0  # less budget, more noise
    from dptopic.errors import DPTopicError

    with pytest.raises(DPTopicError, match="not both"):
        lira.make_estimator("svi", n_topics=3, epsilon=1.0, noise_multiplier=2.0)
    with pytest.raises(DPTopicError, match="no parameter 'bogus'"):
        lira.make_estimator("svi", n_topics=3, epsilon=1.0, bogus=2)


@pytest.fixture(scope="module")
def sotu(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    src = tmp_path_factory.mktemp("svi") / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    return src


def test_audit_cli_svi(sotu, tmp_path, capsys):
    out = tmp_path / "a"
    assert main(["audit", "--algorithm", "svi", "--epsilon", "2", "--topics", "3", "--set", "n_epochs=2",
                 "--set", "sampling_rate=0.3", "--corpus", str(sotu), "--max-vocab", "200", "--shadows", "4",
                 "--seed", "0", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "audit.json").read_text())
    claim, emp = doc["claimed_privacy"], doc["empirical_epsilon"]
    assert claim["private"] and claim["unit"] == "document"
    assert 1.5 < claim["epsilon"] <= 2.0 + 1e-9  # calibrated to the budget, never above it
    assert emp["relation"] == "add_remove" and 0 <= emp["epsilon_lower_bound"] <= claim["epsilon"]
    assert "adding/removing" in capsys.readouterr().out
    # a budget and an explicit noise multiplier together: one line, exit 2, before any training
    assert main(["audit", "--algorithm", "svi", "--epsilon", "2", "--set", "noise_multiplier=3", "--corpus",
                 str(sotu), "--out", str(tmp_path / "b"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "not both" in err
    assert not (tmp_path / "b").exists()


# --------------------------------------------------------------- FDPTM eps_T sweep (Fig. 5)
def test_fdptm_eps_t_sweep_with_svi(small, tmp_path):
    from dptopic.errors import DPTopicError
    from dptopic.experiments import manzonelli_lira as ml

    s = ml.fdptm_experiment(small, tmp_path, (20.0,), 1e-4, trainer="cgs", n_topics=3, n_shadows=4, seed=0,
                            n_jobs=1, cgs_iterations=5, dp_algorithm="svi", eps_t_grid=(1.0, 8.0),
                            dp_params={"n_epochs": 2, "sampling_rate": 0.3, "tau0": 10.0}, verbose=0)
    rows = {r["config"]: r for r in s["rows"]}
    assert set(rows) == {"public", "eps_V=20", "eps_V=20, eps_T=1", "eps_V=20, eps_T=8"}
    assert rows["eps_V=20, eps_T=1"]["eps_T"] == 1.0 and rows["eps_V=20"]["eps_T"] is None
    for r in s["rows"]:
        assert np.isfinite(r["umass_coherence"]) and 0 <= r["auc"] <= 1
    assert rows["eps_V=20"]["mean_vocab_size"] < small.vocab_size
    assert s["dp_params"]["sampling_rate"] == 0.3
    assert (tmp_path / "fig5_coherence_vs_eps_t.png").stat().st_size > 1000
    assert "eps_V=20, eps_T=8" in (tmp_path / "fdptm.csv").read_text()
    with pytest.raises(DPTopicError, match="eps_T sweep"):
        ml.fdptm_experiment(small, tmp_path, (20.0,), dp_algorithm="svi", verbose=0)
    with pytest.raises(DPTopicError, match="no epsilon parameter"):
        ml.fdptm_experiment(small, tmp_path, (20.0,), dp_algorithm="lda", eps_t_grid=(1.0,), verbose=0)


def test_experiment_cli_rejects_sweep_options_without_vocabulary(tmp_path, capsys):
    assert main(["experiment", "lira", "--corpus", "demo", "--dp-algorithm", "svi", "--eps-t-grid", "1",
                 "--out", str(tmp_path), "--quiet"]) == 2
    assert "--private-vocabulary" in capsys.readouterr().err
