"""FedLDA's sound default ``exclusion="uniform"``: exact likelihood ratios, replacement rate, server-side removal."""
import math

import numpy as np
import pytest

from dptopic.accounting.fedlda import eta_uniform, rrp_event
from dptopic.federated import FedServer
from dptopic.federated.messages import ClientUpdate, vocabulary_fingerprint
from dptopic.mechanisms.rrp import replacement_table, rrp_perturb

from test_federated import _mechanism_matrix, _worst_ratio


@pytest.mark.parametrize("V", [2, 5, 12])
@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 7.5])
def test_every_likelihood_ratio_is_at_most_e_eps_for_any_model(V, eps):
    """Every input word and padding against every other, every output: exactly e^eps at worst, whatever Q."""
    rng = np.random.default_rng(0)
    Qs = np.vstack([np.ones(V), rng.dirichlet(np.full(V, 0.1)), np.r_[1.0, np.full(V - 1, 1e-9)]])
    table = replacement_table(Qs, eps, 0.1, 1.0, "coincide", "uniform")
    e = eta_uniform(eps, V)
    for r in range(Qs.shape[0]):
        M = _mechanism_matrix(table, r, V, e, False, False)
        np.testing.assert_allclose(M.sum(axis=1), 1.0)
        worst = _worst_ratio(M)
        assert worst <= math.exp(eps) * (1 + 1e-9)
        assert worst == pytest.approx(math.exp(eps), rel=1e-9)   # tight
    ev = rrp_event(eps, 0.1, exclusion="uniform", vocab_size=V)
    assert ev.epsilon == eps and "Kairouz" in ev.theorem


def test_replacement_rate_and_uniform_draws():
    rng = np.random.default_rng(5)
    V, n, eps = 40, 200_000, 5.0
    Q = rng.dirichlet(np.full(V, 0.2), size=2)
    words = rng.integers(0, V, n).astype(np.int32)
    words[:1000] = -1                                    # padding is always replaced
    flags = np.empty(n, dtype=np.uint8)
    out, ev = rrp_perturb(words, Q, eps, 0.1, rng=rng, rows=rng.integers(0, 2, n), exclusion="uniform",
                          replaced=flags)
    e = eta_uniform(eps, V)
    real = words >= 0
    assert abs(flags[real].mean() - e) <= 4 * math.sqrt(e * (1 - e) / real.sum())
    assert np.all(flags[~real] == 1) and np.all(out[flags == 0] == words[flags == 0])
    counts = np.bincount(out[flags == 1], minlength=V)   # replacements ignore Q: uniform
    m = counts.sum()
    assert np.all(np.abs(counts - m / V) <= 4.5 * math.sqrt(m / V * (1 - 1 / V)))


def test_server_removes_the_uniform_draws_without_bias():
    rng = np.random.default_rng(2)
    V, K, n, eps = 30, 2, 60_000, 4.0
    p = np.vstack([rng.dirichlet(np.full(V, 0.3)) for _ in range(K)])
    topics = rng.integers(0, K, n)
    words = np.array([rng.choice(V, p=p[k]) for k in topics], dtype=np.int32)
    out, _ = rrp_perturb(words, np.ones((1, V)), eps, 0.1, rng=rng, exclusion="uniform")
    e = eta_uniform(eps, V)
    names = [f"w{i}" for i in range(V)]
    srv = FedServer(names, K, ["a"], n, beta=1e-9, flat_share=e, rng=np.random.default_rng(0))
    srv.receive(ClientUpdate(0, "a", vocabulary_fingerprint(names), topics.astype(np.int32), out).encode())
    srv.aggregate()
    truth = np.vstack([np.bincount(words[topics == k], minlength=V) for k in range(K)]).astype(float)
    n_k = truth.sum(axis=1, keepdims=True)
    se = np.sqrt(n_k * (1 / V) * e * (1 + 1 / V)) / (1 - e) + np.sqrt(truth)   # multinomial noise of both parts
    big = truth > 200                                    # clipping at zero only biases the near-empty cells
    assert np.all(np.abs(srv.counts - truth)[big] <= 4 * se[big])
    # without the removal the counts are flattened: (1 - e) truth + e n_k / V, far from the truth
    raw = np.vstack([np.bincount(out[topics == k], minlength=V) for k in range(K)])
    assert np.abs(raw - truth)[big].mean() > 4 * se[big].mean()
