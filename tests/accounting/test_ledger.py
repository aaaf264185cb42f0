
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dptopic.accounting import LaplaceEvent, PrivacyLedger, PureDPEvent, compose_rdp
from dptopic.accounting.events import ApproxDPEvent
from dptopic.accounting.gaussian import SubsampledGaussianEvent
from dptopic.accounting.ledger import compose_pld
from dptopic.accounting.set_union import fdptm_report
from dptopic.errors import BudgetExceededError, DPTopicError
from helpers import NASTY, works_or_refuses


def test_hundred_laplace_reference_numbers():
    led = PrivacyLedger()
    led.spend(LaplaceEvent(scale=10.0), 100)  # eps = 0.1 each
    assert led.epsilon_basic() == pytest.approx(10.0, abs=1e-12)
    assert led.epsilon_tight(1e-5) == pytest.approx(4.22, abs=0.01)
    rdp = led.epsilon_rdp(1e-5)
    assert 4.22 < rdp < 6  # RDP is valid but looser than the PLD


def test_pure_events_through_pld_and_composition_order():
    led = PrivacyLedger()
    led.spend(PureDPEvent(1.0), 10)
    basic, tight = led.epsilon_basic(), led.epsilon_tight(1e-5)
    assert basic == 10.0 and tight < basic
    # a single pure event is tight already
    one = PrivacyLedger()
    one.spend(PureDPEvent(2.0))
    assert one.epsilon_tight(1e-9) == pytest.approx(2.0, abs=1e-3)


def test_ledger_budget_refuses():
    led = PrivacyLedger(budget=(1.0, 0.0))
    led.spend(PureDPEvent(0.6))
    with pytest.raises(BudgetExceededError, match="budget"):
        led.spend(PureDPEvent(0.6))
    assert led.epsilon_basic() == pytest.approx(0.6)
    tight = PrivacyLedger(budget=(5.0, 1e-5))
    tight.spend(LaplaceEvent(scale=10.0), 100)  # basic 10 > 5, but PLD 4.22 <= 5
    with pytest.raises(BudgetExceededError):
        tight.spend(LaplaceEvent(scale=10.0), 100)


def test_report_fields():
    led = PrivacyLedger(unit="word", relation="word-level replacement", theorem="Thm X")
    led.spend(LaplaceEvent(scale=1.0, changes=(1, 1), discrete=True), 3)
    rep = led.report(1e-5)
    for key in ("unit", "neighbouring_relation", "theorem", "epsilon_basic", "epsilon_pld", "epsilon_rdp", "delta",
                "accounting", "events"):
        assert key in rep
    assert rep["epsilon_basic"] == pytest.approx(6.0) and rep["events"][0]["count"] == 3
    with pytest.raises(DPTopicError, match="delta"):
        led.report(1.5)


def test_the_pld_memo_answers_only_the_same_composition_and_never_a_mutable_event():
    """compose_pld remembers earlier answers by the events' whole frozen description: an equal composition gets the
    same figure, a different one (count, sigma, delta) its own, and an event that could change is always composed."""
    from dptopic.accounting import ledger
    from dptopic.accounting.gaussian import SubsampledGaussianEvent

    ev = SubsampledGaussianEvent(2.0, 0.1)
    a = ledger.compose_pld([(ev, 10)], 1e-5)
    assert ledger.compose_pld([(SubsampledGaussianEvent(2.0, 0.1), 10)], 1e-5) == a
    assert ledger.compose_pld([(ev, 20)], 1e-5) > a
    assert ledger.compose_pld([(SubsampledGaussianEvent(2.5, 0.1), 10)], 1e-5) < a
    assert ledger.compose_pld([(ev, 10)], 1e-3) < a
    ledger._MEMO.clear()
    assert ledger.compose_pld([(ev, 10)], 1e-5) == a                    # recomputed, the same

    class Mutable:                                                      # a user's event: never remembered
        def __init__(self, eps):
            self.epsilon = eps

        def pld(self, d):
            return PureDPEvent(self.epsilon).pld(d)

        def rdp(self, orders):
            return PureDPEvent(self.epsilon).rdp(orders)

        def describe(self):
            return {"type": "mutable", "epsilon": self.epsilon}

    m = Mutable(1.0)
    one = ledger.compose_pld([(m, 3)], 1e-5)
    m.epsilon = 2.0
    assert ledger.compose_pld([(m, 3)], 1e-5) > one


