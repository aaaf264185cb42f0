"""What the central-DP Gibbs trainers share: the base class of HDP-LDA (:mod:`dptopic.models.hdp_lda`) and the
CDP-LDA baselines (:mod:`dptopic.models.cdp_lda`), its parameter rules, and the texts their privacy reports state.
"""
from __future__ import annotations

import re

import numpy as np

from .._validation import Options, Real
from ..accounting import WORD_RELATION, PrivacyLedger
from ..accounting.set_union import SIZES_PUBLIC_UNDER_WORD_DP
from ..corpus import Corpus
from ..errors import DPTopicError
from .base import GibbsTopicModel
from .registry import GIBBS_SECURE

SEED_WARNING = ("an explicit seed was given: whoever knows it can regenerate every noise draw and the sampler's"
                " coins and remove the noise, so the guarantee holds only while the seed stays secret. Use an"
                " explicit seed for tests and reproduction only; leave seed=None (fresh OS entropy) otherwise.")

SECURE_COVERS = GIBBS_SECURE     # what secure=True covers: declared with the trainers, in the registry
STANDARD_COINS = ("standard mode: noise and sampler coins flow from NumPy's PCG64 (fresh OS entropy unless a seed"
                  " is given; the topic sampler and the discrete Laplace noise draw from xorshift128+ streams seeded"
                  " from it) through textbook floating-point samplers, which do not resist floating-point attacks"
                  " (Mironov 2012); secure=True hardens the noise (see docs/secure_mode.md).")
VOCAB_SUPPLIED = "supplied by the user; treated as public (its choice must not depend on the private corpus)"
VOCAB_FROM_DATA = ("chosen from the training corpus and published in the model; treated as public, i.e. NOT"
                   " protected: pass a public vocabulary (fit(..., vocabulary=...)) to avoid this")

_PRIVATE_CONSTRAINTS = {**GibbsTopicModel._parameter_constraints,
                        "delta": [Real(0, 1, "neither")],
                        "noise": [Options(("discrete", "continuous"))],
                        "secure": [Options((True, False))]}


class _PrivateGibbs(GibbsTopicModel):
    _private = True

    def _validate(self) -> None:
        super()._validate()
        if self.secure and self.seed is not None:
            raise DPTopicError("secure=True draws noise from the operating system's CSPRNG and refuses a seed:"
                               " remove seed.")

    def _coins(self, rng):
        return None if self.secure else rng

    def fit_transform(self, X, y=None, **kw) -> np.ndarray:
        """Fit, then return ``training_theta_``: θ of the training documents from the final topic
        assignments, not fold-in on their private words (which ``transform`` would do, outside the
        report's scope). One row per input document, as scikit-learn's ``fit_transform`` returns: a text (or
        token list) that reading left empty (no word of the vocabulary) trained nothing and gets the prior's
        row, uniform, as ``transform`` gives it; ``training_theta_`` keeps the rows of the documents trained on."""
        theta = self.fit(X, **kw).training_theta_
        return self._row_per_input(X, theta)

    def _row_per_input(self, X, theta: np.ndarray) -> np.ndarray:
        """``theta`` (one row per training document) with a uniform row put back for each input text or token list
        that reading dropped as empty (found by the names reading gave the documents it kept, ``doc<i>``)."""
        kept = getattr(self, "_kept_doc_ids", None)

        # texts or token lists (a list, an array or a column of strings); a Corpus's documents are the samples as given
        if kept is None or isinstance(X, Corpus) or not hasattr(X, "__len__") or getattr(X, "ndim", 1) != 1:
            return theta

        rows = [int(d[3:]) for d in kept if isinstance(d, str) and re.fullmatch(r"doc\d+", d)]
        n = len(X)
        if len(rows) != len(kept) or len(rows) != theta.shape[0] or not rows or max(rows) >= n or n == len(rows):
            return theta
        full = np.full((n, theta.shape[1]), 1.0 / theta.shape[1])
        full[rows] = theta
        return full

    def _training_theta(self, arrays) -> np.ndarray:
        """θ of the training documents from the final topic assignments z (not from noisy counts),
        wherever the shards live (only z and the document lengths are needed)."""
        K, backend = self.n_topics, self._backend_
        lengths = np.asarray(backend.doc_lengths, dtype=np.int64)
        doc = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
        ndk = np.bincount(doc * K + backend.z, minlength=lengths.size * K).reshape(lengths.size, K).astype(np.float64)
        ndk += self.alpha
        ndk /= ndk.sum(axis=1, keepdims=True)
        return ndk

    def _finalize(self, rep: dict) -> dict:
        """Fields every private trainer's report carries: seed disclosure, coins, vocabulary."""
        reproducible = self.seed is not None
        rep["noise_reproducible"] = reproducible
        if reproducible:
            rep["warning"] = SEED_WARNING
        rep["secure_noise"] = bool(self.secure)
        rep["noise"] = self.noise
        rep["randomness"] = SECURE_COVERS if self.secure else STANDARD_COINS
        supplied = getattr(self, "_vocabulary_supplied", False)
        rep["vocabulary"] = VOCAB_SUPPLIED if supplied else VOCAB_FROM_DATA
        rep["vocabulary_source"] = "supplied" if supplied else "data"
        note = (" Vocabulary treated as public (" + ("user-supplied" if supplied else "chosen from the training"
                " corpus, not protected") + ");" + SIZES_PUBLIC_UNDER_WORD_DP)
        rep["scope"] = rep.get("scope", "no differential privacy guarantee.") + note
        if getattr(self, "backend", "threads") == "dask":
            rep["scope"] += (" Trained on a Dask cluster: the workers read the documents, and the driver and the"
                             " workers exchange exact counts and topic assignments over Dask's transport, which no"
                             " guarantee here covers: secure the cluster (TLS, trusted workers; docs/privacy.md).")
        return rep

    def _start(self, arrays, corpus, rng) -> None:
        # the documents that reading kept, when it dropped empty ones (fit_transform gives every input its row)
        self._kept_doc_ids = (list(corpus.doc_ids) if getattr(corpus, "n_empty_dropped", 0)
                              and getattr(corpus, "doc_ids", None) is not None else None)
        self.ledger_ = PrivacyLedger(unit="word", relation=WORD_RELATION, theorem=self._theorem,
                                     budget=getattr(self, "_budget", None))

    def _report(self, extra: dict) -> dict:
        rep = self.ledger_.report(self.delta)
        rep.update(extra)
        return self._finalize(rep)
