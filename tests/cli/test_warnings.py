"""Warnings on the command line: every one on stderr (stdout carries the command's output), and the library's own
warnings reach `dptopic train`'s stderr as Python shows them."""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from helpers import run_dptopic

FRUIT = ("apple banana cherry grape lemon mango melon olive peach pear plum quince berry date fig kiwi lime nectarine"
         " orange papaya").split()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("warnings")
    rng = np.random.default_rng(0)
    (root / "small.jsonl").write_text("".join(json.dumps({"text": " ".join(rng.choice(FRUIT, 12))}) + "\n"
                                              for _ in range(30)))
    # a long public word list, nearly all of it absent from the documents: few words stand above the noise
    filler = ["".join(p) for p in itertools.product("bcdfghjklm", repeat=4)][:5000]
    (root / "long.txt").write_text("\n".join(FRUIT + filler) + "\n")
    (root / "docs.txt").write_text("\n".join(" ".join(rng.choice(FRUIT, 12)) for _ in range(40)) + "\n")
    return root


def test_a_library_warning_reaches_train_stderr_as_python_shows_it(files, tmp_path):
    """A Python fit warns that only a few of the words stand above the noise; `dptopic train` silenced every
    SmallCorpusWarning (to say its own forecast once), and with it this one."""
    r = run_dptopic("train", "--unit", "document", "--epsilon", "1", "--corpus", files / "small.jsonl", "--vocabulary",
                    files / "long.txt", "--topics", "5", "--quiet", "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert "stand above the noise of the word counts" in r.stderr and "shorter public word list" in r.stderr
    assert "warning:" not in r.stdout
    # the forecast is said once, not again by the fit
    assert r.stderr.count("'dptopic recommend'") == 1, r.stderr


def test_privacy_hdp_puts_its_clip_warning_on_stderr(capsys):
    r = run_dptopic("privacy", "hdp", "--clip", "0.005", "--beta", "0.01")
    assert r.returncode == 0, r.stderr
    assert "clamps every topic's count" in r.stderr and "warning" not in r.stdout


def test_a_seeded_private_run_warns_on_stderr(files, tmp_path):
    r = run_dptopic("train", "--algorithm", "hdp", "--epsilon-laplace", "1", "--iterations", "2", "--topics", "2",
                    "--seed", "1", "--corpus", files / "docs.txt", "--test-size", "0", "--quiet", "--out", tmp_path / "m")
    assert r.returncode == 0, r.stderr
    assert "warning:" not in r.stdout
    assert "reproducible" in r.stderr or "seed" in r.stderr
