"""Each document's content digest: what the dataset ledger knows a document by (docs/budget.md, "Which dataset").

A document read from text (a line of a text file, a JSONL record's field, a CSV cell, a file of a folder, a string
given to ``fit``) is known by its text as the reader parsed it, in Unicode's NFC form with every run of white space
made one space and none at either end: the same records in JSONL, CSV or text, in any order and with any white space
around or inside them, give the same digests, and a file renamed or reordered is the same set of documents. A
document that comes without its text (a count matrix, word ids, a UCI file) is known by its bag of words: the
multiset of its words (their strings, not their ids) and their counts.

A digest is 64 bits of BLAKE2b, unkeyed, held in memory with the corpus (and saved with a prepared ``.npz``, beside
the documents themselves); the ledger keys each one with a key of its own before it stores anything
(:mod:`dptopic.dataset_ledger`), so no digest leaves the process or the ledger as it is here.
"""
from __future__ import annotations

import hashlib
import unicodedata

import numpy as np

_TEXT = b"dptopic-text"
_WORD = b"dptopic-word"


def normal_text(text: str) -> str:
    """``text`` as its digest reads it: NFC, white space runs made one space, none at either end."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split())


def _digest(data: bytes, person: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8, person=person).digest(), "little")


def text_digests(texts) -> np.ndarray:
    """One unsigned 64-bit digest per text (module note): equal for texts that differ only in white space."""
    return np.fromiter((_digest(normal_text(t).encode("utf-8", "surrogatepass"), _TEXT) for t in texts),
                       dtype=np.uint64, count=len(texts))


def token_digests(token_lists) -> np.ndarray:
    """The digests of documents given as lists of words: those of their words joined by one space (a text that
    splits into those words has the same digest)."""
    return text_digests([" ".join(ts) for ts in token_lists])


def mix64(h: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser over an array (modulo 2**64): every bit of a sum of word hashes spreads over the whole
    output."""
    h = np.asarray(h, dtype=np.uint64).copy()
    with np.errstate(over="ignore"):
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def bag_digests(doc_ptr, word_ids, words) -> np.ndarray:
    """The digests of documents without their text, from their bags of words: a sum over each document's tokens of
    its word's hash (the word's string, not its id), mixed; the same bag in any order gives the same digest."""
    word_hash = np.fromiter((_digest(str(w).encode("utf-8", "surrogatepass"), _WORD) for w in words),
                            dtype=np.uint64, count=len(words))
    word_hash = mix64(word_hash)
    doc_ptr = np.asarray(doc_ptr, dtype=np.int64)
    cs = np.zeros(len(word_ids) + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        np.cumsum(word_hash[np.asarray(word_ids, dtype=np.int64)], out=cs[1:])
        sums = cs[doc_ptr[1:]] - cs[doc_ptr[:-1]]
    return mix64(sums ^ np.uint64(0x5DEECE66D))


def count_digests(X, words) -> np.ndarray:
    """:func:`bag_digests` of a CSR count matrix (row d: document d's count of each column's word)."""
    X = X.tocsr()
    counts = np.asarray(X.data)
    if counts.size and (np.any(counts < 0) or np.any(counts != np.round(counts))):
        # a matrix of weights (tf-idf, say), not counts: each row's words and their weights, as text
        rows = (sorted(zip(X.indices[X.indptr[d]:X.indptr[d + 1]], counts[X.indptr[d]:X.indptr[d + 1]]))
                for d in range(X.shape[0]))
        return text_digests([" ".join(f"{words[j]}:{v!r}" for j, v in row) for row in rows])
    reps = counts.astype(np.int64)
    word_ids = np.repeat(X.indices.astype(np.int64), reps)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    lengths = np.bincount(rows, weights=reps, minlength=X.shape[0]).astype(np.int64)
    ptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    return bag_digests(ptr, word_ids, words)
