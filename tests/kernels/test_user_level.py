"""Per-person aggregation kernels (user-level DP): against the NumPy reference, and the bound per person."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from dptopic.kernels.user_level import user_cooccurrence_bow, user_document_frequency_bow, user_normalised_statistic
from dptopic.models._docdp_math import normalised_statistic
from dptopic.moments import document_frequency_statistic, normalised_cooccurrence
from dptopic.person_bound import group_by_person

V = 8
COLS = [0, 2, 3, 5, 7]


def _bow(X):
    X = sp.csr_matrix(np.asarray(X, dtype=float))
    return X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data.astype(np.float64)


def _clipped(v):
    n = np.linalg.norm(v)
    return v if n <= 1 else v / n


def _beta(seed=0, K=3):
    return np.random.default_rng(seed).dirichlet(np.ones(V), size=K)


def _statistics(X, codes, beta):
    """The three user-level statistics of the documents ``X`` (rows) written by the people ``codes``."""
    bow, gptr, _ = group_by_person(_bow(X), codes, None, None)
    return [user_cooccurrence_bow(bow, gptr, COLS, V),
            user_document_frequency_bow(bow, gptr, V, with_document=True, with_counts=True),
            user_normalised_statistic(bow, gptr, beta, 0.1, 5)]


def _reference(X, codes, beta):
    """The document-level NumPy references on each person's rows, each clipped to norm 1, summed."""
    X = np.asarray(X, dtype=float)
    out = [0.0, 0.0, 0.0]
    for p in np.unique(codes):
        R = sp.csr_matrix(X[np.asarray(codes) == p])
        out[0] = out[0] + _clipped(normalised_cooccurrence(R, COLS))
        out[1] = out[1] + _clipped(document_frequency_statistic(R, with_document=True, with_counts=True))
        out[2] = out[2] + _clipped(normalised_statistic(R, beta, 0.1, 5)[0])
    return out


def test_user_level_kernels_match_the_numpy_reference():
    rng = np.random.default_rng(1)
    X = rng.poisson(0.9, size=(20, V))
    codes = rng.integers(0, 6, size=20)
    beta = _beta()
    for got, want in zip(_statistics(X, codes, beta), _reference(X, codes, beta)):
        np.testing.assert_allclose(got, want, atol=1e-10)


def test_one_document_per_person_is_the_document_level_sum():
    from dptopic.kernels.pair_moments import document_frequency_bow, normalised_cooccurrence_bow

    X = np.random.default_rng(2).poisson(1.0, size=(12, V))
    bow = _bow(X)
    got = _statistics(X, np.arange(12), _beta())
    np.testing.assert_allclose(got[0], normalised_cooccurrence_bow(bow, COLS, V), atol=1e-12)
    np.testing.assert_allclose(got[1], document_frequency_bow(bow, V, with_document=True, with_counts=True),
                               atol=1e-12)


def test_a_prolific_person_weighs_no_more_than_one_document():
    # without the per-person bound, 30 copies of one document move the sum by 30
    X = np.tile([3, 0, 2, 1, 0, 4, 0, 1], (30, 1))
    for stat in _statistics(X, np.zeros(30, int), _beta()):
        assert np.linalg.norm(stat) == pytest.approx(1.0)


