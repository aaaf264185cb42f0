"""How the field measures topics: NPMI and C_v coherence (Röder, Both & Hinneburg, WSDM 2015, with the
definitions of gensim's ``CoherenceModel``), topic diversity (Dieng, Ruiz & Blei 2020), and UMass as gensim
reports it (the mean over word pairs).

Every measure reads the topics' top words, in the order a reader is shown them (most probable first, or most relevant
first for a model that ranks by relevance: Sievert & Shirley 2014, :func:`relevance`), and a *reference corpus* the
user names, normally held-out
documents. Probabilities are estimated either over boolean documents (``window=None``: P(w) is the share of
documents containing w, P(w, w') the share containing both) or over boolean sliding windows of ``window``
consecutive tokens (gensim's estimate; a document shorter than the window, an empty one too, is one window). Our
corpora keep token order but drop words outside the vocabulary, so a window spans ``window`` in-vocabulary tokens,
where gensim's spans raw tokens; with ``window`` at least the longest document the two coincide with the boolean-document estimate.
Where a window is shorter than a document, gensim's accumulator also marks a word absent when one of its occurrences
slides out, even if another is still inside the window, until the next one enters; here a word counts while any
occurrence is inside.

* NPMI(w, w') = log(P(w, w') + ε) / (P(w) P(w')) / −log(P(w, w') + ε), ε = 1e-12; a topic's NPMI is the mean over
  its ordered pairs of distinct top words (gensim's ``c_npmi``; boolean documents by default here, as the
  document-level DP issue measures it; ``window=10`` for gensim's default);
* C_v: for each top word w, the cosine between its vector of NPMIs with all top words and the sum of those
  vectors over the topic's top words; a topic's C_v is the mean over its words (gensim's ``c_v``, window 110);
* diversity: the share of distinct words among all topics' top 25;
* UMass (gensim's ``u_mass``): mean over pairs (w_m, w_l), l < m in rank order, of
  log((D(w_m, w_l)/D + ε) / (D(w_l)/D)) over boolean documents.

Two words that occur in every reference document (or window) get NPMI 1, complete co-occurrence, where gensim's
ε-smoothed formula gives −1 (log(1 + ε) / −log(1 + ε)), the value of words that never co-occur.
A top word absent from the reference corpus has P(w) = 0; its pairs get NPMI −1 (the value for words that never
co-occur) instead of gensim's division by zero (``c_npmi`` +inf, ``c_v`` NaN, a ``u_mass`` pair 0). For C_v such a word has no context: it is left out of the other words'
vectors and its own cosine counts as 0; a topic with fewer than 2 top words in the reference has none; Mimno's UMass of a topic whose ranked word w_l occurs nowhere is
undefined (log of 1/0). Those topics are left out of the means, with a warning, rather than scored best.
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

from ..corpus import Corpus, as_corpus
from ..corpus.preprocess import warn_if_other_tokenizer
from ..errors import DPTopicError, ParameterError
from ..kernels.window_counts import window_cooccurrence

EPS = 1e-12


def _components(model_or_components) -> np.ndarray:
    comp = getattr(model_or_components, "components_", model_or_components)
    try:
        comp = np.asarray(comp, dtype=np.float64)
    except (TypeError, ValueError):
        raise DPTopicError("topics must be a fitted model or a K x V topic-word matrix of numbers.") from None
    if comp.ndim != 2 or comp.shape[0] < 1 or comp.shape[1] < 2:
        raise DPTopicError("topics must be a fitted model or a K x V topic-word matrix with at least 2 words.")
    if not np.all(np.isfinite(comp)):
        # a NaN sorts last and an inf first: the top words, and every measure read from them, would be arbitrary
        bad = int((~np.isfinite(comp)).any(axis=1).sum())
        raise DPTopicError(f"topic weights must be finite numbers: {bad} of {comp.shape[0]} topics hold NaN or"
                           " infinity, so their top words are undefined.")
    if np.any(comp < 0):
        # topic-word weights are probabilities or counts; a negative one (log-probabilities, noise not yet
        # post-processed) is some other matrix, whose ranking need not be the topics'
        bad = int((comp < 0).any(axis=1).sum())
        raise DPTopicError(f"topic weights must be non-negative (probabilities or counts): {bad} of {comp.shape[0]}"
                           " topics hold negative numbers; for log-probabilities pass np.exp of them.")
    return comp


PROBABILITY = {"by": "probability"}
"""The ranking of a topic's words by p(w | k) alone: every model's unless it names another (``word_ranking``)."""


def relevance(components, lam: float) -> np.ndarray:
    """Each word's relevance to each topic (Sievert & Shirley 2014): ``lam log p(w|k) + (1 - lam) log(p(w|k) / p(w))``,
    K x V, with ``p(w|k)`` the rows of ``components`` normalised and ``p(w)`` their mean (every topic weighed alike:
    read from the topics alone, never from documents). ``lam = 1`` ranks by probability; lower values favour the words
    a topic holds more than the others do over the words every topic holds."""
    comp = _components(components)
    lam = float(lam)
    if not 0.0 <= lam <= 1.0:
        raise DPTopicError(f"invalid relevance lambda={lam!r}: must be in [0, 1].")
    phi = comp / np.maximum(comp.sum(axis=1, keepdims=True), 1e-300)
    # a word no topic holds gets the floor of every topic: it ranks last (log 0 would be -inf, its lift NaN)
    phi = np.maximum(phi, 1e-300)
    marginal = phi.mean(axis=0)
    return lam * np.log(phi) + (1.0 - lam) * (np.log(phi) - np.log(marginal))


def word_ranking(model_or_components) -> dict:
    """How a model ranks its topics' words for display, as a dict: ``{"by": "probability"}`` (the default, and a bare
    matrix's), or ``{"by": "relevance", "lambda": lam}`` where the model says so (its ``word_ranking``)."""
    ranking = getattr(model_or_components, "word_ranking", None)
    return check_ranking(ranking) if ranking is not None else dict(PROBABILITY)


