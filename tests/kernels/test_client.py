"""``dptopic.kernels.client``."""
import numpy as np
import pytest

from dptopic.kernels import client_sweep
from dptopic.kernels.reference import reference_blocked_draw
from helpers import KERNEL_SHAPES, XorShiftReference, csr_token_corpus, topic_counts, xorshift_state


@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES)
def test_client_sweep_matches_reference_on_edge_shapes(D, V, K):
    """FedLDA's client sweep, p_k ∝ Φ[w,k](n_dk^¬i + α), on every grouping of the draw and empty documents."""
    rng = np.random.default_rng(K + 3 * V)
    wid, ptr = csr_token_corpus(rng, D, V, 30)
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, _, _ = topic_counts(wid, ptr, z, K, V)
    phi_wk = np.ascontiguousarray(rng.dirichlet(np.ones(V), size=K).T)
    st = xorshift_state(rng)
    zr, ndr, xs = z.copy(), ndk.copy(), XorShiftReference(st)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ndr[d, zr[i]] -= 1
            zr[i] = reference_blocked_draw(phi_wk[wid[i]] * (ndr[d] + 0.3), K, xs)
            ndr[d, zr[i]] += 1
    client_sweep(wid, ptr, z, ndk, phi_wk, 0.3, st.copy())
    assert np.array_equal(z, zr) and np.array_equal(ndk, ndr)
