"""DP-SVI: stochastic variational inference with document-level DP (Park, Foulds, Chaudhuri & Welling 2016).

Orchestration only: the E-step and the bound are compiled in :mod:`dptopic.kernels.vb`, the noise comes from
:mod:`dptopic.mechanisms.gaussian`, the accounting from :mod:`dptopic.accounting.gaussian` through a
:class:`~dptopic.accounting.PrivacyLedger`.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._progress import progress_bar
from .._validation import Int, IsNone, Options, Real, validate_value
from ..accounting import PrivacyLedger
from ..accounting.events import DOCUMENT_ADD_REMOVE, MAX_NOISE_MULTIPLIER, MIN_NOISE_MULTIPLIER
from ..accounting.gaussian import (
    calibrate_noise_multiplier,
    moments_accountant_epsilon,
    pld_epsilon,
    strong_composition_for_sigma,
)
from ..accounting.ledger import MAX_COUNT
from ..accounting.plan import PlannedRelease, ReleasePlan, gaussian_release
from ..accounting.set_union import VOCABULARY_NOT_COVERED
from ..errors import DPTopicError, ParameterError, user_stacklevel
from ..kernels.vb import canonical_bow, cap_lengths, gather_rows
from ..mechanisms import gaussian_mechanism
from ..moments.support import em_supported_topics
from ._document_base import _TopicFlags, document_level_notes, warn_if_large_delta
from ._variational import _RELEASE, _VariationalLDA
from .base import unchanged_on_error, vocabulary_given


def svi_release(noise_multiplier: float, sampling_rate: float, clip: float, steps: int) -> PlannedRelease:
    """DP-SVI's release at each of ``steps`` steps (Park et al. 2016, Sec. 4): the sum over a Poisson-sampled batch
    (rate ``sampling_rate``) of each document's expected sufficient statistics clipped to Frobenius norm ``clip``, L2
    sensitivity ``clip`` under add/remove of one document, plus Gaussian noise of std ``noise_multiplier * clip``:
    the subsampled Gaussian mechanism (Mironov, Talwar & Zhang 2019), composed by PLD."""
    return gaussian_release("expected sufficient statistics", noise_multiplier, _RELEASE, DOCUMENT_ADD_REMOVE,
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

    Attributes
    ----------
    components_ : ndarray of shape (n_topics, n_words), the expected topics (rows sum to 1).
    lambda_ : ndarray of shape (n_topics, n_words), the variational Dirichlet parameters after the last noisy step.
    supported_topics_, background_topics_ : ndarray of shape (n_topics,), bool: the topics above the noise, and those
        held as background.
    n_updates_ : int, the noisy steps taken. ``clipped_fraction_`` : float, the share of documents clipped (outside
        the guarantee). ``perplexity_`` : list of ``(step, bound)`` on ``eval_set`` when :meth:`fit` is given one.
    vocabulary_ : Vocabulary of n_words words. ``n_features_in_`` : int, n_words.
    privacy_ : dict, the privacy card's report. ``ledger_`` : PrivacyLedger, the releases it spent.
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
                           relation=DOCUMENT_ADD_REMOVE, theorem=self._theorem, budget=self._budget_of({}))

    def _planned_spend(self, report: dict):
        return self.release_plan().run_plan(budget=self._budget_of(report))

    @property
    def sensitivity_(self) -> float:
        """L2 sensitivity of the batch sum: ``clip``, or ``max_doc_len`` without clipping."""
        return float(self.max_doc_len if self.clip is None else self.clip)

    def _validate(self) -> None:
        super()._validate()
        if self.secure and self.seed is not None:
            raise DPTopicError("secure=True draws noise from the operating system's CSPRNG and refuses a seed:"
                               " remove seed.")
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
        self.ledger_ = PrivacyLedger(unit="document", relation=DOCUMENT_ADD_REMOVE, theorem=self._theorem,
                                     budget=getattr(self, "_budget", None))
        indptr, indices, data = canonical_bow(*self._bow(corpus), corpus.vocab_size)   # checked once, not per batch
        D, q, T = corpus.n_docs, float(self.sampling_rate), self.n_steps
        self.release_plan().reserve(self.ledger_)    # the whole plan, before the first noise draw
        n_seen = n_clipped = 0
        self.perplexity_ = []
        self._releases = (np.zeros_like(self.lambda_), 0.0)
        with progress_bar(T, f"DPSVI K={self.n_topics} sigma={self.noise_multiplier:.3g}", self.verbose) as bar:
            for t in range(T):
                rows = np.flatnonzero(rng.random(D) < q)      # Poisson sampling: each document independently
                batch = gather_rows(indptr, indices, data, rows, checked=True)
                self.lambda_, norms = self._step(self.lambda_, t, batch, D, rng, self.ledger_)
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
