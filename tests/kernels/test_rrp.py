"""``dptopic.kernels.rrp``."""
import numpy as np
import pytest
from dptopic.kernels import subset_select


M64 = (1 << 64) - 1


class XS:
    """xorshift128+ (Vigna 2014) in plain Python: the kernels' stream, written out here independently."""

    def __init__(self, state):
        self.s0, self.s1 = int(state[0]), int(state[1])

    def u64(self) -> int:
        a, b = self.s0, self.s1
        self.s0 = b
        a ^= (a << 23) & M64
        self.s1 = a ^ b ^ (a >> 17) ^ (b >> 26)
        return (self.s1 + b) & M64

    def uniform(self) -> float:
        return (self.u64() >> 11) * 2.0 ** -53


def _state(rng):
    return rng.integers(1, 2 ** 63 - 1, size=2).astype(np.uint64)


# ------------------------------------------------------------------------------ subset selection
def _subset_reference(words, V, s, p_in, state):
    """Subset selection: the true word with probability p_in, then Floyd's sampling of the rest among the other
    words (candidate index t maps to word t, or t + 1 from the true word on)."""
    xs = XS(state)
    out = np.empty((len(words), s), np.int32)
    for i, w in enumerate(words.tolist()):
        chosen = []
        if w >= 0 and xs.uniform() < p_in:
            chosen.append(w)
        N = V - 1 if w >= 0 else V
        need = s - len(chosen)
        picked = []                                         # candidate indices, Floyd's algorithm
        for j in range(N - need, N):
            t = min(int(xs.uniform() * (j + 1)), j)
            picked.append(j if t in picked else t)
        chosen += [c + 1 if (w >= 0 and c >= w) else c for c in picked]
        out[i] = chosen
    return out


@pytest.mark.parametrize("V,s", [(2, 1), (5, 2), (9, 4), (30, 29)])
def test_subset_select_matches_reference_draw_for_draw(V, s):
    rng = np.random.default_rng(V * s)
    words = rng.integers(-1, V, 300).astype(np.int32)       # -1: padding
    st = _state(rng)
    for p_in in (0.0, 0.4, 1.0):
        out = np.empty((len(words), s), np.int32)
        subset_select(words, V, s, p_in, st.copy(), out)
        want = _subset_reference(words, V, s, p_in, st.copy())
        assert np.array_equal(out, want)
        assert all(len(set(r)) == s for r in out.tolist()) and out.min() >= 0 and out.max() < V
