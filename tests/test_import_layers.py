"""The package's layers (``[tool.importlinter]`` in pyproject.toml): imports run from ``cli`` down to ``kernels`` and
never up, so a module can be read knowing only the layers below it. The check is import-linter's, over every import
in ``src/dptopic``, those inside functions included."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint(config: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([str(exe), "--config", str(config), "--no-cache"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)


def test_imports_keep_to_the_layers():
    run = _lint(ROOT / "pyproject.toml")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "1 kept, 0 broken" in run.stdout


def test_the_check_catches_an_import_running_up(tmp_path):
    """The same contract with two layers swapped is broken: the check reads the imports, not just the file."""
    text = (ROOT / "pyproject.toml").read_text()
    swapped = text.replace('"dptopic.models",', '"@MODELS@",').replace('"dptopic.reporting",', '"dptopic.models",') \
        .replace('"@MODELS@",', '"dptopic.reporting",')
    assert swapped != text
    config = tmp_path / "pyproject.toml"
    config.write_text(swapped)
    run = _lint(config)
    assert run.returncode != 0 and "BROKEN" in run.stdout, run.stdout[-2000:]
