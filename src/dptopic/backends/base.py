"""The execution-engine interface that the Gibbs trainers drive.

A trainer (``models/``) owns the global word–topic counts ``nwk``/``nk`` and everything
private (noise, the ledger); a backend owns the documents: their tokens, topic
assignments ``z`` and document–topic counts ``ndk``, split into shards. Per iteration the
trainer hands the backend the table to sample against (the live counts, or a frozen
noisy release) and the backend adds the shards' count changes into ``nwk``/``nk``.

Adding an engine means implementing :class:`Backend`; the models do not change.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Callable

import numpy as np

from ..kernels import SweepArrays


class Backend(ABC):
    """One training run's shards on some engine (threads on this machine, a Dask cluster, ...).

    Lifecycle: :meth:`open` (create the shards, random start), then :meth:`sweep` once per
    iteration (replaying what it returns), :meth:`collect` before reading the final state, then
    :meth:`close`. :meth:`checkpoint`/:meth:`restore` save and reload every
    shard's assignments; engines that can lose a shard use them to recover by themselves.
    """

    #: name used in ``privacy_``/reports
    name = "abstract"

    @abstractmethod
    def open(self, source, n_topics: int, rng: np.random.Generator, kind: str,
             secure_coins: bool = False) -> SweepArrays:
        """Create the shards and a data-independent random start.

        ``secure_coins``: the samplers' states are seeded from the OS CSPRNG instead of ``rng``.

        Returns the driver's :class:`~dptopic.kernels.SweepArrays`: ``nwk`` and ``nk`` are always
        the global counts held by the caller; ``z``/``ndk``/``word_ids`` may be ``None`` when the
        shards live elsewhere (use :attr:`z` and :meth:`doc_topic_counts`).
        """

    @abstractmethod
    def sweep(self, alpha: float, beta: float, word_table=None, clip: float = np.inf,
              shards=None) -> dict[int, int]:
        """One sweep of ``shards`` (default: all) against the global counts or ``word_table``.

        Adds the count changes into the caller's ``nwk``/``nk``. Returns ``{shard: n}`` for the
        shards that were lost (in this sweep or any call since the last one) and restarted from
        their checkpoint: each must sweep ``n`` more times (``sweep(..., shards=[...])``) to catch
        up; ``{}`` when nothing was lost.
        """

    def collect(self) -> dict[int, int]:
        """Bring every shard's ``z`` and ``ndk`` to the driver (engines whose shards live elsewhere).

        Returns ``{shard: n}`` like :meth:`sweep` for shards that were lost and restarted since the
        last sweep: the caller replays them and collects again until ``{}``, after which :attr:`z`
        and :meth:`doc_topic_counts` are current. Without replays they are still consistent with
        the global counts, only those shards are behind.
        """
        return {}

    @property
    @abstractmethod
    def z(self) -> np.ndarray:
        """All topic assignments, in corpus order (gathered if the shards are remote)."""

    @abstractmethod
    def doc_topic_counts(self) -> np.ndarray:
        """The document–topic counts ``ndk`` (D × K), in corpus order."""

    @property
    @abstractmethod
    def doc_lengths(self) -> np.ndarray:
        """Tokens per document, in corpus order."""

    @abstractmethod
    def cast_doc_counts(self, dtype) -> None:
        """Store ``ndk`` as ``dtype`` from now on (noisy-count trainers)."""

    @abstractmethod
    def perturb_doc_counts(self, fn: Callable[[np.ndarray, object], np.ndarray], rng) -> None:
        """Replace every shard's ``ndk`` by ``fn(ndk, rng)`` (document-side noise, drawn where the shard lives);
        ``fn`` may also change ``ndk`` in place and return it."""

    @abstractmethod
    def checkpoint(self) -> None:
        """Save every shard's assignments (and document counts) on the driver."""

    @abstractmethod
    def restore(self, shard: int) -> None:
        """Restart ``shard`` from its last checkpoint and take its changes since then out of the global counts."""

    @property
    def n_shards(self) -> int:
        return 1

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
