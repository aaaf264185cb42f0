"""The kernels' ``njit``: a cache save that finds no compiled object leaves the compiled kernel running."""
import importlib
import pkgutil

import numba
import pytest
from numba.core.caching import FunctionCache
from numba.core.registry import CPUDispatcher

import dptopic.kernels
from dptopic.kernels._jit import _GuardedCache, njit


def add_one(x):
    return x + 1


def add_two(x):
    return x + 2


def add_three(x):
    return x + 3


@pytest.fixture
def failing_save(monkeypatch):
    """numba's cache save fails as it does when another process caches the same kernels at the same time."""
    message = []

    def save(self, sig, data):
        raise RuntimeError(message[0])

    monkeypatch.setattr(FunctionCache, "_save_overload", save)
    return message


def test_a_save_that_finds_no_compiled_object_leaves_the_kernel_running(failing_save):
    failing_save.append("no compiled object yet for <Library 'add_one' at 0x7f>")
    assert njit(cache=True, nogil=True)(add_one)(1) == 2
    with pytest.raises(RuntimeError, match="no compiled object yet"):     # what numba's own njit does
        numba.njit(cache=True)(add_two)(1)


def test_any_other_error_of_a_save_is_raised(failing_save):
    failing_save.append("disk full")
    with pytest.raises(RuntimeError, match="disk full"):
        njit(cache=True)(add_three)(1)


def test_every_cached_kernel_has_the_guarded_cache():
    cached = []
    for info in pkgutil.iter_modules(dptopic.kernels.__path__):
        module = importlib.import_module(f"dptopic.kernels.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.__module__ == module.__name__ and obj._cache is not None:
                if type(obj._cache).__name__ != "NullCache":
                    cached.append((f"{info.name}.{name}", type(obj._cache)))
    assert len(cached) > 40, cached
    assert [n for n, kind in cached if kind is not _GuardedCache] == []
