"""UMass topic coherence (Mimno et al. 2011).

``C(t) = Σ_{m=2..M} Σ_{l<m} log((D(v_m, v_l) + 1) / D(v_l))`` over the topic's top-M
words in decreasing probability (or in the display order of a model that ranks its words by relevance). ``variant="mimno"`` divides by the document
frequency of the higher-ranked word ``v_l`` (default); ``variant="authors"``
divides by the lower-ranked ``v_m`` and skips pairs with ``D(v_m) = 0``, as the
code behind Manzonelli et al. does. Under ``"mimno"`` a topic whose ranked word ``v_l`` occurs in no reference
document has no score (NaN per topic; the mean is over the others, with a warning): skipping its pairs would score it
0, the best value.
"""
from __future__ import annotations

import numpy as np

from ..errors import DPTopicError, ParameterError
from .topic_quality import _components, _reference_corpus, defined_mean, top_words


def umass_coherence(components, corpus, top_n: int = 10, variant: str = "mimno", per_topic: bool = False):
    """Average (or per-topic) UMass coherence of topics on ``corpus`` (the reference documents).

    ``components``: a fitted model, or its K×V topic-word matrix. ``corpus``: as for
    :func:`~dptopic.evaluation.npmi_coherence`: a Corpus in the topics' vocabulary, or, with a fitted model, texts,
    token lists or a count matrix read in its vocabulary. With a model the corpus's words are checked against the
    model's; a bare matrix carries no words, so only their number can be."""
    if variant not in ("mimno", "authors"):
        raise DPTopicError(f"invalid variant={variant!r}: must be 'mimno' or 'authors'.")
    corpus = _reference_corpus(components, corpus)
    shown = components                  # a model ranks its words in its own display order (top_words)
    components = _components(components)
    if components.shape[1] != corpus.vocab_size:
        raise DPTopicError(f"vocabulary mismatch: topics have {components.shape[1]} words, the corpus {corpus.vocab_size}.")
    if not (isinstance(top_n, (int, np.integer)) and not isinstance(top_n, bool) and 2 <= top_n <= components.shape[1]):
        raise ParameterError("invalid {top_n=}: must be an integer in [2, {most}].", "top_n", top_n,
                             most=components.shape[1])
    if corpus.n_docs == 0 or corpus.n_tokens == 0:     # every topic would be undefined, with a warning blaming it
        raise DPTopicError("empty reference corpus: give held-out documents with words of the model's vocabulary.")
    B = (corpus.to_bow() > 0).astype(np.float64).tocsc()
    scores = []
    for top in top_words(shown, top_n):
        sub = B[:, top]
        co = (sub.T @ sub).toarray()
        df = np.diag(co)
        s = 0.0
        for m in range(1, top_n):
            for l in range(m):  # noqa: E741 - the paper's index
                denom = df[l] if variant == "mimno" else df[m]
                if denom == 0 and variant == "authors":
                    continue        # the code behind Manzonelli et al. skips the pair, reproduced as it is
                if denom == 0:      # a word in no reference document: log((0 + 1) / 0), undefined for the topic
                    s = np.nan      # (skipping its pairs scored such a topic 0, the best value)
                    break
                s += np.log((co[m, l] + 1.0) / denom)
            if np.isnan(s):
                break
        scores.append(s)
    scores = np.array(scores, dtype=np.float64)
    return scores if per_topic else defined_mean(scores, "UMass")
