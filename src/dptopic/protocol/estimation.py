"""Server-side estimation from randomized presence reports (Zhao et al. 2020, Sec. V-VI).

Notation: a batch of ``M`` reports; ``n_t`` = number of reports with bit ``t`` set (noisy);
``N_t`` = true number of documents that contain word ``t``; ``f`` = flip parameter.

* :func:`moment_estimate` — eq. (8), unbiased: ``N̂_t = (2 n_t − f M) / (2 (1 − f))``;
* :func:`variance_exact` — its variance for a fixed data set, ``(2 − f) f M / (4 (1 − f)²)``
  (the kept and the created ones are independent binomials);
* :func:`variance_paper` — eq. (9) as printed, which adds ``(M − N_t) N_t / M``; that term
  would only arise if the documents themselves were random draws (see docs/local_dp.md);
* :func:`bayes_estimate` — Theorem 6 / eq. (19): ``ω μ_t + (1 − ω) N̂_t`` with
  :func:`omega_from_sigma2` ``ω = M f (2 − f) / (M f (2 − f) + 4 σ² (1 − f)²)``;
* :func:`prior_mean_update` — eq. (21);
* :func:`reconstruct` — LP-LDA server Steps 3-5: adjust each column of the reports to an
  integer target by setting or clearing bits of uniformly chosen reports.
"""
from __future__ import annotations

import numpy as np

from ..corpus import Corpus
from ..errors import DPTopicError


def moment_estimate(n_t, M: int, f: float) -> np.ndarray:
    """Eq. (8): unbiased estimate of the number of documents containing each word."""
    return (2.0 * np.asarray(n_t, dtype=np.float64) - f * M) / (2.0 * (1.0 - f))


def variance_exact(M: int, f: float) -> float:
    """Exact variance of eq. (8) for a fixed data set: ``(2 − f) f M / (4 (1 − f)²)``."""
    return (2.0 - f) * f * M / (4.0 * (1.0 - f) ** 2)


def variance_paper(N_t, M: int, f: float) -> np.ndarray:
    """Eq. (9) as printed in Zhao et al. (Theorem 5): exact variance + ``(M − N_t) N_t / M``."""
    N_t = np.asarray(N_t, dtype=np.float64)
    return variance_exact(M, f) + (M - N_t) * N_t / M


def omega_from_sigma2(M: int, f: float, sigma2: float) -> float:
    """Theorem 6: the weight of the prior mean, from the prior variance ``σ²``."""
    a = M * f * (2.0 - f)
    return a / (a + 4.0 * sigma2 * (1.0 - f) ** 2)


def sigma2_from_omega(M: int, f: float, omega: float) -> float:
    """The prior variance ``σ²`` that a fixed ``ω`` implies (inverse of :func:`omega_from_sigma2`)."""
    if omega <= 0:
        return float("inf")
    return M * f * (2.0 - f) * (1.0 - omega) / (4.0 * omega * (1.0 - f) ** 2)


def bayes_estimate(n_t, M: int, f: float, mu, omega: float) -> np.ndarray:
    """Eq. (19): posterior mean of ``N_t`` under the Gaussian prior ``N(μ_t, σ²)`` (Theorem 6)."""
    return omega * np.asarray(mu, dtype=np.float64) + (1.0 - omega) * moment_estimate(n_t, M, f)


def prior_mean_update(mu_prev, eta_prev, M: int, M_prev: int) -> np.ndarray:
    """Eq. (21): ``μ^l = (μ^{l−1} + η^{l−1}) / 2 · |D_l| / |D_{l−1}|``."""
    return (np.asarray(mu_prev, dtype=np.float64) + np.asarray(eta_prev, dtype=np.float64)) / 2.0 * (M / M_prev)


def integer_targets(estimates, M: int) -> np.ndarray:
    """Round to the nearest integer and clamp to the feasible range ``[0, M]``."""
    return np.clip(np.rint(np.asarray(estimates, dtype=np.float64)), 0, M).astype(np.int64)


