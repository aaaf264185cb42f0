"""Review 52 of kernels/ and backends/: the document-level kernels read any scipy CSR (a word repeated in a document,
explicit zeros, unsorted columns) as its canonical bag of words, so one document's contribution keeps its norm bound;
bad bags of words are refused in one line; a failing thread shard leaves the sampler state as it was; backend edge
cases (no documents, more shards than documents, Dask results whatever the number of workers)."""
import numpy as np
import pytest
import scipy.sparse as sp

from dptopic.errors import DPTopicError
from dptopic.kernels.docdp import normalised_statistic, tokens_to_bow
from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow

from conftest import counts_from_z


def _canonical_and_messy(rng, D=40, V=25):
    """A random count matrix (canonical CSR) and the same counts as a messy CSR: every count split over 1-3 entries,
    explicit zeros added, each row's entries shuffled."""
    dense = rng.poisson(0.6, size=(D, V)).astype(np.float64)
    dense[3] = 0.0                                       # an empty document
    dense[7] = 0.0
    dense[7, 4] = 5.0                                    # one word, written below as a zero then its count
    X = sp.csr_matrix(dense)
    ptr, ids, cts = [0], [], []
    for d in range(D):
        row_ids, row_cts = [], []
        for w in np.flatnonzero(dense[d]):
            c = int(dense[d, w])
            parts = rng.multinomial(c, np.ones(k := int(rng.integers(1, 4))) / k)
            row_ids += [w] * k
            row_cts += list(parts.astype(float))         # a part may be 0: an explicit zero of a present word
        for w in rng.choice(V, 2, replace=False):        # explicit zeros, of present and absent words
            row_ids.append(int(w))
            row_cts.append(0.0)
        order = rng.permutation(len(row_ids))
        if d == 7:
            row_ids, row_cts, order = [4, 4], [0.0, 5.0], np.arange(2)
        ids += [row_ids[i] for i in order]
        cts += [row_cts[i] for i in order]
        ptr.append(len(ids))
    M = sp.csr_matrix((np.array(cts), np.array(ids, dtype=np.int32), np.array(ptr)), shape=(D, V))
    assert not M.has_canonical_format
    np.testing.assert_array_equal(M.toarray(), dense)
    return X, M


def _bow(X):
    return X.indptr.astype(np.int64), X.indices, X.data


