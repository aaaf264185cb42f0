"""Freed memory given back to the system (glibc's allocator; nothing elsewhere).

A long run allocates and frees large arrays step after step (a corpus's chunks, the ledger's sorts, a trainer's
counts). glibc keeps freed blocks below its mmap threshold in the process's heap, where they stay resident as holes
between the arrays kept, and it raises that threshold to the size of each large block freed (up to 32 MiB), so more
of the next step's arrays land in the heap. At 10^6 documents, 220 MiB of the run's resident memory was such holes
when the ledger's record began (docs/research/pipeline.md, "The peak at 10^6 documents under 1.5 GiB").

- :func:`give_back`: return the heap's free pages now (``malloc_trim``), after a step that freed much.
- :func:`map_large_blocks`: from now on, blocks of ``threshold`` bytes or more get their own mapping, returned to the
  system when freed (``mallopt(M_MMAP_THRESHOLD)``, which also stops the threshold from moving). The command line sets
  it once per process; a program of its own can set ``MALLOC_MMAP_THRESHOLD_=16777216`` in its environment instead.
"""
from __future__ import annotations

LARGE_BLOCK = 16 << 20
"""The size from which :func:`map_large_blocks` maps a block of its own by default: 16 MiB. On the 10^6-document run
(2 cores) 1 MiB cut the peak most (1,403 MiB against 1,498-1,541 without) but cost 3-4 s of page faults (50.1-51.5
against 46.5-47.1 s); 4 MiB 1,408 MiB in 49.5 s; 16 MiB 1,427 MiB in 47.0 s."""

_M_MMAP_THRESHOLD = -3          # mallopt's parameter number in glibc's malloc.h
_LIBC: object = None


def _libc():
    """glibc, looked up once; False where the platform has another C library."""
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes  # the C library, looked up once, where the platform has it

            libc = ctypes.CDLL("libc.so.6")
            _LIBC = libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else False
        except OSError:         # not glibc
            _LIBC = False
    return _LIBC


def give_back() -> bool:
    """Return the heap's free pages to the system; False where the C library is not glibc (nothing done)."""
    libc = _libc()
    if not libc:
        return False
    libc.malloc_trim(0)
    return True


def map_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Give each block of ``threshold`` bytes or more a mapping of its own from now on; False where the C library is
    not glibc, or refused the setting (nothing changed)."""
    libc = _libc()
    return bool(libc) and bool(libc.mallopt(_M_MMAP_THRESHOLD, int(threshold)))
