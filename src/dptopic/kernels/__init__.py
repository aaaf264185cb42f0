"""Compiled (numba) sampling kernels. Pure functions over arrays plus an RNG state."""
import os as _os
import stat
import tempfile

from ..errors import DPTopicError


def _writable(folder: str) -> bool:
    """Whether a file can be created in ``folder`` (made if missing): the test numba's cache locators make."""
    try:
        _os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _private_folder(parent: str, name: str) -> str | None:
    """``parent/name``, a folder only this user can use (made with mode 0700; an existing one must be a real folder
    owned by this user that no one else can reach, or it is not used); None where it cannot be had."""
    path = _os.path.join(parent, name)
    try:
        _os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = _os.lstat(path)
    except OSError:
        return None
    if (not stat.S_ISDIR(st.st_mode) or st.st_uid != _os.getuid() or st.st_mode & 0o077
            or not _writable(path)):
        return None
    return path


def numba_cache_dir(kernels_dir: str, user_cache_dir, environ=None) -> str | None:
    """The folder to give numba as ``NUMBA_CACHE_DIR`` before the kernels (``@njit(cache=True)``) compile, or None
    where numba can cache as it is: ``NUMBA_CACHE_DIR`` is set, or the kernels' own ``__pycache__`` or numba's
    user-wide cache folder (``user_cache_dir()``, called only when needed) is writable. Otherwise numba would stop
    every command with a traceback ("cannot cache function ...: no locator available"), as for a service account
    whose HOME and installed package are read-only: the kernels then cache in a private folder (0700) of the
    temporary directory, ``dptopic-numba-UID``, reused by later runs, or a fresh one from ``tempfile.mkdtemp``
    when that name is taken by someone else. Raises :class:`~dptopic.errors.DPTopicError` when no folder at all
    can be written."""
    environ = _os.environ if environ is None else environ
    if environ.get("NUMBA_CACHE_DIR") or _writable(_os.path.join(kernels_dir, "__pycache__")):
        return None
    try:
        user = user_cache_dir()
    except Exception:       # numba's AppDirs finds no home: treat as not writable
        user = None
    if user and _writable(user):
        return None
    try:
        tmp = tempfile.gettempdir()     # raises when no temporary folder is usable at all
    except OSError:
        tmp = None
    uid = getattr(_os, "getuid", None)
    folder = _private_folder(tmp, f"dptopic-numba-{uid()}") if uid is not None and tmp is not None else None
    if folder is None:
        try:
            if tmp is None:
                raise OSError("no temporary folder")
            folder = tempfile.mkdtemp(prefix="dptopic-numba-")     # mode 0700
        except OSError:
            raise DPTopicError(f"numba cannot cache dptopic's compiled kernels: neither {kernels_dir}, numba's user"
                               f" cache folder ({user or 'none: no home folder'}) nor the temporary folder {tmp}"
                               " is writable; set NUMBA_CACHE_DIR to a writable folder.") from None
    return folder


def _user_cache_dir() -> str:
    from numba.misc.appdirs import AppDirs  # where numba's user-wide locator caches

    return AppDirs(appname="numba", appauthor=False).user_cache_dir


def numba_threads_error(environ=None) -> str | None:
    """What is wrong with ``NUMBA_NUM_THREADS`` in ``environ`` (the process's environment by default), or None when it
    is unset, empty or a whole number of at least 1. numba reads it when it is first imported and stops with a traceback
    on 0 or a negative number (and ignores a word with a warning): the message names the variable and how to fix it."""
    environ = _os.environ if environ is None else environ
    value = environ.get("NUMBA_NUM_THREADS")
    if value is None or not value.strip():
        return None
    try:
        n = int(value.strip())
    except ValueError:
        n = None
    if n is not None and n >= 1:
        return None
    return (f"the environment variable NUMBA_NUM_THREADS={value!r} is not a whole number of threads of at least 1:"
            " set it to a number from 1 to the number of CPU cores (e.g. export NUMBA_NUM_THREADS=4), or unset it"
            " (unset NUMBA_NUM_THREADS) to use every core.")


def check_numba_threads(environ=None) -> None:
    """Raise :class:`~dptopic.errors.DPTopicError` with :func:`numba_threads_error`'s line when ``NUMBA_NUM_THREADS``
    is unusable, before numba is imported."""
    message = numba_threads_error(environ)
    if message is not None:
        raise DPTopicError(message)


check_numba_threads()    # before anything below imports numba, whose own check is a traceback
_cache = numba_cache_dir(_os.path.dirname(_os.path.abspath(__file__)), _user_cache_dir)
if _cache is not None:       # before the first @njit(cache=True) below looks for a cache locator
    import numba.core.config as _numba_config

    _os.environ["NUMBA_CACHE_DIR"] = _cache
    _numba_config.CACHE_DIR = _cache

# The kernels are imported on first use (PEP 562): a contributor's ``dptopic randomize`` loads the one it needs, not
# every sampler. Any import of a kernel module runs this file first, so the cache folder above is always set in time.
from .._lazy_names import lazy_names  # noqa: E402

_WHERE = {
    "count_assignments": "counts", "dense_sweep": "dense", "document_statistic": "em", "max_doc_loglik": "em",
    **dict.fromkeys(("ShardedSweeper", "Shard", "SweepArrays", "make_shards", "sweep_shard"), "engine"),
    "frozen_sweep": "frozen", "fold_in": "foldin", "token_log_likelihood": "foldin",
    "client_sweep": "client",
    "add_discrete_laplace": "noise", "discrete_laplace_threshold": "noise",
    **dict.fromkeys(("packed_column_sums", "presence_packed", "randomize_presence"), "randomized_response"),
    **dict.fromkeys(("rrp_replace", "sample_labels", "subset_client_sweep", "subset_select", "subset_signal_add",
                     "subset_theta_em"), "rrp"),
    "kernel_state": "rng", "next_uniform": "rng", "sparse_sweep": "sparse", "segment_sums": "_bow",
    "usable_cores": "_threads",
    **dict.fromkeys(("dirichlet_expectation", "doc_elbo", "vb_estep"), "vb"),
}

__all__ = list(_WHERE)


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())
