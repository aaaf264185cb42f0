"""The compiled keyed BLAKE2b (``kernels/blake2b.py``) against ``hashlib.blake2b``, digest for digest."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from dptopic.kernels import blake2b
from dptopic.kernels.blake2b import IV, SIGMA, _compress, _rounds, _start, keyed_digests


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


def _blake2b_by_blocks(data: bytes, key: bytes, person: bytes) -> bytes:
    """BLAKE2b-64 of ``data`` (any length) from the kernel's compression F alone, block after block (RFC 7693, 3.3)."""
    h = _start(key, person)
    blocks = [data[i:i + 128] for i in range(0, len(data), 128)] or [b""]
    for i, block in enumerate(blocks):
        m = np.frombuffer(block.ljust(128, b"\0"), dtype="<u8").astype(np.uint64)
        _compress(h, m, 128 + sum(len(b) for b in blocks[:i + 1]), i == len(blocks) - 1, IV, SIGMA)
    return h[:1].astype("<u8").tobytes()


@pytest.mark.parametrize("size", [1, 127, 128, 129, 300])
def test_the_compression_of_full_blocks_is_hashlibs(size):
    """Messages whose every word is nonzero, over one to three blocks: each row of SIGMA is checked, not only the
    places of the two words a ledger key fills."""
    data = bytes(np.random.default_rng(size).integers(1, 256, size, dtype=np.uint8))
    want = hashlib.blake2b(data, key=b"secret", person=b"p", digest_size=8).digest()
    assert _blake2b_by_blocks(data, b"secret", b"p") == want


def test_the_written_out_rounds_take_the_words_in_sigmas_order(monkeypatch):
    """``_rounds`` (the digests' rounds, written out) against ``_compress`` (a loop over SIGMA) on a block of sixteen
    distinct nonzero words; the rounds run as Python on NumPy's uint64, which wraps as the kernel does."""
    monkeypatch.setattr(blake2b, "_round", blake2b._round.py_func)
    monkeypatch.setattr(blake2b, "_rotr", blake2b._rotr.py_func)
    rng = np.random.default_rng(5)
    h = rng.integers(1, 2**63, 8, dtype=np.uint64)
    m = rng.integers(1, 2**63, 16, dtype=np.uint64)
    state = (*h, *IV[:4], IV[4] ^ np.uint64(200), IV[5], ~IV[6], IV[7])
    with np.errstate(over="ignore"):
        v = _rounds.py_func(state, *m)
    want = h.copy()
    _compress(want, m, 200, True, IV, SIGMA)
    assert np.array_equal(h ^ np.array(v[:8], np.uint64) ^ np.array(v[8:], np.uint64), want)
