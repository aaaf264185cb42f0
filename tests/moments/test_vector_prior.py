"""The route ``vectors_route="auto"`` takes (``moments.vector_prior.choose_route``): at either unit by the first
release's signal against ``GROUPS_FROM`` (``GROUPS_FROM_PER_PERSON`` at the user unit, the same): on real labelled
documents grouped into people the groups won or tied above it and lost coverage below it
(docs/research/user_level.md)."""
import pytest

from dptopic.moments.vector_prior import GROUPS_FROM, GROUPS_FROM_PER_PERSON, ROUTES, choose_route

SIGMA = 3.933       # the co-occurrence release's multiplier at the user unit, epsilon 1, delta 1e-5


def presence_for(signal: float, sigma: float = SIGMA) -> float:
    """The first release's summed word entries that give ``signal`` (``presence / (175 sigma)``)."""
    return signal * 175.0 * sigma


# the signals of the measured real people (bench_user_corpus.py, epsilon 1): the tweets (17), 20 Newsgroups' first
# 5,000 posts (21, 41), Reuters (49) and 20 Newsgroups of 6 and 3 documents a person (33, 53), below the threshold;
# the State of the Union of 2 documents a person (82), 20 Newsgroups of one (104), the State of the Union of one (123)
@pytest.mark.parametrize("signal, route", [(17.0, "spread"), (21.0, "spread"), (33.0, "spread"), (41.0, "spread"),
                                           (49.0, "spread"), (53.0, "spread"),
                                           (GROUPS_FROM_PER_PERSON * 0.999, "spread"),
                                           (GROUPS_FROM_PER_PERSON, "groups"), (82.0, "groups"), (104.0, "groups"),
                                           (123.0, "groups"), (1504.0, "groups")])
def test_auto_per_person_reads_the_signal_as_the_document_unit_does(signal, route):
    assert GROUPS_FROM_PER_PERSON == GROUPS_FROM
    assert choose_route("auto", presence_for(signal), SIGMA, "user") == route
    assert choose_route("auto", presence_for(signal), SIGMA, "document") == route


@pytest.mark.parametrize("signal, route", [(18.0, "spread"), (43.0, "spread"), (GROUPS_FROM * 0.999, "spread"),
                                           (GROUPS_FROM, "groups"), (106.0, "groups"), (145.7, "groups")])
def test_auto_at_the_document_unit_still_reads_the_signal(signal, route):
    assert choose_route("auto", presence_for(signal, 1.7), 1.7, "document") == route
    assert choose_route("auto", presence_for(signal, 1.7), 1.7) == route       # the document unit by default


@pytest.mark.parametrize("route", [r for r in ROUTES if r != "auto"])
@pytest.mark.parametrize("unit", ["document", "user"])
def test_a_route_given_is_taken_as_given_at_either_unit(route, unit):
    for signal in (1.0, 1000.0):
        assert choose_route(route, presence_for(signal), SIGMA, unit) == route
