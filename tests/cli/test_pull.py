"""``dptopic pull``: what the command does with its flags and files, and its one-line refusals."""
import pytest

from helpers import run_dptopic, subprocess_error_line


# ----------------------------------------------------------------- 10: pull --timeout / --retries
@pytest.mark.parametrize("flag,value", [("--timeout", "nan"), ("--timeout", "-1"), ("--timeout", "inf"),
                                        ("--timeout", "0"), ("--timeout", "1e300"), ("--retries", "-5")])
def test_pull_timeout_and_retries(tmp_path, flag, value):
    line = subprocess_error_line(run_dptopic("pull", "--server", "http://127.0.0.1:1", "--out", tmp_path / "p", flag,
                                             value))
    assert flag in line and value in line, line        # names the flag and the value the user gave
    assert not (tmp_path / "p").exists()                 # refused before anything is written


def test_pull_says_which_model_it_wrote_and_what_reads_it():
    from dptopic.cli.results import pull_line

    assert pull_line({"model_id": 3, "model_version": 7, "class": "OLPLDA", "out": "m"}) == (
        "model 3 (version 7, OLPLDA) written to m: read it with 'dptopic topics', 'evaluate' or 'report'")
    assert pull_line({"round": 2, "out": "f"}, fed=True).startswith("FedLDA model of round 2 written to f:")
