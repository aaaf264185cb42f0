"""HDP-LDA's releases and its budget: the plan of one run, and the per-iteration ε_L solved from a whole-run total.

One function per release (:func:`hdp_count_release`, :func:`hdp_sampling_step`), one plan (:func:`hdp_plan`), and
one accountant: the total a plan spends is :meth:`ReleasePlan.epsilon <dptopic.accounting.plan.ReleasePlan.epsilon>`,
the headline of a ledger that spent every planned event (the figure ``HDPLDA.privacy_["epsilon"]`` and the privacy
card state). :func:`hdp_total_epsilon` reads it, and :func:`solve_hdp_epsilon_laplace` solves ε_L against it, so that a
run asked for a total spends that total (within :data:`HDP_SPEND_RTOL` below it, never above it), as FedLDA's
per-entry ε is solved against the per-user ledger (:func:`~dptopic.accounting.fedlda.entry_epsilon_for_total`).
"""
from __future__ import annotations

import functools
import math

from .._validation import Int, Real, validate_value
from ..errors import DPTopicError, ParameterError
from ._lazy import rdp_privacy_accountant
from .events import DISCRETIZATION, EPSILON_MAX, RDP_ORDERS, LaplaceEvent, PureDPEvent
from .ledger import MAX_COUNT, WORD_RELATION
from .plan import PlannedRelease, ReleasePlan

_RULES = {"epsilon_laplace": [Real(0, EPSILON_MAX, "right")], "epsilon_inherent": [Real(0, EPSILON_MAX, "right")],
          "n_iter": [Int(1, MAX_COUNT)], "delta": [Real(0, 1, "neither")]}

HDP_THEOREM = ("Zhao et al. 2020, Theorem 3: each iteration is (eps_L + eps_I)-DP, eps_I = 2 log(C/beta + 1);"
               " sound variant: fresh noisy snapshot of the true counts each iteration, frozen as the word"
               " factor for the sweep (docs/privacy.md); adaptive sequential composition over iterations")
"""What HDP-LDA's guarantee rests on (its ledger's and its plan's ``theorem``)."""

HDP_SPEND_RTOL = 1e-3
"""A whole-run total asked of HDP-LDA (``HDPLDA(epsilon=...)``, ``from_budget``) is spent to within this share below
it, never above it, as the privacy card states the total (:func:`solve_hdp_epsilon_laplace`)."""
SOLVE_STEPS = 40
"""At most this many evaluations of the accountant when :func:`solve_hdp_epsilon_laplace` looks for ε_L (it takes two
to four)."""


def _check(**values) -> None:
    for name, v in values.items():
        validate_value(name, v, _RULES[name])


def hdp_iteration_events(epsilon_laplace: float, epsilon_inherent: float, discrete: bool = True):
    """The two events one sound HDP-LDA iteration spends (Zhao et al. 2020 Thm 3; docs/privacy.md)."""
    _check(epsilon_inherent=epsilon_inherent, epsilon_laplace=epsilon_laplace)
    lap = LaplaceEvent(scale=2.0 / epsilon_laplace, changes=(1, 1), discrete=discrete,
                       label="noisy topic-word counts S_i = N + Lap(2/eps_L) (Thm 3, App. D)")
    inh = PureDPEvent(epsilon_inherent, label="clipped topic sampling of the replaced token",
                      theorem="Zhao et al. Theorem 3, eq. (7): eps_I = 2 log(C/beta + 1)")
    return lap, inh


def hdp_count_release(epsilon_laplace: float, discrete: bool, count: int,
                      name: str = "noisy topic-word counts") -> PlannedRelease:
    """HDP-LDA's release each iteration: ``S_i = N + Lap(2/eps_L)`` of the true topic-word counts (discrete Laplace
    for integer counts). Replacing one token's word changes two cells by one each: L1 sensitivity 2, so the Laplace
    mechanism (Dwork & Roth 2014, Thm 3.6) is eps_L-DP (Zhao et al. 2020, Thm 3 and App. D, sound variant)."""
    lap, _ = hdp_iteration_events(epsilon_laplace, 1.0, discrete)
    return PlannedRelease(name, "discrete_laplace" if discrete else "laplace", 2.0, float(lap.scale), lap, int(count))


