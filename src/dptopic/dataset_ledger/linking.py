"""How the ledger finds a new release's documents and people among those it holds (formats 3 and 4,
:mod:`dptopic.dataset_ledger.store`; the keys stored as :mod:`dptopic.dataset_ledger.key_blocks`): the SQL side of
the pure rules of :mod:`dptopic.dataset_ledger.people`.

A document is what the trainer reads. Besides its text digest, the ledger keeps every key a document is known by
(keyed under its secret, as every id it stores: :func:`~dptopic.dataset_ledger.identity.keyed`): its token bag before
the vocabulary's cut and its bag of words after it (one key space: a count matrix's bag is both), and each band of its
MinHash sketch, with the compact sketch to verify a band's candidates. A new document that shares any exact key with a
recorded one, or whose sketch agrees with a recorded sketch a band names (:data:`~dptopic.dataset_ledger.people.
SKETCH_THRESHOLD`), *is* that document: it is stored under the recorded document's id, so every total that held it
holds it again. Documents of the new set that are one another are joined first (:func:`~dptopic.dataset_ledger.
people.document_links`).

A person is every id that holds the same writing. After the new set's rows are written, ids whose documents are
largely the same (:func:`~dptopic.dataset_ledger.people.id_links`), ids whose folded spelling is the same (case,
Unicode form, white space: :func:`~dptopic.dataset_ledger.people.folded_id`), and ids given as aliases are linked:
the ``links`` table holds each linked id's root (union-find, flattened), and every total and cap reads owners through
it (:func:`person_roots`). Linking errs on the side of charging more: nothing here unlinks.
"""
from __future__ import annotations

import hashlib
import itertools

import numpy as np

from .identity import keyed, person_id, person_text
from .key_blocks import read_pairs, write_pairs
from .people import (
    ID_LINK_PARAMS,
    SKETCH_THRESHOLD,
    band_column,
    components,
    document_links,
    folded_id,
    id_links,
    sketch_agreement,
)

_BAG, _BAND, _TEXT, _FOLD = b"ledger-bag", b"ledger-band", b"ledger-dockey", b"ledger-fold"
CANDIDATES_PER_KEY = 32
"""A band key shared by more recorded documents than this is verified against the first this many of them only (a run
of near-copies that long holds exact copies, joined by their bag digests)."""
UNKNOWN_TOKENS = 1 << 30
"""The length the person rule reads for a document recorded before format 3 (its length not kept): long enough to
count, erring on the side of linking."""


def _keyed_all(key: bytes, values, what: bytes, salt: bytes = b"") -> np.ndarray:
    """Each of ``values`` (uint64) hashed under ``key`` for ``what`` (int64, as stored), ``salt`` before each: the
    first 8 bytes of ``blake2b(salt + value, key=key, person=what, digest_size=8)``, compiled
    (:func:`dptopic.kernels.blake2b.keyed_digests`: no Python call per key)."""
    from ..kernels.blake2b import keyed_digests  # compiled on first use: 'dptopic budget' reads without numba

    return keyed_digests(key, what, values, salt)


def _key_parts(docs) -> list:
    """The parts of :func:`document_keys`, in its order, as ``(what, column)``: the text digests and the bag digests
    before and after the cut (the exact keys, ``_TEXT`` or ``_BAG`` and the array), then each band of the sketch
    (``_BAND`` and its number: band 3 of one sketch never meets band 5 of another). A part's values are taken and
    hashed only when it is read (:func:`_part_keys`): no part's arrays are held beside another's."""
    parts = [(_TEXT, docs.digests)] + [(_BAG, bags) for bags in (docs.bags, docs.read_bags) if bags is not None]
    if docs.bands is not None and docs.signatures is not None:
        parts += [(_BAND, j) for j in range(np.shape(docs.bands)[1])]
    return parts


