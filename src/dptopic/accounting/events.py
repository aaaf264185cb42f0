"""Privacy events: descriptions of what one mechanism spent.

Events describe; accountants compose (the ``dp_accounting`` split). Each event
knows its pure-ε cost (for basic composition, Dwork & Roth Thm 3.16), its privacy
loss distribution (PLD, for tight composition) and its Rényi-DP curve (RDP, a
cross-check).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import Int, Real, validate_value
from ..errors import DPTopicError, ParameterError
from ._lazy import dp_event, pld_common, pldlib, rdp_privacy_accountant
from .bounds import EPSILON_MAX

DISCRETIZATION = 1e-4

def _check_event_eps(eps, what: str) -> None:
    validate_value(what, eps, [Real(0, EPSILON_MAX)])


@dataclass(frozen=True)
class LaplaceEvent:
    """Laplace noise of scale ``scale`` added independently to every cell of a released array.

    ``changes`` lists the absolute change of each cell that differs between the worst
    neighbouring pair (word replacement moves one token: ``(1, 1)``), so the L1
    sensitivity is ``sum(changes)`` and ε = L1 / scale. ``discrete`` marks the
    two-sided geometric (discrete Laplace) variant on integers.
    """

    scale: float
    changes: tuple = (1,)
    discrete: bool = False
    label: str = "Laplace"
    relation: str = "word-level replacement"

    def __post_init__(self):
        validate_value("scale", self.scale, [Real(0, None, "neither")])
        if not isinstance(self.changes, tuple) or not self.changes:
            raise DPTopicError(f"invalid changes={self.changes!r}: must be a non-empty tuple of cell changes.")
        for c in self.changes:
            validate_value("changes", c, [Int(1, 10**6)] if self.discrete else [Real(0, 1e6, "right")])

        top = Real(0, EPSILON_MAX)
        if not top.accepts(self.epsilon):   # the epsilon of one release: set by the caller's epsilon, said so
            raise ParameterError("invalid epsilon (sensitivity/scale)={value}: must be {allowed}.", "epsilon",
                                 self.epsilon, allowed=top.describe(),
                                 key="accounting.events.post_init")

    @property
    def l1_sensitivity(self) -> float:
        return float(sum(self.changes))

    @property
    def epsilon(self) -> float:
        return self.l1_sensitivity / self.scale

    def pld(self, discretization: float = DISCRETIZATION):
        plds = []
        try:
            for c in self.changes:
                if self.discrete:
                    plds.append(pldlib.from_discrete_laplace_mechanism(
                        1.0 / self.scale, sensitivity=int(c), value_discretization_interval=discretization))
                else:
                    plds.append(pldlib.from_laplace_mechanism(
                        self.scale, sensitivity=c, value_discretization_interval=discretization))
            out = plds[0]
            for q in plds[1:]:
                out = out.compose(q)
        except OverflowError:  # a composition so long that its grid step (about basic eps / 5e6) overflows exp()
            raise DPTopicError(f"the composed epsilon is too large to compute (a Laplace event of epsilon"
                               f" {self.epsilon:g} on a privacy-loss grid of step {discretization:g}): give fewer"
                               f" events or a smaller epsilon.") from None
        return out

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """Rényi divergence of every order in ``orders``; coordinates compose additively."""
        a = np.asarray(orders, dtype=float)
        total = np.zeros_like(a)
        for c in self.changes:
            total += (_discrete_laplace_rdp(a, 1.0 / self.scale, int(c)) if self.discrete
                      else _laplace_rdp(a, c / self.scale))
        return total

    def describe(self) -> dict:
        return {"type": "discrete_laplace" if self.discrete else "laplace", "label": self.label,
                "scale": self.scale, "changes": list(self.changes), "l1_sensitivity": self.l1_sensitivity,
                "epsilon": self.epsilon, "relation": self.relation}


@dataclass(frozen=True)
class PureDPEvent:
    """A step that is ε-DP by a theorem rather than by added noise (e.g. an exponential
    mechanism such as HDP-LDA's clipped sampling step, ε_I = 2·log(C/β + 1))."""

    eps: float
    label: str = "pure epsilon-DP step"
    theorem: str = ""
    relation: str = "word-level replacement"

    def __post_init__(self):
        _check_event_eps(self.eps, "eps")

    @property
    def epsilon(self) -> float:
        return self.eps

    def pld(self, discretization: float = DISCRETIZATION):
        return pldlib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(self.eps, 0.0),
                                              value_discretization_interval=discretization)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        # Every ε-DP mechanism is a post-processing of binary randomized response with
        # p = e^ε/(1+e^ε) (Kairouz, Oh & Viswanath 2015), whose Rényi divergence is exact.
        e = self.eps
        lp, lq = -np.log1p(np.exp(-e)), -np.log1p(np.exp(e))  # log p, log(1-p)
        a = orders
        return np.logaddexp(a * lp + (1 - a) * lq, a * lq + (1 - a) * lp) / (a - 1)

    def describe(self) -> dict:
        return {"type": "pure_dp", "label": self.label, "epsilon": self.eps, "theorem": self.theorem,
                "relation": self.relation}


