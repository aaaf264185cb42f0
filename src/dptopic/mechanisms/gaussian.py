"""The Gaussian mechanism on a clipped sum, returning ``(output, event)``.

``secure=True`` hands the values to OpenDP's Gaussian measurement (exact sampling from the
operating system's CSPRNG, output rounded so the guarantee survives floating point; Mironov
2012's attack on textbook samplers), so it takes no Generator and no seed.
"""
from __future__ import annotations

import math

import numpy as np

from ..accounting.events import SubsampledGaussianEvent
from ..errors import DPTopicError
from . import laplace, observer
from .laplace import check_coins


def _opendp_gaussian(values: np.ndarray, std: float) -> np.ndarray:
    dp = laplace.require_opendp()
    dp.enable_features("contrib")
    meas = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.l2_distance(T=float),
                              scale=float(std))
    flat = np.asarray(values, dtype=np.float64).ravel()
    return np.asarray(meas(flat.tolist()), dtype=np.float64).reshape(np.shape(values))


def gaussian_mechanism(values: np.ndarray, noise_multiplier: float, l2_sensitivity: float,
                       rng: np.random.Generator | None = None, sampling_rate: float = 1.0, secure: bool = False,
                       label: str = "Gaussian noise on a clipped sum", accounted: bool = True):
    """Release ``values + N(0, (σ·Δ₂)²)`` i.i.d. per entry.

    ``l2_sensitivity`` (Δ₂) bounds the L2 change of ``values`` when one record is added or removed
    (per-record clipping guarantees it). ``sampling_rate`` says how the records were chosen: each
    independently with that probability (Poisson sampling, done by the caller), which the returned
    :class:`~dptopic.accounting.gaussian.SubsampledGaussianEvent` records for the accountant.

    A noise multiplier outside the range the accountant handles (``[0.25, 1000]``,
    :data:`~dptopic.accounting.gaussian.MIN_NOISE_MULTIPLIER`) is refused before any noise is drawn, with the
    ledger's own message: the ledger could not account for the release afterwards. ``accounted=False`` is for a
    caller that accounts for the release by its own theorem and discards the event (DP set union's Gaussian
    policy, Gopi et al. 2020), which needs no such range.
    """
    if isinstance(noise_multiplier, (bool, np.bool_)) or not (
            isinstance(noise_multiplier, (int, float, np.integer, np.floating)) and noise_multiplier > 0
            and math.isfinite(noise_multiplier)):
        raise DPTopicError(f"invalid noise_multiplier={noise_multiplier!r}: must be a finite number > 0.")
    if not (isinstance(l2_sensitivity, (int, float, np.integer, np.floating)) and l2_sensitivity > 0
            and math.isfinite(l2_sensitivity)) or isinstance(l2_sensitivity, (bool, np.bool_)):
        raise DPTopicError(f"invalid l2_sensitivity={l2_sensitivity!r}: must be a finite number > 0.")
    if isinstance(sampling_rate, (bool, np.bool_)) or not (isinstance(sampling_rate, (int, float, np.integer, np.floating))
                                                           and 0 < sampling_rate <= 1):
        raise DPTopicError(f"invalid sampling_rate={sampling_rate!r}: must be in (0, 1].")
    event = SubsampledGaussianEvent(float(noise_multiplier), float(sampling_rate), label=label)
    if accounted:
        event._check_accountable()      # before the noise: a release the ledger then refuses has already happened
    check_coins(rng, secure)
    std = float(noise_multiplier) * float(l2_sensitivity)
    values = np.asarray(values, dtype=np.float64)
    if secure:
        noisy = _opendp_gaussian(values, std)
    else:
        noisy = values + rng.normal(0.0, std, size=values.shape)
    if observer.active():       # a privacy test or a white-box audit watching the fit (mechanisms/observer.py)
        noisy = observer.observe(values, noisy, l2_sensitivity, "l2", std, label, event)
    return noisy, event
