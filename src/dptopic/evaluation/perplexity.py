"""Held-out perplexity (Zhao et al. 2020 Sec. VII-A; Wallach et al. 2009) with fold-in inference of θ.

* ``mode="paper"``: infer θ on all tokens of each test document, evaluate on the same
  tokens (as Zhao et al.'s formula reads; optimistic).
* ``mode="completion"``: document completion; infer θ on a random half of each
  document's tokens and evaluate on the other half.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._validation import SEED, Real, validate_value
from ..corpus import Corpus
from ..errors import DPTopicError
from ..kernels import fold_in, kernel_state, make_shards, token_log_likelihood


def _rng(seed):
    validate_value("seed", seed, SEED)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def infer_theta(phi: np.ndarray, word_ids, doc_ptr, alpha: float, n_iter: int = 100, burn_in: int = 50,
                seed=None, n_jobs: int = 1) -> np.ndarray:
    """θ for each document by fold-in CGS with Φ (K×V) frozen.

    Each document's chain draws from a stream of the seed and its own words
    (:func:`~dptopic.kernels.rng.document_state`), so ``n_jobs`` threads, each folding in a block of documents,
    return exactly what one thread returns."""
    _check_schedule(n_iter, burn_in, n_jobs)
    phi_wk = np.ascontiguousarray(np.asarray(phi, dtype=np.float64).T)
    return _fold_in(phi_wk, word_ids, doc_ptr, alpha, n_iter, burn_in, kernel_state(_rng(seed)), n_jobs)


def _check_schedule(n_iter, burn_in, n_jobs) -> None:
    if not (isinstance(n_iter, (int, np.integer)) and isinstance(burn_in, (int, np.integer)) and not isinstance(n_iter, bool)
            and not isinstance(burn_in, bool) and 0 <= burn_in < n_iter <= 10**7):
        raise DPTopicError(f"invalid fold-in schedule n_iter={n_iter!r}, burn_in={burn_in!r}: need integers 0 <= burn_in < n_iter <= 1e7.")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or not 1 <= n_jobs <= 10_000:
        raise DPTopicError(f"invalid n_jobs={n_jobs!r}: give a whole number of threads from 1 to 10,000.")


def _fold_in(phi_wk, word_ids, doc_ptr, alpha, n_iter, burn_in, base, n_jobs) -> np.ndarray:
    """:func:`infer_theta` from ``base``, a kernel state (every document's stream is drawn from it)."""
    word_ids = np.ascontiguousarray(word_ids, dtype=np.int32)
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    blocks = make_shards(doc_ptr, int(n_jobs)) if len(doc_ptr) > 1 else []
    if len(blocks) <= 1:
        return fold_in(word_ids, doc_ptr, phi_wk, float(alpha), n_iter, burn_in, base)

    def block(b):
        return fold_in(word_ids, doc_ptr[b.doc_start:b.doc_stop + 1], phi_wk, float(alpha), n_iter, burn_in, base)

    with ThreadPoolExecutor(len(blocks), thread_name_prefix="dptopic-foldin") as pool:   # the kernel drops the GIL
        return np.concatenate(list(pool.map(block, blocks)))


PERPLEXITY_BLOCK_DOCS = 1 << 16
"""Documents whose θ :func:`perplexity` (``mode="paper"``) folds in and scores at once: a corpus's tokens are read a
block at a time (:meth:`~dptopic.corpus.Corpus.token_blocks`) and neither its tokens nor every document's θ are held
(2 x 10^6 documents of 60 words held 0.5 GB of tokens and, at K = 20, 0.3 GB of θ). A corpus of one block scores as
one call; a larger one sums its blocks' log-likelihoods, which may differ from one sum in the last bits of the
result."""


def split_completion(word_ids, doc_ptr, rng: np.random.Generator):
    """Split each document's tokens at random into an inference half and an evaluation half."""
    lengths = np.diff(doc_ptr)
    keys = rng.random(len(word_ids))
    doc_of = np.repeat(np.arange(len(lengths)), lengths)
    order = np.lexsort((keys, doc_of))  # shuffled within each document
    rank = np.empty(len(word_ids), np.int64)
    rank[order] = np.arange(len(word_ids)) - np.repeat(doc_ptr[:-1], lengths)
    first = rank < (lengths[doc_of] + 1) // 2
    parts = []
    for mask in (first, ~first):
        cnt = np.bincount(doc_of[mask], minlength=len(lengths))
        ptr = np.zeros(len(lengths) + 1, np.int64)
        np.cumsum(cnt, out=ptr[1:])
        parts.append((word_ids[mask], ptr))
    return parts


def perplexity(phi: np.ndarray, corpus, alpha: float, mode: str = "paper", n_iter: int = 100,
               burn_in: int = 50, seed=0, n_jobs: int = 1) -> float:
    """Held-out perplexity ``exp(−Σ log Σ_k θ_dk φ_k,w / #tokens)`` of ``corpus`` under Φ (K×V)."""
    if mode not in ("paper", "completion"):
        raise DPTopicError(f"invalid mode={mode!r}: must be 'paper' or 'completion'.")
    # the Dirichlet prior of the fold-in: a negative one made the sampler divide by zero, a NaN one returned NaN
    validate_value("alpha", alpha, [Real(0, None, "neither")])
    if not isinstance(corpus, Corpus):
        raise DPTopicError(f"the evaluation corpus must be a dptopic Corpus in the topics' vocabulary, not a"
                           f" {type(corpus).__name__}: build one with Corpus.from_texts(texts, vocabulary=...), or"
                           " call model.perplexity(texts).")
    phi = np.asarray(phi, dtype=np.float64)
    if phi.ndim != 2 or phi.shape[0] == 0:
        raise DPTopicError(f"the topics must be a K x V array (one row per topic); got shape {phi.shape}.")
    sums = phi.sum(axis=1)
    if not np.all(np.isfinite(phi)) or np.any(phi < 0) or not np.allclose(sums, 1.0, rtol=0, atol=1e-4):
        raise DPTopicError("the topics must be distributions over the words: each row finite, non-negative and summing"
                           " to 1 (a row sums to"
                           f" {sums[np.argmax(np.abs(sums - 1))] if np.all(np.isfinite(sums)) else float('nan'):.6g});"
                           " normalise them first: phi / phi.sum(axis=1, keepdims=True).")
    if phi.shape[1] != corpus.vocab_size:
        raise DPTopicError(f"vocabulary mismatch: the model has {phi.shape[1]} words but the corpus has {corpus.vocab_size}; restrict the corpus to the model's vocabulary.")
    corpus.require_nonempty("evaluation corpus")
    rng = _rng(seed)
    if mode == "paper":
        _check_schedule(n_iter, burn_in, n_jobs)
        phi_wk = np.ascontiguousarray(phi.T)
        base, ll, n = kernel_state(rng), 0.0, 0
        for ptr, ids in corpus.token_blocks(PERPLEXITY_BLOCK_DOCS):
            theta = _fold_in(phi_wk, ids, ptr, alpha, n_iter, burn_in, base, n_jobs)
            block_ll, block_n = token_log_likelihood(ids, ptr, theta, phi_wk)
            ll, n = ll + block_ll, n + int(block_n)
    else:
        (w_inf, p_inf), (w_ev, p_ev) = split_completion(corpus.word_ids, corpus.doc_ptr, rng)
        theta = infer_theta(phi, w_inf, p_inf, alpha, n_iter, burn_in, rng, n_jobs)
        ll, n = token_log_likelihood(w_ev, p_ev, theta, np.ascontiguousarray(phi.T))
    if n == 0:
        raise DPTopicError("evaluation corpus has no tokens to evaluate: use longer documents or mode='paper'.")
    return float(np.exp(-ll / n))
