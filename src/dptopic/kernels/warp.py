"""A word-ordered Metropolis–Hastings sweep for large tables (WarpLDA, Chen et al. 2016).

When the word–topic table leaves the cache (V = 50,000 and K = 1,000: 200 MB of counts), every collapsed Gibbs
sampler that visits tokens in document order pays one or more random reads of the table per token. WarpLDA's sweep
visits the table in order instead, in two passes (one uniform number per token each, two when a proposal differs):

* **the document pass** (tokens in document order): each token's pending *word proposal* is accepted or not with a
  ratio that needs only the document's counts and the topic totals, then a *document proposal* is drawn in O(1)
  (the topic of a random token of the document, or a uniform topic, so ∝ ``n_dk + α``);
* **the word pass** (tokens in word order, the words in id order, so ``nwk`` is read row after row): each token's
  document proposal is accepted or not with a ratio that needs only the word's counts and the totals, then a word
  proposal is drawn in O(1) (the topic of a random token of the word, or a uniform topic: ∝ ``n_wk + β``).

Each acceptance is a Metropolis–Hastings step whose target is the collapsed conditional
``(n_dk + α)(n_wk + β)/(n_k + Vβ)`` with the current token taken out. Within a pass the counts of the *other* side
and the topic totals ``n_k`` are those of the start of the pass (the delayed counts of WarpLDA, as AD-LDA's totals
are): the chain is an approximation of collapsed Gibbs sampling, not exact; its held-out perplexity is measured
against tomotopy's in ``benchmarks/bench_cgs_large.py`` (``docs/research/cgs_scaling.md``). The own side's counts
(the document's row in the document pass, the word's row in the word pass) are exact: they are updated on every
accepted move.

Layout: ``zp`` holds each token's topic and its pending proposal side by side (one cache line for both), in document
order; the word pass reaches them through ``order`` (the tokens sorted by word) and keeps ``zw``, the topics as they
were when the word's row of ``nwk`` was last made exact, in word order. ``nwk`` is brought up to date word by word as
the word pass reaches it, ``ndk`` document by document as the next document pass reaches it, or by
:func:`sync_docs` when it is read (:meth:`WarpSweeper.sync`): after a sweep ``nwk`` and ``nk`` are exactly the counts
of ``zp[:, 0]``, and after :meth:`WarpSweeper.sync` ``ndk`` and ``arrays.z`` too.
The row a pass reads (the document's or the word's counts) is rebuilt in a K-vector from the assignments, where it
stays in L1: ``ndk`` and ``nwk`` are only written, for the tokens that moved. The word pass gathers its tokens'
topics and proposals into word order first (one random read per token) and scatters them back at its end.
Every block (a range of documents or words) draws from its own generator state and writes its own topic-total delta,
so a sweep is a pure function of the state, the seed and the blocks, whatever the threads' timing.
"""
from __future__ import annotations

import numpy as np

from ._jit import njit
from ._prefetch import prefetch
from ._threads import PoolOwner
from .rng import uniform_step

AHEAD = 32  # tokens of the word pass's gather whose topic and proposal are prefetched ahead (their reads are random)


def word_order(word_ids: np.ndarray, vocab_size: int):
    """``(order, word_ptr)``: the token indices sorted by word (stable: a counting sort) and the word ranges."""
    word_ptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(np.bincount(word_ids, minlength=vocab_size), out=word_ptr[1:])
    order = np.empty(word_ids.shape[0], dtype=np.int64)
    _counting_order(word_ids, word_ptr, order)
    return order, word_ptr


@njit(cache=True, nogil=True)
def _counting_order(word_ids, word_ptr, order):
    pos = word_ptr[:-1].copy()
    for i in range(word_ids.shape[0]):
        w = word_ids[i]
        order[pos[w]] = i
        pos[w] += 1


@njit(cache=True, nogil=True, inline="always")
def _catch_up(zs, zc, counts, r, a, b):
    """Bring row ``r`` of ``counts`` up to date for the tokens ``[a, b)``: ``zs[:, 0]`` holds their topics now,
    ``zc`` the topics the row counts (updated)."""
    for i in range(a, b):
        k = zs[i, 0]
        moved = np.int32(k != zc[i])    # as often moved as not: no branch
        counts[r, zc[i]] -= moved
        counts[r, k] += moved
        zc[i] = k