def check_ranking(ranking) -> dict:
    """``ranking`` as a dict (:func:`word_ranking`); ``"probability"``, ``"relevance"`` (its default lambda,
    :data:`RELEVANCE_LAMBDA`) or a dict are accepted; anything else is refused in one line."""
    if isinstance(ranking, str) and ranking in ("probability", "relevance"):
        ranking = {"by": ranking, **({"lambda": RELEVANCE_LAMBDA} if ranking == "relevance" else {})}
    if isinstance(ranking, dict) and ranking.get("by") == "probability":
        return dict(PROBABILITY)
    lam = ranking.get("lambda") if isinstance(ranking, dict) else None
    if (isinstance(ranking, dict) and ranking.get("by") == "relevance" and isinstance(lam, (int, float, np.floating))
            and not isinstance(lam, bool) and 0.0 <= float(lam) <= 1.0):
        return {"by": "relevance", "lambda": float(lam)}
    raise DPTopicError(f"invalid word ranking {ranking!r}: give 'probability', 'relevance' or"
                       " {'by': 'relevance', 'lambda': a number in [0, 1]}.")


RELEVANCE_LAMBDA = 0.6
"""The weight of ``log p(w|k)`` in a relevance ranking when none is given (Sievert & Shirley 2014 found 0.6 best for
their readers)."""


def ranking_text(ranking) -> str:
    """What a reader is told of a ranking: "ranked by probability" or "ranked by relevance, λ = 0.6"."""
    r = check_ranking(ranking)
    return "ranked by probability" if r["by"] == "probability" else f"ranked by relevance, λ = {r['lambda']:g}"


def ranking_scores(model_or_components, ranking=None) -> np.ndarray:
    """K x V scores whose decreasing order is the display order of each topic's words: ``components`` themselves
    under the probability ranking, :func:`relevance` under a relevance ranking. ``ranking`` None: the model's own
    (:func:`word_ranking`)."""
    r = word_ranking(model_or_components) if ranking is None else check_ranking(ranking)
    comp = _components(model_or_components)
    return comp if r["by"] == "probability" else relevance(comp, r["lambda"])


