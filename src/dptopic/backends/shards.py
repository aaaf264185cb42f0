"""Corpus shards on disk: ``dptopic corpus prepare --shards N`` writes them, workers read them.

A shard is an ordinary corpus ``.npz`` (:meth:`dptopic.corpus.Corpus.save`) holding a
contiguous block of documents; all shards of a set share one vocabulary. The driver reads
only each file's header and document offsets (:class:`ShardSet`); the tokens are read by
whoever sweeps the shard.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..corpus import Corpus, Vocabulary, as_corpus
from ..errors import DPTopicError
from ..kernels import make_shards
from .._io import load_json

SHARD_PATTERN = "shard-*.npz"


def write_shards(corpus: Corpus, directory, n_shards: int) -> list[Path]:
    """Split ``corpus`` into ``n_shards`` blocks of documents with about equal token counts; save each."""
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():
        raise DPTopicError(f"--out {str(directory)!r} is a file: with --shards give a directory to write the shards into.")
    directory.mkdir(parents=True, exist_ok=True)
    stale = sorted(directory.glob(SHARD_PATTERN))
    if stale:
        raise DPTopicError(f"{str(directory)!r} already holds shard files: give an empty directory.")
    paths = []
    for j, sh in enumerate(make_shards(corpus.doc_ptr, n_shards)):
        part = corpus.subset(np.arange(sh.doc_start, sh.doc_stop))
        paths.append(part.save(directory / f"shard-{j:05d}.npz"))
    return paths


def _read_header(path: Path):
    try:
        with np.load(path, allow_pickle=False) as z:
            meta = load_json(z["meta"].tobytes().decode("utf-8"), "the shard header")
            ptr = z["doc_ptr"]
    except Exception as e:
        raise DPTopicError(f"corrupt corpus shard {str(path)!r}: {type(e).__name__}; re-create it with 'dptopic corpus prepare --shards N'.") from None
    if meta.get("format") != "dptopic-corpus":
        raise DPTopicError(f"corrupt corpus shard {str(path)!r}: not a dptopic corpus; re-create it with 'dptopic corpus prepare --shards N'.")
    extra = meta.get("metadata")
    supplied = isinstance(extra, dict) and extra.get("vocabulary_source") == "supplied"
    return meta["vocabulary"], np.diff(ptr), supplied


class ShardSet:
    """A corpus stored as shard files. Holds the shared vocabulary and document lengths, not the tokens."""

    def __init__(self, paths):
        self.paths = [Path(p) for p in paths]
        if not self.paths:
            raise DPTopicError("no corpus shards given: write them with 'dptopic corpus prepare --shards N --out DIR'.")
        lengths = []
        words = None
        supplied = True
        for p in self.paths:
            if not p.is_file():
                raise DPTopicError(f"corpus shard {str(p)!r} does not exist.")
            w, lens, given = _read_header(p)
            supplied = supplied and given
            if words is None:
                words = w
            elif w != words:
                raise DPTopicError(f"corpus shard {str(p)!r} has a different vocabulary from {str(self.paths[0])!r}: write all shards in one 'corpus prepare' run.")
            lengths.append(lens)
        self.vocabulary = Vocabulary(words)
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


def _is_shard_source(X) -> bool:
    if isinstance(X, (str, os.PathLike)):
        return True
    if isinstance(X, (list, tuple)) and X:
        return all(isinstance(p, os.PathLike) for p in X) or all(
            isinstance(p, str) and p.endswith(".npz") and Path(p).is_file() for p in X)
    return False


def training_source(X, vocabulary=None):
    """What ``fit`` trains on: a :class:`ShardSet` for a shard directory / ``.npz`` path(s), else a Corpus."""
    if isinstance(X, ShardSet):
        return X
    if not _is_shard_source(X):
        return as_corpus(X, vocabulary=vocabulary)
    if isinstance(X, (str, os.PathLike)):
        p = Path(X)
        if p.is_dir():
            paths = sorted(p.glob(SHARD_PATTERN))
            if not paths:
                raise DPTopicError(f"{str(p)!r} holds no {SHARD_PATTERN} files: write them with 'dptopic corpus prepare --shards N --out {p}'.")
            return ShardSet(paths)
        if not p.is_file():
            if isinstance(X, str) and (any(c.isspace() for c in X) or not X.lower().endswith(".npz")):
                raise DPTopicError(f"a single string is read as a corpus path, and {X[:40]!r} is none: pass texts as a"
                                   " list of strings (one per document), or the path of a corpus .npz or shard"
                                   " directory.")
            raise DPTopicError(f"corpus {str(p)!r} not found: give a corpus .npz, a shard directory or a list of shard files.")
        return ShardSet([p])
    return ShardSet(X)
