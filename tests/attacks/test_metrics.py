"""Review of the clustered Clopper-Pearson bound: clusters that hold no trial of the event must not count."""
from __future__ import annotations

import numpy as np

from dptopic.attacks.metrics import clustered_clopper_pearson, empirical_epsilon


def test_one_cluster_holding_every_trial_gives_the_trivial_bounds():
    # all 50 trials in one model: its spread against other models is unknown, so nothing can be bounded (before:
    # v = 0, deff = 1 and df from the 5 empty rows gave [0.52, 0.87] from 40 of 50 trials of ONE model)
    k = np.array([[40], [0], [0], [0], [0], [0]])
    n = np.array([[50], [0], [0], [0], [0], [0]])
    lo, hi = clustered_clopper_pearson(k, n, 0.025)
    assert lo[0] == 0.0 and hi[0] == 1.0


def test_empty_clusters_do_not_narrow_the_bounds():
    k, n = np.array([[3], [7]]), np.array([[10], [10]])
    pad = np.zeros((4, 1))
    a = clustered_clopper_pearson(k, n, 0.025)
    b = clustered_clopper_pearson(np.vstack([k, pad]), np.vstack([n, pad]), 0.025)
    np.testing.assert_allclose(np.ravel(b), np.ravel(a))


def test_one_cluster_with_every_trial_is_anticonservative_no_more():
    rng = np.random.default_rng(1)
    bad = 0
    for _ in range(400):
        kk = rng.binomial(50, rng.beta(2, 2))          # one model's own rate, mean 0.5
        lo, _ = clustered_clopper_pearson(np.array([[kk], [0], [0], [0]]), np.array([[50], [0], [0], [0]]), 0.025)
        bad += lo[0] > 0.5
    assert bad / 400 <= 0.025


def test_members_of_one_model_only_give_no_epsilon_bound():
    # eval half: the members all come from one model; before, their TPR was bounded as if 11 independent trials
    rng = np.random.default_rng(0)
    G, D = 6, 50
    g = np.repeat(np.arange(G), D)
    y = np.zeros(G * D, bool)
    y[g < 2] = True
    y[(g >= 4) & (rng.random(G * D) < .5)] = True
    s = rng.normal(size=G * D) + 2 * y
    r = empirical_epsilon(s, y, groups=g, seed=0)
    assert r["n_members"] == 50 and r["n_models"] == 3     # the members of the evaluated half: one model's
    assert r["epsilon_lower_bound"] == 0.0
