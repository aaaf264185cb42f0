"""Stochastic variational inference for LDA: the non-private reference (Hoffman, Blei & Bach 2010)
and its document-level private version (Park, Foulds, Chaudhuri & Welling 2016).

Orchestration only: the E-step and the bound are compiled in :mod:`dptopic.kernels.vb`, the noise
comes from :mod:`dptopic.mechanisms.gaussian`, the accounting from :mod:`dptopic.accounting.gaussian`
through a :class:`~dptopic.accounting.PrivacyLedger`.
"""
from __future__ import annotations

from ..accounting.set_union import VOCABULARY_NOT_COVERED
from ._document_level import _TopicFlags, document_level_notes, warn_if_large_delta

import functools
import itertools
import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._progress import progress_bar
from .._validation import N_JOBS, SEED, VERBOSE, IsNone, Int, Options, Real, validate_value
from ..accounting.ledger import MAX_COUNT
from ..accounting import DOCUMENT_RELATION, PrivacyLedger, non_private_report
from ..accounting.gaussian import (MAX_NOISE_MULTIPLIER, MIN_NOISE_MULTIPLIER,
                                   calibrate_noise_multiplier, moments_accountant_epsilon,
                                   strong_composition_for_sigma)
from ..accounting.plan import PlannedRelease, ReleasePlan, gaussian_release
from ..corpus import Corpus, Vocabulary, as_corpus
from ..errors import DPTopicError, user_stacklevel, ParameterError
from ..kernels.vb import (cap_lengths, dirichlet_expectation, doc_elbo, gather_rows, vb_estep, vb_estep_docs,
                          vb_scatter)
from ..mechanisms import gaussian_mechanism
from ..moments.support import em_supported_topics
from .base import (MIN_PRIOR, TopicModel, check_topics_fit_vocabulary, generator_from_state_array,
                   generator_state_array, unchanged_on_error, vocabulary_given)

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
    def _estep(self, lam, ptr, ids, cts, rng, clip=np.inf, alpha=None):
        """E-step on one batch: ``(gamma, sstats K×V, norms)``. ``rng=None`` starts every document from γ = 1 (as
        scikit-learn's ``transform`` does), so each document's γ depends on its own words only."""
        eb = np.ascontiguousarray(np.exp(dirichlet_expectation(lam)).T)
        n_docs, K = len(ptr) - 1, lam.shape[0]      # λ's K: the kernel sizes its buffers by it, and writes K of γ
        gamma = (np.ones((n_docs, K)) if rng is None
                 else rng.gamma(_INIT_SHAPE, 1.0 / _INIT_SHAPE, size=(n_docs, K)))
        norms = np.zeros(n_docs)
        alpha = self.alpha_ if alpha is None else alpha
        jobs = len(_token_blocks(ptr, self._fold_in_jobs()))
        ss = np.zeros_like(eb)
        inner = int(getattr(self, "max_doc_update_iter", ESTEP_MAX_ITER))
        args = (ptr, ids, cts, eb, alpha, gamma, inner, ESTEP_TOL, float(clip))
        if jobs == 1:
            vb_estep(*args, ss, norms)
        else:   # the threads take chunks of documents as they finish (a document's E-step is its own, in any order)
            chunks, weights, et = _doc_chunks(ptr, jobs), np.empty(len(ids)), np.empty((n_docs, K))
            taken = itertools.count()           # next() on it is atomic under the GIL

            def work():
                while (j := next(taken)) < len(chunks):
                    vb_estep_docs(*args, *chunks[j], weights, et, norms)

            helpers = [_pool(jobs - 1).submit(work) for _ in range(jobs - 1)]
            try:
                work()
            finally:                            # the arrays stay in use until every helper is done
                for h in helpers:
                    h.result()
            # the statistics are added in document order, on one thread: vb_estep's sums, whatever n_jobs is
            vb_scatter(ptr, ids, weights, et, ss, 0, ss.shape[0])
        ss *= eb
        return gamma, ss.T, norms

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
        from .._validation import SEED, validate_value

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
        from ..evaluation import split_completion
        from ..kernels import token_log_likelihood

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
        from ..errors import CorruptModelError

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