def hdp_sampling_step(epsilon_inherent: float, count: int) -> PlannedRelease:
    """HDP-LDA's sampling step each iteration: the topic of the replaced token drawn against the frozen clipped
    counts, eps_I = 2 log(C/beta + 1)-DP by Zhao et al. 2020, Theorem 3, eq. (7) (an exponential-mechanism-like step,
    no added noise: sensitivity and scale 0)."""
    _, inh = hdp_iteration_events(1.0, epsilon_inherent, True)
    return PlannedRelease("clipped topic sampling", "pure_dp", 0.0, 0.0, inh, int(count))


def hdp_plan(epsilon_laplace: float | None, epsilon_inherent: float, n_iter: int, discrete: bool = True,
             extra_laplace: int = 0, *, trainer: str = "HDPLDA", budget: tuple | None = None, guarantee: bool = True,
             note: str = "") -> ReleasePlan:
    """HDP-LDA's plan from public numbers alone: ``n_iter`` noisy count releases (:func:`hdp_count_release`) and
    ``n_iter`` sampling steps (:func:`hdp_sampling_step`), plus ``extra_laplace`` more count releases
    (``final_release="fresh"`` adds one); ``epsilon_laplace=None``: the sampling steps alone (what the inherent part
    costs, the ε_L → 0 limit). ``budget``, ``guarantee`` and ``note``: as :class:`~dptopic.accounting.plan.ReleasePlan`
    states them."""
    validate_value("extra_laplace", extra_laplace, [Int(0, 1)])
    _check(epsilon_inherent=epsilon_inherent, n_iter=n_iter)
    T = int(n_iter)
    releases = ()
    if epsilon_laplace is not None:
        releases += (hdp_count_release(epsilon_laplace, discrete, T),)
    releases += (hdp_sampling_step(epsilon_inherent, T),)
    if epsilon_laplace is not None and extra_laplace:
        releases += (hdp_count_release(epsilon_laplace, discrete, int(extra_laplace), "final topic-word counts"),)
    return ReleasePlan(trainer, "word", releases, relation=WORD_RELATION, theorem=HDP_THEOREM, budget=budget,
                       guarantee=guarantee, note=note)


def hdp_total_epsilon(epsilon_laplace, epsilon_inherent, n_iter, delta, discrete=True,
                      discretization=DISCRETIZATION, extra_laplace: int = 0):
    """ε(δ) of ``n_iter`` HDP-LDA iterations (Laplace ε_L plus pure ε_I each), plus ``extra_laplace`` more count
    releases (``final_release="fresh"`` adds one), as the privacy card states it: the plan's total
    (:func:`hdp_plan`, :meth:`~dptopic.accounting.plan.ReleasePlan.epsilon`), the smallest of the PLD, RDP and basic
    figures of a ledger that spent it. ``discretization``: that ledger's PLD grid (the ledger's own by default)."""
    _check(epsilon_laplace=epsilon_laplace, epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta)
    validate_value("extra_laplace", extra_laplace, [Int(0, 1)])
    validate_value("discretization", discretization, [Real(1e-8, 1)])
    plan = hdp_plan(epsilon_laplace, epsilon_inherent, n_iter, discrete, extra_laplace)
    if float(discretization) != plan.discretization:
        plan = ReleasePlan(plan.trainer, plan.unit, plan.releases, relation=plan.relation, theorem=plan.theorem,
                           discretization=float(discretization))
    return plan.epsilon(float(delta))


def smallest_hdp_budget(epsilon_inherent: float, n_iter: int, delta: float) -> float:
    """The ε that the inherent part alone costs over T iterations (the ε_L → 0 limit), by the same accountant as
    :func:`hdp_total_epsilon`: a total at or below it is spent by no ε_L."""
    _check(epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta)
    return hdp_plan(None, epsilon_inherent, n_iter).epsilon(float(delta))


def hdp_iterations_within(epsilon: float, epsilon_inherent: float, delta: float, n_iter: int) -> int:
    """The most iterations, below ``n_iter``, whose inherent part alone (:func:`smallest_hdp_budget`) costs less than
    ``epsilon``: 0 when not one does. For ``n_iter`` iterations that ``epsilon`` does not cover."""
    lo, hi = 0, int(n_iter)         # smallest_hdp_budget(lo) < epsilon <= smallest_hdp_budget(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if smallest_hdp_budget(epsilon_inherent, mid, delta) < epsilon else (lo, mid)
    return lo


