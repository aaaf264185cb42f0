"""Output folders and files: what a command may write over, and the ``.dptopic-output`` marker that says which
runs wrote what there."""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from pathlib import Path

from ..errors import DPTopicError, ParameterError
from .atomic import atomic_write_json

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _holds_bundle(directory: Path, meta_name: str) -> bool:
    """True when ``directory`` looks like a bundle written by :func:`save_bundle`: it has ``meta_name``
    and nothing else but ``.npy`` files (and our own hidden temporary files). Such a folder may be
    replaced; any other content belongs to the user and is never deleted."""
    try:
        entries = list(directory.iterdir())
    except OSError:
        return False
    names = {e.name for e in entries}
    if not (meta_name in names and (directory / meta_name).is_file() and all(
            (e.name == meta_name or e.name.endswith(".npy") or (e.name.startswith(f".{meta_name}.") and e.name.endswith(".tmp")))
            and e.is_file() and not e.is_symlink() for e in entries)):
        return False
    # the metadata must be ours too: save_bundle lists its arrays, and they must be exactly the .npy files present
    # (a user's folder that merely has a model.json and some .npy files is never taken for a bundle)
    try:
        meta_path = directory / meta_name
        if meta_path.stat().st_size > 256 * 2 ** 20:
            return False
        meta = json.loads(meta_path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    arrays = meta.get("arrays") if isinstance(meta, dict) else None
    if not isinstance(arrays, list) or not all(isinstance(a, str) for a in arrays):
        return False
    if meta_name == "model.json" and meta.get("format") != "dptopic-model":
        return False
    return set(arrays) == {n[:-4] for n in names if n.endswith(".npy")}


def _bundle_strangers(directory: Path, meta_name: str) -> list[str]:
    """The names in a folder refused as a bundle that dptopic did not write there: beside readable metadata of ours,
    what it does not list; without it, everything (empty when that cannot be told: the refusal then names nothing)."""
    try:
        names = sorted(e.name for e in directory.iterdir())
        meta = json.loads((directory / meta_name).read_text("utf-8")) if (directory / meta_name).is_file() else None
    except (OSError, ValueError, RecursionError):
        return []
    if meta is None:
        return names
    arrays = meta.get("arrays") if isinstance(meta, dict) else None
    if not isinstance(arrays, list) or (meta_name == "model.json" and meta.get("format") != "dptopic-model"):
        return []   # a metadata file that is not ours (or is broken): say nothing more than the refusal
    ours = {meta_name} | {f"{a}.npy" for a in arrays if isinstance(a, str)}
    return [n for n in names if n not in ours and not (n.startswith(f".{meta_name}.") and n.endswith(".tmp"))]


def check_output_dir(path, overwrite: bool = False, what: str = "model", parameter: str = "out",
                     meta_name: str = "model.json", holds_ours=None) -> Path:
    """Check, before any work, that a bundle may be written to ``path``; return it resolved.

    Allowed: a path that does not exist yet (its nearest existing parent must be a writable
    folder), an empty folder, or (with ``overwrite=True``) a folder that already holds a
    dptopic {what}. Anything else (a file, a folder with other contents, the current folder or
    one of its parents) is refused with a one-line :class:`DPTopicError`, so nothing the user
    owns is ever deleted. The refusals are :class:`~dptopic.errors.ParameterError` naming ``parameter`` (the
    caller's name for ``path``) and ``overwrite``.
    """
    p = _out_path(path, parameter, what, "folder")
    cwd = Path(os.getcwd())
    if p == cwd or p in cwd.parents or p.parent == p:
        raise _refusal("{parameter} {path!r} is the current folder or one of its parents: give a new folder name"
                       " for the {what}, e.g. {parameter} runs/{what}.", parameter, path, what=what)
    if p.is_symlink() or (p.exists() and not p.is_dir()):
        raise _refusal("{parameter} {path!r} exists and is not a folder: refusing to replace it; choose another"
                       " {parameter}.", parameter, path)
    if p.is_dir():
        try:
            empty = not any(p.iterdir())
        except OSError as e:
            raise _refusal("{parameter} {path!r} cannot be read ({why}); choose another {parameter}.", parameter, path,
                           why=e.strerror) from None
        if not empty:
            ours = holds_ours(p) if holds_ours is not None else _holds_bundle(p, meta_name)
            strangers = _bundle_strangers(p, meta_name) if holds_ours is None and not ours else []
            if strangers:
                shown, it = _name_list(strangers)
                has = ("holds a dptopic {what} and also" if (p / meta_name).is_file() else
                       "is a folder that does not hold a dptopic {what}: it holds").format(what=what)
                marked = (p / OUTPUT_MARKER).is_file()     # another dptopic command's results (an audit, ...)
                whose = (f"which a {what} does not hold (its {OUTPUT_MARKER} marks it as another dptopic command's"
                         " output folder)" if marked else "which dptopic did not write")
                raise _refusal("{parameter} {path!r} {has} {shown}, {whose}: refusing to replace the folder; move"
                               " {it} or choose a new or empty folder.", parameter, path, has=has, shown=shown,
                               whose=whose, it=it)
            _may_replace(ours, overwrite, path, what, parameter, "is a folder that does")
    _check_writable(p.parent, parameter, path)
    return p


OUTPUT_MARKER = ".dptopic-output"
"""The file a command writes into an `output folder of results (audit, experiments, shards) so that a later run
recognises the folder as its own: one rule for every command's output folder (see :func:`check_output_folder`).

It lists, per command (``runs``), the files that command's runs wrote there, so that several commands can share one
folder (``docs/figures`` holds the experiments' figures): ``files`` are the ones its last finished run wrote,
``earlier`` the ones an earlier run of it wrote that the last one did not write again, ``unfinished`` the ones a run
of it wrote that stopped on an error, and ``before`` (while a run is under way, or after one was killed) the state
of the folder when that run started. Overwriting (``overwrite=True``) lets a run write over files listed there; no listed file is
ever deleted (a rerun of one corpus leaves the other corpus's figures, listed as ``earlier``). ``kept`` lists files
no command claims (put there by hand, or listed by the marker of an older dptopic that did not say which command
wrote each file). Any other file in the folder is the user's, and the folder is refused.

Which files a run wrote is told by their change since it started (inode, time, size): a file another run or the
user wrote into the folder meanwhile is listed as this run's too. The marker is read and rewritten under a lock
(:data:`MARKER_LOCK`), so that runs ending at once keep each other's entries."""


MARKER_FORMAT = "dptopic-output"


MARKER_VERSION = 3


MARKER_LOCK = OUTPUT_MARKER + ".lock"
"""The file locked (``flock``) while the marker is read and rewritten; removed when the lock is released."""


_MARKER_NOTE = ("written by dptopic: 'runs' lists, per command, the files its last finished run wrote here ('files'),"
                " the files its earlier runs wrote that the last one did not write again ('earlier'), and those of a run"
                " that stopped on an error ('unfinished'); 'before' is the folder as a run under way (or killed) found"
                " it. Told to overwrite, a command writes over files listed here and deletes none, except that a"
                " corpus prepared as shards replaces its own shard set, removing the extra shards of a larger earlier set."
                " 'kept' lists files no"
                " command claims (put here by hand, or listed by an older dptopic's marker that did not say which"
                " command wrote them). A file listed nowhere makes dptopic refuse this folder.")


STALE_TEMPORARY_AGE = 600
"""Seconds after which a hidden temporary of one of dptopic's atomic writes (``.NAME.<8 characters>.tmp``, NAME
listed by the marker) counts as left by a killed write, and a run starting in the folder removes it."""


# tempfile.mkstemp's name in atomic_write_bytes: the prefix ".NAME.", 8 characters of tempfile's alphabet, ".tmp"
_TEMPORARY_TAIL = re.compile(r"\.[a-z0-9_]{8}\.tmp")


def _temporary_target(name: str) -> str | None:
    """The name of the file a temporary of :func:`atomic_write_bytes` named ``name`` was to become, or None when
    ``name`` is not of that form (``.NAME.<8 characters>.tmp``)."""
    if len(name) < 15 or not name.startswith(".") or not _TEMPORARY_TAIL.fullmatch(name[-13:]):
        return None
    return name[1:-13]


def _internal(name: str) -> bool:
    """The marker's own files: the marker, its lock, and a temporary of the marker's atomic write."""
    return name in (OUTPUT_MARKER, MARKER_LOCK) or _temporary_target(name) == OUTPUT_MARKER


def _scan(p: Path) -> dict:
    """``{name: signature}`` for each entry of folder ``p`` but the marker's own files. The signature changes whenever
    a file is written (an atomic write gives it a new inode; any write a new time). An entry removed while the folder
    is read (another run's temporary, renamed into place) is skipped."""
    found = {}
    for name in os.listdir(p):
        if _internal(name):
            continue
        try:
            st = os.lstat(p / name)
        except FileNotFoundError:
            continue
        found[name] = f"{st.st_ino}:{st.st_mtime_ns}:{st.st_size}"
    return dict(sorted(found.items()))


def _read_marker(p: Path):
    """The marker of folder ``p``, normalised: ``{"runs": {command: {"files": [...], "earlier": [...], "unfinished":
    [...], "before": {...} or None}}, "kept": [...] or None, "legacy": None or the command an older marker names}``;
    None when there is no readable marker.

    Version 2 (``runs`` of ``{"files": [...]}``, ``"finished": false`` for a failed run, or ``{"before": {...}}``)
    reads as it was meant. A marker of an older dptopic (``{"written_by": ..., "files": [...]}``) listed every file
    present when its run ended, whichever command wrote it: its files become ``kept``; one written when its run
    started and never completed (no ``files``) accepted the whole folder, and still does (``kept`` None)."""
    try:
        path = p / OUTPUT_MARKER
        if path.is_symlink() or path.stat().st_size > 64 * 2 ** 20:
            return None
        raw = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(raw, dict):
        return None
    strings = lambda v: [x for x in v if isinstance(x, str)] if isinstance(v, list) else []  # noqa: E731
    if raw.get("format") == MARKER_FORMAT:
        runs = {}
        for cmd, run in (raw.get("runs") if isinstance(raw.get("runs"), dict) else {}).items():
            if not isinstance(run, dict):
                continue
            before = run.get("before")
            entry = {"files": strings(run.get("files")), "earlier": strings(run.get("earlier")),
                     "unfinished": strings(run.get("unfinished")),
                     "before": {k: v for k, v in before.items() if isinstance(v, str)} if isinstance(before, dict)
                     else None}
            if run.get("finished") is False:    # version 2: the files of a run that stopped on an error
                entry["unfinished"], entry["files"] = sorted(set(entry["unfinished"]) | set(entry["files"])), []
            runs[cmd] = entry
        return {"runs": runs, "kept": strings(raw.get("kept")), "legacy": None}
    who = raw.get("written_by")
    if not isinstance(who, str):
        return None
    return {"runs": {}, "kept": strings(raw["files"]) if isinstance(raw.get("files"), list) else None, "legacy": who}


def _listed(mark, scan) -> set:
    """The names the marker lists (any command's ``files``, ``earlier``, ``unfinished``, and ``kept``)."""
    names = set(scan) if mark["kept"] is None else set(mark["kept"])
    for run in mark["runs"].values():
        names.update(run["files"], run["earlier"], run["unfinished"])
    return names


def _claims(mark, scan) -> dict:
    """``{name: {command, ...}}`` for each file of the folder (``scan``) the marker accounts for (``None`` stands for
    kept). A file no list names is claimed by each run under way (or killed) that it changed after: its ``before``."""
    claims = {}
    for n in (scan if mark["kept"] is None else mark["kept"]):
        if n in scan:
            claims.setdefault(n, set()).add(None)
    for cmd, run in mark["runs"].items():
        for n in (*run["files"], *run["earlier"], *run["unfinished"]):
            if n in scan:
                claims.setdefault(n, set()).add(cmd)
    listed = set(claims)
    for cmd, run in mark["runs"].items():
        if run["before"] is not None:
            for n, sig in scan.items():
                if n not in listed and run["before"].get(n) != sig:
                    claims.setdefault(n, set()).add(cmd)
    return claims


def _stale_temporaries(p: Path, mark, scan) -> list[str]:
    """The hidden temporaries in ``p`` that a killed atomic write of dptopic left: named ``.NAME.<8 characters>.tmp``
    as :func:`atomic_write_bytes` names them, NAME a file the marker lists (or the marker itself), a plain file, last
    written over :data:`STALE_TEMPORARY_AGE` seconds ago. Anything else hidden is a file like any other."""
    targets = _listed(mark, scan) | {OUTPUT_MARKER}
    now = time.time()
    stale = []
    for name in os.listdir(p):
        if _temporary_target(name) not in targets:
            continue
        try:
            st = os.lstat(p / name)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TEMPORARY_AGE:
            stale.append(name)
    return sorted(stale)


@contextlib.contextmanager
def _marker_lock(p: Path):
    """Hold an exclusive ``flock`` on ``p/.dptopic-output.lock`` while the marker is read and rewritten, so that two
    runs ending at once do not lose each other's entries. The lock file is removed on release (a waiter that then
    holds a removed file's lock tries again); where the file system has no ``flock``, nothing is locked."""
    try:
        import fcntl  # POSIX only
    except ImportError:      # not a POSIX system
        fcntl = None
    if fcntl is None:
        yield
        return
    lock = p / MARKER_LOCK
    fd = None
    while fd is None:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                         0o666)
        except OSError as e:
            raise DPTopicError(f"cannot lock {str(lock)!r} ({e.strerror}): remove it if it is not dptopic's, and check"
                               " that the folder is writable.") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as e:
            os.close(fd)
            if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                fd = -1      # no flock here: go on unlocked
                break
            raise
        try:
            st = os.lstat(lock)
            same = (st.st_ino, st.st_dev) == (os.fstat(fd).st_ino, os.fstat(fd).st_dev)
        except FileNotFoundError:
            same = False
        if not same:         # the holder before us removed the file we waited on: lock the one there now
            os.close(fd)
            fd = None
    try:
        yield
    finally:
        if fd >= 0:
            try:
                os.unlink(lock)
            except FileNotFoundError:
                pass
            os.close(fd)


