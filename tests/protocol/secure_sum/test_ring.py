"""``dptopic.protocol.secure_sum.ring``: the co-occurrence triangle."""
import numpy as np

from dptopic.protocol.secure_sum.ring import matrix_to_triangle, triangle_to_matrix


def test_triangle_round_trip_keeps_the_frobenius_norm():
    rng = np.random.default_rng(1)
    m = rng.random((6, 6))
    m = m + m.T
    v = matrix_to_triangle(m)
    assert np.isclose(np.linalg.norm(v), np.linalg.norm(m))
    assert np.allclose(triangle_to_matrix(v, 6), m)
