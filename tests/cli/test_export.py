"""`dptopic export --to pyldavis` of a document-level model: the share of each topic's weight that is smoothing over the
words its release did not estimate is said (in the file and on stderr), and --kept-words-only exports the kept words
alone, renormalised."""
import json

import numpy as np
import pytest

import dptopic
from dptopic.cli.main import main
from dptopic.reporting.export import kept_words


@pytest.fixture(scope="module")
def saved(planted, tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    corpus = planted.corpus
    with pytest.warns(UserWarning):         # the vocabulary chosen from the data: said, not the subject here
        fitted = dptopic.DocDPCooccurrence(n_topics=5, epsilon=5.0, n_words=20, seed=0).fit(corpus)
    fitted.save(d / "cooc")
    dptopic.LDA(n_topics=3, n_iter=5, seed=0).fit(corpus).save(d / "lda")
    corpus.subset(np.arange(40)).save(d / "docs.npz")
    return d, fitted


def _export(capsys, saved, *extra, model="cooc", out="vis.json"):
    d, _ = saved
    rc = main(["export", "--to", "pyldavis", "--model", str(d / model), "--corpus", str(d / "docs.npz"), "--out",
               str(d / out), "--overwrite", *extra])
    cap = capsys.readouterr()
    return rc, cap.err, (json.loads((d / out).read_text()) if (d / out).exists() else None)


def test_a_saved_model_s_kept_words_are_read_back_from_its_topics(saved):
    d, fitted = saved
    assert np.array_equal(kept_words(dptopic.load(d / "cooc")), np.sort(fitted.kept_words_))
    assert kept_words(dptopic.load(d / "lda")) is None


def test_export_says_how_much_weight_is_smoothing_outside_the_kept_words(saved, capsys):
    rc, err, doc = _export(capsys, saved)
    assert rc in (0, None), err
    sm = doc["smoothing"]
    assert sm["kept_words"] == 20 and sm["vocabulary_words"] == len(doc["vocab"]) and not sm["kept_words_only"]
    assert sm["weight_outside_kept_words"] > 0.5 and 0 < sm["weight_on_top_10_words"] < 1
    assert "--kept-words-only" in sm["note"]
    line = next(ln for ln in err.splitlines() if "smoothing" in ln)
    assert line.startswith("warning: ") and "--kept-words-only" in line and "flat topics" in line


def test_kept_words_only_exports_those_words_renormalised(saved, capsys):
    d, fitted = saved
    _, _, full = _export(capsys, saved, out="full.json")
    rc, err, doc = _export(capsys, saved, "--kept-words-only", out="kept.json")
    assert rc in (0, None), err
    words = [full["vocab"][i] for i in np.sort(fitted.kept_words_)]
    assert doc["vocab"] == words and len(doc["term_frequency"]) == 20
    phi = np.array(doc["topic_term_dists"])
    assert phi.shape == (5, 20) and np.allclose(phi.sum(axis=1), 1)
    full_phi = np.array(full["topic_term_dists"])[:, np.sort(fitted.kept_words_)]
    assert np.allclose(phi, full_phi / full_phi.sum(axis=1, keepdims=True))
    assert doc["doc_topic_dists"] == full["doc_topic_dists"]
    assert all(k <= f for k, f in zip(doc["doc_lengths"], full["doc_lengths"]))
    assert sum(doc["doc_lengths"]) == sum(doc["term_frequency"])
    assert doc["smoothing"]["kept_words_only"] is True and "smoothing over" not in err


def test_kept_words_only_is_refused_for_a_model_that_estimates_every_word(saved, capsys):
    d, _ = saved
    rc, err, doc = _export(capsys, saved, "--kept-words-only", model="lda", out="lda.json")
    assert rc == 2 and doc is None
    assert len(err.strip().splitlines()) == 1 and "--kept-words-only applies to a document-level model" in err
    assert str(d / "lda") in err


@pytest.fixture(scope="module")
def weak(saved):
    """The fitted model with topics 1 and 3 set below the noise (deterministic flags), saved beside it."""
    d, fitted = saved
    m = dptopic.load(d / "cooc")
    m.supported_topics_ = np.array([True, False, True, False, True])
    m.save(d / "weak")
    return m


def test_export_leaves_out_topics_below_the_noise_and_carries_the_flag(saved, weak, capsys):
    _, _, full = _export(capsys, saved, "--show-unsupported", model="weak", out="weak-all.json")
    rc, err, doc = _export(capsys, saved, model="weak", out="weak.json")
    assert rc in (0, None), err
    assert doc["topics"] == [{"topic": k, "supported": True, "background": False} for k in (0, 2, 4)]
    assert doc["support"]["left_out"] == [1, 3] and "inside the guarantee" in doc["support"]["note"]
    assert np.allclose(doc["topic_term_dists"], np.array(full["topic_term_dists"])[[0, 2, 4]])
    theta = np.array(doc["doc_topic_dists"])
    assert theta.shape == (40, 3) and np.allclose(theta.sum(axis=1), 1)      # pyLDAvis asks rows that sum to 1
    kept = np.array(full["doc_topic_dists"])[:, [0, 2, 4]]
    assert np.allclose(theta, kept / kept.sum(axis=1, keepdims=True))
    assert [t["supported"] for t in full["topics"]] == [True, False, True, False, True]
    assert len(full["topic_term_dists"]) == 5 and full["support"]["left_out"] == []


def test_an_export_of_a_model_without_the_assessment_carries_no_flag_and_refuses_show_unsupported(saved, capsys):
    d, _ = saved
    rc, err, doc = _export(capsys, saved, model="lda", out="lda-topics.json")
    assert rc in (0, None) and "support" not in doc
    assert doc["topics"] == [{"topic": k} for k in range(3)]
    rc, err, doc = _export(capsys, saved, "--show-unsupported", model="lda", out="lda-show.json")
    assert rc == 2 and doc is None and len(err.strip().splitlines()) == 1
    assert err.startswith("error: --show-unsupported") and str(d / "lda") in err


def test_the_export_warns_of_flat_topics_and_of_figures_from_private_documents():
    from dptopic.cli.results import export_warnings

    doc = {"smoothing": {"weight_outside_kept_words": 0.9, "vocabulary_words": 10, "kept_words": 2,
                         "weight_on_top_10_words": 0.5}, "privacy_note": "computed from --corpus"}
    flat, private = export_warnings(doc, object())
    assert flat.startswith("90% of each topic's weight") and "8 words outside the 2" in flat
    assert private == "computed from --corpus (pass --corpus-public if --corpus is a public corpus)."
    assert export_warnings(doc, object(), kept_words_only=True, corpus_public=True) == []
