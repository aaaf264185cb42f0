"""RRP ("random response with a priori"): FedLDA's perturbation of reported words (Wang, Tong & Shi 2020).

With probability ``eta`` a reported word is replaced by a word drawn from the current model, with the
rare words excluded; a padding entry is always replaced, and so (with the default ``"floor"`` rule)
is a rare word, which can then never be reported as itself. :func:`replacement_table` builds the kept sets and their distributions, :func:`rrp_perturb`
applies the compiled kernel and returns ``(reported_words, event)``. The kernel's coin is a uniform multiple of
2^-53, and the replacement probability handed to it is ``ceil(eta 2^53) / 2^53``
(:func:`~dptopic.accounting.fedlda.realised_eta`): realised exactly, never below ``eta``, so a word is never kept
more often than the guarantee allows.

Rare-word exclusion (``exclusion``):

* ``"none"`` (default, sound): no word is excluded; the replacement is uniform over the whole
  vocabulary (k-ary randomized response, ``eta = V / (e^eps + V - 1)``), public and data-independent, so
  every word, rare or not, keeps its chance ``1 - eta + eta / V`` of being reported as itself and
  every likelihood ratio is at most ``e^eps`` (padding included). ``variant`` and ``Q`` do not matter.
* ``"floor"`` (default, sound): keep the most probable words whose renormalised probability is at
  least ``delta0`` (Theorem 1's floor), so that the likelihood-ratio bound holds by construction for
  any model. For ``variant="another"`` the distribution is also mixed with the uniform one on the kept
  set when one word would be too probable (``q_max <= cap``); see ``docs/fedlda.md``.
* ``"tail"`` (the poster's rule): drop the least probable words whose total mass is at most ``delta``
  and keep the rest; a rare word is perturbed with probability ``eta`` like any other (so it may be
  reported as itself); the poster's ``(eps, 2 delta)`` claim rests on Zipf-distributed probabilities.
"""
from __future__ import annotations

import math
import secrets

import numpy as np

from ..accounting.fedlda import (
    EXCLUSIONS,
    VARIANTS,
    check_epsilon,
    realised_eta,
    rrp_event,
    subset_inclusion,
    subset_size,
)
from ..accounting.fedlda import delta0 as _delta0
from ..errors import DPTopicError
from ..kernels import kernel_state, rrp_replace, subset_select, subset_signal_add
from .frequency_oracle import COIN_BITS, keep_threshold


def cap_report(epsilon: float, eta: float) -> float:
    """Largest allowed kept-word probability for ``variant="another"`` (keeps every ratio <= e^eps)."""
    if epsilon > 700:
        return 1.0
    e = math.exp(epsilon)
    return min(1.0 - 1.0 / e, (1.0 - eta) * e, 1.0 - eta / e)


