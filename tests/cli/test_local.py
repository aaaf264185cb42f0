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
    from dptopic.cli import _common

    monkeypatch.setattr(_common, "experiment_corpora", lambda name, max_docs=None: (tiny.corpus, tiny.corpus))
    line = _error_line(capsys, ["experiment", "olp", "--topics", "1000000000000", "--batches", "1", "--batch-size", "5",
                               "--prior-size", "5", "--prior-sizes", "5", "--batch-sizes", "5", "--out", tmp_path / "olp"])
    assert line.startswith("error: invalid --topics 1000000000000:"), line
    assert "--batches" not in line and ".:" not in line, line
