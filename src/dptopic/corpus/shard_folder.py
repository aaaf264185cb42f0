"""A folder of corpus shards on disk, as :func:`~dptopic.corpus.shards.write_shards` leaves it: which shard files it holds,
whether the run that wrote them finished, and the completion of a replacement a killed run left half done. It reads
and moves files only and builds no :class:`~dptopic.corpus.Corpus`, so the readers of corpus files (``records``)
can ask it whether a folder is an unfinished shard folder; :mod:`dptopic.corpus.shards` writes and reads the shards.
"""
from __future__ import annotations

import os
import warnings
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np

from .._io import _marker_lock, _read_marker, _temporary_target, load_json
from ..errors import DPTopicError

SHARD_PATTERN = "shard-*.npz"
SHARD_RECORD = "shard"
"""Corpus metadata key of a shard written by :func:`~dptopic.corpus.shards.write_shards`: ``{"index": j, "count": n,
"set": ID}``, its place in the set, the set's size and an id shared by the shards of one run, so that a reader can tell
a complete set from a partial or mixed one."""
_STAGED = ".shard-*.npz.partial"   # a shard being written: hidden, and no match for SHARD_PATTERN
_COMMIT = ".shards-commit.json"
"""Written (atomically) once a new set is completely staged, removed once it is in place: while it exists the folder
is between two sets, and whoever reads or writes the folder next finishes the replacement it records
(:func:`finish_replacement`), so a run killed among its renames leaves the new set, never a mix of two."""


def finish_replacement(folder) -> bool:
    """Complete the replacement of a shard set that :data:`_COMMIT` records (a run killed after staging its whole set):
    move the staged shards of that set still hidden into place and remove the old set's extra shards. Under the
    folder's lock, the record read again there: idempotent, and safe beside a run or another reader finishing the same
    replacement. True when there was one to finish."""
    folder = Path(folder)
    if not (folder / _COMMIT).is_file():
        return False
    with _marker_lock(folder):
        return _finish_locked(folder)


def _finish_locked(folder: Path) -> bool:
    """:func:`finish_replacement`'s work; the caller holds the folder's lock."""
    commit = folder / _COMMIT
    if not commit.is_file():            # finished meanwhile by whoever held the lock before
        return False
    redo = rewrite_advice(folder)
    try:
        rec = load_json(commit.read_text(encoding="utf-8"), "the shard set's commit record")
    except (OSError, UnicodeDecodeError, DPTopicError):
        raise DPTopicError(f"corpus shard folder {str(folder)!r} holds an unreadable {_COMMIT}: {redo}.") from None
    count, remove, run = (rec.get("count"), rec.get("remove"), rec.get("set")) if isinstance(rec, dict) else (None,) * 3
    names = {f"shard-{j:05d}.npz" for j in range(count)} if isinstance(count, int) and 0 < count <= 10**6 else None
    if names is None or not isinstance(run, str) or not isinstance(remove, list) or not all(
            isinstance(n, str) and Path(n).name == n and n.startswith("shard-") and n.endswith(".npz")
            and n not in names for n in remove):
        raise DPTopicError(f"corpus shard folder {str(folder)!r} holds a malformed {_COMMIT}: {redo}.")
    try:
        for j in range(count):
            staged = folder / f".shard-{j:05d}.npz.partial"
            if not staged.is_file():    # already in place
                continue
            record = _read_header(staged)[3]
            if not (isinstance(record, dict) and record.get("set") == run):
                continue                # not the committed set's: left for the reader's checks to refuse
            os.replace(staged, folder / f"shard-{j:05d}.npz")
        if not _set_in_place(folder, count, run):
            # a stale or hand-made record (no run of ours leaves its set incomplete once committed): removing the
            # shards it names would lose data, so the record alone goes, and the readers check the shards as they are
            warnings.warn(f"corpus shard folder {str(folder)!r}: ignored a stale {_COMMIT} whose shard set is not in"
                          " place; no shard was removed.", UserWarning, stacklevel=2)
            commit.unlink(missing_ok=True)
            return True
        for n in remove:
            (folder / n).unlink(missing_ok=True)
        commit.unlink(missing_ok=True)
    except OSError as e:
        raise DPTopicError(f"corpus shard folder {str(folder)!r} holds a new shard set whose replacement of the old one"
                           f" was interrupted, and it cannot be finished here ({e.strerror or type(e).__name__}): read"
                           f" it once with write access to the folder, or {redo}.") from None
    return True


