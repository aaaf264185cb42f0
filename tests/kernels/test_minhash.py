"""The MinHash kernel (kernels/minhash.py) against datasketch, the maintained library it replaces for speed: the same
signatures value for value, the same candidate pairs as datasketch's banded index; and its own rules (order-free, a
multiset, short documents not sketched)."""
import numpy as np
import pytest

from dptopic.corpus.identity import (
    _A,
    _B,
    _BAND_SEEDS,
    SKETCH_PARAMS,
    bag_digests,
    feature_hashes,
    sketch_signatures,
    token_keys,
    token_list_ids,
    word_hashes,
)
from dptopic.kernels.minhash import band_hashes, minhash_signatures, signature_bytes

datasketch = pytest.importorskip("datasketch")

K, B, R, SEED, MIN = (SKETCH_PARAMS[k] for k in ("num_perm", "bands", "rows", "seed", "min_tokens"))
WORDS = [f"w{i}" for i in range(60)] + ["budget", "café", "москва"]


def _docs(n: int, seed: int, lo: int = 15, hi: int = 60):
    rng = np.random.default_rng(seed)
    return [[WORDS[j] for j in rng.integers(0, len(WORDS), rng.integers(lo, hi))] for _ in range(n)]


def _library(tokens) -> np.ndarray:
    m = datasketch.MinHash(num_perm=K, seed=SEED, scheme="affine32", hashfunc=lambda x: x)
    m.update_batch(feature_hashes(tokens))
    return m.hashvalues


def test_the_permutations_are_datasketchs():
    a, b = datasketch.MinHash(num_perm=K, seed=SEED, scheme="affine32").permutations
    assert np.array_equal(a, _A) and np.array_equal(b, _B)


def test_signatures_equal_datasketchs_value_for_value():
    docs = _docs(40, 1) + [["budget"] * 20, ["café"] * 7 + ["москва"] * 9]
    sig = sketch_signatures(*token_list_ids(docs))
    for d, tokens in enumerate(docs):
        assert np.array_equal(sig[d], _library(tokens)), d


def test_band_collisions_are_datasketchs_candidates():
    base = _docs(30, 2, 20, 40)
    rng = np.random.default_rng(3)
    near = [ts[:] for ts in base[:15]]
    for ts in near:                                # one token in ten changed: most share a band with their original
        for i in rng.choice(len(ts), len(ts) // 10, replace=False):
            ts[i] = "edited"
    docs = base + near
    ptr, ids, words = token_list_ids(docs)
    bands = token_keys(ptr, ids, words).bands
    ours = {(i, j) for i in range(len(docs)) for j in range(i + 1, len(docs)) if np.any(bands[i] == bands[j])}
    lsh = datasketch.MinHashLSH(num_perm=K, params=(B, R))
    sketches = []
    for d, tokens in enumerate(docs):
        m = datasketch.MinHash(num_perm=K, seed=SEED, scheme="affine32", hashfunc=lambda x: x)
        m.update_batch(feature_hashes(tokens))
        lsh.insert(d, m)
        sketches.append(m)
    theirs = {(min(d, e), max(d, e)) for d, m in enumerate(sketches) for e in lsh.query(m) if e != d}
    assert ours == theirs and len(ours) >= 10


def test_a_signature_is_of_the_multiset_in_any_order():
    rng = np.random.default_rng(4)
    doc = _docs(1, 5, 30, 31)[0]
    shuffled = list(rng.permutation(doc))
    more = doc + [doc[0]]                          # one occurrence more of a word: another multiset
    sig = sketch_signatures(*token_list_ids([doc, shuffled, more]))
    assert np.array_equal(sig[0], sig[1]) and not np.array_equal(sig[0], sig[2])


def test_documents_too_short_are_not_sketched():
    docs = [["a", "b"] * 7, ["a", "b"] * 8, []]     # 14, 16 and no tokens
    keys = token_keys(*token_list_ids(docs))
    assert MIN == 15
    assert not keys.bands[0].any() and not keys.signatures[0].any() and not keys.bands[2].any()
    assert np.all(keys.bands[1] != 0)
    assert keys.lengths.tolist() == [14, 16, 0]


def test_the_kernel_fills_only_the_rows_asked_and_counts_them():
    ptr, ids, words = token_list_ids(_docs(6, 6))
    out = np.full((6, K), 7, np.uint32)
    done = minhash_signatures(ptr, ids, word_hashes(words), _A, _B, MIN, 2, 4, out)
    assert done == 2 and np.all(out[:2] == 7) and np.all(out[4:] == 7) and not np.any(out[2:4] == 7)
    bands = np.zeros((6, B), np.uint64)
    band_hashes(out, R, _BAND_SEEDS, bands)
    assert np.all(bands != 0)


def test_the_one_pass_keys_equal_the_signatures_bands_and_bytes_made_apart():
    docs = _docs(50, 7, 0, 50) + [[]]
    ptr, ids, words = token_list_ids(docs)
    keys = token_keys(ptr, ids, words)
    sig = sketch_signatures(ptr, ids, words)
    bands = np.zeros((len(docs), B), np.uint64)
    band_hashes(sig, R, _BAND_SEEDS, bands)
    compact = np.zeros_like(sig, dtype=np.uint8)
    signature_bytes(sig, compact)
    assert np.array_equal(keys.bands, bands) and np.array_equal(keys.signatures, compact)
    expect = bag_digests(ptr, ids, words)
    expect[keys.lengths == 0] = 0
    assert np.array_equal(keys.bags, expect) and keys.bags[-1] == 0