HDP_SPEND_TOLERANCE = 1.01
"""A whole-run total HDP-LDA cannot spend to within 1% is refused (:func:`hdp_budget_error`)."""


def hdp_most_epsilon(n_iter: int, epsilon_inherent: float, delta: float, discrete: bool = True,
                     extra_laplace: int = 0) -> float:
    """The most a run of HDP-LDA spends per word: each iteration's noisy release takes at most the epsilon the
    accountants support (``EPSILON_MAX``, 500), composed over ``n_iter`` iterations (:func:`hdp_total_epsilon`)."""
    return float(hdp_total_epsilon(EPSILON_MAX, epsilon_inherent, int(n_iter), float(delta), discrete,
                                   extra_laplace=extra_laplace))


def hdp_budget_error(epsilon: float, n_iter: int, epsilon_inherent: float, delta: float, discrete: bool = True,
                     extra_laplace: int = 0) -> ParameterError | None:
    """HDP-LDA's one rule for a whole-run total per word it cannot spend (``HDPLDA.from_budget``, ``HDPLDA(epsilon=)``,
    ``dptopic.for_unit("word")``, the command line's word unit and ``dptopic recommend``'s "train it"): above what its
    iterations spend at most (:func:`hdp_most_epsilon`), to within :data:`HDP_SPEND_TOLERANCE`, the
    :class:`~dptopic.errors.ParameterError` that refuses it, naming the total given, the most it can spend and what
    to give; else None. A front door names its parameters (``epsilon``, ``n_iter``) with ``message(names)``."""
    most = hdp_most_epsilon(n_iter, epsilon_inherent, delta, discrete, extra_laplace)
    if float(epsilon) <= most * HDP_SPEND_TOLERANCE:
        return None
    return ParameterError("{epsilon=:g} is more than the word-level trainer (HDP-LDA) can spend: each iteration's"
                          " noisy release takes at most epsilon_L = 500 (the accountants' limit), so the run's"
                          " iterations ({n_iter=}) spend at most {most:,.6g} per word at {delta=:g}; give"
                          " {epsilon=most:.6g} or less (more iterations spend more).", "epsilon", float(epsilon),
                          values={"n_iter": int(n_iter), "delta": float(delta)}, most=most)


def solve_hdp_epsilon_laplace(epsilon: float, delta: float, n_iter: int, epsilon_inherent: float,
                              discrete: bool = True, tol: float = HDP_SPEND_RTOL, extra_laplace: int = 0) -> float:
    """The largest per-iteration ε_L whose plan (:func:`hdp_plan`: T × (Laplace(ε_L) + pure ε_I), plus
    ``extra_laplace`` more Laplace(ε_L) releases) spends at most ``epsilon`` at ``delta`` by the accountant that
    reports the total (:func:`hdp_total_epsilon`, the privacy card's figure). What it spends lies within ``tol`` (a
    share of ``epsilon``, :data:`HDP_SPEND_RTOL` by default) below ``epsilon``, never above it; where even ε_L =
    ``EPSILON_MAX`` (the most one release takes) spends less, that is the answer, and the run spends less than asked
    (``dptopic.for_unit`` says so). A total at or below what the inherent part alone costs is refused."""
    validate_value("epsilon", epsilon, [Real(0, None, "neither")])
    validate_value("tol", tol, [Real(1e-9, 0.5)])
    validate_value("extra_laplace", extra_laplace, [Int(0, 1)])
    _check(epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta)
    # remembered: a model's clones and its front doors ask the same question again
    return _solve_hdp_epsilon_laplace(float(epsilon), float(delta), int(n_iter), float(epsilon_inherent),
                                      bool(discrete), float(tol), int(extra_laplace))