def _laplace_rdp(a: np.ndarray, lam: float) -> np.ndarray:
    """Laplace mechanism with ratio ``lam = sensitivity/scale`` (Mironov 2017, Table II)."""
    return (np.logaddexp(np.log(a / (2 * a - 1)) + (a - 1) * lam,
                         np.log((a - 1) / (2 * a - 1)) - a * lam)) / (a - 1)


def _discrete_laplace_rdp(a: np.ndarray, t: float, c: int) -> np.ndarray:
    """Exact Rényi divergence of order ``a`` between the discrete Laplace P(x) ∝ exp(−t|x|) and its
    shift by the integer ``c`` (summed in closed form over x ≤ 0, x ≥ c and the c − 1 points between).

    For c = 1 it is ``[log(e^{(a−1)t} + e^{−a t}) − log(1 + e^{−t})] / (a − 1)``. It lies above the
    continuous Laplace value at the same ratio: the discrete mechanism loses more at equal ε.
    """
    if c == 0:
        return np.zeros_like(a)
    c = abs(c)
    log1pr = np.log1p(np.exp(-t))                        # log(1 + r), r = e^{-t}
    terms = [(a - 1) * t * c - log1pr,                   # x <= 0: log-ratio t·c, mass 1/(1+r)
             -t * c - (a - 1) * t * c - log1pr]          # x >= c: log-ratio −t·c, mass r^c/(1+r)
    log_z = np.log(-np.expm1(-t)) - log1pr               # normaliser (1 − r)/(1 + r)
    for x in range(1, c):                                # 0 < x < c: log-ratio t(c − 2x)
        terms.append(log_z - t * x + (a - 1) * t * (c - 2 * x))
    return np.logaddexp.reduce(np.broadcast_arrays(*terms), axis=0) / (a - 1)


@dataclass(frozen=True)
class ApproxDPEvent:
    """A step that is (ε, δ)-DP by a theorem rather than by noise this library adds and accounts for
    itself: DP set union (Gopi et al. 2020, Thm 5.2/5.3), the FedLDA poster's (ε, 2δ) claim.

    Basic composition adds both ε and δ (the ledger reports ``delta_basic``); the PLD is
    dp-accounting's worst case for (ε, δ)-DP; no Rényi divergence is bounded when δ > 0, so
    its RDP curve is infinite (that route does not apply).
    """

    eps: float
    delta: float
    label: str = "(epsilon, delta)-DP step"
    theorem: str = ""
    relation: str = "word-level replacement"
    unit: str = "word"

    def __post_init__(self):
        _check_event_eps(self.eps, "eps")
        validate_value("delta", self.delta, [Real(0, 1, "left")])

    @property
    def epsilon(self) -> float:
        return self.eps

    @property
    def delta_event(self) -> float:
        return self.delta

    def pld(self, discretization: float = DISCRETIZATION):
        return pldlib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(self.eps, self.delta),
                                              value_discretization_interval=discretization)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        return np.full(np.shape(orders), np.inf)

    def describe(self) -> dict:
        return {"type": "approximate_dp", "label": self.label, "epsilon": self.eps, "delta": self.delta,
                "theorem": self.theorem, "relation": self.relation, "unit": self.unit}


RDP_ORDERS = np.concatenate([np.linspace(1.01, 1.99, 50), np.arange(2, 64, 0.5), np.arange(64, 513, 8)])


# ------------------------------------------------ Poisson-subsampled Gaussian (DP-SVI, the document-level trainers)
# The pessimistic PLD is an upper bound at any grid; for the subsampled Gaussian a 1e-3 grid adds about 0.04% to
# epsilon over 1000 steps (q = 0.01, sigma = 1: 1.8289 instead of 1.8282) and is ~10x faster than 1e-4.
GAUSSIAN_DISCRETIZATION = 1e-3

