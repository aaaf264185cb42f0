"""Laplace and discrete Laplace (two-sided geometric) noise on count arrays.

Every mechanism returns ``(output, event)``: the noisy array and the
:class:`~dptopic.accounting.LaplaceEvent` it spent.

``secure=True`` draws from the operating system's CSPRNG through OpenDP's exact
samplers (``pip install dptopic[secure]``), which resist floating-point attacks on
the textbook inverse-CDF sampler (Mironov 2012). It takes no seed.
"""
from __future__ import annotations

import functools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._validation import Real
from ..accounting.events import LaplaceEvent
from ..errors import DPTopicError, ParameterError
from ..kernels.noise import add_discrete_laplace, discrete_laplace_threshold
from ..kernels.rng import kernel_state
from . import observer


def _check_eps(epsilon):
    if not (isinstance(epsilon, (int, float, np.floating)) and epsilon > 0 and math.isfinite(epsilon)):
        raise DPTopicError(f"invalid epsilon={epsilon!r}: must be a finite number > 0.")


def check_coins(rng, secure: bool) -> None:
    """A mechanism's coins: a numpy Generator, or in secure mode none at all (the OS CSPRNG's, through OpenDP). A
    Generator given with ``secure=True`` would be ignored, and a caller reading the call would think it seeded the
    noise: refused in one line, as secure trainers refuse a seed."""
    if secure and rng is not None:
        raise DPTopicError("secure=True takes its noise from the operating system's CSPRNG and refuses a numpy"
                           " Generator: pass rng=None.")
    if not secure and rng is None:
        raise DPTopicError("a numpy Generator is required unless secure=True.")


OPENDP_MISSING = "secure mode needs OpenDP: pip install 'dptopic[secure]' (or pip install opendp)."


def require_opendp():
    """OpenDP's ``prelude``, or one line saying how to install it. A secure fit calls this first, so a missing OpenDP
    is reported before any pass over the data, not at the first noise draw."""
    try:
        import opendp.prelude as dp  # optional: the 'secure' extra (OpenDP)
    except ImportError:
        raise DPTopicError(OPENDP_MISSING) from None
    return dp


def _opendp_release(values: np.ndarray, scale: float, integer: bool) -> np.ndarray:
    """OpenDP's Laplace measurement applied to ``values`` themselves (not noise added afterwards).

    Integers (``i64``) get OpenDP's exact discrete Laplace; floats get its continuous Laplace,
    whose output is rounded by OpenDP to a grid that keeps the privacy guarantee under
    floating-point arithmetic. Adding float noise to the values in NumPy instead would undo that
    protection (Mironov 2012), so the values are handed to the measurement.
    """
    dp = require_opendp()
    dp.enable_features("contrib")
    T = "i64" if integer else float
    atom = dp.atom_domain(T=T) if integer else dp.atom_domain(T=float, nan=False)
    meas = dp.m.make_laplace(dp.vector_domain(atom), dp.l1_distance(T=T), scale=float(scale))
    flat = np.asarray(values, dtype=np.int64 if integer else np.float64).ravel()
    out = meas(flat.tolist())
    return np.asarray(out, dtype=np.int64 if integer else np.float64).reshape(np.shape(values))


def _release(values: np.ndarray, scale: float, rng, discrete: bool, secure: bool, workers: int = 1,
             out: np.ndarray | None = None) -> np.ndarray:
    if out is not None:
        if out is not values or out.dtype not in (np.int64, np.float64) or not out.flags.c_contiguous \
                or not out.flags.writeable:
            raise DPTopicError("out= must be the values array itself, C-contiguous and writeable, of dtype int64 or"
                               " float64 (the noise is added in place).")
        if secure:
            out[...] = _opendp_release(values, scale, integer=discrete)
        else:
            add_laplace_noise(out, scale, rng, discrete, workers)
        return out
    if secure:
        return _opendp_release(values, scale, integer=discrete)
    noisy = values.astype(np.int64 if discrete else np.float64)  # a fresh copy, noised in place
    add_laplace_noise(noisy, scale, rng, discrete, workers)
    return noisy


