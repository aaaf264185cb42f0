"""What a random-stopping search's guarantee covers, computed exactly on a toy (Papernot & Steinke 2022).

Each run is binary randomized response at epsilon = 1 on one person's bit (its output is the run's score); the number
of runs K is geometric with mean 10 (the truncated negative binomial with eta = 1, gamma = 0.1, dptopic's default).
For each thing a search might publish, the script computes the output's exact distribution under the two
neighbouring inputs (bit 0 and bit 1) and the smallest epsilon at delta = 1e-5 (the hockey-stick divergence):

* the best run alone (what the theorem covers and what ``RandomStoppingSearch`` publishes);
* K with the best run (what ``n_runs_``, ``privacy_["runs"]`` and ``model.json``'s ``"runs"`` published);
* K with every run's score (``scores_``);
* the best run of a search whose candidates follow a known sequence (a seed): two candidates of different scores,
  the worst of a few sequences shown.

It prints each figure beside the bound the library states for the search (``RandomStoppingEvent.epsilon_at``).

    .venv/bin/python benchmarks/search_exact_toy.py
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from dptopic.accounting.events import PureDPEvent
from dptopic.accounting.tuning import RandomStoppingEvent

GAMMA, EPS_RUN, DELTA, K_MAX = 0.1, 1.0, 1e-5, 2000
P_KEEP = math.exp(EPS_RUN) / (1 + math.exp(EPS_RUN))     # randomized response keeps the bit with this probability
K = np.arange(1, K_MAX + 1)
P_K = GAMMA * (1 - GAMMA) ** (K - 1)                      # geometric K >= 1 of mean 1 / GAMMA


def epsilon_at(p: np.ndarray, q: np.ndarray, delta: float = DELTA) -> float:
    """The smallest epsilon with both hockey-stick divergences of the two output distributions at most delta."""
    def excess(e):
        return max(np.clip(p - math.exp(e) * q, 0, None).sum(), np.clip(q - math.exp(e) * p, 0, None).sum()) - delta
    return 0.0 if excess(0.0) <= 0 else optimize.brentq(excess, 0.0, 200.0)


def one(bit: int) -> float:
    """P(a run scores 1) when the person's bit is ``bit``."""
    return P_KEEP if bit == 1 else 1 - P_KEEP


def best_alone(bit: int) -> np.ndarray:
    zero = float(np.sum(P_K * (1 - one(bit)) ** K))      # every run scored 0
    return np.array([zero, 1 - zero])


def k_and_best(bit: int) -> np.ndarray:
    zero = P_K * (1 - one(bit)) ** K
    return np.concatenate([zero, P_K - zero])


def k_and_scores(bit: int, k_max: int = 400) -> np.ndarray:
    # the number of runs scoring 1 is sufficient for every run's score
    return np.concatenate([P_K[k - 1] * stats.binom.pmf(np.arange(k + 1), k, one(bit)) for k in range(1, k_max)])


def seeded_best(bit: int, sequence: str) -> np.ndarray:
    """The best (candidate, score) when run i uses candidate ``sequence[i % len]``: candidate A scores 0 or 1,
    candidate B 0.25 or 0.75 (each randomized response on the bit)."""
    values = {"A": (0.0, 1.0), "B": (0.25, 0.75)}
    outs = sorted({(c, v) for c in values for v in values[c]}, key=lambda o: o[1])
    at = {o: i for i, o in enumerate(outs)}
    p1, total, cur = one(bit), np.zeros(len(outs)), None
    for i in range(K_MAX):
        c = sequence[i % len(sequence)]
        lo, hi = values[c]
        new = np.zeros(len(outs))
        if cur is None:
            new[at[(c, lo)]] += 1 - p1
            new[at[(c, hi)]] += p1
        else:
            for o, m in zip(outs, cur):
                for v, pv in ((lo, 1 - p1), (hi, p1)):
                    new[at[(c, v)] if v > o[1] else at[o]] += m * pv
        cur = new
        total += P_K[i] * cur
    return total


def main() -> None:
    stated = RandomStoppingEvent((((PureDPEvent(EPS_RUN), 1),),), eta=1.0, gamma=GAMMA).epsilon_at(DELTA)
    print(f"randomized-response runs at epsilon {EPS_RUN:g}, geometric K of mean {1 / GAMMA:g}, delta {DELTA:g}")
    print(f"  the search's stated bound (Papernot & Steinke, Thm 2; RDP):  {stated:.3g}")
    print(f"  exact, the best run alone (what is published):            {epsilon_at(best_alone(0), best_alone(1)):.3g}")
    print(f"  exact, K and the best run:                               {epsilon_at(k_and_best(0), k_and_best(1)):.3g}")
    print(f"  exact, K and every run's score:                          "
          f"{epsilon_at(k_and_scores(0), k_and_scores(1)):.3g}")
    worst = max(("AB", "AAB", "A" + "B" * 20), key=lambda s: epsilon_at(seeded_best(0, s), seeded_best(1, s)))
    print(f"  exact, the best run of a known candidate sequence ({worst}...): "
          f"{epsilon_at(seeded_best(0, worst), seeded_best(1, worst)):.3g}")


if __name__ == "__main__":
    main()
