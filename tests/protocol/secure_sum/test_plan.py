"""``dptopic.protocol.secure_sum.plan``: a round's plan, its ring and scale, its noise shares, what it states and what
it refuses."""
import math

import numpy as np
import pytest

from dptopic.errors import DPTopicError, ParameterError
from dptopic.protocol.secure_sum.graph import LIVENESS_TARGET, neighbours_short, threshold_of
from dptopic.protocol.secure_sum.plan import DEFAULT_MAX_WORDS, MAX_INFLATION, MAX_WORDS, WRAP_SHARE, SecureSumPlan
from dptopic.protocol.secure_sum.ring import triangle_size


def test_the_plan_chooses_its_ring_and_scale():
    """32 bits while they cost at most 1% of noise; 64 bits beyond, where a million contributors get the central
    figure's noise (1.67 times it modulo 2^32, over all V = 1,000 words) and ten million a plan at all (refused modulo
    2^32)."""
    small = SecureSumPlan(1.0, 1e-5, 1000, 100, 1000)
    assert small.bits == 32 and small.scale == 2 ** 16 and small.noise_inflation <= MAX_INFLATION
    million = SecureSumPlan(1.0, 1e-5, 10 ** 6, 10 ** 5, 1000)
    assert million.bits == 64 and million.noise_inflation <= 1.05
    assert million.calibrated()[1] <= million.delta * WRAP_SHARE
    old = SecureSumPlan(1.0, 1e-5, 10 ** 6, 10 ** 5, 1000, bits=32, max_words=MAX_WORDS)
    assert old.scale == 2 ** 8 and old.noise_inflation == pytest.approx(1.67, abs=0.01)
    assert million.mu_shares[1] / million.scale ** 2 < old.mu_shares[1] / old.scale ** 2 / 2.5
    ten = SecureSumPlan(1.0, 1e-5, 10 ** 7, 10 ** 6, 1000)
    assert ten.bits == 64 and ten.noise_inflation <= 1.05
    with pytest.raises(DPTopicError, match="wrap-around"):
        SecureSumPlan(1.0, 1e-5, 10 ** 7, 10 ** 6, 1000, bits=32, max_words=MAX_WORDS).calibrated()
    card = million.to_dict()        # what the card's parameters and /v1/config state
    assert card["modulus_bits"] == 64 and card["noise_inflation"] <= 1.05 and "wrap_probability" in card
    assert SecureSumPlan.from_dict(card) == million
    with pytest.raises(DPTopicError, match="scale"):
        SecureSumPlan.from_dict({**card, "scale": 256.0})
    with pytest.raises(ParameterError, match="bits"):
        SecureSumPlan(1.0, 1e-5, 1000, 100, 1000, bits=16)


def test_the_plan_survives_its_dropouts_and_refuses_what_it_cannot():
    plan = SecureSumPlan(1.0, 1e-5, 3000, 300, 200)
    d, T = plan.degree, plan.threshold
    assert d % 2 == 0 and T == d // 2 + plan.collusion + 1 and T <= d
    assert neighbours_short(3000, 300, d, T) <= LIVENESS_TARGET
    assert neighbours_short(3000, 300, d - 2, threshold_of(d - 2, plan.collusion)) > LIVENESS_TARGET
    assert SecureSumPlan(1.0, 1e-5, 3000, 900, 200).degree > d        # 30% dropping out needs more neighbours
    with pytest.raises(ParameterError, match="no neighbour graph survives"):
        SecureSumPlan(1.0, 1e-5, 40, 15, 50, collusion=6)
    with pytest.raises(ParameterError, match="epsilon"):
        SecureSumPlan(1e308, 1e-5, 40, 4, 50)


def test_the_noise_leaves_out_the_colluders_and_the_persons_own_share():
    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3)
    assert plan.honest == 40 - 4 - 3 - 1
    eps = [e for _, e in plan.epsilon_by_colluders()]
    assert eps[-1] == pytest.approx(1.0, rel=1e-3) and all(a < b for a, b in zip(eps, eps[1:]))


def test_noise_shares_add_up_to_the_planned_noise():
    from dptopic.mechanisms.skellam import skellam_share

    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3)
    rng = np.random.default_rng(0)
    total = sum(skellam_share(np.zeros(20_000, np.int64), plan.mu_shares[1], plan.scale, rng)[0]
                for _ in range(plan.honest))
    var = 2 * plan.calibrated()[0][1]
    assert abs(total.var() / var - 1) < 5 * math.sqrt(2 / 20_000)


def test_a_stated_plan_is_recomputed_and_a_tampered_one_refused():
    plan = SecureSumPlan(1.0, 1e-5, 40, 4, 50, collusion=3)
    assert SecureSumPlan.from_dict(plan.to_dict()) == plan
    for key, value in (("threshold", plan.threshold - 1), ("degree", 4), ("mu_shares", [1.0, 1.0]),
                       ("protocol", "dptopic-secure-sum/1"), ("collusion", "3"), ("epsilon", float("nan"))):
        with pytest.raises(DPTopicError):
            SecureSumPlan.from_dict({**plan.to_dict(), key: value})
    with pytest.raises(DPTopicError, match="not an object"):
        SecureSumPlan.from_dict([1, 2])


def test_a_plan_caps_the_words_of_its_second_sum_and_states_the_cap():
    """``max_words`` bounds the second sum's triangle (default 256 words), is checked, stated in ``/v1/config`` and
    read back; a plan over fewer words than the cap sums them all; the smaller triangle needs a little less noise."""
    plan = SecureSumPlan(1.0, 1e-5, 100_000, 10_000, 1000)
    assert plan.max_words == DEFAULT_MAX_WORDS == 256 and plan.max_kept_words == 256
    assert plan.dims == (1001, triangle_size(256)) and plan.upload_bytes(plan.dims[1]) == 4 * 32_896
    assert plan.bits == 32 and uncapped_bits(plan) == 64     # the smaller triangle rounds in 2^32 at 1% inflation
    uncapped = SecureSumPlan(1.0, 1e-5, 100_000, 10_000, 1000, max_words=MAX_WORDS)
    assert uncapped.max_kept_words == 1000 and plan.mu_shares[1] < uncapped.mu_shares[1]
    assert SecureSumPlan(1.0, 1e-5, 100, 10, 50).max_kept_words == 50
    stated = plan.to_dict()
    assert stated["max_words"] == 256 and SecureSumPlan.from_dict(stated) == plan
    older = {**uncapped.to_dict(), "max_words": MAX_WORDS}       # a server of the first version stated 2,000
    assert SecureSumPlan.from_dict(older) == uncapped
    with pytest.raises(DPTopicError, match="noise shares differ"):      # a cap changes the noise a contributor checks
        SecureSumPlan.from_dict({**stated, "max_words": 300})
    for bad in (1, 2001, 2.5, True, "256"):
        with pytest.raises(ParameterError, match="max_words"):
            SecureSumPlan(1.0, 1e-5, 100, 10, 50, max_words=bad)


def uncapped_bits(plan) -> int:
    """The ring the same plan chooses over every word (``max_words`` at :data:`~MAX_WORDS`)."""
    return SecureSumPlan(plan.epsilon, plan.delta, plan.n, plan.dropouts, plan.vocab_size,
                            max_words=MAX_WORDS).bits
