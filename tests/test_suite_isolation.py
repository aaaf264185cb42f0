"""The test suite leaves the user's own dataset ledger and the repository's working folder as it found them: every
test, session fixture and process a test starts keeps its ledger in a folder of the session's own (tests/conftest.py),
and every benchmark in one of its own (benchmarks/_common.py)."""
import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a session fixture that trains as a test of the suite might: in this process (the command line, whose ledger is
# on by default) and in a new one; before any test's own folders exist
PLUGIN = textwrap.dedent("""
    import subprocess, sys, warnings
    import pytest

    @pytest.fixture(scope="session", autouse=True)
    def trains_before_any_test(tmp_path_factory):
        from dptopic.cli.main import main
        d = tmp_path_factory.mktemp("session")
        (d / "docs.txt").write_text("\\n".join(["apple banana cherry grape lemon", "river mountain valley ocean"] * 30))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert main(["train", "--algorithm", "docdp-cooc", "--corpus", str(d / "docs.txt"), "--epsilon", "1",
                         "--topics", "2", "--test-size", "0", "--quiet", "--out", str(d / "a")]) in (0, None)
        r = subprocess.run([sys.executable, "-m", "dptopic", "train", "--algorithm", "docdp-cooc", "--corpus",
                            str(d / "docs.txt"), "--epsilon", "1", "--topics", "2", "--test-size", "0", "--quiet",
                            "--out", str(d / "b")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
""")


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, capture_output=True,
                          text=True).stdout


def test_a_session_leaves_the_users_ledger_and_the_working_folder_untouched(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "session_trainer.py").write_text(PLUGIN)
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "XDG_STATE_HOME", "DPTOPIC_LEDGER",
                                                           "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST")}
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(tmp_path / "plugin"), str(ROOT / "src")]))
    before = _git_status()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                        "-p", "session_trainer", "-n", "0",
                        "tests/corpus/test_identity.py::test_white_space_and_unicode_forms_are_one_text"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert not (home / ".local" / "share" / "dptopic").exists(), "a session fixture wrote the user's own ledger"
    assert not (home / ".local" / "state").exists()
    assert _git_status() == before


# a session fixture that trains in another process with the user's own ledger (the suite's folders taken out of its
# environment), its model under OUT_FOLDER: a person training beside the suite (OUT_FOLDER outside the run's folders),
# or a leak of the run itself (OUT_FOLDER "own": a folder of the run's tmp_path_factory)
BESIDE = textwrap.dedent("""
    import os, subprocess, sys
    import pytest

    @pytest.fixture(scope="session", autouse=True)
    def trains_with_the_users_ledger(tmp_path_factory):
        d = tmp_path_factory.mktemp("beside")
        (d / "docs.txt").write_text("\\n".join(["apple banana cherry grape lemon", "river mountain valley ocean"] * 30))
        out = os.environ["OUT_FOLDER"]
        out = str(d / "model") if out == "own" else out
        env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "XDG_STATE_HOME")}
        r = subprocess.run([sys.executable, "-m", "dptopic", "train", "--algorithm", "docdp-cooc", "--corpus",
                            str(d / "docs.txt"), "--epsilon", "1", "--topics", "2", "--test-size", "0", "--quiet",
                            "--out", out], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
""")


@pytest.mark.parametrize("whose", ["another process", "the run"])
def test_the_ledger_check_blames_only_releases_of_the_run(tmp_path, whose):
    """A process beside the suite that writes the user's default ledger (a person training while the tests run) does
    not fail the session; a release of the run's own, its model under the run's temporary folders, does, naming it."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "plugin").mkdir()
    (tmp_path / "plugin" / "beside_trainer.py").write_text(BESIDE)
    ledger = home / ".local" / "share" / "dptopic" / "ledger.sqlite"
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "XDG_STATE_HOME", "DPTOPIC_LEDGER",
                                                           "PYTEST_XDIST_WORKER", "PYTEST_CURRENT_TEST")}
    env.update(HOME=str(home), PYTHONPATH=os.pathsep.join([str(tmp_path / "plugin"), str(ROOT / "src")]),
               OUT_FOLDER=str(tmp_path / "elsewhere" / "model") if whose == "another process" else "own")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                        "-p", "beside_trainer", "-n", "0", "--basetemp", str(tmp_path / "run"),
                        "tests/corpus/test_identity.py::test_white_space_and_unicode_forms_are_one_text"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert ledger.is_file(), "the process beside the run did not write the user's ledger: the test shows nothing"
    if whose == "another process":
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert "wrote the user's own dataset ledger" not in r.stderr
    else:
        assert r.returncode != 0
        assert "wrote the user's own dataset ledger" in r.stderr and str(tmp_path / "run") in r.stderr


def test_every_benchmark_keeps_its_ledger_in_a_folder_of_its_own():
    """Each script of benchmarks/ imports _common, which points the ledger and contributor state at a folder of the
    run's own before anything trains."""
    common = (ROOT / "benchmarks" / "_common.py").read_text()
    assert 'os.environ["XDG_DATA_HOME"]' in common and 'os.environ.pop("DPTOPIC_LEDGER"' in common
    for path in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        tree = ast.parse(path.read_text())
        imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imports |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert "_common" in imports, f"{path.name} does not import _common"


def test_the_repository_root_holds_only_its_own_files():
    """The root holds what git tracks, what .gitignore names (a virtual environment, the test tools' caches, built
    documentation) and nothing else: a stray file (a SQLite ledger named ``1`` that a run left, committed twice) fails
    here, whichever run wrote it."""
    tracked = {p.split("/", 1)[0] for p in subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                                                            text=True, check=True).stdout.splitlines()}
    others = sorted(set(os.listdir(ROOT)) - tracked - {".git"})
    ignored = set(subprocess.run(["git", "check-ignore", "--no-index", *others], cwd=ROOT, capture_output=True,
                                 text=True).stdout.splitlines()) if others else set()
    stray = [n for n in others if n not in ignored and n + "/" not in ignored]
    assert not stray, f"files at the repository root that belong to no one: {stray} (a run's leftovers? delete them)"
