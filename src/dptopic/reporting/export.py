"""What ``dptopic export`` writes, computed from a fitted model (and, for pyLDAvis, documents read in its vocabulary):
pyLDAvis's inputs, the words a document-level release estimated per topic, how much weight lies outside them, and
what of the file the model's privacy card covers."""
from __future__ import annotations

import numpy as np

from ..accounting.card import epsilon_text, privacy_card

DOCUMENT_LEVEL = ("DocDPCooccurrence", "DocDPEM")
"""The trainers whose topics spread weight the release did not estimate per topic over the words outside those it did
(``--kept-words-only``)."""


def pyldavis_data(model, docs, theta=None, words=None, topics=None) -> dict:
    """The five inputs of ``pyLDAvis.prepare``: topic-term and document-topic distributions, document lengths,
    vocabulary and term frequencies; one row per document of ``docs``, so a document with no word of the vocabulary
    has length 0 and the row ``transform`` gives it (the prior mean). ``words`` (word ids): only these words, each
    topic renormalised over them, the lengths and frequencies counting their tokens only (the topic proportions stay
    those of the whole model). ``topics`` (topic ids): only these topics, each document's proportions renormalised
    over them (pyLDAvis asks rows that sum to 1)."""
    phi = np.asarray(model.components_, dtype=np.float64)
    theta = np.asarray(model.transform(docs) if theta is None else theta, dtype=np.float64)
    tf = np.bincount(docs.word_ids, minlength=docs.vocab_size)
    vocab = list(model.vocabulary_.words)
    lengths = docs.doc_lengths
    if words is not None:
        phi, tf, vocab = phi[:, words], tf[words], [vocab[i] for i in words]
        inside = np.zeros(docs.vocab_size, dtype=bool)
        inside[words] = True
        doc = np.repeat(np.arange(docs.n_docs), docs.doc_lengths)
        lengths = np.bincount(doc[inside[docs.word_ids]], minlength=docs.n_docs)
    if topics is not None and len(topics) < phi.shape[0]:   # only these topics: each document renormalised over them
        phi, theta = phi[topics], theta[:, topics]
        total = theta.sum(axis=1, keepdims=True)
        theta = np.divide(theta, total, out=np.full_like(theta, 1.0 / len(topics)), where=total > 0)
    phi = phi / phi.sum(axis=1, keepdims=True)
    return {"topic_term_dists": phi.tolist(), "doc_topic_dists": theta.tolist(),
            "doc_lengths": lengths.astype(int).tolist(), "vocab": vocab, "term_frequency": tf.astype(int).tolist()}


def kept_words(model):
    """The word ids whose weight a document-level model's release estimated per topic, or None for another model.

    ``DocDPCooccurrence``: the words of its co-occurrence release (``kept_words_``; for a saved model, the columns
    whose weight differs between its non-background topics: every other word gets one shared tail, spread by noisy
    word frequency, the same in each topic). ``DocDPEM``: the words with a cell above the denoising threshold in some
    topic (every other cell holds the topic's floor, the same for all its words). Read from the released topics only
    (post-processing)."""
    name = type(model).__name__
    phi = np.asarray(model.components_, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    if name == "DocDPCooccurrence":
        if getattr(model, "kept_words_", None) is not None:
            return np.sort(np.asarray(model.kept_words_, dtype=np.int64))
        themes = phi[[k for k in range(phi.shape[0]) if k not in set(model.background_topic_ids())]]
        if len(themes) < 2:
            return None
        top = themes.max(axis=0)
        return np.flatnonzero(top - themes.min(axis=0) > 1e-6 * top)
    if name == "DocDPEM":
        floor = phi.min(axis=1, keepdims=True)
        return np.flatnonzero((phi > floor * (1 + 1e-9)).any(axis=0))
    return None


def spread_summary(model, words) -> dict:
    """How much of each topic's weight lies outside ``words`` (the kept words), and on each topic's top 10 words."""
    phi = np.asarray(model.components_, dtype=np.float64)
    phi = phi / phi.sum(axis=1, keepdims=True)
    outside = 1.0 - phi[:, words].sum(axis=1)
    top10 = np.sort(phi, axis=1)[:, -10:].sum(axis=1)
    return {"kept_words": int(len(words)), "vocabulary_words": int(phi.shape[1]),
            "weight_outside_kept_words": round(float(outside.mean()), 4),
            "weight_on_top_10_words": round(float(top10.mean()), 4),
            "note": (f"{type(model).__name__} estimated each topic on {len(words)} of the {phi.shape[1]} words; the rest"
                     " of each topic's weight is smoothing the release did not estimate per topic (means over topics"
                     " above): where it is large, pyLDAvis shows flat topics and large perplexities; 'dptopic export"
                     " --kept-words-only' exports the kept words only, each topic renormalised over them")}


def export_privacy(model) -> tuple[dict, str]:
    """What an export says of its model's guarantee, from the model's privacy card: the headline (guarantee, epsilon,
    delta, unit) first and then the rest of the card, as a dict the file carries, so that it says what it is when
    passed on alone, and one sentence on what of the file that guarantee covers."""
    card = privacy_card(getattr(model, "privacy_", None) or {}, type(model).__name__, check=False)
    head = {k: card.get(k) for k in ("guarantee", "epsilon", "delta", "privacy_unit", "epsilon_is", "dp_flavour")}
    head.update({k: card[k] for k in ("reason", "not_covered", "vocabulary_source", "noise_reproducible",
                                      "seed_warning") if card.get(k)})
    head["card_schema"] = card["schema"]
    # and the rest of the card (relation, accounting, theorem, figures, strength, warnings): a file passed on alone
    # carries the whole statement, not a headline a reviewer cannot check
    head.update({k: v for k, v in card.items() if k not in head and k != "schema" and v not in (None, "", [], {})})
    g = card["guarantee"]
    if g == "none":
        return head, ("the model claims no differential privacy guarantee (" + str(card.get("reason") or "")
                      + "): nothing in this file is covered")
    claim = (f"epsilon = {epsilon_text(card['epsilon'])}, delta = {card['delta'] or 0:g} per {card['privacy_unit']}"
             + (", only while the seed stays secret (noise reproducible)" if card.get("noise_reproducible") else ""))
    if g == "full":
        return head, f"topic_term_dists and vocab are released under the model's privacy guarantee ({claim})"
    if card.get("vocabulary_source") == "data":
        return head, (f"topic_term_dists is released under the model's PARTIAL guarantee ({claim}); vocab is NOT"
                      " covered: the model's vocabulary was chosen from its training documents (privacy.not_covered"
                      " lists what else is not)")
    return head, (f"topic_term_dists and vocab are released under the model's PARTIAL guarantee ({claim}): what it"
                  " does not cover is in privacy.not_covered")