def reconstruct(bits: np.ndarray, targets, rng: np.random.Generator) -> np.ndarray:
    """Steps 3-5 of LP-LDA's server: make column ``t`` hold exactly ``targets[t]`` ones.

    For every word independently, ``|targets[t] − n_t|`` reports are chosen uniformly without
    replacement among those whose bit ``t`` is 0 (to set) or 1 (to clear). Returns a new
    ``(M, V)`` boolean matrix.
    """
    bits = np.asarray(bits, dtype=bool)
    M, V = bits.shape
    targets = np.asarray(targets, dtype=np.int64)
    if targets.shape != (V,) or np.any(targets < 0) or np.any(targets > M):
        raise DPTopicError(f"reconstruction targets must be V={V} integers in [0, {M}].")
    cols = np.ascontiguousarray(bits.T)  # V × M: one row per word
    n = cols.sum(axis=1)
    for t in np.flatnonzero(targets != n):
        d = int(targets[t] - n[t])
        cand = np.flatnonzero(~cols[t] if d > 0 else cols[t])
        pick = rng.choice(cand, size=abs(d), replace=False)
        cols[t, pick] = d > 0
    return np.ascontiguousarray(cols.T)


def bits_to_corpus(bits: np.ndarray, vocabulary, drop_empty: bool = True) -> Corpus:
    """One token per present word (word counts are not reported), documents in report order."""
    bits = np.asarray(bits, dtype=bool)
    rows, ids = np.nonzero(bits)
    ptr = np.zeros(bits.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=bits.shape[0]), out=ptr[1:])
    c = Corpus(ptr, ids.astype(np.int32), vocabulary)
    if drop_empty:
        keep = np.flatnonzero(c.doc_lengths > 0)
        if len(keep) < c.n_docs:
            c = c.subset(keep)
    return c


def presence_bits(corpus: Corpus) -> np.ndarray:
    """``(D, V)`` boolean presence matrix of a corpus."""
    X = corpus.to_bow()
    out = np.zeros(X.shape, dtype=bool)
    out[X.nonzero()] = True
    return out


def document_frequencies(corpus: Corpus) -> np.ndarray:
    """Number of documents of ``corpus`` containing each word."""
    X = corpus.to_bow()
    return np.bincount(X.indices, minlength=corpus.vocab_size).astype(np.int64)


_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(axis=1).astype(np.int32)


def min_hamming(A: np.ndarray, B: np.ndarray, exclude_diagonal: bool = False, chunk: int = 64) -> np.ndarray:
    """For every packed row of ``A``, the smallest Hamming distance to a packed row of ``B``."""
    out = np.full(len(A), np.iinfo(np.int32).max, dtype=np.int64)
    for a in range(0, len(A), chunk):
        for b in range(0, len(B), 1024):
            d = _POPCOUNT[A[a:a + chunk, None, :] ^ B[None, b:b + 1024, :]].sum(axis=2)
            if exclude_diagonal:
                i = np.arange(a, min(len(A), a + chunk))
                j = i - b
                ok = (j >= 0) & (j < d.shape[1])
                d[(i - a)[ok], j[ok]] = np.iinfo(np.int32).max
            out[a:a + chunk] = np.minimum(out[a:a + chunk], d.min(axis=1))
    return out


def overlap_threshold(prior_packed: np.ndarray, randomized_prior, level: float = 0.05):
    """Null calibration of the overlap check.

    The distance from a randomized prior document to the nearest *other* prior document is
    what a report of a non-member looks like. ``randomized_prior`` is one randomized copy of
    the prior (rows in the prior's order), or a list of independent copies: each copy adds
    ``len(prior_packed)`` draws of that null distance. Returns ``(threshold, rate)``: the
    ``level`` quantile of the null distances and an upper bound (3 standard errors) on the
    share of non-members at or below it (distances are integers, so ties can push it above
    ``level``).
    """
    copies = [randomized_prior] if isinstance(randomized_prior, np.ndarray) else list(randomized_prior)
    null = np.concatenate([min_hamming(c, prior_packed, exclude_diagonal=True) for c in copies])
    thr = float(np.quantile(null, level))
    p = float(np.mean(null <= thr))
    return thr, min(1.0, p + 3 * np.sqrt(p * (1 - p) / len(null)) + 1.0 / len(null))


def overlap_count(report_packed: np.ndarray, prior_packed: np.ndarray, threshold: float) -> int:
    """How many reports lie at most ``threshold`` from some prior document."""
    return int(np.count_nonzero(min_hamming(report_packed, prior_packed) <= threshold))
