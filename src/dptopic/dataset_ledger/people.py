"""Which documents are one document, which person ids are one person, and the alias files that say so: pure rules
over arrays, no SQL (the ledger keeps their results: :mod:`dptopic.dataset_ledger.ledger`). The thresholds are
measured in docs/research/identity.md.

* :func:`document_links`: two documents are one when their text digests are equal, or their token bags (before or
  after the vocabulary's cut) are, or their sketches match (:mod:`dptopic.corpus.identity`): a band in common and an
  estimated Jaccard similarity of their token multisets of at least ``SKETCH_PARAMS["threshold"]``.
* :func:`id_links`: two person ids are one person when a share of one id's documents is found under the other
  (``ID_LINK_PARAMS``): at least ``min_shared`` documents in common, each of at least ``min_tokens`` tokens and held
  by at most ``max_holders`` people (a text many people write, "Fix typo", is no one's evidence), making at least
  ``min_share`` of the documents of the id with fewer.
* :func:`read_aliases`: git's ``.mailmap`` or a two-column CSV, the pairs ``(alias, canonical)`` it gives.
* :class:`UnionFind`: the people the links make.

Linking errs on the side of charging more: every rule here links, none unlinks.
"""
from __future__ import annotations

import csv
import io
import unicodedata
from pathlib import Path

import numpy as np

from ..errors import DPTopicError

SKETCH_THRESHOLD = 0.7
"""The estimated Jaccard similarity at which two sketched documents are one (measured in docs/research/identity.md;
``SKETCH_PARAMS["threshold"]`` of :mod:`dptopic.corpus.identity`, which records it with the sketches' parameters)."""

ID_LINK_PARAMS = {"min_tokens": 3, "max_holders": 3, "min_shared": 3, "min_share": 0.5}
"""The rule of :func:`id_links`, measured on the numpy and scipy commit histories (docs/research/identity.md):
documents of fewer than ``min_tokens`` tokens, or held by more than ``max_holders`` people, are no evidence; two ids
are one person when they share at least ``min_shared`` documents that are, and these make at least ``min_share`` of
the evidence-eligible documents of the id with fewer."""