OUTPUT_LOCK_SUFFIX = ".dptopic-lock"
"""A run that writes a folder ``NAME`` holds an ``flock`` on ``.NAME.dptopic-lock`` beside it from its check of the
folder to its last write (:func:`claim_output`), so that two runs into one output folder never both pass the check and
overwrite each other's model, and a save never removes the temporary folder of another run's save. The file holds the
holder's process id and is removed when the run lets go."""


_HELD: dict = {}
"""``{lock path: [fd, count, thread id]}``: the outputs this process holds (a run holds its own again, re-entrantly,
when it saves)."""

_HELD_GUARD = threading.Lock()


def _lock_path(path) -> Path:
    """``.NAME.dptopic-lock`` beside ``path``; when its folder does not exist yet, in the nearest folder that does, named
    by the path below it (``runs/new/model`` from ``runs``: ``.new%2Fmodel.dptopic-lock``), so that two runs into a
    new nested folder lock one file before either creates anything."""
    p = Path(os.path.abspath(os.fspath(path)))
    base, rel = p.parent, [p.name]
    while not base.is_dir() and base.parent != base:
        base, rel = base.parent, [base.name, *rel]
    return base / f".{'%2F'.join(rel)}{OUTPUT_LOCK_SUFFIX}"


def _holder(lock: Path) -> str:
    """``" (process N)"`` from the lock file's content, or nothing when it cannot be read."""
    try:
        text = lock.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {text})" if text.isdigit() else ""


