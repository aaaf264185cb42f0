"""O-LDA: online LDA on mini-batches in the clear, with a K x V topic-word prior (Zhao et al. 2020, Sec. VI,
eq. 10-13); OLP-LDA (:mod:`dptopic.models.olp_lda`) builds on it.

Orchestration only: the topic-word prior of O-LDA is a K x V matrix ``B`` sampled against by the core dense Gibbs
kernel (see :class:`_MatrixPriorGibbs`); persistence is :func:`dptopic._io.save_bundle`.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from .._validation import Int, Real
from ..accounting import non_private_report
from ..corpus import Corpus, Vocabulary, as_corpus
from ..corpus.corpus import is_text_column
from ..errors import CorruptModelError, DPTopicError
from ..kernels import count_assignments
from .base import (
    GibbsTopicModel,
    check_topics_fit_vocabulary,
    generator_from_state_array,
    generator_state_array,
    unchanged_on_error,
)
from .lda import LDA


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

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1).
    topic_word_counts_ : ndarray of shape (n_topics, n_words), the last batch's topic-word counts.
    prior_ : ndarray of shape (n_topics, n_words), the topic-word prior ``B`` the next batch starts from (eq. 12).
    n_batches_ : int, the mini-batches seen. ``n_docs_seen_`` : int, their documents.
    vocabulary_ : Vocabulary of n_words words. ``n_features_in_`` : int, n_words.
    privacy_ : dict, ``{"private": False, ...}``.
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
            raise CorruptModelError("corrupt model: prior.npy must have the shape of components.npy; re-save the model.")
        for key in ("n_batches", "n_docs_seen"):
            v = self._train_stats.get(key, 0)
            if type(v) is not int or v < 0:
                raise CorruptModelError(f"corrupt model: training.{key} in model.json must be a whole number of at"
                                        f" least 0, not {str(v)[:20]!r}; re-save the model.")
        self.n_batches_ = int(self._train_stats.get("n_batches", 0))
        self.n_docs_seen_ = int(self._train_stats.get("n_docs_seen", 0))
        if self._saves_stream_rng and "rng_state" in arrays:   # absent in older folders: the stream restarts from seed
            self._gen = generator_from_state_array(arrays["rng_state"])
