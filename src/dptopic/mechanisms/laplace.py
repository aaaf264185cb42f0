"""Laplace and discrete Laplace (two-sided geometric) noise on count arrays.

Every mechanism returns ``(output, event)``: the noisy array and the
:class:`~dptopic.accounting.LaplaceEvent` it spent.

``secure=True`` draws from the operating system's CSPRNG through OpenDP's exact
samplers (``pip install dptopic[secure]``), which resist floating-point attacks on
the textbook inverse-CDF sampler (Mironov 2012). It takes no seed.
"""
from __future__ import annotations

import math

import numpy as np

from ..accounting.events import LaplaceEvent
from ..errors import DPTopicError


def _check_eps(epsilon):
    if not (isinstance(epsilon, (int, float, np.floating)) and epsilon > 0 and math.isfinite(epsilon)):
        raise DPTopicError(f"invalid epsilon={epsilon!r}: must be a finite number > 0.")


def _opendp_release(values: np.ndarray, scale: float, integer: bool) -> np.ndarray:
    """OpenDP's Laplace measurement applied to ``values`` themselves (not noise added afterwards).

    Integers (``i64``) get OpenDP's exact discrete Laplace; floats get its continuous Laplace,
    whose output is rounded by OpenDP to a grid that keeps the privacy guarantee under
    floating-point arithmetic. Adding float noise to the values in NumPy instead would undo that
    protection (Mironov 2012), so the values are handed to the measurement.
    """
    try:
        import opendp.prelude as dp
    except ImportError:
        raise DPTopicError("secure mode needs OpenDP: pip install 'dptopic[secure]' (or pip install opendp).") from None
    dp.enable_features("contrib")
    T = "i64" if integer else float
    atom = dp.atom_domain(T=T) if integer else dp.atom_domain(T=float, nan=False)
    meas = dp.m.make_laplace(dp.vector_domain(atom), dp.l1_distance(T=T), scale=float(scale))
    flat = np.asarray(values, dtype=np.int64 if integer else np.float64).ravel()
    out = meas(flat.tolist())
    return np.asarray(out, dtype=np.int64 if integer else np.float64).reshape(np.shape(values))


def _release(values: np.ndarray, scale: float, rng, discrete: bool, secure: bool, workers: int = 1) -> np.ndarray:
    if secure:
        return _opendp_release(values, scale, integer=discrete)
    noise = laplace_noise(values.shape, scale, rng, discrete, workers=workers)
    if discrete and values.dtype.kind in "iub" and np.can_cast(values.dtype, np.int64):
        noise += values  # the fresh int64 noise takes the counts in place
        return noise
    return values.astype(np.int64) + noise if discrete else values.astype(np.float64) + noise


MAX_SCALE = 1e12
"""Largest noise scale the samplers accept. The discrete sampler computes ``floor(E·scale)`` in
float64: with ``E·scale`` below 2**53 every integer is reachable and the result fits int64 with
room to add counts; ``E`` exceeds 2000 with probability ``e**-2000``, so 1e12 keeps
``E·scale < 2**53`` always in practice. Beyond it the cast overflows and the noise silently
vanishes (Mironov 2012 on floating-point samplers); the continuous sampler shares the bound so
that both noises behave alike. A scale of 1e12 already drowns any count."""


def check_scale(scale, what: str = "noise scale") -> float:
    """Refuse a scale the samplers cannot draw correctly, naming the supported range."""
    from .._validation import Real

    if not Real(0, MAX_SCALE, "right").accepts(scale):
        shown = f"{scale:.4g}" if isinstance(scale, (float, np.floating)) else repr(scale)[:40]
        raise DPTopicError(f"invalid {what}={shown}: the Laplace samplers support scales in (0, {MAX_SCALE:g}], i.e."
                           f" epsilon >= sensitivity/{MAX_SCALE:g}; raise epsilon.")
    return float(scale)


PARALLEL_MIN = 1 << 16
"""Arrays with fewer entries than this are drawn in one piece whatever ``workers`` says."""


