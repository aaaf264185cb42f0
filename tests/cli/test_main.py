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
    assert main(["train", "--corpus", str(textfile), "--algorithm", "hdp", "--epsilon-laplace", "1", "--topics", "3",
                 "--iterations", "10", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "Privacy report" in text and "tight PLD" in text and "word" in text
    rep = json.loads((out / "model.json").read_text())["privacy"]
    assert rep["epsilon_basic"] == pytest.approx(10 * (1 + 10))
    assert main(["train", "--corpus", str(textfile), "--algorithm", "cdp+", "--paper-epsilon", "1", "--topics", "3",
                 "--iterations", "5", "--out", str(out), "--overwrite", "--quiet"]) == 0
    assert "nominal" in capsys.readouterr().out


def test_privacy_calculators(capsys):
    assert main(["privacy", "inherent", "--beta", "0.01", "--n-t", "100", "--max-n-tprime", "5000", "--cmax", "3000"]) == 0
    assert "47090.3" in capsys.readouterr().out
    assert main(["privacy", "hdp", "--epsilon-inherent", "10", "--beta", "0.01"]) == 0
    assert "1.47413" in capsys.readouterr().out
    assert main(["privacy", "compose", "--laplace", "0.1", "100", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "eps = 10" in out and "4.22" in out
    # FedLDA's report words: the documented 220 of 1,000 at eps 5 for 119 users of 256 entries
    assert main(["privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1000", "--users", "119",
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
    (["train", "--algorithm", "hdp", "--epsilon", "600", "--clip", "5"], "drop --clip"),
    (["train", "--algorithm", "hdp", "--epsilon", "600", "--epsilon-laplace", "2"], "not both"),
    (["train", "--algorithm", "hdp", "--clip", "5", "--epsilon-inherent", "10"], "not both"),
    (["train", "--unit", "document", "--epsilon", "1", "--epsilon-laplace", "4"],
     "--epsilon-laplace has no effect with --unit document, which trains docdp-cooc: drop it, or drop --unit and use"
     " --algorithm hdp"),
    (["train", "--unit", "document", "--epsilon", "1", "--budget", "4"], "--budget is gone: give"),
    (["train", "--bogus-flag"], "dptopic train: unrecognized arguments: --bogus-flag (see 'dptopic train --help')"),
    (["corpus", "info", "FILE", "--bogus"], "dptopic corpus info: unrecognized arguments: --bogus"),
    (["privacy", "fed-report-words", "--epsilon-per-entry", "5", "--vocab-size", "1", "--users", "10"], "at least two words"),
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


def test_unit_trains_the_measured_number_of_topics_and_says_so_only_when_valid(textfile, tmp_path, capsys):
    """--unit defaults to the K of the utility table (20, as dptopic.for_unit); a refused flag prints nothing but the
    error (no "training docdp-cooc" line first); the same warning is printed once per command."""
    import dptopic

    big = tmp_path / "big.txt"
    words = [f"term{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    big.write_text("\n".join(" ".join(words[(7 * d + j) % 60] for j in range(12)) for d in range(300)))
    assert main(["train", "--corpus", str(big), "--unit", "document", "--epsilon", "1", "--out",
                 str(tmp_path / "u"), "--quiet"]) == 0
    assert dptopic.load(tmp_path / "u").n_topics == 20
    capsys.readouterr()
    assert main(["train", "--corpus", str(big), "--unit", "document", "--epsilon", "1", "--iterations", "5",
                 "--out", str(tmp_path / "v")]) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and "--iterations has no effect with --unit document" in cap.err


def test_a_warning_is_printed_once_per_command(capsys):
    import warnings

    from dptopic.cli import main as cli_main

    class Args:
        @staticmethod
        def func(a):
            for _ in range(3):
                warnings.warn("the same thing, again", UserWarning, stacklevel=1)
            warnings.warn("another thing", UserWarning)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_main.ArgumentParser, "parse_args", lambda self, argv=None, ns=None: Args())
        assert cli_main.main(["recommend"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == ["warning: the same thing, again", "warning: another thing"]
