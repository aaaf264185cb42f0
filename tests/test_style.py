"""The house style the tools hold (CONTRIBUTING.md, "Style"): ``ruff check`` (pyproject.toml's [tool.ruff]: pyflakes,
pycodestyle's errors, import order) runs before the suite in ``make test``; lines over 120 characters, which ruff's
E501 would refuse, are held here by a ratchet that only goes down until they are rewrapped."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("src", "tests", "benchmarks")

LONG_LINES = {"src": 374, "tests": 220, "benchmarks": 44}
"""Lines over 120 characters in each folder's Python files (issue #77 counted 403 in src/ before the linter): a
folder may have no more, and one that has fewer has its allowance lowered."""


def long_lines(folder: str) -> int:
    return sum(len(line) > 120 for path in sorted((ROOT / folder).rglob("*.py"))
               for line in path.read_text(encoding="utf-8").splitlines())


def test_no_folder_gains_a_long_line_and_none_keeps_slack():
    counts = {folder: long_lines(folder) for folder in FOLDERS}
    assert counts == LONG_LINES, (f"lines over 120 characters: {counts}, allowed {LONG_LINES}: rewrap the new ones, or"
                                  " lower LONG_LINES to the new count")


def test_ruff_passes():
    """The check ``make test`` runs first, here too so that a run of pytest alone sees it."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    r = subprocess.run([ruff, "check", "--output-format", "concise", *FOLDERS], cwd=ROOT, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-1000:]


def _functions(path: Path) -> set:
    import ast

    return {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(n, ast.FunctionDef) and not n.name.startswith("_") and not n.decorator_list}


def test_each_shared_test_helper_is_written_once():
    """Three ``one_line_error`` helpers (helpers.py, conftest.py, a test module's own), two of them alike: a helper
    the tests share is defined once, in one of the shared modules, and no test module writes its own of that name."""
    shared = {}
    for name in ("helpers.py", "conftest.py", "service_helpers.py"):
        for f in _functions(ROOT / "tests" / name):
            shared.setdefault(f, []).append(name)
    twice = {f: where for f, where in shared.items() if len(where) > 1}
    assert not twice, f"helpers defined in more than one shared module: {twice}"
    copies = [f"{p.relative_to(ROOT)}: {f}" for p in sorted((ROOT / "tests").rglob("test_*.py"))
              for f in _functions(p) & set(shared)]
    assert not copies, "test modules that write their own copy of a shared helper: " + ", ".join(copies)


# ------------------------------------------------------------------ tests laid out like the package
TEST_FOLDERS_NOT_MODULES = ("cli", "integration", "privacy", "docs")
"""Test folders the guide lays out by what they exercise, not by module: the command line, the real components
together, the attacks on every trainer, and the documentation."""

NOT_NAMED_AFTER_A_MODULE = {
    "test_import_layers.py": "the import contracts of the whole package",
    "test_style.py": "the house style of the whole repository",
    "test_suite_isolation.py": "what the test suite itself leaves behind",
    "benchmarks/test_scripts.py": "every script of benchmarks/ runs on tiny data",
    "package/test_makefile.py": "the Makefile",
    "models/test_docdp_cooc_vectors.py": "models/docdp_cooc.py with public vectors, reworked on another branch",
}
"""The few test files named after no module, each with what it tests instead."""


def _module_of(test: Path) -> Path | None:
    """The module ``tests/<package>/test_<module>.py`` tests (``test_init.py``: the package's ``__init__.py``; a
    private module ``_name.py`` is tested by ``test_name.py``), or None when there is none of that name."""
    rel = test.relative_to(ROOT / "tests")
    name = rel.stem[len("test_"):]
    folder = rel.parent.parts
    if folder[:1] == ("benchmarks",):
        base = ROOT / "benchmarks"
    elif folder in ((), ("package",)):
        base = ROOT / "src" / "dptopic"
    else:
        base = ROOT / "src" / "dptopic" / Path(*folder)
    candidates = [base / f"{name}.py", base / f"_{name}.py", base / name / "__init__.py",
                  base / f"_{name}" / "__init__.py"]
    if name == "init":
        candidates.append(base / "__init__.py")
    return next((c for c in candidates if c.is_file()), None)


def test_every_test_file_is_named_after_the_module_it_tests():
    """``tests/<package>/test_<module>.py``, one file per module (the guide's "Tests"): a test file named after no
    module (after a finding, a feature, a date) is merged into its module's file, but for the short list above."""
    unnamed = sorted(str(t.relative_to(ROOT / "tests")) for t in (ROOT / "tests").rglob("test_*.py")
                     if t.relative_to(ROOT / "tests").parts[0] not in TEST_FOLDERS_NOT_MODULES
                     and _module_of(t) is None)
    assert [t for t in unnamed if t not in NOT_NAMED_AFTER_A_MODULE] == []
    assert sorted(NOT_NAMED_AFTER_A_MODULE) == unnamed, "an entry of NOT_NAMED_AFTER_A_MODULE is no longer needed"


def test_the_layout_check_reads_the_file_names():
    """The check above finds a file named after no module, and takes one named after a private module."""
    assert _module_of(ROOT / "tests" / "kernels" / "test_bow.py") == ROOT / "src" / "dptopic" / "kernels" / "_bow.py"
    assert _module_of(ROOT / "tests" / "models" / "test_review_findings.py") is None
    init = ROOT / "src" / "dptopic" / "kernels" / "__init__.py"
    assert _module_of(ROOT / "tests" / "kernels" / "test_init.py") == init
