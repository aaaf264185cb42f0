"""How well a corpus matches a saved model's vocabulary: the figures an audit with a saved model checks before it
attacks, so that it attacks documents like those the model was trained on (an audit of a saved model).

Each reads the documents of the corpus given: for a private corpus, a figure outside any guarantee.
"""
from __future__ import annotations

import numpy as np


def outside_vocabulary_share(vocabulary, corpus) -> float:
    """The share of ``corpus``'s tokens whose word is not in ``vocabulary`` (a model's
    :class:`~dptopic.corpus.Vocabulary`, or any list of words); 0.0 for a corpus of no tokens."""
    if corpus.n_tokens == 0:
        return 0.0
    words = set(vocabulary.words if hasattr(vocabulary, "words") else vocabulary)
    known = np.fromiter((w in words for w in corpus.vocabulary.words), dtype=bool, count=corpus.vocab_size)
    return float(1.0 - known[corpus.word_ids].mean())


def absent_word_share(corpus) -> float:
    """The share of ``corpus``'s vocabulary (read into a model's vocabulary: the model's words) that occurs in no
    document of it."""
    return float((np.bincount(corpus.word_ids, minlength=corpus.vocab_size) == 0).mean())


def vocabulary_overlap(vocabulary, other) -> float:
    """The share of the words of ``vocabulary`` that ``other`` also holds (0.0 for an empty ``vocabulary``)."""
    words = list(vocabulary.words if hasattr(vocabulary, "words") else vocabulary)
    others = set(other.words if hasattr(other, "words") else other)
    return len(set(words) & others) / max(1, len(words))


def as_dense_as_training(model, corpus, limit: float) -> bool | None:
    """Whether ``corpus`` (read in ``model``'s vocabulary) holds at least ``1 - limit`` times as many of the model's
    tokens per document as the model's training documents did; None when the model does not record them (a saved
    Gibbs model does; a private model whose sizes its guarantee does not cover does not)."""
    stats = getattr(model, "training_stats_", None)
    try:
        trained = float(stats["n_tokens"]) / float(stats["n_docs"])
    except (TypeError, KeyError, ValueError, ZeroDivisionError):
        return None
    return corpus.n_docs > 0 and trained > 0 and corpus.n_tokens / corpus.n_docs >= (1 - limit) * trained