def claim_output(path, parameter: str = "out", what: str = "model") -> bool:
    """Hold ``path`` for this run: an exclusive, non-blocking ``flock`` on its lock file (:data:`OUTPUT_LOCK_SUFFIX`),
    taken before the folder is checked and kept until :func:`release_output` (or the process ends). Another run
    holding it is refused in one line; this thread holding it already counts once more. Returns False where the
    file system has no ``flock`` (nothing is held)."""
    try:
        import fcntl  # POSIX only
    except ImportError:      # not a POSIX system
        return False
    lock = _lock_path(path)
    key = str(lock)
    me = threading.get_ident()
    with _HELD_GUARD:
        held = _HELD.get(key)
        if held is not None:
            if held[2] != me:       # another thread of this process writes it
                raise _refusal("{parameter} {path!r} is being written by another run in this process: wait for it to"
                               " finish, or choose another {parameter}.", parameter, path)
            held[1] += 1
            return True
        while True:
            try:
                fd = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                             0o666)
            except OSError:
                return False    # an unwritable parent: check_output_dir refuses it in its own words
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                os.close(fd)
                if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise _refusal("{parameter} {path!r} is being written by another dptopic run{holder}: wait for it"
                                   " to finish, or choose another {parameter}; two runs into one folder would leave"
                                   " only one {what}.", parameter, path, holder=_holder(lock), what=what) from None
                return False    # no flock on this file system
            try:
                same = os.path.samestat(os.lstat(lock), os.fstat(fd))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)        # the holder before us removed the file we locked: lock the one there now
        try:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode("ascii"))
        except OSError:
            pass
        _HELD[key] = [fd, 1, me]
    return True


