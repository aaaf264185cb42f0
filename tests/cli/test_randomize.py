"""``dptopic randomize`` on the command line: what it names when an input or option is wrong, and what it says of the
reports it writes."""
from __future__ import annotations

import argparse
import itertools
import re

import pytest

from conftest import cli_output
from dptopic.cli.main import main
from dptopic.errors import DPTopicError
from helpers import cli_error_line as _err
from helpers import run_dptopic, write_posts


# ----------------------------------------------------------------------------- C: randomize's messages
@pytest.fixture
def files(tmp_path):
    (tmp_path / "v.txt").write_text("apple\nbanana\ncherry\ndates\neggs\n")
    (tmp_path / "docs.txt").write_text("apple banana\ncherry dates eggs\n")
    return tmp_path


def test_randomize_names_a_misplaced_epsilon_doc(files, capsys):
    code, _, err = cli_output(capsys, "randomize", "--unit", "word", "--epsilon-doc", "3", "--vocabulary",
                        str(files / "v.txt"), "--corpus", str(files / "docs.txt"), "--out", str(files / "r.bin"))
    assert code == 2 and err.startswith("error: --epsilon-doc is for --unit document"), err
    assert "add --unit document" in err and "needs --epsilon-word" not in err


def test_randomize_of_a_uci_corpus_names_no_missing_option(files, capsys):
    # randomize has no --vocab: the message does not send the user to one
    code, _, err = cli_output(capsys, "randomize", "--format", "uci", "--vocabulary", str(files / "v.txt"),
                        "--epsilon-word", "2", "--corpus", str(files / "docs.txt"), "--out", str(files / "r.bin"))
    assert code == 2 and "pass --vocab" not in err and "reads the UCI vocabulary from there" in err, err
    assert "--vocabulary is the public word list" in err and "docword.NAME.txt and vocab.NAME.txt" in err
    (files / "docword.x.txt").write_text("2\n5\n1\n1 1 1\n")
    code, _, err = cli_output(capsys, "randomize", "--corpus", str(files / "docword.x.txt"), "--vocabulary",
                        str(files / "v.txt"), "--epsilon-word", "2", "--out", str(files / "r.bin"))
    assert code == 2 and "pass --vocab" not in err and "no vocab.x.txt beside 'docword.x.txt'" in err, err


def test_randomize_says_a_text_file_is_not_an_npz_corpus(files, capsys):
    for fmt, path in (("npz", files / "docs.txt"), ("auto", files / "fake.npz")):
        path.write_text("apple banana\n")
        code, _, err = cli_output(capsys, "randomize", "--format", fmt, "--corpus", str(path), "--vocabulary",
                            str(files / "v.txt"), "--epsilon-word", "2", "--out", str(files / "r.bin"))
        assert code == 2 and f"'{path}' is not an .npz corpus" in err, err
        assert "ValueError" not in err and "corrupt" not in err and "--format" in err


def test_randomize_says_a_vocabulary_folder_is_a_folder(files, capsys):
    (files / "vdir").mkdir()
    code, _, err = cli_output(capsys, "randomize", "--vocabulary", str(files / "vdir"), "--epsilon-word", "2",
                        "--corpus", str(files / "docs.txt"), "--out", str(files / "r.bin"))
    assert code == 2 and f"--vocabulary '{files / 'vdir'}' is a folder" in err and "not found" not in err, err
    assert not (files / "r.bin").exists()


# ----------------------------------------------------------------------------- F(ii), F(iii): randomize's output
def test_randomize_counts_one_report_in_the_singular(tmp_path, capsys):
    (tmp_path / "v.txt").write_text("apple\nbanana\ncherry\ndates\neggs\n")
    (tmp_path / "one.txt").write_text("apple banana cherry\n")
    code, out, err = cli_output(capsys, "randomize", "--vocabulary", str(tmp_path / "v.txt"), "--corpus",
                          str(tmp_path / "one.txt"), "--epsilon-word", "2", "--out", str(tmp_path / "w.bin"))
    assert code == 0 and "1 randomized report written to" in err and "reports written" not in err, err
    code, out, err = cli_output(capsys, "randomize", "--unit", "document", "--vocabulary", str(tmp_path / "v.txt"),
                          "--corpus", str(tmp_path / "one.txt"), "--epsilon-doc", "20", "--out", str(tmp_path / "d.bin"))
    assert code == 0 and "1 document-level report written to" in err, err
    assert "1 item per report" in err and "1 items" not in err
    assert "warning" not in err                          # a report of a few bytes: no size warning


