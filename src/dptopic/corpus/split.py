"""The held-out split of a training run: which documents train and which are held out, and the held-out copies of
training documents left out of the evaluation."""
from __future__ import annotations

import numpy as np

from ..errors import DPTopicError
from ..kernels.sketch_pairs import among_sorted
from .identity import mix64

SPLITS = ("stable", "position", "person")


def held_out_split(corpus, test_size: float = 0.2, by: str = "stable", user_ids=None):
    """``(train, test)``: the training and held-out parts of ``corpus``; ``test_size`` 0 (or None) holds nothing out:
    ``(corpus, None)``.

    ``by="stable"`` (:meth:`Corpus.stable_split`): a document's side depends on its own words, so adding one document
    moves no other (the split for document-level guarantees). ``by="position"`` (:meth:`Corpus.position_split`): its
    side depends on its position alone, so replacing one token's word moves no document (the split for word-level
    guarantees). ``by="person"`` (:meth:`Corpus.person_split`): a keyed hash of each document's person (``user_ids``,
    or the corpus's own) decides the side of all their documents, so adding or removing one person moves no other
    person's document (the split for user-level guarantees). :func:`dptopic.training.by_unit.split_for` picks the one a
    model's guarantee needs.
    """
    if by not in SPLITS:
        raise DPTopicError(f"invalid by={by!r}: give 'stable' (a document's side follows its words), 'position'"
                           " (it follows its position) or 'person' (it follows its person's id).")
    if user_ids is not None and by != "person":
        raise DPTopicError(f"user_ids= splits by person: give by='person' with it (by={by!r} reads no person).")
    if not test_size:
        return corpus, None
    if by == "person":
        return corpus.person_split(test_size, user_ids=user_ids)
    return corpus.position_split(test_size) if by == "position" else corpus.stable_split(test_size)


def _bags(corpus, docs=None) -> list:
    """Each document's bag of words (``docs``: those documents only), as bytes that compare equal for the same bag."""
    if docs is not None:        # those documents' tokens alone (a split's part gathers no other document's)
        corpus = corpus.subset(np.asarray(docs, dtype=np.int64))
    ptr, ids = corpus.doc_ptr, corpus.word_ids
    return [np.sort(ids[ptr[d]:ptr[d + 1]]).tobytes() for d in range(corpus.n_docs)]


HASH_BLOCK = 1 << 16
"""Documents whose bag hashes :func:`_bag_hashes` takes at once (one word hash a token of the block held)."""


def _bag_hashes(corpus) -> np.ndarray:
    """A 64-bit hash of each document's bag of word ids (a sum of the ids' hashes, so any order of the same bag hashes
    alike), taken :data:`HASH_BLOCK` documents at a time."""
    out = np.empty(corpus.n_docs, np.uint64)
    a = 0
    for ptr, ids in corpus.token_blocks(HASH_BLOCK):     # a split's part: each block gathered, none held
        with np.errstate(over="ignore"):
            h = mix64((ids.astype(np.uint64) + np.uint64(1)) * np.uint64(0x9E3779B97F4A7C15))
        cs = np.zeros(len(h) + 1, np.uint64)
        np.cumsum(h, out=cs[1:])        # sums modulo 2**64
        out[a:a + len(ptr) - 1] = cs[ptr[1:]] - cs[ptr[:-1]]
        a += len(ptr) - 1
    return mix64(out)


def without_copies(test, train):
    """``(held_out, n_left_out)``: the held-out documents that repeat no training document, and how many were left
    out. A file may hold the same text several times and a split sends copies to both sides: evaluated on, a copy
    would read training words. When every held-out document is a copy, all are kept (``n_left_out`` 0).

    The bags are compared by a hash first (arrays, a few bytes a document), and only the held-out documents whose
    hash a training document shares are compared word for word: the same documents are left out as by comparing
    every bag, without holding every training bag.

    Under a private model, ``n_left_out`` is an exact statistic of the private corpus: outside the guarantee.
    """
    h_train, h_test = _bag_hashes(train), _bag_hashes(test)
    # one sorted copy searched (np.isin sorted both sides joined, with an index: about 40 bytes a document)
    candidates = np.flatnonzero(among_sorted(h_test, np.sort(h_train)))
    copy = np.zeros(test.n_docs, bool)
    if len(candidates):
        shared = np.flatnonzero(among_sorted(h_train, np.sort(h_test[candidates])))
        seen = set(_bags(train, shared.tolist()))
        copy[candidates] = [b in seen for b in _bags(test, candidates.tolist())]
    keep = np.flatnonzero(~copy)
    if not len(keep) or len(keep) == test.n_docs:
        return test, 0
    return test.subset(keep), test.n_docs - len(keep)
