"""The word-ordered Metropolis-Hastings sweep (WarpLDA): after every sweep the count tables are exactly the counts of
the assignments (recounted with NumPy), a fixed seed and number of threads gives the same chain bit for bit, and the
blocks cover every document and word once."""
import numpy as np
import pytest

from conftest import counts_from_z, random_state
from dptopic.kernels import SweepArrays, kernel_state
from dptopic.kernels.rng import PyXorShift
from dptopic.kernels.warp import WarpSweeper, blocks, word_order


def _sweeps(corpus, K, n_jobs, n_sweeps, seed=0, check=None, sync=True):
    z, ndk, nwk, nk = random_state(corpus, K, seed=seed)
    arr = SweepArrays(corpus.word_ids, corpus.doc_ptr, z, ndk, nwk, nk)
    rng = np.random.default_rng(seed)
    with WarpSweeper(arr, n_jobs) as sw:
        states = [kernel_state(rng) for _ in range(sw.n_shards)]
        for _ in range(n_sweeps):
            sw.sweep(0.1, 0.05, states)
            if sync:
                sw.sync()
            if check is not None:
                check(arr)
    return arr


@pytest.mark.parametrize("n_jobs", [1, 2, 3])
def test_counts_match_a_numpy_recount_after_every_sweep(planted, n_jobs):
    c, K = planted.corpus, 7
    z0 = random_state(c, K)[0]
    moved = []

    def check(arr):
        ndk, nwk = counts_from_z(c, arr.z, K)
        assert np.array_equal(arr.ndk, ndk) and np.array_equal(arr.nwk, nwk)
        assert np.array_equal(arr.nk, nwk.sum(0)) and arr.z.min() >= 0 and arr.z.max() < K
        moved.append(int((arr.z != z0).sum()))

    _sweeps(c, K, n_jobs, 5, check=check)
    assert moved[-1] > c.n_tokens // 2   # the chain moves (a sweep that did nothing would pass the recount)


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_reading_the_counts_between_sweeps_does_not_change_the_chain(planted, n_jobs):
    """ndk catches up with the word pass's moves when it is read (sync) or in the next document pass: the same chain
    either way, and the same counts once synced."""
    c, K = planted.corpus, 6

    def nwk_exact_before_sync(arr):     # nwk and nk are exact after every sweep, synced or not
        assert np.array_equal(arr.nwk.sum(0), arr.nk)

    read = _sweeps(c, K, n_jobs, 5, seed=2)
    unread = _sweeps(c, K, n_jobs, 5, seed=2, sync=False, check=nwk_exact_before_sync)   # synced once, on close
    assert np.array_equal(read.z, unread.z) and np.array_equal(read.ndk, unread.ndk)
    assert np.array_equal(read.nwk, unread.nwk)
    ndk, nwk = counts_from_z(c, unread.z, K)
    assert np.array_equal(unread.ndk, ndk) and np.array_equal(unread.nwk, nwk)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_same_seed_and_threads_give_the_same_chain(planted, n_jobs):
    a = _sweeps(planted.corpus, 5, n_jobs, 4, seed=3)
    b = _sweeps(planted.corpus, 5, n_jobs, 4, seed=3)
    c = _sweeps(planted.corpus, 5, n_jobs, 4, seed=4)
    assert np.array_equal(a.z, b.z) and np.array_equal(a.nwk, b.nwk) and np.array_equal(a.ndk, b.ndk)
    assert not np.array_equal(a.z, c.z)


def test_blocks_and_word_order_cover_everything_once(planted):
    c = planted.corpus
    order, word_ptr = word_order(c.word_ids, c.vocab_size)
    assert np.array_equal(np.sort(order), np.arange(c.n_tokens))
    assert np.array_equal(c.word_ids[order], np.repeat(np.arange(c.vocab_size), np.diff(word_ptr)))
    for ptr in (c.doc_ptr, word_ptr):
        bl = blocks(ptr, 3)
        assert bl[0][0] == 0 and bl[-1][1] == len(ptr) - 1 and all(x[1] == y[0] for x, y in zip(bl, bl[1:]))
        tokens = [ptr[b] - ptr[a] for a, b in bl]
        assert len(bl) == 3 and min(tokens) > 0.5 * max(tokens)   # balanced by token count


