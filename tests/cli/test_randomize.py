"""``dptopic randomize``: what the command does with its flags and files, and its one-line refusals."""
import argparse
import re
import pytest
from dptopic.cli.main import main
from dptopic.errors import DPTopicError
from helpers import one_line_error as _err
import subprocess
import sys
import dptopic
import json
import numpy as np


WORDS = ["apple", "banana", "cherry", "grape", "lemon"]


_one_line_error = _err       # exit code 2, one line on stderr, no traceback


def _one_line(e: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(e.value)
    return str(e.value)


# ---------------------------------------------------------------- 3. a contributor's text; corpus info/prepare
def _client(path):
    from dptopic.cli.serve import _client_corpus        # what submit and fed-client read

    return _client_corpus(argparse.Namespace(corpus=str(path), format="auto", text_field="text"))


@pytest.mark.parametrize("name, data", [
    ("zeros.txt", b"\x00" * 64),
    ("stray.txt", b"apple banana\ncherry\x00grape\n"),
    ("texts.tar.txt", b"a.txt" + b"\x00" * 95 + b"0000644\x00" + b"\x00" * 400 + b"apple banana\n"),
    ("nul.csv", b"text\napple banana\ncherry\x00grape\n"),
])
def test_a_file_with_nul_bytes_is_refused_by_every_reader(tmp_path, capsys, monkeypatch, name, data):
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_bytes(data)
    (tmp_path / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    line = 3 if name == "nul.csv" else 2 if name == "stray.txt" else 1
    with pytest.raises(DPTopicError, match=rf"holds a NUL byte \(on line {line}\).*binary or damaged") as e:
        _client(tmp_path / name)
    _one_line(e)
    for argv in (["randomize", "--corpus", name, "--vocabulary", "vocab.txt", "--epsilon-word", "1", "--out", "r.npz"],
                 ["corpus", "info", name], ["corpus", "prepare", "--corpus", name, "--out", "c.npz"]):
        assert "holds a NUL byte" in _one_line_error(capsys, argv)
    assert not (tmp_path / "r.npz").exists() and not (tmp_path / "c.npz").exists()


@pytest.mark.parametrize("data, docs, tokens, vocab", [
    (b"apple\n", 1, 1, 1),                                   # one word
    (b"the and of\n", 1, 2, 2),                              # stop words only: the server's vocabulary decides
    (b"zebra yak quokka\n", 1, 3, 3),                        # no word of the server's vocabulary
    (b"\xef\xbb\xbfapple banana\n", 1, 2, 2),                # a byte-order mark
    (b"apple banana\r\ncherry\r\n", 2, 3, 3),                # CRLF
    (b"apple banana\rcherry\r", 2, 3, 3),                    # CR only
    (b"apple banana\n\ncherry\n", 3, 3, 3),                  # a blank line is a document (one report each)
    (b"apple banana " * 50_000 + b"\n", 1, 100_000, 2),      # a huge line
    (b"!!! ?? 12\n", 1, 0, 0),                               # no word at all
])
def test_a_contributors_valid_text_is_read_exactly(tmp_path, capsys, data, docs, tokens, vocab):
    p = tmp_path / "mine.txt"
    p.write_bytes(data)
    c = _client(p)
    assert (c.n_docs, c.n_tokens, c.vocab_size) == (docs, tokens, vocab)
    (tmp_path / "vocab.txt").write_text("\n".join(WORDS) + "\n")
    rc = main(["randomize", "--corpus", str(p), "--vocabulary", str(tmp_path / "vocab.txt"), "--epsilon-word", "1",
               "--out", str(tmp_path / "r.npz")])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert re.search(rf"\b{docs} randomized reports? written", " ".join((out.out + out.err).split()))


WORDS_2 = ["apple", "pear", "plum", "fig", "kiwi", "lime"]


def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


# ---- item 4: one report per document, empty ones included
def test_randomize_keeps_documents_without_vocabulary_words(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(WORDS_2))
    (tmp_path / "d.txt").write_text("apple pear\nzzz qqq\nplum\n")
    r = _cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--corpus",
             str(tmp_path / "d.txt"), "--out", str(tmp_path / "r.dpr"))
    assert r.returncode == 0, r.stderr
    from dptopic.local import ReportSet

    assert ReportSet.load(tmp_path / "r.dpr").n_reports == 3
    assert "1 of 3 documents contain no word" in r.stderr
    (tmp_path / "e.txt").write_text("zzz\nqqq\n")     # no vocabulary word at all: still written, and said so
    r = _cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--corpus",
             str(tmp_path / "e.txt"), "--out", str(tmp_path / "e.dpr"))
    assert r.returncode == 0 and ReportSet.load(tmp_path / "e.dpr").n_reports == 2 and "2 of 2" in r.stderr


def _posts(tmp_path, n=40):
    p = tmp_path / "posts.jsonl"
    rng = np.random.default_rng(0)
    words = ["budget", "army", "navy", "school", "teacher", "farm", "wheat", "tax", "bank", "trade", "ship", "rail"]
    with p.open("w") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choice(words, 12)) + " and more words here",
                                 "label": "ab"[i % 2]}) + "\n")
    return p


def test_a_corpus_given_as_the_vocabulary_is_refused_in_one_line(tmp_path, capsys):
    from dptopic.cli.main import main

    posts = _posts(tmp_path)
    assert main(["randomize", "--vocabulary", str(posts), "--epsilon-word", "3", "--corpus", str(posts),
                 "--out", str(tmp_path / "r.dpr")]) == 2
    err = capsys.readouterr().err
    assert "holds text, not words" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.dpr").exists()
    # an n-gram vocabulary (a few words per line) is still a vocabulary
    from dptopic.cli._common import read_vocabulary
    (tmp_path / "ngrams.txt").write_text("new york\nunited states\ntax\nbank\n")
    assert len(read_vocabulary(tmp_path / "ngrams.txt")) == 4
