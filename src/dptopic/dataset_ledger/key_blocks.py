"""How the ledger stores the keys its documents are known by (format 4): sorted blocks of arrays, a row a block.

A block is ``n`` pairs ``(key, doc)``, sorted by key then document, held as two columns of ``n`` little-endian int64
(``keys`` and ``docs``, blobs of ``8 n`` bytes each), at most :data:`BLOCK_PAIRS` pairs a block. The pairs are
those :mod:`dptopic.dataset_ledger.linking` records (each key a document is known by, keyed under the ledger's
secret, and the document it names); what is stored is the same as format 3's table ``doc_keys`` held a row a pair,
which a format 3 ledger still holds and is read beside the blocks (:func:`read_pairs`).

Why blocks: at 10^6 documents a set has 3.5 x 10^7 keys. Written a row a key with an index on the key, the record
took about 55 s of a 125 s run and the file 1.8 KB a document; as about 35 blocks it takes about a second and 16
bytes a key (``docs/research/pipeline.md``). The keys are never looked up one by one in SQL: the record reads them
all and searches them in memory (keyed hashes spread over the whole range, so no range of them is worth an index).
"""
from __future__ import annotations

import numpy as np

from ..errors import DPTopicError

BLOCK_PAIRS = 1 << 20
"""Pairs in one block at most: 16 MiB of a row's two blobs (SQLite's and PostgreSQL's limits are about 1 GB)."""

_INT64 = np.dtype("<i8")


def write_pairs(tx, keys: np.ndarray, docs: np.ndarray) -> None:
    """Write the pairs ``(keys[i], docs[i])`` (int64, sorted by key then document, each once) as blocks of at most
    :data:`BLOCK_PAIRS`."""
    for start in range(0, len(keys), BLOCK_PAIRS):
        k = np.ascontiguousarray(keys[start:start + BLOCK_PAIRS], dtype=_INT64)
        d = np.ascontiguousarray(docs[start:start + BLOCK_PAIRS], dtype=_INT64)
        # the arrays' own memory handed over (a buffer, not a bytes copy): SQLite and psycopg read it as a blob
        tx.run("INSERT INTO key_blocks (n, keys, docs) VALUES (?, ?, ?)", (len(k), memoryview(k), memoryview(d)))


ROWS_AT_ONCE = 100_000
"""Format 3 rows read in one batch (:func:`read_pairs`): never the whole table as Python tuples."""


def read_pairs(tx, blocks: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Every recorded ``(key, doc)`` as two int64 arrays sorted by key then document: a format 3 ledger's rows
    (``doc_keys``, read :data:`ROWS_AT_ONCE` at a time) and, with ``blocks`` (a ledger of format 4), its blocks, each
    copied into one array allocated at the total's size (never a list of blocks beside their join)."""
    parts = [np.array(rows, dtype=np.int64).reshape(-1, 2)
             for rows in tx.batches("SELECT key, doc FROM doc_keys", ROWS_AT_ONCE)]
    n_rows = sum(len(p) for p in parts)
    n_blocks = int(tx.one("SELECT COALESCE(SUM(n), 0) FROM key_blocks")[0]) if blocks else 0
    keys = np.empty(n_rows + n_blocks, np.int64)
    docs = np.empty(n_rows + n_blocks, np.int64)
    at = 0
    for p in parts:
        keys[at:at + len(p)], docs[at:at + len(p)] = p[:, 0], p[:, 1]
        at += len(p)
    del parts
    if n_blocks:
        for (bid, n, k, d), in tx.batches("SELECT id, n, keys, docs FROM key_blocks ORDER BY id", 1):
            n = int(n)
            if at + n > len(keys) or len(k) != 8 * n or len(d) != 8 * n:     # the ledger's check refuses it first
                raise DPTopicError(f"the ledger is damaged: key block {bid} does not hold the {n} keys it states;"
                                   " nothing was spent; restore the ledger from a backup.")
            keys[at:at + n] = np.frombuffer(k, dtype=_INT64)
            docs[at:at + n] = np.frombuffer(d, dtype=_INT64)
            at += n
    from ..kernels.sketch_pairs import sort_pairs_in_place  # why: compiled on first use ('dptopic budget': no keys)

    sort_pairs_in_place(keys, docs)     # np.lexsort's order, in place: no sorted copies (the kernel's module note)
    return keys, docs


def blocks_damage(tx) -> str | None:
    """What is wrong with the ``key_blocks`` table, or None: each block's two columns hold ``n`` int64 each."""
    row = tx.one("SELECT id, n FROM key_blocks WHERE n < 1 OR length(keys) <> 8 * n OR length(docs) <> 8 * n LIMIT 1")
    if row is None:
        return None
    return f"key block {row[0]} does not hold the {row[1]} keys and documents it states"
