"""Budget helpers: split a total (ε, δ) over T HDP-LDA iterations with the tight accountant."""
from __future__ import annotations


from .._validation import Int, Real, validate_value
from ..errors import DPTopicError, ParameterError
from .events import EPSILON_MAX, LaplaceEvent, PureDPEvent
from .ledger import MAX_COUNT, compose_pld


_RULES = {"epsilon_laplace": [Real(0, EPSILON_MAX, "right")], "epsilon_inherent": [Real(0, EPSILON_MAX, "right")],
          "n_iter": [Int(1, MAX_COUNT)], "delta": [Real(0, 1, "neither")]}


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


def hdp_total_epsilon(epsilon_laplace, epsilon_inherent, n_iter, delta, discrete=True, discretization=1e-3,
                      extra_laplace: int = 0):
    """Tight ε(δ) of ``n_iter`` HDP-LDA iterations (Laplace ε_L plus pure ε_I each) by PLD, plus
    ``extra_laplace`` more count releases (``final_release="fresh"`` adds one)."""
    _check(epsilon_laplace=epsilon_laplace, epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta)
    validate_value("extra_laplace", extra_laplace, [Int(0, 1)])
    lap, inh = hdp_iteration_events(epsilon_laplace, epsilon_inherent, discrete)
    return compose_pld([(lap, n_iter + extra_laplace), (inh, n_iter)], delta, discretization)


def smallest_hdp_budget(epsilon_inherent: float, n_iter: int, delta: float) -> float:
    """The ε that the inherent part alone costs over T iterations (the ε_L → 0 limit)."""
    _check(epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta)
    return compose_pld([(PureDPEvent(epsilon_inherent), n_iter)], delta, 1e-3)


def hdp_iterations_within(epsilon: float, epsilon_inherent: float, delta: float, n_iter: int) -> int:
    """The most iterations, below ``n_iter``, whose inherent part alone (:func:`smallest_hdp_budget`) costs less than
    ``epsilon``: 0 when not one does. For ``n_iter`` iterations that ``epsilon`` does not cover."""
    lo, hi = 0, int(n_iter)         # smallest_hdp_budget(lo) < epsilon <= smallest_hdp_budget(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if smallest_hdp_budget(epsilon_inherent, mid, delta) < epsilon else (lo, mid)
    return lo


def solve_epsilon_laplace(epsilon: float, delta: float, n_iter: int, epsilon_inherent: float,
                          discrete: bool = True, tol: float = 1e-3, extra_laplace: int = 0) -> float:
    """Largest per-iteration ε_L such that T×(Laplace(ε_L) + pure ε_I), plus ``extra_laplace`` more
    Laplace(ε_L) releases, stays within (ε, δ) by PLD."""
    validate_value("epsilon", epsilon, [Real(0, None, "neither")])
    validate_value("tol", tol, [Real(1e-9, 0.5)])
    validate_value("extra_laplace", extra_laplace, [Int(0, 1)])
    _check(epsilon_inherent=epsilon_inherent, n_iter=n_iter, delta=delta)
    floor = smallest_hdp_budget(epsilon_inherent, n_iter, delta)
    if floor >= epsilon:
        raise ParameterError(
            "budget too small: {epsilon=:g} cannot cover {n_iter} iterations at {epsilon_inherent=:g} (the inherent part"
            " alone costs {floor:.4g} at {delta=:g}); give {epsilon} > {floor:.4g}, fewer iterations or a smaller"
            " {epsilon_inherent}.", "epsilon", epsilon, values={"epsilon_inherent": epsilon_inherent, "delta": delta},
            n_iter=n_iter, floor=floor)
    cap = EPSILON_MAX
    lo, hi = 0.0, min(max(epsilon, 1.0), cap)
    while hdp_total_epsilon(hi, epsilon_inherent, n_iter, delta, discrete, extra_laplace=extra_laplace) <= epsilon:
        if hi >= cap:
            return cap  # the budget covers the largest epsilon_laplace the accountants support
        lo, hi = hi, min(hi * 2, cap)
    while hi - lo > tol * max(lo, 1e-6) and hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if hdp_total_epsilon(mid, epsilon_inherent, n_iter, delta, discrete, extra_laplace=extra_laplace) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo <= 0:
        raise DPTopicError(f"budget too small: no positive epsilon_laplace fits epsilon={epsilon:g}; give epsilon > {floor:.4g}.")
    return lo