MEMO_SETS = [
    [(LaplaceEvent(2.0), 5)],
    [(PureDPEvent(0.5), 3), (LaplaceEvent(4.0), 7)],
    [(SubsampledGaussianEvent(1.24, 0.05), 20)],
    [(SubsampledGaussianEvent(2.0, 0.1), 10), (PureDPEvent(0.1), 1)],
    [(ApproxDPEvent(0.5, 1e-7), 2), (LaplaceEvent(1.0), 3)],
]


def _uncached(method, groups, delta):
    """The composition computed by the memo's own compute function, never looking in the memo."""
    from dptopic.accounting import ledger

    groups = ledger._check_groups(groups)
    if method == "rdp":
        return ledger._compose_rdp(groups, delta)
    return ledger._compose_pld(groups, delta, ledger.effective_discretization(groups, ledger.DISCRETIZATION))


@pytest.mark.parametrize("groups", MEMO_SETS)
def test_a_remembered_composition_equals_the_composition(groups):
    """compose_pld, compose_rdp and a ledger's basic epsilon answer from the memo exactly what they compute."""
    from dptopic.accounting import ledger

    ledger._MEMO.clear()
    pld, rdp = compose_pld(groups, 1e-5), compose_rdp(groups, 1e-5)
    assert any(k[0] == "pld" for k in ledger._MEMO) and any(k[0] == "rdp" for k in ledger._MEMO)
    assert compose_pld(groups, 1e-5) == pld == _uncached("pld", groups, 1e-5)
    assert compose_rdp(groups, 1e-5) == rdp == _uncached("rdp", groups, 1e-5)
    led = PrivacyLedger()
    for e, n in groups:
        led.spend(e, n)
    first = led.report(1e-5)
    ledger._MEMO.clear()
    assert PrivacyLedger.report(led, 1e-5) == first                 # recomputed, the same report
    assert led.report(1e-5) == first                                # and remembered, the same


@pytest.mark.parametrize("method", ["pld", "rdp", "basic"])
def test_the_memo_never_answers_a_composition_that_differs_in_one_parameter(method):
    """Each figure asked after another that differs in one parameter (a noise multiplier, a sampling rate, a count,
    delta, the method) is that composition's own: a key that left the parameter out would answer the first."""
    from dptopic.accounting import ledger

    def figure(groups, delta):
        if method == "basic":
            led = PrivacyLedger()
            for e, n in groups:
                led.spend(e, n)
            return led.epsilon_basic(delta)
        return (compose_pld if method == "pld" else compose_rdp)(groups, delta)

    base = ([(SubsampledGaussianEvent(1.5, 0.05), 20)], 1e-5)
    variants = [([(SubsampledGaussianEvent(1.6, 0.05), 20)], 1e-5),     # noise multiplier
                ([(SubsampledGaussianEvent(1.5, 0.06), 20)], 1e-5),     # sampling rate
                ([(SubsampledGaussianEvent(1.5, 0.05), 21)], 1e-5),     # count
                ([(SubsampledGaussianEvent(1.5, 0.05), 20)], 1e-6)]     # delta
    for groups, delta in variants:
        ledger._MEMO.clear()
        fresh = figure(groups, delta)
        ledger._MEMO.clear()
        first = figure(*base)
        assert figure(groups, delta) == fresh != first
    ledger._MEMO.clear()
    other = "rdp" if method == "pld" else "pld"
    fresh = _uncached(other, *base)
    figure(*base)
    assert (compose_pld if other == "pld" else compose_rdp)(*base) == fresh     # the method is in the key


def test_the_memo_is_bounded():
    from dptopic.accounting import ledger

    ledger._MEMO.clear()
    for i in range(ledger.MEMO_SIZE + 20):
        compose_rdp([(PureDPEvent(0.01 + i * 1e-4), 1)], 1e-5)
    assert len(ledger._MEMO) == ledger.MEMO_SIZE


# ---- item 2: every (epsilon, delta) pair is a valid guarantee
def _svi_with_vocab(q=0.1, sigma=1.0, steps=20, vocab=(1.0, 1e-6), delta=1e-5):
    led = PrivacyLedger(unit="document")
    led.spend(SubsampledGaussianEvent(sigma, q), steps)
    return fdptm_report(ApproxDPEvent(*vocab, unit="document"), led.report(delta), led), led


