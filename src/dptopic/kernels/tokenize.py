"""Text to token ids without a Python object per token: documents of ASCII bytes scanned for runs of letters, each run
looked up (or added) in an open-addressing table of words held in arrays.

The table: ``slots`` (a power of two long, -1 empty) holds key numbers; key ``k``'s bytes are
``key_bytes[key_ptr[k]:key_ptr[k + 1]]``, its hash ``key_hash[k]``, and ``drop[k]`` says that a token equal to it is
never emitted (a stop word). The caller keeps the arrays large enough (:func:`tokenize_ascii` stops before a document
that might not fit, and says where, so that it can grow them and go on).
"""
from __future__ import annotations

import numpy as np

from ._jit import njit

FNV_OFFSET = -3750763034362895579     # 14695981039346656037 as a signed 64-bit number
FNV_PRIME = 1099511628211


def ascii_letters(lowercase: bool) -> np.ndarray:
    """The 256-entry byte table of the scan: 0 for a byte that is no ASCII letter, else the letter (lower-cased when
    ``lowercase``). Only the 52 ASCII letters are letters: the scan reads ASCII documents only."""
    cls = np.zeros(256, dtype=np.uint8)
    for b in range(ord("a"), ord("z") + 1):
        cls[b] = b
    for b in range(ord("A"), ord("Z") + 1):
        cls[b] = b + 32 if lowercase else b
    return cls


@njit(cache=True, nogil=True, inline="always")
def _finish_hash(h):
    return h ^ (h >> 29)


@njit(cache=True, nogil=True)
def _find(slots, key_hash, key_ptr, key_bytes, h, src, a, n, cls):
    """The slot of the key equal to ``cls[src[a:a + n]]`` (hash ``h``): its key number there, or -1-slot of the empty
    slot where it would go."""
    mask = slots.shape[0] - 1
    s = h & mask
    while True:
        k = slots[s]
        if k < 0:
            return -1 - s
        if key_hash[k] == h:
            p = key_ptr[k]
            if key_ptr[k + 1] - p == n:
                same = True
                for j in range(n):
                    if key_bytes[p + j] != cls[src[a + j]]:
                        same = False
                        break
                if same:
                    return k
        s = (s + 1) & mask


@njit(cache=True, nogil=True)
def hash_bytes(src, a, n, cls):
    """The table's hash of ``cls[src[a:a + n]]`` (FNV-1a, 64 bits, its high bits folded in)."""
    h = FNV_OFFSET
    for j in range(a, a + n):
        h = (h ^ cls[src[j]]) * FNV_PRIME
    return _finish_hash(h)


@njit(cache=True, nogil=True)
def add_keys(words, word_ptr, slots, key_hash, key_ptr, key_bytes, drop, n_keys, grow, mark_drop, out):
    """Look up each word ``words[word_ptr[i]:word_ptr[i + 1]]`` (UTF-8 bytes, taken as they are) and, with ``grow``,
    add those not there. ``out[i]``: its key number, or -1 when it is not in the table or is a dropped key (a stop
    word is never a token). With ``mark_drop`` each word is made a dropped key instead (``out[i]`` its key number).
    Returns the new ``n_keys``. The caller makes room for every word first."""
    ident = np.arange(256).astype(np.uint8)
    for i in range(word_ptr.shape[0] - 1):
        a, n = word_ptr[i], word_ptr[i + 1] - word_ptr[i]
        h = hash_bytes(words, a, n, ident)
        k = _find(slots, key_hash, key_ptr, key_bytes, h, words, a, n, ident)
        if k < 0:
            if not grow:
                out[i] = -1
                continue
            slots[-1 - k] = n_keys
            key_hash[n_keys] = h
            p = key_ptr[n_keys]
            key_bytes[p:p + n] = words[a:a + n]
            key_ptr[n_keys + 1] = p + n
            drop[n_keys] = 0
            k = n_keys
            n_keys += 1
        if mark_drop:
            drop[k] = 1
            out[i] = k
        else:
            out[i] = -1 if drop[k] else k
    return n_keys


@njit(cache=True, nogil=True)
def rehash(slots, key_hash, n_keys):
    """Place keys ``0 .. n_keys-1`` into ``slots`` (all -1, a power of two longer than ``n_keys``) by their hashes."""
    mask = slots.shape[0] - 1
    for k in range(n_keys):
        s = key_hash[k] & mask
        while slots[s] >= 0:
            s = (s + 1) & mask
        slots[s] = k


@njit(cache=True, nogil=True, inline="always")
def _lower_is(buf, at, word):
    """Whether ``buf[at:at + len(word)]`` is ``word`` (lower-case ASCII letters) in either case."""
    for j in range(word.shape[0]):
        if buf[at + j] | 32 != word[j]:
            return False
    return True


_WWW = np.frombuffer(b"www", np.uint8)
_MAILTO = np.frombuffer(b"mailto", np.uint8)


@njit(cache=True, nogil=True)
def web_hint(buf, a, e):
    """Whether ``buf[a:e]`` (ASCII) holds what :func:`dptopic.corpus.preprocess.drop_web_addresses` looks for before
    it runs its expression: ``@``, ``://``, or ``www.`` or ``mailto:`` in either case."""
    www, mailto = _WWW, _MAILTO
    for i in range(a, e):
        b = buf[i]
        if b == 64:                                         # @
            return True
        if b == 58:                                         # :
            if i + 2 < e and buf[i + 1] == 47 and buf[i + 2] == 47:
                return True
            if i - 6 >= a and _lower_is(buf, i - 6, mailto):
                return True
        elif b == 46 and i - 3 >= a and _lower_is(buf, i - 3, www):        # .
            return True
    return False


