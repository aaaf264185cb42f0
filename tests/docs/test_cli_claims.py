"""Checks that came out of the documentation audit (README.md and docs/*.md against the code)."""
import pytest

from dptopic.cli.main import main


def _error(capsys, *argv) -> str:
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1, err
    return err


@pytest.mark.parametrize("cut", [["--max-vocab", "500"], ["--min-df", "2"], ["--max-df", "0.5"]])
def test_one_refused_cut_beside_a_private_vocabulary_reads_in_the_singular(capsys, tmp_path, cut):
    """docs/auditing.md and docs/privacy.md: with --private-vocabulary the cuts that choose words from the data are
    refused in one line; one cut is named with a singular verb."""
    line = _error(capsys, "train", "--algorithm", "hdp", "--private-vocabulary", "1,1e-5", *cut,
                  "--out", tmp_path / "m")
    assert f"{cut[0]} (which chooses words from the data) cannot apply" in line

