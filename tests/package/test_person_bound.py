"""``person_bound.support_view``: the release the support tests read, per person statistic."""
import numpy as np
import pytest

from dptopic.moments.support import wigner_edge
from dptopic.person_bound import PERSON_STATISTICS, support_view


def test_the_profile_is_read_off_its_diagonal_and_the_sum_as_it_is():
    Q = np.arange(16, dtype=np.float64).reshape(4, 4)
    Q = (Q + Q.T) / 2.0
    before = Q.copy()
    off = support_view(Q, "profile")
    assert np.all(np.diag(off) == 0.0) and np.array_equal(off - np.diag(np.diag(off)), Q - np.diag(np.diag(Q)))
    np.testing.assert_array_equal(support_view(Q, "sum"), Q)
    np.testing.assert_array_equal(Q, before)                    # the release itself is never changed
    assert set(PERSON_STATISTICS) == {"sum", "profile"}


@pytest.mark.parametrize("seed", [0, 1])
def test_people_without_topics_leave_one_eigenvalue_above_the_edge_off_the_diagonal(seed):
    """Profiles u u^T of people drawn from one word distribution: with the diagonal, many eigenvalues stand above
    the noise edge (what made topics look supported); off it, only the word frequencies' direction does."""
    rng = np.random.default_rng(seed)
    n, sigma = 40, 1.0
    f = 1.0 / np.arange(1, n + 1)
    f /= f.sum()
    S = np.zeros((n, n))
    for _ in range(3000):
        c = rng.multinomial(rng.integers(1, 8), f).astype(np.float64)
        u = c / np.linalg.norm(c)
        S += np.outer(u, u)
    noise = rng.normal(scale=sigma, size=(n, n))
    Q = S + (noise + noise.T) / 2.0
    edge = wigner_edge(n, sigma / np.sqrt(2.0))
    assert (np.linalg.eigvalsh(support_view(Q, "sum")) > edge).sum() > 5
    assert (np.linalg.eigvalsh(support_view(Q, "profile")) > edge).sum() == 1