PEOPLE = st.lists(st.lists(st.integers(0, 20), min_size=V, max_size=V), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(others=st.lists(st.tuples(st.lists(st.integers(0, 20), min_size=V, max_size=V), st.integers(0, 3)),
                       min_size=0, max_size=8),
       person=PEOPLE, at=st.lists(st.integers(0, 100), min_size=6, max_size=6))
def test_adding_a_person_moves_each_statistic_by_at_most_one(others, person, at):
    """However the person's documents are split and placed among the others'."""
    beta = _beta(3)
    base = [list(d) for d, _ in others]
    codes = [c for _, c in others]
    X, C = list(base), list(codes)
    for d, pos in zip(person, at):
        i = pos % (len(X) + 1)
        X.insert(i, list(d))
        C.insert(i, 99)
    with_person = _statistics(X, np.array(C), beta)
    without = (_statistics(base, np.array(codes), beta) if base else [0.0, 0.0, 0.0])
    for a, b in zip(with_person, without):
        assert np.linalg.norm(np.asarray(a) - np.asarray(b)) <= 1 + 1e-9


@settings(max_examples=40, deadline=None)
@given(person=PEOPLE, m=st.integers(1, 4), seed=st.integers(0, 10))
def test_at_most_m_documents_a_person_bounds_the_person_too(person, m, seed):
    from dptopic.kernels.pair_moments import normalised_cooccurrence_bow

    bow, gptr, weight = group_by_person(_bow(person), np.zeros(len(person), int), m, np.random.default_rng(seed))
    assert len(bow[0]) - 1 == min(m, len(person))
    assert np.linalg.norm(normalised_cooccurrence_bow(bow, COLS, V) * weight) <= 1 + 1e-9


def _profiles(X, codes, cols=COLS, groups=None):
    """The NumPy reference of the profile statistic: per person, ``u u^T``, ``u`` the person's counts of ``cols`` (of
    their groups with ``groups``) over all their documents scaled to norm 1."""
    X = np.asarray(X, dtype=float)
    G = np.zeros((V, len(cols) if groups is None else max(groups) + 1))
    G[cols, np.arange(len(cols)) if groups is None else groups] = 1.0
    out = np.zeros((G.shape[1], G.shape[1]))
    for p in np.unique(codes):
        u = X[np.asarray(codes) == p].sum(axis=0) @ G
        if u.any():
            out += np.outer(u, u) / (u @ u)
    return out


def test_the_profile_kernel_matches_the_numpy_reference_on_words_and_groups():
    from dptopic.kernels.user_level import user_profile_cooccurrence_bow

    rng = np.random.default_rng(5)
    X = rng.poisson(0.7, size=(25, V))
    codes = rng.integers(0, 7, size=25)
    bow, gptr, _ = group_by_person(_bow(X), codes, None, None)
    np.testing.assert_allclose(user_profile_cooccurrence_bow(bow, gptr, COLS, V), _profiles(X, codes), atol=1e-12)
    groups = [0, 1, 1, 2, 0]
    np.testing.assert_allclose(user_profile_cooccurrence_bow(bow, gptr, COLS, V, groups=groups),
                               _profiles(X, codes, groups=groups), atol=1e-12)
    np.testing.assert_allclose(user_profile_cooccurrence_bow(bow, gptr, COLS, V, n_jobs=2),
                               user_profile_cooccurrence_bow(bow, gptr, COLS, V), atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(others=st.lists(st.tuples(st.lists(st.integers(0, 20), min_size=V, max_size=V), st.integers(0, 3)),
                       min_size=0, max_size=8),
       person=PEOPLE, at=st.lists(st.integers(0, 100), min_size=6, max_size=6))
def test_adding_a_person_moves_the_profile_statistic_by_at_most_one(others, person, at):
    """A person of any documents, placed anywhere among the others', adds ``u u^T`` of norm 1 (0 without a column
    word)."""
    from dptopic.kernels.user_level import user_profile_cooccurrence_bow

    base, codes = [list(d) for d, _ in others], [c for _, c in others]
    X, C = list(base), list(codes)
    for d, pos in zip(person, at):
        i = pos % (len(X) + 1)
        X.insert(i, list(d))
        C.insert(i, 99)

    def stat(rows, people):
        if not rows:
            return np.zeros((len(COLS), len(COLS)))
        bow, gptr, _ = group_by_person(_bow(rows), np.array(people), None, None)
        return user_profile_cooccurrence_bow(bow, gptr, COLS, V)

    moved = np.linalg.norm(stat(X, C) - stat(base, codes))
    assert moved <= 1 + 1e-9
    assert moved == pytest.approx(1.0 if np.asarray(person)[:, COLS].any() else 0.0, abs=1e-9)
