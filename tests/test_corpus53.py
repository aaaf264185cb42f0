"""Review 53 of the corpus readers.

1. One rule for labels in every loader that reads them (docs/preprocessing.md, "Labels"): a document without a label
   (a CSV/TSV cell that is empty or blank, a JSONL null, "" or missing field, a NaN given in Python) is refused in one
   line naming its line, never read as the class '' or 'nan'. Before, a CSV's empty cell (and a JSONL "") became the
   label '' while a JSONL null was refused, and a text folder read as '.' labelled its top-level files ''.
2. A contributor's text with a single distinct word is a valid contribution to a server's vocabulary: ``dptopic
   submit`` and ``fed-client`` refused it ("vocabulary too small"), since they read the text into a vocabulary of its
   own words before mapping it onto the server's; and that reading kept only the text's 1,000 most frequent words, so
   a word of the server's vocabulary that the text uses rarely was dropped before randomizing.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
import pytest

from dptopic.cli.main import main
from dptopic.corpus import Corpus
from dptopic.errors import DPTopicError

from service_helpers import Server, make_data

WORDS = "apple banana cherry grape lemon mango"


def _err(capsys, argv) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


# ---------------------------------------------------------------- 1. labels: one rule in every loader
@pytest.mark.parametrize("name, body, line", [
    ("empty.csv", f"text,label\n{WORDS},a\n{WORDS},\n{WORDS},b\n", 3),
    ("blank.csv", f'text,label\n{WORDS},a\n{WORDS},b\n{WORDS},"  "\n', 4),
    ("empty.tsv", f"text\tlabel\n{WORDS}\ta\n{WORDS}\t\n", 3),
    ("null.jsonl", json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS, "label": None}) + "\n", 2),
    ("empty.jsonl", json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS, "label": ""}) + "\n", 2),
    ("missing.jsonl", json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS}) + "\n", 2),
])
@pytest.mark.parametrize("command", [["corpus", "info"], ["corpus", "prepare", "--out", "c.npz", "--corpus"],
                                     ["train", "--topics", "2", "--iterations", "2", "--test-size", "0", "--out", "m", "--corpus"]])
def test_a_document_without_a_label_is_refused_in_every_format(tmp_path, capsys, monkeypatch, name, body, line,
                                                               command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(body)
    err = _err(capsys, [*command, name, "--label-field", "label"])
    assert f"line {line}" in err and "no label" in err, err
    assert "--label-field" in err and "drop the unlabelled ones" in err, err
    assert not (tmp_path / "c.npz").exists()


def test_the_python_loaders_refuse_it_alike(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"text,label\n{WORDS},a\n{WORDS},\n")
    with pytest.raises(DPTopicError, match=r"line 3 has an empty 'label' field, so no label: .*label_column") as e:
        Corpus.from_csv(p, label_column="label")
    assert "\n" not in str(e.value)
    q = tmp_path / "c.jsonl"
    q.write_text(json.dumps({"text": WORDS, "label": "a"}) + "\n" + json.dumps({"text": WORDS, "label": " "}) + "\n")
    with pytest.raises(DPTopicError, match=r"line 2 has no label \(field 'label' is ' '\)"):
        Corpus.from_jsonl(q, label_field="label")
    for missing in (float("nan"), np.nan, ""):     # a pandas column's missing value read as the class 'nan'
        with pytest.raises(DPTopicError, match=r"labels\[1\] is '(nan|)', no label"):
            Corpus.from_texts([WORDS, WORDS], labels=["a", missing])
    with pytest.raises(DPTopicError, match=r"labels\[0\] is 'nan', no label"):
        Corpus.from_tokens([WORDS.split(), WORDS.split()], labels=np.array([np.nan, 1.0]))


def test_labels_that_are_there_read_as_before(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"text,label\n{WORDS},a\n{WORDS},0\n")
    assert Corpus.from_csv(p, label_column="label").labels == ["a", "0"]
    q = tmp_path / "c.jsonl"
    q.write_text(json.dumps({"text": WORDS, "label": 0}) + "\n" + json.dumps({"text": WORDS, "label": "b"}) + "\n")
    assert Corpus.from_jsonl(q, label_field="label").labels == ["0", "b"]
    assert Corpus.from_csv(p).labels is None          # no label column asked for: no labels, empty cells or not


def test_a_text_folder_read_as_dot_labels_its_top_files_with_its_own_name(tmp_path, monkeypatch):
    top = tmp_path / "letters"
    (top / "sub").mkdir(parents=True)
    (top / "a.txt").write_text(WORDS)
    (top / "sub" / "b.txt").write_text(WORDS)
    monkeypatch.chdir(top)
    assert Corpus.from_directory(".").labels == ["letters", "sub"]      # was ['', 'sub']
    assert Corpus.from_directory(top).labels == ["letters", "sub"]


# ---------------------------------------------------------------- 2. a contributor's text of one distinct word
@pytest.fixture(scope="module")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("one53")
    words, _ = make_data(tmp, vocab_size=30, n_docs=20, n_prior=10)
    srv = Server(tmp, f"sqlite:///{tmp / 'service.db'}", "--train-interval", "0", "--fed-epsilon-per-entry", "3",
                 "--fed-topics", "2", "--fed-pad-length", "8", "--fed-min-updates", "1").start()
    try:
        yield {"tmp": tmp, "url": srv.url, "words": words}
    finally:
        srv.stop()


def test_submit_takes_a_text_of_one_distinct_word(served, tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text(f"{served['words'][3]} {served['words'][3]} {served['words'][3]}\n")
    rc = main(["submit", "--server", served["url"], "--corpus", str(one), "--state", "none", "--retries", "0"])
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    assert "1 randomized report uploaded" in " ".join(out.out.split()), out.out
    # nothing kept: the closing line says a rerun spends again (it used to say "spent once")
    assert "spent again by every run on these documents" in " ".join(out.out.split())
    assert "spent once however often" not in " ".join(out.out.split())


def test_fed_client_takes_a_text_of_one_distinct_word(served, tmp_path, capsys):
    one = tmp_path / "one.txt"
    one.write_text(f"{served['words'][5]}\n")
    rc = main(["fed-client", "--server", served["url"], "--corpus", str(one), "--state", "none", "--rounds", "1",
               "--poll", "0.05", "--round-timeout", "60", "--retries", "0"])
    out = capsys.readouterr()
    assert rc in (0, None), out.err
    assert "took part in 1 round(s)" in " ".join(out.out.split()), out.out


def test_a_contributors_rare_word_is_not_cut_before_the_servers_vocabulary_applies(tmp_path):
    """The text is read keeping every word: a default cap of 1,000 dropped the rarest before the mapping."""
    from dptopic.cli.serve import _client_corpus

    filler = [f"fill{a}{b}{c}" for a in "abcdefghij" for b in "abcdefghij" for c in "abcdefghijklmno"]   # 1,500
    p = tmp_path / "mine.txt"
    p.write_text(" ".join(w + " " + w for w in filler) + " zebra\n")
    c = _client_corpus(argparse.Namespace(corpus=str(p), format="auto", text_field="text"))
    assert "zebra" in c.vocabulary and c.vocab_size == 1501
    assert c.restrict(["zebra", "fillaaa"], drop_empty=False).n_tokens == 3


def test_the_python_contributor_path_and_the_training_rule(tmp_path):
    """A corpus kept one row per input document (drop_empty=False, as contributors build it) may hold one word, or
    none; a vocabulary built to model the documents (drop_empty, or a vocabulary given) still needs two."""
    c = Corpus.from_texts(["zebra zebra", "?!"], max_vocab=None, drop_empty=False)
    assert c.vocab_size == 1 and c.n_docs == 2
    assert c.restrict(["yak", "zebra"], drop_empty=False).n_tokens == 2
    assert Corpus.from_texts(["?!"], max_vocab=None, drop_empty=False).vocab_size == 0
    with pytest.raises(DPTopicError, match="vocabulary too small"):
        Corpus.from_texts(["zebra zebra"])
    with pytest.raises(DPTopicError, match="vocabulary too small"):
        Corpus.from_texts(["zebra zebra"], vocabulary=["zebra"], drop_empty=False)