def top_words(components, top_n: int, least: int = 2, ranking=None) -> np.ndarray:
    """K x top_n word ids, first in the display order (ties by word id): most probable first, or, for a model that
    ranks by relevance (:func:`word_ranking`) or a ``ranking`` given, most relevant first."""
    comp = _components(components)
    if not (isinstance(top_n, (int, np.integer)) and least <= top_n <= comp.shape[1]):
        raise ParameterError("invalid {top_n=}: must be an integer in [{least}, {most}].", "top_n", top_n,
                             least=least, most=comp.shape[1])
    return np.argsort(-ranking_scores(components, ranking), axis=1, kind="stable")[:, :top_n]


def cooccurrence(reference, word_ids, window: int | None = None):
    """``(N, single, pair)``: the number of documents (or windows), and how many contain each word of
    ``word_ids`` / each pair (``pair[i, i] = single[i]``)."""
    word_ids = np.asarray(word_ids, dtype=np.int64)
    if reference.n_docs == 0 or reference.n_tokens == 0:
        raise DPTopicError("empty reference corpus: give held-out documents with words of the model's vocabulary.")
    if window is None:
        B = (reference.to_bow()[:, word_ids] > 0).astype(np.float64)
        pair = np.asarray((B.T @ B).todense())
        return float(reference.n_docs), np.diag(pair).copy(), pair
    if isinstance(window, (bool, np.bool_)) or not (isinstance(window, (int, np.integer)) and window >= 1):
        raise DPTopicError(f"invalid window={window!r}: give a number of tokens >= 1, or None for boolean documents.")
    slot = np.full(reference.vocab_size, -1, np.int64)
    slot[word_ids] = np.arange(len(word_ids))
    n, single, pair = window_cooccurrence(reference.word_ids, reference.doc_ptr, slot, len(word_ids), int(window))
    return float(n), single.astype(np.float64), pair.astype(np.float64)


def _npmi_matrix(N, single, pair) -> np.ndarray:
    p1, p12 = single / N, pair / N
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log((p12 + EPS) / np.outer(p1, p1))
        out = pmi / -np.log(p12 + EPS)
    out[(p1[:, None] == 0) | (p1[None, :] == 0)] = -1.0
    # both words in every document (window): complete co-occurrence, NPMI's upper bound 1 (the limit as P(w, w') =
    # P(w) = P(w') -> 1, and the value of NPMI(w, w) for every other word). The smoothed ratio above reads
    # log(1 + eps) / -log(1 + eps) = -1 there, the value of words that never co-occur (gensim's c_npmi does too)
    out[pair >= N] = 1.0
    return out


def _reference_corpus(model_or_components, reference):
    """``reference`` as a Corpus in the topics' vocabulary: a Corpus read in it, or, with a fitted model, raw texts,
    token lists or a document-term matrix, read in the model's vocabulary as ``transform`` reads them."""
    V = _components(model_or_components).shape[1]
    vocab = getattr(model_or_components, "vocabulary_", None)
    if not isinstance(reference, Corpus):
        if vocab is None:
            raise DPTopicError("a reference given as texts needs the fitted model (its vocabulary reads them): pass"
                               " the model, or a Corpus read in the topics' vocabulary.")
        if isinstance(reference, (list, tuple)) and reference and all(isinstance(t, str) for t in reference):
            # as `dptopic evaluate` reads a file into a model: only tokenised (the vocabulary says which words count,
            # each in its own case), and documents with none of its words dropped (NPMI counts documents)
            warn_if_other_tokenizer(getattr(model_or_components, "tokenizer_", None), stacklevel=4, words=vocab)
            return Corpus.from_texts(list(reference), vocabulary=vocab, lowercase="match")
        return as_corpus(reference, vocabulary=vocab)
    if reference.vocab_size != V or (vocab is not None and reference.vocabulary.words != list(vocab)):
        what = (f"{reference.vocab_size} words, the model {V}" if reference.vocab_size != V else
                f"the same number of words, {V}, but not the same words in the same order")
        raise DPTopicError(f"the reference corpus is not in the model's vocabulary ({what}): pass its raw texts"
                           f" instead, or reference.restrict(model.vocabulary_).")
    return reference


