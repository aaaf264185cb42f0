"""Each document's content digest: what the dataset ledger knows a document by (docs/budget.md, "Which dataset").

A document read from text (a line of a text file, a JSONL record's field, a CSV cell, a file of a folder, a string
given to ``fit``) is known by its text as the reader parsed it, in Unicode's NFC form with every run of white space
made one space and none at either end: the same records in JSONL, CSV or text, in any order and with any white space
around or inside them, give the same digests, and a file renamed or reordered is the same set of documents. A
document that comes without its text (a count matrix, word ids, a UCI file) is known by its bag of words: the
multiset of its words (their strings, not their ids) and their counts.

Beside the text, a document read from text is known by what the trainer reads of it (docs/research/identity.md):

* its **token bag** (:func:`token_bag_digests`): the multiset of the tokens the tokenizer produced, before any
  vocabulary's cut, as an order-free digest. Case, punctuation, stop words, one-letter words, web addresses and
  zero-width characters never reach it, nor does the order of the words: the same text upper-cased, with its words
  reversed or a URL appended has the same token bag. A document given as counts (a matrix, a UCI file) has its bag of
  words as its token bag (:func:`bag_digests`: the same digest for the same words and counts);
* its **sketch** (:func:`token_keys`, :func:`sketch_bands`, :func:`sketch_signatures`): a MinHash signature of the
  token multiset (Broder 1997; the ``j``-th occurrence of a word is a feature of its own, so counts matter) in
  ``SKETCH_PARAMS["bands"]`` bands of ``SKETCH_PARAMS["rows"]`` values (locality-sensitive hashing: two documents
  whose bands agree somewhere are candidates) and a compact signature of 8 bits a value (b-bit minwise hashing, Li &
  König 2010) by which a candidate is verified: two documents whose estimated Jaccard similarity reaches
  ``SKETCH_PARAMS["threshold"]`` are one document (:func:`dptopic.dataset_ledger.people.document_links`). One word
  edited, a word or a signature line appended: the sketch still matches. A document of fewer than
  ``SKETCH_PARAMS["min_tokens"]`` tokens is not sketched (a row of zeros): a short text is matched by its digests
  only, never by a resemblance.

A digest is 64 bits of BLAKE2b, unkeyed, held in memory with the corpus (and saved with a prepared ``.npz``, beside
the documents themselves); the ledger keys each one with a key of its own before it stores anything
(:mod:`dptopic.dataset_ledger`), so no digest leaves the process or the ledger as it is here.
"""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

import numpy as np

