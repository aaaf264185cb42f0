"""Review 53, attacks: the classifier membership-inference attack's standard errors came from one replicate (binomial
over the records scored) without saying so. The result now names what they count (``se_method``), and
``n_replicates >= 2`` repeats the whole attack on independent streams, its standard errors from their spread, which
agrees with the spread of independent single attacks."""
import warnings

import numpy as np
import pytest
from scipy import stats

from dptopic.attacks.classifier_mia import SE_SINGLE, classifier_mia
from dptopic.attacks.lira import estimator_trainer
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
    R, M = 8, 16
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