def release_output(path=None) -> None:
    """Let go of ``path`` (once per :func:`claim_output`), or with None of every output this thread holds; the lock
    file is removed when the last hold ends."""
    me = threading.get_ident()
    with _HELD_GUARD:
        keys = [str(_lock_path(path))] if path is not None else [k for k, v in _HELD.items() if v[2] == me]
        for key in keys:
            held = _HELD.get(key)
            if held is None or held[2] != me:
                continue
            held[1] = held[1] - 1 if path is not None else 0
            if held[1] > 0:
                continue
            del _HELD[key]
            try:
                os.unlink(key)
            except OSError:
                pass
            os.close(held[0])


@contextlib.contextmanager
def holding_output(path, parameter: str = "out", what: str = "model"):
    """:func:`claim_output` for the ``with`` block."""
    held = claim_output(path, parameter, what)
    try:
        yield
    finally:
        if held:
            release_output(path)


def _name_list(names) -> tuple[str, str]:
    """``("a.txt, b.txt and 3 more", "them")`` for a message (at most three names shown)."""
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return shown, "it" if len(names) == 1 else "them"


def check_output_folder(path, overwrite: bool = False, what: str = "results", parameter: str = "out",
                        command: str | None = None) -> Path:
    """The output folder's rule for a folder of results, checked before any work: a new or empty folder; or, with
    ``overwrite=True``, a folder whose every file its :data:`OUTPUT_MARKER` accounts for (written by dptopic
    commands, or kept). A file the marker does not list belongs to the user (a hidden one too, unless it is a stale
    temporary of dptopic's own, see :func:`_stale_temporaries`): the folder is refused, naming it. ``command``
    (e.g. ``"experiment lira"``) makes the message say whose results the folder holds."""
    p = check_output_dir(path, overwrite=True, what=what, parameter=parameter, holds_ours=lambda q: True)
    if not p.is_dir() or not any(p.iterdir()):
        return p
    mark = _read_marker(p)
    if mark is None:
        names = sorted(e.name for e in p.iterdir())
        shown, it = _name_list(names)
        why = (f"its {OUTPUT_MARKER} marker cannot be read" if OUTPUT_MARKER in names else
               f"the folder has no {OUTPUT_MARKER} marker")
        if "model.json" in names and OUTPUT_MARKER not in names:
            raise _refusal("{parameter} {path!r} is a saved model folder (it holds model.json, as dptopic's training"
                           " writes it): a model folder is never replaced by another command's results; choose"
                           " another {parameter}.", parameter, path)
        raise _refusal("{parameter} {path!r} holds {shown}, which dptopic did not write ({why}): refusing to replace"
                       " {it}; move {it} or choose a new or empty folder for {parameter}.", parameter, path,
                       shown=shown, why=why, it=it)
    scan = _scan(p)
    claims = _claims(mark, scan)
    stale = set(_stale_temporaries(p, mark, scan))
    blockers = [n for n in scan if n not in claims and n not in stale]
    if blockers:
        shown, it = _name_list(blockers)
        raise _refusal("{parameter} {path!r} holds {shown}, which dptopic did not write (its {marker} marker does"
                       " not list {it}): refusing to replace the folder; move {it} or choose another {parameter}.",
                       parameter, path, shown=shown, marker=OUTPUT_MARKER, it=it)
    if not overwrite:
        writers = sorted({c for cs in claims.values() for c in cs if c} |
                         ({mark["legacy"]} if mark["legacy"] else set()))
        if command is None or f"dptopic {command}" in writers or not writers:
            raise _refusal("{parameter} {path!r} already holds a dptopic {what}: pass overwrite=True to write this"
                           " run's files over it, or choose another {parameter}.", parameter, path, what=what,
                           key="_io.output.check_output_folder.2")
        raise _refusal("{parameter} {path!r} already holds results of {writers}: pass overwrite=True to write this"
                       " run's beside them (nothing they wrote is deleted), or choose another {parameter}.", parameter,
                       path, writers=", ".join(writers),
                       key="_io.output.check_output_folder")
    return p


