"""Privacy review 52: exact likelihood ratios of the local randomizers, unbiased estimators, and regressions for the
gaps found (FedLDA's simulated keep probability, the composed randomized-response PLD, verify's tolerance below a
claim, one-line refusals of malformed mechanism inputs)."""
from __future__ import annotations

import itertools
import json
import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from dptopic.errors import DPTopicError


def _exp(eps: float) -> Fraction:
    """e^eps (of the float eps) to 60 significant digits, as an exact fraction."""
    with localcontext() as ctx:
        ctx.prec = 60
        return Fraction(Decimal(eps).exp())


def _subset_law(D: int, k: int, p: Fraction, x: int) -> dict:
    """Exact law of a k-subset report of item x kept with probability p (x = -1: a padding entry, uniform)."""
    out = {}
    for S in itertools.combinations(range(D), k):
        if x < 0:
            out[S] = Fraction(1, math.comb(D, k))
        elif x in S:
            out[S] = p / math.comb(D - 1, k - 1)
        else:
            out[S] = (1 - p) / math.comb(D - 1, k)
    return out


def _max_ratio(laws) -> Fraction:
    return max(a[S] / b[S] for a in laws for b in laws for S in a)


# ---------------------------------------------------------------- exact worst-case likelihood ratios
@pytest.mark.parametrize("D", [2, 3, 5, 7])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0, 3.0, 10.0, 30.0, 50.0])
def test_frequency_oracle_ratio_never_exceeds_e_eps(D, eps):
    from dptopic.mechanisms.frequency_oracle import COIN_BITS, keep_threshold, subset_size

    k = subset_size(D, eps)
    p = Fraction(keep_threshold(D, eps, k), 2 ** COIN_BITS)        # the realised keep probability, both samplers
    assert _max_ratio([_subset_law(D, k, p, x) for x in range(D)]) <= _exp(eps)


@pytest.mark.parametrize("V", [1, 2, 3])
@pytest.mark.parametrize("eps_word", [0.01, 1.0, 5.0, 20.0, 50.0])
def test_randomized_response_ratio_never_exceeds_the_document_claim(V, eps_word):
    from dptopic.accounting.local import RandomizedResponseEvent, f_from_epsilon
    from dptopic.kernels.randomized_response import flip_threshold

    f = f_from_epsilon(eps_word)
    q = Fraction(flip_threshold(f / 2.0), 2 ** 32)                 # the realised flip probability
    vecs = list(itertools.product((0, 1), repeat=V))

    def pr(x, y):
        out = Fraction(1)
        for a, b in zip(x, y):
            out *= q if a != b else 1 - q
        return out

    worst = max(pr(x, y) / pr(x2, y) for x in vecs for x2 in vecs for y in vecs)
    claim = RandomizedResponseEvent(f, V).epsilon
    assert worst <= Fraction(Decimal(2 - f) / Decimal(f)) ** V      # exp of V ln((2 - f)/f), exactly
    assert math.log(worst) <= claim * (1 + 1e-12)


# ---------------------------------------------------------------- FedLDA: the simulated keep probability
def _captured_keep_probability(monkeypatch, V, eps):
    import dptopic.mechanisms.rrp as rrp

    seen, kernel = [], rrp.subset_select

    def spy(words, V_, s, p_in, state, out):
        seen.append(p_in)
        return kernel(words, V_, s, p_in, state, out)

    monkeypatch.setattr(rrp, "subset_select", spy)
    sets, event = rrp.subset_report(np.array([0, 1, -1], dtype=np.int32), V, eps, np.random.default_rng(0))
    assert sets.shape[0] == 3 and event.epsilon == eps
    return seen[0]


@pytest.mark.parametrize("V,eps", [(2, 1.0), (5, 10.0), (5, 30.0), (6, 30.0), (5, 40.0), (7, 100.0)])
def test_fedlda_simulated_keep_probability_never_exceeds_the_claimed_one(monkeypatch, V, eps):
    """The compiled sampler keeps the true word when a multiple of 2^-53 is below p_in. With p_in the float A it kept
    it with probability ceil(A 2^53)/2^53, above A: at eps = 30 (V = 5) the realised ratio was e^eps (1 + 1.3e-4),
    and at eps = 40 A rounds to 1.0, so the true word was always in the report (an unbounded ratio behind a pure
    claim of 40). p_in is now floor(A 2^53)/2^53, the secure sampler's coin."""
    from dptopic.accounting.fedlda import subset_size

    p_in = _captured_keep_probability(monkeypatch, V, eps)
    assert (p_in * 2.0 ** 53).is_integer()                         # so `uniform < p_in` realises exactly p_in
    s = subset_size(eps, V)
    e = _exp(min(eps, 700.0))
    exact_a = s * e / (s * e + V - s)
    assert Fraction(p_in) <= exact_a
    laws = [_subset_law(V, s, Fraction(p_in), x) for x in range(-1, V)]
    assert _max_ratio(laws) <= e