def _part_keys(key: bytes, docs, part) -> tuple[np.ndarray, np.ndarray]:
    """``(index, keys)`` of one part of :func:`_key_parts`: each nonzero value's document and its keyed digest (the
    text digests: every document's, in order)."""
    what, column = part
    n = len(docs.digests)
    if what == _BAND:
        values = band_column(docs.bands, column)
        salt = bytes([column])
    else:
        values, salt = np.asarray(column, dtype=np.uint64), b""
    index = np.arange(n) if what == _TEXT else np.flatnonzero(values)
    if what != _TEXT:
        values = values[index]
    return index.astype(np.int32 if n < 2**31 else np.int64, copy=False), _keyed_all(key, values, what, salt)


def document_keys(key: bytes, docs) -> tuple[np.ndarray, np.ndarray]:
    """``(index, keys)``: every key each document of ``docs`` (:class:`~dptopic.dataset_ledger.identity.Documents`)
    is known by besides its text, keyed: ``index[i]`` the document of ``keys[i]``. Its text digest (as a key of this
    table), its bag digests (before and after the cut, one key space) and its sketch's bands (each with its band's
    number), the parts of :func:`_key_parts` one after another (the ledger's record reads them a part at a time)."""
    return _joined_keys(key, docs, _key_parts(docs))


def _joined_keys(key: bytes, docs, parts: list) -> tuple[np.ndarray, np.ndarray]:
    """``(index, keys)`` of the parts ``parts`` of :func:`_key_parts`, one after another, each part hashed and copied
    into arrays made at the total's size (a list of parts joined held the keys twice at once: at 10^7 documents the
    record's exact keys, 360 MB more)."""
    n = len(docs.digests)
    total = sum(n if what == _TEXT else int(np.count_nonzero(band_column(docs.bands, c)))
                if what == _BAND else int(np.count_nonzero(np.asarray(c, dtype=np.uint64))) for what, c in parts)
    index = np.empty(total, np.int32 if n < 2**31 else np.int64)
    keys = np.empty(total, np.int64)
    at = 0
    for part in parts:
        i, k = _part_keys(key, docs, part)
        index[at:at + len(k)], keys[at:at + len(k)] = i, k
        at += len(k)
        del i, k
    return index, keys


_PERMUTATIONS: dict = {}