def refuse_other_writer(path, command: str, share_with: str | None = None) -> None:
    """``path`` holding results another dptopic command wrote (its marker names it) is never written into by
    ``command`` (e.g. ``"audit"``, ``"experiment lira"``), unless both commands start with ``share_with``
    (``"experiment "``: the experiments share a folder of figures, none deleting another's files)."""
    p = Path(path)
    mark = _read_marker(p) if p.is_dir() else None
    if mark is None:
        return
    writers = {c for cs in _claims(mark, _scan(p)).values() for c in cs if c}
    if mark["legacy"]:
        writers.add(mark["legacy"])
    for who in sorted(writers):
        if who == f"dptopic {command}" or (share_with and who.startswith(f"dptopic {share_with}")
                                            and command.startswith(share_with)):
            continue
        raise _refusal("{parameter} {path!r} holds results written by '{who}', not by 'dptopic {command}': refusing"
                       " to replace them; choose another {parameter}.", "out", path, who=who, command=command)


def mark_output_folder(path, command: str, done: bool = False, failed: bool = False) -> Path:
    """Create ``path`` (if needed) and record in its marker that ``dptopic COMMAND`` writes there; nothing listed is
    deleted.

    When a run starts (``done=False``) the folder's state is noted (and stale temporaries of dptopic's own atomic
    writes, see :func:`_stale_temporaries`, are removed). When it ends (``done=True``) the files it created or
    rewrote since become the command's ``files``; the files its earlier runs wrote that this one did not write
    again stay, listed as ``earlier``. A run that stopped on an error (``failed=True``) leaves every listing as it
    was and adds the files it created to ``unfinished``. The marker is rewritten under a lock (:data:`MARKER_LOCK`)."""
    p = Path(path)
    p.mkdir(parents=True, exist_ok=True)
    with _marker_lock(p):
        _update_marker(p, f"dptopic {command}", done, failed)
    return p


