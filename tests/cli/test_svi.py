"""``dptopic svi``: what the command does with its flags and files, and its one-line refusals."""
import pytest

# ----------------------------------------------------------------------------- CLI


@pytest.mark.parametrize("args", [["--sampling-rate", "0", "--epsilon", "1"], ["--sampling-rate", "1.5", "--epsilon", "1"],
                                  ["--noise-multiplier", "0"], ["--clip", "0", "--epsilon", "1"],
                                  ["--max-doc-len", "0", "--epsilon", "1"], ["--epsilon", "1", "--delta", "1"],
                                  ["--epsilon", "1", "--noise-multiplier", "1"], [],
                                  ["--epsilon", "1e-4", "--delta", "1e-7", "--sampling-rate", "0.9", "--epochs", "3"]])
def test_cli_svi_bad_input(args, svi_textfile, tmp_path, capsys):
    from dptopic.cli.main import main

    argv = ["train", "--algorithm", "svi", "--corpus", str(svi_textfile), "--quiet", "--out", str(tmp_path / "x")]
    try:
        code = main(argv + args)
    except SystemExit as e:   # argparse's own range checks
        code = e.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(("error:", "dptopic train: error:"))
