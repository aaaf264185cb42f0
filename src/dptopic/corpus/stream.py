"""The streaming reader: a JSONL corpus read, tokenised and counted in chunks of lines, on every core, never holding
the corpus's text (docs/research/pipeline.md, docs/scaling.md).

Each chunk (``chunk_docs`` lines) is parsed (:func:`~dptopic.corpus.records.jsonl_record`, the same checks and the
same one-line errors as :func:`~dptopic.corpus.records.jsonl_records`), tokenised by a :class:`Tokenizer` of its own
(every token read, as :meth:`Corpus.from_texts` reads), and reduced to what the corpus keeps: each document's token
ids (int32) and length, its content digest and its ledger keys (:func:`~dptopic.corpus.identity.token_keys`, taken
in the same pass, from the chunk's own words: a key depends on the words, never on their numbers), and its label, id
and person. The chunk's text is then dropped. This process maps each chunk's word numbers into one table
(:meth:`Tokenizer.word_ids` of the chunk's words) and appends the ids to compact arrays, or past
:data:`~dptopic.corpus.token_file.TOKENS_IN_MEMORY` documents to a temporary file (and the keys past
:data:`~dptopic.corpus.key_file.KEYS_IN_MEMORY` to theirs); once every chunk is read, the vocabulary is chosen from
the counts and cut exactly as :meth:`Corpus.from_texts` chooses and cuts it (a block of documents at a time from a
file, into another that the corpus keeps: :mod:`dptopic.corpus.token_file`). The corpus is
the one :meth:`Corpus.from_jsonl` gives (the same arrays, ids, keys and metadata), so a model trained on it is the
same for the same seed (``tests/corpus/test_stream.py``).

Chunks go to a pool of worker processes (``processes``; forked, :func:`_pool`), at most two chunks a worker in
flight, taken in order; an input of one chunk, or ``processes=1``, is read in this process.
"""
from __future__ import annotations

import contextlib
import os
from collections import deque
from dataclasses import dataclass

import numpy as np

from .. import _progress
from .._memory import give_back
from .._validation import Int, IsNone, validate_value
from ..errors import DPTopicError
from . import key_file, records, token_file
from .corpus import PROGRESS_MIN_DOCS, USER_FIELD, Corpus, reading_of, warn_unreachable_words
from .files import _open_text
from .identity import TokenKeys, text_digests
from .identity import token_keys as keys_of_tokens
from .key_file import KeysOnDisk
from .preprocess import Preprocessor, TokenBags, Tokenizer, df_range
from .vocabulary import Vocabulary

CHUNK_DOCS = 50_000
"""Lines read into one chunk: about 15 MB of text for documents of 60 words, a worker's whole working set."""


@dataclass
class _Settings:
    """What a worker needs to read a chunk as :meth:`Corpus.from_jsonl` reads a file."""

    text_field: str
    label_field: str | None
    id_field: str | None
    user_field: str | None
    preprocessor: Preprocessor
    vocabulary: list | None


@dataclass
class _Chunk:
    """One chunk read: its documents' token ids (numbers of ``words``), lengths, digests, keys and fields."""

    lengths: np.ndarray
    ids: np.ndarray
    words: list
    content: np.ndarray
    keys: TokenKeys
    labels: list
    doc_ids: list
    users: list


def read_chunk(settings: _Settings, path: str, first_line: int, lines: list) -> _Chunk | None:
    """The documents of ``lines`` (lines ``first_line``, ``first_line + 1``, ... of the file ``path``; blank lines
    are no documents), read as :meth:`Corpus.from_jsonl` reads them; None for a chunk of blank lines only."""
    s = settings
    texts, labels, ids, users = [], [], [], []
    for n, line in enumerate(lines, first_line):
        if not line.strip():
            continue
        text, label, doc_id, user = records.jsonl_record(line, n, path, s.text_field, s.label_field, s.id_field,
                                                         s.user_field)
        texts.append(text)
        labels.append(label)
        ids.append(doc_id)
        users.append(user)
    if not texts:
        return None
    tok = Tokenizer(s.preprocessor, vocabulary=s.vocabulary, grow=True)
    bags = tok.read(texts)
    words = tok.words
    return _Chunk(np.diff(bags.ptr).astype(np.int32), bags.ids, words, text_digests(texts),
                  keys_of_tokens(bags.ptr, bags.ids, words), labels, ids, users)