def _update_marker(p: Path, key: str, done: bool, failed: bool) -> None:
    """:func:`mark_output_folder`'s read-modify-write of the marker (the caller holds the lock)."""
    mark = _read_marker(p) or {"runs": {}, "kept": [], "legacy": None}
    if not done:
        for n in _stale_temporaries(p, mark, _scan(p)):
            try:
                os.unlink(p / n)
            except FileNotFoundError:
                pass
    scan = _scan(p)
    kept = set(scan) if mark["kept"] is None else set(mark["kept"])
    listed = _listed(mark, scan)
    runs = mark["runs"]
    entry = runs.setdefault(key, {"files": [], "earlier": [], "unfinished": [], "before": None})
    own = set(entry["files"]) | set(entry["earlier"]) | set(entry["unfinished"])
    if not done:
        if entry["before"] is not None:   # a run of this command that never finished: what it wrote stays listed
            left = {n for n, s in scan.items() if entry["before"].get(n) != s and n not in listed}
            entry["unfinished"] = sorted(set(entry["unfinished"]) | left)
        entry["before"] = dict(scan)
    else:
        if entry["before"] is not None:
            written = {n for n, s in scan.items() if entry["before"].get(n) != s}
        else:   # finished without a recorded start: the files no other command claims, and none kept
            claims = _claims(mark, scan)
            written = {n for n in scan if claims.get(n, {key}) == {key}}
        entry["before"] = None
        if failed:      # every listing as it was; what it created is listed as unfinished
            entry["unfinished"] = sorted(set(entry["unfinished"]) | (written - listed))
        else:
            entry["files"], entry["earlier"], entry["unfinished"] = sorted(written), sorted(own - written), []
            kept -= written
    out = {}
    for cmd, run in sorted(runs.items()):
        e = {"files": [n for n in run["files"] if n in scan]}
        for part in ("earlier", "unfinished"):
            names = [n for n in run[part] if n in scan]
            if names:
                e[part] = names
        if run["before"] is not None:
            e["before"] = run["before"]
        if len(e) > 1 or e["files"] or (cmd == key and done and not failed):
            out[cmd] = e     # an entry listing nothing present, with no run under way, goes (but this finished run's)
    marker = {"format": MARKER_FORMAT, "version": MARKER_VERSION, "note": _MARKER_NOTE, "runs": out,
              "kept": sorted(kept & set(scan))}
    atomic_write_json(p / OUTPUT_MARKER, marker)


