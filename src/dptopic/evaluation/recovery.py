"""Topic recovery against a synthetic ground truth: mean cosine after Hungarian matching."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine similarity of every row of ``a`` with every row of ``b`` (0 for an all-zero row)."""
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    return (a / np.where(na > 0, na, 1.0)) @ (b / np.where(nb > 0, nb, 1.0)).T


def topic_recovery(estimated: np.ndarray, true: np.ndarray, return_matching: bool = False):
    """Mean cosine between true topics and their Hungarian-matched estimates (1 = perfect)."""
    sim = cosine_matrix(np.asarray(true, float), np.asarray(estimated, float))
    rows, cols = linear_sum_assignment(-sim)
    score = float(sim[rows, cols].mean())
    return (score, cols) if return_matching else score


def topic_match(components, vocabulary, reference_components, reference_vocabulary) -> dict:
    """How close one model's topics are to another's, over the words both vocabularies hold: each reference topic is
    matched to one topic of the model (Hungarian matching on cosine similarity, each topic restricted to the shared
    words) and the matched cosines are averaged. 1 means the same topics in some order; random topics score near 0.
    NPMI cannot tell a corpus's own topics from general-language ones (``docs/document_dp.md``); this can, when the
    reference is a model trained on the corpus or on public documents of its domain.

    Returns ``{"match", "matched", "shared_words", "per_topic"}``: the mean cosine, the number of matched pairs
    (the smaller of the two topic counts), the shared words, and each reference topic's cosine with its match
    (``None`` for reference topics left unmatched when the model has fewer topics)."""
    from ..errors import DPTopicError

    vocab, ref_vocab = [str(w) for w in vocabulary], [str(w) for w in reference_vocabulary]
    position = {w: i for i, w in enumerate(vocab)}
    shared = [(position[w], j) for j, w in enumerate(ref_vocab) if w in position]
    if len(shared) < 2:
        raise DPTopicError(f"the two models share {len(shared)} vocabulary words; topics can only be compared over"
                           " words both models know: compare models trained on the same or overlapping vocabularies.")
    mine, theirs = (np.asarray(i, dtype=np.int64) for i in zip(*shared))
    A = np.asarray(components, dtype=np.float64)[:, mine]
    B = np.asarray(reference_components, dtype=np.float64)[:, theirs]
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        raise DPTopicError("topic weights must be finite numbers.")
    sim = cosine_matrix(B, A)
    rows, cols = linear_sum_assignment(-sim)
    per_topic: list = [None] * B.shape[0]
    for r, c in zip(rows, cols):
        per_topic[int(r)] = float(sim[r, c])
    return {"match": float(sim[rows, cols].mean()), "matched": int(len(rows)), "shared_words": int(len(shared)),
            "per_topic": per_topic}


def match_models(model, reference) -> dict:
    """:func:`topic_match` of two fitted models (anything with ``components_`` and ``vocabulary_``)."""
    return topic_match(model.components_, model.vocabulary_, reference.components_, reference.vocabulary_)
