"""Freed memory given back to the system (dptopic._memory): a large freed array leaves the process at once."""
import subprocess
import sys

import pytest

from dptopic import _memory

GLIBC = bool(_memory._libc())


SCRIPT = """
import sys, numpy as np
from dptopic import _memory
how = sys.argv[1]
assert _memory.map_large_blocks(512 * 1024 if how == "mapped" else 16 * 2**20)
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 2**20
before = rss()
parts = [np.ones(100_000) for _ in range(64)]       # 64 arrays of 800 kB, 51 MB
del parts[::2]                                      # every other one freed: holes between the arrays kept
if how == "trimmed":
    assert _memory.give_back()
print(rss() - before)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_freed_arrays_leave_the_resident_memory_when_mapped_or_given_back():
    # arrays under the mmap threshold (16 MiB) come from the heap, and the holes of those freed between the ones kept
    # stay resident; with a threshold under their size each has its own mapping, returned when freed; malloc_trim
    # returns the holes too. The arrays kept: 25.6 MB; the holes: another 25.6 MB.
    grown = {how: float(subprocess.run([sys.executable, "-c", SCRIPT, how], capture_output=True, text=True,
                                       check=True).stdout) for how in ("heap", "mapped", "trimmed")}
    assert grown["heap"] > 40, grown        # measured: 48.8, and 24.5 mapped or trimmed
    assert grown["mapped"] < 32 and grown["trimmed"] < 32, grown


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_give_back_and_map_large_blocks_say_they_ran_under_glibc():
    assert _memory.give_back() is True
    assert _memory.map_large_blocks() is True


def test_another_c_library_is_left_alone(monkeypatch):
    monkeypatch.setattr(_memory, "_LIBC", False)
    assert _memory.give_back() is False and _memory.map_large_blocks() is False
