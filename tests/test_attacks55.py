"""A researcher's pass over the attacks API and the experiment commands (review 55): the documented
``dptopic.attacks.classifier_mia`` is the function; bad seeds and trainers are one line; labels coded -1/1 are read
as scikit-learn reads them; a one-run audit's note speaks of its training run, not shadow models; an audit on a
corpus of fewer than two words says what is wrong; the LiRA experiment lists every file it writes."""
from __future__ import annotations

import numpy as np
import pytest

import dptopic.attacks as attacks
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError


def _texts(n, seed=0):
    words = "apple banana cherry grape lemon mango peach plum river mountain valley ocean forest desert".split()
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, 12)) for _ in range(n)]


@pytest.fixture(scope="module")
def labelled():
    texts = _texts(40)
    return Corpus.from_texts(texts, labels=["a" if i % 2 else "b" for i in range(len(texts))])


def test_classifier_mia_is_the_documented_function():
    assert callable(attacks.classifier_mia) and "classifier_mia" in attacks.__all__
    from dptopic.attacks import classifier_mia

    assert classifier_mia.__name__ == "classifier_mia"


@pytest.mark.parametrize("seed", [-1, "a", 1.5])
def test_a_bad_seed_is_one_line(labelled, seed):
    fn = attacks.estimator_trainer("lda", n_topics=2, n_iter=2)
    for call in (lambda: attacks.classifier_mia(labelled, fn, n_shadows=1, seed=seed, verbose=0),
                 lambda: attacks.one_run_audit(labelled, fn, n_canaries=8, canary_length=5, seed=seed)):
        with pytest.raises(DPTopicError, match=r"^invalid seed="):
            call()


@pytest.mark.parametrize("train_fn", [None, "lda"])
def test_a_trainer_that_is_not_a_function_is_one_line(labelled, train_fn):
    for call in (lambda: attacks.classifier_mia(labelled, train_fn, n_shadows=1, seed=0, verbose=0),
                 lambda: attacks.one_run_audit(labelled, train_fn, n_canaries=8, canary_length=5, seed=0),
                 lambda: attacks.train_shadows(labelled, train_fn, n_shadows=4, seed=0, verbose=0)):
        with pytest.raises(DPTopicError, match=r"^invalid train_fn .*estimator_trainer\(") as e:
            call()
        assert "\n" not in str(e.value)
    with pytest.raises(DPTopicError, match=r"estimator_trainer\('lda', \.\.\.\)"):
        attacks.one_run_audit(labelled, "lda", n_canaries=8, canary_length=5, seed=0)


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


def test_the_one_run_audit_speaks_of_its_training_run_not_shadow_models(labelled):
    from dptopic.attacks.lira import ONE_RUN_SEED_NOTE

    r = attacks.one_run_audit(labelled, attacks.estimator_trainer("hdp", n_topics=2, n_iter=2, epsilon_laplace=1.0),
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