@njit(cache=True, nogil=True, inline="always")
def _row_step(zs, zc, counts, r, a, b, c, nk, dnk, prior, vbeta, state):
    """One pass's work on one row (a document in the document pass, a word in the word pass) and its tokens
    ``[a, b)`` of ``zs`` (topic and pending proposal side by side) and ``zc`` (the topics row ``r`` of ``counts``
    counts).

    The row catches up with the other pass's moves; each pending proposal (drawn by the other pass, ∝ its own
    counts plus prior, so those factors cancel) is accepted with the ratio of this side's counts and the totals;
    then a new proposal ∝ this row's counts + ``prior`` is drawn for each token: the topic of a random token of the
    row, or a uniform topic. ``c`` is a zero K-vector, the row read in L1 (``counts`` is only written), zero again on
    return; ``nk`` is read only, the moves' effect on the totals added to ``dnk``."""
    K = nk.shape[0]
    L = b - a
    s0, s1 = state[0], state[1]     # the generator in registers for the row (stores to the counts could alias it)
    _catch_up(zs, zc, counts, r, a, b)
    for i in range(a, b):
        c[zs[i, 0]] += 1
    for i in range(a, b):
        s = zs[i, 0]
        t = zs[i, 1]
        if t != s:
            num = (c[t] + prior) * (nk[s] + dnk[s] - 1 + vbeta)
            den = (c[s] - 1 + prior) * (nk[t] + dnk[t] + vbeta)
            s0, s1, u = uniform_step(s0, s1)
            move = np.int64(u * den < num)      # no branch on a coin flip: each count moves by 0 or 1
            c[s] -= move
            c[t] += move
            counts[r, s] -= move
            counts[r, t] += move
            dnk[s] -= move
            dnk[t] += move
            k = t if move else s
            zs[i, 0] = k
            zc[i] = k
    k_prior = K * prior
    inv_prior = 1.0 / prior
    for i in range(a, b):  # new proposals, with the row's counts after its moves
        s0, s1, u = uniform_step(s0, s1)
        u *= L + k_prior
        mine = zs[a + min(np.int64(u), L - 1), 0]     # both read, one kept: no branch on the coin either
        uniform = min(np.int64((u - L) * inv_prior), K - 1)
        zs[i, 1] = mine if u < L else uniform
        c[zs[i, 0]] -= 1   # back to zeros for the next row (the proposals read topics, not c)
    state[0] = s0
    state[1] = s1


@njit(cache=True, nogil=True)
def doc_pass(doc_ptr, zp, zd, ndk, nk, dnk, d0, d1, alpha, vbeta, state):
    """The document pass over documents ``[d0, d1)``: accept word proposals, draw document proposals.

    ``ndk`` rows count ``zd``; each document's row is first brought up to date with the word pass's moves (as
    :func:`sync_docs` does), then kept exact, and ``zd`` with it.
    ``nk`` is read only (the totals at the start of the pass); the moves' effect on the totals is added to ``dnk``."""
    cd = np.zeros(nk.shape[0], dtype=np.int32)
    for d in range(d0, d1):
        if doc_ptr[d + 1] > doc_ptr[d]:
            _row_step(zp, zd, ndk, d, doc_ptr[d], doc_ptr[d + 1], cd, nk, dnk, alpha, vbeta, state)


@njit(cache=True, nogil=True)
def word_pass(order, word_ptr, zp, zpw, zw, nwk, nk, dnk, w0, w1, beta, vbeta, state):
    """The word pass over words ``[w0, w1)``: bring each word's row of ``nwk`` up to date, accept document proposals,
    draw word proposals. ``nk`` is read only; the moves' effect on the totals is added to ``dnk``.

    The block's topics and proposals are first gathered into word order (``zpw``, one random read per token, with the
    reads ahead prefetched), worked on there in order, and scattered back."""
    cw = np.zeros(nk.shape[0], dtype=np.int32)
    j0, j1 = word_ptr[w0], word_ptr[w1]
    for j in range(j0, j1):
        if j + AHEAD < j1:
            prefetch(zp, 2 * order[j + AHEAD])
        i = order[j]
        zpw[j, 0] = zp[i, 0]
        zpw[j, 1] = zp[i, 1]
    for w in range(w0, w1):
        if word_ptr[w + 1] > word_ptr[w]:
            _row_step(zpw, zw, nwk, w, word_ptr[w], word_ptr[w + 1], cw, nk, dnk, beta, vbeta, state)
    for j in range(j0, j1):
        if j + AHEAD < j1:
            prefetch(zp, 2 * order[j + AHEAD])
        i = order[j]
        zp[i, 0] = zpw[j, 0]
        zp[i, 1] = zpw[j, 1]


@njit(cache=True, nogil=True)
def sync_docs(doc_ptr, zp, zd, ndk, d0, d1):
    """Bring the rows ``[d0, d1)`` of ``ndk`` up to date with the moves of the word pass (``zd``: the topics as
    ``ndk`` counts them, in document order; updated)."""
    for d in range(d0, d1):
        _catch_up(zp, zd, ndk, d, doc_ptr[d], doc_ptr[d + 1])


