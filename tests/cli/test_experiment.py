"""``dptopic experiment``: what the command does with its flags and files, and its one-line refusals."""
from dptopic.cli.main import main
import pytest


def _ok(args, capsys):
    assert main(args) == 0
    capsys.readouterr()


def _bad(args, capsys):
    try:
        rc = main(args)
    except SystemExit as e:  # an argparse type check
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_experiment_out_rule(tmp_path, capsys):
    mine = tmp_path / "mydir"
    mine.mkdir()
    (mine / "topic_attack.csv").write_text("mine")
    args = ["experiment", "topic-attack", "--topics", "2", "--iterations", "2", "--seeds", "1", "--targets", "2",
            "--max-docs", "40"]
    assert "refusing" in _bad(args + ["--out", str(mine), "--overwrite"], capsys)
    assert (mine / "topic_attack.csv").read_text() == "mine"
    out = tmp_path / "ours"
    _ok(args + ["--out", str(out)], capsys)
    assert "--overwrite" in _bad(args + ["--out", str(out)], capsys)
    _ok(args + ["--out", str(out), "--overwrite"], capsys)


def test_every_experiment_has_overwrite():
    from dptopic.cli.main import build_parser

    ap = build_parser()
    sub = next(a for a in ap._subparsers._group_actions if a.choices and "experiment" in a.choices)
    exp = sub.choices["experiment"]
    esub = next(a for a in exp._subparsers._group_actions)
    for name, p in esub.choices.items():
        assert any("--overwrite" in act.option_strings for act in p._actions), name


# ------------------------------------------------------------------ bounds and one-line errors
def _error_line(capsys, argv) -> str:
    try:
        rc = main([str(x) for x in argv])
    except SystemExit as e:
        rc = e.code
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error") and "Traceback" not in err, (rc, err)
    return lines[0]


@pytest.mark.parametrize("argv", [
    ["experiment", "hdp-utility", "--seeds", str(2 ** 63)], ["experiment", "topic-attack", "--seeds", "300000000"],
    ["experiment", "ldp-utility", "--seeds", "1001"], ["experiment", "svi", "--seeds", "300000000"],
    ["experiment", "lira", "--shadows", str(2 ** 63)], ["experiment", "lira", "--shadows", "10002"],
    ["experiment", "lira", "--k-grid", "2", "999999999"], ["experiment", "classifier-mia", "--shadows", "99999999"]])
def test_experiment_counts_that_would_never_finish_are_refused_before_any_work(tmp_path, capsys, argv):
    line = _error_line(capsys, [*argv, "--out", str(tmp_path / "out")])
    assert "--seeds" in line or "--shadows" in line or "--k-grid" in line
    assert not (tmp_path / "out").exists()


def test_an_experiments_note_leaves_standard_error_to_the_error(tmp_path, capsys):
    line = _error_line(capsys, ["experiment", "hdp-utility", "--topics", "200000", "--iterations", "1", "--seeds", "1",
                                "--out", str(tmp_path / "out")])
    assert "200000" in line or "200,000" in line


def test_experiment_lira_shows_an_unresolved_tpr_as_nr_and_leaves_its_cell_empty(tmp_path, capsys):
    import csv

    rc = main(["experiment", "lira", "--corpus", "demo", "--subsample", "150", "--topics", "3", "--shadows", "4",
               "--trainer", "cgs", "--cgs-iterations", "3", "--seed", "1", "--quiet", "--out", str(tmp_path / "l")])
    out = " ".join(capsys.readouterr().out.split())
    assert rc in (0, None)
    assert "TPR@0.1% n/r" in out and "n/r: fewer non-member scores than 1/FPR" in out
    assert "empirical epsilon lower bound" in out
    rows = list(csv.DictReader((tmp_path / "l" / "table1.csv").open()))
    assert rows and all(r["tpr_at_fpr_0.001"] == "" and r["tpr_at_fpr_0.01"] != "" for r in rows)
