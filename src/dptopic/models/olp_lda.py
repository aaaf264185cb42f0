"""OLP-LDA: online LDA from randomized reports (Zhao et al. 2020, Sec. VI, eq. 19-21, Algorithm 2).
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy import stats

from .._progress import progress_bar
from .._validation import IsNone, Options, Real
from ..corpus import Corpus
from ..errors import CorruptModelError, DPTopicError, ParameterError, user_stacklevel
from ..mechanisms.randomized_response import randomized_response
from ..protocol.estimation import (
    bayes_estimate,
    bits_to_corpus,
    document_frequencies,
    integer_targets,
    omega_from_sigma2,
    overlap_count,
    overlap_threshold,
    presence_bits,
    prior_mean_update,
    reconstruct,
    sigma2_from_omega,
)
from ..protocol.reports import ReportSet
from .lda import LDA
from .lplda import LocalReportsModel
from .online_lda import OnlineLDA

_OVERLAP_NULL_DRAWS = 1000
"""How many null distances (randomized prior document to its nearest other prior document) the prior-overlap check's
threshold is calibrated on at least: a prior of fewer documents is randomized several times."""


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

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the topic-word probabilities (rows sum to 1).
    topic_word_counts_, prior_, n_batches_, n_docs_seen_, vocabulary_, n_features_in_ : as :class:`OnlineLDA`,
        after the last mini-batch of reports.
    mu_ : ndarray of shape (n_words,), the prior mean ``μ_t`` of the last batch's word counts (eq. 21).
    eta_ : ndarray of shape (n_words,), the denoised targets ``η_t`` of the last batch (eq. 19).
    f_ : float, the flip parameter the reports were denoised with.
    omega_history_ : list of float, the prior weight ``ω`` each batch used (fixed, or from ``σ²`` by Theorem 6).
    size_prev_ : int, the previous batch's size ``M^{prev}`` (eq. 21's rescaling).
    privacy_ : dict, the privacy report: the reports' local guarantee, ``privacy_["stream"]`` the batches taken.
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
                                 key="models.olp_lda.validate")

    def _no_prior(self) -> bool:
        return isinstance(self.prior_corpus, str) and self.prior_corpus == "none"

    def _ensure_started(self, vocabulary) -> None:
        if hasattr(self, "prior_"):
            return
        if self.prior_corpus is None:
            raise DPTopicError("no prior data: OLP-LDA needs prior_corpus (a public corpus disjoint from the stream)"
                               " before the first partial_fit; pass prior_corpus='none' to run without one.")
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
        A small prior is randomized several times, so that the calibration rests on at least
        ``_OVERLAP_NULL_DRAWS`` distances: with one copy of 80 prior documents the threshold
        varied so much that 9 of 2,000 batches made only of prior documents went unflagged at
        epsilon 3 per word, and none with 13 copies (docs/research/prior_overlap.md).
        """
        self._overlap_note = None       # the last batch's finding, one line (the service keeps it as the batch note)
        P = getattr(self, "_prior_presence", None)
        if P is None or len(P) < 20:
            return
        if getattr(self, "_overlap_thr", None) is None:
            sub = P[:1000]
            bits = np.unpackbits(sub, axis=1, count=reports.vocab_size, bitorder="little").astype(bool)
            rows, ids = np.nonzero(bits)
            ptr = np.zeros(len(sub) + 1, dtype=np.int64)
            np.cumsum(np.bincount(rows, minlength=len(sub)), out=ptr[1:])
            rng = np.random.default_rng([int(seed), 1])
            copies = [randomized_response(ids, ptr, reports.vocab_size, f, rng)[0]
                      for _ in range(-(-_OVERLAP_NULL_DRAWS // len(sub)))]
            self._overlap_thr = overlap_threshold(sub, copies, 0.05)
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
            raise CorruptModelError("corrupt model: stream_state.npy must hold 4 numbers, the first a finite count;"
                                    " re-save the model.")
        size_prev, f, thr, rate = state
        self._overlap_thr = (float(thr), float(rate)) if np.isfinite(thr) else None
        self.size_prev_ = int(size_prev)
        if np.isfinite(f):
            self.f_ = float(f)
        self.omega_history_ = arrays["omega_history"].tolist()
