"""``dptopic.kernels.rrp``."""
import numpy as np
import pytest

from dptopic.kernels import rrp_replace, subset_select
from dptopic.kernels.rng import PyXorShift
from dptopic.mechanisms import replacement_table
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


# ------------------------------------------------------------------ rrp_replace
def _rrp_reference(words, rows, kw, cdf, klen, mask, eta_, another, rare_always, state):
    g = PyXorShift(state)
    out, flags = np.empty_like(words), np.empty(len(words), dtype=np.uint8)
    for i, (w, r) in enumerate(zip(words, rows)):
        u = g.uniform()
        if w >= 0 and u >= eta_ and (mask[r, w] or not rare_always):
            out[i], flags[i] = w, 0
            continue
        while True:
            c = kw[r, min(int(np.searchsorted(cdf[r, :klen[r]], g.uniform(), side="right")), klen[r] - 1)]
            if not (another and c == w):
                break
        out[i], flags[i] = c, 1
    return out, flags


@pytest.mark.parametrize("another,rare_always", [(True, True), (False, False)])
def test_rrp_kernel_matches_numpy_reference(another, rare_always):
    rng = np.random.default_rng(11)
    V = 30
    Q = rng.dirichlet(np.full(V, 0.5), size=2)
    kw, cdf, klen, mask, _ = replacement_table(Q, 3.0, 0.1, 1.0, "another" if another else "coincide")
    words = rng.integers(-1, V, 500).astype(np.int32)
    rows = rng.integers(0, 2, 500).astype(np.int64)
    state = np.array([12345, 67890], dtype=np.uint64)
    ref = _rrp_reference(words, rows, kw, cdf, klen, mask, 0.4, another, rare_always, state.copy())
    out, flags = np.empty_like(words), np.empty(500, dtype=np.uint8)
    rrp_replace(words, rows, kw, cdf, klen, mask, 0.4, another, rare_always, state.copy(), out, flags)
    np.testing.assert_array_equal(out, ref[0])
    np.testing.assert_array_equal(flags, ref[1])