MAX_SCALE = 1e12
"""Largest noise scale the samplers accept. The discrete sampler computes ``floor((E − t0)·scale)`` in
float64 (:mod:`dptopic.kernels.noise`): with ``E·scale`` below 2**53 every integer is reachable and
the result fits int64 with room to add counts; ``E`` exceeds 2000 with probability ``e**-2000``, so
1e12 keeps ``E·scale < 2**53`` always in practice. Beyond it the cast overflows and the noise
silently vanishes (Mironov 2012 on floating-point samplers); the continuous sampler shares the
bound so that both noises behave alike. A scale of 1e12 already drowns any count."""


def check_scale(scale, what: str = "noise scale") -> float:
    """Refuse a scale the samplers cannot draw correctly, naming the supported range."""
    if not Real(0, MAX_SCALE, "right").accepts(scale):
        # the scale follows from an epsilon (sensitivity/epsilon): a caller who sets that epsilon by a flag is told
        # about the flag
        spec = ".4g" if isinstance(scale, (float, np.floating)) else ""
        raise ParameterError("invalid {parameter}={value:%s}: the Laplace samplers support scales in (0, {top:g}], i.e."
                             " {epsilon} >= sensitivity/{top:g}; raise {epsilon}." % spec, what, scale, top=MAX_SCALE,
                             key="mechanisms.laplace.check_scale" if spec else "mechanisms.laplace.check_scale.exact")
    return float(scale)


PARALLEL_MIN = 1 << 16
"""Arrays with fewer entries than this are drawn in one piece whatever ``workers`` says."""


@functools.lru_cache(maxsize=None)
def _pool(workers: int) -> ThreadPoolExecutor:
    """One lasting pool per worker count: a fresh pool per release costs a thread start per worker."""
    return ThreadPoolExecutor(workers, thread_name_prefix="dptopic-noise")


def _add_block(block: np.ndarray, scale: float, rng: np.random.Generator, discrete: bool) -> None:
    flat = block.reshape(-1)  # a view: block is C-contiguous
    if not discrete:
        flat += rng.laplace(0.0, scale, size=flat.shape[0])
        return
    # dptopic.kernels.noise: one exponential and one sign bit per entry, from a stream seeded by rng
    add_discrete_laplace(flat, kernel_state(rng), scale, discrete_laplace_threshold(scale))


def add_laplace_noise(target: np.ndarray, scale: float, rng: np.random.Generator, discrete: bool,
                      workers: int = 1) -> np.ndarray:
    """Add i.i.d. Laplace(scale), or discrete Laplace with P(x) ∝ exp(−|x|/scale), to ``target`` in place.

    ``target`` is a C-contiguous int64 or float64 array (float64 holds discrete-noised counts
    exactly below 2**53). The discrete noise is one exponential and one sign bit per entry, drawn in
    one compiled pass from a stream whose state comes from ``rng`` (:mod:`dptopic.kernels.noise`).
    ``workers > 1`` noises a large array in that many row blocks, the first on the calling thread
    and the others on threads, each from its own child of ``rng`` (:meth:`numpy.random.Generator.spawn`):
    the same distribution, and the same output for the same seed and ``workers``.
    """
    scale = check_scale(scale)
    if target.dtype not in (np.int64, np.float64) or not target.flags.c_contiguous:
        raise DPTopicError(f"cannot add noise in place to a {target.dtype} array: give a C-contiguous int64 or"
                           " float64 array.")
    shape = target.shape
    if workers > 1 and target.ndim >= 1 and shape[0] >= workers and target.size >= PARALLEL_MIN:
        cuts = np.linspace(0, shape[0], workers + 1).astype(int)
        children = rng.spawn(workers)
        others = [_pool(workers - 1).submit(_add_block, target[cuts[j]:cuts[j + 1]], scale, children[j], discrete)
                  for j in range(1, workers)]
        _add_block(target[:cuts[1]], scale, children[0], discrete)
        for f in others:
            f.result()
    elif target.size:
        _add_block(target, scale, rng, discrete)
    return target


