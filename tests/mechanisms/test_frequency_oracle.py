"""``dptopic.mechanisms.frequency_oracle``."""
from fractions import Fraction

import pytest

from helpers import exact_exp, max_ratio, subset_law


# ---------------------------------------------------------------- exact worst-case likelihood ratios
@pytest.mark.parametrize("D", [2, 3, 5, 7])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 3.0, 10.0, 30.0, 50.0])
def test_frequency_oracle_ratio_never_exceeds_e_eps(D, eps):
    from dptopic.mechanisms.frequency_oracle import COIN_BITS, keep_threshold, subset_size

    k = subset_size(D, eps)
    p = Fraction(keep_threshold(D, eps, k), 2 ** COIN_BITS)        # the realised keep probability, both samplers
    assert max_ratio([subset_law(D, k, p, x) for x in range(D)]) <= exact_exp(eps)
