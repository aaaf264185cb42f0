"""``randomize``, ``train`` on randomized reports and the local-DP experiments on the command line."""
from __future__ import annotations

from dptopic.cli.main import main


def _error_line(capsys, argv) -> str:
    rc = main([str(a) for a in argv])
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert rc == 2 and len(lines) == 1, (rc, err)
    return lines[0]


def test_experiment_olp_passes_a_flags_range_error_through_as_it_is(tiny, tmp_path, monkeypatch, capsys):
    """A range error of a flag was glued to the hint about the training set's size ("...[1, 100000].: use fewer
    --batches ...")."""
    from dptopic.cli import _run_common

    monkeypatch.setattr(_run_common, "experiment_corpora", lambda name, max_docs=None, max_test_docs=None: (tiny.corpus,
                                                                                                  tiny.corpus))
    line = _error_line(capsys, ["experiment", "olp", "--topics", "1000000000000", "--batches", "1", "--batch-size", "5",
                               "--prior-size", "5", "--prior-sizes", "5", "--batch-sizes", "5", "--out", tmp_path / "olp"])
    assert line.startswith("error: invalid --topics 1000000000000:"), line
    assert "--batches" not in line and ".:" not in line, line


def test_randomize_labels_its_exact_counts_of_the_documents_outside_the_guarantee(tmp_path, capsys):
    """The note's count of documents without a word pair (or without any vocabulary word) is an exact figure of the
    private documents: labelled as every such line is."""
    (tmp_path / "words.txt").write_text("apple\nbanana\ncherry\n")
    (tmp_path / "docs.txt").write_text("apple banana cherry\napple\nnothing here at all\n")
    for unit, says in (("document", "2 of 3 documents have fewer than two vocabulary words"),
                       ("word", "1 of 3 documents contain no word of the vocabulary")):
        eps = ["--epsilon-doc", "4"] if unit == "document" else ["--epsilon-word", "2"]
        assert main(["randomize", "--unit", unit, *eps, "--vocabulary", str(tmp_path / "words.txt"), "--corpus",
                     str(tmp_path / "docs.txt"), "--out", str(tmp_path / f"{unit}.bin")]) == 0
        note = next(ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("note:"))
        assert says in note and "outside the guarantee" in note, note