# ---------------------------------------------------------------- the composed randomized-response PLD
def test_randomized_response_pld_counts_its_dropped_outcomes_as_infinite_loss():
    """With f near 1 the outcomes with the largest losses (no bit flipped) have probability below 1e-300 and were
    left off the PLD: delta(eps) was 0 just below the largest loss. Their mass now goes to the infinite loss."""
    from dptopic.accounting.local import RandomizedResponseEvent, f_from_epsilon

    ev = RandomizedResponseEvent(f_from_epsilon(0.01), 2000)       # largest loss 20; losses above 15.6 dropped
    pld = ev.pld()
    delta = pld.get_delta_for_epsilon(16.1)
    assert 0 < delta < 1e-290
    assert pld.get_delta_for_epsilon(19.9) > 0


def test_randomized_response_report_figures_unchanged_by_the_infinity_mass():
    from dptopic.accounting.local import f_from_epsilon, local_privacy_report

    rep = local_privacy_report(f_from_epsilon(1.0), 3)
    assert rep["epsilon_basic"] == 3.0 and rep["epsilon_pld"] == pytest.approx(3.0, abs=1e-3)


# ---------------------------------------------------------------- privacy verify: no tolerance below a claim
def _local_report():
    from dptopic.accounting.local import f_from_epsilon, local_privacy_report

    return json.loads(json.dumps(local_privacy_report(f_from_epsilon(1.0), 3)))


@pytest.mark.parametrize("key", ["epsilon", "epsilon_pld", "epsilon_basic", "epsilon_rdp"])
def test_verify_fails_a_figure_stated_slightly_below_its_events(key):
    """RTOL = 1e-4 applied both ways: a report stating an epsilon 5e-5 (relative) below its own events verified."""
    from dptopic.accounting.verify import verify_report

    rep = _local_report()
    assert verify_report(rep).status == "verified"
    rep[key] = rep[key] * (1 - 5e-5)
    v = verify_report(rep)
    assert v.status == "failed" and key in v.detail and v.figures[key]["verdict"] == "BELOW"


def test_verify_still_accepts_floating_point_noise_and_a_slightly_looser_claim():
    from dptopic.accounting.verify import verify_report

    rep = _local_report()
    assert verify_report(dict(rep, epsilon_pld=rep["epsilon_pld"] * (1 - 1e-13))).status == "verified"
    assert verify_report(dict(rep, epsilon_pld=rep["epsilon_pld"] * (1 + 5e-5))).status == "verified"
    assert verify_report(dict(rep, epsilon_pld=rep["epsilon_pld"] * 1.01)).status == "looser"


def test_saved_card_slightly_below_its_events_fails():
    from dptopic.accounting.verify import check_saved_card, verify_report

    rep = _local_report()
    v = check_saved_card({"epsilon": rep["epsilon"] * (1 - 5e-5)}, verify_report(rep))
    assert v.status == "failed" and "privacy card" in v.detail


# ---------------------------------------------------------------- one-line refusals
@pytest.mark.parametrize("n_bits", [0, -1, 2.0, True])
def test_randomized_response_event_refuses_a_report_of_no_bits(n_bits):
    """n_bits = 0 claimed epsilon 0, -1 a negative epsilon (and crashed the PLD)."""
    from dptopic.accounting.local import RandomizedResponseEvent

    with pytest.raises(DPTopicError, match="n_bits"):
        RandomizedResponseEvent(0.5, n_bits)


@pytest.mark.parametrize("ids,ptr,V,match", [
    ([0], [0, 1], 0, "vocab_size"),                # V = 0 made an event of epsilon 0
    ([5], [0, 1], 2, "word_ids"),                  # an id beyond V was silently dropped
    ([-1], [0, 1], 2, "word_ids"),
    ([0, 1], [0, 1], 2, "doc_ptr"),                # a pointer that stops short ignored the last word
    ([0, 1], [1, 2], 2, "doc_ptr"),
])
def test_randomized_response_refuses_a_malformed_corpus(ids, ptr, V, match):
    from dptopic.mechanisms.randomized_response import randomized_response

    with pytest.raises(DPTopicError, match=match):
        randomized_response(np.array(ids, dtype=np.int32), np.array(ptr), V, 0.5, np.random.default_rng(0))


