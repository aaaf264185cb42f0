"""What the document-level trainers share: their base class (``_DocumentDPModel``), inference under released topics,
the supported-topic flags, and the budget and seed rules.

Topics released once (``DocDPEM``, ``DocDPCooccurrence``, ``LocalDocumentLDA``) are used as they are: ``transform``
runs the compiled E-step with them fixed, ``perplexity`` folds held-out documents in by Gibbs sampling.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import TransformerMixin

from ..backends import make_backend
from ..backends.dask import check_client, n_workers
from ..errors import DPTopicError, user_stacklevel
from ..evaluation import perplexity as _perplexity
from ..kernels.docdp import normalised_statistic, tokens_to_bow
from .base import TopicModel
from .registry import TRAINERS

SEED_WARNING = "an explicit seed makes the noise reproducible: the guarantee holds only while the seed stays secret."
GAUSSIAN_COINS = ("standard mode: the Gaussian noise and every other random choice flow from NumPy's PCG64 (fresh OS"
                  " entropy unless a seed is given) through a textbook floating-point sampler, which does not resist"
                  " floating-point attacks (Mironov 2012); secure=True hardens the noise (see docs/secure_mode.md).")
GAUSSIAN_SECURE = ("secure mode: the Gaussian noise is drawn by OpenDP from the operating system's CSPRNG; the"
                   " trainer's other random choices come from NumPy's PCG64 seeded from fresh OS entropy.")
"""The text of a trainer whose registry entry states no ``secure`` text of its own."""
GROUP_PRIVACY = (" One document is the unit: a person who wrote k of the documents is protected only at k times epsilon"
                 " and delta grows to k e^((k-1) epsilon) delta (group privacy: Dwork & Roth 2014, Thm 2.2 for pure"
                 " DP, and its standard extension to (epsilon, delta)); where"
                 " people write several documents, train with unit='user', which bounds each person's"
                 " documents as a whole (docs/privacy_units.md).")


LARGE_DELTA = 1e-3


def warn_if_large_delta(delta) -> None:
    """delta is the chance that the guarantee fails outright; above 1e-3 that is rarely a choice anyone means."""
    if isinstance(delta, (int, float)) and delta > LARGE_DELTA:
        warnings.warn(f"delta = {delta:g} is large: (epsilon, delta)-DP allows a delta chance that a document is exposed"
                      " outright; choose delta well below 1/(number of documents), e.g. 1e-5 or 1e-6.", UserWarning,
                      stacklevel=user_stacklevel())


ON_DASK = (" Trained on a Dask cluster: the workers read the documents and send each shard's exact (noiseless) partial"
           " sums to the driver over Dask's transport, which no guarantee here covers: secure the cluster (TLS,"
           " trusted workers; docs/scaling_cluster.md). The noise is drawn once, on the driver, after every partial is"
           " in.")


def document_level_notes(rep: dict, secure: bool, trainer: str = "", reproducible: bool = False,
                         execution: dict | None = None) -> dict:
    """What every document-level report says beside its figures: where its coins come from (the text of ``trainer``,
    a class name, in secure mode), whether its noise can be regenerated (``noise_reproducible``: true only with a
    seed, as in the Gibbs trainers' reports), and that the unit is one document (group privacy for an author of
    several). The secure-mode text is the trainer's ``secure`` in :mod:`dptopic.models.registry`."""
    entry = next((t for t in TRAINERS.values() if t.class_name == trainer), None)
    rep["randomness"] = ((entry.secure if entry is not None and entry.secure else GAUSSIAN_SECURE) if secure else
                         GAUSSIAN_COINS)
    rep["noise_reproducible"] = bool(reproducible)
    if GROUP_PRIVACY not in str(rep.get("scope", "")) and rep.get("unit") != "user":   # a person is the unit
        rep["scope"] = str(rep.get("scope", "")) + GROUP_PRIVACY
    if execution is not None and execution.get("backend") == "dask":    # where it ran: the card shows it
        rep["execution"] = dict(execution)
        if ON_DASK not in rep["scope"]:
            rep["scope"] += ON_DASK
    return rep


class _FixedTopicsInference(TransformerMixin):
    """``transform`` and ``perplexity`` under ``components_`` (mixed into a :class:`TopicModel`).

    A :class:`~sklearn.base.TransformerMixin` itself, so that scikit-learn wraps the ``transform`` defined here for
    ``set_output(transform="pandas")`` (it wraps only the methods a transformer class defines, and the trainers
    that mix this in inherit ``transform`` from here, so theirs was never wrapped: ``transform`` gave an array
    where ``fit_transform`` gave a DataFrame)."""

    def transform(self, X, seed=0) -> np.ndarray:
        """Document-topic proportions by the E-step with the released topics fixed."""
        c = self._as_model_corpus(X, allow_empty=True)
        ptr, ids, cts = tokens_to_bow(c.doc_ptr, c.word_ids, c.vocab_size)
        _, theta = normalised_statistic(ptr, ids, cts, self.components_, float(self._fitted_value("alpha")),
                                        int(self._fitted_value("inner") if hasattr(self, "inner") else 30),
                                        n_jobs=self._jobs,
                                        want_theta=True)
        return theta / theta.sum(axis=1, keepdims=True)

    def perplexity(self, X, mode: str = "paper", n_iter: int = 100, burn_in: int = 50, seed=0) -> float:
        """Held-out perplexity with fold-in Gibbs sampling under the released topics (as for the Gibbs trainers)."""
        c = self._as_model_corpus(X)
        return _perplexity(self.components_, c, float(self._fitted_value("alpha")), mode, n_iter, burn_in, seed,
                           self._fold_in_jobs())


