import hashlib

import numpy as np
import pytest
from scipy import stats

from dptopic.errors import DPTopicError
from dptopic.contributor import secure_sum as cs
from dptopic.protocol import secure_sum as ss


def fixed_secrets(i: int, phases: int = 1) -> cs.ContributorSecrets:
    h = lambda tag: hashlib.sha256(f"{tag}/{i}".encode()).digest()  # noqa: E731
    return cs.ContributorSecrets(h("c"), [h(f"s{p}") for p in range(phases)], [h(f"b{p}") for p in range(phases)])


def round_of(n: int):
    ids = [f"c{i:03d}" for i in range(n)]
    sec = {i: fixed_secrets(k) for k, i in enumerate(ids)}
    roster = {i: sec[i].public() for i in ids}
    held = {i: {} for i in ids}
    for s in ids:
        for v, ct in cs.make_shares(s, sec[s], roster, "r").items():
            held[v][s] = cs.open_shares(v, sec[v], roster, "r", s, ct)
    return ids, sec, roster, held


@pytest.mark.parametrize("dropped", [0, 3])
def test_the_sum_is_exact_with_and_without_dropouts(dropped):
    ids, sec, roster, held = round_of(24)
    rng = np.random.default_rng(1)
    xs = {i: rng.integers(-10**6, 10**6, 500) for i in ids}
    up = ids[dropped:]
    total = ss.ring_sum(cs.mask(xs[i], i, sec[i], roster, "r", 0, ids) for i in up)
    logs = {i: cs.RevealLog() for i in ids}
    responses = {i: logs[i].answer(0, held[i], up, set(ids) - set(up)) for i in up}
    assert np.array_equal(ss.unmask_sum(total, roster, "r", 0, ids, up, responses), sum(xs[i] for i in up))


def test_too_few_shares_cannot_unmask():
    ids, sec, roster, held = round_of(24)
    total = ss.ring_sum(cs.mask(np.zeros(10, np.int64), i, sec[i], roster, "r", 0, ids) for i in ids)
    few = {i: cs.RevealLog().answer(0, held[i], ids, []) for i in ids[:3]}
    with pytest.raises(DPTopicError, match="shares needed"):
        ss.unmask_sum(total, roster, "r", 0, ids, ids, few)


def test_uploads_are_uniform_and_tell_nothing_of_their_statistic():
    ids, sec, roster, _ = round_of(12)
    zero = cs.mask(np.zeros(40_000, np.int64), ids[0], sec[ids[0]], roster, "r", 0, ids)
    signal = np.random.default_rng(2).integers(0, 2**20, 40_000)
    other = cs.mask(signal, ids[0], sec[ids[0]], roster, "r", 0, ids)
    for upload in (zero, other):
        for shift in (0, 24):          # low and high byte uniform
            counts = np.bincount((upload >> shift) & 0xFF, minlength=256)
            assert stats.chisquare(counts).pvalue > 1e-4
    # the two uploads' distributions cannot be told apart
    assert stats.ks_2samp(zero, other).pvalue > 1e-4


def test_reveal_log_never_gives_both_secrets_of_one_contributor():
    ids, sec, roster, held = round_of(12)
    log = cs.RevealLog()
    me = ids[0]
    first = log.answer(0, held[me], uploaded=ids, dropped=[])
    assert {a["kind"] for a in first.values()} == {"b"}
    with pytest.raises(DPTopicError, match="after the other one"):
        log.answer(0, held[me], uploaded=[], dropped=ids)


def test_noise_shares_add_up_to_the_calibrated_noise():
    from dptopic.mechanisms.skellam import skellam_share

    plan = ss.SecureSumPlan(1.0, 1e-5, 40, 4, 50)
    rng = np.random.default_rng(3)
    total = sum(skellam_share(np.zeros(20_000, np.int64), plan.mu_shares[1], plan.scale, rng)[0]
                for _ in range(plan.honest))
    want = 2 * plan.calibrated()[0][1]          # variance of Sk(mu)
    se = want * np.sqrt(2 / len(total))
    assert abs(total.var() - want) < 4 * se


def test_randomized_rounding_is_unbiased_and_bounded():
    from dptopic.accounting.skellam import rounded_norms

    rng = np.random.default_rng(4)
    x = rng.random(300)
    x /= np.linalg.norm(x)
    bound = rounded_norms(64.0, 300)[0]
    qs = np.array([cs.quantize(x, 64.0, bound, rng) for _ in range(400)])
    assert (np.sqrt((qs.astype(float) ** 2).sum(axis=1)) <= bound).all()
    assert abs(qs.mean(axis=0) - 64 * x).max() < 4 * 0.5 / np.sqrt(400)


def test_triangle_keeps_the_frobenius_norm():
    m = np.random.default_rng(5).random((6, 6))
    m = m + m.T
    v = ss.matrix_to_triangle(m)
    assert np.isclose(np.linalg.norm(v), np.linalg.norm(m))
    assert np.allclose(ss.triangle_to_matrix(v, 6), m)


def test_the_neighbour_graph_is_regular_and_symmetric():
    roster = {f"c{i}": fixed_secrets(i).public() for i in range(200)}
    g = ss.neighbour_graph(roster)
    d = ss.degree_for(200)
    assert all(len(v) == d for v in g.values())
    assert all(u in g[v] for u in g for v in g[u])
