"""Bundles: a folder of one JSON metadata file plus ``.npy`` arrays (never pickled), saved atomically and checked
by digest on load."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat as _stat
import tempfile
from pathlib import Path

import numpy as np

from ..errors import CorruptModelError, DPTopicError
from .atomic import _exchange, _old_name, _umask, atomic_write_json
from .json_text import load_json
from .output import _PLAIN_NAME, _holds_bundle, _remove_stale_temporaries, holding_output

ARRAY_DIGESTS = "array_sha256"
"""``model.json``'s record of each array file's SHA-256 (hex), written by :func:`save_bundle` and checked by
:func:`load_bundle`; folders saved before it was written have none and load as before."""


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def mismatched_arrays(directory, meta: dict) -> list[str]:
    """The array files of the bundle at ``directory`` whose SHA-256 differs from the one its ``meta`` records (files
    that are absent, and folders saved before digests were recorded, are not compared)."""
    digests = meta.get(ARRAY_DIGESTS) if isinstance(meta, dict) else None
    if not isinstance(digests, dict):
        return []
    out = []
    for name, digest in sorted(digests.items()):
        p = Path(directory) / f"{name}.npy"
        if isinstance(name, str) and _PLAIN_NAME.fullmatch(name) and p.is_file() and not p.is_symlink():
            if _file_sha256(p) != digest:
                out.append(f"{name}.npy")
    return out


def save_bundle(directory: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray],
                meta_name: str = "model.json") -> Path:
    """Write ``meta`` as JSON and each array as ``NAME.npy`` into ``directory``, atomically.

    The bundle is written to a sibling temporary directory which then takes the place of
    ``directory``: in one atomic exchange where the OS offers it (Linux ``renameat2``), else
    by two renames; should a crash fall between those, :func:`load_bundle` reads the kept
    ``.NAME.old``. A ``directory`` that exists but does not hold a bundle (a file, or a folder
    with other contents) is refused, never deleted.
    """
    if not isinstance(directory, (str, os.PathLike)) or not str(directory).strip():
        raise DPTopicError(f"invalid folder {directory!r}: give a path (a string or pathlib.Path) to save to.")
    directory = Path(os.path.abspath(os.fspath(directory)))
    for name in arrays:
        if not _PLAIN_NAME.fullmatch(name):
            raise DPTopicError(f"invalid array name {name!r}: use letters, digits and underscores only.")
    # held from the check to the swap: a second save (or run) into this folder is refused while it lasts, and the
    # temporaries cleared below can only be those of a save that died
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass            # said below, in the words of the write that fails
    with holding_output(directory, "directory", what="model"):
        return _save_bundle_held(directory, meta, arrays, meta_name)


def _save_bundle_held(directory: Path, meta: dict, arrays: dict, meta_name: str) -> Path:
    """:func:`save_bundle` while this run holds ``directory`` (:func:`~dptopic._io.output.claim_output`)."""
    if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
        raise DPTopicError(f"{str(directory)!r} exists and is not a folder: refusing to replace it; save elsewhere.")
    if directory.is_dir() and any(directory.iterdir()) and not _holds_bundle(directory, meta_name):
        raise DPTopicError(f"{str(directory)!r} is a folder that does not hold a dptopic bundle: refusing to replace"
                           f" its contents; save to a new or empty folder.")
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(directory)
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    except OSError as e:
        raise DPTopicError(f"cannot write to {str(directory)!r} ({e.strerror or type(e).__name__}): save to a writable"
                           " folder.") from None
    try:
        try:  # a folder being replaced keeps its mode; a new one gets the mode mkdir would give, not mkdtemp's 0700
            os.chmod(tmp, os.stat(directory).st_mode & 0o777 if directory.is_dir() else 0o777 & ~_umask())
        except OSError:
            pass
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
        meta = dict(meta)
        meta["arrays"] = sorted(arrays)
        # each array file's digest ties it to this model.json: a file copied in from another folder, or edited, is
        # refused on load (an accident caught, not a forgery: whoever can write the folder can rewrite both)
        meta[ARRAY_DIGESTS] = {name: _file_sha256(tmp / f"{name}.npy") for name in sorted(arrays)}
        atomic_write_json(tmp / meta_name, meta)
        if directory.exists():
            if _exchange(tmp, directory):   # no instant without a complete bundle at `directory`
                shutil.rmtree(tmp, ignore_errors=True)
                return directory
            old = _old_name(directory)
            if old.exists():
                shutil.rmtree(old)
            os.replace(directory, old)
            os.replace(tmp, directory)      # a crash just before this leaves `old`, which load_bundle reads
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


MAX_META_BYTES = 256 * 2 ** 20
"""The largest model.json read (as :func:`is_bundle` bounds it): a model's metadata is far smaller."""


