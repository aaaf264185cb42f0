"""Matching topics to topics: recovery of a synthetic ground truth (mean cosine after Hungarian matching), and the
match between two models' topics over their shared words."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from ..errors import DPTopicError


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (0 for an all-zero row)."""
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    return (a / np.where(na > 0, na, 1.0)) @ (b / np.where(nb > 0, nb, 1.0)).T


def _topic_matrix(x, what: str) -> np.ndarray:
    """``x`` as a K x V float array of topic weights, or a one-line error saying what is wrong."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise DPTopicError(f"{what} must be a K x V array of topic-word weights (numbers).") from None
    if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 1:
        raise DPTopicError(f"{what} must be a K x V array of topic-word weights with at least one topic and one"
                           f" word; got shape {a.shape}.")
    if not np.all(np.isfinite(a)):
        raise DPTopicError(f"topic weights must be finite numbers: {what} hold NaN or infinity.")
    if np.any(a < 0):
        # cosine over signed vectors (log-probabilities, say) is no similarity of topics
        raise DPTopicError(f"topic weights must be non-negative (probabilities or counts): {what} hold negative"
                           " numbers; for log-probabilities pass np.exp of them.")
    return a


def topic_recovery(estimated: np.ndarray, true: np.ndarray, return_matching: bool = False):
    """Mean cosine between true topics and their Hungarian-matched estimates (1 = perfect)."""
    est, tru = _topic_matrix(estimated, "the estimated topics"), _topic_matrix(true, "the true topics")
    if est.shape[1] != tru.shape[1]:
        raise DPTopicError(f"the estimated topics have {est.shape[1]} words and the true ones {tru.shape[1]}: give"
                           " both over the same vocabulary.")
    sim = cosine_matrix(tru, est)
    rows, cols = linear_sum_assignment(-sim)
    score = float(sim[rows, cols].mean())
    return (score, cols) if return_matching else score


def aligned_topics(components, vocabulary, reference_components, reference_vocabulary):
    """Two models' topics over the words both vocabularies hold (matched by word string): ``(A, B, n_shared)``, the
    model's topics and the reference's, each restricted to the shared words in the same column order, or a one-line
    error (shapes, a vocabulary of the wrong length or with a word twice, fewer than two shared words)."""
    vocab, ref_vocab = [str(w) for w in vocabulary], [str(w) for w in reference_vocabulary]
    comp = _topic_matrix(components, "the model's topics")
    ref_comp = _topic_matrix(reference_components, "the reference's topics")
    for who, c, v in (("model", comp, vocab), ("reference", ref_comp, ref_vocab)):
        if c.shape[1] != len(v):        # else the words would be read against the wrong columns, silently
            raise DPTopicError(f"the {who}'s topics have {c.shape[1]} words but its vocabulary {len(v)}: give each"
                               " model's topics with its own vocabulary, in the same order.")
        if len(set(v)) != len(v):
            seen: set = set()
            twice = next(w for w in v if w in seen or seen.add(w))
            raise DPTopicError(f"the {who}'s vocabulary lists {twice[:40]!r} more than once: a word must name one"
                               " column of the topics.")
    position = {w: i for i, w in enumerate(vocab)}
    shared = [(position[w], j) for j, w in enumerate(ref_vocab) if w in position]
    if len(shared) < 2:
        raise DPTopicError(f"the two models share {len(shared)} vocabulary words; topics can only be compared over"
                           " words both models know: compare models trained on the same or overlapping vocabularies.")
    mine, theirs = (np.asarray(i, dtype=np.int64) for i in zip(*shared))
    A, B = comp[:, mine], ref_comp[:, theirs]
    return A, B, int(len(shared))


def topic_match(components, vocabulary, reference_components, reference_vocabulary) -> dict:
    """How close one model's topics are to another's, over the words both vocabularies hold: each reference topic is
    matched to one topic of the model (Hungarian matching on cosine similarity, each topic restricted to the shared
    words) and the matched cosines are averaged. 1 means the same topics in some order; random topics score near 0.
    NPMI cannot tell a corpus's own topics from general-language ones (``docs/document_dp.md``); this can, when the
    reference is a model trained on the corpus or on public documents of its domain.

    Returns ``{"match", "matched", "shared_words", "per_topic"}``: the mean cosine, the number of matched pairs
    (the smaller of the two topic counts), the shared words, and each reference topic's cosine with its match
    (``None`` for reference topics left unmatched when the model has fewer topics)."""
    A, B, n_shared = aligned_topics(components, vocabulary, reference_components, reference_vocabulary)
    sim = cosine_matrix(B, A)
    rows, cols = linear_sum_assignment(-sim)
    per_topic: list = [None] * B.shape[0]
    for r, c in zip(rows, cols):
        per_topic[int(r)] = float(sim[r, c])
    return {"match": float(sim[rows, cols].mean()), "matched": int(len(rows)), "shared_words": n_shared,
            "per_topic": per_topic}


def match_models(model, reference) -> dict:
    """:func:`topic_match` of two fitted models (anything with ``components_`` and ``vocabulary_``)."""
    return topic_match(model.components_, model.vocabulary_, reference.components_, reference.vocabulary_)