def keyed_sketches(key: bytes, signatures) -> np.ndarray:
    """Compact sketches (uint8[n, K]) as the ledger stores them: each position's byte sent through a permutation of
    0..255 of its own, drawn from the ledger's key (the order of the keyed hashes of the 256 values). Two sketches
    agree at a position exactly when their stored forms do, so verification reads the stored forms as it would the
    raw ones; without the key, a sketch of a guessed document cannot be compared with what the ledger holds."""
    sig = np.asarray(signatures, dtype=np.uint8)
    table = _PERMUTATIONS.get(key)
    if table is None or table.shape[0] < sig.shape[1]:
        K = max(sig.shape[1], 128)
        table = np.empty((K, 256), np.uint8)
        for j in range(K):
            h = [hashlib.blake2b(bytes([j % 256, j // 256, v]), key=key, digest_size=8, person=b"ledger-sketch")
                 .digest() for v in range(256)]
            table[j, np.argsort(np.frombuffer(b"".join(h), dtype=np.uint64), kind="stable")] = np.arange(256)
        _PERMUTATIONS.clear()
        _PERMUTATIONS[key] = table
    return table[np.arange(sig.shape[1])[None, :], sig]


def resolve_documents(tx, key: bytes, docs, doc: np.ndarray, record: bool = True, blocks: bool = True) -> np.ndarray:
    """Each document of ``docs`` as the ledger will store it: ``doc`` (its keyed text digest) replaced by a recorded
    document's id where any of its keys, or its sketch, finds one (module note), and by one id for the documents of
    the set that are one document; with ``record``, the new keys and sketches recorded (``tx``: the debit's
    transaction). The keys are hashed a part at a time (:func:`_key_parts`), never the whole set's at once, and not
    looked up in a ledger that holds none. ``blocks``: the ledger has format 4's key blocks (a format 3 ledger read
    without upgrading has its rows only)."""
    n = len(doc)
    doc = np.asarray(doc, dtype=np.int64)        # read, never written: the caller's array, not a copy of it
    if docs.digests is None or not n:
        return doc
    group = _groups(docs)
    parts = _key_parts(docs)
    n_exact = sum(1 for p in parts if p[0] != _BAND)
    rec_key, rec_doc = read_pairs(tx, blocks)
    none = np.iinfo(np.int64).max
    found = np.full(n, none, np.int64)
    if len(rec_key):
        hits = []          # each band part's hits: the document, and the run of the recorded keys it names
        for p, part in enumerate(parts):
            index, keys = _part_keys(key, docs, part)
            lo, hi = _runs(rec_key, keys)
            hit = np.flatnonzero(hi > lo)
            if p < n_exact:
                np.minimum.at(found, index[hit], rec_doc[lo[hit]])
            elif len(hit):
                hits.append((index[hit], lo[hit], hi[hit]))
        if hits:
            index, lo, hi = (np.concatenate(x) for x in zip(*hits))
            band_hit = np.flatnonzero(found[index] == none)     # a document an exact key found needs no sketch
            if len(band_hit):
                _verify_bands(tx, key, docs, index, band_hit, lo, hi, rec_doc, found)
            del index, lo, hi, band_hit
        del hits
    # a group takes the least recorded document any member found, else its members' least text key (the same
    # documents in any order are stored alike)
    g_found = np.full(n, none, np.int64)
    np.minimum.at(g_found, group, found)
    g_text = np.full(n, none, np.int64)
    np.minimum.at(g_text, group, doc)
    doc = np.where(g_found[group] != none, g_found[group], g_text[group])
    # 8 bytes a document each, and the ledger's documents 8 bytes a key it holds: not held while the keys are recorded
    del group, found, g_found, g_text, rec_doc
    if record:
        _record_keys(tx, key, docs, doc, rec_key)
    return doc


def _groups(docs) -> np.ndarray:
    """The set's documents that are one document (:func:`document_links`): each one's least index."""
    pairs = document_links(docs.digests, docs.bags, docs.read_bags, docs.bands, docs.signatures)
    return components(len(docs.digests), pairs)


def _verify_bands(tx, key: bytes, docs, index, band_hit, lo, hi, rec_doc, found) -> None:
    """The recorded documents a band names for each new sketch, kept where the sketches agree (the threshold)."""
    pairs = []
    for h in band_hit:
        i = int(index[h])
        for j in range(int(lo[h]), min(int(hi[h]), int(lo[h]) + CANDIDATES_PER_KEY)):
            pairs.append((i, int(rec_doc[j])))
    pairs = sorted(set(pairs))
    wanted = sorted({d for _, d in pairs})
    sketches = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        marks = ", ".join("?" * len(part))
        for d, s in tx.all(f"SELECT doc, sketch FROM doc_info WHERE doc IN ({marks}) AND sketch IS NOT NULL",
                           tuple(part)):
            sketches[int(d)] = np.frombuffer(bytes(s), dtype=np.uint8)
    pairs = [(i, d) for i, d in pairs if d in sketches and docs.signatures is not None]
    if not pairs:
        return
    mine = keyed_sketches(key, _rows_of(docs.signatures, [i for i, _ in pairs]))
    theirs = np.stack([sketches[d] for _, d in pairs])
    ok = sketch_agreement(mine, theirs) >= SKETCH_THRESHOLD
    for (i, d), good in zip(pairs, ok):
        if good and d < found[i]:
            found[i] = d


def _rows_of(signatures, rows) -> np.ndarray:
    """Rows ``rows`` of ``signatures`` (uint8): of an array, or of signatures on disk read once in order
    (:meth:`dptopic.corpus.key_file.SignaturesOnDisk.take`), never the whole table."""
    if hasattr(signatures, "chunks"):
        return np.asarray(signatures.take(np.asarray(rows, dtype=np.int64)), dtype=np.uint8)
    return np.asarray(signatures, dtype=np.uint8)[np.asarray(rows, dtype=np.int64)]


ROWS_PER_INSERT = 100_000
"""Rows handed to one ``executemany`` when a new set's keys and documents are recorded: the rows of a large set are
made and written a batch at a time, never held as Python objects all at once (at 10^6 documents a set has 3.5 x 10^7
keys)."""


def _record_keys(tx, key: bytes, docs, doc, rec_key) -> None:
    """The new keys (each with its document as stored; each pair once) and the new documents' lengths and sketches,
    written :data:`ROWS_PER_INSERT` rows at a time. The keys are hashed and written part by part as
    :func:`_key_parts` lists them (the text keys, the bag keys, then each band's), each part's pairs in the order of
    the key, then the document: an equal pair only ever comes from one part (a band's keys are salted with its number),
    so no part's arrays are held beside another's (at 10^6 documents the whole set's keys took 420 MB, their sorted
    copies about 2 GB)."""
    parts = _key_parts(docs)
    n_exact = sum(1 for p in parts if p[0] != _BAND)
    # the text keys, then the bag keys (before and after the cut, one key space: one part, so that a bag that is both
    # is one pair): the two are keyed apart, as each band is, so no pair comes from both (one part of the three keys
    # a document took 600 MB at 10^7 documents, the record's peak)
    for exact in (parts[:1], parts[1:n_exact]):
        if not exact:
            continue
        index, keys = _joined_keys(key, docs, exact)
        owners = doc[index]
        del index
        _record_part(tx, keys, owners, rec_key)
        del keys, owners
    banded = np.zeros(len(doc), bool)      # a sketch is kept where it has a band: noted as each band is read
    for part in parts[n_exact:]:
        index, keys = _part_keys(key, docs, part)
        banded[index] = True
        owners = doc[index]
        del index
        _record_part(tx, keys, owners, rec_key)
        del keys, owners
    lengths = None if docs.lengths is None else np.asarray(docs.lengths, dtype=np.int64)
    from ..kernels.sketch_pairs import sorted_unique  # compiled on first use: 'dptopic budget' reads without numba

    known = set()
    uniq = sorted_unique(doc) if len(rec_key) else doc[:0]     # a ledger without keys has no document's info
    for start in range(0, len(uniq), 500):
        part = [int(d) for d in uniq[start:start + 500]]
        marks = ", ".join("?" * len(part))
        known |= {int(r[0]) for r in tx.all(f"SELECT doc FROM doc_info WHERE doc IN ({marks})", tuple(part))}
    # each new document's first row (its least index), in the order of the document's id: the table's own order
    # (its primary key), so that each row is appended to its b-tree, not put in at a random place (at 10^6, these rows
    # and the release's document rows: 8 -> 4.1 s)
    _, first_row = np.unique(doc, return_index=True)
    if known:
        first_row = first_row[~np.isin(doc[first_row], np.fromiter(known, np.int64, len(known)))]
    sketched = docs.signatures is not None and docs.bands is not None
    sketches = _sketch_batches(docs.signatures, first_row, ROWS_PER_INSERT) if sketched else None
    for start in range(0, len(first_row), ROWS_PER_INSERT):
        rows = first_row[start:start + ROWS_PER_INSERT]
        # each column of the batch made at once (no NumPy scalar a row: the rows' tuples took 1.1 s at 10^6
        # documents); the batch's sketches keyed (a row's keyed form depends on that row alone): never the whole
        # set's at once
        tokens = lengths[rows].tolist() if lengths is not None else itertools.repeat(UNKNOWN_TOKENS)
        sketch = itertools.repeat(None)
        if sketched:
            keyed_sig = np.ascontiguousarray(keyed_sketches(key, next(sketches)))
            blob, width = keyed_sig.tobytes(), keyed_sig.shape[1]
            sketch = [blob[r * width:(r + 1) * width] if b else None for r, b in enumerate(banded[rows].tolist())]
        tx.many("INSERT INTO doc_info (doc, tokens, sketch) VALUES (?, ?, ?)", zip(doc[rows].tolist(), tokens, sketch))


def _sketch_batches(signatures, rows: np.ndarray, size: int):
    """The sketches of the documents ``rows``, ``size`` at a time in that order: signatures left on disk
    (:class:`dptopic.corpus.key_file.SignaturesOnDisk`) are read in order, never whole (the order of the new
    documents' ids is no order of their rows)."""
    if hasattr(signatures, "batches"):
        yield from signatures.batches(rows, size)
        return
    for start in range(0, len(rows), size):
        yield np.asarray(signatures)[rows[start:start + size]]


def _record_part(tx, keys, owners, rec_key) -> None:
    """One part's new ``(key, doc)`` pairs (``keys[i]`` of the document stored as ``owners[i]``; both int64 arrays
    the caller lets go: they are sorted in place), each once, sorted, written as key blocks. Nothing but the two
    arrays is held (at 10^7 documents, an index and sorted copies of the exact keys beside them took 1.2 GB more)."""
    from ..kernels.sketch_pairs import (  # compiled on first use: 'dptopic budget' reads without numba
        among_sorted,
        distinct_pairs_in_place,
        sort_pairs_in_place,
    )

    k = np.ascontiguousarray(keys, dtype=np.int64)
    d = np.ascontiguousarray(owners, dtype=np.int64)
    sort_pairs_in_place(k, d)
    m = distinct_pairs_in_place(k, d)           # each pair once
    k, d = k[:m], d[:m]
    if len(rec_key):        # a key the ledger holds not again (looked up in sorted order, as _runs explains)
        keep = ~among_sorted(k, rec_key)
        k, d = k[keep], d[keep]
    write_pairs(tx, k, d)


def _runs(sorted_keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)``: the run ``sorted_keys[lo[i]:hi[i]]`` equal to each of ``values``, as ``np.searchsorted`` of
    each side gives it. The values are looked up in sorted order, so that each search starts where the last one
    ended (NumPy's binary search keeps its bound for a sorted needle): at 10^6 documents a ledger that holds 3.5 x
    10^7 keys was searched 10^8 times in random order, each search a walk through memory (still searching after
    200 s of CPU when stopped); sorted, the searches walk the recorded keys once (the whole second run: 84 s)."""
    order = np.argsort(values)
    lo = np.empty(len(values), np.int64)
    hi = np.empty(len(values), np.int64)
    v = values[order]
    lo[order] = np.searchsorted(sorted_keys, v, "left")
    hi[order] = np.searchsorted(sorted_keys, v, "right")
    return lo, hi


# ------------------------------------------------------------------------------------------------ people
def person_roots(tx) -> dict:
    """Every linked owner's root (``links``): an owner not in it is its own."""
    return {int(o): int(r) for o, r in tx.all("SELECT owner, root FROM links")}


WHY = ("root", "documents", "case", "alias")
"""Why an id is in ``links``: a root, or linked by its documents, its folded spelling, or an alias given."""


def links_damage(tx) -> str | None:
    """What is wrong with the ``links`` table, or None: every row's reason is one of :data:`WHY`, every root is a
    root (its own row says so), and a row is a root exactly when it names itself."""
    rows = tx.all("SELECT owner, root, why FROM links")
    roots = {}
    for o, r, why in rows:
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (o, r)) or why not in WHY:
            return f"a link row ({str(o)[:20]}, {str(r)[:20]}, {str(why)[:20]!r}) is not an id, a root and a reason"
        roots[o] = (r, why)
    for o, (r, why) in roots.items():
        if (why == "root") != (o == r):
            return f"link row {o} says {why!r} but names {'itself' if o == r else 'another'} as its root"
        if roots.get(r, (None,))[0] != r:
            return f"link row {o} names {r} as its root, which is not a root"
    return None


def link_reasons(tx) -> dict:
    """How many ids were linked to another, by why: ``{"documents": n, "case": n, "alias": n}`` (a root not counted)."""
    out = {"documents": 0, "case": 0, "alias": 0}
    for why, n in tx.all("SELECT why, COUNT(*) FROM links WHERE owner <> root GROUP BY why"):
        out[str(why)] = int(n)
    return out


def _union(tx, roots: dict, pairs, why: str) -> int:
    """Link each pair of owners ``(a, b)``: the lesser root becomes the root of both people's ids (``links`` written,
    ``roots`` kept up to date); returns how many pairs joined two people."""
    joined = 0
    for a, b in pairs:
        a, b = int(a), int(b)
        ra, rb = roots.get(a, a), roots.get(b, b)
        if ra == rb:
            continue
        root, other = min(ra, rb), max(ra, rb)
        tx.run("UPDATE links SET why = ? WHERE owner = ? AND why = 'root'", (why, other))
        tx.run("UPDATE links SET root = ? WHERE root = ?", (root, other))
        for o in [o for o, r in roots.items() if r == other]:
            roots[o] = root
        for o, w in ((root, "root"), (other, why), (a, why), (b, why)):
            if o not in roots:
                tx.run("INSERT INTO links (owner, root, why) VALUES (?, ?, ?)", (o, root, w))
                roots[o] = root
        joined += 1
    return joined


def link_people(tx, key: bytes, docs, sid: int, aliases=()) -> dict:
    """Link the ids of the document set ``sid`` just written (``docs``, its persons as given) to those the ledger
    holds: by their documents, by their folded spelling, and by ``aliases`` (pairs of ids). Returns how many pairs
    each reason joined."""
    roots = person_roots(tx)
    done = {"alias": _union(tx, roots, [(person_id(key, a), person_id(key, b)) for a, b in aliases], "alias")}
    if docs is None or docs.persons is None or docs.context is not None:
        done["documents"] = done["case"] = 0
        return done
    # the same address in another case: each id's folded spelling, keyed
    people = sorted(set(docs.persons))
    owners = [person_id(key, p) for p in people]
    folds = [keyed(key, person_text(folded_id(p)).encode("utf-8", "surrogatepass"), _FOLD) for p in people]
    have = {}
    for start in range(0, len(folds), 500):
        part = folds[start:start + 500]
        marks = ", ".join("?" * len(part))
        for k, o in tx.all(f"SELECT key, owner FROM id_keys WHERE key IN ({marks})", tuple(part)):
            have.setdefault(int(k), set()).add(int(o))
    pairs, new_rows = [], []
    for f, o in zip(folds, owners):
        others = have.get(f, set())
        pairs += [(o, x) for x in others if x != o]
        if o not in others:
            new_rows.append((f, o))
            have.setdefault(f, set()).add(o)
    tx.many("INSERT INTO id_keys (key, owner) VALUES (?, ?)", new_rows)
    done["case"] = _union(tx, roots, pairs, "case")
    done["documents"] = _union(tx, roots, _document_pairs(tx, sid, roots), "documents")
    return done


def _document_pairs(tx, sid: int, roots: dict) -> list:
    """Pairs of owners the person rule links (:func:`id_links`) among the set ``sid``'s owners and every owner who
    holds one of its documents, each with all their documents."""
    mine = tx.all("SELECT DISTINCT doc, owner FROM docs WHERE docset = ? AND person = 1 AND doc IS NOT NULL", (sid,))
    if not mine:
        return []
    every = np.array(tx.all("SELECT DISTINCT doc, owner FROM docs WHERE person = 1 AND doc IS NOT NULL"),
                     dtype=np.int64).reshape(-1, 2)
    mine = np.array(mine, dtype=np.int64)
    root = np.array([roots.get(int(o), int(o)) for o in every[:, 1]], dtype=np.int64)
    shared_docs = np.isin(every[:, 0], mine[:, 0])
    involved = np.unique(root[shared_docs])
    keep = np.isin(root, involved)
    d, r = every[keep, 0], root[keep]
    tokens = {}
    wanted = np.unique(d).tolist()
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        marks = ", ".join("?" * len(part))
        tokens.update({int(a): int(b) for a, b in tx.all(f"SELECT doc, tokens FROM doc_info WHERE doc IN ({marks})",
                                                         tuple(part))})
    n_tokens = np.array([tokens.get(int(x), UNKNOWN_TOKENS) for x in d], dtype=np.int64)
    links = id_links(r, d, n_tokens, **{k: ID_LINK_PARAMS[k] for k in ("min_tokens", "max_holders")})
    return [(int(a), int(b)) for a, b, _, _ in links.tolist()]
