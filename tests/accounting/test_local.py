"""Exact likelihood ratios of the local randomizers, unbiased estimators, and regressions for the
gaps found (FedLDA's simulated keep probability, the composed randomized-response PLD, verify's tolerance below a
claim, one-line refusals of malformed mechanism inputs)."""
from __future__ import annotations

import itertools
import math
from decimal import Decimal
from fractions import Fraction

import pytest

from dptopic.accounting.verify import verify_report
from dptopic.errors import DPTopicError


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


# ---------------------------------------------------------------- one-line refusals
@pytest.mark.parametrize("n_bits", [0, -1, 2.0, True])
def test_randomized_response_event_refuses_a_report_of_no_bits(n_bits):
    """n_bits = 0 claimed epsilon 0, -1 a negative epsilon (and crashed the PLD)."""
    from dptopic.accounting.local import RandomizedResponseEvent

    with pytest.raises(DPTopicError, match="n_bits"):
        RandomizedResponseEvent(0.5, n_bits)


def test_a_composition_long_enough_for_a_coarse_grid_recomputes():
    from dptopic.accounting import f_from_epsilon, local_privacy_report

    # a contributor's 1,400 whole-document reports over 1,500 words: basic epsilon 6e6, PLD grid step above 1
    rep = local_privacy_report(f_from_epsilon(3), 1500, reports_per_contributor=1400)
    assert rep["pld_discretization"] > 1
    assert verify_report(rep).status == "verified"


def test_local_reports_state_the_word_level_figure_of_a_whole_contributor():
    # R reports of one contributor, one presence bit changed in each: R x eps_word by basic composition, labelled as
    # the word-level relation and as not the document-level guarantee
    import math

    from dptopic.accounting.local import f_from_epsilon, local_privacy_report

    rep = local_privacy_report(f_from_epsilon(3.0), 500, reports_per_contributor=7)
    assert math.isclose(rep["epsilon_word_contributor"], 7 * 3.0, rel_tol=1e-9)
    rel = rep["epsilon_word_contributor_relation"]
    assert "presence of one vocabulary word" in rel and "not the document-level guarantee" in rel
    assert rep["epsilon_doc"] > rep["epsilon_word_contributor"]