def blocks(ptr: np.ndarray, n_blocks: int) -> list[tuple[int, int]]:
    """Contiguous ranges of the rows of ``ptr`` (documents or words) with about equal token counts."""
    n = len(ptr) - 1
    targets = np.linspace(0, ptr[-1], n_blocks + 1)[1:-1]
    cuts = [0] + [int(np.searchsorted(ptr, t)) for t in targets] + [n]
    cuts = sorted(set(min(max(c, 0), n) for c in cuts))
    if cuts[0] != 0:
        cuts = [0] + cuts
    return list(zip(cuts[:-1], cuts[1:]))


class WarpSweeper(PoolOwner):
    """Runs word-ordered sweeps (:func:`doc_pass`, :func:`word_pass`, :func:`sync_docs`) over ``n_jobs`` blocks of
    documents and of words in threads; the same interface as :class:`~dptopic.kernels.engine.ShardedSweeper`.

    Block ``p`` draws from ``states[p]`` in both passes; the topic totals are merged after each pass. For a fixed seed
    and ``n_jobs`` a run is bit-for-bit reproducible. Unlike the Gibbs schemes, a thread that fails leaves the sweep
    half done (the counts stay consistent with the assignments only once a sweep completes)."""

    def __init__(self, arrays, n_jobs: int):
        self.arrays = arrays
        V = arrays.nwk.shape[0]
        self.order, self.word_ptr = word_order(arrays.word_ids, V)
        self.doc_blocks = blocks(arrays.doc_ptr, n_jobs)
        self.word_blocks = blocks(self.word_ptr, n_jobs)
        self.n_shards = max(len(self.doc_blocks), len(self.word_blocks))
        self._start_pool(self.n_shards if self.n_shards > 1 else 0)
        self._zp = None

    def invalidate(self) -> None:
        """Forget the pass state (the counts or assignments were changed outside the sweeper)."""
        self._zp = None

    def _start(self) -> None:
        z = self.arrays.z
        # 16-bit topics where they fit: half the bytes in the word pass's random gather and scatter (5% faster a
        # sweep at K = 1,000, V = 50,000, 2M tokens, interleaved with 32-bit ones under load 6)
        dt = np.int16 if self.arrays.nk.shape[0] <= np.iinfo(np.int16).max else np.int32
        self._zp = np.empty((z.shape[0], 2), dtype=dt)
        self._zp[:, 0] = z
        self._zp[:, 1] = z   # no pending proposal: the first document pass moves nothing
        self._zw = np.ascontiguousarray(z[self.order], dtype=dt)
        self._zpw = np.empty_like(self._zp)   # the word pass's topics and proposals, in word order
        self._zd = z.astype(dt)

    def sync(self) -> None:
        """Bring ``arrays.z`` and ``arrays.ndk`` up to date (the sweeper keeps the topics beside the proposals
        between sweeps, and leaves ``ndk``'s catch-up with the word pass to the next document pass)."""
        if self._zp is not None:
            a, zp, zd = self.arrays, self._zp, self._zd
            self._map(lambda p, r: sync_docs(a.doc_ptr, zp, zd, a.ndk, r[0], r[1]), self.doc_blocks)
            a.z[...] = zp[:, 0]

    def close(self) -> None:
        self.sync()
        self._zp = None
        super().close()

    def _map(self, fn, ranges):
        if self._pool is None or len(ranges) == 1:
            return [fn(p, r) for p, r in enumerate(ranges)]
        return list(self._pool.map(lambda pr: fn(*pr), list(enumerate(ranges))))

    def sweep(self, alpha: float, beta: float, states, word_table=None, clip: float = np.inf) -> None:
        """One sweep: the document pass, then the word pass (``ndk`` catches up in the next document pass or in
        :meth:`sync`). ``states[p]`` is block ``p``'s generator state (advanced in place). Plain counts only
        (``word_table`` must be None)."""
        if word_table is not None:
            raise ValueError("the word-ordered sampler samples plain counts only (no frozen word table)")
        a = self.arrays
        if self._zp is None:
            self._start()
        nk = a.nk
        vbeta = beta * a.nwk.shape[0]
        zp, zw, zd = self._zp, self._zw, self._zd

        def docs(p, r):
            dnk = np.zeros(nk.shape[0], dtype=np.int64)
            doc_pass(a.doc_ptr, zp, zd, a.ndk, nk, dnk, r[0], r[1], alpha, vbeta, states[p])
            return dnk

        def words(p, r):
            dnk = np.zeros(nk.shape[0], dtype=np.int64)
            word_pass(self.order, self.word_ptr, zp, self._zpw, zw, a.nwk, nk, dnk, r[0], r[1], beta, vbeta, states[p])
            return dnk

        for delta in self._map(docs, self.doc_blocks):
            nk += delta.astype(nk.dtype)
        for delta in self._map(words, self.word_blocks):
            nk += delta.astype(nk.dtype)
