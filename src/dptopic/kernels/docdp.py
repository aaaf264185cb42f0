"""Compiled E-step of the document-level DP-EM trainer (:class:`dptopic.models.docdp.DocDPEM`).

For every document ``d`` with word counts ``c_dw`` the kernel runs ``inner`` fixed-point
iterations of the document-topic mixture under the topics ``beta``

    phi_dwk = theta_dk beta_kw / (sum_j theta_dj beta_jw),    theta_dk = alpha + sum_w c_dw phi_dwk

(started from ``theta_d = 1/K``) and adds the document's normalised expected word-topic counts
``S_d[k, w] = c_dw / ||c_d||_2 * phi_dwk`` (``phi`` from the last iteration) to a word-major
``V x K`` accumulator. It is the same arithmetic as the NumPy reference
:func:`dptopic.models._docdp_math.normalised_statistic`, one document at a time and without
storing ``phi``: memory is ``O(K)`` per thread besides the accumulator.

:class:`StatisticAccumulator` splits each block of documents over ``n_jobs`` threads (the kernel
releases the GIL), each with its own accumulator, and sums them at the end. Only the order of
floating-point additions depends on ``n_jobs``.
"""
from __future__ import annotations

import math

import numpy as np

from ._bow import canonical_bow
from ._jit import njit
from ._threads import PoolOwner
from .engine import make_shards

TINY = 1e-300
# Reassociation lets LLVM vectorise the loops over topics; no flag that assumes finite values.
_FAST = {"reassoc", "contract", "arcp", "nsz"}
BIG_COUNT = 2.0 ** 400
"""A document whose largest count is above this has its counts (and its theta) read times ``2^-600``, so that no sum
overflows (``theta`` is then in those units: its proportions are unchanged)."""
SMALL_COUNT = 2.0 ** -400
"""A document whose largest count is below this has its norm computed on its counts times ``2^600``, so that no square
underflows."""
UNIT_SHIFT = 2.0 ** 600


@njit(cache=True, nogil=True)
def count_units(m):
    """``(norm_factor, theta_factor)`` of a document whose largest count is ``m``: powers of two (multiplying a count by
    them is exact; no division, which ``arcp`` would turn into an overflowing reciprocal), 1.0 for counts in
    ``[SMALL_COUNT, BIG_COUNT]`` (the arithmetic is then the plain one)."""
    if m > BIG_COUNT:
        return 1.0 / UNIT_SHIFT, 1.0 / UNIT_SHIFT
    if m < SMALL_COUNT:
        return UNIT_SHIFT, 1.0
    return 1.0, 1.0


@njit(cache=True, nogil=True)
def _unit_weight(c, factor, norm):
    """``c / ||c_d||_2`` (at most 1) from the count times its norm factor and the norm of the counts so multiplied;
    compiled without fast-math, so that no reassociation multiplies ``factor`` into ``1 / norm`` first (which overflows
    for a document of subnormal counts)."""
    return (c * factor) / norm


@njit(cache=True, nogil=True, fastmath=_FAST)
def docdp_estep(doc_ptr, word_ids, counts, beta_vk, alpha, inner, d_start, d_stop, stat_vk, theta_out):
    """E-step of documents ``d_start .. d_stop-1``; adds their ``S_d`` (transposed) to ``stat_vk`` (V x K).

    ``doc_ptr``/``word_ids``/``counts``: CSR bag of words (one entry per distinct word). When
    ``theta_out`` has rows, ``theta_out[d]`` receives document ``d``'s final ``theta`` (in the units of
    :func:`count_units` for a document with a count above ``BIG_COUNT``).

    The bound the mechanism's sensitivity rests on, ``||S_d||_F <= 1``, holds here for any finite input, whatever the
    caller checked: each entry adds ``u_w * phi_wk`` with ``u = c_d / ||c_d||_2`` (computed in units that neither
    overflow nor underflow) and ``phi_wk = p_k / (sum_j p_j + TINY)``, ``p_k = max(theta_k beta_kw, 0)``; an entry whose
    ``sum_j p_j`` is 0 or not finite (an overflowing ``beta``) adds nothing.
    """
    K = beta_vk.shape[1]
    theta = np.empty(K)
    new = np.empty(K)
    p = np.empty(K)
    keep = theta_out.shape[0] > 0
    for d in range(d_start, d_stop):
        a = doc_ptr[d]
        b = doc_ptr[d + 1]
        m = 0.0
        for i in range(a, b):
            m = max(m, counts[i])
        nu, tu = count_units(m)
        sq = 0.0
        for i in range(a, b):
            x = counts[i] * nu
            sq += x * x
        norm = math.sqrt(sq) if sq > 0 else 1.0
        prior = alpha * tu
        for k in range(K):
            theta[k] = 1.0 / K
        for it in range(inner):
            last = it == inner - 1
            for k in range(K):
                new[k] = 0.0
            for i in range(a, b):
                w = word_ids[i]
                s = 0.0
                for k in range(K):
                    p[k] = max(theta[k] * beta_vk[w, k], 0.0)
                    s += p[k]
                if not (0.0 < s < math.inf):      # no weight (phi is 0), or an overflow: this entry adds nothing
                    continue
                q = 1.0 / (s + TINY)
                for k in range(K):
                    p[k] *= q                      # phi_wk, in [0, 1]: normalised before any count multiplies it
                c = counts[i] * tu
                for k in range(K):
                    new[k] += p[k] * c
                if last:
                    u = _unit_weight(counts[i], nu, norm)
                    for k in range(K):
                        stat_vk[w, k] += p[k] * u
            for k in range(K):
                theta[k] = new[k] + prior
        if keep:
            for k in range(K):
                theta_out[d, k] = theta[k]


