"""``dptopic.moments.factorize``."""
import numpy as np
import pytest

from dptopic.errors import DPTopicError
from dptopic.moments import topics_from_cooccurrence


def test_recovery_refuses_bad_matrices():
    with pytest.raises(DPTopicError, match="square"):
        topics_from_cooccurrence(np.ones((3, 4)), 2)
    with pytest.raises(DPTopicError, match="NaN"):
        topics_from_cooccurrence(np.full((3, 3), np.nan), 2)
    with pytest.raises(DPTopicError, match="method"):
        topics_from_cooccurrence(np.ones((3, 3)), 2, "svd")
    with pytest.raises(DPTopicError, match="n_topics"):
        topics_from_cooccurrence(np.ones((3, 3)), 4)


def test_rank_deficient_release_gives_finite_deterministic_topics():
    """A thresholded release of rank below K made scikit-learn's NNDSVDa start divide by zero norms: every topic NaN,
    with no error, and the model saved and loaded them (a walk-through found it in 3 of 60 fits on a 4 x 4 matrix)."""
    import warnings

    from dptopic.moments import topics_from_cooccurrence

    Q = np.zeros((4, 4))
    Q[2, 2] = 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        T = topics_from_cooccurrence(Q, 2, noise_std=1.0, threshold=1.0)
    assert np.all(np.isfinite(T)) and np.allclose(T.sum(axis=1), 1.0) and np.all(T.argmax(axis=1) == 2)
    assert np.array_equal(T, topics_from_cooccurrence(Q, 2, noise_std=1.0, threshold=1.0))
    assert np.allclose(topics_from_cooccurrence(np.zeros((4, 4)), 2), 0.25)


"""dptopic.moments.factorize's moment method (``method="refined-anchors"``): each step against a small NumPy
reference, exact recovery from an exact second moment, and consistency: with the noise fixed, the topics approach
the truth as the signal grows."""
from scipy.optimize import linear_sum_assignment, nnls

from dptopic.moments.factorize import _nnls_simplex_weights, _rank_k_projection, refine_moments, refined_anchor_topics


def separable_model(K=5, V=60, seed=0, n_docs=500):
    """A (V x K, columns summing to 1) with word k only in topic k (anchors), and R = E[theta theta^T]."""
    rng = np.random.default_rng(seed)
    A = rng.dirichlet(np.full(K, 0.3), size=V) * rng.gamma(1.0, 1.0, size=(V, 1))
    A[:K] = 2.0 * np.eye(K)
    A /= A.sum(axis=0, keepdims=True)
    theta = rng.dirichlet(np.full(K, 0.2), size=n_docs)
    return A, theta.T @ theta / n_docs


def matched_error(T, A):
    """Largest absolute difference between the K x V topics T and A's columns, topics matched one to one."""
    rows, cols = linear_sum_assignment(-T @ A)
    return float(np.abs(T[rows] - A.T[cols]).max())


def test_exact_second_moment_of_a_separable_model_gives_its_topics():
    A, R = separable_model()
    T = topics_from_cooccurrence(A @ R @ A.T, 5, "refined-anchors", floor=0.0)
    assert T.shape == (5, 60) and np.allclose(T.sum(axis=1), 1.0)
    assert matched_error(T, A) < 1e-6


def test_nmf_does_not_recover_the_same_exact_moment():
    # the test above can fail: the earlier default (thresholded NMF) misses the same topics by far more than 1e-6
    A, R = separable_model()
    assert matched_error(topics_from_cooccurrence(A @ R @ A.T, 5, "nmf"), A) > 1e-3


def test_rank_k_projection_matches_the_eigendecomposition_reference():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(8, 8))
    Q = (X + X.T) / 2
    w, U = np.linalg.eigh(Q)
    keep = np.argsort(w)[::-1][:3]
    ref = sum(max(w[i], 0.0) * np.outer(U[:, i], U[:, i]) for i in keep)
    assert np.allclose(_rank_k_projection(Q, 3), ref)


def test_simplex_weights_match_nnls_on_the_full_system():
    rng = np.random.default_rng(2)
    P = rng.random((12, 12))
    Pbar = P / P.sum(axis=1, keepdims=True)
    anchors, rows = np.array([0, 3, 7]), np.arange(12)
    C = _nnls_simplex_weights(Pbar, anchors, rows)
    M = np.vstack([Pbar[anchors].T, np.ones((1, 3))])
    for i in rows:                       # reference: scipy's NNLS on the (V + 1) x K system, then normalised
        c = nnls(M, np.append(Pbar[i], 1.0))[0]
        assert np.allclose(C[i], c / c.sum(), atol=1e-6)
    assert np.allclose(C[anchors], np.eye(3), atol=1e-8)


