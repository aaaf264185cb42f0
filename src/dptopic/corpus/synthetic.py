"""Synthetic corpora drawn from the LDA generative model (Blei, Ng & Jordan 2003)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import DPTopicError
from .corpus import Corpus
from .numbered_ids import NumberedIds


@dataclass
class SyntheticLDA:
    corpus: Corpus
    phi: np.ndarray    # K × V, rows sum to 1
    theta: np.ndarray  # D × K
    z: np.ndarray      # per token topic (int32), aligned with corpus.word_ids

    def __iter__(self):  # allow ``corpus, phi, theta, z = lda_corpus(...)``
        return iter((self.corpus, self.phi, self.theta, self.z))


def lda_corpus(n_docs: int = 1000, vocab_size: int = 1000, n_topics: int = 10, doc_length=100,
               alpha: float = 0.1, beta: float = 0.01, seed=None) -> SyntheticLDA:
    """Draw a corpus from LDA. ``doc_length`` is an int (fixed) or ``("poisson", mean)``.

    Returns ``(corpus, phi, theta, z)`` (also as attributes of :class:`SyntheticLDA`).
    """
    for name, v, lo in (("n_docs", n_docs, 1), ("vocab_size", vocab_size, 2), ("n_topics", n_topics, 1)):
        if not isinstance(v, (int, np.integer)) or v < lo:
            raise DPTopicError(f"invalid {name}={v!r}: must be an integer >= {lo}.")
    for name, v in (("alpha", alpha), ("beta", beta)):
        if not v > 0:
            raise DPTopicError(f"invalid {name}={v!r}: must be a number > 0.")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    phi = rng.dirichlet(np.full(vocab_size, beta), size=n_topics)
    phi = np.maximum(phi, 0)
    phi /= phi.sum(axis=1, keepdims=True)
    theta = rng.dirichlet(np.full(n_topics, alpha), size=n_docs)
    if isinstance(doc_length, tuple):
        lengths = np.maximum(1, rng.poisson(doc_length[1], size=n_docs))
    else:
        lengths = np.full(n_docs, int(doc_length))
    ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    # topic of every token: inverse-CDF sampling against each document's theta
    cdf = np.cumsum(theta, axis=1)
    cdf[:, -1] = 1.0
    doc_of = np.repeat(np.arange(n_docs), lengths)
    u = rng.random(ptr[-1])
    z = np.minimum((u[:, None] > cdf[doc_of]).sum(axis=1), n_topics - 1).astype(np.int32) if n_topics <= 64 \
        else np.array([np.searchsorted(cdf[d], x, side="right") for d, x in zip(doc_of, u)], dtype=np.int32)
    z = np.minimum(z, n_topics - 1).astype(np.int32)
    words = np.empty(ptr[-1], dtype=np.int32)
    for k in range(n_topics):
        idx = np.flatnonzero(z == k)
        if len(idx):
            words[idx] = rng.choice(vocab_size, size=len(idx), p=phi[k])
    vocab = [f"w{i}" for i in range(vocab_size)]
    corpus = Corpus(ptr, words, vocab, doc_ids=NumberedIds(n_docs),
                    metadata={"source": "synthetic-lda", "alpha": alpha, "beta": beta, "n_topics": n_topics})
    return SyntheticLDA(corpus, phi, theta, z)
