"""The benchmark tests' fixture: the script a test file is named after, imported as the scripts import each other."""
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def bench(request, monkeypatch):
    """The script ``benchmarks/bench_NAME.py`` that ``tests/benchmarks/test_bench_NAME.py`` tests, imported from
    benchmarks/ (on the path for the test, as when a script runs from there)."""
    monkeypatch.syspath_prepend(str(BENCH))
    return importlib.import_module(request.path.stem[len("test_"):])
