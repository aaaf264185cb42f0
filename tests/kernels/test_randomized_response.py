"""``dptopic.kernels.randomized_response``."""
import numpy as np
import pytest

from dptopic.kernels import randomized_response as rr
from helpers import XorShiftReference, csr_token_corpus, xorshift_state


# ------------------------------------------------------------------------------ randomized response
@pytest.mark.parametrize("D,V", [(0, 5), (3, 1), (4, 8), (6, 16), (5, 13)])
def test_randomized_presence_on_edge_vocabularies(D, V):
    """Bit layout and coins on vocabularies of one word and of whole bytes (no padding), with empty documents."""
    rng = np.random.default_rng(D * 31 + V)
    wid, ptr = csr_token_corpus(rng, D, V, 10, n_empty=min(D, 1))
    bits = np.zeros((D, V), bool)
    for d in range(D):
        bits[d, wid[ptr[d]:ptr[d + 1]]] = True
    nb = (V + 7) // 8
    packed = rr.presence_packed(wid, ptr, V)
    assert packed.shape == (D, nb)
    assert np.array_equal(np.unpackbits(packed, axis=1, bitorder="little")[:, :V].astype(bool), bits)
    T = rr.flip_threshold(0.35)
    st = xorshift_state(rng)
    got = rr.randomize_presence(wid, ptr, V, T, st.copy())
    xs, flips = XorShiftReference(st), np.zeros((D, 8 * nb), bool)
    for d in range(D):
        for b in range(nb):
            for q in range(4):
                x = xs.u64()
                flips[d, 8 * b + 2 * q] = (x & 0xFFFFFFFF) < T
                flips[d, 8 * b + 2 * q + 1] = (x >> 32) < T
    unpacked = np.unpackbits(got, axis=1, bitorder="little").astype(bool)
    assert np.array_equal(unpacked[:, :V], bits ^ flips[:, :V]) and not unpacked[:, V:].any()
    # column sums: any bytes, even with padding bits set (they are not words)
    noise = rng.integers(0, 256, (D, nb)).astype(np.uint8)
    want = np.unpackbits(noise, axis=1, bitorder="little")[:, :V].sum(0)
    assert np.array_equal(rr.packed_column_sums(noise, V), want)
