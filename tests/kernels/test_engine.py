"""The documents × words partition scheme for threads (Yan et al. 2009): exact counts, no races,
bit-identical runs for a fixed seed and n_jobs, frozen tables left untouched, same quality."""
import numpy as np
import pytest

from conftest import counts_from_z, random_state
from dptopic.evaluation.recovery import topic_recovery
from dptopic.kernels import ShardedSweeper, SweepArrays, kernel_state
from dptopic.kernels.engine import Partition, _run_kernel, word_blocks
from dptopic.models import HDPLDA, LDA


def test_blocks_cover_every_token_once(planted):
    c = planted.corpus
    part = Partition(c.word_ids, c.doc_ptr, c.vocab_size, 3)
    wb = word_blocks(c.word_ids, c.vocab_size, 3)
    seen = np.zeros(c.n_tokens, int)
    doc_of = np.repeat(np.arange(c.n_docs), c.doc_lengths)
    for (p, q), (start, stop, ptr, d0, d1) in part.cells.items():
        idx = part.order[start:stop]
        seen[idx] += 1
        assert np.all(wb[c.word_ids[idx]] == q)                       # only word block q
        assert np.all((doc_of[idx] >= d0) & (doc_of[idx] < d1))       # only document block p
        assert ptr[-1] == stop - start and np.all(np.diff(idx) > 0)   # documents in order, tokens in order
        assert np.array_equal(np.repeat(np.arange(d0, d1), np.diff(ptr)), doc_of[idx])
    assert np.all(seen == 1)
    tokens = np.bincount(wb[c.word_ids], minlength=3)
    assert tokens.min() > 0.5 * tokens.max()  # balanced by token count


@pytest.mark.parametrize("kind", ["dense", "sparse", "frozen"])
@pytest.mark.parametrize("n_jobs", [2, 3])
def test_counts_stay_exact_and_frozen_table_untouched(planted, kind, n_jobs):
    c = planted.corpus
    K = 5
    z, ndk, nwk, nk = random_state(c, K)
    arr = SweepArrays(c.word_ids, c.doc_ptr, z, ndk, nwk, nk)
    table = nwk.astype(np.float64) + 1.0 if kind == "frozen" else None
    frozen = None if table is None else table.copy()
    rng = np.random.default_rng(0)
    with ShardedSweeper(arr, n_jobs, kind, "partition") as sw:
        states = [kernel_state(rng) for _ in range(sw.n_shards)]
        for _ in range(4):
            sw.sweep(0.1, 0.01, states, word_table=table)
    ndk_z, nwk_z = counts_from_z(c, arr.z, K)
    assert np.array_equal(arr.ndk, ndk_z) and np.array_equal(arr.nwk, nwk_z)
    assert np.array_equal(arr.nk, nwk_z.sum(0)) and np.array_equal(arr.ndk.sum(1), c.doc_lengths)
    if frozen is not None:
        assert np.array_equal(table, frozen)


def test_threads_equal_the_serial_schedule(planted):
    """The threaded diagonal schedule gives exactly what running its blocks one after another gives."""
    c = planted.corpus
    K, P = 5, 2
    z, ndk, nwk, nk = random_state(c, K, seed=7)
    arr = SweepArrays(c.word_ids, c.doc_ptr, z.copy(), ndk.copy(), nwk.copy(), nk.copy())
    rng = np.random.default_rng(1)
    states = [kernel_state(rng) for _ in range(P)]
    ref_states = [s.copy() for s in states]
    with ShardedSweeper(arr, P, "dense", "partition") as sw:
        for _ in range(2):
            sw.sweep(0.1, 0.01, states)
    part = Partition(c.word_ids, c.doc_ptr, c.vocab_size, P)
    zp = z[part.order]
    for _ in range(2):
        for r in range(P):
            base = nk.copy()
            new = []
            for p in range(P):
                start, stop, ptr, d0, d1 = part.cells[p, (p + r) % P]
                nkp = base.copy()
                _run_kernel("dense", part.word_ids[start:stop], ptr, zp[start:stop], ndk[d0:d1], None, nwk, nkp,
                            0.1, 0.01, np.inf, ref_states[p])
                new.append(nkp)
            nk = base + sum(x - base for x in new)
    z_ref = np.empty_like(z)
    z_ref[part.order] = zp
    assert np.array_equal(arr.z, z_ref) and np.array_equal(arr.nwk, nwk) and np.array_equal(arr.nk, nk)


def test_partition_fit_reproducible_and_accurate(planted):
    kw = dict(n_topics=5, n_iter=60, seed=3, n_jobs=2, verbose=0, parallel="partition")
    a, b = LDA(**kw).fit(planted.corpus), LDA(**kw).fit(planted.corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert topic_recovery(a.components_, planted.phi) >= 0.9
    h = HDPLDA(n_topics=5, n_iter=5, seed=3, n_jobs=2, verbose=0, parallel="partition").fit(planted.corpus)
    assert h.ledger_.n_events == 10 and np.allclose(h.components_.sum(1), 1.0)


def test_cdp_on_threads_is_reproducible(planted):
    """CDP-LDA+ on 2 threads (the partition scheme, as every Gibbs trainer by default): a fixed seed and n_jobs give
    the same run, with both noise tables drawn in place; another seed gives another run."""
    from dptopic.models import CDPLDA, CDPLDAPlus

    assert CDPLDA().parallel == CDPLDAPlus().parallel == LDA().parallel == HDPLDA().parallel == "partition"
    kw = dict(n_topics=5, n_iter=6, paper_epsilon=2.0, seed=3, n_jobs=2, verbose=0)
    a, b = CDPLDAPlus(**kw).fit(planted.corpus), CDPLDAPlus(**kw).fit(planted.corpus)
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.training_theta_, b.training_theta_)
    c = CDPLDAPlus(**{**kw, "seed": 4}).fit(planted.corpus)
    assert not np.array_equal(a.components_, c.components_)
    assert a.privacy_["count_release_epsilon"]["label"].startswith("partial figure")
