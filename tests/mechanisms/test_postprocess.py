"""``dptopic.mechanisms.postprocess`` (named clipping.py once, though nothing in it clips a contribution)."""
import numpy as np
import pytest

from dptopic.mechanisms.postprocess import clamp, normalize_rows


def test_clamp_and_normalize():
    a = np.array([[-3.0, 2.0, 500.0]])
    assert np.array_equal(clamp(a, 0, 10), [[0, 2, 10]])
    p = normalize_rows(a, 1.0)
    assert np.allclose(p.sum(1), 1) and p[0, 0] == pytest.approx(1 / 505)  # (0+1)/((0+1)+(2+1)+(500+1))