TOPIC_FLAGS = ("supported_topics", "background_topics")
"""The per-topic flags a document-level trainer sets in ``fit`` and saves beside ``components`` (``NAME.npy``)."""


class _TopicFlags:
    """Saving and loading the per-topic flags of a central document-level trainer (``DocDPEM``,
    ``DocDPCooccurrence``, ``DPSVI``; mixed in before :class:`TopicModel`).

    After ``fit`` it has two boolean arrays, one value per topic, both post-processing of the releases (no data read
    outside the guarantee, no budget spent), and both saved with the model:

    ``supported_topics_``: True where the topic stands above the noise of its release, at a 5% family-wise
    false-support rate (:mod:`dptopic.moments.support` derives each trainer's test).
    ``background_topics_``: True for the topics that carry corpus-wide words rather than a theme
    (``DocDPCooccurrence``'s last ``n_background_topics_``; none for ``DocDPEM`` and ``DPSVI``). A background topic
    is supported when its words' noisy counts stand above their noise; the themes a user can trust are
    ``supported_topics_ & ~background_topics_``.

    A folder saved before the flags were kept loads without them.
    """

    marks_supported_topics = True

    def _extra_arrays(self) -> dict:
        out = super()._extra_arrays()
        for name in TOPIC_FLAGS:
            if getattr(self, f"{name}_", None) is not None:
                out[name] = np.asarray(getattr(self, f"{name}_"), dtype=bool)
        return out

    def _load_extra(self, arrays) -> None:
        super()._load_extra(arrays)
        K = self.components_.shape[0]
        for name in TOPIC_FLAGS:
            if name not in arrays:      # a folder saved before the flags were kept: the model has none
                continue
            flags = np.asarray(arrays[name])
            if flags.shape != (K,) or flags.dtype.kind not in "biu" or not np.isin(flags, (0, 1)).all():
                raise DPTopicError(f"{name}.npy must hold one true/false value per topic ({K})")
            setattr(self, f"{name}_", flags.astype(bool))
        field = (getattr(self, "privacy_", None) or {}).get("user_field")     # unit="user": where the ids were read
        if isinstance(field, str):
            self.user_field_ = field


class _DocumentDPModel(_TopicFlags, _FixedTopicsInference, TopicModel):
    """A central document-level trainer: ``epsilon``/``delta`` for the whole run, ``secure`` noise refuses a seed,
    and a seeded run says its noise is reproducible (the seed itself is never saved: see ``TopicModel.save``). Its
    per-topic flags are those of :class:`_TopicFlags`."""

    _private = True

    @classmethod
    def from_budget(cls, epsilon: float, delta: float = 1e-5, **kw):
        """The model whose whole run is (epsilon, delta)-DP (its noise is calibrated in ``fit``)."""
        return cls(epsilon=epsilon, delta=delta, **kw)

    def _validate(self) -> None:
        super()._validate()
        if self.secure and self.seed is not None:
            raise DPTopicError("secure=True draws noise from the operating system's CSPRNG and refuses a seed: remove seed.")
        warn_if_large_delta(self.delta)

    def _note_seed(self, rep: dict) -> dict:
        if self.seed is not None:
            rep["warning"] = SEED_WARNING
        return document_level_notes(rep, bool(self.secure), type(self).__name__, reproducible=self.seed is not None,
                                    execution=getattr(self, "_execution", None))

    def _cluster_client(self):
        """The Dask client of ``backend='dask'`` (checked: an open ``distributed.Client``), else None; a ``client``
        with another backend is refused. Called before anything is read or spent."""
        if getattr(self, "backend", "threads") != "dask":
            make_backend(getattr(self, "backend", "threads"), 1, getattr(self, "client", None))  # refuses a client
            return None

        return check_client(self.client)

    def _document_passes(self, X, vocabulary, client, user_ids=None):
        """:func:`~dptopic.models._document_passes.document_source`, summed on the Dask cluster of ``client`` when
        one is given (``_execution`` says where the run went); nothing is spent here."""
        from ._document_passes import document_source  # looked up when called: tests patch it at its source

        if client is not None and getattr(self, "unit", "document") == "user":
            raise DPTopicError(f"{type(self).__name__}(unit='user') groups each person's documents in memory on this"
                               " machine: drop backend='dask'.")
        passes, vocab, corpus = document_source(self, X, vocabulary, user_ids)
        self._execution = {"backend": "threads", "n_jobs": int(self._jobs)}
        if client is not None:
            if passes.factory is not None:
                raise DPTopicError(f"{type(self).__name__}(backend='dask') reads a shard folder or a corpus in memory;"
                                   " mini-batches come from a function on this machine: write them as shards"
                                   " (write_shards) or drop backend='dask'.")

            passes.on_cluster(client)
            self._execution = {"backend": "dask", "workers": n_workers(client), "shards": len(passes.blocks)}
        return passes, vocab, corpus