class OnlineVB(_VariationalLDA):
    """LDA by stochastic (online) variational Bayes (Hoffman, Blei & Bach 2010): the non-private
    reference for :class:`DPSVI`.

    Parameters
    ----------
    n_topics : number of topics K.
    alpha, eta : symmetric Dirichlet priors on θ and on the topics (default ``1/K``).
    tau0, kappa : step size ρ_t = (τ0 + t + 1)^(−κ); κ ∈ (0.5, 1] guarantees convergence.
    batch_size : documents per mini-batch.
    n_epochs : passes over the corpus in :meth:`fit`.
    shuffle : True (default): every epoch of :meth:`fit` cuts a fresh random permutation of the documents
        into mini-batches; False: the documents are streamed in the order given, every epoch (what
        scikit-learn's online ``LatentDirichletAllocation`` does). Online VB is sensitive to the order of
        the first pass (it settles into a local optimum early), so pass shuffled documents when
        ``shuffle=False``.
    total_docs : corpus size D used by :meth:`partial_fit` to scale a batch (default: the number of
        documents seen so far). :meth:`fit` uses the size of its input.
    seed : int, None or a numpy Generator; every random choice flows from it.
    n_jobs : threads sharing each E-step (and ``transform``), taking chunks of documents as they finish
        (scikit-learn's convention: None is 1, -1 every core). The statistics are added in document order, so a seed
        gives the same model at any ``n_jobs``.
    verbose : 0 silences the progress bar.
    max_doc_update_iter : at most this many fixed-point iterations per document in each E-step (scikit-learn's name;
        default 100, as Hoffman et al.'s code); each stops earlier once γ changes by less than 1e-3 on average.
        BigARTM's offline pass runs 10: ``max_doc_update_iter=10`` is the same work per pass
        (docs/research/vb_pass.md).

    Attributes
    ----------
    components_ : (K, V) expected topics, rows sum to 1.   lambda_ : (K, V) Dirichlet parameters.
    perplexity_ : list of ``(epoch, bound)`` on ``eval_set`` when :meth:`fit` is given one.
    """

    _never_private = True
    _parameter_constraints = {**_VariationalLDA._parameter_constraints,
                              "batch_size": [Int(1, None)], "n_epochs": [Int(1, 1_000_000)],
                              "shuffle": [Options((True, False))], "total_docs": [IsNone(), Int(1, None)],
                              "max_doc_update_iter": [Int(1, 100_000)]}

    def __init__(self, n_topics: int = 50, alpha: float | None = None, eta: float | None = None, tau0: float = 10.0,
                 kappa: float = 0.7, batch_size: int = 256, n_epochs: int = 10, total_docs: int | None = None,
                 shuffle: bool = True, seed=None, n_jobs: int = 1, verbose: int = 1,
                 max_doc_update_iter: int = ESTEP_MAX_ITER):
        self.n_topics = n_topics
        self.alpha = alpha
        self.eta = eta
        self.tau0 = tau0
        self.kappa = kappa
        self.batch_size = batch_size
        self.n_epochs = n_epochs
        self.total_docs = total_docs
        self.shuffle = shuffle
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.max_doc_update_iter = max_doc_update_iter

    def _step(self, lam, t, batch, D, rng):
        ptr, ids, cts = batch
        _, ss, _ = self._estep(lam, ptr, ids, cts, rng)
        return self._svi_update(lam, ss, D / (len(ptr) - 1), t)

    def fit(self, X, y=None, *, vocabulary=None, eval_set=None):
        """Train from scratch for ``n_epochs`` passes. ``eval_set`` (held-out documents) records the
        perplexity bound after every epoch in ``perplexity_``. A fit that fails (a refused corpus, an error or an
        interrupt half-way) leaves the model as it was; :meth:`partial_fit` afterwards continues this fit's random
        stream."""
        with unchanged_on_error(self):
            return self._fit(X, vocabulary, eval_set)

    def _fit(self, X, vocabulary, eval_set):
        self._validate()
        corpus = self._train_corpus(X, vocabulary)
        self.vocabulary_ = corpus.vocabulary
        rng = self._rng()
        self._init_state(corpus.vocab_size, rng)
        self.perplexity_ = []
        indptr, indices, data = self._bow(corpus)
        D = corpus.n_docs
        n_batches = -(-D // self.batch_size)
        with progress_bar(self.n_epochs * n_batches, f"OnlineVB K={self.n_topics}", self.verbose) as bar:
            for epoch in range(self.n_epochs):
                order = rng.permutation(D) if self.shuffle else np.arange(D)
                for b in range(n_batches):
                    rows = order[b * self.batch_size:(b + 1) * self.batch_size]
                    self.lambda_ = self._step(self.lambda_, self.n_updates_, gather_rows(indptr, indices, data, rows),
                                              D, rng)
                    self.n_updates_ += 1
                    bar.advance(1)
                if eval_set is not None:
                    self._finish_fit()
                    with self._mid_fit_scoring():
                        self.perplexity_.append((epoch + 1, self.perplexity(eval_set)))
        self.n_docs_seen_ = D * self.n_epochs
        self._rng_state = rng           # partial_fit continues this fit's stream (not an earlier stream's Generator)
        self._finish_fit()
        self._set_fitted()
        self._train_stats = {"n_docs": D, "n_tokens": corpus.n_tokens, "vocab_size": corpus.vocab_size}
        return self

    def partial_fit(self, X, y=None, *, vocabulary=None):
        """One SVI step on the mini-batch ``X`` (all of it). The first call fixes the vocabulary;
        a failing batch (refused, or an error half-way through the step) leaves the model unchanged, its random
        stream included, so the next batch gives what it would have given without the failed one."""
        with unchanged_on_error(self):
            return self._partial_fit(X, vocabulary)

    def _partial_fit(self, X, vocabulary):
        self._validate()
        if not hasattr(self, "lambda_"):
            corpus = self._train_corpus(X, vocabulary).require_nonempty("mini-batch")
            rng = self._rng()
            self._rng_state = rng
            vocab = corpus.vocabulary
            self._init_state(corpus.vocab_size, rng)
            self.n_docs_seen_ = 0
        else:
            if self.lambda_.shape[0] != self.n_topics:
                raise DPTopicError(f"n_topics={self.n_topics}, but the model being trained has {self.lambda_.shape[0]}"
                                   f" topics: partial_fit continues the fitted model; fit() starts a new one with"
                                   f" n_topics={self.n_topics}.")
            corpus = self._as_model_corpus(X).require_nonempty("mini-batch")
            vocab = self.vocabulary_
            rng = getattr(self, "_rng_state", None) or self._rng()
            self._rng_state = rng
        seen = getattr(self, "n_docs_seen_", 0) + corpus.n_docs
        D = self.total_docs or seen
        lam = self._step(self.lambda_, self.n_updates_, self._bow(corpus), D, rng)
        self.vocabulary_, self.lambda_, self.n_docs_seen_ = vocab, lam, seen
        self.n_updates_ += 1
        self._finish_fit()
        self._set_fitted()
        return self

    def fit_transform(self, X, y=None, **kw) -> np.ndarray:
        return self.fit(X, **kw).transform(X)

    def _extra_arrays(self) -> dict:
        out = super()._extra_arrays()
        state = generator_state_array(getattr(self, "_rng_state", None))    # non-private: its draws protect nothing
        if state is not None:       # partial_fit after load draws what it would have drawn without the save
            out["rng_state"] = state
        return out

    def _load_extra(self, arrays) -> None:
        super()._load_extra(arrays)
        if "rng_state" in arrays:   # absent in older folders (the stream then restarts from the seed)
            self._rng_state = generator_from_state_array(arrays["rng_state"])

    def privacy_report(self) -> dict:
        return non_private_report("online variational Bayes adds no noise: the topics depend on every document.",
                                  unit="document", relation=DOCUMENT_RELATION)


def svi_release(noise_multiplier: float, sampling_rate: float, clip: float, steps: int) -> PlannedRelease:
    """DP-SVI's release at each of ``steps`` steps (Park et al. 2016, Sec. 4): the sum over a Poisson-sampled batch
    (rate ``sampling_rate``) of each document's expected sufficient statistics clipped to Frobenius norm ``clip``, L2
    sensitivity ``clip`` under add/remove of one document, plus Gaussian noise of std ``noise_multiplier * clip``:
    the subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019), composed by PLD."""
    return gaussian_release("expected sufficient statistics", noise_multiplier, _RELEASE, DOCUMENT_RELATION,
                            sensitivity=clip, sampling_rate=sampling_rate, count=steps)


class DPSVI(_TopicFlags, _VariationalLDA):
    """Document-level differentially private SVI for LDA (Park, Foulds, Chaudhuri & Welling 2016).

    Each of ``steps = round(n_epochs / sampling_rate)`` steps: every training document joins the
    mini-batch independently with probability ``q = sampling_rate`` (Poisson sampling, what the
    accountant assumes); a document longer than ``max_doc_len`` tokens keeps that many, drawn without
    replacement; its expected sufficient statistics ``s_d`` (K×V) are clipped to Frobenius norm
    ``clip`` (Park et al. eq. 9); the batch sum gets Gaussian noise of std ``noise_multiplier·clip``;
    it is normalised by the expected batch size ``q·D``, negatives are set to 0, and λ takes the SVI
    step. An empty batch is processed like any other (noise only). Everything after the noisy sum is
    post-processing, so the released topics are (ε, δ)-DP for one document added or removed. After ``fit``,
    ``supported_topics_`` (saved with the model) says which topics stand above the noise of the releases λ is built
    from (:func:`dptopic.moments.support.em_supported_topics`); ``background_topics_`` is all False.

    Parameters
    ----------
    n_topics : number of topics K (default 50).
    noise_multiplier : σ; the noise std is σ times the L2 sensitivity (``clip``). See :meth:`from_budget`.
    sampling_rate : q ∈ (0, 1].   n_epochs : expected passes (steps = round(n_epochs / q)).
    clip : per-document Frobenius bound ``a``; ``None``: no clipping, sensitivity ``max_doc_len``
        (``||s_d||_F ≤ N_d``, Park et al. eq. 8).
    max_doc_len : N, tokens kept per document.
    delta : δ at which ε is reported.   alpha, eta, tau0, kappa : as :class:`OnlineVB` (Park et al.'s code:
        τ0 = 1024, κ = 0.7, α = η = 1/K).
    secure : the noise comes from OpenDP's Gaussian (OS CSPRNG); refuses a seed.
    seed : for tests and reproduction only: default None (fresh OS entropy). A seeded run is marked
        ``noise_reproducible`` (the guarantee holds only while the seed stays secret); it is never saved.
    n_jobs : threads sharing each E-step, as :class:`OnlineVB`'s (each document is clipped on its own, so the blocks
        change nothing in the sensitivity or the accounting).
    verbose : 0 silences the progress bar (default 1).
    """

    _private = True
    _parameter_constraints = {**_VariationalLDA._parameter_constraints,
                              "noise_multiplier": [Real(MIN_NOISE_MULTIPLIER, MAX_NOISE_MULTIPLIER, "both")],
                              "sampling_rate": [Real(0, 1, "right")],
                              "n_epochs": [Real(0, 1_000_000, "right")],
                              "clip": [IsNone(), Real(0, None, "neither")],
                              "max_doc_len": [Int(1, None)],
                              "delta": [Real(0, 1, "neither")],
                              "secure": [Options((True, False))]}
    _theorem = ("Park et al. 2016, Sec. 4: each step is the Gaussian mechanism on the per-document clipped expected"
                " sufficient statistics (L2 sensitivity = clip) under Poisson subsampling; composed over the steps"
                " with privacy loss distributions (tight) and Renyi DP; the moments accountant (Abadi et al. 2016,"
                " Thm 2) as the paper ran it is reported beside them")

    def __init__(self, n_topics: int = 50, noise_multiplier: float = 1.24, sampling_rate: float = 0.05,
                 n_epochs: float = 1.0, clip: float | None = 50.0, max_doc_len: int = 500, delta: float = 1e-5,
                 alpha: float | None = None, eta: float | None = None, tau0: float = 1024.0, kappa: float = 0.7,
                 secure: bool = False, seed=None, n_jobs: int = 1, verbose: int = 1):
        self.n_topics = n_topics
        self.noise_multiplier = noise_multiplier
        self.sampling_rate = sampling_rate
        self.n_epochs = n_epochs
        self.clip = clip
        self.max_doc_len = max_doc_len
        self.delta = delta
        self.alpha = alpha
        self.eta = eta
        self.tau0 = tau0
        self.kappa = kappa
        self.secure = secure
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose

    @classmethod
    def from_budget(cls, epsilon: float, delta: float = 1e-5, n_epochs: float = 1.0, sampling_rate: float = 0.05,
                    **kw) -> "DPSVI":
        """The least-noise model whose whole run is (ε, δ)-DP by the tight (PLD) accountant; σ is
        calibrated with dp-accounting and checked so that ε is never exceeded."""
        validate_value("epsilon", epsilon, [Real(0, None, "neither")])
        validate_value("delta", delta, [Real(0, 1, "neither")])
        validate_value("sampling_rate", sampling_rate, [Real(0, 1, "right")])
        validate_value("n_epochs", n_epochs, [Real(0, None, "neither")])
        if n_epochs / sampling_rate > MAX_COUNT:  # before calibrating: its accountant would run over every step
            raise ParameterError("{n_epochs=:g} at {sampling_rate=:g} makes {steps:.3g} steps; at most {most:,} are"
                                 " supported: raise {sampling_rate} or lower {n_epochs}.", "n_epochs", n_epochs,
                                 values={"sampling_rate": sampling_rate}, steps=n_epochs / sampling_rate, most=MAX_COUNT)
        steps = cls._n_steps(n_epochs, sampling_rate)
        sigma = calibrate_noise_multiplier(float(epsilon), float(delta), float(sampling_rate), steps)
        if sigma <= MIN_NOISE_MULTIPLIER:
            import warnings

            from ..accounting.gaussian import pld_epsilon

            spent = pld_epsilon(sigma, float(sampling_rate), steps, float(delta))
            if spent < float(epsilon):
                warnings.warn(f"DPSVI.from_budget: epsilon={float(epsilon):g} allows less noise than the smallest noise"
                              f" multiplier supported ({MIN_NOISE_MULTIPLIER:g}); the run uses {MIN_NOISE_MULTIPLIER:g}"
                              f" and spends epsilon = {spent:.4g}, below the budget.", UserWarning, stacklevel=user_stacklevel())
        m = cls(noise_multiplier=sigma, sampling_rate=sampling_rate, n_epochs=n_epochs, delta=delta, **kw)
        m._budget = (float(epsilon), float(delta))
        return m

    @staticmethod
    def _n_steps(n_epochs, q) -> int:
        return max(1, int(round(n_epochs / q)))

    @property
    def n_steps(self) -> int:
        return self._n_steps(self.n_epochs, self.sampling_rate)

    def release_plan(self, n_words: int | None = None) -> ReleasePlan:
        """The ``n_steps`` releases a fit makes (public settings alone; the vocabulary's size changes nothing):
        :func:`svi_release` at ``noise_multiplier`` (which :meth:`from_budget` calibrated to its budget)."""
        return ReleasePlan(type(self).__name__, "document",
                           (svi_release(float(self.noise_multiplier), float(self.sampling_rate), self.sensitivity_,
                                        self.n_steps),),
                           relation=DOCUMENT_RELATION, theorem=self._theorem, budget=self._budget_of({}))

    def _planned_spend(self, report: dict):
        return self.release_plan().run_plan(budget=self._budget_of(report))

    @property
    def sensitivity_(self) -> float:
        """L2 sensitivity of the batch sum: ``clip``, or ``max_doc_len`` without clipping."""
        return float(self.max_doc_len if self.clip is None else self.clip)

    def _validate(self) -> None:
        super()._validate()
        if self.secure and self.seed is not None:
            raise DPTopicError("secure=True draws noise from the operating system's CSPRNG and refuses a seed: remove seed (--seed).")
        warn_if_large_delta(self.delta)
        if self.n_epochs / self.sampling_rate > MAX_COUNT:
            raise ParameterError("{n_epochs=:g} at {sampling_rate=:g} makes {steps:.3g} steps; at most {most:,} are"
                                 " supported: raise {sampling_rate} or lower {n_epochs}.", "n_epochs", self.n_epochs,
                                 values={"sampling_rate": self.sampling_rate}, steps=self.n_epochs / self.sampling_rate, most=MAX_COUNT)

    def _step(self, lam, t, batch, D, rng, ledger=None):
        """One private step on a Poisson batch; returns ``(new λ, norms)``."""
        ptr, ids, cts = batch
        cts = cap_lengths(ptr, cts, self.max_doc_len, rng)
        clip = np.inf if self.clip is None else self.clip
        _, ss, norms = self._estep(lam, ptr, ids, cts, rng, clip)
        noisy, ev = gaussian_mechanism(ss, self.noise_multiplier, self.sensitivity_, None if self.secure else rng,
                                       self.sampling_rate, self.secure, label=_RELEASE)
        if ledger is not None:
            ledger.spend(ev)
        # Park et al.'s step adds D times the noisy sum normalised by the expected batch size qD: D cancels, and is
        # cancelled here before any arithmetic, so the exact number of training documents (which moves with one
        # document) never enters lambda, not even through the rounding of x / (qD) * D
        s_tilde = np.maximum(noisy / self.sampling_rate, 0.0)
        if getattr(self, "_releases", None) is not None:     # in fit: lambda's weighting of the raw releases
            rho, (total, weight2) = self._rho(t), self._releases
            self._releases = ((1.0 - rho) * total + rho * noisy / self.sampling_rate,
                              (1.0 - rho) ** 2 * weight2 + rho ** 2)
        return self._svi_update(lam, s_tilde, 1.0, t), norms

    def fit(self, X, y=None, *, vocabulary=None, eval_set=None):
        """Train with ``n_steps`` Poisson-sampled private steps. ``vocabulary`` (public word list) fixes
        the vocabulary; otherwise it is taken from ``X`` and is not covered by the guarantee.

        A fit that fails or is interrupted half-way leaves the model exactly as it was: nothing of the aborted run
        (its noisy λ iterates, its ledger) is kept, released or saved, so the earlier fit's ``lambda_`` and
        ``privacy_`` still describe each other."""
        with unchanged_on_error(self):
            return self._fit(X, vocabulary, eval_set)

    def _fit(self, X, vocabulary, eval_set):
        self._validate()
        self._require_secure_noise()
        corpus = self._train_corpus(X, vocabulary)
        self._vocabulary_supplied = (vocabulary is not None or vocabulary_given(X)
                                     or (getattr(self, "_input_names", None) is not None and self._input_names_public))
        self.vocabulary_ = corpus.vocabulary
        rng = self._rng()
        self._init_state(corpus.vocab_size, rng)
        self.ledger_ = PrivacyLedger(unit="document", relation=DOCUMENT_RELATION, theorem=self._theorem,
                                     budget=getattr(self, "_budget", None))
        indptr, indices, data = self._bow(corpus)
        D, q, T = corpus.n_docs, float(self.sampling_rate), self.n_steps
        self.release_plan().reserve(self.ledger_)    # the whole plan, before the first noise draw
        n_seen = n_clipped = 0
        self.perplexity_ = []
        self._releases = (np.zeros_like(self.lambda_), 0.0)
        with progress_bar(T, f"DPSVI K={self.n_topics} sigma={self.noise_multiplier:.3g}", self.verbose) as bar:
            for t in range(T):
                rows = np.flatnonzero(rng.random(D) < q)      # Poisson sampling: each document independently
                self.lambda_, norms = self._step(self.lambda_, t, gather_rows(indptr, indices, data, rows), D, rng,
                                                 self.ledger_)
                self.n_updates_ += 1
                n_seen += len(rows)
                if self.clip is not None:
                    n_clipped += int(np.count_nonzero(norms > self.clip))
                bar.advance(1)
        # the Poisson batch sizes add up to a noiseless estimate of D that moves with one document: it is used for
        # the clipped fraction (outside the guarantee, never saved) and then dropped
        self.clipped_fraction_ = n_clipped / n_seen if n_seen else 0.0
        # post-processing of the releases: the weighted sum of the raw noisy batch sums that lambda is built from
        # (before the clamp at 0), against its noise (dptopic.moments.support.em_supported_topics)
        total, weight2 = self._releases
        self._releases = None
        self.supported_topics_ = em_supported_topics(
            total, float(self.noise_multiplier) * self.sensitivity_ / float(self.sampling_rate) * math.sqrt(weight2))
        self.background_topics_ = np.zeros(self.n_topics, dtype=bool)
        self._finish_fit()
        if eval_set is not None:
            with self._mid_fit_scoring():
                self.perplexity_.append((T, self.perplexity(eval_set)))
        self._set_fitted(corpus)
        self._train_stats = {"vocab_size": corpus.vocab_size}
        return self

    def privacy_report(self) -> dict:
        q, s, T, d = float(self.sampling_rate), float(self.noise_multiplier), self.n_steps, float(self.delta)
        rep = self.ledger_.report(d)
        try:
            ma_code = moments_accountant_epsilon(s, q, T, d, code_cap=True)
        except DPTopicError:
            ma_code = None
        rep.update({
            "mode": "DP-SVI",
            "parameters": {"noise_multiplier": s, "sampling_rate": q, "steps": T, "n_epochs": self.n_epochs,
                           "clip": self.clip, "l2_sensitivity": self.sensitivity_, "max_doc_len": self.max_doc_len},
            "epsilon_moments_accountant_paper": ma_code,
            "epsilon_moments_accountant": moments_accountant_epsilon(s, q, T, d, max_order=64),
            "epsilon_strong_composition": strong_composition_for_sigma(s, q, T, d, 1e-6) if d > T * q * 1e-6 else None,
            "paper_figures_note": ("epsilon_moments_accountant_paper: log moments over integer orders up to"
                                   " floor(sigma^2 ln(1/(q sigma))) as in Park et al.'s code; not computed (null)"
                                   " outside the range that cap comes from (Abadi et al. 2016, Lemma 3: sigma >= 1"
                                   " and q < 1/(16 sigma)); epsilon_moments_accountant: orders 1..64; epsilon_strong_"
                                   "composition: the paper's baseline analysis (classic Gaussian per step at"
                                   " delta_step = 1e-6, amplification by subsampling, Dwork & Roth Thm 3.20) for the"
                                   " same noise. These are cross-checks, not the guarantee: that is the report's"
                                   " epsilon, the figure its epsilon_method names."),
            "vocabulary_source": "supplied" if getattr(self, "_vocabulary_supplied", False) else "data",
            "scope": ("covers every noisy sum of expected sufficient statistics, hence every lambda iterate and the"
                      " released topics (post-processing). NOT covered: "
                      + ("" if getattr(self, "_vocabulary_supplied", False) else
                         VOCABULARY_NOT_COVERED)
                      + "the choice of hyper-parameters, and any metric computed on the training documents."),
            "outside_guarantee": {"clipped_fraction": getattr(self, "clipped_fraction_", None),
                                  "note": "computed from the private documents without noise; shown, never saved"},
            "secure_noise": bool(self.secure),
            "noise": "gaussian",
        })
        if self.seed is not None:
            rep["warning"] = "an explicit seed makes the noise reproducible: the guarantee holds only while the seed stays secret."
        document_level_notes(rep, bool(self.secure), "DPSVI", reproducible=self.seed is not None)
        if getattr(self, "_budget", None):
            rep["budget"] = {"epsilon": self._budget[0], "delta": self._budget[1]}
        return rep

    def save(self, directory, **kw) -> str:
        """Save like every model, without the seed and without what lies outside the guarantee."""
        priv, seed = self.privacy_, self.seed
        self.privacy_ = {k: v for k, v in priv.items() if k != "outside_guarantee"}
        self.seed = None
        try:
            return super().save(directory, **kw)
        finally:
            self.privacy_, self.seed = priv, seed