def _per_topic_stats(components, reference, top_n, window):
    reference = _reference_corpus(components, reference)
    tops = top_words(components, top_n)
    uniq, inv = np.unique(tops, return_inverse=True)
    N, single, pair = cooccurrence(reference, uniq, window)
    if window is not None:
        # an empty document is one (empty) window, as gensim counts it and as the boolean estimate counts it as a
        # document: so a window covering every document gives the boolean-document figures, empty documents or not
        N += float(np.count_nonzero(reference.doc_lengths == 0))
    return tops, inv.reshape(tops.shape), _npmi_matrix(N, single, pair), (N, single, pair)


def npmi_coherence(components, reference, top_n: int = 10, window: int | None = None, per_topic: bool = False):
    """Mean NPMI over each topic's ordered pairs of distinct top words; the mean over topics (or per topic)."""
    _, idx, M, _ = _per_topic_stats(components, reference, top_n, window)
    off = ~np.eye(top_n, dtype=bool)
    scores = np.array([M[np.ix_(ix, ix)][off].mean() for ix in idx])
    return scores if per_topic else float(scores.mean())


def cv_coherence(components, reference, top_n: int = 10, window: int | None = 110, per_topic: bool = False):
    """C_v: mean over each topic's top words of cos(v(w), Σ_{w' in topic} v(w')), v(w) = NPMI(w, ·) over the top
    words. A top word in no reference document has no context: it is left out of the vectors and its cosine counts as
    0; a topic with fewer than 2 top words in the reference has no C_v (NaN per topic; the mean is over the others,
    with a warning)."""
    _, idx, M, (_, single, _) = _per_topic_stats(components, reference, top_n, window)
    scores = []
    for ix in idx:
        present = single[ix] > 0
        if present.sum() < 2:             # no context to compare: C_v says nothing of this topic
            scores.append(math.nan)
            continue
        # an absent word has no context (its NPMIs are all the -1 of "never seen"): it is left out of the context
        # vectors, whose shared -1 entries for it would make every pair of them look alike, and its own cosine
        # counts as 0, never the perfect agreement a set of identical -1 vectors would give
        seen = ix[present]
        V = M[np.ix_(seen, seen)]         # row i: the context vector of word i over the topic's words seen
        total = V.sum(axis=0)
        norms = np.linalg.norm(V, axis=1) * np.linalg.norm(total)
        with np.errstate(invalid="ignore", divide="ignore"):
            cos = (V @ total) / norms
        scores.append(float(np.nan_to_num(cos, nan=0.0).sum() / len(ix)))
    scores = np.array(scores)
    return scores if per_topic else defined_mean(scores, "C_v")


def defined_mean(scores: np.ndarray, what: str) -> float:
    """The mean over the topics whose score is defined (NaN: some top word occurs in no reference document, so the
    measure says nothing of that topic), with a warning naming how many were left out; NaN when none is defined."""
    undefined = int(np.isnan(scores).sum())
    if undefined:
        rest = "the mean is over the others" if undefined < len(scores) else "so is the mean"
        warnings.warn(f"{undefined} of {len(scores)} topics have top words that occur in no reference document: their"
                      f" {what} is undefined and {rest} (a reference corpus from another domain?).", UserWarning,
                      stacklevel=3)
    return float(np.nanmean(scores)) if undefined < len(scores) else math.nan


def quiet_absent_words():
    """A context in which :func:`defined_mean`'s warning on top words absent from the reference is not shown: for a
    caller that says it itself (``topic_quality``'s ``absent_top_words``, ``evaluate``'s note, ``train``'s figure)."""
    @contextlib.contextmanager
    def quiet():
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*occur in no reference document", category=UserWarning)
            yield

    return quiet()


def absent_top_word_topics(components, reference, top_n: int = 10) -> int:
    """How many topics have a top word that occurs in no document of ``reference`` (a Corpus in their vocabulary)."""
    tops = top_words(components, top_n)
    df = np.asarray((reference.to_bow() > 0).sum(axis=0)).ravel()
    return int((df[tops] == 0).any(axis=1).sum())


