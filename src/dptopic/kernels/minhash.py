"""MinHash signatures of token multisets, and their bands (locality-sensitive hashing), over CSR arrays.

The permutations are datasketch's ``affine32`` scheme (datasketch >= 2.0, ``MinHash(scheme="affine32")``): a feature's
32-bit hash ``f`` is pre-mixed once by MurmurHash3's 32-bit finaliser, ``h = fmix32(f)``, and permutation ``k`` maps it
to ``a[k] * h + b[k]`` modulo 2**32 (``a[k]`` odd: a bijection); a document's value ``k`` is the least over its
features. Fed the same feature hashes (``hashfunc`` the identity) and the same ``a``, ``b`` (``seed``), datasketch's
``MinHash.hashvalues`` equal these signatures value for value (tests/kernels/test_minhash.py checks it); this kernel
only avoids a Python object per token. A document's features are its tokens counted as a multiset: the ``j``-th
occurrence of word ``w`` is the feature ``(w, j)``, so the signatures estimate the Jaccard similarity of two bags of
words (counts included), in any order.
"""
from __future__ import annotations

import numpy as np

from ._jit import njit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
"""The odd constant that spaces the ``j``-th occurrence of a word from its first (Fibonacci hashing's)."""


@njit(cache=True, inline="always")
def fmix32(h):
    """MurmurHash3's 32-bit finaliser (datasketch's pre-mix of a feature's hash), on a uint32."""
    h = np.uint32(h ^ (h >> np.uint32(16)))
    h = np.uint32(h * np.uint32(0x85EBCA6B))
    h = np.uint32(h ^ (h >> np.uint32(13)))
    h = np.uint32(h * np.uint32(0xC2B2AE35))
    return np.uint32(h ^ (h >> np.uint32(16)))


