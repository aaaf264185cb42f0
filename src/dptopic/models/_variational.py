"""What the variational trainers share: stochastic variational inference for LDA (Hoffman, Blei & Bach 2010), the
base of OnlineVB (:mod:`dptopic.models.online_vb`) and DPSVI (:mod:`dptopic.models.dpsvi`), and its thread pools.

Orchestration only: the E-step and the bound are compiled in :mod:`dptopic.kernels.vb`.
"""
from __future__ import annotations

import functools
import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor, wait

import numpy as np
from scipy.special import psi

from .._validation import N_JOBS, SEED, VERBOSE, Int, IsNone, Real, validate_value
from ..corpus import Corpus, Vocabulary, as_corpus
from ..errors import CorruptModelError, DPTopicError
from ..evaluation import split_completion
from ..kernels import token_log_likelihood
from ..kernels.vb import (
    dirichlet_expectation,
    doc_elbo,
    exp_dirichlet_expectation,
    scale_statistics,
    svi_step,
    vb_estep,
    vb_estep_docs,
    vb_scatter,
)
from .base import MIN_PRIOR, TopicModel, check_topics_fit_vocabulary

ESTEP_MAX_ITER = 100   # Hoffman et al.'s code: at most 100 inner iterations ...
ESTEP_TOL = 1e-3       # ... until the mean absolute change of gamma is below 1e-3
_RELEASE = "noisy expected sufficient statistics of a Poisson mini-batch"
_INIT_SHAPE = 100.0    # gamma and lambda start i.i.d. Gamma(100, 1/100) (Hoffman et al.'s code)


MIN_TOKENS_PER_THREAD = 5_000
"""A batch is split between threads only when each gets at least this many tokens (below, a thread costs more than
it saves)."""