def _set_in_place(folder: Path, count: int, run: str) -> bool:
    """Every shard 0..count-1 of the run ``run`` is in place: what a commit record promises before it removes the old
    set's extra shards."""
    for j in range(count):
        path = folder / f"shard-{j:05d}.npz"
        try:
            record = _read_header(path)[3] if path.is_file() else None
        except DPTopicError:
            return False
        if not (isinstance(record, dict) and record.get("set") == run):
            return False
    return True


def folder_shards(folder) -> list[Path]:
    """The shard files of ``folder`` (sorted), after finishing a replacement a killed run left (:data:`_COMMIT`)."""
    folder = Path(folder)
    finish_replacement(folder)
    return sorted(folder.glob(SHARD_PATTERN))


def rewrite_advice(folder) -> str:
    """How to mend a shard folder that is not one complete set: write it again in its place."""
    return (f"re-create it: write the shard set again in its place (write_shards(corpus, {str(folder)!r}, n_shards,"
            " replace=True), as dptopic corpus prepare does)")


SHARD_RUN = "corpus prepare"
"""The command whose run writes a shard folder, as the folder's output marker records it (``dptopic corpus prepare``
writes a folder for a shard set only; a prepared corpus in one piece is a file)."""


def _leftovers(folder: Path) -> list[Path]:
    """What a killed write_shards run leaves in ``folder``: its staged shards (:data:`_STAGED`) and the
    hidden temporaries of their atomic writes (``..shard-NNNNN.npz.partial.<8 characters>.tmp``, as
    :func:`dptopic._io.atomic_write_bytes` names them). Nothing else of the folder is one."""
    found = list(folder.glob(_STAGED))
    for q in folder.glob("." + _STAGED + ".*.tmp"):
        target = _temporary_target(q.name)
        if target is not None and fnmatchcase(target, _STAGED) and q.is_file() and not q.is_symlink():
            found.append(q)
    return sorted(found)


def _read_header(path: Path):
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = load_json(z["meta"].tobytes().decode("utf-8"), "the shard header")
            ptr = z["doc_ptr"]
    except Exception as e:
        raise DPTopicError(f"corrupt corpus shard {str(path)!r}: {type(e).__name__}; write the shard set again (write_shards).") from None
    if not isinstance(meta, dict) or meta.get("format") != "dptopic-corpus":
        raise DPTopicError(f"corrupt corpus shard {str(path)!r}: not a dptopic corpus; write the shard set again (write_shards).")
    extra = meta.get("metadata")
    supplied = isinstance(extra, dict) and extra.get("vocabulary_source") == "supplied"
    record = extra.get(SHARD_RECORD) if isinstance(extra, dict) else None
    if not (isinstance(record, dict) and isinstance(record.get("set"), str)
            and all(isinstance(record.get(k), int) and not isinstance(record.get(k), bool) for k in ("index", "count"))):
        record = None
    return meta["vocabulary"], np.diff(ptr), supplied, record, (extra if isinstance(extra, dict) else {})


def _shard_run_unfinished(folder: Path) -> bool:
    """Whether the folder's marker records a write_shards run that did not finish (killed, or stopped on
    an error)."""
    mark = _read_marker(folder)
    run = (mark or {}).get("runs", {}).get(f"dptopic {SHARD_RUN}")
    return run is not None and (run["before"] is not None or bool(run["unfinished"]))


def check_unfinished_shard_folder(folder) -> None:
    """Refuse, in one line, a folder that holds no shard yet but was left by a write_shards run that did
    not finish: only its hidden ``.shard-*.npz.partial`` files (or nothing) and the marker of the unfinished run. Such a
    folder is no folder of text files, and is not to be read as one."""
    folder = Path(folder)
    if not folder.is_dir() or folder_shards(folder):
        return
    if _leftovers(folder) or _shard_run_unfinished(folder):
        raise DPTopicError(f"corpus shard folder {str(folder)!r} is incomplete: its write_shards run did not finish;"
                           f" {rewrite_advice(folder)}.")