def replacement_table(Q, epsilon: float, delta: float, gamma: float = 1.0, variant: str = "another",
                      exclusion: str = "floor"):
    """Kept words and their cumulative distributions, one row per replacement distribution.

    ``Q`` is ``R × V`` (rows: non-negative word weights, e.g. ``Σ_j θ_ij Φ_j`` or ``Φ_k``). Returns
    ``(kept_words, kept_cdf, kept_len, kept_mask, kept_prob)`` with arrays padded to the longest row.
    """
    Q = np.atleast_2d(np.asarray(Q, dtype=np.float64))
    if Q.ndim != 2 or not np.all(np.isfinite(Q)) or np.any(Q < 0) or np.any(Q.sum(axis=1) <= 0):
        raise DPTopicError("invalid replacement weights: need a R×V array of finite, non-negative weights with positive row sums.")
    if exclusion not in EXCLUSIONS:
        raise DPTopicError(f"invalid exclusion={exclusion!r}: must be one of {', '.join(EXCLUSIONS)}.")
    if variant not in VARIANTS:
        raise DPTopicError(f"invalid variant={variant!r}: must be one of {', '.join(VARIANTS)}.")
    R, V = Q.shape
    if exclusion == "none":  # uniform over every word: nothing excluded, nothing data-dependent
        if V < 2:
            raise DPTopicError("the vocabulary needs at least two words to randomize a report.")
        kept_words = np.tile(np.arange(V, dtype=np.int32), (R, 1))
        kept_prob = np.full((R, V), 1.0 / V)
        kept_cdf = np.cumsum(kept_prob, axis=1)
        kept_cdf[:, -1] = 1.0
        return (kept_words, kept_cdf, np.full(R, V, dtype=np.int64), np.ones((R, V), dtype=np.bool_), kept_prob)
    d0 = _delta0(delta, gamma)
    e = realised_eta(epsilon, delta, gamma, variant)     # the probability the kernel realises (see rrp_perturb)
    order = np.argsort(-Q, axis=1, kind="stable")
    qs = np.take_along_axis(Q, order, axis=1)
    qs /= qs.sum(axis=1, keepdims=True)
    csum = np.cumsum(qs, axis=1)
    min_len = 2 if variant == "another" else 1
    if V < min_len:
        raise DPTopicError("the vocabulary needs at least two words for 'another word' replacement.")
    if exclusion == "floor":
        # f(m) = q_(m) / S_m decreases in m: keep the largest m with f(m) >= delta0
        lengths = np.maximum((qs / csum >= d0).sum(axis=1), 1)
    else:
        tail = np.cumsum(qs[:, ::-1], axis=1)[:, ::-1]  # mass of ranks >= m
        lengths = V - (tail <= delta * (1 + 1e-12)).sum(axis=1)
    cap = cap_report(epsilon, e) if (variant == "another" and exclusion == "floor") else 1.0
    if cap < 1.0:
        lengths = np.maximum(lengths, int(math.floor(1.0 / cap)) + 1)
    lengths = np.clip(np.maximum(lengths, min_len), 1, V)
    M = int(lengths.max())
    kept_prob = np.zeros((R, M))
    for r in range(R):
        m = int(lengths[r])
        p = qs[r, :m] / csum[r, m - 1]
        if exclusion == "floor":
            lam = 0.0
            if p[0] > cap:
                lam = max(lam, (p[0] - cap) / (p[0] - 1.0 / m))
            if p[-1] < d0:
                if 1.0 / m <= d0:
                    raise DPTopicError(f"epsilon={epsilon:g}, delta={delta:g} leave no valid replacement distribution;"
                                       " use variant='coincide' or a larger epsilon.")
                lam = max(lam, (d0 - p[-1]) / (1.0 / m - p[-1]))
            if lam > 0:
                p = (1.0 - min(lam, 1.0)) * p + min(lam, 1.0) / m
        if variant == "another" and np.count_nonzero(p) < 2:  # "another word" needs two candidates
            p = 0.5 * p + 0.5 / m
        kept_prob[r, :m] = p
    kept_words = np.zeros((R, M), dtype=np.int32)
    kept_words[:, :] = order[:, :M]
    kept_cdf = np.cumsum(kept_prob, axis=1)
    for r in range(R):
        kept_cdf[r, lengths[r] - 1:] = 1.0
    kept_mask = np.zeros((R, V), dtype=np.bool_)
    for r in range(R):
        kept_mask[r, order[r, :lengths[r]]] = True
    return kept_words, kept_cdf, lengths.astype(np.int64), kept_mask, kept_prob


