"""The classifier membership-inference attack (``dptopic.attacks.classifier_mia``): its result names what its standard
errors count (``se_method``: one replicate is binomial over the records scored), and ``n_replicates >= 2`` repeats the whole attack on independent streams, its standard errors from their spread, which
agrees with the spread of independent single attacks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import dptopic.attacks as attacks
from dptopic.attacks.classifier_mia import SE_SINGLE, classifier_mia
from dptopic.attacks.lira import estimator_trainer
from dptopic.corpus import Corpus
from dptopic.corpus.synthetic import lda_corpus
from dptopic.errors import DPTopicError


@pytest.fixture(scope="module")
def labelled():
    c, _, theta, _ = lda_corpus(n_docs=80, vocab_size=40, n_topics=3, doc_length=20, alpha=0.3, seed=5)
    c.labels = [str(int(np.argmax(t) % 2)) for t in theta]
    return c


def _attack(c, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return classifier_mia(c, estimator_trainer("lda", n_topics=3, n_iter=5), n_shadows=2, seed=seed, verbose=0,
                              **kw)


def test_a_single_attack_labels_its_standard_errors_as_one_replicates(labelled):
    r = _attack(labelled, 0)
    assert r["n_replicates"] == 1 and r["se_method"] == SE_SINGLE
    assert "one replicate" in r["se_method"] and "binomial" in r["se_method"]
    a = r["attack_accuracy"]
    assert r["attack_accuracy_se"] == pytest.approx(np.sqrt(a * (1 - a) / r["n_eval"]))
    assert "replicates" not in r


def test_replicated_standard_error_matches_the_spread_of_independent_attacks(labelled):
    R, M = 5, 8
    rep = _attack(labelled, 123, n_replicates=R)
    accs = np.array([x["attack_accuracy"] for x in rep["replicates"]])
    assert rep["n_replicates"] == R and len(accs) == R and "independent replicates" in rep["se_method"]
    assert rep["attack_accuracy"] == pytest.approx(accs.mean())
    assert rep["attack_accuracy_se"] == pytest.approx(accs.std(ddof=1) / np.sqrt(R))
    for key in ("target_accuracy", "target_f1_macro"):
        vals = np.array([x[key] for x in rep["replicates"]])
        assert rep[key] == pytest.approx(vals.mean()) and rep[key + "_se"] == pytest.approx(vals.std(ddof=1) / np.sqrt(R))
    # the spread the replicated SE implies against that of M independent single attacks (other seeds): their
    # variances agree within the F distribution's two-sided 99.9% range
    single = np.array([_attack(labelled, 1000 + s)["attack_accuracy"] for s in range(M)])
    ratio = (rep["attack_accuracy_se"] ** 2 * R) / single.var(ddof=1)
    lo, hi = stats.f.ppf([0.0005, 0.9995], R - 1, M - 1)
    assert lo < ratio < hi, (ratio, lo, hi)
    # and the replicates' mean is within its standard error of the independent attacks' mean
    se_diff = np.hypot(rep["attack_accuracy_se"], single.std(ddof=1) / np.sqrt(M))
    assert abs(rep["attack_accuracy"] - single.mean()) < 4 * se_diff


def test_a_single_replicate_is_the_attack_as_before(labelled):
    """n_replicates=1 draws exactly what the attack drew before (seeded results unchanged)."""
    r1, r2 = _attack(labelled, 7), _attack(labelled, 7, n_replicates=1)
    assert r1 == r2


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_bad_number_of_replicates_is_one_line(labelled, bad):
    with pytest.raises(DPTopicError, match="n_replicates"):
        _attack(labelled, 0, n_replicates=bad)


def test_experiment_classifier_mia_replicates_flag_reaches_the_results(tmp_path, capsys):
    """`dptopic experiment classifier-mia --replicates R`: every row's standard errors come from R independent
    replicates, and fig7_results.json says so (n_replicates, se_method); the default names one replicate's."""
    import json

    from dptopic.cli.main import main

    rows = []
    for i in range(60):
        colour = "red" if i % 2 else "blue"
        words = ("apple pear plum fig grape " if colour == "red" else "car bus train tram bike ") * 3
        rows.append(json.dumps({"text": words + f"item{i % 7} common", "party": colour}))
    f = tmp_path / "a.jsonl"
    f.write_text("\n".join(rows) + "\n")
    args = ["experiment", "classifier-mia", "--corpus", str(f), "--label-field", "party", "--algorithms", "lda",
            "--topics", "2", "--iterations", "2", "--shadows", "1", "--seed", "0", "--quiet", "--subsample", "60"]
    assert main(args + ["--out", str(tmp_path / "one")]) == 0
    one = json.loads((tmp_path / "one" / "fig7_results.json").read_text())
    assert one["n_replicates"] == 1 and one["se_method"].startswith("one replicate")
    assert main(args + ["--replicates", "3", "--out", str(tmp_path / "three")]) == 0
    three = json.loads((tmp_path / "three" / "fig7_results.json").read_text())
    assert three["n_replicates"] == 3 and three["se_method"].startswith("3 independent replicates")
    assert "3 independent replicates" in three["checks_note"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:        # argparse's own refusal: exit code 2
        main(args + ["--replicates", "0", "--out", str(tmp_path / "zero")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--replicates" in err[0]


# ---------------------------------------------------------------------------------------------------------------------
# The attacks API and the experiment commands as a researcher calls them: the documented
# ``dptopic.attacks.classifier_mia`` is the function; bad seeds and trainers are one line; labels coded -1/1 are read
# as scikit-learn reads them; a one-run audit's note speaks of its training run, not shadow models; an audit on a
# corpus of fewer than two words says what is wrong; the LiRA experiment lists every file it writes.

def _texts(n, seed=0):
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, 12)) for _ in range(n)]


