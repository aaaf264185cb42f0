"""Corpus shards on disk: :func:`write_shards` writes them (for ``dptopic corpus prepare``), workers read them.

A shard is an ordinary corpus ``.npz`` (:meth:`dptopic.corpus.Corpus.save`) holding a
contiguous block of documents; all shards of a set share one vocabulary. The driver reads
only each file's header and document offsets (:class:`ShardSet`); the tokens are read by
whoever sweeps the shard.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

import numpy as np

from .. import _io
from ..errors import DPTopicError, ParameterError
from ..kernels import make_shards
from .corpus import Corpus, as_corpus

# the folder's state (which shards it holds, whether its run finished) lives in shard_folder.py, below Corpus;
# its names import from here too
from .shard_folder import (
    _COMMIT,
    SHARD_PATTERN,
    SHARD_RECORD,
    _finish_locked,
    _leftovers,
    _read_header,
    _shard_run_unfinished,
    check_unfinished_shard_folder,
    folder_shards,
    rewrite_advice,
)
from .vocabulary import Vocabulary


def _is_corpus(path) -> bool:
    try:
        Corpus.load(path)
    except DPTopicError:
        return False
    return True


def check_prepared_out(out, n_shards: int | None = None, overwrite: bool = False) -> None:
    """Where a prepared corpus may be written, checked before any document is read: a ``.npz`` file (a new one, or
    with ``overwrite`` a corpus), recognised by that name when it is read back; with ``n_shards``, a folder for the
    shard set (new or empty, or with ``overwrite`` the shards an earlier run wrote)."""
    p = Path(out)
    if n_shards is not None:
        if p.suffix.lower() == ".npz" and not p.is_dir():   # a file's name for what will be a folder
            raise ParameterError("{out} {path!r} names a .npz file, but {n_shards=} writes a folder of shard files:"
                                 " give a folder name such as {out} {folder}/ (or drop {n_shards} for one .npz file).",
                                 "out", str(out), values={"n_shards": n_shards}, path=str(out),
                                 folder=str(p.with_suffix("")) or "shards")
        _io.check_output_folder(out, overwrite=overwrite, what="corpus shard set")
        return
    if p.suffix.lower() != ".npz":     # a corpus is told by its name when it is read: it would not be read back
        raise ParameterError("{out} {path!r}: a prepared corpus is a .npz file and is recognised by that name; write it"
                             " as {suggestion!r}", "out", str(out), path=str(out),
                             suggestion=str(p.with_suffix(".npz") if p.suffix else f"{out}.npz"))
    _io.check_output_file(out, _is_corpus, overwrite=overwrite)


def write_shards(corpus: Corpus, directory, n_shards: int, replace: bool = False) -> list[Path]:
    """Split ``corpus`` into ``n_shards`` blocks of documents with about equal token counts; save each (the first
    also counts the documents ``corpus`` dropped as empty, so that the shards' counts add up).

    The shards are written under hidden temporary names and renamed into place only once every one is written, so a
    run that fails part-way leaves the folder's shards as they were. ``replace=True`` lets the new set take the place
    of shards already there (the extra ones of a larger earlier set are removed at the end); otherwise a folder that
    holds shards is refused."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise ParameterError("{directory} {path!r} is a file: give a folder to write the shards into.", "directory",
                             str(directory), path=str(directory))
    directory.mkdir(parents=True, exist_ok=True)
    existing = folder_shards(directory)         # a replacement a killed run committed is finished first
    if existing and not replace:
        raise DPTopicError(f"{str(directory)!r} already holds shard files: give an empty directory.")
    for left in _leftovers(directory):         # a killed run's temporaries
        left.unlink(missing_ok=True)
    blocks = make_shards(corpus.doc_ptr, n_shards)
    run = secrets.token_hex(8)
    staged: list[Path] = []
    try:
        for j, sh in enumerate(blocks):
            part = corpus.subset(np.arange(sh.doc_start, sh.doc_stop))
            part.n_empty_dropped = corpus.n_empty_dropped if j == 0 else 0
            part.metadata[SHARD_RECORD] = {"index": j, "count": len(blocks), "set": run}
            staged.append(directory / f".shard-{j:05d}.npz.partial")
            part.save(staged[-1])
    except BaseException:
        for tmp in staged:
            tmp.unlink(missing_ok=True)
        raise
    paths = [directory / f"shard-{j:05d}.npz" for j in range(len(staged))]
    # the complete set is committed, then replaces the old one: a run killed among the renames below leaves the commit
    # record, and the next reader or writer of the folder finishes them; a smaller set must not leave the old set's
    # extra shards behind
    with _io._marker_lock(directory):
        _io.atomic_write_json(directory / _COMMIT, {"set": run, "count": len(staged),
                                                    "remove": [q.name for q in existing if q not in paths]})
        _finish_locked(directory)
    return paths


