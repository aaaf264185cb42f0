"""Skellam noise on integer vectors (the secure sum's distributed noise; Agarwal, Kairouz & Liu 2021).

``Sk(mu)`` is Poisson(mu) minus an independent Poisson(mu). Each contributor of a secure sum adds its share
``Sk(mu_share)`` to every entry of its quantized statistic; the shares of ``m`` contributors add up to ``Sk(m
mu_share)`` exactly. The accounting of the sum's noise is :mod:`dptopic.accounting.skellam`.

Coins. A simulation draws from a numpy Generator (seedable, for experiments and benchmarks). A real contributor
(``secure=True``) draws from :class:`SecureUniform`: AES-256 in counter mode keyed and started from the operating
system's CSPRNG (``os.urandom``), a cryptographic generator. The Poisson variables are then drawn by exact algorithms
from those uniforms: inversion by sequential search below ``mu = 10``, and above it Hormann's transformed rejection
with squeeze (PTRS; Hormann 1993, "The transformed rejection method for generating Poisson random variables"),
which numpy's own sampler also uses. ``tests/mechanisms/test_skellam.py`` checks the draws against the Skellam
probability mass function.
"""
from __future__ import annotations

import math
import os

import numpy as np

from ..accounting.skellam import SkellamRelease
from ..errors import DPTopicError

PTRS_FROM = 10.0
"""At and above this mu the Poisson sampler is PTRS; below, inversion."""


class SecureUniform:
    """Uniform doubles in [0, 1) (53 bits each) from AES-256-CTR keyed and started from ``os.urandom``: the coins of
    a secure Skellam share or randomized rounding. It has the numpy Generator's ``random(size)``."""

    def __init__(self):
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes  # optional: the 'service' extra

        self._stream = Cipher(algorithms.AES(os.urandom(32)), modes.CTR(os.urandom(16))).encryptor()

    def random(self, size=None):
        """``size`` uniforms in [0, 1) (one float when ``size`` is None)."""
        n = 1 if size is None else int(np.prod(size))
        words = np.frombuffer(self._stream.update(bytes(8 * n)), dtype="<u8")
        out = (words >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
        return float(out[0]) if size is None else out.reshape(size)


def _poisson_inversion(mu: float, n: int, uniform) -> np.ndarray:
    """``n`` Poisson(mu) draws, ``mu < 10``, by inversion (sequential search of the CDF)."""
    u = uniform.random(n)
    k = np.zeros(n, dtype=np.int64)
    p = math.exp(-mu)
    cdf = np.full(n, p)
    pending = u > cdf
    j = 0
    while pending.any():
        j += 1
        p *= mu / j
        k[pending] = j
        cdf[pending] += p
        pending &= u > cdf
        if p == 0.0:            # the CDF's float sum stopped short of u (probability below 1e-300): the last k stands
            break
    return k


def _poisson_ptrs(mu: float, n: int, uniform) -> np.ndarray:
    """``n`` Poisson(mu) draws, ``mu >= 10``, by PTRS (Hormann 1993), vectorised: each pending entry draws a pair of
    uniforms per try until accepted."""
    from scipy.special import gammaln  # SciPy: the log-factorial of the acceptance test

    slam, loglam = math.sqrt(mu), math.log(mu)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2)
    out = np.empty(n, dtype=np.int64)
    todo = np.arange(n)
    while len(todo):
        U = uniform.random(len(todo)) - 0.5
        V = uniform.random(len(todo))
        us = 0.5 - np.abs(U)
        k = np.floor((2 * a / np.maximum(us, 1e-300) + b) * U + mu + 0.43)
        ok = (us >= 0.07) & (V <= vr)
        maybe = ~ok & (k >= 0) & ~((us < 0.013) & (V > us))
        if maybe.any():
            km = k[maybe]
            lhs = np.log(V[maybe]) + math.log(invalpha) - np.log(a / (us[maybe] * us[maybe]) + b)
            ok[maybe] = lhs <= -mu + km * loglam - gammaln(km + 1)
        out[todo[ok]] = k[ok].astype(np.int64)
        todo = todo[~ok]
    return out


def poisson(mu: float, n: int, uniform) -> np.ndarray:
    """``n`` exact Poisson(mu) draws from the uniforms of ``uniform`` (``random(size)``)."""
    if mu < PTRS_FROM:
        return _poisson_inversion(mu, n, uniform)
    return _poisson_ptrs(mu, n, uniform)


def skellam_noise(dim: int, mu: float, rng: np.random.Generator | None = None, secure: bool = False) -> np.ndarray:
    """``dim`` draws of ``Sk(mu)`` (int64): from the numpy Generator ``rng`` (a simulation), or with ``secure=True``
    from :class:`SecureUniform` (no Generator: one given would be ignored, so it is refused)."""
    if not (mu > 0 and np.isfinite(mu)):
        raise DPTopicError(f"invalid Skellam mu={mu!r}: give a finite number above 0.")
    if secure:
        if rng is not None:
            raise DPTopicError("secure=True draws the Skellam noise from the operating system's CSPRNG and refuses a"
                               " numpy Generator: pass rng=None.")
        coins = SecureUniform()
        return poisson(mu, int(dim), coins) - poisson(mu, int(dim), coins)
    if rng is None:
        raise DPTopicError("a numpy Generator is required unless secure=True.")
    return rng.poisson(mu, int(dim)).astype(np.int64) - rng.poisson(mu, int(dim)).astype(np.int64)


def skellam_share(values: np.ndarray, mu_share: float, scale: float, rng: np.random.Generator | None = None,
                  label: str = "Skellam share", secure: bool = False) -> tuple[np.ndarray, SkellamRelease]:
    """``values`` (an integer vector, the quantized statistic at ``scale``) plus one contributor's share
    ``Sk(mu_share)`` on every entry (coins as :func:`skellam_noise`), and the event of that share alone (the sum's
    event has the shares' total mu)."""
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise DPTopicError("Skellam noise is added to a one-dimensional integer vector.")
    noisy = values.astype(np.int64) + skellam_noise(len(values), mu_share, rng, secure=secure)
    return noisy, SkellamRelease(float(mu_share), float(scale), len(values), label)
