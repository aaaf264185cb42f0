"""Per-person aggregation of the document-level statistics (user-level DP).

The document-level kernels add each document's contribution, of L2 (Frobenius) norm at most 1, to a sum. Here the
documents come grouped by person (``gptr``: person ``g`` wrote documents ``gptr[g] .. gptr[g+1]-1``, in a bag of
words ordered so), and each person's documents are first added into a scratch buffer with the same per-document
kernel, then that sum is scaled to norm at most 1 and added to the total: one person moves the total by at most 1,
however many documents they wrote. Only the entries a person's words can reach are read and cleared, so the cost
is that of the documents, not of the buffer.

The NumPy reference is the document-level one (:mod:`dptopic.moments.document_statistics`,
:func:`dptopic.models._docdp_math.normalised_statistic`) applied to each person's documents, the result clipped to
norm 1 (``tests/kernels/test_user_level.py``).
"""
from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._bow import canonical_bow
from ._jit import njit
from .docdp import docdp_estep
from .pair_moments import blocks, column_slots, cooccurrence_block, presence_block


@njit(cache=True, nogil=True)
def _scale(sq, n_docs):
    """The factor that brings a sum of squared norm ``sq`` over ``n_docs`` documents to norm at most 1. One document's
    contribution is kept as it is (its norm is 1 up to rounding, as at the document level), so that a person of one
    document adds exactly what the document adds there."""
    return 1.0 if sq <= 1.0 or n_docs <= 1 else 1.0 / math.sqrt(sq)


@njit(cache=True, nogil=True)
def _mark_words(ptr, ids, d0, d1, slot, mark, touched):
    """The distinct tracked slots (``slot[w]`` >= 0) of documents ``d0..d1-1`` into ``touched``; their count."""
    m = 0
    for i in range(ptr[d0], ptr[d1]):
        j = slot[ids[i]]
        if j >= 0 and not mark[j]:
            mark[j] = True
            touched[m] = j
            m += 1
    for t in range(m):
        mark[touched[t]] = False
    return m


@njit(cache=True, nogil=True)
def user_cooccurrence_block(ptr, ids, cts, gptr, g0, g1, slot, tmp, mark, touched, out):
    """Persons ``g0..g1-1``: each one's documents' Frobenius-normalised pair matrices summed (``tmp``, n x n, zero on
    entry and on exit), scaled to Frobenius norm at most 1, added to ``out``."""
    for g in range(g0, g1):
        cooccurrence_block(ptr, ids, cts, gptr[g], gptr[g + 1], slot, tmp)
        m = _mark_words(ptr, ids, gptr[g], gptr[g + 1], slot, mark, touched)
        sq = 0.0
        for a in range(m):
            for b in range(m):
                v = tmp[touched[a], touched[b]]
                sq += v * v
        f = _scale(sq, gptr[g + 1] - gptr[g])
        for a in range(m):
            for b in range(m):
                out[touched[a], touched[b]] += tmp[touched[a], touched[b]] * f
                tmp[touched[a], touched[b]] = 0.0


@njit(cache=True, nogil=True)
def user_profile_block(ptr, ids, cts, gptr, g0, g1, slot, tmp, mark, touched, out):
    """Persons ``g0..g1-1``: each one's word profile ``u`` (their counts of the tracked slots over all their documents,
    in ``tmp``'s first row, zero on entry and on exit) scaled to L2 norm 1, its outer product ``u u^T`` (Frobenius norm
    1) added to ``out``; a person with no tracked word adds nothing."""
    for g in range(g0, g1):
        for i in range(ptr[gptr[g]], ptr[gptr[g + 1]]):
            j = slot[ids[i]]
            if j >= 0:
                tmp[0, j] += cts[i]
        m = _mark_words(ptr, ids, gptr[g], gptr[g + 1], slot, mark, touched)
        sq = 0.0
        for a in range(m):
            sq += tmp[0, touched[a]] * tmp[0, touched[a]]
        if sq > 0.0:
            for a in range(m):
                ua = tmp[0, touched[a]] / sq
                for b in range(m):
                    out[touched[a], touched[b]] += ua * tmp[0, touched[b]]
        for a in range(m):
            tmp[0, touched[a]] = 0.0


@njit(cache=True, nogil=True)
def user_presence_block(ptr, ids, cts, gptr, g0, g1, document, with_counts, slot, tmp, mark, touched, out):
    """Persons ``g0..g1-1``: each one's documents' normalised presence vectors (as
    :func:`~dptopic.kernels.pair_moments.presence_block` makes them, ``tmp`` zero on entry and on exit) summed, scaled
    to L2 norm at most 1, added to ``out``."""
    V = slot.shape[0]
    base = V + (1 if document > 0 else 0)
    for g in range(g0, g1):
        presence_block(ptr, ids, cts, gptr[g], gptr[g + 1], document, with_counts, tmp)
        m = _mark_words(ptr, ids, gptr[g], gptr[g + 1], slot, mark, touched)
        sq = 0.0
        for t in range(m):
            w = touched[t]
            sq += tmp[w] * tmp[w]
            if with_counts > 0:
                sq += tmp[base + w] * tmp[base + w]
        if document > 0:
            sq += tmp[V] * tmp[V]
        f = _scale(sq, gptr[g + 1] - gptr[g])
        for t in range(m):
            w = touched[t]
            out[w] += tmp[w] * f
            tmp[w] = 0.0
            if with_counts > 0:
                out[base + w] += tmp[base + w] * f
                tmp[base + w] = 0.0
        if document > 0:
            out[V] += tmp[V] * f
            tmp[V] = 0.0