def _check_complete(folder: Path, paths: list[Path], records: list) -> None:
    """Refuse a shard folder that does not hold exactly one complete set written by one write_shards run:
    fewer shards than the run wrote (a run that stopped part-way), or shards of two runs. Shards written before each
    recorded its place in the set are accepted unless the folder's marker shows that run did not finish."""
    redo = rewrite_advice(folder)
    if all(r is None for r in records):
        if _shard_run_unfinished(folder):
            raise DPTopicError(f"corpus shard folder {str(folder)!r} may be incomplete: the write_shards run"
                               f" that wrote it did not finish; {redo}.")
        return
    if any(r is None for r in records) or len({r["set"] for r in records}) > 1:
        raise DPTopicError(f"corpus shard folder {str(folder)!r} holds shards of more than one write_shards run"
                           f" (one that stopped part-way?): {redo}.")
    count = records[0]["count"]
    extra = _extra_shards(paths, records)
    if extra:
        what = ", ".join(f"{q.name!r}" + (f" (a copy of its shard {r['index']})" if 0 <= r["index"] < count else "")
                         for q, r in extra)
        one = len(extra) == 1
        raise DPTopicError(f"corpus shard folder {str(folder)!r} holds {'an extra shard' if one else 'extra shards'}"
                           f" beyond the {count} shards its write_shards run wrote: {what}; remove"
                           f" {'it' if one else 'them'}, or {redo}.")
    if len(paths) != count or sorted(r["index"] for r in records) != list(range(count)):
        raise DPTopicError(f"corpus shard folder {str(folder)!r} is incomplete: it holds {len(paths)} of the {count}"
                           f" shards its write_shards run wrote; {redo}.")


def _extra_shards(paths: list[Path], records: list) -> list[tuple[Path, dict]]:
    """The shards of one set beyond what its run wrote: a second file of the same shard (a copy; the one not named
    ``shard-NNNNN.npz`` for its place is the extra one) or a place beyond the set's count."""
    keep: dict[int, Path] = {}
    for q, r in zip(paths, records):
        j = r["index"]
        if 0 <= j < r["count"] and (j not in keep or (q.name == f"shard-{j:05d}.npz" != keep[j].name)):
            keep[j] = q
    kept = set(keep.values())
    return [(q, r) for q, r in zip(paths, records) if q not in kept]