EVENT = st.one_of(
    st.builds(lambda s: LaplaceEvent(s), st.floats(0.05, 20)),
    st.builds(lambda e: PureDPEvent(e), st.floats(0.01, 5)),
    st.builds(lambda e, d: ApproxDPEvent(e, d), st.floats(0.01, 3), st.floats(1e-9, 1e-6)),
    st.builds(lambda s, q: SubsampledGaussianEvent(s, q), st.floats(0.8, 5), st.floats(0.01, 1)))


def _reference_basic(groups, delta):
    """Basic composition recomputed from the events: pure epsilons add, event deltas add, and the Gaussian
    steps share delta equally (each charged its own epsilon at delta/k)."""
    pure = sum(e.epsilon * n for e, n in groups if not getattr(e, "approximate", False))
    approx = [(e, n) for e, n in groups if getattr(e, "approximate", False)]
    k = sum(n for _, n in approx)
    eps = pure + sum(n * e.epsilon_at(delta / k) for e, n in approx) if approx else pure
    d = (delta if approx else 0.0) + sum(getattr(e, "delta_event", 0.0) * n for e, n in groups)
    return eps, d


# ---- item 1: events on different PLD grids compose
def test_gaussian_and_vocabulary_events_compose():
    g, v = SubsampledGaussianEvent(1.0, 0.1), ApproxDPEvent(1.0, 1e-6)
    eps = compose_pld([(g, 20), (v, 1)], 1.1e-5)
    alone = compose_pld([(g, 20)], 1e-5)
    assert math.isfinite(eps) and alone < eps <= alone + 1.0 + 1e-6   # at most eps_V on top (basic composition)
    led = PrivacyLedger(unit="document")
    led.spend(g, 20)
    led.spend(LaplaceEvent(2.0))
    led.spend(v)
    assert math.isfinite(led.report(1e-5)["epsilon_pld"])


def test_fdptm_basic_pair_carries_both_deltas():
    rep, _ = _svi_with_vocab()
    assert rep["epsilon_basic"] == pytest.approx(47.51, abs=0.01)
    assert rep["delta_basic"] == pytest.approx(1.1e-5)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(EVENT, st.integers(1, 5)), min_size=1, max_size=3), st.booleans())
def test_every_reported_pair_is_a_valid_guarantee(groups, with_vocab):
    delta = 1e-5
    led = PrivacyLedger(unit="document")
    for e, n in groups:
        led.spend(e, n)
    merged = led.groups()
    rep = led.report(delta)
    ref_eps, ref_delta = _reference_basic(merged, delta)
    if with_vocab:
        v = ApproxDPEvent(0.7, 1e-7, unit="document")
        rep = fdptm_report(v, rep, led)
        ref_eps, ref_delta = ref_eps + v.eps, ref_delta + v.delta
    # the basic pair is exactly basic composition's, with every delta counted
    assert rep["epsilon_basic"] == pytest.approx(ref_eps, rel=1e-9)
    assert rep.get("delta_basic", 0.0) == pytest.approx(ref_delta, rel=1e-9, abs=1e-15)
    # the claimed guarantee is one of the valid bounds at its delta, and no larger than any of them there
    valid = [rep[k] for k in ("epsilon_pld", "epsilon_pld_tight", "epsilon_rdp") if k in rep]
    if rep.get("delta_basic", 0.0) <= rep["delta"]:
        valid.append(rep["epsilon_basic"])
    assert rep["epsilon"] == pytest.approx(min(valid), rel=1e-9)
    # and it is not below what an optimistic (lower-bound) PLD of the same events gives at that delta
    full = merged + ([(v, 1)] if with_vocab else [])
    assert rep["epsilon"] >= compose_pld(full, rep["delta"]) - 0.05 * max(1.0, rep["epsilon"]) or rep["epsilon"] == 0


def test_events_whose_deltas_exceed_the_requested_delta_claim_basic_at_its_own_delta():
    # found by the property test above: eleven (1, 1e-6) events reported at delta = 1e-5
    led = PrivacyLedger(unit="document")
    led.spend(ApproxDPEvent(1.0, 1e-6), 11)
    rep = led.report(1e-5)
    assert rep["epsilon"] == pytest.approx(11.0) and rep["delta"] == pytest.approx(1.1e-5)
    assert rep["delta_requested"] == 1e-5 and "its own delta" in rep["epsilon_method"]
    assert rep["epsilon"] >= compose_pld(led.groups(), rep["delta"]) - 1e-6
    # deltas adding to 1 or more: nothing is claimed, and the report says why
    led = PrivacyLedger(unit="user")
    led.spend(ApproxDPEvent(2.0, 0.2), 6)
    rep = led.report(1e-5)
    assert rep["epsilon"] is None and rep["epsilon_method"].startswith("none:") and "1.2" in rep["epsilon_method"]