@njit(cache=True, nogil=True)
def _distinct_counts(doc_ptr, word_ids, V, out_ptr):
    """out_ptr[d+1] = number of distinct words of document d."""
    seen = np.full(V, -1, np.int64)
    for d in range(doc_ptr.shape[0] - 1):
        n = 0
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            if seen[w] != d:
                seen[w] = d
                n += 1
        out_ptr[d + 1] = n


@njit(cache=True, nogil=True)
def _fill_bow(doc_ptr, word_ids, V, out_ptr, out_ids, out_counts):
    slot = np.full(V, -1, np.int64)
    for d in range(doc_ptr.shape[0] - 1):
        j = out_ptr[d]
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            w = word_ids[i]
            if slot[w] < out_ptr[d]:          # not yet seen in this document
                slot[w] = j
                out_ids[j] = w
                out_counts[j] = 1.0
                j += 1
            else:
                out_counts[slot[w]] += 1.0


def tokens_to_bow(doc_ptr: np.ndarray, word_ids: np.ndarray, vocab_size: int):
    """``(ptr, ids, counts)``: the bag of words of a tokenised corpus (``doc_ptr``, ``word_ids``), each document's
    distinct words in order of first occurrence, counts as float64."""
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    word_ids = np.ascontiguousarray(word_ids, dtype=np.int32)
    ptr = np.zeros(len(doc_ptr), dtype=np.int64)
    _distinct_counts(doc_ptr, word_ids, int(vocab_size), ptr)
    np.cumsum(ptr, out=ptr)
    ids = np.empty(int(ptr[-1]), dtype=np.int32)
    cts = np.empty(int(ptr[-1]), dtype=np.float64)
    _fill_bow(doc_ptr, word_ids, int(vocab_size), ptr, ids, cts)
    return ptr, ids, cts


class StatisticAccumulator(PoolOwner):
    """Sums ``S_d`` over blocks of documents given one after another (e.g. shards read from disk), on ``n_jobs``
    threads. With ``n_jobs=1`` the additions happen in document order, whatever the blocks."""

    def __init__(self, vocab_size: int, n_topics: int, n_jobs: int = 1):
        self.n_jobs = max(1, int(n_jobs))
        self.buffers = np.zeros((self.n_jobs, int(vocab_size), int(n_topics)))
        self._start_pool(self.n_jobs - 1, "dptopic-docdp")


    def reset(self) -> None:
        self.buffers[:] = 0.0

    def add(self, ptr, ids, cts, beta_vk, alpha: float, inner: int, theta_out=None) -> None:
        """Add the documents of one bag-of-words block (``theta_out``: D x K, optional, receives their theta).

        The block may be any CSR ``(indptr, indices, data)``: one whose documents repeat a word or hold explicit
        zeros is read as its canonical copy (:func:`~dptopic.kernels._bow.canonical_bow`), since the kernel's norm
        (hence the bound of one document's contribution) assumes one entry per distinct word; word ids outside the
        vocabulary and negative or non-finite counts are refused in one line."""
        beta_vk = np.ascontiguousarray(beta_vk, dtype=np.float64)
        ptr, ids, cts = canonical_bow(ptr, ids, cts, beta_vk.shape[0])
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        cts = np.ascontiguousarray(cts, dtype=np.float64)
        th = np.zeros((0, beta_vk.shape[1])) if theta_out is None else theta_out
        blocks = make_shards(ptr, self.n_jobs) if len(ptr) > 1 else []

        def run(j, blk):
            docdp_estep(ptr, ids, cts, beta_vk, float(alpha), int(inner), blk.doc_start, blk.doc_stop,
                        self.buffers[j], th)

        if self._pool is None or len(blocks) <= 1:
            for blk in blocks:
                run(0, blk)
            return
        futures = [self._pool.submit(run, j, blk) for j, blk in enumerate(blocks[1:], start=1)]
        run(0, blocks[0])
        for f in futures:
            f.result()

    def total(self) -> np.ndarray:
        """The K x V sum so far (buffers added in a fixed order)."""
        return np.ascontiguousarray(self.buffers.sum(axis=0).T)


def block_statistic(bow, beta_vk: np.ndarray, alpha: float, inner: int, n_jobs: int = 1) -> np.ndarray:
    """``sum_d S_d`` (K x V) over one bag-of-words block under the topics ``beta_vk`` (V x K): one shard's partial sum,
    as :class:`StatisticAccumulator` adds it."""
    with StatisticAccumulator(beta_vk.shape[0], beta_vk.shape[1], n_jobs) as acc:
        acc.add(*bow, beta_vk, alpha, inner)
        return acc.total()


def normalised_statistic(ptr, ids, cts, beta: np.ndarray, alpha: float, inner: int, n_jobs: int = 1,
                         want_theta: bool = False):
    """``(sum_d S_d as K x V, theta D x K or None)`` for one in-memory bag of words; ``beta`` is K x V."""
    K = beta.shape[0]
    theta = np.empty((len(ptr) - 1, K)) if want_theta else None
    with StatisticAccumulator(beta.shape[1], K, n_jobs) as acc:
        acc.add(ptr, ids, cts, np.ascontiguousarray(beta.T), alpha, inner, theta)
        return acc.total(), theta
