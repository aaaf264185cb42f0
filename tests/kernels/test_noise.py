"""``dptopic.kernels.noise``."""
import math

import numpy as np
import pytest

from dptopic.kernels.noise import ZIG_F, ZIG_K, ZIG_R, ZIG_W, standard_exponentials
from helpers import XorShiftReference, xorshift_state


# ------------------------------------------------------------------------------ exponentials
def _ziggurat(xs: XorShiftReference) -> float:
    """One Exp(1) by the kernels' 256-layer ziggurat, from its tables, in plain Python."""
    offset = 0.0
    while True:
        bits = xs.u64()
        i, u = (bits >> 3) & 255, bits >> 11
        x = u * float(ZIG_W[i])
        if u < int(ZIG_K[i]):
            return offset + x
        if i == 0:
            if x < ZIG_R:
                return offset + x
            offset += ZIG_R
            continue
        lo, hi = float(ZIG_F[i]), float(ZIG_F[i + 1])
        if lo + (xs.u64() >> 11) * 2.0 ** -53 * (hi - lo) < math.exp(-x):
            return offset + x


@pytest.mark.parametrize("n", [0, 1, 30_000])
def test_standard_exponentials_match_reference_draw_for_draw(n):
    state = xorshift_state(np.random.default_rng(n))
    out = np.empty(n)
    st = state.copy()
    standard_exponentials(out, st)
    xs = XorShiftReference(state)
    want = [_ziggurat(xs) for _ in range(n)]
    assert np.array_equal(out, want)
    assert (int(st[0]), int(st[1])) == (xs.s0, xs.s1)       # the advanced state is handed back
    if n == 30_000:
        assert (out > ZIG_R).any()                          # the tail was drawn


def test_ziggurat_tables_have_equal_areas():
    from dptopic.kernels import noise

    x, f = noise.ZIG_X, noise.ZIG_F
    areas = x[1:256] * (f[2:257] - f[1:256])
    assert np.allclose(areas, noise.ZIG_V, rtol=1e-9, atol=0)
    assert x[1] * f[1] + math.exp(-noise.ZIG_R) == pytest.approx(noise.ZIG_V, rel=1e-12)  # base layer + tail
    assert np.all(np.diff(x[1:]) < 0) and x[256] == 0
