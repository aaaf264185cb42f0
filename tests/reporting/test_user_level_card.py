"""The privacy card and the HTML report of a model trained with a guarantee per person (unit="user") say the unit,
how each person's contribution was bounded, and what is not covered."""
import warnings

from dptopic.accounting.card import privacy_card
from dptopic.models import DocDPCooccurrence
from dptopic.reporting.html import _privacy_section


def test_user_level_card_and_report_name_the_person_and_the_bound(planted):
    c = planted.corpus
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DocDPCooccurrence(n_topics=5, epsilon=1.0, unit="user", documents_per_user=3).fit(
            c, user_ids=[f"p{i % 50}" for i in range(c.n_docs)], vocabulary=list(c.vocabulary))
    card = privacy_card(m.privacy_, "DocDPCooccurrence")
    assert card["privacy_unit"] == "user" and card["guarantee"] == "full"
    assert card["user_bound"] == "at most 3 documents a person (chosen at random), each weighted 1/3"
    assert card["not_covered"].startswith("NOT covered: a person whose documents carry two or more user ids")
    html = _privacy_section(card)
    assert "each person&#x27;s contribution" in html or "each person's contribution" in html
    assert "at most 3 documents a person" in html and "two or more user ids" in html