def rrp_perturb(words, Q, epsilon: float, delta: float, gamma: float = 1.0, rng: np.random.Generator | None = None,
                rows=None, variant: str = "another", exclusion: str = "floor", table=None, replaced=None):
    """Perturb reported words with RRP. Returns ``(reported_words, event)``; the event is per entry.

    ``words``: int array, ``-1`` marks a padding entry (always replaced). ``rows[i]`` picks the row of
    ``Q`` used for entry ``i`` (default row 0). ``table`` reuses a :func:`replacement_table` result.
    ``replaced`` (optional uint8 array) receives 1 where an entry was replaced.
    """
    epsilon = check_epsilon(epsilon)
    if rng is None:
        raise DPTopicError("a numpy Generator is required for the RRP perturbation.")
    words = np.ascontiguousarray(words, dtype=np.int32)
    if table is None:
        table = replacement_table(Q, epsilon, delta, gamma, variant, exclusion)
    kept_words, kept_cdf, kept_len, kept_mask, _ = table
    V = kept_mask.shape[1]
    if words.size and (words.min() < -1 or words.max() >= V):
        raise DPTopicError(f"invalid words: ids must be in [0, {V}) or -1 for padding.")
    rows = np.zeros(words.shape[0], dtype=np.int64) if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
    if rows.shape != words.shape or (rows.size and (rows.min() < 0 or rows.max() >= kept_mask.shape[0])):
        raise DPTopicError("invalid rows: need one replacement-distribution row per word.")
    none = exclusion == "none"
    # the kernel keeps an entry when a uniform multiple of 2^-53 is at least e: e = ceil(eta 2^53) / 2^53 (exact in
    # float64) realises exactly that replacement probability, never below eta, so the keep probability never
    # exceeds 1 - eta and every ratio the rule's guarantee bounds stays within e^epsilon; the float eta realised
    # up to one part in 2^53 less (and 0, never replacing a kept word, at epsilon > 700)
    e = realised_eta(epsilon, delta, gamma, variant, exclusion, vocab_size=V)
    out = np.empty_like(words)
    flags = np.empty(words.shape[0], dtype=np.uint8) if replaced is None else replaced
    rrp_replace(words, rows, kept_words, kept_cdf, kept_len, kept_mask, e, variant == "another" and not none,
                exclusion == "floor", kernel_state(rng), out, flags)
    return out, rrp_event(epsilon, delta, gamma, variant, exclusion, vocab_size=V if none else None)


def subset_report(words, vocab_size: int, epsilon: float, rng: np.random.Generator | None, s: int | None = None,
                  secure: bool = False):
    """Randomize each entry once by subset selection: returns ``(sets, event)``, ``sets`` ``n × s`` word ids.

    ``words``: ids in ``[0, V)``, ``-1`` for padding (a uniform set). Each row is sorted: the report is
    the set, and nothing in its layout depends on which word was true. ``s`` defaults to
    :func:`~dptopic.accounting.fedlda.subset_size`; ``s = 1`` is k-ary randomized response. Pure
    ``epsilon``-LDP per entry (the ``"none"`` rule of ``docs/fedlda.md``).

    ``secure=True`` (what a real participant uses, ``dptopic fed-client``) takes every coin from the operating
    system's CSPRNG (``secrets``) and refuses a Generator: the true word is kept when a uniform 53-bit integer is
    below ``floor(A 2^53)``, so the realised ratio never exceeds ``e^epsilon``
    (:func:`dptopic.mechanisms.frequency_oracle.keep_threshold`). Otherwise ``rng`` drives the compiled sampler
    (xorshift128+ seeded from it) with the same keep probability ``floor(A 2^53) / 2^53``: simulations only.
    """
    epsilon = check_epsilon(epsilon)
    V = int(vocab_size)
    s = subset_size(epsilon, V) if s is None else int(s)
    subset_inclusion(epsilon, V, s)        # refuses a subset size outside [1, V - 1]
    words = np.ascontiguousarray(words, dtype=np.int32)
    if words.ndim != 1 or (words.size and (words.min() < -1 or words.max() >= V)):
        raise DPTopicError(f"invalid words: ids must be in [0, {V}) or -1 for padding.")
    out = np.empty((words.shape[0], s), dtype=np.int32)
    if secure:
        if rng is not None:
            raise DPTopicError("secure=True takes its coins from the operating system's CSPRNG: pass no Generator.")
        _secure_subsets(words, V, s, epsilon, out)
    else:
        if rng is None:
            raise DPTopicError("a numpy Generator is required for the subset randomizer (or secure=True).")
        # the kernel keeps the true word when a uniform multiple of 2^-53 is below its p_in: p_in = floor(A 2^53) / 2^53
        # (exact in float64) realises exactly that keep probability, never above A, as the secure sampler does;
        # comparing with the float A itself realised ceil(A 2^53) / 2^53, above A, and at a large epsilon, where
        # A rounds to 1.0, kept the true word always (an unbounded ratio behind a finite claim)
        subset_select(words, V, s, _keep_probability(V, epsilon, s), kernel_state(rng), out)
    # the sampler writes a kept true word first: sort, so that a report is the set alone and its order says nothing
    out.sort(axis=1)
    return out, rrp_event(epsilon, 0.1, 1.0, exclusion="none", vocab_size=V)


