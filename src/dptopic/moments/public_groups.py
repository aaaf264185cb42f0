"""Public word vectors in a co-occurrence release and its topics: word groups, topics over words from topics over
groups, and words outside the release placed by their vectors.

A co-occurrence release over ``n`` words at a fixed epsilon has noise whose spectrum reaches ``2 s sqrt(n)``
(``support`` module): over the few hundred most frequent words a 10,000-document corpus at epsilon 1 leaves only a
handful of topic directions above it, and a topic whose own words are rarer is never seen. Public word vectors
(:mod:`dptopic.corpus.vectors`) say which words are used alike. :func:`word_groups` keeps the ``n_single`` most
frequent words as they are and groups the other words with a vector into ``n_groups`` groups of similar words
(k-means on the unit vectors, each word weighted by its noisy count); the release then counts, in each document,
the occurrences of each group (a word of a group counts for its group), so one document still moves the release by
at most 1 in Frobenius norm, the same sensitivity as a release over words. The rarer words' signal is summed
within their groups, over ``n_single + n_groups`` columns instead of one per word.

Everything here reads public input (the vectors) and differentially private output (the noisy word counts, the
noisy group matrix), never the documents: post-processing (Dwork & Roth 2014, Prop 2.1).

* :func:`word_groups`: the groups (deterministic: k-means from a fixed start);
* :func:`expand_group_topics`: topics over groups to topics over the grouped words, each group's weight in a topic
  shared among its words by their noisy counts;
* :func:`grouped_columns`: the columns of a grouped release (``vectors_route="groups"``) from the first release's
  noisy counts, and :func:`word_topics`: topics over its columns back to topics over words;
* :func:`spread_by_vectors`: topics over kept words carried onto words the release did not hold, each such word
  placed in the topics of its nearest kept words (by vector); :func:`spread_tail` (``vectors_route="spread"``) moves
  each such word by how near its nearest kept words are;
* :func:`prior_topics`: the floor of public knowledge alone, topics that read no document (k-means clusters of the
  vocabulary weighted by the vectors' own frequency order).
"""
from __future__ import annotations

import numpy as np

KMEANS_STARTS = 4
"""k-means restarts (from fixed seeds: the groups are a deterministic function of their inputs)."""


def unit_rows(E: np.ndarray) -> np.ndarray:
    """Each row of ``E`` scaled to unit norm (zero rows stay zero)."""
    E = np.asarray(E, dtype=np.float64)
    n = np.linalg.norm(E, axis=1, keepdims=True)
    return np.divide(E, n, out=np.zeros_like(E), where=n > 0)


def kmeans_labels(U: np.ndarray, k: int, weights: np.ndarray) -> np.ndarray:
    """Labels of k-means on the rows of ``U`` (weighted), from fixed starts."""
    from sklearn.cluster import KMeans  # scikit-learn takes seconds to import
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency: loaded with it

    k = int(min(k, len(U)))
    if k <= 1:
        return np.zeros(len(U), dtype=np.int64)
    # one BLAS thread: k-means' many small products ran 13 times slower with two BLAS libraries' threads competing
    # (24 s against 1.9 s for 2,000 words in 100 groups on a 2-core machine)
    with threadpool_limits(1):
        km = KMeans(n_clusters=k, n_init=KMEANS_STARTS, random_state=0).fit(U, sample_weight=weights)
    return np.asarray(km.labels_, dtype=np.int64)


