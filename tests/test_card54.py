"""A privacy reviewer's findings (2026-11-25): the export carries the whole card; FedLDA's note agrees with a
partial guarantee; the reference corpus's size is labelled outside the guarantee; the ROC legend names curves that
coincide; topic bars show enough digits to tell near-uniform weights apart."""
import warnings

import numpy as np
import pytest

import dptopic
from dptopic.corpus.synthetic import lda_corpus


@pytest.fixture(scope="module")
def corpus():
    return lda_corpus(n_docs=80, vocab_size=40, n_topics=3, doc_length=30, seed=2).corpus


def test_the_export_carries_the_whole_privacy_card(corpus):
    from dptopic.cli.results import export_privacy

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.DocDPCooccurrence(n_topics=3, epsilon=2.0, delta=1e-5).fit(corpus)
    head, sentence = export_privacy(m)
    for key in ("guarantee", "epsilon", "delta", "privacy_unit", "neighbouring_relation", "accounting_method",
                "theorem", "figures", "not_covered"):
        assert head.get(key) not in (None, "", [], {}), key
    assert list(head)[:4] == ["guarantee", "epsilon", "delta", "privacy_unit"]


def test_fedlda_note_says_partial_when_the_vocabulary_came_from_the_data(corpus):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = dptopic.FedLDA(n_topics=3, rounds=1, pad_length=10, verbose=0).fit(corpus)
    assert m.privacy_["guarantee"] == "partial" and m.privacy_["vocabulary_source"] == "data"
    assert "full guarantee for what a user sends" not in m.privacy_["note"]
    assert "the model as a whole is PARTIAL" in m.privacy_["note"]


def test_the_reference_note_labels_the_corpus_size():
    from dptopic.cli.report import reference_note

    assert "the reference corpus's exact size" in reference_note("the reference documents", "--reference-public")


def test_coinciding_roc_curves_share_one_legend_entry(tmp_path, monkeypatch):
    import dptopic._io as io
    from dptopic.attacks.metrics import plot_roc

    seen = {}
    real = io.save_fig
    monkeypatch.setattr(io, "save_fig", lambda fig, path, **kw: (seen.setdefault("labels", [
        t.get_text() for t in fig.axes[0].get_legend().get_texts()]), real(fig, path, **kw))[1])
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 200).astype(bool)
    s = rng.normal(size=200) + y
    plot_roc({"a": (s, y), "a_fixed": (s.copy(), y), "b": (-s, y)}, tmp_path / "roc.png")
    labels = seen["labels"]
    assert any(t.startswith("a = a_fixed (AUC") for t in labels) and any(t.startswith("b (AUC") for t in labels)
    assert len(labels) == 3          # two curves and chance


def test_topic_bars_show_three_significant_digits():
    from dptopic.reporting.html import _topic_svg

    svg = _topic_svg(["tax", "war"], [0.00213, 0.00187])
    assert ">0.00213<" in svg and ">0.00187<" in svg
