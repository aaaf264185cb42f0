"""Online variational Bayes for LDA, the non-private reference (Hoffman, Blei & Bach 2010).
"""
from __future__ import annotations

import math

import numpy as np

from .._progress import progress_bar
from .._validation import Int, IsNone, Options
from ..accounting import non_private_report
from ..accounting.events import DOCUMENT_ADD_REMOVE
from ..errors import DPTopicError, ParameterError
from ..kernels.vb import canonical_bow, gather_rows
from ._variational import ESTEP_MAX_ITER, _VariationalLDA
from .base import generator_from_state_array, generator_state_array, unchanged_on_error


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

    def _validate(self) -> None:
        n = self.n_epochs
        if isinstance(n, float) and not (math.isfinite(n) and n.is_integer()):     # DPSVI's epochs may be fractional
            raise ParameterError("invalid {n_epochs=:g}: OnlineVB makes whole passes over the corpus; give an integer"
                                 " >= 1 (DPSVI takes fractional epochs).", "n_epochs", n,
                                 key="models.online_vb.validate")
        super()._validate()

    def _step(self, lam, t, batch, D, rng):
        ptr, ids, cts = batch
        # the E-step takes the step too (the numbers of _svi_update), threads and all
        _, new_lam, _ = self._estep(lam, ptr, ids, cts, rng, step=(self._rho(t), self.eta_, D / (len(ptr) - 1)))
        return new_lam

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
        indptr, indices, data = canonical_bow(*self._bow(corpus), corpus.vocab_size)   # checked once, not per batch
        D = corpus.n_docs
        n_batches = -(-D // self.batch_size)
        with progress_bar(self.n_epochs * n_batches, f"OnlineVB K={self.n_topics}", self.verbose) as bar:
            for epoch in range(self.n_epochs):
                order = rng.permutation(D) if self.shuffle else np.arange(D)
                for b in range(n_batches):
                    rows = order[b * self.batch_size:(b + 1) * self.batch_size]
                    self.lambda_ = self._step(self.lambda_, self.n_updates_,
                                              gather_rows(indptr, indices, data, rows, checked=True), D, rng)
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
                                  unit="document", relation=DOCUMENT_ADD_REMOVE)
