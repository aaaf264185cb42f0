import json
import subprocess
import sys

import pytest

from dptopic.cli.main import main

TEXTS = ["budget deficit tax revenue spending", "tax revenue budget treasury surplus", "army navy war defense troops",
         "war troops army peace treaty", "school education teachers students", "students teachers education college"] * 8


@pytest.fixture
def textfile(tmp_path):
    p = tmp_path / "docs.txt"
    p.write_text("\n".join(TEXTS))
    return p


def test_train_topics_evaluate_prepare(textfile, tmp_path, capsys):
    out = tmp_path / "model"
    assert main(["train", "--corpus", str(textfile), "--topics", "3", "--iterations", "30", "--out", str(out),
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "held-out perplexity" in text and "Top 10 words" in text and str(out) in text
    assert json.loads((out / "model.json").read_text())["privacy"]["private"] is False
    assert main(["topics", "--model", str(out), "-n", "4"]) == 0
    assert main(["evaluate", "--model", str(out), "--corpus", str(textfile)]) == 0
    assert "perplexity (completion)" in capsys.readouterr().out
    npz = tmp_path / "c.npz"
    assert main(["corpus", "prepare", "--corpus", str(textfile), "--out", str(npz)]) == 0
    assert main(["train", "--corpus", str(npz), "--topics", "2", "--iterations", "5", "--out", str(out), "--overwrite", "--quiet"]) == 0


def test_train_private_prints_report(textfile, tmp_path, capsys):
    out = tmp_path / "h"
    assert main(["train", "--corpus", str(textfile), "--algorithm", "hdp", "--epsilon", "1", "--topics", "3",
                 "--iterations", "10", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "Privacy report" in text and "tight PLD" in text and "word" in text
    rep = json.loads((out / "model.json").read_text())["privacy"]
    assert rep["epsilon_basic"] == pytest.approx(10 * (1 + 10))
    assert main(["train", "--corpus", str(textfile), "--algorithm", "cdp+", "--epsilon", "1", "--topics", "3",
                 "--iterations", "5", "--out", str(out), "--overwrite", "--quiet"]) == 0
    assert "nominal" in capsys.readouterr().out


def test_privacy_calculators(capsys):
    assert main(["privacy", "inherent", "--beta", "0.01", "--n-t", "100", "--max-n-tprime", "5000", "--cmax", "3000"]) == 0
    assert "47090.2" in capsys.readouterr().out
    assert main(["privacy", "hdp", "--epsilon-inherent", "10", "--beta", "0.01"]) == 0
    assert "1.47413" in capsys.readouterr().out
    assert main(["privacy", "compose", "--laplace", "0.1", "100", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "eps = 10" in out and "4.22" in out
    # FedLDA's report words: the documented 220 of 1,000 at eps 5 for 119 users of 256 entries
    assert main(["privacy", "fed-report-words", "--epsilon", "5", "--vocab-size", "1000", "--users", "119",
                 "--entries", "256"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "first 220 of 1,000 words" in out and "every word: 25.3" in out


@pytest.mark.parametrize("args,msg", [
    (["train", "--corpus", "/no/such/file"], "not found"),
    (["train", "--epsilon", "0"], "must be a finite number > 0"),
    (["train", "--delta", "2"], "must lie in (0, 1)"),
    (["train", "--corpus", "EMPTY"], "empty corpus"),
    (["train", "--algorithm", "hdp", "--secure", "--seed", "3"], "refuses a seed"),
    (["topics", "--model", "/no/such/dir"], "does not exist"),
    (["privacy", "hdp", "--epsilon-inherent", "10", "--epsilon", "1", "--iterations", "100"], "budget too small"),
    (["train", "--algorithm", "hdp", "--budget", "600", "--clip", "5"], "drop --clip"),
    (["privacy", "fed-report-words", "--epsilon", "5", "--vocab-size", "1", "--users", "10"], "at least two words"),
])
def test_bad_input_is_one_line(args, msg, tmp_path):
    if "EMPTY" in args:
        p = tmp_path / "empty.txt"
        p.write_text("the of and\n")
        args = [str(p) if a == "EMPTY" else a for a in args]
    r = subprocess.run([sys.executable, "-m", "dptopic", *args], capture_output=True, text=True)
    assert r.returncode == 2
    assert msg in r.stderr and "Traceback" not in r.stderr
    err_lines = [ln for ln in r.stderr.splitlines() if ln.startswith("error") or "error:" in ln]
    assert len(err_lines) == 1


def test_help_lists_commands():
    r = subprocess.run([sys.executable, "-m", "dptopic", "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    for cmd in ("train", "demo", "evaluate", "topics", "corpus", "privacy", "experiment"):
        assert cmd in r.stdout
