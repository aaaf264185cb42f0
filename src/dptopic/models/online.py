"""O-LDA and OLP-LDA: online LDA on mini-batches, in the clear or from randomized reports
(Zhao et al. 2020, Sec. VI, eq. 10-13 and 19-21, Algorithm 2).

Orchestration only: the topic-word prior of O-LDA is a K×V matrix ``B`` sampled against by
the core dense Gibbs kernel (see :class:`_MatrixPriorGibbs`); the denoising estimators live
in :mod:`dptopic.local.estimation`; persistence is :func:`dptopic._io.save_bundle`.
"""
from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy import stats

from .._progress import progress_bar
from .._validation import IsNone, Int, Options, Real
from ..corpus import Corpus, Vocabulary, as_corpus
from ..corpus.corpus import is_text_column
from ..errors import DPTopicError, ParameterError, user_stacklevel
from ..kernels import count_assignments
from ..local import ReportSet
from ..local.estimation import (bayes_estimate, bits_to_corpus, document_frequencies, integer_targets,
                                omega_from_sigma2, overlap_count, overlap_threshold, presence_bits,
                                prior_mean_update, reconstruct, sigma2_from_omega)
from .base import (GibbsTopicModel, check_topics_fit_vocabulary, generator_from_state_array, generator_state_array,
                   unchanged_on_error)
from .lda import LDA
from .lplda import LocalReportsModel


class _MatrixPriorGibbs(GibbsTopicModel):
    """Collapsed Gibbs sampling with a K×V topic-word prior ``B`` (O-LDA eq. 12), by the core kernel.

    The dense kernel's word factor is ``table[w, k] + beta`` over ``nk[k] + V·beta``; storing
    ``n[w, k] + B[k, w] − beta`` and ``n_k + Σ_w B[k, w] − V·beta`` (as floats) makes that
    exactly ``(n_kw + B_kw) / (n_k + Σ_w B_kw)``, and the kernel's ±1 updates keep it so.
    """

    def __init__(self, n_topics=50, alpha=1.0, beta=0.01, n_iter=50, seed=None, n_jobs=1, verbose=0):
        self.n_topics, self.alpha, self.beta, self.n_iter = n_topics, alpha, beta, n_iter
        self.seed, self.n_jobs, self.verbose = seed, n_jobs, verbose

    def fit_with_prior(self, corpus: Corpus, prior: np.ndarray):
        self._prior = prior
        return self.fit(corpus)

    def _start(self, arrays, corpus, rng) -> None:
        B, V = self._prior, corpus.vocab_size
        arrays.nwk = arrays.nwk.astype(np.float64) + (B.T - self.beta)
        arrays.nk = arrays.nk.astype(np.float64) + (B.sum(axis=1) - V * self.beta)

    def _finish(self, arrays, rng) -> np.ndarray:
        K, V = self.n_topics, self._prior.shape[1]
        _, nwk, _ = count_assignments(arrays.word_ids, arrays.doc_ptr, arrays.z, K, V)
        self.topic_word_counts_ = nwk.T.astype(np.int64)
        phi = self.topic_word_counts_ + self._prior  # eq. (13)
        return phi / phi.sum(axis=1, keepdims=True)