def test_refinement_lowers_the_least_squares_loss_and_keeps_an_exact_fit():
    A, R = separable_model(K=4, V=30, seed=3)
    Q = A @ R @ A.T
    A2, R2 = refine_moments(Q, A, R, 50)
    assert np.allclose(A2, A, atol=1e-10) and np.allclose(A2 @ R2 @ A2.T, Q, atol=1e-12)
    rng = np.random.default_rng(4)
    N = rng.normal(scale=1e-3, size=Q.shape)
    noisy = Q + (N + N.T) / 2
    start = np.abs(A + 0.05 * rng.random(A.shape))
    start /= start.sum(axis=0)
    loss = lambda a, r: np.linalg.norm(noisy - a @ r @ a.T)     # noqa: E731
    A3, R3 = refine_moments(noisy, start, R, 200)
    # from a perturbed start, the fit ends as close to the noisy matrix as the truth is (the noise's norm), or closer
    assert loss(A3, R3) <= loss(A, R) < 0.7 * loss(start, R)
    assert np.all(A3 >= 0) and np.allclose(A3.sum(axis=0), 1.0)


def test_refined_anchors_reads_the_matrix_as_it_is():
    # no threshold: the least-squares fit needs the noisy negative cells, so noise_std and threshold change nothing
    A, R = separable_model(K=3, V=20, seed=5)
    rng = np.random.default_rng(6)
    N = rng.normal(scale=1e-3, size=(20, 20))
    Q = A @ R @ A.T + (N + N.T) / 2
    a = topics_from_cooccurrence(Q, 3, "refined-anchors")
    assert np.array_equal(a, topics_from_cooccurrence(Q, 3, "refined-anchors", noise_std=1.0, threshold=3.0))
    assert np.array_equal(a, topics_from_cooccurrence(Q, 3, "refined-anchors"))        # deterministic


def test_refined_anchors_is_consistent_as_the_signal_grows_under_fixed_noise():
    # Q = D A R A^T + noise of fixed scale: the topics' error falls as D grows (seeds fixed; the error roughly
    # scales as 1/D, so a tenfold D must at least halve it)
    A, R = separable_model(K=4, V=40, seed=7)
    rng = np.random.default_rng(8)
    N = rng.normal(size=(40, 40))
    noise = (N + N.T) / 2
    errors = [matched_error(refined_anchor_topics(D * (A @ R @ A.T) + noise, 4), A) for D in (1e3, 1e4, 1e5)]
    assert errors[2] < errors[1] / 2 < errors[0] / 4
    assert errors[2] < 1e-3


def test_a_release_with_too_few_words_with_mass_still_gives_topics_none_of_them_supported():
    # a noisy release whose rank-K projection keeps fewer than K words with mass (a secure-sum round of six people
    # drew one): the release is already spent, so refusing would waste it; the refinement starts from NMF and the
    # support check, reading the same release, marks no topic as standing above the noise
    from dptopic.moments.support import cooccurrence_supported_topics

    T = topics_from_cooccurrence(np.zeros((4, 4)), 2, "refined-anchors")
    assert T.shape == (2, 4) and np.allclose(T, 0.25)
    Q = -np.eye(6) + 0.01 * np.ones((6, 6))         # a projection with no positive cell
    T = topics_from_cooccurrence(Q, 3, "refined-anchors", noise_std=1.0)
    assert np.all(np.isfinite(T)) and np.allclose(T.sum(axis=1), 1.0)
    assert np.array_equal(T, topics_from_cooccurrence(Q, 3, "refined-anchors", noise_std=1.0))
    assert not cooccurrence_supported_topics(Q, T, 1.0).any()


def test_a_matrix_of_rank_below_k_still_gives_topics():
    # two words with the same row and a word without mass: the projection has one distinguishable row for K = 2, so
    # anchors cannot be found and the refinement starts from NMF instead (before, this raised)
    Q = np.zeros((3, 3))
    Q[:2, :2] = 1.0
    T = topics_from_cooccurrence(Q, 2, "refined-anchors")
    assert T.shape == (2, 3) and np.all(np.isfinite(T)) and np.allclose(T.sum(axis=1), 1.0)
    assert np.allclose(T[:, :2], 0.5, atol=1e-6)
    assert np.array_equal(T, topics_from_cooccurrence(Q, 2, "refined-anchors"))