@njit(cache=True, nogil=True)
def user_docdp_estep(ptr, ids, cts, beta_vk, alpha, inner, gptr, g0, g1, slot, tmp, mark, touched, stat_vk):
    """Persons ``g0..g1-1``: each one's documents' ``S_d`` (the E-step of
    :func:`~dptopic.kernels.docdp.docdp_estep`, into ``tmp``, V x K, zero on entry and on exit) summed, scaled to
    Frobenius norm at most 1, added to ``stat_vk``."""
    K = beta_vk.shape[1]
    no_theta = np.zeros((0, K))
    for g in range(g0, g1):
        docdp_estep(ptr, ids, cts, beta_vk, alpha, inner, gptr[g], gptr[g + 1], tmp, no_theta)
        m = _mark_words(ptr, ids, gptr[g], gptr[g + 1], slot, mark, touched)
        sq = 0.0
        for t in range(m):
            for k in range(K):
                sq += tmp[touched[t], k] * tmp[touched[t], k]
        f = _scale(sq, gptr[g + 1] - gptr[g])
        for t in range(m):
            w = touched[t]
            for k in range(K):
                stat_vk[w, k] += tmp[w, k] * f
                tmp[w, k] = 0.0


def _run_people(kernel, bow, gptr, shape, n_jobs, vocab_size, slot, n_slots, before=(), after=()):
    """Run ``kernel(ptr, ids, cts, *before, gptr, g0, g1, *after, slot, tmp, mark, touched, out)`` over the persons of
    ``bow`` (grouped by ``gptr``) on up to ``n_jobs`` threads, each with its own scratch ``tmp`` and total ``out`` (of
    ``shape``); the totals are added in a fixed order."""
    ptr, ids, cts = canonical_bow(*bow, vocab_size)
    gptr = np.ascontiguousarray(gptr, dtype=np.int64)
    if len(gptr) < 1 or gptr[0] != 0 or gptr[-1] != len(ptr) - 1 or np.any(np.diff(gptr) < 0):
        raise ValueError("gptr must group every document of the bag of words, in order")
    parts = blocks(ptr[gptr], max(1, int(n_jobs)))      # persons in blocks of about equal numbers of entries

    def run(ab):
        out = np.zeros(shape)
        kernel(ptr, ids, cts, *before, gptr, ab[0], ab[1], *after, slot, np.zeros(shape),
               np.zeros(n_slots, np.bool_), np.empty(n_slots, np.int64), out)
        return out

    if len(parts) <= 1:
        outs = [run(ab) for ab in parts]
    else:
        with ThreadPoolExecutor(len(parts)) as pool:
            outs = list(pool.map(run, parts))
    return sum(outs) if outs else np.zeros(shape)


def user_cooccurrence_bow(bow, gptr, columns, vocab_size: int, n_jobs: int = 1, groups=None) -> np.ndarray:
    """The sum over persons of each one's normalised pair matrices over ``columns``, summed and scaled to Frobenius
    norm at most 1 (the user-level :func:`~dptopic.kernels.pair_moments.normalised_cooccurrence_bow`; ``groups``: each
    column word's group, as there)."""
    slot, n = column_slots(columns, vocab_size, groups)
    return _run_people(user_cooccurrence_block, bow, gptr, (n, n), n_jobs, int(vocab_size), slot, n)


def user_profile_cooccurrence_bow(bow, gptr, columns, vocab_size: int, n_jobs: int = 1, groups=None) -> np.ndarray:
    """The sum over persons of ``u u^T``, ``u`` each person's counts of ``columns`` (of their groups with ``groups``,
    as :func:`~dptopic.kernels.pair_moments.column_slots` maps them) over all their documents, scaled to L2 norm 1:
    each person adds a matrix of Frobenius norm 1 (0 without a column word)."""
    slot, n = column_slots(columns, vocab_size, groups)
    return _run_people(user_profile_block, bow, gptr, (n, n), n_jobs, int(vocab_size), slot, n)


def user_document_frequency_bow(bow, gptr, vocab_size: int, n_jobs: int = 1, with_document: bool = False,
                                with_counts: bool = False) -> np.ndarray:
    """The sum over persons of each one's normalised presence vectors (as
    :func:`~dptopic.kernels.pair_moments.document_frequency_bow` makes them), summed and scaled to L2 norm at most 1."""
    V = int(vocab_size)
    extra = 1 if with_document else 0
    size = (2 if with_counts else 1) * V + extra
    return _run_people(user_presence_block, bow, gptr, (size,), n_jobs, V, np.arange(V, dtype=np.int64), V,
                       after=(extra, 1 if with_counts else 0))


def user_normalised_statistic(bow, gptr, beta: np.ndarray, alpha: float, inner: int, n_jobs: int = 1) -> np.ndarray:
    """The K x V sum over persons of each one's documents' ``S_d`` summed and scaled to Frobenius norm at most 1 (the
    user-level :func:`~dptopic.kernels.docdp.normalised_statistic`; ``beta`` is K x V)."""
    K, V = beta.shape
    beta_vk = np.ascontiguousarray(np.asarray(beta, dtype=np.float64).T)
    total = _run_people(user_docdp_estep, bow, gptr, (V, K), n_jobs, V, np.arange(V, dtype=np.int64), V,
                        before=(beta_vk, float(alpha), int(inner)))
    return np.ascontiguousarray(total.T)
