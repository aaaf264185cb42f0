"""Atomic writes: a file (or a folder, swapped in) is replaced whole or not at all, with the user's umask."""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shlex
import stat
import sys
import tempfile
import warnings
from pathlib import Path

from .json_text import _jsonable


def _umask() -> int:
    """The process's umask, read without changing it where Linux allows (``/proc/self/status``)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o077)  # the probe can only make a file created meanwhile by another thread stricter
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes, private: bool = False) -> None:
    """Write ``path`` whole or not at all (a temporary file in the same folder, then a rename). A file that exists
    keeps its mode, as with a plain ``open``; a new one gets 0666 less the umask, or 0600 when ``private`` (a private
    corpus, say)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = 0o600 if private else os.stat(path).st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def warn_if_shared(path, what: str, holds: str) -> bool:
    """Warn, in one line naming the file and the ``chmod 600`` that mends it, when a file dptopic writes readable by
    its owner only (``private=True``: a key, an invitation, a token) is readable or writable by other users: it is
    read and used all the same, as a SQLite round's database is. ``what``: the file as the line names it ("the
    invitation"); ``holds``: what others could take from it. Whether it warned."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    if not stat.S_ISREG(st.st_mode) or not st.st_mode & 0o077:
        return False
    warnings.warn(f"{what} {path} is readable by other users (mode {stat.S_IMODE(st.st_mode):04o}) and holds"
                  f" {holds}: make it yours only with chmod 600 {shlex.quote(str(path))}.", UserWarning, stacklevel=3)
    return True


def atomic_write_json(path: Path, obj, private: bool = False) -> None:
    atomic_write_bytes(path, json.dumps(_jsonable(obj), indent=2).encode("utf-8"), private=private)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with Linux ``renameat2(RENAME_EXCHANGE)``; False where unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD, RENAME_EXCHANGE = -100, 2
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0


def _old_name(directory: Path) -> Path:
    return directory.with_name(f".{directory.name}.old")
