"""The FedLDA client: one user's documents, local topic assignments and local θ (never sent).

Each round :meth:`FedClient.run_round` takes the server's broadcast (bytes), runs local Gibbs sampling
against the global Φ (:func:`~dptopic.kernels.client_sweep`), builds the update — the list of the
user's ``(topic, word)`` assignments ("dense representation"), padded to ``pad_length`` entries and
sub-sampled at ``sample_ratio`` — perturbs the words with RRP
(:func:`~dptopic.mechanisms.rrp_perturb`) and returns the encoded :class:`ClientUpdate`.

With ``exclusion="none"`` (the sound default) the client pads and samples its entries and randomizes
each one **once**, when it is created, into a report (a set of words, subset selection); every round it
labels those reports with topics against Φ plus a *padding* component (label ``n_topics``) and sends
the labels with the reports. ``local_inference="em"`` (default) fits the user's topic proportions to its
reports by EM and draws each label from its posterior; ``"gibbs"`` continues a Gibbs chain over the
labels across rounds. The labels are computed from the reports and public Φ only, so they are
post-processing and covered by the per-entry guarantee; the true words, their documents and the local
θ never enter them.
"""
from __future__ import annotations

import functools
import math
import secrets
from dataclasses import dataclass

import numpy as np

from ..accounting import eta as _eta
from ..corpus import Corpus
from ..errors import DPTopicError, ParameterError
from ..accounting.fedlda import too_small_for_vocabulary
from ..kernels import client_sweep, kernel_state
from ..accounting.fedlda import subset_inclusion, subset_size as _subset_size, subset_size
from ..kernels import sample_labels, subset_client_sweep, subset_theta_em
from ..mechanisms.rrp import cap_report, replacement_table, rrp_perturb, subset_report
from .messages import ClientUpdate, ModelBroadcast, decode_message, vocabulary_fingerprint
from .._validation import Int, Options, Real, validate_value
from ..accounting.events import EPSILON_MAX


@dataclass(frozen=True)
class RRPConfig:
    """What every client of one federation shares (public protocol parameters). ``epsilon_per_entry`` is the
    epsilon of each randomized entry (``FedLDA(epsilon_per_entry=)``; a user's total is ``FedLDA``'s ``epsilon``);
    ``failure_rate`` the randomizer's failure rate (``FedLDA(failure_rate=)``), not the delta of a guarantee."""

    n_topics: int
    epsilon_per_entry: float
    failure_rate: float = 0.1
    gamma: float = 1.0
    pad_length: int = 512
    sample_ratio: float = 1.0
    alpha: float = 0.1
    local_iter: int = 1
    variant: str = "another"
    exclusion: str = "none"
    replacement: str = "mixture"
    subset_size: int = 0
    local_inference: str = "em"

    def __post_init__(self):
        # every setting in the range FedLDA takes, at construction: a participant builds this from the /v1/config of
        # a server it does not trust, and sizes memory, entries and its epsilon from it before any FedClient exists
        check_protocol(self)

    @property
    def words_per_report(self) -> int:
        """``"none"`` rule: words per randomized entry (``subset_size``, or 0 for the error-optimal size)."""
        return int(self.subset_size)

    def report_size(self, vocab_size: int) -> int:
        """``"none"`` rule: the words per report on a vocabulary of ``vocab_size`` words (resolved)."""
        return int(self.subset_size) or _subset_size(self.epsilon_per_entry, vocab_size)

    @property
    def n_entries(self) -> int:
        """Entries per update: ``max(1, round(sample_ratio * pad_length))`` (data-independent)."""
        return max(1, int(round(self.sample_ratio * self.pad_length)))


_dataclass_init = RRPConfig.__init__


@functools.wraps(_dataclass_init)
def _init_refusing_old_names(self, *args, **kwargs):
    # renamed because "epsilon" and "delta" read as the guarantee, which they are not: refused, never read silently
    for old, new, what in (("epsilon", "epsilon_per_entry", "the epsilon of each reported entry, not a total"),
                           ("delta", "failure_rate", "the randomizer's failure rate, not the delta of a guarantee")):
        if old in kwargs:
            raise DPTopicError(f"RRPConfig({old}=) is now {new}=: {what}.")
    _dataclass_init(self, *args, **kwargs)