DOCUMENT_ADD_REMOVE = ("document-level add/remove: D' is D with one document added or removed (Park et al. 2016,"
                     " Sec. 1, 'include/exclude' DP)")

MAX_NOISE_MULTIPLIER = 1000.0

MIN_NOISE_MULTIPLIER = 0.25  # below this the PLD grid explodes; no useful run needs less noise


@dataclass(frozen=True)
class SubsampledGaussianEvent:
    """One Poisson-subsampled Gaussian step, noise std ``noise_multiplier`` × the L2 sensitivity."""

    noise_multiplier: float
    sampling_rate: float
    label: str = "Poisson-subsampled Gaussian"
    relation: str = DOCUMENT_ADD_REMOVE

    approximate = True  # no finite pure epsilon: basic composition needs a share of delta
    min_discretization = GAUSSIAN_DISCRETIZATION  # the ledger builds every event of a composition on this grid or coarser

    def __post_init__(self):
        sigma, q = self.noise_multiplier, self.sampling_rate
        if not (isinstance(sigma, (int, float, np.floating)) and math.isfinite(sigma) and sigma > 0):
            raise DPTopicError(f"invalid noise_multiplier={sigma!r}: must be a finite number > 0.")
        if not (isinstance(q, (int, float, np.floating)) and 0 < q <= 1):
            raise DPTopicError(f"invalid sampling_rate={q!r}: must be a number in (0, 1].")

    def _check_accountable(self) -> None:
        """The PLD/RDP of a step with very little noise would need an astronomically fine grid: refuse it."""
        if self.noise_multiplier > MAX_NOISE_MULTIPLIER:
            raise DPTopicError(
                f"invalid noise_multiplier={self.noise_multiplier:.3g}: the accountant handles"
                f" [{MIN_NOISE_MULTIPLIER:g}, {MAX_NOISE_MULTIPLIER:g}]; give at most {MAX_NOISE_MULTIPLIER:g} (more"
                " noise than that leaves nothing of the signal).")
        if not MIN_NOISE_MULTIPLIER <= self.noise_multiplier:
            raise DPTopicError(
                f"invalid noise_multiplier={self.noise_multiplier:.3g}: the accountant handles"
                f" [{MIN_NOISE_MULTIPLIER:g}, {MAX_NOISE_MULTIPLIER:g}] (below {MIN_NOISE_MULTIPLIER:g} a single"
                " step's privacy loss is too large to account for); add more noise, or train without privacy"
                " (online-vb).")

    @property
    def epsilon(self) -> float:
        return math.inf

    def dp_event(self) -> dp_event.DpEvent:
        g = dp_event.GaussianDpEvent(self.noise_multiplier)
        return g if self.sampling_rate >= 1 else dp_event.PoissonSampledDpEvent(self.sampling_rate, g)

    def epsilon_at(self, delta: float, discretization: float = GAUSSIAN_DISCRETIZATION) -> float:
        """This single step's ε(δ) by PLD (for basic composition with a per-step δ)."""
        return float(self.pld(discretization).get_epsilon_for_delta(delta))

    def pld(self, discretization: float = GAUSSIAN_DISCRETIZATION):
        """Pessimistic PLD on a grid no finer than :data:`GAUSSIAN_DISCRETIZATION`."""
        self._check_accountable()
        return pldlib.from_gaussian_mechanism(self.noise_multiplier, sensitivity=1.0,
                                              sampling_prob=min(1.0, self.sampling_rate),
                                              value_discretization_interval=max(discretization,
                                                                                GAUSSIAN_DISCRETIZATION))

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        """RDP at the integer orders (dp-accounting's exact series, Mironov et al. 2019); ∞ (a valid,
        unused bound) at fractional orders, where dp-accounting's series may not converge."""
        self._check_accountable()
        orders = np.asarray(orders, float)
        out = np.full(orders.shape, np.inf)
        whole = (orders == np.round(orders)) & (orders >= 2)
        if whole.any():
            acc = rdp_privacy_accountant.RdpAccountant(list(orders[whole]))
            acc.compose(self.dp_event())
            out[whole] = np.asarray(acc.rdp, float)
        return out

    def describe(self) -> dict:
        return {"type": "poisson_subsampled_gaussian", "label": self.label,
                "noise_multiplier": self.noise_multiplier, "sampling_rate": self.sampling_rate,
                "dp_accounting_event": "PoissonSampledDpEvent(q, GaussianDpEvent(sigma))",
                "pld_discretization": GAUSSIAN_DISCRETIZATION, "relation": self.relation}


