"""What the ledger knows a release's documents and people by: each document's content digest and each person's id,
keyed with a key of the ledger's own before anything is stored (the digests and ids never leave it as given), and the
rows of a document set with its fingerprint and content name."""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass

from ..errors import DPTopicError, ParameterError
from .pseudonyms import check_context, stored_id


@dataclass
class Documents:
    """What a release read, as the ledger knows it: ``digests``, each document's content digest (unsigned 64-bit, one
    per document; :mod:`dptopic.corpus.identity`); ``persons``, each document's person (strings, or None without a
    person field); ``max_tokens``, its longest document's tokens (a word-level release's group per document). With
    ``digests`` None, ``persons`` alone: a release served to people whose documents never left them (each person's
    reports, ``counts`` of them). ``context``: a served release's route (:mod:`dptopic.dataset_ledger.pseudonyms`):
    a person named by a pseudonym the ledger made for it is the person it stands for; None: no pseudonyms.

    What the trainer reads of each document, beside ``digests`` (:mod:`dptopic.corpus.identity`; each None where the
    input gives no such key, one row per document otherwise): ``bags``, its token-bag digest before the vocabulary's
    cut (uint64[n]); ``read_bags``, its bag of words after the cut, as the trainer reads it (uint64[n]: a count
    matrix or UCI file of the same counts has this digest as its bag); ``bands`` (uint64[n, B]) and ``signatures``
    (uint8[n, K]), its sketch (zero rows: too short to sketch); ``lengths``, its tokens before the cut (int32[n]).
    Which of them make two documents one: :func:`dptopic.dataset_ledger.people.document_links`. ``aliases``: pairs of
    person ids given as one person (:func:`dptopic.dataset_ledger.people.read_aliases`), linked when the release is
    recorded."""

    digests: object = None
    persons: list | None = None
    max_tokens: int | None = None
    counts: list | None = None
    bags: object = None
    read_bags: object = None
    bands: object = None
    signatures: object = None
    lengths: object = None
    context: str | None = None
    aliases: list | None = None

    def __post_init__(self):
        if self.digests is None and not self.persons:
            raise DPTopicError("a release's documents need their digests or their persons.")
        if self.persons is not None:
            odd = next((p for p in self.persons if not isinstance(p, str)), None)
            if odd is not None:
                check_person(odd)
        if self.context is not None:
            check_context(self.context)
        if self.digests is not None and self.persons is not None and len(self.persons) != len(self.digests):
            raise DPTopicError(f"{len(self.persons)} persons for {len(self.digests)} documents: give one per document.")
        n = 0 if self.digests is None else len(self.digests)
        for name in ("bags", "read_bags", "bands", "signatures", "lengths"):
            v = getattr(self, name)
            if v is not None and len(v) != n:
                raise DPTopicError(f"{name} must hold one row per document ({n}), not {len(v)}.")


def check_person(person) -> str:
    """A person's id as the ledger takes it: a string, as every person field holds ids (the corpus readers and a
    fit's ``user_ids`` refuse others); another type is refused in one line, so that ``7`` and ``'7'`` cannot name
    two people, or one person two ways."""
    if not isinstance(person, str):
        raise ParameterError("{person=} is {kind}, not a string: give a person's id as the person field holds it"
                             " (str(id)), so that 7 and '7' cannot name two people.", "person", person,
                             kind=type(person).__name__)
    return person


def person_text(p) -> str:
    """A person id as the ledger keys it: ``str(p)`` in Unicode's NFC form."""
    return unicodedata.normalize("NFC", str(p))


def keyed(key: bytes, data: bytes, what: bytes) -> int:
    """``data`` hashed under the ledger's ``key`` for the purpose ``what`` (a signed 64-bit integer, as stored)."""
    return int.from_bytes(hashlib.blake2b(data, key=key, digest_size=8, person=what).digest(), "little",
                          signed=True)


def person_id(key: bytes, person: str, context: str | None = None) -> int:
    """The id the ledger of ``key`` stores for ``person``; with a served release's ``context``, a pseudonym it made
    for that context is read back to the person it stands for (:mod:`~dptopic.dataset_ledger.pseudonyms`), and any
    other name is keyed as given."""
    if context is not None:
        found = stored_id(key, person, context)
        if found is not None:
            return found
    return keyed(key, person_text(person).encode("utf-8", "surrogatepass"), b"ledger-person")


def document_keys(key: bytes, docs: Documents):
    """Each document's keyed text digest (int64[n]): the id the ledger stores it under unless another key of it finds
    a recorded document (:func:`dptopic.dataset_ledger.linking.resolve_documents`)."""
    import numpy as np  # as below

    from ..kernels.blake2b import keyed_digests  # compiled: keyed() of each digest's 8 bytes, no call per document

    return keyed_digests(key, b"ledger-doc", np.asarray(docs.digests, dtype=np.uint64))