def unmark_failed_run(path, command: str, created: bool) -> None:
    """After a run of ``dptopic COMMAND`` stopped on an error: every file and listing stays as it was, and the files
    it created are listed as ``unfinished`` (``mark_output_folder(done=True, failed=True)``); a folder left holding
    nothing but a marker that lists nothing loses the marker, and is removed when this run ``created`` it, so that it
    blocks no later run."""
    p = Path(path)
    if not p.is_dir():
        return
    empty = False
    with _marker_lock(p):
        if _read_marker(p) is None:
            return
        _update_marker(p, f"dptopic {command}", done=True, failed=True)
        mark = _read_marker(p)
        if mark is not None and not mark["runs"] and not mark["kept"] and not _scan(p):
            (p / OUTPUT_MARKER).unlink(missing_ok=True)
            empty = True
    if empty and created:
        try:
            p.rmdir()
        except OSError:
            pass


@contextlib.contextmanager
def marked_run(path, command: str):
    """The run inside writes into folder ``path`` for ``command``: the folder's marker lists it as running, then as
    done; a run that fails has the files it wrote listed as its own, unfinished (nothing is deleted), and one that
    created the folder and wrote nothing leaves no marked folder behind to block the next one."""
    existed = Path(path).exists()
    mark_output_folder(path, command)
    try:
        yield
    except BaseException:
        unmark_failed_run(path, command, created=not existed)
        raise
    mark_output_folder(path, command, done=True)