@pytest.mark.parametrize("n_jobs", [1, 3])
def test_docdp_reads_a_messy_csr_as_its_canonical_version(n_jobs):
    rng = np.random.default_rng(0)
    X, M = _canonical_and_messy(rng)
    beta = rng.dirichlet(np.ones(X.shape[1]), size=4)
    S0, th0 = normalised_statistic(*_bow(X), beta, 0.2, 7, n_jobs=n_jobs, want_theta=True)
    S1, th1 = normalised_statistic(*_bow(M), beta, 0.2, 7, n_jobs=n_jobs, want_theta=True)
    np.testing.assert_allclose(S1, S0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(th1, th0, rtol=0, atol=1e-10)
    # the sensitivity bound: every document's own contribution, and its removal from the sum, has norm <= 1
    for d in range(M.shape[0]):
        Sd, _ = normalised_statistic(*_bow(M[d]), beta, 0.2, 7)
        assert np.linalg.norm(Sd) <= 1 + 1e-12
        rest = M[np.setdiff1d(np.arange(M.shape[0]), [d])]
        assert np.linalg.norm(S1 - normalised_statistic(*_bow(rest), beta, 0.2, 7)[0]) <= 1 + 1e-9


def test_docdp_one_word_in_many_entries_keeps_norm_one():
    # word 0 counted 10 times as ten entries of 1: read per entry, the norm was sqrt(10) instead of 10 (|S| = 3.15)
    beta = np.array([[0.5, 0.5, 0.0], [0.1, 0.1, 0.8]])
    S, _ = normalised_statistic(np.array([0, 10]), np.zeros(10, np.int32), np.ones(10), beta, 0.1, 5)
    S0, _ = normalised_statistic(np.array([0, 1]), np.zeros(1, np.int32), np.array([10.0]), beta, 0.1, 5)
    np.testing.assert_allclose(S, S0, atol=1e-15)
    assert np.linalg.norm(S) <= 1 + 1e-12


def test_pair_moments_read_a_messy_csr_as_its_canonical_version():
    rng = np.random.default_rng(1)
    X, M = _canonical_and_messy(rng)
    V = X.shape[1]
    cols = np.arange(0, V, 2)
    for n_jobs in (1, 2):
        got = normalised_cooccurrence_bow(_bow(M), cols, V, n_jobs)
        np.testing.assert_allclose(got, normalised_cooccurrence_bow(_bow(X), cols, V, n_jobs), atol=1e-12)
        for doc in (False, True):
            np.testing.assert_allclose(
                document_frequency_bow(_bow(M), V, n_jobs, with_document=doc, with_counts=True),
                document_frequency_bow(_bow(X), V, n_jobs, with_document=doc, with_counts=True), atol=1e-12)
    # per document: Frobenius norm 1 (it was 1.96 for a zero entry of a word followed by its count, document 7)
    for d in range(M.shape[0]):
        Md = normalised_cooccurrence_bow(_bow(M[d]), np.arange(V), V)
        assert np.linalg.norm(Md) <= 1 + 1e-12
    M7 = normalised_cooccurrence_bow(_bow(M[7]), np.arange(V), V)
    assert np.linalg.norm(M7) == pytest.approx(1.0)


def test_svi_batches_of_a_messy_csr_have_the_canonical_norms():
    from dptopic.kernels.vb import gather_rows, vb_estep
    rng = np.random.default_rng(2)
    X, M = _canonical_and_messy(rng)
    rows = np.array([7, 0, 5, 3, 11])
    K, V = 3, X.shape[1]
    eb = np.ascontiguousarray(np.exp(rng.normal(size=(K, V))).T)
    out = []
    for A in (X, M):
        ptr, ids, cts = gather_rows(A.indptr, A.indices.astype(np.int64), A.data, rows, V)
        gamma, ss, norms = np.ones((len(rows), K)), np.zeros((V, K)), np.empty(len(rows))
        vb_estep(ptr, ids, cts, eb, 0.1, gamma, 100, 1e-6, 0.5, ss, norms)   # clip 0.5: the norm decides the clip
        out.append((gamma, ss, norms))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_a_canonical_bag_of_words_is_used_as_it_is():
    from dptopic.corpus import lda_corpus
    from dptopic.kernels._bow import canonical_bow
    c = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=15, seed=0).corpus
    ptr, ids, cts = tokens_to_bow(c.doc_ptr, c.word_ids, c.vocab_size)   # first-occurrence order, not sorted
    p2, i2, c2 = canonical_bow(ptr, ids, cts, c.vocab_size)
    assert p2 is ptr and i2 is ids and c2 is cts                          # no copy on the hot path


@pytest.mark.parametrize("ptr,ids,cts,what", [
    ([0, 2], [0, 1], [1.0, -1.0], "count"),
    ([0, 2], [0, 1], [1.0, np.nan], "count"),
    ([0, 2], [0, 1], [np.inf, 1.0], "count"),
    ([0, 2, 1], [0, 1], [1.0, 1.0], "offsets"),
    ([0, 3], [0, 1], [1.0, 1.0], "offsets"),
    ([0, 2], [0, -1], [1.0, 1.0], "word id"),
    ([0, 2], [0, 3], [1.0, 1.0], "word id"),     # beyond the vocabulary: read and written out of bounds before
])
def test_bad_bags_of_words_are_refused_in_one_line(ptr, ids, cts, what):
    ptr, ids, cts = np.array(ptr), np.array(ids, dtype=np.int32), np.array(cts)
    beta = np.full((2, 3), 1 / 3)
    calls = [lambda: normalised_statistic(ptr, ids, cts, beta, 0.1, 3),
             lambda: normalised_cooccurrence_bow((ptr, ids, cts), np.arange(3), 3),
             lambda: document_frequency_bow((ptr, ids, cts), 3)]
    for call in calls:
        with pytest.raises(DPTopicError, match=what) as e:
            call()
        assert "\n" not in str(e.value)


def test_first_above_matches_searchsorted():
    from numba import njit

    from dptopic.kernels._search import first_above

    @njit
    def run(cdf, xs):
        out = np.empty((cdf.shape[0], xs.shape[0]), np.int64)
        for r in range(cdf.shape[0]):
            for i in range(xs.shape[0]):
                out[r, i] = first_above(cdf, r, cdf.shape[1], xs[i])
        return out

    rng = np.random.default_rng(3)
    for n in (1, 2, 7, 64):
        cdf = np.cumsum(rng.integers(0, 3, size=(5, n)).astype(np.float64), axis=1)    # flat stretches included
        xs = np.concatenate([rng.uniform(-1, cdf.max() + 1, 200), np.unique(cdf)])     # ties with the cdf's values
        got = run(cdf, xs)
        for r in range(5):
            want = np.minimum(np.searchsorted(cdf[r], xs, side="right"), n - 1)
            np.testing.assert_array_equal(got[r], want)


