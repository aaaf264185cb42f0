"""A new user's walk-through of the command line, every command end to end (2026-11-24): what it found."""
import json
import random

import numpy as np
import pytest

from dptopic.cli.main import main
from dptopic.corpus import Corpus

WORDS = ["apple", "pear", "fruit", "banana", "engine", "wheel", "brake", "car", "god", "know", "space", "orbit",
         "moon", "church", "faith", "drive"]


def _docs(n=60, seed=0):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(n)]


def _neighbour_that_moves(docs):
    """A copy of ``docs`` with one token's word replaced, chosen so that the split by words moves that document."""
    def sizes(ds):
        tr, _ = Corpus.from_texts(ds, vocabulary=WORDS).stable_split(0.2)
        return tr.n_docs, tr.n_tokens

    base = sizes(docs)
    for i, d in enumerate(docs):
        for w in WORDS:
            t = d.split()
            if t[0] != w:
                t[0] = w
                other = docs[:i] + [" ".join(t)] + docs[i + 1:]
                if sizes(other) != base:
                    return other
    raise AssertionError("no replacement moves a document")


def test_position_split_moves_no_document_when_a_word_is_replaced():
    docs = _docs()
    other = _neighbour_that_moves(docs)
    a, b = (Corpus.from_texts(d, vocabulary=WORDS) for d in (docs, other))
    (ta, ea), (tb, eb) = a.position_split(0.2), b.position_split(0.2)
    assert (ta.n_docs, ta.n_tokens, ea.n_docs) == (tb.n_docs, tb.n_tokens, eb.n_docs)
    assert np.array_equal(ta.doc_ptr, tb.doc_ptr)
    assert 0 < ea.n_docs < a.n_docs
    assert not np.array_equal(a.position_split(0.2, key=1)[0].doc_ptr, ta.doc_ptr)    # another key, another split
    with pytest.raises(Exception, match="fraction in"):
        a.position_split(1.5)


def test_word_level_training_split_does_not_depend_on_a_replaced_word(tmp_path, capsys):
    """train split every corpus by a hash of each document's words: under word-level DP (one token's word replaced)
    that moved the whole document between the parts, so the two neighbours trained on sets a document apart, and
    model.json published the different sizes as 'public under word-level DP'."""
    docs = _docs()
    other = _neighbour_that_moves(docs)
    (tmp_path / "v.txt").write_text("\n".join(WORDS) + "\n")
    stats = []
    for name, ds in (("a", docs), ("b", other)):
        f = tmp_path / f"{name}.jsonl"
        f.write_text("\n".join(json.dumps({"text": d}) for d in ds) + "\n")
        assert main(["train", "--algorithm", "hdp", "--corpus", str(f), "--vocabulary", str(tmp_path / "v.txt"),
                     "--topics", "2", "--iterations", "3", "--epsilon-inherent", "10", "--quiet",
                     "--out", str(tmp_path / name)]) in (0, None)
        line = next(ln for ln in " ".join(capsys.readouterr().out.split()).split("corpus:")[1:])
        stats.append((json.loads((tmp_path / name / "model.json").read_text())["training"], line.split(")")[1]))
    assert stats[0][0]["n_docs"] == stats[1][0]["n_docs"] and stats[0][0]["n_tokens"] == stats[1][0]["n_tokens"]
    assert stats[0][1] == stats[1][1]                                          # "train N / test M" alike


def test_demo_reference_trains_on_the_private_model_s_split(monkeypatch):
    """The demo's non-private reference is 'LDA on the same split': it must take the word-level model's split."""
    import dptopic.cli.train as train

    seen = []
    monkeypatch.setattr(train, "_split", lambda corpus, a, model: seen.append(type(model).__name__) or (corpus, corpus))

    class Stop(Exception):
        pass

    def fake_fit(self, *args, **kw):
        raise Stop

    from dptopic.models import LDA

    monkeypatch.setattr(LDA, "fit", fake_fit)
    from types import SimpleNamespace

    from dptopic.models import HDPLDA

    corpus = Corpus.from_texts(_docs(10), vocabulary=WORDS)
    with pytest.raises(Stop):
        train._train_eval_report(LDA(n_topics=2), corpus, SimpleNamespace(test_size=0.2), None, show_corpus=False,
                                 split_as=HDPLDA(n_topics=2))
    assert seen == ["HDPLDA"]