@njit(cache=True, inline="always")
def mix64(h):
    """SplitMix64's finaliser, on a uint64 (as :func:`dptopic.corpus.identity.mix64`)."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


@njit(cache=True, inline="always")
def feature_hash(word_hash, j):
    """The 32-bit hash of the feature ``(word, j)``: the ``j``-th occurrence (from 1) of the word whose 64-bit hash is
    ``word_hash``."""
    return np.uint32(mix64(word_hash + np.uint64(j) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(32))


@njit(cache=True, nogil=True)
def minhash_signatures(doc_ptr, token_ids, word_hash, a, b, min_tokens, start, stop, out):
    """Fill ``out[d]`` (uint32, K values) with the MinHash signature of document ``d``'s token multiset, for ``d`` in
    ``[start, stop)``; a document of fewer than ``min_tokens`` tokens gets a row of zeros (not sketched).

    ``doc_ptr`` (int64, D + 1) and ``token_ids`` (int32 or int64): the documents as CSR token ids; ``word_hash``
    (uint64): each id's 64-bit word hash; ``a``, ``b`` (uint32, K): the permutations. Returns how many of the
    documents were sketched."""
    K = a.shape[0]
    done = 0
    mins = np.empty(K, np.uint32)
    for d in range(start, stop):
        lo, hi = doc_ptr[d], doc_ptr[d + 1]
        n = hi - lo
        if n < min_tokens or n == 0:
            for k in range(K):
                out[d, k] = 0
            continue
        ids = np.sort(token_ids[lo:hi].astype(np.int64))
        mins[:] = np.uint32(0xFFFFFFFF)
        j = 0
        prev = -1
        for i in range(n):
            w = ids[i]
            j = j + 1 if w == prev else 1
            prev = w
            h = fmix32(feature_hash(word_hash[w], j))
            for k in range(K):
                v = np.uint32(a[k] * h + b[k])
                mins[k] = min(mins[k], v)
        for k in range(K):
            out[d, k] = mins[k]
        done += 1
    return done


@njit(cache=True, nogil=True)
def band_hashes(signatures, rows, seeds, out):
    """``out[d, i]`` (uint64): a hash of values ``i * rows .. (i + 1) * rows - 1`` of row ``d`` of ``signatures``
    (uint32) from ``seeds[i]`` (uint64), never 0; a row of zeros (a document not sketched) gives a row of zeros."""
    D = signatures.shape[0]
    B = out.shape[1]
    for d in range(D):
        empty = True
        for k in range(signatures.shape[1]):
            if signatures[d, k] != 0:
                empty = False
                break
        if empty:
            out[d, :] = 0
            continue
        for i in range(B):
            h = seeds[i]
            for r in range(rows):
                h = mix64(h ^ np.uint64(signatures[d, i * rows + r]))
            out[d, i] = h if h != np.uint64(0) else np.uint64(1)


@njit(cache=True, nogil=True)
def signature_bytes(signatures, out):
    """``out[d, k]`` (uint8): 8 bits of a mix of ``signatures[d, k]`` (b-bit minwise hashing, Li & König 2010); two
    different values agree with probability about 1/256. A row of zeros stays zeros."""
    D, K = signatures.shape
    for d in range(D):
        for k in range(K):
            v = signatures[d, k]
            out[d, k] = np.uint8(0) if v == 0 else np.uint8(fmix32(v ^ np.uint32(0x5BD1E995)) & np.uint32(0xFF))


@njit(cache=True, nogil=True)
def sketch_documents(doc_ptr, token_ids, word_hash, a, b, min_tokens, rows, seeds, seen, bags, bands, compact):
    """Every document's keys in one pass over its tokens, without its full signature kept: ``bags[d]`` (uint64), the
    mixed sum of its tokens' word hashes (:func:`dptopic.corpus.identity.bag_digests`; 0 for no token);
    ``bands[d]`` and ``compact[d]``, what :func:`band_hashes` and :func:`signature_bytes` make of its
    :func:`minhash_signatures` row (zeros below ``min_tokens`` tokens). ``seen`` (int32, one per word id, zeros):
    scratch for the occurrence count of each word in a document, left zeros."""
    D = doc_ptr.shape[0] - 1
    K = a.shape[0]
    B = bands.shape[1]
    mins = np.empty(K, np.uint32)
    for d in range(D):
        lo, hi = doc_ptr[d], doc_ptr[d + 1]
        n = hi - lo
        total = np.uint64(0)
        for i in range(lo, hi):
            total += word_hash[token_ids[i]]
        bags[d] = np.uint64(0) if n == 0 else mix64(total ^ np.uint64(0x5DEECE66D))
        if n < min_tokens or n == 0:
            bands[d, :] = 0
            compact[d, :] = 0
            continue
        mins[:] = np.uint32(0xFFFFFFFF)
        for i in range(lo, hi):
            w = token_ids[i]
            seen[w] += 1
            h = fmix32(feature_hash(word_hash[w], seen[w]))
            for k in range(K):
                mins[k] = min(mins[k], np.uint32(a[k] * h + b[k]))
        for i in range(lo, hi):
            seen[token_ids[i]] = 0
        for i in range(B):
            g = seeds[i]
            for r in range(rows):
                g = mix64(g ^ np.uint64(mins[i * rows + r]))
            bands[d, i] = g if g != np.uint64(0) else np.uint64(1)
        for k in range(K):
            compact[d, k] = np.uint8(fmix32(mins[k] ^ np.uint32(0x5BD1E995)) & np.uint32(0xFF))


@njit(cache=True, nogil=True)
def bag_sums(doc_ptr, token_ids, word_hash, out):
    """``out[d]`` (uint64): the sum, modulo 2**64, of the word hashes of document ``d``'s tokens."""
    for d in range(doc_ptr.shape[0] - 1):
        total = np.uint64(0)
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            total += word_hash[token_ids[i]]
        out[d] = total


@njit(cache=True, nogil=True)
def mix64_array(h, out):
    """``out[i] = mix64(h[i])`` for every ``i`` (uint64 arrays)."""
    for i in range(h.shape[0]):
        out[i] = mix64(h[i])
