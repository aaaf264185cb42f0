"""The shared collapsed-Gibbs estimator: parameters, training loop, inference, persistence.

Subclasses plug in what differs between algorithms through three hooks
(``_start``, ``_before_sweep``, ``_finish``); the maths lives in ``kernels``,
``mechanisms`` and ``accounting``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .. import __version__ as _version
from .._io import load_bundle, save_bundle
from .._progress import progress_bar
from .._validation import SEED, Int, IsNone, IsType, Options, Real, validate_params
from ..corpus import Corpus, Vocabulary, as_corpus
from ..errors import CorruptModelError, DPTopicError
from ..evaluation import infer_theta, perplexity as _perplexity, umass_coherence
from ..backends import BACKENDS, make_backend, training_source
from ..kernels import SweepArrays

_REGISTRY: dict[str, type] = {}


@dataclass
class IterationInfo:
    """What an observer of one training iteration sees (for auditing callbacks).

    ``release`` is the word–topic count matrix (V × K) that the iteration released or
    used for sampling (the true counts for plain CGS, the noisy counts for the
    private trainers); ``z`` the topic assignments after the sweep.
    """

    iteration: int
    z: np.ndarray
    release: np.ndarray | None


class GibbsTopicModel:
    """Base class. Not used directly: see :class:`LDA`, :class:`HDPLDA`, :class:`CDPLDA`."""

    _parameter_constraints: dict = {
        "n_topics": [Int(1, None)],
        "alpha": [Real(0, None, "neither")],
        "beta": [Real(0, None, "neither")],
        "n_iter": [Int(1, None)],
        "seed": SEED,
        "n_jobs": [Int(1, 256)],
        "verbose": [Int(0, 2)],
        "backend": [Options(BACKENDS)],
        "parallel": [Options(("adlda", "partition"))],
        "client": [IsNone(), IsType((object,), "a distributed.Client")],
    }
    _private = False
    _kernel = "dense"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        _REGISTRY[cls.__name__] = cls

    # ------------------------------------------------------------------ params
    @classmethod
    def _param_names(cls) -> list[str]:
        import inspect

        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self) -> dict:
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in self._param_names():
                raise DPTopicError(f"unknown parameter {k!r} for {type(self).__name__}; valid: {', '.join(self._param_names())}.")
            setattr(self, k, v)
        return self

    def _validate(self) -> None:
        validate_params(self.get_params(), self._parameter_constraints)

    def __repr__(self) -> str:
        ps = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({ps})"

    # ---------------------------------------------------------------- training
    def _rng(self) -> np.random.Generator:
        s = self.seed
        return s if isinstance(s, np.random.Generator) else np.random.default_rng(s)

    def fit(self, X, y=None, *, vocabulary=None, callback: Callable[[IterationInfo], None] | None = None):
        """Train on a :class:`Corpus`, a document-term matrix (scipy.sparse/dense), a list of strings, or
        corpus shard files (a directory or list of ``.npz`` from ``dptopic corpus prepare --shards N``).

        ``callback(info)`` is called after each iteration with an :class:`IterationInfo`. A callback
        with ``needs_release = False`` (e.g. a timer) spares the trainer a copy of the counts.
        """
        self._validate()
        corpus = training_source(X, vocabulary=vocabulary)
        self.vocabulary_ = corpus.vocabulary
        K, V = self.n_topics, corpus.vocab_size
        rng = self._rng()
        backend = self._backend_ = make_backend(self.backend, self.n_jobs, self.client, self.parallel)
        self.n_replayed_ = 0
        want_release = callback is not None and getattr(callback, "needs_release", True)
        with backend, progress_bar(self.n_iter, f"{type(self).__name__} K={K}", self.verbose) as bar:
            arrays = backend.open(corpus, K, rng, self._kernel)
            self._start(arrays, corpus, rng)
            self.log_likelihood_ = []
            alpha, beta = float(self.alpha), float(self.beta)
            for it in range(self.n_iter):
                table, clip, release = self._before_sweep(it, arrays, rng, want_release)
                todo = backend.sweep(alpha, beta, word_table=table, clip=clip)
                while todo:  # shards lost with a worker restart from their checkpoint and catch up
                    table, clip, _ = self._before_sweep(it, arrays, rng, False)  # a replay is another release
                    self.n_replayed_ += 1
                    again = backend.sweep(alpha, beta, word_table=table, clip=clip, shards=sorted(todo))
                    todo = {j: n - 1 for j, n in todo.items() if n > 1}
                    todo.update(again)
                info = self._after_sweep(it, arrays, corpus)
                if callback is not None:
                    callback(IterationInfo(it, backend.z, release))
                bar.advance(1, info=info)
        self.components_ = self._finish(arrays, rng)
        self.n_iter_ = self.n_iter
        self.privacy_ = self.privacy_report()
        if self.backend != "threads":
            self.privacy_["replayed_iterations"] = self.n_replayed_
        self._train_stats = {"n_docs": corpus.n_docs, "n_tokens": corpus.n_tokens, "vocab_size": V}
        return self

    def fit_transform(self, X, y=None, **kw) -> np.ndarray:
        return self.fit(X, **kw).transform(X)

    # hooks -------------------------------------------------------------------
    def _start(self, arrays: SweepArrays, corpus: Corpus, rng) -> None:
        pass

    def _before_sweep(self, it, arrays, rng, want_release):
        """Return ``(word_table, clip, release)`` for this iteration's sweep."""
        return None, np.inf, (arrays.nwk.copy() if want_release else None)

    def _after_sweep(self, it, arrays, corpus) -> str:
        return ""

    def _finish(self, arrays, rng) -> np.ndarray:
        """The released Φ (K×V); by default the posterior mean of eq. (2)."""
        V = arrays.nwk.shape[0]
        phi = arrays.nwk.T.astype(np.float64)  # one K×V temporary, normalised in place
        phi += self.beta
        phi /= (arrays.nk + V * self.beta)[:, None]
        return phi

    def _load_extra(self, arrays) -> None:
        pass

    def privacy_report(self) -> dict:
        return {"private": False}

    # --------------------------------------------------------------- inference
    def _check_fitted(self) -> None:
        if not hasattr(self, "components_"):
            raise DPTopicError(f"this {type(self).__name__} is not fitted yet: call fit() or dptopic.load() first.")

    def _as_model_corpus(self, X) -> Corpus:
        self._check_fitted()
        if isinstance(X, Corpus):
            if X.vocabulary != self.vocabulary_:
                X = X.restrict(self.vocabulary_, drop_empty=False)
            return X
        if isinstance(X, (list, tuple)) and X and all(isinstance(t, str) for t in X):
            return Corpus.from_texts(X, vocabulary=self.vocabulary_, drop_empty=False)  # one row per text
        c = as_corpus(X, vocabulary=self.vocabulary_.words)
        if c.vocab_size != len(self.vocabulary_):
            raise DPTopicError(f"vocabulary mismatch: the model has {len(self.vocabulary_)} words but the input has {c.vocab_size} columns.")
        return c

    def transform(self, X, n_iter: int = 100, burn_in: int = 50, seed=0) -> np.ndarray:
        """Document–topic proportions θ (D×K) by fold-in Gibbs sampling with Φ fixed (spec §1.6)."""
        c = self._as_model_corpus(X)
        return infer_theta(self.components_, c.word_ids, c.doc_ptr, float(self.alpha), n_iter, burn_in, seed)

    def perplexity(self, X, mode: str = "paper", n_iter: int = 100, burn_in: int = 50, seed=0) -> float:
        """Held-out perplexity (spec §1.6); ``mode`` is ``"paper"`` or ``"completion"``."""
        c = self._as_model_corpus(X)
        return _perplexity(self.components_, c, float(self.alpha), mode, n_iter, burn_in, seed)

    def coherence(self, X, top_n: int = 10, variant: str = "mimno") -> float:
        """Average UMass coherence of the topics on ``X`` (spec §10.11)."""
        return umass_coherence(self.components_, self._as_model_corpus(X), top_n, variant)

    def topic_words(self, n: int = 10, weights: bool = False) -> list:
        """The ``n`` most probable words of each topic."""
        self._check_fitted()
        out = []
        for row in self.components_:
            top = np.argsort(-row, kind="stable")[:n]
            out.append([(self.vocabulary_[i], float(row[i])) if weights else self.vocabulary_[i] for i in top])
        return out

    # ------------------------------------------------------------- persistence
    def _extra_arrays(self) -> dict:
        return {}

    def save(self, directory) -> str:
        """Write ``model.json`` + ``.npy`` arrays into ``directory`` atomically (no pickle)."""
        self._check_fitted()
        params = {k: (None if isinstance(v, np.random.Generator) or k == "client" else v)
                  for k, v in self.get_params().items()}
        meta = {"format": "dptopic-model", "version": 1, "dptopic_version": _version,
                "class": type(self).__name__, "params": params, "vocabulary": self.vocabulary_.words,
                "metrics": getattr(self, "metrics_", {}), "training": getattr(self, "_train_stats", {}),
                "log_likelihood": list(getattr(self, "log_likelihood_", [])),
                "privacy": self.privacy_}
        arrays = {"components": self.components_, **self._extra_arrays()}
        return str(save_bundle(directory, meta, arrays))

    @classmethod
    def load(cls, directory) -> "GibbsTopicModel":
        return load(directory)