def test_randomize_warns_once_before_writing_megabytes_per_document(tmp_path, capsys):
    words = ["x" + "".join(p) for p in itertools.product("abcdefghijk", repeat=3)][:1100]
    (tmp_path / "v.txt").write_text("\n".join(words) + "\n")
    (tmp_path / "docs.txt").write_text(f"{words[0]} {words[1]} {words[2]}\n{words[3]} {words[4]}\n")
    code, out, err = cli_output(capsys, "randomize", "--unit", "document", "--vocabulary", str(tmp_path / "v.txt"),
                          "--corpus", str(tmp_path / "docs.txt"), "--epsilon-doc", "0.1", "--out",
                          str(tmp_path / "d.bin"))
    assert code == 0, err
    m = re.search(r"warning: at --epsilon-doc 0\.1 over 1100 words each document-level report holds ([\d,]+) items"
                  r" \(([\d.]+) MB per document\), so 2 documents will write ([\d.]+) MB: --epsilon-doc ([\d.]+) or"
                  r" more, or a --vocabulary of at most (\d+) words, keeps each report under 1 MB\.", err)
    assert m, err
    assert err.count("warning: at --epsilon-doc") == 1
    assert err.index("warning: at --epsilon-doc") < err.index("document-level reports written to")   # before
    items = int(m.group(1).replace(",", ""))
    size = (tmp_path / "d.bin").stat().st_size
    assert 2 * 4 * items <= size < 2 * 4 * items + 100_000          # the figures are what was written
    assert float(m.group(3)) == pytest.approx(2 * 4 * items / 1e6, abs=0.06)
    # the suggestions hold: that epsilon, or that many words, keeps a report under 1 MB (the mechanism unchanged)
    from dptopic.mechanisms.frequency_oracle import subset_size
    from dptopic.protocol.document_reports import domain_size

    assert 4 * subset_size(domain_size(1100), float(m.group(4))) <= 1_000_000
    assert 4 * subset_size(domain_size(int(m.group(5))), 0.1) <= 1_000_000
    assert 4 * subset_size(domain_size(int(m.group(5)) + 1), 0.1) > 1_000_000
# ``dptopic randomize``: what the command does with its flags and files, and its one-line refusals.


WORDS = ["apple", "banana", "cherry", "grape", "lemon"]


_one_line_error = _err       # exit code 2, one line on stderr, no traceback


def _one_line(e: pytest.ExceptionInfo) -> str:
    assert "\n" not in str(e.value)
    return str(e.value)


# ---------------------------------------------------------------- 3. a contributor's text; corpus info/prepare
def _client(path):
    from dptopic.cli.submit import _client_corpus  # what submit and fed-client read

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
    return run_dptopic(*args, cwd=cwd)


# ---- item 4: one report per document, empty ones included
def test_randomize_keeps_documents_without_vocabulary_words(tmp_path):
    (tmp_path / "v.txt").write_text("\n".join(WORDS_2))
    (tmp_path / "d.txt").write_text("apple pear\nzzz qqq\nplum\n")
    r = _cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--corpus",
             str(tmp_path / "d.txt"), "--out", str(tmp_path / "r.dpr"))
    assert r.returncode == 0, r.stderr
    from dptopic.protocol.reports import ReportSet

    assert ReportSet.load(tmp_path / "r.dpr").n_reports == 3
    assert "1 of 3 documents contain no word" in r.stderr
    (tmp_path / "e.txt").write_text("zzz\nqqq\n")     # no vocabulary word at all: still written, and said so
    r = _cli("randomize", "--vocabulary", str(tmp_path / "v.txt"), "--epsilon-word", "2", "--corpus",
             str(tmp_path / "e.txt"), "--out", str(tmp_path / "e.dpr"))
    assert r.returncode == 0 and ReportSet.load(tmp_path / "e.dpr").n_reports == 2 and "2 of 2" in r.stderr


def test_a_corpus_given_as_the_vocabulary_is_refused_in_one_line(tmp_path, capsys):
    from dptopic.cli.main import main

    posts = write_posts(tmp_path)
    assert main(["randomize", "--vocabulary", str(posts), "--epsilon-word", "3", "--corpus", str(posts),
                 "--out", str(tmp_path / "r.dpr")]) == 2
    err = capsys.readouterr().err
    assert "holds text, not words" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.dpr").exists()
    # an n-gram vocabulary (a few words per line) is still a vocabulary
    from dptopic.cli._run_common import read_vocabulary
    (tmp_path / "ngrams.txt").write_text("new york\nunited states\ntax\nbank\n")
    assert len(read_vocabulary(tmp_path / "ngrams.txt")) == 4
