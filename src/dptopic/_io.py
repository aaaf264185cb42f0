"""Atomic, pickle-free file I/O: JSON plus ``.npy`` (``allow_pickle=False``)."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np

from .errors import CorruptModelError, DPTopicError


def _jsonable(obj):
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        return str(obj)
    return obj


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_bytes(path, json.dumps(_jsonable(obj), indent=2).encode("utf-8"))


def save_bundle(directory: str | os.PathLike, meta: dict, arrays: dict[str, np.ndarray],
                meta_name: str = "model.json") -> Path:
    """Write ``meta`` as JSON and each array as ``NAME.npy`` into ``directory``, atomically.

    The bundle is written to a sibling temporary directory which then replaces
    ``directory`` with a rename, so a crash never leaves a half-written model.
    """
    directory = Path(directory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
        meta = dict(meta)
        meta["arrays"] = sorted(arrays)
        atomic_write_json(tmp / meta_name, meta)
        if directory.exists():
            old = directory.with_name(f".{directory.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(directory, old)
            os.replace(tmp, directory)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, directory)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def load_bundle(directory: str | os.PathLike, meta_name: str = "model.json",
                what: str = "model") -> tuple[dict, dict[str, np.ndarray]]:
    directory = Path(directory)
    if not directory.is_dir():
        raise DPTopicError(f"{what} directory {str(directory)!r} does not exist: pass the --out directory of a saved {what}.")
    mpath = directory / meta_name
    try:
        meta = json.loads(mpath.read_text("utf-8"))
    except FileNotFoundError:
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} is missing; re-save the {what}.") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} is not valid JSON ({e.msg if hasattr(e, 'msg') else e}); re-save the {what}.") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("arrays"), list):
        raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {meta_name} has no 'arrays' list; re-save the {what}.")
    arrays = {}
    for name in meta["arrays"]:
        p = directory / f"{name}.npy"
        try:
            arrays[name] = np.load(p, allow_pickle=False)
        except FileNotFoundError:
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy is missing; re-save the {what}.") from None
        except (ValueError, OSError, EOFError) as e:
            raise CorruptModelError(f"corrupt {what} at {str(directory)!r}: {name}.npy cannot be read ({e}); re-save the {what}.") from None
    return meta, arrays