class OnlineLDA(GibbsTopicModel):
    """O-LDA (Zhao et al. 2020, Sec. VI-A, eq. 10-13): online LDA over a stream of mini-batches.

    Each mini-batch ``D_l`` is sampled by collapsed Gibbs sampling with the matrix prior
    ``B^l`` (eq. 12); its topic-word counts ``N^l`` then enter the next prior,
    ``B^{l+1} = B^l + lam·N^l`` (eq. 10), and ``Φ^l = (N^l + B^l)/rowsum`` (eq. 13) is the
    current model. Memory is constant in the length of the stream: only ``B`` and ``Φ`` are kept.
    Note that ``B`` grows with every batch, so old batches weigh more and more.

    Parameters
    ----------
    n_topics, alpha, beta : K, the document-topic and the initial topic-word prior.
    lam : correlation factor λ in [0, 1] (0: batches independent).
    n_iter : Gibbs sweeps per mini-batch. ``batch_size`` : used by :meth:`fit`.
    prior_corpus : optional clean corpus ``D_0``; ``B^1 = beta + lam·N^0`` with ``N^0`` its
        topic-word counts after ``prior_iter`` sweeps of plain LDA (as in Algorithm 2).
    seed, n_jobs, verbose : as :class:`LDA`.
    """

    _parameter_constraints = {**GibbsTopicModel._parameter_constraints,
                              "lam": [Real(0, 1, "both")],
                              "batch_size": [Int(1, None)],
                              "prior_iter": [Int(1, None)]}

    def __init__(self, n_topics: int = 50, alpha: float = 1.0, beta: float = 0.01, lam: float = 0.5,
                 n_iter: int = 50, batch_size: int = 160, prior_corpus: Corpus | None = None, prior_iter: int = 200,
                 seed=None, n_jobs: int = 1, verbose: int = 1):
        self.n_topics = n_topics
        self.alpha = alpha
        self.beta = beta
        self.lam = lam
        self.n_iter = n_iter
        self.batch_size = batch_size
        self.prior_corpus = prior_corpus
        self.prior_iter = prior_iter
        self.seed = seed
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ state
    _STATE = ("prior_", "privacy_", "components_", "topic_word_counts_", "vocabulary_", "n_batches_", "n_docs_seen_",
              "_gen")

    def _reset(self) -> None:
        """Forget the stream (``fit`` starts over)."""
        for k in self._STATE:
            if hasattr(self, k):
                delattr(self, k)

    def _transaction(self, work, *args):
        """Run ``work``; on any error restore the model exactly (every attribute, not only the stream's ``_STATE``:
        the parameters the failed batch validated, its overlap note; and the random stream) and re-raise."""
        with unchanged_on_error(self):
            return work(*args)

    def _refit(self, work):
        """``fit``'s transaction: validate the parameters, then run ``work`` (which resets the stream and trains
        from scratch); on any error (a bad parameter, a bad corpus, a bad batch half-way through) the model is put
        back exactly as it was before, fitted or not, and the error re-raised."""
        with unchanged_on_error(self):
            self._validate()                        # before a single batch: batch_size=-1 would train on none
            return work()

    def _check_stream_topics(self) -> None:
        """A stream under way keeps its K: ``set_params(n_topics=...)`` changes the next ``fit``, not the stream."""
        prior = getattr(self, "prior_", None)
        if isinstance(prior, np.ndarray) and prior.ndim == 2 and prior.shape[0] != self.n_topics:
            raise DPTopicError(f"n_topics={self.n_topics}, but the stream under way has {prior.shape[0]} topics:"
                               f" partial_fit continues it; fit() starts a new stream with n_topics={self.n_topics}.")

    def _child_seeds(self) -> np.ndarray:
        if not hasattr(self, "_gen"):
            self._gen = self._rng()
        return self._gen.integers(0, 2**63 - 1, size=2)

    def _gibbs(self, seed) -> _MatrixPriorGibbs:
        return _MatrixPriorGibbs(self.n_topics, self.alpha, self.beta, self.n_iter, seed=int(seed),
                                 n_jobs=self._jobs, verbose=0)

    def _ensure_started(self, vocabulary: Vocabulary) -> None:
        if hasattr(self, "prior_"):
            return
        self._validate()
        K, V = self.n_topics, len(vocabulary)
        check_topics_fit_vocabulary(K, V)
        self.vocabulary_ = vocabulary
        prior = np.full((K, V), float(self.beta))
        if self.prior_corpus is not None:
            d0 = self._check_corpus(self.prior_corpus, "prior corpus")
            seed = self._child_seeds()[0]
            lda = LDA(K, alpha=self.alpha, beta=self.beta, n_iter=self.prior_iter, seed=int(seed), n_jobs=self._jobs,
                      eval_every=0, verbose=self.verbose).fit(d0)
            prior += self.lam * lda.topic_word_counts_
            self.components_ = lda.components_
            self.topic_word_counts_ = lda.topic_word_counts_
            self._start_from_prior(d0, lda)
        self.prior_ = prior
        self.n_batches_ = 0
        self.n_docs_seen_ = 0

    def _start_from_prior(self, d0: Corpus, lda: LDA) -> None:
        pass

    def _check_corpus(self, corpus, what: str) -> Corpus:
        if not isinstance(corpus, Corpus):
            raise DPTopicError(f"the {what} must be a dptopic Corpus, got a {type(corpus).__name__}.")
        vocab = getattr(self, "vocabulary_", None)
        if vocab is not None and corpus.vocabulary != vocab:
            raise DPTopicError(f"the {what} uses another vocabulary ({corpus.vocab_size} words) than the model"
                               f" ({len(vocab)} words): build it with the model's vocabulary.")
        if corpus.n_docs == 0 or corpus.n_tokens == 0:
            raise DPTopicError(f"empty {what}: it holds no tokens; skip it or send documents.")
        return corpus

    def _as_batch(self, X, what: str) -> Corpus:
        """A mini-batch in any form ``fit`` takes (a Corpus, a count matrix, a DataFrame, texts, token lists), on the
        model's vocabulary once it has one (the prior corpus's, or the first batch's)."""
        if not isinstance(X, Corpus):
            vocab = getattr(self, "vocabulary_", None)
            if vocab is None and isinstance(self.prior_corpus, Corpus):
                vocab = self.prior_corpus.vocabulary
            if vocab is None:                       # the first batch names the model's words (its columns, if any)
                X, names = self._as_input(X)
                X = as_corpus(X, vocabulary=names)
            else:                                   # later batches are read into them, their columns checked
                cols = getattr(X, "columns", None)
                if getattr(self, "vocabulary_", None) is not None and not is_text_column(X):
                    X = self._frame_in_model_order(X)     # as transform (and OnlineVB) read a later batch's columns
                elif cols is not None and hasattr(X, "to_numpy"):       # the prior corpus's words, before any batch
                    if [str(c) for c in cols] != list(vocab.words):
                        raise DPTopicError("X's columns are not the words the model was fitted on: select them in"
                                           " the model's order, X[list(model.vocabulary_.words)].")
                    X = X.to_numpy()
                shape = getattr(X, "shape", None)
                if (sp.issparse(X) or isinstance(X, np.ndarray)) and len(shape) == 2 and shape[1] != len(vocab):
                    raise DPTopicError(f"X has {shape[1]} features, but {type(self).__name__} is expecting {len(vocab)}"
                                       " features as input: its columns must be the words of the model's vocabulary,"
                                       " in its order (model.vocabulary_).")
                X = as_corpus(X, vocabulary=vocab.words)
        return self._check_corpus(X, what)

    def _train_batch(self, corpus: Corpus, seed) -> None:
        g = self._gibbs(seed).fit_with_prior(corpus, self.prior_)
        self.components_ = g.components_
        self.topic_word_counts_ = g.topic_word_counts_
        self.prior_ = self.prior_ + self.lam * g.topic_word_counts_  # eq. (10), for the next batch
        self.n_batches_ += 1
        self.n_docs_seen_ += corpus.n_docs

    # ------------------------------------------------------------ public API
    def partial_fit(self, X, y=None):
        """Train on one mini-batch (a :class:`Corpus`, a count matrix with the model's columns, texts or token
        lists, read into the model's vocabulary once it has one). A bad batch raises and changes nothing."""
        def work():
            self._validate()                        # a set_params since the last batch is checked, as fit checks it
            self._check_stream_topics()
            corpus = self._as_batch(X, "mini-batch")
            self._ensure_started(corpus.vocabulary)
            seeds = self._child_seeds()
            self._train_batch(corpus, seeds[0])
            self._set_fitted()
            return self

        return self._transaction(work)

    def fit(self, X, y=None, **kw):
        """Reset and stream ``X`` (a :class:`Corpus`, count matrix, texts or token lists) in mini-batches of
        ``batch_size`` documents."""
        def work():
            self._reset()
            self._input_names = None                    # a refit forgets the columns of an earlier one
            self._input_tokens = False
            corpus = self._as_batch(X, "corpus")
            starts = range(0, corpus.n_docs, self.batch_size)
            with progress_bar(len(starts), f"{type(self).__name__} K={self.n_topics}", self.verbose) as bar:
                for a in starts:
                    self.partial_fit(corpus.subset(np.arange(a, min(corpus.n_docs, a + self.batch_size))))
                    bar.advance(1, info="")
            return self

        return self._refit(work)

    def state_nbytes(self) -> int:
        """Bytes held by the model's arrays (constant in the number of batches)."""
        return int(sum(v.nbytes for v in vars(self).values() if isinstance(v, np.ndarray)))

    def privacy_report(self) -> dict:
        from ..accounting import non_private_report

        return non_private_report("O-LDA trains on the mini-batches in the clear; it adds no noise.",
                                  unit="document", relation="add or remove one document")

    # ----------------------------------------------------------- persistence
    def _saved_params(self) -> dict:
        params = super()._saved_params()
        params["prior_corpus"] = None  # consumed into prior_; the corpus itself is not saved
        return params

    def save(self, directory, **kw) -> str:
        """Write the stream's state into ``directory`` (``model.json`` + ``.npy`` arrays, atomically, no
        pickle): Φ, the matrix prior ``B`` and the last batch's counts ``N^l``, the numbers of batches and
        documents seen, and for OLP-LDA its prior-mean state (μ, η, the ω history). ``dptopic.load(directory)``
        reads it back, and :meth:`partial_fit` then continues the stream. O-LDA also saves the state of its random
        stream, so the batches after ``load`` give exactly what they would have given without the save; OLP-LDA
        never saves its seed nor that state (after ``load`` its post-processing draws fresh randomness: a valid
        continuation, not the same one). ``prior_corpus`` is not saved (it is consumed into ``B``). ``save_metrics`` as for every model
        (:meth:`TopicModel.save <dptopic.models.base.TopicModel.save>`)."""
        self._check_fitted()
        self._train_stats = {"n_batches": self.n_batches_, "n_docs_seen": self.n_docs_seen_}
        return super().save(directory, **kw)

    def _extra_arrays(self) -> dict:
        out = {"prior": self.prior_, "topic_word_counts": self.topic_word_counts_}
        state = generator_state_array(getattr(self, "_gen", None)) if self._saves_stream_rng else None
        if state is not None:       # partial_fit after load draws the seeds it would have drawn without the save
            out["rng_state"] = state
        return out

    _saves_stream_rng = True        # O-LDA is not private: its random stream protects nothing (OLP-LDA: False)

    def _load_extra(self, arrays) -> None:
        self.prior_ = np.asarray(arrays["prior"], dtype=np.float64)
        self.topic_word_counts_ = arrays["topic_word_counts"]
        if self.prior_.shape != self.components_.shape:
            from ..errors import CorruptModelError
            raise CorruptModelError("corrupt model: prior.npy must have the shape of components.npy; re-save the model.")
        for key in ("n_batches", "n_docs_seen"):
            v = self._train_stats.get(key, 0)
            if type(v) is not int or v < 0:
                from ..errors import CorruptModelError
                raise CorruptModelError(f"corrupt model: training.{key} in model.json must be a whole number of at"
                                        f" least 0, not {str(v)[:20]!r}; re-save the model.")
        self.n_batches_ = int(self._train_stats.get("n_batches", 0))
        self.n_docs_seen_ = int(self._train_stats.get("n_docs_seen", 0))
        if self._saves_stream_rng and "rng_state" in arrays:   # absent in older folders: the stream restarts from seed
            self._gen = generator_from_state_array(arrays["rng_state"])