@functools.lru_cache(maxsize=256)
def _solve_hdp_epsilon_laplace(epsilon: float, delta: float, n_iter: int, epsilon_inherent: float, discrete: bool,
                               tol: float, extra_laplace: int) -> float:
    T, extra = int(n_iter), int(extra_laplace)
    floor = smallest_hdp_budget(epsilon_inherent, n_iter, delta)
    if floor >= epsilon:
        raise ParameterError(
            "budget too small: {epsilon=:g} cannot cover {n_iter} iterations at {epsilon_inherent=:g} (the inherent part"
            " alone costs {floor:.4g} at {delta=:g}); give {epsilon} > {floor:.4g}, fewer iterations or a smaller"
            " {epsilon_inherent}.", "epsilon", epsilon, values={"epsilon_inherent": epsilon_inherent, "delta": delta},
            n_iter=n_iter, floor=floor)

    def spend(eps_l: float) -> float:      # the accountant that reports the total: one PLD composition, ~1 s
        return hdp_total_epsilon(eps_l, epsilon_inherent, n_iter, delta, discrete, extra_laplace=extra)

    _, inh = hdp_iteration_events(1.0, epsilon_inherent, discrete)
    orders = RDP_ORDERS
    rdp_inh = T * inh.rdp(orders)

    def bound(eps_l: float) -> float:      # milliseconds: RDP and basic composition, each at or above spend(eps_l)
        lap = LaplaceEvent(scale=2.0 / eps_l, changes=(1, 1), discrete=discrete) if eps_l > 0 else None
        rdp = rdp_inh + ((T + extra) * lap.rdp(orders) if lap is not None else 0.0)
        eps, _ = rdp_privacy_accountant.compute_epsilon(orders, rdp, float(delta))
        return min(float(eps), (T + extra) * eps_l + T * float(epsilon_inherent))

    def within_bound(target: float) -> float:
        """The largest ε_L whose bound spends at most ``target``: 0 when none does (log-bisection)."""
        if bound(cap) <= target:
            return cap
        a, b = math.log(1e-9), math.log(cap)
        if bound(math.exp(a)) > target:
            return 0.0
        for _ in range(45):
            m = 0.5 * (a + b)
            a, b = (m, b) if bound(math.exp(m)) <= target else (a, m)
        return math.exp(a)

    cap = float(EPSILON_MAX)
    s_cap = spend(cap)
    if s_cap <= epsilon:
        return cap  # the budget covers the largest epsilon_laplace the accountants support
    goal = epsilon * (1.0 - float(tol))     # what ε_L must spend at least: the answer spends within [goal, epsilon]
    aim = epsilon * (1.0 - 0.1 * float(tol))        # where a guess aims, inside that window
    # the search, on the accountant itself, keeps a bracket: lo spends at most epsilon (ε_L -> 0 spends the floor),
    # hi more. The first guess is where the bound (RDP, basic composition: milliseconds, never below the accountant's
    # figure) spends epsilon: it spends at most epsilon, and in the regime where the total is basic composition (large
    # ε_L) exactly epsilon. The second moves the bound's target by how far the accountant was below it; the later ones
    # are secant steps through the last two. A guess outside the bracket is replaced by regula falsi, every other
    # time by a halving of the bracket. The answer, lo, never spends more than the total asked.
    lo, s_lo, hi, s_hi = 0.0, floor, cap, s_cap
    guess, last = within_bound(epsilon * (1.0 - 1e-12)), None
    for step in range(SOLVE_STEPS):
        if not lo < guess < hi:
            if lo > 0 and step % 2:
                guess = math.sqrt(lo * hi)
            else:
                guess = lo + (aim - s_lo) * (hi - lo) / (s_hi - s_lo)
                guess = guess if lo < guess < hi else 0.5 * (lo + hi)
        s = spend(guess)
        if s <= epsilon:
            lo, s_lo = guess, s
        else:
            hi, s_hi = guess, s
        if s_lo >= goal or hi - lo <= 1e-12 * hi:
            break
        if last is None:
            nxt = within_bound((aim + bound(guess) - s) * (1.0 - 1e-12))
        else:
            nxt = guess + (aim - s) * (guess - last[0]) / (s - last[1]) if s != last[1] else math.nan
        last, guess = (guess, s), nxt
    if lo <= 0:
        raise DPTopicError(f"budget too small: no positive epsilon_laplace fits epsilon={epsilon:g}; give epsilon > {floor:.4g}.")
    return lo
