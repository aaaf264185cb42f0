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

import math
import secrets

import numpy as np

from ..accounting import PrivacyLedger, rrp_event
from ..accounting.fedlda import user_spend
from ..accounting.fedlda_scope import FED_RRP_COINS, FED_SECURE, coverage
from ..corpus import Corpus
from ..errors import DPTopicError
from ..kernels import client_sweep, kernel_state, sample_labels, subset_client_sweep, subset_theta_em
from ..mechanisms.rrp import replacement_table, rrp_perturb, subset_report
from ..protocol.fedlda import RRPConfig, check_broadcast_phi, check_config, check_protocol
from ..protocol.fedlda_messages import ClientUpdate, ModelBroadcast, decode_message, vocabulary_fingerprint

EM_MAX_ITER = 30  # EM iterations for a user's topic proportions, from the uniform start every round (early-stopped:
#                   converged EM, 200 iterations, measured worse; docs/fedlda.md)
EM_TOL = 1e-6


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


def fed_client(client_id: str, corpus, rrp, reports=None) -> FedClient:
    """A FedLDA participant holding ``corpus``: its reports' coins come from the operating system's CSPRNG, the rest
    (which entries are sampled, the labels) from fresh OS entropy (no seed). ``reports``: the randomized reports
    it drew in an earlier run, reused (nothing is randomized again)."""
    return FedClient(client_id, corpus, rrp, np.random.default_rng(), secure=rrp.exclusion == "none", reports=reports)


def fed_privacy(rrp, rounds: int, delta: float = 1e-5, vocab_size: int | None = None) -> dict:
    """A participant's guarantee after taking part in ``rounds`` rounds with the settings ``rrp`` (through the
    ledger), with what it covers and where its coins came from, as :func:`fed_client` draws them."""
    event = rrp_event(rrp.epsilon_per_entry, rrp.failure_rate, rrp.gamma, rrp.variant, rrp.exclusion,
                      vocab_size=vocab_size)
    ledger = PrivacyLedger(unit="user", relation="one user's reports over all rounds", theorem=event.theorem,
                           discretization=1e-2)
    if rounds > 0:  # entries randomized once ("none") are spent once, whatever the number of rounds
        ledger.spend(event, user_spend(rrp.exclusion, rrp.n_entries, rounds))
    rep = ledger.report(delta)
    rep["rounds"] = rounds
    rep["entries_per_round"] = rrp.n_entries
    rep.update(coverage(rrp.replacement, rrp.exclusion))  # topic labels go out in the clear: partial
    rep["randomness"] = FED_SECURE if rrp.exclusion == "none" else FED_RRP_COINS   # as fed_client draws them
    return rep