def laplace_noise(shape, scale: float, rng: np.random.Generator | None, discrete: bool,
                  secure: bool = False, workers: int = 1) -> np.ndarray:
    """Raw noise: i.i.d. Laplace(scale) or discrete Laplace with P(x) ∝ exp(−|x|/scale).

    ``scale`` must lie in ``(0, MAX_SCALE]``; anything else raises :class:`DPTopicError`.
    ``secure=True`` is allowed for integer noise only (exact integer addition keeps OpenDP's
    guarantee); secure continuous noise must be applied by the measurement to the values
    themselves: use :func:`laplace_mechanism`. ``workers`` as in :func:`add_laplace_noise`.
    """
    scale = check_scale(scale)
    shape = tuple(np.atleast_1d(shape)) if not isinstance(shape, tuple) else shape
    if secure:
        if not discrete:
            raise DPTopicError("secure continuous noise must be applied to the values themselves: call"
                               " laplace_mechanism(values, ..., secure=True) instead of laplace_noise.")
        return _opendp_release(np.zeros(shape, dtype=np.int64), scale, integer=True)
    return add_laplace_noise(np.zeros(shape, dtype=np.int64 if discrete else np.float64), scale, rng, discrete,
                             workers)


def laplace_mechanism(values: np.ndarray, epsilon: float, rng: np.random.Generator | None = None,
                      changes=(1,), discrete: bool | None = None, secure: bool = False,
                      label: str = "Laplace", relation: str = "word-level replacement", workers: int = 1,
                      out: np.ndarray | None = None):
    """Release ``values + noise`` with ``scale = L1/ε`` where ``L1 = sum(changes)``.

    Integer arrays get discrete noise by default. Returns ``(noisy, LaplaceEvent)``.
    ``workers`` draws a large array's noise on that many threads (:func:`add_laplace_noise`).
    ``out=values`` (a C-contiguous int64 or float64 array) adds the noise to ``values`` in place and
    returns it, instead of returning a fresh int64 (discrete) or float64 array.
    """
    _check_eps(epsilon)
    values = np.asarray(values)
    if discrete is None:
        discrete = np.issubdtype(values.dtype, np.integer)
    check_coins(rng, secure)
    l1 = float(sum(changes))
    scale = l1 / epsilon
    if not scale <= MAX_SCALE:
        raise DPTopicError(f"invalid epsilon={epsilon!r}: with sensitivity {l1:g} the noise scale {scale:.3g} exceeds"
                           f" the samplers' range (0, {MAX_SCALE:g}]; give epsilon >= {l1 / MAX_SCALE:.3g}.")
    return _noised(values, scale, rng, changes, discrete, secure, label, relation, workers, out)


def laplace_with_scale(values: np.ndarray, scale: float, rng, changes=(1,), discrete: bool | None = None,
                       secure: bool = False, label: str = "Laplace", relation: str = "word-level replacement",
                       workers: int = 1, out: np.ndarray | None = None):
    """Like :func:`laplace_mechanism` but with the scale given (e.g. a paper's ``Lap(1/ε)``)."""
    scale = check_scale(scale, "scale")
    values = np.asarray(values)
    if discrete is None:
        discrete = np.issubdtype(values.dtype, np.integer)
    check_coins(rng, secure)
    return _noised(values, scale, rng, changes, discrete, secure, label, relation, workers, out)


def _noised(values, scale: float, rng, changes, discrete: bool, secure: bool, label: str, relation: str, workers: int,
            out):
    """Both front doors' release at ``scale``: the noised values and the event they spent, shown to an observer
    where one watches (a privacy test or a white-box audit, mechanisms/observer.py)."""
    before = values.copy() if observer.active() else None     # out=values noises in place
    noisy = _release(values, scale, rng, discrete, secure, workers, out)
    event = LaplaceEvent(scale=scale, changes=tuple(changes), discrete=bool(discrete), label=label, relation=relation)
    if before is not None:
        noisy = _replaced(noisy, observer.observe(before, noisy, float(sum(changes)), "l1", scale, label, event))
    return noisy, event


def _replaced(noisy: np.ndarray, output: np.ndarray) -> np.ndarray:
    """The output an observer returned, written into ``noisy`` itself (an ``out=`` caller holds that array)."""
    if output is not noisy:
        noisy[...] = output
    return noisy


def discrete_laplace_pmf(x, scale: float):
    """P(X = x) for the discrete Laplace with P ∝ exp(−|x|/scale)."""
    r = math.exp(-1.0 / scale)
    return (1 - r) / (1 + r) * np.power(r, np.abs(np.asarray(x)))
