"""A general word list (wordfreq's) as the public vocabulary: `dptopic.corpus.general_word_list` and
`--vocabulary wordfreq:LANG[:SIZE]`; a user with no word list of their domain gets a full guarantee without spending
budget on DP set union (docs/document_dp.md measured it against DP set union)."""
import builtins
import json

import pytest

from dptopic.errors import DPTopicError

pytest.importorskip("wordfreq")


def test_general_word_list_keeps_what_a_built_vocabulary_would():
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    from dptopic.corpus import general_word_list

    words = general_word_list("en", 3000)
    assert len(words) == 3000 and len(set(words)) == 3000
    assert all(w.isalpha() and w == w.lower() and len(w) >= 3 for w in words)
    assert not set(words) & set(ENGLISH_STOP_WORDS)
    assert "the" not in words and "and" not in words
    # most common first: an everyday word comes long before a rare one
    assert "people" in words[:300] and words.index("people") < words.index("government")
    assert general_word_list("en", 100) == words[:100]


@pytest.mark.parametrize("spec, message", [
    ("wordfreq:xx", "no word list for language 'xx'"),
    ("wordfreq:en:abc", "SIZE must be a whole number"),
    ("wordfreq:en:1", "invalid word-list size 1"),
    ("wordfreq:", "write wordfreq:LANG or wordfreq:LANG:SIZE"),
    ("wordfreq:en:10:2", "write wordfreq:LANG or wordfreq:LANG:SIZE"),
])
def test_bad_specs_are_one_line_errors(spec, message):
    from dptopic.cli._common import read_vocabulary

    with pytest.raises(DPTopicError) as e:
        read_vocabulary(spec)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_without_wordfreq_the_error_says_what_to_install(monkeypatch):
    from dptopic.corpus import general_word_list

    real = builtins.__import__

    def no_wordfreq(name, *a, **k):
        if name == "wordfreq":
            raise ImportError("No module named 'wordfreq'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_wordfreq)
    with pytest.raises(DPTopicError) as e:
        general_word_list("en", 100)
    assert "pip install 'dptopic[wordlist]'" in str(e.value)


def test_train_unit_document_on_the_general_word_list(tmp_path, capsys):
    from dptopic.cli.main import main
    from dptopic.datasets import sotu_texts

    src = tmp_path / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:1500]) + "\n")
    assert main(["train", "--corpus", str(src), "--unit", "document", "--epsilon", "1", "--delta", "1e-5",
                 "--topics", "5", "--vocabulary", "wordfreq:en:5000", "--out", str(tmp_path / "m")]) in (0, None)
    doc = json.loads((tmp_path / "m" / "model.json").read_text())
    assert len(doc["vocabulary"]) == 5000 and doc["vocabulary"][:3] == ["just", "like", "time"]
    rep = doc["privacy"]
    assert rep["vocabulary_source"] == "supplied" and rep["guarantee"] == "full" and rep["epsilon"] <= 1.0
    cap = capsys.readouterr()
    out = " ".join((cap.out + cap.err).split())
    assert "V=5000" in out and "never counted" not in out     # every word of the list is one the tokeniser produces


def test_recommend_names_the_general_word_list_before_dp_set_union(capsys):
    from dptopic.cli.main import main

    assert main(["recommend", "--unit", "document", "--epsilon", "1", "--docs", "10000"]) in (0, None)
    out = " ".join(capsys.readouterr().out.split())
    assert "--vocabulary wordfreq:en" in out and "it needs the wordfreq package" in out
    assert out.index("--vocabulary wordfreq:en") < out.index("--private-vocabulary EPS_V,DELTA_V")