@pytest.mark.parametrize("event", [
    LaplaceEvent(scale=2.0, changes=(1, 1), discrete=True),
    LaplaceEvent(scale=0.5, changes=(2,), discrete=True),
    LaplaceEvent(scale=2.0, changes=(1, 1), discrete=False),
    LaplaceEvent(scale=10.0, changes=(1,), discrete=False),
    PureDPEvent(1.0),
    PureDPEvent(10.0),
], ids=lambda e: e.describe()["type"] + f"-{e.epsilon:g}")
@pytest.mark.parametrize("n", [1, 100])
def test_rdp_never_below_pld(event, n):
    """RDP conversion is an upper bound on the true eps(delta); PLD (pessimistic) is near tight: RDP >= PLD."""
    rdp, pld = compose_rdp([(event, n)], 1e-5), compose_pld([(event, n)], 1e-5)
    assert rdp >= pld - 1e-3 * max(1.0, pld)


def test_ledger_with_approximate_events_keeps_pure_reports():
    pure = PrivacyLedger()
    pure.spend(LaplaceEvent(1.0), 3)
    rep = pure.report(1e-5)
    assert "delta_basic" not in rep and rep["epsilon_basic"] == pytest.approx(3.0)
    mixed = PrivacyLedger()
    mixed.spend(LaplaceEvent(1.0), 3)
    mixed.spend(ApproxDPEvent(0.5, 1e-6))
    rep = mixed.report(1e-5)
    assert rep["epsilon_basic"] == pytest.approx(3.5) and rep["delta_basic"] == pytest.approx(1e-6)
    assert rep["epsilon_pld"] <= 3.5 + 1e-6
    assert rep["epsilon_pld"] >= pure.epsilon_tight(1e-5)


# ------------------------------------------------------------------ ledger and calculators
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(v=NASTY)
def test_ledger(v):
    works_or_refuses(lambda: PrivacyLedger(budget=(v, 0.0)))
    works_or_refuses(lambda: PrivacyLedger(budget=(1.0, v)))
    led = PrivacyLedger()
    ok, _ = works_or_refuses(lambda: led.spend(PureDPEvent(0.5), v))
    if ok:
        assert led.epsilon_basic() == pytest.approx(0.5 * v) and led.epsilon_basic() > 0
    led2 = PrivacyLedger()
    led2.spend(LaplaceEvent(scale=2.0, changes=(1, 1)), 3)
    ok, rep = works_or_refuses(lambda: led2.report(delta=v))
    if ok:
        assert 0 < rep["delta"] < 1 and 0 <= rep["epsilon_pld"] <= rep["epsilon_basic"] + 1e-6


def test_ledger_basic_composition_for_gaussian_steps():
    led = PrivacyLedger(unit="document")
    ev = SubsampledGaussianEvent(1.24, 0.05)
    led.spend(ev, 20)
    rep = led.report(1e-4)
    assert rep["epsilon_basic"] == pytest.approx(20 * ev.epsilon_at(1e-4 / 20), rel=1e-9)
    assert rep["epsilon_pld"] < rep["epsilon_basic"]
    assert "delta/k" in rep["accounting"]["basic"]
    assert math.isinf(led.epsilon_basic())  # no delta: no finite basic bound


def test_a_budget_is_checked_against_the_figure_the_report_states():
    """10^6 Laplace releases at eps = 500: the PLD equals basic composition (5e8), RDP gives less (4.990e8, as
    docs/privacy.md says). The report states the smaller; a budget between the two covers the run."""
    event, n = LaplaceEvent(scale=1 / 500), 1_000_000
    led = PrivacyLedger(budget=(4.995e8, 1e-5))
    led.reserve([(event, n)])
    led.spend(event, n)
    rep = led.report(1e-5)
    assert rep["epsilon"] == rep["epsilon_rdp"] < 4.995e8 < rep["epsilon_pld"]
    with pytest.raises(BudgetExceededError):
        PrivacyLedger(budget=(4.98e8, 1e-5)).reserve([(event, n)])
