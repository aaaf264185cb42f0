"""``dptopic hdp-utility``: what the command does with its flags and files, and its one-line refusals."""
from dptopic.cli.main import main


def _bad(args, capsys):
    try:
        rc = main(args)
    except SystemExit as e:  # an argparse type check
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_eps_grid_error_in_flag_terms(tmp_path, capsys):
    for exp in ("hdp-utility", "ldp-utility"):
        for v in ("1e-320", "1e308"):
            err = _bad(["experiment", exp, "--eps-grid", v, "--out", str(tmp_path / exp)], capsys)
            assert "--eps-grid" in err and "inf" not in err and "f=" not in err