def document_rows(key: bytes, docs: Documents, doc=None):
    """``(fingerprint, content name, rows)``: the document set's rows ``(doc, owner, person, copies)``, keyed (``doc``
    None for a set of people without documents); ``doc``: each document's id as resolved (:func:`document_keys`, by
    default). The rows as a list of tuples: :func:`document_table` gives them as one array."""
    fingerprint, content, table, has_doc = document_table(key, docs, doc)
    return fingerprint, content, [(int(d) if has_doc else None, int(o), int(p), int(n))
                                  for d, o, p, n in table.tolist()]


def document_table(key: bytes, docs: Documents, doc=None):
    """``(fingerprint, content name, table, has_doc)``: :func:`document_rows`' rows as one int64[m, 4] array ``(doc,
    owner, person, copies)`` (a set of 10^6 documents' rows as Python tuples took 200 MB, twice over while they were
    written); ``has_doc``: False for a set of people without documents (its ``doc`` column zeros, stored as NULL)."""
    import numpy as np  # 'dptopic budget' opens its ledger without numpy

    def person_keys(persons) -> np.ndarray:
        index: dict = {}
        codes = np.fromiter((index.setdefault(p, len(index)) for p in persons), dtype=np.int64,
                            count=len(persons))
        ids = np.array([person_id(key, p, docs.context) for p in index], dtype=np.int64)
        return ids[codes] if len(ids) else np.zeros(0, np.int64)

    if docs.digests is None:
        owner = person_keys(docs.persons)
        reps = np.asarray(docs.counts or [1] * len(owner), dtype=np.int64)
        uniq, inverse = np.unique(owner, return_inverse=True)
        table = np.zeros((len(uniq), 4), np.int64)
        table[:, 1], table[:, 2] = uniq, 1
        table[:, 3] = np.bincount(inverse.ravel(), weights=reps, minlength=len(uniq)).astype(np.int64)
        has_doc = False
    else:
        doc = document_keys(key, docs) if doc is None else np.asarray(doc, dtype=np.int64)
        owner = person_keys(docs.persons) if docs.persons is not None else doc
        table = _counted_rows(doc, owner, 1 if docs.persons is not None else 0)
        has_doc = True
    h = hashlib.blake2b(key=key, digest_size=16, person=b"ledger-set")
    h.update(b"docs" if has_doc else b"people")
    h.update(np.ascontiguousarray(table[:, 0] if has_doc else table[:, 1]).tobytes())
    h.update(np.ascontiguousarray(np.where(table[:, 2] > 0, table[:, 1], 0)).tobytes())
    h.update(np.ascontiguousarray(table[:, 3]).tobytes())
    content = hashlib.blake2b(key=key, digest_size=8, person=b"ledger-name")
    ident = table[:, 0] if has_doc else table[:, 1]         # ascending: the rows are sorted by it
    if len(ident):
        first = np.flatnonzero(np.concatenate([[True], ident[1:] != ident[:-1]]))
        content.update(np.ascontiguousarray(ident[first]).tobytes())
        content.update(np.add.reduceat(table[:, 3], first).astype(np.int64).tobytes())
    prefix = "content:" if has_doc else "people:"
    return h.hexdigest(), prefix + content.hexdigest(), table, has_doc


def _counted_rows(doc, owner, person: int):
    """The rows ``(doc, owner, person, copies)`` of a set of documents: each distinct ``(doc, owner)`` once, in their
    order (``np.unique(..., axis=0)``'s), with ``person`` (one value for the set) and how many documents it stands
    for. Sorted in place on copies of the two columns (one, where each document is its own owner), the distinct rows
    and their counts then moved to the front of the copies (``np.unique`` of the rows with their inverse took about
    150 bytes a document, 1.4 GB at 10^7; an index of the first rows and its gathers 40 more)."""
    import numpy as np  # 'dptopic budget' opens its ledger without numpy

    from ..kernels.sketch_pairs import counted_pairs_in_place, sort_pairs_in_place  # why: compiled on first use

    d = np.array(doc, dtype=np.int64)
    if owner is doc:        # each document its own owner: the pairs (d, d), one column sorted
        d.sort()
        o = d
    else:
        o = np.array(owner, dtype=np.int64)
        sort_pairs_in_place(d, o)
    m, counts = counted_pairs_in_place(d, o)
    table = np.empty((m, 4), np.int64)
    table[:, 0], table[:, 1], table[:, 2], table[:, 3] = d[:m], o[:m], person, counts[:m]
    return table
