"""The held-out split of a training run: which documents train and which are held out, and the held-out copies of
training documents left out of the evaluation."""
from __future__ import annotations

import numpy as np

from ..errors import DPTopicError

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


def _bags(corpus) -> list:
    """Each document's bag of words, as bytes that compare equal for the same bag."""
    return [np.sort(corpus.word_ids[corpus.doc_ptr[d]:corpus.doc_ptr[d + 1]]).tobytes() for d in range(corpus.n_docs)]


def without_copies(test, train):
    """``(held_out, n_left_out)``: the held-out documents that repeat no training document, and how many were left
    out. A file may hold the same text several times and a split sends copies to both sides: evaluated on, a copy
    would read training words. When every held-out document is a copy, all are kept (``n_left_out`` 0).

    Under a private model, ``n_left_out`` is an exact statistic of the private corpus: outside the guarantee.
    """
    seen = set(_bags(train))
    keep = [d for d, b in enumerate(_bags(test)) if b not in seen]
    if not keep or len(keep) == test.n_docs:
        return test, 0
    return test.subset(keep), test.n_docs - len(keep)