def test_a_frozen_word_table_is_refused(planted):
    c = planted.corpus
    z, ndk, nwk, nk = random_state(c, 3)
    with WarpSweeper(SweepArrays(c.word_ids, c.doc_ptr, z, ndk, nwk, nk), 1) as sw:
        with pytest.raises(ValueError, match="plain counts only"):
            sw.sweep(0.1, 0.05, [kernel_state(np.random.default_rng(0))], word_table=nwk.astype(float))


def _python_sweeps(corpus, K, z, state, alpha, beta, n_sweeps):
    """The word-ordered sweeps of one block written plainly (the module note's rules, NumPy for the bookkeeping and
    :class:`~dptopic.kernels.rng.PyXorShift` for the draws): the topics after ``n_sweeps`` sweeps."""
    rng = PyXorShift(state)
    z, proposal = z.astype(np.int64), z.astype(np.int64)       # no pending proposal before the first document pass
    nk = np.bincount(z, minlength=K).astype(np.int64)
    vbeta = beta * corpus.vocab_size
    by_word = np.argsort(corpus.word_ids, kind="stable")
    rows_of = {"docs": [np.arange(a, b) for a, b in zip(corpus.doc_ptr[:-1], corpus.doc_ptr[1:])],
               "words": np.split(by_word, np.cumsum(np.bincount(corpus.word_ids, minlength=corpus.vocab_size))[:-1])}

    def row_step(tokens, prior, dnk):
        c = np.bincount(z[tokens], minlength=K)
        for i in tokens:            # each pending proposal accepted or not, the other side's counts cancelled
            s, t = z[i], proposal[i]
            if t != s:
                num = (c[t] + prior) * (nk[s] + dnk[s] - 1 + vbeta)
                den = (c[s] - 1 + prior) * (nk[t] + dnk[t] + vbeta)
                if rng.uniform() * den < num:
                    c[s] -= 1
                    c[t] += 1
                    dnk[s] -= 1
                    dnk[t] += 1
                    z[i] = t
        L = len(tokens)
        for i in tokens:            # a new proposal: a random token's topic of the row, or a uniform topic
            u = rng.uniform() * (L + K * prior)
            proposal[i] = z[tokens[int(u)]] if u < L else min(int((u - L) * (1.0 / prior)), K - 1)

    for _ in range(n_sweeps):
        for side, prior in (("docs", alpha), ("words", beta)):
            dnk = np.zeros(K, np.int64)     # the totals move only at the end of a pass
            for tokens in rows_of[side]:
                if len(tokens):
                    row_step(tokens, prior, dnk)
            nk += dnk
    return z


@pytest.mark.parametrize("alpha, beta", [(0.1, 0.05), (2.0, 0.5)])
def test_one_blocks_chain_is_the_plain_python_sweeps(planted, alpha, beta):
    """The kernel's chain on one thread, topic for topic, against the sweeps written plainly: the same draws from
    the same stream, the same acceptances and the same proposals (branch-free moves, registers, prefetches and the
    counts kept on the side change none of them)."""
    c, K = planted.corpus, 6
    z, ndk, nwk, nk = random_state(c, K, seed=5)
    state = kernel_state(np.random.default_rng(5))
    want = _python_sweeps(c, K, z, state.copy(), alpha, beta, 3)
    arr = SweepArrays(c.word_ids, c.doc_ptr, z.copy(), ndk, nwk, nk)
    with WarpSweeper(arr, 1) as sw:
        for _ in range(3):
            sw.sweep(alpha, beta, [state])
        sw.sync()
    assert (arr.z != random_state(c, K, seed=5)[0]).mean() > 0.3
    assert np.array_equal(arr.z, want)