def laplace_noise(shape, scale: float, rng: np.random.Generator | None, discrete: bool,
                  secure: bool = False, workers: int = 1) -> np.ndarray:
    """Raw noise: i.i.d. Laplace(scale) or discrete Laplace with P(x) ∝ exp(−|x|/scale).

    ``scale`` must lie in ``(0, MAX_SCALE]``; anything else raises :class:`DPTopicError`.
    ``secure=True`` is allowed for integer noise only (exact integer addition keeps OpenDP's
    guarantee); secure continuous noise must be applied by the measurement to the values
    themselves: use :func:`laplace_mechanism`.
    ``workers > 1`` draws a large array in that many row blocks on threads, each from its own
    child of ``rng`` (:meth:`numpy.random.Generator.spawn`): the same distribution, and the same
    output for the same seed and ``workers``.
    """
    scale = check_scale(scale)
    shape = tuple(np.atleast_1d(shape)) if not isinstance(shape, tuple) else shape
    if not secure and workers > 1 and len(shape) >= 1 and shape[0] >= workers and int(np.prod(shape)) >= PARALLEL_MIN:
        from concurrent.futures import ThreadPoolExecutor

        out = np.empty(shape, dtype=np.int64 if discrete else np.float64)
        cuts = np.linspace(0, shape[0], workers + 1).astype(int)
        children = rng.spawn(workers)

        def fill(j):  # numpy's samplers release the GIL while they fill an array
            out[cuts[j]:cuts[j + 1]] = laplace_noise((int(cuts[j + 1] - cuts[j]),) + shape[1:], scale, children[j],
                                                     discrete)
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(fill, range(workers)))
        return out
    if secure:
        if not discrete:
            raise DPTopicError("secure continuous noise must be applied to the values themselves: call"
                               " laplace_mechanism(values, ..., secure=True) instead of laplace_noise.")
        return _opendp_release(np.zeros(shape, dtype=np.int64), scale, integer=True)
    if discrete:
        # The difference of two i.i.d. geometrics on {0,1,..} with ratio r = exp(-1/scale) is the
        # discrete Laplace. floor(E·scale), E ~ Exp(1), is exactly such a geometric
        # (P(G >= g) = exp(-g/scale)) and twice as fast to draw as numpy's geometric.
        # Filled in place (two buffers, no temporaries): the same draws in the same order as
        # floor(E1·scale) − floor(E2·scale), at half the time.
        g1, g2 = np.empty(shape), np.empty(shape)
        for g in (g1, g2):
            rng.standard_exponential(out=g)
            g *= scale
            np.floor(g, out=g)
        g1 -= g2
        return g1.astype(np.int64)
    return rng.laplace(0.0, scale, size=shape)


def laplace_mechanism(values: np.ndarray, epsilon: float, rng: np.random.Generator | None = None,
                      changes=(1,), discrete: bool | None = None, secure: bool = False,
                      label: str = "Laplace", relation: str = "word-level replacement", workers: int = 1):
    """Release ``values + noise`` with ``scale = L1/ε`` where ``L1 = sum(changes)``.

    Integer arrays get discrete noise by default. Returns ``(noisy, LaplaceEvent)``.
    ``workers`` draws a large array's noise on that many threads (:func:`laplace_noise`).
    """
    _check_eps(epsilon)
    values = np.asarray(values)
    if discrete is None:
        discrete = np.issubdtype(values.dtype, np.integer)
    if not secure and rng is None:
        raise DPTopicError("a numpy Generator is required unless secure=True.")
    l1 = float(sum(changes))
    scale = l1 / epsilon
    if not scale <= MAX_SCALE:
        raise DPTopicError(f"invalid epsilon={epsilon!r}: with sensitivity {l1:g} the noise scale {scale:.3g} exceeds"
                           f" the samplers' range (0, {MAX_SCALE:g}]; give epsilon >= {l1 / MAX_SCALE:.3g}.")
    noisy = _release(values, scale, rng, discrete, secure, workers)
    return noisy, LaplaceEvent(scale=scale, changes=tuple(changes), discrete=bool(discrete), label=label,
                               relation=relation)


def laplace_with_scale(values: np.ndarray, scale: float, rng, changes=(1,), discrete: bool | None = None,
                       secure: bool = False, label: str = "Laplace", relation: str = "word-level replacement",
                       workers: int = 1):
    """Like :func:`laplace_mechanism` but with the scale given (e.g. a paper's ``Lap(1/ε)``)."""
    scale = check_scale(scale, "scale")
    values = np.asarray(values)
    if discrete is None:
        discrete = np.issubdtype(values.dtype, np.integer)
    noisy = _release(values, scale, rng, discrete, secure, workers)
    return noisy, LaplaceEvent(scale=scale, changes=tuple(changes), discrete=bool(discrete), label=label,
                               relation=relation)


def discrete_laplace_pmf(x, scale: float):
    """P(X = x) for the discrete Laplace with P ∝ exp(−|x|/scale)."""
    r = math.exp(-1.0 / scale)
    return (1 - r) / (1 + r) * np.power(r, np.abs(np.asarray(x)))
