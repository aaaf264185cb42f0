"""The privacy of a hyper-parameter search with a random number of runs (Papernot & Steinke 2022).

N. Papernot and T. Steinke, *Hyperparameter Tuning with Renyi Differential Privacy* (ICLR 2022). A search draws the
number of runs ``K`` from a distribution chosen in advance, runs the private trainer ``K`` times, each time on a
candidate drawn at random, and releases only the best run (scored without reading the private data again). If each
run ``Q`` is (lambda, eps(lambda))-RDP, the whole search is

* ``K`` truncated negative binomial with parameters eta > -1 and gamma in (0, 1) (Theorem 2; eta = 1 is the
  geometric distribution, eta = 0 the logarithmic one), for every lambda > 1 and every lambda_hat >= 1::

      eps'(lambda) = eps(lambda) + (1 + eta) (1 - 1/lambda_hat) eps(lambda_hat) + (1 + eta) log(1/gamma) / lambda_hat
                     + log(E[K]) / (lambda - 1),

  with E[K] = eta (1 - gamma) / (gamma (1 - gamma^eta)) (eta != 0) or (1/gamma - 1) / log(1/gamma) (eta = 0);
* ``K`` Poisson with mean mu (Theorem 6): eps'(lambda) = eps(lambda) + mu delta_hat + log(mu) / (lambda - 1), where
  Q is (eps_hat, delta_hat)-DP with eps_hat = log(1 + 1/(lambda - 1)).

``Q`` draws its candidate at random, so its Renyi divergence is at most the largest of the candidates' (Renyi
divergence is jointly quasi-convex): eps(lambda) is the pointwise maximum of the candidates' RDP curves. The
search's RDP curve is then converted to (epsilon, delta) as every other curve here. :class:`RandomStoppingEvent`
is the event a search spends; the dataset ledger and ``privacy verify`` rebuild it from its description.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import Real, validate_value
from ..errors import DPTopicError, ParameterError
from ._lazy import pld_common, pldlib, rdp_privacy_accountant
from .events import GAUSSIAN_DISCRETIZATION, RDP_ORDERS
from .ledger import effective_discretization

DISTRIBUTIONS = ("truncated_negative_binomial", "poisson")
PLD_DELTA = 1e-10
"""The delta at which the search's RDP curve is turned into an (epsilon, delta) pair for a privacy loss distribution
(``pld``), so that a search composes with other releases by PLD too (the RDP route stays the tighter one)."""


def expected_runs(distribution: str, eta: float = 1.0, gamma: float = 0.1, mu: float = 0.0) -> float:
    """E[K] of the number of runs."""
    if distribution == "poisson":
        return float(mu)
    if eta == 0:
        return (1.0 / gamma - 1.0) / math.log(1.0 / gamma)
    return eta * (1.0 - gamma) / (gamma * (1.0 - gamma ** eta))


EXPECTED_RUNS_RANGE = (1.0, 1e6)
"""The mean number of runs a private search may have, ``(low, high]``: above 1 (a search of at most one run on average
compares nothing: one fit costs less) and at most 10^6 (a mean beyond it runs for days or, as ``gamma`` nears 0, until
the process is killed; the bound's ``log(E[K])`` term grows with it). One rule for ``RandomStoppingSearch``, the
mean ``dptopic search`` takes and ``budget plan``'s ``search_runs``."""

_RUNS_SLACK = 1e-9      # 1 / (1 / 1e6) is 1e6 within a rounding error: not refused for it


def check_expected_runs(mean, name: str = "expected_runs", value=None, **values) -> float:
    """``mean`` (the mean number of runs of a search) as a float, refused in one line naming ``name`` (a
    :class:`~dptopic.errors.ParameterError`; ``value``: the value of ``name`` the line shows, when ``mean`` is
    computed from it, with ``values`` the other parameters it was computed from) unless it lies in
    :data:`EXPECTED_RUNS_RANGE`."""
    low, high = EXPECTED_RUNS_RANGE
    try:
        m = float(mean)
    except (TypeError, ValueError, OverflowError):
        m = math.nan
    if isinstance(mean, bool) or not (low < m <= high * (1 + _RUNS_SLACK)):
        given = mean if value is None else value
        what = ("{%s=}" % name) if value is None else ("{%s=}" % name + "".join(", {%s=}" % k for k in values)
                                                        + f" gives a mean of {m:.3g} runs")
        hint = f" (at eta = 1, gamma in [{1 / high:g}, 1))" if name == "gamma" else ""
        raise ParameterError(what + f": a private search's mean number of runs must lie in ({low:g}, {high:g}]: more"
                                    " than 1 (else it compares nothing) and at most 10^6 (else it runs for days, or"
                                    f" until killed); give a mean in that range{hint} (docs/budget.md).",
                             name, given, values=values)
    return m


def geometric_gamma(mean, name: str = "expected_runs") -> float:
    """The ``gamma`` of the geometric number of runs (eta = 1, K >= 1) whose mean is ``mean``: E[K] = 1/gamma
    (:func:`expected_runs`), ``mean`` checked by :func:`check_expected_runs` (refused naming ``name``)."""
    return 1.0 / check_expected_runs(mean, name)


def check_search(distribution: str, eta, gamma, mu) -> float:
    """A search's distribution of runs checked as the theorem takes it (:func:`check_distribution`) and its mean
    within :data:`EXPECTED_RUNS_RANGE` (refused naming ``gamma``, or ``mu`` for a Poisson); returns the mean."""
    check_distribution(distribution, eta, gamma, mu)
    if distribution == "poisson":
        return check_expected_runs(mu, "mu")
    return check_expected_runs(expected_runs(distribution, float(eta), float(gamma)), "gamma", gamma, eta=eta)


def check_distribution(distribution: str, eta, gamma, mu) -> None:
    """The distribution of runs and its parameters as Papernot & Steinke's theorems take them (an event's, read
    again from a ledger, too); a search's own mean is bounded on top of this by :func:`check_search`."""
    if distribution not in DISTRIBUTIONS:
        raise DPTopicError(f"invalid distribution={distribution!r}: give one of {', '.join(DISTRIBUTIONS)}.")
    if distribution == "poisson":
        validate_value("mu", mu, [Real(0, 1e6, "neither")])
    else:
        # eta in (-1, 0) is allowed by the theorem; this library samples eta = 0 (logarithmic) and eta > 0 only
        validate_value("eta", eta, [Real(0, 1e3, "both")])
        validate_value("gamma", gamma, [Real(0, 1, "neither")])


def sample_runs(rng: np.random.Generator, distribution: str, eta: float = 1.0, gamma: float = 0.1,
                mu: float = 0.0) -> int:
    """One draw of K (Papernot & Steinke 2022, Sec. 2): Poisson may give 0 (nothing is released)."""
    if distribution == "poisson":
        return int(rng.poisson(mu))
    if eta == 0:
        return int(rng.logseries(1.0 - gamma))
    while True:     # the negative binomial conditioned on K >= 1 (its pmf is the truncated one's)
        k = int(rng.negative_binomial(eta, gamma))
        if k >= 1:
            return k


def _groups_rdp(groups, orders) -> np.ndarray:
    out = np.zeros(len(orders))
    for e, n in groups:
        out = out + n * np.asarray(e.rdp(orders), dtype=float)
    return out


@dataclass(frozen=True)
class RandomStoppingEvent:
    """A search of K runs (K from ``distribution``), each of a candidate plan drawn at random from ``candidates``
    (each a tuple of ``(event, count)``), the best run released (Papernot & Steinke 2022, Thm 2 and Thm 6)."""

    candidates: tuple
    distribution: str = "truncated_negative_binomial"
    eta: float = 1.0
    gamma: float = 0.1
    mu: float = 0.0
    label: str = "private hyper-parameter search with a random number of runs (Papernot & Steinke 2022)"
    relation: str = "the relation of the runs' trainer"

    approximate = True      # no pure epsilon: basic composition charges it its epsilon at a share of delta
    min_discretization = GAUSSIAN_DISCRETIZATION

    def __post_init__(self):
        check_distribution(self.distribution, self.eta, self.gamma, self.mu)
        if not self.candidates or not all(isinstance(c, tuple) and c for c in self.candidates):
            raise DPTopicError("a search needs at least one candidate plan of (event, count) pairs.")

    @property
    def epsilon(self) -> float:
        return math.inf

    @property
    def expected_runs(self) -> float:
        return expected_runs(self.distribution, self.eta, self.gamma, self.mu)

    def base_rdp(self, orders) -> np.ndarray:
        """One run's RDP curve: the largest of the candidates' at each order."""
        orders = np.asarray(orders, dtype=float)
        return np.max([_groups_rdp(c, orders) for c in self.candidates], axis=0)

    def _delta_hat(self, eps_hat: float) -> float:
        worst = 0.0
        for c in self.candidates:
            step = effective_discretization(list(c), 1e-3)
            total = None
            for e, n in c:
                p = e.pld(step)
                p = p.self_compose(n) if n > 1 else p
                total = p if total is None else total.compose(p)
            worst = max(worst, float(total.get_delta_for_epsilon(eps_hat)))
        return worst

    def rdp(self, orders) -> np.ndarray:
        orders = np.asarray(orders, dtype=float)
        with np.errstate(all="ignore"):
            base = self.base_rdp(orders)
            log_ek = math.log(self.expected_runs) if self.expected_runs > 0 else -math.inf
            if self.distribution == "poisson":
                out = np.full(orders.shape, np.inf)
                for i, lam in enumerate(orders):
                    if np.isfinite(base[i]):
                        out[i] = base[i] + self.mu * self._delta_hat(math.log1p(1.0 / (lam - 1.0))) + log_ek / (lam - 1.0)
                return out
            hats = RDP_ORDERS
            base_hat = self.base_rdp(hats)
            extra = (1 + self.eta) * (1 - 1 / hats) * base_hat + (1 + self.eta) * math.log(1 / self.gamma) / hats
            best = float(np.min(extra[np.isfinite(extra)])) if np.isfinite(extra).any() else math.inf
            return base + best + log_ek / (orders - 1.0)

    def epsilon_at(self, delta: float) -> float:
        eps, _ = rdp_privacy_accountant.compute_epsilon(RDP_ORDERS, self.rdp(RDP_ORDERS), delta)
        return float(eps)

    def pld(self, discretization: float = GAUSSIAN_DISCRETIZATION):
        eps = self.epsilon_at(PLD_DELTA)
        if not math.isfinite(eps) or eps > 500:
            raise DPTopicError("the search's epsilon is too large to compose by PLD; its RDP figure stands.")
        return pldlib.from_privacy_parameters(pld_common.DifferentialPrivacyParameters(eps, PLD_DELTA),
                                              value_discretization_interval=max(discretization,
                                                                                GAUSSIAN_DISCRETIZATION))

    def describe(self) -> dict:
        return {"type": "random_stopping", "label": self.label, "distribution": self.distribution,
                "eta": self.eta, "gamma": self.gamma, "mu": self.mu, "expected_runs": self.expected_runs,
                "theorem": "Papernot & Steinke 2022, Theorem 2 (truncated negative binomial) / Theorem 6 (Poisson)",
                "candidates": [[dict(e.describe(), count=int(n)) for e, n in c] for c in self.candidates],
                "relation": self.relation}


def event_from(d: dict, rebuild) -> RandomStoppingEvent:
    """The event a ``random_stopping`` description gives; ``rebuild`` turns a candidate's event description back into
    its event."""
    cands = d.get("candidates")
    if not isinstance(cands, list) or not cands or not all(isinstance(c, list) and c for c in cands):
        raise DPTopicError("a random-stopping event lists no candidate plans")
    out = []
    for c in cands:
        plan = []
        for e in c:
            n = e.get("count") if isinstance(e, dict) else None
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise DPTopicError("a random-stopping candidate's event has no whole count >= 1")
            plan.append((rebuild(e), n))
        out.append(tuple(plan))
    num = {k: d.get(k) for k in ("eta", "gamma", "mu")}
    for k, v in num.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise DPTopicError(f"a random-stopping event's {k!r} is not a number")
    return RandomStoppingEvent(tuple(out), str(d.get("distribution")), float(num["eta"]), float(num["gamma"]),
                               float(num["mu"]), **{k: d[k] for k in ("label", "relation") if isinstance(d.get(k), str)})
