"""The release observer (dptopic.mechanisms.observer): it sees each release's statistic before the noise, the output
and the calibrated sensitivity, and a replaying observer's output is what the mechanism returns."""
import numpy as np
import pytest

from dptopic.errors import DPTopicError
from dptopic.mechanisms import gaussian_mechanism, laplace_mechanism
from dptopic.mechanisms.observer import active, observing


def test_releases_are_recorded_with_their_statistic_and_sensitivity():
    seen = []
    values = np.array([1.0, 2.0, 3.0])
    with observing(seen.append):
        assert active()
        g, _ = gaussian_mechanism(values, 2.0, 0.5, np.random.default_rng(0), label="g")
        lap, ev = laplace_mechanism(np.array([4, 5]), 1.0, np.random.default_rng(0), changes=(1, 1), label="l")
    assert not active()
    assert [r.label for r in seen] == ["g", "l"]
    assert np.array_equal(seen[0].values, values) and np.array_equal(seen[0].noisy, g)
    assert (seen[0].sensitivity, seen[0].norm, seen[0].scale) == (0.5, "l2", 1.0)
    assert (seen[1].sensitivity, seen[1].norm, seen[1].scale) == (2.0, "l1", 2.0) and seen[1].event == ev
    assert np.array_equal(seen[1].values, [4, 5])


def test_a_replaying_observer_sets_the_output_also_in_place():
    target = np.array([10, 20], dtype=np.int64)
    with observing(lambda r: np.array([1, 2])):
        out, _ = laplace_mechanism(target, 1.0, np.random.default_rng(0), out=target)
        g, _ = gaussian_mechanism(np.zeros(2), 1.0, 1.0, np.random.default_rng(0))
    assert out is target and list(target) == [1, 2] and list(g) == [1.0, 2.0]
    with observing(lambda r: np.zeros(3)), pytest.raises(DPTopicError, match="diverged"):
        gaussian_mechanism(np.zeros(2), 1.0, 1.0, np.random.default_rng(0))


def test_without_an_observer_the_mechanisms_are_unchanged():
    a, _ = gaussian_mechanism(np.zeros(3), 1.0, 1.0, np.random.default_rng(5))
    b = np.random.default_rng(5).normal(0.0, 1.0, size=3)
    assert np.array_equal(a, b)