from ..dataset_ledger.people import SKETCH_THRESHOLD
from ..kernels.minhash import bag_sums, minhash_signatures, mix64_array, sketch_documents

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
    output (the scalar the kernels mix with, :func:`dptopic.kernels.minhash.mix64`)."""
    h = np.ascontiguousarray(h, dtype=np.uint64)
    flat = h.reshape(-1)
    out = np.empty_like(flat)
    mix64_array(flat, out)
    return out.reshape(h.shape)


def word_hashes(words) -> np.ndarray:
    """Each word's 64-bit hash (uint64, one per word of ``words``, strings): what a bag digest sums and a sketch's
    features are made of. A caller that reads documents in chunks into a growing word table hashes each new word
    once and passes the hashes (``hashes=``) to :func:`token_bag_digests` and :func:`token_keys`."""
    return mix64(np.fromiter((_digest(str(w).encode("utf-8", "surrogatepass"), _WORD) for w in words),
                             dtype=np.uint64, count=len(words)))


def _hashes(words, hashes) -> np.ndarray:
    if hashes is not None:
        return np.asarray(hashes, dtype=np.uint64)
    if words is None:
        raise TypeError("give the words of the token ids (words=) or their hashes (hashes=)")
    return word_hashes(words)


def bag_digests(doc_ptr, word_ids, words=None, *, hashes=None) -> np.ndarray:
    """The digests of documents without their text, from their bags of words: a sum over each document's tokens of
    its word's hash (the word's string, not its id), mixed; the same bag in any order gives the same digest.
    ``hashes``: :func:`word_hashes` of ``words``, when the caller has them."""
    word_hash = _hashes(words, hashes)
    doc_ptr, word_ids = _csr(doc_ptr, word_ids)
    sums = np.zeros(len(doc_ptr) - 1, np.uint64)
    bag_sums(doc_ptr, word_ids, word_hash, sums)
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


def token_bag_digests(doc_ptr, token_ids, words=None, *, hashes=None) -> np.ndarray:
    """Each document's token-bag digest (uint64[n]; module note): document ``d``'s tokens are
    ``token_ids[doc_ptr[d]:doc_ptr[d + 1]]``, numbers of ``words`` (strings; or their :func:`word_hashes`, ``hashes``),
    as the tokenizer produced them, before any vocabulary's cut. Order-free: a multiset digest, equal for two documents
    exactly when they hold the same words the same number of times (up to a 2**-64 chance). The same function as
    :func:`bag_digests`, so a count matrix of the same words and counts has the same digest; 0 (no key) for a
    document of no token, known by its text alone."""
    out = bag_digests(doc_ptr, token_ids, words, hashes=hashes)
    out[np.diff(np.asarray(doc_ptr, dtype=np.int64)) == 0] = 0
    return out


SKETCH_PARAMS = {"scheme": "minhash-affine32", "features": "token multiset", "num_perm": 128, "bands": 32, "rows": 4,
                 "seed": 93, "signature_bits": 8, "min_tokens": 15, "threshold": SKETCH_THRESHOLD, "version": 1}
"""The sketch's parameters (docs/research/identity.md measures them): ``num_perm`` MinHash values per document
(datasketch's ``affine32`` permutations drawn from ``seed``), cut into ``bands`` bands of ``rows`` values each, a
signature of ``signature_bits`` bits per value, no sketch below ``min_tokens`` tokens, and the estimated Jaccard
similarity ``threshold`` at which two sketched documents are one. A ledger records them and refuses sketches made
with others: two sketches compare only under the same parameters."""

READ_MIN_TOKENS = 5
"""A bag of words as the trainer reads it (after the vocabulary's cut) is a key of its document only with at least
this many tokens (:func:`read_bag_digests`): shorter bags of unrelated documents are often equal (measured in
docs/research/identity.md); a bag that equals the token bag is a key through it anyway."""


def read_bag_digests(doc_ptr, word_ids, words=None, *, hashes=None) -> np.ndarray:
    """Each document's bag of words after the vocabulary's cut, as the trainer reads it (uint64[n]; :func:`bag_digests`
    of the corpus's own ids and words, or their ``hashes``), 0 for a bag of fewer than :data:`READ_MIN_TOKENS` tokens
    (no key)."""
    out = bag_digests(doc_ptr, word_ids, words, hashes=hashes)
    out[np.diff(np.asarray(doc_ptr, dtype=np.int64)) < READ_MIN_TOKENS] = 0
    return out


def _permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's ``affine32`` permutation parameters for ``MinHash(num_perm, seed, scheme="affine32")``: ``a`` odd,
    ``b`` any, both uint32, drawn from ``numpy.random.RandomState(seed)`` in datasketch's order (a fixed public hash
    family, not a random choice of a release)."""
    gen = np.random.RandomState(seed)
    a = gen.randint(0, 1 << 31, num_perm, dtype=np.uint32) * np.uint32(2) + np.uint32(1)
    b = gen.randint(0, 1 << 32, num_perm, dtype=np.uint32)
    return a, b


_A, _B = _permutations(SKETCH_PARAMS["num_perm"], SKETCH_PARAMS["seed"])
_BAND_SEEDS = mix64(np.uint64(SKETCH_PARAMS["seed"]) + np.arange(1, SKETCH_PARAMS["bands"] + 1, dtype=np.uint64)
                    * np.uint64(0x9E3779B97F4A7C15))


def _csr(doc_ptr, token_ids) -> tuple[np.ndarray, np.ndarray]:
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    token_ids = np.asarray(token_ids)
    if token_ids.dtype not in (np.int32, np.int64):
        token_ids = token_ids.astype(np.int64)
    return doc_ptr, np.ascontiguousarray(token_ids)


def sketch_signatures(doc_ptr, token_ids, words=None, *, hashes=None) -> np.ndarray:
    """Each document's MinHash signature (uint32[n, ``num_perm``]) of its token multiset (module note), equal value
    for value to datasketch's ``MinHash(num_perm, seed, scheme="affine32", hashfunc=identity)`` fed the features'
    hashes (:func:`feature_hashes`); a row of zeros for a document of fewer than ``min_tokens`` tokens. The full
    values: for tests and measurement (the ledger keeps :func:`token_keys`' bands and compact signatures)."""
    doc_ptr, token_ids = _csr(doc_ptr, token_ids)
    word_hash = _hashes(words, hashes)
    n = len(doc_ptr) - 1
    out = np.zeros((n, SKETCH_PARAMS["num_perm"]), np.uint32)
    minhash_signatures(doc_ptr, token_ids, word_hash, _A, _B, SKETCH_PARAMS["min_tokens"], 0, n, out)
    return out


def feature_hashes(tokens) -> list[int]:
    """The 32-bit feature hashes of one document's tokens (strings), as the sketch makes them: the ``j``-th occurrence
    of word ``w`` is hashed from ``w``'s :func:`word_hashes` value and ``j`` (a reference in Python, for tests)."""
    words = sorted(set(tokens))
    hashes = dict(zip(words, word_hashes(words).tolist()))
    seen: dict = {}
    out = []
    for w in tokens:
        j = seen[w] = seen.get(w, 0) + 1
        out.append(int(mix64(np.array([(hashes[w] + j * 0x9E3779B97F4A7C15) % 2**64], np.uint64))[0]) >> 32)
    return out


@dataclass(frozen=True)
class TokenKeys:
    """What a document is known by besides its text, one row per document: ``bags``, its token-bag digest
    (uint64[n]); ``bands``, its sketch's band hashes (uint64[n, bands], zeros for a document not sketched);
    ``signatures``, its compact signature (uint8[n, num_perm], zeros likewise); ``lengths``, its tokens before any
    vocabulary's cut (int32[n]: the person rule counts long enough documents only). Made by :func:`token_keys`."""

    bags: np.ndarray
    bands: np.ndarray
    signatures: np.ndarray
    lengths: np.ndarray

    FIELDS = ("bags", "bands", "signatures", "lengths")

    def __len__(self) -> int:
        return len(self.bags)

    def take(self, index) -> "TokenKeys":
        """The rows of ``index`` (an integer array or a boolean mask), in its order."""
        return TokenKeys(*(getattr(self, f)[index] for f in self.FIELDS))

    @staticmethod
    def concatenate(parts) -> "TokenKeys":
        """One :class:`TokenKeys` of the rows of ``parts``, in order (a corpus read in chunks)."""
        parts = list(parts)
        return TokenKeys(*(np.concatenate([getattr(p, f) for p in parts]) for f in TokenKeys.FIELDS))

    def arrays(self) -> dict:
        """The columns by name, as a corpus file stores them (``token_`` before each name)."""
        return {f"token_{f}": getattr(self, f) for f in self.FIELDS}

    @staticmethod
    def from_arrays(arrays: dict, n: int) -> "TokenKeys | None":
        """The :class:`TokenKeys` of :meth:`arrays` (None if any column is missing or is not one row per each of
        ``n`` documents of the sketch's shape)."""
        try:
            cols = [np.asarray(arrays[f"token_{f}"]) for f in TokenKeys.FIELDS]
        except KeyError:
            return None
        shapes = [(n,), (n, SKETCH_PARAMS["bands"]), (n, SKETCH_PARAMS["num_perm"]), (n,)]
        dtypes = [np.uint64, np.uint64, np.uint8, np.int32]
        if any(c.shape != s or c.dtype != t for c, s, t in zip(cols, shapes, dtypes)):
            return None
        return TokenKeys(*cols)


def token_keys(doc_ptr, token_ids, words=None, *, hashes=None) -> TokenKeys:
    """Each document's token-bag digest, sketch bands and compact signature (:class:`TokenKeys`), in one pass over the
    tokens: document ``d``'s tokens are ``token_ids[doc_ptr[d]:doc_ptr[d + 1]]``, numbers of ``words`` (or their
    ``hashes``), before any vocabulary's cut. The contract of each column: :func:`token_bag_digests`,
    :func:`sketch_bands`; the compact signature is 8 bits of each value of :func:`sketch_signatures`. Pure and
    deterministic: the same tokens give the same keys in any process, chunking or order of documents."""
    doc_ptr, token_ids = _csr(doc_ptr, token_ids)
    word_hash = _hashes(words, hashes)
    n = len(doc_ptr) - 1
    K, B, R = SKETCH_PARAMS["num_perm"], SKETCH_PARAMS["bands"], SKETCH_PARAMS["rows"]
    bags = np.zeros(n, np.uint64)
    bands = np.zeros((n, B), np.uint64)
    compact = np.zeros((n, K), np.uint8)
    seen = np.zeros(len(word_hash), np.int32)
    sketch_documents(doc_ptr, token_ids, word_hash, _A, _B, SKETCH_PARAMS["min_tokens"], R, _BAND_SEEDS, seen, bags,
                     bands, compact)
    return TokenKeys(bags, bands, compact, np.diff(doc_ptr).astype(np.int32))


def sketch_bands(doc_ptr, token_ids, words=None, *, hashes=None) -> np.ndarray:
    """Each document's sketch as ``SKETCH_PARAMS["bands"]`` band hashes (uint64[n, bands]): band ``i`` hashes MinHash
    values ``i * rows .. (i + 1) * rows - 1`` (:func:`sketch_signatures`), never 0; a row of zeros for a document of
    fewer than ``min_tokens`` tokens. Two documents whose token multisets have Jaccard similarity ``s`` share some
    band with probability ``1 - (1 - s**rows)**bands`` (Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*,
    ch. 3): candidates, verified by the compact signatures (:func:`token_keys`)."""
    return token_keys(doc_ptr, token_ids, words, hashes=hashes).bands


def token_list_ids(token_lists) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``(doc_ptr, token_ids, words)`` of documents given as lists of tokens (strings), for :func:`token_keys`."""
    index: dict = {}
    lengths = np.fromiter((len(ts) for ts in token_lists), dtype=np.int64, count=len(token_lists))
    ptr = np.zeros(len(token_lists) + 1, np.int64)
    np.cumsum(lengths, out=ptr[1:])
    ids = np.fromiter((index.setdefault(w, len(index)) for ts in token_lists for w in ts), dtype=np.int64,
                      count=int(ptr[-1]))
    return ptr, ids, list(index)
