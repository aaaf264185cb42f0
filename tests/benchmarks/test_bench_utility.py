"""benchmarks/bench_utility.py end to end on a tiny setting (--quick on a small synthetic labelled corpus and a tiny
dictionary database): it prints coverage, accuracy, macro-F1 and NPMI shares of non-private LDA's beside the floors,
and writes the utility table's rows and floors."""
import contextlib
import io
import json

import numpy as np

from dptopic.corpus import Corpus, Vocabulary, lda_corpus
from package.test_datasets import write_dictd


def labelled_corpus():
    """300 documents of 5 planted topics, each labelled by its main topic."""
    s = lda_corpus(n_docs=300, vocab_size=200, n_topics=5, doc_length=40, alpha=0.1, beta=0.05, seed=3)
    c = s.corpus
    # words the tokeniser keeps (letters only), so that the dictionary definitions below are read into them
    words = [f"zq{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(c.vocab_size)]
    return Corpus(c.doc_ptr, c.word_ids, Vocabulary(words),
                  labels=[f"t{k}" for k in np.argmax(s.theta, axis=1)]), s.phi


def test_quick_run_prints_shares_and_floors_and_writes_the_table(bench, tmp_path, monkeypatch):
    corpus, phi = labelled_corpus()
    words = corpus.vocabulary.words
    # definitions over each planted topic's top words: a public source that knows the topics somewhat
    for name in ("wn", "gcide", "foldoc"):
        write_dictd(tmp_path, name, [(f"e{k}", f"{name} " + " ".join(words[j] for j in np.argsort(-phi[k])[:12]))
                                     for k in range(len(phi))])
    monkeypatch.setattr(bench, "corpora", lambda names, vocab: iter([("planted", *corpus.train_test_split(0.2,
                                                                                                        seed=0))]))
    table = tmp_path / "utility_table.json"
    table.write_text(json.dumps({"source": "old", "rows": [
        {"unit": "word", "trainer": "hdp", "corpus": "demo", "n_docs": 10, "n_topics": 20, "epsilon": 600,
         "npmi_ratio": 0.7}]}))
    monkeypatch.setattr(bench, "TABLE_PATH", table)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert bench.main(["--quick", "--trainers", "docdp-cooc", "--topics", "5", "--out", str(tmp_path / "out"),
                           "--dictd-root", str(tmp_path), "--write-table"]) == 0
    text = out.getvalue()
    assert "K=5; LDA 30 sweeps; 1 run(s) per setting" in text
    def cells(label):       # the cells after the label: epsilon, coverage, [spread], accuracy, F1, NPMI, ...
        return [line[len(label):].split() for line in text.splitlines() if line.startswith(label + " ")]

    (lda,) = cells("lda (run B)")
    assert lda[1] == "1.00" and lda[3] == "1.00"            # LDA run B's coverage and accuracy: their own median
    for name in ("public-dictionaries", "random-topics", "word-frequencies"):
        (floor,) = cells(name)
        assert 0 < float(floor[1]) < 1.2
    assert "dictionary floor: LDA on 15 public definitions" in text
    assert [p[0] for p in cells("docdp-cooc (document)")] == ["1", "4"]
    doc = json.loads(table.read_text())
    rows = [r for r in doc["rows"] if r["trainer"] == "docdp-cooc"]
    assert [r["epsilon"] for r in rows] == [1.0, 4.0]
    for r in rows:
        assert {"coverage_share", "accuracy_share", "macro_f1_share", "npmi_ratio", "diversity", "supported",
                "doc_length"} <= set(r)
        assert r["corpus"] == "planted" and r["doc_length"] == 40.0
    assert {f["floor"] for f in doc["floors"]} == {"public-dictionaries", "random-topics", "word-frequencies"}
    # rows of other corpora are kept; the State of the Union's earlier name "demo" becomes "sotu"
    assert [r["corpus"] for r in doc["rows"] if r["trainer"] == "hdp"] == ["sotu"]
    result = json.loads((tmp_path / "out" / "utility_planted.json").read_text())
    assert result["floors"]["random-topics"]["coverage_share"] < 1


def test_missing_dictionaries_skip_the_floor_with_a_line(bench, tmp_path, monkeypatch):
    corpus, _ = labelled_corpus()
    monkeypatch.setattr(bench, "corpora", lambda names, vocab: iter([("planted", *corpus.train_test_split(0.2,
                                                                                                        seed=0))]))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bench.main(["--quick", "--trainers", "docdp-cooc", "--epsilons", "4", "--topics", "5", "--out",
                    str(tmp_path / "out"), "--dictd-root", str(tmp_path)])
    text = out.getvalue()
    assert "dictionary floor skipped: no dictd database 'wn'" in text and "random-topics" in text


def test_a_subsample_is_a_fixed_draw_of_its_corpus_with_the_held_out_labels_it_saw(bench, monkeypatch):
    """A corpus of ``SUBSAMPLES`` is the same draw of its corpus's training split every time, over the same
    vocabulary, and its held-out split keeps only the labels drawn (a classifier cannot name a label it never saw)."""
    corpus, _ = labelled_corpus()
    train = corpus.subset(np.arange(200))
    held = corpus.subset(np.arange(200, 300))
    labels = np.array(train.labels)
    rare = labels == labels[0]                      # a label kept out of the draw: only its first document is drawn
    train = train.subset(np.concatenate([np.flatnonzero(~rare), np.flatnonzero(rare)[:1]]))
    monkeypatch.setitem(bench.SUBSAMPLES, "planted-small", ("planted", 60))
    monkeypatch.setattr(bench, "_whole_corpora", lambda names, V: iter([("planted", train, held)]))
    (name, a, test_a), = bench.corpora(["planted-small"], 2000)
    (_, b, test_b), = bench.corpora(["planted-small"], 2000)
    assert name == "planted-small" and a.n_docs == 60 and a.vocabulary.words == train.vocabulary.words
    np.testing.assert_array_equal(a.word_ids, b.word_ids)
    assert set(test_a.labels) <= set(a.labels) and test_a.n_docs == test_b.n_docs
    dropped = set(held.labels) - set(a.labels)
    assert test_a.n_docs == sum(y not in dropped for y in held.labels)


def test_from_json_writes_only_the_trainers_and_epsilons_named_and_keeps_the_other_rows(bench, tmp_path, monkeypatch):
    """``--from-json --write-table --rows-only --trainers T --epsilons E``: the named trainer's rows at the named
    epsilons replace theirs; its rows at other epsilons, other trainers' rows of the same corpus and the floors stay."""
    def row(trainer, eps, cov):
        return {"unit": "document", "trainer": trainer, "corpus": "c", "n_docs": 100, "doc_length": 10.0,
                "n_topics": 20, "epsilon": eps, "coverage_share": cov}

    table = tmp_path / "utility_table.json"
    old = {"source": "benchmarks/bench_utility.py (3 run(s) per setting, K=20, V=2000, LDA 300 sweeps, delta=1e-05)",
           "rows": [row("docdp-cooc", 2.0, 0.5), row("docdp-cooc-vectors", 1.0, 0.4)],
           "floors": [{"floor": "public-vectors", "corpus": "c", "coverage_share": 0.3}]}
    table.write_text(json.dumps(old))
    monkeypatch.setattr(bench, "TABLE_PATH", table)
    measured = {t: {"unit": "document", "rows": [{"epsilon": e, "coverage_share": v, "supported": 3}
                                                 for e, v in ((1.0, 0.9), (2.0, 0.8), (4.0, 0.85))]}
                for t in ("docdp-cooc", "docdp-cooc-vectors")}
    result = {"corpus": "c", "n_docs": 100, "doc_length": 10.0, "n_topics": 20, "trainers": measured,
              "floors": {"public-vectors": {"coverage_share": 0.99}}}
    (tmp_path / "utility_c.json").write_text(json.dumps(result))
    with contextlib.redirect_stdout(io.StringIO()):
        assert bench.main(["--from-json", str(tmp_path / "utility_c.json"), "--write-table", "--rows-only",
                           "--trainers", "docdp-cooc-vectors", "--epsilons", "2", "4"]) == 0
    doc = json.loads(table.read_text())
    got = {(r["trainer"], r["epsilon"]): r["coverage_share"] for r in doc["rows"]}
    assert got == {("docdp-cooc", 2.0): 0.5, ("docdp-cooc-vectors", 1.0): 0.4, ("docdp-cooc-vectors", 2.0): 0.8,
                   ("docdp-cooc-vectors", 4.0): 0.85}
    assert doc["floors"] == old["floors"] and doc["source"] == old["source"]