def _keep_probability(V: int, epsilon: float, s: int) -> float:
    """The realised probability that a report keeps its true word: ``floor(A 2^53) / 2^53`` with ``A`` of
    :func:`~dptopic.accounting.fedlda.subset_inclusion` at ``min(epsilon, 50)`` (computed with 60 significant digits
    by :func:`~dptopic.mechanisms.frequency_oracle.keep_threshold`); never above ``A``, so every likelihood ratio
    stays within ``e^epsilon``. The same coin as the secure sampler's."""
    return keep_threshold(V, min(float(epsilon), 50.0), s) / float(1 << COIN_BITS)


def _secure_subsets(words, V: int, s: int, epsilon: float, out) -> None:
    """Subset selection with the OS CSPRNG's coins: a padding entry (``-1``) gets ``s`` uniform words; a word
    is kept with probability ``floor(A 2^53) / 2^53`` and joined by ``s - 1`` uniform others, else replaced by ``s``
    uniform others."""
    sysrand = secrets.SystemRandom()
    T = keep_threshold(V, min(float(epsilon), 50.0), s) if V >= 2 else 0
    for i, x in enumerate(words.tolist()):
        if x < 0:
            row = sysrand.sample(range(V), s)
        else:
            keep = secrets.randbits(COIN_BITS) < T
            others = [w + (w >= x) for w in sysrand.sample(range(V - 1), s - 1 if keep else s)]
            row = others + [x] if keep else others
        out[i] = row


def subset_frequencies(sets, vocab_size: int, epsilon: float) -> np.ndarray:
    """Unbiased word-frequency estimates from subset reports of real words (post-processing):
    ``(share of reports holding w - B) / (A - B)`` with ``(A, B)`` of
    :func:`~dptopic.accounting.fedlda.subset_inclusion`. Estimates may be negative."""
    sets = np.asarray(sets)
    V = int(vocab_size)
    a, b = subset_inclusion(epsilon, V, sets.shape[1])
    share = np.bincount(sets.ravel(), minlength=V)[:V] / max(sets.shape[0], 1)
    return (share - b) / (a - b)


def subset_signal_counts(labels, sets, phi, epsilon: float) -> np.ndarray:
    """Expected topic–word counts of the words that subset reports reveal, given their topic labels.

    ``labels`` (``n``): a topic in ``[0, K)``, or ``K`` for an entry attributed to padding (not counted);
    ``sets`` (``n × s``): the reports; ``phi`` (``K × V``): the model the labels were drawn against.
    Given topic ``k``, a report ``S`` of an input ``x`` has probability ``c (1 + (e^eps - 1) [x ∈ S])``
    (``c`` the same for every input), i.e. a part ``c`` that ignores the input and a part ``c (e^eps - 1)``
    that holds it. Entry ``i`` adds, for each ``w`` in its set, the posterior probability that ``w`` is the
    input *and* the report came from the part that holds it,
    ``(e^eps - 1) phi[k, w] / (1 + (e^eps - 1) Σ_{v ∈ S} phi[k, v])``; the remainder (a report that says
    nothing about its input) adds nothing. This is the expectation of the word the ``"gibbs"`` sweep picks,
    without its sampling noise. Post-processing of the reports: no privacy cost.
    """
    counts = np.zeros(np.shape(phi))
    add_subset_signal(counts, labels, sets, phi, epsilon)
    return counts


def add_subset_signal(counts: np.ndarray, labels, sets, phi: np.ndarray, epsilon: float) -> None:
    """Add :func:`subset_signal_counts` of these reports to ``counts`` (``K × V``, float64) in place, without
    building an array per entry: the server adds one update at a time."""
    labels, sets, phi = np.asarray(labels), np.asarray(sets), np.ascontiguousarray(phi, dtype=np.float64)
    K, V = phi.shape
    if sets.ndim != 2 or labels.ndim != 1 or labels.shape != sets.shape[:1]:
        raise DPTopicError("invalid reports: need one label per report and an n × s array of word ids.")
    if sets.size and (sets.min() < 0 or sets.max() >= V) or labels.size and labels.min() < 0:
        raise DPTopicError(f"invalid reports: word ids must lie in [0, {V}) and labels in [0, {K}].")
    e1 = math.expm1(min(float(epsilon), 700.0))
    subset_signal_add(labels.astype(np.int64, copy=False), sets.astype(np.int64, copy=False), phi, e1, counts)
