"""``dptopic.recovery.factorize``."""
import warnings
import numpy as np
import pytest
from dptopic.errors import DPTopicError
from dptopic.recovery import topics_from_cooccurrence


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

    from dptopic.recovery import topics_from_cooccurrence

    Q = np.zeros((4, 4))
    Q[2, 2] = 4.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        T = topics_from_cooccurrence(Q, 2, noise_std=1.0, threshold=1.0)
    assert np.all(np.isfinite(T)) and np.allclose(T.sum(axis=1), 1.0) and np.all(T.argmax(axis=1) == 2)
    assert np.array_equal(T, topics_from_cooccurrence(Q, 2, noise_std=1.0, threshold=1.0))
    assert np.allclose(topics_from_cooccurrence(np.zeros((4, 4)), 2), 0.25)