def test_frequency_oracle_and_gaussian_refuse_bad_parameters_in_one_line():
    from dptopic.mechanisms import gaussian_mechanism
    from dptopic.mechanisms.frequency_oracle import subset_selection, subset_selection_estimate

    rng = np.random.default_rng(0)
    with pytest.raises(DPTopicError, match="n_reports"):          # was ValueError: math domain error
        subset_selection_estimate(np.zeros(5), -3, 5, 1.0)
    with pytest.raises(DPTopicError, match="n_reports"):          # fewer reports than an item's inclusions
        subset_selection_estimate(np.full(5, 4.0), 3, 5, 1.0)
    with pytest.raises(DPTopicError, match="epsilon"):            # True was taken for epsilon 1
        subset_selection(np.array([0]), 5, True, rng)
    with pytest.raises(DPTopicError, match="l2_sensitivity"):     # was TypeError
        gaussian_mechanism(np.zeros(2), 1.0, "1", rng)
    with pytest.raises(DPTopicError, match="sampling_rate"):
        gaussian_mechanism(np.zeros(2), 1.0, 1.0, rng, sampling_rate="0.5")
    est, _ = subset_selection_estimate(np.ones(5), 3.0, 5, 1.0)   # a whole number as a float still counts
    assert est.shape == (5,)


# ---------------------------------------------------------------- unbiased estimators (fixed seed)
def test_local_frequency_estimators_are_unbiased():
    from dptopic.local.estimation import moment_estimate
    from dptopic.mechanisms.frequency_oracle import subset_selection, subset_selection_counts
    from dptopic.mechanisms.randomized_response import randomized_response
    from dptopic.mechanisms.rrp import subset_frequencies, subset_report

    rng = np.random.default_rng(52)
    R = 120
    items = rng.integers(0, 7, 1000)
    ests = np.array([subset_selection_counts(subset_selection(items, 7, 1.0, rng)[0], 7, 1.0)[0] for _ in range(R)])
    z = (ests.mean(0) - np.bincount(items, minlength=7)) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
    words = rng.integers(0, 6, 1500)
    ests = np.array([subset_frequencies(subset_report(words, 6, 1.5, rng)[0], 6, 1.5) for _ in range(R)])
    z = (ests.mean(0) - np.bincount(words, minlength=6) / words.size) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)
    docs = [rng.choice(5, size=rng.integers(0, 4), replace=False) for _ in range(500)]
    ids = np.concatenate(docs).astype(np.int32)
    ptr = np.concatenate([[0], np.cumsum([len(d) for d in docs])])
    ests = []
    for _ in range(R):
        packed, _ = randomized_response(ids, ptr, 5, 0.4, rng)
        ests.append(moment_estimate(np.unpackbits(packed, axis=1, count=5, bitorder="little").sum(0), len(docs), 0.4))
    ests = np.array(ests)
    z = (ests.mean(0) - np.bincount(ids, minlength=5)) / (ests.std(0, ddof=1) / math.sqrt(R))
    assert np.all(np.abs(z) < 4)


def test_a_fedlda_message_header_with_a_repeated_key_is_refused():
    """FedLDA message headers took the last of two values of a key (report headers refuse that): a reader that keeps
    the first would read another round or client from the same bytes."""
    import struct
    import zlib

    from dptopic.federated.messages import ClientUpdate, MessageError, decode_message

    u = ClientUpdate(3, "alice", "abcd", np.array([0, 1], np.int32), np.array([2, 3], np.int32))
    data = u.encode()
    assert decode_message(data).round == 3
    hlen = struct.unpack("<I", data[5:9])[0]
    head = data[9:9 + hlen]
    for doctored in (head.replace(b'"round":3', b'"round":3,"round":4'),
                     head.replace(b'"name":"topics"', b'"name":"topics","name":"words"')):
        assert doctored != head
        body = data[:5] + struct.pack("<I", len(doctored)) + doctored + data[9 + hlen:-4]
        bad = body + struct.pack("<I", zlib.crc32(body) & 0xFFFFFFFF)
        with pytest.raises(MessageError, match="more than once") as e:
            decode_message(bad)
        assert "\n" not in str(e.value)
