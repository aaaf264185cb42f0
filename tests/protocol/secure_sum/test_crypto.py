"""``dptopic.protocol.secure_sum.crypto``: the low-order keys, HKDF, and the signatures (each verified once)."""
import pytest

from dptopic.errors import DPTopicError
from dptopic.protocol.secure_sum import default as ss
from dptopic.protocol.secure_sum.crypto import (
    _VERIFIED,
    LOW_ORDER_U,
    P25519,
    agree,
    hkdf,
    new_private_key,
    new_signing_key,
    public_key,
    sign,
    signing_public,
    valid_x25519,
    verify,
)

pytest.importorskip("cryptography")


def _encode(u: int) -> str:
    return u.to_bytes(32, "little").hex()


def test_the_low_order_list_is_exactly_the_keys_whose_agreement_is_zero():
    """Every listed point, in each encoding X25519 reads as it (plus p below 2^255, the ignored high bit set), agrees
    to all zeros (cryptography refuses it); a random key does not."""
    for u in LOW_ORDER_U:
        for enc in {u, u + P25519 if u + P25519 < 2 ** 255 else u, u | (1 << 255)}:
            with pytest.raises(DPTopicError):
                agree(new_private_key(), bytes.fromhex(_encode(enc)))
            assert not valid_x25519(_encode(enc))
    for _ in range(20):
        k = public_key(new_private_key())
        agree(new_private_key(), k)
        assert valid_x25519(k.hex())


def test_hkdf_is_rfc_5869s():
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    for material, info in ((b"k" * 32, b"dptopic"), (bytes(32), b""), (b"\x01" * 32, b"x" * 200)):
        want = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(material)
        assert hkdf(material, info) == want


def test_signatures_verify_only_their_own_message_and_key():
    key = new_signing_key()
    pub = signing_public(key)
    msg = ss.consistency_message("r", 0, ["a", "b"])
    sig = sign(key, msg)
    assert verify(pub, sig, msg)
    assert not verify(pub, sig, ss.consistency_message("r", 1, ["a", "b"]))       # another step
    assert not verify(pub, sig, ss.consistency_message("r", 0, ["a"]))           # another set
    assert not verify(signing_public(new_signing_key()), sig, msg)          # another key
    flipped = sig[:-2] + format(int(sig[-2:], 16) ^ 1, "02x")      # one bit of the last byte changed
    assert not verify(pub, flipped, msg) and not verify(pub, "zz", msg) and not verify(pub, None, msg)


def test_a_verified_signature_is_remembered_by_its_bytes_and_nothing_else_passes():
    """A process verifies the same (key, signature, message) once; a changed message, key or signature is verified
    afresh and refused, and an invalid triple is never remembered."""
    key, other = new_signing_key(), new_signing_key()
    pub = signing_public(key)
    sig = sign(key, b"hello")
    _VERIFIED.clear()
    assert verify(pub, sig, b"hello") and len(_VERIFIED) == 1
    assert verify(pub, sig, b"hello") and len(_VERIFIED) == 1
    assert not verify(pub, sig, b"hellO")
    assert not verify(signing_public(other), sig, b"hello")
    assert not verify(pub, sign(other, b"hello"), b"hello")
    assert not verify(pub + b"\x00", sig, b"hello") and not verify(pub[:31], sig, b"hello")
    assert len(_VERIFIED) == 1
