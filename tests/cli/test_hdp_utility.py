"""``dptopic hdp-utility``: what the command does with its flags and files, and its one-line refusals."""
from helpers import cli_error_line


def test_eps_grid_error_in_flag_terms(tmp_path, capsys):
    for exp in ("hdp-utility", "ldp-utility"):
        for v in ("1e-320", "1e308"):
            err = cli_error_line(capsys, ["experiment", exp, "--eps-grid", v, "--out", str(tmp_path / exp)])
            assert "--eps-grid" in err and "inf" not in err and "f=" not in err
