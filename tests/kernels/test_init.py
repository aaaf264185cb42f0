"""The compiled kernels' numba cache folder."""
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dptopic.errors import DPTopicError
from dptopic.kernels import check_numba_threads, numba_threads_error

ROOT = Path(__file__).resolve().parents[2]


SIMULATED = """
import os, sys, tempfile
root = os.environ["TMPDIR"]
real = tempfile.TemporaryFile
def refuse(*a, dir=None, **kw):     # every folder but the temporary one read-only, as for a service account
    if dir is not None and not os.path.abspath(dir).startswith(root):
        raise PermissionError(13, "Permission denied", dir)
    return real(*a, dir=dir, **kw)
tempfile.TemporaryFile = refuse
import numpy as np
from dptopic.kernels import count_assignments
ndk, nwk, nk = count_assignments(np.array([0, 1], np.int32), np.array([0, 2], np.int64), np.array([0, 1], np.int32),
                                 2, 2)
print(nk.tolist(), os.environ["NUMBA_CACHE_DIR"])
"""


# ---------------------------------------------------------------- finding 10: numba cannot cache
def test_numba_cache_folder_falls_back_to_a_private_temporary_folder(tmp_path, monkeypatch):
    from dptopic.kernels import numba_cache_dir

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    unwritable = "/dev/null/x"      # not a folder: nothing can be made under it, even by root
    folder = numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={})
    assert folder == str(tmp_path / f"dptopic-numba-{os.getuid()}")
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={}) == folder     # reused next time
    # a folder of that name others can reach is not used: a fresh private one instead
    os.chmod(folder, 0o755)
    other = numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={})
    assert other != folder and stat.S_IMODE(os.stat(other).st_mode) == 0o700
    # numba can cache as it is: nothing to do (and the user's own NUMBA_CACHE_DIR is kept)
    assert numba_cache_dir(str(tmp_path), lambda: "/dev/null/cache", environ={}) is None
    assert numba_cache_dir(unwritable, lambda: str(tmp_path / "user"), environ={}) is None
    assert numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={"NUMBA_CACHE_DIR": "/x"}) is None

    def no_home():
        raise KeyError("HOME")

    no_home_folder = numba_cache_dir(unwritable, no_home, environ={})     # no home folder: as if not writable
    assert no_home_folder is not None and stat.S_IMODE(os.stat(no_home_folder).st_mode) == 0o700
    monkeypatch.setattr(tempfile, "tempdir", "/dev/null/tmp")
    with pytest.raises(DPTopicError, match="NUMBA_CACHE_DIR"):
        numba_cache_dir(unwritable, lambda: "/dev/null/cache", environ={})


def test_kernels_import_when_neither_the_package_nor_home_can_cache(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "HOME")}
    env.update(TMPDIR=str(tmp_path), PYTHONPATH=str(ROOT / "src"))
    r = subprocess.run([sys.executable, "-c", SIMULATED], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-2000:]
    counts, folder = r.stdout.strip().rsplit(" ", 1)
    assert counts == "[1, 1]" and folder.startswith(str(tmp_path))
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700 and os.listdir(folder)     # it cached there


# --------------------------------------------------------------------------------------------------------------
# The check of ``NUMBA_NUM_THREADS`` made before numba is imported (numba's own is a traceback).
@pytest.mark.parametrize("value", ["0", "-1", "-8", "abc", "1.5", "2 threads"])
def test_a_number_of_threads_below_one_or_not_a_number_is_refused_naming_the_variable(value):
    with pytest.raises(DPTopicError, match="NUMBA_NUM_THREADS") as e:
        check_numba_threads({"NUMBA_NUM_THREADS": value})
    assert repr(value) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("env", [{}, {"NUMBA_NUM_THREADS": ""}, {"NUMBA_NUM_THREADS": "1"},
                                 {"NUMBA_NUM_THREADS": " 4 "}])
def test_an_unset_empty_or_positive_number_of_threads_is_accepted(env):
    assert numba_threads_error(env) is None