def _read_in_worker(args) -> _Chunk | None:
    return read_chunk(*args)


def read_file(path: str, settings: _Settings, chunk_docs: int, on_worker: bool = False) -> list:
    """Every chunk of the JSONL file ``path`` read (:func:`read_chunk`), in order: one shard of a corpus, read where
    it lies (a Dask worker: :func:`dptopic.backends.dask.read_jsonl_shards`)."""
    if on_worker and not os.path.isfile(path):
        raise DPTopicError(f"a Dask worker cannot read corpus shard {path!r}: the shard files must be at the same"
                           " path on every worker (e.g. a shared file system).")
    return [read_chunk(settings, path, *item) for item in _chunks_of_lines(path, chunk_docs)]


def _chunks_of_lines(path, chunk_docs: int):
    """``(first line number, lines)`` of the file, ``chunk_docs`` lines at a time (the file's own checks: UTF-8, no
    NUL byte, no binary start)."""
    with _open_text(path, "a JSONL file of UTF-8 text") as fh:
        lines: list = []
        first = 1
        for line in fh:
            lines.append(line)
            if len(lines) == chunk_docs:
                yield first, lines
                first += len(lines)
                lines = []
        if lines:
            yield first, lines


def _pool(processes: int):
    """A pool of ``processes`` workers: forked where the system forks (a worker starts at once, with the compiled
    kernels of this process, and a script that reads a corpus needs no ``if __name__ == "__main__"`` guard); a
    worker runs no threaded kernel, so a fork is safe however many threads this process runs."""
    import multiprocessing as mp  # a pool is started only for a corpus large enough to read on several cores
    from concurrent.futures import ProcessPoolExecutor  # as above

    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    return ProcessPoolExecutor(processes, mp_context=mp.get_context(method))


def _chunks_read(paths: list, settings: _Settings, chunk_docs: int, processes: int, map_files=None):
    """Each chunk read (:func:`read_chunk`), in the files' order: by ``map_files(read_file, paths, settings,
    chunk_docs)`` (each file read where it lies, yielding its chunks in order), in this process, or by ``processes``
    workers with at most two chunks each in flight (the text held is a few chunks', whatever the files' size)."""
    if map_files is not None:
        for chunks in map_files(read_file, paths, settings, chunk_docs):
            yield from chunks
        return
    source = ((path, *item) for path in paths for item in _chunks_of_lines(path, chunk_docs))
    first = next(source, None)
    if first is None:
        return
    second = next(source, None)
    if second is None or processes <= 1:        # one chunk (or one core): no pool to start
        for item in (first, second):
            if item is not None:
                yield read_chunk(settings, *item)
        for item in source:
            yield read_chunk(settings, *item)
        return
    with _pool(processes) as pool:
        pending: deque = deque(pool.submit(_read_in_worker, (settings, *item)) for item in (first, second))
        for item in source:
            if len(pending) >= 2 * processes:
                yield pending.popleft().result()
            pending.append(pool.submit(_read_in_worker, (settings, *item)))
        while pending:
            yield pending.popleft().result()


def default_processes() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:          # not Linux
        return max(1, os.cpu_count() or 1)


def _named(paths: list) -> str:
    """The file named in a message: the one file, or the shards (first and count)."""
    return repr(paths[0]) if len(paths) == 1 else f"{paths[0]!r} (and {len(paths) - 1} more shards)"


class _Spill:
    """Chunks' parts (token ids, keys) kept in memory until ``limit()`` documents are read, then in a store on disk
    made by ``to_disk(parts)`` (:class:`~dptopic.corpus.token_file.TokensOnDisk`,
    :class:`~dptopic.corpus.key_file.KeysOnDisk`: ``append``, ``load``, ``close``) and appended to as they come; in
    memory again, every part, where the store cannot be made or written (no temporary folder, no room left)."""

    def __init__(self, limit, to_disk):
        self.limit, self.to_disk = limit, to_disk
        self.parts: list = []
        #: the store once ``limit()`` documents are read (False: it could not be made or written)
        self.on_disk = None

    def add(self, part, n_docs: int) -> None:
        """Keep ``part``; ``n_docs``: the documents read with it."""
        if self.on_disk:
            try:
                self.on_disk.append(part)
                return
            except OSError:     # no room left in the temporary folder: every part in memory from here on
                self.parts = [self.on_disk.load()]
                self.on_disk.close()
                self.on_disk = False
        self.parts.append(part)
        if self.on_disk is None and n_docs >= self.limit():
            try:
                self.on_disk = self.to_disk(self.parts)
                self.parts = []
            except OSError:     # no temporary folder to write to: the parts stay in memory
                self.on_disk = False