def load(directory) -> GibbsTopicModel:
    """Load a model saved with :meth:`GibbsTopicModel.save`."""
    meta, arrays = load_bundle(directory)
    where = f"corrupt model at {str(directory)!r}"
    if meta.get("format") != "dptopic-model":
        raise CorruptModelError(f"{where}: model.json is not a dptopic model; re-save the model.")
    cls = _REGISTRY.get(meta.get("class"))
    if cls is None:
        raise CorruptModelError(f"{where}: unknown model class {meta.get('class')!r}.")
    try:
        model = cls(**meta["params"])
        model.vocabulary_ = Vocabulary(meta["vocabulary"])
        comp = np.asarray(arrays["components"], dtype=np.float64)
    except (KeyError, TypeError) as e:
        raise CorruptModelError(f"{where}: missing or malformed field ({e}); re-save the model.") from None
    if comp.ndim != 2 or comp.shape != (model.n_topics, len(model.vocabulary_)) or not np.all(np.isfinite(comp)) \
            or np.any(comp < 0) or not np.allclose(comp.sum(axis=1), 1.0, atol=1e-6):
        raise CorruptModelError(f"{where}: components.npy must be a K×V matrix of probabilities matching the vocabulary.")
    model.components_ = comp
    model.privacy_ = meta.get("privacy", {})
    model.metrics_ = meta.get("metrics", {})
    model.log_likelihood_ = meta.get("log_likelihood", [])
    model._train_stats = meta.get("training", {})
    model._load_extra(arrays)
    return model