def _doc_chunks(ptr, jobs: int) -> list:
    """``(first, end)`` document ranges of about ``CHUNK_TOKENS`` entries (smaller when a batch has fewer than eight
    per thread), in order: the units the E-step's threads take one after another."""
    n_docs, n_tok = len(ptr) - 1, int(ptr[-1])
    size = max(1, min(CHUNK_TOKENS, n_tok // (8 * jobs)))
    cuts = np.unique(np.searchsorted(ptr, np.arange(size, n_tok, size)))
    edges = [0, *(int(c) for c in cuts if 0 < c < n_docs), n_docs]
    return list(zip(edges[:-1], edges[1:]))


CHUNK_TOKENS = 2_048
"""Entries (distinct words of documents) per chunk of the threaded E-step: about 40 documents of 20 Newsgroups."""


@functools.lru_cache(maxsize=None)
def _pool_of(pid: int, workers: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(workers, thread_name_prefix="dptopic-vb")


def _pool(workers: int) -> ThreadPoolExecutor:
    """One lasting pool per worker count and process (a forked child makes its own): a fresh pool per mini-batch
    costs a thread start per worker and batch."""
    return _pool_of(os.getpid(), workers)


def _even_ranges(n: int, parts: int) -> list:
    """``parts`` ``(first, end)`` ranges of ``0 .. n - 1``, in order, of sizes that differ by at most one."""
    edges = [n * i // parts for i in range(parts + 1)]
    return list(zip(edges[:-1], edges[1:]))


def _token_blocks(ptr, jobs: int) -> list:
    """``(first, end)`` document ranges of about equal tokens, at most ``jobs`` of them."""
    n_docs, n_tok = len(ptr) - 1, int(ptr[-1])
    k = max(1, min(int(jobs), n_docs, n_tok // MIN_TOKENS_PER_THREAD))
    if k == 1:
        return [(0, n_docs)]
    cuts = np.searchsorted(ptr, np.arange(1, k) * (n_tok / k))
    edges = [0, *sorted(set(int(c) for c in cuts if 0 < c < n_docs)), n_docs]
    return list(zip(edges[:-1], edges[1:]))


class _VariationalLDA(TopicModel):
    """Shared parts of the variational estimators. Parameter handling, ``topic_words``,
    ``coherence`` and the atomic JSON+npy ``save``/``dptopic.load`` come from the common estimator
    base; training, ``transform`` and ``perplexity`` are variational here.

    ``components_`` holds the expected topics ``E[β_k] = λ_k / Σ_v λ_kv`` (rows sum to 1);
    ``lambda_`` the variational Dirichlet parameters (scikit-learn's ``components_``).
    """

    _parameter_constraints = {
        "n_topics": [Int(1, None)],
        "alpha": [IsNone(), Real(MIN_PRIOR, 1e6, "both")],
        "eta": [IsNone(), Real(MIN_PRIOR, 1e6, "both")],
        "tau0": [Real(0, None, "both")],
        "kappa": [Real(0.5, 1, "right")],
        "seed": SEED,
        "n_jobs": N_JOBS,
        "verbose": VERBOSE,
    }

    @property
    def _n_topics_state(self) -> int:
        """K of the variational state (``lambda_``) once there is one, else ``n_topics``: a ``set_params(n_topics=...)``
        after a fit changes the next ``fit``, never the K that ``transform`` and ``partial_fit`` work with."""
        lam = getattr(self, "lambda_", None)
        return int(lam.shape[0]) if isinstance(lam, np.ndarray) and lam.ndim == 2 else int(self.n_topics)

    @property
    def alpha_(self) -> float:
        return 1.0 / self._n_topics_state if self.alpha is None else float(self.alpha)

    @property
    def _inference_alpha(self) -> float:
        """α for ``transform``/``perplexity``: the fitted one (:meth:`_fitted_value`), not a later ``set_params``."""
        alpha = self._fitted_value("alpha")
        return 1.0 / self._n_topics_state if alpha is None else float(alpha)

    @property
    def eta_(self) -> float:
        return 1.0 / self._n_topics_state if self.eta is None else float(self.eta)

    # ------------------------------------------------------------------ data
    @staticmethod
    def _bow(corpus):
        X = corpus.to_bow()
        return X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64)

    def _train_corpus(self, X, vocabulary):
        X, names = self._as_input(X)
        if names is not None and vocabulary is None:
            vocabulary = names
        corpus = as_corpus(X, vocabulary=vocabulary)
        if vocabulary is not None:
            vocabulary = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
            if corpus.vocabulary != vocabulary:
                corpus = corpus.restrict(vocabulary).require_nonempty()
        check_topics_fit_vocabulary(self.n_topics, corpus.vocab_size)
        return corpus

    def _init_state(self, V, rng) -> None:
        self.lambda_ = rng.gamma(_INIT_SHAPE, 1.0 / _INIT_SHAPE, size=(self.n_topics, V))
        self.n_updates_ = 0

    # ------------------------------------------------------------------ maths glue
    def _estep(self, lam, ptr, ids, cts, rng, clip=np.inf, alpha=None, step=None):
        """E-step on one batch: ``(gamma, sstats K×V, norms)``. ``rng=None`` starts every document from γ = 1 (as
        scikit-learn's ``transform`` does), so each document's γ depends on its own words only. ``step=(ρ, η,
        scale)``: the batch's natural-gradient step is taken too (:meth:`_svi_update`, the same numbers), and the new λ
        is returned in place of the statistics.

        With several threads each works through the whole batch: ``exp(E[log β])`` for its share of the words, then
        chunks of documents as it finishes them, then its words' statistics (added in document order: the sums of
        one thread) and their step; the threads meet twice, at a barrier. Every ``n_jobs`` gives the same numbers."""
        K, V = lam.shape                    # λ's K: the kernel sizes its buffers by it, and writes K of γ
        n_docs = len(ptr) - 1
        gamma = (np.ones((n_docs, K)) if rng is None
                 else rng.gamma(_INIT_SHAPE, 1.0 / _INIT_SHAPE, size=(n_docs, K)))
        norms = np.zeros(n_docs)
        alpha = self.alpha_ if alpha is None else alpha
        jobs = len(_token_blocks(ptr, self._fold_in_jobs()))
        psi_sums = psi(lam.sum(axis=1))
        eb, ss = np.empty((V, K)), np.zeros((V, K))
        new_lam = None if step is None else np.empty_like(lam)
        inner = int(getattr(self, "max_doc_update_iter", ESTEP_MAX_ITER))
        args = (ptr, ids, cts, eb, alpha, gamma, inner, ESTEP_TOL, float(clip))

        def finish(v_start, v_stop):
            if step is None:
                scale_statistics(ss, eb, v_start, v_stop)
            else:
                svi_step(lam, ss, eb, *step, new_lam, v_start, v_stop)

        if jobs == 1:
            exp_dirichlet_expectation(lam, psi_sums, eb, 0, V)
            vb_estep(*args, ss, norms)
            finish(0, V)
        else:
            words = _even_ranges(V, jobs)
            chunks, weights, et = _doc_chunks(ptr, jobs), np.empty(len(ids)), np.empty((n_docs, K))
            taken = itertools.count()           # next() on it is atomic under the GIL
            barrier = threading.Barrier(jobs)

            def work(j):
                try:
                    exp_dirichlet_expectation(lam, psi_sums, eb, *words[j])
                    barrier.wait()
                    while (c := next(taken)) < len(chunks):    # a document's E-step is its own, in any order
                        vb_estep_docs(*args, *chunks[c], weights, et, norms)
                    barrier.wait()
                    vb_scatter(ptr, ids, weights, et, ss, *words[j])
                    finish(*words[j])
                except threading.BrokenBarrierError:
                    pass                        # another thread failed: its error is the one raised
                except BaseException:
                    barrier.abort()
                    raise

            helpers = [_pool(jobs - 1).submit(work, j) for j in range(1, jobs)]
            try:
                work(0)
            finally:                            # the arrays stay in use until every helper is done
                wait(helpers)
            for h in helpers:
                h.result()
        return gamma, (ss.T if step is None else new_lam), norms

    def _rho(self, t: int) -> float:
        """Step size ρ_t = (τ0 + t + 1)^(−κ), t = 0, 1, ... (Hoffman et al. 2010, eq. 9 with their code's +1)."""
        return (self.tau0 + t + 1.0) ** (-self.kappa)

    def _svi_update(self, lam, ss, scale, t):
        """λ ← (1 − ρ_t) λ + ρ_t (η + scale · sstats): the natural-gradient step (Hoffman et al. Alg. 2)."""
        rho = self._rho(t)
        return (1.0 - rho) * lam + rho * (self.eta_ + scale * ss)

    def _finish_fit(self) -> None:
        self.components_ = self.lambda_ / self.lambda_.sum(axis=1, keepdims=True)

    # ------------------------------------------------------------------ inference
    def transform(self, X, seed=0) -> np.ndarray:
        """Document–topic proportions ``E[θ_d] = γ_d / Σ_k γ_dk`` from the E-step with λ fixed.

        Deterministic: every document starts from γ = 1 and stops on its own convergence test, so a row's θ does
        not depend on the other rows of ``X`` or their order. ``seed`` is accepted (and checked) for the same call
        as the Gibbs trainers' fold-in, which draws; here nothing is drawn."""
        validate_value("seed", seed, SEED)
        gamma = self._gamma(X)
        return gamma / gamma.sum(axis=1, keepdims=True)

    def _gamma(self, X):
        c = self._as_model_corpus(X, allow_empty=True)
        ptr, ids, cts = self._bow(c)
        gamma, _, _ = self._estep(self.lambda_, ptr, ids, cts, None, alpha=self._inference_alpha)
        return gamma

    def perplexity(self, X, mode: str = "paper", seed=0) -> float:
        """Held-out per-word perplexity, with the same ``mode`` every estimator takes.

        ``mode="paper"``: the variational bound ``exp(−Σ_d ELBO_d / Σ_d N_d)`` with the E-step run on ``X`` and λ
        fixed (Hoffman et al. 2010, eq. 16; what Park et al. 2016 report). ``mode="completion"``: document
        completion (Wallach et al. 2009), as for the Gibbs trainers: each document's tokens are split at random
        into halves, θ = E[θ | first half] from the E-step, and the second half is scored under
        ``Σ_k θ_k E[φ_k]``.
        """
        if mode not in ("paper", "completion"):
            raise DPTopicError(f"invalid mode={mode!r}: must be 'paper' or 'completion'.")
        c = self._as_model_corpus(X)
        rng = np.random.default_rng(seed)
        if mode == "completion":
            (w_inf, p_inf), (w_ev, p_ev) = split_completion(c.word_ids, c.doc_ptr, rng)
            first = Corpus(p_inf, w_inf, c.vocabulary)
            ptr, ids, cts = self._bow(first)
            gamma, _, _ = self._estep(self.lambda_, ptr, ids, cts, rng, alpha=self._inference_alpha)
            theta = gamma / gamma.sum(axis=1, keepdims=True)
            ll, n = token_log_likelihood(np.ascontiguousarray(w_ev, dtype=np.int32), p_ev, theta,
                                         np.ascontiguousarray(self.components_.T))
            if n == 0:
                raise DPTopicError("evaluation corpus has no tokens to evaluate: use longer documents or mode='paper'.")
            return float(math.exp(-ll / n))
        ptr, ids, cts = self._bow(c)
        if cts.sum() == 0:
            raise DPTopicError("perplexity needs at least one token of the model's vocabulary in X.")
        alpha = self._inference_alpha
        gamma, _, _ = self._estep(self.lambda_, ptr, ids, cts, rng, alpha=alpha)
        out = np.zeros(len(ptr) - 1)
        doc_elbo(ptr, ids, cts, np.ascontiguousarray(dirichlet_expectation(self.lambda_).T), alpha, gamma, out)
        return float(math.exp(-out.sum() / cts.sum()))

    # ------------------------------------------------------------------ persistence
    def _extra_arrays(self) -> dict:
        state = [self.n_updates_] + ([] if self._private else [getattr(self, "n_docs_seen_", 0)])
        return {"lambda": self.lambda_, "svi_state": np.array(state, dtype=np.int64)}

    def _load_extra(self, arrays) -> None:
        lam = np.asarray(arrays.get("lambda", np.empty(0)), dtype=np.float64)
        if lam.shape != self.components_.shape or not np.all(np.isfinite(lam)) or np.any(lam <= 0):
            raise CorruptModelError("lambda.npy must be a positive, finite K×V matrix")
        self.lambda_ = lam
        raw = np.asarray(arrays.get("svi_state", np.zeros(2, dtype=np.int64)))
        if raw.dtype.kind not in "iu" or raw.size not in (1, 2) or np.any(raw < 0):
            raise CorruptModelError("svi_state.npy must hold 1 or 2 non-negative integer counters")
        state = raw.astype(np.int64).ravel()
        self.n_updates_ = int(state[0])
        if state.size == 2 and not self._private:  # a private model's count from an older version is not read
            self.n_docs_seen_ = int(state[1])
