"""bench_docdp.py's ``private``, ``candidates`` and ``sharpen`` routes print their NPMI as a ratio to a non-private
CGS peer trained in the same run (the project's benchmark rule), with the corpus, K and sweeps; before, ``private``
and ``candidates`` printed NPMI alone and docs/document_dp.md divided by a fixed 0.224. ``--fixed-reference`` keeps
that figure's ratio, labelled as not measured in the run. Run small: a tiny synthetic corpus stands in for 20
Newsgroups, and the peer runs a few sweeps."""
from __future__ import annotations

import contextlib
import io
import itertools
import re

import pytest

SYLLABLES = ["ba", "ce", "di", "fo", "gu", "ka", "le", "mi", "no", "pu", "ra", "se", "ti", "vo", "zu"]


@pytest.fixture
def bench(bench, monkeypatch):
    """The module, its 20 Newsgroups loader replaced by a planted LDA corpus of letter words (train and test)."""
    from dptopic.corpus import Corpus, lda_corpus

    mod = bench
    words = ["".join(p) + "x" for p in itertools.product(SYLLABLES, repeat=2)][:80]
    c = lda_corpus(n_docs=500, vocab_size=len(words), n_topics=4, doc_length=40, alpha=0.2, beta=0.05, seed=3).corpus
    texts = [" ".join(words[i] for i in c.doc(d)) for d in range(c.n_docs)]
    split = {"train": texts[:400], "test": texts[400:]}

    def fake(subset="train", max_vocab=1000, vocabulary=None, min_df=2, **kw):
        return Corpus.from_texts(split[subset], vocabulary=vocabulary,
                                 max_vocab=None if vocabulary is not None else max_vocab,
                                 min_df=1 if vocabulary is not None else min_df, stop_words=None)

    monkeypatch.setattr(mod, "load_20newsgroups", fake)
    return mod


def _run(mod, argv) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = mod.main(argv)
    assert rc in (None, 0)
    return out.getvalue()


PEER = re.compile(r"peer: non-private CGS \(dptopic\.LDA, seed 0\) on 20 Newsgroups train, 400 documents, V=\d+,"
                  r" K=4, 5 sweeps, this run: NPMI (-?\d\.\d{4})")


@pytest.mark.parametrize("route, extra, result", [
    ("candidates", [], r"median (-?\d\.\d{4}); ratio to the non-private CGS peer \(this run\): (-?\d+\.\d\d)"),
    ("private", ["--epsilon", "8", "--epsilon-vocab", "4"],
     r"median (-?\d\.\d{4}), diversity \d\.\d\d; ratio to the non-private CGS peer \(this run\): (-?\d+\.\d\d)"),
    ("sharpen", ["--epsilon", "4"], r"as fitted\s+NPMI (-?\d\.\d{4}) .* ratio (-?\d+\.\d\d)"),
])
def test_route_prints_its_ratio_to_a_cgs_peer_of_the_same_run(bench, route, extra, result):
    out = _run(bench, [route, "--topics", "4", "--seeds", "1", "--peer-iterations", "5", *extra])
    assert re.search(rf"{route}: 20 Newsgroups train, .*K=4.*1 seed\(s\)", out), out     # corpus and K
    peer = PEER.search(out)
    assert peer is not None, out
    m = re.search(result, out)
    assert m is not None, out
    assert float(m.group(2)) == pytest.approx(float(m.group(1)) / float(peer.group(1)), abs=0.006)
    if route == "sharpen":
        assert "ratios are to the non-private CGS peer (this run)" in out, out
    assert "0.224" not in out, out


def test_fixed_reference_is_labelled_as_not_measured_in_the_run(bench):
    out = _run(bench, ["candidates", "--topics", "4", "--seeds", "1", "--fixed-reference"])
    assert "NOT measured in this run (--fixed-reference)" in out and not PEER.search(out), out
    m = re.search(r"median (-?\d\.\d{4}); ratio to docs/document_dp\.md's CGS figure 0\.224, NOT measured in this run"
                  r" \(--fixed-reference\): (-?\d+\.\d\d)", out)
    assert m is not None, out
    assert float(m.group(2)) == pytest.approx(float(m.group(1)) / 0.224, abs=0.006)


def test_wordlist_route_compares_dp_set_union_and_a_word_list_with_a_same_run_peer(bench, tmp_path):
    """``wordlist``: a public word list as the vocabulary beside DP set union, each as a ratio to the CGS peer trained
    in the same run on the corpus's own words."""
    import itertools as it
    words = ["".join(p) + "x" for p in it.product(SYLLABLES, repeat=2)][:80]
    listed = tmp_path / "list.txt"
    listed.write_text("\n".join(["the", "a1", "zz"] + words[::-1] + ["qqqqx"]) + "\n")  # filtered, then kept in order
    out = _run(bench, ["wordlist", "--wordlist", str(listed), "--topics", "4", "--seeds", "1", "--peer-iterations",
                       "5", "--epsilon", "8", "--epsilon-vocab", "4"])
    assert re.search(r"wordlist: 20newsgroups train, 400 documents; K=4, eps=8 .* word list 81 words", out), out
    peer = re.search(r"peer: non-private CGS .* K=4, 5 sweeps, this run: NPMI (-?\d\.\d{4})", out)
    assert peer is not None, out
    for name in ("DP set union", "word list"):
        m = re.search(rf"{name}\s+\(.*\): NPMI per seed .*, median (-?\d\.\d{{4}}), diversity .*ratio to the"
                      rf" non-private CGS peer \(this run\): (-?\d+\.\d\d)", out)
        assert m is not None, (name, out)
        assert float(m.group(2)) == pytest.approx(float(m.group(1)) / float(peer.group(1)), abs=0.006)
