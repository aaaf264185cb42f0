
import pytest

from dptopic.errors import DPTopicError
from dptopic.protocol.secure_sum import shamir


def test_any_threshold_shares_reconstruct_the_secret():
    secret = shamir.random_secret()
    shares = shamir.share(secret, range(1, 8), 4)
    for pick in ([1, 2, 3, 4], [7, 5, 3, 1], [2, 4, 6, 7]):
        assert shamir.reconstruct({x: shares[x] for x in pick}, 4, 32) == secret


def test_fewer_than_threshold_shares_reveal_nothing():
    # threshold t: any t - 1 shares are matched by a polynomial of degree t - 1 for every candidate secret, so they
    # do not determine it; a sharing of lower degree would let t - 1 shares reconstruct it
    secret = bytes(range(32))
    shares = shamir.share(secret, range(1, 8), 4)
    three = {x: shares[x] for x in (1, 2, 3)}
    assert shamir.reconstruct(three, 3, 32) != secret
    with pytest.raises(DPTopicError, match="cannot reconstruct"):
        shamir.reconstruct(three, 4, 32)


def test_a_secret_at_or_above_the_prime_is_refused_and_random_secrets_are_below_it():
    with pytest.raises(DPTopicError, match="below the field's prime"):
        shamir.share(shamir.PRIME.to_bytes(32, "big"), [1, 2, 3], 2)
    assert all(int.from_bytes(shamir.random_secret(), "big") < shamir.PRIME for _ in range(200))


def test_bad_threshold_is_refused():
    with pytest.raises(DPTopicError, match="threshold"):
        shamir.share(b"x", [1, 2], 3)
