"""The compiled keyed BLAKE2b (``kernels/blake2b.py``) against ``hashlib.blake2b``, digest for digest."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dptopic.kernels.blake2b import keyed_digests


def _hashlib(key, person, values, salt=b""):
    out = []
    for v in np.asarray(values, dtype=np.uint64).tolist():
        d = hashlib.blake2b(salt + int(v).to_bytes(8, "little"), key=key, person=person, digest_size=8).digest()
        out.append(int.from_bytes(d, "little", signed=True))
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("salt", [b"", b"\x00", b"\x07", b"\xff"])
@pytest.mark.parametrize("person", [b"ledger-bag", b"ledger-band", b"", b"sixteen-bytes-xx"])
def test_the_keyed_digests_are_hashlibs(salt, person):
    rng = np.random.default_rng(3)
    key = bytes(rng.integers(0, 256, 32, dtype=np.uint8))
    values = np.concatenate([rng.integers(0, 2**63, 300, dtype=np.uint64) * np.uint64(2) + np.uint64(1),
                             np.array([0, 1, 2**64 - 1, 2**63, 255, 256], dtype=np.uint64)])
    assert np.array_equal(keyed_digests(key, person, values, salt), _hashlib(key, person, values, salt))


@pytest.mark.parametrize("key_size", [1, 16, 64])
def test_keys_of_every_length_give_hashlibs_digests(key_size):
    key = bytes(range(7, 7 + key_size))
    values = np.arange(50, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    assert np.array_equal(keyed_digests(key, b"p", values), _hashlib(key, b"p", values))


def test_no_values_give_no_digests_and_bad_settings_are_refused():
    assert keyed_digests(b"k", b"p", np.zeros(0, np.uint64)).shape == (0,)
    with pytest.raises(ValueError):
        keyed_digests(b"k", b"p", np.zeros(1, np.uint64), b"ab")
    with pytest.raises(ValueError):
        keyed_digests(bytes(65), b"p", np.zeros(1, np.uint64))


@pytest.mark.parametrize("threads", [2, 3])
def test_digests_hashed_in_slices_on_threads_are_the_single_threads(threads):
    """Three slices of 2**16 and more on threads give each value its own digest (hashlib's, at every slice's edges)."""
    values = np.arange(3 * 2**16 + 11, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    one = keyed_digests(b"key", b"p", values, b"\x03", threads=1)
    assert np.array_equal(keyed_digests(b"key", b"p", values, b"\x03", threads=threads), one)
    edges = np.array([0, 1, 2**16 - 1, 2**16, 2**16 + 1, len(values) // 2, len(values) - 1])
    assert np.array_equal(one[edges], _hashlib(b"key", b"p", values[edges], b"\x03"))