class _Appended:
    """The chunks' arrays, appended as they come, joined once at the end. The token ids (numbers of this table,
    before the vocabulary's cut) past ``token_file.TOKENS_IN_MEMORY`` documents and the keys past
    ``key_file.KEYS_IN_MEMORY`` go to temporary files (:class:`_Spill`): the cut is then made a block at a time from
    the ids' file into another (``TokenBags.restrict``)."""

    def __init__(self, tok: Tokenizer):
        self.tok = tok
        self.lengths, self.content = [], []
        self.labels, self.doc_ids, self.users = [], [], []
        self.ids = _Spill(lambda: token_file.TOKENS_IN_MEMORY,
                          lambda parts: token_file.TokensOnDisk(np.concatenate(parts)))
        self.keys = _Spill(lambda: key_file.KEYS_IN_MEMORY, lambda parts: KeysOnDisk(TokenKeys.concatenate(parts)))
        self.n_docs = 0

    def add(self, chunk: _Chunk) -> None:
        to_parent = self.tok.word_ids(chunk.words)      # each of the chunk's word numbers in this table
        self.lengths.append(chunk.lengths)
        self.content.append(chunk.content)
        self.labels += chunk.labels
        self.doc_ids += chunk.doc_ids
        self.users += chunk.users
        self.n_docs += len(chunk.lengths)
        self.ids.add(to_parent[chunk.ids].astype(np.int32), self.n_docs)
        self.keys.add(chunk.keys, self.n_docs)

    def bags(self) -> TokenBags:
        """The documents' token bags, the chunks' arrays let go as they are joined."""
        lengths = _joined(self.lengths)
        ptr = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(lengths, out=ptr[1:])
        return TokenBags(ptr, self.ids.on_disk or _joined(self.ids.parts))

    def token_keys(self) -> TokenKeys | KeysOnDisk:
        """The documents' keys: their files, or each column joined as :func:`_joined` joins (the chunks' keys let go
        as copied)."""
        if self.keys.on_disk:
            return self.keys.on_disk
        columns = {f: [getattr(k, f) for k in self.keys.parts] for f in TokenKeys.FIELDS}
        self.keys.parts.clear()
        return TokenKeys(*(_joined(columns[f]) for f in TokenKeys.FIELDS))


def _joined(parts: list) -> np.ndarray:
    """``np.concatenate(parts)``, ``parts`` emptied, each piece let go and the heap given back as soon as it is
    copied: the join holds the whole and one piece, where a concatenation holds the whole twice (the new array's
    pages are resident only once written). At 10^6 documents the reader's peak was 1.8 GB against a corpus of 0.6 GB
    (docs/research/pipeline.md)."""
    if not parts:
        return np.concatenate(parts)        # numpy's own error: nothing to join (a caller's mistake)
    out = np.empty((sum(len(p) for p in parts), *parts[0].shape[1:]), np.result_type(*parts))
    at = 0
    for i in range(len(parts)):
        n = len(parts[i])
        out[at:at + n] = parts[i]
        parts[i] = None
        at += n
        give_back()
    parts.clear()
    return out


