"""``dptopic pull``: what the command does with its flags and files, and its one-line refusals."""
import os
import subprocess
import sys
from pathlib import Path
import pytest
import dptopic


SRC = str(Path(__file__).resolve().parents[2] / "src")


def _cli(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "dptopic", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def _one_line_error(r, *needles):
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


# ----------------------------------------------------------------- 10: pull --timeout / --retries
@pytest.mark.parametrize("flag,value", [("--timeout", "nan"), ("--timeout", "-1"), ("--timeout", "inf"),
                                        ("--timeout", "0"), ("--timeout", "1e300"), ("--retries", "-5")])
def test_pull_timeout_and_retries(tmp_path, flag, value):
    _one_line_error(_cli("pull", "--server", "http://127.0.0.1:1", "--out", tmp_path / "p", flag, value), flag)