RRPConfig.__init__ = _init_refusing_old_names


def rounds_to_no_entry(pad_length: int, sample_ratio: float) -> bool:
    """Whether ``sample_ratio * pad_length`` is too small to give an update one entry (``FedLDA`` and the service's
    federated rounds refuse such parameters, each naming its own flags)."""
    return sample_ratio * pad_length < 0.5


LOCAL_INFERENCE = ("em", "gibbs")
EM_MAX_ITER = 30  # EM iterations for a user's topic proportions, from the uniform start every round (early-stopped:
#                   converged EM, 200 iterations, measured worse; docs/fedlda.md)
EM_TOL = 1e-6


def entries_per_update(pad_length: int, sample_ratio: float) -> int:
    return RRPConfig(1, 1.0, pad_length=pad_length, sample_ratio=sample_ratio).n_entries


def _protocol_rules() -> dict:
    """``FedLDA._parameter_constraints`` for the fields of :class:`RRPConfig` (a test keeps them equal), without
    importing the models, which a participant does not otherwise load."""
    return {"n_topics": [Int(1, 100_000)], "epsilon_per_entry": [Real(0, EPSILON_MAX, "right")],
            "failure_rate": [Real(0, 1, "neither")],
            "gamma": [Real(1, 1e6)], "pad_length": [Int(1, 10_000_000)], "sample_ratio": [Real(0, 1, "right")],
            "alpha": [Real(1e-8, 1e6, "both")], "local_iter": [Int(1, 100_000)],
            "variant": [Options(("another", "coincide"))], "exclusion": [Options(("none", "floor", "tail"))],
            "replacement": [Options(("mixture", "topic"))], "subset_size": [Int(0, 1_000_000_000)],
            "local_inference": [Options(LOCAL_INFERENCE)]}


def protocol_value_rule(name: str, value) -> str | None:
    """What the :class:`RRPConfig` setting ``name`` must be ("an integer in [1, 100000]"), when ``value`` is not
    that; None when it is. For a reader of settings from outside (a server's ``/v1/config``) that names the field
    itself."""
    rules = _protocol_rules()[name]
    return None if any(c.accepts(value) for c in rules) else " or ".join(c.describe() for c in rules)


def check_protocol(config: RRPConfig) -> None:
    """Refuse (one line) a setting outside the range ``FedLDA`` takes for it (an integer ``pad_length`` in [1, 10^7],
    a ``sample_ratio`` in (0, 1], a known ``exclusion``, ...), before anything is drawn. A participant's settings come
    from a server it does not trust (``/v1/config``): without this, a malformed one failed deep inside NumPy with a
    traceback (``sample_ratio`` 2, ``pad_length`` 0, ``n_topics`` 0) or exhausted the device's memory
    (``pad_length`` 10^9); a fractional ``subset_size`` was truncated, a negative ``alpha`` taken."""
    for name, rules in _protocol_rules().items():
        validate_value(name, getattr(config, name), rules)
    if rounds_to_no_entry(config.pad_length, config.sample_ratio):
        raise ParameterError("{pad_length=} is too small for {sample_ratio=:g}: an update would round to no entry;"
                             " raise {pad_length} or {sample_ratio}.", "pad_length", config.pad_length,
                             values={"sample_ratio": config.sample_ratio})