def read_jsonl(path, text_field: str = "text", label_field: str | None = None, id_field: str | None = None,
               require_ids: bool = True, user_field: str | None = None, *, vocabulary=None,
               max_vocab: int | None = 1000, min_df=1, max_df=None, min_length: int = 3, stop_words="english",
               lowercase: bool = True, drop_empty: bool = True, keep_urls: bool = False,
               processes: int | None = None, chunk_docs: int | None = None, progress: bool = False, map_files=None):
    """:meth:`Corpus.from_jsonl` of ``path`` (the same settings, the same corpus) read in chunks of ``chunk_docs``
    lines (None: :data:`CHUNK_DOCS`) on ``processes`` cores (None: every core this process may use), never holding
    the file's text; peak memory is a few chunks' text and, per document, its length, digest and fields, its token
    ids (4 bytes a token, twice while the vocabulary's cut is made) and ledger keys (about 400 bytes) up to 100,000
    documents, and past them a block's (the ids and keys in temporary files: docs/scaling.md).
    ``progress``: a bar on stderr counting the documents read.

    ``path`` may be a list of JSONL files, the shards of one corpus: its documents are theirs in order, the corpus
    :meth:`Corpus.from_jsonl` gives of their lines written into one file (a record's line number in an error is its
    line in its own file). ``map_files(read_file, paths, *args)``: where the files are read, yielding
    ``read_file(path, *args)`` for each path in order (:func:`dptopic.backends.dask.read_jsonl_shards` reads each on
    a Dask worker)."""
    records._check_field_names(("text_field", text_field, False), ("label_field", label_field, True),
                               ("id_field", id_field, True), ("user_field", user_field, True))
    validate_value("max_vocab", max_vocab, [IsNone(), Int(2, None)])
    validate_value("min_length", min_length, [Int(1, None)])
    chunk_docs = CHUNK_DOCS if chunk_docs is None else chunk_docs
    validate_value("chunk_docs", chunk_docs, [Int(1, None)])
    validate_value("processes", processes, [IsNone(), Int(1, None)])
    if not isinstance(lowercase, (bool, np.bool_)) or not isinstance(keep_urls, (bool, np.bool_)):
        raise DPTopicError("the streaming reader takes lowercase and keep_urls as True or False: read"
                           " lowercase='match' with Corpus.from_jsonl.")
    if vocabulary is not None and not isinstance(vocabulary, Vocabulary):
        vocabulary = Vocabulary(vocabulary)
    pre = Preprocessor(min_length=min_length, remove_stop_words=True, stop_words=stop_words,
                       lowercase=bool(lowercase), keep_urls=bool(keep_urls))
    words = None if vocabulary is None else list(vocabulary.words)
    paths = [os.fspath(q) for q in path] if isinstance(path, (list, tuple)) else [os.fspath(path)]
    if not paths:
        raise DPTopicError("no corpus file given: give a JSONL file, or a list of the JSONL shards of one corpus.")
    settings = _Settings(text_field, label_field, id_field, user_field, pre, words)
    tok = Tokenizer(pre, vocabulary=words, grow=True)
    out = _Appended(tok)
    with contextlib.ExitStack() as stack:
        bar = None
        for chunk in _chunks_read(paths, settings, chunk_docs, processes or default_processes(), map_files):
            if chunk is None:
                continue
            n = len(chunk.lengths)
            out.add(chunk)
            del chunk
            give_back()
            if bar is None and progress and out.n_docs >= PROGRESS_MIN_DOCS:     # a small input: read in a moment
                bar = stack.enter_context(_progress.progress_bar(None, "reading", transient=True))
                bar.advance(out.n_docs - n, info="documents read")
            if bar is not None:
                bar.advance(n)
    if vocabulary is not None:      # once every record is known good (as Corpus.from_jsonl says it)
        warn_unreachable_words(vocabulary.words, pre)
    if not out.n_docs:
        raise DPTopicError(f"empty corpus: JSONL file {_named(paths)} holds no records; give one JSON object per line,"
                           f" the text in a field ({text_field!r}).")
    doc_ids = records._ids_or_none(out.doc_ids if id_field is not None else [], id_field, require_ids,
                                   f"JSONL file {_named(paths)}", "field", "id_field")
    df_range(min_df, max_df, out.n_docs)
    remap = None
    if vocabulary is not None:          # the cut to the given vocabulary: its words are the table's first
        remap = np.arange(tok.n_words, dtype=np.int64)
        remap[len(vocabulary):] = -1
    c = Corpus._from_bags(out.bags(), tok, None, out.labels if label_field else None, doc_ids, vocabulary, max_vocab,
                          min_df, max_df, drop_empty, reading=reading_of(stop_words, bool(lowercase), min_length,
                                                                          bool(keep_urls)),
                          user_ids=out.users if user_field else None, content_keys=_joined(out.content),
                          remap=remap, token_keys=out.token_keys())
    if user_field:
        c.metadata[USER_FIELD] = f"field {user_field!r}"
    del out
    give_back()
    return c
