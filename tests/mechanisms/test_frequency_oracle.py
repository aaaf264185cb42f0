"""``dptopic.mechanisms.frequency_oracle``."""
import itertools
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import pytest


def _exp(eps: float) -> Fraction:
    """e^eps (of the float eps) to 60 significant digits, as an exact fraction."""
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(eps).exp())


def _subset_law(D: int, k: int, p: Fraction, x: int) -> dict:
    """Exact law of a k-subset report of item x kept with probability p (x = -1: a padding entry, uniform)."""
    out = {}
    for S in itertools.combinations(range(D), k):
        if x < 0:
            out[S] = Fraction(1, math.comb(D, k))
        elif x in S:
            out[S] = p / math.comb(D - 1, k - 1)
        else:
            out[S] = (1 - p) / math.comb(D - 1, k)
    return out


def _max_ratio(laws) -> Fraction:
    return max(a[S] / b[S] for a in laws for b in laws for S in a)


# ---------------------------------------------------------------- exact worst-case likelihood ratios
@pytest.mark.parametrize("D", [2, 3, 5, 7])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 3.0, 10.0, 30.0, 50.0])
def test_frequency_oracle_ratio_never_exceeds_e_eps(D, eps):
    from dptopic.mechanisms.frequency_oracle import COIN_BITS, keep_threshold, subset_size

    k = subset_size(D, eps)
    p = Fraction(keep_threshold(D, eps, k), 2 ** COIN_BITS)        # the realised keep probability, both samplers
    assert _max_ratio([_subset_law(D, k, p, x) for x in range(D)]) <= _exp(eps)
