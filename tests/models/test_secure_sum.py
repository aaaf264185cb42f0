import warnings

import numpy as np
import pytest

from dptopic.errors import DPTopicError
from dptopic.models.secure_sum import SecureSumTopics, released_words, secure_sum_topics
from dptopic.protocol.secure_sum.plan import SecureSumPlan
from dptopic.protocol.secure_sum.ring import triangle_size


def _released(plan, V=50):
    """The model a round of ``plan`` releases from made-up sums (100 people, 90 shares each step)."""
    rng = np.random.default_rng(0)
    s0 = (rng.random(V + 1) * plan.scale * 20).astype(np.int64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = released_words(plan, s0, 90, 3)[0]
        s1 = (rng.random(triangle_size(len(kept))) * plan.scale).astype(np.int64)
        return secure_sum_topics(plan, [f"w{i}" for i in range(V)], 3, s0, s1, (90, 90), {})


@pytest.fixture(scope="module")
def model():
    return _released(SecureSumPlan(1.0, 1e-5, 100, 10, 50))


def test_the_card_states_the_secure_sum_and_verifies(model, tmp_path):
    from dptopic.accounting.card import privacy_card
    from dptopic.accounting.verify import verify_report

    card = privacy_card(model.privacy_, "SecureSumTopics")
    assert card["privacy_unit"] == "user" and card["epsilon"] <= 1.0
    assert "may lie and drop" in card["trust_model"] and "enrollment key" in card["trust_model"]
    assert model.privacy_["wrap_around_probability"] <= 1e-8 and model.privacy_["delta_total"] <= 1e-5
    assert verify_report(model.privacy_).status == "verified"
    model.save(tmp_path / "m")
    import dptopic

    assert dptopic.load(tmp_path / "m").privacy_["epsilon"] == model.privacy_["epsilon"]


def test_a_committee_rounds_card_names_the_committee_and_its_threshold():
    """A committee-mode round reveals through its committee, not the neighbours: the card's trust model says so."""
    plan = SecureSumPlan(1.0, 1e-5, 100, 10, 50, committee="auto")
    m = _released(plan)
    text = m.privacy_["trust_model"]
    assert f"committee of {plan.committee} contributors" in text and f"threshold {plan.committee_threshold}" in text
    assert "consistency signatures of their neighbours" not in text
    assert m.privacy_["parameters"]["committee"] == plan.committee


def test_it_is_not_fitted_on_documents(model):
    with pytest.raises(DPTopicError, match="secure-sum round"):
        SecureSumTopics().fit(np.ones((3, 4)))


def test_the_plan_is_the_rounds_two_secure_sums(model):
    """The two Skellam releases the report accounts, at the honest survivors' noise; the plan's epsilon is the card's."""
    from helpers import assert_fit_spent_its_plan

    plan = assert_fit_spent_its_plan(model)
    assert [r.mechanism for r in plan.releases] == ["skellam", "skellam"] and plan.unit == "user"


def test_public_vectors_place_the_words_outside_the_kept_ones_and_are_named(tmp_path):
    """The recovery of a round reads public vectors as DocDPCooccurrence's does: the words outside the kept ones take
    the topics of their nearest kept words, the kept words keep theirs, and the report names the vectors."""
    V = 300
    plan = SecureSumPlan(1.0, 1e-5, 100, 10, V)
    rng = np.random.default_rng(0)
    s0 = (rng.random(V + 1) * plan.scale * 20).astype(np.int64)
    words = [f"w{i}" for i in range(V)]
    vec = tmp_path / "v.txt"
    vec.write_text("\n".join(w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=5)) for w in words) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kept = released_words(plan, s0, 90, 3)[0]
        s1 = (rng.random(triangle_size(len(kept))) * plan.scale).astype(np.int64)
        plain = secure_sum_topics(plan, words, 3, s0, s1, (90, 90), {}, public_vectors=None)
        with_v = secure_sum_topics(plan, words, 3, s0, s1, (90, 90), {}, public_vectors=str(vec))
    rest = np.setdiff1d(np.arange(V), kept)
    assert len(rest) and plain.public_vectors_ is None and "public_vectors" not in plain.privacy_
    assert with_v.privacy_["public_vectors"]["name"] == "v.txt" and with_v.public_vectors_["default"] is False
    def spread(m):
        return np.ptp(m.components_[:, rest] / m.components_[:, rest].sum(axis=0), axis=0).mean()
    assert spread(plain) < 1e-6 < 1e-4 < spread(with_v)           # alike in every topic before, placed after
    def norm(m):
        return m.components_[:, kept] / m.components_[:, kept].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(norm(with_v), norm(plain), rtol=1e-9)
    np.testing.assert_array_equal(with_v.supported_topics_, plain.supported_topics_)


def test_the_card_gives_epsilon_by_the_number_of_colluders(model):
    """Epsilon as a function of the dishonest entries: 0 to t colluders, at the plan's epsilon at t."""
    from dptopic.accounting.card import privacy_card

    table = model.privacy_["epsilon_by_colluders"]
    t = model.privacy_["parameters"]["collusion"]
    assert [c for c, _ in table] == list(range(t + 1))
    assert table[-1][1] == pytest.approx(model.privacy_["epsilon"], rel=0.05)
    assert all(a[1] < b[1] for a, b in zip(table, table[1:]))
    card = privacy_card(model.privacy_, "SecureSumTopics")
    assert card["epsilon_by_colluders"].startswith("0 colluding: ") and "not covered" in card["epsilon_by_colluders"]
    assert "enrollment key" in model.privacy_["scope"] and "round's id" not in model.privacy_["scope"]
