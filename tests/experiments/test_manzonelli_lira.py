"""Plumbing of the Manzonelli et al. / Zhao et al. Fig. 7 experiments and the classifier attack (tiny sizes)."""
import json

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