def umass_pairwise_mean(components, reference, top_n: int = 10, per_topic: bool = False):
    """UMass as gensim's ``u_mass`` reports it: the mean over ranked pairs of log((D(w_m,w_l)/D + ε)/(D(w_l)/D))."""
    _, idx, _, (N, single, pair) = _per_topic_stats(components, reference, top_n, None)
    scores = []
    for ix in idx:
        vals = []
        for m in range(1, top_n):
            for l in range(m):  # noqa: E741 - the paper's index
                dl = single[ix[l]]
                vals.append(math.log((pair[ix[m], ix[l]] / N + EPS) / (dl / N)) if dl > 0 else math.log(EPS))
        scores.append(float(np.mean(vals)))
    scores = np.array(scores)
    return scores if per_topic else float(scores.mean())


def umass_mimno_sum(model, reference, top_n: int = 10) -> float | None:
    """UMass coherence as Mimno et al. (2011) define it (the sum over ranked top-word pairs, averaged over topics) of
    a fitted model's topics on ``reference``, by the model's own ``coherence``; ``None`` where it is undefined (every
    topic has a ranked top word in no document of ``reference``) or the model has no ``coherence``. Topics with
    absent top words are left out of the average without a warning: the caller says so (``topic_quality``'s
    ``absent_top_words``)."""
    if not hasattr(model, "coherence"):
        return None
    with quiet_absent_words():
        mimno = model.coherence(reference, top_n=top_n)
    return None if math.isnan(mimno) else float(mimno)


def topic_diversity(components, top_n: int = 25) -> float:
    """Share of distinct words among all topics' top ``top_n`` words (1: no word shared; Dieng et al. 2020), in the
    model's display order (:func:`top_words`)."""
    comp = _components(components)
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)) or top_n < 1:
        # int() would read True as 1 and 2.5 as 2, and fail on NaN with a bare ValueError
        raise ParameterError("invalid {top_n=}: must be an integer >= 1 (more than the {words} words of the"
                             " vocabulary reads them all).", "top_n", top_n, words=comp.shape[1])
    top_n = min(int(top_n), comp.shape[1])
    tops = top_words(components, top_n, least=1)
    return float(len(np.unique(tops)) / tops.size)


def size_text(reference) -> str:
    """A reference corpus's size in words: "1 document, 2 tokens", "400 documents, 12338 tokens"."""
    d, t = int(reference.n_docs), int(reference.n_tokens)
    return f"{d} document{'' if d == 1 else 's'}, {t} token{'' if t == 1 else 's'}"


def topic_quality(model_or_components, reference, top_n: int = 10, window: int | None = None,
                  reference_name: str = "reference corpus") -> dict:
    """NPMI, C_v, diversity and UMass (gensim's pairwise mean) of a model's topics on ``reference``."""
    reference = _reference_corpus(model_or_components, reference)
    comp = _components(model_or_components)
    # every measure reads the top words a reader is shown: in the model's display order (word_ranking)
    shown = model_or_components if hasattr(model_or_components, "components_") else comp
    npmi = npmi_coherence(shown, reference, top_n, window, per_topic=True)
    with quiet_absent_words():              # said once below, as a field, rather than as a warning per measure
        cv = cv_coherence(shown, reference, top_n, 110)
    absent = absent_top_word_topics(shown, reference, top_n)
    out = {
        "npmi": float(npmi.mean()),
        "npmi_per_topic": [float(x) for x in npmi],
        "npmi_reference": "boolean documents" if window is None else f"sliding windows of {window} tokens",
        "c_v": None if math.isnan(cv) else cv,
        "c_v_reference": "sliding windows of 110 tokens",
        "diversity": topic_diversity(shown, 25),
        "umass_pairwise_mean": umass_pairwise_mean(shown, reference, top_n),
        "umass_form": "mean over ranked word pairs, as gensim's u_mass (boolean documents)",
        "top_n": int(top_n),
        "top_words": ranking_text(word_ranking(shown)),
        "reference": f"{reference_name}: {size_text(reference)}",
    }
    if absent:
        out["absent_top_words"] = (f"{absent} of {comp.shape[0]} topics have top words that occur in no reference"
                                   " document: NPMI counts their pairs as never co-occurring (-1), C_v leaves those"
                                   " words out (a topic with fewer than 2 left has none: null if no topic has), and"
                                   " the reference may be from another domain")
    return out