# ------------------------------------------------------------------------------------------------ union-find
class UnionFind:
    """Disjoint sets over int64 keys (person ids as the ledger keys them, document indices): :meth:`union` joins two
    keys' sets, :meth:`find` gives a set's root (the least key of the set: stable whatever order the unions came in)."""

    def __init__(self, keys=()):
        self._parent: dict[int, int] = {}
        for k in keys:
            self.add(k)

    def add(self, key) -> None:
        """Make ``key`` a set of its own if it is not known yet."""
        self._parent.setdefault(int(key), int(key))

    def __contains__(self, key) -> bool:
        return int(key) in self._parent

    def __len__(self) -> int:
        return len(self._parent)

    def find(self, key) -> int:
        """The root of ``key``'s set (``key`` itself if it is not known)."""
        parent = self._parent
        k = int(key)
        root = parent.get(k, k)
        while parent.get(root, root) != root:
            root = parent[root]
        while k != root and parent.get(k, k) != root:     # path compression
            parent[k], k = root, parent[k]
        return root

    def union(self, a, b) -> bool:
        """Join the sets of ``a`` and ``b`` (adding either if new); True when they were two sets."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            self.add(a)
            return False
        lo, hi = (ra, rb) if ra < rb else (rb, ra)
        self._parent[hi] = lo
        self._parent.setdefault(lo, lo)
        self.add(a)
        self.add(b)
        return True

    def union_pairs(self, pairs) -> int:
        """:meth:`union` of each row ``(a, b)`` of ``pairs``; how many sets were joined."""
        return sum(self.union(a, b) for a, b in np.asarray(pairs, dtype=np.int64).reshape(-1, 2).tolist())

    def roots(self, keys) -> np.ndarray:
        """The root of each key of ``keys`` (int64 array)."""
        return np.fromiter((self.find(k) for k in np.asarray(keys, dtype=np.int64).tolist()), dtype=np.int64,
                           count=len(keys))

    def sets(self) -> dict[int, list[int]]:
        """Every set of more than one key, by its root (keys sorted)."""
        out: dict[int, list[int]] = {}
        for k in sorted(self._parent):
            out.setdefault(self.find(k), []).append(k)
        return {r: ks for r, ks in out.items() if len(ks) > 1}


def components(n: int, pairs) -> np.ndarray:
    """The group of each of ``n`` items joined by ``pairs`` (int64[m, 2] of indices): int64[n], each item's least
    index in its group."""
    label = np.arange(n, dtype=np.int64)
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    if not len(pairs):
        return label
    uf = UnionFind()
    uf.union_pairs(pairs)
    touched = np.unique(pairs)
    label[touched] = uf.roots(touched)
    return label


# ------------------------------------------------------------------------------------------------ documents
def _equal_pairs(keys: np.ndarray) -> np.ndarray:
    """Pairs ``(i, j)`` joining every run of equal nonzero ``keys`` (a star to the run's first index). The nonzero
    keys are sorted with their indexes in place (:func:`dptopic.kernels.sketch_pairs.sort_pairs_in_place`: 12 bytes a
    key, where a stable ``argsort`` and the keys gathered by it took about 50)."""
    from ..kernels.sketch_pairs import sort_pairs_in_place  # compiled on first use: 'dptopic budget' reads none

    keys = np.asarray(keys, dtype=np.uint64)
    idx = np.flatnonzero(keys)
    if len(idx) < 2:
        return np.zeros((0, 2), np.int64)
    order = idx.astype(np.int32) if len(keys) < 2**31 else idx
    del idx
    k = keys[order]
    sort_pairs_in_place(k, order)           # by key, then index: a stable sort's order
    new = np.ones(len(order), bool)
    new[1:] = k[1:] != k[:-1]
    del k
    repeat = np.flatnonzero(~new)
    if not len(repeat):
        return np.zeros((0, 2), np.int64)
    first = np.flatnonzero(new)
    run_start = first[np.searchsorted(first, repeat, side="right") - 1]
    return np.stack([order[run_start], order[repeat]], axis=1).astype(np.int64)


PAIRS_PER_CHECK = 1 << 18
"""Candidate pairs :func:`document_links` bounds at once (each band's pairs are made and bounded a batch at a time: a
large set's candidates run to tens of millions, 3.8 x 10^7 distinct ones at 10^6 planted documents)."""


def _share_score(share: np.ndarray, compact: bool) -> np.ndarray:
    """:func:`sketch_agreement` from the share of positions that agree (float64)."""
    if compact:
        share = (share - 1 / 256) / (1 - 1 / 256)
    return np.clip(share, 0.0, 1.0)


def sketch_agreement(sig_a, sig_b) -> np.ndarray:
    """The estimated Jaccard similarity of the token multisets behind each row of ``sig_a`` and the same row of
    ``sig_b`` (compact signatures, uint8[m, K], or full ones, uint32): the share of positions that agree, corrected for
    8-bit values' chance agreement (2**-8) when the signatures are bytes."""
    a, b = np.asarray(sig_a), np.asarray(sig_b)
    share = (a == b).mean(axis=1) if a.size else np.zeros(len(a))
    return _share_score(share, a.dtype == np.uint8)


def _pair_agreement(sig: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sketch_agreement(sig[a], sig[b])``, bit for bit, without gathering the rows (the compiled count of equal
    positions: :func:`dptopic.kernels.sketch_pairs.agreements`)."""
    from ..kernels.sketch_pairs import agreements  # compiled on first use: 'dptopic budget' reads without numba

    if not sig.size or not len(a):
        return _share_score(np.zeros(len(a)), sig.dtype == np.uint8)
    return _share_score(agreements(sig, a, b) / sig.shape[1], sig.dtype == np.uint8)


HELD_PAIRS = 1 << 20
"""Candidate pairs whose one-bit bound reaches the threshold (:func:`document_links`) held before they are verified
on the signatures together: signatures on disk are read once for each :data:`VERIFIED_ROWS` of their rows."""
VERIFIED_ROWS = 1 << 18
"""Rows of signatures on disk read for one verification of held pairs (32 MiB of 128-byte sketches)."""


def _least_agreement(K: int, compact: bool, threshold: float) -> int:
    """The fewest of ``K`` positions two sketches must agree at for :func:`sketch_agreement` to reach ``threshold``
    (``K + 1`` when none is enough), by the same arithmetic as :func:`_pair_agreement`."""
    ok = _share_score(np.arange(K + 1) / K, compact) >= threshold
    return int(np.argmax(ok)) if ok.any() else K + 1


def _low_bits_of(signatures) -> np.ndarray:
    """:func:`dptopic.kernels.sketch_pairs.low_bits` of ``signatures``: an array, or signatures on disk
    (:class:`dptopic.corpus.key_file.SignaturesOnDisk`) read once in order, a chunk at a time."""
    from ..kernels.sketch_pairs import BOUND_BITS, low_bits  # compiled on first use: 'dptopic budget' reads none

    if not hasattr(signatures, "chunks"):
        return low_bits(signatures)
    out = np.empty((len(signatures), -(-signatures.shape[1] * BOUND_BITS // 64)), np.uint64)
    for start, chunk in signatures.chunks():
        low_bits(chunk.reshape(len(chunk), -1), out=out[start:start + len(chunk)])
    return out


def _verified(signatures, held: list, threshold: float) -> list:
    """The pairs of ``held`` (a list of ``(a, b)`` arrays) whose sketches reach ``threshold``, as int64[m, 2] arrays:
    verified on ``signatures`` as :func:`_pair_agreement` verifies them; signatures on disk read a part at a time,
    the rows of :data:`VERIFIED_ROWS` // 2 pairs at once (:meth:`~dptopic.corpus.key_file.SignaturesOnDisk.take`)."""
    if not held:
        return []
    a = np.concatenate([x for x, _ in held])
    b = np.concatenate([y for _, y in held])
    if isinstance(signatures, np.ndarray):
        ok = _pair_agreement(signatures, a, b) >= threshold
        return [np.stack([a[ok], b[ok]], axis=1).astype(np.int64)]
    from ..kernels.sketch_pairs import sorted_unique  # compiled on first use: 'dptopic budget' reads none

    out, step = [], max(1, VERIFIED_ROWS // 2)
    for at in range(0, len(a), step):
        pa, pb = a[at:at + step], b[at:at + step]
        rows = sorted_unique(np.concatenate([pa, pb]).astype(np.int64), overwrite=True)
        table = signatures.take(rows)
        ok = _pair_agreement(table, np.searchsorted(rows, pa), np.searchsorted(rows, pb)) >= threshold
        out.append(np.stack([pa[ok], pb[ok]], axis=1).astype(np.int64))
    return out


WINDOW = 32
"""Within a band's run of equal values longer than this, each document is verified against the next ``WINDOW`` of
the run only (near-duplicate runs that long are exact copies already joined by their bag digests)."""


def band_column(bands, j: int) -> np.ndarray:
    """Band ``j`` of every document (uint64[n]) of ``bands``: an array (uint64[n, B]), or bands read a band at a time
    (:class:`dptopic.corpus.key_file.BandsOnDisk`, ``column(j)``)."""
    if hasattr(bands, "column"):
        return bands.column(j)
    return np.asarray(bands, dtype=np.uint64)[:, j]


def _band_pairs(bands, keep: np.ndarray | None = None):
    """Each band's candidate pairs, a step of its sorted runs at a time: ``(lo, hi)``, int64 arrays of the documents
    (``lo < hi``) ``step`` places apart (1 to :data:`WINDOW`) in a run of equal values of the band. Within one band
    every pair comes once (each document has one place in the band's order); a pair may come again in another band.
    ``keep``: the documents to pair (bool[n]; the others as if their bands were zero)."""
    from ..kernels.sketch_pairs import sorted_columns  # compiled on first use: 'dptopic budget' reads without numba

    if not bands.size:
        return
    sketched = band_column(bands, 0) != 0
    sketched = np.flatnonzero(sketched if keep is None else sketched & keep)
    if len(bands) < 2**31:      # each band's rows sorted as 4-byte numbers: 12 bytes a document a band, not 16
        sketched = sketched.astype(np.int32)
    # each band sorted with each run of equal values in the documents' order; the next bands are sorted on the
    # other cores while this one's pairs are verified
    for v, docs in sorted_columns(bands, sketched):
        for step in range(1, WINDOW + 1):
            if step >= len(v):
                break
            same = np.flatnonzero(v[step:] == v[:-step])
            if not len(same):
                break
            a, b = docs[same], docs[same + step]
            yield np.minimum(a, b), np.maximum(a, b)


def sketch_candidates(bands) -> np.ndarray:
    """Pairs ``(i, j)``, ``i < j``, of documents whose bands (uint64[n, B]; zero rows: not sketched) agree in some
    band: the candidates of locality-sensitive hashing, to be verified by :func:`sketch_agreement`; each once, in
    the order of ``(i, j)``."""
    from ..kernels.sketch_pairs import sorted_unique  # not np.unique: its hash table (the kernel's module note)

    bands = np.asarray(bands, dtype=np.uint64)
    n = np.int64(len(bands))
    out = [lo * n + hi for lo, hi in _band_pairs(bands)]        # each pair as one int64 code, i * n + j
    if not out:
        return np.zeros((0, 2), np.int64)
    codes = sorted_unique(np.concatenate(out), overwrite=True)  # sorted: the pairs in the order of (i, j)
    del out
    pairs = np.empty((len(codes), 2), np.int64)
    np.floor_divide(codes, n, out=pairs[:, 0])
    np.remainder(codes, n, out=pairs[:, 1])
    return pairs


def document_links(digests=None, bags=None, read_bags=None, bands=None, signatures=None,
                   threshold: float = SKETCH_THRESHOLD) -> np.ndarray:
    """Which of ``n`` documents are one document: int64[m, 2] pairs ``(i, j)`` of indices whose connected components
    are the documents (not every pair of a component: a star to its first member for equal keys).

    Each argument is an array over the same ``n`` documents, or None: ``digests``, text digests (uint64[n]);
    ``bags``, token-bag digests before the vocabulary's cut; ``read_bags``, bag digests after it (what the trainer
    reads); ``bands`` (uint64[n, B]) and ``signatures`` (uint8[n, K]), the sketches (:func:`dptopic.corpus.identity.
    token_keys`). A zero digest, or a row of zero bands, is no key. Text digests match text digests; bag digests before
    and after the cut match one another (a count matrix's bag is both); two sketched documents match when a band agrees
    and :func:`sketch_agreement` reaches ``threshold``. Pure: no state, no SQL.

    Each band's candidates are first bounded on the lowest bit of each position
    (:func:`dptopic.kernels.sketch_pairs.low_bits`, 16 bytes a document), and only the pairs whose bound reaches the
    threshold are verified on their signatures: the links of verifying every candidate. ``signatures`` may also be
    signatures on disk (:class:`dptopic.corpus.key_file.SignaturesOnDisk`), read once in order for the bound and then
    the passing pairs' rows, :data:`VERIFIED_ROWS` at a time: never whole."""
    found = []
    if digests is not None:
        found.append(_equal_pairs(digests))
    bag_kinds = [np.asarray(x, dtype=np.uint64) for x in (bags, read_bags) if x is not None]
    if bag_kinds:
        n = len(bag_kinds[0])
        pairs = _equal_pairs(np.concatenate(bag_kinds))
        found.append(pairs % n)
    del bag_kinds       # bags on disk (a large corpus's) read again where needed: not held through the bands
    if bands is not None and signatures is not None and len(bands):
        if not hasattr(bands, "column"):        # bands on disk stay there, read a band at a time
            bands = np.asarray(bands, dtype=np.uint64)
        keep = None
        if bags is not None:     # one sketch per distinct bag: equal bags are joined above, and share every band
            b = np.asarray(bags, dtype=np.uint64)
            keep = np.zeros(len(b), bool)
            keep[np.unique(b, return_index=True)[1]] = True       # (the index, 8 bytes a document, not held)
            keep |= b == 0
            del b
        # each band's candidates bounded as they are made on one bit a position (an eighth of the signatures,
        # which stay where they are), and only those the bound lets through verified on the signatures
        # (:func:`sketch_candidates` less the one list of every distinct pair: a pair two bands name is verified twice,
        # with the same answer)
        from ..kernels.sketch_pairs import bounded_agreements  # compiled on first use: 'dptopic budget' reads none

        sig = signatures if hasattr(signatures, "chunks") else np.asarray(signatures)   # on disk, it stays there
        K = int(sig.shape[1]) if sig.ndim == 2 else 0
        need = _least_agreement(K, np.dtype(sig.dtype) == np.uint8, threshold) if K else 0
        packed = _low_bits_of(sig)
        held, n_held = [], 0
        for lo, hi in _band_pairs(bands, keep):      # (a copy of the bands with the others zeroed took 256 MB)
            for at in range(0, len(lo), PAIRS_PER_CHECK):
                a, b = lo[at:at + PAIRS_PER_CHECK], hi[at:at + PAIRS_PER_CHECK]
                maybe = bounded_agreements(packed, K, a, b) >= need
                if maybe.any():
                    held.append((a[maybe], b[maybe]))
                    n_held += int(np.count_nonzero(maybe))
                if n_held >= HELD_PAIRS:
                    found.extend(_verified(sig, held, threshold))
                    held, n_held = [], 0
        found.extend(_verified(sig, held, threshold))
        del packed
    pairs = np.concatenate(found) if found else np.zeros((0, 2), np.int64)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(np.sort(pairs, axis=1), axis=0).astype(np.int64) if len(pairs) else pairs.astype(np.int64)


# ------------------------------------------------------------------------------------------------ people
def id_links(persons, groups, n_tokens, known: UnionFind | None = None, *, min_tokens: int | None = None,
             max_holders: int | None = None, min_shared: int | None = None,
             min_share: float | None = None) -> np.ndarray:
    """Which person ids are one person by the documents they hold: int64[m, 4] rows ``(a, b, shared, fewer)``, ``a``
    and ``b`` two ids (as given in ``persons``, or their roots in ``known``) that ``shared`` documents join, ``fewer``
    the evidence-eligible documents of the id with fewer.

    ``persons`` (int64[n]): each document's person id (the ledger's keyed id, or any integer code); ``groups``
    (int64[n]): each document's group (:func:`components` of :func:`document_links`: equal groups are one document);
    ``n_tokens`` (int[n]): each document's tokens before the vocabulary's cut; ``known``: ids already one person
    (aliases, earlier links): counted as one holder, never linked again. A document counts only with at least
    ``min_tokens`` tokens and at most ``max_holders`` people holding it (``ID_LINK_PARAMS`` by default): a short text
    or one many people write is no evidence. Two ids are linked when they share at least ``min_shared`` counted
    documents and these make at least ``min_share`` of the counted documents of the id with fewer. Pure."""
    p = dict(ID_LINK_PARAMS)
    p.update({k: v for k, v in dict(min_tokens=min_tokens, max_holders=max_holders, min_shared=min_shared,
                                    min_share=min_share).items() if v is not None})
    persons = np.asarray(persons, dtype=np.int64)
    groups = np.asarray(groups, dtype=np.int64)
    n_tokens = np.asarray(n_tokens, dtype=np.int64)
    if not (len(persons) == len(groups) == len(n_tokens)):
        raise DPTopicError(f"id_links needs one person, group and length per document, not {len(persons)},"
                           f" {len(groups)} and {len(n_tokens)}.")
    if known is not None and len(known):
        uniq, inv = np.unique(persons, return_inverse=True)
        persons = known.roots(uniq)[inv]
    eligible = n_tokens >= p["min_tokens"]
    held = np.unique(np.stack([groups[eligible], persons[eligible]], axis=1), axis=0)   # (group, person), once
    if not len(held):
        return np.zeros((0, 4), np.int64)
    person_ids, docs_per_person = np.unique(held[:, 1], return_counts=True)
    g_ids, g_start, holders = np.unique(held[:, 0], return_index=True, return_counts=True)
    shared_groups = (holders >= 2) & (holders <= p["max_holders"])
    rows = []
    for h in range(2, int(p["max_holders"]) + 1):        # the groups of h holders: their pairs of holders
        starts = g_start[shared_groups & (holders == h)]
        if not len(starts):
            continue
        members = held[starts[:, None] + np.arange(h)[None, :], 1]       # sorted within a group (np.unique)
        for i in range(h):
            for j in range(i + 1, h):
                rows.append(np.stack([members[:, i], members[:, j]], axis=1))
    if not rows:
        return np.zeros((0, 4), np.int64)
    pairs, shared = np.unique(np.concatenate(rows), axis=0, return_counts=True)
    n_docs = docs_per_person[np.searchsorted(person_ids, pairs)]
    fewer = n_docs.min(axis=1)
    ok = (shared >= p["min_shared"]) & (shared >= p["min_share"] * fewer)
    return np.concatenate([pairs[ok], shared[ok, None], fewer[ok, None]], axis=1).astype(np.int64)


def folded_id(person: str) -> str:
    """A person id as :func:`case_links` compares it: NFKC, case-folded, white space stripped."""
    return unicodedata.normalize("NFKC", str(person)).casefold().strip()


def case_links(ids) -> list[tuple[str, str]]:
    """Pairs ``(id, first)`` of the ids of ``ids`` (strings) that are one id in another case or Unicode form
    (``Jane@Example.org`` and ``jane@example.org``): each joined to the first of its kind in ``ids``' order."""
    first: dict[str, str] = {}
    out = []
    for i in ids:
        f = first.setdefault(folded_id(i), i)
        if f != i:
            out.append((i, f))
    return sorted(set(out))


# ------------------------------------------------------------------------------------------------ alias files
def _name_and_email(text: str):
    """git's ``parse_name_and_email`` (mailmap.c): the name before the first ``<`` and the address up to the next
    ``>``, and the rest of the line; None when the text holds no ``<...>``."""
    left = text.find("<")
    right = text.find(">", left + 1) if left >= 0 else -1
    if right < 0:
        return None
    return text[:left].strip(), text[left + 1:right].strip(), text[right + 1:]


def _mailmap_pairs(text: str, where: str):
    """``(line, alias, canonical)`` of a ``.mailmap``, read as git reads it (gitmailmap(5)): ``Proper <proper@x>
    <commit@x>`` or ``Proper <proper@x> Commit <commit@x>`` maps the commit address to the proper one; a line with one
    address (a name for an address) or an empty one (``<>``: names alone) maps no id; what follows the last address is
    ignored, as git ignores it. A line (not a ``#`` comment) with no ``<address>`` is refused."""
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        first = _name_and_email(s)
        if first is None:
            raise DPTopicError(f"{where}, line {n}: {s[:60]!r} is not a .mailmap line (Proper Name <proper@address>"
                               " [Commit Name] <commit@address>): mend or remove it.")
        second = _name_and_email(first[2])
        proper, commit = first[1], "" if second is None else second[1]
        if proper and commit and commit != proper:     # else a name for an address, or names alone (<>)
            yield n, commit, proper


_HEADERS = {("alias", "canonical"), ("alias", "person"), ("id", "person"), ("from", "to")}


def _csv_pairs(text: str, where: str):
    """``(line, alias, canonical)`` of a two-column CSV (an optional header ``alias,canonical``)."""
    for n, row in enumerate(csv.reader(io.StringIO(text)), 1):
        if not row or all(not c.strip() for c in row) or row[0].lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in row]
        if n == 1 and tuple(c.lower() for c in cells) in _HEADERS:
            continue
        if len(cells) != 2 or not all(cells):
            raise DPTopicError(f"{where}, line {n}: {','.join(row)[:60]!r} is not two ids (alias,canonical): give"
                               " two non-empty columns a line.")
        if cells[0] != cells[1]:
            yield n, cells[0], cells[1]


def read_aliases(path) -> list[tuple[str, str]]:
    """The pairs ``(alias, canonical)`` an alias file gives: git's ``.mailmap`` format (each commit address mapped to
    its proper one), or a two-column CSV (a file named ``*.csv``: ``alias,canonical`` a line). Refused in one line that
    names the file and the line: a malformed line, an id mapped to two different ids, a circle (an id that maps back
    to itself through others). A chain (a -> b, b -> c) is kept: its ids are one person. Ids are compared as written
    (the ledger folds none: :func:`case_links` joins ids that differ only in case)."""
    p = Path(path)
    where = f"alias file {str(path)!r}"
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DPTopicError(f"{where} does not exist: give an existing .mailmap or two-column CSV file.") from None
    except IsADirectoryError:
        raise DPTopicError(f"{where} is a folder: give a .mailmap or two-column CSV file.") from None
    except UnicodeDecodeError:
        raise DPTopicError(f"{where} is not UTF-8 text: give a .mailmap or two-column CSV file.") from None
    rows = list(_csv_pairs(text, where) if p.suffix.lower() == ".csv" else _mailmap_pairs(text, where))
    target: dict[str, tuple[str, int]] = {}
    for n, alias, canonical in rows:
        if alias in target and target[alias][0] != canonical:
            raise DPTopicError(f"{where}, line {n}: {alias!r} is mapped to {canonical!r} here and to"
                               f" {target[alias][0]!r} on line {target[alias][1]}: map each id to one id.")
        target.setdefault(alias, (canonical, n))
    for start in target:                 # a circle: following the map from an id comes back to it
        seen, at = {start}, start
        while at in target:
            at = target[at][0]
            if at == start:
                raise DPTopicError(f"{where}, line {target[start][1]}: {start!r} maps back to itself through"
                                   f" {len(seen)} id(s) (a circle): map each id to its canonical id, once.")
            if at in seen:
                break
            seen.add(at)
    return sorted({(a, c) for _, a, c in rows})