# ------------------------------------------------ randomized response on presence bits (local DP)
LOCAL_DOCUMENT_RELATION = ("any two documents of one contributor (local DP: every input pair); documents are"
                     " reduced to word-presence vectors over the public vocabulary, so word counts and order"
                     " are never reported")


def check_f(f) -> float:
    if isinstance(f, bool) or not isinstance(f, (int, float, np.floating)) or not 0 < f < 1:
        raise ParameterError("invalid {f=}: the flip parameter must lie in (0, 1) (f = 2/(1 + e^eps_word)).", "f", f)
    if math.log((2.0 - f) / f) > EPSILON_MAX if f > 1e-300 else True:
        raise ParameterError("invalid {f=}: so small a flip parameter gives eps_word above {top:g} per word, which"
                             " protects nothing; give {f} >= {least:.3g} or use {epsilon_word}.", "f", f,
                             top=EPSILON_MAX, least=2.0 / (1.0 + math.exp(EPSILON_MAX)))
    return float(f)


def epsilon_from_f(f: float) -> float:
    """Per-word epsilon of randomized response with flip parameter ``f`` (Zhao et al. Thm 4)."""
    f = check_f(f)
    return math.log((2.0 - f) / f)


TINY_MASS = 1e-300
"""Outcomes of the composed bits with probability at most this are not put on the PLD grid: their total (bounded by
this per outcome) is counted as infinite loss instead."""


@dataclass(frozen=True)
class RandomizedResponseEvent:
    """Randomized response on ``n_bits`` presence bits of one document, each flipped with prob. ``f/2``.

    ``n_bits = 1`` describes one word; ``n_bits = V`` one whole document. The worst-case
    pair differs in all ``n_bits`` bits; its privacy loss is ``eps_word · (n_bits − 2J)``
    with ``J ~ Binomial(n_bits, f/2)``, which gives the exact PLD and RDP.
    """

    f: float
    n_bits: int = 1
    label: str = "randomized response on word-presence bits"
    relation: str = LOCAL_DOCUMENT_RELATION

    def __post_init__(self):
        check_f(self.f)
        # n_bits = 0 claimed epsilon 0 and a negative count a negative one (or crashed the PLD): a report has one bit
        # per vocabulary word, at least one
        validate_value("n_bits", self.n_bits, [Int(1, None)])

    @property
    def epsilon_word(self) -> float:
        return epsilon_from_f(self.f)

    @property
    def epsilon(self) -> float:
        return self.n_bits * self.epsilon_word

    def pld(self, discretization: float = DISCRETIZATION):
        if self.n_bits == 1:
            # binary randomized response: with prob. f output a uniform bucket (dp-accounting's definition)
            return pldlib.from_randomized_response(self.f, 2, value_discretization_interval=discretization)
        e, n = self.epsilon_word, self.n_bits
        j = np.arange(n + 1)
        from scipy import stats  # scipy.stats takes about a second to import

        pmf = stats.binom.pmf(j, n, self.f / 2.0)
        keep = pmf > TINY_MASS
        losses = np.ceil(e * (n - 2 * j[keep]) / discretization - 1e-9).astype(np.int64)  # pessimistic rounding
        mass = {}
        for k, m in zip(losses.tolist(), pmf[keep].tolist()):
            mass[k] = mass.get(k, 0.0) + m
        # the outcomes left out (each of mass at most TINY_MASS, underflowed ones included) may carry the largest
        # losses (J = 0 when f is near 1): their mass goes to the infinite loss, pessimistically, not away
        dropped = TINY_MASS * float(np.count_nonzero(~keep))
        return pldlib.PrivacyLossDistribution.create_from_rounded_probability(
            mass, dropped, discretization, pessimistic_estimate=True)

    def rdp(self, orders: np.ndarray) -> np.ndarray:
        # bits are independent: Renyi divergences add; one bit is binary RR with eps_word
        return self.n_bits * PureDPEvent(self.epsilon_word).rdp(orders)

    def describe(self) -> dict:
        return {"type": "randomized_response", "label": self.label, "f": self.f, "flip_probability": self.f / 2,
                "n_bits": self.n_bits, "epsilon_word": self.epsilon_word, "epsilon": self.epsilon,
                "relation": self.relation}