def check_config(config: RRPConfig, vocab_size: int) -> None:
    """Refuse (one line) a configuration the protocol cannot run on a vocabulary of ``vocab_size`` words:
    a setting out of its range (:func:`check_protocol`), more topics than words, or an ``epsilon`` so small that no
    replacement distribution keeps every likelihood ratio within ``e^epsilon`` (``variant="another"``,
    ``exclusion="floor"``)."""
    check_protocol(config)
    K, V = int(config.n_topics), int(vocab_size)
    if config.local_inference not in LOCAL_INFERENCE:
        raise ParameterError("invalid {local_inference=}: must be one of {choices}.", "local_inference",
                             config.local_inference, choices=", ".join(LOCAL_INFERENCE))
    if config.exclusion == "none" and V < 2:
        raise DPTopicError(f"a vocabulary of {V} word(s) cannot be randomized: give a corpus with at least two words.")
    if config.exclusion == "none" and not 0 <= int(config.subset_size) <= V - 1:
        raise ParameterError("{subset_size=} must be between 1 and V - 1 = {most} words (0 picks the size from"
                             " epsilon).", "subset_size", config.subset_size, most=V - 1)
    if K > V:
        raise ParameterError("{n_topics=} exceeds the vocabulary size {V}: give at most {V} topics or a corpus with"
                             " more distinct words.", "n_topics", K, V=V)
    if config.exclusion == "none":
        s = int(config.subset_size) or subset_size(config.epsilon_per_entry, V)
        a, b = subset_inclusion(config.epsilon_per_entry, V, s)
        if a - b < 1e-6:  # the true word is hardly likelier than any other: the reports would carry nothing
            raise too_small_for_vocabulary(config.epsilon_per_entry, V, "a report would say almost nothing about its"
                                           " word (the true word is at most 1e-6 likelier to be in it than any"
                                           " other)")
    if config.variant == "another" and config.exclusion == "floor" and not cap_fits(config.epsilon_per_entry, config, V):
        lo, hi = config.epsilon_per_entry, max(2.0 * config.epsilon_per_entry, 1.0)
        while not cap_fits(hi, config, V):
            lo, hi = hi, 2.0 * hi
        for _ in range(40):  # the cap grows with epsilon: bisect for the smallest epsilon that fits
            lo, hi = (lo, (lo + hi) / 2) if cap_fits((lo + hi) / 2, config, V) else ((lo + hi) / 2, hi)
        raise ParameterError("{epsilon=:g} is too small for a vocabulary of {V} words: a replacement would need more"
                             " words than there are; use {epsilon} >= {least:.4g} or {variant=coincide}.", "epsilon",
                             config.epsilon_per_entry, V=V, least=hi * 1.001, coincide="coincide")


def cap_fits(epsilon: float, config: RRPConfig, V: int) -> bool:
    """Whether the 'another word' replacement can keep its largest probability under the cap with ``V`` words."""
    cap = cap_report(epsilon, _eta(epsilon, config.failure_rate, config.gamma, config.variant))
    return cap > 0 and int(math.floor(1.0 / cap)) + 1 <= V

def check_broadcast_phi(phi: np.ndarray, shape: tuple, who: str = "the client") -> None:
    """Refuse a broadcast Φ unless it is ``shape``, finite, positive, rows summing to 1 (before any state change)."""
    if phi.shape != shape:
        raise DPTopicError(f"{who}: the broadcast phi has shape {phi.shape}, expected {shape}.")
    if not (np.all(np.isfinite(phi)) and np.all(phi > 0) and np.allclose(phi.sum(axis=1), 1.0, atol=1e-6)):
        raise DPTopicError(f"{who}: the broadcast phi must hold finite, positive probabilities with rows summing"
                           " to 1; refused, local state unchanged.")


