"""The FedLDA server (the untrusted data collector): validates updates, aggregates, publishes Φ.

Every message is checked before anything changes: a malformed, stale (another round), duplicate,
unknown-client or other-vocabulary update is refused with a one-line
:class:`~dptopic.protocol.fedlda_messages.MessageError` and the server state stays exactly as it was.
"""
from __future__ import annotations

import numpy as np

from ..mechanisms.rrp import add_subset_signal
from .fedlda_messages import ClientUpdate, MessageError, ModelBroadcast, decode_message, vocabulary_fingerprint


class FedServer:
    """Global topic–word counts ``N`` (K × V) and the published ``phi = (N + β) / rowsum``.

    Each round, the counts are rebuilt from that round's updates (every update lists the user's
    current assignments), scaled by ``1 / sample_ratio``. ``n_entries`` is the exact number of
    entries every update must carry. An entry labelled ``n_topics`` is accepted and left out of the counts.

    ``report_size`` (``exclusion="none"``; with the per-entry ``epsilon``): every entry is a topic label
    and a randomized report of exactly ``report_size`` distinct words (``words`` is ``n_entries ×
    report_size``); a label ``n_topics`` (padding) is accepted and left out of the counts, and the counts
    are the expected revealed words of :func:`~dptopic.mechanisms.rrp.subset_signal_counts` under the Φ
    this server broadcast for the round. Without it, every entry is one ``(topic, word)`` pair.
    """

    def __init__(self, vocabulary, n_topics: int, client_ids, n_entries: int, beta: float = 0.01,
                 sample_ratio: float = 1.0, rng: np.random.Generator | None = None, report_size: int | None = None,
                 epsilon: float | None = None):
        self.words = list(getattr(vocabulary, "words", vocabulary))
        self.vocab = vocabulary_fingerprint(self.words)
        self.n_topics = int(n_topics)
        self.clients = [str(c) for c in client_ids]
        if len(set(self.clients)) != len(self.clients):
            raise MessageError("duplicate client ids: every client needs its own id.")
        self.n_entries = int(n_entries)
        self.beta = float(beta)
        self.sample_ratio = float(sample_ratio)
        if report_size is not None and (epsilon is None or not 1 <= int(report_size) < len(self.words)):
            raise MessageError(f"report_size={report_size} needs an epsilon and must lie in [1, V - 1].")
        self.report_size = None if report_size is None else int(report_size)
        self.epsilon = None if epsilon is None else float(epsilon)
        self.round = 0
        V = len(self.words)
        self.counts = np.zeros((self.n_topics, V))
        # data-independent start: a random Dirichlet(1) perturbation of uniform breaks topic symmetry
        rng = rng if rng is not None else np.random.default_rng()
        self.phi = rng.dirichlet(np.ones(V), size=self.n_topics) * 0.5 + 0.5 / V
        self._pending: dict[str, ClientUpdate] = {}

    @classmethod
    def from_config(cls, vocabulary, config, client_ids, beta: float = 0.01, rng: np.random.Generator | None = None):
        """The server of a federation whose clients share ``config`` (an :class:`~dptopic.protocol.fedlda.RRPConfig`)."""
        none = config.exclusion == "none"
        V = len(list(getattr(vocabulary, "words", vocabulary)))
        return cls(vocabulary, config.n_topics, client_ids, config.n_entries, beta, config.sample_ratio, rng=rng,
                   report_size=config.report_size(V) if none else None, epsilon=config.epsilon_per_entry if none else None)

    def broadcast(self) -> bytes:
        return ModelBroadcast(self.round, self.vocab, self.phi).encode()

    def _refuse(self, why: str):
        raise MessageError(f"update refused: {why}; server state unchanged.")

    def receive(self, data) -> str:
        """Validate and queue one encoded update; returns the client id. Transactional."""
        msg = decode_message(data)
        if not isinstance(msg, ClientUpdate):
            self._refuse("expected a client update, got a model broadcast")
        if msg.vocab != self.vocab:
            self._refuse(f"vocabulary fingerprint {msg.vocab} is not the server's {self.vocab}")
        if msg.round != self.round:
            why = "from a future round" if msg.round > self.round else "stale or replayed"
            self._refuse(f"it is for round {msg.round} but the server is in round {self.round} ({why})")
        if msg.client not in self.clients:
            self._refuse(f"unknown client {msg.client!r}")
        if msg.client in self._pending:
            self._refuse(f"duplicate update from client {msg.client!r} in round {self.round}")
        if msg.words.shape[0] != self.n_entries or msg.topics.shape != (self.n_entries,):
            self._refuse(f"{msg.words.shape[0]} entries, expected exactly {self.n_entries}")
        shape = (self.n_entries,) if self.report_size is None else (self.n_entries, self.report_size)
        if msg.words.shape != shape:
            self._refuse(f"words of shape {msg.words.shape}, expected {shape}"
                         + ("" if self.report_size is None else f" (one report of {self.report_size} words per entry)"))
        V = len(self.words)
        if msg.words.size and (msg.words.min() < 0 or msg.words.max() >= V
                               or msg.topics.min() < 0 or msg.topics.max() > self.n_topics):
            self._refuse(f"topic ids must lie in [0, {self.n_topics}] ({self.n_topics} = padding or noise, not"
                         f" counted) and word ids in [0, {V})")
        if self.report_size is not None and self.report_size > 1 and np.any(np.diff(np.sort(msg.words, axis=1),
                                                                                     axis=1) == 0):
            self._refuse("a report repeats a word: the words of one report must be distinct")
        self._pending[msg.client] = msg
        return msg.client

    @property
    def missing(self) -> list[str]:
        return [c for c in self.clients if c not in self._pending]

    def aggregate(self) -> np.ndarray:
        """Close the round once every client has reported: rebuild ``N``, publish Φ, advance the round."""
        if self.missing:
            raise MessageError(f"round {self.round} is not complete: no update yet from {len(self.missing)}"
                               f" client(s), e.g. {self.missing[0]!r}.")
        K, V = self.counts.shape
        msgs = list(self._pending.values())
        if self.report_size is not None:  # expected revealed words under the Φ broadcast this round
            counts = np.zeros((K, V))
            for m in msgs:  # one update at a time: no array over every user's reports
                add_subset_signal(counts, m.topics, m.words, self.phi, self.epsilon)
        else:
            flat = np.concatenate([m.topics.astype(np.int64) * V + m.words for m in msgs])
            flat = flat[flat < K * V]  # entries labelled K are not counted
            counts = np.bincount(flat, minlength=K * V).reshape(K, V).astype(np.float64)
        counts /= self.sample_ratio
        phi = counts + self.beta
        phi /= phi.sum(axis=1, keepdims=True)
        self.counts, self.phi = counts, phi
        self._pending = {}
        self.round += 1
        return phi

    def state(self) -> tuple:
        """A snapshot for tests: ``(round, counts copy, phi copy, pending client ids)``."""
        return self.round, self.counts.copy(), self.phi.copy(), tuple(sorted(self._pending))


def full_vocabulary_topics(phi: np.ndarray, vocab_size: int) -> np.ndarray:
    """Φ over the whole vocabulary from Φ over its first ``N`` words, the words the reports ranged over.

    The reports say nothing of the other words, so they get the same weights in every topic, from the public
    vocabulary order alone: Zipf's law (exponent 1, the assumption that chose ``N``) gives the word of rank
    ``r`` a share ``1 / (r H_V)``, so the words beyond ``N`` hold ``1 - H_N / H_V`` of each topic, spread as
    ``1 / r``, and the estimated topics share the rest. Equal across topics, those words leave a document's
    topic proportions to its reported words. Post-processing of Φ and public sizes only.
    """
    K, N = phi.shape
    V = int(vocab_size)
    if N >= V:
        return phi.copy()
    inv = 1.0 / np.arange(1, V + 1)
    h_n, h_v = inv[:N].sum(), inv.sum()
    out = np.empty((K, V))
    out[:, :N] = phi * (h_n / h_v)
    out[:, N:] = inv[N:] / h_v
    return out / out.sum(axis=1, keepdims=True)
