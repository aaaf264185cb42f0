"""Budget helpers: split a total (ε, δ) over T HDP-LDA iterations with the tight accountant."""
from __future__ import annotations


from ..errors import DPTopicError
from .events import LaplaceEvent, PureDPEvent
from .ledger import compose_pld


def hdp_iteration_events(epsilon_laplace: float, epsilon_inherent: float, discrete: bool = True):
    """The two events one sound HDP-LDA iteration spends (Zhao et al. 2020 Thm 3; docs/privacy.md)."""
    lap = LaplaceEvent(scale=2.0 / epsilon_laplace, changes=(1, 1), discrete=discrete,
                       label="noisy topic-word counts S_i = N + Lap(2/eps_L) (Thm 3, App. D)")
    inh = PureDPEvent(epsilon_inherent, label="clipped topic sampling of the replaced token",
                      theorem="Zhao et al. Theorem 3, eq. (7): eps_I = 2 log(C/beta + 1)")
    return lap, inh


def hdp_total_epsilon(epsilon_laplace, epsilon_inherent, n_iter, delta, discrete=True, discretization=1e-3,
                      extra_laplace: int = 0):
    """Tight ε(δ) of ``n_iter`` HDP-LDA iterations plus ``extra_laplace`` more count releases
    (``final_release="fresh"`` adds one)."""
    lap, inh = hdp_iteration_events(epsilon_laplace, epsilon_inherent, discrete)
    return compose_pld([(lap, n_iter + extra_laplace), (inh, n_iter)], delta, discretization)


def smallest_hdp_budget(epsilon_inherent: float, n_iter: int, delta: float) -> float:
    """The ε that the inherent part alone costs over T iterations (the ε_L → 0 limit)."""
    return compose_pld([(PureDPEvent(epsilon_inherent), n_iter)], delta, 1e-3)


def solve_epsilon_laplace(epsilon: float, delta: float, n_iter: int, epsilon_inherent: float,
                          discrete: bool = True, tol: float = 1e-3, extra_laplace: int = 0) -> float:
    """Largest per-iteration ε_L such that T×(Laplace(ε_L) + pure ε_I), plus ``extra_laplace`` more
    Laplace(ε_L) releases, stays within (ε, δ) by PLD."""
    if not epsilon > 0:
        raise DPTopicError(f"invalid epsilon={epsilon!r}: must be a number > 0.")
    if not 0 < delta < 1:
        raise DPTopicError(f"invalid delta={delta!r}: must be a number in (0, 1).")
    floor = smallest_hdp_budget(epsilon_inherent, n_iter, delta)
    if floor >= epsilon:
        raise DPTopicError(
            f"budget too small: epsilon={epsilon:g} cannot cover {n_iter} iterations at epsilon_inherent={epsilon_inherent:g}"
            f" (the inherent part alone costs {floor:.4g} at delta={delta:g}); give epsilon > {floor:.4g},"
            f" fewer iterations or a smaller epsilon_inherent.")
    lo, hi = 0.0, max(epsilon, 1.0)
    while hdp_total_epsilon(hi, epsilon_inherent, n_iter, delta, discrete, extra_laplace=extra_laplace) <= epsilon:
        lo, hi = hi, hi * 2
    while hi - lo > tol * max(lo, 1e-6) and hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if hdp_total_epsilon(mid, epsilon_inherent, n_iter, delta, discrete, extra_laplace=extra_laplace) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo <= 0:
        raise DPTopicError(f"budget too small: no positive epsilon_laplace fits epsilon={epsilon:g}; give epsilon > {floor:.4g}.")
    return lo
