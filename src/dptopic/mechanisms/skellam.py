"""Skellam noise on integer vectors (the secure sum's distributed noise; Agarwal, Kairouz & Liu 2021).

``Sk(mu)`` is Poisson(mu) minus an independent Poisson(mu). Each contributor of a secure sum adds its share
``Sk(mu_share)`` to every entry of its quantized statistic; the shares of ``m`` contributors add up to ``Sk(m
mu_share)`` exactly. The accounting of the sum's noise is :mod:`dptopic.accounting.skellam`.
"""
from __future__ import annotations

import numpy as np

from ..accounting.skellam import SkellamRelease
from ..errors import DPTopicError


def skellam_noise(dim: int, mu: float, rng: np.random.Generator) -> np.ndarray:
    """``dim`` draws of ``Sk(mu)`` (int64)."""
    if not (mu > 0 and np.isfinite(mu)):
        raise DPTopicError(f"invalid Skellam mu={mu!r}: give a finite number above 0.")
    return rng.poisson(mu, int(dim)).astype(np.int64) - rng.poisson(mu, int(dim)).astype(np.int64)


def skellam_share(values: np.ndarray, mu_share: float, scale: float, rng: np.random.Generator,
                  label: str = "Skellam share") -> tuple[np.ndarray, SkellamRelease]:
    """``values`` (an integer vector, the quantized statistic at ``scale``) plus one contributor's share
    ``Sk(mu_share)`` on every entry, and the event of that share alone (the sum's event has the shares' total mu)."""
    values = np.asarray(values)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise DPTopicError("Skellam noise is added to a one-dimensional integer vector.")
    noisy = values.astype(np.int64) + skellam_noise(len(values), mu_share, rng)
    return noisy, SkellamRelease(float(mu_share), float(scale), len(values), label)
