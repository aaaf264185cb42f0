"""``dptopic.kernels.local``."""
import numpy as np
import pytest
from dptopic.kernels import local_sweep
from dptopic.kernels.reference import reference_blocked_draw


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


def _corpus(rng, D, V, max_len, n_empty=1):
    """A CSR token corpus of ``D`` documents over ``V`` words; the first ``n_empty`` documents are empty."""
    lens = rng.integers(1, max_len + 1, D)
    lens[:n_empty] = 0
    rng.shuffle(lens)
    ptr = np.zeros(D + 1, np.int64)
    np.cumsum(lens, out=ptr[1:])
    return rng.integers(0, V, int(ptr[-1])).astype(np.int32), ptr


def _counts(word_ids, ptr, z, K, V, dtype=np.int32):
    ndk = np.zeros((len(ptr) - 1, K), dtype)
    nwk = np.zeros((V, K), dtype)
    doc = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    np.add.at(ndk, (doc, z), 1)
    np.add.at(nwk, (word_ids, z), 1)
    return ndk, nwk, nwk.sum(0).astype(dtype)


# (documents, vocabulary, topics): one word, one topic, both lane / block draws, more than 64 topics
SHAPES = [(3, 1, 1), (4, 1, 3), (6, 5, 1), (8, 7, 5), (10, 20, 9), (5, 12, 70)]


@pytest.mark.parametrize("D,V,K", SHAPES)
def test_local_sweep_matches_reference_on_edge_shapes(D, V, K):
    """FedLDA's local sweep, p_k ∝ Φ[w,k](n_dk^¬i + α), on every grouping of the draw and empty documents."""
    rng = np.random.default_rng(K + 3 * V)
    wid, ptr = _corpus(rng, D, V, 30)
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, _, _ = _counts(wid, ptr, z, K, V)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    st = _state(rng)
    zr, ndr, xs = z.copy(), ndk.copy(), XS(st)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ndr[d, zr[i]] -= 1
            zr[i] = reference_blocked_draw(phi_wk[wid[i]] * (ndr[d] + 0.3), K, xs)
            ndr[d, zr[i]] += 1
    local_sweep(wid, ptr, z, ndk, phi_wk, 0.3, st.copy())
    assert np.array_equal(z, zr) and np.array_equal(ndk, ndr)