def load_bundle(directory: str | os.PathLike, meta_name: str = "model.json",
                what: str = "model") -> tuple[dict, dict[str, np.ndarray]]:
    if not isinstance(directory, (str, os.PathLike)) or not str(directory).strip():
        raise DPTopicError(f"invalid {what} path {directory!r}: pass the folder of a saved {what} ({what}.save(folder), or out= of dptopic.train).")
    directory = Path(directory)
    if not directory.is_dir() and directory.name and _old_name(directory).is_dir() and not directory.exists():
        directory = _old_name(directory)  # a save was interrupted between its two renames: the old bundle is whole
    if not directory.is_dir():
        what_is = ("is a file, not a folder" if directory.is_file() else
                   "is not a folder (a device, pipe or socket)" if directory.exists() else "does not exist")
        raise DPTopicError(f"{what} directory {str(directory)!r} {what_is}: pass the folder a saved {what} was written to"
                           f" ({what}.save(folder), or out= of dptopic.train).")
    mpath = directory / meta_name

    try:    # a regular file of bounded size: a FIFO would block, /dev/zero behind a link would fill the memory
        st = os.stat(mpath)
        if not _stat.S_ISREG(st.st_mode) or st.st_size > MAX_META_BYTES:
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} is "
                                    + ("not a regular file" if not _stat.S_ISREG(st.st_mode) else
                                       f"larger than {MAX_META_BYTES // 2 ** 20} MiB")
                                    + f"; re-save the {what}.")
    except FileNotFoundError:
        pass                # answered below, as before
    except OSError as e:
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} cannot be read ({e.strerror});"
                                f" re-save the {what}.") from None
    try:
        meta = load_json(mpath.read_text("utf-8"), "model.json")
    except FileNotFoundError:
        if not any(directory.glob("*.npy")):        # nothing of a saved model here: the wrong folder, not a broken one
            raise CorruptModelError(f"{str(directory)!r} holds no saved {what} (no {meta_name}): pass the folder a {what}"
                                    f" was saved to ({what}.save(folder), or out= of dptopic.train).") from None
        raise CorruptModelError(f"{str(directory)!r} holds .npy files but no {meta_name}: it is not a saved dptopic {what}"
                                f" (another program's folder?), or one whose {meta_name} was removed; pass the folder a"
                                f" {what} was saved to, or re-save the {what}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as e:
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} is not valid JSON ({e.msg if hasattr(e, 'msg') else type(e).__name__}); re-save the {what}.") from None
    except OSError as e:
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} cannot be read ({e.strerror}); re-save the {what}.") from None
    if meta_name == "model.json" and isinstance(meta, dict) and "format" not in meta and "arrays" not in meta:
        raise CorruptModelError(f"{str(directory)!r} is not a saved dptopic {what}: its {meta_name} was written by"
                                f" another program (it names no dptopic format); pass the folder a {what} was saved to"
                                f" ({what}.save(folder), or out= of dptopic.train).")
    if not isinstance(meta, dict) or not isinstance(meta.get("arrays"), list):
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} has no 'arrays' list; re-save the {what}.")
    digests = meta.get(ARRAY_DIGESTS)
    if digests is not None and not (isinstance(digests, dict) and all(isinstance(v, str) for v in digests.values())):
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name}'s {ARRAY_DIGESTS!r} is not an object"
                                f" of digests; re-save the {what}.")
    arrays = {}
    for name in meta["arrays"]:
        if not isinstance(name, str) or not _PLAIN_NAME.fullmatch(name):
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} lists the array name {repr(name)[:60]};"
                                    f" only plain names (letters, digits, underscores) are allowed; re-save the {what}.")
        p = directory / f"{name}.npy"
        if p.is_symlink():
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy is a symbolic link; re-save the {what}.")
        if p.exists() and not p.is_file():      # a FIFO or a device would block or never end
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy is not a regular file; re-save the {what}.")
        # read once, hashing as it is parsed: the bytes checked against the digest are the bytes parsed, and the
        # file is never held twice in memory (the array, plus numpy's read chunk)
        try:
            with open(p, "rb") as fh:
                reader = _HashingReader(fh)
                try:
                    array = np.lib.format.read_array(reader, allow_pickle=False)
                    parsed = None
                except OSError:
                    raise
                except Exception as e:  # numpy's header parser raises ValueError, SyntaxError, tokenize errors...
                    array, parsed = None, type(e).__name__
                while reader.read(1 << 20):     # the rest of the file (trailing bytes too) belongs to the digest
                    pass
        except FileNotFoundError:
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy is missing; re-save the {what}.") from None
        except OSError as e:
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy cannot be read ({e.strerror}); re-save the {what}.") from None
        if digests is not None and digests.get(name) != reader.hexdigest():
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy is not the file this {meta_name} was"
                                    f" saved with (its SHA-256 differs from the one recorded): the folder's files were"
                                    f" mixed with another {what}'s or edited; restore the folder from its source, or train the {what} again.")
        if parsed is not None:
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy cannot be read ({parsed}); re-save the {what}.")
        arrays[name] = array
        if not isinstance(arrays[name], np.ndarray) or arrays[name].dtype.kind not in "biuf":
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy holds {getattr(arrays[name], 'dtype', 'no array')} values,"
                                    f" not real numbers; re-save the {what}.")
    return meta, arrays


class _HashingReader:
    """A read-only file wrapper that hashes (SHA-256) every byte read through it. It has no ``fileno``, so numpy's
    ``read_array`` reads it in bounded chunks instead of ``fromfile``, and every byte parsed passes through the hash."""

    def __init__(self, fh):
        self._fh, self._h = fh, hashlib.sha256()

    def read(self, n: int = -1) -> bytes:
        data = self._fh.read(n)
        self._h.update(data)
        return data

    def readinto(self, buf) -> int:
        n = self._fh.readinto(buf)
        self._h.update(memoryview(buf).cast("B")[:n])
        return n

    def hexdigest(self) -> str:
        return self._h.hexdigest()