@pytest.fixture(scope="module")
def labelled_texts():
    texts = _texts(40)
    return Corpus.from_texts(texts, labels=["a" if i % 2 else "b" for i in range(len(texts))])


def test_classifier_mia_is_the_documented_function():
    assert callable(attacks.classifier_mia) and "classifier_mia" in attacks.__all__
    from dptopic.attacks import classifier_mia

    assert classifier_mia.__name__ == "classifier_mia"


@pytest.mark.parametrize("seed", [-1, "a", 1.5])
def test_a_bad_seed_is_one_line(labelled_texts, seed):
    fn = attacks.estimator_trainer("lda", n_topics=2, n_iter=2)
    for call in (lambda: attacks.classifier_mia(labelled_texts, fn, n_shadows=1, seed=seed, verbose=0),
                 lambda: attacks.one_run_audit(labelled_texts, fn, n_canaries=8, canary_length=5, seed=seed)):
        with pytest.raises(DPTopicError, match=r"^invalid seed="):
            call()


@pytest.mark.parametrize("train_fn", [None, "lda"])
def test_a_trainer_that_is_not_a_function_is_one_line(labelled_texts, train_fn):
    for call in (lambda: attacks.classifier_mia(labelled_texts, train_fn, n_shadows=1, seed=0, verbose=0),
                 lambda: attacks.one_run_audit(labelled_texts, train_fn, n_canaries=8, canary_length=5, seed=0),
                 lambda: attacks.train_shadows(labelled_texts, train_fn, n_shadows=4, seed=0, verbose=0)):
        with pytest.raises(DPTopicError, match=r"^invalid train_fn .*estimator_trainer\(") as e:
            call()
        assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match=r"estimator_trainer\('lda', \.\.\.\)"):
        attacks.one_run_audit(labelled_texts, "lda", n_canaries=8, canary_length=5, seed=0)


def test_labels_minus_one_and_one_read_as_scikit_learn_reads_them():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = rng.normal(size=300) + y
    assert attacks.summarize(s, 2 * y - 1)["auc"] == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert attacks.summarize(s, y.astype(bool))["auc"] == attacks.summarize(s, y)["auc"]
    assert (attacks.empirical_epsilon(s, 2 * y - 1)["epsilon_lower_bound"]
            == attacks.empirical_epsilon(s, y)["epsilon_lower_bound"])
    for other in (y + 1, np.array(["in", "out"])[y], y * 0.5):
        with pytest.raises(DPTopicError, match="give 1 \\(or True\\) for members and 0, -1 \\(or False\\)"):
            attacks.summarize(s, other)


def test_the_one_run_audit_speaks_of_its_training_run_not_shadow_models(labelled_texts):
    from dptopic.attacks.lira import ONE_RUN_SEED_NOTE

    r = attacks.one_run_audit(labelled_texts, attacks.estimator_trainer("hdp", n_topics=2, n_iter=2, epsilon_laplace=1.0),
                              n_canaries=8, canary_length=5, seed=0)
    notes = r["claimed_privacy"]["notes"]
    assert ONE_RUN_SEED_NOTE in notes and not any("shadow" in n for n in notes)


def test_an_audit_on_a_corpus_of_one_word_says_it_is_not_the_models_kind(tmp_path, capsys):
    from dptopic.cli.main import main

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(_texts(30)) + "\n")
    assert main(["train", "--corpus", str(src), "--topics", "2", "--iterations", "5", "--seed", "0", "--out",
                 str(tmp_path / "m"), "--quiet"]) == 0
    other = tmp_path / "other.txt"
    other.write_text("\n".join(" ".join(f"alpha{i}{j}" for j in range(10)) for i in range(30)) + "\n")
    capsys.readouterr()
    assert main(["audit", "--model", str(tmp_path / "m"), "--corpus", str(other), "--shadows", "4"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fewer than two distinct words" in err[0] and "--min-df" not in err[0]


def test_the_lira_experiment_lists_the_tpr_against_k_table(tmp_path, capsys):
    from dptopic.cli.main import main

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(_texts(40)) + "\n")
    out = tmp_path / "out"
    assert main(["experiment", "lira", "--corpus", str(src), "--topics", "3", "--shadows", "4", "--seed", "1",
                 "--trainer", "cgs", "--cgs-iterations", "2", "--k-grid", "2", "4", "--out", str(out)]) == 0
    written = " ".join(capsys.readouterr().out.split())
    assert (out / "fig3_tpr_vs_k.csv").exists() and "fig3_tpr_vs_k.csv" in written


def test_the_f1_bootstrap_counts_as_scikit_learns_macro_f1():
    """The bootstrap's macro F1 per resample is scikit-learn's (labels of either side, zero_division=0), on the same
    resamples drawn from the same stream."""
    from sklearn.metrics import f1_score

    from dptopic.attacks.classifier_mia import _f1_bootstrap_se

    for seed in range(12):
        g = np.random.default_rng(seed)
        n, k = int(g.integers(2, 30)), int(g.integers(1, 5))
        lab = np.array(["a", "b", "c", "d"])[:k] if seed % 2 else np.arange(k)
        yt, yp = lab[g.integers(k, size=n)], lab[g.integers(k, size=n)]
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        vals = [f1_score(yt[i], yp[i], average="macro", zero_division=0)
                for i in (r2.integers(n, size=n) for _ in range(40))]
        assert _f1_bootstrap_se(yt, yp, r1, 40) == pytest.approx(np.std(vals, ddof=1), abs=1e-12)
