"""What ``dptopic export`` writes, computed in the library (``reporting/export.py``)."""
import numpy as np
import pytest

from dptopic.corpus import Corpus, Vocabulary
from dptopic.reporting.export import kept_words, pyldavis_data, spread_summary


class _Model:
    """A fitted model as the export reads it: topics over 4 words, proportions from ``transform``."""

    def __init__(self, components):
        self.components_ = np.asarray(components, dtype=np.float64)
        self.vocabulary_ = Vocabulary(["a", "b", "c", "d"])

    def transform(self, docs):
        return np.tile([0.25, 0.75], (docs.n_docs, 1))


def _docs():   # documents [a a b], [d], [c b]
    return Corpus(np.array([0, 3, 4, 6]), np.array([0, 0, 1, 3, 2, 1]), Vocabulary(["a", "b", "c", "d"]))


def test_pyldavis_data_by_hand():
    m = _Model([[2, 1, 1, 0], [0, 1, 1, 2]])
    d = pyldavis_data(m, _docs())
    assert np.allclose(d["topic_term_dists"], [[0.5, 0.25, 0.25, 0], [0, 0.25, 0.25, 0.5]])
    assert d["doc_lengths"] == [3, 1, 2] and d["term_frequency"] == [2, 2, 1, 1] and d["vocab"] == ["a", "b", "c", "d"]
    # only words a and d: each topic renormalised over them, lengths and frequencies count their tokens only
    w = pyldavis_data(m, _docs(), words=np.array([0, 3]))
    assert np.allclose(w["topic_term_dists"], [[1, 0], [0, 1]])
    assert w["doc_lengths"] == [2, 1, 0] and w["term_frequency"] == [2, 1] and w["vocab"] == ["a", "d"]
    # only topic 1: each document's proportions renormalised over it
    t = pyldavis_data(m, _docs(), topics=[1])
    assert np.allclose(t["doc_topic_dists"], 1.0) and len(t["topic_term_dists"]) == 1


def test_spread_summary_and_kept_words_of_another_model():
    m = _Model([[4, 2, 1, 1], [1, 1, 2, 4]])
    s = spread_summary(m, np.array([0, 3]))
    assert s["kept_words"] == 2 and s["vocabulary_words"] == 4
    assert s["weight_outside_kept_words"] == round(1 - (5 / 8 + 5 / 8) / 2, 4)
    assert s["weight_on_top_10_words"] == 1.0           # 4 words: all of the weight
    assert kept_words(m) is None                         # not a document-level trainer


def test_the_export_is_refused_in_the_callers_names_before_it_is_built(tmp_path):
    import pytest

    from dptopic.errors import ParameterError
    from dptopic.reporting.export import check_export_out, pyldavis_export

    class _Plain(_Model):
        privacy_ = {"private": False}

    with pytest.raises(ParameterError) as e:
        pyldavis_export(_Plain([[1, 1, 1, 1], [1, 2, 3, 4]]), _docs(), kept_words_only=True, source="m")
    assert e.value.parameter == "kept_words_only" and "the model is _Plain" in str(e.value)
    assert "--model 'm' is _Plain, which estimates every word: drop --kept-words-only." in e.value.message(
        {"kept_words_only": "--kept-words-only", "model": "--model"})
    with pytest.raises(ParameterError) as e:
        check_export_out(tmp_path / "x.txt")
    assert e.value.message({"out": "--out"}) == f"--out {str(tmp_path / 'x.txt')!r} must end in .json: the export is one JSON file."
    assert check_export_out(tmp_path / "x.json") == tmp_path / "x.json"


def test_the_topics_table_and_document_of_a_fitted_model(tmp_path):
    import json

    import dptopic
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.reporting.export import privacy_card_line, topics_csv, topics_document

    model = dptopic.LDA(n_topics=2, n_iter=5, seed=0, verbose=0).fit(
        lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=0).corpus)
    doc = topics_document(model, 3, tmp_path / "m")
    assert doc["model"] == str(tmp_path / "m") and doc["class"] == "LDA" and len(doc["topics"]) == 2
    assert len(doc["topics"][0]["words"]) == 3 and "support" not in doc and doc["privacy_card"]["guarantee"] == "none"
    json.dumps(doc)
    table, notes = topics_csv(model, 3, "a b")
    assert table.splitlines()[0] == "topic,rank,word,weight" and len(table.splitlines()) == 7
    assert notes == [f"{privacy_card_line(model, 'a b')}; words {doc['words'].split(';')[0]} (weight: P(word | topic))"]
    assert "--" not in notes[0] and "privacy_ of the model saved at 'a b'" in notes[0]      # Python's names
    flags = {"model": "--model", "format": "--format"}                 # the command line's
    notes = topics_csv(model, 3, "a b", names=flags)[1]
    assert notes[0].startswith(privacy_card_line(model, "a b", flags))
    assert "'dptopic topics --model '\"'\"'a b'\"'\"''" not in notes[0] and "--model 'a b'" in notes[0]


def test_topics_and_the_pyldavis_export_mark_the_words_the_release_never_estimated(tmp_path):
    import json
    import warnings

    import dptopic
    from dptopic.corpus.synthetic import lda_corpus
    from dptopic.reporting.export import UNESTIMATED, pyldavis_export, topics_document

    c = lda_corpus(n_docs=600, vocab_size=1000, n_topics=3, doc_length=40, seed=1).corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence(n_topics=3, epsilon=1.0, unit="user", seed=0).fit(
            c, user_ids=[str(i // 5) for i in range(600)])
        doc = pyldavis_export(m, c, show_unsupported=True)
    mask = m.estimated_words()
    estimated = mask.any(axis=0)
    assert all(v.endswith(UNESTIMATED) != bool(estimated[i]) for i, v in enumerate(doc["vocab"]))
    assert doc["estimated_words"]["estimated"] == int(estimated.sum())
    shown = topics_document(m, 10, tmp_path, show_unsupported=True)
    assert "only the words its release estimated" in shown["words"]
    words = list(m.vocabulary_.words)
    assert all(mask[t["topic"], words.index(w)] for t in shown["topics"] for w in t["words"])
    json.dumps(doc)


def test_the_models_that_keep_words_are_the_document_level_trainers_under_a_name_of_their_own():
    """``DOCUMENT_LEVEL`` meant registry names in training/ and class names here: one name, one meaning."""
    from dptopic.models.registry import TRAINERS
    from dptopic.reporting import export
    from dptopic.training.build import DOCUMENT_LEVEL

    assert not hasattr(export, "DOCUMENT_LEVEL")
    assert set(export.KEPT_WORDS_ESTIMATORS) == {TRAINERS[n].class_name for n in DOCUMENT_LEVEL}


def test_a_refused_table_path_names_the_parameter_not_the_flag(tmp_path):
    """check_theta_out told a Python caller to choose "another --out": it names ``out``, which the command line
    writes as --out."""
    from dptopic.cli._flags import OUTPUT_FLAGS, flag_message
    from dptopic.errors import ParameterError
    from dptopic.reporting.export import check_theta_out

    (tmp_path / "mine.npy").write_bytes(b"\x93NUMPY")
    for path, overwrite in ((tmp_path / "t.txt", False), (tmp_path / "mine.npy", True)):
        with pytest.raises(ParameterError) as e:
            check_theta_out(path, overwrite)
        assert e.value.parameter == "out" and "--" not in str(e.value) and str(e.value).startswith("out '"), e.value
        assert flag_message(e.value, OUTPUT_FLAGS).startswith("--out '")
