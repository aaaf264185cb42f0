"""Shamir secret sharing (Shamir 1979) of 32-byte secrets over the prime field GF(2^255 - 19).

A secret is a 32-byte string whose value (big-endian) lies below the prime: the secure sum's self-mask seeds and
X25519 private keys are drawn so (:func:`random_secret`; a clamped X25519 key is below 2^255, and the two clamped
values in [p, 2^255) are redrawn), and each share is 32 bytes.

A secret is the constant term of a random polynomial of degree ``threshold - 1``; the share of holder ``x`` (an
integer 1..2^32) is the polynomial's value at ``x``. Any ``threshold`` shares give the secret back by Lagrange
interpolation at 0; fewer are uniformly distributed whatever the secret (each set of ``threshold - 1`` values is
matched by exactly one polynomial for every secret), so they reveal nothing. Coefficients come from the OS CSPRNG.
"""
from __future__ import annotations

import os

from ...errors import DPTopicError

PRIME = 2 ** 255 - 19
SHARE_BYTES = 32
MAX_SECRET_BYTES = 32


def random_secret() -> bytes:
    """32 bytes from the OS CSPRNG whose value lies below the prime (the top bit cleared, the rare rest redrawn)."""
    while True:
        b = bytearray(os.urandom(32))
        b[0] &= 0x7F
        if int.from_bytes(b, "big") < PRIME:
            return bytes(b)


def share(secret: bytes, holders, threshold: int) -> dict[int, bytes]:
    """The shares of ``secret`` for each of ``holders`` (distinct integers >= 1), any ``threshold`` of which
    reconstruct it."""
    holders = [int(x) for x in holders]
    if not 1 <= threshold <= len(holders):
        raise DPTopicError(f"invalid threshold {threshold}: between 1 and the number of holders ({len(holders)}).")
    if len(set(holders)) != len(holders) or min(holders) < 1 or max(holders) >= 2 ** 32:
        raise DPTopicError("Shamir holders must be distinct integers from 1 to 2^32 - 1.")
    if len(secret) > MAX_SECRET_BYTES or int.from_bytes(secret, "big") >= PRIME:
        raise DPTopicError(f"a Shamir secret holds at most {MAX_SECRET_BYTES} bytes and lies below the field's prime.")
    step = SHARE_BYTES + 16
    coins = os.urandom(step * (threshold - 1))      # one read of the OS's entropy for every coefficient
    coeffs = [int.from_bytes(secret, "big")] + [int.from_bytes(coins[k:k + step], "big") % PRIME
                                                for k in range(0, len(coins), step)]
    coeffs.reverse()
    out = {}
    for x in holders:
        y = 0
        for c in coeffs:        # Horner's rule, exact (x < 2^32: the value grows by 32 bits a step), reduced once
            y = y * x + c
        out[x] = (y % PRIME).to_bytes(SHARE_BYTES, "big")
    return out


def reconstruct(shares: dict[int, bytes], threshold: int, length: int) -> bytes:
    """The secret of ``length`` bytes from at least ``threshold`` shares ``{holder: share}`` (the first
    ``threshold`` by holder are used)."""
    if len(shares) < threshold:
        raise DPTopicError(f"{len(shares)} share(s) cannot reconstruct a secret shared with threshold {threshold}.")
    pts = sorted((int(x), int.from_bytes(y, "big")) for x, y in shares.items())[:threshold]
    xs = [x for x, _ in pts]
    # Lagrange at 0: L_i = prod_{j != i} (-x_j) / prod_{j != i} (x_i - x_j). The holders are small integers, so each
    # product is taken exactly (no reduction per factor) and the denominators inverted together (one inversion and
    # three products each: Montgomery's batch inversion)
    everything = 1
    for x in xs:
        everything *= x
    sign = -1 if (len(xs) - 1) % 2 else 1
    dens = []
    for i, xi in enumerate(xs):
        d = 1
        for j, xj in enumerate(xs):
            if j != i:
                d *= xi - xj
        dens.append(d % PRIME)
    prefix = [1]
    for d in dens:
        prefix.append(prefix[-1] * d % PRIME)
    inv = pow(prefix[-1], -1, PRIME)       # the inverse by extended Euclid
    secret = 0
    for i in range(len(xs) - 1, -1, -1):
        inv_i = inv * prefix[i] % PRIME
        inv = inv * dens[i] % PRIME
        secret += pts[i][1] * (sign * (everything // xs[i]) % PRIME) % PRIME * inv_i
    secret %= PRIME
    if secret >= 256 ** length:
        raise DPTopicError("the Shamir shares do not reconstruct a secret of this length (a share is wrong).")
    return secret.to_bytes(length, "big")
