"""Freed memory given back to the system (dptopic._memory): a large freed array leaves the process at once."""
import subprocess
import sys

import pytest

from dptopic import _memory

GLIBC = bool(_memory._libc())


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_a_large_array_freed_leaves_the_resident_memory_under_map_large_blocks():
    # 64 arrays of 800 kB, 50 MB in all, each above glibc's first mmap threshold (128 kB), which rises to a freed
    # block's size (up to 32 MiB): the heap then keeps them after they are freed, unless each has its own mapping
    script = """
import sys, numpy as np
from dptopic import _memory
if sys.argv[1] == "mapped":
    assert _memory.map_large_blocks(512 * 1024)
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
big = np.ones(16 * 2**20 // 8)      # a freed block of 16 MB raises glibc's own threshold above the small ones
del big
before = rss()
parts = [np.ones(100_000) for _ in range(64)]
parts.append(np.ones(10))               # a small block on top of the heap keeps its top from being trimmed
keep = parts.pop()
del parts
print(rss() - before)
"""
    grown = {how: float(subprocess.run([sys.executable, "-c", script, how], capture_output=True, text=True,
                                       check=True).stdout) for how in ("heap", "mapped")}
    assert grown["heap"] > 8 and grown["mapped"] < 2, grown        # measured: 16.9 and 0.004 MB


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_give_back_and_map_large_blocks_say_they_ran_under_glibc():
    assert _memory.give_back() is True
    assert _memory.map_large_blocks() is True


def test_another_c_library_is_left_alone(monkeypatch):
    monkeypatch.setattr(_memory, "_LIBC", False)
    assert _memory.give_back() is False and _memory.map_large_blocks() is False
