"""Document-level DP topic model by full-batch noisy EM (``DocDPEM``).

Each of ``n_iter`` iterations releases, once, the sum over documents of each document's expected
word-topic counts with the document's counts divided by their L2 norm (so one document moves the
sum by at most 1 in Frobenius norm, whatever its length), plus Gaussian noise. The topics are a
post-processing of the noisy release only (:func:`~dptopic.models._docdp_math.denoise`). The
``n_iter`` full-batch Gaussian releases are composed by privacy loss distributions (Koskela et
al. 2020) through a :class:`~dptopic.accounting.PrivacyLedger`; each is the Gaussian mechanism
(Dwork & Roth 2014, Thm A.1) under add/remove of one document; the noise multiplier is the
smallest for which the PLD of the composition is (epsilon, delta)-DP (for one release this is the
analytic Gaussian calibration of Balle & Wang 2018).

Orchestration only: the maths is in :mod:`dptopic.models._docdp_math`, the noise in
:mod:`dptopic.mechanisms.gaussian`. Defaults were set on 20 Newsgroups (the benchmark corpus,
see ``docs/document_dp.md``), never on the data you fit. Topic quality at
epsilon = 1 is measured in that page; it is well below non-private LDA.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._validation import SEED, Int, Real, validate_value
from ..accounting import DOCUMENT_RELATION, PrivacyLedger
from ..accounting.gaussian import calibrate_noise_multiplier
from ..corpus import as_corpus
from ..errors import DPTopicError
from ..mechanisms import gaussian_mechanism
from ._docdp_math import denoise, normalised_statistic

THEOREM = ("Gaussian mechanism (Dwork & Roth 2014, Thm A.1) on a statistic of L2 sensitivity 1 under add/remove of"
           " one document (each document's word counts divided by their L2 norm), composed over the iterations by"
           " privacy loss distributions (Koskela et al. 2020); topics are post-processing (Dwork & Roth 2014, Prop 2.1)")
_RELEASE = "noisy sum of per-document normalised expected word-topic counts (full batch)"


class DocDPEM:
    """Document-level (epsilon, delta)-DP LDA-style topics by a few full-batch noisy EM iterations.

    Parameters
    ----------
    n_topics : K.
    epsilon, delta : the guarantee for adding or removing one whole document.
    n_iter : noisy EM iterations (each a release; fewer iterations means less noise per release).
    threshold : cells of a release below ``threshold`` noise standard deviations are set to zero.
    alpha : document-topic smoothing in the E-step.
    inner : fixed-point iterations of the E-step per document.
    seed : None (default; OS entropy) or an int for reproducible tests only. Never saved.
    """

    def __init__(self, n_topics: int = 20, epsilon: float = 1.0, delta: float = 1e-5, n_iter: int = 3,
                 threshold: float = 2.0, alpha: float = 0.1, inner: int = 30, seed=None):
        self.n_topics, self.epsilon, self.delta, self.n_iter = n_topics, epsilon, delta, n_iter
        self.threshold, self.alpha, self.inner, self.seed = threshold, alpha, inner, seed

    def _validate(self) -> None:
        validate_value("n_topics", self.n_topics, [Int(1, None)])
        validate_value("epsilon", self.epsilon, [Real(0, None, "neither")])
        validate_value("delta", self.delta, [Real(0, 1, "neither")])
        validate_value("n_iter", self.n_iter, [Int(1, 1000)])
        validate_value("threshold", self.threshold, [Real(0, None)])
        validate_value("alpha", self.alpha, [Real(0, None, "neither")])
        validate_value("inner", self.inner, [Int(1, 10000)])
        validate_value("seed", self.seed, SEED)

    def fit(self, X, y=None, *, vocabulary=None):
        """Fit on a :class:`~dptopic.corpus.Corpus` or a documents x words count matrix.

        The vocabulary must be public (or chosen privately beforehand and paid for separately).
        """
        self._validate()
        corpus = as_corpus(X, vocabulary=vocabulary).require_nonempty()
        Xc = sp.csr_matrix(corpus.to_bow(), dtype=np.float64)
        V, K = Xc.shape[1], self.n_topics
        rng = np.random.default_rng(self.seed)
        sigma = calibrate_noise_multiplier(float(self.epsilon), float(self.delta), 1.0, int(self.n_iter))
        ledger = PrivacyLedger(unit="document", relation=DOCUMENT_RELATION, theorem=THEOREM,
                               budget=(float(self.epsilon), float(self.delta)))
        beta = rng.dirichlet(np.ones(V), size=K)          # public random start
        for _ in range(self.n_iter):
            stat, _theta = normalised_statistic(Xc, beta, self.alpha, self.inner)
            noisy, event = gaussian_mechanism(stat, sigma, 1.0, rng, label=_RELEASE)
            ledger.spend(event)
            beta = denoise(noisy, sigma, self.threshold)
        self.components_ = beta
        self.noise_std_ = float(sigma)
        self.vocabulary_ = list(corpus.vocabulary)
        rep = ledger.report(self.delta)
        self.privacy_ = {"epsilon": rep["epsilon_pld"], "delta": float(self.delta), **rep}
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "components_"):
            raise DPTopicError("this DocDPEM is not fitted yet: call fit(X) first.")

    def privacy_report(self) -> dict:
        self._check_fitted()
        return dict(self.privacy_)

    def topic_words(self, n: int = 10) -> list:
        """The ``n`` most probable words of each topic."""
        self._check_fitted()
        validate_value("n", n, [Int(1, None)])
        return [[self.vocabulary_[i] for i in np.argsort(-row, kind="stable")[:n]] for row in self.components_]

    def save(self, directory) -> str:
        """Atomically write ``params.json`` (settings, vocabulary, privacy report; no seed) and
        ``components.npy`` into ``directory``."""
        self._check_fitted()
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        params = {"class": "DocDPEM", "n_topics": self.n_topics, "epsilon": self.epsilon, "delta": self.delta,
                  "n_iter": self.n_iter, "threshold": self.threshold, "alpha": self.alpha, "inner": self.inner,
                  "noise_std": self.noise_std_, "vocabulary": self.vocabulary_, "privacy": self.privacy_}
        for name, write in (("components.npy", lambda f: np.save(f, self.components_, allow_pickle=False)),
                            ("params.json", lambda f: f.write(json.dumps(params).encode()))):
            fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                write(f)
            os.replace(tmp, d / name)
        return str(d)

    @classmethod
    def load(cls, directory) -> "DocDPEM":
        d = Path(directory)
        try:
            params = json.loads((d / "params.json").read_text())
            comps = np.load(d / "components.npy", allow_pickle=False)
        except (OSError, ValueError) as e:
            raise DPTopicError(f"cannot load a DocDPEM from {str(d)!r}: {e}") from None
        if params.get("class") != "DocDPEM":
            raise DPTopicError(f"{str(d)!r} does not hold a DocDPEM model.")
        m = cls(**{k: params[k] for k in ("n_topics", "epsilon", "delta", "n_iter", "threshold", "alpha", "inner")})
        m.components_, m.noise_std_ = comps, params["noise_std"]
        m.vocabulary_, m.privacy_ = params["vocabulary"], params["privacy"]
        return m