def _refusal(template: str, parameter: str, path, key: str | None = None, **fields) -> ParameterError:
    """A refusal of the output path ``path`` given as ``parameter`` (``{parameter}`` and ``{path!r}`` in
    ``template``); one with a ``key`` also names ``overwrite``, which a front door may write as its flag in a sentence
    of its own (:class:`~dptopic.errors.ParameterLine`'s ``key``)."""
    return ParameterError(template, parameter, str(path), key=key, path=str(path),
                          others=("overwrite",) if key else (), **fields)


def _out_path(path, parameter: str, what: str, kind: str) -> Path:
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise ParameterError("invalid {parameter}={value!r}: give a {kind} path for the {what}.", parameter, path,
                             kind=kind, what=what)
    return Path(os.path.abspath(os.fspath(path)))


def _may_replace(ours: bool, overwrite: bool, path, what: str, parameter: str, kind: str) -> None:
    """Refuse to replace what is not ours; replace ours only with ``overwrite``."""
    if not ours:
        raise _refusal("{parameter} {path!r} {kind} not hold a dptopic {what}: refusing to replace it; choose a new"
                       " {new}.", parameter, path, kind=kind, what=what,
                       new="or empty folder" if "folder" in kind else "file name")
    if not overwrite:
        raise _refusal("{parameter} {path!r} already holds a dptopic {what}: pass overwrite=True to replace it, or"
                       " choose another {parameter}.", parameter, path, what=what,
                       key="_io.output.may_replace")


def check_output_file(path, is_ours, overwrite: bool = False, what: str = "corpus", parameter: str = "out") -> Path:
    """Like :func:`check_output_dir` for a single output file: a new path, or (with ``overwrite=True``)
    an existing file that ``is_ours(path)`` recognises as one of ours; anything else is refused."""
    p = _out_path(path, parameter, what, "file")
    if p.is_dir():
        raise _refusal("{parameter} {path!r} is a folder: give a file name for the {what}.", parameter, path, what=what)
    if p.exists() or p.is_symlink():
        _may_replace(not p.is_symlink() and is_ours(p), overwrite, path, what, parameter, "exists and does")
    _check_writable(p.parent, parameter, path)
    return p


def _check_writable(parent: Path, parameter: str, given) -> None:
    """The nearest existing ancestor of ``parent`` must be a folder we can create entries in (probed for real)."""
    q = parent
    while not q.exists():
        if q.parent == q:
            break
        q = q.parent
    if not q.is_dir():
        raise _refusal("{parameter} {path!r} cannot be created: {file!r} is a file, not a folder.", parameter, given,
                       file=str(q))
    try:
        probe = tempfile.mkdtemp(prefix=".dptopic-write-probe.", dir=q)
        os.rmdir(probe)
    except OSError as e:
        raise _refusal("{parameter} {path!r} is not writable ({why} in {folder!r}); choose a folder you can write"
                       " to.", parameter, given, why=e.strerror, folder=str(q)) from None


def _remove_stale_temporaries(directory: Path) -> None:
    """Delete the hidden ``.NAME.<8 random characters>`` folders an earlier save of this bundle left when it was killed before
    its rename: only folders of that name holding nothing but bundle files (never ``.NAME.old``, which a load reads
    when a save died between its two renames, and never anything else)."""
    prefix = f".{directory.name}."
    try:
        entries = list(directory.parent.iterdir())
    except OSError:
        return
    for e in entries:
        tail = e.name[len(prefix):]
        if not e.name.startswith(prefix) or tail == "old" or len(tail) != 8 or e.is_symlink() or not e.is_dir():
            continue
        try:
            ours = all(f.is_file() and not f.is_symlink() and (f.suffix in (".npy", ".json", ".tmp")) for f in e.iterdir())
        except OSError:
            ours = False
        if ours:
            shutil.rmtree(e, ignore_errors=True)
