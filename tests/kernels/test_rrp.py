"""``dptopic.kernels.rrp``."""
import numpy as np
import pytest

from dptopic.kernels import subset_select
from helpers import XorShiftReference, xorshift_state


# ------------------------------------------------------------------------------ subset selection
def _subset_reference(words, V, s, p_in, state):
    """Subset selection: the true word with probability p_in, then Floyd's sampling of the rest among the other
    words (candidate index t maps to word t, or t + 1 from the true word on)."""
    xs = XorShiftReference(state)
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
    st = xorshift_state(rng)
    for p_in in (0.0, 0.4, 1.0):
        out = np.empty((len(words), s), np.int32)
        subset_select(words, V, s, p_in, st.copy(), out)
        want = _subset_reference(words, V, s, p_in, st.copy())
        assert np.array_equal(out, want)
        assert all(len(set(r)) == s for r in out.tolist()) and out.min() >= 0 and out.max() < V
