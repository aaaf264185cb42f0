"""``dptopic.kernels.counts``."""
import numpy as np
import pytest

from conftest import counts_from_z
from dptopic.kernels import count_assignments
from helpers import KERNEL_SHAPES, csr_token_corpus


def test_count_assignments_matches_numpy(planted):
    from dptopic.kernels import count_assignments

    c = planted.corpus
    z = np.random.default_rng(0).integers(0, 7, c.n_tokens).astype(np.int32)
    ndk, nwk, nk = count_assignments(c.word_ids, c.doc_ptr, z, 7, c.vocab_size)
    ndk_ref, nwk_ref = counts_from_z(c, z, 7)
    assert np.array_equal(ndk, ndk_ref) and np.array_equal(nwk, nwk_ref) and np.array_equal(nk, nwk_ref.sum(0))


# ------------------------------------------------------------------------------ counts
@pytest.mark.parametrize("D,V,K", KERNEL_SHAPES + [(0, 3, 2)])
def test_count_assignments_edge_shapes(D, V, K):
    rng = np.random.default_rng(D * 100 + V + K)
    wid, ptr = csr_token_corpus(rng, D, V, 6, n_empty=min(D, 1))
    z = rng.integers(0, K, len(wid)).astype(np.int32)
    ndk, nwk, nk = count_assignments(wid, ptr, z, K, V)
    ref_ndk, ref_nwk, ref_nk = np.zeros((D, K), int), np.zeros((V, K), int), np.zeros(K, int)
    for d in range(D):
        for i in range(ptr[d], ptr[d + 1]):
            ref_ndk[d, z[i]] += 1
            ref_nwk[wid[i], z[i]] += 1
            ref_nk[z[i]] += 1
    assert np.array_equal(ndk, ref_ndk) and np.array_equal(nwk, ref_nwk) and np.array_equal(nk, ref_nk)


def test_undo_moves_matches_numpy_on_noisy_integer_counts(planted):
    from dptopic.kernels.counts import undo_moves

    c, K = planted.corpus, 7
    rng = np.random.default_rng(1)
    z0 = rng.integers(0, K, c.n_tokens).astype(np.int32)
    z1 = np.where(rng.random(c.n_tokens) < 0.3, rng.integers(0, K, c.n_tokens), z0).astype(np.int32)
    ndk = rng.integers(-3, 50, (c.n_docs, K)).astype(np.int32)      # any integers: noise included
    nwk = rng.integers(-3, 50, (c.vocab_size, K)).astype(np.int32)
    doc = np.repeat(np.arange(c.n_docs), np.diff(c.doc_ptr))
    ndk_ref, nwk_ref = ndk.copy(), nwk.copy()
    for arr, row in ((ndk_ref, doc), (nwk_ref, c.word_ids)):
        np.add.at(arr, (row, z1), -1)
        np.add.at(arr, (row, z0), 1)
    undo_moves(c.word_ids, c.doc_ptr, z1, z0, ndk, nwk)
    np.testing.assert_array_equal(ndk, ndk_ref)
    np.testing.assert_array_equal(nwk, nwk_ref)


def test_list_positions_inverts_the_lists():
    from dptopic.kernels.counts import list_positions

    rng = np.random.default_rng(2)
    K, rows = 9, 40
    items = np.full((rows, K), 5, dtype=np.int8)            # past each row's length: leftovers, never read
    length = rng.integers(0, K + 1, rows).astype(np.int32)
    for r in range(rows):
        items[r, :length[r]] = rng.permutation(K)[:length[r]]
    pos = np.zeros((rows, K), dtype=np.int8)
    list_positions(items, length, pos)
    ref = np.full((rows, K), -1)
    for r in range(rows):
        ref[r, items[r, :length[r]]] = np.arange(length[r])
    np.testing.assert_array_equal(pos, ref)