# ------------------------------------------------------------------ backends
def _backend(tiny_corpus, n_jobs, scheme, kind="sparse", K=4):
    from dptopic.backends import ThreadBackend
    b = ThreadBackend(n_jobs, scheme)
    return b, b.open(tiny_corpus, K, np.random.default_rng(0), kind)


@pytest.mark.parametrize("scheme", ["adlda", "partition"])
@pytest.mark.parametrize("kind", ["sparse", "dense"])
def test_a_failing_thread_shard_leaves_the_state_unchanged(planted, monkeypatch, scheme, kind):
    import threading

    import dptopic.kernels.engine as engine
    c = planted.corpus
    b, a = _backend(c, 3, scheme, kind)
    ref, ra = _backend(c, 3, scheme, kind)
    b.sweep(0.1, 0.05)
    ref.sweep(0.1, 0.05)
    before = [b.z.copy(), a.ndk.copy(), a.nwk.copy(), a.nk.copy()] + [s.copy() for s in b._states]
    real, lock, calls = engine._run_kernel, threading.Lock(), []

    def failing(*args, **kw):
        with lock:
            calls.append(1)
            n = len(calls)
        if n == 3:                      # one shard (or cell) fails; the others have run or are running
            raise MemoryError("no memory for this shard")
        return real(*args, **kw)

    monkeypatch.setattr(engine, "_run_kernel", failing)
    with pytest.raises(MemoryError):
        b.sweep(0.1, 0.05)
    monkeypatch.setattr(engine, "_run_kernel", real)
    after = [b.z, a.ndk, a.nwk, a.nk] + list(b._states)
    for x, y in zip(after, before):
        np.testing.assert_array_equal(x, y)
    # a retry makes the very sweep the failure interrupted
    b.sweep(0.1, 0.05)
    ref.sweep(0.1, 0.05)
    np.testing.assert_array_equal(b.z, ref.z)
    np.testing.assert_array_equal(a.nwk, ra.nwk)
    np.testing.assert_array_equal(a.ndk, ra.ndk)
    b.close()
    ref.close()


def _empty_and_small():
    from dptopic.corpus import Corpus, lda_corpus
    empty = Corpus(np.zeros(1, np.int64), np.zeros(0, np.int32), ["a", "b", "c"])
    small = lda_corpus(n_docs=2, vocab_size=10, n_topics=2, doc_length=5, seed=0).corpus
    return empty, small


def _check_run(b, corpus, K=2, sweeps=3):
    a = b.open(corpus, K, np.random.default_rng(0), "sparse")
    for _ in range(sweeps):
        assert b.sweep(0.1, 0.05) == {}
    assert b.collect() == {}
    ndk, nwk = counts_from_z(corpus, b.z, K)
    np.testing.assert_array_equal(a.nwk, nwk)
    np.testing.assert_array_equal(a.nk, nwk.sum(axis=0))
    np.testing.assert_array_equal(b.doc_topic_counts(), ndk)
    assert b.n_shards <= max(corpus.n_docs, 1)
    b.close()


@pytest.mark.parametrize("scheme", ["adlda", "partition"])
def test_thread_backend_with_no_documents_or_more_threads_than_documents(scheme):
    from dptopic.backends import ThreadBackend
    for corpus in _empty_and_small():
        _check_run(ThreadBackend(5, scheme), corpus)


def test_dask_edge_cases_and_results_whatever_the_number_of_workers():
    distributed = pytest.importorskip("distributed")
    from dptopic.backends.dask import DaskBackend
    from dptopic.corpus import lda_corpus
    c = lda_corpus(n_docs=30, vocab_size=20, n_topics=2, doc_length=10, seed=0).corpus
    runs = []
    for n_workers in (1, 3):
        with distributed.LocalCluster(n_workers=n_workers, processes=False, threads_per_worker=1,
                                      dashboard_address=None) as cl, distributed.Client(cl) as client:
            if n_workers == 3:
                for corpus in _empty_and_small():      # no documents; more workers (and shards) than documents
                    _check_run(DaskBackend(client), corpus)
                    _check_run(DaskBackend(client, n_shards=5), corpus)
            b = DaskBackend(client, n_shards=3)
            a = b.open(c, 3, np.random.default_rng(1), "sparse")
            for _ in range(4):
                b.sweep(0.1, 0.05)
            b.collect()
            runs.append((b.z.copy(), b.doc_topic_counts().copy(), a.nwk.copy()))
            b.close()
    for x, y in zip(*runs):       # a fixed number of shards: the same run on one worker or three
        np.testing.assert_array_equal(x, y)