@njit(cache=True, nogil=True)
def tokenize_ascii(buf, starts, ends, doc0, cls, min_length, slots, key_hash, key_ptr, key_bytes, drop, n_keys,
                   grow, out, out_ptr, n_out, check_web, web):
    """Scan documents ``doc0, doc0+1, ...`` (document ``d`` is ``buf[starts[d]:ends[d]]``, ASCII bytes) for runs of
    letters (``cls[b] != 0``, the run read through ``cls``); a run of at least ``min_length`` letters is looked up in
    the table and, when found and not dropped, its key number is written to ``out``; with ``grow`` a run not found
    is added as a new key first. ``out_ptr[d + 1]`` is where document ``d``'s tokens end in ``out`` (each document's
    tokens in the order of the text).

    A document with ``check_web[d]`` that holds a :func:`web_hint` is not read: ``web[d]`` is set and it gets no
    token (its caller drops its web addresses and reads it again).

    With ``grow``, stops before a document whose letters might not fit in the arrays (more new keys than the table
    holds at half load, or more bytes than ``key_bytes`` has left). Returns ``(next document, n_keys, n_out)``: the
    first document not read (``len(starts)`` when all were).

    Longer than 60 lines on purpose: one compiled scan whose position, run and table probe stay in registers through
    the byte loop (the tokenizer's rate against scikit-learn's, docs/research/pipeline.md, is this loop's)."""
    D = starts.shape[0]
    cap_keys = key_hash.shape[0]
    half = slots.shape[0] // 2
    cap_bytes = key_bytes.shape[0]
    for d in range(doc0, D):
        a, e = starts[d], ends[d]
        if check_web[d] and web_hint(buf, a, e):
            web[d] = 1
            out_ptr[d + 1] = n_out
            continue
        if grow:
            most = (e - a + 1) // (min_length + 1)         # tokens this document can hold, all new at worst
            if (n_keys + most >= cap_keys or n_keys + most > half
                    or key_ptr[n_keys] + (e - a) > cap_bytes):
                return d, n_keys, n_out
        i = a
        while i < e:
            c = cls[buf[i]]
            if c == 0:
                i += 1
                continue
            s = i
            h = FNV_OFFSET
            while True:
                h = (h ^ c) * FNV_PRIME
                i += 1
                if i >= e:
                    break
                c = cls[buf[i]]
                if c == 0:
                    break
            n = i - s
            if n < min_length:
                continue
            h = _finish_hash(h)
            k = _find(slots, key_hash, key_ptr, key_bytes, h, buf, s, n, cls)
            if k < 0:
                if not grow:
                    continue
                slots[-1 - k] = n_keys
                key_hash[n_keys] = h
                p = key_ptr[n_keys]
                for j in range(n):
                    key_bytes[p + j] = cls[buf[s + j]]
                key_ptr[n_keys + 1] = p + n
                drop[n_keys] = 0
                k = n_keys
                n_keys += 1
            elif drop[k]:
                continue
            out[n_out] = k
            n_out += 1
        out_ptr[d + 1] = n_out
    return D, n_keys, n_out


@njit(cache=True, nogil=True)
def term_document_counts(ids, ptr, n_keys):
    """Each key's token count and document count over the documents ``ids[ptr[d]:ptr[d + 1]]``."""
    tf = np.zeros(n_keys, np.int64)
    df = np.zeros(n_keys, np.int64)
    last = np.full(n_keys, -1, np.int64)
    for d in range(ptr.shape[0] - 1):
        for i in range(ptr[d], ptr[d + 1]):
            k = ids[i]
            tf[k] += 1
            if last[k] != d:
                last[k] = d
                df[k] += 1
    return tf, df


@njit(cache=True, nogil=True)
def restrict_ids(ids, ptr, remap):
    """The documents ``ids[ptr[d]:ptr[d + 1]]`` with each id ``k`` made ``remap[k]`` and those made -1 left out:
    ``(new ptr, new ids)`` (int64, int32), the order of the tokens kept. Two passes, the ids kept counted first:
    the new ids are allocated at their size (a corpus's whole cut, at 10^6 documents, held the input's size and a
    copy of the kept part besides the input: docs/research/pipeline.md)."""
    D = ptr.shape[0] - 1
    out_ptr = np.zeros(D + 1, np.int64)
    for d in range(D):
        kept = 0
        for i in range(ptr[d], ptr[d + 1]):
            if remap[ids[i]] >= 0:
                kept += 1
        out_ptr[d + 1] = out_ptr[d] + kept
    out = np.empty(out_ptr[D], np.int32)
    n = 0
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            j = remap[ids[i]]
            if j >= 0:
                out[n] = j
                n += 1
    return out_ptr, out


@njit(cache=True, nogil=True)
def take_documents(ids, ptr, index, out_ptr):
    """The token ids of documents ``index`` (in its order; ``ids[ptr[d]:ptr[d + 1]]`` is document ``d``'s) laid end
    to end, ``out_ptr`` their pointers (``out_ptr[i + 1] - out_ptr[i]`` document ``index[i]``'s length): a corpus's
    subset without numpy's gather index, three int64 arrays of the subset's size (about 1 GB for a split of 10^6
    documents: docs/research/pipeline.md)."""
    out = np.empty(out_ptr[index.shape[0]], ids.dtype)
    for i in range(index.shape[0]):
        start = ptr[index[i]]
        at = out_ptr[i]
        for t in range(out_ptr[i + 1] - at):
            out[at + t] = ids[start + t]
    return out
