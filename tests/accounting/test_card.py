"""``dptopic.accounting.card``."""
import math

import pytest

import dptopic
from dptopic.accounting.card import privacy_card
from dptopic.corpus.synthetic import lda_corpus
from helpers import quiet_fit


def test_a_private_vocabularys_card_labels_the_added_figures_as_theorem_4_1_and_names_the_every_event_pld():
    # walk C, finding 9: "tight PLD" labelled eps_V + the trainer's PLD (1.5), above the claimed every-event PLD
    from dptopic.accounting.card import _figures

    rep = {"vocabulary_selection": {"epsilon": 0.5}, "topic_model": {"delta": 1e-5}, "delta": 1.1e-5,
           "epsilon_pld": 1.5, "epsilon_pld_tight": 1.469, "epsilon_rdp": 1.6, "epsilon_basic": 1.5}
    f = _figures(rep)
    assert "Thm 4.1" in f["epsilon_pld"]["what"] and not f["epsilon_pld"]["what"].startswith("tight")
    assert "every event" in f["epsilon_pld_tight"]["what"] and "Thm 4.1" in f["epsilon_rdp"]["what"]
    plain = _figures({"delta": 1e-5, "epsilon_pld": 1.0})
    assert plain["epsilon_pld"]["what"].startswith("tight")


def test_floor_card_with_a_public_vocabulary_still_names_the_labels():
    rep = {"private": True, "epsilon": 10.0, "delta": 1e-5, "epsilon_method": "PLD", "guarantee": "partial",
           "unit": "user", "epsilon_per_entry": 1.0, "vocabulary_source": "supplied",
           "parameters": {"exclusion": "floor", "replacement": "topic", "entries_per_round": 5, "rounds": 2},
           "events": []}
    card = privacy_card(rep, "FedLDA", check=False)
    assert card["guarantee"] == "partial" and "topic label" in card["guarantee_note"]
    assert "vocabulary" not in card["guarantee_note"] and "Zipf" not in card["guarantee_note"]


def test_none_rule_card_leaves_out_the_rrp_parameters(fedlda_none_model):
    params = fedlda_none_model.privacy_["parameters"]
    assert not {"eta", "delta0", "failure_rate_delta", "gamma", "variant", "replacement"} & set(params)
    assert params["report_words"] == 6 and params["vocab_size"] == len(fedlda_none_model.vocabulary_)


TRAINERS = {"DocDPCooccurrence": lambda: dptopic.DocDPCooccurrence(n_topics=2, epsilon=1.0, verbose=0),
            "DocDPEM": lambda: dptopic.DocDPEM(n_topics=2, epsilon=1.0, n_iter=2, verbose=0),
            "DPSVI": lambda: dptopic.DPSVI.from_budget(1.0, 1e-5, n_topics=2, verbose=0),
            "HDPLDA": lambda: dptopic.HDPLDA(n_topics=2, n_iter=2, epsilon_laplace=3.0, verbose=0)}


@pytest.fixture(scope="module")
def small():
    return lda_corpus(n_docs=200, vocab_size=40, n_topics=2, doc_length=20, seed=1).corpus


@pytest.mark.parametrize("name", ["DocDPCooccurrence", "DocDPEM", "DPSVI"])
def test_document_level_reports_say_where_their_coins_come_from_and_name_group_privacy(name, small):
    from dptopic.accounting.card import privacy_card

    m = quiet_fit(TRAINERS[name](), small)
    rep = m.privacy_
    assert rep["randomness"].startswith("standard mode") and "floating-point" in rep["randomness"]
    assert "k times epsilon" in rep["scope"] and rep["scope"].count("group privacy") == 1
    card = privacy_card(rep, type(m).__name__)
    assert card["implementation"]["randomness"] == rep["randomness"]


def _user_report(sigma=3.7308217955163516):
    """A user-level report of one Gaussian release calibrated to epsilon 1 at delta 1e-5 (DocDPCooccurrence's)."""
    from dptopic.models._user_level import USER_RELATION

    return {"private": True, "unit": "user", "neighbouring_relation": USER_RELATION, "epsilon": 0.999944,
            "delta": 1e-5, "epsilon_method": "PLD", "scope": "covers the release. NOT covered: the vocabulary.",
            "events": [{"type": "poisson_subsampled_gaussian", "noise_multiplier": sigma, "sampling_rate": 1.0,
                        "relation": USER_RELATION, "count": 1}]}


def test_the_user_card_says_added_or_removed_and_prints_the_replacement_figure():
    from dptopic.accounting.events import SubsampledGaussianEvent

    card = privacy_card(_user_report(), "DocDPCooccurrence", check=False)
    assert "added or removed" in card["protects"] and "changed" not in card["protects"]
    # replacing one person moves the non-negative releases by sqrt(2): the epsilon of sigma / sqrt(2), same delta
    want = SubsampledGaussianEvent(3.7308217955163516 / 2 ** 0.5, 1.0).epsilon_at(1e-5)
    assert card["replacement"]["epsilon"] == pytest.approx(want, rel=2e-3) and 1.46 < want < 1.47
    from dptopic.accounting.card import epsilon_text

    assert f"epsilon = {epsilon_text(card['replacement']['epsilon'])}" in card["protects"]


def test_the_user_card_states_group_privacy_computed_at_its_delta_and_shared_ids_as_not_covered():
    from dptopic.accounting.events import SubsampledGaussianEvent

    card = privacy_card(_user_report(), "DocDPCooccurrence", check=False)
    group = card["group_privacy"]
    assert group["delta"] == 1e-5 and set(group["epsilon"]) == {"2", "10"}
    for k in (2, 10):       # k people move the release by k: the Gaussian's epsilon at sigma / k, by PLD
        want = SubsampledGaussianEvent(3.7308217955163516 / k, 1.0).epsilon_at(1e-5)
        assert group["epsilon"][str(k)] == pytest.approx(want, rel=2e-3)
        assert group["epsilon"][str(k)] > k * 0.999944           # more than k x epsilon: delta's share grows
    assert 2.15 < group["epsilon"]["2"] < 2.16 and 14.4 < group["epsilon"]["10"] < 14.5
    assert "k x epsilon" not in card["protects"].replace("more than k x epsilon", "")
    assert "shared or anonymous accounts" in card["not_covered"]
    # and the textbook form, k x epsilon with delta grown to k e^((k-1) epsilon) delta: 2 e 1e-5 for k = 2
    assert f"k = 2: delta {2 * math.e * 1e-5:.3g}" in group["note"]