class OLPLDA(LocalReportsModel, OnlineLDA):
    """OLP-LDA (Zhao et al. 2020, Sec. VI, Algorithm 2): online LDA on randomized mini-batches
    with Bayesian denoising against a clean prior data set.

    ``prior_corpus`` (``D_0``) must be **public or consented data that is disjoint from the
    contributors whose reports are streamed**: it is used in the clear and is not covered by
    any guarantee. (The paper samples ``D_0`` from the same training set as the stream; then
    the same documents would be seen both in the clear and randomized.) A heuristic check
    warns when a report is suspiciously close to a prior document.

    Per batch of ``M`` reports with noisy counts ``n_t`` (default, reconciled Algorithm 2):

    1. prior mean ``μ_t = (μ_t^{prev} + η_t^{prev})/2 · M / M^{prev}`` (eq. 21), starting from
       the document frequencies of ``D_0``;
    2. ``η_t = ω μ_t + (1 − ω)(2 n_t − f M)/(2(1 − f))`` (eq. 19), ``ω`` fixed or from ``σ²``
       by Theorem 6;
    3. reconstruct the batch to the targets ``clamp(round(η_t), 0, M)`` (LP-LDA Steps 3-5);
    4. Gibbs-sample it against the matrix prior ``B`` (O-LDA eq. 12), ``B ← B + λ N^l``
       (eq. 10), with ``B`` starting at ``β + λ N^0`` from plain LDA on ``D_0``.

    ``alg2_literal=True`` follows Algorithm 2 as printed instead: ``μ^l = η^{l−1}`` (line 13,
    no averaging, no rescaling by batch size) and ``μ^0 = Σ_k N^0_{k,t}`` (token counts of
    ``D_0``, line 2-3).

    ``privacy_["stream"]`` names the mini-batches and reports taken so far (over every ``partial_fit``, and across a
    save and load) and what a contributor with a report in each of those batches has spent (its events composed).

    Parameters
    ----------
    prior_corpus : ``D_0`` (a :class:`Corpus` over the public vocabulary), or ``"none"`` for
        OLP-LDA without prior data (``B`` starts at ``β``, the first batch uses eq. 8 alone,
        later batches use earlier batches' estimates as the prior). ``None``: not given yet
        (``partial_fit`` then refuses to run).
    f, epsilon_word : expected flip parameter (give at most one; default: the reports' own).
    omega : fixed prior weight ω (paper: 0.4); give ``omega=None`` and ``sigma2`` to derive ω
        from the prior variance by Theorem 6 for every batch size.
    lam, n_iter, batch_size, prior_iter, n_topics, alpha, beta : as :class:`OnlineLDA`.
    alg2_literal : False (default): the reconciled Algorithm 2 (steps 1-4 above); True: Algorithm 2
        as printed (above). ``privacy_["mode"]`` says which ran.
    delta : delta for the tight epsilon(delta) of the per-document guarantee.
    seed : None (default: fresh OS entropy) or a seed for reproducing the server's post-processing
        (reconstruction and sampling); the randomization happened on the contributors' devices and is
        not reproducible from it. Never saved.
    n_jobs, verbose : as :class:`OnlineLDA` (threads for the Gibbs sweeps; 0 silences the progress bar).
    """

    _parameter_constraints = {**OnlineLDA._parameter_constraints,
                              "f": [IsNone(), Real(0, 1, "neither")],
                              "epsilon_word": [IsNone(), Real(0, None, "neither")],
                              "omega": [IsNone(), Real(0, 1, "both")],
                              "sigma2": [IsNone(), Real(0, None, "neither")],
                              "alg2_literal": [Options((True, False))],
                              "delta": [Real(0, 1, "neither")]}

    def __init__(self, prior_corpus=None, f: float | None = None, epsilon_word: float | None = None,
                 n_topics: int = 50, alpha: float = 1.0, beta: float = 0.01, lam: float = 0.5,
                 omega: float | None = 0.4, sigma2: float | None = None, batch_size: int = 160, n_iter: int = 50,
                 prior_iter: int = 200, alg2_literal: bool = False, delta: float = 1e-5, seed=None,
                 n_jobs: int = 1, verbose: int = 1):
        super().__init__(n_topics=n_topics, alpha=alpha, beta=beta, lam=lam, n_iter=n_iter, batch_size=batch_size,
                         prior_corpus=prior_corpus, prior_iter=prior_iter, seed=seed, n_jobs=n_jobs, verbose=verbose)
        self.f = f
        self.epsilon_word = epsilon_word
        self.omega = omega
        self.sigma2 = sigma2
        self.alg2_literal = alg2_literal
        self.delta = delta

    _saves_stream_rng = False   # like its seed, never saved: it would reproduce the server's post-processing draws

    _STATE = OnlineLDA._STATE + ("mu_", "eta_", "size_prev_", "f_", "omega_history_", "_prior_presence",
                                   "_overlap_thr")

    def _validate(self) -> None:
        super()._validate()
        self._expected_f()
        if (self.omega is None) == (self.sigma2 is None):
            tail = ": Theorem 6 ties them, omega = Mf(2-f)/(Mf(2-f) + 4 sigma2 (1-f)^2)."
            raise ParameterError("give exactly one of {omega} and {sigma2} (set {omega}=None when you give {sigma2})"
                                 + tail, "omega", self.omega,
                                 flag_template="give {omega} or {sigma2}, not both" + tail)

    def _no_prior(self) -> bool:
        return isinstance(self.prior_corpus, str) and self.prior_corpus == "none"

    def _ensure_started(self, vocabulary) -> None:
        if hasattr(self, "prior_"):
            return
        if self.prior_corpus is None:
            raise DPTopicError("no prior data: OLP-LDA needs prior_corpus (a public corpus disjoint from the stream,"
                               " --prior) before the first partial_fit; pass prior_corpus='none' to run without one.")
        if self._no_prior():
            self.prior_corpus = None
            try:
                super()._ensure_started(vocabulary)
            finally:
                self.prior_corpus = "none"
            self.mu_ = self.eta_ = None
            self.size_prev_ = 0
        else:
            super()._ensure_started(vocabulary)
        self.omega_history_ = []

    def _start_from_prior(self, d0: Corpus, lda: LDA) -> None:
        if self.alg2_literal:
            eta0 = lda.topic_word_counts_.sum(axis=0).astype(np.float64)  # line 2-3: token counts
        else:
            eta0 = document_frequencies(d0).astype(np.float64)
        self.mu_ = eta0
        self.eta_ = eta0
        self.size_prev_ = d0.n_docs
        self._prior_presence = np.packbits(presence_bits(d0), axis=1, bitorder="little")

    def _omega(self, M: int, f: float) -> float:
        return float(self.omega) if self.omega is not None else omega_from_sigma2(M, f, self.sigma2)

    def _warn_overlap(self, reports: ReportSet, f: float, seed) -> None:
        """Warn when more reports lie close to a prior document than non-members would.

        Calibration: the server randomizes its own prior documents with the same ``f``; the 5%
        quantile of their distance to the nearest *other* prior document is the threshold, so
        about 5% of a disjoint batch falls below it. A batch with far more (binomial tail
        below 1e-4) is flagged: the prior corpus seems to contain the contributors' documents.
        """
        self._overlap_note = None       # the last batch's finding, one line (the service keeps it as the batch note)
        P = getattr(self, "_prior_presence", None)
        if P is None or len(P) < 20:
            return
        if getattr(self, "_overlap_thr", None) is None:
            from ..mechanisms.randomized_response import randomized_response
            sub = P[:1000]
            bits = np.unpackbits(sub, axis=1, count=reports.vocab_size, bitorder="little").astype(bool)
            rows, ids = np.nonzero(bits)
            ptr = np.zeros(len(sub) + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=len(sub)), out=ptr[1:])
            rr, _ = randomized_response(ids, ptr, reports.vocab_size, f, np.random.default_rng([int(seed), 1]))
            self._overlap_thr = overlap_threshold(sub, rr, 0.05)
        thr, rate = self._overlap_thr
        hits = overlap_count(reports.packed, P, thr)
        if hits > stats.binom.ppf(1 - 1e-4, reports.n_reports, rate):
            self._overlap_note = (f"{hits} of {reports.n_reports} reports lie as close to a prior document as at most"
                                  f" {rate:.0%} of non-members would: the prior corpus seems to overlap the stream."
                                  " It must be public data disjoint from the contributors.")
            warnings.warn(self._overlap_note, stacklevel=user_stacklevel())

    def partial_fit(self, X, y=None, *, vocabulary=None):
        """Train on one mini-batch of randomized reports (a :class:`ReportSet`). A bad batch raises
        and leaves the model exactly as it was."""
        def work():
            self._validate()
            self._check_stream_topics()
            if not hasattr(self, "prior_") and self.prior_corpus is None:
                self._ensure_started(None)
            vocab = vocabulary if vocabulary is not None else getattr(self, "vocabulary_", None)
            if vocab is None and isinstance(self.prior_corpus, Corpus):
                vocab = self.prior_corpus.vocabulary
            if isinstance(X, ReportSet) and X.vocabulary is not None and isinstance(self.prior_corpus, Corpus) \
                    and not hasattr(self, "prior_") and self.prior_corpus.vocabulary != X.vocabulary:
                raise DPTopicError(f"the prior corpus uses another vocabulary ({self.prior_corpus.vocab_size} words)"
                                   f" than the reports ({X.vocab_size} words): build it with the public vocabulary.")
            reports, vocab = self._check_reports(X, vocab)
            if hasattr(self, "f_"):
                reports.check(f=self.f_, where="this batch")
            self._ensure_started(vocab)
            f, M = reports.f, reports.n_reports
            seeds = self._child_seeds()
            self._warn_overlap(reports, f, seeds[1])
            n_t = reports.column_sums()
            w = self._omega(M, f)
            if self.mu_ is None:  # no prior data yet: eq. (8) alone
                mu, w = np.zeros(len(vocab)), 0.0
            elif self.alg2_literal:
                mu = self.eta_                                          # Algorithm 2, line 13
            else:
                mu = prior_mean_update(self.mu_, self.eta_, M, self.size_prev_)   # eq. (21)
            eta = bayes_estimate(n_t, M, f, mu, w)                                # eq. (19)
            if self.mu_ is None:    # no prior data: this batch's estimate is also the prior mean it leaves, so the next
                mu = eta            # batch's eq. (21) averages estimates, not an estimate with the 0 placeholder above
            bits = reconstruct(reports.bits(), integer_targets(eta, M), np.random.default_rng(int(seeds[1])))
            corpus = bits_to_corpus(bits, vocab)
            if corpus.n_tokens == 0:
                raise DPTopicError("the reconstructed batch has no words: send a larger batch.")
            self._train_batch(corpus, seeds[0])
            self.n_docs_seen_ += M - corpus.n_docs  # count reports, including empty ones
            self.f_ = f
            self.mu_, self.eta_, self.size_prev_ = mu, eta, M
            self.omega_history_ = self.omega_history_ + [w]
            self._set_fitted()
            return self

        return self._transaction(work)

    def fit(self, X, y=None, **kw):
        """Reset and stream a :class:`ReportSet` in mini-batches of ``batch_size`` reports. A refused parameter or
        report set (or a batch refused half-way) leaves the model as it was."""
        def work():
            self._reset()
            if not isinstance(X, ReportSet):
                self._check_reports(X)
            if X.n_reports == 0:
                raise DPTopicError("empty batch: the report set holds no reports.")
            n = -(-X.n_reports // self.batch_size)
            with progress_bar(n, f"{type(self).__name__} K={self.n_topics}", self.verbose) as bar:
                for batch in X.batches(self.batch_size):
                    self.partial_fit(batch, vocabulary=kw.get("vocabulary"))
                    bar.advance(1, info=f"omega={self.omega_history_[-1]:.3g}")
            return self

        return self._refit(work)

    def implied_sigma2(self, M: int | None = None) -> float:
        """The prior variance σ² a fixed ω implies for batches of ``M`` reports (Theorem 6)."""
        f = getattr(self, "f_", None) or self._expected_f()
        if f is None:
            raise DPTopicError("f is unknown: give f or epsilon_word, or train on reports first.")
        return sigma2_from_omega(M or self.batch_size, f, self.omega) if self.omega is not None else float(self.sigma2)

    def privacy_report(self) -> dict:
        rep = self._local_report(
            ["Bayesian denoising, Zhao et al. Theorem 6 / eq. (19)", "prior-mean update, eq. (21)",
             "reconstruction, Steps 3-5", "online Gibbs sampling, eq. (10)-(13)"],
            scope="covers everything the server computes from the randomized reports, for all of a contributor's"
                  " reports together, up to reports_per_contributor of them in all, whichever mini-batches and"
                  " windows they fall in (their epsilons add; dptopic serve states the most reports one pseudonym"
                  " has in its store). NOT covered: the public vocabulary; how many reports a contributor sends and"
                  " when; the prior corpus D_0, which is used in the clear and must be public or consented data"
                  " disjoint from the contributors; contributors who send more than reports_per_contributor reports"
                  " in all (one person under several pseudonyms counts as several contributors).")
        rep["mode"] = "Algorithm 2 as printed" if self.alg2_literal else "reconciled Algorithm 2 (eq. 21 prior mean)"
        rep["prior_data"] = "none" if self._no_prior() else "public prior corpus D_0"
        rep["stream"] = self._stream_report(rep)
        if getattr(self, "_prior_presence", None) is not None:
            rep["scope"] += (" A model folder saved by save() also holds the prior documents' word-presence rows"
                             " (an array read by the overlap check when training resumes): publish such a folder"
                             " only where the prior corpus itself may be published (dptopic serve's /v1/model leaves"
                             " them out).")
        return rep

    def _stream_report(self, rep: dict) -> dict:
        """How many mini-batches and reports the model took, and what a contributor with a report in every one of
        those batches has spent: each report is one randomized-response event on its contributor's device, so such
        a contributor's events compose over the batches (basic composition of pure epsilons, Dwork & Roth 2014
        Thm 3.16), never fewer than the ``reports_per_contributor`` the headline figure states."""
        batches = int(getattr(self, "n_batches_", 0) or 0)
        every = max(batches, int(rep["reports_per_contributor"]))
        return {
            "n_batches": batches,
            "n_reports": int(getattr(self, "n_docs_seen_", 0) or 0),
            "reports_per_contributor_stated": int(rep["reports_per_contributor"]),
            "epsilon_doc_contributor_in_every_batch": every * float(rep["epsilon_doc"]),
            "epsilon_word_contributor_in_every_batch": every * float(rep["epsilon_word"]),
            "composition": (f"the headline epsilon covers a contributor with up to {rep['reports_per_contributor']}"
                            f" report(s) in all, whichever of the {batches} mini-batch(es) they fall in; the"
                            f" *_in_every_batch figures cover {every} report(s) (one in every batch, or the stated"
                            " count if larger) by basic composition of one randomized-response event per report"
                            " (pure epsilon, delta = 0; Dwork & Roth 2014 Thm 3.16); batches made of"
                            " different contributors' reports do not compose (each report is randomized once, on its"
                            " own device)"),
        }

    def _saved_params(self) -> dict:
        params = super()._saved_params()
        params["prior_corpus"] = "none" if self._no_prior() else None
        return params

    def _extra_arrays(self) -> dict:
        out = super()._extra_arrays()
        if self.mu_ is not None:
            out.update({"mu": self.mu_, "eta": self.eta_})
        if getattr(self, "_prior_presence", None) is not None:
            out["prior_presence"] = self._prior_presence
        out["stream_state"] = np.array([self.size_prev_, self.f_ if hasattr(self, "f_") else np.nan,
                                        *(getattr(self, "_overlap_thr", None) or (np.nan, np.nan))])
        out["omega_history"] = np.asarray(self.omega_history_, dtype=np.float64)
        return out

    def _load_extra(self, arrays) -> None:
        super()._load_extra(arrays)
        self.mu_ = arrays["mu"].astype(np.float64) if "mu" in arrays else None
        self.eta_ = arrays["eta"].astype(np.float64) if "eta" in arrays else None
        if "prior_presence" in arrays:
            self._prior_presence = arrays["prior_presence"]
        state = np.asarray(arrays["stream_state"], dtype=np.float64)
        if state.shape != (4,) or not np.isfinite(state[0]) or state[0] < 0:
            from ..errors import CorruptModelError
            raise CorruptModelError("corrupt model: stream_state.npy must hold 4 numbers, the first a finite count;"
                                    " re-save the model.")
        size_prev, f, thr, rate = state
        self._overlap_thr = (float(thr), float(rate)) if np.isfinite(thr) else None
        self.size_prev_ = int(size_prev)
        if np.isfinite(f):
            self.f_ = float(f)
        self.omega_history_ = arrays["omega_history"].tolist()