def word_groups(words: np.ndarray, weights: np.ndarray, E: np.ndarray, found: np.ndarray, n_single: int,
                n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """``(columns, group)``: the words the release holds (sorted word ids) and each one's column (0 .. m-1).

    ``words``: candidate word ids, most frequent first (by noisy count); ``weights``: every word's non-negative weight
    (its noisy count), indexed by word id; ``E``, ``found``: every word's vector and whether it has one. The first
    ``n_single`` candidates are columns of their own; the other candidates with a vector are grouped into at most
    ``n_groups`` columns (k-means on their unit vectors, weighted); candidates without a vector beyond the first
    ``n_single`` are left out (the tail carries them)."""
    words = np.asarray(words, dtype=np.int64)
    single = words[:int(n_single)]
    rest = words[int(n_single):]
    rest = rest[np.asarray(found)[rest]]
    group_of = {int(w): i for i, w in enumerate(single)}
    if len(rest) and n_groups > 0:
        labels = kmeans_labels(unit_rows(E[rest]), n_groups, np.maximum(weights[rest], 1e-12))
        # columns in order of first appearance (the most frequent word of each group first): deterministic
        _, first = np.unique(labels, return_index=True)
        renum = {lab: len(single) + i for i, lab in enumerate(labels[np.sort(first)])}
        for w, lab in zip(rest, labels):
            group_of[int(w)] = renum[int(lab)]
    columns = np.array(sorted(group_of), dtype=np.int64)
    return columns, np.array([group_of[int(w)] for w in columns], dtype=np.int64)


def n_columns(group: np.ndarray) -> int:
    """The release's number of columns."""
    return int(group.max()) + 1 if len(group) else 0


def expand_group_topics(H_groups: np.ndarray, group: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Topics over the grouped words (K x len(group), rows summing to 1) from topics over their groups (K x m):
    each group's weight in a topic is shared among its words in proportion to ``weights`` (one per grouped word;
    their noisy counts), equally where they sum to nothing."""
    group = np.asarray(group, dtype=np.int64)
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    total = np.bincount(group, weights=w, minlength=H_groups.shape[1])
    size = np.bincount(group, minlength=H_groups.shape[1]).astype(np.float64)
    share = np.where(total[group] > 0, w / np.where(total[group] > 0, total[group], 1.0),
                     1.0 / np.maximum(size[group], 1.0))
    H = H_groups[:, group] * share[None, :]
    return H / np.maximum(H.sum(axis=1, keepdims=True), 1e-300)


SPREAD_NEIGHBOURS = 10
SPREAD_SHARPNESS = 20.0
""":func:`spread_by_vectors`: a word outside the release takes the topics of its ``SPREAD_NEIGHBOURS`` nearest kept
words, weighted by ``exp(SPREAD_SHARPNESS * cosine)`` (set on 20 Newsgroups: docs/research/public_vectors.md)."""


def spread_by_vectors(beta: np.ndarray, kept, E: np.ndarray, found: np.ndarray,
                      neighbours: int = SPREAD_NEIGHBOURS, sharpness: float = SPREAD_SHARPNESS) -> np.ndarray:
    """Topics over every word (K x V, rows summing to 1) from ``beta``, whose kept words the release estimated and
    whose other words share a tail alike in every topic (by noisy frequency): each other word with a vector keeps
    its tail total across topics but is placed in the topics of its nearest kept words (``p(k | word)`` averaged
    over them), each topic keeping its own tail total. Words without a vector stay as they were."""
    beta = np.asarray(beta, dtype=np.float64)
    K, V = beta.shape
    kept = np.asarray(kept, dtype=np.int64)
    found = np.asarray(found, dtype=bool)
    rest = np.setdiff1d(np.arange(V), kept)
    rest = rest[found[rest]]
    base = kept[found[kept]]
    if not len(rest) or not len(base) or K < 2:
        return beta
    U = unit_rows(E)
    pk = beta[:, base] / np.maximum(beta[:, base].sum(axis=0, keepdims=True), 1e-300)    # p(k | kept word)
    out = beta.copy()
    k = int(min(neighbours, len(base)))
    for start in range(0, len(rest), 2048):             # blocks: a 50,000-word vocabulary stays in memory
        r = rest[start:start + 2048]
        S = U[r] @ U[base].T
        idx = np.argpartition(-S, k - 1, axis=1)[:, :k]
        w = np.exp(sharpness * (np.take_along_axis(S, idx, axis=1) - 1.0))
        p = np.einsum("rn,krn->kr", w, pk[:, idx]) / np.maximum(w.sum(axis=1), 1e-300)[None, :]
        mass = beta[:, r].sum(axis=0)                  # the word's tail, summed over topics
        out[:, r] = p * mass[None, :]
    # each topic keeps its tail total (the release's share of the kept words stays as it was)
    old, new = beta[:, rest].sum(axis=1), out[:, rest].sum(axis=1)
    out[:, rest] *= (old / np.maximum(new, 1e-300))[:, None]
    return out / out.sum(axis=1, keepdims=True)


def prior_topics(E: np.ndarray, found: np.ndarray, rank: np.ndarray, n_topics: int) -> np.ndarray:
    """Topics from public knowledge alone, the floor a private model is shown beside: the vocabulary's words with a
    vector in ``n_topics`` k-means clusters of their unit vectors (each word weighted by its public frequency, read
    from the vectors' order, Zipf's ``1 / rank``), each topic its cluster's words by that frequency. Reads no
    document."""
    found = np.asarray(found, dtype=bool)
    V = len(found)
    p = 1.0 / np.asarray(rank, dtype=np.float64)
    p /= p.sum()
    idx = np.flatnonzero(found)
    beta = np.tile(1e-6 * p, (int(n_topics), 1))
    if len(idx) >= n_topics:
        labels = kmeans_labels(unit_rows(E[idx]), n_topics, p[idx])
        for k in range(int(n_topics)):
            words = idx[labels == k]
            beta[k, words] = p[words]
    elif V:
        beta[:] = p
    return beta / beta.sum(axis=1, keepdims=True)


SPREAD_CONFIDENCE_POWER = 2.0
"""``vectors_route="spread"``: a word outside the release takes ``c^2`` of its tail from its nearest kept words'
topics and the rest alike in every topic, ``c`` the mean cosine of its 3 nearest kept words (a word with no close kept
word stays near the frequency tail: on the election tweets, 40 kept words, a full spread lowered coverage from 0.80 to
0.74; docs/research/public_vectors.md)."""


def spread_tail(beta, kept, E, found, power: float = SPREAD_CONFIDENCE_POWER) -> np.ndarray:
    """``vectors_route="spread"`` (module note): ``beta`` (K x V, the words outside ``kept`` alike in every topic)
    with each such word's tail moved towards the topics of its nearest kept words, by ``c ** power`` (``c`` the mean
    cosine of its 3 nearest kept words, clipped to [0, 1])."""
    beta = np.asarray(beta, dtype=np.float64)
    V = beta.shape[1]
    kept = np.asarray(kept, dtype=np.int64)
    found = np.asarray(found, dtype=bool)
    rest = np.setdiff1d(np.arange(V), kept)
    base = kept[found[kept]]
    rest = rest[found[rest]]
    if not len(rest) or len(base) < 3:
        return beta
    spread = spread_by_vectors(beta, kept, E, found)
    U = unit_rows(E)
    confidence = np.zeros(V)
    for start in range(0, len(rest), 2048):
        r = rest[start:start + 2048]
        S = U[r] @ U[base].T
        top = -np.partition(-S, 2, axis=1)[:, :3]
        confidence[r] = np.clip(top.mean(axis=1), 0.0, 1.0) ** float(power)
    out = confidence[None, :] * spread + (1.0 - confidence[None, :]) * beta
    return out / out.sum(axis=1, keepdims=True)


GROUPS_PER_KEPT_WORD = 0.5
SINGLES_PER_KEPT_WORD = 0.25
"""``vectors_route="groups"``: of the words the release would keep without vectors (``n_words``), this share stays
words of their own and the others, with every other word that has a vector, go into groups, as many as
``GROUPS_PER_KEPT_WORD`` of those words (at least :data:`MIN_GROUPS`): 50 words and 100 groups on 20 Newsgroups at
epsilon 1 (docs/research/public_vectors.md)."""
MIN_GROUPS = 40


def n_groups_for(n_kept: int) -> int:
    """Groups beside ``n_kept`` kept words (:data:`GROUPS_PER_KEPT_WORD`)."""
    return max(MIN_GROUPS, int(round(GROUPS_PER_KEPT_WORD * n_kept)))


def grouped_columns(eligible, order, counts, sigma_rank: float, n_kept: int, E, found):
    """``(columns, groups)`` of a grouped release: the first :data:`SINGLES_PER_KEPT_WORD` of the ``n_kept`` first
    of ``eligible`` (the words whose noisy count cleared the threshold, decreasing) as they are, and every other word
    of ``order`` (the candidates, decreasing noisy count) with a vector in :func:`n_groups_for` groups, each word
    weighted by its noisy count (post-processing of the first release). A word that never occurs adds nothing to its
    group's counts, so no threshold is needed for the grouped words."""
    weight = np.maximum(np.asarray(counts, dtype=np.float64), 0.0) + 1e-3 * float(sigma_rank)
    singles = np.asarray(eligible, dtype=np.int64)[:max(1, int(round(SINGLES_PER_KEPT_WORD * n_kept)))]
    order = np.asarray(order, dtype=np.int64)
    candidates = np.concatenate([singles, order[~np.isin(order, singles)]])
    return word_groups(candidates, weight, E, found, len(singles), n_groups_for(n_kept))


def word_topics(H, groups, kept, counts, sigma_rank):
    """Topics over the kept words (K x len(kept)) from topics over the release's columns: ``H`` as it is for a
    release over words (``groups`` None), else each group's weight shared among its words by noisy count."""
    if groups is None:
        return H
    weight = np.maximum(np.asarray(counts, dtype=np.float64)[np.asarray(kept)], 0.0) + 1e-3 * float(sigma_rank)
    return expand_group_topics(H, groups, weight)
