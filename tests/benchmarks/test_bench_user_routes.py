"""benchmarks/bench_user_routes.py's grouped per-person statistics: each person's documents split into groups from the
person's own documents, each group's profile weighted by its share of the person's words. Checked against NumPy and
the library's profile kernel, and attacked as tests/privacy attacks the library's bounds: one person removed moves
the statistic by at most 1."""
import numpy as np
import pytest


def people(seed, n_people=6, V=30):
    """A bag of words of ``n_people`` people (1 to 6 documents of 1 to 15 words each), grouped by person."""
    rng = np.random.default_rng(seed)
    docs, gptr = [], [0]
    for _ in range(n_people):
        for _ in range(rng.integers(1, 7)):
            u, c = np.unique(rng.integers(0, V, size=rng.integers(1, 16)), return_counts=True)
            docs.append((u, c))
        gptr.append(len(docs))
    ptr = np.r_[0, np.cumsum([len(u) for u, _ in docs])].astype(np.int64)
    ids = np.concatenate([u for u, _ in docs]).astype(np.int64)
    cts = np.concatenate([c for _, c in docs]).astype(np.int64)
    return (ptr, ids, cts), np.asarray(gptr, dtype=np.int64), docs


def reference(docs, gptr, labels, kept, V, joined):
    """NumPy: per person, sum_g w_g M_g (M_g = u u^T, or (c c^T - diag c) / norm when ``joined``), scaled to norm 1."""
    col = np.full(V, -1)
    col[kept] = np.arange(len(kept))
    total = np.zeros((len(kept), len(kept)))
    for p in range(len(gptr) - 1):
        parts = []
        for g in np.unique(labels[gptr[p]:gptr[p + 1]]):
            c = np.zeros(len(kept))
            for d in range(gptr[p], gptr[p + 1]):
                if labels[d] == g:
                    u, n = docs[d]
                    ok = col[u] >= 0
                    np.add.at(c, col[u][ok], n[ok])
            parts.append(c)
        mass = sum(c.sum() for c in parts)
        M = np.zeros_like(total)
        for c in parts:
            X = np.outer(c, c) - (np.diag(c) if joined else 0.0)
            if np.linalg.norm(X) > 0:
                M += c.sum() / mass * X / np.linalg.norm(X)
        if np.linalg.norm(M) > 0:
            total += M / np.linalg.norm(M)
    return total


@pytest.mark.parametrize("how", ["greedy", "agglo", "kmeans", "link"])
@pytest.mark.parametrize("joined", [False, True])
def test_the_grouped_statistics_match_numpy_and_one_person_moves_them_at_most_one(bench, how, joined):
    V, kept = 30, np.arange(0, 30, 2)
    bow, gptr, docs = people(1)
    X = bench.feature_rows(bow, V, "counts")
    labels, n_groups = bench.group_documents(X, gptr, 3 if how == "kmeans" else 0.2, how)
    first = 0
    for p in range(len(gptr) - 1):          # each person's groups numbered together, after the previous person's
        own = np.unique(labels[gptr[p]:gptr[p + 1]])
        assert own.tolist() == list(range(first, first + len(own)))
        first += len(own)
    assert first == n_groups
    make = bench.grouped_joined_matrix if joined else bench.grouped_matrix
    S = make(bow, gptr, kept, V, labels, full=True)
    np.testing.assert_allclose(S, reference(docs, gptr, labels, kept, V, joined), atol=1e-12)
    # the neighbouring attack: each person removed (their documents and groups taken out) moves S by at most 1
    for p in range(len(gptr) - 1):
        keep_docs = np.r_[0:gptr[p], gptr[p + 1]:len(docs)]
        sub = [docs[d] for d in keep_docs]
        ptr = np.r_[0, np.cumsum([len(u) for u, _ in sub])].astype(np.int64)
        bow2 = (ptr, np.concatenate([u for u, _ in sub]), np.concatenate([c for _, c in sub]).astype(np.int64))
        gptr2 = np.r_[gptr[:p + 1], gptr[p + 2:] - (gptr[p + 1] - gptr[p])]
        _, labels2 = np.unique(labels[keep_docs], return_inverse=True)
        S2 = make(bow2, gptr2, kept, V, labels2, full=True)
        assert np.linalg.norm(S - S2) <= 1 + 1e-9


def test_one_group_a_person_is_the_library_profile(bench):
    from dptopic.kernels.user_level import user_profile_cooccurrence_bow

    V, kept = 30, np.arange(0, 30, 3)
    bow, gptr, _ = people(2)
    labels, n_groups = bench.group_documents(bench.feature_rows(bow, V, "counts"), gptr, -2.0, "greedy")
    assert n_groups == len(gptr) - 1
    np.testing.assert_allclose(bench.grouped_matrix(bow, gptr, kept, V, labels),
                               user_profile_cooccurrence_bow(bow, gptr, kept, V), atol=1e-12)


def test_agglomerate_merges_the_closest_groups_while_they_reach_the_threshold(bench):
    X = np.array([[3.0, 0, 0], [2.0, 0.1, 0], [0, 0, 1.0], [0, 0.1, 2.0], [0, 1.0, 0]])
    assert bench.agglomerate(X, 0.9).tolist() == [0, 0, 1, 1, 2]
    assert bench.agglomerate(X, 1.01).tolist() == [0, 1, 2, 3, 4]
    assert bench.kmeans(X, 3).tolist() == [0, 0, 1, 1, 2]