class ShardSet:
    """A corpus stored as shard files. Holds the shared vocabulary and document lengths, not the tokens."""

    def __init__(self, paths, folder=None):
        """``folder``: the shard folder the paths were found in, which must then hold one complete set."""
        self.paths = [Path(p) for p in paths]
        if not self.paths:
            raise DPTopicError("no corpus shards given: write them with write_shards(corpus, folder, n_shards).")
        seen: dict[Path, Path] = {}
        for p in self.paths:
            if not p.is_file():
                raise DPTopicError(f"corpus shard {str(p)!r} does not exist: check the path, or give the shard folder"
                                   " that write_shards wrote.")
            first = seen.setdefault(p.resolve(), p)
            if first is not p:        # its documents would count twice (and a private trainer's epsilon not know it)
                also = f" (as {str(first)!r} too)" if str(first) != str(p) else ""
                raise DPTopicError(f"corpus shard {str(p)!r} is given twice{also}: give each shard once.")
        headers = [_read_header(p) for p in self.paths]
        records = [h[3] for h in headers]
        if folder is not None:        # one complete set, before anything else is said about its shards
            _check_complete(Path(folder), self.paths, records)
            if records and all(r is not None for r in records):   # files renamed out of order: the run's own order
                order = sorted(range(len(records)), key=lambda i: records[i]["index"])
                self.paths, headers, records = ([x[i] for i in order] for x in (self.paths, headers, records))
        elif len({r["set"] for r in records if r is not None}) > 1:
            raise DPTopicError("the corpus shards given come from more than one write_shards run: give the"
                               " shards of one run (or its folder).")
        else:
            places: dict[int, Path] = {}
            for p, r in zip(self.paths, records):
                first = places.setdefault(r["index"], p) if r is not None else p
                if first is not p:    # two files of one shard of one set (a copy): its documents would count twice
                    raise DPTopicError(f"corpus shards {str(first)!r} and {str(p)!r} are the same shard (shard"
                                       f" {r['index']} of one write_shards run; a copy?): give each shard"
                                       " once.")
        words = headers[0][0]
        for p, (w, *_) in zip(self.paths, headers):
            if w != words:
                raise DPTopicError(f"corpus shard {str(p)!r} has a different vocabulary from {str(self.paths[0])!r}: write all shards in one write_shards run.")
        lengths = [h[1] for h in headers]
        supplied = all(h[2] for h in headers)
        self.vocabulary = Vocabulary(words)
        # how the text was read and the words chosen (settings, as a Corpus keeps them), from the first shard; a
        # shard's own place in the set is no part of it
        self.metadata = {k: v for k, v in headers[0][4].items() if k != SHARD_RECORD}
        # every shard was prepared on a given word list (Corpus.vocabulary_supplied)
        self.vocabulary_supplied = bool(supplied)
        self.shard_doc_lengths = lengths
        self.doc_lengths = np.concatenate(lengths)

    @property
    def n_docs(self) -> int:
        return int(self.doc_lengths.shape[0])

    @property
    def n_tokens(self) -> int:
        return int(self.doc_lengths.sum())

    @property
    def vocab_size(self) -> int:
        return len(self.vocabulary)

    def load_all(self) -> Corpus:
        """Read every shard into one in-memory corpus (for the thread backend)."""
        parts = [Corpus.load(p) for p in self.paths]
        ptr = np.concatenate([[0], np.cumsum(self.doc_lengths)]).astype(parts[0].doc_ptr.dtype)
        return Corpus(ptr, np.concatenate([c.word_ids for c in parts]), self.vocabulary.words)


def _looks_like_shard_path(p) -> bool:
    """A path, or a string that names a corpus ``.npz`` (one line ending in ``.npz``): never a document's text."""
    if isinstance(p, os.PathLike):
        return True
    return isinstance(p, str) and p.lower().endswith(".npz") and "\n" not in p and "\r" not in p


def _is_shard_source(X) -> bool:
    """A shard folder or ``.npz`` path, or a list of them. A list of strings that all name ``.npz`` files is one
    whether or not the files exist (a missing one is refused by :class:`ShardSet`, never read as text)."""
    if isinstance(X, (str, os.PathLike)):
        return True
    if isinstance(X, (list, tuple)) and X:
        return all(_looks_like_shard_path(p) for p in X)
    return False


def _refuse_mixed_list(X) -> None:
    """A list of strings some of which name existing corpus ``.npz`` files (or are paths) is a mistake, not texts."""
    if not isinstance(X, (list, tuple)) or not X or not all(isinstance(p, (str, os.PathLike)) for p in X):
        return
    named = [p for p in X if isinstance(p, os.PathLike) or _looks_like_shard_path(p) and Path(p).is_file()]
    if named:
        raise DPTopicError(f"the list mixes {len(named)} corpus file(s) such as {str(named[0])!r} with"
                           f" {len(X) - len(named)} texts: give either shard paths (or their folder) or texts,"
                           " one string per document.")


def training_source(X, vocabulary=None):
    """What ``fit`` trains on: a :class:`ShardSet` for a shard directory / ``.npz`` path(s), else a Corpus."""
    if isinstance(X, ShardSet):
        return X
    if not _is_shard_source(X):
        _refuse_mixed_list(X)
        return as_corpus(X, vocabulary=vocabulary)
    if isinstance(X, (str, os.PathLike)):
        p = Path(X)
        if p.is_dir():
            paths = folder_shards(p)
            if not paths:
                check_unfinished_shard_folder(p)
                raise DPTopicError(f"{str(p)!r} holds no {SHARD_PATTERN} files: write them with write_shards(corpus, {str(p)!r}, n_shards).")
            return ShardSet(paths, folder=p)
        if not p.is_file():
            if isinstance(X, str) and (any(c.isspace() for c in X) or not X.lower().endswith(".npz")):
                raise DPTopicError(f"a single string is read as a corpus path, and {X[:40]!r} is none: pass texts as a"
                                   " list of strings (one per document), or the path of a corpus .npz or shard"
                                   " directory.")
            raise DPTopicError(f"corpus {str(p)!r} not found: give a corpus .npz, a shard directory or a list of shard files.")
        return ShardSet([p])
    return ShardSet(X)