class FedClient:
    """One user. Holds ``corpus`` (its documents), ``z`` and ``ndk``; only perturbed updates leave it."""

    def __init__(self, client_id: str, corpus: Corpus, config: RRPConfig, rng: np.random.Generator,
                 secure: bool = False, reports: np.ndarray | None = None):
        """``secure=True``: the reports' coins come from the operating system's CSPRNG (the ``"none"`` rule only);
        ``rng`` then drives only what the guarantee does not rest on (which entries are sampled, the labels).
        ``reports`` (the ``"none"`` rule): the randomized reports this user drew before (``sets`` of an earlier
        client, kept on its device), reused instead of randomizing anew, so that taking part again spends
        nothing more; they are checked for shape and range, never for agreement with ``corpus``."""
        check_protocol(config)  # first: the settings may come from an untrusted server's /v1/config
        if secure and config.exclusion != "none":
            raise DPTopicError("secure reports are drawn by subset selection, the 'none' rule's randomizer: the floor"
                               " and tail rules have no secure sampler; use exclusion='none'.")
        self.secure = bool(secure)
        # a user without tokens pads every entry (the floor and tail rules always replace a padding entry), so it
        # takes part like anyone: whether a user sends must not depend on its text
        self.client_id = str(client_id)
        self.corpus = corpus
        self.config = config
        check_config(config, corpus.vocab_size)
        self.vocab = vocabulary_fingerprint(corpus.vocabulary.words)
        self._rng = rng
        # the labels sent every round: in secure mode from a generator of their own, seeded from OS entropy, which no
        # draw whose number depends on the user's text (its token count: the start, the entries' sample) has moved
        self._label_rng = np.random.default_rng(secrets.randbits(128)) if self.secure else rng
        K = config.n_topics
        self.z = rng.integers(0, K, size=corpus.n_tokens, dtype=np.int32)  # data-independent start
        doc_of = np.repeat(np.arange(corpus.n_docs), corpus.doc_lengths)
        self.ndk = np.zeros((corpus.n_docs, K), dtype=np.int32)
        np.add.at(self.ndk, (doc_of, self.z), 1)
        self.n_truncated = 0
        if reports is not None:
            if config.exclusion != "none":
                raise DPTopicError("only the 'none' rule randomizes its reports once: the floor and tail rules"
                                   " draw new entries every round and take no saved reports.")
            self._reuse_reports(reports)
        elif config.exclusion == "none":
            self._randomize_once()

    def _reuse_reports(self, reports) -> None:
        """``sets`` from reports drawn before (see ``__init__``), with labels from a data-independent start."""
        V, s, n = self.corpus.vocab_size, self.config.report_size(self.corpus.vocab_size), self.config.n_entries
        sets = np.asarray(reports)
        ok = (sets.shape == (n, s) and np.issubdtype(sets.dtype, np.integer) and sets.size > 0
              and int(sets.min()) >= 0 and int(sets.max()) < V
              and bool(np.all(np.diff(sets, axis=1) > 0)))
        if not ok:
            raise DPTopicError(f"the saved reports are not {n} sorted sets of {s} distinct word ids below {V}, as this"
                               " server's rounds take: they were drawn for another configuration; delete the state"
                               " file to draw new ones (which spends the per-user epsilon again).")
        self.sets = np.ascontiguousarray(sets, dtype=np.int32)
        K = self.config.n_topics
        self.rz = self._label_rng.integers(0, K + 1, size=n, dtype=np.int32)  # data-independent start
        self.rnk = np.bincount(self.rz, minlength=K + 1).astype(np.int64)
        self.pick = np.full(n, -1, dtype=np.int64)

    def _randomize_once(self) -> None:
        """Pad, sample and randomize the entries once (subset selection over the client's vocabulary).

        Keeps only ``sets`` (the randomized reports, each row sorted), their labels ``rz`` in ``[0, K]``
        (``K`` = padding), the label counts ``rnk`` and the word the Gibbs sweep picks from each set;
        later rounds read nothing else of the user's text.
        """
        _, words = self.build_update()
        V = self.corpus.vocab_size
        s = self.config.report_size(V)
        self.sets, _event = subset_report(words, V, self.config.epsilon_per_entry, None if self.secure else self._rng, s,
                                          secure=self.secure)
        K = self.config.n_topics
        n = self.sets.shape[0]
        self.rz = self._label_rng.integers(0, K + 1, size=n, dtype=np.int32)  # data-independent start
        self.rnk = np.bincount(self.rz, minlength=K + 1).astype(np.int64)
        self.pick = np.full(n, -1, dtype=np.int64)

    @property
    def theta(self) -> np.ndarray:
        """Local document–topic proportions (D_user × K); stays on the client."""
        a = self.config.alpha
        return (self.ndk + a) / (self.ndk.sum(axis=1, keepdims=True) + self.config.n_topics * a)

    def _user_theta(self) -> np.ndarray:
        c = self.ndk.sum(axis=0) + self.config.alpha
        return c / c.sum()

    def local_sampling(self, phi: np.ndarray, phi_wk: np.ndarray | None = None) -> None:
        """One round of local inference against ``phi`` (``phi_wk``: its transpose, C-contiguous, if at hand)."""
        state = kernel_state(self._label_rng)
        if phi_wk is None:
            phi_wk = np.ascontiguousarray(phi.T)
        if self.config.exclusion == "none":  # on the randomized reports and public phi only
            V, s = phi.shape[1], self.sets.shape[1]
            e1 = math.expm1(min(self.config.epsilon_per_entry, 700.0))
            if self.config.local_inference == "em":
                K = self.config.n_topics
                lik = np.empty((self.sets.shape[0], K + 1))
                self.theta_reports = np.empty(K + 1)
                subset_theta_em(self.sets, phi_wk, e1, 1.0 + e1 * s / V, float(self.config.alpha), EM_MAX_ITER,
                                EM_TOL, lik, self.theta_reports)
                sample_labels(lik, self.theta_reports, state, self.rz)
                self.rnk = np.bincount(self.rz, minlength=K + 1).astype(np.int64)
                return
            for _ in range(self.config.local_iter):
                subset_client_sweep(self.sets, self.rz, self.rnk, phi_wk, float(self.config.alpha), e1,
                                    1.0 + e1 * s / V, state, self.pick)
            return
        for _ in range(self.config.local_iter):
            client_sweep(self.corpus.word_ids, self.corpus.doc_ptr, self.z, self.ndk, phi_wk,
                         float(self.config.alpha), state)

    def build_update(self):
        """Entries ``(topics, words)`` before perturbation: padded to L, sampled; ``-1`` marks padding."""
        cfg, rng = self.config, self._rng
        n, L = self.corpus.n_tokens, cfg.pad_length
        if n > L:  # documented: a user with more tokens than L reports a uniform sample of L of them
            keep = np.sort(rng.choice(n, L, replace=False))
            topics, words = self.z[keep], self.corpus.word_ids[keep]
            self.n_truncated += 1
        else:
            pad_topics = rng.choice(cfg.n_topics, size=L - n, p=self._user_theta())
            topics = np.concatenate([self.z, pad_topics.astype(np.int32)])
            words = np.concatenate([self.corpus.word_ids, np.full(L - n, -1, dtype=np.int32)])
        pick = np.sort(rng.choice(L, cfg.n_entries, replace=False))
        return topics[pick].astype(np.int32), words[pick].astype(np.int32)

    def perturb(self, topics, words, phi):
        cfg = self.config
        if cfg.replacement == "mixture":
            Q, rows = (self._user_theta() @ phi)[None, :], None
        else:
            Q, rows = phi, topics
        table = replacement_table(Q, cfg.epsilon_per_entry, cfg.failure_rate, cfg.gamma, cfg.variant, cfg.exclusion)
        return rrp_perturb(words, Q, cfg.epsilon_per_entry, cfg.failure_rate, cfg.gamma, self._rng, rows=rows,
                           variant=cfg.variant, exclusion=cfg.exclusion, table=table)

    def run_round(self, broadcast: bytes) -> bytes:
        """Receive Φ, sample locally, send the perturbed update (bytes)."""
        msg = decode_message(broadcast)
        if not isinstance(msg, ModelBroadcast):
            raise DPTopicError("a client expects a model broadcast from the server.")
        if msg.vocab != self.vocab:
            raise DPTopicError(f"client {self.client_id!r}: the broadcast is for another vocabulary"
                               f" ({msg.vocab} != {self.vocab}); build every client corpus with the server's vocabulary.")
        check_broadcast_phi(msg.phi, (self.config.n_topics, self.corpus.vocab_size), f"client {self.client_id!r}")
        return self.round_update(msg)

    def round_update(self, msg: ModelBroadcast, phi_wk: np.ndarray | None = None) -> bytes:
        """The update to a broadcast already decoded and checked by :meth:`run_round` (a simulation decodes and
        checks the one broadcast once for all its users, and may pass its ``phi.T`` as ``phi_wk``)."""
        self.local_sampling(msg.phi, phi_wk)
        if self.config.exclusion == "none":  # the labels and the reports themselves (randomized once)
            return ClientUpdate(msg.round, self.client_id, self.vocab, self.rz.astype(np.int32),
                                self.sets.astype(np.int32)).encode()
        topics, words = self.build_update()
        reported, _event = self.perturb(topics, words, msg.phi)
        return ClientUpdate(msg.round, self.client_id, self.vocab, topics, reported).encode()
