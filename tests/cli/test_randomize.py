"""``dptopic randomize`` on the command line: what it names when an input or option is wrong, and what it says of the
reports it writes."""
from __future__ import annotations

import itertools
import re

import pytest

from conftest import cli_output


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
    from dptopic.local.document import domain_size
    from dptopic.mechanisms.frequency_oracle import subset_size

    assert 4 * subset_size(domain_size(1100), float(m.group(4))) <= 1_000_000
    assert 4 * subset_size(domain_size(int(m.group(5))), 0.1) <= 1_000_000
    assert 4 * subset_size(domain_size(int(m.group(5)) + 1), 0.1) > 1_000_000
