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
