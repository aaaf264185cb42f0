"""``dptopic.service.secure_sum.cohorts``: what the coordinator of a round in cohorts computes alone (the rounds
themselves are played in tests/service/secure_sum/test_cohort_app.py): the round's sum from the cohorts' padded
totals and the bridge's pads."""
import numpy as np
import pytest

from dptopic.errors import DPTopicError
from dptopic.protocol.secure_sum import cohorts as co
from dptopic.protocol.secure_sum.ring import from_ring, to_ring
from dptopic.service.secure_sum.cohorts import combine


@pytest.mark.parametrize("bits", [32, 64])
def test_pads_cancel_in_the_combined_sum_and_a_missing_pad_is_refused(bits):
    rng = np.random.default_rng(0)
    s = [rng.integers(-1000, 1000, 7) for _ in range(3)]
    seeds = {d: bytes([k]) * 32 for k, d in enumerate("abcdef")}
    delegates = [["a", "b"], ["c", "d"], ["e", "f"]]
    padded = [from_ring(to_ring(x, bits) - sum(co.pad(seeds[d], 7, bits) for d in ds), bits)
              for x, ds in zip(s, delegates)]
    bridge = from_ring(sum(co.pad(seeds[d], 7, bits) for d in seeds), bits)
    assert not np.array_equal(padded[0], s[0])
    out = combine(padded, bridge, bits, list(seeds), list(seeds))
    assert np.array_equal(out, s[0] + s[1] + s[2])
    with pytest.raises(DPTopicError, match="differ"):
        combine(padded, bridge, bits, list(seeds), list(seeds)[:-1])
